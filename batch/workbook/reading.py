"""Read an intake workbook: route sheets by name, find the header row, match headers loosely.

The reader keeps every cell exactly as the workbook holds it (python-calamine values: str,
float, bool, date, datetime, "" for empty) so that the returned workbook can write back the
original values; typing happens in `validators`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass, field
from fractions import Fraction
from operator import length_hint
from pathlib import Path

import numpy as np
import pandas as pd
import python_calamine
from defusedxml import ElementTree

from batch.workbook import blocks, cells, readcopy, reasons
from batch.workbook.inthread import Beside
from batch.workbook.opc import read_only
from batch.workbook.opened import Opened, opening
from batch.workbook.package import Macro, macros
from batch.workbook.safety import (
    Limits,
    Refused,
    inspect,
    scan_cells,
    sheet_parts,
)
from batch.workbook.xlsxwriter_private import utf16_len, utf16_truncate
from validators.coerce import ExcelError, text_cells
from validators.coerce import text as coerce_text
from validators.columns import REVIEW_COLUMNS, SheetSpec, normalize_header

HEADER_SEARCH_ROWS = 20  # the header is row 1 or the first row within the first 20 naming the columns
EXCEL_COLUMNS = 16_384  # columns A..XFD
SUMMARY_TITLE = "Summary of"
RUN_TITLE = "Run"
# The tool's own sheets and columns are known by its markers only, never by a title or a header:
# hidden defined names that a user cannot make by accident, each naming what it marks and carrying
# a token computed from it (the first 8 hex digits of the SHA-256 of `njcredits/<role>/<subject>`,
# the subject casefolded, as Excel compares names). Defined names survive a save by openpyxl,
# LibreOffice (which shows them, hidden or not) and Excel, and Excel and LibreOffice keep a name
# pointing at its cells when rows, columns or sheets are moved, inserted or renamed.
# - A sheet of the tool's: a workbook-level name `njcredits_<Role>_<token of the sheet's name>`
#   referring to a cell of the sheet (`'Summary (njcredits)'!$A$1`). It marks the sheet only while
#   the token computed from the sheet's current name agrees: a sheet of the tool's that the user
#   renamed (or copied, which copies the name onto the copy with the sheet's scope) is the user's
#   from then on, kept as it is, and the tool writes its own sheets anew.
# - The tool's columns of an intake sheet: a name `njcredits_Columns_<token of the program's sheet>`
#   scoped to that sheet (`localSheetId`), referring to the header cells of the tool's columns
#   (`'Transfers'!$J$1:$Q$1`; a union where they are apart). It counts only on the sheet it is
#   scoped to, on the sheet's header row, for the program the sheet is read as (so a renamed
#   intake sheet keeps its marker). Of the columns it covers, those headed like one of the tool's
#   columns are the tool's (a column the user inserted among them, or one whose header the user
#   changed, is the user's).
# A user's own name such as `njcredits_Run` marks nothing and comes back as it came; the tool's
# names are taken out on a round trip (those that no longer mark anything too) and written anew.
TOOL_SHEETS = ("Findings", "Summary", "Run", "Rules")
COLUMNS_ROLE = "Columns"
MARKER_PREFIX = "njcredits_"
TOKEN_DIGITS = 8  # hex digits of a marker's token: one chance in four billion that a name made by hand fits
TOOL_NAME = re.compile(rf"njcredits_(Findings|Summary|Run|Rules|Columns)_([0-9a-f]{{{TOKEN_DIGITS}}})", re.IGNORECASE)
TOOL_SUFFIX = " (njcredits)"  # the tool's sheet when the user's workbook has a sheet of its name
SHEET_NAME_LIMIT = 31  # Excel's limit on a sheet name, in UTF-16 code units
SHEET_NAME_ILLEGAL = re.compile(r"[\[\]:*?/\\\x00-\x1f\x7f\ufffe\uffff]")
SHEET_NAME_RESERVED = "History"  # Excel keeps this name for its change history (any case)
# The template's own sheets besides the intake sheets (sheet keys): never routed by their headers.
NEVER_ROUTED = ("instructions", "lists")
ROUTING_SHARE = Fraction(1, 2)  # a sheet is routed by headers naming at least half of a program's required columns
# A totals row: its record-ID cell says one of these words (any case), or its filled money cells are
# all SUM/SUBTOTAL formulas.
TOTAL_WORDS = re.compile(r"\s*(?:total|totals|grand\s+total|sum)\s*:?\s*", re.IGNORECASE)
_TOTAL_WORDS_MATCH = np.frompyfunc(TOTAL_WORDS.fullmatch, 1, 1)  # over an array of texts: each one's match or None


class UnreadableWorkbook(Refused):
    """The file cannot be read as a workbook; the message is one sentence for the user."""


def sheet_key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.casefold())


@dataclass
class IntakeSheet:
    """One intake sheet as read: original cells of the kept columns, one row per non-blank row."""

    name: str
    spec: SheetSpec
    preamble: list[list]  # grid rows above the header row, as they came
    header_row: int  # 0-based grid row of the header
    headers: list[str]  # original header text of each kept column
    fields: list[str | None]  # the spec header each kept column matched, or None (extra column)
    cells: pd.DataFrame  # object cells, columns 0..k-1 (kept columns), index 0..n-1
    excel_rows: np.ndarray  # Excel row number (1-based) of each cells row
    grid_height: int  # number of grid rows below the header (blank rows included)
    kept: list[int] = field(default_factory=list)  # grid column of each kept column
    uncalculated: dict[tuple[int, int], str] = field(default_factory=dict)  # (grid row, grid col) -> formula
    duplicates: list[tuple[str, list[int]]] = field(default_factory=list)  # header matched by several columns
    used_width: int = 0  # columns up to the last one holding a header or any cell, preamble included
    filled: np.ndarray | None = None  # per kept column: some row below the header has a cell in it
    sum_cells: set[tuple[int, int]] = field(default_factory=set)  # (grid row, grid col) of SUM/SUBTOTAL formulas
    routed: dict | None = None  # how a sheet not named like an intake sheet was routed by its headers
    truncated: list[tuple[int, int, int, int]] = field(default_factory=list)  # text cut to Excel's limit, see cut_long_text
    cut_text: dict[tuple[int, int], str] = field(default_factory=dict)  # (grid row, column) -> the text kept of each cut cell
    dropped: list[int] = field(default_factory=list)  # grid columns of a returned workbook's tool columns (left out)
    review_cols: dict[str, int] = field(default_factory=dict)  # a returned workbook's reviewer columns: header -> grid column
    reviews: pd.DataFrame | None = None  # per row: the reviewer's entries (REVIEW_COLUMNS), as text
    from_text: bool = False  # a CSV's: every cell is text (written anew as Excel reads it, batch.workbook.csvcells)

    @property
    def results_at(self) -> int:
        """The column of the tool's first column: right after the last column holding any cell, or
        after the reviewer's columns of a returned workbook where the tool's would reach them (a
        column the user inserted among the tool's columns pushes them there)."""
        at = max(self.used_width, len(self.headers))
        reviews = [c for c in self.review_cols.values() if c >= at]
        if reviews and min(reviews) < at + len(self.spec.output_headers):
            return max(reviews) + 1
        return at

    @property
    def tool_columns(self) -> int:
        """How many columns the tool writes after the sheet's (computed columns, Status, Findings,
        and the reviewer's three where the sheet does not have them yet)."""
        return len(self.spec.output_headers) + (0 if self.review_cols else len(REVIEW_COLUMNS))

    @property
    def no_room(self) -> bool:
        """The tool's columns cannot follow the sheet's cells before Excel's last column (XFD):
        the sheet is refused with NO_ROOM_FOR_RESULTS."""
        return self.results_at + self.tool_columns > EXCEL_COLUMNS

    def drop_cells(self) -> None:
        """Let the cells go (nothing reads them again: the returned workbook copies them from the
        file), keeping their columns. An empty slice of the frame would not: it is a view, which
        holds every cell of the frame it was cut from."""
        self.cells = pd.DataFrame({c: np.empty(0, dtype=object) for c in self.cells.columns})

    @property
    def raw(self) -> pd.DataFrame:
        """The cells of matched columns under their spec headers (first match wins)."""
        picked = {}
        for i, f in enumerate(self.fields):
            if f is not None and f not in picked:
                picked[f] = self.cells[i]
        return pd.DataFrame(picked, index=self.cells.index)


@dataclass
class OtherSheet:
    """A sheet carried through untouched: UNKNOWN_SHEET, or SHEET_NOT_ROUTED when its headers fit
    several programs equally (`not_routed` says which)."""

    name: str
    grid: list[list]
    not_routed: dict | None = None
    truncated: list[tuple[int, int, int, int]] = field(default_factory=list)  # text cut to Excel's limit, see cut_long_text


@dataclass
class Workbook:
    path: Path
    sheets: list[IntakeSheet | OtherSheet] = field(default_factory=list)
    kind: str = "zip"  # see batch.workbook.safety.inspect
    macros: list[Macro] = field(default_factory=list)  # a VBA project and Excel 4 macro sheets (removed from the returned workbook)
    skipped: list[str] = field(default_factory=list)  # the tool's own sheets of a returned workbook, left out
    name: str = ""  # the file's name as the user knows it (a decrypted copy is read under its original's name)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (sheet, why): its relationship is broken; left as it is
    macro_sheets: list[str] = field(default_factory=list)  # Excel 4 macro sheets (removed from the returned workbook)
    encrypted: bool = False  # the file was encrypted with Excel's default password and is read decrypted
    sheet_names: list[str] = field(default_factory=list)  # every sheet the workbook lists, in order
    parts: dict[str, str] = field(default_factory=dict)  # sheet name -> the package part read for it (the writer's too)


FRAME_BLOCK_ROWS = 50_000  # rows `frame_of_rows` turns into columns at a time


def frame_of_rows(rows: list[list]) -> pd.DataFrame:
    """`pd.DataFrame(rows, dtype=object)`, the same frame, made without pandas' copy of it: pandas
    makes an array of the rows, then another of the columns (a full GrowNJ sheet's cells are 354 MB
    of references, twice over). Rows all as wide are put into the columns' array a block of
    `FRAME_BLOCK_ROWS` at a time; rows of several widths are made by pandas (NumPy makes a block of
    them an array of lists, not of their cells: its shape says so)."""
    width = len(rows[0]) if rows else 0
    if not width:
        return pd.DataFrame(rows, dtype=object)
    columns = np.empty((width, len(rows)), dtype=object)
    for start in range(0, len(rows), FRAME_BLOCK_ROWS):
        block = np.array(rows[start : start + FRAME_BLOCK_ROWS], dtype=object)
        if block.shape != (min(FRAME_BLOCK_ROWS, len(rows) - start), width):  # rows of several widths, or a cell read as a sequence
            return pd.DataFrame(rows, dtype=object)
        columns[:, start : start + FRAME_BLOCK_ROWS] = block.T
    return pd.DataFrame(columns.T, dtype=object, copy=False)


def _empty_cells(rows) -> np.ndarray:
    """Rows x columns: True where the cell is empty (None, NaN or ""). `rows`: a frame (read as it
    is, not copied) or what makes one."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows, dtype=object)
    if frame.empty:
        return np.zeros(frame.shape, dtype=bool)
    cells = frame.to_numpy(dtype=object)
    return pd.isna(cells) | (cells == "")


def _header_keys(grid: list[list]) -> list[set[str]]:
    """The header keys named by each of the rows where the header row may be (the first 20)."""
    return [{normalize_header(v) for v in row if isinstance(v, str)} for row in grid[:HEADER_SEARCH_ROWS]]


def _find_header(grid: list[list], spec: SheetSpec, rows: list[set[str]] | None = None) -> int:
    """The header row of `spec` in the grid: the first of the first 20 rows naming every required
    column, else the one naming most of the spec's columns (row 1 when none names any). `rows` are
    the rows' header keys (`_header_keys`), when already known."""
    keys = {c.key for c in spec.columns}
    required = {c.key for c in spec.columns if c.required}
    best, best_hits = 0, 0
    for r, found in enumerate(_header_keys(grid) if rows is None else rows):
        if required <= found:
            return r
        hits = len(found & keys)
        if hits > best_hits:
            best, best_hits = r, hits
    return best


def route(grid: list[list], specs) -> tuple[SheetSpec | None, int, dict | None]:
    """The program a sheet not named like an intake sheet is routed to by its header row.

    For each program, its header row is found as for its own sheet (`_find_header`) and the
    program's required columns named there are counted. The sheet goes to the program with the
    highest share of its required columns named, at least half; a tie on share goes to the program
    with more of them named. Returns (spec, header row, `routed` facts) for a routed sheet;
    (None, 0, `not_routed` facts) when programs tie on both; (None, 0, None) when no program fits.
    """
    rows = _header_keys(grid)
    fits = []
    for spec in {s.name: s for s in specs.values()}.values():
        required = [c for c in spec.columns if c.required]
        if not required or not rows:
            continue
        h = _find_header(grid, spec, rows)
        named = [c for c in required if c.key in rows[h]]
        share = Fraction(len(named), len(required))
        if named and share >= ROUTING_SHARE:
            fits.append((share, len(named), spec, h, named))
    if not fits:
        return None, 0, None
    best = max((share, count) for share, count, *_ in fits)
    top = [f for f in fits if (f[0], f[1]) == best]
    _share, count, spec, h, named = top[0]
    required = sum(c.required for c in spec.columns)  # the same for every program of a tie
    if len(top) > 1:
        names = [f[2].name for f in top]
        return None, 0, {"candidates": ", ".join(names[:-1]) + " and " + names[-1], "named": count, "required": required}
    spelled = {}
    for v in grid[h]:  # the sheet's own spelling of each header (the first of a repeated one)
        if isinstance(v, str):
            spelled.setdefault(normalize_header(v), v)
    facts = {
        "program_sheet": spec.name,
        "program": spec.program,
        "header_row": h + 1,
        "named": count,
        "required": required,
        "headers": ", ".join(spelled[c.key] for c in named),
    }
    return spec, h, facts


def quoted_sheet(name: str) -> str:
    """A sheet name as a formula writes it: `'O''Brien'`."""
    return "'" + name.replace("'", "''") + "'"


def marker_token(role: str, subject: str) -> str:
    """The token of a marker of the tool's: the first TOKEN_DIGITS hex digits of the SHA-256 of
    `njcredits/<role>/<subject>` (the subject, a sheet's or a program's name, casefolded)."""
    return hashlib.sha256(f"njcredits/{role}/{subject.casefold()}".encode()).hexdigest()[:TOKEN_DIGITS]


def sheet_marker(role: str, sheet: str) -> tuple[str, str]:
    """The defined name that marks sheet `sheet` as the tool's sheet `role` (one of TOOL_SHEETS),
    workbook-level and hidden, and the formula it refers to (cell A1 of the sheet)."""
    return f"{MARKER_PREFIX}{role}_{marker_token(role, sheet)}", f"{quoted_sheet(sheet)}!$A$1"


def column_marker(sheet: str, program: str, header_row: int, columns) -> tuple[str, str]:
    """The defined name that marks the tool's columns of intake sheet `sheet` (read as the sheet of
    `program`), scoped to that sheet and hidden, and the formula it refers to: the header cells
    (`header_row`, 0-based) of `columns` (0-based), a range per run of adjacent columns."""
    row = header_row + 1
    runs: list[list[int]] = []
    for c in sorted(set(columns)):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    at = quoted_sheet(sheet)
    pieces = [f"{at}!${cells.column_letters(a)}${row}" + (f":${cells.column_letters(b)}${row}" if b > a else "") for a, b in runs]
    return f"{MARKER_PREFIX}{COLUMNS_ROLE}_{marker_token(COLUMNS_ROLE, program)}", ",".join(pieces)


def is_tool_name(name: str) -> bool:
    """A defined name of the tool's markers (`njcredits_<Role>_<8 hex digits>`), whatever it refers
    to now: taken out on a round trip. A user's own `njcredits_Run` is not one."""
    return TOOL_NAME.fullmatch(name or "") is not None


# one cell or range of a formula on a sheet, quoted or not (never #REF!)
REF_PIECE = re.compile(r"\s*(?:'((?:[^']|'')+)'|([^'!#,\s][^'!,]*))!\$?([A-Za-z]{1,3})\$?(\d+)(?::\$?([A-Za-z]{1,3})\$?(\d+))?\s*")


def _ranges(formula: str) -> list[tuple[str, int, int, int, int]] | None:
    """The cells a name refers to, (sheet, first row, first col, last row, last col), 0-based, for a
    formula made of cells and ranges on sheets joined by commas; None for any other formula."""
    text = (formula or "").strip().removeprefix("=")
    out, at = [], 0
    while True:
        m = REF_PIECE.match(text, at)
        if not m:
            return None
        sheet = m.group(1).replace("''", "'") if m.group(1) else m.group(2).strip()
        c1, r1 = _column_number(m.group(3).upper().encode()) - 1, int(m.group(4)) - 1
        c2, r2 = (_column_number(m.group(5).upper().encode()) - 1, int(m.group(6)) - 1) if m.group(5) else (c1, r1)
        out.append((sheet, min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)))
        at = m.end()
        if at == len(text):
            return out
        if text[at] != ",":
            return None
        at += 1


