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

from batch.calculators import RunContext, grow_nj_compliance
from batch.findings import render
from batch.rules import load

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
# due 2019-03-15 (3 years), the last day 2020-03-15 (4 years).
@pytest.mark.parametrize(
    "as_of,code,allowed,named",
    [
        (D(2019, 3, 15), "CERTIFICATION_PENDING", 1_000, ["due by 2019-03-15", "2020-03-15 at the latest"]),  # on the 3-year date
        (D(2019, 3, 16), "CERTIFICATION_PENDING", 1_000, ["2019-03-15", "has passed", "by 2020-03-15 at the latest"]),
        (D(2020, 3, 14), "CERTIFICATION_PENDING", 1_000, ["by 2020-03-15 at the latest"]),  # a day before 4 years
        (D(2020, 3, 15), "CERTIFICATION_PENDING", 1_000, ["by 2020-03-15 at the latest"]),  # exactly 4 years: not more than 4
        (D(2020, 3, 16), "CERTIFICATION_AFTER_4_YEARS", 0, ["is blank", "as-of date 2020-03-16", "2020-03-15"]),  # a day more
    ],
)
def test_blank_certification_date_judged_on_the_as_of_date(as_of, code, allowed, named):
    got = one(as_of, **{"Certification Date": ""})
    assert got["codes"] == [code] and got["Credit Allowed ($)"] == allowed
    assert got["ineligible"] is (code == "CERTIFICATION_AFTER_4_YEARS")
    f = finding(got, code)
    assert f["Column"] == "Certification Date" and f["Severity"] == ("warning" if allowed else "error")
    assert all(text in f["Message"] for text in named), f["Message"]


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
    frame = typed_frame(grow_nj_compliance.SPEC, [{**BASE, "Tax Period": 2099, "Period Documentation Certified Date": ""}])
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
    # rows for 2020 and 2045 only: the 2020 carry-forward expired in between and is reported in 2045
    rows = [
        {**BASE, "Tax Period": 2020, "Tax Liability ($)": 300},
        {**BASE, "Tax Period": 2045, "Period Documentation Certified Date": D(2046, 1, 1), "Tax Liability ($)": 5_000},
    ]
    got = run(rows)
    assert (got[1]["Carry-Forward Used ($)"], got[1]["Carry-Forward Expired ($)"], got[1]["Credit Used ($)"]) == (0, 700, 1_000)


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
    # structural: every row is visited once and the open carry-forward never holds more than 21 amounts)
    rows = series(100, start=2000, **{"Tax Liability ($)": 0})
    got = run(rows)
    # after 2099 only the credit of 2080 to 2099 can still be used: 20 x 1,000; each year one expires
    assert got[-1]["Carry-Forward Balance ($)"] == 20_000
    assert [g["Carry-Forward Expired ($)"] for g in got[:21]] == [0] * 20 + [1_000]


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
    from batch.calculators.grow_nj_compliance import carry_forward

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
