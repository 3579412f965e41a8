"""ERG qualified residential credits: tables of cases for README, sheet `ERG_Residential` (C.52:27D-489f b.)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from conftest import typed_frame
from helpers import run_rows

from batch.programs.erg_residential import steps as erg_residential

D = dt.date
BASE = {
    "Project ID": "P",
    "Category": "Other ERG Incentive Area",
    "Application Date": D(2015, 1, 5),
    "Temporary Certificate of Occupancy Date": D(2017, 1, 1),
    "Projected Annual Incremental Revenue ($)": 1_000_000,
    "Annual Incentive Grant ($)": 700_000,
    "Credits Requested ($)": 5_000_000,
}


def rows(*changes):
    return run_rows(erg_residential, [{**BASE, "Project ID": f"P-{i}", **c} for i, c in enumerate(changes)])


GZ_FROM_CATEGORY, GZ_CONFLICT, OVER = "GROWTH_ZONE_FROM_CATEGORY", "GROWTH_ZONE_CATEGORY_CONFLICT", "PLEDGE_OVER_LIMIT"

SJGZ, GZOSJ, DIST, OTHER = (
    "South Jersey Growth Zone",
    "Growth Zone Outside South Jersey",
    "Distressed, Deep Poverty or Highlands",
    "Other ERG Incentive Area",
)


def pledge(category: str, growth_zone: str, grant: float) -> dict:
    return {"Category": category, "Growth Zone": growth_zone, "Annual Incentive Grant ($)": grant}


PLEDGE_CASES = [
    # (change, pledge limit, codes). Revenue 1,000,000: 75% = 750,000; 85% in a Growth Zone = 850,000.
    # b.(1): "Up to an average of 75 percent ... or 85 percent ... in a Garden State Growth Zone"
    # bucket (d), no Growth Zone: 75%, at the limit, one cent below and one cent above
    (pledge(OTHER, "", 750_000), 750_000, []),
    (pledge(OTHER, "", 749_999.99), 750_000, []),
    (pledge(OTHER, "", 750_000.01), 750_000, [OVER]),
    # a category that names no Growth Zone, outside (c) and (d): the column decides (Y 85%, N 75%)
    (pledge("Commuter Rail Transit Hub", "Y", 850_000), 850_000, []),
    (pledge("Commuter Rail Transit Hub", "Y", 849_999.99), 850_000, []),
    (pledge("Commuter Rail Transit Hub", "Y", 850_000.01), 850_000, [OVER]),
    (pledge("Commuter Rail Transit Hub", "N", 750_000.01), 750_000, [OVER]),
    (pledge("South Jersey MRI 400+", "Y", 850_000), 850_000, []),
    # a Growth Zone category gets 85% whatever the column says; N or blank: info, the category decided
    (pledge(SJGZ, "Y", 850_000), 850_000, []),
    (pledge(SJGZ, "N", 850_000), 850_000, [GZ_FROM_CATEGORY]),
    (pledge(SJGZ, "", 849_999.99), 850_000, [GZ_FROM_CATEGORY]),
    (pledge(SJGZ, "", 850_000.01), 850_000, [GZ_FROM_CATEGORY, OVER]),
    (pledge(GZOSJ, "Y", 850_000.01), 850_000, [OVER]),
    (pledge(GZOSJ, "N", 850_000), 850_000, [GZ_FROM_CATEGORY]),
    (pledge(GZOSJ, "", 850_000.01), 850_000, [GZ_FROM_CATEGORY, OVER]),
    # Growth Zone = Y in bucket (c) or (d), "otherwise not qualifying" under (a) or (b): the category
    # decides, 75%, with the warning
    (pledge(DIST, "Y", 750_000), 750_000, [GZ_CONFLICT]),
    (pledge(DIST, "Y", 750_000.01), 750_000, [GZ_CONFLICT, OVER]),
    (pledge(DIST, "N", 750_000), 750_000, []),
    (pledge(OTHER, "Y", 749_999.99), 750_000, [GZ_CONFLICT]),
    (pledge(OTHER, "Y", 850_000), 750_000, [GZ_CONFLICT, OVER]),
    # 75% x 333,333.33 = 249,999.9975 -> shown 250,000.00; a grant of 250,000.00 is over the exact limit
    ({"Projected Annual Incremental Revenue ($)": 333_333.33, "Annual Incentive Grant ($)": 250_000}, 250_000, [OVER]),
]


@pytest.mark.parametrize("change,limit,codes", PLEDGE_CASES)
def test_pledge_limit(change, limit, codes):
    got = rows(change)[0]
    assert got["Pledge Limit ($)"] == limit and got["codes"] == codes


def test_growth_zone_messages():
    from batch.programs._kit.findings import render
    from batch.programs._kit.rules import load

    frame = typed_frame(
        erg_residential.SPEC,
        [
            {**BASE, "Project ID": "A", "Category": SJGZ, "Growth Zone": "N"},
            {**BASE, "Project ID": "B", "Category": OTHER, "Growth Zone": "Y"},
        ],
    )
    rules = load("erg_residential")
    calc = erg_residential.calculate(frame, rules)
    raw = pd.concat([f for f in calc.findings if len(f)])
    shown = render(raw, "ERG_Residential", rules.findings).set_index("Code")
    info, warning = shown.loc[GZ_FROM_CATEGORY], shown.loc[GZ_CONFLICT]
    assert (info["Severity"], info["Column"], warning["Severity"], warning["Column"]) == ("info", "Growth Zone", "warning", "Growth Zone")
    # 85% x 1,000,000 = 850,000 from the category; 75% = 750,000 in bucket (d) despite Y
    assert "85%" in info["Message"] and "$850,000.00" in info["Message"] and "category decided" in info["Message"]
    assert "bucket (d)" in warning["Message"] and "75%" in warning["Message"] and "not 85%" in warning["Message"]
    assert "b.(2)(c), b.(2)(d)" in warning["Citation"]


PROJECT_CASES = [
    # b.(2)(e): "not more than $40,000,000 ... in a deep poverty pocket or distressed municipality and not
    # more than $20,000,000 ... to any other"; a blank Deep Poverty column means No
    ({"Credits Requested ($)": 20_000_000}, 20_000_000, False),
    ({"Credits Requested ($)": 19_999_999.99}, 20_000_000, False),
    ({"Credits Requested ($)": 20_000_000.01}, 20_000_000, True),
    ({"Credits Requested ($)": 20_000_000.01, "Deep Poverty Pocket or Distressed Municipality": "N"}, 20_000_000, True),
    (
        {
            "Credits Requested ($)": 40_000_000,
            "Deep Poverty Pocket or Distressed Municipality": "Y",
            "Category": "Distressed, Deep Poverty or Highlands",
        },
        40_000_000,
        False,
    ),
    (
        {
            "Credits Requested ($)": 40_000_000.01,
            "Deep Poverty Pocket or Distressed Municipality": "Y",
            "Category": "Distressed, Deep Poverty or Highlands",
        },
        40_000_000,
        True,
    ),
]


@pytest.mark.parametrize("change,limit,over", PROJECT_CASES)
def test_project_credit_limit(change, limit, over):
    got = rows(change)[0]
    assert got["Project Credit Limit ($)"] == limit and ("PROJECT_CREDIT_LIMIT_EXCEEDED" in got["codes"]) is over


@pytest.mark.parametrize(
    "category,bucket",
    [
        ("South Jersey Growth Zone", "a"),
        ("South Jersey MRI 400+", "a"),
        ("Commuter Rail Transit Hub", "b"),
        ("Growth Zone Outside South Jersey", "b"),
        ("Disaster Recovery", "b"),
        ("Hudson SDA Transitional Aid", "b"),
        ("Distressed, Deep Poverty or Highlands", "c"),
        ("Other ERG Incentive Area", "d"),
    ],
)
def test_bucket_of_each_category(category, bucket):
    assert rows({"Category": category})[0]["Bucket"] == bucket


def fill(category: str, limit: int, extra: float, distressed="Y"):
    """Rows of 40,000,000 (or less) in one category adding up to `limit + extra` dollars."""
    out, total, day = [], 0, 1
    target = limit + extra
    while total < target:
        amount = min(40_000_000, target - total)
        out.append(
            {
                "Category": category,
                "Credits Requested ($)": amount,
                "Application Date": D(2014, 1, day),
                "Deep Poverty Pocket or Distressed Municipality": distressed,
            }
        )
        total += amount
        day += 1
    return out


BUCKET_CASES = [
    # each limit reached exactly, then crossed by one dollar
    ("South Jersey Growth Zone", 175_000_000),
    ("South Jersey MRI 400+", 75_000_000),
    ("Disaster Recovery", 250_000_000),
    ("Distressed, Deep Poverty or Highlands", 75_000_000),
    ("Other ERG Incentive Area", 25_000_000),
]


@pytest.mark.parametrize("category,limit", BUCKET_CASES)
@pytest.mark.parametrize("extra", [0, 1])
def test_bucket_limit_crossed_by_one_dollar(category, limit, extra):
    got = rows(*fill(category, limit, extra))
    flagged = ["BUCKET_LIMIT_EXCEEDED" in g["codes"] for g in got]
    assert got[-1]["Bucket Cumulative ($)"] == limit + extra
    assert flagged == [False] * (len(got) - 1) + [bool(extra)]


def test_every_later_row_is_flagged():
    got = rows(
        {"Credits Requested ($)": 20_000_000, "Application Date": D(2014, 1, 1)},
        {"Credits Requested ($)": 6_000_000, "Application Date": D(2014, 2, 1)},
        {"Credits Requested ($)": 1_000, "Application Date": D(2014, 3, 1)},
    )
    # 20,000,000 + 6,000,000 = 26,000,000 > 25,000,000 from the second row on
    assert [("BUCKET_LIMIT_EXCEEDED" in g["codes"]) for g in got] == [False, True, True]


def test_south_jersey_total_250_000_000():
    # 175,000,000 in the Growth Zone category and 75,000,000 in MRI 400+ fill (a)'s 250,000,000 exactly;
    # one more dollar in MRI 400+ crosses its own 75,000,000 and (a)'s 250,000,000
    sj = fill("South Jersey Growth Zone", 175_000_000, 0) + fill("South Jersey MRI 400+", 75_000_000, 0)
    got = rows(*sj)
    assert not any("BUCKET_LIMIT_EXCEEDED" in g["codes"] for g in got)
    extra = {"Category": "South Jersey MRI 400+", "Credits Requested ($)": 1, "Application Date": D(2014, 12, 31)}
    got = rows(*sj, extra)
    assert got[-1]["codes"].count("BUCKET_LIMIT_EXCEEDED") == 2  # its category's 75,000,000 and (a)'s 250,000,000


def test_program_total_600_000_000():
    rows_ = (
        fill("South Jersey Growth Zone", 175_000_000, 0)
        + fill("South Jersey MRI 400+", 75_000_000, 0)
        + fill("Disaster Recovery", 250_000_000, 0)
        + fill("Distressed, Deep Poverty or Highlands", 75_000_000, 0)
        + fill("Other ERG Incentive Area", 25_000_000, 0)
    )  # 600,000,000 exactly
    got = rows(*rows_)
    assert not any("BUCKET_LIMIT_EXCEEDED" in g["codes"] for g in got)
    more = {"Category": "Commuter Rail Transit Hub", "Credits Requested ($)": 0.01, "Application Date": D(2015, 6, 1)}
    got = rows(*rows_, more)
    # (b) has 250,000,000.01: over its own limit and over 600,000,000 overall
    assert got[-1]["codes"].count("BUCKET_LIMIT_EXCEEDED") == 2


def test_application_date_order_not_row_order():
    got = rows(
        {"Credits Requested ($)": 20_000_000, "Application Date": D(2014, 3, 1)},
        {"Credits Requested ($)": 20_000_000, "Application Date": D(2014, 1, 1)},
    )
    assert [("BUCKET_LIMIT_EXCEEDED" in g["codes"]) for g in got] == [True, False]
    assert [g["Bucket Cumulative ($)"] for g in got] == [40_000_000, 20_000_000]


DEADLINE_CASES = [
    ({"Application Date": D(2016, 6, 30)}, [], False),
    ({"Application Date": D(2016, 7, 1)}, ["APPLICATION_AFTER_DEADLINE"], True),
    ({"Temporary Certificate of Occupancy Date": D(2018, 7, 28)}, [], False),
    ({"Temporary Certificate of Occupancy Date": D(2018, 7, 29)}, ["TCO_AFTER_DEADLINE"], False),
    ({"Temporary Certificate of Occupancy Date": ""}, ["TCO_NOT_PROVIDED"], False),
]


@pytest.mark.parametrize("change,codes,ineligible", DEADLINE_CASES)
def test_deadlines(change, codes, ineligible):
    got = rows(change)[0]
    assert got["codes"] == codes and got["ineligible"] is ineligible


def test_ineligible_rows_do_not_count():
    got = rows(
        {"Credits Requested ($)": 20_000_000, "Application Date": D(2016, 7, 1)},
        {"Credits Requested ($)": 20_000_000, "Application Date": D(2016, 1, 1)},
    )
    assert got[0]["Bucket Cumulative ($)"] is None and got[1]["Bucket Cumulative ($)"] == 20_000_000
    assert "BUCKET_LIMIT_EXCEEDED" not in got[1]["codes"]


def test_shuffled_rows_same_results():
    changes = [{"Credits Requested ($)": 10_000_000, "Application Date": D(2014, 1, d)} for d in (5, 1, 3, 2, 4)]
    base = rows(*changes)
    expected = {i: (g["codes"], g["Bucket Cumulative ($)"]) for i, g in enumerate(base)}
    rng = np.random.default_rng(11)
    for _ in range(4):
        perm = rng.permutation(len(changes))
        got = rows(*[changes[i] for i in perm])
        assert {int(p): (g["codes"], g["Bucket Cumulative ($)"]) for p, g in zip(perm, got, strict=False)} == expected


# -- the portfolio: applications of other workbooks of the run and of earlier runs (RunContext.portfolio)


def far(pid, category, credits, date, workbook="nov.xlsx", tie=None):
    """An application of another workbook, as the run gives it (its fields, the record's names)."""
    return {"category": category, "date": date.isoformat(), "credits": round(credits * 100), "limit_groups": None,
            "sheet": "ERG_Residential", "record_id": pid, "workbook": workbook, "run_date": "2026-11-30"}  # fmt: skip


def across(outside, *changes):
    from batch.programs._kit.calculation import RunContext
    from batch.programs._kit.rules import load

    frame = typed_frame(erg_residential.SPEC, [{**BASE, "Project ID": f"P-{i}", **c} for i, c in enumerate(changes)])
    context = RunContext(D(2026, 12, 1), portfolio=pd.DataFrame(outside), workbook="dec.xlsx", run_date="2026-12-01")
    calc = erg_residential.calculate(frame, load("erg_residential"), context)
    found = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])])
    codes = [found.loc[found["row"] == i, "code"].tolist() for i in frame.index]
    return codes, calc.computed["Bucket Cumulative ($)"].tolist(), found


