"""Memory per row, stage by stage: one generated workbook processed in one process the way a worker
processes it (cyclic collection off, `batch.run.workers.work`), without a ledger.

    python benchmarks/memory.py                                   # 100,000 GrowNJ rows
    python benchmarks/memory.py --program transfers --rows 100000

At the end of each stage (read, validate, calculate, annotate, write, as the pipeline times them),
then after the worker's message is made (its records and counts) and pickled as the run receives
it, prints the process's proportional set size (`/proc/self/smaps_rollup`) and the highest
resident size within the stage (`VmHWM` in `/proc/self/status`, reset at each stage's end by
writing 5 to `/proc/self/clear_refs`), in MB and in KB a row. The workbooks are benchmarks/run.py's
(cached in benchmarks/.data/). Linux only. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import pickle
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def pss_kb() -> int:
    with open("/proc/self/smaps_rollup") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("Pss:"))


def status_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(field + ":"))


def reset_hwm() -> None:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program", choices=["grownj", "transfers"], default="grownj")
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()

    import run as bench

    path = bench.workbook(args.program, args.rows)

    import batch.pipeline as pipeline
    from batch.run.workers import work

    marks: list[tuple[str, int, int, int]] = []  # stage, PSS and resident at its end, highest resident within it

    def mark(stage: str) -> None:
        marks.append((stage, pss_kb(), status_kb("VmRSS"), status_kb("VmHWM")))
        reset_hwm()

    timed = pipeline.Result.timed

    def timed_and_marked(self, stage, started):
        now = timed(self, stage, started)
        mark(stage)
        return now

    pipeline.Result.timed = timed_and_marked
    gc.disable()
    gc.freeze()
    reset_hwm()
    mark("start")
    with tempfile.TemporaryDirectory() as tmp:
        payload = work(str(path), str(Path(tmp) / "out.xlsx"), as_of=dt.date(2026, 11, 30))
        mark("message made (records, counts)")
        message = pickle.dumps(("ok", payload, True), protocol=pickle.HIGHEST_PROTOCOL)
        mark(f"message pickled ({len(message) / 2**20:,.0f} MB)")
    rows = args.rows
    print(f"{path.name}: {rows:,} rows, one process, the worker's way")
    print(
        "| stage | PSS at its end | resident at its end | kept since the stage before, per row "
        "| highest resident within it | its peak above the stage before's end, per row |"
    )
    print("|---|---|---|---|---|---|")
    kb_a_row = lambda kb: f"{kb * 1024 / rows / 1000:.1f} KB"  # noqa: E731
    _, _, before, _ = marks[0]
    for stage, pss, rss, hwm in marks[1:]:
        kept, peak = kb_a_row(rss - before), kb_a_row(max(0, hwm - before))
        print(f"| {stage} | {pss / 1024:,.0f} MB | {rss / 1024:,.0f} MB | {kept} | {hwm / 1024:,.0f} MB | {peak} |")
        before = rss


if __name__ == "__main__":
    main()