@dataclass(frozen=True)
class Markers:
    """What the tool's markers in a workbook name (see TOOL_SHEETS above): `sheets`, the names
    (casefolded) of its sheets; `columns`, per sheet name (casefolded), each column marker scoped
    to the sheet: (token, header row, grid columns), 0-based."""

    sheets: frozenset[str] = frozenset()
    columns: dict[str, list[tuple[str, int, frozenset[int]]]] = field(default_factory=dict)


def read_markers(workbook_xml: bytes | None) -> Markers:
    """The tool's markers in a workbook part (`xl/workbook.xml`), each checked against what it
    names: a sheet marker must be workbook-level, refer to one cell of a sheet of the workbook and
    carry the token of that sheet's current name; a column marker must be scoped to the sheet its
    cells are on, on one row (the token is checked when the sheet is read, against its program)."""
    if not workbook_xml:
        return Markers()
    root = ElementTree.fromstring(workbook_xml)

    def children(parent, name: str) -> list:  # whatever the namespace (Transitional, Strict) and prefix
        return [el for el in parent if isinstance(el.tag, str) and el.tag.rpartition("}")[2] == name]

    sheets = [str(el.get("name", "")) for holder in children(root, "sheets") for el in children(holder, "sheet")]
    present = {n.casefold() for n in sheets}
    marked, columns = set(), {}
    for el in (el for holder in children(root, "definedNames") for el in children(holder, "definedName")):
        m = TOOL_NAME.fullmatch(str(el.get("name", "")))
        refs = _ranges(el.text or "") if m else None
        if not refs:
            continue
        role, token = m.group(1).casefold(), m.group(2).casefold()
        local = el.get("localSheetId")
        if role != COLUMNS_ROLE.casefold():
            (sheet, r1, c1, r2, c2), *more = refs
            role = next(r for r in TOOL_SHEETS if r.casefold() == role)
            if local is None and not more and (r1, c1) == (r2, c2) and sheet.casefold() in present:
                if token == marker_token(role, sheet):
                    marked.add(sheet.casefold())
            continue
        if local is None or not local.strip().isdigit() or int(local) >= len(sheets):
            continue
        scope = sheets[int(local)].casefold()
        rows = {r for _s, r1, _c1, r2, _c2 in refs for r in (r1, r2)}
        if len(rows) == 1 and all(s.casefold() == scope for s, *_ in refs):
            cols = frozenset(c for _s, _r1, c1, _r2, c2 in refs for c in range(c1, c2 + 1))
            columns.setdefault(scope, []).append((token, rows.pop(), cols))
    return Markers(frozenset(marked), columns)


