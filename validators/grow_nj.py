"""Sheet `GrowNJ`: Grow New Jersey Assistance Program award (README, sheet `GrowNJ`)."""

from batch.rules import load
from validators.columns import Column, RowCheck, SheetSpec

COUNTIES = (
    "Atlantic",
    "Bergen",
    "Burlington",
    "Camden",
    "Cape May",
    "Cumberland",
    "Essex",
    "Gloucester",
    "Hudson",
    "Hunterdon",
    "Mercer",
    "Middlesex",
    "Monmouth",
    "Morris",
    "Ocean",
    "Passaic",
    "Salem",
    "Somerset",
    "Sussex",
    "Union",
    "Warren",
)
AREAS = ("Urban Transit Hub", "Growth Zone", "Growth Zone (MRERA)", "Create Zone", "Distressed", "Priority", "Other Eligible")
BUSINESS_TYPES = ("Technology Startup", "Manufacturing", "Other")
PREMISES = ("Industrial Rehab", "Industrial New", "Non-Industrial Rehab", "Non-Industrial New")
VERSIONS = ("2014", "2017")
# The paragraphs of the C.34:1B-243 definition of a mega project, in the rules data's order.
MEGA_BASES = tuple(dict.fromkeys(t.extra["basis"] for t in load("grow_nj")["mega_project_definition"]))


def _flag(header: str, hint: str) -> Column:
    return Column(header, "yesno", hint=hint)


