"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import Program
from batch.programs.gsgz_property import intake, steps
from batch.programs.gsgz_property.sheet import GSGZ_PROPERTY

PROGRAM = Program(
    GSGZ_PROPERTY,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Total Exempted ($)",
    year_column="Certificate of Occupancy Date",
    month_column="Certificate of Occupancy Date",
    row_independent=True,
)
