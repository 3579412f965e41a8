"""Write the returned workbook with xlsxwriter, row by row in constant-memory mode.

Input cells are written back with their original values and types; text is always written as
text (`strings_to_formulas` and `strings_to_urls` off, `write_string`), so input that looks like
a formula never becomes one. The file is written under a temporary name and renamed at the end,
so a crash never leaves a half-written workbook under its final name.
"""

from __future__ import annotations

import functools
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xlsxwriter

from batch import __version__
from batch.pipeline import Result, SheetResult
from batch.programs._kit.calculation import SummaryTable
from batch.programs._kit.findings import FINDINGS_COLUMNS
from batch.reviews import CHOICES
from batch.workbook import cells, sheetxml
from batch.workbook.commentsxml import note
from batch.workbook.reading import (
    EXCEL_COLUMNS,
    RUN_TITLE,
    SUMMARY_TITLE,
    OtherSheet,
    column_marker,
    quoted_sheet,
    sheet_marker,
    tool_sheet_name,
)
from batch.workbook.stylesxml import marked_fills
from batch.workbook.xlsxwriter_private import define_hidden_name, xf_index
from validators.columns import REVIEW_COLUMNS

MONEY = "#,##0.00"
PERCENT = "0.00%"
DATE = "yyyy-mm-dd"
DATETIME = "yyyy-mm-dd hh:mm:ss"
TIME = "hh:mm:ss"
FILL = {"error": "#FFC7CE", "warning": "#FFEB9C"}
HEADER_BG = "#D9D9D9"
COMPUTED_BG = "#BDD7EE"
MAX_WIDTH = 60


class Formats:
    """xlsxwriter formats, each created once."""

    def __init__(self, wb: xlsxwriter.Workbook):
        self.wb = wb
        self.cache: dict[tuple, object] = {}

    def get(
        self,
        num_format: str | None = None,
        fill: str | None = None,
        header: str | None = None,
        wrap=False,
        link=False,
        title=False,
        center=False,
        top=False,
        right=False,
    ):
        key = (num_format, fill, header, wrap, link, title, center, top, right)
        if key not in self.cache:
            props = {}
            if num_format:
                props["num_format"] = num_format
            if fill:
                props.update(bg_color=fill, pattern=1)
            if header:
                props.update(bold=True, bg_color=header, pattern=1, bottom=1, text_wrap=True, valign="top")
            if wrap:
                props.update(text_wrap=True, valign="top")
            if link:
                props.update(font_color="#0563C1", underline=1)
            if title:  # a title runs over the empty cells to its right: never wrapped
                props.update(bold=True, font_size=12)
            if center:
                props.update(align="center")
            if top:
                props.update(valign="top")
            if right:  # a header over numbers, which Excel aligns right
                props.update(align="right")
            self.cache[key] = self.wb.add_format(props) if props else None
        return self.cache[key]


def _width(header: object, kind: str | None) -> float:
    base = {"money": 16, "date": 12, "percent": 10}.get(kind or "", 14)
    longest = max((len(w) for w in str(header or "").split()), default=0)
    return min(MAX_WIDTH, max(base, longest + 2, len(str(header or "")) * 0.6))


def _annotations(res: SheetResult) -> dict[int, dict[int, tuple[str, str]]]:
    """pos -> column index -> (severity, comment text) for findings located to an input cell."""
    col_index = {}
    for i, f in enumerate(res.sheet.fields):
        if f is not None and f not in col_index:
            col_index[f] = i
    located = res.findings[(res.findings["pos"] >= 0) & res.findings["Column"].isin(col_index)]
    notes: dict[int, dict[int, list]] = {}
    for pos, column, sev, code, msg, cite in zip(
        located["pos"], located["Column"], located["Severity"], located["Code"], located["Message"], located["Citation"], strict=False
    ):
        notes.setdefault(int(pos), {}).setdefault(col_index[column], []).append((sev, f"{code} ({sev}): {msg} [{cite}]"))
    order = {"error": 0, "warning": 1, "info": 2}
    out = {}
    for pos, cols in notes.items():
        out[pos] = {}
        for c, items in cols.items():
            worst = min((s for s, _ in items), key=order.get)
            out[pos][c] = (worst, "\n\n".join(t for _, t in items))
    return out


def _layout(sheet) -> tuple[int, list[str], int, int]:
    """Where the sheet's columns go: the input columns written (never past XFD), the computed
    headers, the column of the tool's first column, and the last column of the sheet.

    The tool's columns (computed, Status, Findings, and the reviewer's three) follow the last
    column holding a header or any cell, so they never cover a cell of the user's; a sheet with no room for them before XFD
    (NO_ROOM_FOR_RESULTS) comes back with its own cells only."""
    k = min(len(sheet.headers), EXCEL_COLUMNS)  # only a CSV can be wider than a sheet
    at = sheet.results_at
    if sheet.no_room:
        return k, [], at, max(min(at, EXCEL_COLUMNS), 1) - 1
    computed_headers = list(sheet.spec.computed)
    return k, computed_headers, at, at + sheet.tool_columns - 1


