"""The returned workbook read in thirty seconds: `Status` coloured by what a reviewer must do (a
Flagged row red when it has an error not waived, amber with warnings only), the Summary of the
sheets with rows (the two Flagged counts, awards and credit transferred apart, each total clean and
with open errors, value-only chart labels, the reviewer's work per sheet), and every tool sheet and
run report sheet printed one page wide, landscape, its header row on every page."""

from __future__ import annotations

import csv
import datetime as dt
import re
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner
from openpyxl.utils import get_column_letter
from test_reviews import transfers_workbook

from batch.cli import main
from batch.pipeline import process
from batch.programs.transfers.sheet import TRANSFERS
from batch.workbook.looks import lines
from batch.workbook.writing import write
from validators.columns import REVIEW_COLUMNS

HEADERS = [c.header for c in TRANSFERS.columns]
# Transfer ID, Program, Certificate ID, Certificate Amount, Transferor, Transferee, Transfer Date, Credit, Consideration
ROWS = [
    ["T-1", "Grow NJ", "C-1", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30_000, 27_000],  # clean: 90%
    ["T-2", "Grow NJ", "C-2", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 6), 40_000, 44_000],  # a premium: a warning
    ["T-3", "Grow NJ", "C-3", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 7), 20_000, 18_000],  # under $25,000: an error
    ["T-4", "Grow NJ", "C-4", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 8), 50_000, 55_000],  # a premium: a warning
    ["T-5", None, "C-5", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 9), 30_000, 27_000],  # no Program: Invalid
]
AS_OF = "2026-11-30"
GREEN, AMBER, RED, GREY = "FFC6EFCE", "FFFFEB9C", "FFFFC7CE", "FFD9D9D9"


def _run(path: Path, out: Path, ledger: Path) -> CliRunner:
    result = CliRunner().invoke(
        main, ["run", str(path), "--out", str(out), "--ledger", str(ledger), "--as-of", AS_OF, "--keep-inputs", "--force"]
    )
    assert result.exit_code == 0, result.output
    return result


def _returned(out: Path, name: str) -> Path:
    return next(out.glob(f"{name}*.annotated.xlsx"))


def _xlsx(path: Path, rows=ROWS) -> Path:
    return transfers_workbook(path, rows)


def _csv(path: Path, rows=ROWS) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADERS)
        for r in rows:
            w.writerow(["" if v is None else v.isoformat() if isinstance(v, dt.date) else v for v in r])
    return path


def _intake(book) -> openpyxl.worksheet.worksheet.Worksheet:
    return book.worksheets[0]


def _by_record(ws) -> dict[str, dict]:
    header = [c.value for c in ws[1]]
    status = header.index("Status")
    return {
        row[0].value: {"Status": row[status].value, "fill": row[status].fill.fgColor.rgb} for row in ws.iter_rows(min_row=2) if row[0].value
    }


@pytest.mark.parametrize(
    "writer, make",
    [
        ("in place (an .xlsx)", _xlsx),
        ("anew (a .csv)", _csv),
    ],
)
def test_status_colours_tell_an_open_error_from_a_warning(tmp_path, writer, make):
    src = make(tmp_path / "in" / ("review.xlsx" if make is _xlsx else "review.csv"))
    _run(src, tmp_path / "out", tmp_path / "ledger.sqlite")
    rows = _by_record(_intake(openpyxl.load_workbook(_returned(tmp_path / "out", "review"))))
    assert {k: (v["Status"], v["fill"]) for k, v in rows.items()} == {
        "T-1": ("OK", GREEN),
        "T-2": ("Flagged", AMBER),  # a warning only: a reviewer looks, then approves or waives
        "T-3": ("Flagged", RED),  # an error (TRANSFER_BELOW_MINIMUM): no reviewer may waive it, the cell is fixed
        "T-4": ("Flagged", AMBER),
        "T-5": ("Invalid", RED),
    }, writer


def _grid(path: Path, sheet: str) -> list[tuple]:
    return [tuple(r) for r in openpyxl.load_workbook(path)[sheet].iter_rows(values_only=True)]


