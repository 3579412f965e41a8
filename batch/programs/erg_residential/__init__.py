"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import Program
from batch.programs.erg_residential import steps
from batch.programs.erg_residential.sheet import ERG_RESIDENTIAL

PROGRAM = Program(
    ERG_RESIDENTIAL,
    "erg_residential",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Credits Requested ($)",
    area_column="Category",
    year_column="Application Date",
    month_column="Application Date",
)
