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
from openpyxl.comments import Comment
from openpyxl.styles import Font
from openpyxl.worksheet.table import Table
from test_tool_sheets import annotate, libreoffice_save, soffice_or_skip

from batch.commentsxml import MARKER
from batch.pipeline import process
from batch.reading import sheet_marker
from batch.stylesxml import FILLS
from validators.transfers import TRANSFERS as TRANSFERS_SPEC

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
    before, after = features(src), features(out)
    heights = after.pop("row_heights")
    assert {k: v for k, v in before.items() if k != "row_heights"} == after
    # the header row had the default height: the tool's wrapped headers may set it; the title row keeps the user's 24 points
    assert {r: h for r, h in heights["Transfers"].items() if r != HEADER_ROW} == before["row_heights"]["Transfers"]


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
    # T-1 fixed: 30,000 (a CSV's cells come back as the text they were)
    fixed = _edited(
        first,
        tmp_path / "fixed" / "Transfers.annotated.xlsx",
        lambda n, d: re.sub(rb'(<c r="H2"[^>]*><is><t>)20000(</t>)', rb"\g<1>30000\g<2>", d) if n == "xl/worksheets/sheet1.xml" else d,
    )
    ws = openpyxl.load_workbook(annotate(fixed, tmp_path / "out2"))["Transfers"]
    assert _fill(ws, "H2") is None and ws["H2"].comment is None
    assert _fill(ws, "H3") == FILLS["error"] and ws["H3"].comment.text.count("TRANSFER_BELOW_MINIMUM") == 1