def _table(grid: list[tuple], title_starts: str) -> list[dict]:
    """The rows of the table whose title starts with `title_starts`, by header."""
    at = next(i for i, r in enumerate(grid) if isinstance(r[0], str) and r[0].startswith(title_starts))
    header = grid[at + 1]
    out = []
    for r in grid[at + 2 :]:
        if r[0] is None:
            break
        out.append({h: v for h, v in zip(header, r, strict=False) if h is not None})
    return out


def test_the_summary_counts_flagged_in_two_and_splits_the_total_clean_and_with_open_errors(tmp_path):
    _run(_xlsx(tmp_path / "in" / "review.xlsx"), tmp_path / "out", tmp_path / "ledger.sqlite")
    out = _returned(tmp_path / "out", "review")
    grid = _grid(out, "Summary")
    (row,) = _table(grid, "Rows by status and credit transferred by program")
    # 5 rows: T-1 OK; T-3 an error; T-2 and T-4 warnings only; T-5 Invalid
    # clean: T-1 + T-2 + T-4 = 30,000 + 40,000 + 50,000 = 120,000; with open errors: T-3's 20,000; T-5 not counted
    assert row == {
        "Sheet": "Transfers",
        "Program": "Tax credit transfer certificates",
        "Rows": 5,
        "OK": 1,
        "Flagged with errors": 1,
        "Flagged with warnings only": 2,
        "Ineligible": 0,
        "Invalid": 1,
        "Credit transferred clean ($)": 120_000,
        "Credit transferred with open errors ($)": 20_000,
    }
    # transfers are credit transferred, not awards: no awards table
    assert not any(isinstance(r[0], str) and r[0].startswith("Rows by status and award") for r in grid)
    with zipfile.ZipFile(out) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    (chart,) = charts
    assert "Credit transferred by program" in chart
    labels = re.findall(r"<c:dLbls>.*?</c:dLbls>", chart)
    assert len(labels) == 2  # the clean part and the part with open errors
    for lbl in labels:  # the value alone, said explicitly: no series or category name on a bar
        shown = dict(re.findall(r"<c:(show\w+) val=\"(\d)\"/>", lbl))
        assert shown == {
            "showLegendKey": "0",
            "showVal": "1",
            "showCatName": "0",
            "showSerName": "0",
            "showPercent": "0",
            "showBubbleSize": "0",
        }
    assert '<c:min val="0"/>' in chart  # the bars start at $0


def test_a_workbook_from_the_template_lists_no_empty_program(tmp_path):
    result = CliRunner().invoke(main, ["template", "--out", str(tmp_path / "tpl")])
    assert result.exit_code == 0, result.output
    template = next((tmp_path / "tpl").glob("*.xlsx"))
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "blank.xlsx").write_bytes(template.read_bytes())
    _run(inbox / "blank.xlsx", tmp_path / "out", tmp_path / "ledger.sqlite")
    out = _returned(tmp_path / "out", "blank")
    grid = _grid(out, "Summary")
    no_rows = [r[0] for r in grid if isinstance(r[0], str) and r[0].endswith(": no rows.")]
    # one line for each intake sheet of the template (every sheet but Instructions and Lists), nothing else about them
    assert len(no_rows) == len(openpyxl.load_workbook(template).sheetnames) - 2
    assert "ERG_Residential (ERG residential credits): no rows." in no_rows
    assert not any(isinstance(r[0], str) and r[0].startswith("Rows by status") for r in grid)
    assert not any(r[0] == "Reviewer decisions by sheet" for r in grid)
    with zipfile.ZipFile(out) as z:
        assert not [n for n in z.namelist() if n.startswith("xl/charts/")]  # no chart of $0 bars


def _decide(path: Path, dest: Path, decisions: dict[str, tuple], edits: dict[str, dict[int, object]] | None = None) -> Path:
    book = openpyxl.load_workbook(path)
    ws = book["Transfers"]
    header = [c.value for c in ws[1]]
    at = {h: header.index(h) + 1 for h in REVIEW_COLUMNS}
    for row in ws.iter_rows(min_row=2):
        for h, value in zip(REVIEW_COLUMNS, decisions.get(row[0].value, ()), strict=False):
            ws.cell(row[0].row, at[h], value)
        for col, value in (edits or {}).get(row[0].value, {}).items():
            ws.cell(row[0].row, col, value)
    dest.parent.mkdir(parents=True, exist_ok=True)
    book.save(dest)
    return dest


