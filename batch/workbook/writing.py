"""Write the returned workbook: `write` hands an .xlsx or .xlsm to the in-place writer
(`batch.workbook.inplace`) and writes the workbook of a CSV or .xls anew here, with xlsxwriter, row
by row in constant-memory mode: the user's sheets as they came, the tool's columns on each intake
sheet (`batch.workbook.toolcolumns`), then the tool's sheets (`batch.workbook.toolsheets`).

Input cells are written back with their original values and types; text is always written as
text (`strings_to_formulas` and `strings_to_urls` off, `write_string`), so input that looks like
a formula never becomes one. The file is written under a temporary name and renamed at the end,
so a crash never leaves a half-written workbook under its final name.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import xlsxwriter

from batch import __version__
from batch.pipeline import Result, SheetResult
from batch.workbook import cells, csvcells, sheetxml
from batch.workbook.commentsxml import note
from batch.workbook.inplace import write_in_place
from batch.workbook.looks import (
    COMPUTED_BG,
    DATE,
    DATETIME,
    FILL,
    HEADER_BG,
    LINE_HEIGHT,
    MONEY,
    TIME,
    WRITER_OPTIONS,
    Formats,
    column_width,
    lines,
    style,
    text_width,
)
from batch.workbook.reading import (
    EXCEL_COLUMNS,
    OtherSheet,
    column_marker,
)
from batch.workbook.stylesxml import marked_fills
from batch.workbook.toolcolumns import (
    annotations,
    decision_column,
    decision_prompt,
    frozen_at,
    layout,
    tool_cells,
    tool_columns,
    tool_headers,
    tool_styles,
)
from batch.workbook.toolsheets import write_tool_sheets
from batch.workbook.xlsxwriter_private import define_hidden_name, parts_in_memory, remove_row_files

MAX_WIDTH = 60


def _width(header: object, kind: str | None) -> float:
    """An input column's width in a workbook written anew: its kind's, widened to hold the header's
    longest word (the header wraps at its words, in bold) and to keep a long header to a few lines."""
    base = {"money": 16, "date": 12, "percent": 10}.get(kind or "", 14)
    text = str(header if header is not None else "")
    word = max((column_width(w, bold=True) for w in text.split()), default=0)
    return min(MAX_WIDTH, max(base, word, round(text_width(text, bold=True) * 0.6, 1)))


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


STYLE_KEYS = ("plain", "date", "datetime", "time")


def _styles(fmts: Formats, kind: str | None, severity: str | None = None, header: str | None = None) -> dict[str, str]:
    """The styles of a cell of an input column of `kind` (see `cells.input_cells`): its number
    format, and the fill of a finding or a header's look."""
    fill = FILL.get(severity)
    formats = {"plain": {"money": MONEY}.get(kind or ""), "date": DATE, "datetime": DATETIME, "time": TIME}
    return {key: style(fmts.get(num, fill, header)) for key, num in formats.items()}


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


def _grid_cells(frame: pd.DataFrame, numbers: np.ndarray, letters: list[str], styles: dict[str, np.ndarray], flagged=None) -> list:
    """The cells of a block of grid rows (object values, columns from A), column by column."""
    out = []
    for c in range(min(frame.shape[1], EXCEL_COLUMNS)):
        col = frame.iloc[:, c]
        if flagged is None and (col.isna() | (col == "")).all():
            continue
        out.append(cells.input_cells(col.to_numpy(dtype=object), letters[c] + numbers, styles, flagged))
    return out


def _shown_styles(fmts: Formats) -> np.ndarray:
    """The ` s="N"` of a CSV's number shown in a format of its own (csvcells.FORMATS): by the
    format's index and the cell's LEVELS index (a finding's fill), or, in the last column, the
    header's look."""
    table = np.empty((len(csvcells.FORMATS), len(LEVELS) + 1), dtype=object)
    for i, f in enumerate(csvcells.FORMATS):
        table[i, : len(LEVELS)] = [style(fmts.get(f, FILL.get(level))) for level in LEVELS]
        table[i, -1] = style(fmts.get(f, None, HEADER_BG))
    return table


