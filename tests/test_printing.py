"""What the terminal prints from a file, a workbook or the ledger is plain text: no markup, no
terminal escapes, each fixed-form line one line; `history` never crashes on what it reads. And the
ledger itself: one restored from SQLite's `.dump` (no `user_version`) is migrated from what its
tables show; `history` reads a ledger read-only, never migrating it."""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook

from batch.cli import main
from batch.run.ledger import BASE_SCHEMA, MIGRATIONS, SCHEMA_VERSION, Ledger, migrate, version_by_tables
from batch.run.names import printable

D = dt.date(2026, 1, 5)
ESC = "\x1b"
HYPERLINK = f"{ESC}]8;;https://attacker.example/{ESC}\\click here{ESC}]8;;{ESC}\\"  # OSC 8: a terminal link
CLEAR = f"{ESC}[2J{ESC}[H"  # clears the screen, cursor home


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def good(tid):
    return [tid, "Grow NJ", f"C-{tid}", "Seller LLC", "Buyer Inc.", D, 30_000, 27_000, CERTIFICATE]


@pytest.mark.parametrize(
    "text, shown",
    [
        ("plain.xlsx", "plain.xlsx"),
        ("a\nfailed  payroll.xlsx", "a\\nfailed  payroll.xlsx"),  # a line break: one line
        ("a\r\tb", "a\\r\\tb"),
        (CLEAR, "\\x1b[2J\\x1b[H"),
        (HYPERLINK, "\\x1b]8;;https://attacker.example/\\x1b\\click here\\x1b]8;;\\x1b\\"),
        ("\x00\x07\x7f", "\\x00\\x07\\x7f"),  # C0 and DEL
        ("\x85\x9b", "\\x85\\x9b"),  # C1: NEL and CSI
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),  # line and paragraph separators
        ("caf\udce9.xlsx", "caf\\xe9.xlsx"),  # a name whose byte is not UTF-8
        ("[bold red]CFO[/bold red]", "[bold red]CFO[/bold red]"),  # markup is text: left as it is
        ("café ✓", "café ✓"),  # printable characters are never escaped
        (None, ""),
    ],
)
def test_printable_escapes_control_characters(text, shown):
    assert printable(text) == shown
    assert "\n" not in printable(text) and ESC not in printable(text)


def _no_escapes(output: str) -> None:
    assert ESC not in output and "\x9b" not in output and "\u2028" not in output


