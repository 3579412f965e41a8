"""batch.workbook.sheetrows: a sheet part's rows rewritten as bytes, only what the tool adds changed."""

from __future__ import annotations

import functools
import io
import re
import zipfile

import numpy as np
import openpyxl
import pytest
from defusedxml import ElementTree
from lxml import etree

from batch.workbook.cells import column_letters
from batch.workbook.safety import Refused
from batch.workbook.sheetrows import (
    _COLUMNS,
    LazyFlags,
    LazyTails,
    RowsOutOfOrder,
    column_number,
    rewrite_rows,
    rewrite_stream,
    skeleton,
    split_part,
)

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


@pytest.mark.parametrize(
    "rows,expected",
    [
        # a sheet with no cells (as xlsxwriter, LibreOffice and Excel write an empty sheet): the part as it is
        (b"<sheetData/>", HEAD + b"<sheetData/>" + TAIL),
        (b"<sheetData />", HEAD + b"<sheetData />" + TAIL),
        (b"<x:sheetData xmlns:x='" + MAIN.encode() + b"'/>", HEAD + b"<x:sheetData xmlns:x='" + MAIN.encode() + b"'/>" + TAIL),
        # rows left out, the rows element empty, the tail kept
        (b"<sheetData>" + ROWS + b"</sheetData>", HEAD + b"<sheetData/>" + TAIL),
    ],
)
@pytest.mark.parametrize("size", [1, 7, 64, None])
def test_the_skeleton_of_a_sheet_keeps_its_head_and_tail(rows, expected, size):
    part = HEAD + rows + TAIL
    chunks = [part] if size is None else [part[i : i + size] for i in range(0, len(part), size)]
    got = skeleton(chunks)
    assert got == expected
    etree.fromstring(got)  # well-formed, small enough to parse whole


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


# -- any well-formed spelling of a sheet ---------------------------------------------------------

STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
E2 = b'<c r="E2"><v>1</v></c>'  # the tool's cell, as batch.workbook.cells writes it
R1 = b'<row r="1"><c r="A1" s="4" t="s"><v>0</v></c></row>'  # a row the tool does not touch: its bytes come back as they are


def _part(rows: bytes, head: bytes = HEAD, tail: bytes = TAIL) -> bytes:
    return head + b"<sheetData>" + rows + b"</sheetData>" + tail


def _prefixed(xml: bytes, prefix: bytes) -> bytes:
    """SpreadsheetML under a prefix, as the Open XML SDK can write it."""
    xml = xml.replace(b'xmlns="' + MAIN.encode() + b'"', b"xmlns:" + prefix + b'="' + MAIN.encode() + b'"')
    return re.sub(rb"<(/?)(?=[A-Za-z])", rb"<\1" + prefix + b":", xml)


def _cells(out: bytes) -> dict[str, list]:
    """Every cell of a rewritten part, read by an XML parser (either main namespace, any prefix):
    reference -> [(style, value text)] in document order, a list so that a cell written twice shows."""
    root = etree.fromstring(out)  # well-formed, or this raises
    ns = etree.QName(root).namespace
    found: dict[str, list] = {}
    for c in root.iter(f"{{{ns}}}c"):
        found.setdefault(c.get("r"), []).append((c.get("s"), "".join(c.itertext())))
    return found


