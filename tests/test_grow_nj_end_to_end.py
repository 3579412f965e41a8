"""The Grow NJ sample through `njcredits run`: what a reviewer opens."""

from __future__ import annotations

import pytest
import python_calamine
import samples
from click.testing import CliRunner

from batch.cli import main


@pytest.fixture(scope="module")
def returned(tmp_path_factory):
    inbox, out = tmp_path_factory.mktemp("inbox"), tmp_path_factory.mktemp("out")
    samples.build_program("GrowNJ", inbox / "grow.xlsx")
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(out)])
    assert result.exit_code == 0, result.output
    book = python_calamine.CalamineWorkbook.from_path(str(out / "grow.annotated.xlsx"))
    sheet = book.get_sheet_by_name("GrowNJ").to_python()
    return [dict(zip(sheet[0], r, strict=False)) for r in sheet[1:]], book


def test_every_project_comes_back_with_a_status(returned):
    rows, _ = returned
    headers, sample = samples.SHEETS["GrowNJ"]
    assert len(rows) == len(sample) == 33
    assert [r["Project ID"] for r in rows] == [s[headers.index("Project ID")] for s in sample]
    assert {r["Status"] for r in rows} == {"OK", "Flagged", "Ineligible", "Invalid"}


def test_every_area_and_both_versions_are_in_the_sample(returned):
    rows, _ = returned
    assert {r["Area"] for r in rows} == {
        "Urban Transit Hub",
        "Growth Zone",
        "Growth Zone (MRERA)",
        "Create Zone",
        "Distressed",
        "Priority",
        "Other Eligible",
    }
    # both texts, and a blank (computed under the latest text, with STATUTE_VERSION_NOT_GIVEN)
    assert {r["Statute Version"] for r in rows} == {"2014", "2017", ""}
    blank = [r for r in rows if r["Statute Version"] == ""]
    assert blank and all("STATUTE_VERSION_NOT_GIVEN" in r["Findings"] for r in blank)


def test_ineligible_rows_have_zero_award_but_show_the_per_job_amounts(returned):
    rows, _ = returned
    for r in rows:
        if r["Status"] == "Ineligible":
            assert r["Eligible"] == "N" and r["Annual Credit ($)"] == 0 and r["Total Award ($)"] == 0
            assert r["Gross Credit per Job ($)"] > 0 and "NOT ELIGIBLE" in r["Calculation"]
        elif r["Status"] == "Invalid":
            assert r["Calculation"] == "" and r["Annual Credit ($)"] == ""
        else:
            assert r["Eligible"] == "Y" and r["Calculation"].endswith("eligible")


def test_calculation_lets_a_reviewer_rebuild_the_award(returned):
    rows, _ = returned
    r = next(r for r in rows if r["Project ID"] == "GNJ-1402")
    # 2014 UTH: base 5,000 + TOD 2,000 + targeted 500 + salary 250 (96,000 is 35.2% over 71,000) = 7,750;
    # 120 new x 7,750 = 930,000 a year; x 10 = 9,300,000
    assert (r["Gross Credit per Job ($)"], r["Annual Credit ($)"], r["Total Award ($)"]) == (7_750, 930_000, 9_300_000)
    for piece in (
        "base 5,000 [246b(1)]",
        "TOD 2,000 [246c(4)]",
        "salary 250",
        "= 7,750",
        "a.-e. 120 new x 7,750",
        "= 930,000.00",
        "x 10 years = 9,300,000.00",
    ):
        assert piece in r["Calculation"], piece


def test_summary_pivots(returned):
    _, book = returned
    text = " ".join(str(v) for row in book.get_sheet_by_name("Summary").to_python() for v in row)
    for title in (
        "Projects and awards by Area and Statute Version",
        "Projects and awards by year of application",
        "Projects by finding code",
        "Findings by code",
    ):
        assert title in text
