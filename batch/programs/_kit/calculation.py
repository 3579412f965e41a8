"""One calculator module per program, declared in `batch.programs` (the one list of programs).
Each module defines:

- `STEPS`: the named statutory steps, in order, each a small function with its citation;
- `calculate(frame, rules, context) -> Calculation`: runs the steps, pure and vectorized over the
  valid rows; `context` (a `RunContext`) is what the run hands every calculator: the as-of date,
  and the prior incentive records (BEIP, BRRAP and Grow NJ) for Grow NJ;
- `summarize(frame, status, codes, rules) -> list[SummaryTable]`: the sheet's Summary pivots.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# date: ISO date received (BEIP Agreement Date, Grow NJ Application Date), or year (BRRAP First Tax Period);
# received: the same in words
PRIOR_COLUMNS = ["sheet", "record_id", "business_name", "status", "date", "year", "received", "workbook", "run_date"]


@dataclass(frozen=True)
class RunContext:
    """What a calculator may read beyond its own sheet; the same for every sheet of a workbook.

    - `as_of`: the run's as-of date (deadlines that depend on the day of the run);
    - `prior`: records of earlier incentives (BEIP and BRRAP rows of this workbook, and BEIP, BRRAP
      and Grow NJ records of earlier runs in the ledger), with the columns PRIOR_COLUMNS and, from a
      run, `same_team` (a record of this workbook or of the run's team: one of a sheet's record IDs
      is that row's earlier version; another team's is another record); empty when there are none.
      A sheet's own rows that are prior incentives of each other (Grow NJ) are not here: its
      calculator reads them from the sheet;
    - `workbook`, `run_date`: how a record of this workbook is named when a finding lists it (the
      workbook's file name, the run's date; `run_date` None: the as-of date);
    - `portfolio`: for a program with portfolio rules (`Program.portfolio`), the records of other
      workbooks in the groups of the sheet's rows that count (neither Invalid nor Ineligible): the
      latest version of each record of earlier runs and the records of the run's other workbooks
      (a record of this run supersedes its ledger versions; one in two workbooks of the run counts
      in both). The program's fields, with `sheet`, `record_id`, `workbook`, `run_date` (to name
      it) and `tie`: the order records of one date count in, shared with the sheet's own rows
      (`portfolio_order`, indexed like them): the records that entered the portfolio in earlier
      runs first, in the order they first entered it (a record processed again keeps its place),
      then this run's new records by workbook (their paths as printed) and row. Set for each sheet
      by the run; empty when there are none.
    """

    as_of: dt.date
    prior: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PRIOR_COLUMNS))
    workbook: str = "this workbook"
    run_date: str | None = None
    portfolio: pd.DataFrame = field(default_factory=pd.DataFrame)
    portfolio_order: pd.Series = field(default_factory=lambda: pd.Series(dtype="float64"))

    @property
    def run_day(self) -> str:
        """The date a record of this run is named with (YYYY-MM-DD)."""
        return self.run_date or self.as_of.isoformat()

    @classmethod
    def today(cls) -> RunContext:
        """The context of a run on the machine's local date, with no prior records."""
        return cls(dt.date.today())


@dataclass
class Calculation:
    computed: pd.DataFrame  # the computed columns, indexed like the input frame
    findings: list[pd.DataFrame]  # raw findings (see batch.programs._kit.findings.emit), in the order found
    ineligible: pd.Series  # True where the statute bars the award
    carry: pd.DataFrame | None = None  # what the steps across rows read of each row (batch.programs.AcrossRows), not written


def append_tails(head: np.ndarray, tails: list[np.ndarray]) -> np.ndarray:
    """`head` (texts, as objects) with each of `tails` (as many texts each) appended to each row's
    text, piece by piece in place, so that no row's text is held twice (`AcrossRows.parts`)."""
    for piece in tails:
        np.add(head, piece, out=head)
    return head


@dataclass
class SummaryTable:
    title: str
    table: pd.DataFrame
    formats: dict[str, str] = field(default_factory=dict)  # column -> money (integer cents) | percent