DECISIONS = {
    "T-1": ("Approved", "JS", "checked"),
    "T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", "a documented premium"),
    "T-3": ("Approved", "JS", "seen; the cell is being fixed"),
}


@pytest.mark.parametrize(
    "edits, expected",
    [
        # T-1 and T-3 approved; T-2's warning waived (it is OK now); T-4 Flagged with no decision: to review
        ({}, {"Approved": 2, "Waived": 1, "Withdrawn": 0, "Stale": 0, "Still to review": 1}),
        # T-3's Consideration changed after its approval: stale, not applied; T-3 and T-4 to review
        ({"T-3": {9: 17_000}}, {"Approved": 1, "Waived": 1, "Withdrawn": 0, "Stale": 1, "Still to review": 2}),
    ],
)
def test_the_summary_says_the_reviewers_work_per_sheet(tmp_path, edits, expected):
    ledger = tmp_path / "ledger.sqlite"
    _run(_xlsx(tmp_path / "in" / "review.xlsx"), tmp_path / "out1", ledger)
    decided = _decide(_returned(tmp_path / "out1", "review"), tmp_path / "in2" / "review.annotated.xlsx", DECISIONS)
    _run(decided, tmp_path / "out2", ledger)  # the decisions read and recorded
    again = _decide(_returned(tmp_path / "out2", "review"), tmp_path / "in3" / "review.annotated.xlsx", {}, edits)
    _run(again, tmp_path / "out3", ledger)
    (row,) = _table(_grid(_returned(tmp_path / "out3", "review"), "Summary"), "Reviewer decisions by sheet")
    assert row == {"Sheet": "Transfers", **expected}


# -- printed one page wide ----------------------------------------------------------------------


def _page(ws) -> tuple:
    setup = ws.page_setup
    return (
        setup.orientation,
        int(setup.fitToWidth if setup.fitToWidth is not None else 1),  # left out: 1, the schema's default
        int(setup.fitToHeight if setup.fitToHeight is not None else 1),  # 0: as many pages tall as it takes
        bool(ws.sheet_properties.pageSetUpPr and ws.sheet_properties.pageSetUpPr.fitToPage),
    )


@pytest.mark.parametrize(
    "sheet, title_rows",
    [
        ("Findings", "$1:$1"),  # the header row
        ("Summary", "$1:$1"),  # the title
        ("Run", "$1:$1"),
        ("Rules", "$2:$2"),  # below its title
    ],
)
def test_the_tool_sheets_print_one_page_wide(tmp_path, sheet, title_rows):
    _run(_xlsx(tmp_path / "in" / "review.xlsx"), tmp_path / "out", tmp_path / "ledger.sqlite")
    ws = openpyxl.load_workbook(_returned(tmp_path / "out", "review"))[sheet]
    assert _page(ws) == ("landscape", 1, 0, True)
    assert ws.print_title_rows == title_rows


REPORT_SHEETS = {
    "Files": "$2:$2",  # the header row below the title
    "Portfolio": None,  # tables one below the other: no one header row
    "BRRAP Aggregate": "$2:$2",
    "Decisions": "$2:$2",
    "Changes": "$1:$1",
    "Portfolio changes": "$2:$2",
    "Run": None,  # lines of facts, no header row
}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    _run(_xlsx(tmp / "in" / "review.xlsx"), tmp / "out", tmp / "ledger.sqlite")
    _run(_xlsx(tmp / "in" / "review.xlsx"), tmp / "out", tmp / "ledger.sqlite")  # a second run: Changes compares
    return max((tmp / "out").glob("run-*.summary.xlsx"))


def test_the_run_report_has_the_sheets_tested_here(report):
    assert sorted(openpyxl.load_workbook(report).sheetnames) == sorted(REPORT_SHEETS)


@pytest.mark.parametrize("sheet, title_rows", REPORT_SHEETS.items())
def test_the_run_report_prints_one_page_wide(report, sheet, title_rows):
    ws = openpyxl.load_workbook(report)[sheet]
    assert _page(ws) == ("landscape", 1, 0, True)
    assert ws.print_title_rows == title_rows


