"""This program's declaration, found by `batch.programs`: its sheet, its rules folder, its steps and what it needs from the run."""

from batch.programs._kit.program import Program
from batch.programs.transfers import steps
from batch.programs.transfers.sheet import TRANSFERS

PROGRAM = Program(
    TRANSFERS,
    "transfers",
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    award_column="Credit Amount Transferred ($)",
    area_column="Program",
    year_column="Transfer Date",
    month_column="Transfer Date",
)
