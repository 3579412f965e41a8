"""ERG qualified residential project tax credits (README, sheet `ERG_Residential`; C.52:27D-489f b.).

Pure and vectorized. The bucket limits hold across rows: running totals of Credits Requested
in Application Date order (row order breaking ties) per Category limit, per bucket (a), and
for the whole program, each with group-wise cumulative sums.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable
from batch.calculators.shared import date_order, pick, running_over
from batch.exact import Q
from batch.findings import emit
from batch.rules import Rules, lookup
from validators.erg_residential import ERG_RESIDENTIAL

SPEC = ERG_RESIDENTIAL
RULES = "erg_residential"
AWARD_COLUMN = "Credits Requested ($)"
MONTH_COLUMN = "Application Date"  # the Summary's by-month pivot
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = "Category"
YEAR_COLUMN = "Application Date"

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


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    idx = frame.index
    findings = []

    # b.(1): the pledge limit, 85% in a Garden State Growth Zone. A category that names a Growth
    # Zone decides Y; a category of bucket (c) or (d) decides N (those buckets are for projects not
    # qualifying under (a) or (b), and every Growth Zone project does); otherwise the column decides.
    groups = bucket_groups(frame, rules)
    said_gz = frame[GZ].to_numpy(dtype=bool)
    gz_categories, excluded = rules["growth_zone_categories"], rules["growth_zone_excluded_buckets"]
    by_category = frame[CATEGORY].isin(gz_categories.value).to_numpy()
    conflict = said_gz & groups["bucket"].isin(excluded.value).to_numpy()
    in_gz = by_category | (said_gz & ~conflict)
    share, share_cite = lookup(rules["pledge_share"], _yn(pd.Series(in_gz, idx)))
    share_q = Q.from_fractions(share)
    pledge = Q(frame[REVENUE]) * share_q
    limit_cents = pd.Series(pledge.cents(), idx)
    share_text = share.map(lambda s: f"{float(s):.0%}")
    pledge_fields = dict(category=frame[CATEGORY], share=share_text, limit=limit_cents, revenue=frame[REVENUE])
    findings.append(emit("GROWTH_ZONE_FROM_CATEGORY", idx[by_category & ~said_gz], citation=gz_categories.cite, **pledge_fields))
    findings.append(
        emit(
            "GROWTH_ZONE_CATEGORY_CONFLICT",
            idx[conflict],
            bucket=groups["bucket"],
            zone_share=f"{float(rules['pledge_share']['Y'].value):.0%}",
            citation=excluded.cite,
            **pledge_fields,
        )
    )
    over_pledge = Q(frame[GRANT]) > pledge
    findings.append(
        emit(
            "PLEDGE_OVER_LIMIT",
            idx[over_pledge],
            grant=frame[GRANT],
            limit=limit_cents,
            share=share_text,
            revenue=frame[REVENUE],
            citation=share_cite,
        )
    )

    # b.(2)(e): the project limit
    limit, limit_cite = lookup(rules["project_credit_limit"], _yn(frame[DISTRESSED]))
    limit = limit.astype("int64")
    over_project = (frame[CREDITS] > limit).to_numpy(dtype=bool)
    findings.append(emit("PROJECT_CREDIT_LIMIT_EXCEEDED", idx[over_project], credits=frame[CREDITS], limit=limit, citation=limit_cite))

    # b.(2)(e): deadlines
    deadline = rules["application_deadline"]
    late = (frame[APP_DATE] >= deadline.value).to_numpy(dtype=bool)
    findings.append(emit("APPLICATION_AFTER_DEADLINE", idx[late], date=frame[APP_DATE], deadline=deadline.value, citation=deadline.cite))
    tco = rules["tco_deadline"]
    tco_late = (frame[TCO] > tco.value).fillna(False).to_numpy(dtype=bool)
    findings.append(emit("TCO_AFTER_DEADLINE", idx[tco_late], date=frame[TCO], deadline=tco.value, citation=tco.cite))
    findings.append(emit("TCO_NOT_PROVIDED", idx[frame[TCO].isna().to_numpy()], deadline=tco.value, citation=tco.cite))

    # b.(2)(a)-(d): running totals, counting only rows the statute does not bar
    counts = ~late
    counted = frame[counts]
    order = date_order(counted[APP_DATE])
    credits = counted[CREDITS].astype("int64")
    cumulative = pd.Series(pd.NA, index=idx, dtype="Int64")
    levels = [
        (
            groups.loc[counted.index, "group"],
            groups.loc[counted.index, "limit"].astype("int64"),
            groups.loc[counted.index, "cite"],
            groups.loc[counted.index, "group"],
        )
    ]
    for t in rules["bucket_totals"]:
        in_bucket = (groups.loc[counted.index, "bucket"] == t.extra["bucket"]).to_numpy()
        key = pd.Series(np.where(in_bucket, t.label, None), index=counted.index)
        levels.append(
            (
                key,
                pd.Series(np.where(in_bucket, t.value, np.iinfo(np.int64).max), index=counted.index),
                pd.Series(t.cite, index=counted.index),
                pd.Series(t.label, index=counted.index),
            )
        )
    total = rules["program_total"]
    levels.append(
        (
            pd.Series("all", index=counted.index),
            pd.Series(total.value, index=counted.index),
            pd.Series(total.cite, index=counted.index),
            pd.Series("all qualified residential projects", index=counted.index),
        )
    )
    for i, (key, lim, cite, name) in enumerate(levels):
        keep = key.notna().to_numpy()
        if not keep.any():
            continue
        sub_order = order[keep[counted.index.get_indexer(order)]]
        run, over = running_over(sub_order, key[keep], credits[keep], lim[keep])
        if i == 0:
            cumulative[run.index] = run.to_numpy()
        hit = over.index[over.to_numpy()]
        findings.append(
            emit(
                "BUCKET_LIMIT_EXCEEDED",
                hit,
                credits=frame[CREDITS],
                bucket=name,
                cumulative=run,
                limit=lim,
                date=frame[APP_DATE],
                citation=cite,
            )
        )

    computed = pd.DataFrame(
        {
            "Pledge Limit ($)": pd.array(pledge.cents(), dtype="Int64"),
            "Project Credit Limit ($)": pd.array(limit.to_numpy(), dtype="Int64"),
            "Bucket": groups["bucket"].to_numpy(),
            "Bucket Cumulative ($)": cumulative,
        },
        index=idx,
    )
    return Calculation(computed, findings, ineligible=pd.Series(late, index=idx))


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
