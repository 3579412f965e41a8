"""The package shapes of the real-world corpus, each a small workbook with one Transfers intake
sheet, and what the returned workbook must say of it.

Every intake sheet holds the same three transfers: T-1 and T-3 are within the rules (`OK`); T-2
moves $1,000 of Grow NJ credit, under the $25,000 minimum transfer (C.34:1B-248), so it is
`Flagged` and its credit cell (G3) gets a fill and a note.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field

from conftest import CERTIFICATE, TRANSFER_HEADERS

from realworld.packages import (
    EXCEL,
    EXCEL_STRICT,
    OPEN_XML_SDK,
    T_R,
    Book,
    Formula,
    Sheet,
    dialect,
    edit,
    package,
    zipped,
)

HEADERS = TRANSFER_HEADERS
ROWS = [
    # $30,000 >= the $25,000 Grow NJ minimum (C.34:1B-248); $27,000 / $30,000 = 90% consideration -> OK
    ["T-1", "Grow NJ", "C-1", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30000, 27000, CERTIFICATE],
    # $1,000 < the $25,000 Grow NJ minimum -> Flagged, a fill and a note on G3 ($900 / $1,000 = 90%)
    ["T-2", "Grow NJ", "C-2", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 6), 1000, 900, CERTIFICATE],
    # $150,000 >= the $100,000 BEIP minimum (C.34:1B-129 g.(3)); $140,000 / $150,000 = 93% -> OK
    ["T-3", "BEIP", "C-3", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 7), 150000, 140000, CERTIFICATE],
]
STATUSES = ["OK", "Flagged", "OK"]  # T-1, T-2, T-3
FLAGGED_CELL = "G3"  # T-2's Credit Amount Transferred
INTAKE = "Transfers"
DEFAULT_PASSWORD = "VelvetSweatshop"  # what Excel encrypts with when only the structure is protected


def transfers(extra_columns: list[list] | None = None) -> Sheet:
    """The intake sheet; `extra_columns` are columns of the user's after the nine (header first)."""
    rows = [list(HEADERS), *(list(r) for r in ROWS)]
    for column in extra_columns or []:
        for row, value in zip(rows, column, strict=True):
            row.append(value)
    return Sheet(INTAKE, rows)


@dataclass(frozen=True)
class Shape:
    """One workbook of the corpus and what its run must give."""

    name: str  # the file's stem, and the test id
    why: str  # the producer or the trap it stands for
    build: Callable[[], bytes]  # the file's bytes
    suffix: str = ".xlsx"
    # a refused workbook: the words its reason must hold (each matched case-insensitively), else None
    refused: tuple[str, ...] | None = None
    # workbook-level findings the Run sheet must show: code -> a word the finding's row must hold
    findings: dict[str, str] = field(default_factory=dict)
    password: str | None = None  # the package is encrypted with it
    removed: tuple[str, ...] = ()  # parts of the input the returned workbook must not hold
    round_trip: bool = False  # the returned workbook is run again


def _xlsx(book: Book, *edits: tuple[str, str, str]) -> Callable[[], bytes]:
    def build() -> bytes:
        parts = package(book)
        for name, old, new in edits:
            parts = edit(parts, name, old, new)
        return zipped(parts)

    return build


def _encrypted(build: Callable[[], bytes], password: str) -> Callable[[], bytes]:
    """The package encrypted as Excel encrypts (ECMA-376 agile encryption). The package must be
    over 4 KB: msoffcrypto-tool writes a smaller encrypted stream into the container's mini
    stream, where it cannot be read back; the round trip is checked here, so that a fixture the
    tool cannot decrypt is never blamed on the tool."""

    def encrypt() -> bytes:
        import msoffcrypto
        from msoffcrypto.format.ooxml import OOXMLFile

        plain = build()
        out = io.BytesIO()
        OOXMLFile(io.BytesIO(plain)).encrypt(password, out)
        office, back = msoffcrypto.OfficeFile(io.BytesIO(out.getvalue())), io.BytesIO()
        office.load_key(password=password)
        office.decrypt(back)
        assert back.getvalue() == plain
        return out.getvalue()

    return encrypt


def _ledger(rows: int) -> Sheet:
    """A sheet of the user's: a log of certificate payments, figures as varied as real ones."""
    grid: list[list] = [["Certificate", "Paid on", "Amount ($)", "Reference"]]
    for i in range(rows):
        h = int(hashlib.sha256(str(i).encode()).hexdigest(), 16)
        grid.append([f"C-{h % 900 + 100}", f"2026-{h % 12 + 1:02d}-{h % 28 + 1:02d}", h % 9_000_000 / 100, f"PAY-{h % 10**9:09d}"])
    return Sheet("Payments", grid)


