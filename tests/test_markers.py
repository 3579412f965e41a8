"""What is the user's stays the user's (README.md, "The returned workbook" and "The round trip"):
the tool's sheets and columns are known by its markers only, hidden defined names a user cannot
make by accident, each checked against what it names; never by a sheet's title or a column's
header. A user's sheet named `Summary` that begins "Summary of", a user's own defined name
`njcredits_Run`, a user's column headed `Status`: each is the user's, on the first run and on
every round trip, and the markers survive a save by openpyxl and by LibreOffice."""

from __future__ import annotations

import collections
import datetime as dt
import html
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter
from test_tool_sheets import AS_OF, HEADERS, ROWS, annotate, grid, libreoffice_save, openpyxl_save, sheet_names

from batch.pipeline import process
from batch.programs.transfers.sheet import TRANSFERS as TRANSFERS_SPEC
from batch.workbook.reading import (
    COLUMNS_ROLE,
    Markers,
    _intake_sheet,
    column_marker,
    is_tool_name,
    marked_sheets,
    marker_token,
    markers,
    read_markers,
    sheet_marker,
)
from batch.workbook.writing import write
from validators.columns import REVIEW_COLUMNS

TOOL = ["Findings", "Summary", "Run", "Rules"]
COMPUTED = list(TRANSFERS_SPEC.computed)  # Minimum Transfer ($), Consideration Ratio, Certificate Transferred To Date ($)
TOOL_HEADERS = [*COMPUTED, "Status", "Findings", *REVIEW_COLUMNS]
# sheets of the user's that look like the tool's sheets of an earlier release (their first cells),
# with no marker: the user's
LOOK_ALIKES = {
    "Summary": [["Summary of Q4 transfers"], ["Transfers", 41], ["Total", 1_250_000]],
    "Findings": [
        ["Sheet", "Row", "Record ID", "Column", "Code", "Severity", "Message", "Citation"],
        ["Transfers", 3, "T-2", "x", "OURS", "note", "our own", ""],
    ],
    "Run": [["Run"], ["Exported from the ledger", "2026-11-01"]],
}
# a user's columns headed like the tool's, in a workbook the tool never returned
USERS_COLUMNS = ["Status", "Findings", COMPUTED[0], REVIEW_COLUMNS[2]]
USERS_VALUES = [["checked", "none", 1, "called them"], ["open", "two", 2, ""], ["checked", "", 3, "ok"]]


