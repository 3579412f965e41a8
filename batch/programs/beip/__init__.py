"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import PriorIncentive, Program
from batch.programs.beip import steps
from batch.programs.beip.sheet import BEIP

PROGRAM = Program(
    BEIP,
    "beip",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Total Grant ($)",
    area_column="Grant Form",
    year_column="Agreement Date",
    month_column="Agreement Date",
    row_independent=True,
    prior_incentive=PriorIncentive(name="Business Name", date="Agreement Date"),
)