# each case: the part, the tool's cells (row -> XML), the styles (row -> {column: style}), the
# bytes that must come back as they were, and what the rewritten cells must hold
SPELLINGS = [
    (
        "a comment in the head holds <sheetData> text",
        _part(R1 + b'<row r="2"><c r="A2"><v>5</v></c></row>', head=HEAD + b"<!-- <sheetData><row r='2'></row></sheetData> -->"),
        {2: E2},
        {},
        [R1, b"<!-- <sheetData><row r='2'></row></sheetData> -->"],
        {"A2": [(None, "5")], "E2": [(None, "1")]},
    ),
    (
        "a CDATA section in an inline string holds </c></row>",
        _part(
            R1
            + b'<row r="2"><c r="A2" t="inlineStr"><is><t><![CDATA[T-1 </c></row> <row r="9">]]></t></is></c><c r="B2"><v>7</v></c></row>'
        ),
        {2: E2},
        {2: {1: 7}},
        [R1, b'<c r="A2" t="inlineStr"><is><t><![CDATA[T-1 </c></row> <row r="9">]]></t></is></c>'],
        {"A2": [(None, 'T-1 </c></row> <row r="9">')], "B2": [("7", "7")], "E2": [(None, "1")]},
    ),
    (
        "attributes in single quotes and with spaces around =",
        _part(
            R1
            + b"<row r = '2' spans='1:4'><c r='A2' t='inlineStr'><is><t>T-1</t></is></c>"
            + b"<c r='B2' s='2'><v>100</v></c><c r='D2'><v>3</v></c></row>"
        ),
        {2: E2},
        {2: {1: 7, 2: 8}},
        [R1, b"<c r='A2' t='inlineStr'><is><t>T-1</t></is></c>", b"<c r='D2'><v>3</v></c>"],
        # B2 restyled in its own quotes, C2 inserted between B2 and D2 (document order checked below)
        {"A2": [(None, "T-1")], "B2": [("7", "100")], "C2": [("8", "")], "D2": [(None, "3")], "E2": [(None, "1")]},
    ),
    (
        "SpreadsheetML under the prefix x (the tool's cells and rows under it too)",
        _prefixed(_part(R1 + b'<row r="2"><c r="A2"><v>5</v></c><c r="D2"><v>6</v></c></row>'), b"x"),
        {2: E2, 3: b'<c r="E3" t="inlineStr"><is><t xml:space="preserve"> OK</t></is></c>'},
        {2: {2: 8}},
        [_prefixed(R1, b"x"), b'<x:c r="A2"><x:v>5</x:v></x:c>'],
        {"A2": [(None, "5")], "C2": [("8", "")], "D2": [(None, "6")], "E2": [(None, "1")], "E3": [(None, " OK")]},
    ),
    (
        "the prefix bound on the rows element, another sheetData in another namespace in the head",
        HEAD
        + b'<sheetPr><extLst><ext uri="u"><o:sheetData xmlns:o="urn:not-excel"><o:row/></o:sheetData></ext></extLst></sheetPr>'
        + b'<y:sheetData xmlns:y="'
        + MAIN.encode()
        + b'">'
        + _prefixed(R1, b"y")
        + b'<y:row r="2"><y:c r="A2"><y:v>5</y:v></y:c></y:row></y:sheetData>'
        + TAIL,
        {2: E2},
        {},
        [_prefixed(R1, b"y"), b'<o:sheetData xmlns:o="urn:not-excel"><o:row/></o:sheetData>'],
        {"A2": [(None, "5")], "E2": [(None, "1")]},
    ),
    (
        "Strict Open XML's namespace",
        _part(R1 + b'<row r="2"><c r="A2"><v>5</v></c><c r="B2" s="3"><v>6</v></c></row>').replace(MAIN.encode(), STRICT.encode()),
        {2: E2},
        {2: {1: 9}},
        [R1],
        {"A2": [(None, "5")], "B2": [("9", "6")], "E2": [(None, "1")]},
    ),
    (
        "cells out of column order, a finding on one of them",
        _part(R1 + b'<row r="2"><c r="D2" s="3"><v>4</v></c><c r="A2"><v>1</v></c><c r="B2"><v>2</v></c></row>'),
        {2: E2},
        {2: {3: 9, 2: 8}},  # D2 exists (first in the row): restyled, never a second D2; C2 exists nowhere: inserted
        [R1, b'<c r="A2"><v>1</v></c><c r="B2"><v>2</v></c>'],
        {"D2": [("9", "4")], "A2": [(None, "1")], "B2": [(None, "2")], "C2": [("8", "")], "E2": [(None, "1")]},
    ),
    (
        "processing instructions and comments between rows and inside a row",
        _part(R1 + b'<?njc keep?><!-- <row r="2"></row> --><row r="2"><c r="A2"><v>5</v></c><!-- </row> --><?pi </row>?></row><?end?>'),
        {2: E2, 3: b'<c r="E3"><v>2</v></c>'},
        {2: {0: 7}},
        [R1, b'<?njc keep?><!-- <row r="2"></row> -->', b"<!-- </row> --><?pi </row>?>", b"<?end?>"],
        {"A2": [("7", "5")], "E2": [(None, "1")], "E3": [(None, "2")]},
    ),
    (
        "end tags with spaces, an empty row written <row/>, a cell without r",
        _part(R1 + b'<row r="2" ><c r="A2" ><v>5</v></c ><c><v>6</v></c ></row ><row r="3"/>'),
        {2: E2, 3: b'<c r="E3"><v>2</v></c>'},
        {2: {1: 7}},
        [R1],
        {"A2": [(None, "5")], None: [("7", "6")], "E2": [(None, "1")], "E3": [(None, "2")]},
    ),
    (
        "a row 0 (Excel counts from 1; the row is the user's, copied as it is)",
        _part(b'<row r="0"><c r="A0"><v>9</v></c></row>' + R1 + b'<row r="2"><c r="A2"><v>5</v></c></row>'),
        {2: E2},
        {},
        [b'<row r="0"><c r="A0"><v>9</v></c></row>', R1],
        {"A0": [(None, "9")], "A2": [(None, "5")], "E2": [(None, "1")]},
    ),
]


@pytest.mark.parametrize("case,part,tails,styles,kept,expected", SPELLINGS, ids=[c[0] for c in SPELLINGS])
@pytest.mark.parametrize("size", [1, 5, 64, None])
def test_any_well_formed_spelling_of_a_sheet(case, part, tails, styles, kept, expected, size):
    """The part read in chunks of any size: it comes back well-formed, with the bytes of what the
    tool does not touch as they were, and the tool's cells (under the sheet's prefix) in place."""
    chunks = [part] if size is None else [part[i : i + size] for i in range(0, len(part), size)]
    out = b"".join(rewrite_stream(chunks, tails, styles))
    got = _cells(out)
    assert got.pop("A1") == [("4", "0")], case  # the untouched row, read back
    assert {ref: got.get(ref) for ref in expected} == expected, case
    assert set(got) == set(expected), case  # no cell written twice, none lost
    for piece in kept:
        assert piece in out, (case, piece)
    if size is None:  # the same bytes, whole or in chunks
        assert out == b"".join(rewrite_stream([part[i : i + 3] for i in range(0, len(part), 3)], tails, styles))


