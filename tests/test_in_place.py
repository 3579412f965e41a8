"""The returned workbook of an .xlsx or .xlsm is the user's own package with the tool's additions:
everything the analyst made comes back as they made it, every part the tool does not touch is
byte-identical, and a round trip takes the tool's additions out before adding them again."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest
from kept_features import FLAGGED, HEADER_ROW, features, parts
from lxml import etree
from openpyxl.comments import Comment
from openpyxl.styles import Font
from openpyxl.worksheet.table import Table
from test_tool_sheets import AS_OF, annotate, libreoffice_save, soffice_or_skip

from batch.pipeline import process
from batch.programs.transfers.sheet import TRANSFERS as TRANSFERS_SPEC
from batch.workbook.commentsxml import MARKER
from batch.workbook.reading import sheet_marker
from batch.workbook.stylesxml import FILLS
from batch.workbook.writing import write

TRANSFERS_HEADERS = [c.header for c in TRANSFERS_SPEC.columns]

ROOT = Path(__file__).resolve().parents[1]
KEPT = ROOT / "tests" / "fixtures" / "kept.xlsx"
# the parts the tool changes in the fixture: the package's lists of parts, types and sheets, the
# style table, the intake sheet, and its comments and their boxes (new notes on F7 and I5)
CHANGED = {
    "[Content_Types].xml",
    "xl/_rels/workbook.xml.rels",
    "xl/workbook.xml",
    "xl/styles.xml",
    "xl/worksheets/sheet1.xml",
    "xl/comments/comment1.xml",
    "xl/drawings/commentsDrawing1.vml",
}
TOOL_SHEET_PARTS = re.compile(
    r"^xl/(worksheets/sheet[4567]\.xml|worksheets/_rels/sheet[4567]\.xml\.rels|charts/chart2\.xml|drawings/(_rels/)?drawing2\.xml(\.rels)?)$"
)


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory) -> tuple[Path, Path]:
    """The fixture and its returned workbook."""
    folder = tmp_path_factory.mktemp("kept")
    src = folder / "in" / "kept.xlsx"
    src.parent.mkdir()
    shutil.copy(KEPT, src)
    return src, annotate(src, folder / "out")


def _fill(ws, ref: str) -> str | None:
    fill = ws[ref].fill
    return fill.fgColor.rgb if fill.fill_type == "solid" else None


def test_everything_the_analyst_made_comes_back_unchanged(kept_run):
    src, out = kept_run
    # every row's height included: the tool's headers are on one line, so the header row keeps its height too
    assert features(src) == features(out)


def test_every_part_the_tool_does_not_touch_is_byte_identical(kept_run):
    src, out = kept_run
    before, after = parts(src), parts(out)
    assert set(before) <= set(after)  # no part of the user's is dropped
    assert {n for n in before if before[n] != after[n]} == CHANGED
    added = set(after) - set(before)
    assert added and all(TOOL_SHEET_PARTS.match(n) for n in added), sorted(added)


def test_the_tools_columns_fills_notes_and_sheets(kept_run):
    _src, out = kept_run
    book = openpyxl.load_workbook(out)
    assert book.sheetnames == ["Transfers", "Lookups", "Reconciliation", "Findings", "Summary", "Run", "Rules"]
    ws = book["Transfers"]
    assert [ws.cell(HEADER_ROW, c).value for c in range(10, 15)] == [
        "Minimum Transfer ($)",
        "Consideration Ratio",
        "Certificate Transferred To Date ($)",
        "Status",
        "Findings",
    ]
    # statutory violations are Flagged (computed); a blank required cell makes its row Invalid
    assert [ws.cell(r, 13).value for r in (4, 5, 6, 7)] == ["Flagged", "Flagged", "OK", "Invalid"]
    # a flagged cell: the finding's fill, its own number format, font and border
    source = openpyxl.load_workbook(KEPT)["Transfers"]
    for ref in FLAGGED:
        assert _fill(ws, ref) == FILLS["error"]
        assert (ws[ref].number_format, repr(ws[ref].font), repr(ws[ref].border)) == (
            source[ref].number_format,
            repr(source[ref].font),
            repr(source[ref].border),
        )
    assert _fill(ws, "H5") is None  # untouched
    # the user's comment first, the tool's note below the marker line
    text = ws["H4"].comment.text
    assert text.startswith("Check with Treasury\n" + MARKER + "\nTRANSFER_BELOW_MINIMUM (error)")
    assert ws["F7"].comment.text.startswith(MARKER + "\nMISSING_VALUE (error)")
    # the sheet had no pane: frozen below the header and right of Transfer ID (column A)
    assert ws.freeze_panes == "B4"


def test_the_threaded_comment_is_kept_and_the_note_goes_to_the_legacy_comment(kept_run):
    src, out = kept_run
    assert parts(out)["xl/threadedComments/threadedComment1.xml"] == parts(src)["xl/threadedComments/threadedComment1.xml"]
    comment = openpyxl.load_workbook(out)["Transfers"]["B5"].comment
    assert comment.text.startswith("[Threaded comment]") and MARKER not in comment.text  # B5 has no finding


def test_the_workbook_opens_in_libreoffice(kept_run, tmp_path):
    _src, out = kept_run
    pdf = tmp_path / "pdf"
    proc = subprocess.run(
        [
            soffice_or_skip(),
            "--headless",
            f"-env:UserInstallation=file://{tmp_path}/lo",
            "--convert-to",
            "pdf",
            "--outdir",
            str(pdf),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and (pdf / (out.stem + ".pdf")).stat().st_size > 0, proc.stderr


def _tool_sheet_data(path: Path) -> set[str]:
    """The parts of the tool's Summary and Run sheets, which name the input file, its hash and the run time."""
    book = openpyxl.load_workbook(path, read_only=True)
    return {f"xl/worksheets/sheet{book.sheetnames.index(n) + 1}.xml" for n in ("Summary", "Run")}


