"""Grow NJ annual compliance, forfeiture and carry-forward (README, sheet `GrowNJ_Compliance`; C.34:1B-243, C.34:1B-247).

The forfeiture rules are vectorized over the sheet. The carry-forward is a time series per
project: rows are put in (project, Tax Period) order once, then one linear pass walks them,
keeping each project's open carry-forward amounts oldest first (at most 20 of them), so the
cost grows linearly with the number of periods, never quadratically. Row order in the sheet
does not matter.

A project's periods processed in other workbooks (of the run, or of earlier runs: the team's own,
`RunContext.portfolio`) take part in the carry-forward: its pass runs over them and the sheet's rows
together, so a row's carry-forward comes from the project's earlier periods wherever they were
processed.

Deadlines that depend on the day of the run (a blank Certification Date, a blank Period
Documentation Certified Date) are judged on the run's as-of date, `context.as_of`.

The calculation is a sequence of named steps, one per provision, in the statute's order. Each
step reads the columns earlier steps left on the `Compliance` state and adds its own; the
carry-forward, which needs them all, comes last:

    eligibility_period_243 -> certification_247b2 -> statewide_workforce_247d1
    -> facility_employment_247d2 -> documentation_247c1 -> sale_247d3a -> carry_forward_247c1
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit import rules_text
from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable, totals_by
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.exact import Q
from batch.programs._kit.rules import Rules
from batch.programs._kit.steps import name_key, named_before, record_labels
from batch.programs.grow_nj_compliance.sheet import GROW_NJ_COMPLIANCE

SPEC = GROW_NJ_COMPLIANCE

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
TERM = "Eligibility Period (years)"
OUT = [
    "Credit Allowed ($)",
    "Credit Used ($)",
    "Carry-Forward Added ($)",
    "Carry-Forward Used ($)",
    "Carry-Forward Balance ($)",
    "Carry-Forward Expired ($)",
]


def portfolio_fields(f: pd.DataFrame, computed: pd.DataFrame | None = None) -> pd.DataFrame:
    """What the ledger keeps of each period for the project's later periods (`Portfolio`): its project
    (the key: IDs trimmed and case-insensitive), Tax Period, Credit Allowed (cents, as its own sheet
    decided it; None before the rows are calculated) and Tax Liability (cents)."""
    allowed = computed["Credit Allowed ($)"] if computed is not None else pd.Series(None, index=f.index, dtype=object)
    return pd.DataFrame(
        {"project": name_key(f[ID]), "period": f[PERIOD], "allowed": allowed, "liability": f[LIABILITY]},
        index=f.index,
    )


class Compliance(Steps):
    """The rows of the sheet, the rules, the run's as-of date, and every column the steps have
    computed so far."""

    def __init__(self, f: pd.DataFrame, rules: Rules, context: RunContext):
        super().__init__(f, rules)
        self.context = context
        self.as_of = pd.Timestamp(context.as_of)
        self.as_of_text = context.as_of.isoformat()
        self.period = f[PERIOD].to_numpy(dtype=np.int64)
        self.key = name_key(f[ID])
        # the rows in (project, Tax Period) order, row order breaking ties
        self.order = (
            pd.DataFrame({"key": self.key, "period": self.period}, index=self.idx).sort_values(["key", "period"], kind="stable").index
        )
        self.forfeited = np.zeros(self.n, dtype=bool)  # the period's credit is forfeited (Credit Allowed 0)
        self.ineligible = np.zeros(self.n, dtype=bool)  # no credit, and no part in the carry-forward
        self.cert_blank = f[CERTIFIED].isna().to_numpy()

    def closing(self, years_after: int = 0) -> pd.Series:
        """The day each row's tax period closes (the rules' month-day of the Tax Period year),
        `years_after` years later."""
        month, day = (int(part) for part in self.rules["tax_period_close"].value.split("-"))
        close = pd.DataFrame({"year": self.period + years_after, "month": month, "day": day})
        return pd.Series(pd.to_datetime(close).to_numpy(), index=self.idx)


def carry_forward(project: np.ndarray, year: np.ndarray, allowed: np.ndarray, liability: np.ndarray, periods: int) -> np.ndarray:
    """Rows already in (project, year) order. Returns rows x 5 integer cents: credit used,
    carry-forward added, carry-forward used, balance, expired.

    Every project at once: the loop is over the position of a row within its project (the k-th
    tax period of every project together), never over rows. A project's unused credit is held in
    `periods + 1` slots, one per year modulo that many (a credit older than `periods` periods has
    expired before its slot comes round again), and used oldest first."""
    n = len(year)
    out = np.zeros((n, 5), dtype=np.int64)
    if n == 0:
        return out
    starts = np.r_[True, project[1:] != project[:-1]]
    group = np.cumsum(starts) - 1
    position = np.arange(n) - np.flatnonzero(starts)[group]
    width = periods + 1
    amount = np.zeros((group[-1] + 1, width), dtype=np.int64)  # unused credit per project and slot
    since = np.zeros((group[-1] + 1, width), dtype=np.int64)  # the year each slot's credit was added
    for k in range(int(position.max()) + 1):
        rows = np.flatnonzero(position == k)
        g, y = group[rows], year[rows].astype(np.int64)[:, None]
        held, added_in = amount[g], since[g]
        gone = (held > 0) & (added_in + periods < y)  # past its last usable period (years missing between rows)
        expired = np.where(gone, held, 0).sum(axis=1)
        held = np.where(gone, 0, held)
        own = np.minimum(liability[rows], allowed[rows])
        need = liability[rows] - own
        # oldest first: order the slots by the year they were added (empty slots last)
        order = np.argsort(np.where(held > 0, added_in, np.iinfo(np.int64).max), axis=1, kind="stable")
        sorted_held = np.take_along_axis(held, order, axis=1)
        take = np.clip(need[:, None] - (np.cumsum(sorted_held, axis=1) - sorted_held), 0, sorted_held)
        np.put_along_axis(held, order, sorted_held - take, axis=1)
        used = take.sum(axis=1)
        last = (held > 0) & (added_in + periods <= y)  # this is its last usable period
        expired += np.where(last, held, 0).sum(axis=1)
        held = np.where(last, 0, held)
        added = allowed[rows] - own
        slot = (y[:, 0] % width)[:, None]
        same_year = np.take_along_axis(added_in, slot, axis=1) == y  # two rows of one project and year: one credit
        np.put_along_axis(held, slot, np.take_along_axis(held, slot, axis=1) * same_year + added[:, None], axis=1)
        np.put_along_axis(added_in, slot, y, axis=1)
        amount[g], since[g] = held, added_in
        out[rows] = np.column_stack([own + used, added, used, held.sum(axis=1), expired])
    return out


# -- the steps ----------------------------------------------------------------------------------


def eligibility_period_243(s: Compliance) -> None:
    """C.34:1B-243 "eligibility period": credit may be claimed from the tax period in which the
    authority accepts certification, for the term the applicant chose (Eligibility Period; blank is
    the longest term the rules give). A Tax Period before it carries no credit (Ineligible); one
    after it carries none of its own, but its carry-forward is still used and expires (c.(1)). A
    blank Certification Date: the eligibility period has not begun, so no credit is allowed yet
    (certification_247b2 judges it on the as-of date)."""
    f = s.f
    term, carried = s.rules["eligibility_period_years"], s.rules["carry_forward_periods"]
    years = f[TERM].fillna(term.value).astype("Int64")
    first = f[CERTIFIED].dt.year.astype("Int64")
    last = first + years - 1
    before = (f[PERIOD] < first).fillna(False).to_numpy(dtype=bool)
    after = (f[PERIOD] > last).fillna(False).to_numpy(dtype=bool)
    common = {"period": f[PERIOD], "first": first, "last": last, "date": f[CERTIFIED]}
    s.emit("TAX_PERIOD_OUTSIDE_ELIGIBILITY_PERIOD", before, **common, citation=term.cite)
    s.emit("TAX_PERIOD_AFTER_ELIGIBILITY_PERIOD", after, **common, citation=f"{term.cite}; {carried.cite}")
    s.ineligible |= before
    s.forfeited |= before | after | s.cert_blank


def certification_247b2(s: Compliance) -> None:
    """C.34:1B-247 b.(2): the project must be certified within the years after approval the rules
    give (extensions allowed), never after the outer limit; a certification after it bars the
    project. A blank Certification Date is judged on the as-of date: barred once the outer limit
    has passed; otherwise a tax period already closed can no longer be the one in which
    certification is accepted (C.34:1B-243), so it is outside the eligibility period; a later one
    is pending, its credit allowed only once certification is accepted in it."""
    approval, certified = s.f[APPROVAL], s.f[CERTIFIED]
    inner, outer = s.rules["certification_years"], s.rules["certification_outer_years"]
    term = s.rules["eligibility_period_years"]
    due = approval + pd.DateOffset(years=inner.value)
    latest = approval + pd.DateOffset(years=outer.value)
    close = s.closing()
    cert_blank = s.cert_blank
    after_outer_given = (certified > latest).fillna(False).to_numpy(dtype=bool)
    after_inner = (certified > due).fillna(False).to_numpy(dtype=bool) & ~after_outer_given
    after_outer_blank = cert_blank & (s.as_of > latest).fillna(False).to_numpy(dtype=bool)
    closed = cert_blank & ~after_outer_blank & (close < s.as_of).to_numpy(dtype=bool)
    pending = cert_blank & ~after_outer_blank & ~closed
    past_due = (s.as_of > due).fillna(False).to_numpy(dtype=bool)
    s.emit("CERTIFICATION_LATE", after_inner, date=certified, years=inner.value, approved=approval, citation=inner.cite)
    s.emit("CERTIFICATION_AFTER_4_YEARS", after_outer_given, date=certified, years=outer.value, approved=approval, citation=outer.cite)
    s.emit(
        "CERTIFICATION_AFTER_4_YEARS",
        after_outer_blank,
        variant="blank",
        as_of=s.as_of_text,
        years=outer.value,
        approved=approval,
        latest=latest,
        citation=outer.cite,
    )
    s.emit(
        "TAX_PERIOD_OUTSIDE_ELIGIBILITY_PERIOD",
        closed,
        variant="blank",
        period=s.f[PERIOD],
        close=close,
        as_of=s.as_of_text,
        citation=f"{term.cite}; {inner.cite}",
    )
    pending_fields = dict(
        as_of=s.as_of_text,
        years=inner.value,
        approved=approval,
        due=due,
        latest=latest,
        period=s.f[PERIOD],
        # accepted in the period or before it, and never after the outer limit
        by=close.where(close < latest, latest),
        citation=f"{inner.cite}; {term.cite}",
    )
    s.emit("CERTIFICATION_PENDING", pending & ~past_due, **pending_fields)
    s.emit("CERTIFICATION_PENDING", pending & past_due, variant="extended", **pending_fields)
    s.ineligible |= after_outer_given | after_outer_blank | closed
    s.forfeited |= s.ineligible


def statewide_workforce_247d1(s: Compliance) -> None:
    """C.34:1B-247 d.(1): a period in which the statewide employees fall below the rules' share of
    the baseline forfeits that period's credit (each period on its own figures)."""
    statewide = s.rules["statewide_share"]
    reduced = Q(s.f[STATEWIDE]) < Q(s.f[BASELINE]) * statewide.value
    s.emit(
        "STATEWIDE_WORKFORCE_REDUCED",
        reduced,
        employees=s.f[STATEWIDE],
        baseline=s.f[BASELINE],
        share=rules_text.percent(statewide.value),
        reduction=rules_text.percent(1 - statewide.value),
        period=s.f[PERIOD],
        citation=statewide.cite,
    )
    s.forfeited |= reduced


