"""BEIP grant-to-credit conversion installments: README, sheet `BEIP`, sheet BEIP_Conversion (C.34:1B-129 e.)."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import run_rows

from batch.calculators import beip_conversion
from validators.beip import BEIP_CONVERSION
from validators.schema import validate

# Credit 2017 ($) through Credit 2030 ($): a 2026 approval's five installments (e.(1)) run 2026 to 2030
YEARS = range(2017, 2031)


def credits(got: dict) -> dict[int, float]:
    return {y: got[f"Credit {y} ($)"] for y in YEARS if got[f"Credit {y} ($)"] is not None}


SCHEDULE = [
    # (accrual year, installments, first tax period) for every year 2007 to 2026
    (2007, 0, None),
    *[(y, 5, 2017) for y in range(2008, 2014)],
    (2014, 4, 2019),
    (2015, 4, 2019),
    (2016, 3, 2020),
    (2017, 3, 2020),
    (2018, 2, 2022),
    (2019, 2, 2022),
    (2020, 2, 2023),
    (2021, 2, 2023),
    (2022, 2, 2023),
    (2023, 2, 2023),
    (2024, 1, 2025),
    (2025, 1, 2025),
    (2026, 0, None),
]


@pytest.mark.parametrize("year,count,first", SCHEDULE)
def test_schedule_for_every_accrual_year(year, count, first):
    got = run_rows(beip_conversion, [{"Grant ID": "G", "Accrual Year": year, "Approved Amount ($)": 1_000_000}])[0]
    assert got["Installments"] == count
    if count == 0:
        assert got["First Tax Period"] is None and credits(got) == {} and got["ineligible"]
        assert got["codes"] == ["ACCRUAL_YEAR_NOT_CONVERTIBLE"]
    else:
        paid = credits(got)
        assert got["First Tax Period"] == first and sorted(paid) == list(range(first, first + count))
        assert sum(paid.values()) == 1_000_000 and not got["codes"]


def test_2008_2013_percentages():
    got = run_rows(beip_conversion, [{"Grant ID": "G", "Accrual Year": 2010, "Approved Amount ($)": 100_000.01}])[0]
    # 5%, 20%, 25%, 25% rounded down to the cent: 5,000.00, 20,000.00, 25,000.00, 25,000.00; last 25,000.01
    assert credits(got) == {2017: 5_000.0, 2018: 20_000.0, 2019: 25_000.0, 2020: 25_000.0, 2021: 25_000.01}


def test_credit_columns_run_2017_to_2030():
    credit = [h for h in BEIP_CONVERSION.computed if h.startswith("Credit ")]
    assert credit == [f"Credit {y} ($)" for y in YEARS]


APPROVAL_CASES = [
    # e.(1): "the five-year period shall commence in that fiscal year" when approved after the start of 2017:
    # at 2017 the period starts in 2017 as for a blank Approval Year; one year after, it starts a year later
    (None, 2017),
    (2017, 2017),
    (2018, 2018),
    (2022, 2022),
    (2025, 2025),
    # the last Approval Year: 2026 to 2030, the last credit column
    (2026, 2026),
]


@pytest.mark.parametrize("approval,first", APPROVAL_CASES)
def test_later_approval_moves_the_five_year_period(approval, first):
    row = {"Grant ID": "G", "Accrual Year": 2012, "Approved Amount ($)": 200_000, "Approval Year": approval or ""}
    got = run_rows(beip_conversion, [row])[0]
    # 5%, 20%, 25%, 25%, 25% of 200,000: 10,000, 40,000, 50,000, 50,000, 50,000 in five consecutive years
    shares = [10_000, 40_000, 50_000, 50_000, 50_000]
    assert got["First Tax Period"] == first and credits(got) == dict(zip(range(first, first + 5), shares, strict=True))
    assert got["Installments"] == 5 and not got["codes"]


@pytest.mark.parametrize(
    "year,approval,first",
    # only e.(1) (accrued 2008-2013) moves with the Approval Year; e.(2) to e.(13) keep their tax period
    [(2013, 2026, 2026), (2014, 2026, 2019), (2016, 2021, 2020), (2023, 2026, 2023), (2025, 2026, 2025)],
)
def test_approval_year_moves_only_paragraph_1(year, approval, first):
    got = run_rows(beip_conversion, [{"Grant ID": "G", "Accrual Year": year, "Approved Amount ($)": 300, "Approval Year": approval}])[0]
    assert got["First Tax Period"] == first


@pytest.mark.parametrize(
    "amount,expected",
    [
        # 100.00 / 3 = 33.333...: 33.33, 33.33 and the remainder 33.34
        (100, {2020: 33.33, 2021: 33.33, 2022: 33.34}),
        # 0.02 / 3: 0.00, 0.00, 0.02
        (0.02, {2020: 0.0, 2021: 0.0, 2022: 0.02}),
        (0, {2020: 0.0, 2021: 0.0, 2022: 0.0}),
    ],
)
def test_remainder_goes_to_the_last_installment(amount, expected):
    got = run_rows(beip_conversion, [{"Grant ID": "G", "Accrual Year": 2016, "Approved Amount ($)": amount}])[0]
    assert credits(got) == expected


def test_grant_and_year_together_are_the_record_id():
    raw = pd.DataFrame(
        [
            {"Grant ID": "G", "Accrual Year": 2010, "Approved Amount ($)": 1},
            {"Grant ID": "G", "Accrual Year": 2011, "Approved Amount ($)": 1},
            {"Grant ID": "G", "Accrual Year": 2010, "Approved Amount ($)": 2},
        ],
        dtype=object,
    )
    _, findings = validate(BEIP_CONVERSION, raw)
    assert findings[["row", "code", "value"]].values.tolist() == [[2, "DUPLICATE_ID", "G / 2010"]]


@pytest.mark.parametrize(
    "approval,codes",
    # Approval Year: State fiscal years 2017 to 2026
    [(2016, ["OUT_OF_RANGE"]), (2017, []), (2018, []), (2025, []), (2026, []), (2027, ["OUT_OF_RANGE"]), ("", [])],
)
def test_approval_year_range(approval, codes):
    raw = pd.DataFrame([{"Grant ID": "G", "Accrual Year": 2010, "Approved Amount ($)": 1, "Approval Year": approval}], dtype=object)
    assert validate(BEIP_CONVERSION, raw)[1]["code"].tolist() == codes
