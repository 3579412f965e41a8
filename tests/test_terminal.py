"""The terminal: a closed output never changes a run; the stages of a large file on a terminal;
the skip line of a file already processed; `validate` and `history` at 80 columns."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook
from test_reviews import first  # noqa: F401 - the fixture: a run of a workbook with a decision to take

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
    first_line = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == expected_exit, err
    assert first_line.startswith((b"done  ", b"failed  ")), first_line
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
    first_run = runs[0]
    between = runs[1:-1]
    if not between:
        expected = f"identical to a.xlsx, already processed in run {first_run}, returned as {output} (still the latest version there)"
    else:
        moved = out / "previous" / between[0] / "a.annotated.xlsx"
        assert moved.is_file()
        expected = (
            f"identical to a.xlsx, already processed in run {first_run}, returned then as {output} (now {moved}); "
            f"the latest version is {output}, of run {between[-1]}"
        )
    assert skip == f"skipped  a.xlsx  {expected}; use --force to process it again."


# -- validate and history at 80 columns ---------------------------------------------------------


def on_terminal(args, cols=80, cwd=None):
    """The command run on a pseudo-terminal `cols` wide (no COLUMNS: the terminal's own width): its
    exit status and what the terminal showed."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=120), out.decode("utf-8", "replace").replace("\r\n", "\n")


def fits(text: str, names: tuple[str, ...], cols=80) -> list[str]:
    """The lines wider than the terminal that are not a long name or path standing alone."""
    return [line for line in text.splitlines() if len(line) > cols and not any(line.strip().startswith(n) for n in names)]


SAMPLES = Path(__file__).resolve().parents[1] / "sample_inputs"


@pytest.mark.parametrize(
    "sample, findings",
    [
        ("transfers-2026-11.xlsx", 27),  # 21 errors and 2 warnings of the run report, and the infos
        ("grow-nj-2026-11.xlsx", None),
    ],
)
def test_validate_at_80_columns_puts_each_message_on_its_own_lines(sample, findings):
    status, shown = on_terminal([NJCREDITS, "validate", str(SAMPLES / sample), "--as-of", "2026-11-30"])
    assert status == 1, shown  # both samples have error findings
    assert not fits(shown, (str(SAMPLES), sample)), fits(shown, (sample,))
    lines = shown.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith(f"Findings in {sample}: "))
    count = int(lines[title].rsplit(" ", 1)[1])
    if findings is not None:
        assert count == findings
    heads = [line for line in lines if line.startswith(("error ", "warning ", "info "))]
    assert len(heads) == count  # one head line per finding: severity, sheet, row, code
    # each message on its own indented lines, never a narrow column: at most 5 lines a finding
    body = [line for line in lines[title + 1 :] if line.startswith("    ")]
    assert len(body) <= 5 * count
    assert all(re.fullmatch(r"[A-Z0-9_]+", line.split()[-1]) for line in heads)  # the code whole, last on its line


