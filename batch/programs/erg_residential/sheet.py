"""Sheet `ERG_Residential`: ERG qualified residential project tax credits (README, sheet `ERG_Residential`)."""

from batch.programs._kit.rules import rules_of
from batch.programs._kit.rules_text import day, either, money, percent
from validators.columns import Column, SheetSpec

rules = rules_of(__name__)
# The b.(2) categories, in the order of their buckets.
CATEGORIES = tuple(dict.fromkeys(c for t in rules["buckets"] for c in t.extra["categories"]))
PLEDGE, LIMIT = rules["pledge_share"], rules["project_credit_limit"]
GROWTH_ZONE_HINT = (
    f"Y in a Garden State Growth Zone: {percent(PLEDGE['Y'].value)} of incremental revenue may be pledged instead of "
    f"{percent(PLEDGE['N'].value)}. The categories {either(rules['growth_zone_categories'].value, 'and')} are read as Y; "
    f"Y with a {either([f'({b})' for b in rules['growth_zone_excluded_buckets'].value])} category is a conflict and stays at "
    f"{percent(PLEDGE['N'].value)}."
)

ERG_RESIDENTIAL = SheetSpec(
    name="ERG_Residential",
    program="ERG residential credits",
    citation="C.52:27D-489f b.",
    columns=(
        Column("Project ID", "text", required=True, record_id=True, hint="Unique ID of the qualified residential project."),
        Column("Developer", "text", hint="The developer of the project."),
        Column("Category", "code", required=True, codes=CATEGORIES, hint="The b.(2) category; it picks the bucket of credits."),
        Column(
            "Deep Poverty Pocket or Distressed Municipality",
            "yesno",
            hint=f"Y in a deep poverty pocket or distressed municipality: project limit {money(LIMIT['Y'].value)} "
            f"instead of {money(LIMIT['N'].value)}.",
        ),
        Column(
            "Growth Zone",
            "yesno",
            hint=GROWTH_ZONE_HINT,
        ),
        Column(
            "Application Date",
            "date",
            required=True,
            hint=f"Date of the incentive grant application (before {day(rules['application_deadline'].value)}).",
        ),
        Column(
            "Temporary Certificate of Occupancy Date",
            "date",
            hint=f"Date of the temporary certificate of occupancy (by {day(rules['tco_deadline'].value)}).",
        ),
        Column(
            "Projected Annual Incremental Revenue ($)", "money", required=True, minimum=0, hint="Projected annual incremental revenues."
        ),
        Column("Annual Incentive Grant ($)", "money", required=True, minimum=0, hint="The State portion requested per year."),
        Column("Credits Requested ($)", "money", required=True, minimum=0, hint="Tax credits requested for the project."),
    ),
    computed={
        "Pledge Limit ($)": "money",
        "Project Credit Limit ($)": "money",
        "Bucket": "text",
        "Bucket Cumulative ($)": "money",
    },
)
