"""What a program declares: its sheet, rules, steps and what it needs from the run."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from validators.columns import SheetSpec, each_as_text

# What a program may need from the run besides its own rows:
AS_OF = "as_of"  # the run's as-of date (deadlines that depend on the day of the run)
PRIOR_INCENTIVES = "prior_incentives"  # other sheets' and earlier runs' results: the prior incentive records (C.34:1B-247 e.)
CROSS_WORKBOOK_LIMITS = "cross_workbook_limits"  # limits that hold across every workbook of the run
NEEDS = frozenset({AS_OF, PRIOR_INCENTIVES, CROSS_WORKBOOK_LIMITS})


@dataclass(frozen=True)
class PriorIncentive:
    """How a program's rows are prior incentives of another's: the business name column and the
    date column that says when the incentive was received (None: the year column says it); and the
    columns the ledger keeps of each row so that its prior-incentive findings can be judged again
    later (`conditions`: Grow NJ's e.(1) and e.(2) answers; the run report's `Portfolio changes`)."""

    name: str
    date: str | None = None
    conditions: tuple[str, ...] = ()


@dataclass(frozen=True)
class AcrossRows:
    """The steps of a row-independent program that read other rows of its sheet (Grow NJ's prior
    incentives: the sheet's own rows are prior awards of each other, C.34:1B-247 e.).

    `rows(frame, rules, context) -> Calculation` runs every other step on the rows given (a chunk of
    the sheet, for memory); `sheet(frame, calc, rules, context) -> Calculation` then runs these steps
    once on every valid row of the sheet, given the chunks' results joined (`calc`, whose `carry`
    holds what they read of each row). The program's `calculate` is the two in turn.

    `parts(frame, calc, rules, context) -> (Calculation, tails)`, where given, is `sheet` with the
    computed text columns left as the chunks wrote them: what these steps add to the end of each
    row's text comes apart (`tails`: column -> the pieces, each over every row given, in order; the
    column's text is the chunks' followed by each piece). A large sheet's texts are then held
    packed from each chunk on, and joined a block of rows at a time (`batch.pipeline.HeldTexts`)."""

    rows: Callable
    sheet: Callable
    parts: Callable | None = None


@dataclass(frozen=True)
class Sample:
    """A program's rows in the bundled sample workbooks (`sample_inputs/`, written by
    `tests/samples.py`): the header row and the rows as written, and the workbook they go to
    (None: a workbook of the program's own, `<folder>-sample.xlsx`). A workbook holding several
    programs' sheets orders them by `order`, then in ORDER."""

    headers: tuple[str, ...]
    rows: tuple[tuple, ...]
    workbook: str | None = None
    order: int = 0


@dataclass(frozen=True)
class Intake:
    """A program's intake text: what one row of its sheet is (`row_is`, completing "One row is"),
    what its column hints do not say (`notes`, the Instructions paragraph's end), its worked
    example row (header -> value, valid; columns left out are blank) and its sample rows."""

    row_is: str
    example: dict[str, object]
    sample: Sample
    notes: str = ""


@dataclass(frozen=True)
class Limit:
    """A limit on a program's records that holds across rows, workbooks and runs: the rules
    parameter holding it, the record fields one limit covers (`group_by`: ("year",) is one limit a
    tax period over every record), and, when the run report shows it, its sheet, its title, the
    headers of the group columns (one per field of `group_by`) and the header of the count of records."""

    parameter: str
    group_by: tuple[str, ...]
    sheet: str | None = None
    title: str = ""
    group_headers: tuple[str, ...] = ()
    records_header: str = ""

    def __post_init__(self):
        if self.sheet is not None and len(self.group_headers) != len(self.group_by):
            raise ValueError(f"{self.sheet}: one header for each field of {list(self.group_by)}")


@dataclass(frozen=True)
class Records:
    """How a program's rows count against limits beyond one sheet (`limits`): `of(typed, computed,
    status) -> DataFrame` gives the records that count, each with the `fields` it keeps (`record`
    names the record, `amount` is what counts against a limit), counted in the order of `order_by`."""

    of: Callable
    fields: tuple[str, ...]
    record: str
    amount: str
    order_by: tuple[str, ...]
    limits: tuple[Limit, ...]

    def __post_init__(self):
        needed = {self.record, self.amount, *self.order_by, *(f for limit in self.limits for f in limit.group_by)}
        if not needed <= set(self.fields):
            raise ValueError(f"records keep {list(self.fields)}, not {sorted(needed - set(self.fields))}")


@dataclass(frozen=True)
class Portfolio:
    """How a program's records enter the portfolio: the limits that run across workbooks, runs and
    months. `of(typed, computed) -> DataFrame` gives, for each valid row of the sheet (indexed like
    it), the `fields` its portfolio rules read (text, integer cents, ISO dates; `computed`: the rows'
    computed columns, None before they are calculated, when only the group keys are read; a field
    taken from them must depend on the row's own sheet alone, never on the portfolio, so that a
    record's fields are the same before and after the run decides) and, in a column per name of
    `groupings`, the key of the group each rule reads it in (a certificate, say; None: in none), or a
    list of keys where a record is in several groups of one rule (a grant's tax period years). The
    ledger keeps them with the record; a workbook's calculator is given the latest version of every
    record of earlier runs in its rows' groups (`RunContext.portfolio`), with these fields.
    `standing(records, rules) -> {sheet name: SummaryTable}`: the sheets `njcredits portfolio` writes
    of the standing position, from the latest version of every record (its fields, `status`, `codes`,
    `workbook`, `run_date`, `ended`, `book` (one workbook of one run), `record_id`, `team` and `tie`,
    the order records of one date count in)."""

    of: Callable
    fields: tuple[str, ...]
    groupings: tuple[str, ...]
    standing: Callable | None = None
    # `rows(records) -> DataFrame`: the intake rows (typed, as validation gives them) its calculator
    # judges the records by again, from their kept fields; `judged`: the findings that read the
    # portfolio, which the run report's `Portfolio changes` compares (None: not compared)
    rows: Callable | None = None
    judged: tuple[str, ...] = ()
    within_team: bool = False  # its groups are each team's own (two teams' project P-1 are two projects)
    # whether `of` reads the computed columns; when it does not, the fields of the valid rows worked out
    # before the calculation (for their group keys) are those of the records, taken as they are
    reads_computed: bool = True

    @property
    def kept(self) -> list[str]:
        """What the ledger keeps of each record: its fields, then its group keys."""
        return list(dict.fromkeys([*self.fields, *self.groupings]))

    def read(self, texts: pd.Series) -> pd.DataFrame:
        """Records' kept fields from the JSON the ledger keeps (`texts`, none missing), a column each,
        indexed like `texts`."""
        rows = [json.loads(t) for t in texts]
        if not rows:  # no record: each kept field a column of floats, as reindexing an empty frame makes it
            return pd.DataFrame(rows, index=texts.index).reindex(columns=self.kept)
        return pd.DataFrame(rows, index=texts.index, columns=self.kept)  # a field none has: all NaN


def each_key(keys: pd.Series) -> pd.Series:
    """A grouping's keys (`Portfolio`: one key, a list of keys, or None per record), one per row as
    text, indexed by the record's position: a record in several groups is on several rows, one in
    none on none."""
    values = keys.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):  # one key or none each: nothing to explode
        at = np.flatnonzero(pd.notna(values))
        return pd.Series(each_as_text(values[at]), index=at, dtype=str)
    long = pd.Series(values, index=np.arange(len(keys))).explode()
    return long[long.notna()].astype(str)