def crosstab(rows: pd.Series, columns: pd.Series) -> pd.DataFrame:
    """`pd.crosstab(rows, columns)`, the same table (how many times each pair of values occurs;
    the values of each in sorted order, as index and columns, named after the series), counted
    with numpy: pandas' own takes milliseconds for a table of a few rows, and a monthly batch is
    mostly small workbooks. Counted here only where numpy's order and kinds are pandas': two named
    series of the same rows (pandas aligns others by label), without missing values, of text,
    numbers or dates (not categories, which pandas orders by their categories, nor Python objects
    of another kind, whose kind pandas infers); pandas' own elsewhere, or where the values do not
    sort together."""
    if not (_counted_alike(rows) and _counted_alike(columns) and rows.index.equals(columns.index)):
        return pd.crosstab(rows, columns)
    if not len(rows):
        return pd.DataFrame(
            index=pd.Index([], dtype=rows.dtype, name=rows.name), columns=pd.Index([], dtype=columns.dtype, name=columns.name)
        )
    try:
        row_keys, row_at = np.unique(rows.to_numpy(), return_inverse=True)
        column_keys, column_at = np.unique(columns.to_numpy(), return_inverse=True)
    except TypeError:  # values of several kinds (text and numbers) that do not compare
        return pd.crosstab(rows, columns)
    counts = np.zeros((len(row_keys), len(column_keys)), dtype=np.int64)
    np.add.at(counts, (row_at.ravel(), column_at.ravel()), 1)
    return pd.DataFrame(
        counts,
        index=pd.Index(pd.array(row_keys, dtype=rows.dtype), name=rows.name),
        columns=pd.Index(pd.array(column_keys, dtype=columns.dtype), name=columns.name),
    )


def sum_table(rows: pd.Series, columns: pd.Series, values: pd.Series) -> pd.DataFrame:
    """The totals of `values` by the value of `rows` (one row each) and of `columns` (one column
    each), 0 where a pair does not occur: `frame.pivot_table(index=rows.name, columns=columns.name,
    values=values.name, aggfunc="sum", fill_value=0)` of the frame of the three series. Added up
    with numpy where that is pandas' table, as `crosstab` counts (and `totals_by` adds: whole
    numbers only); pandas' own elsewhere, and for no rows."""

    def pandas_own() -> pd.DataFrame:
        frame = pd.DataFrame({rows.name: rows, columns.name: columns, values.name: values})
        return frame.pivot_table(index=rows.name, columns=columns.name, values=values.name, aggfunc="sum", fill_value=0)

    if not (
        len(rows)
        and _counted_alike(rows)
        and _counted_alike(columns)
        and _summed_alike(values)
        and values.dtype != np.bool_
        and rows.index.equals(columns.index)
        and rows.index.equals(values.index)
    ):
        return pandas_own()
    try:
        row_keys, row_at = np.unique(rows.to_numpy(), return_inverse=True)
        column_keys, column_at = np.unique(columns.to_numpy(), return_inverse=True)
    except TypeError:  # values of several kinds (text and numbers) that do not compare
        return pandas_own()
    total = np.zeros((len(row_keys), len(column_keys)), dtype=np.int64)
    np.add.at(total, (row_at.ravel(), column_at.ravel()), values.to_numpy(dtype=np.int64, na_value=0))
    kind = values.dtype
    return pd.DataFrame(
        {key: pd.array(total[:, j], dtype=kind) for j, key in enumerate(column_keys)},
        index=pd.Index(pd.array(row_keys, dtype=rows.dtype), name=rows.name),
    ).set_axis(pd.Index(pd.array(column_keys, dtype=columns.dtype), name=columns.name), axis=1)


