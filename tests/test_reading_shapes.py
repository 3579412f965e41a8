"""Package shapes that Excel, LibreOffice, Google Sheets and the .NET Open XML SDK write or open,
each made small by hand: every original value reads equal (dates as dates), a sheet that cannot be
read is said by name and the rest is read, and a workbook that cannot be read gets a reason in the
user's words (which part, which sheet, what to do), never a library's exception text."""

from __future__ import annotations

import datetime as dt
import warnings
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import TRANSFER_HEADERS

from batch.pipeline import _specs, _workbook_findings, process
from batch.run.config import load
from batch.run.runner import run_batch
from batch.workbook import safety
from batch.workbook.reading import Workbook, _intake_sheet, read_workbook
from batch.workbook.safety import Refused, inspect
from validators.coerce import ExcelError

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
MAIN_STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
REL_STRICT = "http://purl.oclc.org/ooxml/officeDocument/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
CT = "http://schemas.openxmlformats.org/package/2006/content-types"
HEADERS = [*TRANSFER_HEADERS, "Notes"]
ROW = ["T-1", "Grow NJ", "C-1", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30000.0, 27000.0, 1000000.0, ""]
EPOCH = dt.date(1899, 12, 30)  # serial 46027 = 2026-01-05 (dates after 1900-03-01)
DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def package(
    path: Path,
    *,
    main: str = MAIN,
    rel: str = REL,
    p: str = "",
    q: str = '"',
    strict_dates: bool = False,
    shared: bool = True,
    rows: str | None = None,
    workbook_sheets: str | None = None,
    rels_extra: str = "",
    sheet_target: str = "worksheets/sheet1.xml",
    sheet_part: str = "xl/worksheets/sheet1.xml",
    strings_part: str = "xl/sharedStrings.xml",
    styles_part: str = "xl/styles.xml",
    workbook_pr: str = "",
    extra: dict[str, bytes | str] | None = None,
    rels_prefix: str = "",
    dimension: str = "A1:I2",
    utf16: tuple[str, ...] = (),
) -> Path:
    """A workbook with one Transfers sheet (HEADERS, ROW), written as the options say: `main`/`rel`
    its namespaces (Strict: both purl, and relationship types under the Strict base), `p` a prefix
    for SpreadsheetML (`x`, as the .NET Open XML SDK writes), `q` the attribute quote, dates as
    ISO text cells (`t="d"`, Strict) or serial numbers, text as shared or inline strings; `rows`
    replaces the sheet's rows (XML), `workbook_sheets` the workbook's `<sheet>` elements."""
    x = f"{p}:" if p else ""
    ns = f"xmlns:{p}={q}{main}{q}" if p else f"xmlns={q}{main}{q}"
    types = f"{rel}/"
    strings: list[str] = []

    def cell(ref: str, v) -> str:
        if isinstance(v, str):
            if shared:
                strings.append(v)
                return f"<{x}c r={q}{ref}{q} t={q}s{q}><{x}v>{len(strings) - 1}</{x}v></{x}c>"
            return f"<{x}c r={q}{ref}{q} t={q}inlineStr{q}><{x}is><{x}t>{_esc(v)}</{x}t></{x}is></{x}c>"
        if isinstance(v, dt.date):
            if strict_dates:
                return f"<{x}c r={q}{ref}{q} s={q}1{q} t={q}d{q}><{x}v>{v.isoformat()}</{x}v></{x}c>"
            return f"<{x}c r={q}{ref}{q} s={q}1{q}><{x}v>{(v - EPOCH).days}</{x}v></{x}c>"
        return f"<{x}c r={q}{ref}{q}><{x}v>{v:g}</{x}v></{x}c>"

    if rows is None:
        rows = "".join(
            f"<{x}row r={q}{r}{q}>" + "".join(cell(f"{chr(65 + j)}{r}", v) for j, v in enumerate(values)) + f"</{x}row>"
            for r, values in enumerate([HEADERS, ROW], 1)
        )
    sheet = (
        f"{DECL}<{x}worksheet {ns} xmlns:r={q}{rel}{q}><{x}dimension ref={q}A1:I2{q}/><{x}sheetData>{rows}</{x}sheetData></{x}worksheet>"
    )
    sst = (
        f"{DECL}<{x}sst {ns} count={q}{len(strings)}{q} uniqueCount={q}{len(strings)}{q}>"
        + "".join(f"<{x}si><{x}t>{_esc(s)}</{x}t></{x}si>" for s in strings)
        + f"</{x}sst>"
    )
    a = f"{q}0{q}"
    styles = (
        f"{DECL}<{x}styleSheet {ns}><{x}fonts count={q}1{q}><{x}font><{x}sz val={q}11{q}/><{x}name val={q}Calibri{q}/></{x}font>"
        f"</{x}fonts><{x}fills count={q}1{q}><{x}fill><{x}patternFill patternType={q}none{q}/></{x}fill></{x}fills>"
        f"<{x}borders count={q}1{q}><{x}border/></{x}borders><{x}cellStyleXfs count={q}1{q}><{x}xf numFmtId={a} fontId={a} "
        f"fillId={a} borderId={a}/></{x}cellStyleXfs><{x}cellXfs count={q}2{q}><{x}xf numFmtId={a} fontId={a} fillId={a} "
        f"borderId={a} xfId={a}/><{x}xf numFmtId={q}14{q} fontId={a} fillId={a} borderId={a} xfId={a} applyNumberFormat={q}1{q}/>"
        f"</{x}cellXfs></{x}styleSheet>"
    )
    if workbook_sheets is None:
        workbook_sheets = f"<{x}sheet name={q}Transfers{q} sheetId={q}1{q} r:id={q}rId1{q}/>"
    workbook = f"{DECL}<{x}workbook {ns} xmlns:r={q}{rel}{q}>{workbook_pr}<{x}sheets>{workbook_sheets}</{x}sheets></{x}workbook>"
    relative = {n: n[3:] if n.startswith("xl/") else "/" + n for n in (strings_part, styles_part)}
    wb_rels = (
        f"{DECL}<Relationships xmlns={q}{PKG}{q}>"
        f"<Relationship Id={q}rId1{q} Type={q}{types}worksheet{q} Target={q}{sheet_target}{q}/>"
        f"<Relationship Id={q}rId2{q} Type={q}{types}styles{q} Target={q}{relative[styles_part]}{q}/>"
        + (f"<Relationship Id={q}rId3{q} Type={q}{types}sharedStrings{q} Target={q}{relative[strings_part]}{q}/>" if shared else "")
        + rels_extra
        + "</Relationships>"
    )
    root_rels = (
        f'{DECL}<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{types}officeDocument" '
        f'Target="xl/workbook.xml"/></Relationships>'
    )
    spreadsheet = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    content_types = (
        f'{DECL}<Types xmlns="{CT}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        f'<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{spreadsheet}.sheet.main+xml"/>'
        f'<Override PartName="/{sheet_part}" ContentType="{spreadsheet}.worksheet+xml"/>'
        f'<Override PartName="/{styles_part}" ContentType="{spreadsheet}.styles+xml"/>'
        + (f'<Override PartName="/{strings_part}" ContentType="{spreadsheet}.sharedStrings+xml"/>' if shared else "")
        + "</Types>"
    )
    if rels_prefix:
        wb_rels = (
            wb_rels.replace("<Relationships xmlns=", f"<{rels_prefix}:Relationships xmlns:{rels_prefix}=")
            .replace("<Relationship ", f"<{rels_prefix}:Relationship ")
            .replace("</Relationships>", f"</{rels_prefix}:Relationships>")
        )
    parts = {
        "[Content_Types].xml": content_types,
        "_rels/.rels": root_rels,
        "xl/workbook.xml": workbook,
        "xl/_rels/workbook.xml.rels": wb_rels,
        sheet_part: sheet,
        styles_part: styles,
    }
    if shared:
        parts[strings_part] = sst
    parts.update(extra or {})
    for name in utf16:  # as the XML standard allows: UTF-16 with its byte order mark, and said so
        parts[name] = b"\xff\xfe" + parts[name].replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16-le")
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data.encode() if isinstance(data, str) else data)
    return path


