"""batch.sheetrows: a sheet part's rows rewritten as bytes, only what the tool adds changed."""

from __future__ import annotations

import io
import zipfile

import openpyxl
import pytest
from defusedxml import ElementTree

from batch.sheetrows import RowsOutOfOrder, column_number, rewrite_rows, rewrite_stream, split_part

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
HEAD = b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
TAIL = b'<mergeCells count="1"><mergeCell ref="A1:C1"/></mergeCells></worksheet>'
ROWS = (
    b'<row r="1" spans="1:3" ht="30" customHeight="1"><c r="A1" s="4" t="s"><v>0</v></c></row>'
    b'<row r="2" spans="1:4"><c r="A2" t="inlineStr"><is><t>T-1</t></is></c><c r="B2" s="2"><v>100</v></c>'
    b'<c r="D2"><f>B2*2</f><v>200</v></c></row>'
    b'<row r="4"><c r="A4" t="inlineStr"><is><t>T-2</t></is></c></row>'
)
PART = HEAD + b"<sheetData>" + ROWS + b"</sheetData>" + TAIL


def rewrite(part: bytes, tails=None, styles=None) -> bytes:
    return b"".join(rewrite_rows(part, tails or {}, styles or {}))


@pytest.mark.parametrize("letters,number", [(b"A", 0), (b"Z", 25), (b"AA", 26), (b"XFD", 16_383)])
def test_column_number(letters, number):
    assert column_number(letters) == number


def test_nothing_to_add_copies_every_byte():
    assert rewrite(PART) == PART


A2 = b'<c r="A2" t="inlineStr"><is><t>T-1</t></is></c>'
B2 = b'<c r="B2" s="2"><v>100</v></c>'
D2 = b'<c r="D2"><f>B2*2</f><v>200</v></c>'


@pytest.mark.parametrize(
    "tails,styles,expected_row",
    [
        # the tool's cells after the row's last cell; the spans hint dropped, everything else kept
        ({2: b'<c r="E2"><v>1</v></c>'}, {}, b'<row r="2">' + A2 + B2 + D2 + b'<c r="E2"><v>1</v></c></row>'),
        # a flagged cell gets the new style, its value and formula kept (added, or replacing its own)
        ({}, {2: {3: 9}}, b'<row r="2">' + A2 + B2 + b'<c r="D2" s="9"><f>B2*2</f><v>200</v></c></row>'),
        ({}, {2: {1: 7}}, b'<row r="2">' + A2 + b'<c r="B2" s="7"><v>100</v></c>' + D2 + b"</row>"),
        # a blank cell a finding points at, inserted in column order (C between B and D; F at the end)
        ({}, {2: {2: 8, 5: 8}}, b'<row r="2">' + A2 + B2 + b'<c r="C2" s="8"/>' + D2 + b'<c r="F2" s="8"/></row>'),
    ],
)
def test_a_row_gets_only_what_the_tool_adds(tails, styles, expected_row):
    out = rewrite(PART, tails, styles)
    assert expected_row in out
    assert out.replace(expected_row, b"") == PART.replace(ROWS[ROWS.index(b'<row r="2"') : ROWS.index(b'<row r="4"')], b"")


@pytest.mark.parametrize(
    "row,where",
    [
        (3, b'</row><row r="3"><c r="E3"><v>1</v></c></row><row r="4">'),  # between rows 2 and 4
        (9, b'</row><row r="9"><c r="E9"><v>1</v></c></row></sheetData>'),  # after the last row
    ],
)
def test_a_row_the_sheet_lacks_is_inserted_in_order(row, where):
    assert where in rewrite(PART, {row: f'<c r="E{row}"><v>1</v></c>'.encode()})


def test_an_empty_sheet_and_cells_without_references():
    empty = HEAD + b"<sheetData/>" + TAIL
    assert b'<sheetData><row r="1"><c r="B1" s="3"/></row></sheetData>' in rewrite(empty, styles={1: {1: 3}})
    # cells without `r` take the column after the one before (A, B, then the restyled C)
    bare = HEAD + b"<sheetData><row><c><v>1</v></c><c><v>2</v></c><c><v>3</v></c></row></sheetData>" + TAIL
    assert b'<c><v>1</v></c><c><v>2</v></c><c s="5"><v>3</v></c>' in rewrite(bare, styles={1: {2: 5}})


