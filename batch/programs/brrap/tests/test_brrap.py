"""BRRAP grants: tables of cases for README, sheet `BRRAP` (P.L.2004 c.65 s.7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import typed_frame
from helpers import run_rows

from batch.programs._kit.findings import render
from batch.programs._kit.rules import load
from batch.programs.brrap import steps as brrap
from validators.schema import validate

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


# b.(2): use beyond the first tax period needs a certificate of compliance; a blank cell means No
@pytest.mark.parametrize("employees,coc,warn", [(250, "N", False), (251, "N", True), (251, "Y", False), (251, "", True), (1_001, "", True)])
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


ACME_CASES = [
    # a.: a single business may apply at most $10,000,000 a year. "Acme Corp." and "ACME Corporation" are one
    # business (README, the one business-name rule): 6,000,000 + the second grant, in 2024
    (3_999_999.99, False),  # 9,999,999.99
    (4_000_000, False),  # 10,000,000.00 exactly: allowed
    (4_000_000.01, True),  # 10,000,000.01: over, both rows flagged
]


@pytest.mark.parametrize("second,over", ACME_CASES)
def test_single_business_limit_acme_corp_and_acme_corporation(second, over):
    got = rows(
        {"Business Name": "Acme Corp.", "Yearly Tax Credit Amount ($)": 6_000_000},
        {"Business Name": "ACME Corporation", "Yearly Tax Credit Amount ($)": second},
    )
    assert [g["codes"] for g in got] == [["BUSINESS_ANNUAL_LIMIT_EXCEEDED"] if over else []] * 2


NAME_CASES = [
    # (first name, second name, one business?): case, punctuation, repeated spaces and a trailing legal form ignored
    ("Acme Corp.", "ACME Corporation", True),
    ("Acme, Inc.", "acme   incorporated", True),
    ("Acme L.L.C.", "ACME LLC", True),
    ("Acme Insurance Co", "Acme Insurance Company", True),
    ("Acme Ltd", "Acme LP", True),
    ("Acme-Jersey LLP", "acme jersey", True),
    ("Acme", "Acme Holdings", False),  # "Holdings" is not a legal form
    ("Acme Corp", "Apex Corp", False),
]


@pytest.mark.parametrize("first,second,same", NAME_CASES)
def test_business_name_rule(first, second, same):
    # 6,000,000 + 4,000,000.01 = 10,000,000.01 is over the limit only when the two names are one business
    got = rows(
        {"Business Name": first, "Yearly Tax Credit Amount ($)": 6_000_000},
        {"Business Name": second, "Yearly Tax Credit Amount ($)": 4_000_000.01},
    )
    assert [("BUSINESS_ANNUAL_LIMIT_EXCEEDED" in g["codes"]) for g in got] == [same, same]


def _two_acmes():
    frame = typed_frame(
        brrap.SPEC,
        [
            {**BASE, "Grant ID": "G-1", "Business Name": "Acme Corp.", "Yearly Tax Credit Amount ($)": 6_000_000},
            {**BASE, "Grant ID": "G-2", "Business Name": "ACME Corporation", "Yearly Tax Credit Amount ($)": 4_000_000.01},
            {**BASE, "Grant ID": "G-3", "Business Name": "Other LLC", "Yearly Tax Credit Amount ($)": 1_000_000},
        ],
    )
    rules = load("brrap")
    return frame, rules, brrap.calculate(frame, rules)


def test_business_limit_message_names_every_spelling():
    frame, rules, calc = _two_acmes()
    raw = pd.concat([f for f in calc.findings if len(f)])
    shown = render(raw, "BRRAP", rules.findings)
    assert shown["Code"].tolist() == ["BUSINESS_ANNUAL_LIMIT_EXCEEDED"] * 2
    # 6,000,000 + 4,000,000.01 = 10,000,000.01 in 2024
    assert "has $10,000,000.01 of BRRAP credit in 2024" in shown["Message"].iloc[1]
    assert shown["Message"].str.contains("Acme Corp.; ACME Corporation", regex=False).all()


def test_summary_pivot_has_one_column_per_business():
    frame, rules, calc = _two_acmes()
    table = brrap.summarize(
        pd.concat([frame, calc.computed], axis=1), pd.Series("OK", index=frame.index), pd.DataFrame(columns=["row", "Code"]), rules
    )[0].table
    # Acme Corp. and ACME Corporation in one column, headed by the first spelling: 6,000,000 + 4,000,000.01, in cents
    assert [c for c in table.columns if "Acme" in c or "ACME" in c or "Other" in c] == ["Acme Corp.", "Other LLC"]
    assert table["Acme Corp."].tolist() == [1_000_000_001] and table["Businesses Over $10,000,000"].tolist() == ["Acme Corp."]


def test_run_credit_by_year_groups_by_the_business_name_rule():
    # the run report's cross-workbook figures carry the same business key as the sheet's own limit
    frame, rules, calc = _two_acmes()
    per = brrap.run_credit_by_year(frame, calc.computed, pd.Series("Flagged", index=frame.index))
    assert per["business"].tolist() == ["acme", "acme", "other"]
    assert per["business_name"].tolist() == ["Acme Corp.", "ACME Corporation", "Other LLC"]
    assert per.groupby("business")["credit"].sum().to_dict() == {"acme": 1_000_000_001, "other": 100_000_000}


def test_blank_name_matches_nothing():
    # README: "A blank name matches nothing": two blank names are two businesses, never grouped together
    keys = brrap.business_of(pd.Series(["", None, "Acme Corp.", "ACME Corporation"], index=[10, 11, 12, 13]))
    assert keys[10] != keys[11] and keys[12] == keys[13] == "acme"


def test_business_name_is_required():
    # the page: Business Name required (the limit groups by it; a blank name would match nothing)
    raw = pd.DataFrame([{**BASE, "Business Name": ""}], dtype=object)
    assert validate(brrap.SPEC, raw)[1][["column", "code"]].values.tolist() == [["Business Name", "MISSING_VALUE"]]


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


def test_business_limit_flags_only_rows_with_credit_that_year():
    # "flag every row of that business that has credit in that year": a $0 grant of the business has none.
    # 10,000,000.01 + 0 = 10,000,000.01 over the limit in 2024: the first row only
    got = rows({"Yearly Tax Credit Amount ($)": 10_000_000.01}, {"Business Name": "Acme Insurance Inc", "Yearly Tax Credit Amount ($)": 0})
    assert "BUSINESS_ANNUAL_LIMIT_EXCEEDED" in got[0]["codes"] and "BUSINESS_ANNUAL_LIMIT_EXCEEDED" not in got[1]["codes"]


def test_business_names_ignore_punctuation():
    # "O'Brien Co" and "OBrien" are one business: 6,000,000 + 5,000,000 = 11,000,000 over 10,000,000
    got = rows(
        {"Business Name": "O'Brien Co", "Yearly Tax Credit Amount ($)": 6_000_000},
        {"Business Name": "OBrien", "Yearly Tax Credit Amount ($)": 5_000_000},
    )
    assert all("BUSINESS_ANNUAL_LIMIT_EXCEEDED" in g["codes"] for g in got)


# -- the portfolio: grants of other workbooks of the run and of earlier runs (RunContext.portfolio) --


def far(gid, name, credits, workbook="nov.xlsx"):
    """A grant of another workbook, as the run gives it: its fields (`portfolio_fields`; `credits`
    {year: dollars}, consecutive years of equal credit, as a grant of one multiple gives them) with
    the record's sheet, ID, workbook and run date."""
    frame = pd.DataFrame({"Business Name": [name]})
    key = brrap.business_key(frame["Business Name"])[0]
    years, amounts = list(credits), list(credits.values())
    assert years == list(range(years[0], years[0] + len(years))) and len(set(amounts)) == 1
    return {
        "business": name, "business_key": None if pd.isna(key) else key, "first_period": years[0], "tax_periods": len(years),
        "grant": round(sum(amounts) * 100), "business_years": [f"{year} {key}" for year in credits],
        "years": [str(year) for year in credits], "sheet": "BRRAP", "record_id": gid, "workbook": workbook, "run_date": "2026-11-30",
    }  # fmt: skip


