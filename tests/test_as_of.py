"""The run's as-of date: `--as-of` on run, watch and validate, `as_of` in njcredits.toml, the day of
processing by default; shown on the Run sheet and kept in the ledger."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest
import python_calamine
from click.testing import CliRunner
from conftest import write_workbook

from batch.cli import main
from batch.run.config import ConfigError, load

D = dt.date
COMPLIANCE_HEADERS = ["Project ID", "Tax Period", "Approval Date", "Certification Date", "Annual Credit ($)", "Agreement Jobs",
                      "Baseline Statewide Employees", "Statewide Employees", "Facility Employees",
                      "Period Documentation Certified Date", "Tax Liability ($)"]  # fmt: skip
# the 2025 period's documentation is blank: its deadline is 2028-12-31 (31 December 2025 + 3 years, C.34:1B-247 c.(1))
ROW_2025 = ["P-1", 2025, D(2022, 3, 1), D(2023, 1, 15), 100_000, 100, 100, 100, 100, "", 50_000]


def compliance_book(folder):
    return write_workbook(folder / "compliance.xlsx", {"GrowNJ_Compliance": [COMPLIANCE_HEADERS, ROW_2025]})


def run_sheet(path) -> dict:
    rows = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name("Run").to_python()
    return {r[0]: r[1] for r in rows if len(r) > 1}


def row_findings(path) -> str:
    sheet = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name("GrowNJ_Compliance").to_python()
    return dict(zip(sheet[0], sheet[1], strict=False))["Findings"]


def test_run_with_as_of_judges_the_deadline_on_that_day(tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for as_of, code in (("2028-12-31", "DOCUMENTATION_PENDING"), ("2029-01-01", "CREDIT_FORFEITED_UNCERTIFIED")):
        compliance_book(inbox)
        out = tmp_path / f"out-{as_of}"
        result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(out), "--as-of", as_of, "--force"])
        assert result.exit_code == 0, result.output
        assert row_findings(out / "compliance.annotated.xlsx") == code
        assert run_sheet(out / "compliance.annotated.xlsx")["As-of date"] == as_of
        with sqlite3.connect(out / ".njcredits" / "ledger.sqlite") as db:
            assert db.execute("SELECT as_of FROM files").fetchall() == [(as_of,)]


def test_default_as_of_is_the_day_of_processing(tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    compliance_book(inbox)
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert run_sheet(tmp_path / "out" / "compliance.annotated.xlsx")["As-of date"] == dt.date.today().isoformat()


def test_validate_takes_as_of(tmp_path):
    book = compliance_book(tmp_path)
    late = CliRunner().invoke(main, ["validate", str(book), "--as-of", "2029-01-01"])
    pending = CliRunner().invoke(main, ["validate", str(book), "--as-of", "2026-11-30"])
    assert "CREDIT_FORFEITED_UNCERTIFIED" in late.output and "DOCUMENTATION_PENDING" not in late.output
    assert "DOCUMENTATION_PENDING" in pending.output and "CREDIT_FORFEITED_UNCERTIFIED" not in pending.output


def test_as_of_in_the_config_file_and_the_flag_over_it(tmp_path):
    (tmp_path / "njcredits.toml").write_text("as_of = 2027-03-31\n")
    assert load(cwd=tmp_path).as_of == D(2027, 3, 31)
    assert load(cwd=tmp_path, as_of=D(2026, 11, 30)).as_of == D(2026, 11, 30)
    (tmp_path / "njcredits.toml").write_text('as_of = "2027-04-01"\n')
    assert load(cwd=tmp_path).as_of == D(2027, 4, 1)
    assert load(cwd=tmp_path, as_of=None).as_of == D(2027, 4, 1)  # a flag not given leaves the file's value


def test_a_bad_as_of_is_a_usage_error(tmp_path):
    (tmp_path / "njcredits.toml").write_text('as_of = "next month"\n')
    with pytest.raises(ConfigError, match="as_of = 'next month' is not a date"):
        load(cwd=tmp_path)
    result = CliRunner().invoke(main, ["validate", str(compliance_book(tmp_path)), "--as-of", "30/11/2026"])
    assert result.exit_code == 2 and "--as-of" in result.output


@pytest.mark.parametrize("value", ["20261130", "2026_11_30", '"2026-W49-1"', "2026-11-30T10:00:00", '"2026-02-30"', "1"])
def test_as_of_must_be_a_calendar_date(tmp_path, value):
    (tmp_path / "njcredits.toml").write_text(f"as_of = {value}\n")
    with pytest.raises(ConfigError, match="is not a date"):
        load(cwd=tmp_path)