def test_history_at_80_columns_in_words(tmp_path):
    from click.testing import CliRunner

    from batch.cli import main

    inbox, out = tmp_path / "an inbox with a rather long folder name" / "November", tmp_path / "outbox"
    inbox.mkdir(parents=True)
    transfers(inbox / "transfers-of-the-eastern-region-november-2026.xlsx", [good("T-1"), bad("T-2")])
    ran = CliRunner().invoke(main, ["run", str(inbox), "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    run_id = next(line.split()[1].rstrip(":") for line in ran.output.splitlines() if line.startswith("Run "))
    status, runs = on_terminal([NJCREDITS, "history", "--out", str(out)])
    assert status == 0 and not fits(runs, (str(tmp_path),)), runs
    lines = runs.splitlines()
    (head,) = [n for n, line in enumerate(lines) if line.startswith(f"{run_id}  ")]  # the run's head line, then its details
    assert lines[head + 1] == "    files: 1 (1 processed, 0 skipped, 0 failed)"
    status, files = on_terminal([NJCREDITS, "history", "--out", str(out), "--run", run_id])
    assert status == 0 and not fits(files, (str(tmp_path),)), files
    lines = files.splitlines()
    assert lines[:2] == [f"Files of run {run_id}", "processed  transfers-of-the-eastern-region-november-2026.xlsx"]
    # 2 rows of one sheet, 1 error (consideration 60% of face value), in words: never the ledger's JSON
    assert "    rows: Transfers 2" in lines and "    findings: 1 errors, 0 warnings" in lines
    assert "{" not in files


@pytest.mark.parametrize(
    "rows, expected_exit, expected",
    [
        ([good("T-1")], 0, []),  # no finding
        ([good("T-1"), bad("T-2")], 1, [("CONSIDERATION_BELOW_75PCT", 3, "T-2")]),  # header row 1: T-2 is row 3
    ],
)
def test_validate_json_has_integer_rows(tmp_path, rows, expected_exit, expected):
    import json

    from click.testing import CliRunner

    from batch.cli import main

    book = transfers(tmp_path / "nov.xlsx", rows)
    result = CliRunner().invoke(main, ["validate", str(book), "--format", "json", "--as-of", "2026-11-30"])
    assert result.exit_code == expected_exit
    document = json.loads(result.output)
    assert document["file"] == "nov.xlsx" and document["as_of"] == "2026-11-30"
    assert [(f["Code"], f["Row"], f["Record ID"]) for f in document["findings"] if f["Severity"] == "error"] == expected
    assert all(isinstance(f["Row"], int) or f["Row"] is None for f in document["findings"])
    assert document["counts"]["Transfers"]["rows"] == len(rows)


def test_validate_json_null_for_a_sheet_level_finding(tmp_path):
    import json

    from click.testing import CliRunner

    from batch.cli import main

    # a sheet of no intake program beside the Transfers sheet: UNKNOWN_SHEET, a finding of no row
    book = write_workbook(tmp_path / "two.xlsx", {"Transfers": [TRANSFER_HEADERS, good("T-1")], "Minutes": [["Topic"], ["budget"]]})
    result = CliRunner().invoke(main, ["validate", str(book), "--format", "json"])
    found = [f for f in json.loads(result.output)["findings"] if f["Sheet"] == "Minutes"]
    assert found and all(f["Row"] is None and f["Record ID"] is None for f in found), found


@pytest.mark.parametrize(
    "content, fmt, expected_exit",
    [
        (b"PK\x03\x04 not really a workbook", "json", 4),  # cannot be read: 4, never 1 ("has errors")
        (b"PK\x03\x04 not really a workbook", "table", 4),
        (b"", "json", 4),  # empty
        (None, "json", 4),  # no file there
        (None, "table", 4),
        ("folder", "json", 4),  # a folder of that name
    ],
)
def test_validate_a_file_that_cannot_be_read(tmp_path, content, fmt, expected_exit):
    import json

    from click.testing import CliRunner

    from batch.cli import main

    broken = tmp_path / "broken.xlsx"
    if content == "folder":
        broken.mkdir()
    elif content is not None:
        broken.write_bytes(content)
    result = CliRunner().invoke(main, ["validate", str(broken), "--format", fmt])
    assert result.exit_code == expected_exit and "Traceback" not in result.output
    if fmt == "json":
        document = json.loads(result.output)  # one JSON document, with the reason
        assert document["file"] == "broken.xlsx" and document["error"].startswith("broken.xlsx ")
    else:
        assert result.output.startswith("failed  broken.xlsx  ")


def test_the_per_file_line_has_plain_digits(tmp_path):
    from click.testing import CliRunner

    from batch.cli import main

    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    # 1,200 rows: 1,100 OK, 100 flagged (each consideration 60% of face value: one error each)
    transfers(inbox / "big.xlsx", [good(f"T-{n}") for n in range(1100)] + [bad(f"B-{n}") for n in range(100)])
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(out)])
    assert "done  big.xlsx  1200 rows: 1100 OK, 100 flagged, 0 ineligible, 0 invalid; 100 errors" in result.output.splitlines()


