"""The tool's own sheets, CSV sheet names and the place of the tool's columns (README.md, "The
returned workbook"): the marker names the tool's sheets, a user's sheet named like one of them is
kept, and the tool's columns follow the last cell of the sheet or the sheet is NO_ROOM_FOR_RESULTS.
The markers themselves, and the user's things that look like the tool's: test_markers.py."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
import python_calamine
import xlsxwriter
from conftest import ROOT, write_workbook

from batch.pipeline import FLAGGED_ERRORS, FLAGGED_WARNINGS, process
from batch.programs._kit.findings import FINDINGS_COLUMNS
from batch.programs.transfers.sheet import TRANSFERS as TRANSFERS_SPEC
from batch.workbook.cells import column_letters, computed_cells
from batch.workbook.reading import EXCEL_COLUMNS, UnreadableWorkbook, csv_sheet_name, marked_sheets, sheet_marker
from batch.workbook.toolcolumns import _longest
from batch.workbook.toolsheets import _number_cells, _text_cells
from batch.workbook.writing import write
from validators.columns import REVIEW_COLUMNS

AS_OF = dt.date(2026, 11, 30)
TRANSFERS = ROOT / "sample_inputs" / "transfers-2026-11.xlsx"
BEIP = ROOT / "sample_inputs" / "beip-brrap-erg-2026-11.xlsx"
TOOL = ["Findings (njcredits)", "Summary (njcredits)", "Run (njcredits)", "Rules (njcredits)"]
# sheets of the user's named like the tool's, with content that looks like none of the tool's
USER_SHEETS = {
    "Findings": [["Finding", "Owner"], ["Check certificate C-9", "JD"]],
    "Summary": [["Quarter", "Transfers"], ["Q4", 41]],
    "Run": [["Step", "Done"], ["Exported from the ledger", True]],
    "Rules": [["Our house rule"], ["Two reviewers sign each transfer"]],
}
HEADERS = [c.header for c in TRANSFERS_SPEC.columns]
ROWS = [
    ["T-1", "Grow NJ", "C-1", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30_000, 27_000],
    ["T-2", "Grow NJ", "C-1", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 6), 20_000, 10_000],
    ["T-3", "BEIP", "C-2", 1_000_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 7), 150_000, 140_000],
]


def grid(path: Path, sheet: str) -> list[list]:
    return python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name(sheet).to_python(skip_empty_area=False)


def sheet_names(path: Path) -> list[str]:
    return python_calamine.CalamineWorkbook.from_path(str(path)).sheet_names


def annotate(src: Path, out: Path) -> Path:
    """Process one workbook as of AS_OF and write it into the folder `out`."""
    out.mkdir(parents=True, exist_ok=True)
    return write(process(src, as_of=AS_OF), out / (src.name.removesuffix(".xlsx").removesuffix(".annotated") + ".annotated.xlsx"))


def results(path: Path, findings_sheet: str = "Findings") -> dict:
    """What a run concluded: each intake sheet's tool columns by row, and the Findings sheet."""
    out = {}
    for name in ("Transfers", "BEIP"):
        if name not in sheet_names(path):
            continue
        g = grid(path, name)
        h = next(i for i, r in enumerate(g) if "Status" in r)
        first = g[h].index("Status") - 3  # Transfers and BEIP: three computed columns
        out[name] = [r[first:] for r in g[h:] if any(v != "" for v in r)]
    out["Findings"] = [[re.sub(r"\s+", " ", str(v)) for v in r] for r in grid(path, findings_sheet)]
    return out


