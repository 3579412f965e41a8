"""Sheet `GrowNJ`: Grow New Jersey Assistance Program award (README, sheet `GrowNJ`)."""

from batch.programs._kit.rules import rules_of
from batch.programs._kit.rules_text import either, money, percent
from validators.columns import Column, RowCheck, SheetSpec

rules = rules_of(__name__)
# The texts of C.34:1B-246 (the rules' statute versions, oldest first) and the public law of each.
VERSIONS = tuple(sorted(rules.versions))
LAWS = {"2014": "P.L.2014 c.63", "2017": "P.L.2017 c.221"}
if set(LAWS) != set(VERSIONS):
    raise RuntimeError(f"batch/programs/grow_nj/sheet.py names the laws of versions {sorted(LAWS)}; the rules have {list(VERSIONS)}")

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
# The areas of the base amount of C.34:1B-246 b., in the order of the latest text's tiers (then any
# area only an earlier text names).
AREAS = tuple(dict.fromkeys(a for v in reversed(VERSIONS) for t in rules.versions[v]["base_amount"] for a in t.area))
# The business types of C.34:1B-244 c.: those of its job classes, then the class of every other business.
_CLASSES = rules["job_classes"]
BUSINESS_TYPES = (
    *dict.fromkeys(a for t in _CLASSES for a in t.area),
    *(c for c in rules["minimum_new_jobs"] if c not in {t.label for t in _CLASSES}),
)
# The premises of the minimum capital investment of C.34:1B-244 b.(1) to (4).
PREMISES = tuple(rules["minimum_capex_per_sq_ft"])
# The paragraphs of the C.34:1B-243 definition of a mega project, in the rules data's order.
MEGA_BASES = tuple(dict.fromkeys(t.extra["basis"] for t in rules["mega_project_definition"]))


def _flag(header: str, hint: str) -> Column:
    return Column(header, "yesno", hint=hint)


def _one(key: str):
    """The value of a parameter of C.34:1B-246 that every text stating it states alike (a change
    would need the hint to say which text has which); a text without the provision states null."""
    values = {v: rules.versions[v][key].value for v in VERSIONS if rules.versions[v][key].value is not None}
    if len(set(values.values())) != 1:
        raise RuntimeError(f"grow_nj {key} differs between the texts ({values}): say so in the hint")
    return next(iter(values.values()))


def _texts_of(flag: str, key: str) -> str:
    """The texts of C.34:1B-246 whose tiers of `key` read the Y/N column `flag` ('2017')."""
    texts = [v for v in VERSIONS if any(flag in (*t.all_flags, *t.any_flag) for t in rules.versions[v][key])]
    if not texts:
        raise RuntimeError(f"no text of C.34:1B-246 reads {flag} in {key}")
    return either(texts, "and")


def _only(flag: str, key: str) -> str:
    """', 2017 only' when some text has no tier of `key` that reads the column; else nothing."""
    texts = _texts_of(flag, key)
    return "" if texts == either(VERSIONS, "and") else f", {texts} only"


# The awards that are prior incentives of a Grow NJ application (C.34:1B-247 e.; batch.programs declares them).
PRIOR_AWARDS = "BEIP, BRRAP or Grow NJ"
VACANT, COLLEGE = "Vacant Million Square Foot Building", "College Collaboration"
DOCTORAL, REDEVELOPMENT = "Doctoral University Collaboration", "Redevelopment or Rehabilitation Area"
# The texts in which the redevelopment column lifts the withholdings limit of C.34:1B-246 f.
EXEMPT_TEXTS = either([v for v in VERSIONS if rules.versions[v]["withholdings_exempt_flag"].value == REDEVELOPMENT])


def _area_checks() -> tuple[RowCheck, ...]:
    """An Area that a text's base amount does not name is not an area of that text."""
    checks = []
    for v in VERSIONS:
        named = {a for t in rules.versions[v]["base_amount"] for a in t.area}
        missing = [a for a in AREAS if a not in named]
        others = [w for w in VERSIONS if w != v and set(missing) <= {a for t in rules.versions[w]["base_amount"] for a in t.area}]
        if missing:
            checks.append(
                RowCheck(
                    "Area",
                    "BAD_CODE",
                    f"an area of the {v} text (it has no {either(missing)}): use Statute Version {either(others)} or another area",
                    lambda f, v=v, missing=tuple(missing): (f["Statute Version"] == v) & f["Area"].isin(missing),
                )
            )
    return tuple(checks)


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
            hint=f"Text of C.34:1B-246 that governs the award: {either([f'{v} ({LAWS[v]})' for v in VERSIONS])}; "
            f"blank: computed under {VERSIONS[-1]}, the latest, with a warning.",
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
        _flag(
            "Disaster Recovery Project",
            f"Y for a disaster recovery project (gross limit {money(_one('disaster_recovery_gross_limit'))}, 246 d.(6)).",
        ),
        _flag("Replaces Disaster-Damaged Facility", "Y when the project replaces a disaster-damaged facility (246 e.)."),
        _flag("Tourism District", "Y when the facility is in the Atlantic City Tourism District."),
        Column("Business Type", "code", required=True, codes=BUSINESS_TYPES, hint=f"{either(BUSINESS_TYPES)}."),
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
        Column(
            "Municipal Revitalization Index",
            "number",
            hint=f"{_one('south_jersey_mri_edition')} Municipal Revitalization Index of the municipality.",
        ),
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
        _flag(
            "On-Site Solar 50 Percent",
            f"Y when on-site solar meets {percent(_one('solar_share_of_electric_needs'))} of the electric needs (246 c.(16)).",
        ),
        _flag(
            VACANT,
            f"Y for a vacant building of over {_one('vacant_building_min_sq_ft'):,} sq ft (246 c.(17){_only(VACANT, 'flag_bonuses')}).",
        ),
        _flag(COLLEGE, f"Y for collaborative research with a college or university (246 c.(18){_only(COLLEGE, 'flag_bonuses')})."),
        _flag(
            DOCTORAL,
            "Y for collaborative research with a doctoral university in a Create Zone "
            f"({_texts_of(DOCTORAL, 'base_amount')} 246 b.(1)(b)).",
        ),
        _flag(REDEVELOPMENT, f"Y in an area in need of redevelopment or rehabilitation ({EXEMPT_TEXTS} 246 f.)."),
        _flag("Final Point of Sale Retail", "Y when the project is point-of-final-purchase retail (244 e.)."),
        Column("Annual Withholdings ($)", "money", minimum=0, hint="Withholdings of the business from the facility, per year."),
        Column(
            "Amount Necessary ($)",
            "money",
            minimum=0,
            hint="The authority's amount necessary to complete the project (246 f., last paragraph).",
        ),
        Column("Net Benefit ($)", "money", hint="Present value of the net benefit to the State."),
        Column(
            "Eligibility Period (years)",
            "integer",
            minimum=1,
            maximum=rules["default_eligibility_period"].value,
            hint=f"1 to {rules['default_eligibility_period'].value}; blank means {rules['default_eligibility_period'].value}.",
        ),
        Column(
            "Prior Incentive Obligations Satisfied",
            "yesno",
            blank_unknown=True,
            hint=f"C.34:1B-247 e.(1): Y when the business met the obligations of an earlier {PRIOR_AWARDS} award; blank means not stated.",
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
    row_checks=_area_checks(),
)
