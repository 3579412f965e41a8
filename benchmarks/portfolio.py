"""Benchmark: a 10-row Transfers workbook run against a ledger of 1,000,000 portfolio records, beside
the same run against an empty ledger.

    python benchmarks/portfolio.py                  # 1,000,000 records, 3 runs of each
    python benchmarks/portfolio.py --records 100000 --repeat 1
    python benchmarks/portfolio.py --postgres postgresql://user:pw@127.0.0.1:5432/postgres   # and on PostgreSQL

The large ledger is built once (cached in benchmarks/.data/) by SQL: 1,000 ended runs of 1,000
Transfers records each, 100,000 certificates of 10 transfers, every record with its portfolio
fields and certificate key, as a run writes them. The 10-row workbook transfers from 10 of those
certificates, so its rules read 100 records of earlier runs. Each run is `njcredits run FILE` as a
whole process, on a copy of the ledger (the run adds to it); the medians are printed, with the
time the portfolio read took (the run's `calculate` stage holds it). Not part of the test suite.

With --postgres (a server's URL, of a user who may create databases) the same runs are made on a
PostgreSQL ledger beside the SQLite ones: the large ledger is copied there once by `njcredits
ledger copy` (the time it took is printed) into a database kept as a template, and each run gets
a fresh copy of it (CREATE DATABASE ... TEMPLATE), as each SQLite run gets a copy of the file.
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


def _database(admin: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(admin)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def postgres_template(admin: str, big: Path, records: int) -> str:
    """The database holding the large ledger, copied there once from the SQLite one; its name."""
    import psycopg

    name = f"njc_bench_{records}"
    with psycopg.connect(admin, autocommit=True) as db:
        if db.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return name
        db.execute(f'CREATE DATABASE "{name}"')
    began = time.perf_counter()
    njcredits = str(Path(sys.executable).parent / "njcredits")
    subprocess.run([njcredits, "ledger", "copy", "--from", str(big), "--to", _database(admin, name)], check=True)
    with psycopg.connect(_database(admin, name), autocommit=True) as db:
        db.execute("ANALYZE")
    print(f"copied to PostgreSQL by `njcredits ledger copy` in {time.perf_counter() - began:.1f} s")
    return name


def postgres_copy(admin: str, template: str | None) -> str:
    """A fresh database for one run: empty, or a copy of `template`; its URL."""
    import psycopg

    with psycopg.connect(admin, autocommit=True) as db:
        db.execute('DROP DATABASE IF EXISTS "njc_bench_run" WITH (FORCE)')
        db.execute('CREATE DATABASE "njc_bench_run"' + (f' TEMPLATE "{template}"' if template else ""))
    return _database(admin, "njc_bench_run")


def one_run(ledger: Path | str | None, book: Path, work: Path) -> tuple[float, float]:
    """`njcredits run FILE` against a copy of `ledger` (None: none yet; a URL: that database): seconds,
    and the seconds of its calculate stage."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    copy = work / "ledger.sqlite"
    if isinstance(ledger, Path):
        shutil.copy(ledger, copy)
    if isinstance(ledger, str):
        copy = ledger
    src = work / book.name
    shutil.copy(book, src)
    njcredits = str(Path(sys.executable).parent / "njcredits")
    cli = [njcredits, "run", str(src), "--out", str(work / "out"), "--ledger", str(copy), "--as-of", "2026-11-30"]
    began = time.perf_counter()
    subprocess.run(cli, check=True, capture_output=True, cwd=work)
    seconds = time.perf_counter() - began
    from batch.run.ledger.backends import close_connections, connect, location

    with connect(location(copy)) as db:
        (timings,) = db.one("SELECT timings FROM files ORDER BY rowid DESC LIMIT 1")
    close_connections()  # the next run's database replaces this one
    return seconds, json.loads(timings).get("calculate", 0.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--postgres", help="a PostgreSQL server's URL (a user who may create databases): the runs on PostgreSQL too")
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
        cases = [("SQLite", "empty ledger", lambda: None), ("SQLite", f"{args.records:,} records", lambda: big)]
        if args.postgres:
            template = postgres_template(args.postgres, big, args.records)
            cases += [("PostgreSQL", "empty ledger", lambda: postgres_copy(args.postgres, None)),
                      ("PostgreSQL", f"{args.records:,} records", lambda: postgres_copy(args.postgres, template))]  # fmt: skip
        results = {}
        for kind, name, ledger in cases:
            runs = [one_run(ledger(), book, Path(tmp) / "work") for _ in range(args.repeat)]
            results[(kind, name)] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        print(f"{'database':>10} {'ledger':>18} {'run (s)':>8} {'calculate (s)':>14} {'ratio':>6}")
        for (kind, name), (seconds, calc) in results.items():
            base = results[(kind, "empty ledger")][0]
            print(f"{kind:>10} {name:>18} {seconds:8.2f} {calc:14.3f} {seconds / base:6.2f}")


if __name__ == "__main__":
    main()
