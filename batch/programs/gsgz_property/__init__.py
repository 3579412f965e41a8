"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import Program
from batch.programs.gsgz_property import steps
from batch.programs.gsgz_property.sheet import GSGZ_PROPERTY

PROGRAM = Program(
    GSGZ_PROPERTY,
    "gsgz_property",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Total Exempted ($)",
    year_column="Certificate of Occupancy Date",
    month_column="Certificate of Occupancy Date",
    row_independent=True,
)
