"""Are the returned workbooks the same, part by part? A check for changes that must not change
outputs (speed and memory work).

    python benchmarks/same_outputs.py make DIR          # run the current code on the inputs below, outputs into DIR
    python benchmarks/same_outputs.py compare DIR1 DIR2 # every output part byte for byte, run id and times aside

The inputs: the bundled samples, a CSV of the Transfers sample (a workbook written anew), and the
benchmark's generated 10,000-row GrowNJ and Transfers workbooks. Each is run with a fixed
`--as-of` into a fresh ledger. `compare` unzips every returned workbook and run report of both
folders and compares each part's bytes after putting aside what differs between two runs of the
same code: the run id, times of day, durations in seconds, and the paths of the run's folders. It prints each part that differs,
with its first difference, and exits 1 if any does.
"""

from __future__ import annotations

import csv
import difflib
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
AS_OF = "2026-11-30"

# what two runs of the same code write differently
RUN_ID = re.compile(rb"\d{8}T\d{9}Z-[0-9a-f]{4}")
TIMESTAMP = re.compile(rb"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
SECONDS = re.compile(rb"\b\d+(?:\.\d+)? s\b")
REPORT_SECONDS = re.compile(rb'(<c r="M\d+"[^>]*><v>)[\d.]+(</v>)')  # the run report's Seconds column


def inputs(folder: Path) -> None:
    sys.path.insert(0, str(HERE))
    import run as bench

    folder.mkdir(parents=True)
    for sample in sorted((ROOT / "sample_inputs").glob("*.xlsx")):
        shutil.copy(sample, folder / sample.name)
    _csv_of(ROOT / "sample_inputs" / "transfers-2026-11.xlsx", "Transfers", folder / "transfers-csv.csv")
    for program in ("grownj", "transfers"):
        path = bench.workbook(program, 10_000)
        shutil.copy(path, folder / f"generated-{path.name}")


def _csv_of(xlsx: Path, sheet: str, out: Path) -> None:
    import python_calamine

    rows = python_calamine.CalamineWorkbook.from_path(str(xlsx)).get_sheet_by_name(sheet).to_python()
    with open(out, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(["" if v is None else v for v in row] for row in rows)


def make(out: Path) -> None:
    if out.exists():
        sys.exit(f"{out} exists; give a new folder")
    inbox = _inbox(out)
    shutil.rmtree(inbox, ignore_errors=True)
    try:
        inputs(inbox)
        cmd = [
            sys.executable,
            "-c",
            "from batch.cli import main; main()",
            "run",
            str(inbox),
            "--out",
            str(out),
            "--keep-inputs",
            "--as-of",
            AS_OF,
            "--workers",
            "1",
        ]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    finally:
        shutil.rmtree(inbox, ignore_errors=True)
    if done.returncode not in (0, 1) or not list(out.glob("*.xlsx")):
        sys.exit(done.stdout + done.stderr)
    print(f"{len(list(out.glob('*.xlsx')))} workbooks in {out}")


def _inbox(out: Path) -> Path:
    """The inbox of a run into `out` (the run report names it; `compare` puts it aside)."""
    return out.resolve().parent / f".{out.name}.inbox"


def normal(data: bytes, folder: Path, report: bool) -> bytes:
    data = data.replace(str(_inbox(folder)).encode(), b"INBOX").replace(str(folder.resolve()).encode(), b"OUT")
    if report:
        data = REPORT_SECONDS.sub(rb"\1SECONDS\2", data)
    data = RUN_ID.sub(b"RUN-ID", data)
    data = TIMESTAMP.sub(b"TIME", data)
    return SECONDS.sub(b"SECONDS", data)


def parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def compare(a: Path, b: Path) -> int:
    names = lambda d: {RUN_ID.sub(b"RUN-ID", p.name.encode()).decode(): p for p in d.glob("*.xlsx")}  # noqa: E731
    left, right = names(a), names(b)
    bad = 0
    for name in sorted(left.keys() | right.keys()):
        if name not in left or name not in right:
            print(f"{name}: only in {a if name in left else b}")
            bad += 1
            continue
        pa, pb = parts(left[name]), parts(right[name])
        if list(pa) != list(pb):
            print(f"{name}: parts differ: {sorted(set(pa) ^ set(pb)) or 'their order'}")
            bad += 1
        for part in pa.keys() & pb.keys():
            report = name.startswith("run-")
            x, y = normal(pa[part], a, report), normal(pb[part], b, report)
            if x != y:
                bad += 1
                i = next(k for k in range(min(len(x), len(y)) + 1) if k == min(len(x), len(y)) or x[k] != y[k])
                print(f"{name} {part}: differs at byte {i} ({len(x)} and {len(y)} bytes)")
                for line in difflib.unified_diff(
                    [x[max(0, i - 120) : i + 120].decode(errors="replace")],
                    [y[max(0, i - 120) : i + 120].decode(errors="replace")],
                    lineterm="",
                    n=0,
                ):
                    print("   ", line)
    print(f"{len(left)} workbooks compared: {'the same' if not bad else f'{bad} differences'}")
    return 1 if bad else 0


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(Path(sys.argv[2]).resolve())
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
