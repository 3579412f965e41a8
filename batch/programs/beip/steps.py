"""BEIP grants (README, sheets `BEIP` and `BEIP_Conversion`, sheet `BEIP`; C.34:1B-129 a.-d., h.).

Pure and vectorized; every number comes from `batch/programs/beip/parameters.yaml`. Percentages
are read as exact decimals and amounts stay exact until rounded to the cent at the end.

The calculation is a sequence of named steps, one per provision of C.34:1B-129. Each step reads
the columns earlier steps left on the `Grants` and adds its own findings and columns; the steps
run in the order their findings are reported:

    percentages_129ab -> annual_grant_129a -> grant_term_129c -> average_grant_129a
    -> waiver_deadline_129h -> waiver_after_agreement_129h -> waiver_time_129h1 -> waiver_facts_129h
    -> waiver_payment_129h2
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable, totals_by
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.exact import Q
from batch.programs._kit.rules import Rules
from batch.programs.beip.sheet import AP, AW, BEIP, CREDIT_2022, PP, TAX_CREDIT, WAIVER, WP

SPEC = BEIP

ID, DATE, FORM, SMART = "Grant ID", "Agreement Date", "Grant Form", "Smart Growth"
TERM, EMPLOYEES = "Grant Term (years)", "New Employees"
ELECTED_ON, TIME = "Waiver Election Date", "Minimum Time at Facility"


def _money(q: Q, idx) -> pd.Series:
    return pd.Series(q.cents(), index=idx)


class Grants(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far."""

    def __init__(self, f: pd.DataFrame, rules: Rules):
        super().__init__(f, rules)
        self.smart = f[SMART].to_numpy(dtype=bool)
        self.elected = f[WAIVER].to_numpy(dtype=bool)


# -- the steps ----------------------------------------------------------------------------------


def percentages_129ab(s: Grants) -> None:
    """C.34:1B-129 a., b.: the withholdings percentage and the partner percentage each lie within
    their range; with Smart Growth = Y the higher maximum of b. applies."""
    f, n, smart = s.f, s.n, s.smart
    for pct_col, lo, hi, hi_smart in (
        (WP, "withholdings_percentage_min", "withholdings_percentage_max", "withholdings_percentage_max_smart_growth"),
        (PP, "partner_percentage_min", "partner_percentage_max", "partner_percentage_max_smart_growth"),
    ):
        given = f[pct_col].notna().to_numpy()
        pct = Q.percent(f[pct_col])
        low, high, high_smart = s.rules[lo], s.rules[hi], s.rules[hi_smart]
        top = Q.of(high.value, n).where(~smart, Q.of(high_smart.value, n))
        below = given & (pct < Q.of(low.value, n))
        bad = below | (given & (pct > top))
        s.emit(
            "GRANT_PERCENT_OUT_OF_RANGE",
            bad,
            column=pct_col,
            percent=f[pct_col],
            minimum=float(low.value),
            maximum=s.series(top.float()),
            smart=s.series(np.where(smart, " (with smart growth)", "")),
            # the bound it falls outside: a.'s minimum (with or without smart growth), else the maximum of a. or b.
            citation=s.series(np.where(below, low.cite, np.where(smart, high_smart.cite, high.cite))),
        )


def annual_grant_129a(s: Grants) -> None:
    """C.34:1B-129 a.: the annual grant is the percentage of each base given (withholdings, partner
    income) for every complete pair; the total is the annual grant over the term, and the average
    is the total per new employee."""
    f = s.f
    w_given = (f[WP].notna() & f[AW].notna()).to_numpy()
    p_given = (f[PP].notna() & f[AP].notna()).to_numpy()
    withholding_part = (Q.percent(f[WP]) * Q(f[AW].fillna(0))).where(w_given, 0)
    partner_part = (Q.percent(f[PP]) * Q(f[AP].fillna(0))).where(p_given, 0)
    s.annual = withholding_part + partner_part
    s.term = f[TERM].to_numpy(dtype=np.int64)
    s.total = s.annual * Q(s.term)
    s.average = s.total / Q(f[EMPLOYEES].to_numpy(dtype=np.int64))  # New Employees is more than 0 (validated)


def grant_term_129c(s: Grants) -> None:
    """C.34:1B-129 c.: the term of a grant shall not exceed the maximum number of years."""
    max_term = s.rules["max_grant_term"]
    s.emit("GRANT_TERM_OVER_10_YEARS", s.term > max_term.value, term=s.f[TERM], maximum=max_term.value, citation=max_term.cite)


def average_grant_129a(s: Grants) -> None:
    """C.34:1B-129 a.: for an agreement from 2003-07-01 the grants over the term may not exceed the
    maximum average per new employee."""
    f = s.f
    cap_param = s.rules["max_average_grant"]
    cap = cap_param.at(f[DATE])
    has_cap = ~pd.isna(cap)
    cap_q = Q(np.where(has_cap, cap, 0).astype(np.int64))
    s.emit(
        "AVERAGE_GRANT_OVER_50000",
        has_cap & (s.average > cap_q),
        total=_money(s.total, s.idx),
        average=_money(s.average, s.idx),
        employees=f[EMPLOYEES],
        maximum=s.series(cap_q.cents()),
        date=f[DATE],
        citation=cap_param.cite,
    )


