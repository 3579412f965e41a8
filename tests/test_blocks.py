"""A large sheet read by blocks of rows (batch.workbook.blocks): calamine's values, where calamine's
whole read puts them, in every spelling a sheet part may have; and the same result from the reader.

Each case is read whole by python-calamine and by blocks of 1, 2 and 3 rows (a block boundary
after every row, and between every pair of rows somewhere); the two grids must be equal value for
value and type for type (1 and 1.0, a date and its serial number, '' and an empty cell)."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import python_calamine
from test_in_place import SHEET, SHEET_SPELLINGS, WRITER_SPELLINGS, _edited, _titled_book
from test_tool_sheets import AS_OF

from batch.pipeline import process
from batch.workbook import reading
from batch.workbook.blocks import NotByBlocks, RowsNotInOrder, one_object_each, sheet_grid
from batch.workbook.opened import Opened
from batch.workbook.safety import sheet_parts
from validators.coerce import ExcelError

ROOT = Path(__file__).resolve().parents[1]
MAIN = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"
SIZES = (1, 2, 3)


def _typed(grid: list[list]) -> list[list]:
    return [[(type(v).__name__, v) for v in row] for row in grid]


def _both(path: Path, size: int) -> tuple[list[list], list[list]]:
    """(calamine's whole read, the read by blocks of `size` rows) of the workbook's first sheet."""
    with Opened(path) as opened:
        parts = sheet_parts(opened)
        name, part = next(iter(parts.items()))
        blocks = sheet_grid(opened, name, part, list(parts.values()), size)
    whole = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name(name).to_python(skip_empty_area=False)
    return whole, blocks


OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE = "http://schemas.openxmlformats.org/package/2006"
TYPES = "application/vnd.openxmlformats-officedocument.spreadsheetml"


def _rels(*targets: tuple[str, str]) -> bytes:
    listed = "".join(f'<Relationship Id="rId{i}" Type="{OFFICE}/{kind}" Target="{t}"/>' for i, (kind, t) in enumerate(targets, 1))
    return f'<?xml version="1.0"?><Relationships xmlns="{PACKAGE}/relationships">{listed}</Relationships>'.encode()


def _package(path: Path, rows: bytes, head: bytes = b"", shared: list[str] = (), tail: bytes = b"", prolog: bytes = b"") -> Path:
    """A workbook of two sheets whose first sheet holds `rows` (its rows element's content, as
    written) after `head` (elements before the rows element), with a date style (1) and the shared
    strings `shared`; its merged range after the rows, then `tail`; `prolog` before its root."""
    main = MAIN.decode()
    overrides = {"workbook": "sheet.main", "worksheets/sheet1": "worksheet", "worksheets/sheet2": "worksheet"}
    overrides |= {"styles": "styles", "sharedStrings": "sharedStrings"}
    types = "".join(f'<Override PartName="/xl/{p}.xml" ContentType="{TYPES}.{t}+xml"/>' for p, t in overrides.items())
    sst = "".join(f"<si><t>{s}</t></si>" for s in shared)
    files = {
        "[Content_Types].xml": f'<?xml version="1.0"?><Types xmlns="{PACKAGE}/content-types">'
        f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        f'<Default Extension="xml" ContentType="application/xml"/>{types}</Types>'.encode(),
        "_rels/.rels": _rels(("officeDocument", "xl/workbook.xml")),
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook xmlns="{main}" xmlns:r="{OFFICE}"><sheets>'
        '<sheet name="Ledger" sheetId="1" r:id="rId1"/><sheet name="Other" sheetId="2" r:id="rId2"/></sheets></workbook>'.encode(),
        "xl/_rels/workbook.xml.rels": _rels(
            ("worksheet", "worksheets/sheet1.xml"),
            ("worksheet", "worksheets/sheet2.xml"),
            ("styles", "styles.xml"),
            ("sharedStrings", "sharedStrings.xml"),
        ),
        "xl/styles.xml": f'<?xml version="1.0"?><styleSheet xmlns="{main}">'
        '<cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>'.encode(),
        "xl/sharedStrings.xml": f'<?xml version="1.0"?><sst xmlns="{main}">{sst}</sst>'.encode(),
        "xl/worksheets/sheet1.xml": b'<?xml version="1.0"?>'
        + prolog
        + f'<worksheet xmlns="{main}">'.encode()
        + head
        + b"<sheetData>"
        + rows
        + b'</sheetData><mergeCells count="1"><mergeCell ref="A1:B1"/></mergeCells>'
        + tail
        + b"</worksheet>",
        "xl/worksheets/sheet2.xml": f'<?xml version="1.0"?><worksheet xmlns="{main}"><sheetData>'
        '<row r="1"><c r="A1"><v>9</v></c></row></sheetData></worksheet>'.encode(),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def _n(ref: str, value: str, t: str = "", s: str = "") -> str:
    """A cell with a value, of type `t`, in style `s`."""
    return f'<c r="{ref}"' + (f' t="{t}"' if t else "") + (f' s="{s}"' if s else "") + f"><v>{value}</v></c>"


def _s(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'


# (case, the rows element's content, the shared strings)
SHAPES = [
    (
        "values of every type",
        f'<row r="1">{_s("A1", "ID")}{_n("B1", "0", t="s")}</row>'
        f'<row r="2">{_n("A2", "1")}{_n("B2", "2.5")}{_n("C2", "46000", s="1")}{_n("D2", "1", t="b")}'
        f'{_n("E2", "#N/A", t="e")}<c r="F2" t="str"><f>A2</f><v>1</v></c>{_s("G2", "")}</row>',
        ["shared"],
    ),
    (
        "cells without a reference",
        f'<row r="1"><c t="inlineStr"><is><t>a</t></is></c><c><v>1</v></c></row><row r="2"><c><v>2</v></c></row>'
        f'<row r="3">{_n("C3", "3")}</row><row r="7">{_n("C7", "3")}</row><row r="9"><c r="B9"><v>4</v></c></row>'
        f'<row r="10">{_n("A10", "5")}</row><row r="11"><c r="B11"><v>6</v></c></row>',
        [],
    ),
    (
        "gaps, self-closing rows, empty rows at a block's start and a styled empty cell at the edge",
        f'<row r="2"/><row r="3" s="1" customFormat="1"/><row r="5">{_n("D5", "1")}<c r="H5" s="1"/></row>'
        f'<row r="6"/><row r="9">{_n("B9", "2")}</row><row r="10"/><row r="11"/><row r="12">{_n("F12", "3")}</row>',
        [],
    ),
    (
        "a leading empty column, rows narrower and wider than others",
        f'<row r="1">{_n("C1", "1")}</row><row r="2">{_n("B2", "1")}{_n("E2", "2")}</row><row r="3">{_n("D3", "3")}</row>',
        [],
    ),
    (
        "comments and processing instructions between rows",
        f'<row r="1">{_n("A1", "1")}</row><!-- <row r="2"><c r="A2"><v>5</v></c></row> --><?pi x?>'
        f'<row r="3">{_n("A3", "3")}</row><?pi <row r="4"/> ?><row r="5">{_n("A5", "5")}</row>',
        [],
    ),
    (
        "a row holding a namespace declaration and its own extensions",
        f'<row r="1" xmlns:q="urn:q">{_n("A1", "1")}<extLst><ext uri="q"/></extLst></row><row r="2">{_n("B2", "2")}</row>',
        [],
    ),
    ("no value at all", '<row r="1"><c r="A1" s="1"/></row><row r="2"/>', []),
    (
        "a row's extension list holding a row of another vocabulary",
        f'<row r="1">{_n("A1", "1")}<extLst><ext uri="u"><row></row></ext></extLst></row>'
        f'<row r="2">{_n("A2", "2")}{_n("B2", "#N/A", t="e")}</row>',
        [],
    ),
]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("case,rows,shared", SHAPES, ids=[c[0] for c in SHAPES])
def test_a_sheet_read_by_blocks_gives_calamines_values_where_its_whole_read_puts_them(tmp_path, case, rows, shared, size):
    path = _package(tmp_path / "book.xlsx", rows.encode(), b'<dimension ref="A1:H12"/>', shared)
    whole, blocks = _both(path, size)
    assert _typed(blocks) == _typed(whole), case


SPELLED = [(c[0], c[1]) for c in SHEET_SPELLINGS + WRITER_SPELLINGS]
# calamine reads a part in UTF-16 as an empty sheet and refuses a row 0: such a sheet is read whole, as before
READ_WHOLE = {"the sheet written in UTF-16 (comes back in UTF-8)": NotByBlocks, "a row 0 above the title": python_calamine.CalamineError}


def _spelled(tmp_path: Path, edit) -> Path:
    return _edited(_titled_book(tmp_path / "made" / "t.xlsx"), tmp_path / "in" / "t.xlsx", lambda n, d: edit(d) if n == SHEET else d)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("case,edit", [c for c in SPELLED if c[0] not in READ_WHOLE], ids=[c[0] for c in SPELLED if c[0] not in READ_WHOLE])
def test_every_spelling_the_writer_reads_is_read_by_blocks_as_calamine_reads_it_whole(tmp_path, case, edit, size):
    whole, blocks = _both(_spelled(tmp_path, edit), size)
    assert len(whole) >= 4 and _typed(blocks) == _typed(whole), case


@pytest.mark.parametrize("case,edit", [c for c in SPELLED if c[0] in READ_WHOLE], ids=[c[0] for c in SPELLED if c[0] in READ_WHOLE])
def test_a_sheet_calamine_does_not_read_by_blocks_as_it_reads_it_whole_is_read_whole(tmp_path, monkeypatch, case, edit):
    src = _spelled(tmp_path, edit)
    with Opened(src) as opened:
        with pytest.raises(READ_WHOLE[case]):
            sheet_grid(opened, "Transfers", SHEET, [SHEET], 2)
        monkeypatch.setattr(reading, "BLOCKS_FROM_BYTES", 0)
        assert reading._block_grid(opened, "Transfers") is None, case


NUMBERLESS = f'<row r="1">{_n("A1", "1")}</row><row>{_n("A2", "2")}</row><row><c><v>3</v></c></row><row r="7">{_n("C7", "7")}</row>'


def test_a_row_without_its_number_is_read_by_blocks_unless_it_would_begin_one(tmp_path, monkeypatch):
    """Rows 2 and 3 have no number: calamine numbers each by the row before it. In blocks of 3
    (rows 1 to 3, then row 7) that row is in the block; in blocks of 2 row 3 would begin one, and
    the reader reads the sheet whole."""
    path = _package(tmp_path / "book.xlsx", NUMBERLESS.encode())
    whole, blocks = _both(path, 3)
    assert _typed(blocks) == _typed(whole) and len(whole) == 7
    with Opened(path) as opened, pytest.raises(NotByBlocks):
        sheet_grid(opened, "Ledger", "xl/worksheets/sheet1.xml", ["xl/worksheets/sheet1.xml"], 2)
    monkeypatch.setattr(reading.blocks, "sheet_grid", lambda *a: sheet_grid(*a, rows=2))
    monkeypatch.setattr(reading, "BLOCKS_FROM_BYTES", 0)
    with Opened(path) as opened:
        assert reading._block_grid(opened, "Ledger") is None


def test_rows_out_of_order_across_blocks_are_read_whole(tmp_path, monkeypatch):
    """Row 2 listed after row 3: within one block calamine puts it in its place, as its whole read
    does; in blocks of 1 the block of row 2 comes after row 3's, and the reader reads the sheet whole."""
    rows = f'<row r="1">{_n("A1", "1")}</row><row r="3">{_n("A3", "3")}</row><row r="2">{_n("A2", "2")}</row>'
    path = _package(tmp_path / "book.xlsx", rows.encode())
    whole, blocks = _both(path, 3)
    assert _typed(blocks) == _typed(whole) == _typed([[1.0], [2.0], [3.0]])
    with Opened(path) as opened, pytest.raises(RowsNotInOrder):
        sheet_grid(opened, "Ledger", "xl/worksheets/sheet1.xml", ["xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml"], 1)
    monkeypatch.setattr(reading.blocks, "sheet_grid", lambda *a: sheet_grid(*a, rows=1))
    monkeypatch.setattr(reading, "BLOCKS_FROM_BYTES", 0)
    with Opened(path) as opened:
        assert reading._block_grid(opened, "Ledger") is None
        assert reading._block_grid(opened, "Other") == [[9.0]]  # its other sheet: read by blocks


# what calamine reads otherwise by blocks than whole: the sheet is read whole
NOT_BY_BLOCKS = [
    (
        "an element named sheetData in a row's extension list (calamine stops reading there)",
        f'<row r="1">{_n("A1", "1")}</row>'
        f'<row r="2">{_n("A2", "2")}<extLst><ext uri="u"><o:sheetData xmlns:o="urn:o"/></ext></extLst></row>'
        f'<row r="3">{_n("A3", "3")}</row>',
    ),
    ("a cell outside any row, after the last", f'<row r="1">{_n("A1", "1")}</row><c r="D9" t="e"><v>#N/A</v></c>'),
    ("a cell without a reference outside any row", f'<row r="1"/><c><v>5</v></c><row r="3">{_n("A3", "3")}</row>'),
    ("a row of another namespace among the rows", f'<row r="1"/><row xmlns="urn:o"><c><v>5</v></c></row><row r="3">{_n("A3", "3")}</row>'),
    (
        "an extension list among the rows",
        f'<row r="1">{_n("A1", "1")}</row><extLst><ext uri="u"><row r="5">{_n("A5", "5")}</row></ext></extLst>',
    ),
]


@pytest.mark.parametrize("case,rows", NOT_BY_BLOCKS, ids=[c[0] for c in NOT_BY_BLOCKS])
def test_rows_calamine_would_read_otherwise_in_blocks_are_read_whole(tmp_path, monkeypatch, case, rows):
    path = _package(tmp_path / "book.xlsx", rows.encode())
    with Opened(path) as opened, pytest.raises(NotByBlocks):
        sheet_grid(opened, "Ledger", "xl/worksheets/sheet1.xml", ["xl/worksheets/sheet1.xml"], 1)
    monkeypatch.setattr(reading.blocks, "sheet_grid", lambda *a: sheet_grid(*a, rows=1))
    monkeypatch.setattr(reading, "BLOCKS_FROM_BYTES", 0)
    with Opened(path) as opened:
        assert reading._block_grid(opened, "Ledger") is None, case


def test_a_package_whose_part_names_are_not_written_plainly_is_read_whole(tmp_path):
    """A part named `xl/worksheets/./sheet1.xml` beside `xl/worksheets/sheet1.xml`: a relationship's
    target may lead the two readers to different parts."""
    path = _package(tmp_path / "book.xlsx", f'<row r="1">{_n("A1", "1")}</row>'.encode())
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("xl/worksheets/./sheet1.xml", b"<worksheet/>")
    with Opened(path) as opened, pytest.raises(NotByBlocks):
        sheet_grid(opened, "Ledger", "xl/worksheets/sheet1.xml", ["xl/worksheets/sheet1.xml"], 1)


def _results(path: Path) -> list:
    """Per sheet of the workbook's result: its frames (intake) or grid (another sheet)."""
    result = process(path, as_of=AS_OF)
    try:
        out = [result.findings.astype(str)]
        for s in result.sheets:
            if isinstance(s, reading.OtherSheet):
                out.append(_typed(s.grid))
            else:
                out += [s.sheet.cells.astype(str), s.typed.astype(str), s.computed.astype(str), s.status, s.findings.astype(str)]
        return out
    finally:
        result.discard()


WORKBOOKS = sorted((ROOT / "sample_inputs").glob("*.xlsx")) + [ROOT / "tests" / "fixtures" / "kept.xlsx"]


@pytest.mark.parametrize("path", WORKBOOKS, ids=[p.name for p in WORKBOOKS])
def test_a_workbook_read_by_blocks_gives_the_same_result(monkeypatch, path):
    """Every sheet read by blocks of 2 rows (as a sheet of at least `BLOCKS_FROM_BYTES` is) and read
    whole give the same cells, inputs, computed columns, statuses and findings."""
    whole = _results(path)
    monkeypatch.setattr(reading, "BLOCKS_FROM_BYTES", 0)
    read = []
    real = reading.blocks.sheet_grid
    monkeypatch.setattr(reading.blocks, "sheet_grid", lambda *a: read.append(a[1]) or real(*a, rows=2))
    by_blocks = _results(path)
    assert read, "no sheet was read by blocks"
    assert len(by_blocks) == len(whole)
    for a, b in zip(whole, by_blocks, strict=True):
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b)
        elif isinstance(a, pd.Series):
            pd.testing.assert_series_equal(a, b)
        else:
            assert a == b