def _with_part(build: Callable[[], bytes], name: str, data: bytes) -> Callable[[], bytes]:
    """The package with one more part (zipped as is, even when its name differs from another only in case)."""

    def extended() -> bytes:
        buffer = io.BytesIO(build())
        with zipfile.ZipFile(buffer, "a") as z:
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 11, 3, 16, 30, 0)), data, zipfile.ZIP_DEFLATED)
        return buffer.getvalue()

    return extended


def _doctype_core() -> bytes:
    """docProps/core.xml with a billion-laughs DOCTYPE (three levels, kept small) after 5,000 bytes
    of comment: a check of the first 4 KB does not see it."""
    q = '"'
    padding = "<!--" + " exported by the quarterly close macro " * 130 + "-->\n"
    assert len(padding) > 4096
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        + padding
        + '<!DOCTYPE cp:coreProperties [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
        + '<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">]>\n'
        + f"<cp:coreProperties xmlns:cp={q}http://schemas.openxmlformats.org/package/2006/metadata/core-properties{q}"
        + f" xmlns:dc={q}http://purl.org/dc/elements/1.1/{q}><dc:title>&lol2;</dc:title><dc:creator>Finance Analyst</dc:creator>"
        + "</cp:coreProperties>"
    ).encode()


_PLAIN = Book([transfers()])
_R_INNER = f'xmlns:r="{T_R}"'
_HYPERLINK = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink"


def _doctype_book() -> bytes:
    return zipped({**package(_PLAIN), "docProps/core.xml": _doctype_core()})


def _case_pair_book() -> bytes:
    """sheet1.xml holds T-2 at $1,000 (Flagged); Sheet1.xml the same rows with T-2 at $30,000
    (OK): a reader of one part and a writer of the other would return $1,000 as OK."""
    other = package(Book([Sheet(INTAKE, [HEADERS, ROWS[0], [*ROWS[1][:6], 30000, 27000, CERTIFICATE], ROWS[2]])]))
    return _with_part(lambda: zipped(package(_PLAIN)), "xl/worksheets/Sheet1.xml", other["xl/worksheets/sheet1.xml"])()


