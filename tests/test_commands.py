"""The command line people script: the per-file line, `run FILE`, subfolders, output names, folder
rules, njcredits.toml checks, and `validate` (formats, exit status, no traceback)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import sqlite3

import pytest
import python_calamine
from click.testing import CliRunner
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook

from batch.cli import main

HEADERS = TRANSFER_HEADERS
D = dt.date(2026, 1, 5)


def transfers(path, rows):
    return write_workbook(path, {"Transfers": [HEADERS, *rows]})


def good(tid):
    return [tid, "Grow NJ", f"C-{tid}", "Seller LLC", "Buyer Inc.", D, 30_000, 27_000, CERTIFICATE]


def bad(tid):  # consideration 18,000 of 30,000 = 60%: an error finding, the row Flagged
    return [tid, "Grow NJ", f"C-{tid}", "Seller LLC", "Buyer Inc.", D, 30_000, 18_000, CERTIFICATE]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_the_per_file_line_has_one_fixed_form(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    # 3 rows: 2 OK, 1 flagged (one error finding)
    transfers(inbox / "nov.xlsx", [good("T-1"), good("T-2"), bad("T-3")])
    (inbox / "notes.txt").write_text("minutes")
    result = invoke("run", inbox, "--out", out)
    assert result.exit_code == 1  # notes.txt could not be processed
    lines = result.output.splitlines()
    assert "done  nov.xlsx  3 rows: 2 OK, 1 flagged, 0 ineligible, 0 invalid; 1 errors" in lines
    assert any(line.startswith("failed  notes.txt  notes.txt is not an intake file") for line in lines)
    report = next(out.glob("run-*.summary.xlsx"))
    files = python_calamine.CalamineWorkbook.from_path(str(report)).get_sheet_by_name("Files").to_python()
    head = next(i for i, r in enumerate(files) if "Line" in r)
    assert "done  nov.xlsx  3 rows: 2 OK, 1 flagged, 0 ineligible, 0 invalid; 1 errors" in [
        r[files[head].index("Line")] for r in files[head + 1 :]
    ]


def test_run_file_leaves_it_where_it_is(tmp_path):
    folder = tmp_path / "desk"
    folder.mkdir()
    book = transfers(folder / "one.xlsx", [good("T-1")])
    result = invoke("run", book, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert book.exists() and (tmp_path / "out" / "one.annotated.xlsx").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["one.xlsx"]  # nothing of the tool's in the user's folder
    # with --archive the file is moved there
    result = invoke("run", book, "--out", tmp_path / "out", "--archive", tmp_path / "archive", "--force")
    assert result.exit_code == 0, result.output
    assert not book.exists() and list((tmp_path / "archive").glob("processed/*/one.xlsx"))


def test_subfolders_are_processed_and_kept(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    (inbox / "east" / "nj").mkdir(parents=True)
    (inbox / ".hidden").mkdir()
    transfers(inbox / "east" / "nj" / "a.xlsx", [good("T-1")])
    transfers(inbox / "top.xlsx", [good("T-2")])
    transfers(inbox / ".hidden" / "secret.xlsx", [good("T-3")])
    result = invoke("run", inbox, "--out", out)
    assert result.exit_code == 0, result.output
    assert (out / "east" / "nj" / "a.annotated.xlsx").exists() and (out / "top.annotated.xlsx").exists()
    assert list(inbox.glob("processed/*/east/nj/a.xlsx")) and (inbox / ".hidden" / "secret.xlsx").exists()
    # the archive folders are not entered on the next run
    again = invoke("run", inbox, "--out", out)
    assert again.exit_code == 0 and "processed/" not in again.output


@pytest.mark.parametrize("name,output", [("a.xlsx", "a.annotated.xlsx"), ("a.annotated.xlsx", "a.annotated.xlsx"),
                                         ("a.xlsm", "a.xlsm.annotated.xlsx"), ("a.csv", "a.csv.annotated.xlsx")])  # fmt: skip
def test_output_names(name, output):
    from batch.run.names import output_name

    assert output_name(name) == output


def test_a_xlsx_and_a_csv_do_not_claim_one_output(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    transfers(inbox / "a.xlsx", [good("T-1")])
    (inbox / "a.csv").write_text(",".join(HEADERS) + "\nT-2,Grow NJ,C-2,S LLC,B Inc,2026-01-05,30000,27000\n")
    assert invoke("run", inbox, "--out", out).exit_code == 0
    assert sorted(p.name for p in out.glob("*.annotated.xlsx")) == ["a.annotated.xlsx", "a.csv.annotated.xlsx"]
    assert not (out / "previous").exists()


def test_an_outbox_inside_the_inbox_is_a_usage_error(tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    result = invoke("run", inbox, "--out", inbox / "out")
    assert result.exit_code == 2 and "inside the inbox" in result.output


PLACES = [
    # (flag or setting, where, refused?, words): an archive, outbox or ledger inside the inbox at any depth
    ("--archive", "east", True, "archive folder"),
    ("--archive", "east/deeper/still", True, "archive folder"),
    ("--archive", ".hidden", True, "archive folder"),  # hidden folders are not entered, but it is still inside
    ("--archive", ".", False, ""),  # the inbox itself: the default, its processed/ and failed/ never entered
    ("--archive", "../archive", False, ""),
    ("--archive", ".njcredits/archive", False, ""),  # the tool's own folder: the one exception
    ("--ledger", "ledger.sqlite", True, "ledger"),
    ("--ledger", "east/books/ledger.sqlite", True, "ledger"),
    ("--ledger", ".njcredits/ledger.sqlite", False, ""),
    ("--ledger", "../books/ledger.sqlite", False, ""),
    ("--out", "east/out", True, "outbox"),
    ("archive", "east", True, "archive folder"),  # the same in njcredits.toml
    ("ledger", "east/ledger.sqlite", True, "ledger"),
]


@pytest.mark.parametrize("flag,where,refused,words", PLACES)
def test_an_archive_outbox_or_ledger_inside_the_inbox_is_a_usage_error(tmp_path, monkeypatch, flag, where, refused, words):
    monkeypatch.chdir(tmp_path)
    inbox = tmp_path / "inbox"
    (inbox / "east").mkdir(parents=True)
    transfers(inbox / "east" / "nov.xlsx", [good("T-1")])
    path = (inbox / where).resolve()
    args = ["run", inbox]
    if flag.startswith("--"):
        args += [flag, path]
    else:
        (tmp_path / "njcredits.toml").write_text(f'{flag} = "{path}"\n')
    if flag != "--out":
        args += ["--out", tmp_path / "out"]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = invoke(*args)
    if refused:
        assert result.exit_code == 2 and "inside the inbox" in result.output and words in result.output, result.output
        assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing touched
    else:
        assert result.exit_code == 0, result.output
        assert not (inbox / "east" / "nov.xlsx").exists()


def test_watch_refuses_an_archive_or_ledger_inside_the_inbox(tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for args in (["--archive", inbox / "east"], ["--ledger", inbox / "sub" / "ledger.sqlite"]):
        result = invoke("watch", inbox, "--out", tmp_path / "out", *args)
        assert result.exit_code == 2 and "inside the inbox" in result.output, result.output
        assert not (tmp_path / "out").exists() and sorted(inbox.iterdir()) == []


BAD_SETTINGS = [
    ("workers = 0.5", "workers"),  # never read as 0
    ('workers = "x"', "workers"),
    ('keep_inputs = "no"', "keep_inputs"),  # never read as True
    ("settle_seconds = 0", "settle_seconds"),
    ("ledger = 5", "ledger"),
    ("memory_limit_mb = -1", "memory_limit_mb"),
]


@pytest.mark.parametrize("line,key", BAD_SETTINGS)
def test_a_bad_setting_is_a_usage_error_naming_the_key(tmp_path, monkeypatch, line, key):
    (tmp_path / "njcredits.toml").write_text(line + "\n")
    monkeypatch.chdir(tmp_path)
    result = invoke("history")
    assert result.exit_code == 2 and key in result.output and "Traceback" not in result.output


def test_validate_formats_and_exit_status(tmp_path):
    clean = transfers(tmp_path / "clean.xlsx", [good("T-1")])
    flagged = transfers(tmp_path / "flagged.xlsx", [good("T-1"), bad("T-2")])
    assert invoke("validate", clean).exit_code == 0
    result = invoke("validate", flagged, "--format", "json")
    assert result.exit_code == 1
    found = json.loads(result.output)["findings"]
    assert [f["Code"] for f in found] == ["CONSIDERATION_BELOW_75PCT"] and found[0]["Row"] == 3
    rows = list(csv.DictReader(io.StringIO(invoke("validate", flagged, "--format", "csv").output)))
    assert rows[0]["Code"] == "CONSIDERATION_BELOW_75PCT" and rows[0]["Sheet"] == "Transfers"


def test_validate_never_prints_a_traceback(tmp_path):
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04 not really a workbook")
    result = invoke("validate", broken)
    assert result.exit_code == 4 and "Traceback" not in result.output  # 4: cannot be read (1 is "has errors")
    assert result.output.startswith("failed  broken.xlsx  ")


def test_validate_table_fits_80_columns(tmp_path, monkeypatch):
    flagged = transfers(tmp_path / "flagged.xlsx", [bad("T-1")])
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke("validate", flagged)
    assert "CONSIDERATION_BELOW_75PCT" in result.output  # the code whole, on one line
    assert all(len(line) <= 80 for line in result.output.splitlines()), max(result.output.splitlines(), key=len)
    assert "Citation" not in result.output  # every message already carries its citation


def test_ledger_records_the_per_file_counts(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    transfers(inbox / "nov.xlsx", [good("T-1"), bad("T-2")])
    assert invoke("run", inbox, "--out", out).exit_code == 0
    with sqlite3.connect(out / ".njcredits" / "ledger.sqlite") as db:
        assert db.execute("SELECT name, status, errors FROM files").fetchall() == [("nov.xlsx", "processed", 1)]