def transfers(path: Path) -> list[list]:
    """The Transfers sheet as read: its header row and rows of cells (kept columns)."""
    book = read_workbook(path, {k: m.schema for k, m in _specs().items()})
    sheet = next(s for s in book.sheets if s.name == "Transfers")
    return [list(sheet.headers), *sheet.cells.astype(object).values.tolist()]


def _same(got: list, want: list) -> bool:
    def norm(v):
        if isinstance(v, dt.datetime) and v.time() == dt.time(0):
            return v.date()  # an ISO date of a Strict cell reads as midnight of that day
        return v

    return [norm(v) for v in got] == [norm(v) for v in want]


# -- every value reads equal ----------------------------------------------------------------------

MACRO_PART = (
    f'{DECL}<xm:macrosheet xmlns="{MAIN}" xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main">'
    '<sheetData><row r="1"><c r="A1" t="str"><f>EXEC("calc")</f><v>x</v></c></row></sheetData></xm:macrosheet>'
)
MACRO_REL = (
    '<Relationship Id="rId9" Type="http://schemas.microsoft.com/office/2006/relationships/xlMacrosheet" Target="macrosheets/sheet1.xml"/>'
)
TWO_SHEETS = '<sheet name="Transfers" sheetId="1" r:id="rId1"/><sheet name="Macro1" sheetId="2" r:id="rId9"/>'

# name -> (options of `package`, why python-calamine might read it wrongly or not at all)
READ_EQUAL = {
    "Excel's own spelling": ({}, "the reference"),
    "prefixed SpreadsheetML": ({"p": "x"}, "the .NET Open XML SDK writes <x:worksheet xmlns:x=...>"),
    "prefixed, inline strings": ({"p": "x", "shared": False}, "<x:is><x:t>"),
    "Strict Open XML": ({"main": MAIN_STRICT, "rel": REL_STRICT, "strict_dates": True}, "purl namespaces, dates as ISO text"),
    "Strict, inline strings": ({"main": MAIN_STRICT, "rel": REL_STRICT, "strict_dates": True, "shared": False}, ""),
    "single-quoted attributes": ({"q": "'"}, "every attribute in single quotes"),
    "prefixed 1904 dates": ({"p": "x", "workbook_pr": '<x:workbookPr date1904="1"/>'}, "the date system under a prefix"),
    "target through ../": ({"sheet_target": "../xl/worksheets/sheet1.xml"}, "calamine looks for xl/../xl/..."),
    "target through ./": ({"sheet_target": "./worksheets/sheet1.xml"}, "calamine looks for xl/./worksheets/..."),
    "sheet part outside worksheets/": ({"sheet_target": "data/sheet1.xml", "sheet_part": "xl/data/sheet1.xml"}, "sheet:type"),
    "shared strings under another name": ({"strings_part": "xl/strings.xml"}, "calamine reads xl/sharedStrings.xml only"),
    "styles under another name": ({"styles_part": "xl/look.xml"}, "without its date format a date reads as a number"),
    "a sheet state Excel does not write": (
        {"workbook_sheets": '<sheet name="Transfers" sheetId="1" state="Visible" r:id="rId1"/>'},
        "Unrecognized sheet:state",
    ),
    "a sheet and its shared strings in UTF-16": (
        {"utf16": ("xl/worksheets/sheet1.xml", "xl/sharedStrings.xml")},
        "calamine reads it as empty",
    ),
    "a workbook part in UTF-16": ({"utf16": ("xl/workbook.xml", "xl/_rels/workbook.xml.rels", "xl/styles.xml")}, ""),
    "a pre-release namespace, its strings under another name": (
        {
            "main": "http://schemas.microsoft.com/office/excel/2006/2",
            "rel": "http://schemas.microsoft.com/office/2006/relationships",
            "strings_part": "xl/sst.xml",
        },
        "as Excel 2007's betas wrote: calamine finds no string (Cell string index not found)",
    ),
    "prefixed relationships": (
        {"rels_prefix": "pr"},
        "<pr:Relationships xmlns:pr=...>, as some Java libraries write them",
    ),
    "a dimension that is no range": ({"dimension": "A1:I0"}, "calamine refuses the sheet: Range is missing the expected row component"),
    "a dimension of row 0": ({"dimension": "A0:I2", "q": "'"}, ""),
    "an Excel 4 macro sheet": (
        {"workbook_sheets": TWO_SHEETS, "rels_extra": MACRO_REL, "extra": {"xl/macrosheets/sheet1.xml": MACRO_PART}},
        "Unrecognized sheet:type",
    ),
}


@pytest.mark.parametrize("case", list(READ_EQUAL))
def test_every_value_reads_equal(tmp_path, case):
    options, why = READ_EQUAL[case]
    path = package(tmp_path / "in.xlsx", **options)
    grid = transfers(path)
    assert grid[0] == HEADERS, why
    # 2026-01-05 as a date (serial 46027 in 1900 dates, 50489 in 1904 dates: the same day either way)
    want = ROW if "1904" not in case else [*ROW[:5], dt.date(2030, 1, 6), *ROW[6:]]
    assert _same(grid[1], want), (why, grid[1])


