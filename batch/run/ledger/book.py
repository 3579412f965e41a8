"""The ledger's writing side (`Ledger`): runs begun and ended, files and their records recorded,
killed runs finished, and what `history` lists."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import pandas as pd

from batch.programs._kit.program import each_key
from batch.run.ledger.backends import Db, connect, location, on_server, scrubbed, server_errors, shown
from batch.run.ledger.reads import LedgerUnreadable
from batch.run.ledger.schema import DECISION_FIELDS, RECORD_FIELDS, SCHEMA_VERSION, migrate, schema_version

RECORD_COLUMNS = ["run_id", "file", *RECORD_FIELDS, "team"]
FILE_COLUMNS = [
    "name", "size", "sha256", "status", "reason", "rows_per_sheet", "errors", "warnings", "infos", "output", "archived", "seconds",
    "timings", "as_of", "final_status", "archived_path",
]  # fmt: skip


def _remove_records(db: Db, run_id: str, name: str) -> None:
    """The records of the file `name` of the run: they are not results of any run."""
    db.execute("DELETE FROM records WHERE run_id=? AND file=?", (run_id, name))


def _remove_unprocessed(db: Db, run_id: str) -> None:
    """The records of a run's files that it did not record as processed (a row begun before its
    archive move counts as what it will be): those recorded as a file was written
    (`Ledger.add_records`) when the file was then not recorded, or recorded otherwise, and those of a
    file whose begun row was found interrupted."""
    db.execute(
        "DELETE FROM records WHERE run_id=? AND file NOT IN (SELECT name FROM files WHERE run_id=?"
        " AND CASE WHEN status = 'archiving' THEN final_status ELSE status END = 'processed')",
        (run_id, run_id),
    )


class LedgerEmpty(LedgerUnreadable):
    """A PostgreSQL database that holds no ledger yet (no run has recorded there)."""


def _value(v):
    """A value as both databases take it: a missing number (NaN, NA) is NULL, and a whole number
    held as a float (a year in a column with a blank) the integer it is, as SQLite's INTEGER
    columns keep it and PostgreSQL's COPY requires."""
    if v is None or isinstance(v, str | bytes | int):
        return v
    if isinstance(v, float):
        return None if v != v else int(v) if v.is_integer() else v
    try:
        return None if pd.isna(v) else v
    except (TypeError, ValueError):
        return v


def _values(column: pd.Series) -> list:
    """`_value` of each value of `column`, as a list; a column whose every value is a str, an int or a
    bool, or missing (pandas' text dtype; an award in cents, a year), only has its missing values
    made None."""
    as_is = ("string", "integer", "boolean", "empty")
    if isinstance(column.dtype, pd.StringDtype) or (column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) in as_is):
        return column.to_numpy(dtype=object, na_value=None).tolist()  # each value as it is, a missing one None
    return [_value(v) for v in column.tolist()]


@dataclass(frozen=True)
class RecordRows:
    """A file's records as the ledger's rows (`record_rows`), a list a column: each record's fields
    (`RECORD_FIELDS`, in order), and for each grouping the sheet, record ID and key of each of its
    group keys (a record in several groups of a rule on several rows), as `Ledger.add_file` inserts
    them (the rows made as they are inserted, so a large file's are never all held twice)."""

    fields: list[list]
    keys: list[tuple[str, list, list, list]]  # (grouping, sheets, record IDs, keys)

    def __len__(self) -> int:
        return len(self.fields[0])