def _comment_parts(res: SheetResult, notes: dict, number: int, first_block: int) -> dict:
    """Replacements for the sheet's comments and VML drawing parts, with every comment."""
    positions = [
        (int(res.sheet.excel_rows[pos]) - 1, c, text[: cells.MAX_TEXT]) for pos, cols in notes.items() for c, (_sev, text) in cols.items()
    ]
    rows = np.array([p[0] for p in positions], dtype=np.int64)
    cols = np.array([p[1] for p in positions], dtype=np.int64)
    refs = np.array([cells.column_letters(c) for c in range(int(cols.max()) + 1)], dtype=object)[cols] + (rows + 1).astype(str).astype(
        object
    )
    # marked as the tool's notes (batch.workbook.commentsxml), so that a round trip of the workbook takes them out
    texts = pd.Series([note(p[2])[: cells.MAX_TEXT] for p in positions], dtype=object)
    return {
        f"xl/comments{number}.xml": lambda _old: sheetxml.comments_xml(refs, texts),
        f"xl/drawings/vmlDrawing{number}.vml": lambda old: sheetxml.vml_xml(old, rows, cols, first_block),
    }


def _style(fmt) -> str:
    """The ` s="N"` attribute of a format (its index in the style table is fixed on first use)."""
    index = xf_index(fmt)
    return f' s="{index}"' if index else ""


STYLE_KEYS = ("plain", "date", "datetime", "time")


def _styles(fmts: Formats, kind: str | None, severity: str | None = None, header: str | None = None) -> dict[str, str]:
    """The styles of a cell of an input column of `kind` (see `cells.input_cells`): its number
    format, and the fill of a finding or a header's look."""
    fill = FILL.get(severity)
    formats = {"plain": {"money": MONEY}.get(kind or ""), "date": DATE, "datetime": DATETIME, "time": TIME}
    return {key: _style(fmts.get(num, fill, header)) for key, num in formats.items()}


LEVELS = (None, *FILL)  # a finding's fill by its index here: 0 none, 1 error, 2 warning


def _per_row(table: dict[str | None, dict[str, str]], severity: np.ndarray) -> dict[str, np.ndarray]:
    """Per row: the styles of the row's severity (an index into LEVELS; 0: no finding points at the cell)."""
    out = {}
    for key in STYLE_KEYS:
        arr = np.full(len(severity), table[None][key], dtype=object)
        for i, level in enumerate(LEVELS[1:], start=1):
            hit = severity == i
            if hit.any():
                arr[hit] = table[level][key]
        out[key] = arr
    return out


def _rows_xml(numbers: np.ndarray, columns: list[np.ndarray], heights: np.ndarray | None = None) -> bytes:
    """`<row>` elements of the rows that hold a cell, from the cells of each column in order (each
    row joined once: adding column after column to growing row strings would copy them each time).
    `heights`: points per row for rows of wrapped text (0: the default height)."""
    if not columns:
        return b""
    rows = map("".join, zip(*[c.tolist() for c in columns], strict=True))
    if heights is None:
        return "".join(f'<row r="{n}">{r}</row>' for n, r in zip(numbers.tolist(), rows, strict=True) if r).encode("utf-8")
    attrs = np.where(heights > 0, ' ht="' + heights.astype(str).astype(object) + '" customHeight="1"', "").tolist()
    return "".join(f'<row r="{n}"{a}>{r}</row>' for n, a, r in zip(numbers.tolist(), attrs, rows, strict=True) if r).encode("utf-8")


def _grid_cells(frame: pd.DataFrame, numbers: np.ndarray, letters: list[str], styles: dict[str, np.ndarray], flagged=None) -> list:
    """The cells of a block of grid rows (object values, columns from A), column by column."""
    out = []
    for c in range(min(frame.shape[1], EXCEL_COLUMNS)):
        col = frame.iloc[:, c]
        if flagged is None and (col.isna() | (col == "")).all():
            continue
        out.append(cells.input_cells(col.to_numpy(dtype=object), letters[c] + numbers, styles, flagged))
    return out


STATUS_FILLS = {"OK": "#C6EFCE", "Flagged": "#FFEB9C", "Ineligible": "#D9D9D9", "Invalid": "#FFC7CE"}
REVIEW = "review"  # the kind of the reviewer's columns
REVIEW_WIDTHS = (24, 14, 40)  # Reviewer Decision, Reviewer, Reviewer Note
TOOL_WIDTH = 40  # the widest a tool's column is sized, except a column of long text, which wraps
WIDE = 90  # the width of a tool's column of long text (Calculation), wrapped


@dataclass
class ToolColumn:
    """One of the tool's columns on an intake sheet: its header, width, and whether it wraps."""

    header: str
    kind: str | None
    width: float
    wrap: bool = False


def tool_columns(res: SheetResult) -> list[ToolColumn]:
    """The tool's columns of an intake sheet (computed, Status, Findings), each as wide as its
    header's longest word and its longest value, up to TOOL_WIDTH; a column of text longer than
    that is WIDE and wraps."""
    sheet, spec = res.sheet, res.sheet.spec
    if sheet.no_room:
        return []
    out = []
    values = {h: res.computed[h] for h in spec.computed} | {"Status": res.status, "Findings": res.row_findings}
    for header, column in values.items():
        kind = spec.computed.get(header)
        word = max((len(w) for w in header.split()), default=0)
        if kind == "money":
            top = column.dropna().abs().max() if column.notna().any() else 0
            longest = len(f"{int(top) // 100:,}") + 4  # digits, separators and cents
        elif kind == "percent":
            longest = 8
        else:
            lengths = column.dropna().astype(str).str.len()
            longest = int(lengths.max()) if len(lengths) else 0
        if longest > TOOL_WIDTH and kind not in ("money", "percent") and header != "Findings":
            out.append(ToolColumn(header, kind, WIDE, wrap=True))
        else:
            out.append(ToolColumn(header, kind, float(min(TOOL_WIDTH, max(word, longest, 8) + 2))))
    if not sheet.review_cols:  # the reviewer's columns, empty until a reviewer writes in them (kept where they are after that)
        out += [ToolColumn(h, REVIEW, w) for h, w in zip(REVIEW_COLUMNS, REVIEW_WIDTHS, strict=True)]
    return out


