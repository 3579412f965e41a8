"""BEIP grants (README, sheets `BEIP` and `BEIP_Conversion`, sheet `BEIP`; C.34:1B-129 a.-d., h.).

Pure and vectorized; every number comes from `batch/rules/beip/parameters.yaml`. Percentages
are read as exact decimals and amounts stay exact until rounded to the cent at the end.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable
from batch.exact import Q
from batch.findings import emit
from batch.rules import Rules
from validators.beip import AP, AW, BEIP, CREDIT_2022, PP, TAX_CREDIT, WAIVER, WP

SPEC = BEIP
RULES = "beip"
AWARD_COLUMN = "Total Grant ($)"
MONTH_COLUMN = "Agreement Date"  # the Summary's by-month pivot
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = "Grant Form"
# Each row is calculated on its own figures alone, so the pipeline may run the calculator on chunks of rows.
ROW_INDEPENDENT = True
YEAR_COLUMN = "Agreement Date"
# A BEIP grant is a prior incentive for Grow NJ (C.34:1B-247 e.): received on its Agreement Date.
PRIOR_INCENTIVE = {"name": "Business Name", "date": "Agreement Date"}

ID, DATE, FORM, SMART = "Grant ID", "Agreement Date", "Grant Form", "Smart Growth"
TERM, EMPLOYEES = "Grant Term (years)", "New Employees"
ELECTED_ON, TIME = "Waiver Election Date", "Minimum Time at Facility"


def _money(q: Q, idx) -> pd.Series:
    return pd.Series(q.cents(), index=idx)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    idx = frame.index
    n = len(frame)
    smart = frame[SMART].to_numpy(dtype=bool)
    findings = []

    # a., b.: each percentage within its range (the smart growth maximum with Smart Growth = Y)
    for pct_col, lo, hi, hi_smart in (
        (WP, "withholdings_percentage_min", "withholdings_percentage_max", "withholdings_percentage_max_smart_growth"),
        (PP, "partner_percentage_min", "partner_percentage_max", "partner_percentage_max_smart_growth"),
    ):
        given = frame[pct_col].notna().to_numpy()
        pct = Q.percent(frame[pct_col])
        low, high, high_smart = rules[lo], rules[hi], rules[hi_smart]
        top = Q.of(high.value, n).where(~smart, Q.of(high_smart.value, n))
        bad = given & ((pct < Q.of(low.value, n)) | (pct > top))
        findings.append(
            emit(
                "GRANT_PERCENT_OUT_OF_RANGE",
                idx[bad],
                column=pct_col,
                percent=frame[pct_col],
                minimum=float(low.value),
                maximum=pd.Series(top.float(), idx),
                smart=pd.Series(np.where(smart, " (with smart growth)", ""), idx),
                citation=pd.Series(np.where(smart, high_smart.cite, high.cite), idx),
            )
        )

    # Annual Grant = percentage x base for each complete pair
    w_given = (frame[WP].notna() & frame[AW].notna()).to_numpy()
    p_given = (frame[PP].notna() & frame[AP].notna()).to_numpy()
    withholding_part = (Q.percent(frame[WP]) * Q(frame[AW].fillna(0))).where(w_given, 0)
    partner_part = (Q.percent(frame[PP]) * Q(frame[AP].fillna(0))).where(p_given, 0)
    annual = withholding_part + partner_part
    term = frame[TERM].to_numpy(dtype=np.int64)
    total = annual * Q(term)
    employees = frame[EMPLOYEES].to_numpy(dtype=np.int64)
    average = total / Q(employees)

    # c.: term
    max_term = rules["max_grant_term"]
    long_term = term > max_term.value
    findings.append(emit("GRANT_TERM_OVER_10_YEARS", idx[long_term], term=frame[TERM], maximum=max_term.value, citation=max_term.cite))

    # a.: average over the term per new employee, for agreements from 2003-07-01
    cap_param = rules["max_average_grant"]
    cap = cap_param.at(frame[DATE])
    has_cap = ~pd.isna(cap)
    cap_q = Q(np.where(has_cap, cap, 0).astype(np.int64))
    over = has_cap & (average > cap_q)
    findings.append(
        emit(
            "AVERAGE_GRANT_OVER_50000",
            idx[over],
            total=_money(total, idx),
            average=_money(average, idx),
            employees=frame[EMPLOYEES],
            maximum=pd.Series(cap_q.cents(), idx),
            date=frame[DATE],
            citation=cap_param.cite,
        )
    )

    # h.: the remote work waiver, elected "before December 31, 2023": an election on that day is late
    elected = frame[WAIVER].to_numpy(dtype=bool)
    deadline = rules["waiver_election_deadline"]
    min_time = rules["waiver_min_time_at_facility"]
    date_blank = elected & frame[ELECTED_ON].isna().to_numpy()
    time_blank = elected & frame[TIME].isna().to_numpy()
    late = elected & ~date_blank & (frame[ELECTED_ON] >= deadline.value).fillna(False).to_numpy(dtype=bool)
    findings.append(emit("WAIVER_ELECTION_LATE", idx[late], date=frame[ELECTED_ON], deadline=deadline.value, citation=deadline.cite))
    # h.(1): at least 10% of the time at the facility
    short_time = elected & ~time_blank & (Q.percent(frame[TIME]) < Q.of(min_time.value, n))
    findings.append(
        emit("WAIVER_TIME_BELOW_10PCT", idx[short_time], time=frame[TIME], minimum=float(min_time.value), citation=min_time.cite)
    )
    # a blank election date or time at the facility: the election cannot be checked (Flagged, still computed)
    both = date_blank & time_blank
    facts_missing = date_blank | time_blank
    findings.append(
        emit(
            "WAIVER_FACTS_MISSING",
            idx[facts_missing],
            column=pd.Series(np.where(date_blank, ELECTED_ON, TIME), idx),
            missing=pd.Series(np.where(both, f"{ELECTED_ON} and {TIME}", np.where(date_blank, ELECTED_ON, TIME)), idx),
            verb=pd.Series(np.where(both, "are", "is"), idx),
            deadline=deadline.value,
            minimum=float(min_time.value),
            citation=deadline.cite,
        )
    )
    # h.(2): 5% of the 2022 credit, once the 2022 credit is known; a Tax Credit grant without it is warned of
    share = rules["waiver_payment_share"]
    credit_given = frame[CREDIT_2022].notna().to_numpy()
    payment = Q(frame[CREDIT_2022].fillna(0)) * share.value
    no_credit = elected & ~credit_given & (frame[FORM] == TAX_CREDIT).to_numpy(dtype=bool)
    findings.append(emit("WAIVER_CREDIT_NOT_GIVEN", idx[no_credit], share=float(share.value), citation=share.cite))

    computed = pd.DataFrame(
        {
            "Annual Grant ($)": pd.array(annual.cents(), dtype="Int64"),
            "Total Grant ($)": pd.array(total.cents(), dtype="Int64"),
            "Average Grant per New Employee ($)": pd.array(average.cents(), dtype="Int64"),
            "Waiver Payment Due ($)": pd.Series(payment.cents(), index=idx, dtype="Int64").where(elected & credit_given),
        },
        index=idx,
    )
    return Calculation(computed, findings, ineligible=pd.Series(False, index=idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Grants and dollars by Grant Form and by agreement year; rows by finding code."""
    rows = frame[status != "Invalid"]
    money = {"Annual Grant ($)": "money", "Total Grant ($)": "money"}
    agg = {"Grants": (ID, "size"), "Annual Grant ($)": ("Annual Grant ($)", "sum"), "Total Grant ($)": ("Total Grant ($)", "sum")}
    by_form = rows.groupby(FORM).agg(**agg).reset_index()
    by_year = rows.assign(Year=rows[DATE].dt.year.astype(str)).groupby("Year").agg(**agg).reset_index()
    by_code = codes.drop_duplicates(["row", "Code"]).groupby("Code").size().rename("Grants").reset_index()
    by_code = by_code.sort_values(["Grants", "Code"], ascending=[False, True], ignore_index=True)  # the most frequent first
    return [
        SummaryTable("Grants by Grant Form", by_form, money),
        SummaryTable("Grants by year of agreement", by_year, money),
        SummaryTable("Grants by finding code", by_code),
    ]