def record_rows(records: pd.DataFrame) -> RecordRows:
    """A file's records (`Result.records()`) as the ledger's rows: made at once where the run has the
    time (as a small file's result arrives, while the workers run), else when the file is recorded."""
    # column by column: `itertuples` reads a text column held by pyarrow a value at a time
    # (100,000 records: about 3 s; the columns as lists, zipped: under 1 s)
    # the fields as they are when the records hold each once (a reindex would copy them all)
    whole = records.columns.is_unique and all(c in records.columns for c in RECORD_FIELDS)
    fields = records if whole else records.reindex(columns=RECORD_FIELDS)
    keys = []
    for column in (c for c in records.columns if c.startswith("key:")):  # a record's key in each group its rules read
        at = each_key(records[column])  # one row per key: a record may be in several groups of a rule
        sheets, ids = records["sheet"].iloc[at.index].tolist(), records["record_id"].iloc[at.index].tolist()
        keys.append((column.removeprefix("key:"), sheets, ids, at.tolist()))
    return RecordRows([_values(fields[c]) for c in RECORD_FIELDS], keys)


class Ledger:
    read_only = False
    version = SCHEMA_VERSION  # the schema version of the database (older only for a ledger opened for reading)

    def __init__(self, where):
        """The ledger at `where` (a SQLite file's path, made with its folder when missing, or a
        PostgreSQL URL), migrated to this njcredits's schema."""
        self.path = location(where)
        try:
            if not on_server(self.path):
                self.path.parent.mkdir(parents=True, exist_ok=True)
            with connect(self.path) as db:
                if (found := db.user_version()) > SCHEMA_VERSION:
                    raise LedgerUnreadable(
                        f"The ledger {shown(self.path)} was written by a newer njcredits (its schema is version {found}; this "
                        f"njcredits knows {SCHEMA_VERSION}): what this one would write there, the newer one could misread. Upgrade "
                        "njcredits; `njcredits history` reads the ledger as it is."
                    )
                migrate(db)
        except server_errors() as err:
            if any(w in str(err) for w in ("full", "readonly", "read-only", "disk I/O", "unable to open")):  # the disk, not the file
                raise LedgerUnreadable(
                    f"The ledger {shown(self.path)} cannot be written ({scrubbed(err, self.path)}): check the space and permissions of "
                    "its disk."
                ) from err
            raise LedgerUnreadable(
                f"The ledger {shown(self.path)} cannot be opened ({scrubbed(err, self.path)}); {_what_to_do(self.path)}"
            ) from err

    @classmethod
    def for_reading(cls, where) -> Ledger:
        """The ledger opened read-only: nothing is created, migrated or written, so it reads a SQLite
        ledger on a read-only filesystem (`mode=ro`). `version` is its schema version: an older ledger
        is read as it is (what it does not hold reads as empty)."""
        book = cls.__new__(cls)
        book.path, book.read_only = location(where), True
        try:
            with connect(book.path, read_only=True) as db:
                book.version = schema_version(db)
        except server_errors() as err:
            raise LedgerUnreadable(
                f"The ledger {shown(book.path)} cannot be opened ({scrubbed(err, book.path)}); {_what_to_do(book.path)}"
            ) from err
        if not book.version and on_server(book.path):  # a database no run has recorded in yet
            raise LedgerEmpty(f"The ledger {shown(book.path)} holds no runs yet: no njcredits run has recorded there.")
        if not book.version:
            raise LedgerUnreadable(
                f"The ledger {shown(book.path)} cannot be opened (it is not an njcredits ledger: no runs table); give another --ledger."
            )
        return book

    _kept: tuple[int, Db] | None = None  # the connection `kept` holds open, and its thread

    def _connect(self):
        kept = self._kept
        if kept is not None and kept[0] == threading.get_ident():
            return nullcontext(kept[1])
        return connect(self.path, read_only=self.read_only)

    @contextmanager
    def kept(self):
        """The block's ledger work in this thread on one connection (a SQLite file is else opened and
        closed for each: recording a file is two transactions, and opening the file cost more than
        both). Each statement and transaction is as it would be on a connection of its own: autocommit
        between `writing()` blocks, so nothing is held between them. A PostgreSQL connection is kept
        for the process already."""
        if on_server(self.path) or self._kept is not None:
            yield
            return
        with connect(self.path, read_only=self.read_only) as db:
            self._kept = (threading.get_ident(), db)
            try:
                yield
            finally:
                self._kept = None

    def places(self) -> list[dict]:
        """Each inbox, outbox and team the ledger's runs recorded, and whether they were runs of one
        file (`one_file`: 1, an inbox's 0, not known None), latest first (`batch.run.teams`). Before
        migration 5 (a ledger read as it is) each run is its inbox's team's, as the migration makes it."""
        with self._connect() as db:
            return self._places(db)

    @staticmethod
    def _places(db: Db) -> list[dict]:
        if "team" in db.columns("runs"):
            query = "SELECT inbox, outbox, team, one_file FROM runs GROUP BY inbox, outbox, team, one_file ORDER BY MAX(started) DESC"
        else:
            query = "SELECT inbox, outbox, inbox AS team, NULL AS one_file FROM runs GROUP BY inbox, outbox ORDER BY MAX(started) DESC"
        return [dict(zip(("inbox", "outbox", "team", "one_file"), row, strict=True)) for row in db.execute(query).fetchall()]

    def start_run(self, run_id: str, started: str | None, tool_version: str, inbox: str, outbox: str, decide=None, one_file: bool = False):
        """Begin a run in the ledger, as the team `decide(places)` tells from the ledger's runs
        (`batch.run.teams.team_for`), in one transaction that holds the ledger's write lock: two runs
        starting at once never both see a ledger without the other. The runs, records and decisions
        of the team names the team `adopts` become its own. `started` None: the database's clock, read
        under the lock (so a run that ended before it is recorded as ended before it, whatever the
        machines' clocks say). Returns the team, how many runs changed team, and when the run started;
        `TeamNeeded` from `decide` begins nothing. No `decide`: the inbox's own team."""
        from batch.run.teams import Team

        with self._connect() as db, db.writing():
            team = decide(self._places(db)) if decide is not None else Team(inbox)
            moved = 0
            for old in team.adopts:
                moved += db.execute("UPDATE runs SET team=? WHERE team=?", (team.name, old)).rowcount
                for table in ("records", "decisions", "record_keys"):
                    db.execute(f"UPDATE {table} SET team=? WHERE team=?", (team.name, old))
            started = started or db.now()
            db.execute(
                "INSERT INTO runs (run_id, started, tool_version, inbox, outbox, team, one_file) VALUES (?,?,?,?,?,?,?)",
                (run_id, started, tool_version, inbox, outbox, team.name, int(one_file)),
            )
        return team, moved, started

    def end_run(
        self,
        run_id: str,
        ended: str | None,
        counts: dict,
        report: str | None,
        rules_versions: dict,
        note: str | None = None,
        early: bool = False,
    ) -> str:
        """End the run: from this transaction on, its records are read by every run that starts after
        it (a run's records become visible at once, in this one transaction). `ended` None: the
        database's clock, read under the write lock. `early`: the run recorded some file's records
        before the file (`add_records`); the records of a file it did not record as processed (the
        ledger failed as it recorded the file) are removed first. Returns when it ended."""
        with self._connect() as db, db.writing():
            if early:
                _remove_unprocessed(db, run_id)
            ended = ended or db.now()
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
        return ended

    def unfinished_runs(self, inbox: str, teams: tuple[str, ...] = ()) -> list[str]:
        """Runs of this inbox that started and never ended: killed (the caller holds the inbox lock).
        `teams`: only those of these teams' names (a ledger shared by machines may hold another
        team's run of a folder of the same path on another machine, which is not this inbox's)."""
        query = "SELECT run_id FROM runs WHERE inbox=? AND ended IS NULL"
        if teams:
            query += f" AND team IN ({','.join('?' * len(teams))})"
        with self._connect() as db:
            return [r for (r,) in db.execute(query + " ORDER BY started", (inbox, *teams)).fetchall()]

    def close_interrupted(self, run_id: str, ended: str | None, note: str) -> list[dict]:
        """End a killed run, in one transaction: each file row it began (written before its archive
        move) is completed when the archived file is where the row says, else marked `interrupted`
        (its input went back to the inbox, and its records are removed); the records of a file it
        has no row of are removed. Returns the rows it completed.
        `ended` None: the database's clock."""
        done = []
        with self._connect() as db, db.writing():
            rows = db.execute(
                "SELECT rowid, name, archived, archived_path, final_status FROM files WHERE run_id=? AND status='archiving'", (run_id,)
            ).fetchall()
            for rowid, name, archived, raw, final in rows:
                there = bool(raw) and Path(os.fsdecode(bytes(raw))).exists()
                db.execute("UPDATE files SET status=? WHERE rowid=?", (final if there else "interrupted", rowid))
                if there:
                    done.append({"name": name, "status": final, "archived": archived})
            # the records of a file interrupted (its input went back to the inbox), and of one recorded as
            # it was written that the run never recorded, are not results of any run
            _remove_unprocessed(db, run_id)
            counts = dict(db.execute("SELECT status, COUNT(*) FROM files WHERE run_id=? GROUP BY status", (run_id,)).fetchall())
            db.execute(
                "UPDATE runs SET ended=?, note=?, files=?, processed=?, failed=?, skipped=? WHERE run_id=?",
                (
                    ended or db.now(),
                    note,
                    sum(counts.values()),
                    counts.get("processed", 0),
                    counts.get("failed", 0),
                    counts.get("skipped", 0),
                    run_id,
                ),
            )
        return done

    def processed_before(self, sha256: str, run_id: str | None = None, team: str | None = None) -> dict | None:
        """The latest successful processing of a file with this SHA-256, if any, in a run that ended
        (or in the run `run_id` itself): never in another run still going on; and, given `team`,
        only in that team's runs (another team's output is in its own outbox, maybe on another
        machine: this team would get no returned workbook)."""
        query = (
            "SELECT f.run_id, f.name, f.output FROM files f JOIN runs u ON u.run_id = f.run_id"
            " WHERE f.sha256=? AND f.status='processed' AND (u.ended IS NOT NULL OR u.run_id = ?)"
            " AND (CAST(? AS TEXT) IS NULL OR u.team = ?) ORDER BY f.rowid DESC LIMIT 1"
        )
        with self._connect() as db:
            row = db.one(query, (sha256, run_id, team, team))
        return dict(zip(("run_id", "name", "output"), row, strict=False)) if row else None

    def abandon_file(self, rowid: int, status: str, reason: str) -> None:
        """A begun row whose archive move failed: the input went back; its records are not results."""
        with self._connect() as db, db.writing():
            run_id, name = db.one("SELECT run_id, name FROM files WHERE rowid=?", (rowid,))
            db.execute("UPDATE files SET status=?, reason=?, archived=NULL, archived_path=NULL WHERE rowid=?", (status, reason, rowid))
            _remove_records(db, run_id, name)

    def complete_file(self, rowid: int, archived: str | None) -> None:
        """The second half of recording a file: its archive move is done."""
        with self._connect() as db, db.writing():
            db.execute("UPDATE files SET status=final_status, archived=? WHERE rowid=?", (archived, rowid))

    def add_file(
        self, run_id: str, info: dict, records: pd.DataFrame | RecordRows | None = None, recorded: bool = False, stale: bool = False
    ) -> int:
        """Record a file (and its records, or their rows made already: `record_rows`), in one
        transaction; returns the row id. A row with status `archiving` and a `final_status` is written
        before the input is moved to the archive and completed after (`complete_file`), so a run
        killed between the two is finished by the next one. `recorded`: its records are in the ledger
        already (`add_records`, as its worker wrote it): they stay when it is processed, and are
        removed in this transaction when it is not. `stale`: records of an earlier reading of it are
        in the ledger (`add_records` could not replace them): they are removed, and `records` taken."""
        values = [info.get(c) for c in FILE_COLUMNS]
        values[FILE_COLUMNS.index("rows_per_sheet")] = json.dumps(info.get("rows_per_sheet") or {})
        values[FILE_COLUMNS.index("timings")] = json.dumps(info.get("timings") or {})
        with self._connect() as db, db.writing():
            rowid = db.insert("files", ["run_id", *FILE_COLUMNS], [run_id, *map(_value, values)])
            processed = (info.get("final_status") or info["status"]) == "processed"
            if stale or (recorded and not processed):
                _remove_records(db, run_id, info["name"])
            if not recorded and records is not None and len(records):
                self._insert_records(db, run_id, info["name"], records)
            decisions = info.get("decisions")
            if records is not None and decisions is not None and len(decisions):
                self._add_decisions(db, run_id, info, decisions)
        return rowid

    def add_records(self, run_id: str, name: str, records: pd.DataFrame | Iterable[pd.DataFrame], again: bool = False) -> None:
        """The records of the file `name`, before the file itself (`add_file` with `recorded`), in a
        transaction of their own: a run records a large file's records while its worker writes the
        file. As the records recorded with a file, they count in other runs' portfolios once this
        run ends (`end_run`); they are removed when the file is not processed (`add_file`) or the
        run is killed first (`close_interrupted`). `again`: the file is read again (its worker
        stopped after sending them): these replace those recorded before. `records` may be blocks of
        them, each inserted as it is taken (a full sheet's, as its worker sends them), all in the one
        transaction: none stands unless all do."""
        with self._connect() as db, db.writing():
            if again:
                _remove_records(db, run_id, name)
            for block in [records] if isinstance(records, pd.DataFrame) else records:
                self._insert_records(db, run_id, name, block)

    @staticmethod
    def _insert_records(db: Db, run_id: str, name: str, records: pd.DataFrame | RecordRows) -> None:
        """A file's records and the keys of their groups, in the caller's transaction."""
        (team,) = db.one("SELECT team FROM runs WHERE run_id=?", (run_id,))  # a record is its run's team's
        rows = records if isinstance(records, RecordRows) else record_rows(records)
        db.insert_many("records", RECORD_COLUMNS, ((run_id, name, *row, team) for row in zip(*rows.fields, strict=True)))
        for grouping, sheets, ids, keys in rows.keys:
            db.insert_many(
                "record_keys",
                ["run_id", "team", "sheet", "record_id", "grouping", "key"],
                zip(repeat(run_id), repeat(team), sheets, ids, repeat(grouping), keys),
            )

    @staticmethod
    def _add_decisions(db: Db, run_id: str, info: dict, decisions: pd.DataFrame) -> None:
        """Record the decisions that are new or changed: one whose row (team, sheet, record ID,
        occurrence) holds as its latest the same decision, reviewer, note, digest and state is not
        recorded twice; a decision found stale is recorded again, as not applied in this run (its
        state `stale`). A decision is its run's team's."""
        (team,) = db.one("SELECT team FROM runs WHERE run_id=?", (run_id,))
        same = (
            "SELECT decision, reviewer, note, digest, COALESCE(state, CASE WHEN applied = 1 THEN 'applied' ELSE 'not applied' END)"
            " FROM decisions WHERE team IS NOT DISTINCT FROM ? AND sheet=? AND record_id=? AND COALESCE(occurrence, 1) = ?"
            " ORDER BY rowid DESC LIMIT 1"
        )
        columns = ["run_id", "file", "sha256", *DECISION_FIELDS, "team"]
        for d in decisions.reindex(columns=DECISION_FIELDS).itertuples(index=False):
            d = d._replace(**{k: _value(v) for k, v in d._asdict().items()})
            occurrence = int(d.occurrence or 1)
            state = d.state or ("applied" if d.applied else "not applied")
            if db.one(same, (team, d.sheet, d.record_id, occurrence)) == (d.decision, d.reviewer, d.note, d.digest, state):
                continue
            values = {**d._asdict(), "applied": int(bool(d.applied)), "occurrence": occurrence, "state": state}
            db.execute(
                f"INSERT INTO decisions ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})",
                (run_id, info["name"], info.get("sha256"), *(values[c] for c in DECISION_FIELDS), team),
            )

    def decisions(self, run_id: str | None = None, latest: bool = False) -> pd.DataFrame:
        """The decisions recorded, oldest first (of one run, when given). `latest`: each decision
        (team, sheet, record ID, occurrence, decision, reviewer, note) once, in its latest state
        (`state`, also for a decision recorded before migration 7, from its `applied`), in the order
        each was first recorded."""
        with self._connect() as db:
            if "decisions" not in db.tables():  # before migration 4
                return pd.DataFrame(columns=["run_id", "file", "sha256", *DECISION_FIELDS])
            columns = ", ".join(db.columns("decisions"))
            query = f"SELECT {columns} FROM decisions" + (" WHERE run_id=?" if run_id else "") + " ORDER BY rowid"
            found = db.frame(query, (run_id,) if run_id else ())
        state = found["state"] if "state" in found else pd.Series(None, index=found.index, dtype=object)
        found["state"] = state.where(state.notna(), found["applied"].map({1: "applied", 0: "not applied"}))
        if latest and len(found):
            key = [c for c in ("team", "sheet", "record_id", "occurrence", "decision", "reviewer", "note") if c in found]
            group = found[key].astype(object).where(found[key].notna(), "").astype(str)
            if "occurrence" in group:
                group["occurrence"] = group["occurrence"].replace({"": "1", "1.0": "1"})
            each = group.groupby(key, sort=False).ngroup()  # numbered in the order first recorded
            found = found.assign(_each=each.to_numpy()).drop_duplicates("_each", keep="last").sort_values("_each", kind="stable")
            found = found.drop(columns="_each")
        return found.reset_index(drop=True)

    def runs(self) -> pd.DataFrame:
        with self._connect() as db:
            return db.frame(f"SELECT {', '.join(db.columns('runs'))} FROM runs ORDER BY started")

    def files(self, run_id: str | None = None) -> pd.DataFrame:
        with self._connect() as db:
            columns = ", ".join(db.columns("files"))
            if run_id:
                return db.frame(f"SELECT {columns} FROM files WHERE run_id=? ORDER BY rowid", (run_id,))
            return db.frame(f"SELECT {columns} FROM files ORDER BY rowid")

    def previous_records(self, run_id: str) -> pd.DataFrame:
        """For each record (team, sheet, record ID) of this run, its latest appearance in an earlier run
        that ended (the first row with that ID in that run: later repeats were DUPLICATE_ID). A run
        that has not ended (killed, or going on elsewhere) is not read: a file's records, recorded as
        its worker writes it, may yet be removed."""
        with self._connect() as db:
            names = db.columns("records")
            if db.one(_ENDED_BEFORE_IT, (run_id,)) is None:  # no run ended that started before it (a ledger's first run): none read
                return pd.DataFrame(columns=names)
            columns = ", ".join("r." + c for c in names)
            query = f"""
                WITH mine AS (SELECT DISTINCT team, sheet, record_id FROM records WHERE run_id = ?)
                SELECT {columns} FROM mine c CROSS JOIN records r ON r.team = c.team AND r.sheet = c.sheet AND r.record_id = c.record_id
                JOIN runs u ON u.run_id = r.run_id
                WHERE u.ended IS NOT NULL AND u.started < (SELECT started FROM runs WHERE run_id = ?)
                ORDER BY u.started DESC, r.rowid ASC
            """  # from this run's records, by index: never a scan of the ledger's
            earlier = db.frame(query, (run_id, run_id))
        return earlier.drop_duplicates(["sheet", "record_id"], keep="first")


# a run that ended and started before the run named: without one, no record has an earlier appearance
_ENDED_BEFORE_IT = "SELECT 1 FROM runs WHERE ended IS NOT NULL AND started < (SELECT started FROM runs WHERE run_id = ?) LIMIT 1"


def _what_to_do(where) -> str:
    if on_server(where):
        return (
            "check the URL, that the server is running and that the user may connect (its password from the URL, PGPASSWORD or ~/.pgpass)."
        )
    return "move it aside or give another --ledger."
