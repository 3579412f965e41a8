"""The ledger in PostgreSQL beside SQLite: the same schema from the same numbered migrations, a copy
from one to the other and back, the database's clock, the inbox lock across machines, runs of two
inboxes on one database, and a password that is never shown. Against a real server (tests/databases.py)."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
import uuid
import zipfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import launcher
import openpyxl
import pytest
from click.testing import CliRunner
from databases import ledger_of, ledger_query, new_schema
from test_reviews import _decide, _run, _sheet, transfers_workbook

from batch.cli import main
from batch.run.ledger import MIGRATIONS, SCHEMA_VERSION, Ledger, LedgerURL, backends, migrate
from batch.run.ledger.schema import scripts

D = dt.date
SAMPLES = Path(__file__).resolve().parent.parent / "sample_inputs"


def transfer(tid, cert, credit, date=None, amount=1_000_000):
    date = date or D(2026, 11, 10)
    # Transfer ID, Program, Certificate ID, Certificate Amount, Transferor, Transferee, Transfer Date, Credit, Consideration
    return [tid, "Grow NJ", cert, amount, "Seller LLC", "Buyer Inc.", date, credit, credit * 0.9]


def schema_of(where) -> dict:
    """Each ledger table's columns with their kind of type, and the named indexes (PostgreSQL's own
    primary keys and `ledger_schema` aside; SQLite's rowid is implicit, PostgreSQL's a column)."""
    kinds = {"text": "text", "bigint": "integer", "integer": "integer", "double precision": "real", "real": "real", "bytea": "blob",
             "blob": "blob"}  # fmt: skip
    found: dict = {"tables": {}, "indexes": set()}
    with backends.connect(where) as db:
        for table in sorted(db.tables() - {"ledger_schema"}):
            if db.kind == "postgresql":
                rows = db.execute(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()"
                    " AND table_name = ? ORDER BY ordinal_position",
                    (table,),
                ).fetchall()
            else:
                rows = [(r[1], r[2]) for r in db.raw.execute(f"PRAGMA table_info({table})")]
            found["tables"][table] = [(name, kinds[kind.lower()]) for name, kind in rows if name != "rowid"]
            if db.kind == "postgresql":
                found.setdefault("rowid", set()).update({table} if any(name == "rowid" for name, _ in rows) else set())
        if db.kind == "postgresql":
            query = "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%pkey'"
        else:
            query = "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'"
        found["indexes"] = {name for (name,) in db.execute(query).fetchall()}
    return found


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION + 1))
def test_every_migration_gives_both_databases_the_same_tables(tmp_path, postgres_ledger, version):
    with backends.connect(tmp_path / "ledger.sqlite") as db:
        assert migrate(db, upto=version) == version
    with backends.connect(postgres_ledger) as db:
        assert migrate(db, upto=version) == version
        assert migrate(db, upto=version) == version  # applied once: a second pass changes nothing
    lite, pg = schema_of(tmp_path / "ledger.sqlite"), schema_of(postgres_ledger)
    assert lite["tables"] == pg["tables"] and lite["indexes"] == pg["indexes"]
    # the tables read in the order their rows were written number them in PostgreSQL as SQLite does itself
    assert pg["rowid"] == {"files", "records", "decisions"} & set(pg["tables"])


def test_the_numbered_migrations_are_the_same_on_both():
    assert [n for n, _ in scripts("postgresql")] == [n for n, _ in MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))


def _rows(where, table: str) -> list[tuple]:
    numbered = table in ("files", "records", "decisions")
    with backends.connect(where, read_only=True) as db:
        columns = (["rowid"] if numbered else []) + db.columns(table)
        rows = db.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
    return sorted((tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows), key=repr)


def test_a_ledger_copied_to_postgresql_and_back_keeps_every_row(tmp_path, postgres_ledger):
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLES, inbox)
    (inbox / ".njcredits-keep-inputs").unlink(missing_ok=True)
    source = tmp_path / "ledger.sqlite"
    first = CliRunner().invoke(main, ["run", str(inbox), "--out", str(tmp_path / "out"), "--ledger", str(source), "--as-of", "2026-11-30"])
    assert first.exit_code in (0, 1), first.output
    # a reviewer's decision, so that the decisions table holds a row: a warning waived in a returned workbook
    returned = _run(transfers_workbook(tmp_path / "review" / "review.xlsx"), tmp_path / "out1", source)
    waiver = {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", "Board-approved premium")}
    _run(_decide(returned, tmp_path / "rev" / returned.name, waiver), tmp_path / "out2", source)
    tables = ["runs", "files", "records", "record_keys", "decisions"]
    assert all(_rows(source, t) for t in tables)  # every table holds rows

    there = CliRunner().invoke(main, ["ledger", "copy", "--from", str(source), "--to", postgres_ledger.url])
    assert there.exit_code == 0, there.output
    back_path = tmp_path / "back.sqlite"
    back = CliRunner().invoke(main, ["ledger", "copy", "--from", postgres_ledger.url, "--to", str(back_path)])
    assert back.exit_code == 0, back.output
    for table in tables:
        assert _rows(source, table) == _rows(postgres_ledger, table) == _rows(back_path, table), table
    counts = {t: len(_rows(source, t)) for t in ("runs", "files", "records", "decisions")}
    assert there.output.strip() == (
        f"Copied {counts['runs']} runs, {counts['files']} files, {counts['records']:,} records, {counts['decisions']} decisions "
        f"from {source} to {postgres_ledger.shown}."
    )
    # the copy is a ledger like any other: the next run there is numbered after the copied rows
    Ledger(postgres_ledger).add_file(_rows(source, "runs")[0][0], {"name": "later.xlsx", "status": "gone"})
    assert max(r[0] for r in _rows(postgres_ledger, "files")) == max(r[0] for r in _rows(source, "files")) + 1

    # a destination that holds runs is refused, and nothing is copied into it
    before = _rows(back_path, "records")
    refused = CliRunner().invoke(main, ["ledger", "copy", "--from", str(source), "--to", str(back_path)])
    assert refused.exit_code == 1
    assert f"The ledger {back_path} already holds {counts['runs']} runs: a copy goes only into an empty ledger" in refused.output
    assert _rows(back_path, "records") == before


def test_a_copy_of_an_older_ledger_is_migrated_there_and_the_source_left_as_it_was(tmp_path, postgres_ledger):
    from helpers import ledger_at

    source = tmp_path / "old.sqlite"
    with sqlite3.connect(source, isolation_level=None) as db:
        ledger_at(db, 4)
        db.execute("INSERT INTO runs (run_id, started, ended, inbox, outbox) VALUES ('R1', '2026-10-01', '2026-10-01T01', '/in', '/out')")
        db.execute("INSERT INTO records (run_id, file, sheet, record_id, status) VALUES ('R1', 'a.xlsx', 'Transfers', 'T-1', 'OK')")
    before = source.read_bytes()
    copied = CliRunner().invoke(main, ["ledger", "copy", "--from", str(source), "--to", postgres_ledger.url])
    assert copied.exit_code == 0, copied.output
    assert source.read_bytes() == before  # only read
    assert Ledger.for_reading(postgres_ledger).version == SCHEMA_VERSION
    # migration 5 ran on the copy as on any ledger: the run's records are its inbox's team's
    with backends.connect(postgres_ledger) as db:
        assert db.one("SELECT team FROM records")[0] == "/in"


def test_a_copy_from_nothing_or_from_a_newer_ledger_is_refused(tmp_path, postgres_ledger):
    missing = CliRunner().invoke(main, ["ledger", "copy", "--from", str(tmp_path / "none.sqlite"), "--to", postgres_ledger.url])
    assert missing.exit_code == 1 and "There is no ledger at" in missing.output
    newer = tmp_path / "newer.sqlite"
    Ledger(newer)
    with sqlite3.connect(newer) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    refused = CliRunner().invoke(main, ["ledger", "copy", "--from", str(newer), "--to", postgres_ledger.url])
    assert refused.exit_code == 1 and "was written by a newer njcredits" in refused.output


# -- the database's clock ---------------------------------------------------------------------------


class _Skewed:
    """A machine's clock, `skew` away from the true time (the `dt` of batch.run.ledger.backends)."""

    UTC = dt.UTC
    skew = dt.timedelta(0)

    class datetime:  # noqa: N801 - stands for the datetime module's class
        @staticmethod
        def now(tz=None):
            return dt.datetime.now(tz) + _Skewed.skew


