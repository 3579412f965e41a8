"""The ledger's schema: numbered migrations, the same on SQLite and PostgreSQL.

The schema changes only by numbered migrations (`MIGRATIONS`): each runs once, in order, in one
transaction, and the database records the last one applied (SQLite's `user_version`; in PostgreSQL
the one row of `ledger_schema`). An existing ledger is migrated in place when it is opened for
writing; a later change adds one entry to the list. A SQLite ledger restored from `.dump` (which
does not keep `user_version`) is recognised by its tables and columns (`version_by_tables`) and
migrated from there.
"""

from __future__ import annotations

import re

from batch.run.ledger.backends import Db

BASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started TEXT NOT NULL, ended TEXT, tool_version TEXT, rules_versions TEXT,
    inbox TEXT, outbox TEXT, files INTEGER DEFAULT 0, processed INTEGER DEFAULT 0, failed INTEGER DEFAULT 0,
    skipped INTEGER DEFAULT 0, report TEXT
);
CREATE TABLE IF NOT EXISTS files (
    run_id TEXT NOT NULL REFERENCES runs(run_id), name TEXT NOT NULL, size INTEGER, sha256 TEXT, status TEXT NOT NULL,
    reason TEXT, rows_per_sheet TEXT, errors INTEGER, warnings INTEGER, infos INTEGER, output TEXT, archived TEXT,
    seconds REAL, timings TEXT
);
CREATE INDEX IF NOT EXISTS files_sha ON files(sha256, status);
CREATE TABLE IF NOT EXISTS records (
    run_id TEXT NOT NULL, file TEXT NOT NULL, sheet TEXT NOT NULL, record_id TEXT NOT NULL, status TEXT,
    award_cents INTEGER, codes TEXT, area TEXT, year INTEGER
);
CREATE INDEX IF NOT EXISTS records_key ON records(sheet, record_id);
"""

# (number, script). Never edit an entry that has shipped: add a new one.
MIGRATIONS: list[tuple[int, str]] = [
    (1, BASE_SCHEMA),
    (
        2,
        """
        ALTER TABLE records ADD COLUMN business_name TEXT;
        ALTER TABLE records ADD COLUMN record_date TEXT;
        ALTER TABLE files ADD COLUMN as_of TEXT;
        """,
    ),
    (
        3,
        """
        ALTER TABLE files ADD COLUMN final_status TEXT;
        ALTER TABLE files ADD COLUMN archived_path BLOB;
        ALTER TABLE runs ADD COLUMN note TEXT;
        """,
    ),
]
MIGRATIONS.append(
    (
        4,
        """
        CREATE TABLE IF NOT EXISTS decisions (
            run_id TEXT NOT NULL, file TEXT NOT NULL, sha256 TEXT, sheet TEXT NOT NULL, record_id TEXT NOT NULL, codes TEXT,
            decision TEXT NOT NULL, reviewer TEXT, note TEXT, digest TEXT, applied INTEGER
        );
        CREATE INDEX IF NOT EXISTS decisions_key ON decisions(sheet, record_id);
        """,
    )
)
# A record is known by its team, sheet and record ID (a ledger may be shared by teams that number
# their rows alike). The runs before this migration were their inbox's: each inbox its own team.
# Whether a run was of one file (`run FILE`) is recorded from now on (`one_file` 1, an inbox's 0);
# of an earlier run it is not known (NULL), but for one whose folder is another run's outbox: it
# ran a returned workbook, and is the team's of the latest inbox whose run wrote there before it.
MIGRATIONS.append(
    (
        5,
        """
        ALTER TABLE runs ADD COLUMN team TEXT;
        ALTER TABLE runs ADD COLUMN one_file INTEGER;
        ALTER TABLE records ADD COLUMN team TEXT;
        ALTER TABLE decisions ADD COLUMN team TEXT;
        UPDATE runs SET one_file = 1 WHERE inbox IN (SELECT o.outbox FROM runs o WHERE o.inbox IS NOT runs.inbox);
        UPDATE runs SET team = COALESCE(
            CASE WHEN one_file = 1 THEN (
                SELECT o.inbox FROM runs o WHERE o.outbox = runs.inbox AND o.one_file IS NOT 1 AND o.started < runs.started
                ORDER BY o.started DESC LIMIT 1
            ) END,
            inbox);
        UPDATE records SET team = (SELECT u.team FROM runs u WHERE u.run_id = records.run_id);
        UPDATE decisions SET team = (SELECT u.team FROM runs u WHERE u.run_id = decisions.run_id);
        CREATE INDEX IF NOT EXISTS records_identity ON records(team, sheet, record_id);
        CREATE INDEX IF NOT EXISTS decisions_identity ON decisions(team, sheet, record_id);
        """,
    )
)
# The portfolio (limits across workbooks, runs and months): each record keeps the fields its
# program's portfolio rules read (`fields`, JSON), and the key of each group a rule reads it in
# (`record_keys`: a certificate, say), by which a workbook's groups are found. A run's records are
# found by their run (`records_run`), never by scanning the ledger.
MIGRATIONS.append(
    (
        6,
        """
        ALTER TABLE records ADD COLUMN fields TEXT;
        CREATE TABLE IF NOT EXISTS record_keys (
            run_id TEXT NOT NULL, team TEXT, sheet TEXT NOT NULL, record_id TEXT NOT NULL, grouping TEXT NOT NULL, key TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS record_keys_group ON record_keys(sheet, grouping, key);
        CREATE INDEX IF NOT EXISTS records_run ON records(run_id);
        """,
    )
)
# Reviewer decisions over the columns the program reads: each record keeps the values of its row in
# those columns as the tool returned them (`inputs`, JSON by field), so that a decision written in the
# returned workbook covers those figures, and a stale decision's message names each column changed with
# its value then and now. A decision keeps the values it covers (`inputs`), which of the rows of its
# record ID it is on (`occurrence`: 1 the first row, 2 a repeat of the ID), and its state in the run
# that recorded it (`state`: applied, partly applied, not applied, stale); `applied` is 1 only when
# it was wholly applied. Decisions recorded before keep a NULL occurrence (the first row) and state
# (their `applied` says it).
MIGRATIONS.append(
    (
        7,
        """
        ALTER TABLE records ADD COLUMN inputs TEXT;
        ALTER TABLE decisions ADD COLUMN occurrence INTEGER;
        ALTER TABLE decisions ADD COLUMN inputs TEXT;
        ALTER TABLE decisions ADD COLUMN state TEXT;
        """,
    )
)
SCHEMA_VERSION = MIGRATIONS[-1][0]
DECISION_FIELDS = ["sheet", "record_id", "codes", "decision", "reviewer", "note", "digest", "applied", "occurrence", "inputs", "state"]
RECORD_FIELDS = [
    "sheet", "record_id", "status", "award_cents", "codes", "area", "year", "business_name", "record_date", "fields", "inputs",
]  # fmt: skip


# The same migrations for a PostgreSQL ledger, where SQLite's text does not do. The tables read in the
# order their rows were written get a `rowid` (SQLite's is implicit), and SQLite's NULL-safe `IS NOT`
# is `IS DISTINCT FROM` (`POSTGRES_CHANGES`); then every script's types are SQLite's as PostgreSQL
# names them (`_postgres`): an INTEGER is 8 bytes (BIGINT: award cents pass 2**31), a REAL is 8 bytes,
# a BLOB is BYTEA, and text compares and sorts byte by byte as in SQLite (COLLATE "C": ties between
# workbooks are broken by their paths, and run times compared as text, the same on both). Numbered as
# SQLite's, each ending in the same tables and columns (tests/test_ledger_backends.py compares them).
POSTGRES_CHANGES: dict[int, list[tuple[str, str]]] = {
    1: [
        ("CREATE TABLE IF NOT EXISTS files (\n", "CREATE TABLE IF NOT EXISTS files (\n    rowid BIGSERIAL PRIMARY KEY,\n    "),
        ("CREATE TABLE IF NOT EXISTS records (\n", "CREATE TABLE IF NOT EXISTS records (\n    rowid BIGSERIAL PRIMARY KEY,\n    "),
    ],
    4: [
        (
            "CREATE TABLE IF NOT EXISTS decisions (\n",
            "CREATE TABLE IF NOT EXISTS decisions (\n            rowid BIGSERIAL PRIMARY KEY,\n            ",
        )
    ],
    5: [("o.inbox IS NOT runs.inbox", "o.inbox IS DISTINCT FROM runs.inbox"), ("o.one_file IS NOT 1", "o.one_file IS DISTINCT FROM 1")],
}
POSTGRES_TYPES = [(r"\bINTEGER\b", "BIGINT"), (r"\bREAL\b", "DOUBLE PRECISION"), (r"\bBLOB\b", "BYTEA"), (r"\bTEXT\b", 'TEXT COLLATE "C"')]


def _postgres(number: int, script: str) -> str:
    for old, new in POSTGRES_CHANGES.get(number, []):
        if old not in script:  # a change that no longer finds its text would leave the schemas apart
            raise AssertionError(f"migration {number}: {old!r} not found")
        script = script.replace(old, new)
    for pattern, name in POSTGRES_TYPES:
        script = re.sub(pattern, name, script)
    return script


def scripts(kind: str) -> list[tuple[int, str]]:
    """The numbered migrations in the dialect of `kind` ("sqlite" or "postgresql")."""
    if kind == "postgresql":
        return [(number, _postgres(number, script)) for number, script in MIGRATIONS]
    return list(MIGRATIONS)


def _db(db) -> Db:
    return db if isinstance(db, Db) else Db(db, "sqlite")


def version_by_tables(db) -> int:
    """The last migration whose tables and columns the database has (0: no ledger tables at all).
    Each migration's mark: 1 the `runs` table, 2 `records.business_name`, 3 `runs.note`, 4 the
    `decisions` table, 5 `runs.team`, 6 the `record_keys` table, 7 `decisions.state`. For a ledger
    whose `user_version` was lost (restored from a `.dump`)."""
    db = _db(db)
    tables = db.tables()

    def columns(table: str) -> set[str]:
        return set(db.columns(table)) if table in tables else set()

    marks = [
        "runs" in tables,
        "business_name" in columns("records"),
        "note" in columns("runs"),
        "decisions" in tables,
        "team" in columns("runs"),
        "record_keys" in tables,
        "state" in columns("decisions"),
    ]
    version = 0
    for number, present in enumerate(marks, start=1):
        if not present:
            break
        version = number
    return version


def schema_version(db) -> int:
    """The database's schema version: its recorded version, or, when that was lost (0 on a database
    that has ledger tables), what its tables show."""
    db = _db(db)
    recorded = db.user_version()
    return recorded if recorded else version_by_tables(db)


def migrate(db, upto: int | None = None) -> int:
    """Apply every migration newer than the database's recorded version (up to `upto`, when given),
    each in its own write transaction (so two processes opening one ledger do not both apply it).
    Returns the version. A database with ledger tables and no recorded version (a `.dump` restore)
    first has its version recorded from its tables, so no migration is applied twice."""
    db = _db(db)
    with db.writing():
        if db.user_version() == 0 and (found := version_by_tables(db)):
            db.set_user_version(found)
    for number, script in scripts(db.kind):
        if upto is not None and number > upto:
            break
        with db.writing():
            if db.user_version() >= number:
                continue
            for statement in (s.strip() for s in script.split(";")):
                if statement:
                    db.execute(statement)
            db.set_user_version(number)
    return db.user_version()