def test_a_second_round_trip_gives_the_same_workbook(kept_run, tmp_path):
    _src, out = kept_run
    again = annotate(out, tmp_path / "again")
    first, second = parts(out), parts(again)
    assert set(first) == set(second)
    assert {n for n in first if first[n] != second[n]} <= _tool_sheet_data(out)


def _with_cell(path: Path, dest: Path, ref: str, value: str) -> Path:
    """The workbook with one numeric cell's value changed, every other byte as it is."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data, n = re.subn(rb'(<c r="' + ref.encode() + rb'"[^>]*>)<v>[^<]*</v>', rb"\g<1><v>" + value.encode() + b"</v>", data)
                assert n == 1
            zout.writestr(item, data)
    return dest


def test_a_fixed_cell_loses_its_fill_and_note(kept_run, tmp_path):
    src, out = kept_run
    # the reviewer fixes H4: 20,000 -> 25,000, the Grow NJ minimum on the nose; its consideration of
    # 18,000 is then 72% of the credit, under 75%: the finding moves to I4
    fixed = _with_cell(out, tmp_path / "fixed" / out.name, "H4", "25000")
    again = annotate(fixed, tmp_path / "again")
    ws, source = openpyxl.load_workbook(again)["Transfers"], openpyxl.load_workbook(src)["Transfers"]
    assert ws["H4"].value == 25000 and _fill(ws, "H4") is None
    assert ws["H4"].style_id == source["H4"].style_id  # its own style back
    assert ws["H4"].comment.text == "Check with Treasury"  # the user's comment, without the note
    assert _fill(ws, "I4") == FILLS["error"] and ws["I4"].comment.text.startswith(MARKER + "\nCONSIDERATION_BELOW_75PCT")
    assert _fill(ws, "I5") == FILLS["error"]  # still flagged


def test_a_workbook_saved_by_libreoffice_comes_back_as_saved(tmp_path):
    """Acceptance: a merged title, a user comment, a hidden column, a custom width and a formula
    sheet, saved through LibreOffice, then run."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Transfers"
    ws["A1"] = "Transfers for review"
    ws["A1"].font = Font(bold=True)
    ws.merge_cells("A1:I1")
    for j, h in enumerate(TRANSFERS_HEADERS, start=1):
        ws.cell(2, j, h)
    rows = [
        ["T-1", "Grow NJ", "C-1", 500000, "Seller LLC", "Buyer Inc.", "2026-01-05", 30000, 27000],
        ["T-2", "Grow NJ", "C-1", 500000, "Seller LLC", "Buyer Inc.", "2026-01-06", 20000, 18000],  # below the $25,000 minimum
    ]
    for i, row in enumerate(rows, start=3):
        for j, v in enumerate(row, start=1):
            ws.cell(i, j, v)
    ws["H4"].comment = Comment("Check with Treasury", "Analyst")
    ws.column_dimensions["E"].hidden = True
    ws.column_dimensions["C"].width = 25
    rec = wb.create_sheet("Reconciliation")
    rec["A1"], rec["B1"] = "Total transferred", "=SUM(Transfers!H3:H4)"
    (tmp_path / "made").mkdir()
    wb.save(tmp_path / "made" / "review.xlsx")
    saved = libreoffice_save(tmp_path / "made" / "review.xlsx", tmp_path)
    out = annotate(saved, tmp_path / "out")

    before, after = openpyxl.load_workbook(saved), openpyxl.load_workbook(out)
    ws = after["Transfers"]
    assert [str(r) for r in ws.merged_cells.ranges] == [str(r) for r in before["Transfers"].merged_cells.ranges] == ["A1:I1"]
    assert ws["H4"].comment.text.startswith("Check with Treasury\n" + MARKER + "\nTRANSFER_BELOW_MINIMUM")
    assert ws.column_dimensions["E"].hidden and ws.column_dimensions["C"].width == before["Transfers"].column_dimensions["C"].width
    assert after["Reconciliation"]["B1"].value == "=SUM(Transfers!H3:H4)"
    assert openpyxl.load_workbook(out, data_only=True)["Reconciliation"]["B1"].value == 50000  # its cached value
    assert _fill(ws, "H4") == FILLS["error"] and ws["M4"].value == "Flagged"
    for name in before.sheetnames:  # every user cell as LibreOffice saved it
        assert [[c.value for c in r] for r in before[name].iter_rows(max_col=9)] == [
            [c.value for c in r] for r in after[name].iter_rows(max_col=9, max_row=before[name].max_row)
        ]


