"""BRRAP grants: tables of cases for README, sheet `BRRAP` (P.L.2004 c.65 s.7)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_rows

from batch.calculators import brrap

BASE = {
    "Grant ID": "G",
    "Business Name": "Acme Insurance",
    "Employees Relocated or Retained": 100,
    "Yearly Tax Credit Amount ($)": 1_000_000,
    "First Tax Period": 2024,
    "Certificate of Compliance": "Y",
}


def rows(*changes):
    return run_rows(brrap, [{**BASE, "Grant ID": f"G-{i}", **c} for i, c in enumerate(changes)])


MULTIPLE_CASES = [(49, 0), (50, 1), (250, 1), (251, 2), (400, 2), (401, 3), (600, 3), (601, 4), (800, 4), (801, 5), (1_000, 5), (1_001, 6)]


@pytest.mark.parametrize("employees,multiple", MULTIPLE_CASES)
def test_multiple_by_employees(employees, multiple):
    got = rows({"Employees Relocated or Retained": employees, "Bonus Award ($)": 100_000})[0]
    assert got["Multiple"] == multiple and got["Tax Periods"] == multiple
    if multiple:
        # multiple x 1,000,000 + 100,000 bonus, over `multiple` periods
        assert got["Grant Amount ($)"] == multiple * 1_000_000 + 100_000
        assert got["Last Tax Period"] == 2024 + multiple - 1 and not got["ineligible"]
    else:
        assert got["codes"] == ["BELOW_50_EMPLOYEES"] and got["ineligible"]
        assert (got["Grant Amount ($)"], got["Credit per Tax Period ($)"], got["Last Tax Period"]) == (0, 0, None)


def test_credit_per_period_remainder_to_last():
    # 3 x 1,000,000.01 = 3,000,000.03 over 3 periods: 1,000,000.01 each
    got = rows({"Employees Relocated or Retained": 500, "Yearly Tax Credit Amount ($)": 1_000_000.01})[0]
    assert got["Credit per Tax Period ($)"] == 1_000_000.01
    # 6 x 1,000,000 + 0.05 = 6,000,000.05 over 6: 1,000,000.00 a period, the last 1,000,000.05
    got = rows({"Employees Relocated or Retained": 1_500, "Bonus Award ($)": 0.05})[0]
    assert got["Credit per Tax Period ($)"] == 1_000_000.00


@pytest.mark.parametrize("employees,coc,warn", [(250, "N", False), (251, "N", True), (251, "Y", False), (1_001, "", True)])
def test_certificate_of_compliance(employees, coc, warn):
    got = rows({"Employees Relocated or Retained": employees, "Certificate of Compliance": coc})[0]
    assert ("CERTIFICATE_OF_COMPLIANCE_REQUIRED" in got["codes"]) is warn


BUSINESS_CASES = [
    # two grants of one business in 2024: 6,000,000 + 4,000,000 = 10,000,000 exactly: allowed
    (4_000_000, False),
    # 6,000,000 + 4,000,000.01 = 10,000,000.01: both rows flagged
    (4_000_000.01, True),
]


@pytest.mark.parametrize("second,over", BUSINESS_CASES)
def test_single_business_limit(second, over):
    got = rows({"Yearly Tax Credit Amount ($)": 6_000_000}, {"Yearly Tax Credit Amount ($)": second, "Business Name": "  ACME insurance "})
    for g in got:
        assert ("BUSINESS_ANNUAL_LIMIT_EXCEEDED" in g["codes"]) is over


def test_single_business_limit_by_year():
    # 251 employees: 2 x 6,000,000 = 12,000,000 over 2024-2025 (6,000,000 a year); a second grant of
    # 4,500,000 in 2025 only puts 2025 at 10,500,000: flagged for 2025 alone
    got = rows(
        {"Employees Relocated or Retained": 251, "Yearly Tax Credit Amount ($)": 6_000_000},
        {"Yearly Tax Credit Amount ($)": 4_500_000, "First Tax Period": 2025},
        {"Yearly Tax Credit Amount ($)": 4_500_000, "First Tax Period": 2026},
    )
    assert [g["codes"].count("BUSINESS_ANNUAL_LIMIT_EXCEEDED") for g in got] == [1, 1, 0]


AGGREGATE_CASES = [
    # three businesses in 2024: 8,000,000 + 7,000,000 + 5,000,000 = 20,000,000 exactly: allowed
    (5_000_000, False),
    (5_000_000.01, True),
]


@pytest.mark.parametrize("third,over", AGGREGATE_CASES)
def test_aggregate_limit(third, over):
    got = rows(
        {"Business Name": "A", "Yearly Tax Credit Amount ($)": 8_000_000},
        {"Business Name": "B", "Yearly Tax Credit Amount ($)": 7_000_000},
        {"Business Name": "C", "Yearly Tax Credit Amount ($)": third},
        {"Business Name": "D", "Yearly Tax Credit Amount ($)": 9_000_000, "First Tax Period": 2025},
    )
    assert [("AGGREGATE_ANNUAL_LIMIT_EXCEEDED" in g["codes"]) for g in got] == [over, over, over, False]


def test_ineligible_rows_do_not_count():
    # 9,000,000 + 15,000,000 would be over 20,000,000, but the second grant is ineligible (10 employees)
    got = rows(
        {"Business Name": "A", "Yearly Tax Credit Amount ($)": 9_000_000},
        {"Business Name": "B", "Yearly Tax Credit Amount ($)": 15_000_000, "Employees Relocated or Retained": 10},
    )
    assert got[0]["codes"] == [] and got[1]["codes"] == ["BELOW_50_EMPLOYEES"]


def test_shuffled_rows_same_findings():
    changes = [
        {"Business Name": "A", "Yearly Tax Credit Amount ($)": 8_000_000, "Employees Relocated or Retained": 300},
        {"Business Name": "a", "Yearly Tax Credit Amount ($)": 5_000_000, "First Tax Period": 2025},
        {"Business Name": "B", "Yearly Tax Credit Amount ($)": 9_000_000},
        {"Business Name": "C", "Yearly Tax Credit Amount ($)": 4_000_000, "Employees Relocated or Retained": 20},
    ]
    base = rows(*changes)
    expected = {i: sorted(g["codes"]) for i, g in enumerate(base)}
    # A: 8,000,000 in 2024 and 2025, a: 5,000,000 in 2025 -> business A has 13,000,000 in 2025
    assert expected == {0: ["BUSINESS_ANNUAL_LIMIT_EXCEEDED"], 1: ["BUSINESS_ANNUAL_LIMIT_EXCEEDED"], 2: [], 3: ["BELOW_50_EMPLOYEES"]}
    rng = np.random.default_rng(3)
    for _ in range(4):
        perm = rng.permutation(len(changes))
        got = run_rows(brrap, [{**BASE, "Grant ID": f"G-{i}", **changes[i]} for i in perm])
        assert {int(p): sorted(g["codes"]) for p, g in zip(perm, got, strict=False)} == expected
