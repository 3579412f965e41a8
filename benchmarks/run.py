"""Benchmark: `njcredits run` on large GrowNJ and Transfers workbooks against the raw Excel floor.

    python benchmarks/run.py                      # 10k and 100k rows, both programs, and 200 small workbooks
    python benchmarks/run.py --sizes 1048575 --no-parallel   # a full Excel sheet (several minutes each)
    python benchmarks/run.py --programs grownj --sizes 100000 --repeat 3 --no-parallel   # medians of 3
    python benchmarks/run.py --programs --repeat 3   # only the 200 small workbooks, medians of 3

For each workbook it times `njcredits run` as a whole process (one worker, default settings) and,
alternating with it, the floor: reading the same file with the fastest reader (fastexcel, else
python-calamine) plus writing a frame of the returned sheet's size row by row with xlsxwriter in
constant_memory mode. It prints rows, seconds, floor seconds, ratio, peak memory of the process
tree (the sum of its processes' PSS), rows per second, and the breakdown by stage from the run's
ledger; a file the run did not process (a full sheet over the default memory limit, say) gets its
reason and the seconds until it was set aside instead. The folder run (200 workbooks of 40
Transfers rows) is timed on one and two workers beside the floor of the same folder: each workbook
read and written as above, one after the other in one process. Generated workbooks are cached in
benchmarks/.data/. Not part of the test suite: machines are shared and noisy, so read the ratios.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
sys.path.insert(0, str(HERE.parent))
from batch.workbook.cells import column_letters  # noqa: E402

GROW_NJ_HEADERS = [c.header for c in __import__("batch.programs.grow_nj.sheet", fromlist=["GROW_NJ"]).GROW_NJ.columns]
TRANSFER_HEADERS = [c.header for c in __import__("batch.programs.transfers.sheet", fromlist=["TRANSFERS"]).TRANSFERS.columns]
AREAS = ["Urban Transit Hub", "Growth Zone", "Growth Zone (MRERA)", "Distressed", "Priority", "Other Eligible"]
COUNTIES = ["Camden", "Bergen", "Essex", "Hudson", "Middlesex", "Mercer", "Cape May", "Morris"]
PREMISES = ["Industrial Rehab", "Industrial New", "Non-Industrial Rehab", "Non-Industrial New"]
PROGRAMS = ["Grow NJ", "Urban Transit Hub", "BEIP", "ERG Residential"]
# 2: GrowNJ business names one per project (every 20th a second project of the one before), no
# longer 997 names over all rows (about 100 projects each, every row then a prior Grow NJ award of
# the next: a sheet no finance team keeps)
DATA_VERSION = 2


def _grow_nj_row(i: int) -> list:
    area = AREAS[i % len(AREAS)]
    flags = ["Y" if (i >> k) & 1 else "" for k in range(20)]
    return [
        f"GNJ-{i}",
        # each project its own business, but every 20th a second project of the business of the
        # row before (applied a day later: a prior Grow NJ award, C.34:1B-247 e.)
        f"Business {i - 1 if i % 20 == 0 and i else i}",
        "2014" if i % 3 == 0 else "2017",
        ("date", 41500 + i % 1800),
        COUNTIES[i % len(COUNTIES)],
        area,
        flags[0] if i % 17 == 0 else "",
        "" if i % 2 else "Port District",  # Mega Project Basis
        "",
        flags[1] if i % 23 == 0 else "",
        "",
        ["Technology Startup", "Manufacturing", "Other"][i % 3],
        flags[2],
        PREMISES[i % 4],
        20_000 + i % 50_000,
        2_000_000 + (i * 7919) % 40_000_000,
        20 + i % 700,
        i % 400,
        "" if i % 5 else 30 + i % 300,
        60_000 + i % 50_000,
        55_000,
        400 + i % 200,
        flags[3],
        flags[4],
        flags[5],
        flags[6],
        flags[7],
        flags[8],
        flags[9],
        flags[10],
        flags[11],
        flags[12],
        flags[13],
        flags[14],
        flags[15],
        flags[16],
        flags[17],
        flags[18],
        1_000_000 + i % 9_000_000,
        "" if i % 4 else 3_000_000,
        50_000_000 + (i * 104729) % 400_000_000,
        10,
        "",  # Prior Incentive Obligations Satisfied
        "",  # Separate From Prior Award
    ]


def _transfer_row(i: int) -> list:
    credit = 20_000 + (i * 7919) % 2_000_000
    return [
        f"T-{i}",
        PROGRAMS[i % 4],
        f"C-{i % 5000}",
        "" if i % 3 else 5_000_000,
        f"Seller {i % 300}",
        f"Buyer {i % 700}",
        ("date", 40000 + i % 6000),
        credit,
        round(credit * (0.7 + (i % 31) / 100), 2),
    ]


def make_workbook(path: Path, sheet: str, headers: list[str], row_fn, rows: int) -> Path:
    """Write the sheet XML directly (fast for a million rows), inside a package made by xlsxwriter."""
    import xlsxwriter

    path.parent.mkdir(parents=True, exist_ok=True)
    base = path.with_suffix(".base.xlsx")
    wb = xlsxwriter.Workbook(str(base))
    ws = wb.add_worksheet(sheet)
    ws.write_datetime(0, 0, __import__("datetime").date(2020, 1, 1), wb.add_format({"num_format": "yyyy-mm-dd"}))
    wb.close()
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;")  # noqa: E731
    tmp_xml = path.with_suffix(".sheet.xml")
    with open(tmp_xml, "w", encoding="utf-8") as fh:
        fh.write(
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/'
            f'spreadsheetml/2006/main"><dimension ref="A1:{column_letters(len(headers) - 1)}{rows + 1}"/><sheetData><row r="1">'
        )
        fh.write("".join(f'<c r="{column_letters(j)}1" t="inlineStr"><is><t>{esc(h)}</t></is></c>' for j, h in enumerate(headers)))
        fh.write("</row>")
        for i in range(rows):
            r = i + 2
            cells = []
            for j, v in enumerate(row_fn(i)):
                if v == "" or v is None:
                    continue
                ref = f"{column_letters(j)}{r}"
                if isinstance(v, tuple):
                    cells.append(f'<c r="{ref}" s="1"><v>{v[1]}</v></c>')
                elif isinstance(v, str):
                    cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{esc(v)}</t></is></c>')
                else:
                    cells.append(f'<c r="{ref}"><v>{v}</v></c>')
            fh.write(f'<row r="{r}">' + "".join(cells) + "</row>")
        fh.write("</sheetData></worksheet>")
    with zipfile.ZipFile(base) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename == "xl/worksheets/sheet1.xml":
                zout.write(tmp_xml, item.filename)
            else:
                zout.writestr(item.filename, zin.read(item.filename))
    base.unlink()
    tmp_xml.unlink()
    return path


def workbook(program: str, rows: int) -> Path:
    sheet, headers, row_fn = (
        ("GrowNJ", GROW_NJ_HEADERS, _grow_nj_row) if program == "grownj" else ("Transfers", TRANSFER_HEADERS, _transfer_row)
    )
    assert len(row_fn(0)) == len(headers), f"the {sheet} benchmark row does not fit the sheet's {len(headers)} columns"
    # a cached file of other columns, or of an earlier generator (DATA_VERSION), is never reused
    path = DATA / f"{program}-{rows}-{len(headers)}cols-v{DATA_VERSION}.xlsx"
    if not path.exists():
        print(f"  generating {path.name} ...", flush=True)
        make_workbook(path, sheet, headers, row_fn, rows)
    return path


def tree_rss(pid: int) -> int:
    """Memory of a process and all its descendants, in bytes: the sum of their proportional set
    sizes (PSS), so pages shared by forked processes are counted once."""
    total, todo = 0, [pid]
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                total += next(int(line.split()[1]) for line in fh if line.startswith("Pss:")) * 1024
        except (OSError, StopIteration):
            pass
    return total


def timed(cmd: list[str], cwd=None) -> tuple[float, int]:
    """Wall seconds and peak memory of the whole process tree: the memory sampled every 0.2 s beside
    the process, its end seen as it ends (not at the next sample). The sampler runs at the lowest
    priority (nice 19): a sample reads the proportional set size of every process of the tree, about
    7.5 ms of a core for a run's four processes, which at normal priority took about 0.4 s of the
    cores a folder run uses (0.2 s of its time) and nothing of the floor's, timed without a sampler."""
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    peak, ended = 0, threading.Event()

    def sample() -> None:
        nonlocal peak
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # this thread only (Linux)
        while True:
            peak = max(peak, tree_rss(proc.pid))
            if ended.wait(0.2):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = proc.stderr.read()  # to its end, so a full pipe never stops the process
    proc.wait()
    seconds = time.perf_counter() - start
    ended.set()
    sampler.join()
    if proc.returncode not in (0, 1):
        raise RuntimeError(stderr.decode())
    return seconds, peak