def facility_employment_247d2(s: Compliance) -> None:
    """C.34:1B-247 d.(2): a period in which the facility's employees fall below the rules' share of
    the jobs in the agreement forfeits that period's credit (each period on its own figures)."""
    facility = s.rules["facility_share"]
    below = Q(s.f[FACILITY]) < Q(s.f[AGREEMENT_JOBS]) * facility.value
    s.emit(
        "FACILITY_EMPLOYMENT_BELOW_80PCT",
        below,
        employees=s.f[FACILITY],
        jobs=s.f[AGREEMENT_JOBS],
        share=rules_text.percent(facility.value),
        period=s.f[PERIOD],
        citation=facility.cite,
    )
    s.forfeited |= below


def documentation_247c1(s: Compliance) -> None:
    """C.34:1B-247 c.(1): the period's documentation must be certified within the years after the
    close of the tax period the rules give; a credit forfeits when it "remains uncertified as of"
    that deadline, so a blank date forfeits only once the deadline is before the as-of date."""
    f = s.f
    docs = s.rules["documentation_years"]
    deadline = s.closing(docs.value)
    docs_blank = f[DOCS].isna().to_numpy()
    late_docs = (f[DOCS] > deadline).fillna(False).to_numpy(dtype=bool)
    lapsed = docs_blank & (deadline < s.as_of).to_numpy(dtype=bool)
    docs_pending = docs_blank & ~lapsed
    common = {"period": f[PERIOD], "deadline": deadline, "years": docs.value, "citation": docs.cite}
    s.emit("CREDIT_FORFEITED_UNCERTIFIED", late_docs, date=f[DOCS], **common)
    s.emit("CREDIT_FORFEITED_UNCERTIFIED", lapsed, variant="blank", as_of=s.as_of_text, **common)
    s.emit("DOCUMENTATION_PENDING", docs_pending, as_of=s.as_of_text, **common)
    s.forfeited |= late_docs | lapsed