def book(path: Path, sheets: dict[str, list[list]], names=()) -> Path:
    """A workbook of the given grids, with defined names (name, formula, the sheet it is scoped
    to or None) written as a user's program writes them (not hidden)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_numbers": False})
    date = wb.add_format({"num_format": "yyyy-mm-dd"})
    for name, rows in sheets.items():
        ws = wb.add_worksheet(name)
        for r, row in enumerate(rows):
            for c, v in enumerate(row):
                if isinstance(v, dt.date):
                    ws.write_datetime(r, c, v, date)
                elif v is not None:
                    ws.write(r, c, v)
    for name, formula, local in names:
        wb.define_name(f"{local}!{name}" if local else name, formula)
    wb.close()
    return path


def defined_names(path: Path) -> list[tuple[str, str | None, str]]:
    """(name, localSheetId, formula) of each defined name of a workbook, in order."""
    xml = zipfile.ZipFile(path).read("xl/workbook.xml").decode()
    out = []
    for m in re.finditer(r"<definedName\b([^>]*)>(.*?)</definedName>", xml):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        out.append((attrs["name"], attrs.get("localSheetId"), html.unescape(m.group(2))))
    return out


def transfers(extra_headers=(), extra_values=()) -> list[list]:
    return [HEADERS + list(extra_headers)] + [r + list(v) for r, v in zip(ROWS, extra_values or [[]] * len(ROWS), strict=True)]


def run_again(path: Path, folder: Path) -> Path:
    """The returned workbook dropped back in (an .xlsx now: annotated in place)."""
    return annotate(path, folder)


def first_run(src: Path, folder: Path) -> Path:
    """An .xlsx comes back in place; a CSV is written anew."""
    if src.suffix == ".csv":
        folder.mkdir(parents=True, exist_ok=True)
        return write(process(src, as_of=AS_OF), folder / (src.name + ".annotated.xlsx"))
    return annotate(src, folder)


def csv_of(path: Path, rows: list[list]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(",".join("" if v is None else v.isoformat() if isinstance(v, dt.date) else str(v) for v in r) for r in rows)
    path.write_text(text + "\n", encoding="utf-8")
    return path


# --- the markers, read from a workbook part --------------------------------------------------------

SHEETS = ["Transfers", "O'Brien (njcredits)", "Run", "Summary", "Run Nov"]


def workbook_xml(names) -> bytes:
    """A workbook part with SHEETS and the defined names (name, localSheetId or None, formula)."""
    sheets = "".join(f'<sheet name="{html.escape(n)}" sheetId="{i + 1}" r:id="rId{i + 1}"/>' for i, n in enumerate(SHEETS))
    defined = ""
    for n, local, f in names:
        scope = "" if local is None else f' localSheetId="{local}"'
        defined += f'<definedName name="{n}"{scope}>{html.escape(f, quote=False)}</definedName>'
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        f"<sheets>{sheets}</sheets><definedNames>{defined}</definedNames></workbook>"
    ).encode()


def tok(role: str, subject: str) -> str:
    return marker_token(role, subject)


RUN = f"njcredits_Run_{tok('Run', 'Run')}"
OBRIEN = "O'Brien (njcredits)"
FINDINGS_OBRIEN = f"njcredits_Findings_{tok('Findings', OBRIEN)}"


@pytest.mark.parametrize(
    ("case", "name", "local", "formula", "marked"),
    [
        (
            "quoted sheet name",
            FINDINGS_OBRIEN,
            None,
            "'O''Brien (njcredits)'!$A$1",
            {"o'brien (njcredits)"},
        ),
        ("plain sheet name", RUN, None, "Run!$A$1", {"run"}),
        ("with an equals sign", RUN, None, "=Run!$A$1", {"run"}),
        ("its cell moved by a row inserted above", RUN, None, "Run!$A$2", {"run"}),
        ("any case, as Excel compares names", RUN.upper(), None, "RUN!$A$1", {"run"}),
        # a user's own names: marking nothing
        ("a user's njcredits_Run", "njcredits_Run", None, "Run!$A$1", set()),
        ("a user's name under the prefix", "njcredits_Run_mine", None, "Run!$A$1", set()),
        ("nine hex digits", RUN + "0", None, "Run!$A$1", set()),
        # the marker must match the sheet it names
        ("the token of another sheet", f"njcredits_Run_{tok('Run', 'Summary')}", None, "Run!$A$1", set()),
        ("the token of another role", f"njcredits_Summary_{tok('Run', 'Run')}", None, "Run!$A$1", set()),
        ("the sheet renamed by the user (Excel follows)", RUN, None, "'Run Nov'!$A$1", set()),
        ("the sheet deleted (Excel writes #REF!)", RUN, None, "#REF!", set()),
        ("a sheet the workbook does not have", f"njcredits_Run_{tok('Run', 'Gone')}", None, "Gone!$A$1", set()),
        ("scoped to a sheet (Excel's copy of the sheet)", f"njcredits_Run_{tok('Run', 'Run Nov')}", "4", "'Run Nov'!$A$1", set()),
        ("a range, not a cell", RUN, None, "Run!$A$1:$B$2", set()),
        ("two cells", RUN, None, "Run!$A$1,Run!$B$1", set()),
        ("a formula", RUN, None, "OFFSET(Run!$A$1,0,0)", set()),
        ("a constant", RUN, None, '"Run"', set()),
    ],
)
def test_a_sheet_marker_marks_only_the_sheet_whose_current_name_gives_its_token(case, name, local, formula, marked):
    assert read_markers(workbook_xml([(name, local, formula)])).sheets == marked, case


COLUMNS = f"njcredits_Columns_{tok(COLUMNS_ROLE, 'Transfers')}"
TOKEN = tok(COLUMNS_ROLE, "Transfers")


@pytest.mark.parametrize(
    ("case", "name", "local", "formula", "columns"),
    [
        ("a range on the header row", COLUMNS, "0", "'Transfers'!$J$1:$Q$1", {"transfers": [(TOKEN, 0, frozenset(range(9, 17)))]}),
        (
            "a union (the reviewer's columns apart)",
            COLUMNS,
            "0",
            "Transfers!$J$3:$N$3,Transfers!$P$3:$R$3",
            {"transfers": [(TOKEN, 2, frozenset([9, 10, 11, 12, 13, 15, 16, 17]))]},
        ),
        ("one cell", COLUMNS, "0", "Transfers!$J$1", {"transfers": [(TOKEN, 0, frozenset([9]))]}),
        ("scoped to another sheet than its cells", COLUMNS, "3", "Transfers!$J$1:$Q$1", {}),
        ("workbook-level", COLUMNS, None, "Transfers!$J$1:$Q$1", {}),
        ("two rows", COLUMNS, "0", "Transfers!$J$1:$Q$2", {}),
        ("a scope past the last sheet", COLUMNS, "9", "Transfers!$J$1:$Q$1", {}),
        ("a user's njcredits_Columns", "njcredits_Columns", "0", "Transfers!$J$1:$Q$1", {}),
        ("the sheet deleted", COLUMNS, "0", "#REF!", {}),
    ],
)
def test_a_column_marker_counts_only_on_the_sheet_it_is_scoped_to_and_one_row(case, name, local, formula, columns):
    assert read_markers(workbook_xml([(name, local, formula)])).columns == columns, case


@pytest.mark.parametrize(
    ("sheet", "program", "row", "cols", "name", "formula"),
    [
        ("Transfers", "Transfers", 0, range(9, 17), COLUMNS, "'Transfers'!$J$1:$Q$1"),
        ("O'Brien", "Transfers", 3, [9, 10, 11, 12, 13, 15, 16, 17], COLUMNS, "'O''Brien'!$J$4:$N$4,'O''Brien'!$P$4:$R$4"),
        ("Transfers (Nov)", "Transfers", 0, [25], COLUMNS, "'Transfers (Nov)'!$Z$1"),
        ("BEIP", "BEIP", 1, [26, 27], f"njcredits_Columns_{tok(COLUMNS_ROLE, 'BEIP')}", "'BEIP'!$AA$2:$AB$2"),
    ],
)
def test_the_column_marker_names_the_header_cells_of_the_tools_columns(sheet, program, row, cols, name, formula):
    assert column_marker(sheet, program, row, cols) == (name, formula)
    assert is_tool_name(name) and not is_tool_name("njcredits_Columns") and not is_tool_name("njcredits_Run")


def test_a_sheet_marker_is_its_role_and_the_token_of_the_sheets_name():
    # 8 hex digits of SHA-256("njcredits/Summary/summary (njcredits)"): the name casefolded, as Excel compares names
    name, formula = sheet_marker("Summary", "Summary (njcredits)")
    assert re.fullmatch(r"njcredits_Summary_[0-9a-f]{8}", name) and formula == "'Summary (njcredits)'!$A$1"
    assert name == sheet_marker("Summary", "SUMMARY (NJCREDITS)")[0] != sheet_marker("Summary", "Summary")[0]


# --- the tool's columns of an intake sheet, read by the marker ---------------------------------

GRID = [
    [*HEADERS, "Status", *COMPUTED, "Status", "Findings", "My check", *REVIEW_COLUMNS],
    [*ROWS[0], "mine", 1, 2, 3, "OK", "", "yes", "Approved", "JD", ""],
]
EVERY_EXTRA = ["Status", *COMPUTED, "Status", "Findings", "My check", *REVIEW_COLUMNS]  # J..S: all the user's
THE_TOOLS = frozenset(range(10, 19))  # K..S: the tool's columns, with My check (O) inserted among them
REVIEWS_AT = dict(zip(REVIEW_COLUMNS, [16, 17, 18], strict=True))  # Q..S


@pytest.mark.parametrize(
    ("case", "marks", "dropped", "review", "kept_extra"),
    [
        ("no marker: every column is the user's, whatever its header", [], [], {}, EVERY_EXTRA),
        # the user's Status (J) is outside the marker; My check (O), inside it, is headed like none of the tool's columns
        ("the tool's columns", [(TOKEN, 0, THE_TOOLS)], [10, 11, 12, 13, 14], REVIEWS_AT, ["Status", "My check"]),
        ("a marker of another program", [(tok(COLUMNS_ROLE, "BEIP"), 0, THE_TOOLS)], [], {}, EVERY_EXTRA),
        ("a marker on another row than the header", [(TOKEN, 1, THE_TOOLS)], [], {}, EVERY_EXTRA),
        ("a marker over the Status of J too", [(TOKEN, 0, THE_TOOLS | {9})], [9, 10, 11, 12, 13, 14], REVIEWS_AT, ["My check"]),
        ("only the reviewer's columns", [(TOKEN, 0, frozenset(REVIEWS_AT.values()))], [], REVIEWS_AT, EVERY_EXTRA[:-3]),
    ],
)
def test_the_tools_columns_are_those_its_marker_names(case, marks, dropped, review, kept_extra):
    sheet = _intake_sheet("Transfers", [list(r) for r in GRID], TRANSFERS_SPEC, 0, None, marks)
    assert sheet.dropped == dropped, case
    assert sheet.review_cols == review, case
    assert sheet.headers == [*HEADERS, *kept_extra], case
    assert (sheet.reviews is not None) == bool(review), case


# --- a user's sheets named like the tool's ------------------------------------------------------


@pytest.mark.parametrize("suffix", [".xlsx", ".csv"])
def test_a_users_summary_beginning_summary_of_is_kept_on_every_run(tmp_path, suffix):
    src = book(tmp_path / "in" / "mine.xlsx", {"Transfers": transfers(), **LOOK_ALIKES})
    first = annotate(src, tmp_path / "out1")
    want = ["Transfers", *LOOK_ALIKES, "Findings (njcredits)", "Summary (njcredits)", "Run (njcredits)", "Rules"]
    assert sheet_names(first) == want
    for name in LOOK_ALIKES:  # the user's sheets, cell for cell
        assert grid(first, name) == grid(src, name), name
    assert grid(first, "Summary (njcredits)")[0][0] == "Summary of mine.xlsx"
    assert marked_sheets(first) == {"findings (njcredits)", "summary (njcredits)", "run (njcredits)", "rules"}
    second = run_again(first, tmp_path / "out2")
    assert sheet_names(second) == want  # nothing deleted, renamed or doubled
    for name in LOOK_ALIKES:
        assert grid(second, name) == grid(src, name), name
    assert grid(second, "Transfers") == grid(first, "Transfers")
    # the user's look-alikes are ordinary sheets of the user's: UNKNOWN_SHEET
    unknown = [r[0] for r in grid(second, "Findings (njcredits)") if r[4] == "UNKNOWN_SHEET"]
    assert unknown == list(LOOK_ALIKES)
    if suffix == ".csv":  # a CSV export of the user's Summary is no intake sheet: refused, never dropped as the tool's
        with pytest.raises(Exception, match=r"^no intake sheet: found sheets Summary;"):
            process(csv_of(tmp_path / "csv" / "Summary.csv", LOOK_ALIKES["Summary"]), as_of=AS_OF)


# --- a user's own defined names under the tool's prefix -----------------------------------------


USERS_NAMES = [
    ("njcredits_Run", "=Run!$A$1", None),  # a user's name on a user's sheet named Run
    ("njcredits_Summary", "='Q4 notes'!$A$1:$B$2", None),
    ("njcredits_Findings", "=Transfers!$I$2", "Transfers"),  # scoped to the intake sheet
]


def test_a_users_njcredits_names_hide_no_sheet_and_come_back_as_they_came(tmp_path):
    sheets = {"Transfers": transfers(), "Run": [["Step", "Done"], ["Export", "yes"]], "Q4 notes": [["Note"], ["Call the buyer"]]}
    src = book(tmp_path / "in" / "names.xlsx", sheets, USERS_NAMES)
    assert marked_sheets(src) == set()
    first = annotate(src, tmp_path / "out1")
    second = run_again(first, tmp_path / "out2")
    for out in (first, second):
        assert sheet_names(out) == ["Transfers", "Run", "Q4 notes", "Findings", "Summary", "Run (njcredits)", "Rules"]
        assert grid(out, "Run") == grid(src, "Run") and grid(out, "Q4 notes") == grid(src, "Q4 notes")
        names = defined_names(out)
        users = [(n, local, f) for n, local, f in names if n in ("njcredits_Run", "njcredits_Summary", "njcredits_Findings")]
        assert users == [
            ("njcredits_Findings", "0", "Transfers!$I$2"),
            ("njcredits_Run", None, "Run!$A$1"),
            ("njcredits_Summary", None, "'Q4 notes'!$A$1:$B$2"),
        ]
        # the tool's markers: one per sheet of the tool's and one for the tool's columns, no name twice in a scope
        assert collections.Counter((n.casefold(), local) for n, local, _f in names).most_common(1)[0][1] == 1
        assert sorted(n.rsplit("_", 1)[0] for n, _l, _f in names if is_tool_name(n)) == [
            "njcredits_Columns",
            "njcredits_Findings",
            "njcredits_Rules",
            "njcredits_Run",
            "njcredits_Summary",
        ]
    assert grid(second, "Transfers") == grid(first, "Transfers")


# --- a user's columns headed like the tool's ---------------------------------------------------


@pytest.mark.parametrize("suffix", [".xlsx", ".csv"])
def test_a_users_status_column_stays_the_users_on_every_round_trip(tmp_path, suffix):
    rows = transfers(USERS_COLUMNS, USERS_VALUES)
    if suffix == ".csv":
        src = csv_of(tmp_path / "in" / "Transfers.csv", rows)
    else:
        src = book(tmp_path / "in" / "status.xlsx", {"Transfers": rows})
    first = first_run(src, tmp_path / "out1")
    g = grid(first, "Transfers")
    assert g[0] == [*HEADERS, *USERS_COLUMNS, *TOOL_HEADERS]  # the user's four, then the tool's eight
    mine = len(HEADERS)
    # the user's columns as they came (a CSV's cells in a column of the user's: its text, a plain
    # number as the number Excel reads in it, `3` as 3)
    assert [r[mine : mine + 4] for r in g[1:]] == USERS_VALUES
    assert [r[mine + 4 + len(COMPUTED)] for r in g[1:]] == ["OK", "Flagged", "OK"]  # the tool's
    # the marker names exactly the tool's eight columns, on the header row
    (marker,) = [(n, local, f) for n, local, f in defined_names(first) if n.startswith("njcredits_Columns_")]
    assert marker[1] == "0" and marker[2] == "'Transfers'!$N$1:$U$1"  # after A..I and the user's J..M
    second = run_again(first, tmp_path / "out2")
    third = run_again(second, tmp_path / "out3")
    for out in (second, third):
        again = grid(out, "Transfers")
        assert again == g  # the user's columns once, the tool's once: nothing taken out of the user's, nothing doubled
        assert again[0].count("Status") == 2 and again[0].count(REVIEW_COLUMNS[2]) == 2


def test_a_users_status_column_beside_the_tools_after_the_tools_columns_is_kept(tmp_path):
    """A column the user adds after the tool's columns of a returned workbook, headed Status, is
    the user's: the tool's columns (known by the marker) are replaced, the user's stays."""
    first = annotate(book(tmp_path / "in" / "after.xlsx", {"Transfers": transfers()}), tmp_path / "out1")
    edited = openpyxl.load_workbook(first)
    ws = edited["Transfers"]
    at = ws.max_column + 1
    for r, v in enumerate(["Status", "mine 1", "mine 2", "mine 3"], start=1):
        ws.cell(r, at, v)
    (tmp_path / "edited").mkdir()
    edited.save(tmp_path / "edited" / "after.annotated.xlsx")
    second = run_again(tmp_path / "edited" / "after.annotated.xlsx", tmp_path / "out2")
    g = grid(second, "Transfers")
    assert [r[at - 1] for r in g] == ["Status", "mine 1", "mine 2", "mine 3"]  # in place
    assert g[0].count("Status") == 2 and g[0].count("Findings") == 1 and g[0].count(REVIEW_COLUMNS[0]) == 1
    status = g[0].index("Status", at)  # the tool's Status follows the user's column
    assert [r[status] for r in g[1:]] == ["OK", "Flagged", "OK"]