def _package_with(src: Path, dest: Path, extra: dict[str, bytes], edit) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            zout.writestr(item.filename, edit(item.filename, zin.read(item.filename)))
        for name, data in extra.items():
            zout.writestr(name, data)
    return dest


WITHOUT_CODE = "and without any other executable content; everything else is kept."


def test_an_xlsm_comes_back_as_an_xlsx_without_its_macros(tmp_path):
    def edit(name: str, data: bytes) -> bytes:
        if name == "[Content_Types].xml":
            data = data.replace(b"spreadsheetml.sheet.main+xml", b"").replace(
                b'ContentType="application/vnd.openxmlformats-officedocument."',
                b'ContentType="application/vnd.ms-excel.sheet.macroEnabled.main+xml"',
            )
            return data.replace(
                b"</Types>", b'<Override PartName="/xl/vbaProject.bin" ContentType="application/vnd.ms-office.vbaProject"/></Types>'
            )
        if name == "xl/_rels/workbook.xml.rels":
            rel = (
                b'<Relationship Id="rId99" Type="http://schemas.microsoft.com/office/2006/relationships/vbaProject"'
                b' Target="vbaProject.bin"/>'
            )
            return data.replace(b"</Relationships>", rel + b"</Relationships>")
        return data

    (tmp_path / "in").mkdir()
    xlsm = _package_with(KEPT, tmp_path / "in" / "kept.xlsm", {"xl/vbaProject.bin": b"\xd0\xcf\x11\xe0 not really VBA"}, edit)
    assert b"macroEnabled" in zipfile.ZipFile(xlsm).read("[Content_Types].xml")
    result = process(xlsm)
    said = result.findings[result.findings["Code"] == "MACROS_REMOVED"]["Message"].tolist()
    assert said == [f"kept.xlsm holds macros: the returned workbook is an .xlsx without the VBA project, {WITHOUT_CODE}"]
    out = annotate(xlsm, tmp_path / "out")
    got = parts(out)
    assert "xl/vbaProject.bin" not in got and b"vbaProject" not in got["xl/_rels/workbook.xml.rels"] + got["[Content_Types].xml"]
    assert b"macroEnabled" not in got["[Content_Types].xml"] and b"spreadsheetml.sheet.main+xml" in got["[Content_Types].xml"]
    assert features(out) | {"row_heights": None} == features(KEPT) | {"row_heights": None}


def test_a_legacy_xls_says_its_formatting_is_not_kept(tmp_path):
    from hostile import legacy_xls

    result = process(legacy_xls(tmp_path))
    found = result.findings[result.findings["Code"] == "FORMATTING_NOT_KEPT"]
    assert len(found) == 1 and found.iloc[0]["Severity"] == "info" and "legacy.xls" in found.iloc[0]["Message"]


def _transfers_book(path: Path, setup) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Transfers"
    ws.append(TRANSFERS_HEADERS)
    ws.append(["T-1", "Grow NJ", "C-1", 500000, "Seller LLC", "Buyer Inc.", "2026-01-05", 30000, 27000])
    ws.append(["T-2", "Grow NJ", "C-1", 500000, "Seller LLC", "Buyer Inc.", "2026-01-06", 20000, 18000])
    setup(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)
    return path


@pytest.mark.parametrize(
    "name,setup,pane,autofilter",
    [
        # the user's own pane and autofilter are kept; the tool adds none
        ("own", lambda ws: (setattr(ws, "freeze_panes", "C2"), setattr(ws.auto_filter, "ref", "A1:I3")), "C2", "A1:I3"),
        # the rows are an Excel Table: the Table filters them, so the sheet gets no autofilter of its own
        ("table", lambda ws: ws.add_table(Table(displayName="Transfers2026", ref="A1:I3")), "B2", None),
        # neither: the tool's pane and an autofilter over the input and the tool's columns (the reviewer's three too)
        ("none", lambda ws: None, "B2", "A1:Q3"),
    ],
)
def test_panes_and_autofilters(tmp_path, name, setup, pane, autofilter):
    src = _transfers_book(tmp_path / "in" / f"{name}.xlsx", setup)
    out = annotate(src, tmp_path / "out")
    ws = openpyxl.load_workbook(out)["Transfers"]
    assert ws.freeze_panes == pane
    assert ws.auto_filter.ref == autofilter
    if name == "table":
        assert parts(out)["xl/tables/table1.xml"] == parts(src)["xl/tables/table1.xml"]
        assert list(ws.tables) == ["Transfers2026"]


