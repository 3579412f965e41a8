"""What a run reads of the ledger: the portfolio's records (`read_portfolio`, `read_entries`,
`read_standing`), the prior incentives of Grow NJ (`read_prior_records`, `read_earlier_names`), the
versions a run's records had (`read_versions`) and the reviewer decisions (`read_decisions`). Each
opens the ledger read-only and reads only the runs that had ended before the reading run started."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from batch.reviews import withdrawn_codes
from batch.run.ledger.backends import Db, connect, scrubbed, server_errors, shown


class LedgerUnreadable(Exception):
    """The ledger is not a readable ledger; the message says which and what to do."""


def unreadable(where, err: Exception) -> LedgerUnreadable:
    return LedgerUnreadable(f"The ledger {shown(where)} cannot be read ({scrubbed(err, where)}); move it aside or give another --ledger.")


def _team_of(db: Db, table: str) -> str:
    """The SQL of a row's team: its `team`, or, in a ledger from before migration 5 (read as it is),
    its run's inbox (what migration 5 gives it)."""
    if "team" in db.columns(table):
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
        with connect(path, read_only=True) as db:
            columns = set(db.columns("records"))
            if "business_name" not in columns:
                return pd.DataFrame(columns=[*cols, "same_team", "team", "codes", "fields", "run_id"])
            kept = "r.fields" if "fields" in columns else "NULL"  # a ledger before migration 6 kept none
            query = f"""
                SELECT {_team_of(db, "records")} AS team, r.sheet, r.record_id, r.business_name, r.status, r.record_date AS date,
                       r.year, r.file AS workbook, substr(u.started, 1, 10) AS run_date, r.codes, {kept} AS fields, r.run_id
                FROM records r JOIN runs u ON u.run_id = r.run_id
                WHERE r.sheet IN ({marks}) AND ((u.ended IS NOT NULL
                  AND (CAST(? AS TEXT) IS NULL OR u.ended <= (SELECT started FROM runs WHERE run_id = ?))) OR u.run_id = ?)
                ORDER BY u.ended IS NULL DESC, u.started DESC, r.rowid DESC
            """
            found = db.frame(query, (*sheets, exclude_run, exclude_run, including))
    except server_errors() as err:
        raise unreadable(path, err) from err
    latest = found.drop_duplicates(["team", "sheet", "record_id"], keep="first")
    latest = latest[latest["business_name"].notna() & ~withdrawn_codes(latest["codes"])]
    extra = {"same_team": latest["team"].isin(team).to_numpy(dtype=bool), "team": latest["team"], "codes": latest["codes"],
             "fields": latest["fields"], "run_id": latest["run_id"]}  # fmt: skip
    return latest[cols].assign(**extra).reset_index(drop=True)


def read_earlier_names(path: Path, sheets: tuple[str, ...], run_id: str) -> pd.Series:
    """The distinct Business Names of `sheets` that any version of a record kept by an ended run other
    than `run_id` gives (every team's): the businesses `read_prior_records` can find an earlier record
    of, read without the records themselves. Opened read-only; a ledger from before migration 2 has
    no names and gives none."""
    marks = ",".join("?" * len(sheets))
    try:
        with connect(path, read_only=True) as db:
            if "business_name" not in set(db.columns("records")):
                return pd.Series([], dtype=object, name="business_name")
            query = f"""
                SELECT DISTINCT r.business_name FROM records r JOIN runs u ON u.run_id = r.run_id
                WHERE r.sheet IN ({marks}) AND u.ended IS NOT NULL AND r.run_id != ? AND r.business_name IS NOT NULL
            """
            found = db.frame(query, (*sheets, run_id))
    except server_errors() as err:
        raise unreadable(path, err) from err
    return found["business_name"]


# the runs that ended before the run named by the query's two parameters started (every ended run
# when they are None): what a run's portfolio reads, never a run still going on
ENDED_BEFORE = """before AS (
            SELECT run_id, ended, started FROM runs
            WHERE ended IS NOT NULL AND (CAST(? AS TEXT) IS NULL OR ended <= (SELECT started FROM runs WHERE run_id = ?))
        )"""


