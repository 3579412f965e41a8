"""A record is known by its team, sheet and record ID: two teams sharing a ledger may number their
rows alike, and neither team's records or decisions stand for the other's. A ledger shared by
inboxes needs `team` named in njcredits.toml."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_reviews import ROWS, _decide, _sheet, transfers_workbook

from batch.cli import main
from batch.run.ledger import MIGRATIONS, Ledger, migrate

AS_OF = "2026-11-30"


def _inbox(folder: Path, rows=ROWS, name: str = "review.xlsx") -> Path:
    """An inbox holding one Transfers workbook, `name`."""
    transfers_workbook(folder / name, rows)
    return folder


def _run(where: Path, inbox: Path, outbox: Path, team: str | None, monkeypatch):
    """`njcredits run INBOX --out OUTBOX` started in `where`, whose njcredits.toml names `team`."""
    where.mkdir(parents=True, exist_ok=True)
    if team is not None:
        (where / "njcredits.toml").write_text(f'team = "{team}"\n', encoding="utf-8")
    monkeypatch.chdir(where)
    return CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox), "--as-of", AS_OF, "--keep-inputs", "--force"])


def test_a_ledger_shared_by_two_inboxes_needs_each_team_named(tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    east, west = _inbox(tmp_path / "east"), _inbox(tmp_path / "west")
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0  # the ledger's first inbox
    refused = _run(tmp_path / "w", west, outbox, None, monkeypatch)
    assert refused.exit_code == 2  # a usage error, before anything is touched
    assert f"shared with the inbox {east}" in refused.output and 'team = "..."' in refused.output
    with sqlite3.connect(outbox / ".njcredits" / "ledger.sqlite") as db:
        assert db.execute("SELECT team FROM runs").fetchall() == [(str(east),)]  # the refused run never began
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0  # its own inbox again: not shared
    assert _run(tmp_path / "w", west, outbox, "West", monkeypatch).exit_code == 0  # named: runs
    with sqlite3.connect(outbox / ".njcredits" / "ledger.sqlite") as db:
        assert db.execute("SELECT team, COUNT(*) FROM records GROUP BY team ORDER BY team").fetchall() == [(str(east), 6), ("West", 3)]


def test_two_teams_numbering_alike_keep_their_own_records_and_decisions(tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    east = _inbox(tmp_path / "east")
    # west's T-2 is another transfer, with other figures: $40,000 for $45,000
    west = _inbox(tmp_path / "west", [ROWS[0], [*ROWS[1][:7], 40_000, 45_000], ROWS[2]], "west.xlsx")
    assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    assert _run(tmp_path / "w", west, outbox, "West", monkeypatch).exit_code == 0
    # east waives its T-2 (the premium warning), and drops the returned workbook back
    note = "Board-approved premium, minutes 2026-11"
    _decide(outbox / "review.annotated.xlsx", east / "review.xlsx", {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", note)})
    assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    assert _sheet(outbox / "review.annotated.xlsx")["T-2"]["Status"] == "OK"
    # west waives its own T-2 with another note: its decision is judged by its own record's history
    _decide(outbox / "west.annotated.xlsx", west / "west.xlsx", {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "KL", "Other minutes")})
    assert _run(tmp_path / "w", west, outbox, "West", monkeypatch).exit_code == 0
    # east's unchanged workbook, dropped back once more: its decision still stands (not stale by west's)
    assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    east_rows = _sheet(outbox / "review.annotated.xlsx")
    assert east_rows["T-2"]["Status"] == "OK" and "STALE" not in east_rows["T-2"]["Findings"]
    with sqlite3.connect(outbox / ".njcredits" / "ledger.sqlite") as db:
        recorded = db.execute("SELECT team, record_id, note FROM decisions ORDER BY rowid").fetchall()
        runs = [r for (r,) in db.execute("SELECT run_id FROM runs ORDER BY started")]
    assert recorded == [("East", "T-2", note), ("West", "T-2", "Other minutes")]  # each recorded once, as its team's
    # a record's earlier version is its own team's: west's first run had no earlier T-1, T-2, T-3
    book = Ledger(outbox / ".njcredits" / "ledger.sqlite")
    assert book.previous_records(runs[1]).empty
    assert sorted(book.previous_records(runs[3])["team"].unique()) == ["West"]


@pytest.mark.parametrize("team", ["East", None])
def test_run_file_is_the_ledgers_team_when_it_has_one(tmp_path, monkeypatch, team):
    """A returned workbook run as a FILE from another folder is the ledger's one team's."""
    outbox = tmp_path / "outbox"
    east = _inbox(tmp_path / "east")
    assert _run(tmp_path / "e", east, outbox, team, monkeypatch).exit_code == 0
    monkeypatch.chdir(tmp_path)  # no njcredits.toml here
    again = CliRunner().invoke(main, ["run", str(outbox / "review.annotated.xlsx"), "--out", str(tmp_path / "o2"),
                                      "--ledger", str(outbox / ".njcredits" / "ledger.sqlite"), "--as-of", AS_OF, "--force"])  # fmt: skip
    assert again.exit_code == 0, again.output
    with sqlite3.connect(outbox / ".njcredits" / "ledger.sqlite") as db:
        assert {t for (t,) in db.execute("SELECT team FROM runs")} == {team or str(east)}


def test_migration_5_makes_each_earlier_run_its_inboxs_team(tmp_path):
    path = tmp_path / "ledger.sqlite"
    with sqlite3.connect(path, isolation_level=None) as db:
        for _number, script in MIGRATIONS[:4]:
            for statement in filter(None, (s.strip() for s in script.split(";"))):
                db.execute(statement)
        db.execute("PRAGMA user_version = 4")
        db.execute("INSERT INTO runs (run_id, started, inbox) VALUES ('R1', '2026-10-01', '/teams/east'), ('R2', '2026-10-02', '/w')")
        db.execute(
            "INSERT INTO records (run_id, file, sheet, record_id) VALUES ('R1', 'a.xlsx', 'BEIP', 'B-1'), ('R2', 'b', 'BEIP', 'B-1')"
        )
        db.execute("INSERT INTO decisions (run_id, file, sheet, record_id, decision) VALUES ('R2', 'b', 'BEIP', 'B-1', 'Approved')")
        assert migrate(db) == 5
        assert db.execute("SELECT run_id, team FROM runs ORDER BY run_id").fetchall() == [("R1", "/teams/east"), ("R2", "/w")]
        assert db.execute("SELECT run_id, team FROM records ORDER BY run_id").fetchall() == [("R1", "/teams/east"), ("R2", "/w")]
        assert db.execute("SELECT team, decision FROM decisions").fetchall() == [("/w", "Approved")]