# --- the markers through a save by another program ------------------------------------------------


def _marks(path: Path) -> tuple[set[str], dict]:
    m = markers(path)
    return set(m.sheets), {k: [(row, sorted(cols)) for _t, row, cols in v] for k, v in m.columns.items()}


@pytest.mark.parametrize("save", ["openpyxl", "libreoffice"])
@pytest.mark.parametrize("suffix", [".xlsx", ".csv"])  # returned in place; written anew
def test_the_markers_survive_a_save_and_the_round_trip_gives_the_same_workbook(tmp_path, save, suffix):
    rows = transfers(USERS_COLUMNS, USERS_VALUES)
    others = LOOK_ALIKES if suffix == ".xlsx" else {}
    if suffix == ".csv":
        src = csv_of(tmp_path / "in" / "Transfers.csv", rows)
    else:
        src = book(tmp_path / "in" / "saved.xlsx", {"Transfers": rows, **others})
    first = first_run(src, tmp_path / "out1")
    saved = openpyxl_save(first, tmp_path / "openpyxl") if save == "openpyxl" else libreoffice_save(first, tmp_path)
    tool = (
        ["findings", "summary", "run", "rules"]
        if suffix == ".csv"
        else ["findings (njcredits)", "summary (njcredits)", "run (njcredits)", "rules"]
    )
    assert _marks(saved) == _marks(first) == (set(tool), {"transfers": [(0, list(range(13, 21)))]})  # N..U, on the header row
    second = run_again(saved, tmp_path / "out2")
    assert sheet_names(second) == sheet_names(first)
    for name in others:
        assert grid(second, name) == grid(src, name), name
    g1, g2 = grid(first, "Transfers"), grid(second, "Transfers")
    assert g2[0] == g1[0] == [*HEADERS, *USERS_COLUMNS, *TOOL_HEADERS]
    assert [r[9:] for r in g2] == [r[9:] for r in g1]  # the user's columns and the tool's, once each
    assert _marks(second) == _marks(first)


