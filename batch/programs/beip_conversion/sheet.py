"""Sheet `BEIP_Conversion`: BEIP grants converted to tax credits (README, sheet `BEIP`; C.34:1B-129 e.)."""

from batch.programs._kit.rules import rules_of
from validators.columns import Column, SheetSpec

conversion = rules_of(__name__)
# Approval Year: the State fiscal years the intake accepts (e.(1) names no first and no last: the
# bounds are the intake contract's, recorded with their reading in the rules data).
APPROVAL_YEARS = range(conversion["approval_years"].value[0], conversion["approval_years"].value[-1] + 1)
SCHEDULE = conversion["schedule"]


def _credit_years(approval_years: range) -> range:
    """Every tax period an installment of e. can land in: from the earliest first tax period to the
    last installment of the latest schedule, e.(1) started in the last Approval Year."""
    tiers = SCHEDULE
    first = min(t.value for t in tiers)
    last = 0
    for t in tiers:
        count = len(t.extra.get("shares", ())) or t.extra["installments"]
        start = max(t.value, approval_years[-1]) if t.extra.get("starts_at_later_approval") else t.value
        last = max(last, start + count - 1)
    return range(first, last + 1)


CREDIT_YEARS = _credit_years(APPROVAL_YEARS)
# e.(1)'s first tax period: an Approval Year after it starts the five-year period in that year
LATER_APPROVAL_FROM = next(t.value for t in SCHEDULE if t.extra.get("starts_at_later_approval"))

BEIP_CONVERSION = SheetSpec(
    name="BEIP_Conversion",
    program="BEIP grant-to-credit conversions",
    citation="C.34:1B-129 e.",
    columns=(
        Column("Grant ID", "text", required=True, record_id=True, hint="The BEIP grant converted; with Accrual Year, unique in the sheet."),
        Column(
            "Accrual Year",
            "integer",
            required=True,
            record_id=True,
            hint="Calendar year the grant accrued but was not paid ("
            f"{min(t.extra['from_year'] for t in SCHEDULE)} to {max(t.extra['to_year'] for t in SCHEDULE)}).",
        ),
        Column("Approved Amount ($)", "money", required=True, minimum=0, hint="Amount approved for conversion to tax credits."),
        Column(
            "Approval Year",
            "integer",
            year=True,
            minimum=APPROVAL_YEARS[0],
            maximum=APPROVAL_YEARS[-1],
            hint=f"State fiscal year the authority approved the amount (e.(1) only), {APPROVAL_YEARS[0]} to {APPROVAL_YEARS[-1]}. "
            f"{LATER_APPROVAL_FROM} or earlier keeps the installments from {LATER_APPROVAL_FROM}; "
            "a later year starts the five-year period in that year.",
        ),
    ),
    computed={
        "Installments": "number",
        "First Tax Period": "number",
        **{f"Credit {year} ($)": "money" for year in CREDIT_YEARS},
    },
)