@dataclass(frozen=True)
class Program:
    """A program, declared once in its folder's `__init__.py` (`PROGRAM = Program(...)`). Every
    field the run reads is required, but those whose absence the run handles (each says how)."""

    schema: SheetSpec
    calculate: Callable
    summarize: Callable
    steps: tuple[Callable, ...]
    intake: Intake
    award_column: str  # the award the Summary and the run report add up (a computed or input column)
    year_column: str  # the year the report groups by (a date or year column)
    explain: Callable | None = None  # builds the Calculation column from the steps' results (None: no Calculation column)
    area_column: str | None = None  # the area or category the report groups by (None: not grouped by area)
    month_column: str | None = None  # the one date column of the Summary's by-month pivot (None: no such pivot)
    row_independent: bool = False  # each row computed from its own figures alone (but across_rows): runs on chunks of rows
    across_rows: AcrossRows | None = None  # with row_independent: the steps that read other rows, once on the whole sheet
    needs: frozenset[str] = field(default_factory=frozenset)
    prior_incentive: PriorIncentive | None = None  # its rows are prior incentives of Grow NJ (Grow NJ's own too; None: they are not)
    records: Records | None = None  # its records count against limits across workbooks (None: no such limit)
    portfolio: Portfolio | None = None  # its rules read records of earlier runs (None: they do not)
    award_kind: str = "award"  # what its award column adds up, as the Summary names it apart ("credit transferred": not an award)

    def __post_init__(self):
        unknown = set(self.needs) - NEEDS
        if unknown:
            raise ValueError(f"{self.schema.name}: unknown needs {sorted(unknown)}")
        if (CROSS_WORKBOOK_LIMITS in self.needs) != (self.records is not None):
            raise ValueError(f"{self.schema.name}: cross-workbook limits need the records they count, and only they do")
        if self.across_rows is not None and not self.row_independent:
            raise ValueError(f"{self.schema.name}: steps across rows are declared apart only for a row-independent program")
        headers = {c.header for c in self.schema.columns} | set(self.schema.computed)
        for what in ("award_column", "year_column", "area_column", "month_column"):
            column = getattr(self, what)
            if column is not None and column not in headers:
                raise ValueError(f"{self.schema.name}: {what} {column!r} is not a column of the sheet")
        if self.prior_incentive is not None:
            for column in (self.prior_incentive.name, self.prior_incentive.date):
                if column is not None and column not in headers:
                    raise ValueError(f"{self.schema.name}: prior incentive column {column!r} is not a column of the sheet")

    @property
    def name(self) -> str:
        """The intake sheet's name (`GrowNJ`)."""
        return self.schema.name

    @property
    def rules(self) -> str:
        """The program's folder under batch/programs/, which holds its rules: the package of its steps."""
        return self.calculate.__module__.split(".")[-2]

    @property
    def run_limits(self) -> Callable | None:
        """The records that count against limits across workbooks (`records.of`), or None."""
        return self.records.of if self.records is not None else None