def waiver_deadline_129h(s: Grants) -> None:
    """C.34:1B-129 h.: the remote work waiver is elected "before December 31, 2023": an election on
    that day or later is late."""
    f, elected = s.f, s.elected
    deadline = s.rules["waiver_election_deadline"]
    s.date_blank = elected & f[ELECTED_ON].isna().to_numpy()
    late = elected & ~s.date_blank & (f[ELECTED_ON] >= deadline.value).fillna(False).to_numpy(dtype=bool)
    s.emit("WAIVER_ELECTION_LATE", late, date=f[ELECTED_ON], deadline=deadline.value, citation=deadline.cite)


def waiver_after_agreement_129h(s: Grants) -> None:
    """C.34:1B-129 h.: "a business that has entered into an incentive agreement may elect": an election
    dated before the Agreement Date is not one (an election on the Agreement Date itself is not before)."""
    f, elected = s.f, s.elected
    party = s.rules["waiver_electing_business"]
    early = elected & ~s.date_blank & (f[ELECTED_ON] < f[DATE]).fillna(False).to_numpy(dtype=bool)
    s.emit("WAIVER_ELECTED_BEFORE_AGREEMENT", early, date=f[ELECTED_ON], agreement=f[DATE], citation=party.cite)


def waiver_time_129h1(s: Grants) -> None:
    """C.34:1B-129 h.(1): a business electing the waiver keeps at least the minimum share of its
    employees' time at the facility."""
    f, elected = s.f, s.elected
    min_time = s.rules["waiver_min_time_at_facility"]
    s.time_blank = elected & f[TIME].isna().to_numpy()
    short_time = elected & ~s.time_blank & (Q.percent(f[TIME]) < Q.of(min_time.value, s.n))
    s.emit("WAIVER_TIME_BELOW_10PCT", short_time, time=f[TIME], minimum=float(min_time.value), citation=min_time.cite)


def waiver_facts_129h(s: Grants) -> None:
    """C.34:1B-129 h., h.(1): an election whose date or time at the facility is blank cannot be checked
    against h. and h.(1) (the row is Flagged and still computed)."""
    date_blank, time_blank = s.date_blank, s.time_blank
    both = date_blank & time_blank
    s.emit(
        "WAIVER_FACTS_MISSING",
        date_blank | time_blank,
        column=s.series(np.where(date_blank, ELECTED_ON, TIME)),
        missing=s.series(np.where(both, f"{ELECTED_ON} and {TIME}", np.where(date_blank, ELECTED_ON, TIME))),
        verb=s.series(np.where(both, "are", "is")),
        deadline=s.rules["waiver_election_deadline"].value,
        minimum=float(s.rules["waiver_min_time_at_facility"].value),
        citation=s.rules["waiver_election_deadline"].cite,
    )


def waiver_payment_129h2(s: Grants) -> None:
    """C.34:1B-129 h.(2): the business pays the share of its 2022 tax period credit, once that credit is
    known; a Tax Credit grant without it is warned of."""
    f = s.f
    share = s.rules["waiver_payment_share"]
    s.credit_given = f[CREDIT_2022].notna().to_numpy()
    s.payment = Q(f[CREDIT_2022].fillna(0)) * share.value
    no_credit = s.elected & ~s.credit_given & (f[FORM] == TAX_CREDIT).to_numpy(dtype=bool)
    period = s.rules["waiver_payment_tax_period"].value
    s.emit("WAIVER_CREDIT_NOT_GIVEN", no_credit, share=float(share.value), period=period, citation=share.cite)


STEPS = (
    percentages_129ab,
    annual_grant_129a,
    grant_term_129c,
    average_grant_129a,
    waiver_deadline_129h,
    waiver_after_agreement_129h,
    waiver_time_129h1,
    waiver_facts_129h,
    waiver_payment_129h2,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Grants(frame, rules), STEPS)
    computed = pd.DataFrame(
        {
            "Annual Grant ($)": pd.array(s.annual.cents(), dtype="Int64"),
            "Total Grant ($)": pd.array(s.total.cents(), dtype="Int64"),
            "Average Grant per New Employee ($)": pd.array(s.average.cents(), dtype="Int64"),
            "Waiver Payment Due ($)": pd.Series(s.payment.cents(), index=s.idx, dtype="Int64").where(s.elected & s.credit_given),
        },
        index=s.idx,
    )
    return Calculation(computed, s.findings, ineligible=pd.Series(False, index=s.idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Grants and dollars by Grant Form and by agreement year; rows by finding code."""
    rows = frame[status != "Invalid"]
    money = {"Annual Grant ($)": "money", "Total Grant ($)": "money"}
    agg = {"Grants": (ID, "size"), "Annual Grant ($)": ("Annual Grant ($)", "sum"), "Total Grant ($)": ("Total Grant ($)", "sum")}
    by_form = totals_by(rows, [FORM], **agg)
    by_year = totals_by(rows.assign(Year=rows[DATE].dt.year.astype(str)), ["Year"], **agg)
    by_code = totals_by(codes.drop_duplicates(["row", "Code"]), ["Code"], Grants=("row", "size"))
    by_code = by_code.sort_values(["Grants", "Code"], ascending=[False, True], ignore_index=True)  # the most frequent first
    return [
        SummaryTable("Grants by Grant Form", by_form, money),
        SummaryTable("Grants by year of agreement", by_year, money),
        SummaryTable("Grants by finding code", by_code),
    ]