# -- the stages of a file on a terminal ---------------------------------------------------------


@pytest.mark.parametrize(
    "sheets, expected",
    [
        # one intake sheet: read, then validated, calculated and checked, then written
        ({"Transfers": [TRANSFER_HEADERS, good("T-1"), bad("T-2")]}, ["reading", "validating", "calculating", "checking", "writing"]),
        # two sheets of two programs: validated, calculated and checked each in turn
        (
            {"Transfers": [TRANSFER_HEADERS, good("T-1")], "More transfers": [TRANSFER_HEADERS, good("T-2")]},
            ["reading", *["validating", "calculating", "checking"] * 2, "writing"],
        ),
    ],
)
def test_each_worker_tells_the_run_the_stages_of_its_file(tmp_path, sheets, expected):
    import threading
    from types import SimpleNamespace

    from batch.run.config import load
    from batch.run.workers import isolated

    book = write_workbook(tmp_path / "nov.xlsx", sheets)
    item = SimpleNamespace(name="nov.xlsx", staged=book)
    settings = load(cwd=tmp_path, inbox=tmp_path, outbox=tmp_path, workers=1, as_of="2026-11-30")
    told = []
    done = list(
        isolated([(item, tmp_path / ".nov.partial.xlsx")], settings, "run-1", threading.Event(), on_stage=lambda i, s: told.append(s))
    )
    assert [kind for _item, _partial, kind, _payload in done] == ["ok"]
    # a validating that begins after the last sheet's checks is the pipeline's end of a stage, not a sheet: it is left out
    assert [s for n, s in enumerate(told) if not (s == "validating" and told[n + 1 : n + 2] == ["writing"])] == expected


