"""The run ledger: an embedded SQLite database of every run, every file and every record result.

It answers "what did we run in March and what came out", lets a run skip a file whose SHA-256
was already processed successfully, and keeps the per-record results that the run report's
`Changes` sheet compares month over month, and the BEIP, BRRAP and Grow NJ records that Grow NJ
checks for prior incentives (C.34:1B-247 e.).

The schema changes only by numbered migrations (`MIGRATIONS`): each runs once, in order, in one
transaction, and the database's `user_version` records the last one applied. An existing ledger
is migrated in place when it is opened for writing; a later change adds one entry to the list.
A ledger restored from SQLite's `.dump` (which does not keep `user_version`) is recognised by its
tables and columns (`version_by_tables`) and migrated from there. `history` opens the ledger
read-only (`Ledger.for_reading`): it never migrates, and reads an older ledger as it is.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from contextlib import closing
from itertools import repeat
from pathlib import Path

import pandas as pd

from batch.programs._kit.program import each_key
from batch.reviews import withdrawn_codes

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
SCHEMA_VERSION = MIGRATIONS[-1][0]
DECISION_FIELDS = ["sheet", "record_id", "codes", "decision", "reviewer", "note", "digest", "applied"]
RECORD_FIELDS = ["sheet", "record_id", "status", "award_cents", "codes", "area", "year", "business_name", "record_date", "fields"]


def version_by_tables(db: sqlite3.Connection) -> int:
    """The last migration whose tables and columns the database has (0: no ledger tables at all).
    Each migration's mark: 1 the `runs` table, 2 `records.business_name`, 3 `runs.note`, 4 the
    `decisions` table, 5 `runs.team`, 6 the `record_keys` table. For a ledger whose `user_version` was lost (restored from a `.dump`)."""
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def columns(table: str) -> set[str]:
        return {row[1] for row in db.execute(f"PRAGMA table_info({table})")} if table in tables else set()

    marks = [
        "runs" in tables,
        "business_name" in columns("records"),
        "note" in columns("runs"),
        "decisions" in tables,
        "team" in columns("runs"),
        "record_keys" in tables,
    ]
    version = 0
    for number, present in enumerate(marks, start=1):
        if not present:
            break
        version = number
    return version


def schema_version(db: sqlite3.Connection) -> int:
    """The database's schema version: its `user_version`, or, when that was lost (0 on a database
    that has ledger tables), what its tables show."""
    recorded = db.execute("PRAGMA user_version").fetchone()[0]
    return recorded if recorded else version_by_tables(db)


def migrate(db: sqlite3.Connection) -> int:
    """Apply every migration newer than the database's user_version, each in its own transaction
    (BEGIN IMMEDIATE, so two processes opening one ledger do not both apply it). Returns the version.
    A database with ledger tables and no `user_version` (a `.dump` restore) first has its version
    recorded from its tables, so no migration is applied twice."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] == 0 and (found := version_by_tables(db)):
            db.execute(f"PRAGMA user_version = {int(found)}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    for number, script in MIGRATIONS:
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] >= number:
                db.execute("ROLLBACK")
                continue
            for statement in (s.strip() for s in script.split(";")):
                if statement:
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {int(number)}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return db.execute("PRAGMA user_version").fetchone()[0]


def _team_of(db: sqlite3.Connection, table: str) -> str:
    """The SQL of a row's team: its `team`, or, in a ledger from before migration 5 (read as it is),
    its run's inbox (what migration 5 gives it)."""
    if "team" in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
        return f"{table[0]}.team"
    return f"(SELECT inbox FROM runs WHERE run_id = {table[0]}.run_id)"


