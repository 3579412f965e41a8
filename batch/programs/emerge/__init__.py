"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import Program
from batch.programs.emerge import intake, steps
from batch.programs.emerge.sheet import EMERGE

PROGRAM = Program(
    EMERGE,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Requested Tax Credit ($)",
    area_column="Location",
    year_column="Application Date",
    month_column="Application Date",
    row_independent=True,
)