def markers(source: Opened | Path) -> Markers:
    """The tool's markers in a workbook file (none in a CSV or .xls file, or a package without a workbook part)."""
    with opening(source) as opened:
        return opened.once("markers", lambda: _markers(opened))


def _markers(opened: Opened) -> Markers:
    return read_markers(opened.part("xl/workbook.xml") if "xl/workbook.xml" in opened.zip.namelist() else None)


def has_macros(source: Opened | Path) -> list[Macro]:
    """The package's macros (an .xlsm's VBA project, Excel 4 macro sheets), or none."""
    with opening(source) as opened:
        return macros(read_only(opened))


def marked_sheets(source: Opened | Path) -> set[str]:
    """The names (casefolded) of the sheets the tool's markers name in a workbook file."""
    return set(markers(source).sheets)


def tool_sheet_name(role: str, taken) -> str:
    """The name of the tool's sheet `role`: the role itself, unless a sheet of the user's already
    has it (ignoring case, as Excel does); then `Role (njcredits)`, `Role (njcredits 2)`, ..."""
    used = {str(n).casefold() for n in taken}
    if role.casefold() not in used:
        return role
    n = 1
    while True:
        suffix = TOOL_SUFFIX if n == 1 else f"{TOOL_SUFFIX[:-1]} {n})"
        name = _cut_utf16(role, SHEET_NAME_LIMIT - len(suffix)) + suffix
        if name.casefold() not in used:
            return name
        n += 1