def read_prior_records(
    path: Path, sheets: tuple[str, ...], exclude_run: str | None = None, team: tuple[str, ...] = (), including: str | None = None
) -> pd.DataFrame:
    """The latest record of each (team, sheet, record ID) of `sheets` in the ledger, with its Business
    Name, status and date, the workbook, the run's date and whether it is `team`'s (`same_team`: its
    team is one of the names `team`). One whose latest version has no Business Name is left out (an
    earlier version's name no longer stands), and so is one the reviewer withdrew in its latest
    version (RECORD_WITHDRAWN). Only runs that had ended before `exclude_run` started count (every
    ended run when it is None), so what a run reads never depends on another run still going on. The
    ledger is opened read-only (`LedgerUnreadable` when it cannot be read); a ledger from before
    migration 2 has no names and gives nothing. Columns: those, `same_team`, `team`, `codes`, `fields`
    and `run_id`. `including`: a run not ended yet whose records are the latest of all (the run
    writing its report), with every ended run."""
    cols = ["sheet", "record_id", "business_name", "status", "date", "year", "workbook", "run_date"]  # PRIOR_COLUMNS but `received`
    marks = ",".join("?" * len(sheets))
    try:
        with closing(_read_only(path)) as db:
            columns = {row[1] for row in db.execute("PRAGMA table_info(records)")}
            if "business_name" not in columns:
                return pd.DataFrame(columns=[*cols, "same_team", "team", "codes", "fields", "run_id"])
            kept = "r.fields" if "fields" in columns else "NULL"  # a ledger before migration 6 kept none
            query = f"""
                SELECT {_team_of(db, "records")} AS team, r.sheet, r.record_id, r.business_name, r.status, r.record_date AS date,
                       r.year, r.file AS workbook, substr(u.started, 1, 10) AS run_date, r.codes, {kept} AS fields, r.run_id
                FROM records r JOIN runs u ON u.run_id = r.run_id
                WHERE r.sheet IN ({marks}) AND ((u.ended IS NOT NULL
                  AND (? IS NULL OR u.ended <= (SELECT started FROM runs WHERE run_id = ?))) OR u.run_id = ?)
                ORDER BY u.ended IS NULL DESC, u.started DESC, r.rowid DESC
            """
            found = pd.read_sql_query(query, db, params=(*sheets, exclude_run, exclude_run, including))
    except sqlite3.Error as err:
        raise LedgerUnreadable(f"The ledger {path} cannot be read ({err}); move it aside or give another --ledger.") from err
    latest = found.drop_duplicates(["team", "sheet", "record_id"], keep="first")
    latest = latest[latest["business_name"].notna() & ~withdrawn_codes(latest["codes"])]
    extra = {"same_team": latest["team"].isin(team).to_numpy(dtype=bool), "team": latest["team"], "codes": latest["codes"],
             "fields": latest["fields"], "run_id": latest["run_id"]}  # fmt: skip
    return latest[cols].assign(**extra).reset_index(drop=True)


# the runs that ended before the run named by the query's two parameters started (every ended run
# when they are None): what a run's portfolio reads, never a run still going on
ENDED_BEFORE = """before AS (
            SELECT run_id, ended, started FROM runs
            WHERE ended IS NOT NULL AND (? IS NULL OR ended <= (SELECT started FROM runs WHERE run_id = ?))
        )"""


# every ended run and the run named by the query's parameter, not ended yet, as the latest of all
INCLUDING = """before AS (
            SELECT run_id, COALESCE(ended, '9999') AS ended, started FROM runs WHERE ended IS NOT NULL OR run_id = ?
        )"""


def _read_portfolio_query(path: Path, cols: list[str], query: str, params: tuple, wanted: str = "", rows: list[tuple] = ()) -> pd.DataFrame:
    """A read of the portfolio: `query` with `params`, after the temporary table `wanted` (its
    columns, `rows`) is made, the ledger opened read-only. A ledger from before migration 6 kept no
    portfolio and gives nothing (`cols`, empty)."""
    try:
        with closing(_read_only(path)) as db:
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name='record_keys'").fetchone():
                return pd.DataFrame(columns=cols)
            if wanted:
                db.execute(f"CREATE TEMP TABLE wanted ({wanted})")
                db.executemany(f"INSERT INTO wanted VALUES ({','.join('?' * wanted.count(','))},?)", rows)
            return pd.read_sql_query(query, db, params=params)
    except sqlite3.Error as err:
        raise LedgerUnreadable(f"The ledger {path} cannot be read ({err}); move it aside or give another --ledger.") from err