# --- a sheet of the tool's renamed by the user -------------------------------------------------


def test_a_tool_sheet_the_user_renamed_is_the_users_and_the_tool_writes_its_own_anew(tmp_path):
    first = annotate(book(tmp_path / "in" / "renamed.xlsx", {"Transfers": transfers()}), tmp_path / "out1")
    edited = openpyxl.load_workbook(first)
    edited["Run"].title = "Run of October"
    name = sheet_marker("Run", "Run")[0]
    edited.defined_names[name].attr_text = "'Run of October'!$A$1"  # as Excel follows a renamed sheet
    (tmp_path / "edited").mkdir()
    edited.save(tmp_path / "edited" / "renamed.annotated.xlsx")
    assert marked_sheets(tmp_path / "edited" / "renamed.annotated.xlsx") == {"findings", "summary", "rules"}
    second = run_again(tmp_path / "edited" / "renamed.annotated.xlsx", tmp_path / "out2")
    assert sheet_names(second) == ["Transfers", "Run of October", "Findings", "Summary", "Run", "Rules"]
    assert grid(second, "Run of October") == grid(first, "Run")  # kept as it is
    names = [(n, local, f) for n, local, f in defined_names(second) if n.casefold() == name.casefold()]
    assert names == [(name, None, "'Run'!$A$1")]  # the tool's marker once, naming the tool's new sheet
    assert marked_sheets(second) == {"findings", "summary", "run", "rules"}


