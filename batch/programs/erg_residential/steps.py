"""ERG qualified residential project tax credits (README, sheet `ERG_Residential`; C.52:27D-489f b.).

Pure and vectorized. The bucket limits hold across rows and across the portfolio: running totals
of Credits Requested in Application Date order per Category limit, per bucket (a), and for the
whole program, each with group-wise cumulative sums over the sheet's rows and the applications of
the run's other workbooks and of earlier runs (`RunContext.portfolio`, `portfolio_rows`: on one date
those of earlier runs first, then by workbook and row).

The calculation is a sequence of named steps, one per provision. Each step reads the columns
earlier steps left on the `Residential` state and adds its own. The deadlines of b.(2)(e) come
before the bucket limits of b.(2)(a)-(d) because only the rows they do not bar count toward them:

    pledge_489f_b1 -> project_limit_489f_b2e -> deadlines_489f_b2e -> category_limits_489f_b2
    -> bucket_totals_489f_b2a -> program_total_489f_b2
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.exact import Q
from batch.programs._kit.findings import emit
from batch.programs._kit.rules import Rules, lookup
from batch.programs._kit.steps import date_order, pick, picked, portfolio_rows, running_across
from batch.programs.erg_residential import sheet
from batch.programs.erg_residential.sheet import ERG_RESIDENTIAL

SPEC = ERG_RESIDENTIAL

ID, CATEGORY, DISTRESSED, GZ = "Project ID", "Category", "Deep Poverty Pocket or Distressed Municipality", "Growth Zone"
APP_DATE, TCO = "Application Date", "Temporary Certificate of Occupancy Date"
REVENUE, GRANT, CREDITS = "Projected Annual Incremental Revenue ($)", "Annual Incentive Grant ($)", "Credits Requested ($)"


def _yn(s: pd.Series) -> pd.Series:
    return pd.Series(np.where(s.to_numpy(dtype=bool), "Y", "N"), index=s.index)


def bucket_groups(frame: pd.DataFrame, rules: Rules) -> pd.DataFrame:
    """Per row: its bucket letter, the group its Bucket Cumulative runs in, that group's limit and citation."""
    tiers = rules["buckets"]
    masks = [frame[CATEGORY].isin(t.extra["categories"]).to_numpy() for t in tiers]
    which = np.select(masks, np.arange(len(tiers)), -1) if len(frame) else np.zeros(0, dtype=np.int64)
    return pd.DataFrame(
        {k: pick(tiers, which, attr) for k, attr in (("bucket", "bucket"), ("group", "label"), ("limit", "value"), ("cite", "cite"))},
        index=frame.index,
    )


def _groups_of(groups: pd.DataFrame, rules: Rules) -> pd.Series:
    """Each application's groups of the limits it counts in, as the ledger keeps them: its Category's
    limit, its bucket's total where the bucket has one, and the program total ("all")."""
    totals = {t.extra["bucket"]: t.label for t in rules["bucket_totals"]}
    keys = pd.DataFrame({"group": groups["group"], "total": groups["bucket"].map(totals), "all": "all"}, index=groups.index)
    long = keys.melt(ignore_index=False)["value"].dropna()
    listed = long.groupby(level=0, sort=False).agg(list).reindex(groups.index)
    return listed.astype(object).where(listed.notna(), None)


def portfolio_fields(f: pd.DataFrame, computed: pd.DataFrame | None = None) -> pd.DataFrame:
    """What the ledger keeps of each application for the bucket limits across workbooks (`Portfolio`):
    its Category, Application Date and Credits Requested (cents), and the groups of the limits it
    counts in (`limit_groups`, `_groups_of`)."""
    return pd.DataFrame(
        {
            "category": f[CATEGORY],
            "date": f[APP_DATE].dt.strftime("%Y-%m-%d"),
            "credits": f[CREDITS],
            "limit_groups": _groups_of(bucket_groups(f, sheet.rules), sheet.rules),
        },
        index=f.index,
    )


def rows_of(records: pd.DataFrame) -> pd.DataFrame:
    """The applications `records` (their kept fields, `record_id`) as rows of the sheet, to be judged
    again (`Portfolio.rows`) by the bucket limits: the figures the other rules read are not kept, and
    are given as ones no rule finds fault with (those rules read the row alone)."""
    n = len(records)
    money = pd.array(np.zeros(n, dtype=np.int64), dtype="Int64")
    return pd.DataFrame(
        {
            ID: records["record_id"].astype(str).to_numpy(dtype=object),
            "Developer": None,
            CATEGORY: records["category"].to_numpy(dtype=object),
            DISTRESSED: True,
            GZ: False,
            APP_DATE: pd.to_datetime(records["date"]).to_numpy(dtype="datetime64[s]"),
            TCO: pd.to_datetime(pd.Series([sheet.rules["tco_deadline"].value] * n)).to_numpy(dtype="datetime64[s]"),
            REVENUE: money,
            GRANT: money,
            CREDITS: pd.array(records["credits"], dtype="Int64"),
        }
    )


