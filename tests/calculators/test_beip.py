"""BEIP grants: tables of cases for README, sheet `BEIP`, sheet BEIP."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from helpers import run_rows

from batch.calculators import beip
from validators.beip import BEIP
from validators.schema import validate

D = dt.date
BASE = {
    "Grant ID": "G",
    "Agreement Date": D(2010, 1, 4),
    "Grant Form": "Tax Credit",
    "Withholdings Percentage": 0.4,
    "Annual Withholdings ($)": 500_000,
    "Grant Term (years)": 10,
    "New Employees": 100,
}


def one(**change):
    return run_rows(beip, [{**BASE, **change}])[0]


PERCENT_CASES = [
    # withholdings 10% to 50%, 80% with smart growth (a., b.); partners 10% to 30%, 50% with smart growth
    ({"Withholdings Percentage": 0.10}, False),
    ({"Withholdings Percentage": 0.0999}, True),
    ({"Withholdings Percentage": 0.50}, False),
    ({"Withholdings Percentage": 0.5001}, True),
    ({"Withholdings Percentage": "50%"}, False),
    ({"Withholdings Percentage": 0.3}, False),
    ({"Withholdings Percentage": 0.80, "Smart Growth": "Y"}, False),
    ({"Withholdings Percentage": 0.8001, "Smart Growth": "Y"}, True),
    ({"Withholdings Percentage": 0.51, "Smart Growth": "N"}, True),
    (
        {
            "Withholdings Percentage": None,
            "Annual Withholdings ($)": None,
            "Partner Estimated Tax Percentage": 0.30,
            "Annual Partner Estimated Tax ($)": 100_000,
        },
        False,
    ),
    (
        {
            "Withholdings Percentage": None,
            "Annual Withholdings ($)": None,
            "Partner Estimated Tax Percentage": 0.3001,
            "Annual Partner Estimated Tax ($)": 100_000,
        },
        True,
    ),
    (
        {
            "Withholdings Percentage": None,
            "Annual Withholdings ($)": None,
            "Partner Estimated Tax Percentage": 0.50,
            "Annual Partner Estimated Tax ($)": 100_000,
            "Smart Growth": "Y",
        },
        False,
    ),
    (
        {
            "Withholdings Percentage": None,
            "Annual Withholdings ($)": None,
            "Partner Estimated Tax Percentage": 0.0999,
            "Annual Partner Estimated Tax ($)": 100_000,
        },
        True,
    ),
]


@pytest.mark.parametrize("change,bad", PERCENT_CASES)
def test_grant_percent_range(change, bad):
    assert ("GRANT_PERCENT_OUT_OF_RANGE" in one(**change)["codes"]) is bad


AMOUNT_CASES = [
    # 40% x 500,000 = 200,000 a year; x 10 = 2,000,000; / 100 = 20,000
    ({}, 200_000, 2_000_000, 20_000),
    # 30% x 333,333.33 = 99,999.999 -> 100,000.00 a year; total 999,999.99 (exact, rounded once); / 7 = 142,857.14
    ({"Withholdings Percentage": 0.3, "Annual Withholdings ($)": 333_333.33, "New Employees": 7}, 100_000, 999_999.99, 142_857.14),
    # both pairs: 40% x 500,000 + 25% x 80,000 = 220,000
    ({"Partner Estimated Tax Percentage": 0.25, "Annual Partner Estimated Tax ($)": 80_000}, 220_000, 2_200_000, 22_000),
]


@pytest.mark.parametrize("change,annual,total,average", AMOUNT_CASES)
def test_grant_amounts(change, annual, total, average):
    got = one(**change)
    assert (got["Annual Grant ($)"], got["Total Grant ($)"], got["Average Grant per New Employee ($)"]) == (annual, total, average)


@pytest.mark.parametrize("term,bad", [(10, False), (11, True), (1, False)])
def test_grant_term(term, bad):
    assert ("GRANT_TERM_OVER_10_YEARS" in one(**{"Grant Term (years)": term})["codes"]) is bad


AVERAGE_CASES = [
    # 50% x 1,000,000 x 10 = 5,000,000 over 100 employees = 50,000.00 on the nose: allowed
    (D(2003, 7, 1), 1_000_000, False),
    # 50% x 1,000,000.02 x 10 = 5,000,000.10 / 100 = 50,000.001 -> over
    (D(2003, 7, 1), 1_000_000.02, True),
    # agreements before 2003-07-01 have no average limit
    (D(2003, 6, 30), 2_000_000, False),
]


@pytest.mark.parametrize("date,withholdings,bad", AVERAGE_CASES)
def test_average_grant_per_employee(date, withholdings, bad):
    got = one(**{"Agreement Date": date, "Withholdings Percentage": 0.5, "Annual Withholdings ($)": withholdings})
    assert ("AVERAGE_GRANT_OVER_50000" in got["codes"]) is bad


WAIVER = {
    "Remote Work Waiver Elected": "Y",
    "Waiver Election Date": D(2023, 6, 1),
    "Minimum Time at Facility": 0.2,
    "2022 Tax Period Credit ($)": 123_456.78,
}
WAIVER_CASES = [
    ({}, []),
    ({"Waiver Election Date": D(2023, 12, 31)}, []),
    ({"Waiver Election Date": D(2024, 1, 1)}, ["WAIVER_ELECTION_LATE"]),
    ({"Minimum Time at Facility": 0.10}, []),
    ({"Minimum Time at Facility": 0.0999}, ["WAIVER_TIME_BELOW_10PCT"]),
    ({"Minimum Time at Facility": "9%"}, ["WAIVER_TIME_BELOW_10PCT"]),
]


@pytest.mark.parametrize("change,codes", WAIVER_CASES)
def test_remote_work_waiver(change, codes):
    got = one(**{**WAIVER, **change})
    assert got["codes"] == codes
    # 5% x 123,456.78 = 6,172.839 -> 6,172.84
    assert got["Waiver Payment Due ($)"] == 6_172.84


def test_no_waiver_no_payment():
    assert one()["Waiver Payment Due ($)"] is None


def test_errors_flag_but_still_compute():
    got = one(**{"Grant Term (years)": 11})
    assert got["Total Grant ($)"] == 2_200_000 and not got["ineligible"]


MISSING_CASES = [
    # (change, column that is reported)
    ({"Withholdings Percentage": None, "Annual Withholdings ($)": None}, "Withholdings Percentage"),
    ({"Annual Withholdings ($)": None}, "Annual Withholdings ($)"),
    ({"Withholdings Percentage": None}, "Withholdings Percentage"),
    ({"Partner Estimated Tax Percentage": 0.2}, "Annual Partner Estimated Tax ($)"),
    ({"Remote Work Waiver Elected": "Y"}, "2022 Tax Period Credit ($)"),
]


@pytest.mark.parametrize("change,column", MISSING_CASES)
def test_missing_values(change, column):
    raw = pd.DataFrame([{**BASE, **{k: ("" if v is None else v) for k, v in change.items()}}], dtype=object)
    _, findings = validate(BEIP, raw)
    assert findings[["column", "code"]].values.tolist() == [[column, "MISSING_VALUE"]]


def test_percent_over_100_is_out_of_range():
    raw = pd.DataFrame([{**BASE, "Withholdings Percentage": "150%"}], dtype=object)
    assert validate(BEIP, raw)[1]["code"].tolist() == ["OUT_OF_RANGE"]
