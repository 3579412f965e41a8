"""One calculator module per program, declared in `batch.programs` (the one list of programs).
Each module defines:

- `STEPS`: the named statutory steps, in order, each a small function with its citation;
- `calculate(frame, rules, context) -> Calculation`: runs the steps, pure and vectorized over the
  valid rows; `context` (a `RunContext`) is what the run hands every calculator: the as-of date,
  and the prior incentive records of BEIP and BRRAP for Grow NJ;
- `summarize(frame, status, codes, rules) -> list[SummaryTable]`: the sheet's Summary pivots.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pandas as pd

# date: ISO date received (BEIP Agreement Date), or year (BRRAP First Tax Period); received: the same in words
PRIOR_COLUMNS = ["sheet", "record_id", "business_name", "status", "date", "year", "received", "workbook", "run_date"]


@dataclass(frozen=True)
class RunContext:
    """What a calculator may read beyond its own sheet; the same for every sheet of a workbook.

    - `as_of`: the run's as-of date (deadlines that depend on the day of the run);
    - `prior`: records of earlier incentives (BEIP and BRRAP rows of this workbook and of earlier
      runs in the ledger), with the columns PRIOR_COLUMNS; empty when there are none.
    """

    as_of: dt.date
    prior: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PRIOR_COLUMNS))

    @classmethod
    def today(cls) -> RunContext:
        """The context of a run on the machine's local date, with no prior records."""
        return cls(dt.date.today())


@dataclass
class Calculation:
    computed: pd.DataFrame  # the computed columns, indexed like the input frame
    findings: list[pd.DataFrame]  # raw findings (see batch.findings.emit), in the order found
    ineligible: pd.Series  # True where the statute bars the award


@dataclass
class SummaryTable:
    title: str
    table: pd.DataFrame
    formats: dict[str, str] = field(default_factory=dict)  # column -> money (integer cents) | percent


def codes_by(found: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows with each finding code (one row per code, the most frequent first), by the values of
    `column` (one column each) and in total. `found`: the findings' `row` and `Code`, with `column`."""
    found = found.drop_duplicates(["row", "Code"])
    table = pd.crosstab(found["Code"], found[column].astype(str))
    table = table.assign(Total=table.sum(axis=1)).reset_index()
    table.columns.name = None
    return table.sort_values(["Total", "Code"], ascending=[False, True], ignore_index=True)
