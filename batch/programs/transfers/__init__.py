"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import Portfolio, Program
from batch.programs.transfers import intake, steps
from batch.programs.transfers.sheet import TRANSFERS

PROGRAM = Program(
    TRANSFERS,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Credit Amount Transferred ($)",
    award_kind="credit transferred",  # credit moved from one holder to another: charted apart from the awards
    area_column="Program",
    year_column="Transfer Date",
    month_column="Transfer Date",
    # a certificate's transfers arrive month by month: its amount and total count the portfolio; and
    # a Transferor's smaller transfers of a year count wherever they were processed
    portfolio=Portfolio(
        steps.portfolio_fields,
        fields=("program", "certificate", "certificate_amount", "transferor", "transferee", "date", "credit"),
        groupings=("certificate_key", "small_transfer_key"),
        standing=steps.standing,
        rows=steps.rows_of,
        judged=(
            "TRANSFER_BELOW_MINIMUM",
            "SMALL_TRANSFER_ALLOWANCE_USED",
            "CERTIFICATE_OVERTRANSFERRED",
            "CERTIFICATE_AMOUNT_CONFLICT",
            "CERTIFICATE_AMOUNT_NOT_GIVEN",
            "BEIP_RETRANSFER_PROHIBITED",
        ),  # fmt: skip
        reads_computed=False,  # its fields are worked out from the row's own cells, never from its computed columns
    ),
)
