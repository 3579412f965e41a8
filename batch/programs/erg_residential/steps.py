"""ERG qualified residential project tax credits (README, sheet `ERG_Residential`; C.52:27D-489f b.).

Pure and vectorized. The bucket limits hold across rows: running totals of Credits Requested
in Application Date order (row order breaking ties) per Category limit, per bucket (a), and
for the whole program, each with group-wise cumulative sums.

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
from batch.programs._kit.steps import date_order, pick, running_over
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


class Residential(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far."""

    def __init__(self, f: pd.DataFrame, rules: Rules):
        super().__init__(f, rules)
        self.groups = bucket_groups(f, rules)
        self.cumulative = pd.Series(pd.NA, index=self.idx, dtype="Int64")  # the running total of the row's Category limit

    def running_total(self, key: pd.Series, limit: pd.Series, cite: pd.Series, name: pd.Series) -> pd.Series | None:
        """Hold the running total of Credits Requested of the rows that count, in each group of
        `key` (blank: in none), to `limit`, flagging the row that crosses it and every later row of
        its group. All four are indexed like `counted`. Returns the running totals (None: no group)."""
        keep = key.notna().to_numpy()
        if not keep.any():
            return None
        order = self.order[keep[self.counted.index.get_indexer(self.order)]]
        run, over = running_over(order, key[keep], self.credits[keep], limit[keep])
        hit = over.index[over.to_numpy()]
        self.findings.append(
            emit(
                "BUCKET_LIMIT_EXCEEDED",
                hit,
                credits=self.f[CREDITS],
                bucket=name,
                cumulative=run,
                limit=limit,
                date=self.f[APP_DATE],
                citation=cite,
            )
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


def category_limits_489f_b2(s: Residential) -> None:
    """C.52:27D-489f b.(2)(a)-(d): the credits of each Category's bucket, or each South Jersey
    category's own part of bucket (a), may not exceed its limit; the running total is the row's
    Bucket Cumulative."""
    groups = s.groups.loc[s.counted.index]
    run = s.running_total(groups["group"], groups["limit"].astype("int64"), groups["cite"], groups["group"])
    if run is not None:
        s.cumulative[run.index] = run.to_numpy()


def bucket_totals_489f_b2a(s: Residential) -> None:
    """C.52:27D-489f b.(2)(a): a whole bucket's credits may not exceed its total limit, beyond the
    limits of its categories."""
    ix = s.counted.index
    bucket = s.groups.loc[ix, "bucket"]
    for t in s.rules["bucket_totals"]:
        in_bucket = (bucket == t.extra["bucket"]).to_numpy()
        s.running_total(
            pd.Series(np.where(in_bucket, t.label, None), index=ix),
            pd.Series(np.where(in_bucket, t.value, np.iinfo(np.int64).max), index=ix),
            pd.Series(t.cite, index=ix),
            pd.Series(t.label, index=ix),
        )


def program_total_489f_b2(s: Residential) -> None:
    """C.52:27D-489f b.(2): the credits approved for all qualified residential projects may not
    exceed the program total."""
    ix = s.counted.index
    total = s.rules["program_total"]
    s.running_total(
        pd.Series("all", index=ix),
        pd.Series(total.value, index=ix),
        pd.Series(total.cite, index=ix),
        pd.Series("all qualified residential projects", index=ix),
    )


STEPS = (
    pledge_489f_b1,
    project_limit_489f_b2e,
    deadlines_489f_b2e,
    category_limits_489f_b2,
    bucket_totals_489f_b2a,
    program_total_489f_b2,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Residential(frame, rules), STEPS)
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