def read_portfolio(
    path: Path, sheet: str, keys: dict[str, list[str]], exclude_run: str | None = None, including: str | None = None
) -> pd.DataFrame:
    """The latest version of each record (team, sheet, record ID) of `sheet` that was, in some
    version, in one of the groups `keys` names ({grouping: [key, ...]}), among the runs that ended
    before `exclude_run` started (every ended run when it is None): the portfolio a workbook's rules
    read. The latest version is the one of the latest run holding the record; a run whose two
    workbooks held it (RECORD_IN_TWO_WORKBOOKS) gives both, which both count; within a workbook, its
    first row (a repeat was DUPLICATE_ID). In the order the rules break ties in: by run's end, then
    workbook name, then row, never by when a workbook's worker finished. Columns: team, record_id,
    status, codes, fields (JSON), workbook, run_date, ended, run_id, seq. A version that left the
    group is returned too: the caller keeps the records whose latest fields are in it. `including`:
    a run not ended yet whose records count as the latest of all (the run writing its report), with
    every ended run. Opened read-only; a ledger from before migration 6 kept no portfolio and gives
    nothing."""
    cols = ["team", "record_id", "status", "codes", "fields", "workbook", "run_date", "ended", "run_id", "seq"]
    pairs = [(g, k) for g, ks in keys.items() for k in dict.fromkeys(ks) if k is not None]
    if not pairs:
        return pd.DataFrame(columns=cols)
    runs = ENDED_BEFORE if including is None else INCLUDING
    query = f"""
        WITH {runs},
        hit AS (
            SELECT DISTINCT k.team, k.record_id FROM wanted w
            CROSS JOIN record_keys k ON k.sheet = ? AND k.grouping = w.grouping AND k.key = w.key
            JOIN before b ON b.run_id = k.run_id
        ),
        versions AS (
            SELECT r.team, r.record_id, r.status, r.codes, r.fields, r.file AS workbook, substr(b.started, 1, 10) AS run_date,
                   b.ended, b.run_id, r.rowid AS seq,
                   RANK() OVER (PARTITION BY r.team, r.record_id ORDER BY b.ended DESC, b.run_id DESC) AS latest,
                   ROW_NUMBER() OVER (PARTITION BY r.team, r.record_id, r.run_id, r.file ORDER BY r.rowid) AS first
            FROM hit h CROSS JOIN records r ON r.team = h.team AND r.sheet = ? AND r.record_id = h.record_id
            JOIN before b ON b.run_id = r.run_id
        )
        SELECT team, record_id, status, codes, fields, workbook, run_date, ended, run_id, seq FROM versions
        WHERE latest = 1 AND first = 1 ORDER BY ended, run_id, workbook, seq
    """
    given = (exclude_run, exclude_run) if including is None else (including,)
    return _read_portfolio_query(path, cols, query, (*given, sheet, sheet), "grouping TEXT, key TEXT", pairs)


def read_entries(path: Path, sheet: str, wanted: pd.DataFrame, exclude_run: str | None = None) -> pd.DataFrame:
    """Where each record `wanted` (team, record_id) of `sheet` entered the portfolio: its first
    computed version among the runs that ended before `exclude_run` started (every ended run when
    it is None): team, record_id, and that version's run end, run, workbook and row (`ended`,
    `run_id`, `workbook`, `seq`). A record on one date counts in that place, however often it was
    processed again since. Records that never entered are left out. Opened read-only."""
    cols = ["team", "record_id", "ended", "run_id", "workbook", "seq"]
    pairs = list(dict.fromkeys(zip(wanted["team"], wanted["record_id"], strict=True)))
    if not pairs:
        return pd.DataFrame(columns=cols)
    query = f"""
        WITH {ENDED_BEFORE},
        versions AS (
            SELECT r.team, r.record_id, b.ended, b.run_id, r.file AS workbook, r.rowid AS seq,
                   ROW_NUMBER() OVER (PARTITION BY r.team, r.record_id ORDER BY b.ended, b.run_id, r.file, r.rowid) AS n
            FROM wanted w CROSS JOIN records r ON r.team = w.team AND r.sheet = ? AND r.record_id = w.record_id
            JOIN before b ON b.run_id = r.run_id
            WHERE r.fields IS NOT NULL
        )
        SELECT team, record_id, ended, run_id, workbook, seq FROM versions WHERE n = 1
    """
    return _read_portfolio_query(path, cols, query, (exclude_run, exclude_run, sheet), "team TEXT, record_id TEXT", pairs)