def excel_refuses(name: str) -> bool:
    """Whether Excel refuses `name` as a sheet name: empty, longer than 31 UTF-16 code units,
    holding `[]:*?/\\` or a control character, an apostrophe first or last, or `History`."""
    return (
        not name
        or _cut_utf16(name, SHEET_NAME_LIMIT) != name
        or SHEET_NAME_ILLEGAL.search(name) is not None
        or name[0] == "'"
        or name[-1] == "'"
        or name.casefold() == SHEET_NAME_RESERVED.casefold()
    )


def sheets_kept_by_libreoffice(names: list[str]) -> int:
    """How many sheets LibreOffice keeps of a workbook listing `names`: of the sheets whose names it
    refuses, it keeps one (renamed), so a name scoped to a sheet at or past that count stops the
    workbook opening there. Counted with Excel's rules, which refuse more names than LibreOffice."""
    refused = sum(excel_refuses(n) for n in names)
    return len(names) - max(refused - 1, 0)


def _cut_utf16(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-16 code units (the unit Excel counts)."""
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return text[:i]
    return text


ESCAPE_IN_NAME = re.compile(r"_[xX]([0-9a-fA-F]{4}_)")


def csv_sheet_name(stem: str) -> str:
    """A legal Excel sheet name from a CSV file's name: the characters Excel refuses in a sheet name
    (`[]:*?/\\`, control characters) and bytes that are not UTF-8 become `_`, at most 31 UTF-16
    units, no apostrophe or space at either end, never blank and never Excel's reserved `History`.
    Text that reads as an Excel escape (`_x0041_`) has its `x` made `-`: a sheet name is not
    escaped in the file, so Excel and LibreOffice would show `A` and links to the sheet would break."""
    text = stem.encode("utf-8", "surrogateescape").decode("utf-8", "replace").replace("\ufffd", "_")
    name = SHEET_NAME_ILLEGAL.sub("_", text)
    name = ESCAPE_IN_NAME.sub(r"_-\1", name).strip(" '")
    name = _cut_utf16(name, SHEET_NAME_LIMIT).rstrip(" '")
    if not name:
        return "CSV"
    if name.casefold() == "history":
        return f"{name} (CSV)"
    return name


CUT_BLOCK_CELLS = 1 << 20  # cells `cut_long_text` measures at once (a wide sheet is not read column by column)
# each cell's length in characters, 0 for a cell that is not text (a number, a date, a blank): the
# builtin called on each cell, with no Python frame a cell (pandas' `.str.len()` made one, about
# seven times slower: 4.4 million cells of a GrowNJ sheet took about 3 s)
_TEXT_LENGTH = np.frompyfunc(length_hint, 2, 1)


def cut_long_text(frame: pd.DataFrame, first_row: int = 0) -> list[tuple[int, int, int, int]]:
    """Cut, in place, every text cell longer than Excel's cell limit (32,767 UTF-16 units; only a
    CSV or a hand-made file can hold one) to the limit, and return (grid row, column, length) of
    each, for TEXT_TRUNCATED. The cut is made when the file is read, so what is checked is what
    the returned workbook holds. Each cut is (grid row, column, length, length kept), in UTF-16
    units: a character of two units at the limit is left out whole, so 32,766 may be kept."""
    found = []
    height, width = frame.shape
    step = max(1, CUT_BLOCK_CELLS // max(height, 1))  # columns at a time: one of a tall sheet, many of a wide one
    for start in range(0, width, step):
        block = pd.Series(frame.iloc[:, start : start + step].to_numpy(dtype=object).ravel(order="F"), dtype=object)
        long = np.flatnonzero(_TEXT_LENGTH(block.to_numpy(), 0).astype(np.int64) > cells.MAX_TEXT // 2)
        if not len(long):
            continue
        over = cells.truncated(block.iloc[long])
        for k in long[over]:  # column by column, top to bottom
            c, i = start + int(k) // height, int(k) % height
            value = block.iloc[k]
            kept = utf16_truncate(value, cells.MAX_TEXT)
            found.append((first_row + i, c, utf16_len(value), utf16_len(kept)))
            frame.iat[i, c] = kept
    return found


def _cut_grid(grid: list[list], rows: range) -> list[tuple[int, int, int, int]]:
    """`cut_long_text` over some rows of a grid (lists of cells), cutting them in the grid."""
    if not len(rows):
        return []
    width = max(len(grid[r]) for r in rows)
    frame = pd.DataFrame([list(grid[r]) + [None] * (width - len(grid[r])) for r in rows], dtype=object)
    found = cut_long_text(frame, rows.start)
    for r, c, *_ in found:
        grid[r][c] = frame.iat[r - rows.start, c]
    return found


def _intake_sheet(
    name: str,
    grid: list[list],
    spec: SheetSpec,
    header_row: int | None = None,
    formulas: dict[tuple[int, int], str] | None = None,
    marks=(),
    cell_columns: frozenset[int] = frozenset(),
    merged: tuple[tuple[int, int, int, int], ...] = (),
) -> IntakeSheet:
    """`formulas`: the cells holding a formula without a calculated value (read as empty, but not
    blank: a row of them is a row, such as an openpyxl-written totals row). `marks`: the column
    markers scoped to the sheet (`Markers.columns`). The tool's columns are those a marker of the
    sheet's program on its header row covers and that are headed like one of the tool's: its
    computed columns, `Status` and `Findings` are left out, and the reviewer's three are read as
    decisions and stay where they are. Every other column is the user's and is kept, whatever its
    header (a column of the user's headed `Status`, in a workbook the tool never returned or
    beside the tool's columns, included)."""
    h = header_row if header_row is not None else _find_header(grid, spec) if grid else 0
    token = marker_token(COLUMNS_ROLE, spec.name)
    ours = frozenset().union(*(cols for t, row, cols in marks if t == token and row == h))
    below = max((r for r, _c in formulas or ()), default=-1) + 1 - len(grid)
    if grid and below > 0:  # calamine leaves out trailing rows whose cells are all formulas without a value
        grid = grid + [[""] * len(grid[0]) for _ in range(below)]
    long_text = _cut_grid(grid, range(min(h + 1, len(grid))))  # the rows above the header, and the header
    header_cells = list(grid[h]) if grid else []
    output = {normalize_header(x) for x in spec.output_headers}
    field_of = {c.key: c.header for c in spec.columns}
    kept, headers, fields, dropped = [], [], [], []
    review_keys = {normalize_header(x): x for x in REVIEW_COLUMNS}
    review_cols: dict[str, int] = {}
    for j, v in enumerate(header_cells):
        key = normalize_header(v)
        if j in ours and key in output and key not in field_of:
            dropped.append(j)
            continue  # a computed column, Status or Findings of a returned workbook
        if j in ours and key in review_keys and key not in field_of and review_keys[key] not in review_cols:
            review_cols[review_keys[key]] = j
            continue  # the reviewer's columns: read as decisions, kept where they are
        kept.append(j)
        headers.append(v)
        fields.append(field_of.get(key))
    body = grid[h + 1 :]
    full = frame_of_rows(body) if body else pd.DataFrame(dtype=object)
    long_text += cut_long_text(full, h + 1)
    empty = _empty_cells(full)
    for r, c in formulas or ():
        if h < r < h + 1 + empty.shape[0] and c < empty.shape[1]:
            empty[r - h - 1, c] = False
    # a row is blank when every cell is empty (a cell of spaces is not: it comes back), counting the
    # dropped output columns too
    nonblank = ~empty.all(axis=1) if empty.shape[1] else np.zeros(len(body), dtype=bool)
    # trailing columns with neither header nor data are padding, not columns (a stray cell far to
    # the right keeps every column up to it, so it comes back in place)
    in_kept = [j for j in kept if j < empty.shape[1]]
    has_data = np.zeros(len(kept), dtype=bool)
    has_data[: len(in_kept)] = ~empty[:, in_kept].all(axis=0) if len(in_kept) and len(body) else False
    used = has_data | np.array([v not in ("", None) for v in headers], dtype=bool)
    width = int(np.flatnonzero(used).max()) + 1 if used.any() else 0
    del kept[width:], headers[width:], fields[width:]
    cells = full.reindex(columns=kept)[nonblank].reset_index(drop=True)
    reviews = None
    if review_cols:
        entries = full.reindex(columns=[review_cols.get(h, -1) for h in REVIEW_COLUMNS])[nonblank].reset_index(drop=True)
        entries.columns = list(REVIEW_COLUMNS)
        reviews = entries.apply(lambda col: coerce_text(col)[0].fillna("").astype(str).str.strip())
    full_cut = full  # what the returned cells hold where text was cut (`cut_text`)
    del empty
    cells.columns = range(len(kept))
    excel_rows = np.flatnonzero(nonblank) + h + 2
    # the tool's columns follow the last column holding any cell: the input columns as written
    # (the tool's own columns of a returned workbook left out), or a cell above the header row
    above = _empty_cells(grid[:h])
    preamble_width = int(np.flatnonzero(~above.all(axis=0)).max()) + 1 if above.size and not above.all() else 0
    duplicates = []
    for f in dict.fromkeys(x for x in fields if x):
        at = [kept[i] for i, x in enumerate(fields) if x == f]
        if len(at) > 1:
            duplicates.append((f, at))
    return IntakeSheet(
        name,
        spec,
        [list(r) for r in grid[:h]],
        h,
        headers,
        fields,
        cells,
        excel_rows,
        len(body),
        kept,
        duplicates=duplicates,
        used_width=max(
            kept[width - 1] + 1 if width else 0,
            preamble_width,
            max((c + 1 for c in cell_columns if c not in dropped and c not in review_cols.values()), default=0),
            # a range merged across the header row or the rows below it: the tool's columns never start under it
            max((c2 + 1 for _r1, r2, _c1, c2 in merged if r2 >= h and c2 not in dropped), default=0),
        ),
        filled=has_data[:width],
        truncated=long_text,
        cut_text={(r, c): (grid[r][c] if r <= h else full_cut.iat[r - h - 1, c]) for r, c, *_ in long_text},
        dropped=dropped,
        review_cols=review_cols,
        reviews=reviews,
    )


def totals_rows(sheet: IntakeSheet) -> tuple[np.ndarray, pd.DataFrame]:
    """The sheet's totals rows (not records): a row whose record-ID cell says `Total`, `Totals`,
    `Grand Total` or `Sum` (any case, spaces and a trailing colon ignored), or whose filled money
    cells are all SUM/SUBTOTAL formulas (at least one). Returns the mask over the sheet's rows and
    their TOTALS_ROW_SKIPPED findings (at the record-ID cell; `record_id` is the row's ID as text)."""
    n = len(sheet.cells)
    spec = sheet.spec
    first: dict[str, int] = {}
    for i, f in enumerate(sheet.fields):
        if f is not None:
            first.setdefault(f, i)
    mask = np.zeros(n, dtype=bool)
    column = np.full(n, spec.key[0], dtype=object)
    variant = np.full(n, "formula", dtype=object)
    for header in spec.key:
        if header not in first:
            continue
        cells = sheet.cells[first[header]]
        text = text_cells(cells)
        hit = np.zeros(n, dtype=bool)
        hit[text] = _TOTAL_WORDS_MATCH(cells.to_numpy(dtype=object)[text]).astype(bool)
        hit &= ~mask
        mask |= hit
        column[hit], variant[hit] = header, "id"
    money = [i for i, f in enumerate(sheet.fields) if f is not None and spec.column(f).kind == "money"]
    if money and sheet.sum_cells and n:
        grid_cols = np.array([sheet.kept[i] for i in money], dtype=np.int64)
        summed = _cell_mask(sheet.sum_cells, sheet.excel_rows, grid_cols)
        filled = ~_empty_cells(sheet.cells[money]) | _cell_mask(set(sheet.uncalculated), sheet.excel_rows, grid_cols) | summed
        by_formula = summed.any(axis=1) & ~(filled & ~summed).any(axis=1) & ~mask
        mask |= by_formula
    rows = np.flatnonzero(mask)
    # the ID cells of the totals rows as text, and the row's record ID (key cells joined with ' / ')
    ids = {
        h: coerce_text(sheet.cells[first[h]].iloc[rows])[0].fillna("").to_numpy(dtype=object)
        if h in first
        else np.full(len(rows), "", dtype=object)
        for h in spec.key
    }
    record_id = ids[spec.key[0]]
    for h in spec.key[1:]:
        record_id = record_id + " / " + ids[h]
    said = np.array([ids[c][i] for i, c in enumerate(column[rows])], dtype=object)
    found = pd.DataFrame(
        {
            "row": rows,
            "code": "TOTALS_ROW_SKIPPED",
            "column": column[rows],
            "variant": variant[rows],
            "value": said,
            "record_id": record_id,
        }
    )
    return mask, found


def _cell_mask(cells: set[tuple[int, int]], excel_rows: np.ndarray, grid_cols: np.ndarray) -> np.ndarray:
    """Rows x columns: True at each (grid row, grid col) of `cells` (0-based) that is one of the
    sheet's rows (`excel_rows`, 1-based, ascending) and columns (`grid_cols`, ascending)."""
    out = np.zeros((len(excel_rows), len(grid_cols)), dtype=bool)
    if not cells or not len(excel_rows) or not len(grid_cols):
        return out
    at = np.array(sorted(cells), dtype=np.int64)
    i = np.minimum(np.searchsorted(excel_rows, at[:, 0] + 1), len(excel_rows) - 1)
    j = np.minimum(np.searchsorted(grid_cols, at[:, 1]), len(grid_cols) - 1)
    hit = (excel_rows[i] == at[:, 0] + 1) & (grid_cols[j] == at[:, 1])
    out[i[hit], j[hit]] = True
    return out


def _column_number(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n


def _csv_grid(raw: bytes) -> list[list]:
    """A CSV file's bytes as a grid of text cells (UTF-8, with or without BOM, else Windows-1252)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text, newline=""), dialect))
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows]


# what calamine refuses in a sheet's cells that a reading copy makes readable (see batch.workbook.readcopy)
CELLS_REFUSED = ("Unsupported cell error value", "list index out of range")


def _grids(opened: Opened, kind: str, name: str, reading: Path | None = None, scratch: Path | None = None):
    """(sheet name, grid, cell notes) of every sheet, after the file passed inspection as `kind`.
    `reading`: the package calamine opens (a reading copy, see batch.workbook.readcopy), else the
    opened file's path; the cell scans read the opened file. `name`: the file's name, as the user knows it. A sheet whose cells
    calamine refuses (an error value it does not know, an empty value element) is read again from
    a reading copy whose cells are made readable (made beside `scratch`)."""
    if kind == "csv":
        yield csv_sheet_name(Path(name).stem), _csv_grid(opened.data()), None
        return
    path = opened.path
    book = _open(path, name, reading, opened)
    size = sum(i.file_size for i in opened.zip.infolist()) if kind == "zip" else 0
    scan = Beside(scan_cells, opened, now=size < BESIDE_BYTES) if kind == "zip" else None
    try:
        yield from _sheet_grids(book, scan, opened, kind, name, path, scratch, by_blocks=kind == "zip" and reading is None)
    finally:
        if scan is not None:
            scan.wait()


# a package of parts this large (uncompressed) has its cells scanned beside calamine's read, which parses
# a sheet without the interpreter's lock: the two take the two cores (a smaller one's scan costs less
# than a thread). The scan holds a block of rows of a sheet at a time (`scan_cells`), whatever its size.
BESIDE_BYTES = 4 << 20


# a sheet part of at least this many bytes (inflated) is read a block of rows at a time (batch.workbook.blocks):
# about 200,000 GrowNJ rows; a smaller one is read whole, a little faster (a block's package is read again
# with the workbook's other parts: about a tenth more time)
BLOCKS_FROM_BYTES = 256 << 20


def _block_grid(opened: Opened, sheet: str) -> list[list] | None:
    """The sheet's grid read by blocks (`batch.workbook.blocks.sheet_grid`), when its part is large
    enough (`BLOCKS_FROM_BYTES`); None when it is not, or when it cannot be read so (rows out of
    order, a cell calamine refuses in a block): then it is read whole, as any other sheet is, and
    whatever is wrong with it is met and said there."""
    parts = sheet_parts(opened)
    part = parts.get(sheet)
    if part is None or opened.zip.getinfo(part).file_size < BLOCKS_FROM_BYTES:
        return None
    try:
        return blocks.sheet_grid(opened, sheet, part, list(parts.values()))
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - the whole read meets it again, and says it
        return None


def _sheet_grids(
    book, scan: Beside | None, opened: Opened, kind: str, name: str, path: Path, scratch: Path | None, by_blocks: bool = False
):
    """`_grids` of the sheets of `book`, calamine's workbook; `scan` the cell scan (zip packages);
    `by_blocks`: a large sheet may be read by blocks (`_block_grid`: calamine reads the package as it is)."""
    notes, cells_fixed = None, False
    for sheet in book.sheet_names:
        grid = _block_grid(opened, sheet) if by_blocks else None
        try:
            if grid is None:
                grid = book.get_sheet_by_name(sheet).to_python(skip_empty_area=False)
        except Exception as err:
            notes = scan.result() if scan is not None else {}  # the scan's refusal comes first, as it reads first
            if kind != "zip" or cells_fixed or not any(text in str(err) for text in CELLS_REFUSED):
                raise UnreadableWorkbook(reasons.unreadable(name, err, opened if kind == "zip" else None, sheet)) from err
            plan = readcopy.plan(opened)
            plan.cells = {s.part for s in plan.sheets if s.part and not s.broken and not s.macro}
            book, cells_fixed = _open(path, name, readcopy.make(opened, readcopy.scratch_file(scratch, "reading"), plan), opened), True
            try:
                grid = book.get_sheet_by_name(sheet).to_python(skip_empty_area=False)
            except Exception as again:
                raise UnreadableWorkbook(reasons.unreadable(name, again, opened, sheet)) from again
        if notes is None:
            notes = scan.result() if scan is not None else {}
        note = notes.get(sheet)
        if note:
            for (r, c), text in note.errors.items():
                if r < len(grid) and c < len(grid[r]):
                    grid[r][c] = ExcelError(text)
        yield sheet, grid, note


def _open(path: Path, name: str, reading: Path | None, opened: Opened | None = None):
    """python-calamine's workbook of `reading` (a reading copy, removed once opened), else of `path`
    (python-calamine opens a package by its path: the one open besides `opened`'s, whose package
    is looked into for the reason when calamine refuses it)."""
    try:
        return python_calamine.CalamineWorkbook.from_path(str(reading or path))
    except python_calamine.PasswordError as err:
        raise UnreadableWorkbook(f"{name} is password-protected (encrypted); remove the password in Excel and drop it in again.") from err
    except Exception as err:  # calamine raises several unrelated types for a bad file
        raise UnreadableWorkbook(reasons.unreadable(name, err, opened or path)) from err
    finally:
        if reading is not None:  # calamine holds the copy open: its name goes now, on every path
            reading.unlink(missing_ok=True)


def _reading_copy(wb: Workbook, opened: Opened, scratch: Path | None) -> Path | None:
    """Note the sheets that cannot be read (a broken relationship) and the Excel 4 macro sheets, and
    make a reading copy where calamine would not read the package as it is (None when it would)."""
    plan = readcopy.plan(opened)
    wb.parts = {s.name: s.part for s in plan.sheets if s.part and not s.broken and not s.macro}
    wb.sheet_names = [s.name for s in plan.sheets]
    wb.unreadable = [(s.name, s.broken) for s in plan.unreadable]
    wb.macro_sheets = [s.name for s in plan.macro_sheets]
    if not plan.needed:
        return None
    return readcopy.make(opened, readcopy.scratch_file(scratch, "reading"), plan)


def read_workbook(
    source: Opened | Path, specs: dict[str, SheetSpec], limits: Limits = Limits(), scratch: Path | None = None, shown: str | None = None
) -> Workbook:
    """Read every sheet of the workbook (or the one sheet of a CSV file, named after the file);
    `specs` maps sheet keys (see `sheet_key`) to specs. A sheet whose name is no intake sheet's is
    routed by its header row (`route`), except the template's `Instructions` and `Lists`.

    The tool's own sheets of a returned workbook are left out: the sheets its markers name (see
    TOOL_SHEETS). Any other sheet is the user's, whatever its name and first cells, and is carried
    through as it came; so is any column the tool's markers do not name (`_intake_sheet`).

    A sheet whose relationship is broken, and an Excel 4 macro sheet, are left out (`unreadable`,
    `macro_sheets`); where calamine cannot read the package as it is, it reads a reading copy
    (batch.workbook.readcopy, made beside `scratch`). `shown`: the file's name as the user knows it (a
    decrypted copy is read under its original's name).

    `source`: the workbook opened once (`batch.workbook.opened.Opened`), handed down to every stage
    (inspection, markers, macros, reading copy, cells, sums), or its path, opened here for the read."""
    with opening(source, shown) as opened:
        return _read(opened, specs, limits, scratch, shown)


def _read(opened: Opened, specs: dict[str, SheetSpec], limits: Limits, scratch: Path | None, shown: str | None) -> Workbook:
    path = opened.path
    kind = inspect(opened, limits, shown)
    marked = markers(opened) if kind == "zip" else Markers()
    wb = Workbook(path, kind=kind, macros=has_macros(opened) if kind == "zip" else [], name=shown or path.name)
    copy = _reading_copy(wb, opened, scratch) if kind == "zip" else None
    for name, grid, note in _grids(opened, kind, wb.name, copy, scratch):
        if name.casefold() in marked.sheets:
            wb.skipped.append(name)
            continue
        key = sheet_key(name)
        spec, header_row, facts = specs.get(key), None, None
        if spec is None and key not in NEVER_ROUTED:  # not named like an intake sheet: routed by its headers
            spec, header_row, facts = route(grid, specs)
        if spec:
            sheet = _intake_sheet(
                name,
                grid,
                spec,
                header_row,
                note.uncalculated if note else None,
                marked.columns.get(name.casefold(), ()),
                note.columns if note else frozenset(),
                note.merged if note else (),
            )
            sheet.routed = facts
            sheet.from_text = kind == "csv"
            if note:
                sheet.uncalculated = dict(note.uncalculated)
                sheet.sum_cells = set(note.sums)
            wb.sheets.append(sheet)
        else:
            wb.sheets.append(OtherSheet(name, grid, facts, _cut_grid(grid, range(len(grid)))))
    return wb