def test_ended_before_started_is_told_by_the_servers_clock_not_the_machines(tmp_path, postgres_ledger, monkeypatch):
    """Run A on a machine whose clock is an hour fast ends; run B starts after it, on a machine whose
    clock is an hour slow. By the machines' clocks B started before A ended and would not see A's
    transfer; by the server's, it did not, and it does."""
    inbox_a, inbox_b, outbox = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    transfers_workbook(inbox_a / "a.xlsx", [transfer("T-1", "C-1", 900_000)])
    transfers_workbook(inbox_b / "b.xlsx", [transfer("T-2", "C-1", 200_000, D(2026, 11, 20))])
    import batch.run.ledger.backends as where

    monkeypatch.setattr(where, "dt", _Skewed)
    for inbox, skew in ((inbox_a, dt.timedelta(hours=1)), (inbox_b, -dt.timedelta(hours=1))):
        _Skewed.skew = skew
        (tmp_path / f"{inbox.name}-team").mkdir()
        (tmp_path / f"{inbox.name}-team" / "njcredits.toml").write_text(f'team = "{inbox.name}"\n', encoding="utf-8")
        monkeypatch.chdir(tmp_path / f"{inbox.name}-team")
        done = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox), "--ledger", postgres_ledger.url, "--as-of", "2026-12-01"])
        assert done.exit_code == 0, done.output
    # 900,000 (A's, ended before B started by the server's clock) + 200,000 = 1,100,000 > 1,000,000
    assert _sheet(outbox / "b.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"
    with backends.connect(postgres_ledger) as db:
        (server_now,) = db.one("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI')")
        starts = [s for (s,) in db.execute("SELECT started FROM runs ORDER BY started").fetchall()]
    server = dt.datetime.fromisoformat(server_now + "+00:00")
    assert all(abs(dt.datetime.fromisoformat(s) - server) < dt.timedelta(minutes=5) for s in starts)


# -- the inbox lock across machines, and runs of two inboxes ------------------------------------------


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NJCREDITS_FAULT"}
    return {**env, "NJCREDITS_TEST_TAG": uuid.uuid4().hex, **extra}


def _held(gate: Path, count: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while len(list(gate.parent.glob(f"{gate.name}.*.held"))) < count:
        assert time.monotonic() < deadline, "the runs never reached their hold"
        time.sleep(0.05)


def _team_folder(tmp_path: Path, team: str) -> Path:
    folder = tmp_path / f"{team}-team"
    folder.mkdir(exist_ok=True)
    (folder / "njcredits.toml").write_text(f'team = "{team}"\n', encoding="utf-8")
    return folder


def test_a_run_never_sees_another_machines_half_done_run_and_sees_it_once_ended(tmp_path, postgres_ledger):
    """Inboxes East and West, one PostgreSQL ledger, each run a process of its own. East's November
    run is held after recording its transfer but before its end; West's November run, meanwhile,
    does not count it. In December both runs are held side by side, both started after both
    November runs ended: each counts both November transfers and not the other's December one."""
    url, outbox, gate = postgres_ledger.url, tmp_path / "out", tmp_path / "gate"
    inboxes = {side: tmp_path / side for side in ("east", "west")}
    transfers_workbook(inboxes["east"] / "east-nov.xlsx", [transfer("E-1", "C-1", 600_000)])
    transfers_workbook(inboxes["west"] / "west-nov.xlsx", [transfer("W-1", "C-1", 600_000, D(2026, 11, 12))])
    args = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}

    def start(side: str, fault: str | None):
        env = _env(NJCREDITS_FAULT=fault, NJCREDITS_FAULT_GATE=str(gate)) if fault else _env()
        cmd = ["run", inboxes[side], "--out", outbox / side, "--ledger", url, "--workers", "1", "--as-of", "2026-12-15"]
        return launcher.popen(cmd, env=env, cwd=_team_folder(tmp_path, side), **args)

    east = start("east", "report:hold")  # its file recorded, its report not written, the run not ended
    _held(gate, 1)
    west = start("west", None)
    assert west.communicate(timeout=120)[0] and west.returncode == 0
    # 600,000 of C-1 in West's own run; East's 600,000 is in the ledger, of a run not ended: not counted
    assert _sheet(outbox / "west" / "west-nov.annotated.xlsx")["W-1"]["Findings"] is None
    gate.touch()
    assert east.communicate(timeout=120)[1] is None and east.returncode == 0
    assert _sheet(outbox / "east" / "east-nov.annotated.xlsx")["E-1"]["Findings"] is None  # West's had not ended when East started

    gate.unlink()
    for held in tmp_path.glob("gate.*.held"):
        held.unlink()
    transfers_workbook(inboxes["east"] / "east-dec.xlsx", [transfer("E-2", "C-1", 50_000, D(2026, 12, 2))])
    transfers_workbook(inboxes["west"] / "west-dec.xlsx", [transfer("W-2", "C-1", 50_000, D(2026, 12, 3))])
    both = [start(side, "staged:hold") for side in ("east", "west")]
    _held(gate, 2)  # both begun: neither ended
    gate.touch()
    outs = [p.communicate(timeout=120)[0] for p in both]
    assert [p.returncode for p in both] == [0, 0], outs
    for side, tid in (("east", "E-2"), ("west", "W-2")):
        ws = openpyxl.load_workbook(outbox / side / f"{side}-dec.annotated.xlsx")["Transfers"]
        header = [c.value for c in ws[1]]
        row = [c.value for c in ws[2]]
        # 600,000 + 600,000 (both November runs, ended) + 50,000 (its own) = 1,250,000; the other December run is not counted
        assert row[header.index("Certificate Transferred To Date ($)")] == 1_250_000, side
        assert row[header.index("Findings")] == "CERTIFICATE_OVERTRANSFERRED" and row[0] == tid


def test_a_teams_inbox_locked_in_the_database_is_refused_as_on_one_machine(tmp_path, postgres_ledger, monkeypatch):
    """The same shared inbox run from another machine (mounted at another path, so its lock file is
    another): the lock the other machine's run holds in the database refuses it, before anything is
    touched; once released, the run goes."""
    from batch.run.ledger.backends import ServerLock, lock_key

    inbox = tmp_path / "inbox"
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 100_000)])
    monkeypatch.chdir(_team_folder(tmp_path, "east"))
    other = ServerLock(postgres_ledger, lock_key("team east"))
    assert other.take(wait=False)
    try:
        refused = CliRunner().invoke(main, ["run", str(inbox), "--out", str(tmp_path / "out"), "--ledger", postgres_ledger.url])
        assert refused.exit_code == 1
        assert f"Another njcredits run is processing {inbox} for team east (its lock is held in the ledger's database, by a session" in (
            refused.output
        )
        assert (inbox / "a.xlsx").exists() and not (tmp_path / "out").exists()
        with backends.connect(postgres_ledger) as db:
            assert "runs" not in db.tables() or db.one("SELECT COUNT(*) FROM runs")[0] == 0
    finally:
        other.release()
    done = CliRunner().invoke(main, ["run", str(inbox), "--out", str(tmp_path / "out"), "--ledger", postgres_ledger.url])
    assert done.exit_code == 0, done.output