def read_standing(path: Path, sheet: str) -> pd.DataFrame:
    """The standing position of `sheet` in the portfolio: the latest version of each of its records
    (team, record ID) among the ended runs, as `read_portfolio` gives them (a run whose two workbooks
    held it gives both), with its findings (`codes`), in the order records of one date count in:
    where each first entered the portfolio (its first computed version's run end, run, workbook,
    row), then its own run, workbook and row. Columns: team, record_id, status, codes, fields (JSON),
    workbook, run_date, ended. Opened read-only; a ledger from before migration 6 gives nothing."""
    cols = ["team", "record_id", "status", "codes", "fields", "workbook", "run_date", "ended"]
    query = """
        WITH ended AS (SELECT run_id, ended, started FROM runs WHERE ended IS NOT NULL),
        versions AS (
            SELECT r.team, r.record_id, r.status, r.codes, r.fields, r.file AS workbook,
                   substr(b.started, 1, 10) AS run_date, b.ended, b.run_id, r.rowid AS seq,
                   RANK() OVER (PARTITION BY r.team, r.record_id ORDER BY b.ended DESC, b.run_id DESC) AS latest,
                   ROW_NUMBER() OVER (PARTITION BY r.team, r.record_id, r.run_id, r.file ORDER BY r.rowid) AS first,
                   FIRST_VALUE(b.ended) OVER entry AS e_ended, FIRST_VALUE(b.run_id) OVER entry AS e_run,
                   FIRST_VALUE(r.file) OVER entry AS e_workbook, FIRST_VALUE(r.rowid) OVER entry AS e_seq
            FROM records r JOIN ended b ON b.run_id = r.run_id
            WHERE r.sheet = ?
            WINDOW entry AS (PARTITION BY r.team, r.record_id ORDER BY r.fields IS NULL, b.ended, b.run_id, r.file, r.rowid)
        )
        SELECT team, record_id, status, codes, fields, workbook, run_date, ended FROM versions
        WHERE latest = 1 AND first = 1
        ORDER BY e_ended, e_run, e_workbook, e_seq, ended, run_id, workbook, seq
    """
    return _read_portfolio_query(path, cols, query, (sheet,))


def read_versions(path: Path, team: tuple[str, ...], wanted: pd.DataFrame, exclude_run: str | None = None) -> pd.DataFrame:
    """Every version the ledger keeps of the records `wanted` (sheet, record_id) of `team` (its names)
    that was computed or names a business: sheet, record_id, fields (JSON), business_name, by index
    (team, sheet, record ID). What a run
    needs to know which groups its records were in before (`batch.run.samerun.decide`); none of the
    run `exclude_run`. Opened read-only; a ledger from before migration 6 kept no portfolio and gives
    nothing."""
    cols = ["sheet", "record_id", "fields", "business_name"]
    pairs = list(dict.fromkeys(zip(wanted["sheet"], wanted["record_id"], strict=True)))
    if not pairs or not team:
        return pd.DataFrame(columns=cols)
    query = f"""
        SELECT r.sheet, r.record_id, r.fields, r.business_name FROM wanted w
        CROSS JOIN records r ON r.team IN ({",".join("?" * len(team))}) AND r.sheet = w.sheet AND r.record_id = w.record_id
        WHERE (r.fields IS NOT NULL OR r.business_name IS NOT NULL) AND (? IS NULL OR r.run_id != ?)
    """
    return _read_portfolio_query(path, cols, query, (*team, exclude_run, exclude_run), "sheet TEXT, record_id TEXT", pairs)


def read_decisions(path: Path, team: tuple[str, ...]) -> pd.DataFrame:
    """Every reviewer decision the ledger holds of the records of `team` (its names: sheet,
    record_id, decision, reviewer, note, digest), oldest first; empty for a ledger from before
    migration 4. Opened read-only."""
    cols = ["sheet", "record_id", "decision", "reviewer", "note", "digest"]
    try:
        with closing(_read_only(path)) as db:
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name='decisions'").fetchone():
                return pd.DataFrame(columns=cols)
            marks = ",".join("?" * len(team))
            chosen = ", ".join("d." + c for c in cols)
            query = f"SELECT {chosen} FROM decisions d WHERE {_team_of(db, 'decisions')} IN ({marks}) ORDER BY d.rowid"
            return pd.read_sql_query(query, db, params=tuple(team))
    except sqlite3.Error as err:
        raise LedgerUnreadable(f"The ledger {path} cannot be read ({err}); move it aside or give another --ledger.") from err