ROW_SHAPES = {
    # a CDATA section inside an inline string, taken as it stands (its `&amp;` is text)
    "CDATA in an inline string": (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>Transfer ID</t></is></c><c r="B1" t="inlineStr"><is><t>Notes</t></is></c></row>'
        '<row r="2"><c r="A2" t="inlineStr"><is><t><![CDATA[T-1 <b>&amp; co]]></t></is></c>'
        '<c r="B2" t="inlineStr"><is><t>Grow<![CDATA[ NJ]]></t></is></c></row>',
        [["Transfer ID", "Notes"], ["T-1 <b>&amp; co", "Grow NJ"]],
    ),
    "XML comments between rows": (
        '<!-- head --><row r="1"><c r="A1" t="inlineStr"><is><t>Transfer ID</t></is></c></row><!-- <row r=\'5\'> -->'
        '<row r="2"><c r="A2" t="inlineStr"><is><t>T-1</t></is></c></row><!-- tail -->',
        [["Transfer ID"], ["T-1"]],
    ),
    "cells out of order in a row": (
        '<row r="1"><c r="B1" t="inlineStr"><is><t>Program</t></is></c><c r="A1" t="inlineStr"><is><t>Transfer ID</t></is></c></row>'
        '<row r="2"><c r="B2" t="inlineStr"><is><t>Grow NJ</t></is></c><c r="A2" t="inlineStr"><is><t>T-1</t></is></c></row>',
        [["Transfer ID", "Program"], ["T-1", "Grow NJ"]],
    ),
    "end tags with a space": (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>Transfer ID</t></is></c ><c r="B1" t="inlineStr"><is><t>Program</t ></is ></c>'
        '</row ><row r="2"><c r="A2" t="inlineStr"><is><t>T-1</t></is></c ><c r="B2" t="inlineStr"><is><t>Grow NJ</t></is></c></row >',
        [["Transfer ID", "Program"], ["T-1", "Grow NJ"]],
    ),
    # Excel's dynamic-array errors, which calamine does not know: read as the errors they are
    "#SPILL! and #CALC! error values": (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>Transfer ID</t></is></c><c r="B1" t="inlineStr"><is><t>Notes</t></is></c>'
        '<c r="C1" t="inlineStr"><is><t>Program</t></is></c></row>'
        '<row r="2"><c r="A2" t="inlineStr"><is><t>T-1</t></is></c><c r="B2" t="e"><f>SEQUENCE(3)</f><v>#SPILL!</v></c>'
        '<c r="C2" t="e"><v>#CALC!</v></c></row><row r="3"><c r="A3" t="e"><v>#N/A</v></c><c r="B3" t="e"><v>#GETTING_DATA</v></c></row>',
        [["Transfer ID", "Notes", "Program"], ["T-1", "#SPILL!", "#CALC!"], ["#N/A", "#GETTING_DATA", ""]],
    ),
    "empty value elements": (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>Transfer ID</t></is></c><c r="B1" t="inlineStr"><is><t>Notes</t></is></c></row>'
        '<row r="2"><c r="A2" t="inlineStr"><is><t>T-1</t></is></c><c r="B2" s="0"><v></v></c></row>'
        '<row r="3"><c r="A3" t="inlineStr"><is><t>T-2</t></is></c><c r="B3"><v/></c></row>',
        [["Transfer ID", "Notes"], ["T-1", ""], ["T-2", ""]],
    ),
    "empty text cells": (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>Transfer ID</t></is></c><c r="B1" t="inlineStr"><is><t>Notes</t></is></c>'
        '<c r="C1" t="inlineStr"><is><t>Program</t></is></c></row>'
        '<row r="2"><c r="A2" t="inlineStr"><is><t>T-1</t></is></c><c r="B2" t="inlineStr"><is><t/></is></c>'
        '<c r="C2" t="inlineStr"><is><t>Grow NJ</t></is></c></row>',
        [["Transfer ID", "Notes", "Program"], ["T-1", "", "Grow NJ"]],
    ),
}


@pytest.mark.parametrize("case", list(ROW_SHAPES))
def test_rows_written_every_legal_way_read_equal(tmp_path, case):
    rows, want = ROW_SHAPES[case]
    got = transfers(package(tmp_path / "in.xlsx", shared=False, rows=rows))
    assert got == want
    errors = {v for row in got for v in row if isinstance(v, ExcelError)}
    assert errors == {v for row in want for v in row if str(v).startswith("#")}  # error values read as errors


@pytest.mark.parametrize("prefix,utf16", [("", False), ("x", False), ("", True)])
def test_error_values_and_uncalculated_formulas_are_found_under_a_prefix_and_either_quote(tmp_path, prefix, utf16):
    x = f"{prefix}:" if prefix else ""
    rows = (
        f"<{x}row r='1'><{x}c r='A1' t='inlineStr'><{x}is><{x}t>Transfer ID</{x}t></{x}is></{x}c>"
        f"<{x}c r='B1' t='inlineStr'><{x}is><{x}t>Program</{x}t></{x}is></{x}c></{x}row>"
        f"<{x}row r='2'><{x}c r='A2' t='e'><{x}v>#N/A</{x}v></{x}c><{x}c r='B2'><{x}f>SUM(C1:C9)</{x}f></{x}c></{x}row>"
    )
    path = package(tmp_path / "in.xlsx", p=prefix, shared=False, rows=rows, utf16=("xl/worksheets/sheet1.xml",) if utf16 else ())
    notes = safety.scan_cells(path)["Transfers"]
    assert notes.errors == {(1, 0): "#N/A"} and notes.uncalculated == {(1, 1): "=SUM(C1:C9)"} and notes.columns == {0, 1}