def test_a_released_inbox_lock_is_held_by_no_session_at_once(postgres_ledger):
    """Released, the lock is free before `release` returns: a closed session alone would release it
    as the server ends the session, a moment later, and a run started at once could find it held."""
    from batch.run.ledger.backends import ServerLock, lock_key

    key = lock_key(f"a lock of this test alone {postgres_ledger.url}")  # other tests take their teams' locks meanwhile
    held = (
        "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        " AND classid::bigint = ? AND objid::bigint = ? AND objsubid = 1"
    )
    parts = ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF)
    with backends.connect(postgres_ledger) as db:  # open before, so that it asks the moment `release` returns
        for _ in range(100):  # a lock left to the session's end was seen held here in some runs, not in every run
            lock = ServerLock(postgres_ledger, key)
            assert lock.take(wait=False)
            assert db.one(held, parts)[0] == 1
            lock.release()
            assert db.one(held, parts)[0] == 0


def test_a_run_killed_on_one_machine_is_recovered_by_the_next_run_of_its_inbox(tmp_path, postgres_ledger):
    """kill -9 while the run holds its lock in the database: the server ends its session and the lock
    with it; another inbox's run meanwhile reads none of its records; the next run of its inbox
    finishes its bookkeeping."""
    url, outbox, gate = postgres_ledger.url, tmp_path / "out", tmp_path / "gate"
    inbox, other = tmp_path / "inbox", tmp_path / "other"
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 900_000)])
    transfers_workbook(other / "b.xlsx", [transfer("T-2", "C-1", 200_000, D(2026, 11, 20))])
    env = _env(NJCREDITS_FAULT="report:hold", NJCREDITS_FAULT_GATE=str(gate))
    proc = launcher.popen(["run", inbox, "--out", outbox, "--ledger", url, "--workers", "1"], env=env, cwd=_team_folder(tmp_path, "a"))
    _held(gate, 1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    again = launcher.run(["run", other, "--out", tmp_path / "out-b", "--ledger", url], env=_env(), cwd=_team_folder(tmp_path, "b"))
    assert again.returncode == 0, again.stdout + again.stderr
    assert _sheet(tmp_path / "out-b" / "b.annotated.xlsx")["T-2"]["Findings"] is None  # the killed run's 900,000 not counted
    gate.touch()
    after = launcher.run(["run", inbox, "--out", outbox, "--ledger", url], env=_env(), cwd=_team_folder(tmp_path, "a"))
    assert after.returncode == 0, after.stdout + after.stderr
    # killed after its file was archived and recorded, before its report: its end is recorded now, its file where it went
    assert re.search(r"Run \S+ was stopped before its end; its bookkeeping is finished\.", after.stdout), after.stdout
    assert len(list(inbox.glob("processed/*/a.xlsx"))) == 1
    with backends.connect(postgres_ledger) as db:
        assert db.one("SELECT COUNT(*) FROM runs WHERE ended IS NULL")[0] == 0
        assert db.one("SELECT COUNT(*) FROM runs WHERE note LIKE 'stopped before its end; finished by run%'")[0] == 1


# -- the password ---------------------------------------------------------------------------------


def _texts_of(path: Path) -> str:
    """Every text part of a workbook (or a text file) as one string."""
    if path.suffix == ".xlsx":
        with zipfile.ZipFile(path) as z:
            return "\n".join(z.read(n).decode("utf-8", "replace") for n in z.namelist())
    return path.read_text(encoding="utf-8", errors="replace")


@pytest.mark.parametrize("how", ["url", "PGPASSWORD", "pgpass"])
def test_the_password_is_never_shown_written_or_stored(tmp_path, postgres_database, monkeypatch, how):
    """A password that is a common word ("processed", which the run's own lines and the ledger hold
    as a word): given in the URL, by PGPASSWORD or in ~/.pgpass (PGPASSFILE), it is in no output, no
    report, no returned workbook and no row of the ledger, while the word itself stays wherever it
    is the tool's own."""
    import psycopg

    password, role = "processed", f"njc_word_{os.getpid()}"
    schema = new_schema(postgres_database)
    name = urlsplit(postgres_database).path.lstrip("/")
    with psycopg.connect(postgres_database, autocommit=True) as admin:
        admin.execute(f'DROP ROLE IF EXISTS "{role}"')
        admin.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
        search = urlsplit(schema.url).query.split("search_path%3D")[-1]
        admin.execute(f'GRANT ALL ON SCHEMA "{search}" TO "{role}"')
    try:
        host = urlsplit(postgres_database).netloc.rpartition("@")[2]
        user = f"{role}:{password}" if how == "url" else role
        url = urlunsplit(("postgresql", f"{user}@{host}", f"/{name}", urlsplit(schema.url).query, ""))
        monkeypatch.delenv("PGPASSWORD", raising=False)
        if how == "PGPASSWORD":
            monkeypatch.setenv("PGPASSWORD", password)
        if how == "pgpass":
            pgpass = tmp_path / "pgpass"
            pgpass.write_text(f"{host.split(':')[0]}:{host.split(':')[1]}:{name}:{role}:{password}\n", encoding="utf-8")
            pgpass.chmod(0o600)
            monkeypatch.setenv("PGPASSFILE", str(pgpass))
        inbox, outbox = tmp_path / "inbox", tmp_path / "out"
        transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 100_000), transfer("T-2", "C-2", 10_000)])
        (tmp_path / "team").mkdir()
        (tmp_path / "team" / "njcredits.toml").write_text(f'team = "east"\nledger = "{url}"\n', encoding="utf-8")
        monkeypatch.chdir(tmp_path / "team")
        ran = launcher.run(["run", inbox, "--out", outbox], env=_env(), cwd=tmp_path / "team")
        assert ran.returncode in (0, 1), ran.stdout + ran.stderr
        said = [ran]
        said.append(CliRunner().invoke(main, ["history"]))
        said.append(CliRunner().invoke(main, ["history", "--run", ran.stdout.split("Run ")[-1].split(":")[0]]))
        said.append(CliRunner().invoke(main, ["portfolio", "--out", str(outbox)]))
        said.append(CliRunner().invoke(main, ["validate", str(outbox / "a.annotated.xlsx")]))
        texts = [ran.stdout + ran.stderr] + [r.output + r.stderr for r in said[1:]]
        texts += [_texts_of(p) for p in [*outbox.rglob("*"), *inbox.rglob("*")] if p.is_file()]
        with backends.connect(LedgerURL(url)) as db:
            for table in sorted(db.tables()):
                texts.extend(repr(row) for row in db.execute(f"SELECT * FROM {table}").fetchall())
        shown = f"postgresql://{role}@{host}/{name}"
        assert shown in said[1].output  # history names the ledger, without the password
        assert "1 processed" in ran.stdout  # the word itself, where it is the tool's own, stays
        for text in texts:
            assert f":{password}@" not in text and f"password={password}" not in text.lower()
            assert not re.search(rf"{role}[^@\s]*{password}", text)
    finally:
        backends.close_connections()
        with psycopg.connect(postgres_database, autocommit=True) as admin:
            admin.execute(f'DROP OWNED BY "{role}"')
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("postgresql://ana:report@db.example:5432/njc", "postgresql://ana@db.example:5432/njc"),
        ("postgresql://ana@db.example/njc?password=report&sslmode=require", "postgresql://ana@db.example/njc?sslmode=require"),
        ("postgres://ana:p%40ss@h1:5432,h2:5433/njc", "postgres://ana@h1:5432,h2:5433/njc"),
        ("postgresql:///njc?host=/var/run/postgresql", "postgresql:///njc?host=/var/run/postgresql"),
        ("postgresql://report@db/report", "postgresql://report@db/report"),  # a user or database named like a password stays
        ("postgresql://ana:Qx?zz9@db:5432/njc", "postgresql://ana@db:5432/njc"),  # an unencoded ? in the password, as libpq reads it
        ("postgresql://ana:a#b@db/njc", "postgresql://ana@db/njc"),
        ("postgresql://ana@db/njc?%70assword=report", "postgresql://ana@db/njc"),  # the parameter's name percent-encoded
    ],
)
def test_a_url_is_shown_without_its_password(given, shown):
    where = LedgerURL(given)
    assert str(backends.location(given.replace("postgres", "PostgreS", 1))) == shown  # the scheme in any case
    assert str(where) == shown and repr(where) == f"LedgerURL({shown!r})" and f"{where}" == shown and where.url == given