def test_the_run_sheet_and_the_run_reports_files_count_flagged_in_two(tmp_path):
    _run(_xlsx(tmp_path / "in" / "review.xlsx"), tmp_path / "out", tmp_path / "ledger.sqlite")
    (counts,) = _table(_grid(_returned(tmp_path / "out", "review"), "Run"), "Counts per sheet")
    # T-3 an error; T-2 and T-4 warnings only: 1 + 2 = the 3 rows Flagged
    assert (counts["Flagged with errors"], counts["Flagged with warnings only"]) == (1, 2)
    report = next((tmp_path / "out").glob("run-*.summary.xlsx"))
    (files,) = _table(_grid(report, "Files"), "Files of run")
    assert (files["Rows"], files["Flagged with errors"], files["Flagged with warnings only"]) == (5, 1, 2)
    assert files["Line"].startswith("done  review.xlsx  5 rows: 1 OK, 3 flagged")  # the fixed line keeps its one Flagged count
    portfolio = _table(_grid(report, "Portfolio"), "Records by program and status")
    assert [(r["Sheet"], r["OK"], r["Flagged with errors"], r["Flagged with warnings only"], r["Invalid"]) for r in portfolio] == [
        ("Transfers", 1, 1, 2, 1)
    ]


def test_the_run_sheets_workbook_findings_wrap_across_the_table_each_row_as_tall_as_its_message(tmp_path):
    result = process(_xlsx(tmp_path / "in" / "m.xlsx"), as_of=dt.date(2026, 11, 30))
    said = "m.xlsx holds macros: the returned workbook is an .xlsx without the VBA project, " + "and without any code " * 12
    about = pd.DataFrame([{"Sheet": "", "Row": pd.NA, "Record ID": "", "Column": "", "Code": "MACROS_REMOVED"}])
    about = about.assign(Severity="info", Message=said, Citation="", Waived="")
    result.findings = pd.concat([result.findings, about], ignore_index=True)  # a finding about the workbook, no sheet
    ws = openpyxl.load_workbook(write(result, tmp_path / "m.annotated.xlsx"))["Run"]
    at = next(c.row for c in ws["A"] if c.value == "The workbook")
    assert [ws.cell(at + 1, j).value for j in (1, 2, 3)] == ["Code", "Severity", "Message"]
    assert (ws.cell(at + 2, 1).value, ws.cell(at + 2, 3).value) == ("MACROS_REMOVED", said)
    merged = next(m for m in ws.merged_cells.ranges if m.min_row == at + 2)
    assert (merged.min_col, merged.max_col) == (3, ws.max_column)  # across the columns right of Code and Severity
    across = sum(ws.column_dimensions[get_column_letter(j)].width for j in range(3, ws.max_column + 1))
    assert ws.cell(at + 2, 3).alignment.wrap_text
    # 334 characters over about 127 widths: 3 lines, with a line to spare at most (the width as
    # written holds xlsxwriter's padding of each column)
    need = lines(said, across)
    assert need == 3 and 15 * need <= ws.row_dimensions[at + 2].height <= 15 * (need + 1)


SAMPLES = Path(__file__).resolve().parents[1] / "sample_inputs"


def _copied(dest: Path, sheets: dict[str, tuple[str, str]]) -> Path:
    """A workbook of the given sheets' values, each from a sample workbook (name -> (file, sheet))."""
    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, (file, sheet) in sheets.items():
        ws = book.create_sheet(name)
        for row in openpyxl.load_workbook(SAMPLES / file)[sheet].iter_rows(values_only=True):
            ws.append(row)
    dest.parent.mkdir(parents=True, exist_ok=True)
    book.save(dest)
    return dest


