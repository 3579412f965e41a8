"""What a program declares: its sheet, rules, steps and what it needs from the run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from validators.columns import SheetSpec

# What a program may need from the run besides its own rows:
AS_OF = "as_of"  # the run's as-of date (deadlines that depend on the day of the run)
PRIOR_INCENTIVES = "prior_incentives"  # other sheets' and earlier runs' results: the prior incentive records (C.34:1B-247 e.)
CROSS_WORKBOOK_LIMITS = "cross_workbook_limits"  # limits that hold across every workbook of the run
NEEDS = frozenset({AS_OF, PRIOR_INCENTIVES, CROSS_WORKBOOK_LIMITS})


@dataclass(frozen=True)
class PriorIncentive:
    """How a program's rows are prior incentives of another's: the business name column and the
    date column that says when the incentive was received (None: the year column says it)."""

    name: str
    date: str | None = None


@dataclass(frozen=True)
class AcrossRows:
    """The steps of a row-independent program that read other rows of its sheet (Grow NJ's prior
    incentives: the sheet's own rows are prior awards of each other, C.34:1B-247 e.).

    `rows(frame, rules, context) -> Calculation` runs every other step on the rows given (a chunk of
    the sheet, for memory); `sheet(frame, calc, rules, context) -> Calculation` then runs these steps
    once on every valid row of the sheet, given the chunks' results joined (`calc`, whose `carry`
    holds what they read of each row). The program's `calculate` is the two in turn."""

    rows: Callable
    sheet: Callable


@dataclass(frozen=True)
class Program:
    schema: SheetSpec
    rules: str  # its folder under batch/programs/
    calculate: Callable
    summarize: Callable
    steps: tuple[Callable, ...]
    award_column: str
    explain: Callable | None = None  # builds the Calculation column from the steps' results
    area_column: str | None = None  # the area or category the report groups by
    year_column: str | None = None  # the year the report groups by (a date or year column)
    month_column: str | None = None  # the one date column of the Summary's by-month pivot
    row_independent: bool = False  # each row computed from its own figures alone (but across_rows): runs on chunks of rows
    across_rows: AcrossRows | None = None  # with row_independent: the steps that read other rows, once on the whole sheet
    needs: frozenset[str] = field(default_factory=frozenset)
    prior_incentive: PriorIncentive | None = None  # its rows are prior incentives of Grow NJ (Grow NJ's own too)
    run_limits: Callable | None = None  # credits per (record, year) for limits across workbooks

    def __post_init__(self):
        unknown = set(self.needs) - NEEDS
        if unknown:
            raise ValueError(f"{self.schema.name}: unknown needs {sorted(unknown)}")
        if (CROSS_WORKBOOK_LIMITS in self.needs) != (self.run_limits is not None):
            raise ValueError(f"{self.schema.name}: cross-workbook limits need run_limits, and only they do")
        if self.across_rows is not None and not self.row_independent:
            raise ValueError(f"{self.schema.name}: steps across rows are declared apart only for a row-independent program")

    @property
    def name(self) -> str:
        """The intake sheet's name (`GrowNJ`)."""
        return self.schema.name