def tool_styles(fmts: Formats, columns: list[ToolColumn]) -> dict:
    """The formats of the tool's cells: the header, each column's, and Status by value."""
    number = {"money": MONEY, "percent": PERCENT}
    return {
        "header": fmts.get(header=COMPUTED_BG),
        "columns": [fmts.get(number.get(c.kind or ""), wrap=c.wrap) for c in columns],
        "status": {value: fmts.get(fill=fill) for value, fill in STATUS_FILLS.items()},
    }


def tool_cells(res: SheetResult, columns: list[ToolColumn], styles: dict, start: int, stop: int, letters: list[str]) -> list[np.ndarray]:
    """The XML of the tool's cells of rows `start:stop` of an intake sheet, a column at a time;
    `styles` holds the ` s="N"` attribute of each format of `tool_styles`."""
    at = res.sheet.results_at
    numbers = res.sheet.excel_rows[start:stop].astype(str).astype(object)
    out = []
    for j, col in enumerate(columns):
        refs = letters[at + j] + numbers
        if col.kind == REVIEW:  # the reviewer's: no cell of the tool's
            out.append(np.full(stop - start, "", dtype=object))
        elif col.header == "Status":
            status = res.status.iloc[start:stop]
            shown = (status != "").to_numpy()  # a totals row's Status is left blank (its Findings say TOTALS_ROW_SKIPPED)
            cell = np.full(stop - start, "", dtype=object)
            if shown.any():
                look = status[shown].map(styles["status"]).fillna("").to_numpy(dtype=object)
                cell[shown] = cells.strings(status[shown].astype(str), refs[shown], look)
            out.append(cell)
        elif col.header == "Findings":
            findings = res.row_findings.iloc[start:stop]
            out.append(cells.computed_cells(findings.where(findings != ""), refs, styles["columns"][j], False))
        else:
            values = res.computed[col.header].iloc[start:stop]
            out.append(cells.computed_cells(values, refs, styles["columns"][j], cents=col.kind == "money"))
    return out


def marked_columns(sheet, written: int) -> list[int]:
    """The columns the marker of the tool's columns of an intake sheet returned in place covers:
    the `written` columns the tool writes from its first column on, and the reviewer's columns
    where a returned workbook has them (kept where they are)."""
    return [*range(sheet.results_at, sheet.results_at + written), *sheet.review_cols.values()]


def tool_headers(sheet) -> list[str]:
    """The headers of the tool's columns of an intake sheet, in order (none where it has no room)."""
    if sheet.no_room:
        return []
    return [*sheet.spec.computed, "Status", "Findings", *([] if sheet.review_cols else REVIEW_COLUMNS)]


def decision_prompt() -> dict[str, str]:
    """The input message of the Reviewer Decision column: the choices (a message, not a list: a
    list would refuse `Waive CODE`)."""
    return {"input_title": REVIEW_COLUMNS[0], "input_message": CHOICES}


def frozen_at(sheet) -> tuple[int, int]:
    """Where an intake sheet is frozen when it has no pane of its own: below the header row, and
    right of the record-ID column when that is one of the first three columns."""
    key = sheet.spec.key[0] if sheet.spec.key else None
    at = next((sheet.kept[i] for i, f in enumerate(sheet.fields) if f is not None and f == key), None)
    return sheet.header_row + 1, at + 1 if at is not None and at < 3 else 0


def _write_intake(wb, fmts: Formats, res: SheetResult):
    """Widths, freeze panes, autofilter and the first comment by xlsxwriter; returns the rows'
    generator (every cell, from the rows above the header on) with the sheet's dimension, and the
    comments of the sheet."""
    sheet, spec = res.sheet, res.sheet.spec
    ws = wb.add_worksheet(sheet.name)
    kinds = {c.header: c.kind for c in spec.columns}
    in_kinds = [kinds.get(f) if f else None for f in sheet.fields]
    k, _computed_headers, at, last_col = _layout(sheet)
    for j, h in enumerate(sheet.headers[:k]):
        ws.set_column(j, j, _width(h, in_kinds[j]))
    for j, col in enumerate(tool_columns(res)):
        ws.set_column(at + j, at + j, col.width)
    h = sheet.header_row
    ws.freeze_panes(*frozen_at(sheet))
    decision = next((at + j for j, col in enumerate(tool_columns(res)) if col.header == REVIEW_COLUMNS[0]), None)
    if decision is not None:
        last = int(sheet.excel_rows[-1]) - 1 if len(sheet.excel_rows) else h + 1
        ws.data_validation(h + 1, decision, max(last, h + 1), decision, {"validate": "any", **decision_prompt()})
    ws.autofilter(h, 0, max(h, h + sheet.grid_height), last_col)
    if not sheet.no_room:  # the marker of the tool's columns, those written here (see batch.workbook.reading)
        define_hidden_name(wb, *column_marker(sheet.name, spec.name, h, range(at, last_col + 1)), ws.index)

    notes = _annotations(res)
    # xlsxwriter writes the first comment, so that it creates the comments and drawing parts with
    # their relationships; `_comment_parts` then fills them with every comment of the sheet
    for pos, cols in list(notes.items())[:1]:
        c, (_sev, text) = next(iter(cols.items()))
        ws.write_comment(int(sheet.excel_rows[pos]) - 1, c, text[: cells.MAX_TEXT], {"x_scale": 3, "y_scale": 2.5})
    return _sheet_rows(fmts, res, in_kinds, notes), notes