def _as_excel_reads(values: np.ndarray, kind: str | None, plain: np.ndarray, levels: np.ndarray, shown: np.ndarray):
    """A CSV's cells as Excel reads them where the cell shows the same characters and the column's
    reader reads the same (batch.workbook.csvcells), and `plain` with each number that Excel shows
    in a format of its own given that format with its finding's fill (`levels`, -1 for the
    header's look): `1,250,000` stays `1,250,000`."""
    converted, formats = csvcells.excel_values(values)
    ok = csvcells.judged_alike(kind, values, converted)
    if not ok.any():
        return values, plain
    values = np.where(ok, converted, values)
    at = np.flatnonzero(ok & (formats >= 0))
    if len(at):
        plain = plain.copy()
        plain[at] = shown[formats[at], levels[at]]
    return values, plain


def _write_intake(wb, fmts: Formats, res: SheetResult):
    """Widths, freeze panes, autofilter and the first comment by xlsxwriter; returns the rows'
    generator (every cell, from the rows above the header on) with the sheet's dimension, and the
    comments of the sheet."""
    sheet, spec = res.sheet, res.sheet.spec
    ws = wb.add_worksheet(sheet.name)
    kinds = {c.header: c.kind for c in spec.columns}
    in_kinds = [kinds.get(f) if f else None for f in sheet.fields]
    k, _computed_headers, at, last_col = layout(sheet)
    widths = [_width(h, in_kinds[j]) for j, h in enumerate(sheet.headers[:k])]
    for j, w in enumerate(widths):
        ws.set_column(j, j, w)
    tool = tool_columns(res)
    for j, col in enumerate(tool):
        ws.set_column(at + j, at + j, col.width)
    h = sheet.header_row
    ws.freeze_panes(*frozen_at(sheet))
    decision = decision_column(res, tool) if not sheet.no_room else None
    if decision is not None:
        last = int(sheet.excel_rows[-1]) - 1 if len(sheet.excel_rows) else h + 1
        ws.data_validation(h + 1, decision, max(last, h + 1), decision, decision_prompt(res))
    ws.autofilter(h, 0, max(h, h + sheet.grid_height), last_col)
    if not sheet.no_room:  # the marker of the tool's columns, those written here (see batch.workbook.reading)
        define_hidden_name(wb, *column_marker(sheet.name, spec.name, h, range(at, last_col + 1)), ws.index)

    notes = annotations(res)
    # xlsxwriter writes the first comment, so that it creates the comments and drawing parts with
    # their relationships; `_comment_parts` then fills them with every comment of the sheet
    for pos, cols in list(notes.items())[:1]:
        c, (_sev, text) = next(iter(cols.items()))
        ws.write_comment(int(sheet.excel_rows[pos]) - 1, c, text[: cells.MAX_TEXT], {"x_scale": 3, "y_scale": 2.5})
    return _sheet_rows(fmts, res, in_kinds, notes, tool, widths), notes


def _top_rows(fmts: Formats, sheet, letters: list[str], at: int, widths: list[float]) -> bytes:
    """The rows above the header as they came, and the header row (the input's headers, then the
    tool's in their own colour, on one line); `widths`: the input columns' widths."""
    h = sheet.header_row
    width = max([len(r) for r in sheet.preamble] + [len(sheet.headers)])
    grid = [*sheet.preamble, list(sheet.headers)]
    frame = pd.DataFrame([list(r) + [None] * (width - len(r)) for r in grid], dtype=object)
    numbers = np.arange(1, h + 2).astype(str).astype(object)
    plain, header = _styles(fmts, None), _styles(fmts, None, header=HEADER_BG)
    styles = {key: np.array([plain[key]] * h + [header[key]], dtype=object) for key in STYLE_KEYS}
    flagged = np.arange(h + 1) == h  # a blank header cell keeps the header's look
    if sheet.from_text and h:  # a CSV's lines above the header row, as Excel reads them
        shown = _shown_styles(fmts)
        levels = np.zeros(h + 1, dtype=np.int64)
        columns = []
        for c in range(min(frame.shape[1], EXCEL_COLUMNS)):
            values = frame.iloc[:, c].to_numpy(dtype=object)
            above, plain = _as_excel_reads(values[:h], None, styles["plain"][:h], levels[:h], shown)
            look = {**styles, "plain": np.concatenate([plain, styles["plain"][h:]])}
            columns.append(cells.input_cells(np.concatenate([above, values[h:]]), letters[c] + numbers, look, flagged))
    else:
        columns = _grid_cells(frame, numbers, letters, styles, flagged)
    if not sheet.no_room:
        tool = pd.Series(tool_headers(sheet), dtype=object)
        refs = np.array([letters[at + j] for j in range(len(tool))], dtype=object) + str(h + 1)
        look = style(fmts.get(header=COMPUTED_BG, one_line=True))
        header_cells = "".join(cells.strings(tool, refs, np.full(len(tool), look, dtype=object)).tolist())
        columns.append(np.array([""] * h + [header_cells], dtype=object))
    # the workbook is the tool's: the header row as tall as the input's wrapped headers need
    texts = ["" if v is None else str(v) for v in sheet.headers[: len(widths)]]
    tall = max((lines(t, w, bold=True) for t, w in zip(texts, widths, strict=True)), default=1)
    heights = np.zeros(h + 1)
    heights[h] = tall * LINE_HEIGHT if tall > 1 else 0
    return sheetxml.rows_xml(numbers, columns, heights)