# every ended run and the run named by the query's parameter, not ended yet, as the latest of all
INCLUDING = """before AS (
            SELECT run_id, COALESCE(ended, '9999') AS ended, started FROM runs WHERE ended IS NOT NULL OR run_id = ?
        )"""


def _read_portfolio_query(
    path, cols: list[str], query: str, params: tuple, wanted: list[str] = (), rows: list[tuple] = (), unless: tuple | None = None
) -> pd.DataFrame:
    """A read of the portfolio: `query` with `params`, its WITH clause given the table `wanted` (its
    columns, `rows`) first when named, the ledger opened read-only. A ledger from before migration 6
    kept no portfolio and gives nothing (`cols`, empty). `unless`: a query (and its parameters) that
    finds no row only when `query` would find none, read first: then `query` is not (giving the
    table `wanted` costs a run of 100,000 records about 2 s)."""
    try:
        with connect(path, read_only=True) as db:
            if "record_keys" not in db.tables():
                return pd.DataFrame(columns=cols)
            if unless is not None and db.one(*unless) is None:
                return pd.DataFrame(columns=cols)
            if not wanted:
                return db.frame(query.replace("{wanted}", ""), params)
            with db.wanted(list(wanted), rows) as (first, given):
                return db.frame(query.replace("{wanted}", first), (*given, *params))
    except server_errors() as err:
        raise unreadable(path, err) from err


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
        WITH {{wanted}} {runs},
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
    return _read_portfolio_query(path, cols, query, (*given, sheet, sheet), ["grouping", "key"], pairs, _any_record(runs, given, sheet))


def portfolio_holds(path: Path, sheet: str, keys: dict[str, list[str]], exclude_run: str | None = None) -> bool:
    """Whether `read_portfolio(path, sheet, keys, exclude_run)` finds a record: the first group key
    of a run it reads whose record it reads a version of, not every version of every record (a run
    of 100,000 records touches as many groups: reading them to see whether there is one took about
    2 s). A key stays when its file's records are removed (a file that failed after its records were
    recorded: the keys name no file), so the record is looked for too."""
    pairs = [(g, k) for g, ks in keys.items() for k in dict.fromkeys(ks) if k is not None]
    if not pairs:
        return False
    query = f"""
        WITH {{wanted}} {ENDED_BEFORE}
        SELECT 1 AS found FROM wanted w
        CROSS JOIN record_keys k ON k.sheet = ? AND k.grouping = w.grouping AND k.key = w.key
        JOIN before b ON b.run_id = k.run_id
        WHERE EXISTS (
            SELECT 1 FROM records r JOIN before v ON v.run_id = r.run_id
            WHERE r.team = k.team AND r.sheet = k.sheet AND r.record_id = k.record_id
        )
        LIMIT 1
    """
    given = (exclude_run, exclude_run)
    unless = _any_record(ENDED_BEFORE, given, sheet)
    return not _read_portfolio_query(path, ["found"], query, (*given, sheet), ["grouping", "key"], pairs, unless).empty


