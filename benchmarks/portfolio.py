"""Benchmark: a 10-row Transfers workbook run against a ledger of 1,000,000 portfolio records, beside
the same run against an empty ledger.

    python benchmarks/portfolio.py                  # 1,000,000 records, 3 runs of each
    python benchmarks/portfolio.py --records 100000 --repeat 1

The large ledger is built once (cached in benchmarks/.data/) by SQL: 1,000 ended runs of 1,000
Transfers records each, 100,000 certificates of 10 transfers, every record with its portfolio
fields and certificate key, as a run writes them. The 10-row workbook transfers from 10 of those
certificates, so its rules read 100 records of earlier runs. Each run is `njcredits run FILE` as a
whole process, on a copy of the ledger (the run adds to it); the medians are printed, with the
time the portfolio read took (the run's `calculate` stage holds it). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
sys.path.insert(0, str(HERE.parent))

from batch.run.ledger import Ledger  # noqa: E402

PER_RUN = 1_000
PER_CERTIFICATE = 10


def build_ledger(path: Path, records: int) -> None:
    """A ledger of `records` Transfers records of ended runs, written as runs write them."""
    if path.exists():
        return
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    Ledger(tmp)  # the schema, every migration applied
    start = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    with sqlite3.connect(tmp) as db:
        for run in range(records // PER_RUN):
            run_id = f"R{run:05d}"
            began = (start + dt.timedelta(hours=run)).isoformat()
            db.execute(
                "INSERT INTO runs (run_id, started, ended, inbox, outbox, team, one_file) VALUES (?,?,?,?,?,?,0)",
                (run_id, began, began, "/srv/inbox", "/srv/outbox", "/srv/inbox"),
            )
            rows, keys = [], []
            for k in range(PER_RUN):
                i = run * PER_RUN + k
                cert = f"C-{i // PER_CERTIFICATE}"
                fields = {
                    "program": "Grow NJ", "certificate": cert, "certificate_amount": 10_000_000_00, "transferor": "Seller LLC",
                    "transferee": "Buyer Inc.", "date": "2025-01-01", "credit": 100_000_00, "certificate_key": cert.casefold(),
                }  # fmt: skip
                text = json.dumps(fields)
                rows.append((run_id, f"m{run}.xlsx", "Transfers", f"T-{i}", "OK", 100_000_00, "", "Grow NJ", 2025, text, "/srv/inbox"))
                keys.append((run_id, "/srv/inbox", "Transfers", f"T-{i}", "certificate_key", cert.casefold()))
            db.executemany(
                "INSERT INTO records (run_id, file, sheet, record_id, status, award_cents, codes, area, year, fields, team)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            db.executemany("INSERT INTO record_keys (run_id, team, sheet, record_id, grouping, key) VALUES (?,?,?,?,?,?)", keys)
    tmp.rename(path)


def workbook(path: Path) -> None:
    """10 transfers, each from a certificate of the ledger (C-0, C-1000, ...)."""
    import openpyxl

    from batch.programs.transfers.sheet import TRANSFERS

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Transfers"
    ws.append([c.header for c in TRANSFERS.columns])
    for i in range(10):
        ws.append([f"N-{i}", "Grow NJ", f"C-{i * 1000}", None, "Seller LLC", "Buyer Inc.", dt.date(2026, 11, 2), 50_000, 45_000])
    book.save(path)


def one_run(ledger: Path | None, book: Path, work: Path) -> tuple[float, float]:
    """`njcredits run FILE` against a copy of `ledger` (None: none yet): seconds, and the seconds of its
    calculate stage."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    copy = work / "ledger.sqlite"
    if ledger is not None:
        shutil.copy(ledger, copy)
    src = work / book.name
    shutil.copy(book, src)
    njcredits = str(Path(sys.executable).parent / "njcredits")
    cli = [njcredits, "run", str(src), "--out", str(work / "out"), "--ledger", str(copy), "--as-of", "2026-11-30"]
    began = time.perf_counter()
    subprocess.run(cli, check=True, capture_output=True, cwd=work)
    seconds = time.perf_counter() - began
    with sqlite3.connect(copy) as db:
        (timings,) = db.execute("SELECT timings FROM files ORDER BY rowid DESC LIMIT 1").fetchone()
    return seconds, json.loads(timings).get("calculate", 0.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    DATA.mkdir(exist_ok=True)
    big = DATA / f"ledger-{args.records}.sqlite"
    began = time.perf_counter()
    build_ledger(big, args.records)
    size = big.stat().st_size / 2**20
    print(f"ledger of {args.records:,} records: {size:,.0f} MiB ({time.perf_counter() - began:.1f} s to build or find)")
    with tempfile.TemporaryDirectory() as tmp:
        book = Path(tmp) / "ten.xlsx"
        workbook(book)
        results = {}
        for name, ledger in (("empty ledger", None), (f"{args.records:,} records", big)):
            runs = [one_run(ledger, book, Path(tmp) / "work") for _ in range(args.repeat)]
            results[name] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        base = results["empty ledger"][0]
        print(f"{'ledger':>20} {'run (s)':>8} {'calculate (s)':>14} {'ratio':>6}")
        for name, (seconds, calc) in results.items():
            print(f"{name:>20} {seconds:8.2f} {calc:14.3f} {seconds / base:6.2f}")


if __name__ == "__main__":
    main()
