"""Every file of the catalogue (tests/hostile.py) is processed or set aside with its reason, and never
takes the batch down: a good workbook dropped beside it is always processed."""

from __future__ import annotations

import hostile
import openpyxl
import pytest
import python_calamine
from conftest import foreign_formulas

from batch.run.config import load
from batch.run.runner import run_batch


def run_folder(tmp_path, builder, **flags):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    path = builder(inbox)
    hostile.companion(inbox)
    settings = load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=2, **flags)
    outcome = run_batch(settings, echo=lambda *_: None)
    return path, {f.name: f for f in outcome.files}, outcome, inbox, outbox


def findings_text(output: str) -> str:
    book = python_calamine.CalamineWorkbook.from_path(output)
    return " ".join(str(v) for row in book.get_sheet_by_name("Findings").to_python() for v in row)


@pytest.mark.parametrize("case", list(hostile.CASES))
def test_catalogue(tmp_path, case):
    builder, expected, text = hostile.CASES[case]
    path, files, outcome, inbox, outbox = run_folder(tmp_path, builder)
    assert files["good.xlsx"].status == "processed", files["good.xlsx"].reason  # the batch goes on
    got = files[path.name]
    assert got.status == expected, got.reason
    if expected == "failed":
        assert text in got.reason
        reason_file = inbox / "failed" / outcome.run_id / f"{path.name}.reason.txt"
        assert reason_file.read_text().strip() == got.reason and got.reason.count(". ") <= 2
        assert not (outbox / path.with_suffix(".annotated.xlsx").name).exists()
    else:
        assert (inbox / "processed" / outcome.run_id / path.name).exists()
        if text:
            assert text in findings_text(got.output)


def test_error_cells_are_located_and_returned_as_they_came(tmp_path):
    path, files, *_ = run_folder(tmp_path, hostile.excel_errors)
    out = python_calamine.CalamineWorkbook.from_path(files[path.name].output)
    grid = out.get_sheet_by_name("Transfers").to_python()
    # the user's formulas stay formulas with their cached error values (the workbook is annotated in place)
    ws = openpyxl.load_workbook(files[path.name].output)["Transfers"]
    assert [c.value for c in ws[2][6:8]] == ["=1/0", "=NA()"]
    cached = openpyxl.load_workbook(files[path.name].output, data_only=True)["Transfers"]
    assert [c.value for c in cached[2][6:8]] == ["#DIV/0!", "#N/A"]
    status = grid[0].index("Status")
    assert grid[1][status] == "Invalid"
    findings = out.get_sheet_by_name("Findings").to_python()
    located = [(r[1], r[3], r[4]) for r in findings[1:]]
    assert (2, "Credit Amount Transferred ($)", "BAD_TYPE") in located and (2, "Consideration Received ($)", "BAD_TYPE") in located


def test_uncalculated_formula_warning_names_the_cell(tmp_path):
    path, files, *_ = run_folder(tmp_path, hostile.uncalculated_formula)
    text = findings_text(files[path.name].output)
    assert "Cell H2 holds the formula =G2*0.9" in text


def test_formula_like_text_comes_back_as_the_same_text(tmp_path):
    path, files, *_ = run_folder(tmp_path, hostile.formula_text_everywhere)
    output = files[path.name].output
    assert foreign_formulas(output) == []
    book = python_calamine.CalamineWorkbook.from_path(output)
    texts = {v for row in book.get_sheet_by_name("Transfers").to_python() for v in row if isinstance(v, str)}
    assert set(hostile.FORMULA_LIKE) <= texts
    assert book.get_sheet_by_name("Notes").to_python()[1][0] == hostile.FORMULA_LIKE[0]


def test_odd_values_read_or_reported(tmp_path):
    path, files, *_ = run_folder(tmp_path, hostile.odd_values)
    book = python_calamine.CalamineWorkbook.from_path(files[path.name].output)
    grid = book.get_sheet_by_name("Transfers").to_python()
    header = grid[0]
    rows = {r[0]: dict(zip(header, r, strict=False)) for r in grid[1:]}
    assert rows["T-1"]["Notes"] == "x" * 32767  # the longest text a cell holds, unchanged
    assert rows["T-1"]["Findings"] == "BAD_TYPE"  # "USD 27000"; " $ 30,000.00 " and "March 5, 2026" read fine
    assert rows["T-2"]["Findings"] == "OUT_OF_RANGE"  # (30,000) is negative; 05-Mar-2026 and "27 000" read fine
    assert rows["T-3"]["Findings"] == "BAD_TYPE"  # 5/3/26: two-digit years are not guessed


def test_messy_headers(tmp_path):
    path, files, *_ = run_folder(tmp_path, hostile.messy_headers)
    book = python_calamine.CalamineWorkbook.from_path(files[path.name].output)
    grid = book.get_sheet_by_name("transfers").to_python()
    header = grid[3]
    row = dict(zip(header, grid[4], strict=False))
    assert row["Status"] == "OK" and row["Minimum Transfer ($)"] == 25_000  # Program read from the first PROGRAM column
    assert grid[4][8:11] == ["BEIP", "note", "more"]  # the duplicate and the merged-header columns come back as they came


def test_large_sheet_over_the_memory_limit_is_refused_not_crashed(tmp_path):
    path, files, *_ = run_folder(tmp_path, lambda f: hostile.large_sheet(f, 200_000), memory_limit_mb=400)
    got = files[path.name]
    assert got.status == "failed"
    assert "400 MB" in got.reason or "stopped unexpectedly" in got.reason


def test_zip_limits_come_from_configuration(tmp_path):
    # the same good workbook refused when the configured total is tiny
    path, files, *_ = run_folder(tmp_path, hostile.headers_only, max_uncompressed_mb=0)
    assert files[path.name].status == "failed" and "max_uncompressed_mb" in files[path.name].reason
    assert files["good.xlsx"].status == "failed"  # every workbook is over a limit of 0 MB
