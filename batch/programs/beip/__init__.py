"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import PriorIncentive, Program
from batch.programs.beip import intake, steps
from batch.programs.beip.sheet import BEIP

PROGRAM = Program(
    BEIP,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Total Grant ($)",
    area_column="Grant Form",
    year_column="Agreement Date",
    month_column="Agreement Date",
    row_independent=True,
    prior_incentive=PriorIncentive(name="Business Name", date="Agreement Date"),
)
