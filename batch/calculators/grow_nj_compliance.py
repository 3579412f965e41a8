"""Grow NJ annual compliance, forfeiture and carry-forward (README, sheet `GrowNJ_Compliance`; C.34:1B-247).

The forfeiture rules are vectorized over the sheet. The carry-forward is a time series per
project: rows are put in (project, Tax Period) order once, then one linear pass walks them,
keeping each project's open carry-forward amounts oldest first (at most 20 of them), so the
cost grows linearly with the number of periods, never quadratically. Row order in the sheet
does not matter.

Deadlines that depend on the day of the run (a blank Certification Date, a blank Period
Documentation Certified Date) are judged on the run's as-of date, `context.as_of`.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable
from batch.calculators.shared import name_key
from batch.exact import Q
from batch.findings import emit
from batch.rules import Rules
from validators.grow_nj_compliance import GROW_NJ_COMPLIANCE

SPEC = GROW_NJ_COMPLIANCE
RULES = "grow_nj_compliance"
AWARD_COLUMN = "Credit Allowed ($)"
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = None
YEAR_COLUMN = "Tax Period"

ID, PERIOD, APPROVAL, CERTIFIED = "Project ID", "Tax Period", "Approval Date", "Certification Date"
ANNUAL, AGREEMENT_JOBS, BASELINE = "Annual Credit ($)", "Agreement Jobs", "Baseline Statewide Employees"
STATEWIDE, FACILITY, DOCS, LIABILITY, SOLD, SELLER = (
    "Statewide Employees",
    "Facility Employees",
    "Period Documentation Certified Date",
    "Tax Liability ($)",
    "Facility Sold",
    "Seller Holds the Credits",
)
OUT = [
    "Credit Allowed ($)",
    "Credit Used ($)",
    "Carry-Forward Added ($)",
    "Carry-Forward Used ($)",
    "Carry-Forward Balance ($)",
    "Carry-Forward Expired ($)",
]


def carry_forward(project: np.ndarray, year: np.ndarray, allowed: np.ndarray, liability: np.ndarray, periods: int) -> np.ndarray:
    """One linear pass over rows already in (project, year) order. Returns rows x 5 integer cents:
    credit used, carry-forward added, carry-forward used, balance, expired."""
    out = np.zeros((len(year), 5), dtype=np.int64)
    open_: deque = deque()  # [year, amount] of unused credit, oldest first
    last = None
    for i, (p, y, allow, liab) in enumerate(zip(project.tolist(), year.tolist(), allowed.tolist(), liability.tolist(), strict=False)):
        if p != last:
            open_.clear()
            last = p
        expired = 0
        while open_ and open_[0][0] + periods < y:  # past its last usable period (years missing between rows)
            expired += open_.popleft()[1]
        own = min(liab, allow)
        need = liab - own
        cf_used = 0
        while need and open_:
            take = min(need, open_[0][1])
            open_[0][1] -= take
            need -= take
            cf_used += take
            if open_[0][1] == 0:
                open_.popleft()
        while open_ and open_[0][0] + periods <= y:  # this is its last usable period
            expired += open_.popleft()[1]
        added = allow - own
        if added:
            open_.append([y, added])
        out[i] = (own + cf_used, added, cf_used, sum(v for _, v in open_), expired)
    return out


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    context = context or RunContext.today()
    as_of = pd.Timestamp(context.as_of)
    as_of_text = context.as_of.isoformat()
    idx = frame.index
    n = len(frame)
    findings = []
    approval, certified = frame[APPROVAL], frame[CERTIFIED]

    # b.(2): certification within 3 years of approval (two six-month extensions); never more than 4.
    # A blank Certification Date is judged on the as-of date: barred once more than 4 years have passed.
    inner, outer = rules["certification_years"], rules["certification_outer_years"]
    due = approval + pd.DateOffset(years=inner.value)
    latest = approval + pd.DateOffset(years=outer.value)
    cert_blank = certified.isna().to_numpy()
    after_outer_given = (certified > latest).fillna(False).to_numpy(dtype=bool)
    after_inner = (certified > due).fillna(False).to_numpy(dtype=bool) & ~after_outer_given
    after_outer_blank = cert_blank & (as_of > latest).fillna(False).to_numpy(dtype=bool)
    pending = cert_blank & ~after_outer_blank
    past_due = (as_of > due).fillna(False).to_numpy(dtype=bool)
    after_outer = after_outer_given | after_outer_blank
    findings.append(emit("CERTIFICATION_LATE", idx[after_inner], date=certified, years=inner.value, approved=approval, citation=inner.cite))
    findings.append(
        emit(
            "CERTIFICATION_AFTER_4_YEARS", idx[after_outer_given], date=certified, years=outer.value, approved=approval, citation=outer.cite
        )
    )
    findings.append(
        emit(
            "CERTIFICATION_AFTER_4_YEARS",
            idx[after_outer_blank],
            variant="blank",
            as_of=as_of_text,
            years=outer.value,
            approved=approval,
            latest=latest,
            citation=outer.cite,
        )
    )
    pending_fields = dict(as_of=as_of_text, years=inner.value, approved=approval, due=due, latest=latest, citation=inner.cite)
    findings.append(emit("CERTIFICATION_PENDING", idx[pending & ~past_due], **pending_fields))
    findings.append(emit("CERTIFICATION_PENDING", idx[pending & past_due], variant="extended", **pending_fields))

    # d.(1), d.(2): workforce thresholds, each period on its own figures
    statewide, facility = rules["statewide_share"], rules["facility_share"]
    reduced = Q(frame[STATEWIDE]) < Q(frame[BASELINE]) * statewide.value
    findings.append(
        emit(
            "STATEWIDE_WORKFORCE_REDUCED",
            idx[reduced],
            employees=frame[STATEWIDE],
            baseline=frame[BASELINE],
            period=frame[PERIOD],
            citation=statewide.cite,
        )
    )
    below = Q(frame[FACILITY]) < Q(frame[AGREEMENT_JOBS]) * facility.value
    findings.append(
        emit(
            "FACILITY_EMPLOYMENT_BELOW_80PCT",
            idx[below],
            employees=frame[FACILITY],
            jobs=frame[AGREEMENT_JOBS],
            period=frame[PERIOD],
            citation=facility.cite,
        )
    )

    # c.(1): documentation certified within 3 years of the close of the period (31 December); a credit
    # forfeits when it "remains uncertified as of" that deadline, so a blank date forfeits only once the
    # deadline is before the as-of date
    docs = rules["documentation_years"]
    month, day = (int(part) for part in rules["tax_period_close"].value.split("-"))
    period = frame[PERIOD].to_numpy(dtype=np.int64)
    deadline = pd.Series(pd.to_datetime(pd.DataFrame({"year": period + docs.value, "month": month, "day": day})).to_numpy(), index=idx)
    docs_blank = frame[DOCS].isna().to_numpy()
    late_docs = (frame[DOCS] > deadline).fillna(False).to_numpy(dtype=bool)
    lapsed = docs_blank & (deadline < as_of).to_numpy(dtype=bool)
    docs_pending = docs_blank & ~lapsed
    uncertified = late_docs | lapsed
    common = {"period": frame[PERIOD], "deadline": deadline, "years": docs.value, "citation": docs.cite}
    findings.append(emit("CREDIT_FORFEITED_UNCERTIFIED", idx[late_docs], date=frame[DOCS], **common))
    findings.append(emit("CREDIT_FORFEITED_UNCERTIFIED", idx[lapsed], variant="blank", as_of=as_of_text, **common))
    findings.append(emit("DOCUMENTATION_PENDING", idx[docs_pending], as_of=as_of_text, **common))

    # d.(3)(a): a sale by the business holding the credits forfeits that period and every later one of
    # the project; a sale by another owner (Seller Holds the Credits = N) leaves the credits unaffected.
    # A blank Seller Holds the Credits is read by the rules default (Y), with a warning.
    sale, holder_default = rules["sale_forfeiture"], rules["seller_holds_credits_when_blank"]
    key = name_key(frame[ID])
    order = pd.DataFrame({"key": key, "period": period}, index=idx).sort_values(["key", "period"], kind="stable").index
    sold = frame[SOLD].to_numpy(dtype=bool)
    seller = frame[SELLER].astype("boolean")
    holder_blank = sold & seller.isna().to_numpy()
    seller_holds = seller.fillna(bool(holder_default.value)).to_numpy(dtype=bool)
    forfeiting_sale = sold & seller_holds
    unaffected = sold & ~seller_holds
    findings.append(emit("SALE_HOLDER_NOT_GIVEN", idx[holder_blank], period=frame[PERIOD], citation=holder_default.cite))
    sold_year = pd.Series(np.where(forfeiting_sale, period, np.iinfo(np.int64).max), index=idx)
    first_sale = sold_year[order].groupby(key[order].to_numpy()).cummin().reindex(idx)
    forfeited_by_sale = (first_sale <= period).to_numpy()
    findings.append(
        emit("FACILITY_SOLD_CREDITS_FORFEITED", idx[forfeited_by_sale], sold=first_sale, period=frame[PERIOD], citation=sale.cite)
    )
    findings.append(emit("FACILITY_SOLD_CREDITS_UNAFFECTED", idx[unaffected], period=frame[PERIOD], citation=sale.cite))

    zero = after_outer | reduced | below | uncertified | forfeited_by_sale
    allowed = np.where(zero, 0, frame[ANNUAL].to_numpy(dtype=np.int64))

    # c.(1): carry-forward, one linear pass over the rows that count (not Ineligible)
    counted = order[~after_outer[idx.get_indexer(order)]]
    pos = idx.get_indexer(counted)
    result = np.zeros((n, 5), dtype=np.int64)
    result[pos] = carry_forward(
        key[counted].to_numpy(),
        period[pos],
        allowed[pos],
        frame[LIABILITY].to_numpy(dtype=np.int64)[pos],
        rules["carry_forward_periods"].value,
    )
    computed = pd.DataFrame(np.column_stack([allowed, result]), columns=OUT, index=idx).astype("Int64")
    return Calculation(computed, findings, ineligible=pd.Series(after_outer, index=idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Credit allowed, used, carried forward and expired per project and per year."""
    rows = frame[status != "Invalid"]
    sums = {
        "Credit Allowed ($)": "sum",
        "Credit Used ($)": "sum",
        "Carry-Forward Added ($)": "sum",
        "Carry-Forward Used ($)": "sum",
        "Carry-Forward Expired ($)": "sum",
    }
    money = {c: "money" for c in list(sums) + ["Carry-Forward Balance ($)"]}
    by_project = rows.sort_values(PERIOD).groupby(ID).agg({**sums, "Carry-Forward Balance ($)": "last", PERIOD: ["min", "max"]})
    by_project.columns = list(sums) + ["Carry-Forward Balance ($)", "First Period", "Last Period"]
    by_project = by_project.reset_index()
    by_year = rows.groupby(PERIOD).agg(sums).reset_index()
    by_year[PERIOD] = by_year[PERIOD].astype(str)
    return [
        SummaryTable("Credit per project (balance at the last period)", by_project, money),
        SummaryTable("Credit per tax period year", by_year, money),
    ]
