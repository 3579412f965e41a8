"""Grow NJ compliance and carry-forward: tables of cases for README, sheet `GrowNJ_Compliance` (C.34:1B-247).

Every case starts from BASE: a project approved 2016-03-15 and certified 2018-01-10, its 2020
period documented on 2021-06-01, credit $1,000, liability $5,000, jobs at 100% of the thresholds.
The calculator is called directly with a RunContext, so every case names its as-of date (AS_OF
unless the case is about the as-of date) and no case depends on the day the tests run.
Money in expectations is in dollars.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from conftest import typed_frame

from batch.programs._kit.calculation import RunContext
from batch.programs._kit.findings import render
from batch.programs._kit.rules import load
from batch.programs.grow_nj_compliance import steps as grow_nj_compliance
from validators.schema import validate

D = dt.date
RULES = load("grow_nj_compliance")
AS_OF = D(2026, 11, 30)
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


def run(rows: list[dict], as_of: dt.date = AS_OF) -> list[dict]:
    """Computed values (dollars), codes in the order found, rendered findings and Ineligible, per row."""
    frame = typed_frame(grow_nj_compliance.SPEC, rows)
    calc = grow_nj_compliance.calculate(frame, RULES, RunContext(as_of))
    raw = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])], ignore_index=True)
    rendered = render(raw, grow_nj_compliance.SPEC.name, RULES.findings)
    out = []
    for i in frame.index:
        got = {k: (None if pd.isna(v) else int(v) / 100) for k, v in calc.computed.loc[i].items()}
        mine = rendered[rendered["row"] == i]
        got["codes"] = mine["Code"].tolist()
        got["findings"] = mine[["Code", "Column", "Severity", "Message"]].to_dict("records")
        got["ineligible"] = bool(calc.ineligible.loc[i])
        out.append(got)
    return out


def one(as_of: dt.date = AS_OF, **change):
    return run([{**BASE, **change}], as_of)[0]


def finding(got: dict, code: str) -> dict:
    return next(f for f in got["findings"] if f["Code"] == code)


def found(got: dict) -> list[tuple[str, str, str]]:
    """(code, column, severity) of each finding of a row, in the order found."""
    return [(f["Code"], f["Column"], f["Severity"]) for f in got["findings"]]


def series(n, start=2020, **change):
    return [{**BASE, "Tax Period": start + i, "Period Documentation Certified Date": D(start + 1 + i, 6, 1), **change} for i in range(n)]


# b.(2): approved 2016-03-15, so 3 years = 2019-03-15 and 4 years = 2020-03-15
@pytest.mark.parametrize(
    "certified,codes,allowed",
    [
        (D(2019, 3, 14), [], 1_000),  # a day within 3 years
        (D(2019, 3, 15), [], 1_000),  # exactly 3 years after approval: "within three years"
        (D(2019, 3, 16), ["CERTIFICATION_LATE"], 1_000),  # a day more than 3 years
        (D(2020, 3, 14), ["CERTIFICATION_LATE"], 1_000),
        (D(2020, 3, 15), ["CERTIFICATION_LATE"], 1_000),  # exactly 4 years: late, not "later than four years"
        (D(2020, 3, 16), ["CERTIFICATION_AFTER_4_YEARS"], 0),  # only the error, not both
    ],
)
def test_certification_date(certified, codes, allowed):
    got = one(**{"Certification Date": certified})
    assert got["codes"] == codes and got["Credit Allowed ($)"] == allowed
    assert got["ineligible"] is (codes == ["CERTIFICATION_AFTER_4_YEARS"])


# A blank Certification Date is judged on the as-of date: "in no event shall the incentive effective date
# occur later than four years following the date of approval" (b.(2)). Approved 2016-03-15:
# due 2019-03-15 (3 years), the last day 2020-03-15 (4 years). The 2020 period closes 2020-12-31, after
# every as-of date here, so it can still be the tax period in which certification is accepted: pending,
# but no credit is allowed until then (243 "eligibility period" has not begun).
@pytest.mark.parametrize(
    "as_of,code,severity,named",
    [
        (D(2019, 3, 15), "CERTIFICATION_PENDING", "warning", ["due by 2019-03-15", "2020-03-15 at the latest"]),  # on the 3-year date
        (D(2019, 3, 16), "CERTIFICATION_PENDING", "warning", ["2019-03-15", "has passed", "by 2020-03-15 at the latest"]),
        (D(2020, 3, 14), "CERTIFICATION_PENDING", "warning", ["by 2020-03-15 at the latest"]),  # a day before 4 years
        (D(2020, 3, 15), "CERTIFICATION_PENDING", "warning", ["by 2020-03-15 at the latest"]),  # exactly 4 years: not more than 4
        (D(2020, 3, 16), "CERTIFICATION_AFTER_4_YEARS", "error", ["is blank", "as-of date 2020-03-16", "2020-03-15"]),  # a day more
    ],
)
def test_blank_certification_date_judged_on_the_as_of_date(as_of, code, severity, named):
    got = one(as_of, **{"Certification Date": ""})
    assert got["codes"] == [code] and got["Credit Allowed ($)"] == 0  # no credit until certification is accepted
    assert got["ineligible"] is (code == "CERTIFICATION_AFTER_4_YEARS")
    f = finding(got, code)
    assert f["Column"] == "Certification Date" and f["Severity"] == severity
    assert all(text in f["Message"] for text in named), f["Message"]
    if code == "CERTIFICATION_PENDING":
        # the 2020 period closes 2020-12-31, after the 4-year limit of 2020-03-15: the earlier of the two
        assert "can be allowed only once certification is accepted, in 2020 or before it (by 2020-03-15)" in f["Message"], f["Message"]


# The date by which certification must be accepted for a period's credit: the period's close, or the
# 4-year limit when that comes first (approved 2016-03-15: limit 2020-03-15; as of 2019-01-02).
@pytest.mark.parametrize(
    "period,by",
    [
        (2019, "2019-12-31"),  # closes 2019-12-31, before the limit
        (2020, "2020-03-15"),  # closes 2020-12-31, after the limit
        (2024, "2020-03-15"),  # a later period: accepted by the limit at the latest, whatever its close
    ],
)
def test_a_pending_period_names_the_day_certification_must_come_by(period, by):
    got = one(D(2019, 1, 2), **{"Certification Date": "", "Tax Period": period})
    f = finding(got, "CERTIFICATION_PENDING")
    assert f"in {period} or before it (by {by})" in f["Message"], f["Message"]


# 243 "eligibility period": from the tax period in which certification is accepted (2018-01-10: 2018), for
# the Eligibility Period the applicant chose (blank: 10). Each row's documentation is certified on 1 June
# after its period, in time (deadline 31 December + 3 years).
OUT = grow_nj_compliance.OUT  # Credit Allowed, Credit Used, Carry-Forward Added, Used, Balance, Expired
OUTSIDE = ("TAX_PERIOD_OUTSIDE_ELIGIBILITY_PERIOD", "Tax Period", "error")
AFTER = ("TAX_PERIOD_AFTER_ELIGIBILITY_PERIOD", "Tax Period", "info")


@pytest.mark.parametrize(
    "term,period,findings,allowed,ineligible,first_last",
    [
        # the start: the certification year 2018
        ("", 2017, [OUTSIDE], 0, True, ("2018", "2027")),  # 2018 - 1: before the period
        ("", 2018, [], 1_000, False, None),  # 2018: the first year
        ("", 2019, [], 1_000, False, None),  # 2018 + 1
        # the end, blank = 10 years: 2018 + 10 - 1 = 2027 is the last year
        ("", 2026, [], 1_000, False, None),  # 2018 + 10 - 2
        ("", 2027, [], 1_000, False, None),  # 2018 + 10 - 1: the last year
        ("", 2028, [AFTER], 0, False, ("2018", "2027")),  # 2018 + 10: after the period
        (10, 2027, [], 1_000, False, None),  # 10 given: as blank
        (10, 2028, [AFTER], 0, False, ("2018", "2027")),
        # 1 year: 2018 + 1 - 1 = 2018 is the first and last year
        (1, 2017, [OUTSIDE], 0, True, ("2018", "2018")),
        (1, 2018, [], 1_000, False, None),
        (1, 2019, [AFTER], 0, False, ("2018", "2018")),  # 2018 + 1
        # 4 years: 2018 to 2021
        (4, 2021, [], 1_000, False, None),  # 2018 + 4 - 1
        (4, 2022, [AFTER], 0, False, ("2018", "2021")),  # 2018 + 4
    ],
)
def test_eligibility_period(term, period, findings, allowed, ineligible, first_last):
    got = one(**{"Eligibility Period (years)": term, "Tax Period": period, "Period Documentation Certified Date": D(period + 1, 6, 1)})
    assert found(got) == findings
    assert got["Credit Allowed ($)"] == allowed and got["ineligible"] is ineligible
    # liability 5,000: the credit allowed is used in full, nothing carried
    assert [got[c] for c in OUT[1:]] == [allowed, 0, 0, 0, 0]
    if first_last:
        message = got["findings"][0]["Message"]
        assert f"from {first_last[0]}" in message and f"to {first_last[1]}" in message and str(period) in message, message


@pytest.mark.parametrize(
    "term,codes",
    [
        (0, ["OUT_OF_RANGE"]),  # below 1
        (1, []),
        (10, []),  # the longest term, "not more than 10 years"
        (11, ["OUT_OF_RANGE"]),  # more than 10
        ("", []),  # blank: 10
    ],
)
def test_eligibility_period_column_range(term, codes):
    raw = pd.DataFrame([{**BASE, "Eligibility Period (years)": term}], dtype=object)
    findings = validate(grow_nj_compliance.SPEC, raw)[1]
    assert findings["code"].tolist() == codes
    assert findings["column"].tolist() == ["Eligibility Period (years)"] * len(codes) and findings["row"].tolist() == [0] * len(codes)


def test_the_eligibility_period_column_follows_the_rules():
    column = grow_nj_compliance.SPEC.column("Eligibility Period (years)")
    longest = RULES["eligibility_period_years"]
    assert (column.minimum, column.maximum, longest.value) == (1, longest.value, 10)
    assert longest.cite == 'C.34:1B-243 "eligibility period"'
    assert column.hint.endswith(f"1 to {longest.value}; blank means {longest.value}.")


def test_the_other_rules_still_apply_outside_the_eligibility_period():
    # 2017 (before) and 2028 (after, blank term: 2018 to 2027) with the workforce short and the documentation late
    short = {"Statewide Employees": 399, "Facility Employees": 79}  # below 80% of 500 = 400 and of 100 = 80
    rows = [{**BASE, **short, "Tax Period": y, "Period Documentation Certified Date": D(y + 4, 1, 1)} for y in (2017, 2028)]
    got = run(rows, D(2033, 6, 30))
    others = [
        ("STATEWIDE_WORKFORCE_REDUCED", "Statewide Employees", "error"),
        ("FACILITY_EMPLOYMENT_BELOW_80PCT", "Facility Employees", "error"),
        ("CREDIT_FORFEITED_UNCERTIFIED", "Period Documentation Certified Date", "error"),
    ]
    assert [found(g) for g in got] == [[OUTSIDE, *others], [AFTER, *others]]
    assert [(g["Credit Allowed ($)"], g["ineligible"]) for g in got] == [(0, True), (0, False)]


def test_certified_after_4_years_and_before_the_eligibility_period():
    # certified 2020-03-16, a day more than 4 years after approval on 2016-03-15; 2019 is before 2020
    got = one(**{"Certification Date": D(2020, 3, 16), "Tax Period": 2019, "Period Documentation Certified Date": D(2020, 6, 1)})
    assert found(got) == [OUTSIDE, ("CERTIFICATION_AFTER_4_YEARS", "Certification Date", "error")]
    assert got["Credit Allowed ($)"] == 0 and got["ineligible"]


# A blank Certification Date: the 2019 period closes 2019-12-31. Approved 2016-03-15, so the 4-year limit
# is 2020-03-15. Documentation of 2019 blank: due 2019 + 3 = 2022-12-31, pending on every as-of date here.
PENDING = ("CERTIFICATION_PENDING", "Certification Date", "warning")
DOCS_PENDING = ("DOCUMENTATION_PENDING", "Period Documentation Certified Date", "warning")
BARRED = ("CERTIFICATION_AFTER_4_YEARS", "Certification Date", "error")


@pytest.mark.parametrize(
    "period,as_of,findings,ineligible",
    [
        (2019, D(2019, 12, 30), [PENDING, DOCS_PENDING], False),
        (2019, D(2019, 12, 31), [PENDING, DOCS_PENDING], False),  # as-of on the closing day: not closed before it
        (2019, D(2020, 1, 1), [OUTSIDE, DOCS_PENDING], True),  # the day after: closed before the as-of date
        (2019, D(2020, 3, 15), [OUTSIDE, DOCS_PENDING], True),  # exactly 4 years after approval: not barred yet
        (2019, D(2020, 3, 16), [BARRED, DOCS_PENDING], True),  # a day more: only the 4-year bar
        (2020, D(2020, 3, 15), [PENDING, DOCS_PENDING], False),  # 2020 closes 2020-12-31: still pending at 4 years
        (2020, D(2020, 3, 16), [BARRED, DOCS_PENDING], True),  # a day more than 4 years
    ],
)
def test_blank_certification_date_and_the_close_of_the_tax_period(period, as_of, findings, ineligible):
    got = one(as_of, **{"Tax Period": period, "Certification Date": "", "Period Documentation Certified Date": ""})
    assert found(got) == findings and got["ineligible"] is ineligible
    assert [got[c] for c in OUT] == [0, 0, 0, 0, 0, 0]  # no credit before certification; liability 5,000 finds no carry-forward
    message = got["findings"][0]["Message"]
    if findings[0] == OUTSIDE:
        assert f"tax period {period} closed on {period}-12-31, before the as-of date {as_of.isoformat()}" in message, message
    if findings[0] == PENDING:
        # by the period's close, or by the 4-year limit of 2020-03-15 when that comes first (2020)
        by = min(f"{period}-12-31", "2020-03-15")
        assert f"accepted, in {period} or before it (by {by})" in message and "2020-03-15 at the latest" in message, message


# Certified 2018-01-10, Eligibility Period 2: the eligibility period is 2018 to 2019. Credit 1,000 a year.
# 2018: liability 100 -> used 100, carried 900.            balance 900
# 2019: liability 0   -> carried 1,000.                     balance 1,900
# 2020 (after): no credit; liability 500 from 2018's 900 -> 400 of 2018 left.   balance 1,400
# 2038 (after): liability 300 from 2018's 400 -> 100 left, and 2018 + 20 = 2038 is its last period: 100 expires.
#               balance 1,000 (2019's)
# 2039 (after): liability 0; 2019 + 20 = 2039: 2019's 1,000 expires. balance 0
AFTER_ROWS = [(2018, 100), (2019, 0), (2020, 500), (2038, 300), (2039, 0)]
AFTER_EXPECTED = {  # period: allowed, used, carry-forward added, carry-forward used, balance, expired
    2018: [1_000, 100, 900, 0, 900, 0],
    2019: [1_000, 0, 1_000, 0, 1_900, 0],
    2020: [0, 500, 0, 500, 1_400, 0],
    2038: [0, 300, 0, 300, 1_000, 100],
    2039: [0, 0, 0, 0, 0, 1_000],
}


def _after_rows(project="P"):
    return [
        {
            **BASE,
            "Project ID": project,
            "Eligibility Period (years)": 2,
            "Tax Period": y,
            "Tax Liability ($)": liability,
            "Period Documentation Certified Date": D(y + 1, 6, 1),
        }
        for y, liability in AFTER_ROWS
    ]


def test_carry_forward_used_and_expiring_after_the_eligibility_period():
    got = run(_after_rows(), D(2040, 6, 30))
    assert {y: [g[c] for c in OUT] for (y, _), g in zip(AFTER_ROWS, got, strict=True)} == AFTER_EXPECTED
    assert [found(g) for g in got] == [[], [], [AFTER], [AFTER], [AFTER]]
    assert not any(g["ineligible"] for g in got)


@pytest.mark.parametrize("seed", range(4))
def test_a_project_whose_rows_come_in_any_order(seed):
    # the rows above, a 2017 row before the eligibility period (Ineligible: all zero, no part in the
    # carry-forward though its liability is 5,000), and project Q with the same rows, shuffled together
    before = {**BASE, "Eligibility Period (years)": 2, "Tax Period": 2017, "Period Documentation Certified Date": D(2018, 6, 1)}
    rows = [*_after_rows(), before, *_after_rows("Q")]
    order = np.random.default_rng(seed).permutation(len(rows))
    shuffled = [rows[i] for i in order]
    got = run(shuffled, D(2040, 6, 30))
    by_key = {(r["Project ID"], r["Tax Period"]): g for r, g in zip(shuffled, got, strict=True)}
    expected = {**{(p, y): v for p in "PQ" for y, v in AFTER_EXPECTED.items()}, ("P", 2017): [0, 0, 0, 0, 0, 0]}
    assert {k: [g[c] for c in OUT] for k, g in by_key.items()} == expected
    assert found(by_key[("P", 2017)]) == [OUTSIDE] and by_key[("P", 2017)]["ineligible"]
    assert [found(by_key[(p, y)]) for p in "PQ" for y in (2020, 2038, 2039)] == [[AFTER]] * 6


def test_an_ineligible_row_takes_no_part_in_the_carry_forward():
    # 2020 carries 1,000 - 300 = 700. The 2021 row gives another approval and certification (2019-06-01,
    # 2022-01-10, within 3 years): 2021 is before its eligibility period (2022 to 2031), Ineligible, so its
    # liability of 5,000 does not use the 700 and it shows no balance; 2022 (certified 2018-01-10, in 2018
    # to 2027) uses its own 1,000 and the 700
    rows = series(3)
    rows[0]["Tax Liability ($)"] = 300
    rows[1].update({"Approval Date": D(2019, 6, 1), "Certification Date": D(2022, 1, 10)})
    got = run(rows)
    assert [found(g) for g in got] == [[], [OUTSIDE], []] and [g["ineligible"] for g in got] == [False, True, False]
    assert "from 2022 to 2031" in got[1]["findings"][0]["Message"]
    assert [[g[c] for c in OUT] for g in got] == [[1_000, 300, 700, 0, 700, 0], [0] * 6, [1_000, 1_700, 0, 700, 0, 0]]


@pytest.mark.parametrize("statewide,forfeit", [(401, False), (400, False), (399, True), (500, False)])  # 80% of 500 = 400
def test_statewide_workforce(statewide, forfeit):
    got = one(**{"Statewide Employees": statewide})
    assert ("STATEWIDE_WORKFORCE_REDUCED" in got["codes"]) is forfeit and got["Credit Allowed ($)"] == (0 if forfeit else 1_000)


@pytest.mark.parametrize("facility,forfeit", [(81, False), (80, False), (79, True)])  # 80% of 100 agreement jobs = 80
def test_facility_employment(facility, forfeit):
    got = one(**{"Facility Employees": facility})
    assert ("FACILITY_EMPLOYMENT_BELOW_80PCT" in got["codes"]) is forfeit and got["Credit Allowed ($)"] == (0 if forfeit else 1_000)


# c.(1): the 2020 period closes on 2020-12-31; documentation due by 2020 + 3 = 2023-12-31
@pytest.mark.parametrize(
    "certified,as_of,code",
    [
        (D(2023, 12, 30), AS_OF, None),
        (D(2023, 12, 31), AS_OF, None),  # on the deadline: not "three years after"
        (D(2024, 1, 1), AS_OF, "CREDIT_FORFEITED_UNCERTIFIED"),  # a day after the deadline
        (D(2024, 1, 1), D(2023, 6, 1), "CREDIT_FORFEITED_UNCERTIFIED"),  # certified late: forfeited whatever the as-of date
        ("", D(2023, 12, 30), "DOCUMENTATION_PENDING"),  # blank, deadline after the as-of date
        ("", D(2023, 12, 31), "DOCUMENTATION_PENDING"),  # blank, deadline on the as-of date: not yet "remains uncertified as of"
        ("", D(2024, 1, 1), "CREDIT_FORFEITED_UNCERTIFIED"),  # blank, deadline before the as-of date
        ("", AS_OF, "CREDIT_FORFEITED_UNCERTIFIED"),
    ],
)
def test_documentation_within_three_years_of_period_close(certified, as_of, code):
    got = one(as_of, **{"Period Documentation Certified Date": certified})
    assert got["codes"] == ([code] if code else [])
    assert got["Credit Allowed ($)"] == (0 if code == "CREDIT_FORFEITED_UNCERTIFIED" else 1_000)
    if code:
        f = finding(got, code)
        assert f["Column"] == "Period Documentation Certified Date" and "2023-12-31" in f["Message"]
        assert f["Severity"] == ("warning" if code == "DOCUMENTATION_PENDING" else "error")


# The case: a 2025 period with blank documentation; deadline 2025 + 3 = 2028-12-31
@pytest.mark.parametrize(
    "as_of,code,allowed",
    [
        (D(2026, 11, 30), "DOCUMENTATION_PENDING", 1_000),
        (D(2028, 12, 30), "DOCUMENTATION_PENDING", 1_000),
        (D(2028, 12, 31), "DOCUMENTATION_PENDING", 1_000),  # the deadline itself: still in time
        (D(2029, 1, 1), "CREDIT_FORFEITED_UNCERTIFIED", 0),  # the deadline is before the as-of date
    ],
)
def test_2025_period_with_blank_documentation(as_of, code, allowed):
    got = one(as_of, **{"Tax Period": 2025, "Period Documentation Certified Date": ""})
    assert got["codes"] == [code] and got["Credit Allowed ($)"] == allowed and not got["ineligible"]
    f = finding(got, code)
    assert "2028-12-31" in f["Message"] and as_of.isoformat() in f["Message"]
    assert f["Column"] == "Period Documentation Certified Date"


def test_pending_documentation_counts_as_allowed_in_the_carry_forward():
    # credit 1,000 allowed while pending; liability 300: 700 carried forward
    got = one(D(2026, 11, 30), **{"Tax Period": 2025, "Period Documentation Certified Date": "", "Tax Liability ($)": 300})
    assert (got["Credit Used ($)"], got["Carry-Forward Added ($)"], got["Carry-Forward Balance ($)"]) == (300, 700, 700)


def test_forfeiture_lasts_only_the_period():
    rows = series(3)
    rows[1]["Facility Employees"] = 50
    got = run(rows)
    assert [g["Credit Allowed ($)"] for g in got] == [1_000, 0, 1_000]


def test_forfeited_documentation_leaves_later_periods_their_credit():
    # "credit amounts for the remainder of the years of the eligibility period shall remain available"
    rows = series(3)
    rows[0]["Period Documentation Certified Date"] = ""  # 2020: deadline 2023-12-31, before the as-of date
    got = run(rows)
    assert [g["Credit Allowed ($)"] for g in got] == [0, 1_000, 1_000]


# d.(3)(a): sale in 2021 of a 2020-2023 series; Seller Holds the Credits blank means Y (with a warning)
@pytest.mark.parametrize(
    "seller,allowed,sale_codes,later_codes",
    [
        ("Y", [1_000, 0, 0, 0], ["FACILITY_SOLD_CREDITS_FORFEITED"], ["FACILITY_SOLD_CREDITS_FORFEITED"]),
        ("", [1_000, 0, 0, 0], ["SALE_HOLDER_NOT_GIVEN", "FACILITY_SOLD_CREDITS_FORFEITED"], ["FACILITY_SOLD_CREDITS_FORFEITED"]),
        # a landlord's sale: "any credits of the business shall remain unaffected"
        ("N", [1_000] * 4, ["FACILITY_SOLD_CREDITS_UNAFFECTED"], []),
    ],
)
def test_sale_by_the_holder_forfeits_that_period_and_every_later_one(seller, allowed, sale_codes, later_codes):
    rows = series(4)
    rows[1].update({"Facility Sold": "Y", "Seller Holds the Credits": seller})
    got = run(rows)
    assert [g["Credit Allowed ($)"] for g in got] == allowed
    assert [g["codes"] for g in got] == [[], sale_codes, later_codes, later_codes]


def test_landlords_sale():
    rows = series(4)
    rows[1].update({"Facility Sold": "Y", "Seller Holds the Credits": "N"})
    got = run(rows)
    assert [g["Credit Allowed ($)"] for g in got] == [1_000, 1_000, 1_000, 1_000]  # nothing forfeited
    assert got[1]["findings"][0]["Column"] == "Facility Sold" and got[1]["findings"][0]["Severity"] == "info"
    assert "remain unaffected" in got[1]["findings"][0]["Message"]


def test_blank_seller_warns_at_its_cell():
    rows = series(2)
    rows[1]["Facility Sold"] = "Y"
    got = run(rows)[1]
    warn, error = got["findings"]
    assert (warn["Code"], warn["Column"], warn["Severity"]) == ("SALE_HOLDER_NOT_GIVEN", "Seller Holds the Credits", "warning")
    assert "read as Y" in warn["Message"] and "2021" in warn["Message"]
    assert (error["Code"], error["Column"], error["Severity"]) == ("FACILITY_SOLD_CREDITS_FORFEITED", "Facility Sold", "error")
    assert got["Credit Allowed ($)"] == 0


@pytest.mark.parametrize("seller", ["Y", "N", ""])
def test_seller_column_alone_changes_nothing(seller):
    # Seller Holds the Credits matters only in a period with Facility Sold = Y
    got = one(**{"Facility Sold": "N", "Seller Holds the Credits": seller})
    assert got["codes"] == [] and got["Credit Allowed ($)"] == 1_000


def test_landlords_sale_then_own_sale():
    # 2021 a landlord sells (nothing forfeited); 2022 the business sells its own part: 2022 on are forfeited
    rows = series(4)
    rows[1].update({"Facility Sold": "Y", "Seller Holds the Credits": "N"})
    rows[2].update({"Facility Sold": "Y", "Seller Holds the Credits": "Y"})
    got = run(rows)
    assert [g["Credit Allowed ($)"] for g in got] == [1_000, 1_000, 0, 0]
    assert "2022" in got[3]["findings"][0]["Message"]


def test_carry_forward_from_before_the_sale_stays_usable():
    # 2020: liability 300, 700 carried. 2021 sold: credit 0, liability 5,000 uses the 700 carried
    rows = series(2)
    rows[0]["Tax Liability ($)"] = 300
    rows[1].update({"Facility Sold": "Y", "Seller Holds the Credits": "Y"})
    got = run(rows)
    assert (got[1]["Credit Allowed ($)"], got[1]["Carry-Forward Used ($)"], got[1]["Credit Used ($)"]) == (0, 700, 700)


def test_without_context_the_as_of_date_is_today():
    # approved 2097-06-01, certified 2098-01-10: the 2099 period is in the eligibility period 2098 to 2107
    row = {**BASE, "Tax Period": 2099, "Approval Date": D(2097, 6, 1), "Certification Date": D(2098, 1, 10)}
    frame = typed_frame(grow_nj_compliance.SPEC, [{**row, "Period Documentation Certified Date": ""}])
    calc = grow_nj_compliance.calculate(frame, RULES)
    codes = [c for f in calc.findings for c in f["code"].tolist()]
    assert codes == ["DOCUMENTATION_PENDING"]  # deadline 2102-12-31 is after any day these tests run


def test_carry_forward_own_credit_first_then_oldest():
    rows = series(4, **{"Annual Credit ($)": 1_000})
    liab = [300, 200, 2_900, 100]
    for r, v in zip(rows, liab, strict=False):
        r["Tax Liability ($)"] = v
    got = run(rows)
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
    got = run(rows)
    # 2020 + 20 = 2040 is the last period the 2020 credit can be used
    assert got[used_in]["Carry-Forward Used ($)"] == 700 - expired
    assert sum(g["Carry-Forward Expired ($)"] for g in got) == expired
    if expired:
        assert got[20]["Carry-Forward Expired ($)"] == 700 and got[20]["Carry-Forward Balance ($)"] == 0


def test_expiry_with_missing_years():
    # rows for 2020 and 2045 only: the 2020 carry-forward (1,000 - 300 = 700) expired in 2040 and is
    # reported in 2045; 2045 is after the eligibility period 2018 to 2027, so it has no credit of its own
    rows = [
        {**BASE, "Tax Period": 2020, "Tax Liability ($)": 300},
        {**BASE, "Tax Period": 2045, "Period Documentation Certified Date": D(2046, 1, 1), "Tax Liability ($)": 5_000},
    ]
    got = run(rows)
    assert got[1]["codes"] == ["TAX_PERIOD_AFTER_ELIGIBILITY_PERIOD"]
    assert (got[1]["Carry-Forward Used ($)"], got[1]["Carry-Forward Expired ($)"], got[1]["Credit Used ($)"]) == (0, 700, 0)


def test_projects_do_not_share_carry_forward():
    rows = [
        {**BASE, "Project ID": "A", "Tax Liability ($)": 0},
        {**BASE, "Project ID": "B", "Tax Period": 2021, "Period Documentation Certified Date": D(2022, 1, 1), "Tax Liability ($)": 3_000},
    ]
    got = run(rows)
    assert got[1]["Carry-Forward Used ($)"] == 0 and got[1]["Credit Used ($)"] == 1_000


def test_shuffled_rows_same_results():
    rows = series(6) + [{**r, "Project ID": "Q"} for r in series(4)]
    for i, r in enumerate(rows):
        r["Tax Liability ($)"] = [100, 2_500, 0, 900, 4_000, 50, 700, 0, 3_000, 10][i]
    rows[3]["Statewide Employees"] = 300
    base = run(rows)
    key = lambda r: (r["Project ID"], r["Tax Period"])  # noqa: E731
    expected = {key(r): g for r, g in zip(rows, base, strict=False)}
    rng = np.random.default_rng(5)
    for _ in range(4):
        perm = rng.permutation(len(rows))
        got = run([rows[i] for i in perm])
        assert {key(rows[i]): g for i, g in zip(perm, got, strict=False)} == expected


def test_linear_in_periods():
    # 100 periods of one project run in one pass (a quadratic walk would still pass, so the check is
    # structural: every row is visited once and the open carry-forward never holds more than 21 amounts).
    # Certified 2000-01-10: the eligibility period is 2000 to 2009, so 10 x 1,000 = 10,000 is carried
    # (liability 0); the credit of year t expires in t + 20, so 2020 to 2029 each expire 1,000
    cert = {"Approval Date": D(1999, 6, 1), "Certification Date": D(2000, 1, 10), "Tax Liability ($)": 0}
    got = run(series(100, start=2000, **cert))
    assert got[19]["Carry-Forward Balance ($)"] == 10_000 and got[-1]["Carry-Forward Balance ($)"] == 0
    assert [g["Carry-Forward Expired ($)"] for g in got] == [0] * 20 + [1_000] * 10 + [0] * 70
    assert [g["Credit Allowed ($)"] for g in got] == [1_000] * 10 + [0] * 90


def _carry_forward_one_row_at_a_time(project, year, allowed, liability, periods):
    """The carry-forward as a reviewer would do it by hand, row after row, oldest credit first (the
    reference the vectorized calculator is checked against)."""
    from collections import deque

    out = np.zeros((len(year), 5), dtype=np.int64)
    open_, last = deque(), None
    for i, (p, y, allow, liab) in enumerate(zip(project.tolist(), year.tolist(), allowed.tolist(), liability.tolist(), strict=True)):
        if p != last:
            open_.clear()
            last = p
        expired = 0
        while open_ and open_[0][0] + periods < y:
            expired += open_.popleft()[1]
        own = min(liab, allow)
        need, used = liab - own, 0
        while need and open_:
            take = min(need, open_[0][1])
            open_[0][1] -= take
            need, used = need - take, used + take
            if open_[0][1] == 0:
                open_.popleft()
        while open_ and open_[0][0] + periods <= y:
            expired += open_.popleft()[1]
        added = allow - own
        if added:
            open_.append([y, added])
        out[i] = (own + used, added, used, sum(v for _, v in open_), expired)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_vectorized_carry_forward_equals_the_one_row_at_a_time_reference(seed):
    from batch.programs.grow_nj_compliance.steps import carry_forward

    rng = np.random.default_rng(seed)
    projects = rng.integers(1, 30)
    rows = []
    for p in range(projects):
        years = np.sort(rng.choice(np.arange(2010, 2040), size=rng.integers(1, 15), replace=bool(seed % 4 == 0)))  # gaps; repeats in some
        rows += [(p, int(y)) for y in years]
    project = np.array([p for p, _ in rows])
    year = np.array([y for _, y in rows])
    allowed = rng.choice([0, 1, 50_000, 1_000_000, 2_500_000], size=len(rows))
    liability = rng.choice([0, 1, 40_000, 900_000, 3_000_000], size=len(rows))
    periods = int(rng.integers(0, 6))
    got = carry_forward(project, year, allowed, liability, periods)
    assert got.tolist() == _carry_forward_one_row_at_a_time(project, year, allowed, liability, periods).tolist()


# -- the portfolio: the project's periods processed in other workbooks (RunContext.portfolio) --------


def far(period, allowed, liability, project="P", workbook="nov.xlsx"):
    """A period of the project in another workbook, as the run gives it (money in cents)."""
    return {"project": project.strip().casefold(), "period": period, "allowed": allowed * 100, "liability": liability * 100,
            "sheet": "GrowNJ_Compliance", "record_id": f"{project} / {period}", "workbook": workbook, "run_date": "2026-11-30"}  # fmt: skip


def across(outside, *rows):
    frame = typed_frame(grow_nj_compliance.SPEC, [{**BASE, **r} for r in rows])
    context = RunContext(AS_OF, portfolio=pd.DataFrame(outside), workbook="dec.xlsx", run_date="2026-12-01")
    calc = grow_nj_compliance.calculate(frame, RULES, context)
    raw = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])], ignore_index=True)
    rendered = render(raw, grow_nj_compliance.SPEC.name, RULES.findings)
    cols = ["Credit Used ($)", "Carry-Forward Added ($)", "Carry-Forward Used ($)", "Carry-Forward Balance ($)"]
    return [tuple(int(v) / 100 for v in calc.computed.loc[i, cols]) for i in frame.index], rendered


CARRY_CASES = [
    # 2019 elsewhere: allowed 1,000, liability 400: 600 carried forward. 2020 here: allowed 1,000, liability 1,500:
    # own 1,000 + 500 of 2019's = 1,500 used; 100 left
    ("an earlier period elsewhere", [far(2019, 1_000, 400)], [{"Tax Liability ($)": 1_500}], [(1_500, 0, 500, 100)]),
    # another project's period is not this one's
    ("another project", [far(2019, 1_000, 400, project="Q")], [{"Tax Liability ($)": 1_500}], [(1_000, 0, 0, 0)]),
    # a later period elsewhere carries nothing back: 2021 elsewhere, 2020 here uses its own 1,000 of 1,500
    ("a later period elsewhere", [far(2021, 1_000, 0)], [{"Tax Liability ($)": 1_500}], [(1_000, 0, 0, 0)]),
    # 20 periods: 1999's 600 is usable through 2019, so expired by 2020
    ("expired by now", [far(1999, 1_000, 400)], [{"Tax Liability ($)": 1_500}], [(1_000, 0, 0, 0)]),
    # 2000's 600 is usable through 2020 (its last period): 1,000 + 500 = 1,500 used, 100 expires
    ("its last usable period", [far(2000, 1_000, 400)], [{"Tax Liability ($)": 1_500}], [(1_500, 0, 500, 0)]),
    # the sheet's 2019 and 2021 around 2020 elsewhere: 2019 adds 600 (liability 400); 2020 elsewhere adds 1,000
    # (liability 0): 1,600; 2021 here, liability 2,000: own 1,000 + 1,000 carried = 2,000; 600 left
    ("the sheet around a period elsewhere", [far(2020, 1_000, 0)],
     [{"Tax Period": 2019, "Tax Liability ($)": 400}, {"Tax Period": 2021, "Tax Liability ($)": 2_000}],
     [(400, 600, 0, 600), (2_000, 0, 1_000, 600)]),
]  # fmt: skip


@pytest.mark.parametrize("name,outside,rows,expected", CARRY_CASES, ids=[c[0] for c in CARRY_CASES])
def test_the_carry_forward_counts_the_projects_periods_elsewhere(name, outside, rows, expected):
    got, _rendered = across(outside, *rows)
    assert got == expected


def test_a_row_following_periods_elsewhere_says_where_its_carry_forward_came_from():
    _got, rendered = across([far(2018, 1_000, 0), far(2019, 1_000, 400)], {"Tax Liability ($)": 1_500})
    (said,) = rendered[rendered["Code"] == "CARRY_FORWARD_FROM_OTHER_WORKBOOKS"].to_dict("records")
    # 2018 adds 1,000, 2019 adds 600: 1,600 carried into 2020
    assert said["Severity"] == "info" and said["Message"].startswith(
        "The carry-forward of this project reaching 2020 comes through periods processed in other workbooks (GrowNJ_Compliance "
        "P / 2018 (nov.xlsx, run 2026-11-30); GrowNJ_Compliance P / 2019 (nov.xlsx, run 2026-11-30)); $1,600.00 was carried forward"
    )


def test_the_standing_position_names_what_expires_when():
    # 2019 adds 600 (1,000 - 400), 2020 adds 1,000 (liability 0): 1,600; 2021 allows 0 and owes 900: 2019's 600 used
    # first, then 300 of 2020's: 700 left, all of 2020, usable through 2040
    records = pd.DataFrame(
        [{"team": "East", "project": "p", "record_id": f"P / {year}", "period": year, "allowed": allowed, "liability": owed,
          "status": "OK", "ended": ended} for year, allowed, owed, ended in (
              (2019, 100_000, 40_000, "2026-10"), (2020, 100_000, 0, "2026-11"), (2021, 0, 90_000, "2026-11"),
              (2019, 100_000, 40_000, "2026-09"))]  # an earlier version of 2019, "p / 2019": the same period, not counted
    )  # fmt: skip
    table = grow_nj_compliance.standing(records, RULES)["Compliance"].table
    assert table.iloc[0].tolist() == ["East", "P", "2019", "2021", 3, 200_000, 130_000, 70_000, 0, "2040", 70_000]


def test_a_period_of_the_sheet_supersedes_its_version_elsewhere_in_any_case():
    # November kept "P / 2019" (allowed 1,000, liability 400: 600 carried), and also "p / 2019" of another workbook;
    # this sheet restates p's 2019 (liability 1,000: nothing carried) and 2020 (liability 1,500): the sheet's 2019 is
    # the one period 2019, so 2020 uses its own 1,000 only
    outside = [far(2019, 1_000, 400, project="P"), far(2019, 1_000, 400, project="p", workbook="other.xlsx")]
    got, rendered = across(outside, {"Project ID": "p", "Tax Period": 2019, "Tax Liability ($)": 1_000},
                           {"Project ID": "p", "Tax Period": 2020, "Tax Liability ($)": 1_500})  # fmt: skip
    assert got == [(1_000, 0, 0, 0), (1_000, 0, 0, 0)]
    assert rendered[rendered["Code"] == "CARRY_FORWARD_FROM_OTHER_WORKBOOKS"].empty
    # without the sheet's 2019, the two versions elsewhere are one period: 600 carried, 2020 uses 1,000 + 500
    got, _rendered = across(outside, {"Project ID": "p", "Tax Period": 2020, "Tax Liability ($)": 1_500})
    assert got == [(1_500, 0, 500, 100)]