def test_the_rewritten_part_reads_back_in_openpyxl(tmp_path):
    """A workbook made by openpyxl (merged title, formula, custom height) with cells appended,
    restyled and inserted: every part parses and openpyxl reads the user's cells unchanged."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Transfers"
    ws["A1"] = "Title"
    ws.merge_cells("A1:C1")
    ws.append(["ID", "Amount", None, "Double"])
    ws.append(["T-1", 100, None, "=B3*2"])
    ws.row_dimensions[1].height = 30
    wb.save(tmp_path / "in.xlsx")
    with zipfile.ZipFile(tmp_path / "in.xlsx") as zin, zipfile.ZipFile(tmp_path / "out.xlsx", "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = rewrite(data, {3: b'<c r="E3" t="inlineStr"><is><t>OK</t></is></c>'}, {3: {2: 0}})
            zout.writestr(item, data)
    with zipfile.ZipFile(tmp_path / "out.xlsx") as z:
        ElementTree.fromstring(z.read("xl/worksheets/sheet1.xml"))
    ws = openpyxl.load_workbook(io.BytesIO((tmp_path / "out.xlsx").read_bytes()))["Transfers"]
    assert [c.value for c in ws[3]] == ["T-1", 100, None, "=B3*2", "OK"]
    assert [str(r) for r in ws.merged_cells.ranges] == ["A1:C1"]
    assert ws.row_dimensions[1].height == 30


@pytest.mark.parametrize("size", [1, 7, 64, len(PART)])
@pytest.mark.parametrize(
    "tails,styles",
    [
        ({}, {}),
        ({2: b'<c r="E2"><v>1</v></c>', 3: b'<c r="E3"><v>2</v></c>', 9: b'<c r="E9"><v>3</v></c>'}, {4: {1: 5}}),
    ],
)
def test_a_part_read_in_chunks_gives_the_same_bytes(size, tails, styles):
    """The part streamed from the zip in pieces of any size (a marker or a row cut between two)
    comes out as the whole part does."""
    chunks = [PART[i : i + size] for i in range(0, len(PART), size)]
    assert b"".join(rewrite_stream(chunks, tails, styles)) == rewrite(PART, tails, styles)
    assert split_part(chunks) == (PART[: PART.index(b"<sheetData>")], TAIL)
    empty = HEAD + b"<sheetData/>" + TAIL
    pieces = [empty[i : i + size] for i in range(0, len(empty), size)]
    assert b"".join(rewrite_stream(pieces, tails, styles)) == rewrite(empty, tails, styles)
    assert split_part(pieces) == (HEAD, TAIL)


def test_rows_out_of_order_are_refused_rather_than_written_twice():
    """Row 4 listed before row 2: the tool's cells for row 2 would go into a second row 2."""
    part = HEAD + b'<sheetData><row r="4"><c r="A4"><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></row></sheetData>' + TAIL
    with pytest.raises(RowsOutOfOrder, match="row 2 after row 4"):
        b"".join(rewrite_rows(part, {2: b'<c r="B2"><v>3</v></c>'}, {}))


@pytest.mark.parametrize("quoted", [b"r='B2' s='2'", b'r = "B2" s = "2"'])
def test_attributes_in_single_quotes_or_with_spaces_are_read_and_restyled_once(quoted):
    """Valid XML that Excel does not write: the cell's own style attribute is replaced, never doubled."""
    part = HEAD + b'<sheetData><row r="2"><c r="A2"><v>1</v></c><c ' + quoted + b"><v>100</v></c></row></sheetData>" + TAIL
    out = rewrite(part, {}, {2: {1: 7}})
    cell = ElementTree.fromstring(out).find(f"{{{MAIN}}}sheetData/{{{MAIN}}}row/{{{MAIN}}}c[@r='B2']")  # well-formed: one s attribute
    assert cell.get("s") == "7" and cell.find(f"{{{MAIN}}}v").text == "100"
    assert out.count(b"7") == 1  # the style replaced in the attribute's own quotes, never added twice