B = "BUCKET_LIMIT_EXCEEDED"
ERG_PORTFOLIO_CASES = [
    # (d) Other ERG Incentive Area, $25,000,000: 20,000,000 elsewhere (2014) + 5,000,000 here (2015) = 25,000,000 exactly
    ("at the bucket limit", [far("N-1", OTHER, 20_000_000, D(2014, 6, 1))], [{}], [[]], [25_000_000]),
    # one cent more: 25,000,000.01 > 25,000,000
    ("one cent over it", [far("N-1", OTHER, 20_000_000.01, D(2014, 6, 1))], [{}], [[B]], [25_000_000.01]),
    # the application elsewhere is dated after this one: 5,000,000 by this row's date
    ("a later application elsewhere", [far("N-1", OTHER, 24_000_000, D(2015, 6, 1))], [{}], [[]], [5_000_000]),
    # on one date the earlier run's application comes first: 21,000,000 + 5,000,000 = 26,000,000
    ("same date: earlier runs first", [far("N-1", OTHER, 21_000_000, BASE["Application Date"])], [{}], [[B]], [26_000_000]),
    # another bucket's application counts only in the program total: (c) 70,000,000 elsewhere, (d) 5,000,000 here
    ("another bucket", [far("N-1", DIST, 70_000_000, D(2014, 6, 1))], [{}], [[]], [5_000_000]),
    # (a): 175,000,000 Growth Zone and 74,000,000 MRI 400+ elsewhere, 1,000,000.01 MRI 400+ here: MRI 75,000,000.01 >
    # 75,000,000, and (a)'s total 250,000,000.01 > 250,000,000
    ("the (a) total", [far("N-1", SJGZ, 175_000_000, D(2014, 6, 1)), far("N-2", "South Jersey MRI 400+", 74_000_000, D(2014, 6, 1))],
     [{"Category": "South Jersey MRI 400+", "Credits Requested ($)": 1_000_000.01}], [[B, B]], [75_000_000.01]),
    # the program total: 599,000,000 of other buckets elsewhere + 1,000,000.01 here = 600,000,000.01 > 600,000,000
    ("the $600,000,000", [far("N-1", SJGZ, 175_000_000, D(2014, 6, 1)), far("N-2", "South Jersey MRI 400+", 75_000_000, D(2014, 6, 1)),
                          far("N-3", "Disaster Recovery", 250_000_000, D(2014, 6, 1)), far("N-4", DIST, 75_000_000, D(2014, 6, 1)),
                          far("N-5", OTHER, 24_000_000, D(2014, 6, 1))],
     [{"Credits Requested ($)": 1_000_000.01}], [[B, B]], [25_000_000.01]),
]  # fmt: skip