def totals_by(rows: pd.DataFrame, keys: list[str], dropna: bool = True, **columns: tuple[str, str]) -> pd.DataFrame:
    """`rows.groupby(keys, sort=True, dropna=dropna).agg(**columns).reset_index()`, the same table,
    where each column is `(column, "size")` or `(column, "sum")`: one row per combination of the
    keys' values that occurs, in sorted order (a missing value last, or left out with `dropna`),
    each with its row count or its column's total. Worked out with numpy, as `crosstab` is: pandas'
    groupby takes milliseconds for a table of a few rows. Only where numpy's result is pandas' own:
    sums of whole numbers (integers, nullable integers, whose blanks count as 0, or true/false) in
    exact integer arithmetic, by keys of text or whole numbers (`_grouped_alike`), where some group
    remains; pandas' groupby for any other column (a float total, which pandas adds with
    compensated summation) or key, and for no group at all."""

    def pandas_own() -> pd.DataFrame:
        return rows.groupby(keys, sort=True, dropna=dropna).agg(**columns).reset_index()

    alike = all(how == "size" or (how == "sum" and _summed_alike(rows[c])) for c, how in columns.values())
    if not alike or not all(_grouped_alike(rows[k]) for k in keys):
        return pandas_own()
    codes, uniques = zip(*(pd.factorize(rows[k], sort=True, use_na_sentinel=dropna) for k in keys), strict=True)
    kept = np.logical_and.reduce([c >= 0 for c in codes])
    if not kept.any():  # no group: pandas' empty table, whose columns' kinds it settles its own way
        return pandas_own()
    shape = tuple(max(len(u), 1) for u in uniques)
    groups, at = np.unique(np.ravel_multi_index(tuple(c[kept] for c in codes), shape), return_inverse=True)
    out = {k: u.take(i).array for k, u, i in zip(keys, uniques, np.unravel_index(groups, shape), strict=True)}
    for name, (column, how) in columns.items():
        values = rows[column]
        if how == "size":
            out[name] = np.bincount(at, minlength=len(groups)).astype(np.int64)
            continue
        total = np.zeros(len(groups), dtype=np.int64)
        np.add.at(total, at, values.to_numpy(dtype=np.int64, na_value=0)[kept])
        out[name] = pd.array(total, dtype="Int64") if isinstance(values.dtype, pd.Int64Dtype) else total
    return pd.DataFrame(out)


def _summed_alike(values: pd.Series) -> bool:
    """Whether `totals_by` adds up `values` as pandas does (see there)."""
    return isinstance(values.dtype, pd.Int64Dtype) or values.dtype in (np.int64, np.bool_)


def _grouped_alike(values: pd.Series) -> bool:
    """Whether `totals_by` groups by `values` as pandas does (see there): text (missing values
    allowed) or whole numbers (none missing), the kinds of the Summary's keys. pandas infers
    another kind for the groups of Python numbers or true/false held as objects, or of keys all
    missing; those, and any other kind, are grouped by pandas."""
    if values.dtype == np.int64:
        return True
    if isinstance(values.dtype, pd.Int64Dtype):
        return not values.hasnans
    if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
        return bool(values.notna().any()) and pd.api.types.infer_dtype(values, skipna=True) == "string"
    return False


def _counted_alike(values: pd.Series) -> bool:
    """Whether `crosstab` counts `values` as pandas does (see there)."""
    if values.name is None or isinstance(values.dtype, pd.CategoricalDtype) or values.isna().any():
        return False
    return values.dtype != object or pd.api.types.infer_dtype(values, skipna=False) in ("string", "empty")


def with_column(codes: pd.DataFrame, frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """`codes.merge(frame[[column]], left_on="row", right_index=True)`, the same rows in the same
    order (each finding of a row `frame` holds, given that row's `column`), looked up by position
    where `frame`'s rows are each labelled once: pandas' merge takes more than a millisecond of a
    small workbook. The index is `codes`' own, which `codes_by` does not read."""
    if not frame.index.is_unique or column in codes.columns:
        return codes.merge(frame[[column]], left_on="row", right_index=True)
    at = frame.index.get_indexer(codes["row"])
    kept = at >= 0
    out = codes[kept] if not kept.all() else codes.copy()
    out[column] = frame[column].take(at[kept]).set_axis(out.index)  # its kind kept, as merge keeps it
    return out


def codes_by(found: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows with each finding code (one row per code, the most frequent first), by the values of
    `column` (one column each) and in total. `found`: the findings' `row` and `Code`, with `column`."""
    found = found.drop_duplicates(["row", "Code"])
    table = crosstab(found["Code"], found[column].astype(str))
    table = table.assign(Total=table.sum(axis=1)).reset_index()
    table.columns.name = None
    return table.sort_values(["Total", "Code"], ascending=[False, True], ignore_index=True)
