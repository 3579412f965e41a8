"""A catalogue of bad inputs, each made by code (no binary blobs), each with what users need of it.

`CASES` maps a case name to (builder, expectation). A builder writes the file into a folder and
returns its path; the expectation is "processed" or "failed", plus text the outcome must show.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from pathlib import Path

import openpyxl
import xlsxwriter
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook

HEADERS = TRANSFER_HEADERS
ROW = ["T-1", "Grow NJ", "C-1", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30_000, 27_000, CERTIFICATE]
FORMULA_LIKE = ['=HYPERLINK("http://x.test","click")', "+1 555 0100", "-see memo", "@SUM(A1)", "\t=1+1", "\r=2+2", "=cmd|'/c calc'!A1"]


def good(folder: Path, name: str = "good.xlsx") -> Path:
    return write_workbook(folder / name, {"Transfers": [HEADERS, ROW]})


def companion(folder: Path) -> Path:
    """A good workbook run beside a hostile one: a record and a certificate of its own, so that the
    two share nothing but the run (two workbooks of a run holding T-1 are RECORD_IN_TWO_WORKBOOKS)."""
    return write_workbook(folder / "good.xlsx", {"Transfers": [HEADERS, ["G-1", ROW[1], "C-9", *ROW[3:]]]})


def text_renamed(folder: Path) -> Path:
    p = folder / "notes.xlsx"
    p.write_text("Quarterly notes, not a workbook.\n")
    return p


def truncated(folder: Path) -> Path:
    data = good(folder, "whole.xlsx").read_bytes()
    (folder / "whole.xlsx").unlink()
    p = folder / "truncated.xlsx"
    p.write_bytes(data[: len(data) // 2])
    return p


def empty_zip(folder: Path) -> Path:
    p = folder / "empty.xlsx"
    with zipfile.ZipFile(p, "w"):
        pass
    return p


def encrypted(folder: Path, password: str = "secret", name: str = "locked.xlsx") -> Path:
    from msoffcrypto.format.ooxml import OOXMLFile

    plain = good(folder, "plain.xlsx")
    p = folder / name
    with open(plain, "rb") as src, open(p, "wb") as out:
        OOXMLFile(src).encrypt(password, out)
    plain.unlink()
    return p


def default_password(folder: Path) -> Path:
    """Encrypted with Excel's built-in default password, as Excel saves a workbook whose structure
    only is protected: it opens without a password, so it is read."""
    return encrypted(folder, "VelvetSweatshop", "structure-protected.xlsx")


def legacy_xls(folder: Path) -> Path:
    import xlwt

    wb = xlwt.Workbook()
    ws = wb.add_sheet("Transfers")
    date = xlwt.easyxf(num_format_str="YYYY-MM-DD")
    for j, h in enumerate(HEADERS):
        ws.write(0, j, h)
    for j, v in enumerate(ROW):
        ws.write(1, j, v, date) if isinstance(v, dt.date) else ws.write(1, j, v)
    p = folder / "legacy.xls"
    wb.save(str(p))
    return p


def macro_workbook(folder: Path) -> Path:
    """An .xlsm with a vbaProject part: the data is read, no macro can run (nothing executes code)."""
    src = good(folder, "plain.xlsx")
    p = folder / "macros.xlsm"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            zout.writestr(item, zin.read(item.filename))
        zout.writestr("xl/vbaProject.bin", b'\xd0\xcf\x11\xe0 Sub AutoOpen(): Shell "calc": End Sub')
    src.unlink()
    return p


def csv_named_after_sheet(folder: Path) -> Path:
    p = folder / "Transfers.csv"
    p.write_text(
        ",".join(HEADERS) + '\nT-1,Grow NJ,C-1,Seller LLC,Buyer Inc.,2026-01-05,"$30,000","27,000","1,000,000"\n'
        "T-2,BEIP,C-2,Seller LLC,Buyer Inc.,1/6/2026,50000,30000\n",
        encoding="utf-8",
    )
    return p


def empty_workbook(folder: Path) -> Path:
    p = folder / "blank.xlsx"
    wb = xlsxwriter.Workbook(str(p))
    wb.add_worksheet("Sheet1")
    wb.close()
    return p


def headers_only(folder: Path) -> Path:
    return write_workbook(folder / "headers-only.xlsx", {"Transfers": [HEADERS]})


def messy_headers(folder: Path) -> Path:
    """Title lines above, a merged title, non-breaking spaces and line breaks in headers, a merged header
    cell spanning an extra column, and a duplicated header."""
    p = folder / "messy.xlsx"
    wb = xlsxwriter.Workbook(str(p), {"strings_to_formulas": False})
    ws = wb.add_worksheet("transfers")
    ws.merge_range(0, 0, 0, 8, "Transfers register, March 2026 (merged title)")
    ws.write_string(1, 0, "As of 3/31/2026")
    headers = [
        "Transfer\u00a0ID",
        "PROGRAM",
        "certificate_id",
        "Transferor",
        "Transferee",
        "Transfer\nDate",
        "Credit Amount Transferred (USD)",
        "Consideration Received ($)",
        "Program",
    ]
    for j, h in enumerate(headers):
        ws.write_string(3, j, h)
    ws.merge_range(3, 9, 3, 10, "Notes (merged header)")
    ws.write_string(3, 11, "Certificate Amount ($)")
    row = ["T-1", "Grow NJ", "C-1", "Seller LLC", "Buyer Inc.", "2026-01-05", 30_000, 27_000, "BEIP", "note", "more", CERTIFICATE]
    for j, v in enumerate(row):
        ws.write(4, j, v)
    wb.close()
    return p


def excel_errors(folder: Path) -> Path:
    p = folder / "errors.xlsx"
    wb = xlsxwriter.Workbook(str(p))
    ws = wb.add_worksheet("Transfers")
    ws.write_row(0, 0, HEADERS)
    ws.write_row(1, 0, ROW[:5])
    ws.write_datetime(1, 5, dt.datetime(2026, 1, 5))
    ws.write_formula(1, 6, "=1/0", None, "#DIV/0!")
    ws.write_formula(1, 7, "=NA()", None, "#N/A")
    wb.close()
    return p


def uncalculated_formula(folder: Path) -> Path:
    """openpyxl saves formulas without a calculated value."""
    p = folder / "uncalculated.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Transfers"
    ws.append(HEADERS)
    ws.append([*ROW[:7], "=G2*0.9"])
    wb.save(p)
    return p


def odd_values(folder: Path) -> Path:
    """Numbers stored as text with spaces and currency signs, dates in odd text spellings, a 32,767-character text."""
    rows = [
        HEADERS + ["Notes"],
        ["T-1", "Grow NJ", "C-1", "Seller LLC", "Buyer Inc.", "March 5, 2026", " $ 30,000.00 ", "USD 27000", CERTIFICATE, "x" * 32767],
        ["T-2", "grow nj", "C-2", "Seller LLC", "Buyer Inc.", "05-Mar-2026", "(30,000)", "27 000", CERTIFICATE, "ok"],
        ["T-3", "Grow NJ", "C-3", "Seller LLC", "Buyer Inc.", "5/3/26", "30000", "27000", CERTIFICATE, "two-digit year"],
    ]
    return write_workbook(folder / "odd.xlsx", {"Transfers": rows})


def _rewrite(folder: Path, name: str, change: dict, add: dict | None = None) -> Path:
    """A copy of the good workbook with parts changed (part -> function of its bytes) or added."""
    good(folder, "base.xlsx")
    p = folder / name
    with zipfile.ZipFile(folder / "base.xlsx") as zin, zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            zout.writestr(item.filename, change[item.filename](data) if item.filename in change else data)
        for part, data in (add or {}).items():
            zout.writestr(part, data)
    (folder / "base.xlsx").unlink()
    return p


def size_bomb(folder: Path, with_dimension: bool = True) -> Path:
    """About 5 KB: one cell at A1 and one at XFD1048576."""
    dim = '<dimension ref="A1:XFD1048576"/>' if with_dimension else ""
    sheet = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        + dim
        + '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Transfer ID</t></is></c></row>'
        '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData></worksheet>'
    ).encode()
    name = "size-bomb.xlsx" if with_dimension else "size-bomb-no-dimension.xlsx"
    return _rewrite(folder, name, {"xl/worksheets/sheet1.xml": lambda _old: sheet})


def billion_laughs(folder: Path) -> Path:
    entities = '<!ENTITY a0 "ha">' + "".join(f'<!ENTITY a{i} "{("&a" + str(i - 1) + ";") * 10}">' for i in range(1, 10))

    def laugh(data: bytes) -> bytes:
        return data.decode().replace("?>", f"?><!DOCTYPE sst [{entities}]>", 1).replace("Seller LLC", "&a9;").encode()

    return _rewrite(folder, "laughs.xlsx", {"xl/sharedStrings.xml": laugh})


def laughs_after_4kb(folder: Path) -> Path:
    """A billion-laughs DOCTYPE after the first 4 KB of docProps/core.xml (past where a check of
    the part's head would look)."""
    entities = '<!ENTITY a0 "ha">' + "".join(f'<!ENTITY a{i} "{("&a" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
    core = f'<?xml version="1.0" encoding="UTF-8"?><!--{"x" * 5000}--><!DOCTYPE r [{entities}]><r>&a9;</r>'
    return _rewrite(folder, "laughs-late.xlsx", {"docProps/core.xml": lambda _old: core.encode()})


def bad_checksum(folder: Path) -> Path:
    """A part whose bytes do not match the checksum stored for it (a copy damaged on its way)."""
    good(folder, "base.xlsx")
    p = folder / "bad-crc.xlsx"
    with zipfile.ZipFile(folder / "base.xlsx") as zin, zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            zout.writestr(item.filename, zin.read(item.filename))
    (folder / "base.xlsx").unlink()
    data = bytearray(p.read_bytes())
    at = data.index(b"Seller LLC")
    data[at : at + 6] = b"Buyer "
    p.write_bytes(bytes(data))
    return p


def zip_bomb(folder: Path) -> Path:
    """A part that inflates about a thousand times (refused with the limits in configuration)."""
    return _rewrite(folder, "zip-bomb.xlsx", {}, {"xl/media/padding.xml": b"<x>" + b" " * (8 << 20) + b"</x>"})


def formula_text_everywhere(folder: Path) -> Path:
    rows = [HEADERS + ["Notes"]]
    for i, text in enumerate(FORMULA_LIKE):
        rows.append([f"T-{i}{text}", "Grow NJ", text, text, text, dt.date(2026, 1, 5), 30_000, 27_000, CERTIFICATE, text])
    return write_workbook(folder / "formula-text.xlsx", {"Transfers": rows, text_sheet_name(): [["Note"], [FORMULA_LIKE[0]]]})


def text_sheet_name() -> str:
    return "Notes"


def large_sheet(folder: Path, rows: int) -> Path:
    """A Transfers sheet of `rows` rows, written straight as XML (fast to make)."""
    body = io.StringIO()
    body.write(
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet '
        'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1">'
    )
    for j, h in enumerate(HEADERS):
        body.write(f'<c r="{chr(65 + j)}1" t="inlineStr"><is><t>{h}</t></is></c>')
    body.write("</row>")
    for i in range(2, rows + 2):
        body.write(
            f'<row r="{i}"><c r="A{i}" t="inlineStr"><is><t>T-{i}</t></is></c><c r="B{i}" t="inlineStr"><is><t>Grow NJ</t></is></c>'
            f'<c r="C{i}" t="inlineStr"><is><t>C-{i % 500}</t></is></c><c r="D{i}" t="inlineStr"><is><t>S</t></is></c>'
            f'<c r="E{i}" t="inlineStr"><is><t>B</t></is></c><c r="F{i}"><v>46027</v></c><c r="G{i}"><v>30000</v></c>'
            f'<c r="H{i}"><v>27000</v></c></row>'
        )
    body.write("</sheetData></worksheet>")
    return _rewrite(folder, f"large-{rows}.xlsx", {"xl/worksheets/sheet1.xml": lambda _old: body.getvalue().encode()})


# name -> (builder, outcome, text the reason or findings must contain)
CASES = {
    "text renamed .xlsx": (text_renamed, "failed", "is not an Excel workbook"),
    "truncated .xlsx": (truncated, "failed", "damaged or truncated"),
    "empty zip": (empty_zip, "failed", "empty zip"),
    "encrypted workbook": (encrypted, "failed", "password-protected"),
    "encrypted with Excel's default password": (default_password, "processed", "ENCRYPTION_REMOVED"),
    "legacy .xls": (legacy_xls, "processed", ""),
    ".xlsm with macros": (macro_workbook, "processed", ""),
    "Transfers.csv": (csv_named_after_sheet, "processed", "CONSIDERATION_BELOW_75PCT"),
    "empty workbook": (empty_workbook, "failed", "no intake sheet: found sheets Sheet1"),
    "headers only": (headers_only, "processed", ""),
    "messy headers": (messy_headers, "processed", "DUPLICATE_COLUMN"),
    "Excel error cells": (excel_errors, "processed", "#DIV/0!"),
    "formula without a value": (uncalculated_formula, "processed", "FORMULA_NOT_CALCULATED"),
    "odd values": (odd_values, "processed", ""),
    "size bomb": (size_bomb, "failed", "XFD1048576"),
    "size bomb without a dimension": (lambda f: size_bomb(f, with_dimension=False), "failed", "stopped unexpectedly"),
    "billion laughs": (billion_laughs, "failed", "DOCTYPE"),
    "billion laughs after 4 KB": (laughs_after_4kb, "failed", "DOCTYPE declaration in docProps/core.xml"),
    "a part with a bad checksum": (bad_checksum, "failed", "part xl/sharedStrings.xml of the workbook is damaged (its checksum"),
    "zip bomb": (zip_bomb, "failed", "zip bomb"),
    "formula-like text": (formula_text_everywhere, "processed", ""),
}
