"""Sheets `BEIP` and `BEIP_Conversion`: Business Employment Incentive Program (README, sheet `BEIP`)."""

import pandas as pd

from batch.programs._kit.rules import load
from batch.programs._kit.rules_text import day, percent
from validators.columns import Column, RowCheck, SheetSpec

WP, AW = "Withholdings Percentage", "Annual Withholdings ($)"
PP, AP = "Partner Estimated Tax Percentage", "Annual Partner Estimated Tax ($)"
WAIVER, CREDIT_2022 = "Remote Work Waiver Elected", "2022 Tax Period Credit ($)"
CASH, TAX_CREDIT = "Cash", "Tax Credit"
# A term over this is not read as a term at all (a typing error, not a long grant): not statutory.
TERM_READ_LIMIT = 1000
PAIRS = "a Withholdings Percentage with Annual Withholdings, or a Partner Estimated Tax Percentage with Annual Partner Estimated Tax"


rules = load("beip")


def _share_range(lowest: str, highest: str, smart_growth: str) -> str:
    """'10% to 50%; 80% with smart growth' (C.34:1B-129 a., b.)."""
    lo, hi, smart = (percent(rules[k].value) for k in (lowest, highest, smart_growth))
    return f"{lo} to {hi}; {smart} with smart growth"


def _half(given: str, blank: str):
    return lambda f: f[given].notna() & f[blank].isna()


def _no_pair(f: pd.DataFrame) -> pd.Series:
    return ~(f[WP].notna() & f[AW].notna()) & ~(f[PP].notna() & f[AP].notna()) & f[[WP, AW, PP, AP]].isna().all(axis=1)


BEIP = SheetSpec(
    name="BEIP",
    program="BEIP grants",
    citation="C.34:1B-129",
    columns=(
        Column("Grant ID", "text", required=True, record_id=True, hint="Unique ID of the grant agreement."),
        Column("Business Name", "text", hint="The business receiving the grant."),
        Column("Agreement Date", "date", required=True, hint="Date of the business employment incentive agreement."),
        Column("Grant Form", "code", required=True, codes=(CASH, TAX_CREDIT), hint="Cash or Tax Credit."),
        Column("Smart Growth", "yesno", hint="Y when the grant promotes smart growth and the State Plan (b.)."),
        Column(
            WP,
            "percent",
            minimum=0,
            maximum=1,
            hint="Share of the withholdings of the business granted ("
            + _share_range("withholdings_percentage_min", "withholdings_percentage_max", "withholdings_percentage_max_smart_growth")
            + ").",
        ),
        Column(AW, "money", minimum=0, hint="Withholdings of the new employees, per year."),
        Column(
            PP,
            "percent",
            minimum=0,
            maximum=1,
            hint="Share of the partners' estimated tax granted ("
            + _share_range("partner_percentage_min", "partner_percentage_max", "partner_percentage_max_smart_growth")
            + ").",
        ),
        Column(AP, "money", minimum=0, hint="Estimated tax of the partners, per year."),
        Column(
            "Grant Term (years)",
            "integer",
            required=True,
            minimum=0,
            maximum=TERM_READ_LIMIT,
            hint=f"Term of the grant in years (the statute allows at most {rules['max_grant_term'].value}; "
            f"over {TERM_READ_LIMIT:,} is not read as a term).",
        ),
        Column("New Employees", "integer", required=True, minimum=0, minimum_exclusive=True, hint="New employees; more than 0."),
        Column(
            WAIVER,
            "yesno",
            hint=f"Y when the business elected to waive the {percent(rules['waiver_time_requirement'].value)} "
            "time-at-facility requirement (h.).",
        ),
        Column(
            "Waiver Election Date",
            "date",
            hint="Date of the waiver election; it must be on or after the Agreement Date and before "
            f"{day(rules['waiver_election_deadline'].value)} (h.).",
        ),
        Column(
            "Minimum Time at Facility",
            "percent",
            minimum=0,
            maximum=1,
            hint="The least share of time any full-time employee spent at the facility through "
            f"{rules['waiver_min_time_tax_period'].value}.",
        ),
        Column(
            CREDIT_2022,
            "money",
            minimum=0,
            hint=f"Credit received for the {rules['waiver_payment_tax_period'].value} tax period; with the waiver, "
            f"{percent(rules['waiver_payment_share'].value)} of it is due to the authority (h.(2)).",
        ),
    ),
    computed={
        "Annual Grant ($)": "money",
        "Total Grant ($)": "money",
        "Average Grant per New Employee ($)": "money",
        "Waiver Payment Due ($)": "money",
    },
    row_checks=(
        RowCheck(WP, "MISSING_VALUE", PAIRS, _no_pair),
        RowCheck(AW, "MISSING_VALUE", "Annual Withholdings, since Withholdings Percentage is given", _half(WP, AW)),
        RowCheck(WP, "MISSING_VALUE", "Withholdings Percentage, since Annual Withholdings is given", _half(AW, WP)),
        RowCheck(AP, "MISSING_VALUE", "Annual Partner Estimated Tax, since Partner Estimated Tax Percentage is given", _half(PP, AP)),
        RowCheck(PP, "MISSING_VALUE", "Partner Estimated Tax Percentage, since Annual Partner Estimated Tax is given", _half(AP, PP)),
    ),
)

conversion = load("beip_conversion")
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
