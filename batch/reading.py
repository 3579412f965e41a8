"""Read an intake workbook: route sheets by name, find the header row, match headers loosely.

The reader keeps every cell exactly as the workbook holds it (python-calamine values: str,
float, bool, date, datetime, "" for empty) so that the returned workbook can write back the
original values; typing happens in `validators`.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import python_calamine

from batch.safety import Limits, Refused, inspect, scan_cells
from validators.coerce import ExcelError
from validators.columns import SheetSpec, normalize_header

HEADER_SEARCH_ROWS = 20  # the header is row 1 or the first row within the first 20 naming the columns
FINDINGS_HEADERS = ["Sheet", "Row", "Record ID", "Column", "Code", "Severity", "Message", "Citation"]
SUMMARY_TITLE = "Summary of"
RUN_TITLE = "Run"
RESERVED = {"findings", "summary", "run"}  # sheet names the run writes


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
    """A sheet carried through untouched (UNKNOWN_SHEET)."""

    name: str
    grid: list[list]


@dataclass
class Workbook:
    path: Path
    sheets: list[IntakeSheet | OtherSheet] = field(default_factory=list)


def _empty(col: pd.Series) -> np.ndarray:
    return (col.isna() | (col.astype(object) == "")).to_numpy(dtype=bool)


def _find_header(grid: list[list], spec: SheetSpec) -> int:
    keys = {c.key for c in spec.columns}
    required = {c.key for c in spec.columns if c.required}
    best, best_hits = 0, 0
    for r, row in enumerate(grid[:HEADER_SEARCH_ROWS]):
        found = {normalize_header(v) for v in row if isinstance(v, str)}
        if required <= found:
            return r
        hits = len(found & keys)
        if hits > best_hits:
            best, best_hits = r, hits
    return best


def _is_ours(name: str, grid: list[list]) -> bool:
    """A Findings, Summary or Run sheet written by a previous run (ignored on reading)."""
    first = grid[0] if grid else []
    key = sheet_key(name)
    if key == "findings":
        return [str(v) for v in first[: len(FINDINGS_HEADERS)]] == FINDINGS_HEADERS
    if key == "summary":
        return bool(first) and str(first[0]).startswith(SUMMARY_TITLE)
    if key == "run":
        return bool(first) and first[0] == RUN_TITLE
    return False


def _intake_sheet(name: str, grid: list[list], spec: SheetSpec) -> IntakeSheet:
    h = _find_header(grid, spec) if grid else 0
    header_cells = list(grid[h]) if grid else []
    output = {normalize_header(x) for x in spec.output_headers}
    field_of = {c.key: c.header for c in spec.columns}
    kept, headers, fields = [], [], []
    for j, v in enumerate(header_cells):
        key = normalize_header(v)
        if key in output and key not in field_of:
            continue  # a computed column, Status or Findings of a returned workbook
        kept.append(j)
        headers.append(v)
        fields.append(field_of.get(key))
    body = grid[h + 1 :]
    full = pd.DataFrame(body, dtype=object) if body else pd.DataFrame(dtype=object)
    # a row is blank when every cell is empty (a cell of spaces is not: it comes back), counting the
    # dropped output columns too
    nonblank = ~np.logical_and.reduce([_empty(full[c]) for c in full.columns]) if len(full.columns) else np.zeros(len(body), dtype=bool)
    cells = full.reindex(columns=kept)[nonblank].reset_index(drop=True)
    del full
    cells.columns = range(len(kept))
    excel_rows = np.flatnonzero(nonblank) + h + 2
    # trailing columns with neither header nor data are padding, not columns
    while headers and (headers[-1] in ("", None)) and _empty(cells[len(headers) - 1]).all():
        cells = cells.drop(columns=len(headers) - 1)
        headers.pop(), fields.pop(), kept.pop()
    duplicates = []
    for f in dict.fromkeys(x for x in fields if x):
        at = [kept[i] for i, x in enumerate(fields) if x == f]
        if len(at) > 1:
            duplicates.append((f, at))
    return IntakeSheet(
        name, spec, [list(r) for r in grid[:h]], h, headers, fields, cells, excel_rows, len(body), kept, duplicates=duplicates
    )


def _csv_grid(path: Path) -> list[list]:
    """A CSV file as a grid of text cells (UTF-8, with or without BOM, else Windows-1252)."""
    raw = path.read_bytes()
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


def _grids(path: Path, limits: Limits):
    """(sheet name, grid, cell notes) of every sheet, after the file passed inspection."""
    kind = inspect(path, limits)
    if kind == "csv":
        yield path.stem, _csv_grid(path), None
        return
    try:
        book = python_calamine.CalamineWorkbook.from_path(str(path))
    except python_calamine.PasswordError as err:
        raise UnreadableWorkbook(
            f"{path.name} is password-protected (encrypted); remove the password in Excel and drop it in again."
        ) from err
    except Exception as err:  # calamine raises several unrelated types for a bad file
        raise UnreadableWorkbook(f"{path.name} cannot be read as an Excel workbook ({err}).") from err
    notes = scan_cells(path) if kind == "zip" else {}
    for name in book.sheet_names:
        try:
            grid = book.get_sheet_by_name(name).to_python(skip_empty_area=False)
        except Exception as err:
            raise UnreadableWorkbook(f"Sheet {name!r} of {path.name} cannot be read ({err}).") from err
        note = notes.get(name)
        if note:
            for (r, c), text in note.errors.items():
                if r < len(grid) and c < len(grid[r]):
                    grid[r][c] = ExcelError(text)
        yield name, grid, note


def read_workbook(path: Path, specs: dict[str, SheetSpec], limits: Limits = Limits()) -> Workbook:
    """Read every sheet of the workbook (or the one sheet of a CSV file, named after the file);
    `specs` maps sheet keys (see `sheet_key`) to specs."""
    wb = Workbook(Path(path))
    for name, grid, note in _grids(Path(path), limits):
        if _is_ours(name, grid):
            continue
        spec = specs.get(sheet_key(name))
        if spec:
            sheet = _intake_sheet(name, grid, spec)
            if note:
                sheet.uncalculated = dict(note.uncalculated)
            wb.sheets.append(sheet)
        elif sheet_key(name) in RESERVED:
            # a sheet of the user's that shares a name with one the run writes: kept, renamed
            wb.sheets.append(OtherSheet(f"{name[:23]} (input)", grid))
        else:
            wb.sheets.append(OtherSheet(name, grid))
    return wb