def _top_rows(fmts: Formats, sheet, letters: list[str], computed_headers: list[str], at: int) -> bytes:
    """The rows above the header as they came, and the header row (the input's headers, then the
    tool's in their own colour)."""
    h = sheet.header_row
    width = max([len(r) for r in sheet.preamble] + [len(sheet.headers)])
    grid = [*sheet.preamble, list(sheet.headers)]
    frame = pd.DataFrame([list(r) + [None] * (width - len(r)) for r in grid], dtype=object)
    numbers = np.arange(1, h + 2).astype(str).astype(object)
    plain, header = _styles(fmts, None), _styles(fmts, None, header=HEADER_BG)
    styles = {key: np.array([plain[key]] * h + [header[key]], dtype=object) for key in STYLE_KEYS}
    flagged = np.arange(h + 1) == h  # a blank header cell keeps the header's look
    columns = _grid_cells(frame, numbers, letters, styles, flagged)
    if not sheet.no_room:
        tool = pd.Series(tool_headers(sheet), dtype=object)
        refs = np.array([letters[at + j] for j in range(len(tool))], dtype=object) + str(h + 1)
        header_cells = "".join(cells.strings(tool, refs, np.full(len(tool), _style(fmts.get(header=COMPUTED_BG)), dtype=object)).tolist())
        columns.append(np.array([""] * h + [header_cells], dtype=object))
    return _rows_xml(numbers, columns)


def _sheet_rows(fmts: Formats, res: SheetResult, in_kinds, notes):
    """The generator of the sheet's rows (see batch.workbook.sheetxml), and the sheet's dimension."""
    sheet = res.sheet
    k, computed_headers, at, last_col = _layout(sheet)
    n = len(sheet.excel_rows)
    # per input column and row: the number format of the column, or the fill of a finding
    tables = {kind: {sev: _styles(fmts, kind, sev) for sev in (None, *FILL)} for kind in set(in_kinds)}
    severity = np.zeros((n, max(k, 1)), dtype=np.int8)  # LEVELS index per cell (int8: a sheet of 100,000 x 44 takes 4 MB)
    for pos, cols in notes.items():
        for c, (sev, _text) in cols.items():
            severity[pos, c] = LEVELS.index(sev) if sev in FILL else 0
    tool = tool_columns(res)
    looks = tool_styles(fmts, tool)
    tool_looks = {"columns": [_style(f) for f in looks["columns"]], "status": {v: _style(f) for v, f in looks["status"].items()}}

    @functools.cache
    def plain_styles(kind, rows: int) -> dict[str, np.ndarray]:
        """The styles of a chunk of a column no finding points at (one set per kind and length)."""
        return {key: np.full(rows, tables[kind][None][key], dtype=object) for key in STYLE_KEYS}

    # only the input columns holding a cell or a finding are generated (a stray cell far to the
    # right keeps thousands of empty columns before it)
    filled = sheet.filled[:k] if sheet.filled is not None else np.ones(k, dtype=bool)
    active = np.flatnonzero(filled | (severity[:, :k] > 0).any(axis=0))
    width = max([last_col + 1, k] + [len(r) for r in sheet.preamble])
    letters = [cells.column_letters(j) for j in range(min(width, EXCEL_COLUMNS))]

    top = _top_rows(fmts, sheet, letters, computed_headers, at)  # now: the styles are fixed when the workbook closes

    def rows():
        yield top
        for start in range(0, n, sheetxml.CHUNK_ROWS):
            stop = min(n, start + sheetxml.CHUNK_ROWS)
            numbers = sheet.excel_rows[start:stop].astype(str).astype(object)
            columns = []
            for c in active:
                sev = severity[start:stop, c]
                flagged = sev > 0
                styles = _per_row(tables[in_kinds[c]], sev) if flagged.any() else plain_styles(in_kinds[c], stop - start)
                values = sheet.cells.iloc[start:stop, c].to_numpy(dtype=object)  # a view: no copy of the sheet
                columns.append(cells.input_cells(values, letters[c] + numbers, styles, flagged))
            columns += tool_cells(res, tool, tool_looks, start, stop, letters)
            yield _rows_xml(numbers, columns)

    last_row = int(sheet.excel_rows[-1]) if n else sheet.header_row + 1
    return rows, f"A1:{letters[min(width, EXCEL_COLUMNS) - 1]}{max(last_row, sheet.header_row + 1)}"


def _write_other(wb, fmts: Formats, sheet: OtherSheet):
    """A sheet carried through: its cells as they came, generated like the intake rows."""
    wb.add_worksheet(sheet.name)
    grid = sheet.grid
    width = min(max((len(r) for r in grid), default=0), EXCEL_COLUMNS)
    letters = [cells.column_letters(j) for j in range(max(width, 1))]
    plain = _styles(fmts, None)

    def rows():
        for start in range(0, len(grid), sheetxml.CHUNK_ROWS):
            block = grid[start : start + sheetxml.CHUNK_ROWS]
            frame = pd.DataFrame([list(r) + [None] * (width - len(r)) for r in block], dtype=object)
            numbers = np.arange(start + 1, start + 1 + len(block)).astype(str).astype(object)
            styles = {key: np.full(len(block), plain[key], dtype=object) for key in STYLE_KEYS}
            yield _rows_xml(numbers, _grid_cells(frame, numbers, letters, styles))

    return rows, f"A1:{letters[max(width, 1) - 1]}{max(len(grid), 1)}"