MAIN = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _edited(src: Path, dest: Path, edit) -> Path:
    """The workbook with some parts changed by `edit(name, data) -> data`."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            zout.writestr(item.filename, edit(item.filename, zin.read(item.filename)))
    return dest


def _cells_of_row(path: Path, row: int) -> list[str]:
    sheet = parts(path)["xl/worksheets/sheet1.xml"]
    body = re.search(rb'<row r="' + str(row).encode() + rb'"[^>]*>(.*?)</row>', sheet, re.S).group(1)
    return [r.decode() for r in re.findall(rb'<c r="([A-Z]+)\d+"', body)]


def test_formatted_empty_cells_to_the_right_keep_their_place_and_the_tools_columns_follow_them(tmp_path):
    """Borders on A1:P3 with values only in A:I: the cells J..P are the user's (formatted, empty),
    so the tool's five columns go to Q..U, and no cell is written twice."""
    from openpyxl.styles import Border, Side

    def borders(ws):
        for row in ws["A1:P3"]:
            for c in row:
                c.border = Border(bottom=Side(style="thin"))

    src = _transfers_book(tmp_path / "in" / "wide.xlsx", borders)
    out = annotate(src, tmp_path / "out")
    user = [chr(c) for c in range(ord("A"), ord("Q"))]  # A..P
    for row in (1, 2, 3):
        letters = _cells_of_row(out, row)
        # each cell once, in column order: the user's A..P, then the tool's from Q (an OK row has no
        # Findings in U; the header row has the reviewer's headers in V..X)
        assert letters[:16] == user and letters[16:] == ["Q", "R", "S", "T", "U", "V", "W", "X"][: len(letters) - 16] and len(letters) >= 20
    ws = openpyxl.load_workbook(out)["Transfers"]
    assert ws["T1"].value == "Status" and ws["P2"].border.bottom.style == "thin"
    again = annotate(out, tmp_path / "again")
    assert _cells_of_row(again, 2) == _cells_of_row(out, 2)


def _styles_without_named_styles(name: str, data: bytes) -> bytes:
    if name == "xl/styles.xml":
        data = re.sub(rb"<cellStyleXfs\b.*?</cellStyleXfs>|<cellStyleXfs\b[^>]*/>", b"", data, flags=re.S)
        data = re.sub(rb"<cellStyles\b.*?</cellStyles>|<cellStyles\b[^>]*/>", b"", data, flags=re.S)
        data = re.sub(rb'\s(xfId|applyFill)="[^"]*"', b"", data)
    return data


@pytest.mark.parametrize(
    "case,edit,check",
    [
        # openpyxl writes an empty list of names as <definedNames />: one list, holding the tool's names
        ("empty names", lambda n, d: d, lambda out: parts(out)["xl/workbook.xml"].count(b"<definedNames") == 1),
        # a style table without named styles: the user's fill on E2 survives two round trips
        ("no named styles", _styles_without_named_styles, None),
        # LibreOffice marks a row's own height customHeight="true": the header row keeps its 33.75 points
        (
            "height true",
            lambda n, d: d.replace(b'<row r="1"', b'<row r="1" ht="33.75" customHeight="true"', 1) if n.endswith("sheet1.xml") else d,
            lambda out: openpyxl.load_workbook(out)["Transfers"].row_dimensions[1].height == 33.75,
        ),
        # sheets listed with end tags, widths with end tags
        (
            "end tags",
            lambda n, d: (
                re.sub(rb"<sheet ([^>]*?)/>", rb"<sheet \1></sheet>", d)
                if n == "xl/workbook.xml"
                else d.replace(
                    b"<sheetFormatPr", b'<cols><col min="5" max="5" width="30" hidden="1" customWidth="1"></col></cols><sheetFormatPr', 1
                )
                if n.endswith("sheet1.xml")
                else d
            ),
            lambda out: (
                openpyxl.load_workbook(out)["Transfers"].column_dimensions["E"].hidden
                and openpyxl.load_workbook(out)["Transfers"]["M3"].value == "Flagged"
            ),
        ),
    ],
)
def test_workbooks_written_by_other_programs(tmp_path, case, edit, check):
    from openpyxl.styles import PatternFill

    def yellow(ws):
        ws["E2"].fill = PatternFill("solid", fgColor="FFFFFF00")

    src = _edited(_transfers_book(tmp_path / "made" / "x.xlsx", yellow), tmp_path / "in" / "x.xlsx", edit)
    out = annotate(src, tmp_path / "out")
    again = annotate(out, tmp_path / "again")
    for path in (out, again):
        book = openpyxl.load_workbook(path)
        assert sheet_marker("Findings", "Findings")[0] in book.defined_names
        ws = book["Transfers"]
        assert _fill(ws, "E2") == "FFFFFF00" and _fill(ws, "H3") == FILLS["error"]  # the user's fill; the tool's on T-2's credit
        if check:
            assert check(path), case


def test_a_vba_project_under_another_name_is_removed(tmp_path):
    def edit(name: str, data: bytes) -> bytes:
        if name == "xl/_rels/workbook.xml.rels":
            kind = b"http://schemas.microsoft.com/office/2006/relationships/vbaProject"
            rel = b'<Relationship Id="rId90" Type="' + kind + b'" Target="vba/project.bin"/>'
            return data.replace(b"</Relationships>", rel + b"</Relationships>")
        return data

    src = _edited(_transfers_book(tmp_path / "made" / "m.xlsx", lambda ws: None), tmp_path / "in" / "m.xlsx", edit)
    with zipfile.ZipFile(src, "a") as z:
        z.writestr("xl/vba/project.bin", b"code")
    assert "MACROS_REMOVED" in set(process(src).findings["Code"])
    got = parts(annotate(src, tmp_path / "out"))
    assert "xl/vba/project.bin" not in got and b"vbaProject" not in got["xl/_rels/workbook.xml.rels"]


