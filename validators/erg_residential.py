"""Sheet `ERG_Residential`: ERG qualified residential project tax credits (README, sheet `ERG_Residential`)."""

from validators.columns import Column, SheetSpec

CATEGORIES = (
    "South Jersey Growth Zone",
    "South Jersey MRI 400+",
    "Commuter Rail Transit Hub",
    "Growth Zone Outside South Jersey",
    "Disaster Recovery",
    "Hudson SDA Transitional Aid",
    "Distressed, Deep Poverty or Highlands",
    "Other ERG Incentive Area",
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
            hint="Y in a deep poverty pocket or distressed municipality: project limit $40,000,000 instead of $20,000,000.",
        ),
        Column(
            "Growth Zone",
            "yesno",
            hint="Y in a Garden State Growth Zone: 85% of incremental revenue may be pledged instead of 75%. "
            "The categories South Jersey Growth Zone and Growth Zone Outside South Jersey are read as Y; "
            "Y with a (c) or (d) category is a conflict and stays at 75%.",
        ),
        Column("Application Date", "date", required=True, hint="Date of the incentive grant application (before 2016-07-01)."),
        Column("Temporary Certificate of Occupancy Date", "date", hint="Date of the temporary certificate of occupancy (by 2018-07-28)."),
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