def test_the_stages_are_shown_on_a_terminal_and_nothing_when_not(tmp_path):
    from click.testing import CliRunner

    from batch.cli import main

    # 6,000 rows: long enough to be read for some tenths of a second, which the display shows
    big = transfers(tmp_path / "big.xlsx", [good(f"T-{n}") for n in range(6000)])
    status, shown = on_terminal([NJCREDITS, "run", str(big), "--out", str(tmp_path / "shown")])
    assert status == 0, shown
    stages = re.findall(r"big\.xlsx: (reading|validating|calculating|checking|writing)", shown)
    # the display follows the file past its reading; which stage it last shows depends on when it last
    # redrew (under a loaded machine, the last stages can pass between two redraws)
    assert stages and stages[0] == "reading" and len(set(stages)) >= 2, shown
    # the run's own lines stay whole beside it
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r", "\n")
    assert "done  big.xlsx  6000 rows: 6000 OK, 0 flagged, 0 ineligible, 0 invalid; 0 errors" in plain.splitlines()
    # not a terminal: only the run's lines, no stage, no escape sequence
    result = CliRunner().invoke(main, ["run", str(big), "--out", str(tmp_path / "piped"), "--force"])
    assert result.exit_code == 0
    assert "big.xlsx: reading" not in result.output and "\x1b" not in result.output
    piped = subprocess.run([NJCREDITS, "run", str(big), "--out", str(tmp_path / "piped2")], capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and piped.stderr == "" and "\x1b" not in piped.stdout
    lines = piped.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("done  big.xlsx  6000 rows") and lines[1].startswith("Run ")


def test_history_decisions_at_80_columns(first, tmp_path, monkeypatch):  # noqa: F811 - `first`: the fixture imported above
    from click.testing import CliRunner
    from test_reviews import _decide
    from test_reviews import _run as run_reviewed

    from batch.cli import main

    out, ledger = first
    note = "Board-approved premium, agreed at the meeting of the credit committee of 12 November with the seller"
    run_reviewed(
        _decide(out, tmp_path / "rev" / out.name, {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", note)}), tmp_path / "o2", ledger
    )
    monkeypatch.setenv("COLUMNS", "80")
    shown = CliRunner().invoke(main, ["history", "--ledger", str(ledger), "--decisions"])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert not fits(shown.output, (str(tmp_path),)), shown.output
    (head,) = [line for line in lines if "T-2" in line]  # the decision, its sheet and its record on one line
    assert head.split() == ["Waive", "CONSIDERATION_ABOVE_FACE", "Transfers", "T-2"]
    # the note on its own indented lines, whole once joined
    at = lines.index(next(line for line in lines if line.startswith("    note: ")))
    said = " ".join(line.strip() for line in lines[at : at + 2])
    assert said.startswith("note: " + note[:60]) and all(len(line) <= 80 for line in lines[at : at + 2])


def test_a_long_decision_goes_on_at_its_spaces_at_80_columns(first, tmp_path, monkeypatch):  # noqa: F811
    from click.testing import CliRunner
    from test_reviews import _decide
    from test_reviews import _run as run_reviewed

    from batch.cli import main

    out, ledger = first
    # a waiver of three long codes: 5 + 3 x 26 characters with their commas, over 80 with its sheet and record
    codes = ["CONSIDERATION_ABOVE_FACE", "TRANSFER_BELOW_MINIMUM", "CERTIFICATE_OVERTRANSFERRED"]
    run_reviewed(_decide(out, tmp_path / "rev" / out.name, {"T-2": ("Waive " + ", ".join(codes), "JS", "n")}), tmp_path / "o2", ledger)
    monkeypatch.setenv("COLUMNS", "80")
    shown = CliRunner().invoke(main, ["history", "--ledger", str(ledger), "--decisions"])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert all(len(line) <= 80 for line in lines), shown.output
    words = " ".join(shown.output.split())
    assert all(code in words.replace(",", " ").split() for code in codes)  # every code whole, on some line


def test_a_terminal_closed_during_a_run_changes_nothing_of_it(tmp_path):
    import fcntl
    import os
    import pty
    import termios

    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    for n in range(4):  # 4 files of 3,000 rows, one worker: the run is still going when its terminal closes
        transfers(inbox / f"m{n}.xlsx", [good(f"T-{n}-{k}") for k in range(3000)])
    master, slave = pty.openpty()

    def own_terminal():  # the run's terminal is its controlling terminal: closing it hangs the run up (SIGHUP)
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [NJCREDITS, "run", str(inbox), "--out", str(out), "--workers", "1"],
        stdin=slave, stdout=slave, stderr=slave, start_new_session=True, preexec_fn=own_terminal,
    )  # fmt: skip
    os.close(slave)
    seen = b""
    while b"done  " not in seen:
        seen += os.read(master, 1 << 16)
    os.close(master)  # the terminal closes: a hangup, and every later write fails
    assert proc.wait(timeout=240) == 0
    with sqlite3.connect(out / ".njcredits" / "ledger.sqlite") as db:
        ended, processed = db.execute("SELECT ended, processed FROM runs").fetchone()
    assert ended is not None and processed == 4
    assert len(list(out.glob("*.annotated.xlsx"))) == 4 and len(list(out.glob("run-*.summary.xlsx"))) == 1


@pytest.mark.parametrize(
    "command, expected_exit",
    [
        (["validate", str(SAMPLES / "transfers-2026-11.xlsx")], 1),  # its own status: the sample has error findings
        (["history", "--run", "R"], 0),
        (["history"], 0),
    ],
)
def test_validate_and_history_read_by_head_keep_their_exit_status(tmp_path, command, expected_exit):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for n in range(3):
        transfers(inbox / f"m{n}.xlsx", [good(f"T-{n}")])
    ran = subprocess.run([NJCREDITS, "run", str(inbox), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    run_id = ran.stdout.splitlines()[-1].split()[1].rstrip(":")
    args = [a if a != "R" else run_id for a in command]
    proc = subprocess.Popen([NJCREDITS, *args, "--out", str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()  # `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == expected_exit and "Traceback" not in err and "Error" not in err, err