def test_the_sheet_part_is_streamed_not_read_whole(tmp_path, monkeypatch):
    """The part reaches the row reader in chunks: a chunk of 64 bytes gives the same grid."""
    path = _package(
        tmp_path / "book.xlsx", "".join(f'<row r="{r}">{_n(f"A{r}", str(r))}{_s(f"B{r}", "x" * r)}</row>' for r in range(1, 40)).encode()
    )
    monkeypatch.setattr("batch.workbook.blocks.CHUNK_BYTES", 64)
    whole, blocks = _both(path, 5)
    assert len(whole) == 39 and _typed(blocks) == _typed(whole)


# -- the cell scan by blocks of rows (batch.workbook.safety.scan_cells) ----------------------------

SCANNED = (
    f'<row r="1">{_s("A1", "ID")}{_s("B1", "Amount")}</row>'
    f'<row r="2">{_n("B2", "10")}<c r="C2"><f>B2*2</f></c><c r="D2" t="e"><v>#DIV/0!</v></c></row>'
    '<!-- <row r="3"><c r="E3"><f>SUM(B1:B2)</f></c></row> -->'
    f'<row r="3">{_n("B3", "5")}<c r="C3"><f t="shared" ref="C3:C5" si="0">SUM(B$2:B2)</f><v>10</v></c></row>'
    '<row r="4"><c r="B4"><v>1</v><extLst><ext uri="x"><c r="Z4"><f>A1</f></c></ext></extLst></c>'
    '<c r="C4"><f t="shared" si="0"/><v>15</v></c></row>'
    '<row r="5"><c r="C5"><f t="shared" si="0"/><v>16</v></c>'
    '<c r="D5" t="inlineStr"><is><t><![CDATA[<c r="F5"><f>X</f></c>]]></t></is></c></row>'
    '<row r="6"><c r="C6" t="e"><f>NA()</f><v>#N/A</v></c><c r="G6"><f>SUM(C2:C5)</f></c></row>'
    f'<?exporter <c r="E7"><f>SUM(B1:B2)</f></c> ?><row r="7">{_n("A7", "7")}</row>'
)