# --- reviewer columns, known by the marker ---------------------------------------------------------


def test_the_reviewers_columns_are_read_through_the_marker_and_stay_in_place(tmp_path):
    first = annotate(book(tmp_path / "in" / "review.xlsx", {"Transfers": transfers()}), tmp_path / "out1")
    edited = openpyxl.load_workbook(first)
    ws = edited["Transfers"]
    header = [c.value for c in ws[1]]
    at = header.index(REVIEW_COLUMNS[0]) + 1
    ws.cell(2, at, "Approved")
    ws.cell(2, at + 1, "JD")
    (tmp_path / "edited").mkdir()
    edited.save(tmp_path / "edited" / "review.annotated.xlsx")
    result = process(tmp_path / "edited" / "review.annotated.xlsx", as_of=AS_OF)
    (res,) = result.intake
    assert res.sheet.review_cols == dict(zip(REVIEW_COLUMNS, [at - 1, at, at + 1], strict=True))
    assert res.sheet.reviews.iloc[0].tolist() == ["Approved", "JD", ""]
    second = run_again(tmp_path / "edited" / "review.annotated.xlsx", tmp_path / "out2")
    g = grid(second, "Transfers")
    assert g[0] == grid(first, "Transfers")[0] and g[1][at - 1 : at + 1] == ["Approved", "JD"]
    assert _marks(second) == _marks(first)