def read_entries(path: Path, sheet: str, wanted: pd.DataFrame, exclude_run: str | None = None) -> pd.DataFrame:
    """Where each record `wanted` (team, record_id) of `sheet` entered the portfolio: its first
    computed version among the runs that ended before `exclude_run` started (every ended run when
    it is None): team, record_id, and that version's run end, run, workbook and row (`ended`,
    `run_id`, `workbook`, `seq`). A record on one date counts in that place, however often it was
    processed again since. Records that never entered are left out. Opened read-only."""
    cols = ["team", "record_id", "ended", "run_id", "workbook", "seq"]
    pairs = list(dict.fromkeys(zip(wanted["team"].tolist(), wanted["record_id"].tolist(), strict=True)))  # as lists: see read_versions
    if not pairs:
        return pd.DataFrame(columns=cols)
    query = f"""
        WITH {{wanted}} {ENDED_BEFORE},
        versions AS (
            SELECT r.team, r.record_id, b.ended, b.run_id, r.file AS workbook, r.rowid AS seq,
                   ROW_NUMBER() OVER (PARTITION BY r.team, r.record_id ORDER BY b.ended, b.run_id, r.file, r.rowid) AS n
            FROM wanted w CROSS JOIN records r ON r.team = w.team AND r.sheet = ? AND r.record_id = w.record_id
            JOIN before b ON b.run_id = r.run_id
            WHERE r.fields IS NOT NULL
        )
        SELECT team, record_id, ended, run_id, workbook, seq FROM versions WHERE n = 1
    """
    unless = _any_record(ENDED_BEFORE, (exclude_run, exclude_run), sheet)
    return _read_portfolio_query(path, cols, query, (exclude_run, exclude_run, sheet), ["team", "record_id"], pairs, unless)


def _any_record(runs: str, given: tuple, sheet: str) -> tuple:
    """A query (and its parameters) finding a record of `sheet` in one of the runs `runs` names
    (`ENDED_BEFORE`, `INCLUDING`, with their parameters `given`): without one, the portfolio reads
    find nothing (a first run, a sheet new to the ledger), and are not made (giving them the table
    `wanted` of 100,000 records costs about 0.3 s)."""
    return f"WITH {runs} SELECT 1 FROM records r JOIN before b ON b.run_id = r.run_id WHERE r.sheet = ? LIMIT 1", (*given, sheet)


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


def read_versions(
    path: Path, team: tuple[str, ...], wanted: pd.DataFrame, exclude_run: str | None = None, including: str | None = None
) -> pd.DataFrame:
    """Every version the ledger keeps of the records `wanted` (sheet, record_id) of `team` (its names)
    that was computed or names a business, in a run that ended (or in the run `including`, the one
    reading them): sheet, record_id, fields (JSON), business_name, by index (team, sheet, record
    ID). What a run needs to know which groups its records were in before
    (`batch.run.samerun.decide`); none of the run `exclude_run`. A run that has not ended (killed,
    or going on elsewhere) is read by none but itself: a file's records, recorded as its worker
    writes it, may yet be removed. Opened read-only; a ledger from before migration 6 kept no
    portfolio and gives nothing."""
    cols = ["sheet", "record_id", "fields", "business_name"]
    # as lists: a column of pandas' text iterated a value at a time costs 100,000 records about 0.8 s
    pairs = list(dict.fromkeys(zip(wanted["sheet"].tolist(), wanted["record_id"].tolist(), strict=True)))
    if not pairs or not team:
        return pd.DataFrame(columns=cols)
    query = f"""
        WITH {{wanted}} hit AS (
        SELECT r.sheet, r.record_id, r.fields, r.business_name FROM wanted w
        CROSS JOIN records r ON r.team IN ({",".join("?" * len(team))}) AND r.sheet = w.sheet AND r.record_id = w.record_id
        JOIN runs u ON u.run_id = r.run_id
        WHERE (r.fields IS NOT NULL OR r.business_name IS NOT NULL) AND (CAST(? AS TEXT) IS NULL OR r.run_id != ?)
        AND (u.ended IS NOT NULL OR u.run_id = ?)
        ) SELECT * FROM hit
    """
    sheets = sorted({sheet for sheet, _ in pairs})
    # a version of another run of one of these sheets at all (none: a first run, a sheet new to the ledger)
    other = f"""
        SELECT 1 FROM records r WHERE r.team IN ({",".join("?" * len(team))}) AND r.sheet IN ({",".join("?" * len(sheets))})
        AND (r.fields IS NOT NULL OR r.business_name IS NOT NULL) AND (CAST(? AS TEXT) IS NULL OR r.run_id != ?) LIMIT 1
    """
    unless = (other, (*team, *sheets, exclude_run, exclude_run))
    return _read_portfolio_query(path, cols, query, (*team, exclude_run, exclude_run, including), ["sheet", "record_id"], pairs, unless)