GROW_NJ = SheetSpec(
    name="GrowNJ",
    program="Grow New Jersey",
    citation="C.34:1B-244, C.34:1B-246",
    columns=(
        Column("Project ID", "text", required=True, record_id=True, hint="Unique ID of the project (one row per award)."),
        Column("Business Name", "text", hint="The business applying."),
        Column(
            "Statute Version",
            "code",
            codes=VERSIONS,
            default="2017",
            hint="Text of C.34:1B-246 that governs the award: 2014 (P.L.2014 c.63) or 2017 (P.L.2017 c.221).",
        ),
        Column("Application Date", "date", required=True, hint="Date the application was filed."),
        Column("County", "code", required=True, codes=COUNTIES, hint="New Jersey county of the qualified business facility."),
        Column(
            "Area",
            "code",
            required=True,
            codes=AREAS,
            hint="Incentive area of the facility; Growth Zone (MRERA) is a Growth Zone qualifying under MRERA.",
        ),
        _flag("Mega Project", 'Y when the business seeks a credit for a mega project (C.34:1B-243 "mega project").'),
        Column(
            "Mega Project Basis",
            "code",
            codes=MEGA_BASES,
            hint="Which paragraph of the C.34:1B-243 mega project definition the project meets; "
            "blank: every paragraph the amounts can show is tried.",
        ),
        _flag("Disaster Recovery Project", "Y for a disaster recovery project (gross limit $2,000, 246 d.(6))."),
        _flag("Replaces Disaster-Damaged Facility", "Y when the project replaces a disaster-damaged facility (246 e.)."),
        _flag("Tourism District", "Y when the facility is in the Atlantic City Tourism District."),
        Column("Business Type", "code", required=True, codes=BUSINESS_TYPES, hint="Technology Startup, Manufacturing or Other."),
        _flag("Targeted Industry", "Y when the business is engaged primarily in a targeted industry."),
        Column("Premises Type", "code", required=True, codes=PREMISES, hint="Kind of premises the capital investment is in."),
        Column(
            "Gross Leasable Area (sq ft)",
            "number",
            required=True,
            minimum=0,
            minimum_exclusive=True,
            hint="Gross leasable area of the facility in square feet; more than 0.",
        ),
        Column("Capital Investment ($)", "money", required=True, minimum=0, hint="Capital investment at the facility."),
        Column("New Full-Time Jobs", "integer", required=True, minimum=0, hint="New full-time jobs."),
        Column("Retained Full-Time Jobs", "integer", required=True, minimum=0, hint="Retained full-time jobs."),
        Column(
            "Jobs New to Municipality",
            "integer",
            minimum=0,
            hint="Full-time jobs new to the municipality, for the MRERA alternative; blank means New Full-Time Jobs.",
        ),
        Column("Average Salary ($)", "money", minimum=0, hint="Average salary of the project's full-time jobs."),
        Column(
            "Benchmark Salary ($)", "money", minimum=0, hint="County average salary, or the Growth Zone average salary in a Growth Zone."
        ),
        Column("Municipal Revitalization Index", "number", hint="2007 Municipal Revitalization Index of the municipality."),
        _flag("Deep Poverty Pocket", "Y in a deep poverty pocket or a Choice Neighborhoods area (246 c.(1))."),
        _flag("Qualified Incubator", "Y in a qualified incubator facility (246 c.(2))."),
        _flag("Mixed-Use Moderate Income Housing", "Y in a mixed-use development with moderate income housing (246 c.(3))."),
        _flag("Transit Oriented Development", "Y within a transit oriented development (246 c.(4))."),
        _flag("LEED Silver or Remediation", "Y above LEED Silver or with substantial remediation (246 c.(9))."),
        _flag("US HQ of Automobile Manufacturer", "Y for the US headquarters of an automobile manufacturer (246 c.(11), e.)."),
        _flag("Same Municipality", "Y when located in the municipality it was in before applying (246 c.(11))."),
        _flag("Light Rail Half Mile", "Y within a half-mile of a new light rail station (246 c.(13))."),
        _flag("Marine Terminal South Jersey Port District", "Y for a marine terminal in the South Jersey Port District (246 c.(14))."),
        _flag("Redevelopment Area Near Highways", "Y in a redevelopment area near the highways of 246 c.(15)."),
        _flag("On-Site Solar 50 Percent", "Y when on-site solar meets 50% of the electric needs (246 c.(16))."),
        _flag("Vacant Million Square Foot Building", "Y for a vacant building of over 1,000,000 sq ft (246 c.(17), 2017 only)."),
        _flag("College Collaboration", "Y for collaborative research with a college or university (246 c.(18), 2017 only)."),
        _flag(
            "Doctoral University Collaboration",
            "Y for collaborative research with a doctoral university in a Create Zone (2017 246 b.(1)(b)).",
        ),
        _flag("Redevelopment or Rehabilitation Area", "Y in an area in need of redevelopment or rehabilitation (2014 246 f.)."),
        _flag("Final Point of Sale Retail", "Y when the project is point-of-final-purchase retail (244 e.)."),
        Column("Annual Withholdings ($)", "money", minimum=0, hint="Withholdings of the business from the facility, per year."),
        Column(
            "Amount Necessary ($)",
            "money",
            minimum=0,
            hint="The authority's amount necessary to complete the project (246 f., last paragraph).",
        ),
        Column("Net Benefit ($)", "money", hint="Present value of the net benefit to the State."),
        Column("Eligibility Period (years)", "integer", minimum=1, maximum=10, hint="1 to 10; blank means 10."),
        Column(
            "Prior Incentive Obligations Satisfied",
            "yesno",
            blank_unknown=True,
            hint="C.34:1B-247 e.(1): Y when the business met the obligations of an earlier BEIP or BRRAP award; blank means not stated.",
        ),
        Column(
            "Separate From Prior Award",
            "yesno",
            blank_unknown=True,
            hint="C.34:1B-247 e.(2): Y when the capital investment and jobs are apart from an earlier award's; blank means not stated.",
        ),
    ),
    computed={
        "Minimum Capital Investment ($)": "money",
        "Minimum New Jobs": "number",
        "Minimum Retained Jobs": "number",
        "Eligible": "text",
        "Base Credit per Job ($)": "money",
        "Bonus per Job ($)": "money",
        "Gross Credit per Job ($)": "money",
        "Retained Credit per Job ($)": "money",
        "Annual Credit ($)": "money",
        "Total Award ($)": "money",
        "Commitment Period (years)": "number",
        "Net Benefit Ratio": "percent",
        "Calculation": "text",
    },
    row_checks=(
        RowCheck(
            "Area",
            "BAD_CODE",
            "an area of the 2014 text (it has no Create Zone): use Statute Version 2017 or another area",
            lambda f: (f["Statute Version"] == "2014") & (f["Area"] == "Create Zone"),
        ),
    ),
)