def sale_247d3a(s: Compliance) -> None:
    """C.34:1B-247 d.(3)(a): a sale of the facility by the business holding the credits forfeits that
    period and every later one of the project; a sale by another owner (Seller Holds the Credits =
    N) leaves the credits unaffected. A blank Seller Holds the Credits is read by the rules default,
    with a warning."""
    f = s.f
    sale, holder_default = s.rules["sale_forfeiture"], s.rules["seller_holds_credits_when_blank"]
    sold = f[SOLD].to_numpy(dtype=bool)
    seller = f[SELLER].astype("boolean")
    holder_blank = sold & seller.isna().to_numpy()
    seller_holds = seller.fillna(bool(holder_default.value)).to_numpy(dtype=bool)
    forfeiting_sale = sold & seller_holds
    unaffected = sold & ~seller_holds
    s.emit("SALE_HOLDER_NOT_GIVEN", holder_blank, period=f[PERIOD], citation=holder_default.cite)
    sold_year = pd.Series(np.where(forfeiting_sale, s.period, np.iinfo(np.int64).max), index=s.idx)
    first_sale = sold_year[s.order].groupby(s.key[s.order].to_numpy()).cummin().reindex(s.idx)
    forfeited_by_sale = (first_sale <= s.period).to_numpy()
    s.emit("FACILITY_SOLD_CREDITS_FORFEITED", forfeited_by_sale, sold=first_sale, period=f[PERIOD], citation=sale.cite)
    s.emit("FACILITY_SOLD_CREDITS_UNAFFECTED", unaffected, period=f[PERIOD], citation=sale.cite)
    s.forfeited |= forfeited_by_sale