def read_returned(path: Path, team: tuple[str, ...], sheet: str, record_ids: list[str], exclude_run: str | None = None) -> pd.DataFrame:
    """The rows of `sheet` with these record IDs as the tool last returned them to `team` (its names):
    of each (record ID, occurrence: which of the rows holding that ID in its workbook it was), the
    version of the latest run that ended before `exclude_run` started (every ended run when it is
    None) with its values in the columns the program reads (`inputs`, JSON). Where two workbooks of
    that run held it, the last recorded. Empty for a ledger from before migration 7. Opened
    read-only."""
    cols = ["record_id", "occurrence", "inputs"]
    if not record_ids or not team:
        return pd.DataFrame(columns=cols)
    query = f"""
        WITH {{wanted}} {ENDED_BEFORE},
        versions AS (
            SELECT r.record_id, r.inputs, r.rowid AS seq,
                   ROW_NUMBER() OVER (PARTITION BY r.run_id, r.file, r.record_id ORDER BY r.rowid) AS occurrence,
                   RANK() OVER (PARTITION BY r.record_id ORDER BY b.ended DESC, b.run_id DESC) AS latest
            FROM wanted w CROSS JOIN records r ON r.team IN ({",".join("?" * len(team))}) AND r.sheet = ? AND r.record_id = w.record_id
            JOIN before b ON b.run_id = r.run_id
        )
        SELECT record_id, occurrence, inputs FROM versions WHERE latest = 1 AND inputs IS NOT NULL ORDER BY seq
    """
    try:
        with connect(path, read_only=True) as db:
            if "inputs" not in db.columns("records"):
                return pd.DataFrame(columns=cols)
            with db.wanted(["record_id"], [(r,) for r in record_ids]) as (first, given):
                found = db.frame(query.replace("{wanted}", first), (*given, exclude_run, exclude_run, *team, sheet))
    except server_errors() as err:
        raise unreadable(path, err) from err
    return found.drop_duplicates(["record_id", "occurrence"], keep="last").reset_index(drop=True)


def read_decisions(path: Path, team: tuple[str, ...]) -> pd.DataFrame:
    """Every reviewer decision the ledger holds of the records of `team` (its names: sheet,
    record_id, decision, reviewer, note, digest, and from migration 7 occurrence, inputs and state),
    oldest first; empty for a ledger from before migration 4. Opened read-only."""
    cols = ["sheet", "record_id", "decision", "reviewer", "note", "digest"]
    try:
        with connect(path, read_only=True) as db:
            if "decisions" not in db.tables():
                return pd.DataFrame(columns=cols)
            if "state" in db.columns("decisions"):
                cols = [*cols, "occurrence", "inputs", "state"]
            marks = ",".join("?" * len(team))
            chosen = ", ".join("d." + c for c in cols)
            query = f"SELECT {chosen} FROM decisions d WHERE {_team_of(db, 'decisions')} IN ({marks}) ORDER BY d.rowid"
            return db.frame(query, tuple(team))
    except server_errors() as err:
        raise unreadable(path, err) from err


def read_outputs_since(path: Path, output: str, run_id: str, team: str | None = None) -> list[str]:
    """The runs after `run_id` (of `team`, when given) that returned a workbook under the same name
    `output`, oldest first: the first of them moved `run_id`'s output to `previous/<its run id>/`,
    the last wrote the version now at `output`. Only runs that ended count (as a skip reads them)."""
    try:
        with connect(path, read_only=True) as db:
            query = (
                "SELECT f.run_id FROM files f JOIN runs u ON u.run_id = f.run_id WHERE f.output = ? AND f.status = 'processed'"
                " AND f.run_id > ? AND u.ended IS NOT NULL AND (CAST(? AS TEXT) IS NULL OR u.team = ?)"
                " ORDER BY f.run_id, f.rowid"
            )
            found = db.frame(query, (output, run_id, team, team))
    except server_errors() as err:
        raise unreadable(path, err) from err
    return list(dict.fromkeys(found["run_id"]))
