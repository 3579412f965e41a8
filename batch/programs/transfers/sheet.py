"""Sheet `Transfers`: tax credit transfer certificates (README, sheet `Transfers`)."""

from batch.programs._kit.rules import rules_of
from batch.programs._kit.rules_text import either, percent
from validators.columns import Column, SheetSpec

rules = rules_of(__name__)
# The programs whose transfer certificates the sheet takes: the cases of the minimum transfer.
PROGRAMS = tuple(rules["minimum_transfer"])


def _consideration() -> str:
    """'75%', or each program's share when they differ ('75% (Grow NJ), 80% (BEIP)')."""
    shares = {program: percent(p.value) for program, p in rules["minimum_consideration_ratio"].items()}
    if len(set(shares.values())) == 1:
        return next(iter(shares.values()))
    return either([f"{share} ({program})" for program, share in shares.items()])


TRANSFERS = SheetSpec(
    name="Transfers",
    program="Tax credit transfer certificates",
    citation="C.34:1B-248, C.34:1B-209.1, C.34:1B-129 g.(3), C.52:27D-489f b.(3)",
    columns=(
        Column("Transfer ID", "text", required=True, record_id=True, hint="Unique ID of this sale or assignment (one row per transfer)."),
        Column("Program", "code", required=True, codes=PROGRAMS, hint="Program that issued the credit on the certificate."),
        Column("Certificate ID", "text", required=True, hint="The transfer certificate the credit is sold from."),
        Column(
            "Certificate Amount ($)",
            "money",
            minimum=0,
            hint="Credit on the certificate (for BEIP: the refundable credit issued). Optional; "
            "when given, transfers of the certificate may not exceed it.",
        ),
        Column("Transferor", "text", required=True, hint="Seller or assignor of the credit."),
        Column("Transferee", "text", required=True, hint="Buyer or assignee of the credit."),
        Column("Transfer Date", "date", required=True, hint="Date of the sale or assignment."),
        Column(
            "Credit Amount Transferred ($)",
            "money",
            required=True,
            minimum=0,
            minimum_exclusive=True,
            hint="Face amount of tax credit moved by this transfer; more than $0.",
        ),
        Column(
            "Consideration Received ($)",
            "money",
            required=True,
            minimum=0,
            hint=f"Price received by the seller for the credit; at least {_consideration()} of the credit transferred.",
        ),
    ),
    computed={
        "Minimum Transfer ($)": "money",
        "Consideration Ratio": "percent",
        "Certificate Transferred To Date ($)": "money",
    },
)
