"""Grow NJ compliance and carry-forward: tables of cases for README, sheet `GrowNJ_Compliance` (C.34:1B-247)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from helpers import run_rows

from batch.calculators import grow_nj_compliance

D = dt.date
BASE = {
    "Project ID": "P",
    "Tax Period": 2020,
    "Approval Date": D(2016, 3, 15),
    "Certification Date": D(2018, 1, 10),
    "Annual Credit ($)": 1_000,
    "Agreement Jobs": 100,
    "Baseline Statewide Employees": 500,
    "Statewide Employees": 500,
    "Facility Employees": 100,
    "Period Documentation Certified Date": D(2021, 6, 1),
    "Tax Liability ($)": 5_000,
}


def one(**change):
    return run_rows(grow_nj_compliance, [{**BASE, **change}])[0]


@pytest.mark.parametrize(
    "certified,codes,allowed",
    [
        (D(2019, 3, 15), [], 1_000),  # exactly 3 years after approval
        (D(2019, 3, 16), ["CERTIFICATION_LATE"], 1_000),
        (D(2020, 3, 15), ["CERTIFICATION_LATE"], 1_000),  # exactly 4 years: late, not after 4
        (D(2020, 3, 16), ["CERTIFICATION_AFTER_4_YEARS"], 0),
    ],
)
def test_certification_date(certified, codes, allowed):
    got = one(**{"Certification Date": certified})
    assert got["codes"] == codes and got["Credit Allowed ($)"] == allowed
    assert got["ineligible"] is (codes == ["CERTIFICATION_AFTER_4_YEARS"])


@pytest.mark.parametrize("statewide,forfeit", [(400, False), (399, True), (500, False)])  # 80% of 500 = 400
def test_statewide_workforce(statewide, forfeit):
    got = one(**{"Statewide Employees": statewide})
    assert ("STATEWIDE_WORKFORCE_REDUCED" in got["codes"]) is forfeit and got["Credit Allowed ($)"] == (0 if forfeit else 1_000)


@pytest.mark.parametrize("facility,forfeit", [(80, False), (79, True)])  # 80% of 100 agreement jobs = 80
def test_facility_employment(facility, forfeit):
    got = one(**{"Facility Employees": facility})
    assert ("FACILITY_EMPLOYMENT_BELOW_80PCT" in got["codes"]) is forfeit and got["Credit Allowed ($)"] == (0 if forfeit else 1_000)


@pytest.mark.parametrize("certified,forfeit", [(D(2023, 12, 31), False), (D(2024, 1, 1), True), ("", True)])
def test_documentation_within_three_years_of_period_close(certified, forfeit):
    # the 2020 period closes on 2020-12-31; documentation due by 2023-12-31
    got = one(**{"Period Documentation Certified Date": certified})
    assert ("CREDIT_FORFEITED_UNCERTIFIED" in got["codes"]) is forfeit


def series(n, start=2020, **change):
    return [{**BASE, "Tax Period": start + i, "Period Documentation Certified Date": D(start + 1 + i, 6, 1), **change} for i in range(n)]


def test_forfeiture_lasts_only_the_period():
    rows = series(3)
    rows[1]["Facility Employees"] = 50
    got = run_rows(grow_nj_compliance, rows)
    assert [g["Credit Allowed ($)"] for g in got] == [1_000, 0, 1_000]


def test_sale_forfeits_that_period_and_every_later_one():
    rows = series(4)
    rows[1]["Facility Sold"] = "Y"
    got = run_rows(grow_nj_compliance, rows)
    assert [g["Credit Allowed ($)"] for g in got] == [1_000, 0, 0, 0]
    assert ["FACILITY_SOLD_CREDITS_FORFEITED" in g["codes"] for g in got] == [False, True, True, True]


def test_carry_forward_own_credit_first_then_oldest():
    rows = series(4, **{"Annual Credit ($)": 1_000})
    liab = [300, 200, 2_900, 100]
    for r, v in zip(rows, liab, strict=False):
        r["Tax Liability ($)"] = v
    got = run_rows(grow_nj_compliance, rows)
    cols = ["Credit Used ($)", "Carry-Forward Added ($)", "Carry-Forward Used ($)", "Carry-Forward Balance ($)"]
    # 2020: uses 300, carries 700. 2021: uses 200, carries 800 (balance 1,500).
    # 2022: own 1,000 then 1,500 carried (700 of 2020, 800 of 2021): uses 2,500, balance 0.
    # 2023: uses 100, carries 900
    assert [[g[c] for c in cols] for g in got] == [[300, 700, 0, 700], [200, 800, 0, 1_500], [2_500, 0, 1_500, 0], [100, 900, 0, 900]]


@pytest.mark.parametrize("used_in,expired", [(20, 0), (21, 700)])
def test_carry_forward_lasts_20_periods(used_in, expired):
    # 700 unused in 2020; nothing else is left over (credit 0 later) and liability 0 until the year tested
    rows = series(used_in + 1, **{"Annual Credit ($)": 0, "Tax Liability ($)": 0})
    rows[0].update({"Annual Credit ($)": 1_000, "Tax Liability ($)": 300})
    rows[used_in]["Tax Liability ($)"] = 5_000
    got = run_rows(grow_nj_compliance, rows)
    # 2020 + 20 = 2040 is the last period the 2020 credit can be used
    assert got[used_in]["Carry-Forward Used ($)"] == 700 - expired
    assert sum(g["Carry-Forward Expired ($)"] for g in got) == expired
    if expired:
        assert got[20]["Carry-Forward Expired ($)"] == 700 and got[20]["Carry-Forward Balance ($)"] == 0


def test_expiry_with_missing_years():
    # rows for 2020 and 2045 only: the 2020 carry-forward expired in between and is reported in 2045
    rows = [
        {**BASE, "Tax Period": 2020, "Tax Liability ($)": 300},
        {**BASE, "Tax Period": 2045, "Period Documentation Certified Date": D(2046, 1, 1), "Tax Liability ($)": 5_000},
    ]
    got = run_rows(grow_nj_compliance, rows)
    assert (got[1]["Carry-Forward Used ($)"], got[1]["Carry-Forward Expired ($)"], got[1]["Credit Used ($)"]) == (0, 700, 1_000)


def test_projects_do_not_share_carry_forward():
    rows = [
        {**BASE, "Project ID": "A", "Tax Liability ($)": 0},
        {**BASE, "Project ID": "B", "Tax Period": 2021, "Period Documentation Certified Date": D(2022, 1, 1), "Tax Liability ($)": 3_000},
    ]
    got = run_rows(grow_nj_compliance, rows)
    assert got[1]["Carry-Forward Used ($)"] == 0 and got[1]["Credit Used ($)"] == 1_000


def test_shuffled_rows_same_results():
    rows = series(6) + [{**r, "Project ID": "Q"} for r in series(4)]
    for i, r in enumerate(rows):
        r["Tax Liability ($)"] = [100, 2_500, 0, 900, 4_000, 50, 700, 0, 3_000, 10][i]
    rows[3]["Statewide Employees"] = 300
    base = run_rows(grow_nj_compliance, rows)
    key = lambda r: (r["Project ID"], r["Tax Period"])  # noqa: E731
    expected = {key(r): g for r, g in zip(rows, base, strict=False)}
    rng = np.random.default_rng(5)
    for _ in range(4):
        perm = rng.permutation(len(rows))
        got = run_rows(grow_nj_compliance, [rows[i] for i in perm])
        assert {key(rows[i]): g for i, g in zip(perm, got, strict=False)} == expected


def test_linear_in_periods():
    # 100 periods of one project run in one pass (a quadratic walk would still pass, so the check is
    # structural: every row is visited once and the open carry-forward never holds more than 21 amounts)
    rows = series(100, start=2000, **{"Tax Liability ($)": 0})
    got = run_rows(grow_nj_compliance, rows)
    # after 2099 only the credit of 2080 to 2099 can still be used: 20 x 1,000; each year one expires
    assert got[-1]["Carry-Forward Balance ($)"] == 20_000
    assert [g["Carry-Forward Expired ($)"] for g in got[:21]] == [0] * 20 + [1_000]