class LedgerUnreadable(Exception):
    """The ledger file is not a readable SQLite ledger; the message says which file and what to do."""


# The filesystem types (as the kernel names them in /proc/self/mountinfo) whose files live on another
# machine: SQLite's locking relies on the local kernel, so two machines writing one ledger there can
# corrupt it. A FUSE filesystem is named "fuse.<its program>" (fuse.sshfs); `network_filesystem` also
# reads the part after "fuse.".
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb", "smb2", "smb3", "smbfs", "ncpfs", "afs", "openafs", "coda", "9p", "ceph", "cephfs",
        "glusterfs", "lustre", "gpfs", "beegfs", "ocfs2", "gfs2", "orangefs", "pvfs2", "davfs", "davfs2", "sshfs", "s3fs",
        "rclone", "moosefs", "mfs", "lizardfs", "quobyte", "juicefs", "wekafs", "vboxsf", "prl_fs", "virtiofs",
    }
)  # fmt: skip
MOUNTINFO = Path("/proc/self/mountinfo")


def mounts() -> list[tuple[str, str]]:
    """Every mount point of this machine and its filesystem type, from the kernel's mount table
    (Linux: /proc/self/mountinfo, its octal escapes undone); empty where there is none to read."""
    try:
        text = MOUNTINFO.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, kind = left.split(" "), right.split(" ")
        if sep and len(fields) >= 5 and kind:
            found.append((re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]), kind[0]))
    return found


def network_filesystem(path: Path) -> str | None:
    """The type of the network filesystem `path` is on (its nearest folder that exists, resolved:
    the mount point that holds it is the longest one its path begins with), or None when it is on a
    local one, or the mount table cannot be read."""
    where = Path(os.path.abspath(path))
    while not where.exists() and where != where.parent:
        where = where.parent
    where = where.resolve()
    best, kind = "", None
    for point, fstype in mounts():
        inside = str(where) == point or str(where).startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fstype
    if kind is None:
        return None
    name = kind.removeprefix("fuse.").removeprefix("fuseblk.")
    return kind if kind in NETWORK_FILESYSTEMS or name in NETWORK_FILESYSTEMS else None


class LedgerOnNetwork(Exception):
    """A SQLite ledger on a network filesystem: refused before anything is touched."""


def refuse_network_ledger(path: Path) -> None:
    """Raise LedgerOnNetwork when the SQLite ledger `path` would be on a network filesystem."""
    kind = network_filesystem(path)
    if kind:
        raise LedgerOnNetwork(
            f"The ledger {path} is on a network filesystem ({kind}): SQLite's locking is not reliable there, and two "
            "machines writing one ledger can corrupt it. Put the ledger on a local disk (--ledger PATH, or ledger = "
            '"PATH" in njcredits.toml); nothing was touched.'
        )


def _read_only(path: Path) -> sqlite3.Connection:
    """Open the ledger for reading only. A ledger in WAL mode on a read-only folder cannot make its
    shared-memory file; it is then opened as immutable (no writer can be running there). Text that
    is not UTF-8 is read with escapes, never refused."""
    uri = Path(path).resolve().as_uri()
    try:
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60)
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.OperationalError:
        db = sqlite3.connect(f"{uri}?immutable=1", uri=True)
    db.text_factory = lambda raw: raw.decode("utf-8", "backslashreplace")
    return db


