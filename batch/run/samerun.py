"""The workbooks of one run seeing each other: calculate, decide, write.

A workbook's portfolio rules read its own rows, the records of every other workbook of its run and
the latest records of earlier runs. A run does it in three steps:

    calculate  every workbook is processed on its own, with the records of earlier runs, and written
               under its temporary name; its records (`held`) come back to the run, nothing else. A
               workbook whose rules read a group that a workbook read before it is in (`group_keys`)
               is told so before it writes: it will be processed again, so that first output is not
               written (`batch.run.workers.work`)
    decide     over the records of all of them (`decide`), the run finds each workbook whose results
               can depend on another workbook of the run: one that holds a group (a certificate, say)
               another workbook holds, or held in an earlier version of one of its records, or that
               holds a record another workbook holds (RECORD_IN_TWO_WORKBOOKS)
    write      each of those is processed again, given the records of the other workbooks it reads
               (`SameRun`), and its output replaces the first; every other workbook's first output is
               its output, since nothing it reads changed

The results never depend on file order, workers or timing: what a workbook is given is decided over
the whole run, after every workbook's first step, and the records it is given are ordered by the
workbooks' places (`places`: their paths as printed), then row. The run holds each workbook's records
(a few fields a row), never its results. A workbook's records are the same in both steps: the fields
the rules read are the row's own validated cells, or what its own sheet alone decides of them (a
compliance period's Credit Allowed), and a record's Status counts in a limit only as Invalid or
Ineligible, which no other workbook changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from batch.programs._kit.program import each_key
from validators.columns import each_as_text

KEY = "key:"  # the records' group-key columns, one per grouping (`batch.pipeline._portfolio_fields`)
FIELD = "field:"  # a record's portfolio fields, a column each (`held`)
HELD = ["sheet", "record_id", "status", "codes", "fields", "business_name", "record_date", "year"]
# the group of a prior incentive (C.34:1B-247 e.): its business, by the one business-name rule, across
# the sheets whose records are prior incentives (BEIP, BRRAP, GrowNJ); read by a sheet that needs them
PRIOR = "prior_business"
GROUP = ["scope", "grouping", "key"]  # a group: its scope (a sheet, or "*" across the prior incentives' sheets), grouping and key


@dataclass(frozen=True)
class SameRun:
    """What a workbook of a run is given of the run's other workbooks: its place among them, and the
    records of theirs its rules read (`decide`): `sheet`, `record_id`, `status`, `fields` (JSON) and
    each field read (`field:<name>`), `workbook` (as printed), `place`, `seq` (row order in its
    workbook), in place and row order."""

    place: int
    others: pd.DataFrame


def portfolios() -> dict:
    """Each sheet whose program keeps portfolio records, with its `Portfolio` declaration."""
    from batch.programs import PROGRAMS

    return {m.name: m.portfolio for m in PROGRAMS if m.portfolio is not None}


def prior_sheets() -> tuple[frozenset, frozenset]:
    """The sheets whose records are prior incentives, and those whose rules read them."""
    from batch.programs import PROGRAMS, prior_incentive_sheets
    from batch.programs._kit.program import PRIOR_INCENTIVES

    return frozenset(prior_incentive_sheets()), frozenset(m.name for m in PROGRAMS if PRIOR_INCENTIVES in m.needs)


def held(records: pd.DataFrame) -> pd.DataFrame:
    """Of a workbook's records (`Result.records()`), those of sheets with portfolio rules or whose
    records are prior incentives, that have a record ID: what the run holds of it until the decision
    (its group keys and the fields the rules read, for the rows that were computed: as JSON, and read
    once here into a column each, `field:<name>`, so that a workbook given them does not read them
    again; a prior incentive's business name, date and year, and its business as `key:prior_business`)."""
    mine = held_rows(records)
    of_sheet, has_fields = mine["sheet"].to_numpy(dtype=object), mine["fields"].notna().to_numpy()
    parsed = [
        portfolio.read(mine.loc[at, "fields"])
        for sheet, portfolio in portfolios().items()
        if (at := (of_sheet == sheet) & has_fields).any()
    ]
    if not parsed:
        return mine
    fields = (parsed[0] if len(parsed) == 1 else pd.concat(parsed)).reindex(mine.index)
    fields.columns = [FIELD + c for c in fields.columns]
    return pd.concat([mine, fields], axis=1)  # one index: side by side


def held_rows(records: pd.DataFrame) -> pd.DataFrame:
    """`held` but the fields read from their JSON: the records the run holds, with their group keys
    (what `group_keys` reads)."""
    from batch.programs._kit.steps import business_key

    priors, _readers = prior_sheets()
    ids = records["record_id"].to_numpy(dtype=object)
    kept = np.isin(records["sheet"].to_numpy(dtype=object), [*portfolios(), *priors]) & pd.notna(ids)
    kept[kept] = each_as_text(ids[kept]) != ""  # a blank record ID is no record (each ID as text: never a fixed-width array)
    keys = [c for c in records.columns if c.startswith(KEY)]
    mine = records[[*HELD, *keys]].take(np.flatnonzero(kept)).reset_index(drop=True)
    mine["seq"] = np.arange(len(mine))
    prior = mine["sheet"].isin(priors).to_numpy() & mine["business_name"].notna().to_numpy()
    if prior.any():  # a prior incentive's business: the key the rule matches names by
        key = pd.Series(None, index=mine.index, dtype=object)
        key[prior] = business_key(mine.loc[prior, "business_name"]).astype(object).to_numpy()
        mine[KEY + PRIOR] = key.where(key.notna(), None)
    return mine


def reads_nothing(records: pd.DataFrame) -> bool:
    """A workbook whose held records (`held`) are all of sheets without portfolio rules whose rules
    read no other workbook (BEIP: its records are only read, as prior incentives): nothing it computes
    can depend on another workbook of the run, so it need not wait for the decision; its records are
    still given to the workbooks that read them."""
    priors, readers = prior_sheets()
    sheets = set(records["sheet"])
    return not (sheets & (set(portfolios()) | set(readers)))


def group_keys(records: pd.DataFrame) -> tuple[frozenset, frozenset]:
    """A workbook's groups as `decide` finds them in its held records (`held`, `held_rows`): every group its
    records are in, and those its rules read, each as (scope, grouping, key) (`_long_keys`). A
    workbook that reads a group another workbook of the run is in reads that workbook: `decide`
    gives it the other's records (`Given`), so the run can tell it so before it writes its first
    output (`batch.run.workers.work`, `ask`)."""
    _priors, readers = prior_sheets()
    sheets = records["sheet"].to_numpy(dtype=object)
    groups, read = set(), set()
    for column in (c for c in records.columns if c.startswith(KEY)):
        grouping = column.removeprefix(KEY)
        at = each_key(records[column])  # one key a row, as text, at its record's position
        where = sheets[at.index.to_numpy()]
        if grouping == PRIOR:  # a prior incentive's business: known across the sheets, read where the sheet reads them
            found = {("*", grouping, key) for key in at.tolist()}
            read |= {("*", grouping, key) for key, sheet in zip(at.tolist(), where.tolist(), strict=True) if sheet in readers}
        else:
            found = set(zip(where.tolist(), [grouping] * len(at), at.tolist(), strict=True))
            read |= found
        groups |= found
    return frozenset(groups), frozenset(read)


def places(names: list[str]) -> list[int]:
    """Each workbook's place in the run, by its path as printed (`east/a.xlsx` before `west/a.xlsx`),
    then by the order it was listed in: the order the rules break ties between workbooks in."""
    order = sorted(range(len(names)), key=lambda i: (names[i], i))
    place = [0] * len(names)
    for p, i in enumerate(order):
        place[i] = p
    return place


def earlier_keys(fields: pd.DataFrame) -> pd.DataFrame:
    """The group keys of the ledger's versions of a run's records (`fields`: sheet, record_id, the
    fields JSON of each version and its `business_name`), long: sheet, record_id, grouping, key; a
    prior incentive's version is in its business's group."""
    from batch.programs._kit.steps import business_key

    parts = []
    priors, _readers = prior_sheets()
    if "business_name" in fields:
        named = fields[fields["sheet"].isin(list(priors)) & fields["business_name"].notna()]
        if len(named):
            key = business_key(named["business_name"]).astype(object).to_numpy()
            parts.append(pd.DataFrame({"sheet": named["sheet"].to_numpy(), "record_id": named["record_id"].to_numpy(),
                                       "grouping": PRIOR, "key": key}))  # fmt: skip
    for sheet, portfolio in portfolios().items():
        mine = fields[fields["sheet"].eq(sheet) & fields["fields"].notna()]
        if mine.empty:
            continue
        parsed = portfolio.read(mine["fields"])[list(portfolio.groupings)]
        parts.append(
            parsed.assign(sheet=sheet, record_id=mine["record_id"]).melt(
                id_vars=["sheet", "record_id"], var_name="grouping", value_name="key"
            )
        )
    if not parts:
        return pd.DataFrame(columns=["sheet", "record_id", "grouping", "key"])
    return _one_key_a_row(pd.concat(parts, ignore_index=True))


def _one_key_a_row(long: pd.DataFrame) -> pd.DataFrame:
    """`long` (a `key` column of one key, a list of keys or None a row) with one key a row, as text."""
    at = each_key(long["key"])
    return long.iloc[at.index].assign(key=at.to_numpy()).reset_index(drop=True)


def _long_keys(records: pd.DataFrame) -> pd.DataFrame:
    """The current group keys of the run's records: place, sheet, record_id, grouping, key, and
    `scope` and `reads` (`_scoped`)."""
    keys = [c for c in records.columns if c.startswith(KEY)]
    if not keys:
        return pd.DataFrame(columns=["place", "sheet", "record_id", "grouping", "key", "scope", "reads"])
    long = records[["place", "sheet", "record_id", *keys]].melt(
        id_vars=["place", "sheet", "record_id"], value_vars=keys, var_name="grouping", value_name="key"
    )
    long = _one_key_a_row(long)
    return _scoped(long.assign(grouping=long["grouping"].str.slice(len(KEY))))


def _scoped(long: pd.DataFrame) -> pd.DataFrame:
    """Each group key with the scope its group is known in (its sheet; the prior incentives' business
    across the sheets whose records are prior incentives: "*") and whether the record's rules read the
    group (`reads`: every portfolio group; a prior incentive's only on a sheet that reads them)."""
    _priors, readers = prior_sheets()
    prior = long["grouping"].eq(PRIOR).to_numpy()
    return long.assign(scope=np.where(prior, "*", long["sheet"]), reads=~prior | long["sheet"].isin(readers).to_numpy())


class Given:
    """What `decide` gives each workbook that reads another (`readers`): the records of the other
    workbooks it reads (`records`), found when its worker is given it, so the run holds one reader's
    at a time beside the run's records and their group keys (never a pair per reader and record).
    The groups and records are numbered once (`_codes`), so that finding a reader's is a few array
    look-ups, not joins over the whole run's records."""

    def __init__(self, run: pd.DataFrame | None = None, now: pd.DataFrame | None = None, touched: pd.DataFrame | None = None):
        self.run, self.now, self.touched = run, now, touched
        self.shared: set[int] = set()
        if run is None:
            return
        # a group two workbooks touch, which one of them reads, or a record of a sheet with portfolio
        # rules two workbooks hold: each of them reads another
        groups = touched.groupby(GROUP, sort=False)["place"].nunique()
        groups = groups[groups > 1].reset_index()[GROUP]
        ids = run[run["sheet"].isin(list(portfolios()))][["place", "sheet", "record_id"]].drop_duplicates()
        twice = ids[ids.duplicated(["sheet", "record_id"], keep=False)]
        self.shared = set(now[now["reads"]].merge(groups, on=GROUP)["place"].tolist()) | set(twice["place"].tolist())
        if self.shared:
            self._codes()

    def _codes(self) -> None:
        """Each group a number (the `now` and `touched` rows'), each record (place, sheet, record ID) a
        number (the run's and `touched`'s rows'), and each sheet's record ID a number (the run's rows)."""
        run, now, touched = self.run, self.now, self.touched
        group = _numbered([pd.concat([now[c], touched[c]], ignore_index=True) for c in GROUP])
        self.now_group, self.touched_group = group[: len(now)], group[len(now) :]
        record = _numbered([pd.concat([run[c], touched[c]], ignore_index=True) for c in ("place", "sheet", "record_id")])
        self.run_record, self.touched_record = record[: len(run)], record[len(run) :]
        self.run_id = _numbered([run["sheet"], run["record_id"]])
        self.run_place = run["place"].to_numpy()
        self.run_portfolio = run["sheet"].isin(list(portfolios())).to_numpy()
        self.now_reader = now["place"].to_numpy()
        self.now_reads = now["reads"].to_numpy(dtype=bool)
        keys = ["place", "sheet", "record_id"]
        probe = pd.concat([touched[keys].iloc[:1], run[keys].iloc[:1]], ignore_index=True).drop_duplicates()
        self.key_types = run.iloc[:1].merge(probe, on=keys)[keys].dtypes.to_dict()

    def readers(self) -> list[int]:
        return sorted(int(p) for p in self.shared)

    def records(self, reader: int) -> pd.DataFrame:
        """The records `reader` is given (HELD, workbook, place, seq), in place and row order: every
        record of another workbook in a group it reads now or in an earlier version, or with the ID
        of one of its own."""
        if reader not in self.shared:
            return pd.DataFrame(columns=[*HELD, "workbook", "place", "seq"])
        cols = [*HELD, *(c for c in self.run.columns if c.startswith(FIELD)), "workbook", "place", "seq"]
        reads = np.unique(self.now_group[(self.now_reader == reader) & self.now_reads])
        by_group = self.touched_record[np.isin(self.touched_group, reads)]
        mine = np.unique(self.run_id[(self.run_place == reader) & self.run_portfolio])
        wanted = (np.isin(self.run_record, by_group) | np.isin(self.run_id, mine)) & (self.run_place != reader)
        # the run's rows are in place and row order (`decide`); their key columns typed as a join of the
        # run's records with the records wanted gives them (`_codes`)
        return self.run[wanted].astype(self.key_types).reindex(columns=cols).reset_index(drop=True)


def _numbered(columns: list[pd.Series]) -> np.ndarray:
    """Each row's number among the distinct rows of `columns` (equal values, missing ones alike, one
    number), as a join on those columns matches them."""
    if not len(columns[0]):
        return np.zeros(0, dtype=np.int64)
    number = np.zeros(len(columns[0]), dtype=np.int64)
    # the rows so far and this column, one number each (hashed: no sort of whole rows); both numbers
    # are below the rows' count n, so the pair's is below n squared, well inside int64
    for c in columns:
        codes = pd.factorize(c, use_na_sentinel=False)[0].astype(np.int64)
        number = pd.factorize(number * (int(codes.max()) + 1) + codes)[0].astype(np.int64)
    return number


def decide(books: dict[int, pd.DataFrame], earlier: pd.DataFrame, workbooks: dict[int, str] | None = None) -> Given:
    """Which workbooks of a run are processed again, each with the other workbooks' records it reads.

    `books`: each workbook's place and its records (`held`, with `workbook`, its path as printed, or
    that path in `workbooks` by place); `earlier`: the group keys of the ledger's versions of those
    records (`earlier_keys`). A workbook reads the groups of its computed records (their current
    keys). It is given every record of another workbook that is in one of those groups now, or whose
    ledger version was (this run's version supersedes it), or that has the ID of one of its own
    records; a workbook given none is left as it was first processed (`Given.readers` leaves it out)."""
    if len(books) < 2:
        return Given()
    run = _stacked(books, workbooks)
    now = _long_keys(run)
    before = _scoped(earlier.merge(run[["place", "sheet", "record_id"]].drop_duplicates(), on=["sheet", "record_id"]))
    touched = pd.concat([now, before[now.columns]], ignore_index=True).drop_duplicates()
    return Given(run, now, touched)


def _stacked(books: dict[int, pd.DataFrame], workbooks: dict[int, str] | None) -> pd.DataFrame:
    """The books' records one under another in place order, with `workbook` (when given) and `place`:
    the frame each book with them assigned would stack into, without a copy of each book first."""
    order = sorted(books)
    frames = [books[p] for p in order]
    run = pd.concat(frames, ignore_index=True)
    sizes = [len(f) for f in frames]
    added = {"workbook": [workbooks[p] for p in order]} if workbooks is not None else {}
    added["place"] = order
    for column, values in added.items():  # a column as assigning its value to each book types it (text: pandas' text)
        run[column] = pd.Series(values).repeat(sizes).reset_index(drop=True)
    columns = list(dict.fromkeys(c for f in frames for c in [*f.columns, *added]))
    return run if list(run.columns) == columns else run[columns]