def _scans(monkeypatch, path: Path, size: int):
    """(the scan by blocks of `size` rows, the scan of the whole part) of the workbook's first sheet."""
    from batch.workbook import safety

    monkeypatch.setattr(safety, "SCAN_BLOCK_ROWS", size)
    by_blocks = safety.scan_cells(path)["Ledger"]

    def refuse(*_a):
        raise NotByBlocks("read whole")

    with monkeypatch.context() as m:
        m.setattr(safety, "_scan_by_blocks", refuse)
        return by_blocks, safety.scan_cells(path)["Ledger"]


@pytest.mark.parametrize("size", SIZES)
def test_the_cell_scan_by_blocks_notes_what_the_scan_of_the_whole_part_notes(tmp_path, monkeypatch, size):
    """Errors, formulas without a value, column totals (a shared SUM whose text is in an earlier
    block), cells in comments, processing instructions, CDATA sections and extensions (not cells),
    and the merged ranges after the rows: in blocks of 1, 2 and 3 rows as in the whole part."""
    by_blocks, whole = _scans(monkeypatch, _package(tmp_path / "book.xlsx", SCANNED.encode()), size)
    assert by_blocks == whole
    assert whole.errors == {(1, 3): "#DIV/0!", (5, 2): "#N/A"}
    assert whole.uncalculated == {(1, 2): "=B2*2", (5, 6): "=SUM(C2:C5)"}
    assert whole.sums == {(2, 2), (3, 2), (4, 2), (5, 6)}  # C3:C5, the shared total, and G6
    assert whole.merged == ((0, 0, 0, 1),) and whole.columns == frozenset(range(7)) - {4, 5}


