"""BRRAP grants of tax credits (README, sheet `BRRAP`; P.L.2004 c.65 s.7).

Pure and vectorized. The cross-row limits (a business's annual limit and the aggregate limit of
a tax period, `business_annual_limit` and `aggregate_annual_limit` in the rules) are checked on
the credit of each (grant, year), summed with group-bys; rows are never compared in Python
loops, and row order does not matter. A business is its Business Name under the one
business-name rule (`business_key`): `Acme Corp.` and `ACME Corporation` are one business.

The calculation is a sequence of named steps, one per provision of P.L.2004 c.65 s.7. Each step
reads the columns earlier steps left on the `Grants` and adds its own findings and columns; the
steps run in the order their findings are reported (the limits of a. and c. need every grant's
credit per year, so they come last):

    multiple_7b -> grant_amount_7b -> tax_periods_7b -> certificate_of_compliance_7b2
    -> business_limit_7a -> aggregate_limit_7ac
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.findings import emit, money_text
from batch.programs._kit.rules import Parameter, Rules
from batch.programs._kit.steps import business_key, installments, pick
from batch.programs.brrap.sheet import BRRAP as SPEC

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


class Grants(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far (`columns`,
    in the order of the computed columns)."""

    def __init__(self, f: pd.DataFrame, rules: Rules):
        super().__init__(f, rules)
        self.columns: dict = {}

    @cached_property
    def spellings(self) -> pd.Series:
        """Every spelling of each business's name among the grants counted, in row order, joined
        with "; " (for the messages of the limits)."""
        counted = pd.Index(self.per_year["row"].drop_duplicates())
        names = self.f[BUSINESS]
        spelled = pd.DataFrame({"business": business_of(names)[counted], "name": names[counted].astype(str).str.strip()}).sort_index()
        return spelled.drop_duplicates().groupby("business", sort=False)["name"].agg("; ".join)


# -- the steps ----------------------------------------------------------------------------------


def multiple_7b(s: Grants) -> None:
    """P.L.2004 c.65 s.7 b.(1)-(6): the grant is a multiple of the yearly tax credit amount set by the
    employees relocated or retained (the highest tier met); a business with fewer employees than the
    lowest tier gets no grant."""
    tiers = s.rules["multiple"]
    employees = s.f[EMPLOYEES].to_numpy(dtype=np.int64)
    masks = [employees >= t.extra["min_employees"] for t in tiers]
    which = np.select(masks, np.arange(len(tiers)), -1) if len(s.idx) else np.zeros(0, dtype=np.int64)
    s.eligible = which >= 0
    minimum = min(t.extra["min_employees"] for t in tiers)
    s.emit("BELOW_50_EMPLOYEES", ~s.eligible, employees=s.f[EMPLOYEES], minimum=minimum, citation=tiers[-1].cite)
    s.multiple = np.where(s.eligible, pick(tiers, which, "value", 0).astype(np.int64), 0)
    s.columns["Multiple"] = s.multiple.astype(float)


def grant_amount_7b(s: Grants) -> None:
    """P.L.2004 c.65 s.7 b.: the grant is the multiple of the Yearly Tax Credit Amount, plus the Bonus
    Award (both set by sections the intake gives the amounts of); no grant without a multiple."""
    f = s.f
    bonus = np.where(s.eligible, f[BONUS].fillna(0).to_numpy(dtype=np.int64), 0)
    s.grant = s.multiple * f[YEARLY].to_numpy(dtype=np.int64) + bonus
    s.columns["Grant Amount ($)"] = pd.array(s.grant, dtype="Int64")


def tax_periods_7b(s: Grants) -> None:
    """P.L.2004 c.65 s.7 b.: the grant is taken over as many tax periods as its multiple, from the
    First Tax Period, in installments to the cent (each rounded down, the last taking the remainder)."""
    first = s.f[FIRST].to_numpy(dtype=np.int64)
    s.columns["Tax Periods"] = s.multiple.astype(float)
    per_period = np.where(s.eligible, s.grant // np.maximum(s.multiple, 1), 0)
    s.columns["Credit per Tax Period ($)"] = pd.array(per_period, dtype="Int64")
    s.columns["Last Tax Period"] = np.where(s.eligible, first + s.multiple - 1, np.nan)
    s.per_year = credit_by_year(s.f, pd.DataFrame(s.columns, index=s.idx))
    # the base installment of each grant (the last one may carry the remainder cents)
    if len(s.per_year):
        firsts = s.per_year.drop_duplicates("row").set_index("row")["credit"]
        s.columns["Credit per Tax Period ($)"] = pd.array(firsts.reindex(s.idx).fillna(0).to_numpy(dtype=np.int64), dtype="Int64")


def certificate_of_compliance_7b2(s: Grants) -> None:
    """P.L.2004 c.65 s.7 b.(2): a grant taken over more than one tax period needs a certificate of
    compliance for the later periods."""
    coc = s.rules["certificate_of_compliance_after"]
    needs = s.eligible & (s.multiple > coc.value) & ~s.f[COC].to_numpy(dtype=bool)
    s.emit(
        "CERTIFICATE_OF_COMPLIANCE_REQUIRED",
        needs,
        periods=pd.Series(s.multiple, s.idx),
        first=s.f[FIRST],
        last=pd.Series(s.columns["Last Tax Period"], s.idx),
        citation=coc.cite,
    )


def _over_limit(s: Grants, code: str, param: Parameter, keys: list[str]) -> None:
    """Every (grant, year) with credit whose group (`keys`) has more credit that year than the limit."""
    per_year = s.per_year
    if per_year.empty:
        return
    total = per_year.groupby(keys)["credit"].transform("sum")
    # the rows of that business (or sheet) that have credit in a year over the limit
    hit = per_year[(total > param.value) & (per_year["credit"] > 0)].sort_values(["row", "year"], kind="stable")
    s.findings.append(
        emit(
            code,
            pd.Index(hit["row"]),
            business=s.f[BUSINESS],
            names=s.spellings.reindex(hit["business"]).to_numpy(),
            year=hit["year"].to_numpy(),
            total=total[hit.index].to_numpy(),
            credit=hit["credit"].to_numpy(),
            limit=param.value,
            citation=param.cite,
        )
    )


def business_limit_7a(s: Grants) -> None:
    """P.L.2004 c.65 s.7 a.: one business may not receive more than the single-business limit of credit
    in a tax period, across all its grants (every spelling of its name under the one rule)."""
    _over_limit(s, "BUSINESS_ANNUAL_LIMIT_EXCEEDED", s.rules["business_annual_limit"], ["business", "year"])


def aggregate_limit_7ac(s: Grants) -> None:
    """P.L.2004 c.65 s.7 a., c.: the credit of all grants together may not exceed the aggregate limit in
    a tax period."""
    _over_limit(s, "AGGREGATE_ANNUAL_LIMIT_EXCEEDED", s.rules["aggregate_annual_limit"], ["year"])


STEPS = (
    multiple_7b,
    grant_amount_7b,
    tax_periods_7b,
    certificate_of_compliance_7b2,
    business_limit_7a,
    aggregate_limit_7ac,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Grants(frame, rules), STEPS)
    return Calculation(pd.DataFrame(s.columns, index=s.idx), s.findings, ineligible=pd.Series(~s.eligible, index=s.idx))


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
