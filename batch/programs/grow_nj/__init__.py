"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import PRIOR_INCENTIVES, AcrossRows, PriorIncentive, Program
from batch.programs.grow_nj import explain, steps
from batch.programs.grow_nj.sheet import GROW_NJ

PROGRAM = Program(
    GROW_NJ,
    "grow_nj",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Total Award ($)",
    explain=explain.explain,
    area_column="Area",
    year_column="Application Date",
    month_column="Application Date",
    row_independent=True,
    across_rows=AcrossRows(steps.calculate_rows, steps.across_rows),
    needs=frozenset({PRIOR_INCENTIVES}),
    prior_incentive=PriorIncentive(name="Business Name", date="Application Date"),
)