def test_markers_of_a_workbook_without_any(tmp_path):
    src = book(tmp_path / "in" / "plain.xlsx", {"Transfers": transfers()})
    assert markers(src) == Markers()


def _cell_refs(path: Path, sheet_part: str = "xl/worksheets/sheet1.xml") -> list[str]:
    return re.findall(r'<c r="([A-Z]+\d+)"', zipfile.ZipFile(path).read(sheet_part).decode())


def test_a_column_the_user_inserts_among_the_tools_columns_is_the_users(tmp_path):
    """In Excel a column inserted among the tool's columns widens the marker over it: headed like
    none of the tool's columns, it is the user's and stays where it is; the tool's columns go after
    the reviewer's (kept where they are), never over them."""
    first = annotate(book(tmp_path / "in" / "insert.xlsx", {"Transfers": transfers()}), tmp_path / "out1")
    name = column_marker("Transfers", "Transfers", 0, [9])[0]
    assert [f for n, _l, f in defined_names(first) if n == name] == [
        "'Transfers'!$J$1:$Q$1"
    ]  # J..Q: 3 computed, Status, Findings, 3 reviewer's
    edited = openpyxl.load_workbook(first)
    ws = edited["Transfers"]
    ws.insert_cols(14)  # N, between Status (M) and Findings: what Excel does to the cells
    for r, v in enumerate(["My check", "yes", "", "no"], start=1):
        ws.cell(r, 14, v or None)
    ws.cell(2, 16, "Approved")  # Reviewer Decision, now P
    ws.defined_names[name].attr_text = "'Transfers'!$J$1:$R$1"  # and to the marker
    (tmp_path / "edited").mkdir()
    edited.save(tmp_path / "edited" / "insert.annotated.xlsx")
    second = run_again(tmp_path / "edited" / "insert.annotated.xlsx", tmp_path / "out2")
    g = grid(second, "Transfers")
    assert [r[13] for r in g] == ["My check", "yes", "", "no"]  # the user's, in place
    assert g[0][15:18] == list(REVIEW_COLUMNS) and g[1][15] == "Approved"  # the reviewer's, in place
    assert g[0][18:] == [*COMPUTED, "Status", "Findings"] and [r[21] for r in g[1:]] == ["OK", "Flagged", "OK"]
    assert g[0][9:13] == ["", "", "", ""] and g[0][14] == ""  # where the tool's columns were: emptied
    refs = _cell_refs(second)
    assert len(refs) == len(set(refs))  # no cell written twice
    assert [f for n, _l, f in defined_names(second) if n == name] == ["'Transfers'!$P$1:$W$1"]
    third = run_again(second, tmp_path / "out3")
    assert grid(third, "Transfers") == g