@pytest.mark.parametrize(
    "case,prolog,tail",
    [
        ("a comment before the root naming a prefixed root", "<!-- <x:worksheet> -->", ""),
        ("a processing instruction after the rows holding a merged range", "", '<?keep <mergeCell ref="C3:D4"/> ?>'),
    ],
)
def test_what_stands_around_the_rows_is_scanned_as_in_the_whole_part(tmp_path, monkeypatch, case, prolog, tail):
    rows = f'<row r="1">{_n("A1", "#N/A", t="e")}</row><row r="2"><c r="B2"><f>A1</f></c></row>'
    path = _package(tmp_path / "book.xlsx", rows.encode(), tail=tail.encode(), prolog=prolog.encode())
    by_blocks, whole = _scans(monkeypatch, path, 1)
    assert by_blocks == whole and whole.errors == {(0, 0): "#N/A"} and whole.merged == ((0, 0, 0, 1),), case


# (case, what makes the first cell, what makes the second, whether the second becomes the first's
# object); each maker makes a new object every call, as calamine does for every cell
ONE_OBJECT = [
    ("a text", lambda: "".join(["Cam", "den"]), lambda: "".join(["Cam", "den"]), True),
    ("a number", lambda: float("55000.5"), lambda: float("55000.5"), True),
    ("a date", lambda: dt.date(2020, 1, 31), lambda: dt.date(2020, 1, 31), True),
    ("zero and minus zero: equal, not the same number", lambda: float("0"), lambda: float("-0"), False),
    ("zero twice: each left as it is (zero is never looked up)", lambda: float("0"), lambda: float("0"), False),
    ("a number and the bool equal to it", lambda: float("1"), lambda: True, False),
    ("a number and the int equal to it", lambda: float("7"), lambda: int("7"), False),
    ("a date and its midnight", lambda: dt.date(2020, 1, 31), lambda: dt.datetime(2020, 1, 31), False),
    ("a text and the Excel error spelled as it", lambda: "".join(["#N/", "A"]), lambda: ExcelError("#N/A"), False),
    ("not a number twice (never equal)", lambda: float("nan"), lambda: float("nan"), False),
    ("a text and a number", lambda: "".join(["1", "0"]), lambda: float("10"), False),
]