FINDINGS_SHEET_COLUMNS = [*FINDINGS_COLUMNS, "Cell", "Waived"]
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CELL_LIKE = re.compile(r"(?:[A-Za-z]{1,3}[0-9]+|[RrCc][0-9]*|[RrCc][0-9]*[RrCc][0-9]*)")


def sheet_ref(name: str) -> str:
    """A sheet's name as an address writes it: quoted unless plain (`Transfers`, `'Transfers (Nov)'`)."""
    return name if PLAIN_NAME.fullmatch(name) and not CELL_LIKE.fullmatch(name) else quoted_sheet(name)


def finding_cells(result: Result) -> pd.Series:
    """Each finding's cell in the returned workbook (`Transfers!H12`): the cell of its row and
    column; the row's record-ID cell for a finding about a row; the header cell for a finding
    about a column; A1 for a finding about a sheet. Blank for a finding about no sheet."""
    f = result.findings
    out = pd.Series("", index=f.index, dtype=object)
    for s in result.sheets:
        name = s.sheet.name if isinstance(s, SheetResult) else s.name
        mine = f.index[f["Sheet"] == name]
        if not len(mine):
            continue
        if not isinstance(s, SheetResult):
            out[mine] = sheet_ref(name) + "!A1"
            continue
        sheet = s.sheet
        k, computed_headers, at, last_col = _layout(sheet)
        column = {}
        for i, (field_name, header) in enumerate(zip(sheet.fields[:k], sheet.headers[:k], strict=False)):
            at_col = sheet.kept[i] if i < len(sheet.kept) else i  # the column in the returned sheet, as in the input
            if field_name:
                column.setdefault(field_name, at_col)
            column.setdefault(str(header), at_col)
        column.update({h: at + j for j, h in enumerate(tool_headers(sheet))})
        column.update(sheet.review_cols)  # a returned workbook's reviewer columns, where they are
        id_col = next((column[h] for h in sheet.spec.key if h in column), 0)
        part = f.loc[mine]
        col = part["Column"].map(column)
        row = part["Row"].astype("Int64")
        has_row = row.notna().to_numpy()
        has_col = col.notna().to_numpy()
        col = col.fillna(id_col).where(has_row | has_col, 0).astype(int)
        row = row.fillna(sheet.header_row + 1).where(has_row | has_col, 1).astype(int)
        letters = np.array([cells.column_letters(j) for j in range(int(col.max()) + 1)], dtype=object)
        out[mine] = sheet_ref(name) + "!" + letters[col.to_numpy()] + row.astype(str).to_numpy(dtype=object)
    return out


WRAPPED = {"Message": 80, "Citation": 34, "Waived": 30}  # the Findings columns that wrap, and their widths


def _findings_widths(f: pd.DataFrame, where: pd.Series) -> list[float]:
    """Each Findings column as wide as its longest value (within bounds); the long texts wrap."""

    def longest(values: pd.Series, low: float, high: float) -> float:
        n = values.dropna().astype(str).str.len().max() if len(values) else 0
        return float(min(high, max(low, (0 if pd.isna(n) else n) + 2)))

    sized = {"Sheet": (12, 32), "Row": (7, 8), "Record ID": (12, 24), "Column": (14, 36), "Code": (16, 44), "Severity": (9, 9)}
    out = []
    for col in FINDINGS_SHEET_COLUMNS:
        if col in WRAPPED:
            out.append(float(WRAPPED[col]))
        elif col == "Cell":
            out.append(longest(where, 14, 40))
        else:
            out.append(longest(f[col], *sized[col]))
    return out


def _write_findings(wb, fmts: Formats, result: Result, name: str):
    """Headers by xlsxwriter; the rows generated whole columns at a time (see batch.workbook.cells), each
    as tall as its wrapped message."""
    ws = wb.add_worksheet(name)
    f = result.findings
    where = finding_cells(result)
    widths = _findings_widths(f, where)
    wrap = fmts.get(wrap=True)
    for j, w in enumerate(widths):
        ws.set_column(j, j, w, wrap if FINDINGS_SHEET_COLUMNS[j] in WRAPPED else None)
    for j, h in enumerate(FINDINGS_SHEET_COLUMNS):
        ws.write_string(0, j, h, fmts.get(header=HEADER_BG))
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, max(len(f), 1), len(FINDINGS_SHEET_COLUMNS) - 1)
    print_setup(ws, 0)
    # every cell at the top of its row, as the wrapped messages are
    formats = {"Message": wrap, "Citation": wrap, "Row": fmts.get(center=True, top=True)}
    plain_format, link_format = fmts.get(top=True), fmts.get(link=True, top=True)
    for fmt in (*formats.values(), plain_format, link_format):
        _style(fmt)  # each format's index is fixed now, before the workbook closes
    letters = [cells.column_letters(j) for j in range(len(FINDINGS_SHEET_COLUMNS))]

    def rows(restyle=lambda s: s):
        """The rows; `restyle` turns a style attribute into another workbook's (see batch.workbook.inplace)."""
        styles = {k: restyle(_style(fmt)) for k, fmt in formats.items()}
        plain, link_style = restyle(_style(plain_format)), restyle(_style(link_format))
        for start in range(0, len(f), sheetxml.CHUNK_ROWS):
            part = f.iloc[start : start + sheetxml.CHUNK_ROWS]
            numbers = np.arange(start + 2, start + 2 + len(part)).astype(str).astype(object)
            columns = []
            for j, col in enumerate(FINDINGS_COLUMNS):
                values = part[col]
                if col == "Row":
                    columns.append(cells.computed_cells(values.astype("Float64"), letters[j] + numbers, styles["Row"], cents=False))
                else:
                    values = values.astype(object)
                    text = values.where(values.notna() & (values != ""))
                    columns.append(
                        cells.computed_cells(text.astype(object), letters[j] + numbers, styles.get(col, plain), cents=False, as_text=True)
                    )
            j = FINDINGS_SHEET_COLUMNS.index("Cell")
            columns.append(cells.links(where.iloc[start : start + sheetxml.CHUNK_ROWS], letters[j] + numbers, link_style))
            if "Waived" in part:  # the reviewer's note of a waived finding
                waived = part["Waived"].astype(object)
                j = FINDINGS_SHEET_COLUMNS.index("Waived")
                text = waived.where(waived.notna() & (waived != ""))
                columns.append(cells.computed_cells(text, letters[j] + numbers, styles["Message"], cents=False, as_text=True))
            tall = np.maximum(line_counts(part["Message"], WRAPPED["Message"]), line_counts(part["Citation"], WRAPPED["Citation"]))
            yield _rows_xml(numbers, columns, np.where(tall > 1, tall * LINE_HEIGHT, 0))

    return rows, f"A1:{letters[-1]}{len(f) + 1}"