def test_transfers_are_totalled_and_charted_apart_from_awards(tmp_path):
    src = _copied(
        tmp_path / "in" / "both.xlsx",
        {"Transfers": ("transfers-2026-11.xlsx", "Transfers"), "BEIP": ("beip-brrap-erg-2026-11.xlsx", "BEIP")},
    )
    result = process(src, as_of=dt.date(2026, 11, 30))
    out = write(result, tmp_path / "both.annotated.xlsx")
    grid = _grid(out, "Summary")
    awards = _table(grid, "Rows by status and award by program")
    moved = _table(grid, "Rows by status and credit transferred by program")
    assert [r["Sheet"] for r in awards] == ["BEIP"] and [r["Sheet"] for r in moved] == ["Transfers"]
    for row, kind in ((awards[0], "Award"), (moved[0], "Credit transferred")):
        res = next(r for r in result.intake if r.sheet.name == row["Sheet"])
        counted = ~res.status.isin(["Invalid", "Ineligible", ""]).to_numpy()
        column = res.program.award_column
        award = (res.computed[column] if column in res.computed else res.typed[column]).fillna(0).to_numpy()
        # the two parts add up to the sheet's total of rows neither Invalid nor Ineligible, in cents
        clean, open_ = round(row[f"{kind} clean ($)"] * 100), round(row[f"{kind} with open errors ($)"] * 100)
        assert (clean, open_) == (int(award[counted & ~res.open_errors].sum()), int(award[counted & res.open_errors].sum()))
        assert row["Flagged with errors"] + row["Flagged with warnings only"] == res.counts["Flagged"]
    with zipfile.ZipFile(out) as z:
        titles = sorted(
            re.search(r"<a:t>([^<]*)</a:t>", z.read(n).decode()).group(1) for n in z.namelist() if n.startswith("xl/charts/chart")
        )
    assert titles == ["Awards by program", "Credit transferred by program"]
    assert awards[0]["Award with open errors ($)"] > 0 and awards[0]["Award clean ($)"] > 0  # both parts there to see


@pytest.mark.parametrize(
    "codes,severities,expected",
    [
        # 2 errors of B beat 1 of A; C's one warning ties A's one error and follows it in code order
        (["B", "A", "B", "C"], ["error", "error", "error", "warning"], [("B", 2, 0, 2), ("A", 1, 0, 1), ("C", 0, 1, 1)]),
        # only warnings and infos: no error column; MIN has 1 + 2 = 3
        (["MIN", "MIN", "MIN", "AMT"], ["warning", "info", "info", "info"], [("MIN", 1, 2, 3), ("AMT", 0, 1, 1)]),
        # one finding
        (["CERT"], ["info"], [("CERT", 1, 1)]),
        # a code not given as text (never rendered so): pandas' crosstab, which leaves it out
        (["A", None, "A"], ["error", "error", "warning"], [("A", 1, 1, 2)]),
    ],
)
def test_findings_by_code_counts_each_code_by_severity_the_most_frequent_first(codes, severities, expected):
    from batch.workbook.toolsheets import findings_by_code

    text = all(isinstance(c, str) for c in codes)
    findings = pd.DataFrame({"Code": pd.array(codes, dtype="str" if text else object), "Severity": pd.array(severities, dtype="str")})
    table = findings_by_code(findings).table
    present = [s for s in ("error", "warning", "info") if s in severities]
    assert list(table.columns) == ["Code", *present, "Total"]
    assert [tuple(row) for row in table.itertuples(index=False)] == expected
    assert all(str(table[c].dtype) == "int64" for c in [*present, "Total"])


@pytest.mark.parametrize(
    "day,expected",
    [
        ("2026-11-30T23:59:59", 202611),  # the last second of a month
        ("2026-12-01", 202612),
        ("1970-01-01", 197001),  # numpy's month 0
        ("1969-12-31T23:59:59", 196912),  # a second before it: month -1
        ("2000-02-29", 200002),
        ("0001-01-01", 101),
        ("9999-12-31", 999912),
        ("NaT", -1),  # no date: (no date)
    ],
)
def test_a_dates_month_is_its_year_and_month_as_pandas_reads_them(day, expected):
    from batch.workbook.toolsheets import _year_months

    dates = pd.Series(np.array([day], dtype="datetime64[s]"))
    assert _year_months(dates).tolist() == [expected]
    assert (dates.dt.year * 100 + dates.dt.month).astype("Int64").fillna(-1).tolist() == [expected]  # as pandas reads it
