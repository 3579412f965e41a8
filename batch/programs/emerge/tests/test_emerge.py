"""Emerge eligibility: tables of cases for README, sheet `Emerge` (C.34:1B-339)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from conftest import typed_frame, workbook  # noqa: F401 (the fixture, for the tests below)
from helpers import run_rows

from batch.programs.emerge import steps as emerge
from batch.programs.emerge.sheet import EMERGE
from validators.schema import validate

D = dt.date
CERTS = {
    "Accommodates Majority of Employees": "Y",
    "Material Factor": "Y",
    "Meets Environmental Standards": "Y",
    "Affirmative Action Compliance": "Y",
    "Prevailing Wage Compliance": "Y",
}
# min capex $40 x 10,000 = $400,000; 35 new jobs; required net benefit 4.00 (Other Qualified Incentive Area)
BASE = {
    "Project ID": "E",
    "Application Date": D(2024, 1, 8),
    "Location": "Other Qualified Incentive Area",
    "Premises Type": "Non-Industrial Rehab",
    "Gross Leasable Area (sq ft)": 10_000,
    "Capital Investment ($)": 500_000,
    "New Full-Time Jobs": 35,
    "Retained Full-Time Jobs": 0,
    "Requested Tax Credit ($)": 1_000_000,
    "Net Benefit ($)": 4_000_000,
    "Withholdings Subject to NJ Income Tax": 0.9,
    **CERTS,
}


def one(**change):
    return run_rows(emerge, [{**BASE, **change}])[0]


def test_base_case_is_eligible():
    got = one()
    assert (got["Eligible"], got["codes"], got["Minimum Capital Investment ($)"], got["Minimum New Jobs"]) == ("Y", [], 400_000, 35)


APPLICATION_DATE_CASES = [
    # a. and f.: "Beginning on the effective date of P.L.2020, c.156" (approved and effective 2021-01-07)
    # "but prior to March 1, 2029"
    (D(2020, 6, 1), ["APPLICATION_BEFORE_PROGRAM"]),  # an application dated before the program existed
    (D(2021, 1, 6), ["APPLICATION_BEFORE_PROGRAM"]),  # the day before the effective date
    (D(2021, 1, 7), []),  # the effective date itself: "on or after"
    (D(2021, 1, 8), []),
    (D(2029, 2, 28), []),
    (D(2029, 3, 1), ["APPLICATION_AFTER_DEADLINE"]),  # not "prior to March 1, 2029"
    (D(2029, 3, 2), ["APPLICATION_AFTER_DEADLINE"]),
]


@pytest.mark.parametrize("date,codes", APPLICATION_DATE_CASES)
def test_application_window(date, codes):
    got = one(**{"Application Date": date})
    assert got["codes"] == codes and got["ineligible"] is bool(codes) and got["Eligible"] == ("N" if codes else "Y")


def test_program_start_message_and_rules_data():
    from batch.programs._kit.findings import render
    from batch.programs._kit.rules import load

    rules = load("emerge")
    start = rules["program_start"]
    assert start.value == pd.Timestamp("2021-01-07") and "P.L.2020, c.156" in start.source and start.interpretation
    frame = typed_frame(EMERGE, [{**BASE, "Application Date": D(2020, 6, 1)}])
    calc = emerge.calculate(frame, rules)
    shown = render(pd.concat([f for f in calc.findings if len(f)]), "Emerge", rules.findings)
    assert shown[["Code", "Severity", "Column"]].values.tolist() == [["APPLICATION_BEFORE_PROGRAM", "error", "Application Date"]]
    assert "2020-06-01 is before 2021-01-07" in shown["Message"].iloc[0] and shown["Citation"].iloc[0] == "C.34:1B-339 a., f."


@pytest.mark.parametrize("column", ["Small Business", "Targeted Industry", "Mega Project"])
def test_blank_yes_no_means_no(column):
    # README: a blank yes/no cell means No unless the page says otherwise (it does only for the certifications)
    blank, no = run_rows(emerge, [{**BASE, "Project ID": "B", column: ""}, {**BASE, "Project ID": "N", column: "N"}])
    assert blank == no


def test_outside_a_qualified_incentive_area():
    got = one(Location="Outside Qualified Incentive Area")
    assert "NOT_IN_QUALIFIED_INCENTIVE_AREA" in got["codes"] and got["Eligible"] == "N"


CAPEX_CASES = [
    # (capex, donation, warning)
    (400_000, 0, False),
    (399_999.99, 0.01, True),
    (250_000, 150_000, True),
]


@pytest.mark.parametrize("capex,donation,warn", CAPEX_CASES)
def test_capex_and_donation(capex, donation, warn):
    got = one(**{"Capital Investment ($)": capex})
    assert got["Infrastructure Fund Donation ($)"] == donation
    assert ("CAPEX_BELOW_MINIMUM_DONATION_DUE" in got["codes"]) is warn and got["Eligible"] == "Y"


def test_small_business_needs_no_capex():
    got = one(**{"Small Business": "Y", "Current Workforce": 40, "New Full-Time Jobs": 10, "Capital Investment ($)": 0})
    assert (got["Minimum Capital Investment ($)"], got["Infrastructure Fund Donation ($)"], got["Minimum New Jobs"]) == (0, 0, 10)
    assert got["Eligible"] == "Y"


JOB_CASES = [
    # (change, minimum new jobs, retained eligible, jobs finding)
    ({"New Full-Time Jobs": 35}, 35, "N", False),
    ({"New Full-Time Jobs": 34}, 35, "N", True),
    ({"Targeted Industry": "Y", "New Full-Time Jobs": 25}, 25, "N", False),
    ({"Targeted Industry": "Y", "New Full-Time Jobs": 24}, 25, "N", True),
    # small business: 25% of a workforce of 30 = 7.5 new jobs
    ({"Small Business": "Y", "Current Workforce": 30, "New Full-Time Jobs": 8}, 7.5, "N", False),
    ({"Small Business": "Y", "Current Workforce": 30, "New Full-Time Jobs": 7}, 7.5, "N", True),
    # (d): meets (c) and retains 500 elsewhere, 250 in a tract or enhanced area, 150 in a government-restricted municipality
    ({"Retained Full-Time Jobs": 500}, 35, "Y", False),
    ({"Retained Full-Time Jobs": 499}, 35, "N", False),
    ({"Retained Full-Time Jobs": 250, "Location": "Qualified Incentive Tract"}, 35, "Y", False),
    ({"Retained Full-Time Jobs": 249, "Location": "Enhanced Area"}, 35, "N", False),
    ({"Retained Full-Time Jobs": 150, "Location": "Government-Restricted Municipality"}, 35, "Y", False),
    ({"Retained Full-Time Jobs": 149, "Location": "Government-Restricted Municipality"}, 35, "N", False),
    # (e): too few new jobs, 500 retained in a tract, enhanced area or government-restricted municipality
    ({"New Full-Time Jobs": 0, "Retained Full-Time Jobs": 500, "Location": "Enhanced Area"}, 35, "Y", False),
    ({"New Full-Time Jobs": 0, "Retained Full-Time Jobs": 499, "Location": "Enhanced Area"}, 35, "N", True),
    ({"New Full-Time Jobs": 0, "Retained Full-Time Jobs": 500}, 35, "N", True),  # elsewhere (e) does not apply
    # (f): 1,000 retained anywhere
    ({"New Full-Time Jobs": 0, "Retained Full-Time Jobs": 1_000}, 35, "Y", False),
    ({"New Full-Time Jobs": 0, "Retained Full-Time Jobs": 999}, 35, "N", True),
]


@pytest.mark.parametrize("change,minimum,retained_ok,short", JOB_CASES)
def test_jobs(change, minimum, retained_ok, short):
    got = one(**change)
    assert got["Minimum New Jobs"] == minimum and got["Retained Jobs Eligible"] == retained_ok
    assert ("JOBS_BELOW_MINIMUM" in got["codes"]) is short and got["ineligible"] is short


def test_small_business_without_workforce_is_missing_value():
    raw = pd.DataFrame([{**BASE, "Small Business": "Y"}], dtype=object)
    assert validate(EMERGE, raw)[1][["column", "code"]].values.tolist() == [["Current Workforce", "MISSING_VALUE"]]


NET_BENEFIT_CASES = [
    # (change, required, net benefit that is exactly enough)
    ({}, 4.0, 4_000_000),
    ({"Location": "Distressed Municipality"}, 3.0, 3_000_000),
    ({"Location": "Enhanced Area"}, 3.0, 3_000_000),
    ({"Location": "Government-Restricted Municipality"}, 2.0, 2_000_000),
    ({"Mega Project": "Y"}, 2.0, 2_000_000),
    ({"Mega Project": "Y", "Location": "Enhanced Area"}, 2.0, 2_000_000),  # the lowest that applies
]


@pytest.mark.parametrize("change,required,enough", NET_BENEFIT_CASES)
@pytest.mark.parametrize("delta,short", [(0, False), (-0.01, True), (0.01, False)])
def test_net_benefit_ratio(change, required, enough, delta, short):
    got = one(**{**change, "Net Benefit ($)": enough + delta})
    assert got["Required Net Benefit Ratio"] == required
    assert got["Net Benefit Ratio"] == pytest.approx((enough + delta) / 1_000_000)
    assert ("NET_BENEFIT_BELOW_THRESHOLD" in got["codes"]) is short


@pytest.mark.parametrize("share,short", [(0.8, False), ("80%", False), (0.7999, True), (0.81, False)])
def test_withholdings_80_percent(share, short):
    got = one(**{"Withholdings Subject to NJ Income Tax": share})
    assert ("WITHHOLDINGS_BELOW_80PCT" in got["codes"]) is short and got["ineligible"] is short


@pytest.mark.parametrize("column", list(CERTS))
def test_certifications(column):
    no = run_rows(emerge, [{**BASE, column: "N"}])[0]
    blank = run_rows(emerge, [{**BASE, column: ""}])[0]
    assert no["codes"] == ["CERTIFICATION_MISSING"] and no["ineligible"] and no["Eligible"] == "N"
    assert blank["codes"] == ["CERTIFICATION_MISSING"] and not blank["ineligible"] and blank["Eligible"] == "Y"


def test_certification_severity_in_the_findings_sheet(workbook):
    from batch.pipeline import process

    headers = list(BASE)
    rows = [{**BASE, "Project ID": "A", "Material Factor": "N"}, {**BASE, "Project ID": "B", "Material Factor": ""}]
    path = workbook({"Emerge": [headers] + [[r[h] for h in headers] for r in rows]})
    res = process(path).intake[0]
    f = res.findings[res.findings["Code"] == "CERTIFICATION_MISSING"]
    assert f[["Record ID", "Severity"]].values.tolist() == [["A", "error"], ["B", "warning"]]
    assert res.status.tolist() == ["Ineligible", "Flagged"]


def test_a_very_large_area_stays_exact():
    # $120 x 10,000,000,000 sq ft = $1,200,000,000,000 (beyond 64-bit integers of billionths of a foot)
    got = one(**{"Premises Type": "Non-Industrial New", "Gross Leasable Area (sq ft)": 10_000_000_000, "Capital Investment ($)": 1_000})
    assert got["Minimum Capital Investment ($)"] == 1_200_000_000_000 and "CAPEX_BELOW_MINIMUM_DONATION_DUE" in got["codes"]