def test_a_postgresql_ledger_that_cannot_be_reached_stops_the_run_before_anything_is_touched(tmp_path):
    inbox = tmp_path / "inbox"
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 100_000)])
    url = "postgresql://nobody:secretword@127.0.0.1:9/none?connect_timeout=2"
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(tmp_path / "out"), "--ledger", url])
    assert result.exit_code == 3, result.output
    assert "postgresql://nobody@127.0.0.1:9/none?connect_timeout=2" in result.stderr and "secretword" not in result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr and (inbox / "a.xlsx").exists()


def test_an_empty_postgresql_ledger_says_it_holds_no_runs(postgres_ledger, tmp_path):
    history = CliRunner().invoke(main, ["history", "--ledger", postgres_ledger.url])
    assert (
        history.exit_code == 0
        and history.output == f"The ledger {postgres_ledger.shown} holds no runs yet: no njcredits run has recorded there.\n"
    )
    portfolio = CliRunner().invoke(main, ["portfolio", "--out", str(tmp_path), "--ledger", postgres_ledger.url])
    assert portfolio.exit_code == 1 and "holds no runs yet" in portfolio.output and not (tmp_path / "njcredits-portfolio.xlsx").exists()


def test_a_kept_connection_the_server_ended_is_replaced(postgres_ledger, monkeypatch):
    """`watch` keeps its connection between runs; the server restarted meanwhile (here: every session
    of the ledger ended by the server): the next read connects again instead of failing."""
    import psycopg

    book = Ledger(postgres_ledger)
    assert book.runs().empty
    with psycopg.connect(postgres_ledger.url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = 'njcredits' AND datname = current_database()"
        ).fetchone()[0]
    assert ended >= 1
    monkeypatch.setattr(backends, "IDLE_CHECK", 0.0)  # idle long enough to be tried
    assert book.runs().empty and Ledger(postgres_ledger).places() == []


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://njc:secret%zzword@127.0.0.1:9/none",  # a percent sign the driver cannot decode: it quotes the URL
        "postgresql://njc:secretword@[::1/none",
        "PostgreSQL://njc:secretword@127.0.0.1:9/none?connect_timeout=2",
        "postgresql://njc@127.0.0.1:9/none?password=secretword&connect_timeout=2",
    ],
)
def test_a_drivers_message_never_carries_the_password(url, tmp_path):
    result = CliRunner().invoke(main, ["history", "--ledger", url])
    assert result.exit_code == 1 and "cannot be opened" in result.output, result.output
    assert "secret" not in result.output and "\\n" not in result.output


