"""BEIP grants: tables of cases for README, sheet `BEIP`, sheet BEIP."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from conftest import workbook  # noqa: F401 (the fixture, for the tests below)
from helpers import run_rows

from batch.programs.beip import steps as beip
from batch.programs.beip.sheet import BEIP
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
# 5% x 123,456.78 = 6,172.839 -> 6,172.84 (h.(2))
PAYMENT = 6_172.84
WAIVER_CASES = [
    # (change to the waiver row, codes, Waiver Payment Due)
    pytest.param({}, [], PAYMENT, id="elected in time, 20% at the facility"),
    # h.: "may elect, before December 31, 2023": the day before is in time, the day itself is late
    pytest.param({"Waiver Election Date": D(2023, 12, 30)}, [], PAYMENT, id="a waiver dated 2023-12-30"),
    pytest.param({"Waiver Election Date": D(2023, 12, 31)}, ["WAIVER_ELECTION_LATE"], PAYMENT, id="a waiver dated 2023-12-31"),
    pytest.param({"Waiver Election Date": D(2024, 1, 1)}, ["WAIVER_ELECTION_LATE"], PAYMENT, id="a waiver dated 2024-01-01"),
    # h.(1): "at least 10 percent of the employee's time at the qualified business facility"
    pytest.param({"Minimum Time at Facility": 0.10}, [], PAYMENT, id="time 10%"),
    pytest.param({"Minimum Time at Facility": 0.0999}, ["WAIVER_TIME_BELOW_10PCT"], PAYMENT, id="time 9.99%"),
    pytest.param({"Minimum Time at Facility": 0.1001}, [], PAYMENT, id="time 10.01%"),
    pytest.param({"Minimum Time at Facility": "9%"}, ["WAIVER_TIME_BELOW_10PCT"], PAYMENT, id="time 9% as text"),
    # a blank fact: the election cannot be checked; an error (Flagged) and the grant still computed
    pytest.param({"Waiver Election Date": None}, ["WAIVER_FACTS_MISSING"], PAYMENT, id="election date blank"),
    pytest.param({"Minimum Time at Facility": None}, ["WAIVER_FACTS_MISSING"], PAYMENT, id="time at facility blank"),
    pytest.param(
        {"Waiver Election Date": None, "Minimum Time at Facility": None}, ["WAIVER_FACTS_MISSING"], PAYMENT, id="both facts blank"
    ),
    pytest.param(
        {"Waiver Election Date": None, "Minimum Time at Facility": 0.05},
        ["WAIVER_TIME_BELOW_10PCT", "WAIVER_FACTS_MISSING"],
        PAYMENT,
        id="date blank and time short",
    ),
    # h.(2): the payment follows the receipt of the 2022 credit certificate; blank credit, blank payment
    pytest.param({"2022 Tax Period Credit ($)": None}, ["WAIVER_CREDIT_NOT_GIVEN"], None, id="tax credit grant, 2022 credit blank"),
    pytest.param({"2022 Tax Period Credit ($)": None, "Grant Form": "Cash"}, [], None, id="cash grant, 2022 credit blank"),
    pytest.param({"Grant Form": "Cash"}, [], PAYMENT, id="cash grant, 2022 credit given"),
    # 5% x 0 = 0; 5% x 0.10 = 0.005 -> 0.01 (half up); 5% x 0.09 = 0.0045 -> 0.00
    pytest.param({"2022 Tax Period Credit ($)": 0}, [], 0.0, id="2022 credit 0"),
    pytest.param({"2022 Tax Period Credit ($)": 0.10}, [], 0.01, id="2022 credit 0.10"),
    pytest.param({"2022 Tax Period Credit ($)": 0.09}, [], 0.0, id="2022 credit 0.09"),
    # without the waiver nothing of h. is checked and nothing is due
    pytest.param(
        {"Remote Work Waiver Elected": "N", "Waiver Election Date": D(2024, 1, 1), "Minimum Time at Facility": None},
        [],
        None,
        id="not elected",
    ),
    pytest.param({"Remote Work Waiver Elected": "", "2022 Tax Period Credit ($)": None}, [], None, id="waiver blank"),
]


@pytest.mark.parametrize("change,codes,payment", WAIVER_CASES)
def test_remote_work_waiver(change, codes, payment):
    got = one(**{**WAIVER, **{k: ("" if v is None else v) for k, v in change.items()}})
    assert got["codes"] == codes
    assert got["Waiver Payment Due ($)"] == payment
    # errors and warnings of h. never stop the grant: 40% x 500,000 x 10 years
    assert got["Total Grant ($)"] == 2_000_000 and not got["ineligible"]


# h.: "a business that has entered into an incentive agreement may elect": an election dated before the
# Agreement Date is not one; the day of the Agreement Date itself is not before it. The grant is still
# computed (40% x 500,000 x 10 years = 2,000,000) and the row is Flagged, not Invalid.
AGREEMENT_CASES = [
    # (Agreement Date, change to the waiver row, codes)
    pytest.param(D(2023, 6, 1), {"Waiver Election Date": D(2023, 5, 31)}, ["WAIVER_ELECTED_BEFORE_AGREEMENT"], id="elected the day before"),
    pytest.param(D(2023, 6, 1), {"Waiver Election Date": D(2023, 6, 1)}, [], id="elected on the Agreement Date"),
    pytest.param(D(2023, 6, 1), {"Waiver Election Date": D(2023, 6, 2)}, [], id="elected the day after"),
    pytest.param(D(2023, 6, 1), {"Waiver Election Date": D(2010, 1, 4)}, ["WAIVER_ELECTED_BEFORE_AGREEMENT"], id="elected years before"),
    # independent of the other waiver findings: each is reported on its own
    pytest.param(
        D(2024, 1, 2),
        {"Waiver Election Date": D(2024, 1, 1)},
        ["WAIVER_ELECTION_LATE", "WAIVER_ELECTED_BEFORE_AGREEMENT"],
        id="late (2024-01-01 >= 2023-12-31) and before the agreement",
    ),
    pytest.param(
        D(2023, 12, 31),
        {"Waiver Election Date": D(2023, 12, 31)},
        ["WAIVER_ELECTION_LATE"],
        id="late, on the Agreement Date",
    ),
    pytest.param(
        D(2023, 6, 1),
        {"Waiver Election Date": D(2023, 5, 31), "Minimum Time at Facility": 0.0999},
        ["WAIVER_ELECTED_BEFORE_AGREEMENT", "WAIVER_TIME_BELOW_10PCT"],
        id="before the agreement, time 9.99% < 10%",
    ),
    pytest.param(
        D(2023, 6, 1),
        {"Waiver Election Date": D(2023, 5, 31), "Minimum Time at Facility": None},
        ["WAIVER_ELECTED_BEFORE_AGREEMENT", "WAIVER_FACTS_MISSING"],
        id="before the agreement, time blank",
    ),
    # a blank election date cannot be compared: only WAIVER_FACTS_MISSING
    pytest.param(D(2023, 6, 1), {"Waiver Election Date": None}, ["WAIVER_FACTS_MISSING"], id="election date blank"),
    # without the waiver nothing of h. is checked
    pytest.param(
        D(2023, 6, 1),
        {"Remote Work Waiver Elected": "N", "Waiver Election Date": D(2023, 5, 31)},
        [],
        id="not elected, a date before the agreement",
    ),
]


@pytest.mark.parametrize("agreement,change,codes", AGREEMENT_CASES)
def test_waiver_elected_before_the_agreement(agreement, change, codes):
    cells = {**WAIVER, "Agreement Date": agreement, **{k: ("" if v is None else v) for k, v in change.items()}}
    got = one(**cells)
    assert got["codes"] == codes
    assert got["Total Grant ($)"] == 2_000_000 and not got["ineligible"]


def test_waiver_elected_before_the_agreement_in_the_findings_sheet(workbook):
    from batch.pipeline import process

    rows = [
        {**BASE, **WAIVER, "Grant ID": "A", "Agreement Date": D(2023, 6, 1), "Waiver Election Date": D(2023, 6, 1)},
        {**BASE, **WAIVER, "Grant ID": "B", "Agreement Date": D(2023, 6, 1), "Waiver Election Date": D(2023, 5, 31)},
    ]
    headers = list(rows[0])
    res = process(workbook({"BEIP": [headers] + [[r[h] for h in headers] for r in rows]})).intake[0]
    # an error of the calculation: Flagged, not Invalid, and the grant computed (2,000,000.00 in cents)
    assert res.status.tolist() == ["OK", "Flagged"]
    assert res.computed["Total Grant ($)"].tolist() == [200_000_000] * 2
    got = res.findings[["Record ID", "Column", "Code", "Severity", "Citation"]].values.tolist()
    assert got == [["B", "Waiver Election Date", "WAIVER_ELECTED_BEFORE_AGREEMENT", "error", "C.34:1B-129 h."]]
    assert "elected on 2023-05-31, before the Agreement Date 2023-06-01" in res.findings["Message"].iloc[0]


@pytest.mark.parametrize(
    "change, citation",
    [
        # below a.'s 10% minimum: a. states the minimum, with or without smart growth (b. raises only the maximum)
        ({"Withholdings Percentage": 0.0999}, "C.34:1B-129 a."),
        ({"Withholdings Percentage": 0.0999, "Smart Growth": "Y"}, "C.34:1B-129 a."),
        # above the maximum: 50% of a., or 80% of b. with smart growth
        ({"Withholdings Percentage": 0.5001}, "C.34:1B-129 a."),
        ({"Withholdings Percentage": 0.8001, "Smart Growth": "Y"}, "C.34:1B-129 b."),
    ],
)
def test_an_out_of_range_percent_cites_the_bound_it_misses(workbook, change, citation):
    from batch.pipeline import process

    row = {**BASE, **change}
    headers = list(row)
    res = process(workbook({"BEIP": [headers, [row[h] for h in headers]]})).intake[0]
    got = res.findings[["Code", "Citation"]].values.tolist()
    assert got == [["GRANT_PERCENT_OUT_OF_RANGE", citation]]


def test_no_waiver_no_payment():
    assert one()["Waiver Payment Due ($)"] is None


def test_waiver_findings_in_the_findings_sheet(workbook):
    from batch.pipeline import process

    rows = [
        {**BASE, **WAIVER, "Grant ID": "A"},
        {**BASE, **WAIVER, "Grant ID": "B", "Waiver Election Date": D(2023, 12, 31)},
        {**BASE, **WAIVER, "Grant ID": "C", "Waiver Election Date": None},
        {**BASE, **WAIVER, "Grant ID": "D", "Waiver Election Date": None, "Minimum Time at Facility": None},
        {**BASE, **WAIVER, "Grant ID": "E", "2022 Tax Period Credit ($)": None},
        {**BASE, **WAIVER, "Grant ID": "F", "Grant Form": "Cash", "2022 Tax Period Credit ($)": None},
    ]
    headers = list(rows[0])
    res = process(workbook({"BEIP": [headers] + [[r[h] for h in headers] for r in rows]})).intake[0]
    # blank facts are errors of the calculation, not of the intake: Flagged, the grant computed
    assert res.status.tolist() == ["OK", "Flagged", "Flagged", "Flagged", "Flagged", "OK"]
    assert res.computed["Total Grant ($)"].tolist() == [200_000_000] * 6
    got = res.findings[["Record ID", "Column", "Code", "Severity"]].values.tolist()
    assert got == [
        ["B", "Waiver Election Date", "WAIVER_ELECTION_LATE", "error"],
        ["C", "Waiver Election Date", "WAIVER_FACTS_MISSING", "error"],
        ["D", "Waiver Election Date", "WAIVER_FACTS_MISSING", "error"],
        ["E", "2022 Tax Period Credit ($)", "WAIVER_CREDIT_NOT_GIVEN", "warning"],
    ]
    messages = res.findings["Message"].tolist()
    assert "elected on 2023-12-31; the election had to be made before 2023-12-31" in messages[0]
    assert "but Waiver Election Date is blank" in messages[1]
    assert "but Waiver Election Date and Minimum Time at Facility are blank" in messages[2]
    assert "Waiver Payment Due (5.00% of that credit" in messages[3]
    assert res.findings["Citation"].tolist() == ["C.34:1B-129 h."] * 3 + ["C.34:1B-129 h.(2)"]


def test_errors_flag_but_still_compute():
    got = one(**{"Grant Term (years)": 11})
    assert got["Total Grant ($)"] == 2_200_000 and not got["ineligible"]


MISSING_CASES = [
    # (change, column that is reported)
    ({"Withholdings Percentage": None, "Annual Withholdings ($)": None}, "Withholdings Percentage"),
    ({"Annual Withholdings ($)": None}, "Annual Withholdings ($)"),
    ({"Withholdings Percentage": None}, "Withholdings Percentage"),
    ({"Partner Estimated Tax Percentage": 0.2}, "Annual Partner Estimated Tax ($)"),
]


@pytest.mark.parametrize("change,column", MISSING_CASES)
def test_missing_values(change, column):
    raw = pd.DataFrame([{**BASE, **{k: ("" if v is None else v) for k, v in change.items()}}], dtype=object)
    _, findings = validate(BEIP, raw)
    assert findings[["column", "code"]].values.tolist() == [[column, "MISSING_VALUE"]]


@pytest.mark.parametrize(
    "change",
    [
        # the waiver facts and the 2022 credit are optional cells: the calculator reports a blank one
        {"Remote Work Waiver Elected": "Y"},
        {"Remote Work Waiver Elected": "Y", "Grant Form": "Cash"},
        {"Remote Work Waiver Elected": "Y", "Waiver Election Date": D(2023, 6, 1), "Minimum Time at Facility": 0.2},
    ],
)
def test_waiver_blanks_are_not_intake_errors(change):
    raw = pd.DataFrame([{**BASE, **change}], dtype=object)
    assert validate(BEIP, raw)[1].empty


def test_percent_over_100_is_out_of_range():
    raw = pd.DataFrame([{**BASE, "Withholdings Percentage": "150%"}], dtype=object)
    assert validate(BEIP, raw)[1]["code"].tolist() == ["OUT_OF_RANGE"]


@pytest.mark.parametrize("term,invalid", [(1_000, False), (1_001, True)])
def test_an_absurd_grant_term_is_out_of_range(term, invalid):
    # a term over 1,000 years is not read as a term (the statute allows 10): OUT_OF_RANGE, never an overflow
    raw = pd.DataFrame([{**BASE, "Grant Term (years)": term}], dtype=object)
    _, found = validate(BEIP, raw)
    assert ("OUT_OF_RANGE" in set(found["code"])) is invalid
