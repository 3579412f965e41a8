"""The programs' declarations (batch/programs/<program>/__init__.py): one per program folder, each
with its steps and rules, and nothing declared twice or left out."""

from __future__ import annotations

import sys

import pytest

from batch.programs import BY_NAME, NEEDS, ORDER, PROGRAMS, Program, folders
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


@pytest.mark.parametrize(
    "needs,run_limits,error",
    [
        (frozenset({"weather"}), None, "unknown needs"),
        (frozenset({"cross_workbook_limits"}), None, "need run_limits"),
        (frozenset(), print, "need run_limits"),
    ],
)
def test_a_declaration_with_unknown_or_unmet_needs_is_refused(needs, run_limits, error):
    grow_nj = BY_NAME["GrowNJ"]
    with pytest.raises(ValueError, match=error):
        Program(grow_nj.schema, "grow_nj", grow_nj.calculate, grow_nj.summarize, grow_nj.steps, "x", needs=needs, run_limits=run_limits)
