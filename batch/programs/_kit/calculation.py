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
      and Grow NJ records of earlier runs in the ledger), with the columns PRIOR_COLUMNS; empty when
      there are none. A sheet's own rows that are prior incentives of each other (Grow NJ) are not
      here: its calculator reads them from the sheet;
    - `workbook`, `run_date`: how a record of this workbook is named when a finding lists it (the
      workbook's file name, the run's date; `run_date` None: the as-of date).
    """

    as_of: dt.date
    prior: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PRIOR_COLUMNS))
    workbook: str = "this workbook"
    run_date: str | None = None

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


def _counted_alike(values: pd.Series) -> bool:
    """Whether `crosstab` counts `values` as pandas does (see there)."""
    if values.name is None or isinstance(values.dtype, pd.CategoricalDtype) or values.isna().any():
        return False
    return values.dtype != object or pd.api.types.infer_dtype(values, skipna=False) in ("string", "empty")


def codes_by(found: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows with each finding code (one row per code, the most frequent first), by the values of
    `column` (one column each) and in total. `found`: the findings' `row` and `Code`, with `column`."""
    found = found.drop_duplicates(["row", "Code"])
    table = crosstab(found["Code"], found[column].astype(str))
    table = table.assign(Total=table.sum(axis=1)).reset_index()
    table.columns.name = None
    return table.sort_values(["Total", "Code"], ascending=[False, True], ignore_index=True)