# the floor's reader and writer, shared by the floor of one workbook and of a folder: the fastest
# reader (fastexcel, else python-calamine through pandas), and a frame of the returned sheet's
# width written row by row by xlsxwriter in constant_memory mode (the reader's import counts in the
# floor's read, xlsxwriter's does not)
FLOOR_IO = r"""
import sys, time, xlsxwriter
started = time.perf_counter()
try:
    import fastexcel
    reader = "fastexcel"
    read = lambda p, sheet: fastexcel.read_excel(str(p)).load_sheet_by_name(sheet).to_pandas()
except ImportError:
    import pandas as pd
    reader = "calamine"
    read = lambda p, sheet: pd.read_excel(p, sheet_name=sheet, engine="calamine")

def write(frame, out, sheet, extra):
    wb = xlsxwriter.Workbook(str(out), {"constant_memory": True})
    ws = wb.add_worksheet(sheet)
    ws.write_row(0, 0, list(frame.columns) + [f"c{i}" for i in range(extra)])
    pad = [1.5] * extra
    for r, row in enumerate(frame.itertuples(index=False), start=1):
        ws.write_row(r, 0, [None if v != v else v for v in row] + pad)
    wb.close()
"""

FLOOR = (
    FLOOR_IO
    + r"""
path, sheet, out, extra = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
frame = read(path, sheet)
seconds_read = time.perf_counter() - started
t = time.perf_counter()
write(frame, out, sheet, extra)
print(reader, seconds_read, time.perf_counter() - t)
"""
)

