"""Sheet `Emerge`: Emerge program eligibility (README, sheet `Emerge`)."""

from batch.programs._kit.rules import rules_of
from batch.programs._kit.rules_text import day, percent
from batch.programs.grow_nj.sheet import PREMISES
from validators.columns import Column, RowCheck, SheetSpec

rules = rules_of(__name__)
# The qualified incentive areas of a.(3), then the one code for a facility outside all of them.
OUTSIDE = "Outside Qualified Incentive Area"
LOCATIONS = (*rules["qualified_locations"].value, OUTSIDE)
# The requirements the business certifies (a.(4), (6) to (8), d.), one Y/N column each.
CERTIFICATIONS = tuple(t.label for t in rules["certifications"])


def _certification(header: str, hint: str) -> Column:
    return Column(header, "yesno", blank_unknown=True, hint=hint + " N makes the project ineligible; blank is a warning.")


EMERGE = SheetSpec(
    name="Emerge",
    program="Emerge",
    citation="C.34:1B-339",
    columns=(
        Column("Project ID", "text", required=True, record_id=True, hint="Unique ID of the application."),
        Column("Business Name", "text", hint="The applicant."),
        Column(
            "Application Date",
            "date",
            required=True,
            hint=f"Date of the application (on or after {day(rules['program_start'].value)} "
            f"and before {day(rules['application_deadline'].value)}).",
        ),
        Column("Location", "code", required=True, codes=LOCATIONS, hint="Where the qualified business facility is."),
        Column("Small Business", "yesno", hint="Y for a small business."),
        Column("Targeted Industry", "yesno", hint="Y when engaged primarily in a targeted industry."),
        Column("Mega Project", "yesno", hint="Y for a mega project."),
        Column("Premises Type", "code", required=True, codes=PREMISES, hint="Kind of premises the capital investment is in."),
        Column("Gross Leasable Area (sq ft)", "number", required=True, minimum=0, hint="Gross leasable area in square feet."),
        Column("Capital Investment ($)", "money", required=True, minimum=0, hint="Capital investment at the facility."),
        Column("New Full-Time Jobs", "integer", required=True, minimum=0, hint="New full-time jobs."),
        Column("Retained Full-Time Jobs", "integer", required=True, minimum=0, hint="Retained full-time jobs."),
        Column("Current Workforce", "integer", minimum=0, hint="Full-time workforce at application; required for a small business."),
        Column(
            "Requested Tax Credit ($)",
            "money",
            required=True,
            minimum=0,
            minimum_exclusive=True,
            hint="Tax credit requested; more than 0 (the net benefit ratio divides by it).",
        ),
        Column("Net Benefit ($)", "money", required=True, hint="Present value of the net benefit to the State."),
        Column(
            "Withholdings Subject to NJ Income Tax",
            "percent",
            required=True,
            minimum=0,
            maximum=1,
            hint="Share of the withholdings of the new and retained jobs subject to New Jersey gross income tax "
            f"(at least {percent(rules['minimum_withholdings_share'].value)}).",
        ),
        _certification("Accommodates Majority of Employees", "Y when the facility can accommodate more than half of the employees (d.)."),
        _certification("Material Factor", "Y when the award is a material factor in the decision (a.(4))."),
        _certification(
            "Meets Environmental Standards", "Y when the facility meets the environmental and sustainability standards (a.(6))."
        ),
        _certification("Affirmative Action Compliance", "Y when the project complies with affirmative action requirements (a.(7))."),
        _certification("Prevailing Wage Compliance", "Y when workers are paid the prevailing wage (a.(8))."),
    ),
    computed={
        "Minimum Capital Investment ($)": "money",
        "Infrastructure Fund Donation ($)": "money",
        "Minimum New Jobs": "number",
        "Retained Jobs Eligible": "text",
        "Required Net Benefit Ratio": "number",
        "Net Benefit Ratio": "number",
        "Eligible": "text",
    },
    row_checks=(
        RowCheck(
            "Current Workforce",
            "MISSING_VALUE",
            f"the Current Workforce of a small business (its minimum is {percent(rules['small_business_job_growth'].value)} of it)",
            lambda f: f["Small Business"] & f["Current Workforce"].isna(),
        ),
    ),
)
