"""Grow NJ calculator: tables of cases per rule of README, sheet `GrowNJ`.

Every case starts from BASE, an eligible 2017 project in a Priority area of Bergen County:
min capex $40 x 10,000 sq ft = $400,000; jobs 50 new (min 35 new or 50 total); base $3,000;
gross $3,000 (cap $10,500); retained/job $1,500 (50%); annual 50 x $3,000 = $150,000
(cap $4,000,000; 90% of $1,000,000 withholdings = $900,000); total x 10 = $1,500,000.
Money in expectations is in dollars.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

import numpy as np
import pandas as pd
import pytest
from conftest import typed_frame

from batch import pipeline
from batch.programs import BY_NAME, AcrossRows
from batch.programs._kit import joined
from batch.programs._kit.calculation import PRIOR_COLUMNS, RunContext
from batch.programs._kit.findings import money_text, render
from batch.programs._kit.rules import load
from batch.programs.grow_nj import steps as grow_nj
from batch.programs.grow_nj.sheet import GROW_NJ
from validators.schema import validate

RULES = load("grow_nj")
D = dt.date

BASE = {
    "Project ID": "P-1",
    "Statute Version": "2017",
    "Application Date": D(2016, 1, 4),
    "County": "Bergen",
    "Area": "Priority",
    "Business Type": "Other",
    "Premises Type": "Non-Industrial Rehab",
    "Gross Leasable Area (sq ft)": 10_000,
    "Capital Investment ($)": 1_000_000,
    "New Full-Time Jobs": 50,
    "Retained Full-Time Jobs": 0,
    "Annual Withholdings ($)": 1_000_000,
    "Net Benefit ($)": 100_000_000,
}

MONEY = {
    "Minimum Capital Investment ($)",
    "Base Credit per Job ($)",
    "Bonus per Job ($)",
    "Gross Credit per Job ($)",
    "Retained Credit per Job ($)",
    "Annual Credit ($)",
    "Total Award ($)",
}


# A mega project that meets the definition: C.34:1B-243 "mega project" a.(2), "more than 1,000
# full-time employees ... created or retained" (1,001 new jobs; the (7) increase of 1,001+ jobs is $1,500)
MEGA_OK = {"Mega Project": "Y", "Mega Project Basis": "Port District", "New Full-Time Jobs": 1_001}


def run(*overrides: dict, context: RunContext | None = None):
    rows = [{**BASE, "Project ID": f"P-{i}", **o} for i, o in enumerate(overrides)]
    frame = typed_frame(GROW_NJ, rows)
    calc = grow_nj.calculate(frame, RULES, context or RunContext(dt.date(2026, 11, 30)))
    found = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])])
    codes = found.groupby("row")["code"].agg(list)
    out = []
    for i in frame.index:
        got = {k: (v / 100 if k in MONEY and not pd.isna(v) else v) for k, v in calc.computed.loc[i].items()}
        got["codes"] = codes.get(i, [])
        got["ineligible"] = bool(calc.ineligible.loc[i])
        out.append(got)
    return out


def check(override: dict, expected: dict, context: RunContext | None = None):
    got = run(override, context=context)[0]
    for key, value in expected.items():
        if key in MONEY:  # money compared exactly, in cents
            assert round(got[key] * 100) == round(value * 100), (key, got[key], got["Calculation"])
        elif isinstance(value, float):
            assert got[key] == pytest.approx(value), (key, got[key], got["Calculation"])
        else:
            assert got[key] == value, (key, got[key], got["Calculation"])
    return got


def test_base_case():
    check(
        {},
        {
            "Minimum Capital Investment ($)": 400_000,
            "Minimum New Jobs": 35,
            "Minimum Retained Jobs": 50,
            "Eligible": "Y",
            "Base Credit per Job ($)": 3_000,
            "Bonus per Job ($)": 0,
            "Gross Credit per Job ($)": 3_000,
            "Retained Credit per Job ($)": 1_500,
            "Annual Credit ($)": 150_000,
            "Total Award ($)": 1_500_000,
            "Commitment Period (years)": 15.0,
            "Net Benefit Ratio": 100_000_000 / 1_500_000,
            "codes": [],
        },
    )


CAPEX_CASES = [
    # $40 x 10,000 = $400,000: at it, a cent below, a cent above
    ("at minimum", {"Capital Investment ($)": 400_000}, 400_000, []),
    ("cent below", {"Capital Investment ($)": 399_999.99}, 400_000, ["CAPEX_BELOW_MINIMUM"]),
    ("cent above", {"Capital Investment ($)": 400_000.01}, 400_000, []),
    # each premises rate: $20, $60, $120 per sq ft
    ("industrial rehab", {"Premises Type": "Industrial Rehab", "Capital Investment ($)": 200_000}, 200_000, []),
    ("industrial new", {"Premises Type": "Industrial New", "Capital Investment ($)": 599_999.99}, 600_000, ["CAPEX_BELOW_MINIMUM"]),
    ("non-industrial new", {"Premises Type": "Non-Industrial New", "Capital Investment ($)": 1_200_000}, 1_200_000, []),
    # Growth Zone: x 2/3 -> $266,666.666...; shown rounded to $266,666.67, compared exactly
    ("growth zone exact third", {"Area": "Growth Zone", "Capital Investment ($)": 266_666.67}, 266_666.67, []),
    ("growth zone cent below", {"Area": "Growth Zone", "Capital Investment ($)": 266_666.66}, 266_666.67, ["CAPEX_BELOW_MINIMUM"]),
    # South Jersey county: the same reduction
    ("south jersey county", {"County": "Cape May", "Capital Investment ($)": 266_666.67}, 266_666.67, []),
    ("fractional area", {"Gross Leasable Area (sq ft)": 10_000.5, "Capital Investment ($)": 400_019.99}, 400_020, ["CAPEX_BELOW_MINIMUM"]),
    # the area is read as the decimal typed: $120 x 10,000.004 sq ft = $1,200,000.48 exactly
    (
        "area to the thousandth",
        {"Premises Type": "Non-Industrial New", "Gross Leasable Area (sq ft)": 10_000.004, "Capital Investment ($)": 1_200_000.48},
        1_200_000.48,
        [],
    ),  # fmt: skip
    (
        "area to the thousandth, a cent short",
        {"Premises Type": "Non-Industrial New", "Gross Leasable Area (sq ft)": 10_000.004, "Capital Investment ($)": 1_200_000.47},
        1_200_000.48,
        ["CAPEX_BELOW_MINIMUM"],
    ),  # fmt: skip
]


@pytest.mark.parametrize("name,override,minimum,codes", CAPEX_CASES, ids=[c[0] for c in CAPEX_CASES])
def test_minimum_capital_investment(name, override, minimum, codes):
    got = check(override, {"Minimum Capital Investment ($)": minimum})
    assert [c for c in got["codes"] if c == "CAPEX_BELOW_MINIMUM"] == codes
    assert got["Eligible"] == ("N" if codes else "Y") and got["ineligible"] == bool(codes)
    if codes:  # not eligible: award 0, per-job columns still shown
        assert got["Annual Credit ($)"] == 0 and got["Total Award ($)"] == 0 and got["Gross Credit per Job ($)"] > 0


JOB_CASES = [
    # (name, override, min new, min total, eligible)
    ("other 35 new", {"New Full-Time Jobs": 35}, 35, 50, True),
    ("other 34 new + 15 retained = 49", {"New Full-Time Jobs": 34, "Retained Full-Time Jobs": 15}, 35, 50, False),
    ("other 34 new + 16 retained = 50", {"New Full-Time Jobs": 34, "Retained Full-Time Jobs": 16}, 35, 50, True),
    ("other 0 new + 50 retained", {"New Full-Time Jobs": 0, "Retained Full-Time Jobs": 50}, 35, 50, True),
    ("tech 10 new", {"Business Type": "Technology Startup", "New Full-Time Jobs": 10}, 10, 25, True),
    (
        "tech 9 new + 15 retained",
        {"Business Type": "Technology Startup", "New Full-Time Jobs": 9, "Retained Full-Time Jobs": 15},
        10,
        25,
        False,
    ),
    (
        "manufacturing 9 new + 16 retained",
        {"Business Type": "Manufacturing", "New Full-Time Jobs": 9, "Retained Full-Time Jobs": 16},
        10,
        25,
        True,
    ),
    ("targeted 25 new", {"Targeted Industry": "Y", "New Full-Time Jobs": 25}, 25, 35, True),
    ("targeted 24 new", {"Targeted Industry": "Y", "New Full-Time Jobs": 24}, 25, 35, False),
    # Growth Zone: 35 x 3/4 = 26.25 new, 50 x 3/4 = 37.5 total
    ("growth zone 27 new", {"Area": "Growth Zone", "New Full-Time Jobs": 27}, 26.25, 37.5, True),
    ("growth zone 26 new", {"Area": "Growth Zone", "New Full-Time Jobs": 26}, 26.25, 37.5, False),
    (
        "growth zone 26 new + 12 retained = 38",
        {"Area": "Growth Zone", "New Full-Time Jobs": 26, "Retained Full-Time Jobs": 12},
        26.25,
        37.5,
        True,
    ),
    ("south jersey tech 7.5", {"County": "Camden", "Business Type": "Technology Startup", "New Full-Time Jobs": 7}, 7.5, 18.75, False),
    ("south jersey tech 8", {"County": "Camden", "Business Type": "Technology Startup", "New Full-Time Jobs": 8}, 7.5, 18.75, True),
]


@pytest.mark.parametrize("name,override,min_new,min_total,eligible", JOB_CASES, ids=[c[0] for c in JOB_CASES])
def test_minimum_jobs(name, override, min_new, min_total, eligible):
    got = check(override, {"Minimum New Jobs": float(min_new), "Minimum Retained Jobs": float(min_total)})
    assert ("JOBS_BELOW_MINIMUM" in got["codes"]) is (not eligible)


DATE_CASES = [
    ("day before the deadline", {"Application Date": D(2019, 6, 30)}, []),
    ("on the deadline", {"Application Date": D(2019, 7, 1)}, ["APPLICATION_AFTER_DEADLINE"]),
    # 247 b.(4): a mega project applies "within four years" of 2013-09-18: on 2017-09-18 in time
    ("mega on 2017-09-17", {**MEGA_OK, "Application Date": D(2017, 9, 17)}, []),
    ("mega on 2017-09-18", {**MEGA_OK, "Application Date": D(2017, 9, 18)}, []),
    ("mega on 2017-09-19", {**MEGA_OK, "Application Date": D(2017, 9, 19)}, ["MEGA_PROJECT_APPLICATION_LATE"]),
    ("not mega on 2017-09-19", {"Application Date": D(2017, 9, 19)}, []),
]


@pytest.mark.parametrize("name,override,codes", DATE_CASES, ids=[c[0] for c in DATE_CASES])
def test_application_dates(name, override, codes):
    got = run(override)[0]
    assert [c for c in got["codes"] if c in ("APPLICATION_AFTER_DEADLINE", "MEGA_PROJECT_APPLICATION_LATE")] == codes
    # a late mega application bars only the mega-project credit: the row is computed as ordinary, not ineligible
    assert got["ineligible"] == ("APPLICATION_AFTER_DEADLINE" in codes)


@pytest.mark.parametrize(
    "override,bad",
    [
        ({"Final Point of Sale Retail": "Y"}, True),
        ({"Final Point of Sale Retail": "Y", "Area": "Distressed"}, True),
        ({"Final Point of Sale Retail": "Y", "Area": "Urban Transit Hub"}, True),
        ({"Final Point of Sale Retail": "Y", "Area": "Other Eligible"}, True),
        ({"Final Point of Sale Retail": "Y", "Area": "Create Zone"}, True),
        ({"Final Point of Sale Retail": "Y", "Statute Version": "2014"}, True),
        ({"Final Point of Sale Retail": "Y", "Area": "Growth Zone"}, False),
        ({"Final Point of Sale Retail": "Y", "Area": "Growth Zone (MRERA)"}, False),
        ({"Final Point of Sale Retail": "Y", "Area": "Growth Zone", "Statute Version": "2014"}, False),
        ({"Final Point of Sale Retail": "Y", "Tourism District": "Y"}, False),
        ({"Final Point of Sale Retail": "Y", "Tourism District": "Y", "Statute Version": "2014"}, False),
        ({"Final Point of Sale Retail": "N"}, False),
        ({"Final Point of Sale Retail": "N", "Area": "Distressed"}, False),
    ],
)
def test_retail(override, bad):
    got = run(override)[0]
    assert ("RETAIL_NOT_ELIGIBLE" in got["codes"]) is bad and got["ineligible"] is bad


@pytest.mark.parametrize(
    "area, tourism, label, cite",
    [
        # C.34:1B-243 "qualified business facility" a.: a retail business in a Growth Zone (supermarket)
        ("Growth Zone", "N", "Growth Zone", 'C.34:1B-243 "qualified business facility" a.'),
        # C.34:1B-244 e.: a supermarket retail facility in a Growth Zone that qualified under MRERA
        ("Growth Zone (MRERA)", "N", "Growth Zone (MRERA)", "C.34:1B-244 e."),
        # a tourism destination project in the Atlantic City Tourism District (243 b., 244 e.)
        ("Priority", "Y", "Tourism District", 'C.34:1B-243 "qualified business facility" b.; C.34:1B-244 e.'),
        # a Growth Zone row with Tourism District = Y: the first tier that applies is the Growth Zone's
        ("Growth Zone", "Y", "Growth Zone", 'C.34:1B-243 "qualified business facility" a.'),
        # elsewhere: "A project that consists solely of point-of-final-purchase retail facilities shall not be eligible"
        ("Distressed", "N", "elsewhere", "C.34:1B-244 e."),
    ],
)
def test_each_retail_exception_names_its_provision(area, tourism, label, cite):
    tiers = RULES["retail_allowed_areas"]
    frame = pd.DataFrame({"Area": [area], "Tourism District": [tourism == "Y"]})
    (which,) = grow_nj.first_tier(tiers, frame)
    assert (tiers[which].label, tiers[which].cite, tiers[which].value) == (label, cite, label != "elsewhere")


@pytest.mark.parametrize("area", ["Priority", "Distressed", "Other Eligible"])
def test_the_retail_bar_cites_the_provision_that_bars_it(area):
    frame = typed_frame(GROW_NJ, [{**BASE, "Area": area, "Final Point of Sale Retail": "Y"}])
    calc = grow_nj.calculate(frame, RULES, RunContext(dt.date(2026, 11, 30)))
    found = pd.concat([f for f in calc.findings if len(f)])
    (citation,) = found.loc[found["code"] == "RETAIL_NOT_ELIGIBLE", "citation"]
    assert citation == "C.34:1B-244 e."


BASE_CASES = [
    # (name, override, base, extra code)
    ("urban transit hub", {"Area": "Urban Transit Hub"}, 5_000, None),
    ("growth zone", {"Area": "Growth Zone"}, 5_000, None),
    ("growth zone mrera", {"Area": "Growth Zone (MRERA)"}, 5_000, None),
    ("mega project in priority", MEGA_OK, 5_000, None),
    # 50 jobs, $1,000,000: no paragraph of the definition is met, so the Priority base of $3,000
    ("mega project not meeting the definition", {"Mega Project": "Y"}, 3_000, "MEGA_PROJECT_DEFINITION_NOT_MET"),
    ("distressed", {"Area": "Distressed"}, 4_000, None),
    ("priority", {}, 3_000, None),
    ("other eligible", {"Area": "Other Eligible"}, 500, None),
    ("create zone with both", {"Area": "Create Zone", "Targeted Industry": "Y", "Doctoral University Collaboration": "Y"}, 5_000, None),
    ("create zone targeted only", {"Area": "Create Zone", "Targeted Industry": "Y"}, 3_000, "CREATE_ZONE_BASE_NOT_MET"),
    ("create zone doctoral only", {"Area": "Create Zone", "Doctoral University Collaboration": "Y"}, 3_000, "CREATE_ZONE_BASE_NOT_MET"),
    ("2014 urban transit hub", {"Statute Version": "2014", "Area": "Urban Transit Hub"}, 5_000, None),
    ("2014 other eligible", {"Statute Version": "2014", "Area": "Other Eligible"}, 500, None),
]


@pytest.mark.parametrize("name,override,base,code", BASE_CASES, ids=[c[0] for c in BASE_CASES])
def test_base_amount(name, override, base, code):
    got = check(override, {"Base Credit per Job ($)": base})
    assert ("CREATE_ZONE_BASE_NOT_MET" in got["codes"]) is (code == "CREATE_ZONE_BASE_NOT_MET")
    assert code is None or code in got["codes"]


def test_create_zone_is_bad_code_under_2014():
    raw = pd.DataFrame([{**BASE, "Statute Version": "2014", "Area": "Create Zone"}], dtype=object)
    _, findings = validate(GROW_NJ, raw)
    assert findings[["column", "code"]].values.tolist() == [["Area", "BAD_CODE"]]


STATUTE_VERSION_CASES = [
    # (name, Statute Version, text computed under, bonus, warned). Vacant Million Square Foot Building = Y is an
    # increase of the 2017 text only (246 c.(17), $1,000): gross 3,000 + 1,000 = 4,000; annual 50 x 4,000 = 200,000.
    # Under 2014 there is no such increase: gross 3,000; annual 50 x 3,000 = 150,000.
    ("blank: computed under 2017, with the warning", "", "2017", 1_000, True),
    ("2017 given", "2017", "2017", 1_000, False),
    ("2014 given", "2014", "2014", 0, False),
]


@pytest.mark.parametrize("name,version,used,bonus,warned", STATUTE_VERSION_CASES, ids=[c[0] for c in STATUTE_VERSION_CASES])
def test_statute_version(name, version, used, bonus, warned):
    got = check(
        {"Statute Version": version, "Vacant Million Square Foot Building": "Y"},
        {"Bonus per Job ($)": bonus, "Annual Credit ($)": 50 * (3_000 + bonus)},
    )
    assert got["Calculation"].startswith(f"{used} text")
    assert ("STATUTE_VERSION_NOT_GIVEN" in got["codes"]) is warned
    assert got["Eligible"] == "Y" and not got["ineligible"]  # a warning: the row is computed, not barred


def test_blank_statute_version_is_the_latest_text_of_the_rules_and_said_at_its_column():
    # the latest version the rules hold, not a literal: the texts sorted, the last
    latest = sorted(RULES.versions)[-1]
    frame = typed_frame(GROW_NJ, [{**BASE, "Statute Version": ""}, {**BASE, "Project ID": "P-2"}])
    calc = grow_nj.calculate(frame, RULES, RunContext(dt.date(2026, 11, 30)))
    found = pd.concat([f for f in calc.findings if len(f)])
    rendered = render(found[found["code"] == "STATUTE_VERSION_NOT_GIVEN"], "GrowNJ", RULES.findings)
    (row,) = rendered.to_dict("records")
    assert (row["row"], row["Column"], row["Severity"]) == (0, "Statute Version", "warning")
    assert f"computed under the {latest} text of C.34:1B-246 (P.L.2017 c.221)" in row["Message"]
    assert "the reviewer confirms which text governs the application" in row["Message"]
    # the Summary counts the blank row under the text it was computed under
    summary = grow_nj.summarize(
        pd.concat([frame, calc.computed], axis=1), pd.Series(["Flagged", "OK"]), pd.DataFrame(columns=["row", "Code"]), RULES
    )
    assert summary[0].table["Statute Version"].tolist() == [latest] and summary[0].table["Projects"].tolist() == [2]


FLAG_CASES = [
    # (name, override, bonus per job)
    ("deep poverty", {"Deep Poverty Pocket": "Y"}, 1_500),
    ("incubator", {"Qualified Incubator": "Y"}, 500),
    ("mixed-use housing", {"Mixed-Use Moderate Income Housing": "Y"}, 500),
    ("transit oriented", {"Transit Oriented Development": "Y"}, 2_000),
    ("targeted industry", {"Targeted Industry": "Y"}, 500),
    ("leed", {"LEED Silver or Remediation": "Y"}, 250),
    ("light rail", {"Light Rail Half Mile": "Y"}, 1_000),
    ("marine terminal", {"Marine Terminal South Jersey Port District": "Y"}, 1_500),
    ("marine terminal in a growth zone: none", {"Marine Terminal South Jersey Port District": "Y", "Area": "Growth Zone"}, 0),
    ("highways", {"Redevelopment Area Near Highways": "Y"}, 1_500),
    ("solar", {"On-Site Solar 50 Percent": "Y"}, 250),
    ("vacant building 2017", {"Vacant Million Square Foot Building": "Y"}, 1_000),
    ("vacant building 2014: none", {"Vacant Million Square Foot Building": "Y", "Statute Version": "2014"}, 0),
    # (18) needs a targeted industry: 1,000 + 500 for (8)
    ("college with targeted", {"College Collaboration": "Y", "Targeted Industry": "Y"}, 1_500),
    ("college without targeted: none", {"College Collaboration": "Y"}, 0),
    ("college 2014: only (8)", {"College Collaboration": "Y", "Targeted Industry": "Y", "Statute Version": "2014"}, 500),
    # 1,500 + 2,000 + 500 = 4,000
    ("several add up", {"Deep Poverty Pocket": "Y", "Transit Oriented Development": "Y", "Qualified Incubator": "Y"}, 4_000),
]


@pytest.mark.parametrize("name,override,bonus", FLAG_CASES, ids=[c[0] for c in FLAG_CASES])
def test_flag_increases(name, override, bonus):
    check(override, {"Bonus per Job ($)": bonus, "Gross Credit per Job ($)": BASE_GROSS(override) + bonus})


def BASE_GROSS(override):  # noqa: N802 - reads like the constant it stands for
    return 5_000 if override.get("Area") == "Growth Zone" else 3_000


INDUSTRIAL = {"Premises Type": "Industrial Rehab"}  # min $20 x 10,000 = $200,000
INDUSTRIAL_CASES = [
    # excess over $200,000 in full 20% steps ($40,000 each), $1,000 a step
    ("20% exactly", {"Capital Investment ($)": 240_000}, 1_000),
    ("a cent short of 20%", {"Capital Investment ($)": 239_999.99}, 0),
    ("40%", {"Capital Investment ($)": 280_000}, 2_000),
    ("60%", {"Capital Investment ($)": 320_000}, 3_000),
    ("80%: capped at 3,000 under (5)", {"Capital Investment ($)": 360_000}, 3_000),
    # (10): growth zone, min 200,000 x 2/3 = 133,333.33; 100% over = 266,666.67 -> 5 steps -> 5,000
    ("growth zone 100%: 5,000 under (10)", {"Capital Investment ($)": 266_666.67, "Area": "Growth Zone"}, 5_000 + 0),
    ("growth zone 200%: capped at 5,000", {"Capital Investment ($)": 400_000, "Area": "Growth Zone"}, 5_000),
    # mega project: (10) cap 5,000, plus 1,500 for 1,001+ jobs (7)(e) = 6,500
    ("mega project: (10) cap", {"Capital Investment ($)": 400_000, **MEGA_OK}, 5_000 + 1_500),
    ("not industrial premises", {"Premises Type": "Non-Industrial Rehab", "Capital Investment ($)": 4_000_000}, 0),
]


@pytest.mark.parametrize("name,override,bonus", INDUSTRIAL_CASES, ids=[c[0] for c in INDUSTRIAL_CASES])
def test_industrial_investment_increase(name, override, bonus):
    o = {**INDUSTRIAL, **override}
    check(o, {"Bonus per Job ($)": bonus})


SALARY_CASES = [
    # benchmark $50,000: each full 35% ($17,500) above it earns $250, cap $1,500
    ("35% exactly", 67_500, 50_000, 250),
    ("a cent short", 67_499.99, 50_000, 0),
    ("70%", 85_000, 50_000, 500),
    ("210%: six steps, 1,500", 155_000, 50_000, 1_500),
    ("245%: capped at 1,500", 172_500, 50_000, 1_500),
    ("below the benchmark", 40_000, 50_000, 0),
    ("average blank", "", 50_000, 0),
    ("benchmark blank", 90_000, "", 0),
]


@pytest.mark.parametrize("name,avg,bench,bonus", SALARY_CASES, ids=[c[0] for c in SALARY_CASES])
def test_salary_increase(name, avg, bench, bonus):
    check({"Average Salary ($)": avg, "Benchmark Salary ($)": bench}, {"Bonus per Job ($)": bonus})


LARGE_CASES = [
    # New + Retained (new only here, the test's jobs are all new)
    (250, 0),
    (251, 500),
    (400, 500),
    (401, 750),
    (600, 750),
    (601, 1_000),
    (800, 1_000),
    (801, 1_250),
    (1_000, 1_250),
    (1_001, 1_500),
]


@pytest.mark.parametrize("version", ["2014", "2017"])
@pytest.mark.parametrize("jobs,bonus", LARGE_CASES)
def test_large_employment_increase(jobs, bonus, version):
    # capex raised so the retained/withholding limits stay out of the way; withholdings large
    got = check(
        {
            "New Full-Time Jobs": jobs,
            "Statute Version": version,
            "Capital Investment ($)": 50_000_000,
            "Annual Withholdings ($)": 100_000_000,
        },
        {"Bonus per Job ($)": bonus},
    )
    omitted = version == "2014" and 601 <= jobs <= 800
    assert ("TEXT_OMITS_601_800_TIER" in got["codes"]) is omitted


def test_large_employment_counts_new_and_retained():
    # 200 new + 201 retained = 401 -> 750
    check({"New Full-Time Jobs": 200, "Retained Full-Time Jobs": 201, "Capital Investment ($)": 50_000_000}, {"Bonus per Job ($)": 750})


@pytest.mark.parametrize(
    "override,bonus",
    [
        ({"US HQ of Automobile Manufacturer": "Y", "Same Municipality": "Y", "Retained Full-Time Jobs": 400}, 1_500 + 500),
        ({"US HQ of Automobile Manufacturer": "Y", "Same Municipality": "Y", "Retained Full-Time Jobs": 399}, 0 + 500),
        ({"US HQ of Automobile Manufacturer": "Y", "Same Municipality": "N", "Retained Full-Time Jobs": 400}, 0 + 500),
    ],
)
def test_auto_headquarters_increase(override, bonus):
    # 50 new + 399 or 400 retained = 449/450 jobs -> also the 401-600 tier? no: 401-600 is 750
    o = {**override, "Capital Investment ($)": 50_000_000}
    jobs = 50 + o["Retained Full-Time Jobs"]
    large = 750 if jobs >= 401 else 500
    check(o, {"Bonus per Job ($)": bonus - 500 + large})


@pytest.mark.parametrize(
    "county,mri,bonus",
    [
        ("Camden", 465, 0),
        ("Camden", 465.01, 1_000),
        ("Salem", 600, 1_000),
        ("Bergen", 600, 0),
        ("Camden", "", 0),
    ],
)
def test_south_jersey_revitalization_increase(county, mri, bonus):
    check({"County": county, "Municipal Revitalization Index": mri}, {"Bonus per Job ($)": bonus})


GROSS_CASES = [
    # (name, override, gross): base + bonus, limited by the first cap that applies
    # growth zone: 5,000 + 1,500 + 2,000 + 1,500 + 1,000 + 1,000 + 500 + 500 + 250 + 250 = 13,500, + 5,000 industrial
    # (10) = 18,500 -> 15,000
    (
        "growth zone over 15,000",
        {
            "Area": "Growth Zone",
            "Deep Poverty Pocket": "Y",
            "Transit Oriented Development": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Light Rail Half Mile": "Y",
            "Vacant Million Square Foot Building": "Y",
            "Qualified Incubator": "Y",
            "Mixed-Use Moderate Income Housing": "Y",
            "LEED Silver or Remediation": "Y",
            "On-Site Solar 50 Percent": "Y",
            "Premises Type": "Industrial Rehab",
        },
        15_000,
    ),
    # the same without the industrial increase: 13,500, under the cap
    (
        "growth zone under 15,000",
        {
            "Area": "Growth Zone",
            "Deep Poverty Pocket": "Y",
            "Transit Oriented Development": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Light Rail Half Mile": "Y",
            "Vacant Million Square Foot Building": "Y",
            "Qualified Incubator": "Y",
            "Mixed-Use Moderate Income Housing": "Y",
            "LEED Silver or Remediation": "Y",
            "On-Site Solar 50 Percent": "Y",
        },
        13_500,
    ),
    # urban transit hub: 5,000 + 2,000 + 1,500 + 1,500 + 1,000 + 1,000 = 12,000 at the cap; + 500 -> capped
    (
        "uth over 12,000",
        {
            "Area": "Urban Transit Hub",
            "Transit Oriented Development": "Y",
            "Deep Poverty Pocket": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Light Rail Half Mile": "Y",
            "Vacant Million Square Foot Building": "Y",
            "Qualified Incubator": "Y",
        },
        12_000,
    ),
    # distressed: 4,000 + 2,000 + 1,500 + 1,500 + 1,500 + 1,000 = 11,500 -> 11,000
    (
        "distressed over 11,000",
        {
            "Area": "Distressed",
            "Transit Oriented Development": "Y",
            "Deep Poverty Pocket": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Marine Terminal South Jersey Port District": "Y",
            "Light Rail Half Mile": "Y",
        },
        11_000,
    ),
    # priority: 3,000 + 2,000 + 1,500 + 1,500 + 1,500 + 1,000 = 10,500 exactly
    (
        "priority at 10,500",
        {
            "Transit Oriented Development": "Y",
            "Deep Poverty Pocket": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Marine Terminal South Jersey Port District": "Y",
            "Light Rail Half Mile": "Y",
        },
        10_500,
    ),
    # other eligible: 500 + 2,000 + 1,500 + 1,500 + 1,000 = 6,500 -> 6,000
    (
        "other eligible over 6,000",
        {
            "Area": "Other Eligible",
            "Transit Oriented Development": "Y",
            "Deep Poverty Pocket": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Light Rail Half Mile": "Y",
        },
        6_000,
    ),
    # disaster recovery: 3,000 + 2,000 = 5,000 -> 2,000, whatever the area
    ("disaster recovery", {"Disaster Recovery Project": "Y", "Transit Oriented Development": "Y"}, 2_000),
    ("disaster recovery below its cap", {"Disaster Recovery Project": "Y", "Area": "Other Eligible"}, 500),
    # mega project in an urban transit hub takes the mega cap 15,000, not 12,000:
    # 5,000 + 2,000 + 1,500 x 3 + 1,000 x 2 + 1,500 (1,001+ jobs) = 15,000
    (
        "mega in uth",
        {
            "Area": "Urban Transit Hub",
            **MEGA_OK,
            "Transit Oriented Development": "Y",
            "Deep Poverty Pocket": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Marine Terminal South Jersey Port District": "Y",
            "Light Rail Half Mile": "Y",
            "Vacant Million Square Foot Building": "Y",
        },
        15_000,
    ),
    # create zone: 12,000 in 2017 (5,000 + 2,000 + 1,500 x 3 + 500 = 12,000, + 1,000 light rail -> 12,000)
    (
        "create zone cap 2017",
        {
            "Area": "Create Zone",
            "Targeted Industry": "Y",
            "Doctoral University Collaboration": "Y",
            "Transit Oriented Development": "Y",
            "Deep Poverty Pocket": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Marine Terminal South Jersey Port District": "Y",
            "Light Rail Half Mile": "Y",
        },
        12_000,
    ),
]


@pytest.mark.parametrize("name,override,gross", GROSS_CASES, ids=[c[0] for c in GROSS_CASES])
def test_gross_limit(name, override, gross):
    check({**override, "Capital Investment ($)": 5_000_000}, {"Gross Credit per Job ($)": gross})


RETAINED_CASES = [
    # (name, override, retained per job, annual)
    # 50 new + 50 retained, gross 3,000: 50% = 1,500; capex 1,000,000 / (10 x 100) = 1,000 -> 1,000
    ("capex limit binds", {"Retained Full-Time Jobs": 50}, 1_000, 50 * 3_000 + 50 * 1_000),
    # capex 3,000,000 / 1,000 = 3,000 > 1,500 -> 50%
    ("half of gross", {"Retained Full-Time Jobs": 50, "Capital Investment ($)": 3_000_000}, 1_500, 50 * 3_000 + 50 * 1_500),
    # 1,500,000 / (10 x 100) = 1,500 exactly: either way 1,500
    ("both equal", {"Retained Full-Time Jobs": 50, "Capital Investment ($)": 1_500_000}, 1_500, 225_000),
    # 1,000,000 / (10 x 70) = 1,428.5714...: annual 50 x 3,000 + 20 x 1,428.5714 = 178,571.43; total 1,785,714.29
    ("exact fraction", {"Retained Full-Time Jobs": 20}, 1_428.57, 178_571.43),
    (
        "replaces disaster-damaged facility: 100%",
        {"Retained Full-Time Jobs": 50, "Replaces Disaster-Damaged Facility": "Y"},
        3_000,
        300_000,
    ),
    # mega + auto HQ in a Priority area (243 b.(2): 50 new + 1,001 retained, more than 1,000): 100% of gross;
    # gross 5,000 base + 1,500 (1,001+ jobs) = 6,500 (+ 1,500 auto HQ needs same municipality: not here);
    # annual 50 x 6,500 + 1,001 x 6,500 = 6,831,500 (cap f.(2) 30,000,000; amount necessary blank)
    (
        "mega auto hq in priority: 100%",
        {
            "Retained Full-Time Jobs": 1_001,
            "Mega Project": "Y",
            "Mega Project Basis": "Automobile HQ",
            "US HQ of Automobile Manufacturer": "Y",
        },
        6_500,
        6_831_500,
    ),
    # Automobile HQ needs a Priority area or a Growth Zone: in a Distressed area the definition is not met and the row is ordinary:
    # base 4,000; retained: 1,000,000 / (10 x 100) = 1,000 < 2,000 -> 1,000; annual 50 x 4,000 + 50 x 1,000 = 250,000
    (
        "mega auto hq in distressed: not a mega project",
        {
            "Retained Full-Time Jobs": 50,
            "Mega Project": "Y",
            "Mega Project Basis": "Automobile HQ",
            "Area": "Distressed",
            "US HQ of Automobile Manufacturer": "Y",
        },
        1_000,
        250_000,
    ),
]


@pytest.mark.parametrize("name,override,per_job,annual", RETAINED_CASES, ids=[c[0] for c in RETAINED_CASES])
def test_retained_credit(name, override, per_job, annual):
    check(override, {"Retained Credit per Job ($)": per_job, "Annual Credit ($)": annual})


def test_total_award_is_the_rounded_annual_credit_times_the_years():
    # 246 a.: the credit is allowed each year, so the Annual Credit is rounded once, half up:
    # 178,571.428571... -> 178,571.43; Total Award = 178,571.43 x 10 = 1,785,714.30 (what the ten credits add up to,
    # not 178,571.428571... x 10 = 1,785,714.29)
    check({"Retained Full-Time Jobs": 20}, {"Annual Credit ($)": 178_571.43, "Total Award ($)": 1_785_714.30})


MRERA = {"Area": "Growth Zone (MRERA)", "County": "Camden", "New Full-Time Jobs": 35, "Retained Full-Time Jobs": 0}
MRERA_CASES = [
    # ordinary: gross 5,000 x 35 new = 175,000. Alternative: capex / 10, limited by the tier
    # (a) 35 jobs and $5,000,000: 500,000 (limit 2,000,000)
    ("tier a at thresholds", {"Capital Investment ($)": 5_000_000}, 500_000, True),
    ("capex a cent short", {"Capital Investment ($)": 4_999_999.99}, 175_000, False),
    ("34 jobs new to municipality", {"Capital Investment ($)": 5_000_000, "Jobs New to Municipality": 34}, 175_000, False),
    (
        "jobs new to municipality counted, not new jobs",
        {"Capital Investment ($)": 5_000_000, "New Full-Time Jobs": 30, "Retained Full-Time Jobs": 10, "Jobs New to Municipality": 35},
        500_000,
        True,
    ),
    # (a) limit 2,000,000: capex 9,999,999.99 / 10 = 999,999.999 -> 1,000,000.00 ; with 70 jobs still (a) by capex
    ("tier a limit 2,000,000", {"Capital Investment ($)": 9_999_999.99, "Jobs New to Municipality": 70}, 1_000_000, True),
    # (b) 70 and 10,000,000: 1,000,000 ; limit 3,000,000 at capex 30,000,000 with 70 jobs
    ("tier b limit", {"Capital Investment ($)": 30_000_000, "Jobs New to Municipality": 70}, 3_000_000, True),
    ("tier c limit", {"Capital Investment ($)": 50_000_000, "Jobs New to Municipality": 100}, 4_000_000, True),
    ("tier d limit", {"Capital Investment ($)": 60_000_000, "Jobs New to Municipality": 150}, 5_000_000, True),
    # (e) 250 and 30,000,000: no tier limit; 80,000,000 / 10 = 8,000,000 (needs an amount necessary)
    ("tier e no limit", {"Capital Investment ($)": 80_000_000, "Jobs New to Municipality": 250}, 8_000_000, True),
    ("tier e jobs short: d limit", {"Capital Investment ($)": 80_000_000, "Jobs New to Municipality": 249}, 5_000_000, True),
    # the ordinary credit wins when larger: 600 new x (5,000 + 750 for 401-600) = 3,450,000 > 500,000
    ("ordinary larger", {"Capital Investment ($)": 5_000_000, "New Full-Time Jobs": 600}, 3_450_000, False),
    # a plain Growth Zone has no alternative
    ("plain growth zone", {"Capital Investment ($)": 5_000_000, "Area": "Growth Zone"}, 175_000, False),
]


@pytest.mark.parametrize("name,override,annual,applied", MRERA_CASES, ids=[c[0] for c in MRERA_CASES])
def test_mrera_alternative(name, override, annual, applied):
    got = check({**MRERA, **override}, {"Annual Credit ($)": annual})
    assert ("MRERA_ALTERNATIVE_APPLIED" in got["codes"]) is applied
    assert "NECESSITY_DETERMINATION_REQUIRED" not in got["codes"] or not applied


def test_ordinary_larger_case_arithmetic():
    # 600 new x 5,750 (5,000 + 750 for 401-600... 600 is in 401-600) = 3,450,000; the MRERA alternative 500,000 loses
    got = check({**MRERA, "Capital Investment ($)": 5_000_000, "New Full-Time Jobs": 600}, {"Gross Credit per Job ($)": 5_750})
    assert got["Annual Credit ($)"] == 3_450_000


ANNUAL_CASES = [
    # (name, override, annual, codes among the limit findings)
    # priority: 10,500 x 400 = 4,200,000 -> 4,000,000 cap, then 90% of 5,000,000 = 4,500,000 no cut
    (
        "priority cap",
        {
            "Transit Oriented Development": "Y",
            "Deep Poverty Pocket": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Marine Terminal South Jersey Port District": "Y",
            "Light Rail Half Mile": "Y",
            "New Full-Time Jobs": 400,
            "Capital Investment ($)": 50_000_000,
            "Annual Withholdings ($)": 5_000_000,
        },
        4_000_000,
        ["ANNUAL_CAP_APPLIED"],
    ),
    # 90% of 100,000 = 90,000 < 150,000
    ("withholdings cut", {"Annual Withholdings ($)": 100_000}, 90_000, ["WITHHOLDINGS_CAP_APPLIED"]),
    # 90% of 166,666.67 = 150,000.003 -> no cut; 166,666.66 -> 149,999.994 cut
    ("withholdings just enough", {"Annual Withholdings ($)": 166_666.67}, 150_000, []),
    ("withholdings a cent short", {"Annual Withholdings ($)": 166_666.66}, 149_999.99, ["WITHHOLDINGS_CAP_APPLIED"]),
    ("withholdings blank", {"Annual Withholdings ($)": ""}, 150_000, ["WITHHOLDINGS_NOT_PROVIDED"]),
    ("other eligible withholdings", {"Area": "Other Eligible", "Annual Withholdings ($)": 10_000}, 9_000, ["WITHHOLDINGS_CAP_APPLIED"]),
    # not under f.(5)/(6): no 90% limit
    ("distressed: no 90% limit", {"Area": "Distressed", "Annual Withholdings ($)": 10_000}, 200_000, []),
    # mega: f.(2), no 90% limit: 1,001 x 6,500 = 6,506,500 (amount necessary blank: a warning, no limit)
    ("mega: no 90% limit", {**MEGA_OK, "Annual Withholdings ($)": ""}, 6_506_500, []),
    # 2014: a redevelopment or rehabilitation area lifts the 90% limit; 2017 does not
    (
        "2014 redevelopment area",
        {"Statute Version": "2014", "Redevelopment or Rehabilitation Area": "Y", "Annual Withholdings ($)": 10_000},
        150_000,
        [],
    ),
    (
        "2017 redevelopment area",
        {"Redevelopment or Rehabilitation Area": "Y", "Annual Withholdings ($)": 10_000},
        9_000,
        ["WITHHOLDINGS_CAP_APPLIED"],
    ),
    # Tourism District counts for f.(1) only in a Growth Zone: in a Priority area the f.(5) cap and 90% stay
    (
        "2017 tourism district in priority",
        {"Tourism District": "Y", "Annual Withholdings ($)": 10_000},
        9_000,
        ["WITHHOLDINGS_CAP_APPLIED"],
    ),
    # in a Growth Zone: f.(1) 35,000,000, no 90% limit; 50 x 5,000 = 250,000
    (
        "2017 tourism district in growth zone",
        {"Area": "Growth Zone", "Tourism District": "Y", "Annual Withholdings ($)": 10_000},
        250_000,
        [],
    ),
    (
        "2014 tourism district",
        {"Statute Version": "2014", "Tourism District": "Y", "Annual Withholdings ($)": 10_000},
        9_000,
        ["WITHHOLDINGS_CAP_APPLIED"],
    ),
    # 2017 create zone: f.(3) 10,000,000 and no 90% limit
    (
        "create zone no 90%",
        {"Area": "Create Zone", "Targeted Industry": "Y", "Doctoral University Collaboration": "Y", "Annual Withholdings ($)": 10_000},
        50 * 5_500,
        [],
    ),
    # cap then 90%: 4,200,000 -> 4,000,000 -> 90% of 1,000,000 = 900,000
    (
        "cap then withholdings",
        {
            "Transit Oriented Development": "Y",
            "Deep Poverty Pocket": "Y",
            "Redevelopment Area Near Highways": "Y",
            "Marine Terminal South Jersey Port District": "Y",
            "Light Rail Half Mile": "Y",
            "New Full-Time Jobs": 400,
            "Capital Investment ($)": 50_000_000,
        },
        900_000,
        ["ANNUAL_CAP_APPLIED", "WITHHOLDINGS_CAP_APPLIED"],
    ),
]
LIMIT_CODES = ("ANNUAL_CAP_APPLIED", "WITHHOLDINGS_CAP_APPLIED", "WITHHOLDINGS_NOT_PROVIDED")


@pytest.mark.parametrize("name,override,annual,codes", ANNUAL_CASES, ids=[c[0] for c in ANNUAL_CASES])
def test_annual_limits(name, override, annual, codes):
    got = check(override, {"Annual Credit ($)": annual})
    assert [c for c in got["codes"] if c in LIMIT_CODES] == codes


# Amount necessary. Urban Transit Hub: 5,000 + 2,000 + 1,500 + 1,500 + 1,000 + 1,000 = 12,000 per job, at the cap
UTH = {
    "Area": "Urban Transit Hub",
    "Transit Oriented Development": "Y",
    "Deep Poverty Pocket": "Y",
    "Redevelopment Area Near Highways": "Y",
    "Light Rail Half Mile": "Y",
    "Vacant Million Square Foot Building": "Y",
    "Capital Investment ($)": 50_000_000,
}
NECESSITY_CASES = [
    # 12,000 x 333 = 3,996,000; x 334 = 4,008,000 (over 4,000,000)
    ("under 4,000,000", {"New Full-Time Jobs": 333}, 3_996_000, []),
    ("over, blank", {"New Full-Time Jobs": 334}, 4_008_000, ["NECESSITY_DETERMINATION_REQUIRED"]),
    ("over, limited", {"New Full-Time Jobs": 334, "Amount Necessary ($)": 3_500_000}, 3_500_000, []),
    ("over, necessary is more", {"New Full-Time Jobs": 334, "Amount Necessary ($)": 5_000_000}, 4_008_000, []),
]


@pytest.mark.parametrize("name,override,annual,codes", NECESSITY_CASES, ids=[c[0] for c in NECESSITY_CASES])
def test_amount_necessary(name, override, annual, codes):
    got = check({**UTH, **override}, {"Annual Credit ($)": annual})
    assert [c for c in got["codes"] if c == "NECESSITY_DETERMINATION_REQUIRED"] == codes


# Mega project in a Priority area: 5,000 + 2,000 (TOD) + 1,500 (highways) + 1,000 (light rail) + 500 (251-400 jobs)
MEGA = {
    "Mega Project": "Y",
    "Application Date": D(2016, 1, 4),
    "Transit Oriented Development": "Y",
    "Redevelopment Area Near Highways": "Y",
    "Light Rail Half Mile": "Y",
    "Capital Investment ($)": 50_000_000,
}


@pytest.mark.parametrize(
    "jobs,annual,codes",
    [
        (400, 4_000_000, []),  # 10,000 x 400 = 4,000,000: not "in excess of"
        (401, 4_110_250, ["NECESSITY_DETERMINATION_REQUIRED"]),  # (10,000 - 500 + 750) x 401 = 4,110,250
    ],
)
def test_necessity_threshold(jobs, annual, codes):
    got = check({**MEGA, "New Full-Time Jobs": jobs}, {"Annual Credit ($)": annual})
    assert [c for c in got["codes"] if c == "NECESSITY_DETERMINATION_REQUIRED"] == codes


NET_BENEFIT_CASES = [
    # total award 1,500,000: 110% = 1,650,000
    ("110% exactly", 1_650_000, [], "Y"),
    ("a cent below", 1_649_999.99, ["NET_BENEFIT_BELOW_THRESHOLD"], "N"),
    ("a cent above", 1_650_000.01, [], "Y"),
    ("blank", "", ["NET_BENEFIT_NOT_PROVIDED"], "Y"),
]


@pytest.mark.parametrize("name,nb,codes,eligible", NET_BENEFIT_CASES, ids=[c[0] for c in NET_BENEFIT_CASES])
def test_net_benefit(name, nb, codes, eligible):
    got = check({"Net Benefit ($)": nb}, {"Eligible": eligible})
    assert [c for c in got["codes"] if c.startswith("NET_BENEFIT")] == codes
    if nb != "":
        assert got["Net Benefit Ratio"] == pytest.approx(nb / 1_500_000)
    else:
        assert pd.isna(got["Net Benefit Ratio"])


def test_net_benefit_mrera_100_percent():
    # MRERA alternative 500,000 x 10 = 5,000,000: 100% on the nose passes, a cent less fails
    ok = check({**MRERA, "Capital Investment ($)": 5_000_000, "Net Benefit ($)": 5_000_000}, {"Eligible": "Y"})
    bad = check({**MRERA, "Capital Investment ($)": 5_000_000, "Net Benefit ($)": 4_999_999.99}, {"Eligible": "N"})
    assert "NET_BENEFIT_BELOW_THRESHOLD" in bad["codes"] and ok["Net Benefit Ratio"] == pytest.approx(1.0)
    assert bad["Net Benefit Ratio"] == pytest.approx(4_999_999.99 / 5_000_000)


def test_eligibility_period():
    check({"Eligibility Period (years)": 7}, {"Total Award ($)": 1_050_000, "Commitment Period (years)": 10.5})


def test_eligibility_period_over_10_is_out_of_range():
    raw = pd.DataFrame([{**BASE, "Eligibility Period (years)": 11}], dtype=object)
    assert validate(GROW_NJ, raw)[1]["code"].tolist() == ["OUT_OF_RANGE"]


def test_calculation_line_shows_each_component():
    got = run({"Transit Oriented Development": "Y", "Retained Full-Time Jobs": 20})[0]
    line = got["Calculation"]
    for piece in (
        "2017 text",
        "min capex 400,000.00 [244b(3)] met",
        "base 3,000 [246b(3)]",
        "TOD 2,000 [246c(4)]",
        "= 5,000",
        "cap 10,500 [246d(4)] not reached",
        "annual cap 4,000,000.00 [246f(5)] not reached",
        "x 10 years",
        "eligible",
    ):
        assert piece in line, (piece, line)


def test_shuffled_rows_same_results():
    overrides = [
        {},
        {"Area": "Growth Zone"},
        {"Statute Version": "2014", "New Full-Time Jobs": 700},
        {**MRERA, "Capital Investment ($)": 5_000_000},
        {"Capital Investment ($)": 1},
    ]
    a = run(*overrides)
    b = run(*reversed(overrides))
    strip = lambda r: {k: v for k, v in r.items() if k != "Project ID"}  # noqa: E731
    assert [strip(r) for r in a] == [strip(r) for r in reversed(b)]


# -- the mega-project definition (C.34:1B-243 "mega project") --------------------------------------
# Each paragraph at its thresholds: "in excess of $20,000,000" (a cent over passes), "more than 250"
# (251 passes), "more than 1,000" (1,001 passes). Jobs are new + retained, except Corporate HQ (new only).
# A met definition gives the $5,000 base of 246 b.(1) in a Priority area; a row that fails is computed as an
# ordinary Priority project (base $3,000) with MEGA_PROJECT_DEFINITION_NOT_MET.
BIG = {"Capital Investment ($)": 20_000_000.01, "New Full-Time Jobs": 251}
MEGA_DEFINITION_CASES = [
    # (name, override, met)
    ("port: capex a cent over 20M and 251 jobs", {"Mega Project Basis": "Port District", **BIG}, True),
    ("port: capex exactly 20M", {"Mega Project Basis": "Port District", **BIG, "Capital Investment ($)": 20_000_000}, False),
    ("port: 250 jobs", {"Mega Project Basis": "Port District", **BIG, "New Full-Time Jobs": 250}, False),
    (
        "port: 125 new + 126 retained = 251",
        {"Mega Project Basis": "Port District", **BIG, "New Full-Time Jobs": 125, "Retained Full-Time Jobs": 126},
        True,
    ),
    ("port: 1,001 jobs, little capex", {"Mega Project Basis": "Port District", "New Full-Time Jobs": 1_001}, True),
    ("port: 1,000 jobs", {"Mega Project Basis": "Port District", "New Full-Time Jobs": 1_000}, False),
    ("aviation: 1,001 jobs", {"Mega Project Basis": "Aviation District", "New Full-Time Jobs": 1_001}, True),
    ("growth zone basis in a growth zone", {"Mega Project Basis": "Growth Zone", "Area": "Growth Zone", **BIG}, True),
    ("growth zone basis in MRERA", {"Mega Project Basis": "Growth Zone", "Area": "Growth Zone (MRERA)", **BIG}, True),
    ("growth zone basis in a priority area", {"Mega Project Basis": "Growth Zone", **BIG}, False),
    # Automobile HQ: US HQ of Automobile Manufacturer = Y and the Area Priority or a Growth Zone (AUTO_HQ_CASES below)
    ("auto HQ in priority", {"Mega Project Basis": "Automobile HQ", "US HQ of Automobile Manufacturer": "Y", **BIG}, True),
    ("auto HQ without the flag", {"Mega Project Basis": "Automobile HQ", **BIG}, False),
    (
        "auto HQ in distressed",
        {"Mega Project Basis": "Automobile HQ", "US HQ of Automobile Manufacturer": "Y", "Area": "Distressed", **BIG},
        False,
    ),
    (
        "auto HQ in urban transit hub",
        {"Mega Project Basis": "Automobile HQ", "US HQ of Automobile Manufacturer": "Y", "Area": "Urban Transit Hub", **BIG},
        False,
    ),
    # c.: urban transit hub, capex in excess of $50,000,000 and more than 250 jobs
    (
        "uth: 50M + a cent, 251 jobs",
        {
            "Mega Project Basis": "Urban Transit Hub",
            "Area": "Urban Transit Hub",
            "Capital Investment ($)": 50_000_000.01,
            "New Full-Time Jobs": 251,
        },
        True,
    ),
    (
        "uth: exactly 50M",
        {
            "Mega Project Basis": "Urban Transit Hub",
            "Area": "Urban Transit Hub",
            "Capital Investment ($)": 50_000_000,
            "New Full-Time Jobs": 251,
        },
        False,
    ),
    (
        "uth basis outside a hub",
        {"Mega Project Basis": "Urban Transit Hub", "Capital Investment ($)": 50_000_000.01, "New Full-Time Jobs": 251},
        False,
    ),
    # d.: corporate headquarters, more than 250 employees "created": new jobs only
    (
        "corporate HQ: 251 new",
        {"Mega Project Basis": "Corporate HQ", "Capital Investment ($)": 50_000_000.01, "New Full-Time Jobs": 251},
        True,
    ),
    (
        "corporate HQ: 250 new + 100 retained",
        {
            "Mega Project Basis": "Corporate HQ",
            "Capital Investment ($)": 50_000_000.01,
            "New Full-Time Jobs": 250,
            "Retained Full-Time Jobs": 100,
        },
        False,
    ),
    # e.: a South Jersey county, capex in excess of $20,000,000 and more than 150 jobs
    (
        "south jersey: 151 jobs in Camden",
        {"Mega Project Basis": "South Jersey Redevelopment Area", "County": "Camden", **BIG, "New Full-Time Jobs": 151},
        True,
    ),
    (
        "south jersey: 150 jobs",
        {"Mega Project Basis": "South Jersey Redevelopment Area", "County": "Camden", **BIG, "New Full-Time Jobs": 150},
        False,
    ),
    ("south jersey basis in Bergen", {"Mega Project Basis": "South Jersey Redevelopment Area", **BIG, "New Full-Time Jobs": 151}, False),
    # blank basis: any of a.(1), a.(2), d., e. (with the warning MEGA_PROJECT_BASIS_NOT_GIVEN)
    ("blank basis: 20M + a cent and 251 jobs", BIG, True),
    ("blank basis: 1,001 jobs", {"New Full-Time Jobs": 1_001}, True),
    ("blank basis: south jersey 151 jobs", {"County": "Camden", **BIG, "New Full-Time Jobs": 151}, True),
    ("blank basis: 100 jobs", {"New Full-Time Jobs": 100}, False),
]


@pytest.mark.parametrize("name,override,met", MEGA_DEFINITION_CASES, ids=[c[0] for c in MEGA_DEFINITION_CASES])
def test_mega_project_definition(name, override, met):
    got = run({"Mega Project": "Y", **override})[0]
    assert ("MEGA_PROJECT_DEFINITION_NOT_MET" in got["codes"]) is (not met), got["Calculation"]
    assert ("MEGA_PROJECT_BASIS_NOT_GIVEN" in got["codes"]) is ("Mega Project Basis" not in override)
    if override.get("Area") in (None, "Priority"):
        assert got["Base Credit per Job ($)"] == (5_000 if met else 3_000)
    assert not got["ineligible"] or "CAPEX_BELOW_MINIMUM" in got["codes"]


# -- the Automobile HQ basis (C.34:1B-243 "mega project" b.) and the retained share of 246 e. ------------
# b.: "in a Garden State Growth Zone, or in a priority area housing the United States headquarters ... of
# an automobile manufacturer"; 246 e. gives 100% of the gross amount per retained job to "a mega project
# which is the United States headquarters of an automobile manufacturer located within a priority area or
# in a Garden State Growth Zone". So: the flag Y and the Area Priority, Growth Zone or Growth Zone (MRERA);
# not Distressed, not Urban Transit Hub. Every case has 1 new job and the rest retained, so the retained
# share shows: 100% of gross for the mega project, else the lesser of 50% and capex / (10 x jobs).
AUTO_HQ = {"Mega Project": "Y", "Mega Project Basis": "Automobile HQ", "US HQ of Automobile Manufacturer": "Y", "New Full-Time Jobs": 1}
CAPEX_OVER = {"Capital Investment ($)": 20_000_000.01, "Retained Full-Time Jobs": 250}  # 1 + 250 = 251 jobs
CAPEX_AT = {"Capital Investment ($)": 20_000_000, "Retained Full-Time Jobs": 250}
AUTO_HQ_CASES = [
    # (name, override, met, retained credit per job, annual credit)
    # met, capex a cent over $20,000,000 with 251 jobs (b.(1)): base 5,000 [mega] + 500 [(7) 251-400] = 5,500;
    # retained 100% = 5,500; a.-e. 1 x 5,500 + 250 x 5,500 = 1,380,500 (cap 30,000,000 [f.(2)], 35,000,000 MRERA)
    ("priority, capex 20M + a cent, 251 jobs", {**CAPEX_OVER}, True, 5_500, 1_380_500),
    ("growth zone, capex 20M + a cent, 251 jobs", {**CAPEX_OVER, "Area": "Growth Zone"}, True, 5_500, 1_380_500),
    ("growth zone (MRERA), capex 20M + a cent, 251 jobs", {**CAPEX_OVER, "Area": "Growth Zone (MRERA)"}, True, 5_500, 1_380_500),
    # Distressed: not a priority area (243: "not located within a distressed municipality"): ordinary,
    # base 4,000 + 500 = 4,500; retained min(50% = 2,250, 20,000,000.01 / (10 x 251) = 7,968.13) = 2,250;
    # a.-e. 4,500 + 250 x 2,250 = 567,000 (cap 8,000,000)
    ("distressed, capex 20M + a cent, 251 jobs", {**CAPEX_OVER, "Area": "Distressed"}, False, 2_250, 567_000),
    # Urban Transit Hub: ordinary, base 5,000 + 500 = 5,500; retained min(2,750, 7,968.13) = 2,750;
    # a.-e. 5,500 + 250 x 2,750 = 693,000 (cap 10,000,000)
    ("urban transit hub, capex 20M + a cent, 251 jobs", {**CAPEX_OVER, "Area": "Urban Transit Hub"}, False, 2_750, 693_000),
    # capex exactly $20,000,000 is not "in excess of": ordinary. Priority: base 3,000 + 500 = 3,500;
    # retained min(1,750, 20,000,000 / 2,510 = 7,968.13) = 1,750; a.-e. 3,500 + 250 x 1,750 = 441,000
    ("priority, capex exactly 20M", {**CAPEX_AT}, False, 1_750, 441_000),
    # Growth Zone, ordinary: base 5,000 + 500 = 5,500; retained 2,750; a.-e. 5,500 + 250 x 2,750 = 693,000
    ("growth zone, capex exactly 20M", {**CAPEX_AT, "Area": "Growth Zone"}, False, 2_750, 693_000),
    ("growth zone (MRERA), capex exactly 20M", {**CAPEX_AT, "Area": "Growth Zone (MRERA)"}, False, 2_750, 693_000),
    # without the US HQ flag: ordinary, as at exactly 20M (capex 20,000,000.01 / 2,510 = 7,968.13 > 50%)
    ("priority without the flag", {**CAPEX_OVER, "US HQ of Automobile Manufacturer": "N"}, False, 1_750, 441_000),
    ("growth zone without the flag", {**CAPEX_OVER, "US HQ of Automobile Manufacturer": "N", "Area": "Growth Zone"}, False, 2_750, 693_000),
    (
        "growth zone (MRERA) without the flag",
        {**CAPEX_OVER, "US HQ of Automobile Manufacturer": "N", "Area": "Growth Zone (MRERA)"},
        False,
        2_750,
        693_000,
    ),
    ("distressed without the flag", {**CAPEX_OVER, "US HQ of Automobile Manufacturer": "N", "Area": "Distressed"}, False, 2_250, 567_000),
    # 1 + 249 = 250 jobs is not "more than 250": ordinary Priority, base 3,000 (no (7) increase below 251);
    # retained min(1,500, 20,000,000.01 / 2,500 = 8,000.00) = 1,500; a.-e. 3,000 + 249 x 1,500 = 376,500
    ("priority, 250 jobs", {**CAPEX_OVER, "Retained Full-Time Jobs": 249}, False, 1_500, 376_500),
    # growth zone, 250 jobs: base 5,000; retained 2,500; a.-e. 5,000 + 249 x 2,500 = 627,500
    ("growth zone, 250 jobs", {**CAPEX_OVER, "Retained Full-Time Jobs": 249, "Area": "Growth Zone"}, False, 2_500, 627_500),
    # MRERA, 250 jobs: the same (cap 35,000,000; no MRERA alternative: 1 job new to the municipality, under 35)
    ("growth zone (MRERA), 250 jobs", {**CAPEX_OVER, "Retained Full-Time Jobs": 249, "Area": "Growth Zone (MRERA)"}, False, 2_500, 627_500),
    # b.(2), more than 1,000 jobs whatever the capex ($1,000,000): 1 + 1,000 = 1,001. Base 5,000 + 1,500
    # [(7) 1,001+] = 6,500; retained 100% = 6,500; a.-e. 1,001 x 6,500 = 6,506,500 (over 4,000,000: the
    # amount necessary is blank, so NECESSITY_DETERMINATION_REQUIRED and no such limit; cap 30,000,000)
    ("priority, 1,001 jobs", {"Retained Full-Time Jobs": 1_000}, True, 6_500, 6_506_500),
    ("growth zone, 1,001 jobs", {"Retained Full-Time Jobs": 1_000, "Area": "Growth Zone"}, True, 6_500, 6_506_500),
    ("growth zone (MRERA), 1,001 jobs", {"Retained Full-Time Jobs": 1_000, "Area": "Growth Zone (MRERA)"}, True, 6_500, 6_506_500),
    # Distressed, 1,001 jobs: ordinary, base 4,000 + 1,500 = 5,500; retained min(2,750, 1,000,000 / 10,010 =
    # 99.90) = 99.90; a.-e. 5,500 + 1,000 x 99.9000999... = 105,400.10
    ("distressed, 1,001 jobs", {"Retained Full-Time Jobs": 1_000, "Area": "Distressed"}, False, 99.90, 105_400.10),
    # Urban Transit Hub, 1,001 jobs: base 5,000 + 1,500 = 6,500; retained 99.90; a.-e. 6,500 + 99,900.10 = 106,400.10
    ("urban transit hub, 1,001 jobs", {"Retained Full-Time Jobs": 1_000, "Area": "Urban Transit Hub"}, False, 99.90, 106_400.10),
    # 1 + 999 = 1,000 jobs is not "more than 1,000" (and the capex is not over 20M): ordinary Priority,
    # base 3,000 + 1,250 [(7) 801-1,000] = 4,250; retained min(2,125, 1,000,000 / 10,000 = 100) = 100;
    # a.-e. 4,250 + 999 x 100 = 104,150
    ("priority, 1,000 jobs", {"Retained Full-Time Jobs": 999}, False, 100, 104_150),
    # growth zone, 1,000 jobs: base 5,000 + 1,250 = 6,250; retained 100; a.-e. 6,250 + 99,900 = 106,150
    ("growth zone, 1,000 jobs", {"Retained Full-Time Jobs": 999, "Area": "Growth Zone"}, False, 100, 106_150),
    ("growth zone (MRERA), 1,000 jobs", {"Retained Full-Time Jobs": 999, "Area": "Growth Zone (MRERA)"}, False, 100, 106_150),
]


@pytest.mark.parametrize("name,override,met,per_job,annual", AUTO_HQ_CASES, ids=[c[0] for c in AUTO_HQ_CASES])
def test_automobile_headquarters_mega_project(name, override, met, per_job, annual):
    got = check({**AUTO_HQ, **override}, {"Retained Credit per Job ($)": per_job, "Annual Credit ($)": annual})
    assert ("MEGA_PROJECT_DEFINITION_NOT_MET" in got["codes"]) is (not met), got["Calculation"]
    assert ("mega project Automobile HQ" in got["Calculation"]) is met
    assert got["Eligible"] == "Y" and not got["ineligible"]
    # the mega project's credit per retained job is its whole gross amount (246 e.), an ordinary one's is not
    assert bool(got["Retained Credit per Job ($)"] == got["Gross Credit per Job ($)"]) is met


def test_automobile_headquarters_areas_are_those_of_the_full_retained_share():
    # one list of areas for both provisions: the definition's Automobile HQ tiers (243) and 246 e.'s 100%
    tiers = [t for t in RULES["mega_project_definition"] if t.extra["basis"] == "Automobile HQ"]
    assert tiers and all(t.all_flags == ("US HQ of Automobile Manufacturer",) for t in tiers)
    for version, params in RULES.versions.items():
        assert all(set(t.area) == set(params["full_retained_areas"].value) for t in tiers), version
    assert not {"Distressed", "Urban Transit Hub"} & set(tiers[0].area)


def test_mega_project_with_100_jobs_is_computed_as_ordinary():
    # Mega Project = Y, basis Port District, 100 new jobs and $1,000,000: neither (1) nor (2) of a. holds.
    # Ordinary Priority project: base 3,000, cap 10,500 [246d(4)], annual 100 x 3,000 = 300,000,
    # f.(5) limit 4,000,000 and 90% of 1,000,000 = 900,000 not reached; total 3,000,000.
    got = check(
        {"Mega Project": "Y", "Mega Project Basis": "Port District", "New Full-Time Jobs": 100},
        {"Base Credit per Job ($)": 3_000, "Annual Credit ($)": 300_000, "Total Award ($)": 3_000_000},
    )
    assert got["codes"] == ["MEGA_PROJECT_DEFINITION_NOT_MET"] and not got["ineligible"]
    assert "mega project definition NOT met" in got["Calculation"]


def test_mega_project_basis_ignored_without_mega_project():
    got = run({"Mega Project Basis": "Port District", "New Full-Time Jobs": 1_001})[0]
    assert not [c for c in got["codes"] if c.startswith("MEGA")] and got["Base Credit per Job ($)"] == 3_000


def test_late_mega_application_is_computed_as_ordinary():
    # 247 b.(4): applied 2018-01-02, after 2017-09-18: the mega-project credit is barred, not the project.
    # Ordinary Priority: base 3,000 + 1,500 (1,001+ jobs) = 4,500; annual 1,001 x 4,500 = 4,504,500 over the
    # f.(5) limit of 4,000,000; 90% of 1,000,000 withholdings = 900,000 -> 900,000; total 9,000,000.
    got = check(
        {**MEGA_OK, "Application Date": D(2018, 1, 2)},
        {"Base Credit per Job ($)": 3_000, "Gross Credit per Job ($)": 4_500, "Annual Credit ($)": 900_000, "Total Award ($)": 9_000_000},
    )
    assert "MEGA_PROJECT_APPLICATION_LATE" in got["codes"] and not got["ineligible"] and got["Eligible"] == "Y"
    assert "MEGA_PROJECT_DEFINITION_NOT_MET" not in got["codes"]


# -- the amount necessary, tested on the amount under a. to e. (246 f., last paragraph) -------------
FLAGS_8000 = {
    "Transit Oriented Development": "Y",
    "Deep Poverty Pocket": "Y",
    "Qualified Incubator": "Y",
    "LEED Silver or Remediation": "Y",
}
PRIORITY_1001 = {"New Full-Time Jobs": 1_001, "Annual Withholdings ($)": 10_000_000}
NECESSITY_PRIORITY_CASES = [
    # Priority, 1,001 jobs: gross 3,000 + 1,500 = 4,500; a.-e. 1,001 x 4,500 = 4,504,500, in excess of 4,000,000,
    # so the credit is the least of the f.(5) maximum 4,000,000, 90% of 10,000,000 and the amount necessary.
    ("blank: warning, the maximum", {}, 4_000_000, ["ANNUAL_CAP_APPLIED", "NECESSITY_DETERMINATION_REQUIRED"]),
    ("given below the maximum", {"Amount Necessary ($)": 3_000_000}, 3_000_000, ["ANNUAL_CAP_APPLIED"]),
    ("given above the maximum", {"Amount Necessary ($)": 4_500_000}, 4_000_000, ["ANNUAL_CAP_APPLIED"]),
    # 90% of 3,000,000 = 2,700,000 is the least
    (
        "withholdings the least",
        {"Annual Withholdings ($)": 3_000_000, "Amount Necessary ($)": 3_500_000},
        2_700_000,
        ["ANNUAL_CAP_APPLIED", "WITHHOLDINGS_CAP_APPLIED"],
    ),
    # Other Eligible: base 500 + 1,500 = 2,000 x 2,500 = 5,000,000 > 4,000,000; f.(6) maximum 2,500,000
    (
        "other eligible, 2,500 jobs",
        {"Area": "Other Eligible", "New Full-Time Jobs": 2_500, "Amount Necessary ($)": 2_000_000},
        2_000_000,
        ["ANNUAL_CAP_APPLIED"],
    ),
    # 500 jobs with TOD, deep poverty, incubator and LEED: 3,000 + 2,000 + 1,500 + 500 + 250 + 750 (401-600) = 8,000;
    # 500 x 8,000 = 4,000,000, not "in excess of" 4,000,000: no amount-necessary limit, f.(5) not exceeded
    ("4,000,000 exactly: not in excess", {**FLAGS_8000, "New Full-Time Jobs": 500, "Amount Necessary ($)": 1_000_000}, 4_000_000, []),
    # 501 x 8,000 = 4,008,000, in excess: the least of 4,000,000 (f.(5)) and the amount necessary 1,000,000
    (
        "4,008,000: in excess",
        {**FLAGS_8000, "New Full-Time Jobs": 501, "Amount Necessary ($)": 1_000_000},
        1_000_000,
        ["ANNUAL_CAP_APPLIED"],
    ),
]


@pytest.mark.parametrize("name,override,annual,codes", NECESSITY_PRIORITY_CASES, ids=[c[0] for c in NECESSITY_PRIORITY_CASES])
def test_amount_necessary_reaches_priority_and_other_eligible(name, override, annual, codes):
    got = check({**PRIORITY_1001, **override}, {"Annual Credit ($)": annual, "Total Award ($)": annual * 10})
    found = [c for c in got["codes"] if c in (*LIMIT_CODES, "NECESSITY_DETERMINATION_REQUIRED")]
    assert found == codes, got["Calculation"]


# -- the MRERA alternative after every limit of f. (246 d., last paragraph) --------------------------
# Camden, Growth Zone (MRERA), 800 new jobs: gross 5,000 + 1,000 (601-800) = 6,000; a.-e. 800 x 6,000 = 4,800,000,
# in excess of 4,000,000. Alternative: Capital Investment / 10, tier (e) (250 jobs new to the municipality and
# $30,000,000) has no tier limit, capped by f.(1) 35,000,000.
MRERA_800 = {
    "Area": "Growth Zone (MRERA)",
    "County": "Camden",
    "New Full-Time Jobs": 800,
    "Gross Leasable Area (sq ft)": 100_000,
    "Capital Investment ($)": 30_000_000,
    "Net Benefit ($)": 60_000_000,
}
MRERA_ORDER_CASES = [
    # (name, override, annual, codes): the $30M project with a $1M amount necessary: ordinary 1,000,000 (the
    # amount necessary), alternative 3,000,000 (not subject to it) -> 3,000,000 a year, not 1,000,000
    ("30M, amount necessary 1M", {"Amount Necessary ($)": 1_000_000}, 3_000_000, ["MRERA_ALTERNATIVE_APPLIED"]),
    # amount necessary blank: ordinary 4,800,000 > alternative 3,000,000; the ordinary amount keeps its warning
    ("30M, amount necessary blank", {}, 4_800_000, ["NECESSITY_DETERMINATION_REQUIRED"]),
    # 50M: alternative 5,000,000 > 4,800,000: the ordinary amount's warning is not given
    (
        "50M, amount necessary blank",
        {"Capital Investment ($)": 50_000_000, "Net Benefit ($)": 60_000_000},
        5_000_000,
        ["MRERA_ALTERNATIVE_APPLIED"],
    ),
    # tie: 48,000,000 / 10 = 4,800,000 = ordinary: the ordinary amount is kept
    (
        "tie keeps ordinary",
        {"Capital Investment ($)": 48_000_000, "Net Benefit ($)": 60_000_000},
        4_800_000,
        ["NECESSITY_DETERMINATION_REQUIRED"],
    ),
    # 400M: 40,000,000 capped by f.(1) at 35,000,000, which is what is awarded
    (
        "alternative capped by f.(1)",
        {"Capital Investment ($)": 400_000_000, "Net Benefit ($)": 400_000_000},
        35_000_000,
        ["MRERA_ALTERNATIVE_APPLIED", "ANNUAL_CAP_APPLIED"],
    ),
]


@pytest.mark.parametrize("name,override,annual,codes", MRERA_ORDER_CASES, ids=[c[0] for c in MRERA_ORDER_CASES])
def test_mrera_alternative_is_compared_after_the_limits(name, override, annual, codes):
    got = check({**MRERA_800, **override}, {"Annual Credit ($)": annual, "Total Award ($)": annual * 10})
    limit_codes = ("MRERA_ALTERNATIVE_APPLIED", *LIMIT_CODES, "NECESSITY_DETERMINATION_REQUIRED")
    assert [c for c in got["codes"] if c in limit_codes] == codes, got["Calculation"]


def test_mrera_calculation_shows_both_amounts():
    got = run({**MRERA_800, "Amount Necessary ($)": 1_000_000})[0]
    assert "amount necessary [246f last para] 1,000,000.00 applied to 4,800,000.00" in got["Calculation"]
    assert "MRERA alternative 3,000,000.00" in got["Calculation"] and "vs ordinary 1,000,000.00: alternative used" in got["Calculation"]


# -- Tourism District (246 f.(1)) --------------------------------------------------------------------
TOURISM_CASES = [
    # (name, override, annual, info given)
    # Priority: 50 x 3,000 = 150,000; f.(5) and 90% of 10,000 = 9,000 still apply
    ("priority", {"Tourism District": "Y", "Annual Withholdings ($)": 10_000}, 9_000, True),
    ("distressed", {"Tourism District": "Y", "Area": "Distressed"}, 200_000, True),
    # Growth Zone: f.(1); 50 x 5,000 = 250,000
    ("growth zone", {"Tourism District": "Y", "Area": "Growth Zone"}, 250_000, False),
    ("2014 priority", {"Tourism District": "Y", "Statute Version": "2014", "Annual Withholdings ($)": 10_000}, 9_000, True),
    ("no flag", {"Annual Withholdings ($)": 10_000}, 9_000, False),
]


@pytest.mark.parametrize("name,override,annual,info", TOURISM_CASES, ids=[c[0] for c in TOURISM_CASES])
def test_tourism_district_counts_only_in_a_growth_zone(name, override, annual, info):
    got = check(override, {"Annual Credit ($)": annual})
    assert ("TOURISM_DISTRICT_OUTSIDE_GROWTH_ZONE" in got["codes"]) is info


def test_tourism_district_gets_the_f1_limit_in_a_growth_zone():
    # Growth Zone + Tourism District, 2017: f.(1) 35,000,000, not f.(2) 30,000,000.
    # gross 5,000 + 2,000 + 1,500 + 1,500 + 1,000 + 1,500 (1,001+ jobs) = 12,500; 2,500 x 12,500 = 31,250,000:
    # under f.(1), over f.(2) (amount necessary 40,000,000 is above both)
    rich = {
        "Transit Oriented Development": "Y",
        "Deep Poverty Pocket": "Y",
        "Redevelopment Area Near Highways": "Y",
        "Light Rail Half Mile": "Y",
        "Capital Investment ($)": 500_000_000,
        "Net Benefit ($)": 1_000_000_000,
        "Amount Necessary ($)": 40_000_000,
        "New Full-Time Jobs": 2_500,
        "Area": "Growth Zone",
    }
    check({**rich, "Tourism District": "Y"}, {"Gross Credit per Job ($)": 12_500, "Annual Credit ($)": 31_250_000})
    check(rich, {"Annual Credit ($)": 30_000_000})


# -- prior incentives (C.34:1B-247 e.) -------------------------------------------------------------
def _prior(*rows) -> pd.DataFrame:
    """Prior records as the pipeline hands them over: (sheet, record ID, business, status, date, year)."""
    return pd.DataFrame(
        [
            {
                "sheet": s,
                "record_id": r,
                "business_name": b,
                "status": st,
                "date": d,
                "year": y,
                "received": f"Agreement Date {d}" if d else f"First Tax Period {y}",
                "workbook": "old.xlsx",
                "run_date": "2026-10-01",
            }
            for s, r, b, st, d, y in rows
        ],
        columns=PRIOR_COLUMNS,
    )


ACME_BEIP = ("BEIP", "B-1", "ACME Corporation", "OK", "2015-06-01", 2015)
PRIOR_CASES = [
    # (name, grow overrides, prior rows, code, ineligible); the Grow NJ application is dated 2016-01-04
    ("both blank", {}, [ACME_BEIP], "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", False),
    ("obligations satisfied", {"Prior Incentive Obligations Satisfied": "Y"}, [ACME_BEIP], "PRIOR_INCENTIVE_RECEIVED", False),
    (
        "separate",
        {"Separate From Prior Award": "Y", "Prior Incentive Obligations Satisfied": "N"},
        [ACME_BEIP],
        "PRIOR_INCENTIVE_RECEIVED",
        False,
    ),
    ("one N, one blank", {"Prior Incentive Obligations Satisfied": "N"}, [ACME_BEIP], "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", False),
    (
        "both N",
        {"Prior Incentive Obligations Satisfied": "N", "Separate From Prior Award": "N"},
        [ACME_BEIP],
        "PRIOR_INCENTIVE_BARS_AGREEMENT",
        True,
    ),
    # received on the application date is not "previously": BEIP Agreement Date must be before it
    ("BEIP on the application date", {}, [("BEIP", "B-1", "Acme Corp.", "OK", "2016-01-04", 2016)], None, False),
    ("BEIP the day before", {}, [("BEIP", "B-1", "Acme Corp.", "OK", "2016-01-03", 2016)], "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", False),
    # BRRAP: First Tax Period not after the application's year
    ("BRRAP first period 2016", {}, [("BRRAP", "R-1", "acme, inc.", "OK", None, 2016)], "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", False),
    ("BRRAP first period 2017", {}, [("BRRAP", "R-1", "acme, inc.", "OK", None, 2017)], None, False),
    # records that do not count: Invalid or Ineligible, another business, a blank name
    ("invalid prior", {}, [("BEIP", "B-1", "Acme", "Invalid", "2015-06-01", 2015)], None, False),
    ("ineligible prior", {}, [("BRRAP", "R-1", "Acme", "Ineligible", None, 2014)], None, False),
    (
        "flagged prior counts",
        {},
        [("BEIP", "B-1", "Acme LLC", "Flagged", "2015-06-01", 2015)],
        "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN",
        False,
    ),
    ("another business", {}, [("BEIP", "B-1", "Acme Widgets", "OK", "2015-06-01", 2015)], None, False),
    ("blank grow name", {"Business Name": ""}, [ACME_BEIP], None, False),
]


@pytest.mark.parametrize("name,override,prior,code,ineligible", PRIOR_CASES, ids=[c[0] for c in PRIOR_CASES])
def test_prior_incentives(name, override, prior, code, ineligible):
    context = RunContext(dt.date(2026, 11, 30), _prior(*prior))
    got = run({"Business Name": "Acme Corp.", **override}, context=context)[0]
    found = [c for c in got["codes"] if c.startswith("PRIOR_INCENTIVE")]
    assert found == ([code] if code else [])
    assert got["ineligible"] is ineligible and bool(got["Total Award ($)"] == 0) is ineligible


def test_prior_incentive_finding_names_every_record():
    prior = _prior(ACME_BEIP, ("BRRAP", "R-9", "ACME CO", "OK", None, 2014))
    context = RunContext(dt.date(2026, 11, 30), prior)
    frame = typed_frame(GROW_NJ, [{**BASE, "Business Name": "Acme Corp."}])
    calc = grow_nj.calculate(frame, RULES, context)
    found = pd.concat([f for f in calc.findings if len(f)])
    row = found[found["code"] == "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"].iloc[0]
    # the earliest first: BRRAP R-9 counts from 2014-01-01, BEIP B-1 from 2015-06-02 (the day after its agreement)
    assert row["records"] == (
        "BRRAP R-9 (First Tax Period 2014; old.xlsx, run 2026-10-01); BEIP B-1 (Agreement Date 2015-06-01; old.xlsx, run 2026-10-01)"
    )
    assert row["date"] == pd.Timestamp("2016-01-04")


def test_prior_incentive_finding_lists_ten_records_then_counts_the_rest():
    # 25 BEIP grants of the business, agreements 2014-01-01 to 2014-01-25: the message names the first 10
    prior = _prior(*[("BEIP", f"B-{i:02d}", "Acme Inc", "OK", f"2014-01-{i:02d}", 2014) for i in range(1, 26)])
    frame = typed_frame(GROW_NJ, [{**BASE, "Business Name": "Acme Corp."}])
    calc = grow_nj.calculate(frame, RULES, RunContext(dt.date(2026, 11, 30), prior))
    found = pd.concat([f for f in calc.findings if len(f)])
    records = found[found["code"] == "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"].iloc[0]["records"]
    assert records.count("BEIP B-") == 10 and records.startswith("BEIP B-01 ") and "B-10 " in records and "B-11" not in records
    assert records.endswith("; and 15 more")


def test_prior_incentives_of_many_rows_are_matched_in_order():
    # 3 Grow NJ applications of one business against grants received on either side of their dates; the
    # applications are prior Grow NJ awards of each other too (C.34:1B-247 e., "any other program"):
    # 2014-12-31 (P-2) sees none; 2015-03-01 (P-0) sees P-2 (counts from 2015-01-01) and B-1 (from 2015-01-11);
    # 2016-01-04 (P-1) sees P-2, B-1, P-0 (from 2015-03-02) and R-1 (First Tax Period 2016, from 2016-01-01)
    prior = _prior(("BEIP", "B-1", "Acme", "OK", "2015-01-10", 2015), ("BRRAP", "R-1", "ACME LLC", "OK", None, 2016))
    rows = [{**BASE, "Project ID": f"P-{i}", "Business Name": "acme", "Application Date": d}
            for i, d in enumerate([D(2015, 3, 1), D(2016, 1, 4), D(2014, 12, 31)])]  # fmt: skip
    calc = grow_nj.calculate(typed_frame(GROW_NJ, rows), RULES, RunContext(dt.date(2026, 11, 30), prior, "acme.xlsx", "2026-11-30"))
    found = pd.concat([f for f in calc.findings if len(f)])
    by_row = dict(zip(found["row"], found["records"], strict=True))
    names = {r: _named(text) for r, text in by_row.items()}
    assert names == {0: ["GrowNJ P-2", "BEIP B-1"], 1: ["GrowNJ P-2", "BEIP B-1", "GrowNJ P-0", "BRRAP R-1"]}
    assert by_row[0].startswith("GrowNJ P-2 (Application Date 2014-12-31; acme.xlsx, run 2026-11-30); BEIP B-1 ")


def _named(records: str) -> list[str]:
    """The records a prior-incentive text names, in order: 'GrowNJ P-2', 'BEIP B-1', ..."""
    return re.findall(r"(?:^|; )(\w+ [^ (;]+) \(", records)


# -- prior Grow NJ awards of the same sheet (C.34:1B-247 e.) ------------------------------------------
# The row under test, T, applied 2016-01-04 (both prior-incentive columns blank); another project of the
# same business, O, is a prior record of T when it is another Project ID applied before T's date, neither
# Invalid nor Ineligible. Neither row has any other prior record.
T = {**BASE, "Project ID": "T", "Business Name": "Acme Corp."}
OTHER = {**BASE, "Project ID": "O", "Business Name": "ACME Corporation"}
NOT_SHOWN = "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"
SHEET_PRIOR_CASES = [
    # (name, O's overrides, T's prior code, O's prior code)
    ("the day before", {"Application Date": D(2016, 1, 3)}, "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", None),
    ("the same day: not before", {"Application Date": D(2016, 1, 4)}, None, None),
    ("the day after: T is O's prior", {"Application Date": D(2016, 1, 5)}, None, "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"),
    # O Ineligible by its own figures (capex $399,999.99 below $40 x 10,000 = $400,000): not a prior
    ("Ineligible the day before", {"Application Date": D(2016, 1, 3), "Capital Investment ($)": 399_999.99}, None, None),
    # O Ineligible by its net benefit ($1 < 110% of its award): not a prior; its award before that is no matter
    ("Ineligible by net benefit", {"Application Date": D(2016, 1, 3), "Net Benefit ($)": 1}, None, None),
    # O Flagged (a warning: Net Benefit blank) still counts
    ("Flagged the day before", {"Application Date": D(2016, 1, 3), "Net Benefit ($)": ""}, "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", None),
    # another statute version counts alike (the sheet's rows are checked together, whatever their text)
    ("2014 text the day before", {"Application Date": D(2016, 1, 3), "Statute Version": "2014"}, NOT_SHOWN, None),
    ("blank text the day after", {"Application Date": D(2016, 1, 5), "Statute Version": ""}, None, NOT_SHOWN),
    ("another business", {"Application Date": D(2016, 1, 3), "Business Name": "Acme Widgets"}, None, None),
    ("O's name blank", {"Application Date": D(2016, 1, 3), "Business Name": ""}, None, None),
]


@pytest.mark.parametrize("name,other,t_code,o_code", SHEET_PRIOR_CASES, ids=[c[0] for c in SHEET_PRIOR_CASES])
def test_prior_grow_nj_award_of_the_same_sheet(name, other, t_code, o_code):
    got_t, got_o = run_sheet([T, {**OTHER, **other}])
    assert [c for c in got_t["codes"] if c.startswith("PRIOR")] == ([t_code] if t_code else [])
    assert [c for c in got_o["codes"] if c.startswith("PRIOR")] == ([o_code] if o_code else [])
    if t_code:
        assert got_t["records"] == "GrowNJ O (Application Date 2016-01-03; acme.xlsx, run 2026-11-30)"
    if o_code:
        assert got_o["records"] == "GrowNJ T (Application Date 2016-01-04; acme.xlsx, run 2026-11-30)"


def run_sheet(rows: list[dict], prior: pd.DataFrame | None = None) -> list[dict]:
    """The rows (each a whole row) computed together as one sheet of acme.xlsx, run 2026-11-30: per row its
    codes, eligibility, award and the prior records its prior-incentive finding names."""
    context = RunContext(dt.date(2026, 11, 30), _prior() if prior is None else prior, "acme.xlsx", "2026-11-30")
    calc = grow_nj.calculate(typed_frame(GROW_NJ, rows), RULES, context)
    found = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])])
    records = dict(zip(found["row"], found["records"], strict=True)) if "records" in found else {}
    records = {k: v for k, v in records.items() if isinstance(v, str)}
    return [
        {
            "codes": found.loc[found["row"] == i, "code"].tolist(),
            "ineligible": bool(calc.ineligible.loc[i]),
            "Eligible": calc.computed.loc[i, "Eligible"],
            "Total Award ($)": calc.computed.loc[i, "Total Award ($)"] / 100,
            "records": records.get(i),
            "Calculation": calc.computed.loc[i, "Calculation"],
        }
        for i in range(len(rows))
    ]


BOTH_N = {"Prior Incentive Obligations Satisfied": "N", "Separate From Prior Award": "N"}


def test_a_project_barred_by_a_prior_award_is_no_prior_award_of_a_later_one():
    # Acme: O1 applied 2015-12-01 (eligible, no prior); O2 2016-01-01 with both columns N, so O1 bars it:
    # O2 is Ineligible, award 0. T (2016-02-01) has O1 as a prior; O2, Ineligible by its own bar, is not named.
    rows = [
        {**OTHER, "Project ID": "O1", "Application Date": D(2015, 12, 1)},
        {**OTHER, "Project ID": "O2", "Application Date": D(2016, 1, 1), **BOTH_N},
        {**T, "Application Date": D(2016, 2, 1)},
    ]
    o1, o2, t = run_sheet(rows)
    assert o1["codes"] == [] and o1["Total Award ($)"] == 1_500_000  # 50 x 3,000 x 10 years
    assert o2["codes"] == ["PRIOR_INCENTIVE_BARS_AGREEMENT"] and o2["ineligible"] and o2["Eligible"] == "N"
    assert o2["Total Award ($)"] == 0 and o2["records"] == "GrowNJ O1 (Application Date 2015-12-01; acme.xlsx, run 2026-11-30)"
    assert o2["Calculation"].endswith("NOT ELIGIBLE (prior incentive bars agreement): award 0")
    assert t["codes"] == ["PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"] and not t["ineligible"]
    assert t["records"] == "GrowNJ O1 (Application Date 2015-12-01; acme.xlsx, run 2026-11-30)"
    assert "O2" not in t["Calculation"] and t["Calculation"].endswith("; eligible")


def test_a_chain_of_barred_projects_names_only_the_records_that_stand():
    # B-1 (BEIP 2015-06-01) bars O1 (2015-12-01, both N); O1 barred, so O2 (2016-01-01, both N) is barred
    # by B-1 alone; T (2016-02-01) names B-1 only, and still has a prior (whether it has one never changes).
    prior = _prior(("BEIP", "B-1", "Acme Inc", "OK", "2015-06-01", 2015))
    rows = [
        {**OTHER, "Project ID": "O1", "Application Date": D(2015, 12, 1), **BOTH_N},
        {**OTHER, "Project ID": "O2", "Application Date": D(2016, 1, 1), **BOTH_N},
        {**T, "Application Date": D(2016, 2, 1), "Prior Incentive Obligations Satisfied": "Y"},
    ]
    o1, o2, t = run_sheet(rows, prior)
    beip = "BEIP B-1 (Agreement Date 2015-06-01; old.xlsx, run 2026-10-01)"
    assert (o1["codes"], o1["records"]) == (["PRIOR_INCENTIVE_BARS_AGREEMENT"], beip)
    assert (o2["codes"], o2["records"]) == (["PRIOR_INCENTIVE_BARS_AGREEMENT"], beip)
    assert (t["codes"], t["records"], t["ineligible"]) == (["PRIOR_INCENTIVE_RECEIVED"], beip, False)


def test_prior_grow_nj_records_of_earlier_runs():
    # records of the ledger (earlier runs): another Project ID applied before counts; one Invalid or
    # Ineligible does not; one with T's own Project ID is T's earlier version, not another award
    def grow(record_id, status, day):
        return {"sheet": "GrowNJ", "record_id": record_id, "business_name": "Acme", "status": status, "date": day,
                "year": int(day[:4]), "received": f"Application Date {day}", "workbook": "old.xlsx", "run_date": "2026-10-01"}  # fmt: skip

    cases = [
        ([grow("G-9", "OK", "2016-01-03")], "GrowNJ G-9 (Application Date 2016-01-03; old.xlsx, run 2026-10-01)"),
        ([grow("G-9", "Flagged", "2015-01-03")], "GrowNJ G-9 (Application Date 2015-01-03; old.xlsx, run 2026-10-01)"),
        ([grow("G-9", "OK", "2016-01-04")], None),  # the same day: not before
        ([grow("G-9", "Invalid", "2015-01-03")], None),
        ([grow("G-9", "Ineligible", "2015-01-03")], None),
        ([grow("T", "OK", "2015-01-03")], None),  # T's own Project ID
        (
            [grow("T", "OK", "2015-01-03"), grow("G-8", "OK", "2015-02-03")],
            "GrowNJ G-8 (Application Date 2015-02-03; old.xlsx, run 2026-10-01)",
        ),
    ]
    for records, named in cases:
        (t,) = run_sheet([T], pd.DataFrame(records, columns=PRIOR_COLUMNS))
        assert t["records"] == named, records
        assert ("PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN" in t["codes"]) is (named is not None)


def test_a_later_row_has_a_prior_whether_or_not_an_earlier_one_is_barred():
    # the observation the single pass rests on: each barred row has a counted prior of its own, earlier
    # than any later row. Many rows of one business, some with both columns N, in shuffled order: the rows
    # with a prior are exactly those with an earlier counted row or record, and no barred row is named.
    rng = np.random.default_rng(3)
    days = rng.integers(0, 60, 40)
    rows = [
        {**T, "Project ID": f"R-{i}", "Application Date": D(2015, 1, 1) + dt.timedelta(days=int(d)), **(BOTH_N if i % 3 == 0 else {})}
        for i, d in enumerate(days)
    ]
    got = run_sheet(rows)
    first = min(days)
    for i, (row, d) in enumerate(zip(got, days, strict=True)):
        has = [c for c in row["codes"] if c.startswith("PRIOR")] != []
        assert has is bool(d > first), (i, d)
        assert row["ineligible"] is bool(has and i % 3 == 0)
        named = [n.removeprefix("GrowNJ R-") for n in _named(row["records"] or "") if n.startswith("GrowNJ")]
        assert not [n for n in named if got[int(n)]["ineligible"]], (i, named)


def test_a_prior_in_another_chunk_counts(monkeypatch):
    # the pipeline computes a row-independent sheet in chunks of rows (for memory); a chunk of 2 rows here.
    # O1 (row 0, chunk 1) is a prior of O2 (row 3, chunk 2, both N: barred) and of T (row 6, chunk 4),
    # which names O1 only (O2 is Ineligible by its own bar); the other rows are other businesses.
    monkeypatch.setattr(pipeline, "CALC_CHUNK_ROWS", 2)
    other = [{**BASE, "Project ID": f"X-{i}", "Business Name": f"Other {i}"} for i in range(4)]
    rows = [
        {**OTHER, "Project ID": "O1", "Application Date": D(2015, 12, 1)},
        other[0],
        other[1],
        {**OTHER, "Project ID": "O2", "Application Date": D(2016, 1, 1), "Statute Version": "2014", **BOTH_N},
        other[2],
        other[3],
        {**T, "Application Date": D(2016, 2, 1)},
    ]
    frame = typed_frame(GROW_NJ, rows)
    context = RunContext(dt.date(2026, 11, 30), _prior(), "acme.xlsx", "2026-11-30")
    chunks = []

    def rows_of(f, rules, ctx):
        chunks.append(list(f["Project ID"]))
        return grow_nj.calculate_rows(f, rules, ctx)

    program = dataclasses.replace(BY_NAME["GrowNJ"], across_rows=AcrossRows(rows_of, grow_nj.across_rows))
    chunked = pipeline.calculate_in_chunks(program, frame, RULES, context)
    assert chunks == [["O1", "X-0"], ["X-1", "O2"], ["X-2", "X-3"], ["T"]]
    whole = grow_nj.calculate(frame, RULES, context)
    pd.testing.assert_frame_equal(chunked.computed, whole.computed)
    assert chunked.ineligible.tolist() == whole.ineligible.tolist() == [False, False, False, True, False, False, False]

    def found(calc):
        return pd.concat([f for f in calc.findings if len(f)]).sort_values(["row", "code"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(found(chunked), found(whole))
    prior = found(chunked)[lambda d: d["code"].str.startswith("PRIOR")]
    o1 = "GrowNJ O1 (Application Date 2015-12-01; acme.xlsx, run 2026-11-30)"
    assert prior[["row", "code", "records"]].values.tolist() == [
        [3, "PRIOR_INCENTIVE_BARS_AGREEMENT", o1],
        [6, "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", o1],
    ]


# -- the Calculation text: each distinct value formatted once ---------------------------------


def test_money_pieces_read_as_money_text():
    rng = np.random.default_rng(7)
    cents = np.concatenate(
        [
            [0, 1, 99, 100, 999_99, 1_000_00, 1_000_000_00, -1, -5_00, -1_234_567_89, 10**17, -(10**17)],
            rng.integers(-(10**12), 10**12, 2_000),
            rng.integers(0, 10**6, 2_000),
        ]
    )
    text = joined.concat(joined.money_pieces(cents), len(cents))
    assert text.tolist() == money_text(cents).tolist()
    assert joined.concat(joined.money_pieces([]), 0).tolist() == []


def test_concat_joins_pieces_that_hold_the_row_end_too():
    pieces = ["a", np.array(["x", "y\x00z"], dtype=object), ["-", np.array(["1", "2"], dtype=object)]]
    assert joined.concat(pieces, 2).tolist() == ["ax-1", "ay\x00z-2"]


def test_calculation_of_a_row_does_not_depend_on_the_other_rows():
    # rows that take every part of the text, calculated together and each alone: the same line
    overrides = [
        {},
        MEGA_OK,
        {"Transit Oriented Development": "Y", "Retained Full-Time Jobs": 20},
        {"Capital Investment ($)": 100_000, "Net Benefit ($)": 1},
        {**MRERA_800, "Amount Necessary ($)": 1_000_000},
        {**MRERA_800, "Capital Investment ($)": 400_000_000, "Net Benefit ($)": 400_000_000},
        {**MRERA_800},
        {"Annual Withholdings ($)": 1_000, "Retained Full-Time Jobs": 400, "Net Benefit ($)": None},
        {"Mega Project": "Y", "Application Date": D(2019, 1, 2)},
    ]
    together = [r["Calculation"] for r in run(*overrides)]
    alone = [run(o)[0]["Calculation"] for o in overrides]
    assert together == alone
    assert len(set(together)) == len(overrides)
