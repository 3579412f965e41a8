"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import Program
from batch.programs.emerge import steps
from batch.programs.emerge.sheet import EMERGE

PROGRAM = Program(
    EMERGE,
    "emerge",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Requested Tax Credit ($)",
    area_column="Location",
    year_column="Application Date",
    month_column="Application Date",
    row_independent=True,
)