def _wal(db: sqlite3.Connection, seconds: float = 60) -> None:
    """Switch to WAL; a new ledger opened by two processes at once may be busy for a moment."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Ledger:
    read_only = False
    version = SCHEMA_VERSION  # the schema version of the database (older only for a ledger opened for reading)

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with closing(sqlite3.connect(self.path, timeout=60, isolation_level=None)) as db:
                _wal(db)
                if (found := db.execute("PRAGMA user_version").fetchone()[0]) > SCHEMA_VERSION:
                    raise LedgerUnreadable(
                        f"The ledger {self.path} was written by a newer njcredits (its schema is version {found}; this njcredits "
                        f"knows {SCHEMA_VERSION}): what this one would write there, the newer one could misread. Upgrade "
                        "njcredits; `njcredits history` reads the ledger as it is."
                    )
                migrate(db)
        except sqlite3.Error as err:
            if any(w in str(err) for w in ("full", "readonly", "read-only", "disk I/O", "unable to open")):  # the disk, not the file
                raise LedgerUnreadable(
                    f"The ledger {self.path} cannot be written ({err}): check the space and permissions of its disk."
                ) from err
            raise LedgerUnreadable(f"The ledger {self.path} cannot be opened ({err}); move it aside or give another --ledger.") from err

    @classmethod
    def for_reading(cls, path: Path) -> Ledger:
        """The ledger opened read-only (`mode=ro`): nothing is created, migrated or written, so it
        reads a ledger on a read-only filesystem. `version` is its schema version: an older ledger
        is read as it is (what it does not hold reads as empty)."""
        book = cls.__new__(cls)
        book.path, book.read_only = Path(path), True
        try:
            with closing(_read_only(book.path)) as db:
                book.version = schema_version(db)
        except sqlite3.Error as err:
            raise LedgerUnreadable(f"The ledger {book.path} cannot be opened ({err}); move it aside or give another --ledger.") from err
        if not book.version:
            raise LedgerUnreadable(
                f"The ledger {book.path} cannot be opened (it is not an njcredits ledger: no runs table); give another --ledger."
            )
        return book

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            return _read_only(self.path)
        db = sqlite3.connect(self.path, timeout=60)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def places(self) -> list[dict]:
        """Each inbox, outbox and team the ledger's runs recorded, and whether they were runs of one
        file (`one_file`: 1, an inbox's 0, not known None), latest first (`batch.run.teams`). Before
        migration 5 (a ledger read as it is) each run is its inbox's team's, as the migration makes it."""
        with closing(self._connect()) as db:
            return self._places(db)

    @staticmethod
    def _places(db: sqlite3.Connection) -> list[dict]:
        if "team" in {row[1] for row in db.execute("PRAGMA table_info(runs)")}:
            query = "SELECT inbox, outbox, team, one_file FROM runs GROUP BY inbox, outbox, team, one_file ORDER BY MAX(started) DESC"
        else:
            query = "SELECT inbox, outbox, inbox AS team, NULL AS one_file FROM runs GROUP BY inbox, outbox ORDER BY MAX(started) DESC"
        return [dict(zip(("inbox", "outbox", "team", "one_file"), row, strict=True)) for row in db.execute(query)]

    def start_run(self, run_id: str, started: str, tool_version: str, inbox: str, outbox: str, decide=None, one_file: bool = False):
        """Begin a run in the ledger, as the team `decide(places)` tells from the ledger's runs
        (`batch.run.teams.team_for`), in one transaction that holds the ledger's write lock: two runs
        starting at once never both see a ledger without the other. The runs, records and decisions
        of the team names the team `adopts` become its own. Returns the team and how many runs changed
        team; `TeamNeeded` from `decide` begins nothing. No `decide`: the inbox's own team."""
        from batch.run.teams import Team

        with closing(self._connect()) as db, db:
            db.execute("BEGIN IMMEDIATE")
            team = decide(self._places(db)) if decide is not None else Team(inbox)
            moved = 0
            for old in team.adopts:
                moved += db.execute("UPDATE runs SET team=? WHERE team=?", (team.name, old)).rowcount
                for table in ("records", "decisions", "record_keys"):
                    db.execute(f"UPDATE {table} SET team=? WHERE team=?", (team.name, old))
            db.execute(
                "INSERT INTO runs (run_id, started, tool_version, inbox, outbox, team, one_file) VALUES (?,?,?,?,?,?,?)",
                (run_id, started, tool_version, inbox, outbox, team.name, int(one_file)),
            )
        return team, moved

    def end_run(self, run_id: str, ended: str, counts: dict, report: str | None, rules_versions: dict, note: str | None = None) -> None:
        with closing(self._connect()) as db, db:
            db.execute(
                "UPDATE runs SET ended=?, files=?, processed=?, failed=?, skipped=?, report=?, rules_versions=?, note=? WHERE run_id=?",
                (
                    ended,
                    counts.get("files", 0),
                    counts.get("processed", 0),
                    counts.get("failed", 0),
                    counts.get("skipped", 0),
                    report,
                    json.dumps(rules_versions),
                    note,
                    run_id,
                ),
            )

    def unfinished_runs(self, inbox: str) -> list[str]:
        """Runs of this inbox that started and never ended: killed (the caller holds the inbox lock)."""
        with closing(self._connect()) as db:
            return [r for (r,) in db.execute("SELECT run_id FROM runs WHERE inbox=? AND ended IS NULL ORDER BY started", (inbox,))]

    def close_interrupted(self, run_id: str, ended: str, note: str) -> list[dict]:
        """End a killed run: each file row it began (written before its archive move) is completed
        when the archived file is where the row says, else marked `interrupted` (its input went back
        to the inbox). Returns the rows it completed."""
        done = []
        with closing(self._connect()) as db, db:
            rows = db.execute(
                "SELECT rowid, name, archived, archived_path, final_status FROM files WHERE run_id=? AND status='archiving'", (run_id,)
            )
            for rowid, name, archived, raw, final in rows.fetchall():
                there = bool(raw) and Path(os.fsdecode(bytes(raw))).exists()
                db.execute("UPDATE files SET status=? WHERE rowid=?", (final if there else "interrupted", rowid))
                if there:
                    done.append({"name": name, "status": final, "archived": archived})
                else:  # the input went back to the inbox: its records are not results of any run
                    db.execute("DELETE FROM records WHERE run_id=? AND file=?", (run_id, name))
            counts = dict(db.execute("SELECT status, COUNT(*) FROM files WHERE run_id=? GROUP BY status", (run_id,)).fetchall())
            db.execute(
                "UPDATE runs SET ended=?, note=?, files=?, processed=?, failed=?, skipped=? WHERE run_id=?",
                (ended, note, sum(counts.values()), counts.get("processed", 0), counts.get("failed", 0), counts.get("skipped", 0), run_id),
            )
        return done

    def processed_before(self, sha256: str) -> dict | None:
        """The latest successful processing of a file with this SHA-256, if any."""
        with closing(self._connect()) as db:
            row = db.execute(
                "SELECT run_id, name, output FROM files WHERE sha256=? AND status='processed' ORDER BY rowid DESC LIMIT 1", (sha256,)
            ).fetchone()
        return dict(zip(("run_id", "name", "output"), row, strict=False)) if row else None

    def abandon_file(self, rowid: int, status: str, reason: str) -> None:
        """A begun row whose archive move failed: the input went back; its records are not results."""
        with closing(self._connect()) as db, db:
            run_id, name = db.execute("SELECT run_id, name FROM files WHERE rowid=?", (rowid,)).fetchone()
            db.execute("UPDATE files SET status=?, reason=?, archived=NULL, archived_path=NULL WHERE rowid=?", (status, reason, rowid))
            db.execute("DELETE FROM records WHERE run_id=? AND file=?", (run_id, name))

    def complete_file(self, rowid: int, archived: str | None) -> None:
        """The second half of recording a file: its archive move is done."""
        with closing(self._connect()) as db, db:
            db.execute("UPDATE files SET status=final_status, archived=? WHERE rowid=?", (archived, rowid))

    def add_file(self, run_id: str, info: dict, records: pd.DataFrame | None = None) -> int:
        """Record a file (and its records); returns the row id. A row with status `archiving` and a
        `final_status` is written before the input is moved to the archive and completed after
        (`complete_file`), so a run killed between the two is finished by the next one."""
        cols = [
            "name",
            "size",
            "sha256",
            "status",
            "reason",
            "rows_per_sheet",
            "errors",
            "warnings",
            "infos",
            "output",
            "archived",
            "seconds",
            "timings",
            "as_of",
            "final_status",
            "archived_path",
        ]
        values = [info.get(c) for c in cols]
        values[cols.index("rows_per_sheet")] = json.dumps(info.get("rows_per_sheet") or {})
        values[cols.index("timings")] = json.dumps(info.get("timings") or {})
        with closing(self._connect()) as db, db:
            rowid = db.execute(f"INSERT INTO files (run_id, {', '.join(cols)}) VALUES (?{', ?' * len(cols)})", [run_id, *values]).lastrowid
            if records is not None and len(records):
                (team,) = db.execute("SELECT team FROM runs WHERE run_id=?", (run_id,)).fetchone()  # a record is its run's team's
                db.executemany(
                    "INSERT INTO records (run_id, file, sheet, record_id, status, award_cents, codes, area, year, business_name,"
                    " record_date, fields, team) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        (run_id, info["name"], *row, team)
                        for row in records.reindex(columns=RECORD_FIELDS).itertuples(index=False, name=None)
                    ),
                )
                for column in (c for c in records.columns if c.startswith("key:")):  # a record's key in each group its rules read
                    at = each_key(records[column])  # one row per key: a record may be in several groups of a rule
                    keyed = records.iloc[at.index].assign(**{column: at.to_numpy()})
                    db.executemany(
                        "INSERT INTO record_keys (run_id, team, sheet, record_id, grouping, key) VALUES (?,?,?,?,?,?)",
                        zip(
                            repeat(run_id),
                            repeat(team),
                            keyed["sheet"].tolist(),
                            keyed["record_id"].tolist(),
                            repeat(column.removeprefix("key:")),
                            keyed[column].tolist(),
                        ),
                    )
            decisions = info.get("decisions")
            if records is not None and decisions is not None and len(decisions):
                self._add_decisions(db, run_id, info, decisions)
        return rowid

    @staticmethod
    def _add_decisions(db: sqlite3.Connection, run_id: str, info: dict, decisions: pd.DataFrame) -> None:
        """Record the decisions that are new or changed: one seen before with the same decision,
        reviewer, note and digest for its record (team, sheet, record ID) is not recorded twice. A
        decision is its run's team's."""
        (team,) = db.execute("SELECT team FROM runs WHERE run_id=?", (run_id,)).fetchone()
        same = (
            "SELECT 1 FROM decisions WHERE sheet=? AND record_id=? AND decision=? AND reviewer IS ? AND note IS ? AND digest IS ?"
            " AND rowid = (SELECT MAX(rowid) FROM decisions WHERE team IS ? AND sheet=? AND record_id=?)"
        )
        for d in decisions.reindex(columns=DECISION_FIELDS).itertuples(index=False):
            if db.execute(same, (d.sheet, d.record_id, d.decision, d.reviewer, d.note, d.digest, team, d.sheet, d.record_id)).fetchone():
                continue
            db.execute(
                "INSERT INTO decisions (run_id, file, sha256, sheet, record_id, codes, decision, reviewer, note, digest, applied, team)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    run_id,
                    info["name"],
                    info.get("sha256"),
                    d.sheet,
                    d.record_id,
                    d.codes,
                    d.decision,
                    d.reviewer,
                    d.note,
                    d.digest,
                    int(bool(d.applied)),
                    team,
                ),
            )

    def decisions(self, run_id: str | None = None) -> pd.DataFrame:
        """The decisions recorded, oldest first (of one run, when given)."""
        query = "SELECT * FROM decisions" + (" WHERE run_id=?" if run_id else "") + " ORDER BY rowid"
        with closing(self._connect()) as db:
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name='decisions'").fetchone():  # before migration 4
                return pd.DataFrame(columns=["run_id", "file", "sha256", *DECISION_FIELDS])
            return pd.read_sql_query(query, db, params=(run_id,) if run_id else ())

    def runs(self) -> pd.DataFrame:
        with closing(self._connect()) as db:
            return pd.read_sql_query("SELECT * FROM runs ORDER BY started", db)

    def files(self, run_id: str | None = None) -> pd.DataFrame:
        with closing(self._connect()) as db:
            if run_id:
                return pd.read_sql_query("SELECT * FROM files WHERE run_id=? ORDER BY rowid", db, params=(run_id,))
            return pd.read_sql_query("SELECT * FROM files ORDER BY rowid", db)

    def previous_records(self, run_id: str) -> pd.DataFrame:
        """For each record (team, sheet, record ID) of this run, its latest appearance in an earlier run
        (the first row with that ID in that run: later repeats were DUPLICATE_ID)."""
        query = """
            WITH mine AS (SELECT DISTINCT team, sheet, record_id FROM records WHERE run_id = ?)
            SELECT r.* FROM mine c CROSS JOIN records r ON r.team = c.team AND r.sheet = c.sheet AND r.record_id = c.record_id
            JOIN runs u ON u.run_id = r.run_id
            WHERE u.started < (SELECT started FROM runs WHERE run_id = ?)
            ORDER BY u.started DESC, r.rowid ASC
        """  # from this run's records, by index: never a scan of the ledger's
        with closing(self._connect()) as db:
            earlier = pd.read_sql_query(query, db, params=(run_id, run_id))
        return earlier.drop_duplicates(["sheet", "record_id"], keep="first")
