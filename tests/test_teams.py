"""A record is known by its team, sheet and record ID: two teams sharing a ledger may number their
rows alike, and neither team's records or decisions stand for the other's. A ledger shared by
inboxes needs `team` named in njcredits.toml."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from databases import ledger_query
from helpers import ledger_at
from test_reviews import ROWS, _decide, _sheet, transfers_workbook

from batch.cli import main
from batch.run.ledger import SCHEMA_VERSION, Ledger, migrate

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


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_a_ledger_shared_by_two_inboxes_needs_each_team_named(tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    east, west = _inbox(tmp_path / "east"), _inbox(tmp_path / "west")
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0  # the ledger's first inbox
    refused = _run(tmp_path / "w", west, outbox, None, monkeypatch)
    assert refused.exit_code == 2  # a usage error, before anything is touched
    assert f"shared with the inbox {east}" in refused.output and 'team = "..."' in refused.output
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team FROM runs") == [(str(east),)]  # the refused run never began
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0  # its own inbox again: not shared
    assert _run(tmp_path / "w", west, outbox, "West", monkeypatch).exit_code == 0  # named: runs
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team, COUNT(*) FROM records GROUP BY team ORDER BY team") == [
        (str(east), 6),
        ("West", 3),
    ]


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
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
    # west waives its own T-2 in the very words of east's decision: its decision is judged by its own
    # record's history, and east's, identical in words but over other figures, is not west's
    _decide(outbox / "west.annotated.xlsx", west / "west.xlsx", {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", note)})
    assert _run(tmp_path / "w", west, outbox, "West", monkeypatch).exit_code == 0
    # east's unchanged workbook, dropped back once more: its decision still stands (not stale by west's)
    assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    east_rows = _sheet(outbox / "review.annotated.xlsx")
    assert east_rows["T-2"]["Status"] == "OK" and "STALE" not in east_rows["T-2"]["Findings"]
    recorded = ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team, record_id, note FROM decisions ORDER BY rowid")
    runs = [r for (r,) in ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT run_id FROM runs ORDER BY started")]
    assert recorded == [("East", "T-2", note), ("West", "T-2", note)]  # each recorded once, as its team's
    shown = CliRunner().invoke(main, ["history", "--ledger", str(outbox / ".njcredits" / "ledger.sqlite"), "--decisions"])
    assert shown.exit_code == 0 and "team" in shown.output and "East" in shown.output and "West" in shown.output  # whose each is
    assert _sheet(outbox / "west.annotated.xlsx")["T-2"]["Status"] == "OK"
    # a record's earlier version is its own team's: west's first run had no earlier T-1, T-2, T-3
    book = Ledger(outbox / ".njcredits" / "ledger.sqlite")
    assert book.previous_records(runs[1]).empty
    assert sorted(book.previous_records(runs[3])["team"].unique()) == ["West"]


@pytest.mark.parametrize("team", ["East", None])
def test_run_file_from_elsewhere_is_the_ledgers_one_team(tmp_path, monkeypatch, team):
    """A returned workbook run as a FILE from a folder no run of the ledger used is the ledger's one team's."""
    outbox = tmp_path / "outbox"
    east = _inbox(tmp_path / "east")
    assert _run(tmp_path / "e", east, outbox, team, monkeypatch).exit_code == 0
    monkeypatch.chdir(tmp_path)  # no njcredits.toml here
    elsewhere = tmp_path / "downloads" / "review.annotated.xlsx"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes((outbox / "review.annotated.xlsx").read_bytes())
    again = CliRunner().invoke(main, ["run", str(elsewhere), "--out", str(tmp_path / "o2"),
                                      "--ledger", str(outbox / ".njcredits" / "ledger.sqlite"), "--as-of", AS_OF, "--force"])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert {t for (t,) in ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team FROM runs")} == {team or str(east)}


@pytest.mark.sqlite_only
def test_migration_5_makes_each_earlier_run_its_inboxs_team(tmp_path):
    path = tmp_path / "ledger.sqlite"
    with sqlite3.connect(path, isolation_level=None) as db:
        ledger_at(db, 4)
        db.execute("INSERT INTO runs (run_id, started, inbox) VALUES ('R1', '2026-10-01', '/teams/east'), ('R2', '2026-10-02', '/w')")
        db.execute(
            "INSERT INTO records (run_id, file, sheet, record_id) VALUES ('R1', 'a.xlsx', 'BEIP', 'B-1'), ('R2', 'b', 'BEIP', 'B-1')"
        )
        db.execute("INSERT INTO decisions (run_id, file, sheet, record_id, decision) VALUES ('R2', 'b', 'BEIP', 'B-1', 'Approved')")
        assert migrate(db) == SCHEMA_VERSION
        assert db.execute("SELECT run_id, team FROM runs ORDER BY run_id").fetchall() == [("R1", "/teams/east"), ("R2", "/w")]
        assert db.execute("SELECT run_id, team FROM records ORDER BY run_id").fetchall() == [("R1", "/teams/east"), ("R2", "/w")]
        assert db.execute("SELECT team, decision FROM decisions").fetchall() == [("/w", "Approved")]


@pytest.mark.sqlite_only
def test_migration_5_makes_a_returned_workbooks_run_its_inboxs_team(tmp_path):
    """Before migration 5 a `run FILE` of a returned workbook recorded the outbox as its inbox: it is
    the team's whose runs wrote that outbox, and a run of one file, so it never makes the ledger shared."""
    path = tmp_path / "ledger.sqlite"
    with sqlite3.connect(path, isolation_level=None) as db:
        ledger_at(db, 4)
        db.execute(
            "INSERT INTO runs (run_id, started, inbox, outbox) VALUES ('R1', '2026-10-01', '/east', '/out'),"
            " ('R2', '2026-10-02', '/out', '/out'), ('R3', '2026-10-03', '/dl', '/out')"
        )
        db.execute("INSERT INTO records (run_id, file, sheet, record_id) VALUES ('R2', 'a.annotated.xlsx', 'BEIP', 'B-1')")
        assert migrate(db) == SCHEMA_VERSION
        got = db.execute("SELECT run_id, team, one_file FROM runs ORDER BY run_id").fetchall()
        assert got == [("R1", "/east", None), ("R2", "/east", 1), ("R3", "/dl", None)]  # whether R1 and R3 were of one file: not known
        assert db.execute("SELECT team FROM records").fetchall() == [("/east",)]