def carry_forward_247c1(s: Compliance) -> None:
    """C.34:1B-247 c.(1): the credit allowed (the annual credit, 0 when forfeited or outside the
    eligibility period) is used against the period's tax liability, and what is left carries
    forward for the periods the rules give, oldest first, also past the eligibility period; one
    linear pass over the rows that count (an Ineligible row does not)."""
    s.allowed = np.where(s.forfeited, 0, s.f[ANNUAL].to_numpy(dtype=np.int64))
    counted = s.order[~s.ineligible[s.idx.get_indexer(s.order)]]
    pos = s.idx.get_indexer(counted)
    s.result = np.zeros((s.n, len(OUT) - 1), dtype=np.int64)
    periods = s.rules["carry_forward_periods"]
    own = pd.DataFrame({"key": s.key[counted].to_numpy(), "period": s.period[pos], "allowed": s.allowed[pos],
                        "liability": s.f[LIABILITY].to_numpy(dtype=np.int64)[pos], "pos": pos, "label": None})  # fmt: skip
    out = s.context.portfolio
    if len(out):  # the project's periods of other workbooks, in (project, Tax Period) order with the sheet's
        far = pd.DataFrame(
            {
                "key": out["project"].to_numpy(dtype=object),
                "period": pd.array(out["period"], dtype="Int64").astype("int64"),
                "allowed": pd.array(out["allowed"], dtype="Int64").fillna(0).astype("int64"),
                "liability": pd.array(out["liability"], dtype="Int64").fillna(0).astype("int64"),
                "pos": -1,
                "label": record_labels(out),
            }
        )
        # a project's period is one: the sheet's own row of it, else its latest version elsewhere (a Project
        # ID typed in another case is the same project, and so the same period)
        far = far.drop_duplicates(["key", "period"], keep="last")
        period_of = pd.MultiIndex.from_arrays([own["key"], own["period"]])
        far = far[~pd.MultiIndex.from_arrays([far["key"], far["period"]]).isin(period_of)]
        own = pd.concat([far, own], ignore_index=True).sort_values(["key", "period"], kind="stable").reset_index(drop=True)
    result = carry_forward(own["key"].to_numpy(), own["period"].to_numpy(), own["allowed"].to_numpy(), own["liability"].to_numpy(),
                           periods.value)  # fmt: skip
    mine = own["pos"].to_numpy() >= 0
    s.result[own["pos"].to_numpy()[mine]] = result[mine]
    if len(out):
        _carried_in(s, own, result, periods.cite)


