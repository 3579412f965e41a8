"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import Program
from batch.programs.beip.sheet import BEIP_CONVERSION
from batch.programs.beip_conversion import steps

PROGRAM = Program(
    BEIP_CONVERSION,
    "beip_conversion",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Approved Amount ($)",
    year_column="Accrual Year",
)
