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
from batch.programs._kit.steps import business_key, installments, listing, pick, picked, record_labels
from batch.programs.brrap import sheet
from batch.programs.brrap.sheet import BRRAP as SPEC

ID, BUSINESS, EMPLOYEES = "Grant ID", "Business Name", "Employees Relocated or Retained"
YEARLY, BONUS, FIRST, COC = "Yearly Tax Credit Amount ($)", "Bonus Award ($)", "First Tax Period", "Certificate of Compliance"


def business_of(names: pd.Series) -> pd.Series:
    """Each row's business: its Business Name under the one business-name rule (`business_key`).
    A blank name matches nothing, so such a row is a business of its own."""
    key = business_key(names).astype(object)
    alone = pd.Series("\x00row " + names.index.astype(str), index=names.index)
    return key.where(key.notna(), alone)


def split_by_year(grant: np.ndarray, periods: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each grant's credit per tax period: `grant` (cents) over `periods` years from `first`, in
    installments to the cent (each rounded down, the last taking the remainder). Returns, one entry
    per (grant, year) with credit in grant order, the grant's position, the year and the credit."""
    width = int(periods.max()) if len(periods) else 0
    if width == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    j = np.arange(width)
    num = (j[None, :] < periods[:, None]).astype(np.int64)
    den = np.broadcast_to(np.maximum(periods, 1)[:, None], num.shape)
    parts = installments(grant, num, den)
    rows, k = np.nonzero(num)
    return rows, first[rows] + k, parts[rows, k]


def credit_by_year(frame: pd.DataFrame, computed: pd.DataFrame) -> pd.DataFrame:
    """One row per (grant, tax period year) with credit: columns row, business (the business-name
    key, see `business_of`), year, credit (cents)."""
    periods = computed["Tax Periods"].fillna(0).to_numpy(dtype=np.int64)
    grant = computed["Grant Amount ($)"].fillna(0).to_numpy(dtype=np.int64)
    rows, year, credit = split_by_year(grant, periods, frame[FIRST].to_numpy(dtype=np.int64))
    business = business_of(frame[BUSINESS]).to_numpy()[rows]
    return pd.DataFrame({"row": frame.index[rows], "business": business, "year": year, "credit": credit})


def portfolio_fields(f: pd.DataFrame, computed: pd.DataFrame | None = None) -> pd.DataFrame:
    """What the ledger keeps of each grant for the limits of P.L.2004 c.65 s.7 a. across workbooks
    (`Portfolio`): its Business Name (as written, and its business-name key), its First Tax Period,
    Tax Periods and Grant Amount (cents; `split_by_year` gives its credit per year, as the steps below
    divide it), and the groups it counts in: its business in each of its years (`business_years`,
    "2026 acme") and each year (`years`, the aggregate limit's). A grant with no credit (fewer than 50
    employees) is in none."""
    s = run(Grants(f, sheet.rules), (multiple_7b, grant_amount_7b))
    key = business_key(f[BUSINESS]).astype(object)
    who = key.fillna("").to_numpy(dtype=object)  # a business key has no "|" (punctuation is dropped)
    periods, first = s.multiple, f[FIRST].to_numpy(dtype=np.int64)
    years, business_years = np.full(len(f), "", dtype=object), np.full(len(f), "", dtype=object)
    for k in range(int(periods.max()) if len(periods) else 0):  # a step per year of the longest grant, each over every grant
        has = periods > k
        year = (first[has] + k).astype(str).astype(object)
        sep = "" if k == 0 else "|"
        years[has] = years[has] + sep + year
        business_years[has] = business_years[has] + sep + year + " " + who[has]
    credited = (periods > 0) & (s.grant > 0)
    named = credited & key.notna().to_numpy()
    return pd.DataFrame(
        {
            "business": f[BUSINESS],
            "business_key": key.where(key.notna(), None),
            "first_period": first,
            "tax_periods": periods,
            "grant": s.grant,
            "business_years": pd.Series(np.where(named, business_years, None), index=f.index, dtype=object).str.split("|"),
            "years": pd.Series(np.where(credited, years, None), index=f.index, dtype=object).str.split("|"),
        },
        index=f.index,
    )


def rows_of(records: pd.DataFrame) -> pd.DataFrame:
    """The grants `records` (their kept fields, `record_id`) as rows of the sheet, to be judged again
    (`Portfolio.rows`): the employees are the fewest of the tier of its multiple (its Tax Periods), and
    the grant is given as its Bonus Award over a Yearly Tax Credit Amount of 0, so the steps divide the
    same Grant Amount over the same years."""
    tiers = sheet.rules["multiple"]
    fewest = {int(t.value): t.extra["min_employees"] for t in tiers}
    periods = pd.array(records["tax_periods"], dtype="Int64").fillna(0).astype("int64")
    return pd.DataFrame(
        {
            ID: records["record_id"].astype(str).to_numpy(dtype=object),
            BUSINESS: records["business"].to_numpy(dtype=object),
            EMPLOYEES: pd.array(pd.Series(periods).map(fewest).fillna(0), dtype="Int64"),
            YEARLY: pd.array(np.zeros(len(records), dtype=np.int64), dtype="Int64"),
            BONUS: pd.array(records["grant"], dtype="Int64"),
            FIRST: pd.array(records["first_period"], dtype="Int64"),
            COC: True,
        }
    )


class Grants(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far (`columns`,
    in the order of the computed columns)."""

    def __init__(self, f: pd.DataFrame, rules: Rules, context: RunContext | None = None):
        super().__init__(f, rules)
        self.context = context or RunContext.today()
        self.columns: dict = {}

    @cached_property
    def elsewhere(self) -> pd.DataFrame:
        """The credit per (grant, year) of the portfolio's other grants (`RunContext.portfolio`: of the
        run's other workbooks and of earlier runs, in the years of the sheet's grants): business (the
        business-name key), name (as written), year, credit (cents) and label (the record named)."""
        out = self.context.portfolio
        if not len(out):
            return pd.DataFrame({"business": pd.Series(dtype=object), "name": pd.Series(dtype=object), "year": pd.Series(dtype=np.int64),
                                 "credit": pd.Series(dtype=np.int64), "label": pd.Series(dtype=object),
                                 "record": pd.Series(dtype=np.int64)})  # fmt: skip
        periods = pd.array(out["tax_periods"], dtype="Int64").fillna(0).to_numpy(dtype=np.int64)
        grant = pd.array(out["grant"], dtype="Int64").fillna(0).to_numpy(dtype=np.int64)
        first = pd.array(out["first_period"], dtype="Int64").fillna(0).to_numpy(dtype=np.int64)
        at, year, credit = split_by_year(grant, periods, first)
        key = out["business_key"].to_numpy(dtype=object)[at]
        return pd.DataFrame(
            {
                "business": np.where(pd.isna(key), "\x00far " + pd.Series(at).astype(str).to_numpy(dtype=object), key),
                "name": out["business"].astype(str).str.strip().to_numpy(dtype=object)[at],
                "year": year,
                "credit": credit,
                "label": record_labels(out)[at],
                "record": at,
            }
        )

    @cached_property
    def spellings(self) -> pd.Series:
        """Every spelling of each business's name among the grants counted, in row order, joined
        with "; " (for the messages of the limits)."""
        counted = pd.Index(self.per_year["row"].drop_duplicates())
        names = self.f[BUSINESS]
        spelled = pd.DataFrame({"business": business_of(names)[counted], "name": names[counted].astype(str).str.strip()}).sort_index()
        spelled = pd.concat([spelled, self.elsewhere[["business", "name"]]], ignore_index=True)  # then as other workbooks spell it
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


def _group(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Each row's group of `keys` as one text (the keys joined by a NUL)."""
    text = frame[keys[0]].astype(str)
    for k in keys[1:]:
        text = text + "\x00" + frame[k].astype(str)
    return text.to_numpy(dtype=object)


def _over_limit(s: Grants, code: str, param: Parameter, keys: list[str]) -> None:
    """Every (grant, year) with credit of the sheet whose group (`keys`) has more credit that year
    than the limit, across the portfolio (the sheet's grants and `Grants.elsewhere`); a group that
    counted grants of other workbooks says how much came from them and names them (the first ten,
    then how many more)."""
    per_year = s.per_year
    if per_year.empty:
        return
    far = s.elsewhere
    both = pd.concat([per_year.assign(far=False), far.assign(far=True, row=-1)], ignore_index=True)
    groups = both.groupby(keys, sort=False)
    total = groups["credit"].transform("sum").to_numpy()[: len(per_year)]
    from_far = (both["credit"] * both["far"]).groupby([both[k] for k in keys], sort=False).transform("sum").to_numpy()[: len(per_year)]
    # the rows of that business (or sheet) that have credit in a year over the limit
    over = (total > param.value) & (per_year["credit"].to_numpy() > 0)
    hit = per_year[over].assign(total=total[over], far=from_far[over]).sort_values(["row", "year"], kind="stable")
    named = pd.Series("", index=hit.index, dtype=object)
    if (hit["far"] > 0).any():  # each grant of other workbooks once per group it counted in
        listed = far.drop_duplicates([*keys, "record"])
        text = listing(listed["label"], _group(listed, keys), "; ", "; and {:,} more")
        named = pd.Series(_group(hit, keys), index=hit.index).map(text).fillna("")
    fields = dict(business=s.f[BUSINESS], year=hit["year"].to_numpy(), total=hit["total"].to_numpy(), credit=hit["credit"].to_numpy(),
                  limit=param.value, citation=param.cite)  # fmt: skip
    if "business" in keys:
        fields["names"] = s.spellings.reindex(hit["business"]).to_numpy()
    mine, theirs = (hit["far"] == 0).to_numpy(), (hit["far"] > 0).to_numpy()
    s.findings.append(emit(code, pd.Index(hit["row"][mine]), **picked(fields, mine)))
    s.findings.append(
        emit(
            code,
            pd.Index(hit["row"][theirs]),
            variant="elsewhere",
            elsewhere=hit["far"].to_numpy()[theirs],
            records=named.to_numpy(dtype=object)[theirs],
            **picked(fields, theirs),
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
    s = run(Grants(frame, rules, context), STEPS)
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


def standing(records: pd.DataFrame, rules: Rules) -> dict[str, SummaryTable]:
    """The `BRRAP` sheet of `njcredits portfolio`: the credit of each business (the one business-name
    rule) in each tax period year over the latest version of every grant (`records`: the ledger's,
    with their portfolio fields and Status; neither Invalid nor Ineligible counts), with the
    single-business limit and the year's total against the aggregate limit, each marked when over."""
    columns = ["Tax Period", "Business", "Credit ($)", "Grants", "Workbooks", "Over Business Limit By ($)", "Year Total ($)",
               "Over Aggregate Limit By ($)"]  # fmt: skip
    business_limit, aggregate_limit = rules["business_annual_limit"].value, rules["aggregate_annual_limit"].value
    title = (f"BRRAP: credit per business and tax period year (single-business limit ${money_text([business_limit], cents=False)[0]}; "
             f"aggregate ${money_text([aggregate_limit], cents=False)[0]}), over the latest version of every grant")  # fmt: skip
    money = {c: "money" for c in columns if c.endswith("($)")}
    counted = records[~records["status"].isin(["Invalid", "Ineligible"]) & records["grant"].notna()].reset_index(drop=True)
    at, year, credit = split_by_year(
        pd.array(counted["grant"], dtype="Int64").to_numpy(dtype=np.int64),
        pd.array(counted["tax_periods"], dtype="Int64").fillna(0).to_numpy(dtype=np.int64),
        pd.array(counted["first_period"], dtype="Int64").fillna(0).to_numpy(dtype=np.int64),
    )
    if not len(at):
        return {"BRRAP": SummaryTable(title, pd.DataFrame(columns=columns), money)}
    key = counted["business_key"].to_numpy(dtype=object)[at]
    latest = counted["ended"].astype(str).to_numpy(dtype=object)[at]  # a business is shown as its latest version spells it
    one = pd.DataFrame(
        {
            "year": year,
            "business": np.where(pd.isna(key), "\x00grant " + pd.Series(at).astype(str).to_numpy(dtype=object), key),
            "name": counted["business"].to_numpy(dtype=object)[at],
            "latest": latest,
            "credit": credit,
            "book": counted["book"].to_numpy(dtype=object)[at],
        }
    ).sort_values("latest", kind="stable")
    by = one.groupby(["year", "business"], sort=True)
    table = pd.DataFrame(
        {
            "Credit ($)": by["credit"].sum(),
            "Business": by["name"].last(),  # as its latest grant spells it
            "Grants": by.size(),  # each version counted (a record of two workbooks of one run counts in both)
            "Workbooks": by["book"].nunique(),
        }
    ).reset_index()
    table["Year Total ($)"] = table.groupby("year")["Credit ($)"].transform("sum")
    over_business = table["Credit ($)"] - business_limit
    over_all = table["Year Total ($)"] - aggregate_limit
    table["Over Business Limit By ($)"] = over_business.clip(lower=0)
    table["Over Aggregate Limit By ($)"] = over_all.clip(lower=0)
    table["Tax Period"] = table["year"].astype(str)
    return {"BRRAP": SummaryTable(title, table[columns], money)}
