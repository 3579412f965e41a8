"""The programs' declarations (batch/programs/<program>/__init__.py): one per program folder, each
with its steps and rules, and nothing declared twice or left out."""

from __future__ import annotations

import dataclasses
import re
import sys

import pytest

from batch.programs import BY_NAME, NEEDS, ORDER, PROGRAMS, AcrossRows, Limit, PriorIncentive, Program, Records, folders
from batch.programs._kit.rules import load


def test_every_program_folder_is_declared_once():
    # each program's steps are its own folder's, and its rules folder is that folder
    modules = [p.calculate.__module__ for p in PROGRAMS]
    assert modules == [f"batch.programs.{name}.steps" for name in ORDER]
    assert [p.rules for p in PROGRAMS] == list(ORDER) and sorted(ORDER) == folders()
    assert len(BY_NAME) == len(PROGRAMS)  # sheet names unique


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_a_declaration_names_what_exists(program):
    module = sys.modules[program.calculate.__module__]
    assert program.summarize is module.summarize and program.steps is module.STEPS and program.steps
    assert all(callable(step) and step.__doc__ for step in program.steps)  # each step cites its provision
    columns = {c.header for c in program.schema.columns} | set(program.schema.computed)
    for column in (program.award_column, program.area_column, program.year_column, program.month_column):
        assert column is None or column in columns, column
    if program.prior_incentive:
        assert {program.prior_incentive.name, program.prior_incentive.date or program.year_column} <= columns
    assert set(program.needs) <= NEEDS
    load(program.rules)


def _records(**change) -> Records:
    fields = dict(
        of=print, fields=("id", "year", "credit"), record="id", amount="credit", order_by=("year",), limits=(Limit("cap", ("year",)),)
    )
    return Records(**{**fields, **change})


@pytest.mark.parametrize(
    "change,error",
    [
        (dict(needs=frozenset({"weather"})), "unknown needs"),
        (dict(needs=frozenset({"cross_workbook_limits"})), "need the records they count"),
        (dict(records=_records()), "need the records they count"),
        (dict(year_column="Tax Year"), "year_column 'Tax Year' is not a column of the sheet"),
        (dict(award_column="Award"), "award_column 'Award' is not a column of the sheet"),
        (dict(area_column="Region"), "area_column 'Region' is not a column of the sheet"),
        (dict(month_column="Month"), "month_column 'Month' is not a column of the sheet"),
        (dict(prior_incentive=PriorIncentive(name="Owner")), "prior incentive column 'Owner' is not a column of the sheet"),
        (dict(across_rows=AcrossRows(print, print), row_independent=False), "only for a row-independent program"),
    ],
)
def test_a_declaration_with_unknown_or_unmet_needs_or_columns_it_does_not_have_is_refused(change, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        dataclasses.replace(BY_NAME["GrowNJ"], **change)


def test_the_year_column_is_required():
    # every column the run groups by without a fallback is required: a declaration without one fails
    # where it is written, never later in the run (`KeyError: None`)
    grow_nj = BY_NAME["GrowNJ"]
    with pytest.raises(TypeError, match="year_column"):
        Program(grow_nj.schema, grow_nj.calculate, grow_nj.summarize, grow_nj.steps, grow_nj.intake, award_column="Total Award ($)")


@pytest.mark.parametrize(
    "change,error",
    [
        (dict(order_by=("month",)), "not ['month']"),
        (dict(limits=(Limit("cap", ("business", "year")),)), "not ['business']"),
        (dict(record="grant"), "not ['grant']"),
    ],
)
def test_records_keep_every_field_their_limits_read(change, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        _records(**change)


def test_the_limits_across_workbooks_are_declared_by_the_program():
    # BRRAP's credit per tax period: what a record keeps, how records group and order, which limits
    # it counts against (the run report draws the one with a sheet)
    records = BY_NAME["BRRAP"].records
    assert records.fields == ("grant", "business", "business_name", "year", "credit")
    assert [(limit.parameter, limit.group_by, limit.sheet) for limit in records.limits] == [
        ("business_annual_limit", ("business", "year"), None),
        ("aggregate_annual_limit", ("year",), "BRRAP Aggregate"),
    ]
    rules = load("brrap")
    assert all(limit.parameter in rules.parameters for limit in records.limits)
    assert [p.name for p in PROGRAMS if p.records] == ["BRRAP"]