class Residential(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far."""

    def __init__(self, f: pd.DataFrame, rules: Rules, context: RunContext | None = None):
        super().__init__(f, rules)
        self.context = context or RunContext.today()
        self.groups = bucket_groups(f, rules)
        self.cumulative = pd.Series(pd.NA, index=self.idx, dtype="Int64")  # the running total of the row's Category limit

    def counting(self) -> None:
        """The applications the limits count, in their order (`across`): the sheet's rows the deadline
        does not bar and the portfolio's records of other workbooks, with each one's Category group,
        bucket, Credits Requested (cents), and how a record elsewhere is named."""
        mine = self.groups.loc[self.counted.index]
        rank = np.empty(len(self.order), dtype=np.int64)
        rank[self.counted.index.get_indexer(self.order)] = np.arange(len(self.order))
        own = {"group": mine["group"].to_numpy(dtype=object), "bucket": mine["bucket"].to_numpy(dtype=object),
               "credit": self.credits.to_numpy()}  # fmt: skip

        def far(out: pd.DataFrame) -> dict:
            theirs = bucket_groups(pd.DataFrame({CATEGORY: out["category"].to_numpy(dtype=object)}), self.rules)
            return {
                "group": theirs["group"].to_numpy(dtype=object),
                "bucket": theirs["bucket"].to_numpy(dtype=object),
                "credit": pd.array(out["credits"], dtype="Int64").astype("int64"),
                "date": out["date"].to_numpy(dtype=object),
            }

        self.across = portfolio_rows(self.context, own, self.counted[APP_DATE], rank, far)

    def running_total(self, key: np.ndarray, limit: np.ndarray, cite: np.ndarray, name: np.ndarray) -> pd.Series | None:
        """Hold the running total of Credits Requested of the applications that count (`across`), in
        each group of `key` (None: in none), to `limit`, flagging the sheet's row that crosses it and
        every later row of its group; a finding that counted applications of other workbooks says how
        much came from them and names them. The four are aligned with `across`. Returns the running
        totals of the sheet's rows (indexed like them; None: no group)."""
        keep = pd.notna(key)
        if not keep.any():
            return None
        a = self.across[keep]
        total, crossed, elsewhere, count, named = running_across(a, key[keep], limit[keep])
        own = a["row"].to_numpy() >= 0
        at = self.counted.index[a["row"].to_numpy()[own]]
        run = pd.Series(total[own], index=at)
        hit = crossed[own]
        fields = {"credits": self.f[CREDITS], "bucket": name[keep][own][hit], "cumulative": total[own][hit], "limit": limit[keep][own][hit],
                  "date": self.f[APP_DATE], "citation": cite[keep][own][hit]}  # fmt: skip
        mine, theirs = count[own][hit] == 0, count[own][hit] > 0
        self.findings.append(emit("BUCKET_LIMIT_EXCEEDED", at[hit][mine], **picked(fields, mine)))
        self.findings.append(
            emit(
                "BUCKET_LIMIT_EXCEEDED",
                at[hit][theirs],
                variant="elsewhere",
                elsewhere=elsewhere[own][hit][theirs],
                records=named[own][hit][theirs],
                **picked(fields, theirs),
            )  # fmt: skip
        )
        return run


# -- the steps ----------------------------------------------------------------------------------


def pledge_489f_b1(s: Residential) -> None:
    """C.52:27D-489f b.(1): the annual incentive grant may pledge up to the share of projected annual
    incremental revenues the rules give, a higher share in a Garden State Growth Zone. A category
    that names a Growth Zone decides Y; a category of bucket (c) or (d) decides N (those buckets are
    for projects not qualifying under (a) or (b), and every Growth Zone project does); otherwise the
    Growth Zone column decides."""
    f, rules, groups = s.f, s.rules, s.groups
    said_gz = f[GZ].to_numpy(dtype=bool)
    gz_categories, excluded = rules["growth_zone_categories"], rules["growth_zone_excluded_buckets"]
    by_category = f[CATEGORY].isin(gz_categories.value).to_numpy()
    conflict = said_gz & groups["bucket"].isin(excluded.value).to_numpy()
    in_gz = by_category | (said_gz & ~conflict)
    share, share_cite = lookup(rules["pledge_share"], _yn(pd.Series(in_gz, s.idx)))
    s.pledge = Q(f[REVENUE]) * Q.from_fractions(share)
    limit_cents = pd.Series(s.pledge.cents(), s.idx)
    codes, distinct = pd.factorize(share)  # each distinct share written once
    share_text = pd.Series(np.array([f"{float(v):.0%}" for v in distinct] + [""], dtype=object)[codes], index=share.index)
    pledge_fields = dict(category=f[CATEGORY], share=share_text, limit=limit_cents, revenue=f[REVENUE])
    s.emit("GROWTH_ZONE_FROM_CATEGORY", by_category & ~said_gz, citation=gz_categories.cite, **pledge_fields)
    s.emit(
        "GROWTH_ZONE_CATEGORY_CONFLICT",
        conflict,
        bucket=groups["bucket"],
        zone_share=f"{float(rules['pledge_share']['Y'].value):.0%}",
        citation=excluded.cite,
        **pledge_fields,
    )
    over_pledge = Q(f[GRANT]) > s.pledge
    s.emit(
        "PLEDGE_OVER_LIMIT",
        over_pledge,
        grant=f[GRANT],
        limit=limit_cents,
        share=share_text,
        revenue=f[REVENUE],
        citation=share_cite,
    )


def project_limit_489f_b2e(s: Residential) -> None:
    """C.52:27D-489f b.(2)(e): the credits one project may be awarded, more in a deep poverty pocket
    or distressed municipality than elsewhere."""
    limit, limit_cite = lookup(s.rules["project_credit_limit"], _yn(s.f[DISTRESSED]))
    s.project_limit = limit.astype("int64")
    over_project = (s.f[CREDITS] > s.project_limit).to_numpy(dtype=bool)
    s.emit("PROJECT_CREDIT_LIMIT_EXCEEDED", over_project, credits=s.f[CREDITS], limit=s.project_limit, citation=limit_cite)


def deadlines_489f_b2e(s: Residential) -> None:
    """C.52:27D-489f b.(2)(e): the application must come before the application deadline (a later
    one is barred) and the temporary certificate of occupancy no later than its own deadline. Only
    the rows the application deadline does not bar count toward the bucket limits."""
    f = s.f
    deadline = s.rules["application_deadline"]
    s.late = (f[APP_DATE] >= deadline.value).to_numpy(dtype=bool)
    s.emit("APPLICATION_AFTER_DEADLINE", s.late, date=f[APP_DATE], deadline=deadline.value, citation=deadline.cite)
    tco = s.rules["tco_deadline"]
    tco_late = (f[TCO] > tco.value).fillna(False).to_numpy(dtype=bool)
    s.emit("TCO_AFTER_DEADLINE", tco_late, date=f[TCO], deadline=tco.value, citation=tco.cite)
    s.emit("TCO_NOT_PROVIDED", f[TCO].isna().to_numpy(), deadline=tco.value, citation=tco.cite)
    s.counted = f[~s.late]
    s.order = date_order(s.counted[APP_DATE])
    s.credits = s.counted[CREDITS].astype("int64")
    s.counting()


def category_limits_489f_b2(s: Residential) -> None:
    """C.52:27D-489f b.(2)(a)-(d): the credits of each Category's bucket, or each South Jersey
    category's own part of bucket (a), may not exceed its limit; the running total is the row's
    Bucket Cumulative."""
    group = s.across["group"].to_numpy(dtype=object)
    tiers = {t.label: t for t in s.rules["buckets"]}
    limit = np.array([tiers[g].value if g in tiers else 0 for g in pd.unique(group)], dtype=np.int64)
    at = pd.Index(pd.unique(group)).get_indexer(group)
    cite = np.array([tiers[g].cite if g in tiers else "" for g in pd.unique(group)], dtype=object)
    run = s.running_total(group, limit[at], cite[at], group)
    if run is not None:
        s.cumulative[run.index] = run.to_numpy()


def bucket_totals_489f_b2a(s: Residential) -> None:
    """C.52:27D-489f b.(2)(a): a whole bucket's credits may not exceed its total limit, beyond the
    limits of its categories."""
    bucket, n = s.across["bucket"].to_numpy(dtype=object), len(s.across)
    for t in s.rules["bucket_totals"]:
        in_bucket = bucket == t.extra["bucket"]
        every = np.full(n, t.label, dtype=object)
        s.running_total(np.where(in_bucket, t.label, None), np.full(n, t.value, dtype=np.int64), np.full(n, t.cite, dtype=object), every)


def program_total_489f_b2(s: Residential) -> None:
    """C.52:27D-489f b.(2): the credits approved for all qualified residential projects may not
    exceed the program total."""
    total, n = s.rules["program_total"], len(s.across)
    s.running_total(np.full(n, "all", dtype=object), np.full(n, total.value, dtype=np.int64), np.full(n, total.cite, dtype=object),
                    np.full(n, "all qualified residential projects", dtype=object))  # fmt: skip


STEPS = (
    pledge_489f_b1,
    project_limit_489f_b2e,
    deadlines_489f_b2e,
    category_limits_489f_b2,
    bucket_totals_489f_b2a,
    program_total_489f_b2,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Residential(frame, rules, context), STEPS)
    computed = pd.DataFrame(
        {
            "Pledge Limit ($)": pd.array(s.pledge.cents(), dtype="Int64"),
            "Project Credit Limit ($)": pd.array(s.project_limit.to_numpy(), dtype="Int64"),
            "Bucket": s.groups["bucket"].to_numpy(),
            "Bucket Cumulative ($)": s.cumulative,
        },
        index=s.idx,
    )
    return Calculation(computed, s.findings, ineligible=pd.Series(s.late, index=s.idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Each bucket's credits requested (rows that count) against its limit."""
    rows = frame[~status.isin(["Invalid", "Ineligible"])]
    groups = bucket_groups(rows, rules)
    lines = []
    for t in rules["buckets"]:
        mask = (groups["group"] == t.label).to_numpy()
        lines.append((t.label, t.value, int(rows.loc[mask, CREDITS].sum()), int(mask.sum())))
    for t in rules["bucket_totals"]:
        mask = (groups["bucket"] == t.extra["bucket"]).to_numpy()
        lines.append((t.label, t.value, int(rows.loc[mask, CREDITS].sum()), int(mask.sum())))
    total = rules["program_total"]
    lines.append(("all buckets", total.value, int(rows[CREDITS].sum()), len(rows)))
    table = pd.DataFrame(lines, columns=["Bucket", "Limit ($)", "Credits Requested ($)", "Projects"])
    table["Remaining ($)"] = table["Limit ($)"] - table["Credits Requested ($)"]
    table["Over Limit"] = np.where(table["Remaining ($)"] < 0, "OVER", "")
    money = {"Limit ($)": "money", "Credits Requested ($)": "money", "Remaining ($)": "money"}
    return [SummaryTable("Each bucket's cumulative credits requested against its limit", table, money)]


def standing(records: pd.DataFrame, rules: Rules) -> dict[str, SummaryTable]:
    """The `ERG buckets` sheet of `njcredits portfolio`: each limit's credits requested over the latest
    version of every application (`records`: the ledger's, with their portfolio fields and Status;
    neither Invalid nor Ineligible counts), against the limit: each Category limit of b.(2), the (a)
    total and the program total."""
    columns = ["Bucket", "Limit ($)", "Credits Requested ($)", "Applications", "Workbooks", "Remaining ($)", "Over By ($)"]
    money = {c: "money" for c in columns if c.endswith("($)")}
    counted = records[~records["status"].isin(["Invalid", "Ineligible"]) & records["credits"].notna()]
    groups = bucket_groups(pd.DataFrame({CATEGORY: counted["category"].to_numpy(dtype=object)}), rules)
    credits = pd.array(counted["credits"], dtype="Int64").astype("int64")
    lines = [(t.label, t.value, groups["group"].eq(t.label).to_numpy()) for t in rules["buckets"]]
    lines += [(t.label, t.value, groups["bucket"].eq(t.extra["bucket"]).to_numpy()) for t in rules["bucket_totals"]]
    lines.append(("all buckets", rules["program_total"].value, np.ones(len(counted), dtype=bool)))
    workbooks = counted["book"].to_numpy(dtype=object)
    table = pd.DataFrame(
        [(label, limit, int(credits[m].sum()), int(m.sum()), len(set(workbooks[m]))) for label, limit, m in lines], columns=columns[:5]
    )
    table["Remaining ($)"] = (table["Limit ($)"] - table["Credits Requested ($)"]).clip(lower=0)
    table["Over By ($)"] = (table["Credits Requested ($)"] - table["Limit ($)"]).clip(lower=0)
    title = "ERG buckets: the credits requested of each limit of C.52:27D-489f b.(2), over the latest version of every application"
    return {"ERG buckets": SummaryTable(title, table, money)}