@pytest.mark.parametrize("case,first,second,one", ONE_OBJECT, ids=[c[0] for c in ONE_OBJECT])
def test_a_value_repeated_in_a_block_is_one_object_of_the_very_same_value(case, first, second, one):
    a, b = first(), second()
    rows = [[a, ""], ["", b], [b, a]]
    out = one_object_each(rows)
    # every cell the value it was, of its type, with its sign (repr tells -0.0 from 0.0)
    assert [[(type(v), repr(v)) for v in row] for row in out] == [[(type(v), repr(v)) for v in row] for row in rows], case
    assert out[0][0] is a and out[2][1] is a
    assert (out[1][1] is a) is one and (out[2][0] is a) is one, case


def test_a_sheet_read_by_blocks_holds_a_repeated_value_once_in_each_block(tmp_path):
    rows = "".join(f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>Camden</t></is></c>{_n(f"B{r}", "55000.5")}</row>' for r in range(1, 5))
    path = _package(tmp_path / "book.xlsx", rows.encode())
    whole, blocks = _both(path, 2)
    assert _typed(blocks) == _typed(whole) == [[("str", "Camden"), ("float", 55000.5)]] * 4
    assert blocks[0][0] is blocks[1][0] and blocks[2][0] is blocks[3][0]  # one text a block of 2 rows
    assert blocks[0][1] is blocks[1][1] and blocks[2][1] is blocks[3][1]
    assert whole[0][0] is not whole[1][0]  # calamine's own read: an object a cell
