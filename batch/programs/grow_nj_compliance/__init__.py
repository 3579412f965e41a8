"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import AS_OF, Program
from batch.programs.grow_nj_compliance import steps
from batch.programs.grow_nj_compliance.sheet import GROW_NJ_COMPLIANCE

PROGRAM = Program(
    GROW_NJ_COMPLIANCE,
    "grow_nj_compliance",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Credit Allowed ($)",
    year_column="Tax Period",
    needs=frozenset({AS_OF}),
)