LINE_HEIGHT = 15  # points: one line of the default 11-point font


def lines(text, width: float) -> int:
    """Lines a text takes when wrapped in a column `width` characters wide (an estimate: one
    character a unit of width, less one for the margins)."""
    per_line = max(int(width) - 1, 1)
    return sum(max(1, -(-len(part) // per_line)) for part in str(text).split("\n"))


def line_counts(texts: pd.Series, width: float) -> np.ndarray:
    """`lines` of a whole column of texts (paragraphs counted approximately: each line feed adds one)."""
    t = texts.fillna("").astype(str)
    per_line = max(int(width) - 1, 1)
    return (np.maximum(1, -(-t.str.len().to_numpy() // per_line)) + t.str.count("\n").to_numpy()).astype(int)


def shown(value, money: bool) -> str:
    """About what a cell of a table shows, for its column's width ("" for a missing value)."""
    if value is None or (not isinstance(value, (str, list, tuple, set, dict)) and bool(pd.isna(value))):
        return ""
    if money and not isinstance(value, str):
        return f"{float(value) / 100:,.2f}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def table_widths(
    tables: list[SummaryTable], first: float = 0, low: float = 10, high: float = 48, whole_headers: bool = False
) -> dict[int, float]:
    """Column widths that hold the values of tables written one below the other, and their
    headers' longest words (the headers wrap) or, with `whole_headers`, their whole headers;
    between `low` and `high`, and the first column at least `first`."""
    widths: dict[int, float] = {}
    for t in tables:
        for j, h in enumerate(t.table.columns):
            money = t.formats.get(str(h)) == "money"
            longest = max((len(shown(v, money)) for v in t.table.iloc[:, j]), default=0)
            head = len(str(h)) if whole_headers else max((len(w) for w in str(h).split()), default=0)
            widths[j] = max(widths.get(j, low), min(high, max(longest, head) + 2))
    if first:
        widths[0] = max(widths.get(0, 0), first)
    return widths


def write_table(ws, fmts: Formats, r: int, t: SummaryTable, widths: dict[int, float] | None = None) -> int:
    """A title, a header row (as tall as its wrapped headers need in `widths`) and the rows; returns
    the row after the blank row that follows the table."""
    ws.write_string(r, 0, t.title, fmts.get(title=True))
    r += 1
    for j, h in enumerate(t.table.columns):
        numeric = pd.api.types.is_numeric_dtype(t.table.iloc[:, j]) and not pd.api.types.is_bool_dtype(t.table.iloc[:, j])
        ws.write_string(r, j, str(h), fmts.get(header=HEADER_BG, right=numeric))
    if widths:
        ws.set_row(r, LINE_HEIGHT * max(lines(h, widths.get(j, 8.43)) for j, h in enumerate(t.table.columns)))
    num = [{"money": MONEY, "percent": PERCENT}.get(t.formats.get(str(h))) for h in t.table.columns]
    for row in t.table.itertuples(index=False):
        r += 1
        for j, v in enumerate(row):
            if isinstance(v, str):
                ws.write_string(r, j, v)
            elif v is not None and not pd.isna(v):
                ws.write_number(r, j, float(v) / 100 if num[j] == MONEY else float(v), fmts.get(num[j]))
    return r + 2


def print_setup(ws, title_rows: int | None = 0) -> None:
    """Printed as a reviewer reads it: landscape, one page wide, the header row on every page, and
    the sheet, file and page in the footer."""
    ws.set_landscape()
    ws.fit_to_pages(1, 0)
    if title_rows is not None:
        ws.repeat_rows(title_rows)
    ws.set_footer("&L&A&C&F&RPage &P of &N")


def awards_by_program(result: Result) -> SummaryTable:
    """Rows and award dollars of each sheet, for the chart."""
    rows = []
    for res in result.intake:
        m = res.program
        counts = res.counts
        rows.append(
            {
                "Sheet": res.sheet.name,
                "Program": m.schema.program,
                "Rows": counts["rows"],
                **{s: counts[s] for s in ("OK", "Flagged", "Ineligible", "Invalid")},
                "Award ($)": int(_award_cents(res).sum()),
            }
        )
    table = pd.DataFrame(rows, columns=["Sheet", "Program", "Rows", "OK", "Flagged", "Ineligible", "Invalid", "Award ($)"])
    return SummaryTable("Rows by status and award by program (award excludes Invalid and Ineligible rows)", table, {"Award ($)": "money"})


STATUS_COLUMNS = ["OK", "Flagged", "Ineligible", "Invalid"]


def _award_cents(res: SheetResult) -> pd.Series:
    """The award of each row in cents, 0 where the row is Invalid or Ineligible (or a totals row)."""
    column = res.program.award_column
    award = res.computed[column] if column in res.computed else res.typed[column]
    counted = ~res.status.isin(["Invalid", "Ineligible", ""])
    return award.where(counted, 0).fillna(0).astype("int64")


def by_month(res: SheetResult) -> SummaryTable | None:
    """Rows by status and award by month of the sheet's one date column (Transfer Date,
    Application Date, ...); rows whose date is blank or unreadable under `(no date)`."""
    column = res.program.month_column
    if column is None or column not in res.typed:
        return None
    records = (res.status != "").to_numpy()  # a totals row is no record
    dates = res.typed[column]
    key = (dates.dt.year * 100 + dates.dt.month).astype("Int64").fillna(-1)
    frame = pd.DataFrame({"month": key, "status": res.status, "award": _award_cents(res)})[records]
    if frame.empty:
        return None
    counts = pd.crosstab(frame["month"], frame["status"]).reindex(columns=STATUS_COLUMNS, fill_value=0)
    table = counts.assign(Rows=counts.sum(axis=1), award=frame.groupby("month")["award"].sum()).reset_index()
    table = table.assign(_last=table["month"] < 0).sort_values(["_last", "month"])
    label = {k: "(no date)" if k < 0 else f"{k // 100:04d}-{k % 100:02d}" for k in table["month"].unique().tolist()}
    table = table.assign(Month=table["month"].map(label)).rename(columns={"award": "Award ($)"})
    table = table[["Month", "Rows", *STATUS_COLUMNS, "Award ($)"]].reset_index(drop=True)
    return SummaryTable(
        f"{res.sheet.name}: rows and award by month of {column} (award excludes Invalid and Ineligible rows)", table, {"Award ($)": "money"}
    )


def findings_by_code(findings: pd.DataFrame) -> SummaryTable | None:
    """Findings of each code by severity, the most frequent first."""
    if findings.empty:
        return None
    table = pd.crosstab(findings["Code"], findings["Severity"])
    table = table.reindex(columns=[s for s in ("error", "warning", "info") if s in table.columns])
    table = table.assign(Total=table.sum(axis=1)).reset_index()
    table = table.sort_values(["Total", "Code"], ascending=[False, True]).reset_index(drop=True)
    table.columns.name = None
    return SummaryTable("Findings by code (most frequent first)", table)


def _awards_chart(wb, name: str, totals: SummaryTable, first_row: int):
    """Awards by program as horizontal bars (the labels stay level), sized to the programs; and
    the rows it covers."""
    n = len(totals.table)
    chart = wb.add_chart({"type": "bar"})
    award = len(totals.table.columns) - 1
    chart.add_series(
        {
            "name": "Award ($)",
            "categories": [name, first_row, 1, first_row + n - 1, 1],
            "values": [name, first_row, award, first_row + n - 1, award],
            "data_labels": {"value": True, "num_format": "$#,##0"},
        }
    )
    chart.set_title({"name": "Awards by program"})
    chart.set_legend({"none": True})
    chart.set_x_axis({"num_format": '$#,##0.0,,"M"'})  # in millions: short labels that stay level
    chart.set_y_axis({"reverse": True})  # the programs in the table's order, top down
    height = 110 + 40 * n
    chart.set_size({"width": 760, "height": height})
    return chart, -(-height // 20) + 1  # rows of the default 20 pixels, and one to spare


def _write_summary(wb, fmts: Formats, result: Result, name: str) -> None:
    """The first table, the awards chart below it, then every other table below the chart, so the
    chart never covers a table; columns as wide as the tables need."""
    ws = wb.add_worksheet(name)
    print_setup(ws, None)
    totals = awards_by_program(result)
    tables = []
    for res in result.intake:
        month = by_month(res)
        tables += [SummaryTable(f"{res.sheet.name}: {t.title}", t.table, t.formats) for t in res.summary]
        tables += [month] if month else []
    codes = findings_by_code(result.findings)
    tables += [codes] if codes is not None else []
    widths = table_widths([totals, *tables], first=36)
    for j, w in widths.items():
        ws.set_column(j, j, w)
    ws.write_string(0, 0, f"{SUMMARY_TITLE} {result.path.name}", fmts.get(title=True))
    r = write_table(ws, fmts, 2, totals, widths)
    if len(totals.table):
        chart, rows = _awards_chart(wb, name, totals, 4)
        ws.insert_chart(r, 0, chart)
        r += rows + 1
    for t in tables:
        r = write_table(ws, fmts, r, t, widths)


def _write_run(wb, fmts: Formats, result: Result, name: str) -> None:
    ws = wb.add_worksheet(name)
    print_setup(ws, None)
    ws.write_string(0, 0, RUN_TITLE, fmts.get(title=True))
    lines = [
        ("Input file", result.path.name),
        ("Input SHA-256", result.sha256),
        ("Run at (UTC)", result.started.strftime("%Y-%m-%d %H:%M:%S")),
        ("As-of date", result.as_of.isoformat() if result.as_of else ""),
        ("njcredits version", __version__),
    ] + [(f"Rules version: {sheet}", label) for sheet, label in result.rules_versions().items()]
    for i, (key, value) in enumerate(lines, start=1):
        ws.write_string(i, 0, key)
        ws.write_string(i, 1, value)
    counts = []
    for res in result.intake:
        c = res.counts
        sev = res.findings["Severity"].value_counts()
        counts.append(
            {
                "Sheet": res.sheet.name,
                "Rows read": c["rows"],
                "Rows computed": c["rows"] - c["Invalid"],
                "Invalid": c["Invalid"],
                "Ineligible": c["Ineligible"],
                "Flagged": c["Flagged"],
                "OK": c["OK"],
                "Errors": int(sev.get("error", 0)),
                "Warnings": int(sev.get("warning", 0)),
                "Info": int(sev.get("info", 0)),
                "Totals rows skipped": res.totals,
            }
        )
    for other in (s for s in result.sheets if isinstance(s, OtherSheet)):
        counts.append({"Sheet": other.name, "Rows read": 0, "Rows computed": 0})
    table = pd.DataFrame(
        counts,
        columns=[
            "Sheet",
            "Rows read",
            "Rows computed",
            "Invalid",
            "Ineligible",
            "Flagged",
            "OK",
            "Errors",
            "Warnings",
            "Info",
            "Totals rows skipped",
        ],
    )
    counts_table = SummaryTable("Counts per sheet", table)
    widths = table_widths([counts_table], first=max(30, max(len(k) for k, _ in lines) + 2))
    for j, w in widths.items():
        ws.set_column(j, j, w)
    r = write_table(ws, fmts, len(lines) + 2, counts_table, widths)
    # what the returned workbook could not keep of the input (FORMATTING_NOT_KEPT, MACROS_REMOVED,
    # ENCRYPTION_REMOVED, SHEET_NOT_READABLE): findings about the workbook, not a sheet
    about = result.findings[result.findings["Sheet"] == ""]
    if len(about):
        write_table(ws, fmts, r, SummaryTable("The workbook", about[["Code", "Severity", "Message"]].reset_index(drop=True)))


def tool_sheets(result: Result) -> dict[str, str]:
    """The name of each sheet the tool writes: `Findings`, `Summary`, `Run`, `Rules`, or, where a
    sheet of the user's already has that name, `Summary (njcredits)` (the user's sheet keeps its
    name)."""
    taken = [s.sheet.name if isinstance(s, SheetResult) else s.name for s in result.sheets]
    names: dict[str, str] = {}
    for role in ("Findings", "Summary", "Run", "Rules"):
        names[role] = tool_sheet_name(role, taken + list(names.values()))
    return names


def write_tool_sheets(wb, fmts: Formats, result: Result):
    """The Findings, Summary and Run sheets, and the marker naming them (what the next run
    replaces, see batch.workbook.reading); returns the Findings rows' generator (see batch.workbook.sheetxml)."""
    from batch.workbook.rulebook import write_rules_sheet

    names = tool_sheets(result)
    findings = _write_findings(wb, fmts, result, names["Findings"])
    _write_summary(wb, fmts, result, names["Summary"])
    _write_run(wb, fmts, result, names["Run"])
    programs = []  # each program present, once, in the order of its sheets
    for res in result.intake:
        if all(res.program is not p for p in programs):
            programs.append(res.program)
    write_rules_sheet(wb, fmts, programs, names["Rules"])
    for role, name in names.items():  # the markers of the tool's sheets (see batch.workbook.reading)
        define_hidden_name(wb, *sheet_marker(role, name))
    return findings


WRITER_OPTIONS = {
    "constant_memory": True,
    "strings_to_formulas": False,
    "strings_to_urls": False,
    "strings_to_numbers": False,
    "nan_inf_to_errors": True,
}


def write(result: Result, out_path: Path) -> Path:
    """Write the returned workbook atomically (temporary file, then rename): the user's own
    package with the tool's additions for an .xlsx or .xlsm (batch.workbook.inplace), a workbook written
    anew for a CSV or .xls."""
    if result.in_place:
        from batch.workbook.inplace import write_in_place

        return write_in_place(result, out_path)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.partial")
    wb = xlsxwriter.Workbook(str(tmp), WRITER_OPTIONS)
    try:
        wb.set_properties({"title": f"{result.path.name} annotated by njcredits", "comments": f"njcredits {__version__}"})
        fmts = Formats(wb)
        generated, replace = {}, {}
        comment_sheets, block = 0, 1
        for i, sheet in enumerate(result.sheets, start=1):
            if isinstance(sheet, SheetResult):
                generated[f"xl/worksheets/sheet{i}.xml"], notes = _write_intake(wb, fmts, sheet)
                if notes:
                    comment_sheets += 1
                    replace.update(_comment_parts(sheet, notes, comment_sheets, block))
                    block += sheetxml.blocks_for(sum(len(c) for c in notes.values()))
            else:
                generated[f"xl/worksheets/sheet{i}.xml"] = _write_other(wb, fmts, sheet)
        generated[f"xl/worksheets/sheet{len(result.sheets) + 1}.xml"] = write_tool_sheets(wb, fmts, result)
        wb.close()
        # the fills of flagged cells marked as the tool's, with the style each replaced, as in place
        fills = {}
        for key, fmt in fmts.cache.items():
            severity = next((sev for sev, colour in FILL.items() if key[1] == colour), None)
            plain = fmts.cache.get((key[0], None, *key[2:]))
            if severity and fmt is not None and fmt.xf_index is not None:
                fills[fmt.xf_index] = (plain.xf_index or 0 if plain is not None else 0, severity)
        replace["xl/styles.xml"] = lambda old: [marked_fills(old, fills)]
        sheetxml.splice(tmp, generated, replace)
        os.replace(tmp, out_path)
        result.timed("write", clock)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out_path