HEAD_ROW = "<row r='1'><c r='A1' t='inlineStr'><is><t>Transfer ID</t></is></c><c r='B1' t='inlineStr'><is><t>Program</t></is></c></row>"
# a cell spelled inside a comment, a processing instruction or a CDATA section is text, not a cell
SPELLED = {
    "a comment": ("<!-- was: <c r='Z2'><f>SUM(B1:B9)</f></c><c r='Y2' t='e'><v>#N/A</v></c> -->", {}, {}, {0, 1}),
    "a processing instruction": ("<?exporter <c r='Z2'><f>SUM(B1:B9)</f></c> ?>", {}, {}, {0, 1}),
    "a CDATA section": (
        "<c r='C2' t='inlineStr'><is><t><![CDATA[pasted: </c><c r='Z2'><f>SUM(B1:B9)</f></c>]]></t></is></c>",
        {},
        {},
        {0, 1, 2},
    ),
    # a real formula written in a CDATA section is still read, its text as written
    "a formula in a CDATA section": ("<c r='C2'><f><![CDATA[SUM(B1:B9)&\"<\"]]></f></c>", {(1, 2): '=SUM(B1:B9)&"<"'}, {}, {0, 1, 2}),
    "a real error and formula": (
        "<c r='C2' t='e'><v>#N/A</v></c><c r='D2'><f>SUM(B1:B9)</f></c>",
        {(1, 3): "=SUM(B1:B9)"},
        {(1, 2): "#N/A"},
        {0, 1, 2, 3},
    ),
    # a row's extension list may hold elements of any namespace, a `<c>` of another vocabulary too
    "another vocabulary's <c> in the row's extensions": (
        "<extLst><ext uri='{0}'><audit xmlns='urn:example:audit'><c r='Z2'><f>SUM(B1:B9)</f></c></audit></ext></extLst>",
        {},
        {},
        {0, 1},
    ),
    "the same under a prefix, beside a real cell": (
        "<c r='C2'><v>1</v></c><x14:extLst xmlns:x14='urn:x'><c r='Z2' t='e'><v>#N/A</v></c></x14:extLst>",
        {},
        {},
        {0, 1, 2},
    ),
}


@pytest.mark.parametrize("case", list(SPELLED))
def test_cells_spelled_inside_comments_or_cdata_are_not_cells(tmp_path, case):
    extra, uncalculated, errors, columns = SPELLED[case]
    rows = HEAD_ROW + f"<row r='2'><c r='A2' t='inlineStr'><is><t>T-1</t></is></c><c r='B2'><v>5</v></c>{extra}</row>"
    notes = safety.scan_cells(package(tmp_path / "in.xlsx", shared=False, rows=rows))["Transfers"]
    assert (notes.uncalculated, notes.errors, notes.columns) == (uncalculated, errors, columns)


def test_sum_formulas_spelled_in_a_comment_do_not_make_a_totals_row(tmp_path):
    spelled = "<!-- was: <c r='B2'><f>SUM(B3:B9)</f></c> -->"
    real = "<c r='B3'><f>SUM(B1:B2)</f><v>5</v></c>"
    rows = HEAD_ROW + f"<row r='2'>{spelled}<c r='B2'><v>5</v></c></row><row r='3'>{real}</row>"
    assert safety.scan_cells(package(tmp_path / "in.xlsx", shared=False, rows=rows))["Transfers"].sums == {(2, 1)}


# (cells of rows 2 to 4, the (row, col) 0-based of the cells that add up other rows)
SUM_CELLS = {
    "a SUM of the rows above": ("<c r='B4'><f>SUM(B2:B3)</f><v>9</v></c>", {(3, 1)}),
    "a SUBTOTAL, any case, with _xlfn": ("<c r='C4'><f>_xlfn.subtotal(109,C2:C3)</f><v>9</v></c>", {(3, 2)}),
    "a SUM of its own row's cells is a record's parts": ("<c r='D4'><f>SUM(B4:C4)</f><v>9</v></c>", set()),
    "not a sum": ("<c r='B4'><f>AVERAGE(B2:B3)</f><v>4.5</v></c>", set()),
    "a SUM without a cached value still counts": ("<c r='B4'><f>SUM(B2:B3)</f></c>", {(3, 1)}),
    # filled right: the second cell holds only the shared formula's index; it adds up its own column
    "a shared SUM filled right": (
        "<c r='B4'><f t='shared' ref='B4:C4' si='0'>SUM(B2:B3)</f><v>9</v></c><c r='C4'><f t='shared' si='0'/><v>9</v></c>",
        {(3, 1), (3, 2)},
    ),
    "a shared own-row SUM filled right": (
        "<c r='D4'><f t='shared' ref='D4:E4' si='1'>SUM(B4:C4)</f><v>1</v></c><c r='E4'><f t='shared' si='1'/><v>1</v></c>",
        set(),
    ),
    "a shared index no cell gave text to": ("<c r='B4'><f t='shared' si='7'/><v>9</v></c>", set()),
}


@pytest.mark.parametrize("case", list(SUM_CELLS))
def test_the_cell_scan_finds_the_sums_of_other_rows(tmp_path, case):
    cells, sums = SUM_CELLS[case]
    rows = HEAD_ROW + f"<row r='2'><c r='B2'><v>4</v></c></row><row r='4'>{cells}</row>"
    assert safety.scan_cells(package(tmp_path / "in.xlsx", shared=False, rows=rows))["Transfers"].sums == sums


def _with_tail(path: Path, tail: str, p: str = "") -> Path:
    """The workbook at `path` with `tail` written after its sheet's rows element."""
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    end = f"</{p}:sheetData>" if p else "</sheetData>"
    parts["xl/worksheets/sheet1.xml"] = parts["xl/worksheets/sheet1.xml"].replace(end.encode(), (end + tail).encode())
    with zipfile.ZipFile(path, "w") as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return path


# a range merged across the header row or below it counts as used: the tool's columns never start under
# one (its hidden cells would hold the tool's headers); a title merged above the header does not count
MERGED = {
    # (prefix, tail, merged ranges read (0-based rows and columns), the column the tool's columns start at)
    "none": ("", "", (), 2),
    # a note merged across L1:N1 on the header row: columns 11..13, the tool's from O (14)
    "on the header row": ("", '<mergeCells count="1"><mergeCell ref="L1:N1"/></mergeCells>', ((0, 0, 11, 13),), 14),
    "one cell, single quotes": ("", "<mergeCells count='1'><mergeCell ref='D2'/></mergeCells>", ((1, 1, 3, 3),), 4),
    "below the header": (
        "",
        '<mergeCells count="2"><mergeCell ref="A4:C4"/><mergeCell ref="E2:F3"/></mergeCells>',
        ((3, 3, 0, 2), (1, 2, 4, 5)),
        6,
    ),
    "under a prefix": ("x", '<x:mergeCells count="1"><x:mergeCell ref="C1:D1"/></x:mergeCells>', ((0, 0, 2, 3),), 4),
}


