"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import PRIOR_INCENTIVES, AcrossRows, PriorIncentive, Program
from batch.programs.grow_nj import explain, intake, steps
from batch.programs.grow_nj.sheet import GROW_NJ

PROGRAM = Program(
    GROW_NJ,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Total Award ($)",
    explain=explain.explain,
    area_column="Area",
    year_column="Application Date",
    month_column="Application Date",
    row_independent=True,
    across_rows=AcrossRows(steps.calculate_rows, steps.across_rows, steps.across_parts),
    needs=frozenset({PRIOR_INCENTIVES}),
    prior_incentive=PriorIncentive(
        name="Business Name", date="Application Date", conditions=("Prior Incentive Obligations Satisfied", "Separate From Prior Award")
    ),
)