def across(outside, *changes):
    from batch.programs._kit.calculation import RunContext

    frame = typed_frame(brrap.SPEC, [{**BASE, "Grant ID": f"G-{i}", **c} for i, c in enumerate(changes)])
    context = RunContext(pd.Timestamp("2026-12-01").date(), portfolio=pd.DataFrame(outside), workbook="dec.xlsx", run_date="2026-12-01")
    calc = brrap.calculate(frame, load("brrap"), context)
    found = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])])
    return [found.loc[found["row"] == i, "code"].tolist() for i in frame.index], found


BIZ, AGG = "BUSINESS_ANNUAL_LIMIT_EXCEEDED", "AGGREGATE_ANNUAL_LIMIT_EXCEEDED"
PORTFOLIO_CASES = [
    # Acme's $6,000,000 of 2024 in November and $4,000,000 now: $10,000,000 exactly, the single-business limit
    ("at the business limit", [far("N-1", "Acme Insurance", {2024: 6_000_000})], [{"Yearly Tax Credit Amount ($)": 4_000_000}], [[]]),
    # one cent more: $10,000,000.01 > $10,000,000
    ("one cent over it", [far("N-1", "Acme Insurance", {2024: 6_000_000})], [{"Yearly Tax Credit Amount ($)": 4_000_000.01}],
     [[BIZ]]),
    # the business-name rule: "ACME INSURANCE, INC." of another workbook is Acme Insurance: 9,500,000 + 1,000,000
    ("as another workbook spells it", [far("N-1", "ACME INSURANCE, INC.", {2024: 9_500_000})], [{}], [[BIZ]]),
    # another year's credit is not this year's: $9,000,000 of 2025 and $1,000,000 of 2024 now
    ("another year", [far("N-1", "Acme Insurance", {2025: 9_500_000})], [{"Yearly Tax Credit Amount ($)": 2_000_000}], [[]]),
    # a grant over two years counts in each: 2024 $5,000,000 + 2025 $5,000,000 (multiple 2, 251 employees)
    # against the row's $6,000,000 a year in 2025 and 2026: 2025 = 11,000,000 > 10,000,000
    ("a grant of two tax periods", [far("N-1", "Acme Insurance", {2024: 5_000_000, 2025: 5_000_000})],
     [{"First Tax Period": 2025, "Yearly Tax Credit Amount ($)": 6_000_000}], [[BIZ]]),
    # another business's credit counts in the aggregate only: 15,000,000 + 5,000,000 = 20,000,000 exactly
    ("at the aggregate limit", [far("N-1", "Other Co", {2024: 9_000_000}), far("N-2", "Third Co", {2024: 6_000_000})],
     [{"Yearly Tax Credit Amount ($)": 5_000_000}], [[]]),
    # 15,000,000 + 5,000,000.01 = 20,000,000.01 > 20,000,000
    ("one cent over the aggregate", [far("N-1", "Other Co", {2024: 9_000_000}), far("N-2", "Third Co", {2024: 6_000_000})],
     [{"Yearly Tax Credit Amount ($)": 5_000_000.01}], [[AGG]]),
    # both: Acme 8,000,000 elsewhere + 3,000,000 here = 11,000,000; all 8,000,000 + 13,000,000 + 3,000,000 = 24,000,000
    ("both limits", [far("N-1", "Acme Insurance", {2024: 8_000_000}), far("N-2", "Other Co", {2024: 13_000_000})],
     [{"Yearly Tax Credit Amount ($)": 3_000_000}], [[BIZ, AGG]]),
    # a grant with fewer than 50 employees has no credit and counts in no limit (its own row: Ineligible)
    ("nothing of another workbook", [], [{"Employees Relocated or Retained": 49, "Yearly Tax Credit Amount ($)": 25_000_000}],
     [["BELOW_50_EMPLOYEES"]]),
]  # fmt: skip


