"""Every program, declared once: the one list the pipeline, the template, the report and the
tests read. Nothing else lists programs.

A program is its intake sheet (the schema in `validators/`), its rules folder (`batch/rules/`),
its calculator (the named statutory steps of `batch/calculators/<program>.py`, its `calculate`
and `summarize`, and its explain function where it has a `Calculation` column), the columns the
Summary and the run report group it by, and what it needs from the run.

Adding a tenth program: a rules folder `batch/rules/<p>/`, a calculator module
`batch/calculators/<p>.py`, a schema `validators/<p>.py`, and one `Program(...)` entry below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from batch.calculators import (
    beip,
    beip_conversion,
    brrap,
    emerge,
    erg_residential,
    grow_nj,
    grow_nj_compliance,
    gsgz_property,
    transfers,
)
from validators.beip import BEIP, BEIP_CONVERSION
from validators.brrap import BRRAP
from validators.columns import SheetSpec
from validators.emerge import EMERGE
from validators.erg_residential import ERG_RESIDENTIAL
from validators.grow_nj import GROW_NJ
from validators.grow_nj_compliance import GROW_NJ_COMPLIANCE
from validators.gsgz_property import GSGZ_PROPERTY
from validators.transfers import TRANSFERS

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
    rules: str  # the folder under batch/rules/
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


# In the order of the contract's table of intake sheets.
PROGRAMS: tuple[Program, ...] = (
    Program(
        GROW_NJ,
        "grow_nj",
        grow_nj.calculate,
        grow_nj.summarize,
        grow_nj.STEPS,
        award_column="Total Award ($)",
        explain=grow_nj.explain,
        area_column="Area",
        year_column="Application Date",
        month_column="Application Date",
        row_independent=True,
        across_rows=AcrossRows(grow_nj.calculate_rows, grow_nj.across_rows),
        needs=frozenset({PRIOR_INCENTIVES}),
        prior_incentive=PriorIncentive(name="Business Name", date="Application Date"),
    ),
    Program(
        GROW_NJ_COMPLIANCE,
        "grow_nj_compliance",
        grow_nj_compliance.calculate,
        grow_nj_compliance.summarize,
        grow_nj_compliance.STEPS,
        award_column="Credit Allowed ($)",
        year_column="Tax Period",
        needs=frozenset({AS_OF}),
    ),
    Program(
        TRANSFERS,
        "transfers",
        transfers.calculate,
        transfers.summarize,
        transfers.STEPS,
        award_column="Credit Amount Transferred ($)",
        area_column="Program",
        year_column="Transfer Date",
        month_column="Transfer Date",
    ),
    Program(
        BEIP,
        "beip",
        beip.calculate,
        beip.summarize,
        beip.STEPS,
        award_column="Total Grant ($)",
        area_column="Grant Form",
        year_column="Agreement Date",
        month_column="Agreement Date",
        row_independent=True,
        prior_incentive=PriorIncentive(name="Business Name", date="Agreement Date"),
    ),
    Program(
        BEIP_CONVERSION,
        "beip_conversion",
        beip_conversion.calculate,
        beip_conversion.summarize,
        beip_conversion.STEPS,
        award_column="Approved Amount ($)",
        year_column="Accrual Year",
    ),
    Program(
        BRRAP,
        "brrap",
        brrap.calculate,
        brrap.summarize,
        brrap.STEPS,
        award_column="Grant Amount ($)",
        year_column="First Tax Period",
        needs=frozenset({CROSS_WORKBOOK_LIMITS}),
        prior_incentive=PriorIncentive(name="Business Name"),
        run_limits=brrap.run_credit_by_year,
    ),
    Program(
        ERG_RESIDENTIAL,
        "erg_residential",
        erg_residential.calculate,
        erg_residential.summarize,
        erg_residential.STEPS,
        award_column="Credits Requested ($)",
        area_column="Category",
        year_column="Application Date",
        month_column="Application Date",
    ),
    Program(
        EMERGE,
        "emerge",
        emerge.calculate,
        emerge.summarize,
        emerge.STEPS,
        award_column="Requested Tax Credit ($)",
        area_column="Location",
        year_column="Application Date",
        month_column="Application Date",
        row_independent=True,
    ),
    Program(
        GSGZ_PROPERTY,
        "gsgz_property",
        gsgz_property.calculate,
        gsgz_property.summarize,
        gsgz_property.STEPS,
        award_column="Total Exempted ($)",
        year_column="Certificate of Occupancy Date",
        month_column="Certificate of Occupancy Date",
        row_independent=True,
    ),
)
BY_NAME = {p.name: p for p in PROGRAMS}