def test_cells_inserted_and_appended_stand_in_column_order_and_under_the_rows_prefix():
    _case, part, tails, styles, _kept, _expected = SPELLINGS[3]  # prefixed
    out = b"".join(rewrite_rows(part, tails, styles))
    row = re.search(rb'<x:row r="2">.*?</x:row>', out).group(0)
    assert row == (
        b'<x:row r="2"><x:c r="A2"><x:v>5</x:v></x:c><x:c r="C2" s="8"/><x:c r="D2"><x:v>6</x:v></x:c>'
        b'<x:c r="E2"><x:v>1</x:v></x:c></x:row>'
    )
    assert b'<x:row r="3"><x:c r="E3" t="inlineStr"><x:is><x:t xml:space="preserve"> OK</x:t></x:is></x:c></x:row></x:sheetData>' in out
    _case, part, tails, styles, _kept, _expected = SPELLINGS[6]  # out of order: C2 before the first cell after it, D2
    out = b"".join(rewrite_rows(part, tails, styles))
    assert (
        b'<row r="2"><c r="C2" s="8"/><c r="D2" s="9"><v>4</v></c><c r="A2"><v>1</v></c><c r="B2"><v>2</v></c><c r="E2"><v>1</v></c></row>'
        in out
    )


@pytest.mark.parametrize(
    "part,message",
    [
        (HEAD + b"<!-- never closed <sheetData></sheetData></worksheet>", "The sheet 'Transfers' is not well-formed XML"),
        (HEAD + b"<sheetData><row r='1'><c r='A1'><v>1</v></c></row>", "The sheet 'Transfers' is not well-formed XML"),
        (
            b'<?xml version="1.0"?><!DOCTYPE worksheet [<!ENTITY a "b">]>' + PART[len(b'<?xml version="1.0" encoding="UTF-8"?>') :],
            "DOCTYPE",
        ),
        (HEAD + b"<cols/></worksheet>", "has no rows element"),
    ],
)
def test_a_part_that_cannot_be_followed_is_refused_naming_the_sheet(part, message):
    """Never a library's exception text: the reason names the sheet and what is wrong."""
    with pytest.raises(Refused, match=re.escape(message)):
        b"".join(rewrite_stream([part], {1: E2}, {}, where="The sheet 'Transfers'"))


@pytest.mark.parametrize(
    "part,dimension",
    [
        (_part(R1), None),  # none added where the sheet has none
        (_part(R1, head=HEAD + b"<dimension ref='A1:G6' />"), b"<dimension ref='A1:Q4' />"),  # a space before />, single quotes
        (
            _part(R1, head=HEAD + b"<!-- <dimension ref='Z9'/> --><dimension ref=\"A1\"/>"),
            b"<!-- <dimension ref='Z9'/> --><dimension ref=\"A1:Q4\"/>",
        ),
        (HEAD + b'<dimension ref="A1"/><sheetData/>' + TAIL, None),
    ],
)
def test_a_generated_sheet_gets_its_rows_after_the_last_row_and_its_dimension(part, dimension):
    """`sheetxml.spliced` (the tool's own sheets): the dimension set and the rows added after the
    last row, by reading the part's tokens."""
    from batch.workbook.sheetxml import spliced

    out = b"".join(spliced(part, iter([b'<row r="4"><c r="Q4"><v>1</v></c></row>']), "A1:Q4"))
    etree.fromstring(out)
    if b"<sheetData/>" in part:  # an empty rows element opened for them
        assert b'<dimension ref="A1:Q4"/>' in out and b'<sheetData><row r="4"><c r="Q4"><v>1</v></c></row></sheetData>' in out
        return
    assert dimension in out if dimension else b"dimension" not in out
    assert re.search(rb'</row><row r="4"><c r="Q4"><v>1</v></c></row></sheetData>', out)  # after the last row


@pytest.mark.parametrize("prefix", [b"x", b"ns0"])
def test_the_dimension_of_a_prefixed_sheet_is_found_by_its_namespace(prefix):
    from batch.workbook.sheetrows import with_dimension

    decoy = b'<o:dimension xmlns:o="urn:other" ref="B2"/>'  # a dimension of another namespace, in an extension
    part = _prefixed(_part(R1, head=HEAD + b"<sheetPr>DECOY</sheetPr><dimension ref='A1'/>"), prefix).replace(b"DECOY", decoy)
    out = with_dimension(part, "A1:Q4")
    etree.fromstring(out)
    assert out == part.replace(prefix + b":dimension ref='A1'/>", prefix + b":dimension ref='A1:Q4'/>") != part