def _sheet_rows(fmts: Formats, res: SheetResult, in_kinds, notes, tool: list, widths: list[float]):
    """The generator of the sheet's rows (see batch.workbook.sheetxml), and the sheet's dimension;
    `tool`: the sheet's `tool_columns`; `widths`: the input columns' widths."""
    sheet = res.sheet
    k, _computed_headers, at, last_col = layout(sheet)
    n = len(sheet.excel_rows)
    # per input column and row: the number format of the column, or the fill of a finding
    # each kind once, in the order of the columns (a set's order would change from run to run, and the styles' order with it)
    # a CSV's numbers are shown as the file wrote them (their own formats, or General), never in
    # their column's format: 1250000 in a money column is not shown 1,250,000.00
    shows = [None] * len(in_kinds) if sheet.from_text else in_kinds
    tables = {kind: {sev: _styles(fmts, kind, sev) for sev in (None, *FILL)} for kind in dict.fromkeys(shows)}
    severity = np.zeros((n, max(k, 1)), dtype=np.int8)  # LEVELS index per cell (int8: a sheet of 100,000 x 44 takes 4 MB)
    for pos, cols in notes.items():
        for c, (sev, _text) in cols.items():
            severity[pos, c] = LEVELS.index(sev) if sev in FILL else 0
    looks = tool_styles(fmts, tool)
    tool_looks = {"columns": [style(f) for f in looks["columns"]], "status": {v: style(f) for v, f in looks["status"].items()}}

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

    top = _top_rows(fmts, sheet, letters, at, widths)  # now: the styles are fixed when the workbook closes
    shown = _shown_styles(fmts) if sheet.from_text else None

    def rows():
        yield top
        for start in range(0, n, sheetxml.CHUNK_ROWS):
            stop = min(n, start + sheetxml.CHUNK_ROWS)
            numbers = sheet.excel_rows[start:stop].astype(str).astype(object)
            columns = []
            for c in active:
                sev = severity[start:stop, c]
                flagged = sev > 0
                styles = _per_row(tables[shows[c]], sev) if flagged.any() else plain_styles(shows[c], stop - start)
                values = sheet.cells.iloc[start:stop, c].to_numpy(dtype=object)  # a view: no copy of the sheet
                if shown is not None:
                    values, plain = _as_excel_reads(values, in_kinds[c], styles["plain"], sev, shown)
                    styles = {**styles, "plain": plain}
                columns.append(cells.input_cells(values, letters[c] + numbers, styles, flagged))
            columns += tool_cells(res, tool, tool_looks, start, stop, letters)
            yield sheetxml.rows_xml(numbers, columns)

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
            yield sheetxml.rows_xml(numbers, _grid_cells(frame, numbers, letters, styles))

    return rows, f"A1:{letters[max(width, 1) - 1]}{max(len(grid), 1)}"


def write(result: Result, out_path: Path) -> Path:
    """Write the returned workbook atomically (temporary file, then rename): the user's own
    package with the tool's additions for an .xlsx or .xlsm (batch.workbook.inplace), a workbook written
    anew for a CSV or .xls."""
    if result.in_place:
        return write_in_place(result, out_path)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.partial")
    wb = xlsxwriter.Workbook(str(tmp), WRITER_OPTIONS)
    parts_in_memory(wb)
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
        generated[f"xl/worksheets/sheet{len(result.sheets) + 1}.xml"], _rules = write_tool_sheets(wb, fmts, result)
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
        remove_row_files(wb)
        if tmp.exists():
            tmp.unlink()
    return out_path