@pytest.mark.parametrize("case", list(MERGED))
def test_a_range_merged_on_or_below_the_header_row_is_used(tmp_path, case):
    prefix, tail, merged, start = MERGED[case]
    x = f"{prefix}:" if prefix else ""
    rows = (
        f"<{x}row r='1'><{x}c r='A1' t='inlineStr'><{x}is><{x}t>Transfer ID</{x}t></{x}is></{x}c>"
        f"<{x}c r='B1' t='inlineStr'><{x}is><{x}t>Program</{x}t></{x}is></{x}c></{x}row>"
        f"<{x}row r='2'><{x}c r='A2' t='inlineStr'><{x}is><{x}t>T-1</{x}t></{x}is></{x}c></{x}row>"
    )
    path = _with_tail(package(tmp_path / "in.xlsx", p=prefix, shared=False, rows=rows), tail, prefix)
    notes = safety.scan_cells(path)["Transfers"]
    assert notes.merged == merged
    spec = _specs()["transfers"].schema
    grid = [["Transfer ID", "Program"], ["T-1", None]]
    assert _intake_sheet("Transfers", grid, spec, 0, None, (), notes.columns, notes.merged).results_at == start


def test_a_title_merged_above_the_header_does_not_move_the_tool_columns():
    spec = _specs()["transfers"].schema
    grid = [["Transfers, November", None], ["Transfer ID", "Program"], ["T-1", None]]
    # A1:T1 merged (columns 0..19) above the header in row 2: the tool's columns still start at C
    assert _intake_sheet("Transfers", grid, spec, 1, None, (), frozenset({0, 1}), ((0, 0, 0, 19),)).results_at == 2


# -- a sheet that cannot be read is named; the rest is read -----------------------------------------