# team_for over the ledger's runs (latest first): folders as the runs recorded them
def _place(inbox, team, outbox="/srv/out", one_file=0):
    return {"inbox": inbox, "outbox": outbox, "team": team, "one_file": one_file}


EAST, WEST = _place("/srv/east", "/srv/east"), _place("/srv/west", "West")
FILE_RUN = _place("/srv/out", "/srv/east", one_file=1)  # a returned workbook run from the outbox
OLD_DL = _place("/home/dl", "/home/dl", one_file=None)  # a run from before migration 5: of one file or not, not known
RENAMED = "This run is team 'Other''s; this inbox's earlier runs were team 'East''s"
NO_RUN_YET = "has no run of an inbox in this ledger yet"


@pytest.mark.parametrize(
    ("team", "places", "file", "expected"),
    [
        # a folder run, no team named: the inbox's latest team, else its path
        (None, [], None, "/srv/east"),
        (None, [EAST], None, "/srv/east"),
        (None, [EAST, FILE_RUN], None, "/srv/east"),  # a run of one file never makes the ledger shared
        (None, [EAST, OLD_DL], None, "/srv/east"),  # nor an earlier run that may have been one
        (None, [_place("/srv/east", "East")], None, "East"),  # named before, not now: still the team it was
        (None, [_place("/srv/x/../east", "/srv/x/../east"), EAST], None, ("/srv/east", ("/srv/x/../east",))),  # one inbox, two spellings
        (None, [EAST, WEST], None, "refused"),
        (None, [WEST], None, "refused"),
        # named: that team, adopting the inbox's default team; another named team never (a note says so)
        ("East", [EAST, WEST], None, ("East", ("/srv/east",))),
        ("East", [_place("/srv/east", "East")], None, "East"),
        ("Other", [_place("/srv/east", "East")], None, ("Other", (), RENAMED)),
        ("Other", [_place("/srv/east", "Other"), _place("/srv/east", "East")], None, "Other"),  # said once, at the rename
        (
            "East Finance",
            [_place("/srv/east", "east")],
            None,
            ("East Finance", (), "earlier runs were team 'east''s"),
        ),  # a name, not a path
        # one file, no team named: the team of the runs whose inbox or outbox holds its folder
        (None, [EAST, FILE_RUN], "/srv/out/a.annotated.xlsx", "/srv/east"),
        (None, [EAST, WEST], "/srv/west/a.xlsx", "West"),
        (None, [EAST, WEST], "/srv/east/processed/r1/a.xlsx", "/srv/east"),
        (None, [EAST, WEST], "/srv/out/a.annotated.xlsx", "refused"),  # the outbox both share: whose?
        (None, [EAST], "/home/dl/a.xlsx", "/srv/east"),  # from elsewhere: the ledger's one team
        (
            None,
            [_place("/home/dl", "East", one_file=1), _place("/srv/east", "East"), WEST],
            "/home/dl/b.xlsx",
            "refused",
        ),  # a file's folder is no team's
        (None, [EAST, WEST], "/home/dl/a.xlsx", "refused"),
        (None, [], "/home/dl/a.xlsx", "/home/dl"),
        (None, [EAST, OLD_DL], "/srv/out/a.annotated.xlsx", "/srv/east"),  # an inbox's run holds it: an older run is not asked
        # one file, named: the team's own inboxes' default team is its own; never the file's folder's
        ("West", [EAST], "/srv/east/a.xlsx", ("West", (), NO_RUN_YET)),
        ("East", [_place("/srv/east", "East"), EAST, FILE_RUN], "/srv/out/a.annotated.xlsx", ("East", ("/srv/east",))),
        ("East", [_place("/srv/east", "East"), _place("/srv/west", "/srv/west")], "/srv/out/a.annotated.xlsx", "East"),  # not west's
    ],
)
def test_a_runs_team(tmp_path, team, places, file, expected):
    from batch.run.config import Settings
    from batch.run.teams import TeamNeeded, team_for

    settings = Settings(
        inbox=Path("/srv/east"), outbox=Path("/srv/out"), archive=Path("/srv/east"), ledger=tmp_path / "l", workers=1, team=team
    )
    if expected == "refused":
        with pytest.raises(TeamNeeded, match='a shared ledger needs each team named. Set team = "..."'):
            team_for(settings, places, Path(file) if file else None)
        return
    name, adopts, note = (*expected, "")[:3] if isinstance(expected, tuple) else (expected, (), "")
    got = team_for(settings, places, Path(file) if file else None)
    assert (got.name, got.adopts) == (name, adopts) and note in got.note and bool(note) == bool(got.note)


