"""Sheet `BEIP`: Business Employment Incentive Program grants (README, sheet `BEIP`)."""

import pandas as pd

from batch.programs._kit.rules import rules_of
from batch.programs._kit.rules_text import day, percent
from validators.columns import Column, RowCheck, SheetSpec

WP, AW = "Withholdings Percentage", "Annual Withholdings ($)"
PP, AP = "Partner Estimated Tax Percentage", "Annual Partner Estimated Tax ($)"
WAIVER, CREDIT_2022 = "Remote Work Waiver Elected", "2022 Tax Period Credit ($)"
CASH, TAX_CREDIT = "Cash", "Tax Credit"
# A term over this is not read as a term at all (a typing error, not a long grant): not statutory.
TERM_READ_LIMIT = 1000
PAIRS = "a Withholdings Percentage with Annual Withholdings, or a Partner Estimated Tax Percentage with Annual Partner Estimated Tax"


rules = rules_of(__name__)


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