@pytest.mark.parametrize("encoding,mark", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-16-le", b"")])
@pytest.mark.parametrize("size", [1, 7, None])
def test_a_part_in_utf16_is_read_and_written_back_in_utf8(encoding, mark, size):
    """The XML standard allows UTF-16 (Excel never writes it): the part is decoded as it streams,
    and comes back in UTF-8, its declaration saying so."""
    text = PART.decode("utf-8").replace("T-1", "Café ✓").replace('encoding="UTF-8"', 'encoding="UTF-16"')
    data = mark + text.encode(encoding)
    chunks = [data] if size is None else [data[i : i + size] for i in range(0, len(data), size)]
    out = b"".join(rewrite_stream(chunks, {2: E2}, {}))
    assert out == rewrite(text.replace('encoding="UTF-16"', 'encoding="UTF-8"').encode("utf-8"), {2: E2})
    assert out.startswith(b'<?xml version="1.0" encoding="UTF-8"?>') and "Café ✓".encode() in out


def test_every_column_name_maps_to_its_number():
    # the table of reference letters is built from the one-, two- and three-letter names in order:
    # it must give each of Excel's 16,384 columns (A=0, Z=25, AA=26, ZZ=701, AAA=702, XFD=16,383)
    assert _COLUMNS == {column_letters(c).encode(): c for c in range(16_384)}
    assert [_COLUMNS[b] for b in (b"A", b"Z", b"AA", b"ZZ", b"AAA", b"XFD")] == [0, 25, 26, 701, 702, 16_383]


def test_lazy_tails_make_each_block_once_as_the_rows_are_asked_for_in_order():
    # rows 2, 3, 5, 8, 9 in blocks of 2: [2, 3], [5, 8], [9]; row 1 made beforehand (the header)
    made = []

    def make(start, stop):
        made.append((start, stop))
        return [f"<c>{n}</c>".encode() for n in rows[start:stop].tolist()]

    rows = np.array([2, 3, 5, 8, 9], dtype=np.int64)
    tails = LazyTails(rows, make, {1: b"<c>head</c>"}, 2)
    asked = [
        (1, b"<c>head</c>"),
        (2, b"<c>2</c>"),  # the first block made
        (3, b"<c>3</c>"),
        (4, b""),  # not a row of the sheet's: nothing appended
        (5, b"<c>5</c>"),  # the second block
        (7, b""),
        (8, b"<c>8</c>"),
        (9, b"<c>9</c>"),  # the last, short block
        (10, b""),
    ]
    assert [tails.get(n) for n, _ in asked] == [want for _, want in asked]
    assert made == [(0, 2), (2, 4), (4, 5)]
    assert list(tails) == [1, 2, 3, 5, 8, 9]


def test_lazy_tails_asked_for_an_earlier_block_make_it_again():
    rows = np.array([2, 3, 5], dtype=np.int64)
    made = []

    def make(start, stop):
        made.append(start)
        return [str(n).encode() for n in rows[start:stop].tolist()]

    tails = LazyTails(rows, make, {}, 2)
    assert [tails.get(n) for n in (5, 2, 3, 5)] == [b"5", b"2", b"3", b"5"]
    assert made == [2, 0, 2]


def _numbering():
    """A restyle that numbers each (own style, flag) pair as it is first asked for, from 100, as the
    workbook's styles are added to (so the order a row asks in shows in its numbers)."""
    numbers: dict = {}
    return lambda own, flag: numbers.setdefault((own, flag), 100 + len(numbers))


def _both_ways(body: bytes, styles: dict, tail: bytes, tail_at=None, qname=b"row", attrs=b' r="2"', monkeypatch=None):
    """A row rewritten by `_row` as it is, and with every cell read (the restyled cells not found by
    reference), each with its own fresh numbering of new styles."""
    from batch.workbook import sheetrows

    scope = {b"": MAIN.encode(), b"x": MAIN.encode(), b"y": MAIN.encode()}

    def rewritten():
        changes = sheetrows.Changes(styles, restyle=_numbering(), tail_at=tail_at, column_styles={2: 5})
        return sheetrows._row(2, qname, attrs, body, styles, tail, changes, scope)

    fast = rewritten()
    monkeypatch.setattr(sheetrows, "_restyled_in_place", lambda *args: None)
    read = rewritten()
    monkeypatch.undo()
    return fast, read


TAIL_CELLS = b'<c r="E2" t="inlineStr"><is><t>tool</t></is></c>'


@pytest.mark.parametrize(
    "case,body,styles,tail_at,found",
    [
        # found: whether the restyled cells are found by their reference (else every cell is read)
        ("one cell restyled", b'<c r="A2" s="1"><v>1</v></c><c r="B2"><v>2</v></c><c r="C2" t="s"><v>0</v></c>', {1: 7}, 4, True),
        ("two, named out of order", b'<c r="A2" s="1"><v>1</v></c><c r="B2"/><c r="C2" s="3"><v>0</v></c>', {2: 8, 0: 7}, 4, True),
        # new styles numbered in the row's order: A2 asks first (100 for its own 1), B2 next (101)
        ("two new styles, named out of order", b'<c r="A2" s="1"/><c r="B2" s="2"/>', {1: 7, 0: 7}, 4, True),
        ("a blank's new style before the cell after it", b'<c r="A2"/><c r="C2" s="1"/>', {2: 7, 1: 8}, 4, True),
        ("white space between and after", b'\n  <c r="A2"><v>1</v></c>\n  <c r="B2" s="2"><v>2</v></c>\n', {1: 7}, 4, True),
        ("a self-closed cell", b'<c r="A2" s="4"/><c r="B2"><v>2</v></c>', {0: 7}, 4, True),
        ("a style that does not change", b'<c r="A2" s="7"><v>1</v></c>', {0: 7}, 4, True),
        ("attributes after the reference", b'<c r="A2" t="n" s="3" cm="1"><v>1</v></c>', {0: 7}, 4, True),
        ("rich text with a colour", b'<c r="A2" t="inlineStr"><is><r><rPr><color rgb="FF00"/></rPr><t>a</t></r></is></c>', {0: 7}, 4, True),
        ("text that spells a cell", b'<c r="A2" t="inlineStr"><is><t>&lt;c r="B2"</t></is></c><c r="B2"><v>1</v></c>', {1: 7}, 4, True),
        ("cells out of column order", b'<c r="B2"><v>2</v></c><c r="A2"><v>1</v></c>', {0: 7}, 4, True),
        ("no tool columns", b'<c r="A2"><v>1</v></c>', {0: 7}, None, True),
        ("a blank to insert", b'<c r="A2"><v>1</v></c><c r="C2"><v>3</v></c>', {1: 7}, 4, True),
        ("blanks before a cell restyled", b'<c r="A2"><v>1</v></c><c r="D2" s="2"><v>3</v></c>', {2: 8, 1: 7, 3: 9}, 4, True),
        ("a blank after the last cell", b'<c r="A2"><v>1</v></c>  ', {3: 7}, 4, True),
        ("blanks first and last", b'<c r="B2"><v>1</v></c>', {3: 8, 0: 7}, 4, True),
        ("a blank before cells out of order", b'<c r="D2"><v>4</v></c><c r="A2"><v>1</v></c>', {2: 7}, 4, True),
        ("a reference to another row", b'<c r="A2"><v>1</v></c><c r="B3"><v>2</v></c>', {1: 7}, 4, True),
        ("a reference that is a longer column's start", b'<c r="A2"><v>1</v></c><c r="BA2"><v>2</v></c>', {1: 7}, 54, True),
        ("a row of no cells", b"  ", {1: 7}, 4, False),
        ("a cell without its reference", b'<c r="A2"><v>1</v></c><c><v>2</v></c>', {0: 7}, 4, False),
        ("a reference not first", b'<c s="1" r="A2"><v>1</v></c>', {0: 7}, 4, False),
        ("a reference in small letters", b'<c r="a2"><v>1</v></c><c r="B2"><v>2</v></c>', {1: 7}, 4, False),
        ("two spaces before the reference", b'<c  r="A2"><v>1</v></c>', {0: 7}, 4, False),
        ("a tab before the reference", b'<c\tr="A2"><v>1</v></c>', {0: 7}, 4, False),
        ("the same reference twice", b'<c r="A2"><v>1</v></c><c r="A2"><v>2</v></c>', {0: 7}, 4, False),
        ("a cell at the tool's first column", b'<c r="A2"><v>1</v></c><c r="E2"><v>5</v></c>', {0: 7}, 4, False),
        ("a cell after the tool's columns", b'<c r="A2"><v>1</v></c><c r="AA2"><v>5</v></c>', {0: 7}, 4, False),
        ("an element after the last cell", b'<c r="A2"><v>1</v></c><y:z xmlns:y="urn:y"/>', {0: 7}, 4, False),
        ("an element of the root's namespaces after it", b'<c r="A2"><v>1</v></c><y:z/>', {0: 7}, 4, False),
        # a style whose value holds a quote of the other kind and a `>`: a value of its own (the tag goes on)
        ("a style value holding the other quote and >", b'<c r="A2"><v>1</v></c><c r="B2" s="3\'>"><v>1</v></c>', {1: 7}, 4, True),
        ("a cell before it whose style holds the other quote and >", b'<c r="J2" s=\'3">\'/><c r="K2"><v>1</v></c>', {10: 7}, 40, True),
    ],
)
def test_a_restyled_rows_cells_found_by_reference_give_the_row_read_cell_by_cell(case, body, styles, tail_at, found, monkeypatch):
    from batch.workbook import sheetrows

    for tail in (TAIL_CELLS, b""):
        for attrs in (b' r="2"', b' r="2" spans="1:4" s="3" customFormat="1"'):  # a row style is a blank cell's
            fast, read = _both_ways(body, styles, tail, tail_at, attrs=attrs, monkeypatch=monkeypatch)
            assert fast == read, (case, tail, attrs)
        changes = sheetrows.Changes(styles, tail_at=tail_at)
        assert (sheetrows._restyled_in_place(2, b' r="2"', body, styles, changes, b"") is not None) is found, case


@pytest.mark.parametrize(
    "body,found",
    [
        (b'<x:c r="A2" s="1"><x:v>1</x:v></x:c><x:c r="B2"><x:v>2</x:v></x:c>', True),
        (b'<x:c r="A2"><x:v>1</x:v></x:c><x:c r="C2"><x:v>3</x:v></x:c>', True),  # a blank inserted under the prefix
        # cells of the main namespace under another prefix, or none: every cell read
        (b'<x:c r="A2"><x:v>1</x:v></x:c><y:c r="B2"><y:v>2</y:v></y:c><x:c r="C2"><x:v>3</x:v></x:c>', False),
        (b'<x:c r="A2"><x:v>1</x:v></x:c><c r="B2"><v>2</v></c><x:c r="C2"><x:v>3</x:v></x:c>', False),
    ],
)
def test_a_row_under_a_prefix_restyled_by_reference_is_the_row_read_cell_by_cell(monkeypatch, body, found):
    from batch.workbook import sheetrows

    tail = TAIL_CELLS.replace(b"<", b"<x:").replace(b"<x:/", b"</x:")
    fast, read = _both_ways(body, {1: 7}, tail, 4, qname=b"x:row", monkeypatch=monkeypatch)
    assert fast == read and b'c r="B2" s="100"' in fast  # restyled (the first new style), under whichever prefix it has
    assert (sheetrows._restyled_in_place(2, b"", body, {1: 7}, sheetrows.Changes({1: 7}, tail_at=4), b"x:") is not None) is found


def test_a_row_with_a_cell_under_a_prefix_is_read_cell_by_cell():
    from batch.workbook import sheetrows

    body = b'<c r="A2"><v>1</v></c><y:c r="B2"><y:v>2</y:v></y:c>'  # y bound to the main namespace on the root
    assert sheetrows._restyled_in_place(2, b"", body, {0: 7}, sheetrows.Changes({0: 7}, tail_at=4), b"") is None


@pytest.mark.parametrize("tail_at", [0, 1, 4, 25, 26, 27, 51, 52, 700, 701, 702, 703, 16_383])
def test_a_cell_at_or_after_the_tools_first_column_is_found_by_its_reference(tail_at):
    from batch.workbook import sheetrows

    search = sheetrows._from_column(b"", tail_at)
    # every column near the tool's first column, and each letter count's first and last (A, Z, AA, ZZ, AAA, XFD)
    columns = sorted({*range(max(tail_at - 30, 0), min(tail_at + 30, 16_384)), 0, 25, 26, 701, 702, 16_383})
    found = [c for c in columns if search.search(b'<c r="' + column_letters(c).encode() + b'12" s="1">')]
    assert found == [c for c in columns if c >= tail_at]


@pytest.mark.parametrize(
    "body,other",
    [
        (b'<c r="A2"><v>1</v></c><c r="AB2" s="1"/>', False),
        (b'<c r="A2" t="inlineStr"><is><r><rPr><color rgb="FF00"/></rPr><t>a:c b</t></r></is></c>', False),  # ":c " in text
        (b"<c><v>1</v></c>", True),
        (b'<c s="1" r="A2"/>', True),
        (b'<c  r="A2"/>', True),
        (b'<c\nr="A2"/>', True),
        (b'<c r="a2"/>', True),
        (b'<c r="$A$2"/>', True),
        (b"<c r='A2'/>", True),
        (b'<c r="A2"/><y:c r="B2"/>', True),
        (b'<c r="A2"/><y:c\tr="B2"/>', True),
        (b'<c r="A2"/><y:cell r="B2"/>', False),  # another element, not a cell
    ],
)
def test_a_cell_not_spelled_with_its_reference_first_is_found_by_either_search(body, other):
    from batch.workbook import sheetrows

    assert sheetrows._other_cell(body, b"") is other
    assert (sheetrows._referenced(b"")[1].search(body) is not None) is other  # the one search, for a row under a prefix


def _random_row(rng, prefix: bytes) -> bytes:
    """A row's content of up to eight cells, in column order or not, most of them spelled as every
    program writes them and some not (a reference in small letters, of another row, in single
    quotes, after the style, after two spaces or a tab, or none), with white space between them."""
    cells = []
    columns = sorted(rng.sample(range(40), rng.randint(0, 8)))
    if rng.random() < 0.2:
        rng.shuffle(columns)
    for col in columns + ([rng.choice(columns)] if columns and rng.random() < 0.1 else []):
        ref = column_letters(col).encode() + b"2"
        odd = [b" r='%s'" % ref, b' r="%s"' % ref.lower(), b"", b' r="%s9"' % ref[:-1], b'  r="%s"' % ref, b'\tr="%s"' % ref]
        r = rng.choice([b' r="%s"' % ref] * 40 + odd)
        attrs = r + rng.choice([b"", b' s="3"', b" s='4'"]) if rng.random() < 0.97 else b' s="3"' + r
        c, v, t = prefix + b"c", prefix + b"v", prefix + b"t"
        inner = rng.choice([b"", b"<%s>1</%s>" % (v, v), b'<%sis><%s>a&lt;c r="B2" x:c y</%s></%sis>' % (prefix, t, t, prefix)])
        cells.append(rng.choice([b"", b" ", b"\n  "]) + (b"<%s%s/>" % (c, attrs) if not inner else b"<%s%s>%s</%s>" % (c, attrs, inner, c)))
    body = b"".join(cells) + rng.choice([b"", b"\n"])
    return body + (rng.choice([b"<y:z/>", b'<y:c r="AZ2"/>', b"<foo/>"]) if rng.random() < 0.05 else b"")


def test_random_rows_restyled_by_reference_are_the_rows_read_cell_by_cell(monkeypatch):
    import random

    from batch.workbook import sheetrows

    rng = random.Random(29)
    taken = 0
    for _ in range(3_000):
        prefix = rng.choice([b""] * 5 + [b"x:"])
        body = _random_row(rng, prefix)
        styles = {c: rng.choice([7, 8, 9]) for c in rng.sample(range(42), rng.randint(1, 4))}
        tail_at = rng.choice([None, 40, 41, 45, 26, 30])  # most after every cell; some before a few
        attrs = rng.choice([b' r="2"', b' r="2" spans="1:9"', b' r="2" s="5" customFormat="1"'])
        tail = rng.choice([b"", b'<%sc r="ZZ2"><%sv>1</%sv></%sc>' % (prefix, prefix, prefix, prefix)])
        column_styles = rng.choice([{}, {5: 2, 40: 6}])
        changes_of = functools.partial(sheetrows.Changes, styles, tail_at=tail_at, column_styles=column_styles)
        changes = changes_of(restyle=_numbering())  # each way numbers its new styles afresh
        scope = {b"": MAIN.encode(), b"x": MAIN.encode(), b"y": MAIN.encode()}
        fast = sheetrows._row(2, prefix + b"row", attrs, body, styles, tail, changes, scope)
        taken += (
            sheetrows._plain(body)
            and sheetrows._restyled_in_place(2, sheetrows._without(attrs, b"spans"), body, styles, changes, prefix) is not None
        )
        with monkeypatch.context() as m:
            m.setattr(sheetrows, "_restyled_in_place", lambda *args: None)
            assert fast == sheetrows._row(2, prefix + b"row", attrs, body, styles, tail, changes_of(restyle=_numbering()), scope), (
                body,
                styles,
                tail_at,
                attrs,
                tail,
            )
    assert taken > 900  # about a third of the rows took the search (1,059), the rest were read cell by cell


def _random_rows(rng) -> tuple[bytes, list[int]]:
    """Rows 2 to about 40 of a sheet, in order, some missing, most spelled as every program writes
    them (`<row r="7">`, the reference first) and some not: spans, the reference after another
    attribute or in single quotes, a space before `>`, a space in the end tag, `<row/>`, a namespace
    declared on the row, a comment, CDATA section or processing instruction inside a row or between
    rows, text holding `!`, `?` and a row's end tag as escaped text; with the numbers of the rows."""
    out, numbers = [], []
    for n in range(2, rng.randint(3, 40)):
        if rng.random() < 0.2:
            continue
        numbers.append(n)
        ref = b"%d" % n
        attrs = rng.choice(
            [b' r="%s"' % ref] * 12
            + [b' r="%s" spans="1:4"' % ref, b' spans="1:4" r="%s"' % ref, b" r='%s'" % ref, b' r="%s" ' % ref, b' r = "%s"' % ref]
            + [b' r="%s" xmlns:q="urn:q"' % ref]
        )
        cells = []
        for k in sorted(rng.sample(range(6), rng.randint(0, 4))):
            at = column_letters(k).encode() + ref
            cells.append(
                rng.choice(
                    [
                        b'<c r="%s"><v>%d</v></c>' % (at, k),
                        b'<c r="%s" s="2"/>' % at,
                        b'<c r="%s" t="inlineStr"><is><t>Hi! Why? &lt;/row&gt; &lt;/rows&gt;</t></is></c>' % at,
                    ]
                )
            )
        inside = rng.choice([b""] * 12 + [b"<!-- </row> -->", b"<![CDATA[ </row> ]]>", b"<?pi </row>?>"])
        close = rng.choice([b"</row>"] * 8 + [b"</row >"])
        between = rng.choice([b""] * 10 + [b"\n", b"<!-- a note -->", b"<?pi?>"])
        empty = rng.random() < 0.05
        out.append(between + (b"<row%s/>" % attrs if empty else b"<row%s>%s%s%s" % (attrs, b"".join(cells), inside, close)))
    return b"".join(out), numbers


@pytest.mark.parametrize("inside", [b"</row x>", b"</row/>", b"</row />", b'</row a="b">', b"</row\n/>", b"</rowBreaks>", b"</row >"])
def test_what_begins_like_a_rows_end_tag_inside_it_is_read_as_the_token_reader_reads_it(monkeypatch, inside):
    """`</row x>` inside a row is no end tag: the part is refused, whether or not the row looks plain;
    `</rowBreaks>` is another element's end, and `</row >` the row's own end tag."""
    from batch.workbook import sheetrows

    part = _part(R1 + b'<row r="2"><c r="A2"/>' + inside + b"</row>")
    for tails in ({}, {2: E2}):
        outcomes = []
        for plain in (True, False):
            with monkeypatch.context() as m:
                if not plain:
                    m.setattr(sheetrows, "_plain_row", lambda prefix: re.compile(rb"(?!)"))
                try:
                    outcomes.append(b"".join(rewrite_stream([part], tails, {}, sheetrows.Changes({}, tail_at=6))))
                except Refused as err:
                    outcomes.append(str(err))
        assert outcomes[0] == outcomes[1], (inside, tails, outcomes)


def test_random_rows_read_whole_are_the_rows_read_token_by_token(monkeypatch):
    """A plain row is read by one expression (`_plain_row`); every row, plain or not, comes back as
    the token-by-token reading gives it: the same bytes, in chunks of any size, under a prefix or none."""
    import random

    from batch.workbook import sheetrows

    rng = random.Random(2026)
    plain = 0
    for _ in range(400):
        rows, numbers = _random_rows(rng)
        part = _part(rows) if rng.random() < 0.7 else _prefixed(_part(rows), b"x")
        plain += len(sheetrows._plain_row(b"").findall(rows))
        tails = {n: b'<c r="G%d"><v>1</v></c>' % n for n in numbers if rng.random() < 0.8}
        tails.update({n: b'<c r="G%d"><v>2</v></c>' % n for n in rng.sample(range(2, 45), 3)})  # rows the sheet lacks too
        styles = {n: {k: rng.choice([7, 8]) for k in rng.sample(range(6), rng.randint(1, 2))} for n in numbers if rng.random() < 0.5}
        size = rng.choice([3, 17, 64, 1 << 20])
        chunks = [part[i : i + size] for i in range(0, len(part), size)]
        whole = b"".join(rewrite_stream(chunks, tails, styles, sheetrows.Changes(styles, tail_at=6)))
        with monkeypatch.context() as m:
            m.setattr(sheetrows, "_plain_row", lambda prefix: re.compile(rb"(?!)"))  # no row is plain
            tokens = b"".join(rewrite_stream(chunks, tails, styles, sheetrows.Changes(styles, tail_at=6)))
        assert whole == tokens, (size, part)
    assert plain > 3_000  # most rows were plain


def test_a_row_whose_extension_list_holds_a_row_of_another_vocabulary_ends_at_its_own_end_tag():
    """Row 1's extension list holds `<row></row>`: the tool's cells of row 1 go after its last cell,
    before its extension list (which the schema puts after the cells), and those of row 2 into row 2."""
    row1 = b'<row r="1"><c r="A1"><v>1</v></c><extLst><ext uri="u"><row></row></ext></extLst></row>'
    part = HEAD + b"<sheetData>" + row1 + b'<row r="2"><c r="A2"><v>2</v></c></row></sheetData>' + TAIL
    out = rewrite(part, {1: b'<c r="D1"><v>7</v></c>', 2: b'<c r="D2"><v>8</v></c>'})
    assert row1.replace(b"</v></c><extLst>", b'</v></c><c r="D1"><v>7</v></c><extLst>') in out
    assert b'<row r="2"><c r="A2"><v>2</v></c><c r="D2"><v>8</v></c></row></sheetData>' in out


@pytest.mark.parametrize("block", [1, 2, 3, 1_000])
@pytest.mark.parametrize("asked", ["in order", "backwards", "shuffled"])
def test_the_flagged_cells_made_a_block_of_rows_at_a_time_are_the_flagged_cells(block, asked):
    # 40 flagged cells over rows 2 to 60 (some rows with several, in the order found, some with
    # none): each row's {column: flag} is the dict made at once by `setdefault` in the order found,
    # whatever order the rows are asked in and however many rows a block holds; a row without one
    # gets the default; the rows listed are those flagged, in order
    rng = np.random.default_rng(7)
    rows = rng.integers(2, 61, size=40)
    columns = rng.permutation(40) % 9  # a cell once: (row, column) pairs may repeat only across rows
    pairs = list(dict.fromkeys(zip(rows.tolist(), columns.tolist(), strict=True)))
    rows = np.array([r for r, _ in pairs], dtype=np.int64)
    columns = np.array([c for _, c in pairs], dtype=np.int64)
    flags = np.array([("error", "warning")[i % 2] for i in range(len(pairs))], dtype=object)
    whole: dict[int, dict[int, str]] = {}
    for r, c, f in zip(rows.tolist(), columns.tolist(), flags.tolist(), strict=True):
        whole.setdefault(r, {})[c] = f
    lazy = LazyFlags(rows, columns, flags, block)
    numbers = list(range(1, 63))
    order = {"in order": numbers, "backwards": numbers[::-1], "shuffled": rng.permutation(numbers).tolist()}[asked]
    for n in order:
        got = lazy.get(n, {})
        assert got == whole.get(n, {}) and list(got.items()) == list(whole.get(n, {}).items()), n
    assert list(lazy) == sorted(whole) and bool(lazy)
    assert not LazyFlags(rows[:0], columns[:0], flags[:0], block)
