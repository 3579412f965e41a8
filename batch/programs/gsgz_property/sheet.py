"""Sheet `GSGZ_Property`: Garden State Growth Zone property tax exemption (README, sheet `GSGZ_Property`)."""

from batch.programs._kit.rules import rules_of
from batch.programs._kit.rules_text import day
from validators.columns import Column, SheetSpec

rules = rules_of(__name__)
ENACTED, WINDOW = rules["enactment_date"].value, rules["certificate_window_years"].value
# Payment years 1 to the last year of the c. schedule (the schedule of e. has as many years).
YEARS = range(1, len(rules["development_entity_schedule"].value) + 1)

GSGZ_PROPERTY = SheetSpec(
    name="GSGZ_Property",
    program="Growth Zone property tax exemption",
    citation="C.52:27D-489s",
    columns=(
        Column("Property ID", "text", required=True, record_id=True, hint="Unique ID of the property."),
        Column("Owner", "text", hint="Owner of the property."),
        Column(
            "Development Entity", "yesno", hint="Y for a Garden State Growth Zone Development Entity (b., c.); N for another owner (e.)."
        ),
        Column("Municipality Opted In", "yesno", hint="Y when the municipality adopted the opt-in ordinance (b.)."),
        Column(
            "Certificate of Occupancy Date",
            "date",
            required=True,
            hint="Date of the final certificate of occupancy; for a Development Entity, not before the enactment of "
            f"P.L.2013 c.161 ({day(ENACTED)}) and at most {WINDOW} years after it (b.(1), b.(2)).",
        ),
        Column("Annual Taxes Otherwise Due ($)", "money", required=True, minimum=0, hint="Full taxes on the improvements per year."),
    ),
    computed={
        **{f"Payment Year {y} ($)": "money" for y in YEARS},
        "Total Exempted ($)": "money",
        "County Share Minimum ($)": "money",
    },
)