def _prefixed(name: str, data: bytes) -> bytes:
    """SpreadsheetML under the prefix `x` (as the Open XML SDK can write it)."""
    if name.startswith("xl/") and name.endswith(".xml") and b'xmlns="' + MAIN in data[:600]:
        data = data.replace(b'xmlns="' + MAIN + b'"', b'xmlns:x="' + MAIN + b'"')
        data = re.sub(rb"<(/?)(?!\?)(?![a-zA-Z0-9]+:)([a-zA-Z])", rb"<\1x:\2", data)
    return data


def _not_spreadsheetml(name: str, data: bytes) -> bytes:
    """A workbook part in a namespace that is not SpreadsheetML (calamine reads it all the same)."""
    return data.replace(MAIN, b"http://example.com/not-spreadsheetml") if name == "xl/workbook.xml" else data


@pytest.mark.parametrize(
    "case,edit,in_place",
    [
        # SpreadsheetML under a prefix is annotated in place, in its own namespace: nothing to say
        ("prefixed", _prefixed, True),
        # a workbook part that is not SpreadsheetML cannot be kept: written anew, and FORMATTING_NOT_KEPT says why
        ("not SpreadsheetML", _not_spreadsheetml, False),
    ],
)
def test_only_a_workbook_that_cannot_be_kept_comes_back_written_anew_and_says_so(tmp_path, case, edit, in_place):
    src = _edited(_transfers_book(tmp_path / "made" / "p.xlsx", lambda ws: None), tmp_path / "in" / "p.xlsx", edit)
    result = process(src)
    found = result.findings[result.findings["Code"] == "FORMATTING_NOT_KEPT"]
    assert result.in_place is in_place and len(found) == (0 if in_place else 1), case
    if not in_place:
        assert "could not be annotated in place (its workbook part xl/workbook.xml is not SpreadsheetML" in found.iloc[0]["Message"]
        ws = openpyxl.load_workbook(annotate(src, tmp_path / "out"))["Transfers"]
        assert ws["A3"].value == "T-2" and ws["M3"].value == "Flagged"


