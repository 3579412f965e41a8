"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import Portfolio, Program
from batch.programs.erg_residential import intake, steps
from batch.programs.erg_residential.sheet import ERG_RESIDENTIAL

PROGRAM = Program(
    ERG_RESIDENTIAL,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Credits Requested ($)",
    area_column="Category",
    year_column="Application Date",
    month_column="Application Date",
    # the buckets and the program total fill over years: they count the applications of the run's other
    # workbooks and of earlier runs
    portfolio=Portfolio(
        steps.portfolio_fields,
        fields=("category", "date", "credits"),
        groupings=("limit_groups",),
        standing=steps.standing,
        rows=steps.rows_of,
        judged=("BUCKET_LIMIT_EXCEEDED",),
        reads_computed=False,  # its fields are worked out from the row's own cells, never from its computed columns
    ),
)
