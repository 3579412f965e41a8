"""BEIP grant-to-credit conversion installments: README, sheet `BEIP`, sheet BEIP_Conversion (C.34:1B-129 e.)."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import run_rows

from batch.calculators import beip_conversion
from validators.beip import BEIP_CONVERSION
from validators.schema import validate

YEARS = range(2017, 2027)


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


@pytest.mark.parametrize("approval,first", [(None, 2017), (2016, 2017), (2017, 2017), (2018, 2018), (2022, 2022)])
def test_later_approval_moves_the_five_year_period(approval, first):
    row = {"Grant ID": "G", "Accrual Year": 2012, "Approved Amount ($)": 200_000, "Approval Year": approval or ""}
    got = run_rows(beip_conversion, [row])[0]
    assert got["First Tax Period"] == first and sorted(credits(got)) == list(range(first, first + 5))


def test_approval_year_does_not_move_other_paragraphs():
    got = run_rows(beip_conversion, [{"Grant ID": "G", "Accrual Year": 2016, "Approved Amount ($)": 300, "Approval Year": 2021}])[0]
    assert got["First Tax Period"] == 2020


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


def test_approval_year_after_2022_is_out_of_range():
    raw = pd.DataFrame([{"Grant ID": "G", "Accrual Year": 2010, "Approved Amount ($)": 1, "Approval Year": 2023}], dtype=object)
    assert validate(BEIP_CONVERSION, raw)[1]["code"].tolist() == ["OUT_OF_RANGE"]