def test_run_prints_each_file_on_one_line(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    forged = "notes.txt\nfailed  payroll.xlsx  forged"  # a name that would forge a second line
    (inbox / forged).write_text("minutes")
    (inbox / f"{CLEAR}x.txt").write_text("minutes")
    write_workbook(inbox / "payroll.xlsx", {"Transfers": [TRANSFER_HEADERS, good("T-1")]})
    result = invoke("run", inbox, "--out", out)
    _no_escapes(result.output)
    lines = result.output.splitlines()
    # payroll.xlsx is done; only the two text files failed, each on its own one line
    assert [line for line in lines if line.startswith("failed  payroll.xlsx")] == []
    assert any(line.startswith("done  payroll.xlsx  1 rows") for line in lines)
    assert any(line.startswith("failed  notes.txt\\nfailed  payroll.xlsx  forged  ") for line in lines)
    assert any(line.startswith("failed  \\x1b[2J\\x1b[Hx.txt  ") for line in lines)
    assert sum(line.startswith("failed  ") for line in lines) == 2


def _ledger_with(tmp_path, name: str, reviewer: str, note: str):
    """A ledger holding one run, one file named `name`, and one decision by `reviewer` with `note`."""
    path = tmp_path / "ledger.sqlite"
    Ledger(path)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO runs (run_id, started, ended, files, report) VALUES ('r1', '2026-11-30T00:00:00', NULL, 1, ?)", (name,))
        db.execute(
            "INSERT INTO files (run_id, name, status, reason, output, archived) VALUES ('r1', ?, 'failed', ?, NULL, ?)",
            (name, f"{name} is not an intake file", name),
        )
        db.execute(
            "INSERT INTO decisions (run_id, file, sheet, record_id, decision, reviewer, note, applied)"
            " VALUES ('r1', ?, 'Transfers', ?, 'Accept', ?, ?, 1)",
            (name, name, reviewer, note),
        )
    return path


@pytest.mark.parametrize(
    "name, reviewer, note, expected",
    [
        # a reviewer named with markup is shown as typed, never bold red
        ("east.xlsx", "[bold red]CFO[/bold red]", "ok", ["[bold red]CFO[/bold red]"]),
        # a note holding a terminal hyperlink and a screen clear: escaped, no link, no clear
        ("east.xlsx", "Ann", f"see {HYPERLINK} {CLEAR}", ["\\x1b]8;;https://attacker.example/", "\\x1b[2J"]),
        # a closing tag with nothing open crashed rich's markup parser
        ("east[/].xlsx", "Ann", "ok", ["east[/].xlsx"]),
        # rich's link markup is text too
        ("east.xlsx", "Ann", "[link=https://attacker.example/]here[/link]", ["[link=https://attacker.example/]here[/link]"]),
        # a line break in a name stays in its cell
        ("a\nfailed  payroll.xlsx", "Ann", "ok", ["a\\nfailed"]),
    ],
)
@pytest.mark.parametrize("view", [["--decisions"], ["--run", "r1"], ["--run", "r1", "--decisions"], []])
def test_history_prints_the_ledger_as_text(tmp_path, name, reviewer, note, expected, view):
    path = _ledger_with(tmp_path, name, reviewer, note)
    result = invoke("history", "--ledger", path, *view)
    assert result.exit_code == 0, result.output
    assert result.exception is None
    _no_escapes(result.output)
    assert not any(line.startswith("failed  payroll.xlsx") for line in result.output.splitlines())
    flat = "".join(line.strip(" │┃|") for line in result.output.splitlines())  # folded cells joined
    if "--decisions" in view or name != "east.xlsx":  # the runs table shows no reviewer nor note, but the report name
        for text in expected:
            assert text in flat or text in result.output, (text, result.output)


def test_history_reads_a_ledger_with_text_that_is_not_utf8(tmp_path):
    path = _ledger_with(tmp_path, "east.xlsx", "Ann", "ok")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE decisions SET note = CAST(x'636166e9' AS TEXT)")  # 'caf' and a Latin-1 byte
    result = invoke("history", "--ledger", path, "--decisions")
    assert result.exit_code == 0, result.output
    assert "caf\\xe9" in result.output


# -- the ledger: a `.dump` restore, and reading without writing ---------------------------------------------


def _ledger_at(path, version: int) -> None:
    """A ledger as the release with migration `version` wrote it (its user_version set), one run in it."""
    with sqlite3.connect(path) as db:
        for _number, script in MIGRATIONS[:version]:
            db.executescript(script)
        db.execute(f"PRAGMA user_version = {version}")
        db.execute("INSERT INTO runs (run_id, started, ended, files) VALUES ('old', '2026-01-01T00:00:00', '2026-01-01T00:01:00', 1)")
        db.execute("INSERT INTO files (run_id, name, status) VALUES ('old', 'jan.xlsx', 'processed')")


def _dump_restore(source, target) -> None:
    """What `sqlite3 old.db .dump | sqlite3 new.db` does: tables and rows, no user_version."""
    with sqlite3.connect(source) as old, sqlite3.connect(target) as new:
        new.executescript("\n".join(old.iterdump()))


@pytest.mark.parametrize("version", [1, 2, 3, 4])  # each migration's tables, restored without their number
def test_a_dump_restored_ledger_is_recognised_by_its_tables_and_migrated(tmp_path, version):
    old, restored = tmp_path / "old.sqlite", tmp_path / "restored.sqlite"
    _ledger_at(old, version)
    _dump_restore(old, restored)
    with sqlite3.connect(restored) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 0  # lost in the dump
        assert version_by_tables(db) == version
    Ledger(restored)  # before: "duplicate column name" on every open, for ever
    Ledger(restored)  # and nothing applied twice
    with sqlite3.connect(restored) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("SELECT name FROM files").fetchall() == [("jan.xlsx",)]
    result = invoke("history", "--ledger", restored, "--run", "old")
    assert result.exit_code == 0 and "jan.xlsx" in result.output


def test_an_empty_database_is_migrated_from_nothing(tmp_path):
    path = tmp_path / "new.sqlite"
    with sqlite3.connect(path, isolation_level=None) as db:
        assert version_by_tables(db) == 0
        assert migrate(db) == SCHEMA_VERSION


def test_the_migrations_marks_match_the_migrations(tmp_path):
    # version_by_tables knows one mark per migration: a new migration must add its own
    for number in range(1, SCHEMA_VERSION + 1):
        path = tmp_path / f"v{number}.sqlite"
        _ledger_at(path, number)
        with sqlite3.connect(path) as db:
            assert version_by_tables(db) == number


def _only_read_only_opens(monkeypatch):
    """A read-only filesystem, as SQLite sees it: any open that is not read-only fails (root ignores
    file modes, so chmod cannot show it); returns the list of opens made."""
    real = sqlite3.connect
    opens = []

    def connect(database, *args, **kwargs):
        target = str(database)
        opens.append(target)
        if not (kwargs.get("uri") and ("mode=ro" in target or "immutable=1" in target)):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(database, *args, **kwargs)

    monkeypatch.setattr("batch.run.ledger.backends.sqlite3.connect", connect)
    return opens


@pytest.mark.parametrize("version", [1, 2, 3, SCHEMA_VERSION])
@pytest.mark.parametrize("view", [[], ["--run", "old"], ["--decisions"]])
def test_history_reads_a_ledger_read_only_and_never_migrates_it(tmp_path, monkeypatch, version, view):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "ledger.sqlite"
    _ledger_at(path, version)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    opens = _only_read_only_opens(monkeypatch)
    result = invoke("history", "--ledger", path, *view)
    assert result.exit_code == 0, result.output
    assert opens and all("mode=ro" in o or "immutable=1" in o for o in opens)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # not migrated, not written
    assert sorted(p.name for p in folder.iterdir()) == ["ledger.sqlite"]  # no journal, no WAL files
    older = [line for line in result.output.splitlines() if "older than this njcredits" in line]
    # older: one line says so, naming both schema versions; current: nothing said
    assert older == ([] if version == SCHEMA_VERSION else [older[0]])
    if version < SCHEMA_VERSION:
        assert f"schema {version}, this version uses {SCHEMA_VERSION}" in older[0]
    if "--decisions" not in view:
        assert ("jan.xlsx" if view else "old") in result.output


def test_history_of_a_file_that_is_no_ledger_is_one_line(tmp_path):
    path = tmp_path / "ledger.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE other (x)")
    result = invoke("history", "--ledger", path)
    assert result.exit_code == 1 and "cannot be opened (it is not an njcredits ledger" in result.output
    assert "Traceback" not in result.output