@pytest.mark.parametrize("notes", [1023, 1024, 1025])
def test_every_comment_box_id_is_in_a_block_its_drawing_declares(tmp_path, notes):
    """Boxes are numbered from block * 1024 + 1, so 1,024 boxes reach into a second block of
    1,024 ids: the drawing must declare it, and the next drawing start after it."""

    def rows(ws):
        for i in range(notes):  # each row a Grow NJ transfer of $20,000, under the $25,000 minimum: one note
            ws.append([f"T-{i + 10}", "Grow NJ", f"C-{i}", 500000, "Seller LLC", "Buyer Inc.", "2026-01-05", 20000, 18000])

    src = _transfers_book(tmp_path / "in" / "many.xlsx", rows)
    out = annotate(src, tmp_path / "out")
    seen = set()
    for name, data in parts(out).items():
        if name.endswith(".vml"):
            declared = {int(b) for b in re.search(rb'data="([^"]*)"', data).group(1).split(b",")}
            ids = [int(i) for i in re.findall(rb'id="_x0000_s(\d+)"', data)]
            assert {i // 1024 for i in ids} <= declared, name
            assert not seen & set(ids)
            seen |= set(ids)
    assert len(seen) == notes + 1  # T-2's note too


def test_a_workbook_written_anew_comes_back_without_stale_notes_or_fills(tmp_path):
    """A CSV comes back as a workbook written anew; dropped back in (an .xlsx now, annotated in
    place), its notes and fills are recognised as the tool's: a fixed cell loses both, and a cell
    still flagged has its note once."""
    src = tmp_path / "in" / "Transfers.csv"
    src.parent.mkdir()
    rows = [
        TRANSFERS_HEADERS,
        ["T-1", "Grow NJ", "C-1", "500000", "Seller LLC", "Buyer Inc.", "2026-01-05", "20000", "18000"],  # under $25,000
        ["T-2", "Grow NJ", "C-2", "500000", "Seller LLC", "Buyer Inc.", "2026-01-06", "20000", "18000"],  # under $25,000
    ]
    src.write_text("\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
    first = annotate(src, tmp_path / "out1")
    assert _fill(openpyxl.load_workbook(first)["Transfers"], "H2") == FILLS["error"]
    # T-1 fixed: 30,000 (a CSV's plain number comes back as the number Excel reads in it)
    fixed = _edited(
        first,
        tmp_path / "fixed" / "Transfers.annotated.xlsx",
        lambda n, d: re.sub(rb'(<c r="H2"[^>]*><v>)20000(</v>)', rb"\g<1>30000\g<2>", d) if n == "xl/worksheets/sheet1.xml" else d,
    )
    ws = openpyxl.load_workbook(annotate(fixed, tmp_path / "out2"))["Transfers"]
    assert _fill(ws, "H2") is None and ws["H2"].comment is None
    assert _fill(ws, "H3") == FILLS["error"] and ws["H3"].comment.text.count("TRANSFER_BELOW_MINIMUM") == 1


# -- any well-formed spelling of the intake sheet ------------------------------------------------

SHEET = "xl/worksheets/sheet1.xml"
STRICT = b"http://purl.oclc.org/ooxml/spreadsheetml/main"
REL = b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"
STRICT_REL = b"http://purl.oclc.org/ooxml/officeDocument/relationships"
TITLE = b'<row r="1"><c r="A1" t="inlineStr"><is><t>Transfers for review</t></is></c></row>'
# the parts a run changes in this book: the package's lists, the style table, the intake sheet (its
# comments and their drawing are new parts)
RUN_CHANGES = {"[Content_Types].xml", "_rels/.rels", "xl/_rels/workbook.xml.rels", "xl/workbook.xml", "xl/styles.xml", SHEET}


def _titled_book(path: Path) -> Path:
    """A title row the tool never touches, the header in row 2, T-1 (OK) in row 3 and T-2 in
    row 4: $20,000 transferred, under the $25,000 Grow NJ minimum, so H4 is flagged."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Transfers"
    ws["A1"] = "Transfers for review"
    ws.append(TRANSFERS_HEADERS)
    ws.append(["T-1", "Grow NJ", "C-1", 500000, "Seller LLC", "Buyer Inc.", "2026-01-05", 30000, 27000])
    ws.append(["T-2", "Grow NJ", "C-1", 500000, "Seller LLC", "Buyer Inc.", "2026-01-06", 20000, 18000])
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)
    assert TITLE in parts(path)[SHEET]
    return path


def _sheet_prefixed(prefix: bytes):
    def edit(data: bytes) -> bytes:
        data = data.replace(b'xmlns="' + MAIN + b'"', b"xmlns:" + prefix + b'="' + MAIN + b'"')
        return re.sub(rb"<(/?)(?!\?)(?![a-zA-Z0-9]+:)([a-zA-Z])", rb"<\1" + prefix + rb":\2", data)

    return edit


def _single_quoted(data: bytes, declarations: bool = False) -> bytes:
    """Every attribute in single quotes with spaces around `=` (the namespace declarations too, or not)."""
    return re.sub(rb'(\s[\w:]+)="([^"]*)"' if declarations else rb'(\s(?!xmlns)[\w:]+)="([^"]*)"', rb"\1 = '\2'", data)


def _out_of_order(data: bytes) -> bytes:
    """Row 4's cell H4 (the one a finding points at) written last, after I4: a program that
    writes cells out of column order (a blank H4 must not be inserted before I4 beside it)."""
    row = re.search(rb'(<row r="4"[^>]*>)(.*?)(</row>)', data, re.S)
    h4 = re.search(rb'<c r="H4".*?</c>', row.group(2), re.S).group(0)
    return data[: row.start(2)] + row.group(2).replace(h4, b"") + h4 + data[row.end(2) :]


TITLE_QUOTED = b"<row r = '1'><c r = 'A1' t = 'inlineStr'><is><t>Transfers for review</t></is></c></row>"
SHEET_SPELLINGS = [
    (
        "a comment in the head holds <sheetData>",
        lambda d: d.replace(b"<sheetData>", b"<!-- <sheetData><row r='3'/></sheetData> --><sheetData>"),
        TITLE,
    ),
    (
        "CDATA sections hold </c></row>",
        lambda d: re.sub(  # in the title row, and in T-2's row (which the tool adds to)
            rb'(<c r="E4"[^>]*><is><t>)Seller LLC',
            rb"\1<![CDATA[Seller </c></row> LLC]]>",
            d.replace(b"<t>Transfers for review</t>", b"<t><![CDATA[Transfers </c></row> for review]]></t>"),
        ),
        b'<row r="1"><c r="A1" t="inlineStr"><is><t><![CDATA[Transfers </c></row> for review]]></t></is></c></row>',
    ),
    ("attributes in single quotes, spaces around =", _single_quoted, TITLE_QUOTED),
    ("the dimension written with a space before />", lambda d: d.replace(b'<dimension ref="A1:I4"/>', b'<dimension ref="A1:I4" />'), TITLE),
    ("the flagged cell written last in its row, after I4", _out_of_order, TITLE),
    (
        "processing instructions and comments between rows",
        lambda d: d.replace(b'</row><row r="2">', b'</row><?keep this?><!-- <row r="2"></row> --><row r="2">'),
        TITLE + b'<?keep this?><!-- <row r="2"></row> -->',
    ),
    ("SpreadsheetML under the prefix x", _sheet_prefixed(b"x"), _sheet_prefixed(b"x")(TITLE)),
    (
        "end tags with a space",
        lambda d: re.sub(rb"</(\w+)>", rb"</\1 >", d),
        b'<row r="1"><c r="A1" t="inlineStr"><is><t>Transfers for review</t ></is ></c ></row >',
    ),
]
# spellings the package checks or the reader do not take yet: the returned workbook written from the
# spelled package after a run of the book as openpyxl wrote it (the same values)
WRITER_SPELLINGS = [
    ("Strict Open XML's namespaces", lambda d: d.replace(MAIN, STRICT).replace(REL, STRICT_REL), TITLE),
    ("the namespace declaration in single quotes too", lambda d: _single_quoted(d, declarations=True), TITLE_QUOTED),
    ("the sheet written in UTF-16 (comes back in UTF-8)", lambda d: b"\xff\xfe" + d.decode("utf-8").encode("utf-16-le"), TITLE),
    (
        "a row 0 above the title",
        lambda d: d.replace(b"<sheetData>", b'<sheetData><row r="0"><c r="A0" t="inlineStr"><is><t>before</t></is></c></row>'),
        b'<row r="0"><c r="A0" t="inlineStr"><is><t>before</t></is></c></row>' + TITLE,
    ),
]


def _cells_of(sheet: bytes) -> dict[str, list]:
    root = etree.fromstring(sheet)
    ns = etree.QName(root).namespace
    out: dict[str, list] = {}
    for c in root.iter(f"{{{ns}}}c"):
        out.setdefault(c.get("r"), []).append((c.get("s"), "".join(c.itertext())))
    return out


def _style_fill(styles: bytes, style: str | None) -> str | None:
    """The solid fill colour of a cell style, read from the style table."""
    root = etree.fromstring(styles)
    ns = etree.QName(root).namespace
    xf = root.find(f"{{{ns}}}cellXfs")[int(style or 0)]
    fg = root.find(f"{{{ns}}}fills")[int(xf.get("fillId") or 0)].find(f".//{{{ns}}}fgColor")
    return None if fg is None else fg.get("rgb")


@pytest.mark.parametrize(
    "case,edit,kept,read",
    [(*c, True) for c in SHEET_SPELLINGS] + [(*c, False) for c in WRITER_SPELLINGS],
    ids=[c[0] for c in SHEET_SPELLINGS + WRITER_SPELLINGS],
)
def test_the_intake_sheet_in_any_well_formed_spelling_is_annotated_in_place(tmp_path, case, edit, kept, read):
    plain = _titled_book(tmp_path / "made" / "t.xlsx")
    src = _edited(plain, tmp_path / "in" / "t.xlsx", lambda n, d: edit(d) if n == SHEET else d)
    if read:
        result = process(src, as_of=AS_OF)
    else:
        result = process(plain, as_of=AS_OF)
        result.path = src  # the same values, spelled otherwise
    assert result.in_place, case
    (tmp_path / "out").mkdir()
    out = write(result, tmp_path / "out" / "t.annotated.xlsx")
    before, after = parts(src), parts(out)
    for name, data in after.items():  # every part well-formed
        if name.endswith((".xml", ".rels", ".vml")):
            etree.fromstring(data)
    assert {n for n in before if before[n] != after[n]} <= RUN_CHANGES, case  # no other part of the user's changed
    sheet = after[SHEET]
    assert kept in sheet, case  # the rows the tool does not touch, byte for byte
    got = _cells_of(sheet)
    own = _cells_of(before[SHEET])
    assert {ref: [text for _style, text in got[ref]] for ref in own} == {ref: [text for _style, text in v] for ref, v in own.items()}, case
    # the tool's cells: Status in M (after the input's A..I and three computed columns), under the sheet's prefix
    assert [[text for _style, text in got[ref]] for ref in ("M2", "M3", "M4")] == [["Status"], ["OK"], ["Flagged"]]
    assert got["H4"][0][1] == "20000" and len(got["H4"]) == 1  # the flagged cell once, its value kept
    assert _style_fill(after["xl/styles.xml"], got["H4"][0][0]) == FILLS["error"]
    assert _style_fill(after["xl/styles.xml"], got["H3"][0][0]) is None
    dimension = re.search(rb"<(?:\w+:)?dimension ref\s*=\s*[\"']([^\"']*)", sheet)
    assert dimension.group(1) == b"A1:Q4", case  # widened to the tool's last column (the reviewer's Q)
    root = etree.fromstring(sheet)  # the comments' drawing, its r:id in the sheet's own relationships namespace
    rel = (STRICT_REL if etree.QName(root).namespace == STRICT.decode() else REL).decode()
    assert root.find(f"{{{etree.QName(root).namespace}}}legacyDrawing").get(f"{{{rel}}}id"), case
    if b"x:worksheet" in sheet:
        assert b'<x:c r="M3"' in sheet and b"<c " not in sheet
    if read:  # dropped back in: the tool's additions taken out and made again, the same sheet
        assert parts(annotate(out, tmp_path / "again"))[SHEET] == sheet, case


def test_libreoffice_reads_the_tools_cells_of_every_spelling(tmp_path):
    """Each returned workbook opened by LibreOffice (converted to CSV in one run): the title, and
    the tool's Status and Findings beside the input values."""
    outs = []
    for k, (case, edit, _kept) in enumerate(SHEET_SPELLINGS + WRITER_SPELLINGS):
        plain = _titled_book(tmp_path / f"case{k}" / "made" / "t.xlsx")
        src = _edited(plain, tmp_path / f"case{k}" / "in" / "t.xlsx", lambda n, d, edit=edit: edit(d) if n == SHEET else d)
        result = process(src if k < len(SHEET_SPELLINGS) else plain, as_of=AS_OF)
        result.path = src
        (tmp_path / "out").mkdir(exist_ok=True)
        outs.append((case, write(result, tmp_path / "out" / f"case{k}.xlsx")))
    proc = subprocess.run(
        [
            soffice_or_skip(),
            "--headless",
            f"-env:UserInstallation=file://{tmp_path}/lo",
            "--convert-to",
            "csv",
            "--outdir",
            str(tmp_path / "csv"),
        ]
        + [str(out) for _case, out in outs],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    for case, out in outs:
        lines = (tmp_path / "csv" / (out.stem + ".csv")).read_text().splitlines()
        assert lines[0].split(",")[0] in ("Transfers for review", "Transfers </c></row> for review"), case
        assert lines[2].split(",")[0] == "T-1" and lines[2].split(",")[12] == "OK", case
        assert lines[3].split(",")[7] == "20000" and lines[3].split(",")[12:14] == ["Flagged", "TRANSFER_BELOW_MINIMUM"], case


# -- the head and tail of a sheet, edited as XML ---------------------------------------------------


def _skeleton(body: str, ns: str = MAIN.decode(), prefix: str = "") -> etree._Element:
    p = f"{prefix}:" if prefix else ""
    declared = f'xmlns{":" + prefix if prefix else ""}="{ns}"'
    # as Excel writes its root: prefixes used only in mc:Ignorable's value, which must stay declared
    declared += f' xmlns:mc="{MC_NAMESPACE}" mc:Ignorable="x14ac" xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac"'
    return etree.fromstring(f"<{p}worksheet {declared}>{body.format(p=p)}</{p}worksheet>".encode())


MC_NAMESPACE = "http://schemas.openxmlformats.org/markup-compatibility/2006"


def _kinds(root) -> list[str]:
    from batch.workbook.inplace import _schema_name

    return [_schema_name(child) or etree.QName(child).localname for child in root]


@pytest.mark.parametrize("prefix,ns", [("", MAIN.decode()), ("x", MAIN.decode()), ("", STRICT.decode())])
def test_the_head_and_tail_are_changed_in_the_sheets_own_namespace_and_prefix(prefix, ns):
    from batch.workbook import inplace

    root = _skeleton(
        "<{p}dimension ref='A1:G6' /><{p}sheetViews><{p}sheetView workbookViewId='0'/></{p}sheetViews>"
        "<{p}cols><{p}col min='1' max='16384' width='9' style='3'/></{p}cols><{p}sheetData/>"
        "<{p}dataValidations count='1'><{p}dataValidation sqref='A2'/></{p}dataValidations><{p}pageMargins left='1'/>"
        '<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="x14">'
        "<{p}controls/></mc:Choice></mc:AlternateContent>",
        ns,
        prefix,
    )
    assert inplace._column_styles(root)[16383] == 3
    assert inplace._dimension(root, 16, 9)  # G6 widened to the tool's last column (Q) and row 9
    assert inplace._cols(root, {9: 12.0, 10: 15.0})  # J and K: the user's A:XFD range cut around them
    assert inplace._pane(root, 2, 1) and not inplace._pane(root, 2, 1)  # frozen once, never over a pane
    filter_ = root.makeelement(f"{{{ns}}}autoFilter", {"ref": "A2:Q9"})
    inplace._insert_after_rows(root, filter_, "autoFilter")
    inplace._prompt(root, "O3:O9")
    inplace._drawing_element(root, "rId7")
    data = etree.tostring(root)
    again = etree.fromstring(data)  # well-formed
    tag = f"{{{ns}}}"
    assert again.find(f"{tag}dimension").get("ref") == "A1:Q9"
    assert [(c.get("min"), c.get("max"), c.get("width")) for c in again.iter(f"{tag}col")] == [
        ("1", "9", "9"),
        ("10", "10", "12.0"),
        ("11", "11", "15.0"),
        ("12", "16384", "9"),
    ]
    pane = again.find(f"{tag}sheetViews/{tag}sheetView/{tag}pane")
    assert (pane.get("xSplit"), pane.get("ySplit"), pane.get("topLeftCell"), pane.get("state")) == ("1", "2", "B3", "frozen")
    lists = again.find(f"{tag}dataValidations")
    assert lists.get("count") == "2" and [v.get("sqref") for v in lists] == ["A2", "O3:O9"]
    # schema order: the filter after the rows, the drawing after the page margins and before the controls
    assert _kinds(again) == [
        "dimension",
        "sheetViews",
        "cols",
        "sheetData",
        "autoFilter",
        "dataValidations",
        "pageMargins",
        "legacyDrawing",
        "controls",
    ]
    # every element the tool added is in the sheet's namespace, under its prefix; r:id in the sheet's relationships namespace
    assert {etree.QName(el).namespace for el in again.iter() if isinstance(el.tag, str)} == {ns, MC_NAMESPACE}
    assert {el.prefix for el in again.iter(f"{tag}*")} == {prefix or None}
    rel = (STRICT_REL if ns == STRICT.decode() else REL).decode()
    assert again.find(f"{tag}legacyDrawing").get(f"{{{rel}}}id") == "rId7" and again.nsmap.get("r") == rel
    assert data.count(b"xmlns:r=") == 1  # declared once, on the root
    assert again.nsmap["x14ac"] and again.get(f"{{{MC_NAMESPACE}}}Ignorable") == "x14ac"  # mc:Ignorable's prefix still declared


def test_the_comment_drawing_takes_a_free_prefix_when_r_is_the_users():
    from batch.workbook import inplace

    root = _skeleton('<sheetData/><foo r:x="1" xmlns:r="urn:not-relationships"/>')
    inplace._drawing_element(root, "rId3")
    again = etree.fromstring(etree.tostring(root))
    assert again.find(f"{{{MAIN.decode()}}}legacyDrawing").get(f"{{{REL.decode()}}}id") == "rId3"
    assert again.find(f"{{{MAIN.decode()}}}foo").get("{urn:not-relationships}x") == "1"  # the user's r kept
    assert again.nsmap["r1"] == REL.decode()