FLOOR_MANY = (
    FLOOR_IO
    + r"""
from pathlib import Path
folder, sheet, out, extra = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
for path in sorted(folder.glob("*.xlsx")):
    write(read(path, sheet), out / path.name, sheet, extra)
print(time.perf_counter() - started)
"""
)


def floor_many(folder: Path, sheet: str, extra: int) -> float:
    """The floor of a folder: every workbook read and written as `FLOOR` does, one after the other in
    one process (one start-up, one import)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, "-c", FLOOR_MANY, str(folder), sheet, tmp, str(extra)], capture_output=True, text=True, check=True
        ).stdout
    return float(out.split()[-1])


def floor(path: Path, sheet: str, extra: int) -> tuple[str, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, "-c", FLOOR, str(path), sheet, str(Path(tmp) / "floor.xlsx"), str(extra)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    return out[0], float(out[1]), float(out[2])


def run_njcredits(path: Path, workers: int = 1, memory_limit_mb: int | None = None) -> tuple[float, int, dict, str | None]:
    """Seconds, peak PSS, the stage timings and, when the file was not processed, the run's reason."""
    with tempfile.TemporaryDirectory() as tmp:
        inbox = Path(tmp) / "inbox"
        inbox.mkdir()
        if memory_limit_mb:  # njcredits.toml in the working directory of the run
            (Path(tmp) / "njcredits.toml").write_text(f"memory_limit_mb = {memory_limit_mb}\n")
        path = path.resolve()  # a linked copy of the file itself, never of a symbolic link (njcredits takes none from an inbox)
        os.link(path, inbox / path.name) if path.stat().st_dev == inbox.stat().st_dev else shutil.copy(path, inbox / path.name)
        seconds, peak = timed(njcredits_run(inbox, Path(tmp) / "out", workers), cwd=tmp)
        with sqlite3.connect(Path(tmp) / "out" / ".njcredits" / "ledger.sqlite") as db:
            row = db.execute("SELECT status, reason, timings FROM files").fetchone()
        if row is None:  # the run recorded no file: the reason is in its output
            return seconds, peak, {}, "no file recorded by the run"
        if row[0] != "processed":
            return seconds, peak, {}, f"{row[0]}: {row[1]}"
        return seconds, peak, json.loads(row[2] or "{}"), None


def njcredits_run(inbox: Path, out: Path, workers: int) -> list[str]:
    """`njcredits run INBOX --out OUT` as a process of its own, inputs kept and processed again."""
    args = ["run", str(inbox), "--out", str(out), "--keep-inputs", "--force", "--workers", str(workers)]
    return [sys.executable, "-c", "from batch.cli import main; main()", *args]


def _transfer_row_of(file: int, certificates: str):
    """Rows of the `file`-th small workbook: its own Transfer IDs; certificates of its own
    (`certificates="own"`: no certificate in two workbooks) or twenty certificates every workbook
    moves ("shared": each workbook reads every other's records of them)."""

    def row(i: int) -> list:
        values = _transfer_row(file * 1_000_000 + i)
        values[0] = f"T-{file}-{i}"
        values[2] = f"C-{file}-{i % 20}" if certificates == "own" else f"C-{i % 20}"
        return values

    return row


def folder_of(files: int, rows: int, certificates: str) -> Path:
    folder = DATA / f"folder-{files}x{rows}-{certificates}"
    if not folder.exists():
        for i in range(files):
            make_workbook(folder / f"small-{i:03d}.xlsx", "Transfers", TRANSFER_HEADERS, _transfer_row_of(i, certificates), rows)
    return folder