def test_the_base_schema_is_the_first_migration():
    assert MIGRATIONS[0] == (1, BASE_SCHEMA)


def test_validate_prints_a_file_name_with_markup_as_text(tmp_path):
    path = write_workbook(tmp_path / "east[red]x.xlsx", {"Transfers": [TRANSFER_HEADERS, good("T-1"), good("T-1")]})
    result = invoke("validate", path)  # two rows of one ID: a finding, so a table
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.output
    assert "Findings in east[red]x.xlsx" in result.output
    _no_escapes(result.output)


def test_a_subfolder_file_printed_as_east_closing_tag_does_not_crash_history(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    (inbox / "east[").mkdir(parents=True)
    write_workbook(inbox / "east[" / "].xlsx", {"Transfers": [TRANSFER_HEADERS, good("T-1")]})
    result = invoke("run", inbox, "--out", out)
    assert result.exit_code == 0, result.output
    run_id = next(out.glob("run-*.summary.xlsx")).name.split(".")[0].removeprefix("run-")
    for view in (["--run", run_id], ["--decisions"], ["--run", run_id, "--decisions"], []):
        shown = invoke("history", "--out", out, *view)
        assert shown.exit_code == 0 and shown.exception is None, shown.output
    assert "east[/].xlsx" in result.output  # the name printed: its folder and its name
    assert "east[/].xlsx" in invoke("history", "--out", out, "--run", run_id).output
