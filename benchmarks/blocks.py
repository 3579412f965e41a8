"""A sheet read a block of rows at a time, each block by python-calamine: how long it takes, how much
memory it holds, and whether it gives exactly the values of calamine's whole read.

    python benchmarks/blocks.py                                        # 1,048,575 GrowNJ rows
    python benchmarks/blocks.py --program transfers --rows 100000 --check

The product's reader of a large sheet (`batch.workbook.blocks.sheet_blocks`): the sheet part streamed
from the package, cut after every `--block` rows by the writer's row reader, and each block given
to calamine as a package of its own. `--check` then reads the sheet again into the product's grid
(`sheet_grid`) and compares it, cell by cell and type by type, with calamine's whole read of the
same sheet (which holds the whole sheet: check on sizes that fit).

`--checks` also runs each block through the pipeline's checks as the product runs a sheet
(`process_sheet`: validation, the calculator, the findings, the summary) and makes its records,
the sheet's header row put above each block, then lets the block go: what checking a sheet by
blocks would take in time and memory. Each block is checked alone, so a rule across rows (a
duplicate ID, a prior incentive, a limit) sees only its block's rows: the time and the memory are
what is measured, not the findings.

The workbooks are benchmarks/run.py's (cached in benchmarks/.data/). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import python_calamine

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def _sheet(path: Path):
    """The workbook opened, its first sheet's name and part, and every sheet's part."""
    from batch.workbook.opened import Opened
    from batch.workbook.safety import sheet_parts

    opened = Opened(path)
    parts = sheet_parts(opened)
    name, part = next(iter(parts.items()))
    return opened, name, part, list(parts.values())


def blocks(path: Path, per_block: int):
    """Each block's (first value, rows) as the product's reader gives it, in the sheet's order."""
    from batch.workbook.blocks import sheet_blocks

    opened, name, part, sheets = _sheet(path)
    with opened:
        yield from sheet_blocks(opened, name, part, sheets, per_block)


def _checker(program_name: str):
    """A function checking one block (a grid whose first row is the header) as `process_sheet`
    checks a sheet and making its records, then letting them go (collected, their pages given back)."""
    import datetime as dt
    import gc

    import batch.run.preload  # noqa: F401 - what a worker imports before its first file
    from batch.pipeline import Result, process_sheet
    from batch.programs import BY_NAME
    from batch.run.workers import give_back_freed
    from batch.workbook.reading import _intake_sheet

    program = BY_NAME[{"grownj": "GrowNJ", "transfers": "Transfers"}[program_name]]
    gc.disable()  # as a worker runs

    def checked(path: Path, grid: list[list]) -> None:
        result = process_sheet(_intake_sheet(program.name, grid, program.schema), program)
        Result(path, "", dt.datetime.now(), sheets=[result]).records()
        del result
        gc.collect()  # what a block leaves in cycles, collected before the next (as a worker does between files)
        give_back_freed()

    return checked


def check(path: Path, per_block: int) -> tuple[int, int]:
    """(rows compared, rows that differ, by value or type) between the product's grid read by blocks
    (`sheet_grid`) and calamine's whole read."""
    from batch.workbook.blocks import sheet_grid

    opened, name, part, sheets = _sheet(path)
    with opened:
        rebuilt = sheet_grid(opened, name, part, sheets, per_block)
    whole = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_index(0).to_python(skip_empty_area=False)
    differ = abs(len(whole) - len(rebuilt))
    differ += sum(a != b or [type(x) for x in a] != [type(x) for x in b] for a, b in zip(whole, rebuilt, strict=False))
    return len(whole), differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program", choices=["grownj", "transfers"], default="grownj")
    ap.add_argument("--rows", type=int, default=1_048_575)
    ap.add_argument("--block", type=int, default=50_000, help="rows a block (default 50,000)")
    ap.add_argument("--check", action="store_true", help="compare with calamine's whole read")
    ap.add_argument("--checks", action="store_true", help="check each block and make its records, as the product does a sheet")
    args = ap.parse_args()

    import run as bench

    path = bench.workbook(args.program, args.rows)
    checked = _checker(args.program) if args.checks else None
    started, rows, reading = time.perf_counter(), 0, 0.0
    header = None
    at = time.perf_counter()
    for _start, block in blocks(path, args.block):
        reading += time.perf_counter() - at
        rows += len(block)
        if checked is not None:
            if header is None:
                header, block = block[0], block[1:]
            checked(path, [header, *block])
        del block
        at = time.perf_counter()
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    print(f"{path.name}: {rows:,} rows in blocks of {args.block:,}: {seconds:.1f} s, highest resident {peak:,} MB")
    if checked is not None:
        print(f"  read {reading:.1f} s, checks and records {seconds - reading:.1f} s")
    if args.check:
        started = time.perf_counter()
        compared, differ = check(path, args.block)
        print(f"read again by blocks and whole: {time.perf_counter() - started:.1f} s; {compared:,} rows compared, {differ:,} differ")


if __name__ == "__main__":
    main()