def make(path: Path, sheets: dict[str, list[list]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_workbook(path, sheets)


def sample_grid(path: Path, sheet: str) -> list[list]:
    return [[None if v == "" else v for v in row] for row in grid(path, sheet)]


@pytest.fixture
def with_user_sheets(tmp_path) -> Path:
    """The sample transfers with sheets of the user's named Findings, Summary, Run and Rules."""
    return make(tmp_path / "in" / "mine.xlsx", {"Transfers": sample_grid(TRANSFERS, "Transfers"), **USER_SHEETS})


@pytest.fixture
def first_run(with_user_sheets, tmp_path) -> Path:
    return annotate(with_user_sheets, tmp_path / "out1")


def soffice_or_skip() -> str:
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if not soffice:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) is not installed; .ci/run installs libreoffice-calc")
        pytest.skip("LibreOffice not installed")
    return soffice


def libreoffice_save(path: Path, tmp_path: Path) -> Path:
    """The workbook opened and saved as .xlsx by LibreOffice."""
    out = tmp_path / "lo"
    proc = subprocess.run(
        [
            soffice_or_skip(),
            "--headless",
            f"-env:UserInstallation=file://{tmp_path}/lo-profile",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(out),
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / path.name).exists(), proc.stdout + proc.stderr
    return out / path.name


def openpyxl_save(path: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    book = openpyxl.load_workbook(path)
    book.save(folder / path.name)
    return folder / path.name


# --- the marker and the user's own sheets --------------------------------------------------------


def test_users_sheets_named_like_the_tools_are_kept_and_the_tools_take_the_suffix(first_run, with_user_sheets):
    assert sheet_names(first_run) == ["Transfers", *USER_SHEETS, *TOOL]
    for name in USER_SHEETS:  # the user's sheets come back cell for cell
        assert grid(first_run, name) == grid(with_user_sheets, name)
    assert grid(first_run, "Findings (njcredits)")[0][:8] == FINDINGS_COLUMNS
    assert grid(first_run, "Summary (njcredits)")[0][0] == "Summary of mine.xlsx"
    assert {r[0]: r[1] for r in grid(first_run, "Run (njcredits)") if r and r[0]}["Input file"] == "mine.xlsx"
    # only the tool's sheets are marked, by defined names that point at them
    assert marked_sheets(first_run) == {n.casefold() for n in TOOL}
    # the user's sheets are ordinary sheets: UNKNOWN_SHEET, never the tool's
    unknown = [r[0] for r in grid(first_run, "Findings (njcredits)") if r[4] == "UNKNOWN_SHEET"]
    assert unknown == list(USER_SHEETS)
    # the chart of the Summary reads the suffixed sheet
    with zipfile.ZipFile(first_run) as z:
        chart = z.read(next(n for n in z.namelist() if n.startswith("xl/charts/chart"))).decode()
    assert "'Summary (njcredits)'!$B$" in chart


def test_without_a_name_clash_the_tools_sheets_keep_their_names(tmp_path):
    out = annotate(TRANSFERS, tmp_path / "out")
    assert sheet_names(out) == ["Transfers", "Contacts", "Findings", "Summary", "Run", "Rules"]
    assert marked_sheets(out) == {"findings", "summary", "run", "rules"}


def test_returned_workbook_with_users_sheets_dropped_back_gives_the_same_result(first_run, tmp_path):
    second = annotate(first_run, tmp_path / "out2")
    assert sheet_names(second) == sheet_names(first_run)
    for name in USER_SHEETS:
        assert grid(second, name) == grid(first_run, name)
    assert results(second, "Findings (njcredits)") == results(first_run, "Findings (njcredits)")
    assert grid(second, "Transfers")[3] == grid(first_run, "Transfers")[3]  # columns replaced, not appended


def test_openpyxl_saved_returned_workbook_gives_the_same_result(first_run, tmp_path):
    saved = openpyxl_save(first_run, tmp_path / "openpyxl")
    assert marked_sheets(saved) == {n.casefold() for n in TOOL}
    second = annotate(saved, tmp_path / "out2")
    assert sheet_names(second) == sheet_names(first_run)
    for name in USER_SHEETS:
        assert grid(second, name) == grid(first_run, name)
    assert results(second, "Findings (njcredits)") == results(first_run, "Findings (njcredits)")


def test_openpyxl_saved_sample_gives_the_same_result(tmp_path):
    first = annotate(TRANSFERS, tmp_path / "out1")
    second = annotate(openpyxl_save(first, tmp_path / "openpyxl"), tmp_path / "out2")
    assert sheet_names(second) == sheet_names(first)
    assert results(second) == results(first)


def test_libreoffice_saved_returned_workbook_gives_the_same_result(first_run, tmp_path):
    saved = libreoffice_save(first_run, tmp_path)
    assert marked_sheets(saved) == {n.casefold() for n in TOOL}
    second = annotate(saved, tmp_path / "out2")
    assert sheet_names(second) == sheet_names(first_run)
    for name in USER_SHEETS:
        assert grid(second, name) == grid(first_run, name)
    assert results(second, "Findings (njcredits)") == results(first_run, "Findings (njcredits)")


def _without_marker(path: Path, dest: Path) -> Path:
    """The workbook without the tool's markers (as a release before them wrote it)."""
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/workbook.xml":
                data = re.sub(rb"<definedName name=\"njcredits_[^\"]*\"[^>]*>[^<]*</definedName>", b"", data)
            zout.writestr(item, data)
    return dest


def test_sheets_and_columns_without_the_marker_are_the_users(tmp_path):
    """No guess by title or header: a workbook whose Findings, Summary, Run and Rules sheets and
    whose columns after the intake's carry no marker (a release before the marker, or the user's
    own look-alikes) is the user's, kept whole; the tool adds its own sheets and columns."""
    first = annotate(TRANSFERS, tmp_path / "out1")
    (tmp_path / "old").mkdir()
    old = _without_marker(first, tmp_path / "old" / first.name)
    assert marked_sheets(old) == set()
    second = annotate(old, tmp_path / "out2")
    assert sheet_names(second) == ["Transfers", "Contacts", "Findings", "Summary", "Run", "Rules", *TOOL]
    for name in ("Findings", "Summary", "Run", "Rules"):
        assert grid(second, name) == grid(first, name), name
    header = grid(second, "Transfers")[3]
    assert header[: len(grid(first, "Transfers")[3])] == grid(first, "Transfers")[3]  # the unmarked columns stay as they are
    assert header.count("Status") == 2  # and the tool's follow them
    assert marked_sheets(second) == {n.casefold() for n in TOOL}


def test_the_marker_names_sheets_quoted_or_not_and_a_deleted_sheet_marks_nothing(tmp_path):
    path = tmp_path / "marks.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    for name in ("O'Brien (njcredits)", "Run", "Summary"):
        wb.add_worksheet(name)
    wb.define_name(sheet_marker("Findings", "O'Brien (njcredits)")[0], "='O''Brien (njcredits)'!$A$1")
    wb.define_name(sheet_marker("Run", "Run")[0], "=Run!$A$1")
    wb.define_name(sheet_marker("Summary", "Summary")[0], "=#REF!")  # the tool's Summary was deleted in Excel
    wb.define_name("njcredits_Summary", "=Summary!$A$1")  # a name of the user's: marks nothing
    wb.close()
    assert marked_sheets(path) == {"o'brien (njcredits)", "run"}
    # the user's own Summary (the tool's was deleted) is kept; the marked sheets are dropped, so the
    # workbook holds no intake sheet and is refused with the sheets it has (README, "The intake workbook")
    with pytest.raises(UnreadableWorkbook, match=r"^no intake sheet: found sheets Summary;"):
        process(path, as_of=AS_OF)


def test_a_name_taken_twice_gets_a_number(tmp_path):
    src = make(
        tmp_path / "in" / "twice.xlsx",
        {"Transfers": [HEADERS, *ROWS], "summary": [["ours"]], "Summary (NJCREDITS)": [["also ours"]]},
    )
    out = annotate(src, tmp_path / "out")
    assert sheet_names(out) == ["Transfers", "summary", "Summary (NJCREDITS)", "Findings", "Summary (njcredits 2)", "Run", "Rules"]
    assert grid(out, "Summary (NJCREDITS)") == [["also ours"]]
    second = annotate(out, tmp_path / "out2")
    assert sheet_names(second) == sheet_names(out)


# --- CSV sheet names -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "name"),
    [
        ("Transfers", "Transfers"),
        ("export [Dec] 2026: final?", "export _Dec_ 2026_ final_"),
        ("a*b/c\\d", "a_b_c_d"),
        ("'quoted'", "quoted"),
        ("'''", "CSV"),
        ("   ", "CSV"),
        ("history", "history (CSV)"),
        ("tab\there", "tab_here"),
        ("x" * 200, "x" * 31),
        ("y" * 30 + "'z", "y" * 30),  # cut at 31, then no apostrophe at the end
        ("\U0001f600" * 20, "\U0001f600" * 15),  # 31 UTF-16 units at most
        # escape-like text would show as "NovA" in Excel and LibreOffice, breaking links to the sheet
        ("Nov_x0041_", "Nov_-0041_"),
        ("a_x12_b", "a_x12_b"),  # not an escape: kept
    ],
)
def test_csv_sheet_name_is_legal_for_excel(stem, name):
    got = csv_sheet_name(stem)
    assert got == name
    assert len(got.encode("utf-16-le")) // 2 <= 31
    assert not re.search(r"[\[\]:*?/\\]", got) and got.strip() and not got.startswith("'") and not got.endswith("'")


def _transfers_csv(path: Path) -> Path:
    path.write_text(
        ",".join(HEADERS) + '\nT-1,Grow NJ,C-1,500000,Seller LLC,Buyer Inc.,2026-01-05,"$30,000","27,000"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("stem", ["export [Dec] 2026: final?", "n" * 196])
def test_csv_with_an_illegal_or_long_name_is_written_with_a_legal_sheet_name(tmp_path, stem):
    src = _transfers_csv(tmp_path / f"{stem}.csv")
    assert len(src.name) == len(stem) + 4
    result = process(src, as_of=AS_OF)
    out = write(result, tmp_path / "out.xlsx")
    name = csv_sheet_name(stem)
    assert sheet_names(out) == [name, "Findings", "Summary", "Run", "Rules"]
    assert openpyxl.load_workbook(out).sheetnames == [name, "Findings", "Summary", "Run", "Rules"]
    assert grid(out, name)[1][0] == "T-1"  # returned as it came
    assert [s.sheet.name for s in result.intake] == [name]  # routed by its headers: a Transfers sheet


def test_csv_named_like_an_intake_sheet_is_still_routed(tmp_path):
    result = process(_transfers_csv(tmp_path / "Transfers.csv"), as_of=AS_OF)
    assert [s.sheet.name for s in result.intake] == ["Transfers"]
    assert result.intake[0].status.tolist() == ["OK"]


def test_csv_named_like_a_tool_sheet_is_the_users(tmp_path):
    # a CSV named like a tool sheet is the user's: routed by its headers like any other CSV
    result = process(_transfers_csv(tmp_path / "Findings.csv"), as_of=AS_OF)
    assert [s.sheet.name for s in result.intake] == ["Findings"]
    out = write(result, tmp_path / "out.xlsx")
    assert sheet_names(out) == ["Findings", "Findings (njcredits)", "Summary", "Run", "Rules"]
    # one with the tool's own Findings headers is no intake sheet: refused, never said to be OK
    src = tmp_path / "findings-export" / "Findings.csv"
    src.parent.mkdir()
    src.write_text(",".join(["Sheet", "Row", "Record ID", "Column", "Code", "Severity", "Message", "Citation"]) + "\nx,1,a,b,c,d,e,f\n")
    with pytest.raises(UnreadableWorkbook, match=r"^no intake sheet: found sheets Findings;"):
        process(src, as_of=AS_OF)


# --- where the tool's columns go -----------------------------------------------------------------


def test_a_stray_cell_far_right_comes_back_in_place_and_the_tools_columns_follow_it(tmp_path):
    zz = 701  # column ZZ
    stray = [*ROWS[1][:9], *[None] * (zz - 9), "stray note"]
    src = make(tmp_path / "in" / "stray.xlsx", {"Transfers": [HEADERS, ROWS[0], stray, ROWS[2]]})
    result = process(src, as_of=AS_OF)
    assert result.intake[0].status.tolist() == ["OK", "Flagged", "OK"]
    out = annotate(src, tmp_path / "out")
    g = grid(out, "Transfers")
    assert column_letters(zz) == "ZZ"
    assert g[2][zz] == "stray note"  # in place
    assert g[0][zz + 1 :] == [
        "Minimum Transfer ($)",
        "Consideration Ratio",
        "Certificate Transferred To Date ($)",
        "Status",
        "Findings",
        *REVIEW_COLUMNS,
    ]
    assert [r[zz + 4] for r in g[1:]] == ["OK", "Flagged", "OK"]
    assert all(v == "" for v in g[0][9:zz])  # nothing moved into the gap
    # and it stays so on a round trip
    again = annotate(out, tmp_path / "out2")
    assert grid(again, "Transfers") == g


def test_the_tools_columns_follow_a_cell_above_the_header_row(tmp_path):
    title = ["Transfers register", *[None] * 24, "note in Z1"]
    src = make(tmp_path / "in" / "title.xlsx", {"Transfers": [title, HEADERS, *ROWS]})
    out = annotate(src, tmp_path / "out")
    g = grid(out, "Transfers")
    assert g[0][25] == "note in Z1"
    assert g[1][26] == "Minimum Transfer ($)" and g[1][30] == "Findings"  # from AA on
    assert all(v == "" for v in g[1][9:26])
    again = annotate(out, tmp_path / "out2")
    assert grid(again, "Transfers") == g


def test_a_sheet_reaching_xfa_is_no_room_for_results_and_the_rest_is_computed(tmp_path):
    xfa = EXCEL_COLUMNS - 4  # column XFA: the eight columns of Transfers (5 and the reviewer's 3) do not fit before XFD
    assert column_letters(xfa) == "XFA"
    transfers = sample_grid(TRANSFERS, "Transfers")
    transfers[5] = transfers[5] + [None] * (xfa - len(transfers[5])) + ["stray"]
    src = make(tmp_path / "in" / "wide.xlsx", {"Transfers": transfers, "BEIP": sample_grid(BEIP, "BEIP")})
    result = process(src, as_of=AS_OF)
    wide, beip = result.intake
    assert wide.sheet.no_room and wide.sheet.results_at == xfa + 1
    assert wide.counts == {"rows": 43, "OK": 0, "Flagged": 0, "Ineligible": 0, "Invalid": 43, FLAGGED_ERRORS: 0, FLAGGED_WARNINGS: 0}
    assert wide.findings[["Code", "Severity"]].values.tolist() == [["NO_ROOM_FOR_RESULTS", "error"]]
    message = wide.findings["Message"].iloc[0]
    assert "Sheet Transfers has cells up to column XFA (column 16,381 of Excel's 16,384)" in message
    assert "the tool's 8 columns" in message and "room for 3" in message
    alone = process(BEIP, as_of=AS_OF)
    assert beip.counts == next(s for s in alone.intake if s.sheet.name == "BEIP").counts
    assert beip.counts["OK"] > 0
    # the returned workbook: the sheet's cells as they came, nothing past XFD, BEIP computed
    out = write(result, tmp_path / "out" / "wide.annotated.xlsx")
    g = grid(out, "Transfers")
    assert g[5][xfa] == "stray" and len(g[0]) == xfa + 1
    assert "Status" not in g[3]
    assert g[:5] == grid(src, "Transfers")[:5]
    with zipfile.ZipFile(out) as z:
        for part in (n for n in z.namelist() if n.startswith("xl/worksheets/sheet")):
            refs = re.findall(rb'<c r="([A-Z]+)\d+"', z.read(part))
            assert all(len(r) < 3 or r <= b"XFD" for r in refs), part
    assert openpyxl.load_workbook(out, read_only=True)["Transfers"].max_column == xfa + 1
    assert "Status" in grid(out, "BEIP")[next(i for i, r in enumerate(grid(out, "BEIP")) if "Status" in r)]
    findings = grid(out, "Findings")
    assert any(r[0] == "Transfers" and r[4] == "NO_ROOM_FOR_RESULTS" for r in findings)
    run_counts = {r[0]: r for r in grid(out, "Run") if r and r[0] == "Transfers"}
    assert run_counts["Transfers"][1:4] == [43.0, 0.0, 43.0]  # rows read, computed, invalid


def test_a_sheet_ending_just_where_the_tools_columns_fit_is_computed(tmp_path):
    last = EXCEL_COLUMNS - 9  # XEV: the eight columns take XEW..XFD
    stray = [*ROWS[0], *[None] * (last - 9), "stray"]
    src = make(tmp_path / "in" / "edge.xlsx", {"Transfers": [HEADERS, stray]})
    result = process(src, as_of=AS_OF)
    assert not result.intake[0].sheet.no_room
    out = write(result, tmp_path / "out.xlsx")
    g = grid(out, "Transfers")
    assert len(g[0]) == EXCEL_COLUMNS and g[0][-4:] == ["Findings", *REVIEW_COLUMNS] and g[1][last] == "stray"


# -- the Findings rows' cells, taken out of pandas once per column ---------------------------------

# (case, a column's values): each written as the general writer of computed columns writes it
FINDINGS_CELL_CASES = [
    ("text", ["TRANSFER_BELOW_MINIMUM", "CONSIDERATION_BELOW_75_PCT"]),
    ("blank and missing", ["", None, float("nan"), pd.NA, "x"]),
    ("all missing", [None, None]),
    ("spaces kept", ["  leading", "trailing  ", " "]),
    ("XML characters and escapes", ["a < b & c > d", "_x0041_ stays text", "tab\there"]),
    ("numbers as text", [12, 12.5, -3, 1e20]),
    ("a record ID as a number, beside text", [7.0, "C-7", None]),
    ("a date", [dt.datetime(2026, 11, 30), dt.date(2026, 1, 2)]),
]


@pytest.mark.parametrize("values", [c[1] for c in FINDINGS_CELL_CASES], ids=[c[0] for c in FINDINGS_CELL_CASES])
def test_findings_text_cells_are_the_computed_writers(values):
    # before: the column as objects, blank where missing or "", written by computed_cells as text
    series = pd.Series(values, dtype=object)
    refs = np.array([f"C{i + 2}" for i in range(len(values))], dtype=object)
    kept = series.where(series.notna() & (series != ""))
    before = computed_cells(kept.astype(object), refs, ' s="3"', cents=False, as_text=True)
    assert _text_cells(series, refs, ' s="3"').tolist() == before.tolist()


# (case, Row values, the cells): a row number; blank where missing or not a finite number
ROW_CASES = [
    ("row numbers", [2, 41], ['<c r="B2" s="4"><v>2</v></c>', '<c r="B3" s="4"><v>41</v></c>']),
    ("no row", [None, 3], ["", '<c r="B3" s="4"><v>3</v></c>']),
    ("not finite", [float("inf"), float("nan")], ["", ""]),
    ("a fraction, as repr gives it", [2.5], ['<c r="B2" s="4"><v>2.5</v></c>']),
]


@pytest.mark.parametrize("values, expected", [c[1:] for c in ROW_CASES], ids=[c[0] for c in ROW_CASES])
def test_findings_row_cells(values, expected):
    series = pd.Series(values, dtype=object).astype("Float64")
    refs = np.array([f"B{i + 2}" for i in range(len(values))], dtype=object)
    assert _number_cells(series, refs, ' s="4"').tolist() == expected
    assert expected == computed_cells(series, refs, ' s="4"', cents=False).tolist()


# (case, a tool column's values, the length of its longest as text): what its width is made from
LONGEST_CASES = [
    ("text", pd.Series(["OK", "Flagged"], dtype="str"), 7),
    ("text with a missing value", pd.Series(["TRANSFER_BELOW_MINIMUM", None], dtype=object), 22),
    ("numbers as pandas writes them", pd.Series([2.5, 1e20], dtype="Float64"), 5),  # "1e+20"
    ("whole numbers", pd.Series([1234567, None], dtype="Int64"), 7),
    ("none", pd.Series([None, None], dtype=object), 0),
    ("no rows", pd.Series([], dtype="str"), 0),
]


@pytest.mark.parametrize("values, expected", [c[1:] for c in LONGEST_CASES], ids=[c[0] for c in LONGEST_CASES])
def test_a_tool_columns_longest_value(values, expected):
    assert _longest(values) == expected