def test_a_refusal_names_the_other_teams(tmp_path):
    from batch.run.config import Settings
    from batch.run.teams import TeamNeeded, team_for

    settings = Settings(inbox=Path("/srv/east"), outbox=Path("/srv/out"), archive=Path("/srv/east"), ledger=tmp_path / "l", workers=1)
    with pytest.raises(TeamNeeded) as refused:
        team_for(settings, [_place("/srv/east", "East"), WEST], None)
    assert "is shared with team 'West' (inbox /srv/west)" in str(refused.value)


@pytest.mark.parametrize("name", [" East", "East ", "East\tWest", "   "])
def test_a_team_name_is_written_exactly(tmp_path, name):
    from batch.run.config import ConfigError, load

    (tmp_path / "njcredits.toml").write_text(f'team = "{name}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="team = "):
        load(tmp_path)


def test_a_returned_workbook_run_from_the_outbox_keeps_the_inbox_its_own(tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    east = _inbox(tmp_path / "east")
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0
    returned = CliRunner().invoke(main, ["run", str(outbox / "review.annotated.xlsx"), "--out", str(outbox), "--as-of", AS_OF, "--force"])
    assert returned.exit_code == 0, returned.output
    # the inbox again, by a link and by a `..` path: the same inbox, the same team, not a shared ledger
    (tmp_path / "link").symlink_to(east)
    for inbox in (east, tmp_path / "link", tmp_path / "e" / ".." / "east"):
        again = _run(tmp_path / "e", inbox, outbox, None, monkeypatch)
        assert again.exit_code == 0, again.output
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT DISTINCT team FROM runs") == [(str(east.resolve()),)]
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT one_file, COUNT(*) FROM runs GROUP BY one_file") == [
        (0, 4),
        (1, 1),
    ]


def test_a_file_from_another_teams_folder_is_that_teams(tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    east, west = _inbox(tmp_path / "east"), _inbox(tmp_path / "west", name="west.xlsx")
    assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    assert _run(tmp_path / "w", west, outbox, "West", monkeypatch).exit_code == 0
    monkeypatch.chdir(tmp_path)  # no team named here
    ledger = ["--ledger", str(outbox / ".njcredits" / "ledger.sqlite"), "--as-of", AS_OF, "--force"]
    ok = CliRunner().invoke(main, ["run", str(west / "west.xlsx"), "--out", str(tmp_path / "o2"), *ledger])
    assert ok.exit_code == 0, ok.output
    # the outbox both teams' runs write, or a folder neither used: whose the file is cannot be told
    for file in (outbox / "west.annotated.xlsx", transfers_workbook(tmp_path / "dl" / "x.xlsx")):
        refused = CliRunner().invoke(main, ["run", str(file), "--out", str(tmp_path / "o3"), *ledger])
        assert refused.exit_code == 2 and 'team = "..."' in refused.output, refused.output
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team, one_file FROM runs ORDER BY started") == [
        ("East", 0),
        ("West", 0),
        ("West", 1),
    ]


def test_naming_the_team_later_keeps_the_inboxs_history(tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    east = _inbox(tmp_path / "east")
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0
    named = _run(tmp_path / "e", east, outbox, "East", monkeypatch)
    assert named.exit_code == 0 and "The ledger's 2 earlier runs of" in named.output and "are now East's" in named.output
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team, COUNT(*) FROM runs GROUP BY team") == [("East", 3)]
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT DISTINCT team FROM records") == [("East",)]
    last = ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT run_id FROM runs ORDER BY started DESC")[0][0]
    assert len(Ledger(outbox / ".njcredits" / "ledger.sqlite").previous_records(last)) == 3  # its records' earlier versions


@pytest.mark.parametrize("named_later", [False, True])
def test_a_returned_workbook_run_or_validated_reads_its_teams_decisions(tmp_path, monkeypatch, named_later):
    """`validate FILE` and `run FILE` of a returned workbook read the decisions of the file's team,
    also when the team was named after the decisions were recorded (before any run of the inbox)."""
    outbox = tmp_path / "outbox"
    east = _inbox(tmp_path / "east")
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0
    note = "Board-approved premium, minutes 2026-11"
    decision = {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", note)}
    _decide(outbox / "review.annotated.xlsx", east / "review.xlsx", decision)
    assert _run(tmp_path / "e", east, outbox, None, monkeypatch).exit_code == 0
    if named_later:  # named: the inbox's next run makes its earlier runs East's; until then a file run says so
        (tmp_path / "e" / "njcredits.toml").write_text('team = "East"\n', encoding="utf-8")
        monkeypatch.chdir(tmp_path / "e")
        early = CliRunner().invoke(main, ["validate", str(outbox / "review.annotated.xlsx"), "--out", str(outbox), "--as-of", AS_OF])
        assert "Team 'East' has no run of an inbox in this ledger yet" in early.output, early.output
        assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    # the consideration changed from 44,000 to 48,000 in the returned workbook, in the outbox: the
    # decision recorded for east's T-2 no longer covers the row
    changed = _decide(outbox / "review.annotated.xlsx", outbox / "review.annotated.xlsx", decision, {"T-2": {9: 48_000}})
    monkeypatch.chdir(tmp_path / "e")
    result = CliRunner().invoke(main, ["validate", str(changed), "--out", str(outbox), "--as-of", AS_OF, "--format", "csv"])
    assert "T-2" in result.output and "REVIEW_DECISION_STALE" in result.output, result.output
    book = str(outbox / ".njcredits" / "ledger.sqlite")
    result = CliRunner().invoke(main, ["run", str(changed), "--out", str(tmp_path / "o2"), "--ledger", book, "--as-of", AS_OF, "--force"])
    assert result.exit_code == 0, result.output
    assert _sheet(tmp_path / "o2" / "review.annotated.xlsx")["T-2"]["Findings"] == "CONSIDERATION_ABOVE_FACE; REVIEW_DECISION_STALE"
    teams = {t for (t,) in ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team FROM runs")}
    assert teams == {"East" if named_later else str(east.resolve())}


@pytest.mark.sqlite_only
def test_an_upgraded_ledger_of_one_team_is_not_shared(tmp_path, monkeypatch):
    """Runs recorded before migration 5: the inbox as a `..` path, and a run of one file from another
    folder (not known as one then). The inbox's next run is its one team's, not refused."""
    outbox, east = tmp_path / "outbox", _inbox(tmp_path / "east")
    (tmp_path / "x").mkdir()
    ledger = outbox / ".njcredits" / "ledger.sqlite"
    ledger.parent.mkdir(parents=True)
    with sqlite3.connect(ledger, isolation_level=None) as db:
        ledger_at(db, 4)
        for run, inbox in (("R1", tmp_path / "x" / ".." / "east"), ("R2", tmp_path / "dl")):
            db.execute("INSERT INTO runs (run_id, started, ended, inbox, outbox) VALUES (?, '2026-10-01', '2026-10-01', ?, ?)",
                       (run, str(inbox), str(outbox)))  # fmt: skip
    result = _run(tmp_path / "e", east, outbox, None, monkeypatch)
    assert result.exit_code == 0, result.output
    got = ledger_query(ledger, "SELECT run_id, team FROM runs ORDER BY started, run_id")
    assert got[:2] == [("R1", str(east.resolve())), ("R2", str(tmp_path / "dl"))] and got[2][1] == str(east.resolve())


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_another_teams_grow_nj_and_beip_records_of_the_same_ids_are_prior_incentives(tmp_path, monkeypatch):
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, GROW_HEADERS, beip, findings, grow

    outbox = tmp_path / "outbox"
    east, west = tmp_path / "east", tmp_path / "west"
    east.mkdir(), west.mkdir()
    write_workbook(east / "east.xlsx", {"GrowNJ": [GROW_HEADERS, grow()], "BEIP": [BEIP_HEADERS, beip()]})  # applied 2016-01-04
    # west numbers its rows alike: its own BEIP B-1 (agreed 2014-03-01), and its own G-1 of the same
    # business, applied for on 2016-06-01, after east's G-1 (2016-01-04)
    later = grow(date=dt.date(2016, 6, 1))
    write_workbook(west / "west.xlsx", {"GrowNJ": [GROW_HEADERS, later], "BEIP": [BEIP_HEADERS, beip(date=dt.date(2014, 3, 1))]})
    assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    assert _run(tmp_path / "w", west, outbox, "West", monkeypatch).exit_code == 0
    (f,) = findings(outbox / "west.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")
    # west's G-1 counts east's B-1 and G-1, other records of the same IDs, beside its own B-1
    said = f["Message"]
    assert "BEIP B-1 (Agreement Date 2014-03-01; west.xlsx" in said and "BEIP B-1 (Agreement Date 2015-06-01; east.xlsx" in said
    assert "GrowNJ G-1 (Application Date 2016-01-04; east.xlsx" in said
    # east's workbook dropped back: its B-1 is that workbook's row, named once; west's B-1 is another
    # record; west's G-1 came after east's application and is no prior incentive of it
    assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    (f,) = findings(outbox / "east.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")
    said = f["Message"]
    assert said.count("BEIP B-1") == 2 and "GrowNJ" not in said
    assert "BEIP B-1 (Agreement Date 2015-06-01; east.xlsx" in said and "BEIP B-1 (Agreement Date 2014-03-01; west.xlsx" in said


def test_a_named_teams_file_run_never_takes_another_teams_history(tmp_path, monkeypatch):
    """West runs with no team, East with its name, both into one outbox; East's run of a returned
    workbook from that outbox leaves West's runs and records West's."""
    outbox = tmp_path / "outbox"
    west, east = _inbox(tmp_path / "west", name="west.xlsx"), _inbox(tmp_path / "east")
    assert _run(tmp_path / "w", west, outbox, None, monkeypatch).exit_code == 0
    assert _run(tmp_path / "e", east, outbox, "East", monkeypatch).exit_code == 0
    monkeypatch.chdir(tmp_path / "e")
    result = CliRunner().invoke(main, ["run", str(outbox / "review.annotated.xlsx"), "--out", str(outbox), "--as-of", AS_OF, "--force"])
    assert result.exit_code == 0 and "now East's" not in result.output, result.output
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team, COUNT(*) FROM records GROUP BY team ORDER BY team") == [
        (str(west.resolve()), 3),
        ("East", 6),
    ]