def _carried_in(s: Compliance, rows: pd.DataFrame, result: np.ndarray, cite: str) -> None:
    """CARRY_FORWARD_FROM_OTHER_WORKBOOKS on each row of the sheet that follows periods of its project
    processed in other workbooks (`rows`, in project and period order, with the carry-forward pass's
    `result`): the balance it starts with, and those periods (the first ten, then how many more)."""
    far = (rows["pos"] < 0).to_numpy()
    key = rows["key"].to_numpy(dtype=object)
    after_far = np.r_[False, far[:-1] & (key[1:] == key[:-1])] & ~far
    if not after_far.any():
        return
    _count, named = named_before(pd.Series(key), far, rows["label"].to_numpy(dtype=object))
    balance = np.r_[0, result[:-1, 3]]  # the balance of the period before, within the project
    at = s.idx[rows["pos"].to_numpy()[after_far]]
    s.emit(
        "CARRY_FORWARD_FROM_OTHER_WORKBOOKS",
        s.idx.isin(at),
        balance=pd.Series(balance[after_far], index=at),
        period=s.f[PERIOD],
        records=pd.Series(named[after_far], index=at),
        citation=cite,
    )


STEPS = (
    eligibility_period_243,
    certification_247b2,
    statewide_workforce_247d1,
    facility_employment_247d2,
    documentation_247c1,
    sale_247d3a,
    carry_forward_247c1,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Compliance(frame, rules, context or RunContext.today()), STEPS)
    computed = pd.DataFrame(np.column_stack([s.allowed, s.result]), columns=OUT, index=s.idx).astype("Int64")
    return Calculation(computed, s.findings, ineligible=pd.Series(s.ineligible, index=s.idx))


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
    by_year = totals_by(rows, [PERIOD], **{c: (c, how) for c, how in sums.items()})
    by_year[PERIOD] = by_year[PERIOD].astype(str)
    return [
        SummaryTable("Credit per project (balance at the last period)", by_project, money),
        SummaryTable("Credit per tax period year", by_year, money),
    ]


