"""The tool's columns of an intake sheet (computed, Status, Findings, and the reviewer's three):
where they start, their headers, widths, looks and cells, where the sheet is frozen, the prompt of
the decision column, and the notes of the findings that point at an input cell. Shared by the
in-place writer (`batch.workbook.inplace`) and the writer of workbooks written anew
(`batch.workbook.writing`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from batch.pipeline import FLAGGED_ERRORS, SheetResult
from batch.programs._kit.findings import SEVERITY_ORDER  # the worst of a cell's findings gives its fill
from batch.reviews import CHOICES, decision_choices
from batch.workbook import cells
from batch.workbook.looks import COMPUTED_BG, MONEY, PERCENT, Formats, column_width
from batch.workbook.reading import EXCEL_COLUMNS
from validators.columns import REVIEW_COLUMNS, each_length

_formatted = np.frompyfunc(format, 1, 1)  # each value as an f-string writes it (a missing one "None", "nan" or "<NA>")


@dataclass(frozen=True, eq=False)
class NoteCells:
    """The input cells findings point at, one each, in the order their notes are written (rows in
    the order of their first finding, a row's cells in theirs): `pos` (the row's position), `col`
    (the kept column's index), `severity` (the worst of the cell's findings); `texts` makes their
    notes' texts, a block of cells at a time, from the findings themselves (a full sheet's notes are
    about 500 MB of text: the in-place writer makes them as it writes the comments part)."""

    pos: np.ndarray
    col: np.ndarray
    severity: np.ndarray
    first: np.ndarray  # per cell: the position in `source` of its one finding (cells of several are `many`)
    many: np.ndarray  # the cells of several findings (ascending)
    joined: np.ndarray  # their findings' texts joined, in the findings' order
    source: tuple[np.ndarray, ...]  # the findings' Code, Severity, Message and Citation

    def __len__(self) -> int:
        return len(self.pos)

    def texts(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """The notes of cells `start:stop`: each finding as "CODE (severity): message [citation]",
        a cell's findings in their order with a blank line between."""
        stop = len(self) if stop is None else min(stop, len(self))
        out = _finding_texts(self.source, self.first[start:stop])
        lo, hi = np.searchsorted(self.many, [start, stop])
        out[self.many[lo:hi] - start] = self.joined[lo:hi]
        return out


def _finding_texts(source: tuple[np.ndarray, ...], at: np.ndarray) -> np.ndarray:
    """The findings at positions `at` of `source`, each as its note writes it."""
    code, severity, message, citation = (_formatted(c[at]) for c in source)
    return np.asarray(code + " (" + severity + "): " + message + " [" + citation + "]", dtype=object)


def note_cells(res: SheetResult) -> NoteCells:
    """The cells of the sheet the findings point at, and how their notes are made (`NoteCells`).
    Whole columns at a time: a sheet of 100,000 rows may have as many findings."""
    col_index = {}
    for i, f in enumerate(res.sheet.fields):
        if f is not None and f not in col_index:
            col_index[f] = i
    f = res.findings
    located = np.flatnonzero(((f["pos"] >= 0) & f["Column"].isin(col_index)).to_numpy(dtype=bool))
    source = tuple(f[c].to_numpy(dtype=object) for c in ("Code", "Severity", "Message", "Citation"))
    if not len(located):
        none, no = np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64)
        return NoteCells(no, no, none, no, no, none, source)
    pos = f["pos"].to_numpy(dtype=np.int64)[located]
    col = f["Column"].iloc[located].map(col_index).to_numpy(dtype=np.int64)
    cell, _ = pd.factorize(pos * (len(res.sheet.fields) + 1) + col, sort=False)  # the cells, in order of their first finding
    n = int(cell.max()) + 1
    first = np.unique(cell, return_index=True)[1]  # each cell's first finding (the codes are 0..n-1)
    rank = pd.Series(source[1][located]).map(SEVERITY_ORDER).to_numpy(dtype=np.int64)
    worst = np.full(n, len(SEVERITY_ORDER), dtype=np.int64)
    np.minimum.at(worst, cell, rank)
    row_first, _ = pd.factorize(pos[first], sort=False)  # each cell's row, numbered in order of the row's first finding
    order = np.lexsort((np.arange(n), row_first))  # rows in order of their first finding, a row's cells in theirs
    written = np.empty(n, dtype=np.int64)
    written[order] = np.arange(n)  # where each cell's note is written
    many = np.flatnonzero(np.bincount(cell, minlength=n) > 1)
    joined = np.zeros(0, dtype=object)
    if len(many):  # a cell of several findings: their texts joined in the findings' order (few cells)
        of_many = np.isin(cell, many)
        texts = pd.Series(_finding_texts(source, located[of_many])).groupby(cell[of_many], sort=False).agg("\n\n".join)
        at = written[texts.index.to_numpy()]
        many, joined = np.sort(at), texts.to_numpy(dtype=object)[np.argsort(at)]
    names = np.array(list(SEVERITY_ORDER), dtype=object)
    return NoteCells(pos[first][order], col[first][order], names[worst[order]], located[first][order], many, joined, source)


