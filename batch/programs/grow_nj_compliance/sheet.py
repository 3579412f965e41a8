"""Sheet `GrowNJ_Compliance`: Grow NJ annual compliance, forfeiture and carry-forward (README, sheet `GrowNJ_Compliance`)."""

from batch.programs._kit.rules import rules_of
from validators.columns import Column, SheetSpec

rules = rules_of(__name__)
# C.34:1B-243 "eligibility period": a term of not more than this many years; a blank is read as it
LONGEST_TERM = rules["eligibility_period_years"].value

GROW_NJ_COMPLIANCE = SheetSpec(
    name="GrowNJ_Compliance",
    program="Grow NJ compliance",
    citation="C.34:1B-247",
    columns=(
        Column("Project ID", "text", required=True, record_id=True, hint="The Grow NJ project; with Tax Period, unique in the sheet."),
        Column(
            "Tax Period", "integer", required=True, record_id=True, year=True, minimum=1900, maximum=2100, hint="Year of the tax period."
        ),
        Column("Approval Date", "date", required=True, hint="The authority's approval of the application."),
        Column("Certification Date", "date", hint="When the authority accepted the capital investment and employment certification."),
        Column("Annual Credit ($)", "money", required=True, minimum=0, hint="The award per year in the incentive agreement."),
        Column("Agreement Jobs", "integer", required=True, minimum=0, hint="New + retained jobs in the incentive agreement."),
        Column(
            "Baseline Statewide Employees",
            "integer",
            required=True,
            minimum=0,
            hint="Full-time employees statewide in the last tax period before approval.",
        ),
        Column(
            "Statewide Employees", "integer", required=True, minimum=0, hint="This period's average monthly full-time employment statewide."
        ),
        Column(
            "Facility Employees",
            "integer",
            required=True,
            minimum=0,
            hint="This period's average monthly full-time employment at the facility.",
        ),
        Column("Period Documentation Certified Date", "date", hint="When this period's credit documentation was certified."),
        Column("Tax Liability ($)", "money", required=True, minimum=0, hint="The holder's tax liability for the period."),
        Column("Facility Sold", "yesno", hint="Y when the owner sold the qualified business facility in this period (d.(3)(a))."),
        Column(
            "Seller Holds the Credits",
            "yesno",
            blank_unknown=True,
            hint="When Facility Sold is Y: Y when the seller is the business holding these credits, N when another owner"
            " (a landlord) sold; blank is read as Y, with a warning (d.(3)(a)).",
        ),
        Column(
            "Eligibility Period (years)",
            "integer",
            minimum=1,
            maximum=LONGEST_TERM,
            hint=f"The term the applicant chose for the eligibility period, from the tax period of the Certification Date"
            f' (243 "eligibility period"): 1 to {LONGEST_TERM}; blank means {LONGEST_TERM}.',
        ),
    ),
    computed={
        "Credit Allowed ($)": "money",
        "Credit Used ($)": "money",
        "Carry-Forward Added ($)": "money",
        "Carry-Forward Used ($)": "money",
        "Carry-Forward Balance ($)": "money",
        "Carry-Forward Expired ($)": "money",
    },
)
