"""Garden State Growth Zone property tax exemption (README, sheet `GSGZ_Property`; C.52:27D-489s).

Pure and vectorized: each row's schedule (Development Entity or other owner) gives the share of
taxes otherwise due paid in each of the 20 years after the certificate of occupancy; the county's
minimum share is 5% of the payments in lieu of taxes under c. only.
"""

from __future__ import annotations

import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable
from batch.exact import Q
from batch.findings import emit
from batch.rules import Rules
from validators.gsgz_property import GSGZ_PROPERTY, YEARS

SPEC = GSGZ_PROPERTY
RULES = "gsgz_property"
AWARD_COLUMN = "Total Exempted ($)"
MONTH_COLUMN = "Certificate of Occupancy Date"  # the Summary's by-month pivot
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = None
# Each row is calculated on its own figures alone, so the pipeline may run the calculator on chunks of rows.
ROW_INDEPENDENT = True
YEAR_COLUMN = "Certificate of Occupancy Date"

ID, ENTITY, OPTED_IN, CO_DATE, TAXES = (
    "Property ID",
    "Development Entity",
    "Municipality Opted In",
    "Certificate of Occupancy Date",
    "Annual Taxes Otherwise Due ($)",
)
PAYMENTS = [f"Payment Year {y} ($)" for y in YEARS]


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    idx = frame.index
    n = len(frame)
    entity = frame[ENTITY].to_numpy(dtype=bool)
    opt = rules["opt_in"]
    not_opted = entity & ~frame[OPTED_IN].to_numpy(dtype=bool)
    enacted, window = rules["enactment_date"], rules["certificate_window_years"]
    deadline = enacted.value + pd.DateOffset(years=window.value)
    late = entity & (frame[CO_DATE] > deadline).to_numpy(dtype=bool)
    findings = [
        emit("MUNICIPALITY_NOT_OPTED_IN", idx[not_opted], citation=opt.cite),
        emit(
            "CO_AFTER_DEADLINE",
            idx[late],
            date=frame[CO_DATE],
            years=window.value,
            enacted=enacted.value,
            deadline=deadline,
            citation=window.cite,
        ),
    ]
    ineligible = not_opted | late

    dev = rules["development_entity_schedule"].value
    other = rules["other_owner_schedule"].value
    first_pilot, last_pilot = rules["county_share_years"].value
    # c.: "five percent of all payments pursuant to this subsection": the payments in lieu of taxes of an
    # eligible Development Entity (years 11 to 20); another owner (e.) and an Ineligible row pay ordinary taxes
    pilot = entity & ~ineligible
    taxes = Q(frame[TAXES])
    computed = {}
    paid = Q.of(0, n)
    in_lieu = Q.of(0, n)
    for year, header in zip(YEARS, PAYMENTS, strict=True):
        share = Q.of(dev[year - 1], n).where(entity, Q.of(other[year - 1], n)).where(~ineligible, 1)
        payment = (taxes * share).cents()
        computed[header] = pd.array(payment, dtype="Int64")
        paid = paid + Q(payment)
        if first_pilot <= year <= last_pilot:
            in_lieu = in_lieu + Q(payment).where(pilot, 0)
    full = (taxes * Q.of(len(YEARS), n)).cents()
    computed["Total Exempted ($)"] = pd.array(full - paid.cents(), dtype="Int64")
    computed["County Share Minimum ($)"] = pd.array((in_lieu * rules["county_share"].value).cents(), dtype="Int64")
    return Calculation(pd.DataFrame(computed, index=idx), findings, ineligible=pd.Series(ineligible, index=idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Payments and exemptions per year after the certificate of occupancy, over every computed row."""
    rows = frame[status != "Invalid"]
    taxes = rows[TAXES].fillna(0)
    table = pd.DataFrame(
        {
            "Year": [str(y) for y in YEARS],
            "Payments ($)": [int(rows[h].fillna(0).sum()) for h in PAYMENTS],
            "Exempted ($)": [int((taxes - rows[h].fillna(0)).sum()) for h in PAYMENTS],
        }
    )
    return [
        SummaryTable(
            "Payments in lieu of taxes and exemptions per year after the certificate",
            table,
            {"Payments ($)": "money", "Exempted ($)": "money"},
        )
    ]
