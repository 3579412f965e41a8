"""BRRAP grants of tax credits (README, sheet `BRRAP`; P.L.2004 c.65 s.7).

Pure and vectorized. The cross-row limits (a business's $10,000,000 a year, the $20,000,000
aggregate a tax period) are checked on the credit of each (grant, year), summed with
group-bys; rows are never compared in Python loops, and row order does not matter. A business is
its Business Name under the one business-name rule (`business_key`): `Acme Corp.` and `ACME
Corporation` are one business.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable
from batch.calculators.shared import business_key, installments, pick
from batch.findings import emit, money_text
from batch.rules import Rules
from validators.brrap import BRRAP as SPEC

RULES = "brrap"
AWARD_COLUMN = "Grant Amount ($)"
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = None
YEAR_COLUMN = "First Tax Period"
# A BRRAP grant is a prior incentive for Grow NJ (C.34:1B-247 e.): received in its First Tax Period (the year column).
PRIOR_INCENTIVE = {"name": "Business Name"}

ID, BUSINESS, EMPLOYEES = "Grant ID", "Business Name", "Employees Relocated or Retained"
YEARLY, BONUS, FIRST, COC = "Yearly Tax Credit Amount ($)", "Bonus Award ($)", "First Tax Period", "Certificate of Compliance"


def business_of(names: pd.Series) -> pd.Series:
    """Each row's business: its Business Name under the one business-name rule (`business_key`).
    A blank name matches nothing, so such a row is a business of its own."""
    key = business_key(names).astype(object)
    alone = pd.Series("\x00row " + names.index.astype(str), index=names.index)
    return key.where(key.notna(), alone)


def credit_by_year(frame: pd.DataFrame, computed: pd.DataFrame) -> pd.DataFrame:
    """One row per (grant, tax period year) with credit: columns row, business (the business-name
    key, see `business_of`), year, credit (cents)."""
    periods = computed["Tax Periods"].fillna(0).to_numpy(dtype=np.int64)
    grant = computed["Grant Amount ($)"].fillna(0).to_numpy(dtype=np.int64)
    width = int(periods.max()) if len(periods) else 0
    if width == 0:
        return pd.DataFrame({"row": [], "business": [], "year": [], "credit": []})
    j = np.arange(width)
    num = (j[None, :] < periods[:, None]).astype(np.int64)
    den = np.broadcast_to(np.maximum(periods, 1)[:, None], num.shape)
    parts = installments(grant, num, den)
    rows, k = np.nonzero(num)
    return pd.DataFrame(
        {
            "row": frame.index[rows],
            "business": business_of(frame[BUSINESS]).to_numpy()[rows],
            "year": frame[FIRST].to_numpy(dtype=np.int64)[rows] + k,
            "credit": parts[rows, k],
        }
    )


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    idx = frame.index
    tiers = rules["multiple"]
    employees = frame[EMPLOYEES].to_numpy(dtype=np.int64)
    masks = [employees >= t.extra["min_employees"] for t in tiers]
    which = np.select(masks, np.arange(len(tiers)), -1) if len(idx) else np.zeros(0, dtype=np.int64)
    eligible = which >= 0
    minimum = min(t.extra["min_employees"] for t in tiers)
    findings = [emit("BELOW_50_EMPLOYEES", idx[~eligible], employees=frame[EMPLOYEES], minimum=minimum, citation=tiers[-1].cite)]

    multiple = np.where(eligible, pick(tiers, which, "value", 0).astype(np.int64), 0)
    grant = multiple * frame[YEARLY].to_numpy(dtype=np.int64) + np.where(eligible, frame[BONUS].fillna(0).to_numpy(dtype=np.int64), 0)
    first = frame[FIRST].to_numpy(dtype=np.int64)
    computed = pd.DataFrame(
        {
            "Multiple": multiple.astype(float),
            "Grant Amount ($)": pd.array(grant, dtype="Int64"),
            "Tax Periods": multiple.astype(float),
            "Credit per Tax Period ($)": pd.array(np.where(eligible, grant // np.maximum(multiple, 1), 0), dtype="Int64"),
            "Last Tax Period": np.where(eligible, first + multiple - 1, np.nan),
        },
        index=idx,
    )
    per_year = credit_by_year(frame, computed)
    # the base installment of each grant (the last one may carry the remainder cents)
    if len(per_year):
        firsts = per_year.drop_duplicates("row").set_index("row")["credit"]
        computed["Credit per Tax Period ($)"] = pd.array(firsts.reindex(idx).fillna(0).to_numpy(dtype=np.int64), dtype="Int64")

    coc = rules["certificate_of_compliance_after"]
    needs = eligible & (multiple > coc.value) & ~frame[COC].to_numpy(dtype=bool)
    findings.append(
        emit(
            "CERTIFICATE_OF_COMPLIANCE_REQUIRED",
            idx[needs],
            periods=pd.Series(multiple, idx),
            first=frame[FIRST],
            last=computed["Last Tax Period"],
            citation=coc.cite,
        )
    )

    findings += limit_findings(per_year, frame, rules)
    return Calculation(computed, findings, ineligible=pd.Series(~eligible, index=idx))


def run_credit_by_year(typed: pd.DataFrame, computed: pd.DataFrame, status: pd.Series) -> pd.DataFrame:
    """Credit per (grant, year) of the rows that count, for the aggregate limit across every
    workbook of a run (the run report). `business` is the business-name key (the one rule, as in
    `credit_by_year`), `business_name` the name as written."""
    keep = (~status.isin(["Invalid", "Ineligible"])).to_numpy()
    per = credit_by_year(typed[keep], computed[keep])
    ids = SPEC.record_ids(typed)
    return pd.DataFrame(
        {
            "grant": ids.reindex(per["row"]).to_numpy(),
            "business": per["business"].to_numpy(),
            "business_name": typed[BUSINESS].reindex(per["row"]).to_numpy(),
            "year": per["year"].to_numpy(),
            "credit": per["credit"].to_numpy(),
        }
    )


def limit_findings(per_year: pd.DataFrame, frame: pd.DataFrame, rules: Rules) -> list[pd.DataFrame]:
    """Every (grant, year) whose business, or the whole sheet, is over its annual limit that year."""
    out = []
    if per_year.empty:
        return out
    # every spelling of each business's name among the grants counted, in row order, for the message
    counted = pd.Index(per_year["row"].drop_duplicates())
    spelled = pd.DataFrame(
        {"business": business_of(frame[BUSINESS])[counted], "name": frame[BUSINESS][counted].astype(str).str.strip()}
    ).sort_index()
    spellings = spelled.drop_duplicates().groupby("business", sort=False)["name"].agg("; ".join)
    for code, param, keys in (
        ("BUSINESS_ANNUAL_LIMIT_EXCEEDED", rules["business_annual_limit"], ["business", "year"]),
        ("AGGREGATE_ANNUAL_LIMIT_EXCEEDED", rules["aggregate_annual_limit"], ["year"]),
    ):
        total = per_year.groupby(keys)["credit"].transform("sum")
        # the rows of that business (or sheet) that have credit in a year over the limit
        hit = per_year[(total > param.value) & (per_year["credit"] > 0)].sort_values(["row", "year"], kind="stable")
        out.append(
            emit(
                code,
                pd.Index(hit["row"]),
                business=frame[BUSINESS],
                names=spellings.reindex(hit["business"]).to_numpy(),
                year=hit["year"].to_numpy(),
                total=total[hit.index].to_numpy(),
                credit=hit["credit"].to_numpy(),
                limit=param.value,
                citation=param.cite,
            )
        )
    return out


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Credit per tax period year by business, each against its limits, and the total per year."""
    rows = frame[~status.isin(["Invalid", "Ineligible"])]
    per_year = credit_by_year(rows, rows)
    if per_year.empty:
        return []
    # one column per business (the one business-name rule), headed by its first spelling
    names = rows[BUSINESS].groupby(business_of(rows[BUSINESS]).to_numpy()).first()
    pivot = per_year.pivot_table(index="year", columns="business", values="credit", aggfunc="sum", fill_value=0)
    pivot.columns = [names.get(c, c) for c in pivot.columns]
    business_cols = list(pivot.columns)
    pivot["Total ($)"] = pivot[business_cols].sum(axis=1)
    limit = rules["aggregate_annual_limit"].value
    pivot["Aggregate Limit ($)"] = limit
    pivot["Over Aggregate Limit"] = np.where(pivot["Total ($)"] > limit, "OVER", "")
    over_business = pivot[business_cols] > rules["business_annual_limit"].value
    business_limit = money_text([rules["business_annual_limit"].value], cents=False)[0]
    pivot[f"Businesses Over ${business_limit}"] = over_business.apply(lambda r: ", ".join(c for c in business_cols if r[c]), axis=1)
    pivot = pivot.reset_index().rename(columns={"year": "Tax Period"})
    pivot["Tax Period"] = pivot["Tax Period"].astype(str)
    money = {c: "money" for c in business_cols + ["Total ($)", "Aggregate Limit ($)"]}
    title = f"Credit per tax period by business (single-business limit ${business_limit}; aggregate ${money_text([limit], cents=False)[0]})"
    return [SummaryTable(title, pivot, money)]