@pytest.mark.parametrize("name,outside,changes,expected,cumulative", ERG_PORTFOLIO_CASES, ids=[c[0] for c in ERG_PORTFOLIO_CASES])
def test_the_buckets_count_the_portfolio(name, outside, changes, expected, cumulative):
    codes, got, _found = across(outside, *changes)
    assert codes == expected
    assert got == [round(c * 100) for c in cumulative]


def test_a_bucket_finding_names_the_applications_of_other_workbooks():
    from batch.programs._kit.findings import render
    from batch.programs._kit.rules import load

    # twelve applications of $2,000,000 in (d) elsewhere (24,000,000) and 5,000,000 here: 29,000,000 > 25,000,000
    outside = [far(f"N-{i}", OTHER, 2_000_000, D(2014, 6, i)) for i in range(1, 13)]
    codes, _cumulative, found = across(outside, {})
    assert codes == [[B]]
    message = render(found, "ERG_Residential", load("erg_residential").findings)["Message"].iloc[0]
    named = "; ".join(f"ERG_Residential N-{i} (nov.xlsx, run 2026-11-30)" for i in range(1, 11))
    assert message.startswith(
        "With this project's $5,000,000.00, credits requested in (d) reach $29,000,000.00 by 2015-01-05, $24,000,000.00 of it in "
        f"other workbooks ({named}; and 2 more), more than its limit of $25,000,000.00"
    ), message


def test_the_groups_an_application_counts_in():
    frame = typed_frame(erg_residential.SPEC, [{**BASE, "Project ID": "P-1", "Category": SJGZ}, {**BASE, "Project ID": "P-2"}])
    kept = erg_residential.portfolio_fields(frame)
    assert kept["limit_groups"].tolist() == [["(a) South Jersey Growth Zone", "(a) total", "all"], ["(d)", "all"]]
    assert kept["credits"].tolist() == [500_000_000, 500_000_000] and kept["date"].tolist() == ["2015-01-05", "2015-01-05"]