def standing(records: pd.DataFrame, rules: Rules) -> dict[str, SummaryTable]:
    """The `Compliance` sheet of `njcredits portfolio`: per project (within its team) over the latest
    version of each of its periods (`records`: the ledger's, with their portfolio fields and Status;
    an Ineligible or Invalid period takes no part), its periods, the credit allowed and used, the
    carry-forward balance after its last period and what has expired, and when the oldest part of
    the balance expires: the carry-forward is used oldest first, so the balance is the latest credit
    carried forward, and each year's part can be used through that year plus the carry-forward
    periods."""
    columns = ["Team", "Project", "First Period", "Last Period", "Periods", "Credit Allowed ($)", "Credit Used ($)",
               "Carry-Forward Balance ($)", "Carry-Forward Expired ($)", "Next Expiry (last usable period)",
               "Expiring Then ($)"]  # fmt: skip
    money = {c: "money" for c in columns if c.endswith("($)")}
    periods = rules["carry_forward_periods"].value
    title = (f"Compliance: each project's periods, credit and carry-forward (usable for {periods} tax periods), over the latest "
             "version of every period")  # fmt: skip
    counted = records[~records["status"].isin(["Invalid", "Ineligible"]) & records["period"].notna()]
    if counted.empty:
        return {"Compliance": SummaryTable(title, pd.DataFrame(columns=columns), money)}
    rows = (
        pd.DataFrame(
            {
                "group": (counted["team"].astype(str) + "\x00" + counted["project"].astype(str)).to_numpy(dtype=object),
                "team": counted["team"].to_numpy(dtype=object),
                "name": counted["record_id"].astype(str).str.rsplit(" / ", n=1).str[0].to_numpy(dtype=object),
                "period": pd.array(counted["period"], dtype="Int64").astype("int64"),
                "allowed": pd.array(counted["allowed"], dtype="Int64").fillna(0).astype("int64"),
                "liability": pd.array(counted["liability"], dtype="Int64").fillna(0).astype("int64"),
                "latest": counted["ended"].astype(str).to_numpy(dtype=object),
            }
        )
        # a project's period is one: its latest version (a Project ID typed in another case is the same project)
        .sort_values(["group", "period", "latest"], kind="stable")
        .drop_duplicates(["group", "period"], keep="last")
        .reset_index(drop=True)
    )
    out = carry_forward(rows["group"].to_numpy(), rows["period"].to_numpy(), rows["allowed"].to_numpy(), rows["liability"].to_numpy(),
                        periods)  # fmt: skip
    rows = rows.assign(used=out[:, 0], added=out[:, 1], balance=out[:, 3], expired=out[:, 4])
    by = rows.groupby("group", sort=False)
    last_balance = by["balance"].transform("last")
    # the balance is the latest credit carried forward: each year's part, newest first, up to the balance
    newer = by["added"].transform("sum") - by["added"].cumsum()  # added in the project's later periods
    left = (last_balance - newer).clip(lower=0).clip(upper=rows["added"])
    open_ = rows.assign(left=left)[left > 0]
    first_open = open_.groupby("group", sort=False).first()
    table = pd.DataFrame(
        {
            "Team": by["team"].first(),
            "Project": by["name"].last(),
            "First Period": by["period"].min().astype(str),
            "Last Period": by["period"].max().astype(str),
            "Periods": by.size(),
            "Credit Allowed ($)": by["allowed"].sum(),
            "Credit Used ($)": by["used"].sum(),
            "Carry-Forward Balance ($)": by["balance"].last(),
            "Carry-Forward Expired ($)": by["expired"].sum(),
        }
    )
    table["Next Expiry (last usable period)"] = (first_open["period"] + periods).astype(str).reindex(table.index)
    table["Expiring Then ($)"] = first_open["left"].reindex(table.index).astype("Int64")
    return {"Compliance": SummaryTable(title, table[columns].sort_values(["Team", "Project"]).reset_index(drop=True), money)}