def test_an_intake_sheet_the_user_renamed_keeps_its_column_marker(tmp_path):
    """The column marker's token is the program's, so an intake sheet renamed (Excel keeps the
    marker scoped to it and pointing at its cells) is routed by its headers and its tool's columns
    are still the tool's: replaced, not doubled."""
    first = annotate(book(tmp_path / "in" / "nov.xlsx", {"Transfers": transfers()}), tmp_path / "out1")
    edited = openpyxl.load_workbook(first)
    edited["Transfers"].title = "Transfers (Nov)"
    name = column_marker("Transfers", "Transfers", 0, [9])[0]
    edited["Transfers (Nov)"].defined_names[name].attr_text = "'Transfers (Nov)'!$J$1:$Q$1"  # as Excel follows the rename
    (tmp_path / "edited").mkdir()
    edited.save(tmp_path / "edited" / "nov.annotated.xlsx")
    result = process(tmp_path / "edited" / "nov.annotated.xlsx", as_of=AS_OF)
    assert result.intake[0].sheet.routed is not None  # routed by its headers
    second = run_again(tmp_path / "edited" / "nov.annotated.xlsx", tmp_path / "out2")
    assert grid(second, "Transfers (Nov)") == grid(first, "Transfers")


@pytest.mark.parametrize("suffix", [".xlsx", ".csv"])  # returned in place; written anew
def test_the_tools_markers_are_hidden_names(tmp_path, suffix):
    src = (
        csv_of(tmp_path / "in" / "Transfers.csv", transfers())
        if suffix == ".csv"
        else book(tmp_path / "in" / "h.xlsx", {"Transfers": transfers()})
    )
    out = first_run(src, tmp_path / "out")
    xml = zipfile.ZipFile(out).read("xl/workbook.xml").decode()
    ours = re.findall(r'<definedName name="njcredits_[^"]*"[^>]*>', xml)
    assert len(ours) == 5 and all('hidden="1"' in el for el in ours)  # four sheets and the columns of Transfers
    assert sum('localSheetId="0"' in el for el in ours) == 1  # the column marker, scoped to Transfers