def test_text_postgresql_cannot_hold_is_kept_with_the_replacement_character(postgres_ledger):
    """A NUL character (a CSV cell may hold one; PostgreSQL's text cannot): the record is kept, its
    NUL as U+FFFD, and found again by the same ID."""
    import pandas as pd

    from batch.run.ledger import read_versions

    book = Ledger(postgres_ledger)
    book.start_run("R1", None, "0", "/in", "/out")
    records = pd.DataFrame({"sheet": ["Transfers"], "record_id": ["T-\x001"], "status": ["OK"], "business_name": ["Acme\x00 LLC"],
                            "fields": ["{}"], "key:certificate_key": ["c-\x001"]})  # fmt: skip
    book.add_file("R1", {"name": "a.csv", "status": "processed"}, records)
    book.end_run("R1", None, {}, None, {})  # read by other runs once ended
    with backends.connect(postgres_ledger) as db:
        assert db.execute("SELECT record_id, business_name FROM records").fetchall() == [("T-\ufffd1", "Acme\ufffd LLC")]
        assert db.one("SELECT key FROM record_keys") == ("c-\ufffd1",)
    found = read_versions(postgres_ledger, ("/in",), pd.DataFrame({"sheet": ["Transfers"], "record_id": ["T-\x001"]}))
    assert found["record_id"].tolist() == ["T-\ufffd1"]


