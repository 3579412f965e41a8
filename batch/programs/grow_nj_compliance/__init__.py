"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import AS_OF, Portfolio, Program
from batch.programs.grow_nj_compliance import intake, steps
from batch.programs.grow_nj_compliance.sheet import GROW_NJ_COMPLIANCE

PROGRAM = Program(
    GROW_NJ_COMPLIANCE,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Credit Allowed ($)",
    year_column="Tax Period",
    needs=frozenset({AS_OF}),
    # a project's periods arrive one a year, each carrying forward what the last left: the carry-forward
    # counts the team's periods of the project processed in other workbooks
    portfolio=Portfolio(
        steps.portfolio_fields,
        fields=("project", "period", "allowed", "liability"),
        groupings=("project",),
        within_team=True,
        standing=steps.standing,
    ),
)