@pytest.mark.parametrize(
    ("main", "prefix"),
    [
        ("http://schemas.openxmlformats.org/spreadsheetml/2006/main", ""),  # as Excel writes it
        ("http://schemas.openxmlformats.org/spreadsheetml/2006/main", "x:"),  # as the Open XML SDK writes it
        ("http://purl.oclc.org/ooxml/spreadsheetml/main", ""),  # Strict
    ],
)
def test_the_markers_are_read_in_any_namespace_and_prefix(main, prefix):
    declare = f'xmlns{":" + prefix[:-1] if prefix else ""}="{main}"'
    xml = (
        f'<{prefix}workbook {declare} xmlns:r="urn:r"><{prefix}sheets>'
        f'<{prefix}sheet name="Transfers" sheetId="1" r:id="rId1"/><{prefix}sheet name="Run" sheetId="2" r:id="rId2"/></{prefix}sheets>'
        f"<{prefix}definedNames>"
        f'<{prefix}definedName name="{RUN}" hidden="1">Run!$A$1</{prefix}definedName>'
        f'<{prefix}definedName name="{COLUMNS}" localSheetId="0" hidden="1">Transfers!$J$1:$Q$1</{prefix}definedName>'
        f"</{prefix}definedNames></{prefix}workbook>"
    ).encode()
    assert read_markers(xml) == Markers(frozenset({"run"}), {"transfers": [(TOKEN, 0, frozenset(range(9, 17)))]})
