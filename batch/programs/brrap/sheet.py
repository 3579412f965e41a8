"""Sheet `BRRAP`: Business Retention and Relocation Assistance grants (README, sheet `BRRAP`)."""

from batch.programs._kit.rules import rules_of
from batch.programs._kit.rules_text import money
from validators.columns import Column, SheetSpec

rules = rules_of(__name__)
# Fewest employees of a grant: the least minimum of the multiple's tiers (P.L.2004 c.65 s.7 b.(1)).
MINIMUM_EMPLOYEES = min(t.extra["min_employees"] for t in rules["multiple"])

BRRAP = SheetSpec(
    name="BRRAP",
    program="BRRAP grants",
    citation="P.L.2004 c.65 s.7",
    columns=(
        Column("Grant ID", "text", required=True, record_id=True, hint="Unique ID of the grant of tax credits."),
        Column(
            "Business Name",
            "text",
            required=True,
            hint=f"The business; the {money(rules['business_annual_limit'].value)} single-business limit groups rows by this name, "
            "ignoring case, punctuation, "
            "spaces and a trailing legal form (Acme Corp. and ACME Corporation are one business).",
        ),
        Column(
            "Employees Relocated or Retained",
            "integer",
            required=True,
            minimum=0,
            hint=f"Full-time employees the project covers (at least {MINIMUM_EMPLOYEES} to be eligible).",
        ),
        Column("Yearly Tax Credit Amount ($)", "money", required=True, minimum=0, hint="The yearly tax credit amount of the project."),
        Column("Bonus Award ($)", "money", minimum=0, hint="Bonus award under section 5 of P.L.2004 c.65; blank means 0."),
        Column("First Tax Period", "integer", required=True, year=True, minimum=1900, maximum=2100, hint="Year the credit is issued."),
        Column("Certificate of Compliance", "yesno", hint="Y when the use of the credit is accompanied by a certificate of compliance."),
    ),
    computed={
        "Multiple": "number",
        "Grant Amount ($)": "money",
        "Tax Periods": "number",
        "Credit per Tax Period ($)": "money",
        "Last Tax Period": "number",
    },
)
