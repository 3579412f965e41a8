"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import Program
from batch.programs.beip_conversion import intake, steps
from batch.programs.beip_conversion.sheet import BEIP_CONVERSION

PROGRAM = Program(
    BEIP_CONVERSION,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Approved Amount ($)",
    year_column="Accrual Year",
)