def annotation_frame(res: SheetResult) -> pd.DataFrame:
    """One row per input cell a finding points at (`note_cells`): `pos`, `col`, `severity` and
    `text` (its note)."""
    found = note_cells(res)
    return pd.DataFrame({"pos": found.pos, "col": found.col, "severity": found.severity, "text": found.texts()})


def annotations(res: SheetResult) -> dict[int, dict[int, tuple[str, str]]]:
    """pos -> column index -> (severity, comment text) for findings located to an input cell
    (`annotation_frame`, as nested dicts in its order)."""
    out: dict[int, dict[int, tuple[str, str]]] = {}
    a = annotation_frame(res)
    for pos, col, severity, text in zip(a["pos"].tolist(), a["col"].tolist(), a["severity"].tolist(), a["text"].tolist(), strict=True):
        out.setdefault(pos, {})[col] = (severity, text)
    return out


def layout(sheet) -> tuple[int, list[str], int, int]:
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


STATUS_FILLS = {"OK": "#C6EFCE", "Flagged": "#FFEB9C", "Ineligible": "#D9D9D9", "Invalid": "#FFC7CE", FLAGGED_ERRORS: "#FFC7CE"}
"""The fill of each Status: `Flagged` amber when only warnings remain, red (`FLAGGED_ERRORS`: the
look of a Flagged row with an error not waived, the cell still says `Flagged`)."""


REVIEW = "review"  # the kind of the reviewer's columns


REVIEW_WIDTHS = (24, 14, 40)  # Reviewer Decision, Reviewer, Reviewer Note


TOOL_WIDTH = 40  # the widest a tool's column is sized for its values, except a column of long text


WIDE = 60  # the width of a tool's column of long text (Calculation), shown on one line


@dataclass
class ToolColumn:
    """One of the tool's columns on an intake sheet: its header, width and kind."""

    header: str
    kind: str | None
    width: float


