"""The terminal: a closed output never changes a run; the stages of a large file on a terminal;
the skip line of a file already processed; `validate` and `history` at 80 columns."""

from __future__ import annotations

import datetime as dt
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook

NJCREDITS = str(Path(sys.executable).parent / "njcredits")
D = dt.date(2026, 1, 5)


def good(tid):
    return [tid, "Grow NJ", f"C-{tid}", "Seller LLC", "Buyer Inc.", D, 30_000, 27_000, CERTIFICATE]


def bad(tid):  # consideration 18,000 of 30,000 = 60%: an error finding, the row Flagged
    return [tid, "Grow NJ", f"C-{tid}", "Seller LLC", "Buyer Inc.", D, 30_000, 18_000, CERTIFICATE]


def transfers(path, rows):
    return write_workbook(path, {"Transfers": [TRANSFER_HEADERS, *rows]})


# -- a closed output ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "files, failing, expected_exit",
    [
        (3, 0, 0),  # 3 files processed: exit 0, as with the output open
        (2, 1, 1),  # 2 processed, notes.txt failed: exit 1, as with the output open
    ],
)
def test_a_closed_output_changes_nothing_of_the_run(tmp_path, files, failing, expected_exit):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    for n in range(files):
        transfers(inbox / f"m{n}.xlsx", [good(f"T-{n}1"), bad(f"T-{n}2")])
    for n in range(failing):
        (inbox / f"notes{n}.txt").write_text("minutes")
    # `njcredits run ... | head -1`: the reader takes the first line and goes away
    proc = subprocess.Popen(
        [NJCREDITS, "run", str(inbox), "--out", str(out), "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == expected_exit, err
    assert first.startswith((b"done  ", b"failed  ")), first
    assert "Broken pipe" not in err and "Error" not in err, err
    # everything recorded: the run ended in the ledger with every file, each output and the report written
    with sqlite3.connect(out / ".njcredits" / "ledger.sqlite") as db:
        ended, processed, failed = db.execute("SELECT ended, processed, failed FROM runs").fetchone()
        statuses = sorted(s for (s,) in db.execute("SELECT status FROM files"))
    assert ended is not None
    assert (processed, failed) == (files, failing)
    assert statuses == ["failed"] * failing + ["processed"] * files
    assert sorted(p.name for p in out.glob("*.annotated.xlsx")) == [f"m{n}.annotated.xlsx" for n in range(files)]
    assert len(list(out.glob("run-*.summary.xlsx"))) == 1
    assert len(list((inbox / "processed").rglob("*.xlsx"))) == files
    assert not list(inbox.glob("*.xlsx"))  # no input left behind, none given back


# -- the skip line of a file already processed --------------------------------------------------


def _run(inbox, out):
    from click.testing import CliRunner

    from batch.cli import main

    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(out), "--workers", "1"])
    run_id = next(line.split()[1].rstrip(":") for line in result.output.splitlines() if line.startswith("Run "))
    return result, run_id


@pytest.mark.parametrize(
    "contents",
    [
        ["A", "A"],  # dropped again, nothing returned under its name since: its output is still the latest
        ["A", "B", "A"],  # a.xlsx of other rows returned between: run 1's output moved to previous/<run 2>/
        ["A", "B", "C", "A"],  # two between: moved by run 2, the latest version is run 3's
    ],
)
def test_the_skip_line_names_the_earlier_run_its_output_then_and_the_latest(tmp_path, contents):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    rows = {"A": [good("T-1")], "B": [good("T-1"), bad("T-2")], "C": [bad("T-3")]}
    made = {}  # each content written once: a workbook written again differs (its creation time)
    for key, grid in rows.items():
        made[key] = transfers(tmp_path / f"{key}.xlsx", grid).read_bytes()
    runs = []
    for content in contents:
        (inbox / "a.xlsx").write_bytes(made[content])
        result, run_id = _run(inbox, out)
        assert result.exit_code == 0, result.output
        runs.append(run_id)
    output = out / "a.annotated.xlsx"
    skip = next(line for line in result.output.splitlines() if line.startswith("skipped  a.xlsx  "))
    first = runs[0]
    between = runs[1:-1]
    if not between:
        expected = f"identical to a.xlsx, already processed in run {first}, returned as {output} (still the latest version there)"
    else:
        moved = out / "previous" / between[0] / "a.annotated.xlsx"
        assert moved.is_file()
        expected = (
            f"identical to a.xlsx, already processed in run {first}, returned then as {output} (now {moved}); "
            f"the latest version is {output}, of run {between[-1]}"
        )
    assert skip == f"skipped  a.xlsx  {expected}; use --force to process it again."