@pytest.mark.parametrize("name,outside,changes,expected", PORTFOLIO_CASES, ids=[c[0] for c in PORTFOLIO_CASES])
def test_the_limits_count_the_portfolio(name, outside, changes, expected):
    got, _found = across(outside, *changes)
    assert got == expected


def test_a_limit_names_the_grants_of_other_workbooks_it_counted():
    # twelve grants of $1,000,000 of Acme in 2024 elsewhere and $1,000,000 here: 13,000,000 > 10,000,000
    outside = [far(f"N-{i}", "Acme Insurance", {2024: 1_000_000}) for i in range(1, 13)]
    _got, found = across(outside, {})
    message = render(found, "BRRAP", load("brrap").findings)["Message"].iloc[0]
    named = "; ".join(f"BRRAP N-{i} (nov.xlsx, run 2026-11-30)" for i in range(1, 11))
    assert message.startswith(
        "Acme Insurance has $13,000,000.00 of BRRAP credit in 2024 across its grants (this grant: $1,000,000.00), "
        f"$12,000,000.00 of it in other workbooks ({named}; and 2 more), more than the $10,000,000.00 a single business"
    ), message


def test_the_fields_a_grant_keeps_are_its_credit_per_year_and_its_groups():
    two = {"Employees Relocated or Retained": 300, "Yearly Tax Credit Amount ($)": 1_000_000.01}
    few = {"Employees Relocated or Retained": 49}
    frame = typed_frame(brrap.SPEC, [{**BASE, "Grant ID": "G-1", **two}, {**BASE, "Grant ID": "G-2", **few}])
    kept = brrap.portfolio_fields(frame).to_dict("records")
    # multiple 2 (251-400 employees): 2,000,000.02 over 2024 and 2025 (split_by_year: 1,000,000.01 each)
    assert kept[0] == {"business": "Acme Insurance", "business_key": "acmeinsurance", "first_period": 2024, "tax_periods": 2,
                       "grant": 200_000_002, "business_years": ["2024 acmeinsurance", "2025 acmeinsurance"],
                       "years": ["2024", "2025"]}  # fmt: skip
    assert kept[1]["tax_periods"] == 0 and kept[1]["years"] is None and kept[1]["business_years"] is None


def test_a_grant_is_split_by_year_to_the_cent():
    # 1,000,000.01 over 3 years: 333,333.33, 333,333.33 and the remainder 333,333.35; a grant of no period: nothing
    rows, years, credit = brrap.split_by_year(np.array([100_000_001, 500]), np.array([3, 0]), np.array([2024, 2030]))
    assert (rows.tolist(), years.tolist(), credit.tolist()) == ([0, 0, 0], [2024, 2025, 2026], [33_333_333, 33_333_333, 33_333_335])