def parallel(files: int, rows: int, certificates: str, repeat: int, extra: int) -> list[str]:
    """A run of `files` workbooks of `rows` Transfers rows, on one and on two workers, each beside the
    floor of the same folder (`floor_many`); medians of `repeat`. Certificates "own": no certificate
    in two workbooks (each read once); "shared": twenty certificates every workbook moves (each read
    again with the other workbooks' records: batch.run.samerun)."""
    folder = folder_of(files, rows, certificates)
    lines = []
    for workers in (1, 2):
        runs, floors = [], []
        for _ in range(repeat):
            floors.append(floor_many(folder, "Transfers", extra))
            with tempfile.TemporaryDirectory() as tmp:
                runs.append(timed(njcredits_run(folder, Path(tmp) / "out", workers)))
        seconds, peak, fl = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), statistics.median(floors)
        if repeat > 1:
            print(
                f"{files} workbooks, --workers {workers}: runs {[round(r[0], 1) for r in runs]} s, floors {[round(f, 1) for f in floors]} s"
            )
        line = (
            f"| {files} workbooks of {rows} Transfers rows, certificates {certificates} | {workers} | {seconds:.1f} | {fl:.1f} | "
            f"{seconds / fl:.2f} | {peak / 2**20:,.0f} MB | {seconds / files:.3f} |"
        )
        print(line, flush=True)
        lines.append(line)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="rows (Excel's maximum: 1048575)")
    ap.add_argument("--programs", nargs="*", default=["grownj", "transfers"], help="grownj, transfers, or none (only the folder run)")
    ap.add_argument("--no-parallel", action="store_true", help="leave out the run of many small workbooks")
    ap.add_argument("--files", type=int, default=200, help="small workbooks in the folder run [200]")
    ap.add_argument("--file-rows", type=int, default=40, help="Transfers rows in each small workbook [40]")
    ap.add_argument("--shared", action="store_true", help="small workbooks that share certificates (each read again with the others)")
    ap.add_argument("--memory-limit-mb", type=int, help="memory_limit_mb for the runs (njcredits.toml)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each workbook (and of its floor); the medians are reported")
    args = ap.parse_args()
    # the product's modules compiled once, as Python keeps them by itself unless the environment sets
    # PYTHONDONTWRITEBYTECODE (then every timed run would compile them again; the floor's libraries
    # were compiled when they were installed); a tree that cannot be written is left as it is
    for package in ("batch", "validators"):
        compileall.compile_dir(HERE.parent / package, quiet=2)
    from batch.programs import BY_NAME

    computed = {"grownj": len(BY_NAME["GrowNJ"].schema.computed) + 2, "transfers": len(BY_NAME["Transfers"].schema.computed) + 2}
    sheets = {"grownj": "GrowNJ", "transfers": "Transfers"}
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    lines = [
        "| program | rows | seconds | floor seconds (reader) | ratio | peak memory (PSS) | rows/s"
        " | read | validate | calculate | annotate | write |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for program in args.programs:
        for rows in args.sizes:
            path = workbook(program, rows)
            floors, runs = [], []
            for _ in range(args.repeat):  # floor and run alternate, so both see the same load of the machine
                floors.append(floor(path, sheets[program], computed[program]))
                runs.append(run_njcredits(path, memory_limit_mb=args.memory_limit_mb))
            reader = floors[0][0]
            read_s, write_s = statistics.median(f[1] for f in floors), statistics.median(f[2] for f in floors)
            seconds, peak = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            t = {k: statistics.median(r[2].get(k, 0) for r in runs) for k in ("read", "validate", "calculate", "annotate", "write")}
            if args.repeat > 1:
                print(f"{program} {rows:,}: runs {[round(r[0], 1) for r in runs]} s, floors {[round(f[1] + f[2], 1) for f in floors]} s")
            fl = read_s + write_s
            line = (
                f"| {program} | {rows:,} | {seconds:.1f} | {fl:.1f} ({reader} {read_s:.1f} + write {write_s:.1f}) | "
                f"{seconds / fl:.2f} | {peak / 2**20:,.0f} MB | {rows / seconds:,.0f} | "
                + " | ".join(f"{t.get(k, 0):.1f}" for k in ("read", "validate", "calculate", "annotate", "write"))
                + " |"
            )
            refused = [r[3] for r in runs if r[3]]
            if refused:  # a file the run did not process has no ratio: its reason instead
                line = (
                    f"| {program} | {rows:,} | not processed after {seconds:.1f} s ({refused[0]}) | "
                    f"{fl:.1f} ({reader} {read_s:.1f} + write {write_s:.1f}) | - | {peak / 2**20:,.0f} MB | - | - | - | - | - | - |"
                )
            lines.append(line)
            print(line, flush=True)
    if not args.no_parallel:
        lines += [
            "",
            "| folder | workers | seconds | floor seconds (one process) | ratio | peak memory (PSS) | seconds a file |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += parallel(args.files, args.file_rows, "shared" if args.shared else "own", args.repeat, computed["transfers"])
    print("\n".join(lines))


if __name__ == "__main__":
    main()