def tool_columns(res: SheetResult) -> list[ToolColumn]:
    """The tool's columns of an intake sheet (computed, Status, Findings), each as wide as its
    header on one line and at least as wide as its longest value, up to TOOL_WIDTH; a column of
    text longer than that (Calculation) is WIDE.

    No cell of the tool's on an intake sheet wraps: the rows and their heights are the user's, so
    a long text stays on one line, shown up to the next cell that holds a value (Excel and
    LibreOffice alike show a text over empty cells to its right and cut it at the first that is
    not empty), and whole in the cell itself (the formula bar) and, for a finding, in the cell's
    note and on the Findings sheet. The header, in bold, is never cut: its column is as wide as
    it is."""
    sheet, spec = res.sheet, res.sheet.spec
    if sheet.no_room:
        return []
    out = []
    values = {h: res.computed[h] for h in spec.computed if h not in res.packed} | {"Status": res.status, "Findings": res.row_findings}
    for header in [*spec.computed, "Status", "Findings"]:
        column, kind = values.get(header), spec.computed.get(header)
        fits = column_width(header, bold=True)
        if header in res.packed:  # a long text column held packed: its longest text measured as it was packed
            longest = res.packed[header].longest
        elif kind == "money":
            top = column.dropna().abs().max() if column.notna().any() else 0
            longest = len(f"{int(top) // 100:,}") + 4  # digits, separators and cents
        elif kind == "percent":
            longest = 8
        else:
            longest = _longest(column)
        if longest > TOOL_WIDTH and kind not in ("money", "percent") and header != "Findings":
            out.append(ToolColumn(header, kind, max(float(WIDE), fits)))
        else:
            out.append(ToolColumn(header, kind, max(float(min(TOOL_WIDTH, max(longest, 8) + 2)), fits)))
    if not sheet.review_cols:  # the reviewer's columns, empty until a reviewer writes in them (kept where they are after that)
        widths = zip(REVIEW_COLUMNS, REVIEW_WIDTHS, strict=True)
        out += [ToolColumn(h, REVIEW, max(float(w), column_width(h, bold=True))) for h, w in widths]
    return out


def _longest(column: pd.Series) -> int:
    """The length of a column's longest value as text (0 for none): a column of text measured as it
    is, any other made text as pandas makes it."""
    values = column.to_numpy(dtype=object)
    present = values[pd.notna(values)]
    if pd.api.types.infer_dtype(present, skipna=False) == "string":
        return int(each_length(present).max())
    lengths = column.dropna().astype(str).str.len()
    return int(lengths.max()) if len(lengths) else 0


def tool_styles(fmts: Formats, columns: list[ToolColumn]) -> dict:
    """The formats of the tool's cells: the header, each column's, and Status by value."""
    number = {"money": MONEY, "percent": PERCENT}
    return {
        "header": fmts.get(header=COMPUTED_BG, one_line=True),
        "columns": [fmts.get(number.get(c.kind or "")) for c in columns],
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
                looks = status.where(~(res.open_errors[start:stop] & (status == "Flagged").to_numpy()), FLAGGED_ERRORS)
                look = looks[shown].map(styles["status"]).fillna("").to_numpy(dtype=object)
                cell[shown] = cells.strings(status[shown].astype(str), refs[shown], look)
            out.append(cell)
        elif col.header == "Findings":
            findings = res.row_findings.iloc[start:stop]
            out.append(cells.computed_cells(findings.where(findings != ""), refs, styles["columns"][j], False))
        else:
            values = res.column(col.header, start, stop)
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


def decision_prompt(res: SheetResult | None = None) -> dict:
    """The data validation of the Reviewer Decision column (xlsxwriter's options): a drop-down of
    `Approved`, `Withdrawn` and `Waive CODE` for each warning code of the sheet's rows (of `res`;
    none without it), whose error alert is off, so that any text can still be typed (`Waive CODE,
    CODE`), and an input message listing the choices."""
    return {
        "validate": "list",
        "source": decision_choices(res.findings) if res is not None else ["Approved", "Withdrawn"],
        "ignore_blank": True,
        "show_error": False,
        "input_title": REVIEW_COLUMNS[0],
        "input_message": CHOICES,
    }


def decision_column(res: SheetResult, columns: list[ToolColumn]) -> int | None:
    """The grid column of the sheet's Reviewer Decision: where the tool writes it, or where a returned
    workbook has it (kept where it is)."""
    at = res.sheet.results_at
    return next((at + j for j, c in enumerate(columns) if c.header == REVIEW_COLUMNS[0]), res.sheet.review_cols.get(REVIEW_COLUMNS[0]))


def frozen_at(sheet) -> tuple[int, int]:
    """Where an intake sheet is frozen when it has no pane of its own: below the header row, and
    right of the record-ID column when that is one of the first three columns."""
    key = sheet.spec.key[0] if sheet.spec.key else None
    at = next((sheet.kept[i] for i, f in enumerate(sheet.fields) if f is not None and f == key), None)
    return sheet.header_row + 1, at + 1 if at is not None and at < 3 else 0