SHAPES: list[Shape] = [
    Shape(
        "excel-transitional",
        "Excel's own Transitional save, no trap: the baseline every other shape is measured against",
        _xlsx(_PLAIN),
    ),
    Shape(
        "empty-style-table",
        "a style table written as an empty element, <styleSheet .../> (dates as ISO text: no date format to use)",
        _xlsx(Book([transfers()], dialect(EXCEL, styles="empty", dates="text"))),
    ),
    Shape(
        "dimension-with-space",
        'openpyxl and pandas: <dimension ref="A1:I4" /> with a space before />',
        _xlsx(_PLAIN, ("xl/worksheets/sheet1.xml", '<dimension ref="A1:I4"/>', '<dimension ref="A1:I4" />')),
    ),
    Shape(
        "single-quotes",
        "every attribute, declaration and namespace single-quoted (workbook, relationships, sheets, styles)",
        _xlsx(Book([transfers()], dialect(EXCEL, quote="'"))),
    ),
    Shape(
        "open-xml-sdk",
        "SpreadsheetML under the x prefix, as the .NET Open XML SDK writes it (x:workbook, x:worksheet, x:sst, x:styleSheet)",
        _xlsx(Book([transfers()], OPEN_XML_SDK)),
    ),
    Shape(
        "strict",
        'Excel\'s "Strict Open XML Spreadsheet" save: purl.oclc.org namespaces and relationship types, dates as ISO t="d" cells',
        _xlsx(Book([transfers()], EXCEL_STRICT)),
    ),
    Shape(
        "no-styles-part",
        "a package without xl/styles.xml; empty text cells in a column of the user's",
        _xlsx(Book([transfers([["Notes", "", "Check the price", ""]])], dialect(EXCEL, styles=None, dates="text"))),
    ),
    Shape(
        "empty-relationship-id",
        'a second sheet listed with r:id="" (no part); the intake sheet is fine',
        _xlsx(Book([transfers(), Sheet("Notes", [["Call the buyer"]], rid="")])),
        findings={"SHEET_NOT_READABLE": "Notes"},
    ),
    Shape(
        "excel4-macro-sheet",
        "an .xlsm with an Excel 4 macro sheet (xl/macrosheets/sheet1.xml) run by the defined name Auto_Open",
        _xlsx(
            Book(
                [transfers(), Sheet("Macro1", [[Formula('ALERT("Transfers loaded")', True)], [Formula("RETURN()", True)]], macro=True)],
                defined_names=[("Auto_Open", "Macro1!$A$1")],
                macro_enabled=True,
            ),
        ),
        suffix=".xlsm",
        findings={"MACROS_REMOVED": "Macro1"},
        removed=("xl/macrosheets/sheet1.xml",),
    ),
    Shape(
        "default-password",
        "encrypted with Excel's default password VelvetSweatshop (Excel's structure protection); a Payments sheet of the user's",
        _encrypted(_xlsx(Book([transfers(), _ledger(60)])), DEFAULT_PASSWORD),
        findings={"ENCRYPTION_REMOVED": ""},
        password=DEFAULT_PASSWORD,
    ),
    Shape(
        "user-summary-sheet",
        'a sheet of the user\'s named Summary whose A1 is "Summary of the quarter"',
        _xlsx(Book([transfers(), Sheet("Summary", [["Summary of the quarter", None], ["Transfers", 3], ["Credit moved", 181000]])])),
    ),
    # hand-made packages that set traps for a reader guessing at the XML
    Shape(
        "comment-in-sheet-head",
        "an XML comment in the sheet's head that holds <sheetData></sheetData>",
        _xlsx(Book([Sheet(INTAKE, transfers().rows, head="<!-- exporter's template: <sheetData></sheetData> -->")])),
    ),
    Shape(
        "cdata-inline-string",
        "inline strings, T-2's transferee in a CDATA section",
        _xlsx(
            Book([transfers()], dialect(EXCEL, strings="inline")),
            (
                "xl/worksheets/sheet1.xml",
                '<c r="E3" t="inlineStr"><is><t>Buyer Inc.</t>',
                '<c r="E3" t="inlineStr"><is><t><![CDATA[Buyer & Sons <see </c></row> in the export>]]></t>',
            ),
        ),
    ),
    Shape(
        "single-quoted-xmlns-r",
        "xmlns:r single-quoted on the workbook and the sheet, everything else double-quoted",
        _xlsx(
            _PLAIN,
            ("xl/workbook.xml", _R_INNER, _R_INNER.replace('"', "'")),
            ("xl/worksheets/sheet1.xml", _R_INNER, _R_INNER.replace('"', "'")),
        ),
    ),
    Shape(
        "r-prefix-on-inner-element",
        "the r prefix declared on the elements that use it (<sheet xmlns:r=... r:id=.../>, a hyperlink), never on a root",
        _xlsx(
            Book(
                [
                    Sheet(
                        INTAKE,
                        transfers().rows,
                        declare_r=False,
                        tail=f'<hyperlinks><hyperlink {_R_INNER} ref="D2" r:id="rId1"/></hyperlinks>',
                        rels=[("rId1", _HYPERLINK, "https://example.com/sellers/seller-llc", "External")],
                    )
                ]
            ),
            ("xl/workbook.xml", f" {_R_INNER}>", ">"),
            ("xl/workbook.xml", '<sheet name="Transfers"', f'<sheet {_R_INNER} name="Transfers"'),
        ),
    ),
    Shape(
        "cells-out-of-order",
        "T-2's cells written H before G (the violation in the cell out of place)",
        _xlsx(Book([Sheet(INTAKE, transfers().rows, order={3: [1, 2, 3, 4, 5, 6, 8, 7]})])),
    ),
    Shape(
        "user-name-njcredits-run",
        "a defined name of the user's, njcredits_Run, on the user's own Reconciliation sheet",
        _xlsx(
            Book(
                [transfers(), Sheet("Reconciliation", [["Transferred", 181000], ["Checked by", "JD"]])],
                defined_names=[("njcredits_Run", "Reconciliation!$A$1")],
            )
        ),
    ),
    Shape(
        "user-status-column",
        "a column of the user's headed Status (kept on the first run and on the round trip)",
        _xlsx(Book([transfers([["Status", "Open", "Closed", "Open"]])])),
        round_trip=True,
    ),
    Shape(
        "doctype-after-4kb",
        "a billion-laughs DOCTYPE in docProps/core.xml after its first 4 KB",
        _doctype_book,
        refused=("DOCTYPE", "docProps/core.xml"),
    ),
    Shape(
        "sheet1-and-Sheet1",
        "xl/worksheets/sheet1.xml and xl/worksheets/Sheet1.xml both present (part names differ only in case)",
        _case_pair_book,
        refused=("sheet1.xml",),
    ),
    Shape(
        "two-sheets-named-transfers",
        "two sheets named Transfers (Excel does not allow it)",
        _xlsx(Book([transfers(), Sheet(INTAKE, transfers().rows)])),
        refused=("Transfers",),
    ),
]


BY_NAME = {s.name: s for s in SHAPES}