BROKEN = {
    "an empty relationship id": 'r:id=""',
    "no relationship id": "",
    "an id the workbook's relationships do not hold": 'r:id="rId77"',
    "a relationship to a part the package does not hold": 'r:id="rId8"',
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_sheet_whose_relationship_is_broken_is_named_and_the_rest_processed(tmp_path, case):
    sheets = f'<sheet name="Old data" sheetId="2" {BROKEN[case]}/><sheet name="Transfers" sheetId="1" r:id="rId1"/>'
    missing = f'<Relationship Id="rId8" Type="{REL}/worksheet" Target="worksheets/sheet8.xml"/>'
    path = package(tmp_path / "in.xlsx", workbook_sheets=sheets, rels_extra=missing)
    assert _same(transfers(path)[1], ROW)
    result = process(path)
    found = result.findings[result.findings["Code"] == "SHEET_NOT_READABLE"]
    assert len(found) == 1 and found.iloc[0]["Severity"] == "warning"
    message = found.iloc[0]["Message"]
    assert "The sheet Old data could not be read: its relationship in the workbook is broken" in message
    assert "it is left as it is" in message
    assert [r.sheet.name for r in result.intake] == ["Transfers"]


def test_a_workbook_whose_only_sheet_is_broken_says_so(tmp_path):
    path = package(tmp_path / "in.xlsx", workbook_sheets='<sheet name="Transfers" sheetId="1" r:id=""/>')
    with pytest.raises(Refused) as caught:
        process(path)
    assert "found sheets Transfers (which could not be read: its relationship id in the workbook is empty or missing)" in str(caught.value)


def test_an_excel_4_macro_sheet_is_left_out_and_named(tmp_path):
    path = package(tmp_path / "in.xlsm", workbook_sheets=TWO_SHEETS, rels_extra=MACRO_REL, extra={"xl/macrosheets/sheet1.xml": MACRO_PART})
    result = process(path)
    assert [r.sheet.name for r in result.intake] == ["Transfers"]
    assert "Macro1" not in [getattr(s, "name", None) for s in result.sheets]
    found = result.findings[result.findings["Code"] == "MACROS_REMOVED"]
    assert len(found) == 1 and "without the Excel 4 macro sheet Macro1," in found.iloc[0]["Message"]


@pytest.mark.parametrize(
    "options",
    [
        {"sheet_target": "../xl/worksheets/sheet1.xml"},  # a copy made before reading
        {"rows": '<row r="1"><c r="A1" t="e"><v>#SPILL!</v></c></row>', "shared": False},  # a copy made when a sheet failed
    ],
)
def test_a_reading_copy_is_never_left_behind(tmp_path, monkeypatch, options):
    from batch.workbook import readcopy

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    made = []
    monkeypatch.setattr(readcopy, "make", lambda *a, _make=readcopy.make: made.append(_make(*a)) or made[-1])
    path = package(tmp_path / "in.xlsx", **options)
    read_workbook(path, {k: m.schema for k, m in _specs().items()})
    assert len(made) == 1 and list((tmp_path / "tmp").iterdir()) == []
    partial = tmp_path / "out" / "in.annotated.xlsx.partial"
    partial.parent.mkdir()
    read_workbook(path, {k: m.schema for k, m in _specs().items()}, scratch=partial)
    assert made[-1].parent == partial.parent and made[-1].name.startswith(".in.annotated.xlsx.partial.")
    assert list(partial.parent.iterdir()) == [] and list((tmp_path / "tmp").iterdir()) == []


# -- reasons in the user's words ---------------------------------------------------------------------


def _rezip(src: Path, dest: Path, change: dict) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            zout.writestr(info.filename, change[info.filename](data) if info.filename in change else data)
    return dest


def _bad_crc(tmp: Path) -> Path:
    """A sheet part whose stored checksum does not match its contents (bytes changed in place)."""
    path = package(tmp / "crc.xlsx", shared=False)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("xl/worksheets/sheet1.xml")
    with zipfile.ZipFile(path) as z:  # stored, so that a changed byte inflates, with a wrong checksum
        parts = {i.filename: z.read(i.filename) for i in z.infolist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, content in parts.items():
            z.writestr(name, content)
    data = bytearray(path.read_bytes())
    at = data.index(b"Grow NJ")
    data[at : at + 4] = b"Stop"
    path.write_bytes(bytes(data))
    del info
    return path


def _laughs_after(tmp: Path, part: str, padding: int) -> Path:
    """A billion-laughs DOCTYPE placed after `padding` bytes of a comment in `part`."""
    entities = '<!ENTITY a0 "ha">' + "".join(f'<!ENTITY a{i} "{("&a" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
    body = f"{DECL}<!--{'x' * padding}--><!DOCTYPE r [{entities}]><r>&a9;</r>"
    return package(tmp / "laughs.xlsx", extra={part: body})


def _utf16_doctype(tmp: Path) -> Path:
    body = '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE r [<!ENTITY a "b">]><r>&a;</r>'
    return package(tmp / "utf16.xlsx", extra={"docProps/app.xml": b"\xff\xfe" + body.encode("utf-16-le")})


def _doctype_by_content_type(tmp: Path) -> Path:
    """A part named like no XML part, declared XML by its content type (an Override)."""
    path = package(tmp / "ct0.xlsx", extra={"xl/custom/data.bin": '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'})

    def declare(data: bytes) -> bytes:
        return data.replace(b"</Types>", b'<Override PartName="/xl/custom/data.bin" ContentType="application/xml"/></Types>')

    return _rezip(path, tmp / "ct.xlsx", {"[Content_Types].xml": declare})


def _bzip2_part(tmp: Path) -> Path:
    """The sheet part marked compressed with PPMd (method 98, which old zip tools write and Excel
    never does): no reader here inflates it, and the reason names the part."""
    path = package(tmp / "m0.xlsx", shared=False)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("xl/worksheets/sheet1.xml")
    # the method field of the local header and of the central directory entry
    local = info.header_offset + 8
    data[local : local + 2] = (98).to_bytes(2, "little")
    at = data.index(b"xl/worksheets/sheet1.xml", data.index(b"PK\x01\x02"))
    central = data.rindex(b"PK\x01\x02", 0, at)
    data[central + 10 : central + 12] = (98).to_bytes(2, "little")
    out = tmp / "method.xlsx"
    out.write_bytes(bytes(data))
    return out


def _row_zero(tmp: Path) -> Path:
    rows = '<row r="0"><c r="A0" t="inlineStr"><is><t>title</t></is></c></row><row r="1"><c r="A1"><v>1</v></c></row>'
    return package(tmp / "row0.xlsx", shared=False, rows=rows)


def _string_beyond_table(tmp: Path) -> Path:
    rows = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>99</v></c></row>'
    return _rezip(package(tmp / "beta0.xlsx"), tmp / "beta.xlsx", {"xl/worksheets/sheet1.xml": lambda d: _rows(d, rows)})


def _rows(data: bytes, rows: str) -> bytes:
    start, end = data.index(b"<sheetData>") + len(b"<sheetData>"), data.index(b"</sheetData>")
    return data[:start] + rows.encode() + data[end:]


def _case_twins(tmp: Path) -> Path:
    return package(tmp / "twins.xlsx", extra={"xl/worksheets/Sheet1.xml": "<worksheet/>"})


def _two_sheets_one_name(tmp: Path) -> Path:
    sheets = '<sheet name="Transfers" sheetId="1" r:id="rId1"/><sheet name="TRANSFERS" sheetId="2" r:id="rId1"/>'
    return package(tmp / "twice.xlsx", workbook_sheets=sheets)


def _prefixed_size_bomb(tmp: Path) -> Path:
    """A declared extent of every cell of the sheet, under a prefix and in single quotes."""
    rows = "<x:row r='1'><x:c r='A1'><x:v>1</x:v></x:c></x:row>"
    path = package(tmp / "bomb0.xlsx", p="x", shared=False, rows=rows)
    return _rezip(path, tmp / "bomb.xlsx", {"xl/worksheets/sheet1.xml": lambda d: d.replace(b'ref="A1:I2"', b"ref = 'A1:XFD1048576'")})


# name -> (builder, text the reason must hold)
REASONS = {
    "a prefixed sheet declaring every cell": (_prefixed_size_bomb, "declares 1,048,576 rows x 16,384 columns"),
    "a part whose checksum does not match": (_bad_crc, "part xl/worksheets/sheet1.xml of the workbook is damaged (its checksum"),
    "a DOCTYPE after the first 4 KB of docProps/core.xml": (
        lambda t: _laughs_after(t, "docProps/core.xml", 5000),
        "DOCTYPE declaration in docProps/core.xml",
    ),
    "a DOCTYPE in a UTF-16 part": (_utf16_doctype, "DOCTYPE declaration in docProps/app.xml"),
    "a DOCTYPE in a .vml part": (
        lambda t: package(t / "vml.xlsx", extra={"xl/drawings/vmlDrawing1.vml": '<!DOCTYPE x [<!ENTITY a "b">]><x/>'}),
        "DOCTYPE declaration in xl/drawings/vmlDrawing1.vml",
    ),
    "a DOCTYPE in a part whose content type is XML": (_doctype_by_content_type, "DOCTYPE declaration in xl/custom/data.bin"),
    "a part compressed as Excel never does": (_bzip2_part, "part xl/worksheets/sheet1.xml of the workbook is compressed with a method"),
    "a row 0": (_row_zero, "sheet 'Transfers' of row0.xlsx numbers a row 0"),
    "a cell referring to a shared string the table does not hold": (
        _string_beyond_table,
        "sheet 'Transfers' of beta.xlsx: cell B1 refers to shared string 99, but the workbook's shared string table holds 16",
    ),
    "parts whose names differ only in case": (_case_twins, "xl/worksheets/sheet1.xml and xl/worksheets/Sheet1.xml"),
    "two sheets of one name": (_two_sheets_one_name, "two sheets named 'Transfers' and 'TRANSFERS'"),
}
LIBRARY_WORDS = ("Error", "BadZipFile", "CRC-32", "Range is missing", "Cell string index", "Relationship not found", "calamine")


@pytest.mark.parametrize("case", list(REASONS))
def test_a_workbook_that_cannot_be_read_gets_a_reason_in_the_users_words(tmp_path, case):
    builder, text = REASONS[case]
    path = builder(tmp_path)
    with pytest.raises(Refused) as caught:
        process(path)
    reason = str(caught.value)
    assert text in reason, reason
    assert not any(word in reason for word in LIBRARY_WORDS), reason


@pytest.mark.parametrize("shift", [-9, -5, -1, 0])  # `<!DOCTYPE` ends at, or straddles, a chunk's end
def test_a_doctype_split_across_two_chunks_is_found(tmp_path, monkeypatch, shift):
    monkeypatch.setattr(safety, "SCAN_CHUNK", 4096)
    # the DOCTYPE starts after the declaration, `<!--`, the padding and `-->`
    padding = 4096 + shift - len(DECL.encode()) - len("<!---->")
    path = _laughs_after(tmp_path, "docProps/core.xml", padding)
    with zipfile.ZipFile(path) as z:
        assert z.read("docProps/core.xml").index(b"<!DOCTYPE") == 4096 + shift
    with pytest.raises(Refused, match="DOCTYPE declaration in docProps/core.xml"):
        inspect(path)


@pytest.mark.parametrize(
    "error",
    [
        ValueError("subsection not found"),
        AttributeError("'NoneType' object has no attribute 'group'"),
        TypeError("expected string or bytes-like object, got 'NoneType'"),
        KeyError("xl/styles.xml"),
    ],
)
def test_an_unexpected_failure_is_said_without_the_librarys_words(error):
    """What the writers may raise on a shape they do not handle: the reason says what to do, and
    never the exception's class or text."""
    from batch.run.workers import file_reason as _reason

    reason = _reason(error, "odd.xlsx")
    assert reason.startswith("odd.xlsx could not be processed") and "save it again as .xlsx" in reason
    assert type(error).__name__ not in reason and str(error).strip("'") not in reason


def test_the_doctype_search_reads_a_large_part_quickly(tmp_path):
    """The search inflates each XML part once, in chunks; 100 MB of sheet XML took about 0.2 s
    on the reference machine (0.1 s of it inflating), so 8 MB stays far below a second."""
    import time

    rows = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(1, 200_000))
    path = package(tmp_path / "big.xlsx", shared=False, rows=rows)
    started = time.perf_counter()
    assert inspect(path) == "zip"
    assert time.perf_counter() - started < 2


# -- Excel's default password ------------------------------------------------------------------------


def _encrypted(path: Path, password: str) -> Path:
    from msoffcrypto.format.ooxml import OOXMLFile

    # msoffcrypto-tool cannot decrypt what it encrypted from a package under 4 KB (held in the
    # container's mini stream); Excel's own files are larger: the package carries a few KB of properties
    words = "".join(f"<Word{i}>{i * 7919 % 104729}</Word{i}>" for i in range(400))
    app = f'{DECL}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">{words}</Properties>'
    plain = package(path.with_name("plain-" + path.name), extra={"docProps/app.xml": app})
    with open(plain, "rb") as src, open(path, "wb") as out:
        OOXMLFile(src).encrypt(password, out)
    plain.unlink()
    return path


def test_a_workbook_encrypted_with_excels_default_password_is_read_and_returned_unencrypted(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    path = _encrypted(inbox / "protected.xlsx", safety.DEFAULT_PASSWORD)
    assert path.read_bytes().startswith(safety.OLE2_MAGIC)
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1), echo=lambda *_: None)
    got = outcome.files[0]
    assert got.status == "processed", got.reason
    out = Path(got.output)
    assert zipfile.is_zipfile(out)  # not encrypted
    assert _same(transfers(out)[1][:8], ROW[:8])
    import python_calamine

    run = python_calamine.CalamineWorkbook.from_path(str(out)).get_sheet_by_name("Run").to_python()
    said = " ".join(str(v) for row in run for v in row)
    assert "ENCRYPTION_REMOVED" in said and "default password" in said
    leftovers = [p.name for p in outbox.rglob("*") if "decrypted" in p.name or "reading" in p.name]
    assert leftovers == []


def test_a_workbook_encrypted_with_any_other_password_stays_refused(tmp_path):
    path = _encrypted(tmp_path / "locked.xlsx", "secret")
    with pytest.raises(Refused, match="password-protected"):
        process(path, scratch=tmp_path / "partial.xlsx")
    assert [p.name for p in tmp_path.iterdir()] == ["locked.xlsx"]  # no decrypted copy left


def test_the_decrypted_copy_of_a_validated_file_is_removed(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = _encrypted(tmp_path / "protected.xlsx", safety.DEFAULT_PASSWORD)
    result = process(path)
    assert result.source is not None and result.source.exists() and result.path == path
    assert "ENCRYPTION_REMOVED" in set(result.findings["Code"])
    result.discard()
    assert [p.name for p in tmp_path.iterdir()] == ["protected.xlsx"]


# -- the workbook's own findings ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind,not_in_place,severity",
    [
        ("xls", None, "info"),  # a legacy .xls: its values, not its formatting
        ("zip", "its xl/styles.xml is missing", "warning"),  # an .xlsx that could not be kept: written anew
    ],
)
def test_formatting_not_kept_is_a_warning_for_an_xlsx_written_anew(tmp_path, kind, not_in_place, severity):
    book = Workbook(tmp_path / "a.xlsx", kind=kind, name="a.xlsx")
    found = _workbook_findings(book, not_in_place)
    assert list(found["Code"]) == ["FORMATTING_NOT_KEPT"] and list(found["Severity"]) == [severity]
    if not_in_place:
        assert not_in_place in found.iloc[0]["Message"]


# -- text over Excel's cell limit, cut when read (TEXT_TRUNCATED) --------------------------------
# The limit is 32,767 UTF-16 units; a character outside the Basic Multilingual Plane is two units.
EMOJI = "\U0001f600"
LONG_CELLS = [
    # (cell, (length, kept) when cut, None when kept whole)
    ("x" * 32767, None),  # at the limit
    ("x" * 32768, (32768, 32767)),  # one over
    ("x" * 16384, None),  # the first length the check looks at again (over 32,767 // 2)
    (EMOJI * 16383 + "x", None),  # 16,384 characters, 32,767 units: at the limit
    (EMOJI * 16384, (32768, 32766)),  # 32,768 units: the last character, two units, left out whole
    ("x" * 32766 + EMOJI, (32768, 32766)),  # 32,767 characters over the limit by its last one
    (ExcelError("#N/A"), None),
    (12345678901234567890.0, None),  # a number, a date, a bool, a blank: never text to cut
    (dt.datetime(2026, 1, 5), None),
    (True, None),
    (None, None),
]


@pytest.mark.parametrize("cell,cut", LONG_CELLS, ids=[f"{type(c).__name__}-{len(c) if isinstance(c, str) else c}" for c, _ in LONG_CELLS])
def test_text_over_the_cell_limit_is_cut_and_said(cell, cut):
    import pandas as pd

    from batch.workbook.reading import cut_long_text

    frame = pd.DataFrame([["a", 1.0], [None, cell]], dtype=object)  # the cell at grid row 1 (+ first row 10), column 1
    found = cut_long_text(frame, first_row=10)
    if cut is None:
        assert found == [] and frame.iat[1, 1] is cell
    else:
        assert found == [(11, 1, *cut)]
        kept = frame.iat[1, 1]  # what the returned workbook holds: the start of the text, `kept` units long
        assert cell.startswith(kept) and len(kept.encode("utf-16-le")) // 2 == cut[1]
    assert frame.iat[0, 0] == "a" and frame.iat[0, 1] == 1.0 and frame.iat[1, 0] is None


# -- the cell scan beside calamine's read --------------------------------------------------------------
BESIDE = {
    "an error value and a formula without its value": (
        HEAD_ROW + "<row r='2'><c r='A2' t='e'><v>#N/A</v></c><c r='B2'><f>SUM(C1:C9)</f></c></row>",
        "",
    ),
    "the same under a prefix": (
        "<x:row r='1'><x:c r='A1' t='inlineStr'><x:is><x:t>Transfer ID</x:t></x:is></x:c></x:row>"
        "<x:row r='2'><x:c r='A2' t='e'><x:v>#DIV/0!</x:v></x:c><x:c r='B2'><x:f>A2*2</x:f></x:c></x:row>",
        "x",
    ),
    "an error calamine refuses (read from a reading copy)": ('<row r="1"><c r="A1" t="e"><v>#SPILL!</v></c></row>', ""),
}


def _grids_of(path: Path) -> list:
    from batch.workbook.opened import Opened
    from batch.workbook.reading import _grids

    with Opened(path) as opened:
        return [
            (sheet, [[(type(v).__name__, str(v)) for v in row] for row in grid], note)
            for sheet, grid, note in _grids(opened, "zip", path.name)
        ]


@pytest.mark.parametrize("case", [*BESIDE, "transfers-2026-11.xlsx", "beip-brrap-erg-2026-11.xlsx"])
def test_the_cells_scanned_beside_calamines_read_are_those_scanned_before_it(tmp_path, monkeypatch, case):
    from batch.workbook import inthread, reading

    if case in BESIDE:
        rows, prefix = BESIDE[case]
        path = package(tmp_path / "in.xlsx", p=prefix, shared=False, rows=rows)
    else:
        path = Path(__file__).resolve().parent.parent / "sample_inputs" / case
    started, scanned = [], []
    start, scan = inthread._thread.start_new_thread, reading.scan_cells
    monkeypatch.setattr(inthread._thread, "start_new_thread", lambda fn, args: started.append(fn) or start(fn, args))
    monkeypatch.setattr(reading, "scan_cells", lambda opened: scanned.append(1) or scan(opened))
    before = _grids_of(path)  # a small package: scanned before calamine reads
    assert started == [] and len(scanned) == 1
    monkeypatch.setattr(reading, "BESIDE_BYTES", 0)  # every package scanned beside
    assert _grids_of(path) == before
    assert len(started) == 1 and len(scanned) == 2
    assert any(note and (note.errors or note.uncalculated) for _, _, note in before) is (case in BESIDE)


@pytest.mark.parametrize("how", ["never begins", "cannot start", "begins after the read asked"])
def test_a_scan_whose_thread_does_not_begin_is_done_by_the_read_once(tmp_path, monkeypatch, how):
    # a thread that fails to begin (out of memory under a worker's limit) must not keep the read waiting
    from batch.workbook import inthread, reading

    path = package(tmp_path / "in.xlsx", shared=False, rows=BESIDE["an error value and a formula without its value"][0])
    want = _grids_of(path)
    late, scanned = [], []
    scan = reading.scan_cells

    def start(fn, args):
        if how == "cannot start":
            raise RuntimeError("can't start new thread")
        late.append(fn)  # never run, or run once the read has its notes

    monkeypatch.setattr(reading, "BESIDE_BYTES", 0)
    monkeypatch.setattr(inthread._thread, "start_new_thread", start)
    monkeypatch.setattr(reading, "scan_cells", lambda opened: scanned.append(1) or scan(opened))
    assert _grids_of(path) == want
    if how == "begins after the read asked":
        late[0]()  # finds the work taken: does nothing
    assert len(scanned) == 1


def test_a_scan_that_fails_beside_calamine_fails_the_read_as_it_did_before_it(tmp_path, monkeypatch):
    from batch.workbook import reading

    path = package(tmp_path / "in.xlsx", shared=False, rows=BESIDE["an error value and a formula without its value"][0])

    def fails(opened):
        raise MemoryError

    monkeypatch.setattr(reading, "scan_cells", fails)
    for beside in (1 << 40, 0):  # before calamine's read, then beside it
        monkeypatch.setattr(reading, "BESIDE_BYTES", beside)
        with pytest.raises(MemoryError):
            _grids_of(path)


# -- the cells' frame made without pandas' copy of it (reading.frame_of_rows) ----------------------

_WHEN = dt.datetime(2026, 11, 30, 9, 30)
# (case, rows): every kind of value a reader gives, in blocks of 2 rows (FRAME_BLOCK_ROWS below) with a
# last block short; one row; rows of several widths and a cell NumPy would read as a sequence (no
# reader gives either, a CSV's rows are padded: pandas makes them); no columns
FRAMES = {
    "every kind": [
        [1.5, "a", None, _WHEN, "", True],
        [float("nan"), "b", 0, _WHEN.date(), " ", ExcelError("#N/A")],
        ["x", "", None, None, "z", 7],
        [dt.time(9, 30), "=1+1", -0.0, "\u2028", "caf\u00e9", False],
        [2, 3, 4, 5, 6, 7],
    ],
    "one row": [["only", 1]],
    "widths": [["a", "b"], ["c"], ["d", "e", "f"]],
    "no columns": [[], []],
    "a sequence": [["a", ("t", "u")], ["b", "c"]],
}


@pytest.mark.parametrize("case", list(FRAMES))
def test_the_cells_frame_is_pandas_own_and_holds_the_same_values(monkeypatch, case):
    from batch.workbook import reading

    monkeypatch.setattr(reading, "FRAME_BLOCK_ROWS", 2)
    rows = FRAMES[case]
    with warnings.catch_warnings():  # pandas says rows of several widths are deprecated (pandas 4 refuses them)
        warnings.simplefilter("ignore")
        got, want = reading.frame_of_rows([list(r) for r in rows]), pd.DataFrame(rows, dtype=object)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got._mgr.nblocks == want._mgr.nblocks
    # the very values read, each in its place (a value is never made again)
    assert all(a is b for a, b in zip(got.to_numpy().ravel(), want.to_numpy().ravel(), strict=True))
    assert (reading._empty_cells(got) == reading._empty_cells(want)).all()


SAMPLES = Path(__file__).parents[1] / "sample_inputs"


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.xlsx")), ids=lambda p: p.name)
def test_a_sample_read_in_blocks_of_two_rows_is_read_the_same(monkeypatch, path):
    from batch.workbook import reading

    specs = {k: m.schema for k, m in _specs().items()}
    monkeypatch.setattr(reading, "frame_of_rows", lambda rows: pd.DataFrame(rows, dtype=object))  # pandas' own
    want = read_workbook(path, specs)
    monkeypatch.undo()
    monkeypatch.setattr(reading, "FRAME_BLOCK_ROWS", 2)
    got = read_workbook(path, specs)
    for mine, theirs in zip(got.sheets, want.sheets, strict=True):
        if hasattr(theirs, "cells"):
            pd.testing.assert_frame_equal(mine.cells, theirs.cells, check_exact=True)
            assert mine.cells._mgr.blocks[0].values.flags["C_CONTIGUOUS"]