def test_a_database_not_in_utf8_is_refused(postgres_database):
    import psycopg

    name = f"njc_ascii_{os.getpid()}"
    with psycopg.connect(postgres_database, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f"CREATE DATABASE \"{name}\" ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    try:
        url = urlunsplit(("postgresql", urlsplit(postgres_database).netloc, f"/{name}", "", ""))
        result = CliRunner().invoke(main, ["history", "--ledger", url])
        assert result.exit_code == 1 and "keeps its text as SQL_ASCII, not UTF-8" in result.output, result.output
    finally:
        backends.close_connections()
        with psycopg.connect(postgres_database, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_write_waits_for_another_at_most_its_time(postgres_ledger, monkeypatch):
    import psycopg

    book = Ledger(postgres_ledger)
    book.start_run("R1", None, "0", "/in", "/out")
    monkeypatch.setattr(backends, "WRITE_WAIT", 0.5)
    with psycopg.connect(postgres_ledger.url) as other:  # another machine's write, holding the ledger's write lock
        other.execute("SELECT pg_advisory_xact_lock(%s)", (backends.LEDGER_LOCK,))
        with pytest.raises(psycopg.errors.LockNotAvailable):
            book.end_run("R1", None, {}, None, {})
    book.end_run("R1", None, {}, None, {})  # once it is done


def test_only_the_inboxs_own_teams_killed_runs_are_its_to_finish_and_its_own_files_to_skip(postgres_ledger):
    book = Ledger(postgres_ledger)
    for run, team in (("A1", "East"), ("B1", "West")):  # two machines' runs of a folder of one path, neither ended
        book.start_run(
            run, None, "0", "/srv/inbox", "/srv/out", lambda places, team=team: __import__("batch.run.teams").run.teams.Team(team)
        )
    assert book.unfinished_runs("/srv/inbox", ("East",)) == ["A1"] and book.unfinished_runs("/srv/inbox", ("West",)) == ["B1"]
    book.add_file("B1", {"name": "a.xlsx", "sha256": "ab", "status": "processed"})
    book.end_run("B1", None, {}, None, {})
    assert book.processed_before("ab", "A1", "East") is None  # West's returned workbook is in West's outbox, not East's
    assert book.processed_before("ab", "A1", "West")["run_id"] == "B1"


def test_a_copy_into_tables_of_a_later_schema_is_refused(tmp_path, postgres_ledger):
    from helpers import ledger_at

    source = tmp_path / "old.sqlite"
    with sqlite3.connect(source, isolation_level=None) as db:
        ledger_at(db, 4)
        db.execute("INSERT INTO runs (run_id, started, ended, inbox, outbox) VALUES ('R1', '2026-10-01', '2026-10-01T01', '/in', '/out')")
    Ledger(postgres_ledger)  # a watch started once made the tables, and no run recorded there
    refused = CliRunner().invoke(main, ["ledger", "copy", "--from", str(source), "--to", postgres_ledger.url])
    assert refused.exit_code == 1 and f"already has the tables of schema {SCHEMA_VERSION}, and the ledger to copy is of schema 4" in (
        refused.output
    )
    not_one = tmp_path / "notes.txt"
    not_one.write_text("not a ledger", encoding="utf-8")
    assert CliRunner().invoke(main, ["ledger", "copy", "--from", str(not_one), "--to", str(tmp_path / "x.sqlite")]).exit_code == 1


def test_a_run_that_loses_its_lock_in_the_database_stops_between_files(tmp_path, postgres_ledger):
    """The lock's session ended while the run went on (the server restarted, the network cut): the
    run stops before its next file, which stays in the inbox, since a run on another machine may
    now take the inbox."""
    import psycopg

    inbox, outbox, gate = tmp_path / "inbox", tmp_path / "out", tmp_path / "gate"
    for name in ("a.xlsx", "b.xlsx"):
        transfers_workbook(inbox / name, [transfer(f"T-{name}", "C-1", 100_000)])
    env = _env(NJCREDITS_FAULT="staged:hold", NJCREDITS_FAULT_GATE=str(gate))
    proc = launcher.popen(["run", inbox, "--out", outbox, "--ledger", postgres_ledger.url, "--workers", "1"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    _held(gate, 1)
    with psycopg.connect(postgres_ledger.url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'njcredits lock'"
                      " AND datname = current_database()")  # fmt: skip
    gate.touch()
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 3, out
    assert "Run stopped: the inbox's lock in the ledger's database was lost" in out
    assert sorted(p.name for p in inbox.glob("*.xlsx")) == ["a.xlsx", "b.xlsx"]


# A record's values as both databases take them (`book._values`, a column at a time): missing is None (never NaN or
# pd.NA, which PostgreSQL's COPY refuses and SQLite keeps as a REAL); a whole number held as a float is the integer.
VALUES = [
    (["a", None, float("nan"), ""], "str", ["a", None, None, ""]),  # pandas' text dtype: missing is NaN
    (["a", None], "string", ["a", None]),  # missing is pd.NA
    (["a", None, float("nan"), 2026.0, 2.5, 7], object, ["a", None, None, 2026, 2.5, 7]),
    ([2018.0, float("nan"), 0.5], "float64", [2018, None, 0.5]),
    ([100_000, None, float("nan"), 7], object, [100_000, None, None, 7]),  # an award in cents, one not computed
    (["a", float("nan"), "b"], object, ["a", None, "b"]),
    ([True, None, False], object, [True, None, False]),
    ([None, float("nan")], object, [None, None]),
    ([b"a", None], object, [b"a", None]),
    ([], "str", []),
]


@pytest.mark.parametrize(("values", "dtype", "stored"), VALUES)
def test_a_column_s_values_as_the_databases_take_them(values, dtype, stored):
    import pandas as pd

    from batch.run.ledger.book import _values

    made = _values(pd.Series(values, dtype=dtype))
    assert made == stored and [type(v) for v in made] == [type(v) for v in stored]


# The versions a run's records had (`read_versions`), looked for only when another run kept a record of their
# sheets: run R1 (team /in) kept Transfers T-1 and T-2; run R2 (team /in) keeps T-1 again.
# (wanted sheet and IDs, team, the run left out, the versions found: (record ID, fields))
VERSIONS = [
    ("Transfers", ["T-1"], "/in", "R2", [("T-1", '{"v": 1}')]),  # R1's version of T-1
    ("Transfers", ["T-1", "T-2", "T-3"], "/in", "R2", [("T-1", '{"v": 1}'), ("T-2", '{"v": 1}')]),  # T-3: none
    ("Transfers", ["T-1"], "/in", None, [("T-1", '{"v": 1}'), ("T-1", '{"v": 2}')]),  # every run's
    ("Transfers", ["T-1"], "/in", "R1", [("T-1", '{"v": 2}')]),
    ("Transfers", ["T-2"], "/in", "R1", []),  # only R1 kept T-2
    ("Transfers", ["T-1"], "/other", "R2", []),  # another team's records are not its own
    ("GrowNJ", ["T-1"], "/in", "R2", []),  # no run kept a GrowNJ record
]


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
@pytest.mark.parametrize(("sheet", "ids", "team", "left_out", "found"), VERSIONS)
def test_the_versions_a_run_s_records_had(tmp_path, sheet, ids, team, left_out, found):
    import pandas as pd

    from batch.run.ledger import read_versions

    book = Ledger(tmp_path / "ledger.sqlite")
    for run_id, kept in (("R1", ["T-1", "T-2"]), ("R2", ["T-1"])):
        book.start_run(run_id, None, "0", "/in", "/out")
        v = run_id[1]
        records = pd.DataFrame({"sheet": "Transfers", "record_id": kept, "status": "OK", "fields": f'{{"v": {v}}}'})
        book.add_file(run_id, {"name": f"{run_id}.xlsx", "status": "processed"}, records)
        book.end_run(run_id, None, {"files": 1, "processed": 1}, None, {})
    got = read_versions(
        ledger_of(tmp_path / "ledger.sqlite"), (team,), pd.DataFrame({"sheet": sheet, "record_id": ids}), exclude_run=left_out
    )
    assert sorted(zip(got["record_id"], got["fields"], strict=True)) == found


# -- one connection for a run's recording (`Ledger.kept`) ---------------------------------------


def _file(name: str, status: str | None = "archiving") -> dict:
    """A file's row as the run begins it (`batch.run.runner.Run.archive`)."""
    return {"name": name, "status": status, "final_status": "processed"}


def _opened(monkeypatch) -> list:
    """Every SQLite connection the ledger opens from now on."""
    opened, real = [], sqlite3.connect
    monkeypatch.setattr(backends.sqlite3, "connect", lambda *a, **k: opened.append(a) or real(*a, **k))
    return opened


def _processed(path: Path) -> int:
    """The files recorded as processed, as another process's connection sees them now."""
    with backends.connect(path, read_only=True) as db:
        return db.one("SELECT COUNT(*) FROM files WHERE status = 'processed'")[0]


@pytest.mark.parametrize("files", [0, 1, 3])  # files recorded in the block (each: its row begun, then completed)
def test_files_recorded_on_one_kept_connection_are_each_committed_at_once(tmp_path, monkeypatch, files):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    ledger.start_run("r1", None, "v", "/in", "/out")
    opened = _opened(monkeypatch)
    with ledger.kept():
        for i in range(files):
            ledger.complete_file(ledger.add_file("r1", _file(f"f{i}.xlsx")), None)
            assert _processed(path) == i + 1  # seen by another connection before the block ends: nothing held
    # the block's one connection, and one read-only connection per check
    assert len(opened) == 1 + files
    ledger.complete_file(ledger.add_file("r1", _file("after.xlsx")), None)
    assert len(opened) == 1 + files + 2  # after the block: a connection for each transaction, as before
    assert _processed(path) == files + 1


def test_a_failed_write_on_the_kept_connection_is_rolled_back_and_the_next_file_recorded(tmp_path):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    ledger.start_run("r1", None, "v", "/in", "/out")
    with ledger.kept():
        with pytest.raises(sqlite3.IntegrityError):  # a row without a status: the whole transaction is undone
            ledger.add_file("r1", _file("bad.xlsx", status=None))
        ledger.complete_file(ledger.add_file("r1", _file("good.xlsx")), None)
    with backends.connect(path, read_only=True) as db:
        assert db.execute("SELECT name, status FROM files ORDER BY rowid").fetchall() == [("good.xlsx", "processed")]


def test_another_thread_in_a_kept_block_uses_a_connection_of_its_own(tmp_path):
    import threading

    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    ledger.start_run("r1", None, "v", "/in", "/out")
    errors = []

    def record() -> None:
        try:
            ledger.complete_file(ledger.add_file("r1", _file("thread.xlsx")), None)
        except Exception as err:  # noqa: BLE001 - a connection of another thread raises ProgrammingError
            errors.append(err)

    with ledger.kept():
        thread = threading.Thread(target=record)
        thread.start()
        thread.join()
        ledger.complete_file(ledger.add_file("r1", _file("main.xlsx")), None)
    assert errors == [] and _processed(path) == 2


class _FailingCommit:
    """A SQLite connection whose next COMMIT fails, as on a full disk (the transaction stays open)."""

    def __init__(self, raw):
        self.raw, self.failed = raw, False

    def __getattr__(self, name):
        return getattr(self.raw, name)

    def execute(self, sql, *args):
        if sql == "COMMIT" and not self.failed:
            self.failed = True
            raise sqlite3.OperationalError("database or disk is full")
        return self.raw.execute(sql, *args)


def test_a_commit_that_fails_on_the_kept_connection_leaves_no_transaction_open(tmp_path):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    ledger.start_run("r1", None, "v", "/in", "/out")
    with ledger.kept():
        db = ledger._kept[1]
        db.raw = _FailingCommit(db.raw)
        with pytest.raises(sqlite3.OperationalError, match="full"):
            ledger.add_file("r1", _file("full.xlsx"))
        assert not db.raw.in_transaction  # rolled back: the next file's transaction can begin
        ledger.complete_file(ledger.add_file("r1", _file("next.xlsx")), None)
    with backends.connect(path, read_only=True) as db:
        assert db.execute("SELECT name, status FROM files ORDER BY rowid").fetchall() == [("next.xlsx", "processed")]


# -- a file's records as the ledger's rows, made before it is recorded (`record_rows`) ------------

# (case, records, group keys recorded): a record in several groups of a rule (keys as a list), a record
# in none (None), a missing award (None), a whole-number year held as a float, and a file without records
RECORD_ROWS_CASES = [
    (
        "transfers",
        {
            "sheet": ["Transfers", "Transfers"],
            "record_id": ["T-1", "T-2"],
            "status": ["OK", "Flagged"],
            "award_cents": [100, None],
            "year": [2026.0, None],
            "fields": ['{"credit": 100}', None],
            "key:certificate_key": ["c-1", None],
            "key:small_transfer_key": [None, "2026 seller"],
        },
        2,  # T-1 in certificate c-1, T-2 in the small transfers of 2026 seller
    ),  # fmt: skip
    (
        "grants in several years",
        {
            "sheet": ["BRRAP"],
            "record_id": ["B-1"],
            "status": ["OK"],
            "fields": ["{}"],
            "key:business_years": [["2026 acme", "2027 acme"]],
            "key:years": [["2026", "2027"]],
        },
        4,  # two years in each of two groupings
    ),  # fmt: skip
    ("no key column", {"sheet": ["BEIP"], "record_id": ["E-1"], "status": ["Invalid"], "fields": [None]}, 0),
    ("no record", {"sheet": [], "record_id": [], "status": [], "fields": [], "key:certificate_key": []}, 0),
]


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
@pytest.mark.parametrize(("case", "records", "keys"), RECORD_ROWS_CASES)
def test_records_recorded_from_their_rows_made_before_are_the_rows_recorded_from_the_records(tmp_path, case, records, keys):
    """`add_file` given the rows `record_rows` made of the records writes the rows it writes given the
    records themselves: the same records, in the same order, and the same group keys."""
    import pandas as pd

    from batch.run.ledger import RecordRows, record_rows

    records = pd.DataFrame(records)
    rows = record_rows(records)
    assert isinstance(rows, RecordRows) and len(rows) == len(records)
    written = {}
    for how, given in (("records", records), ("rows", rows)):
        book = Ledger(tmp_path / f"{how}.sqlite")
        book.start_run("R1", None, "0", "/in", "/out")
        book.add_file("R1", {"name": "a.xlsx", "status": "processed"}, given)
        written[how] = [
            ledger_query(tmp_path / f"{how}.sqlite", "SELECT * FROM records ORDER BY rowid"),
            sorted(ledger_query(tmp_path / f"{how}.sqlite", "SELECT * FROM record_keys"), key=repr),  # no row order kept in PostgreSQL
        ]
    assert written["rows"] == written["records"], case
    assert (len(written["rows"][0]), len(written["rows"][1])) == (len(records), keys)


# The portfolio reads (`read_portfolio`, `read_entries`) made only when a run they read kept a record of
# the sheet: run R1 (ended) kept Transfers T-1 of certificate C-1; run R2, started after it and not
# ended, keeps Transfers T-2. (sheet, the run left out, whether the reads are made, the records found)
PORTFOLIO_READS = [
    ("Transfers", "R2", True, ["T-1"]),  # R1 ended before R2 started: read
    ("GrowNJ", "R2", False, []),  # no run kept a GrowNJ record: not read
    ("Transfers", "R1", False, []),  # no run ended before R1 started (R2's own records do not count): not read
]


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize(("sheet", "left_out", "made", "found"), PORTFOLIO_READS)
def test_the_portfolio_reads_are_made_only_when_a_run_they_read_kept_a_record_of_the_sheet(
    tmp_path, monkeypatch, sheet, left_out, made, found
):
    import pandas as pd

    from batch.run.ledger import read_entries, read_portfolio

    book = Ledger(tmp_path / "ledger.sqlite")
    for run_id, record in (("R1", "T-1"), ("R2", "T-2")):
        book.start_run(run_id, None, "0", "/in", "/out")
        records = pd.DataFrame(
            {"sheet": ["Transfers"], "record_id": [record], "status": ["OK"], "fields": ['{"v": 1}'], "key:certificate": ["C-1"]}
        )
        book.add_file(run_id, {"name": f"{run_id}.xlsx", "status": "processed"}, records)
        if run_id == "R1":
            book.end_run(run_id, None, {"files": 1, "processed": 1}, None, {})
    given, real = [], backends.Db.wanted
    monkeypatch.setattr(backends.Db, "wanted", lambda self, *a: given.append(1) or real(self, *a))
    where = ledger_of(tmp_path / "ledger.sqlite")
    portfolio = read_portfolio(where, sheet, {"certificate": ["C-1"]}, exclude_run=left_out)
    entries = read_entries(where, sheet, pd.DataFrame({"team": ["/in"] * 2, "record_id": ["T-1", "T-2"]}), exclude_run=left_out)
    assert len(given) == (2 if made else 0)
    assert sorted(portfolio["record_id"]) == found and sorted(entries["record_id"]) == found


# Whether the portfolio holds a record of some groups (`portfolio_holds`), as `read_portfolio` would
# find one: run R1 (ended) kept Transfers T-1 in certificate C-1; R2 (started next, not ended) keeps
# T-2 in C-2; R3 (ended) keeps T-1 again, now in C-9, and recorded T-5 in C-5 as its file was written,
# a file that then failed: its record removed, its key left. (sheet, keys, the run left out, holds)
PORTFOLIO_HOLDS = [
    ("Transfers", {"certificate": ["C-5"]}, None, False),  # the failed file's key: no record of it
    ("Transfers", {"certificate": ["C-1"]}, None, True),
    ("Transfers", {"certificate": ["C-9", "C-7"]}, None, True),  # T-1's later version
    ("Transfers", {"certificate": ["C-2"]}, None, False),  # only a run not ended holds it
    ("Transfers", {"certificate": ["C-7"]}, None, False),  # no such group
    ("Transfers", {"other": ["C-1"]}, None, False),  # C-1 of another grouping
    ("Transfers", {"certificate": []}, None, False),
    ("GrowNJ", {"certificate": ["C-1"]}, None, False),
    ("Transfers", {"certificate": ["C-1"]}, "R1", False),  # no run ended before R1 started
    ("Transfers", {"certificate": ["C-1"]}, "R2", True),  # R1 ended before R2 started
]


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize(("sheet", "keys", "left_out", "holds"), PORTFOLIO_HOLDS)
def test_the_portfolio_holds_a_record_of_groups_where_it_reads_one(tmp_path, sheet, keys, left_out, holds):
    import pandas as pd

    from batch.run.ledger import portfolio_holds, read_portfolio

    book = Ledger(tmp_path / "ledger.sqlite")
    for run_id, record, key, ends in (("R1", "T-1", "C-1", True), ("R2", "T-2", "C-2", False), ("R3", "T-1", "C-9", True)):
        book.start_run(run_id, None, "0", "/in", "/out")
        records = pd.DataFrame(
            {"sheet": ["Transfers"], "record_id": [record], "status": ["OK"], "fields": ['{"v": 1}'], "key:certificate": [key]}
        )
        book.add_file(run_id, {"name": f"{run_id}.xlsx", "status": "processed"}, records)
        if run_id == "R3":
            failed = records.assign(record_id="T-5", **{"key:certificate": "C-5"})
            book.add_records(run_id, "failed.xlsx", failed)
            book.add_file(run_id, {"name": "failed.xlsx", "status": "failed"}, failed, recorded=True)
        if ends:
            book.end_run(run_id, None, {"files": 2 if run_id == "R3" else 1, "processed": 1}, None, {}, early=run_id == "R3")
    where = ledger_of(tmp_path / "ledger.sqlite")
    assert ledger_query(tmp_path / "ledger.sqlite", "SELECT COUNT(*) FROM record_keys WHERE key = 'C-5'") == [(1,)]  # left
    assert portfolio_holds(where, sheet, keys, exclude_run=left_out) is holds
    assert (not read_portfolio(where, sheet, keys, exclude_run=left_out).empty) is holds


# The latest earlier appearance of each record of a run (`previous_records`): R1 ended with T-1;
# R2 started next and has not ended, with T-1 and T-2; R3 started after R2 and ended, with T-1 and T-2.
# (the run asked of, the earlier records found: (record, its run))
PREVIOUS = [
    ("R1", []),  # nothing ended before R1 started: the ledger's first run reads nothing
    ("R2", [("T-1", "R1")]),  # T-2 has no earlier appearance (R3 started after R2)
    ("R3", [("T-1", "R1")]),  # T-1 and T-2 are in R2 too, which has not ended: T-1's is R1's
]


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize(("run_id", "found"), PREVIOUS)
def test_a_runs_records_earlier_appearances_are_those_of_runs_ended_that_started_before_it(tmp_path, run_id, found):
    import pandas as pd

    book = Ledger(tmp_path / "ledger.sqlite")
    for run, ids, ends in (("R1", ["T-1"], True), ("R2", ["T-1", "T-2"], False), ("R3", ["T-1", "T-2"], True)):
        book.start_run(run, None, "0", "/in", "/out")
        records = pd.DataFrame({"sheet": ["Transfers"] * len(ids), "record_id": ids, "status": ["OK"] * len(ids)})
        book.add_file(run, {"name": f"{run}.xlsx", "status": "processed"}, records)
        if ends:
            book.end_run(run, None, {"files": 1, "processed": 1}, None, {})
    earlier = book.previous_records(run_id)
    assert sorted(zip(earlier["record_id"], earlier["run_id"], strict=True)) == found
    assert "award_cents" in earlier.columns  # the records' columns, found or not
