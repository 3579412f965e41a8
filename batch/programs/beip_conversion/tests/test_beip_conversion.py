"""BEIP grant-to-credit conversion installments: README, sheet `BEIP`, sheet BEIP_Conversion (C.34:1B-129 e.)."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import run_rows

from batch.programs.beip_conversion import steps as beip_conversion
from batch.programs.beip_conversion.sheet import BEIP_CONVERSION
from validators.schema import validate

# Credit 2017 ($) through Credit 2034 ($): a 2030 approval's five installments (e.(1)) run 2030 to 2034
YEARS = range(2017, 2035)


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


def test_credit_columns_run_2017_to_2034():
    credit = [h for h in BEIP_CONVERSION.computed if h.startswith("Credit ")]
    assert credit == [f"Credit {y} ($)" for y in YEARS]


APPROVAL_CASES = [
    # e.(1): an amount not approved by the commencement of State fiscal year 2017 "shall be issued in the year the
    # amount is approved and the five-year period shall commence in that fiscal year": an Approval Year of 2017 or
    # earlier (or blank) keeps the schedule from 2017; after 2017 the period starts in the Approval Year.
    # 5%, 20%, 25%, 25%, 25% of 200,000 = 10,000, 40,000, 50,000, 50,000, 50,000 (sum 200,000)
    pytest.param(None, 2017, id="blank: 2017-2021"),
    pytest.param(2008, 2017, id="2008, the first accepted: 2017-2021"),
    pytest.param(2016, 2017, id="2016, before 2017: 2017-2021"),
    pytest.param(2017, 2017, id="2017 on the nose: 2017-2021"),
    pytest.param(2018, 2018, id="2018, just after: 2018-2022"),
    pytest.param(2022, 2022, id="2022: 2022-2026"),
    # the last accepted Approval Year: 2030 to 2034, the last credit column
    pytest.param(2030, 2030, id="2030, the last accepted: 2030-2034"),
]


@pytest.mark.parametrize("approval,first", APPROVAL_CASES)
def test_later_approval_moves_the_five_year_period(approval, first):
    row = {"Grant ID": "G", "Accrual Year": 2012, "Approved Amount ($)": 200_000, "Approval Year": approval or ""}
    got = run_rows(beip_conversion, [row])[0]
    # 5%, 20%, 25%, 25%, 25% of 200,000: 10,000, 40,000, 50,000, 50,000, 50,000 in five consecutive years
    shares = [10_000, 40_000, 50_000, 50_000, 50_000]
    assert got["ineligible"] is False
    assert got["First Tax Period"] == first and credits(got) == dict(zip(range(first, first + 5), shares, strict=True))
    assert got["Installments"] == 5 and not got["codes"]


@pytest.mark.parametrize(
    "year,approval,first",
    # only e.(1) (accrued 2008-2013) moves with the Approval Year; e.(2) to e.(13) keep their tax period
    [(2013, 2030, 2030), (2008, 2016, 2017), (2014, 2030, 2019), (2016, 2021, 2020), (2023, 2030, 2023), (2025, 2030, 2025)],
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
    # Approval Year accepted from 2008 to 2030 (e.(1) names no last year; 2030 is a sanity bound): OUT_OF_RANGE outside
    [
        (2007, ["OUT_OF_RANGE"]),
        (2008, []),
        (2009, []),
        (2016, []),
        (2017, []),
        (2018, []),
        (2029, []),
        (2030, []),
        (2031, ["OUT_OF_RANGE"]),
        ("", []),
    ],
)
def test_approval_year_range(approval, codes):
    raw = pd.DataFrame([{"Grant ID": "G", "Accrual Year": 2010, "Approved Amount ($)": 1, "Approval Year": approval}], dtype=object)
    assert validate(BEIP_CONVERSION, raw)[1]["code"].tolist() == codes


APPROVAL_AMOUNT_CASES = [
    # accrued 2011, Approved Amount 123,456.78 = 12,345,678 cents; e.(1) shares rounded down to the cent, the last
    # takes the remainder: 5% = 6,172.839 -> 6,172.83; 20% = 24,691.356 -> 24,691.35; 25% = 30,864.195 -> 30,864.19
    # twice; last 123,456.78 - 6,172.83 - 24,691.35 - 30,864.19 - 30,864.19 = 30,864.22
    pytest.param(None, 2017, id="blank"),
    pytest.param(2016, 2017, id="2016"),
    pytest.param(2017, 2017, id="2017"),
    pytest.param(2018, 2018, id="2018"),
    pytest.param(2030, 2030, id="2030"),
]


@pytest.mark.parametrize("approval,first", APPROVAL_AMOUNT_CASES)
def test_approval_year_installment_amounts(approval, first):
    row = {"Grant ID": "G", "Accrual Year": 2011, "Approved Amount ($)": 123_456.78, "Approval Year": approval or ""}
    got = run_rows(beip_conversion, [row])[0]
    amounts = [6_172.83, 24_691.35, 30_864.19, 30_864.19, 30_864.22]
    assert credits(got) == dict(zip(range(first, first + 5), amounts, strict=True))
    assert (got["Installments"], got["First Tax Period"], got["codes"]) == (5, first, [])


def test_a_2030_approval_fills_the_last_credit_column():
    row = {"Grant ID": "G", "Accrual Year": 2013, "Approved Amount ($)": 1_000, "Approval Year": 2030}
    got = run_rows(beip_conversion, [row])[0]
    # 25% of 1,000 = 250 in 2034, the fifth installment of a period starting 2030 (2030 + 4 = 2034)
    assert got["Credit 2034 ($)"] == 250 and got["Credit 2029 ($)"] is None
    assert [h for h in BEIP_CONVERSION.computed if h.startswith("Credit ")][-1] == "Credit 2034 ($)"
