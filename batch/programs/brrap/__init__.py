"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import CROSS_WORKBOOK_LIMITS, PriorIncentive, Program
from batch.programs.brrap import steps
from batch.programs.brrap.sheet import BRRAP

PROGRAM = Program(
    BRRAP,
    "brrap",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Grant Amount ($)",
    year_column="First Tax Period",
    needs=frozenset({CROSS_WORKBOOK_LIMITS}),
    prior_incentive=PriorIncentive(name="Business Name"),
    run_limits=steps.run_credit_by_year,
)
