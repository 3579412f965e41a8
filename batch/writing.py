"""Write the returned workbook with xlsxwriter, row by row in constant-memory mode.

Input cells are written back with their original values and types; text is always written as
text (`strings_to_formulas` and `strings_to_urls` off, `write_string`), so input that looks like
a formula never becomes one. The file is written under a temporary name and renamed at the end,
so a crash never leaves a half-written workbook under its final name.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import xlsxwriter

from batch import __version__, sheetxml
from batch.calculators import SummaryTable
from batch.findings import FINDINGS_COLUMNS
from batch.pipeline import Result, SheetResult
from batch.reading import EXCEL_COLUMNS, RUN_TITLE, SUMMARY_TITLE, OtherSheet, marker_name, quoted_sheet, tool_sheet_name

MONEY = "#,##0.00"
PERCENT = "0.00%"
DATE = "yyyy-mm-dd"
DATETIME = "yyyy-mm-dd hh:mm:ss"
FILL = {"error": "#FFC7CE", "warning": "#FFEB9C"}
HEADER_BG = "#D9D9D9"
COMPUTED_BG = "#BDD7EE"
MAX_TEXT = 32767  # Excel's limit on the characters of one cell
MAX_WIDTH = 60


class Formats:
    """xlsxwriter formats, each created once."""

    def __init__(self, wb: xlsxwriter.Workbook):
        self.wb = wb
        self.cache: dict[tuple, object] = {}

    def get(self, num_format: str | None = None, fill: str | None = None, header: str | None = None, wrap=False):
        key = (num_format, fill, header, wrap)
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
            self.cache[key] = self.wb.add_format(props) if props else None
        return self.cache[key]


def write_cell(ws, r: int, c: int, value, fmts: Formats, num_format: str | None = None, fill: str | None = None):
    """Write one input value back as it came: text as text, numbers, booleans and dates typed."""
    if isinstance(value, str):
        if value == "":
            if fill:
                ws.write_blank(r, c, None, fmts.get(fill=fill))
            return
        ws.write_string(r, c, value[:MAX_TEXT], fmts.get(fill=fill))
    elif isinstance(value, bool):
        ws.write_boolean(r, c, value, fmts.get(fill=fill))
    elif isinstance(value, (int, float, np.integer, np.floating)):
        if np.isfinite(value):
            ws.write_number(r, c, value, fmts.get(num_format, fill))
    elif isinstance(value, dt.datetime):
        fmt = DATETIME if (value.hour or value.minute or value.second) else DATE
        ws.write_datetime(r, c, value, fmts.get(fmt, fill))
    elif isinstance(value, (dt.date, dt.time, dt.timedelta)):
        ws.write_datetime(r, c, value, fmts.get(DATE if isinstance(value, dt.date) else "hh:mm:ss", fill))
    elif value is None:
        if fill:
            ws.write_blank(r, c, None, fmts.get(fill=fill))
    else:
        ws.write_string(r, c, str(value)[:MAX_TEXT], fmts.get(fill=fill))


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

    The tool's columns (computed, Status, Findings) follow the last column holding a header or any
    cell, so they never cover a cell of the user's; a sheet with no room for them before XFD
    (NO_ROOM_FOR_RESULTS) comes back with its own cells only."""
    k = min(len(sheet.headers), EXCEL_COLUMNS)  # only a CSV can be wider than a sheet
    at = sheet.results_at
    if sheet.no_room:
        return k, [], at, max(min(at, EXCEL_COLUMNS), 1) - 1
    computed_headers = list(sheet.spec.computed)
    return k, computed_headers, at, at + len(computed_headers) + 1


def _write_intake(wb, fmts: Formats, res: SheetResult):
    """Headers, widths, freeze panes, autofilter and the first comment by xlsxwriter; returns the
    data rows' generator with the sheet's dimension, and the comments of the sheet."""
    sheet, spec = res.sheet, res.sheet.spec
    ws = wb.add_worksheet(sheet.name)
    kinds = {c.header: c.kind for c in spec.columns}
    in_kinds = [kinds.get(f) if f else None for f in sheet.fields]
    k, computed_headers, at, last_col = _layout(sheet)
    for j, h in enumerate(sheet.headers[:k]):
        ws.set_column(j, j, _width(h, in_kinds[j]))
    for j, h in enumerate(computed_headers):
        ws.set_column(at + j, at + j, _width(h, spec.computed[h]))
    if not sheet.no_room:
        ws.set_column(last_col - 1, last_col - 1, 10)
        ws.set_column(last_col, last_col, 40)

    for r, row in enumerate(sheet.preamble):
        for c, v in enumerate(row):
            write_cell(ws, r, c, v, fmts)
    h = sheet.header_row
    for j, v in enumerate(sheet.headers[:k]):
        if isinstance(v, str) or v is None:
            ws.write_string(h, j, v or "", fmts.get(header=HEADER_BG))
        else:
            write_cell(ws, h, j, v, fmts)
    if not sheet.no_room:
        for j, v in enumerate(computed_headers + ["Status", "Findings"]):
            ws.write_string(h, at + j, v, fmts.get(header=COMPUTED_BG))
    ws.freeze_panes(h + 1, 0)
    ws.autofilter(h, 0, max(h, h + sheet.grid_height), last_col)

    notes = _annotations(res)
    # xlsxwriter writes the first comment, so that it creates the comments and drawing parts with
    # their relationships; `_comment_parts` then fills them with every comment of the sheet
    for pos, cols in list(notes.items())[:1]:
        c, (_sev, text) = next(iter(cols.items()))
        ws.write_comment(int(sheet.excel_rows[pos]) - 1, c, text[:MAX_TEXT], {"x_scale": 3, "y_scale": 2.5})
    return _data_rows(ws, fmts, res, in_kinds, notes), notes


def _comment_parts(res: SheetResult, notes: dict, number: int, first_block: int) -> dict:
    """Replacements for the sheet's comments and VML drawing parts, with every comment."""
    positions = [
        (int(res.sheet.excel_rows[pos]) - 1, c, text[:MAX_TEXT]) for pos, cols in notes.items() for c, (_sev, text) in cols.items()
    ]
    rows = np.array([p[0] for p in positions], dtype=np.int64)
    cols = np.array([p[1] for p in positions], dtype=np.int64)
    refs = np.array([sheetxml.column_letters(c) for c in range(int(cols.max()) + 1)], dtype=object)[cols] + (rows + 1).astype(str).astype(
        object
    )
    texts = pd.Series([p[2] for p in positions], dtype=object)
    return {
        f"xl/comments{number}.xml": lambda _old: sheetxml.comments_xml(refs, texts),
        f"xl/drawings/vmlDrawing{number}.vml": lambda old: sheetxml.vml_xml(old, rows, cols, first_block),
    }


def _style(fmt) -> str:
    """The ` s="N"` attribute of a format (its xf index is fixed now, so the generated XML can use it)."""
    index = fmt._get_xf_index() if fmt is not None else 0  # noqa: SLF001 - xlsxwriter assigns indexes on first use
    return f' s="{index}"' if index else ""


def _data_rows(ws, fmts: Formats, res: SheetResult, in_kinds, notes):
    """The generator of the sheet's data rows (see batch.sheetxml), and the sheet's dimension."""
    sheet, spec = res.sheet, res.sheet.spec
    k, computed_headers, at, last_col = _layout(sheet)
    n = len(sheet.excel_rows)
    # per input column and row: the number format of the column, or the fill of a finding
    base = {kind: fmts.get({"money": MONEY}.get(kind)) for kind in set(in_kinds)}
    fill_style = {(kind, sev): _style(fmts.get({"money": MONEY}.get(kind), FILL[sev])) for kind in set(in_kinds) for sev in FILL}
    date_fmt = {sev: _style(fmts.get(DATE, FILL.get(sev))) for sev in (None, *FILL)}
    datetime_fmt = {sev: _style(fmts.get(DATETIME, FILL.get(sev))) for sev in (None, *FILL)}
    time_fmt = {sev: _style(fmts.get("hh:mm:ss", FILL.get(sev))) for sev in (None, *FILL)}
    severity = np.full((n, max(k, 1)), None, dtype=object)
    for pos, cols in notes.items():
        for c, (sev, _text) in cols.items():
            severity[pos, c] = sev if sev in FILL else None
    comp_styles = [_style(fmts.get({"money": MONEY, "percent": PERCENT}.get(spec.computed[c]))) for c in computed_headers]
    cells = sheet.cells.to_numpy(dtype=object)[:, :k]
    # only the input columns holding a cell or a finding are generated (a stray cell far to the
    # right keeps thousands of empty columns before it)
    filled = sheet.filled[:k] if sheet.filled is not None else np.ones(k, dtype=bool)
    active = np.flatnonzero(filled | pd.notna(severity[:, :k]).any(axis=0))
    letters = [sheetxml.column_letters(j) for j in range(last_col + 1)]

    def rows():
        for start in range(0, n, sheetxml.CHUNK_ROWS):
            stop = min(n, start + sheetxml.CHUNK_ROWS)
            numbers = sheet.excel_rows[start:stop].astype(str).astype(object)
            acc = np.full(stop - start, "", dtype=object)
            for c in active:
                sev = pd.Series(severity[start:stop, c], dtype=object)
                plain = _style(base[in_kinds[c]])
                flagged = sev.notna().to_numpy()

                def styles(table: dict, default: str, sev=sev, flagged=flagged) -> np.ndarray:
                    """Per row: the style of a fill where a finding points at the cell, else `default`."""
                    out = np.full(len(sev), default, dtype=object)
                    if flagged.any():
                        out[flagged] = sev[flagged].map(table).to_numpy(dtype=object)
                    return out

                fills = {v: fill_style[(in_kinds[c], v)] for v in FILL}
                acc = acc + sheetxml.input_cells(
                    cells[start:stop, c],
                    letters[c] + numbers,
                    styles(fills, plain),
                    styles(date_fmt, date_fmt[None]),
                    styles(datetime_fmt, datetime_fmt[None]),
                    styles(time_fmt, time_fmt[None]),
                )
            if not sheet.no_room:
                for j, header in enumerate(computed_headers):
                    kind = spec.computed[header]
                    acc = acc + sheetxml.computed_cells(
                        res.computed[header].iloc[start:stop], letters[at + j] + numbers, comp_styles[j], cents=kind == "money"
                    )
                status = res.status.iloc[start:stop]
                # a totals row's Status is left blank (its Findings say TOTALS_ROW_SKIPPED)
                acc = acc + sheetxml.computed_cells(status.where(status != ""), letters[last_col - 1] + numbers, "", False)
                findings = res.row_findings.iloc[start:stop].where(res.row_findings.iloc[start:stop] != "")
                acc = acc + sheetxml.computed_cells(findings, letters[last_col] + numbers, "", False)
            yield "".join(('<row r="' + numbers + '">' + acc + "</row>").tolist()).encode("utf-8")

    last_row = int(sheet.excel_rows[-1]) if n else sheet.header_row + 1
    return rows, f"A1:{letters[last_col]}{max(last_row, sheet.header_row + 1)}"


def _write_other(wb, fmts: Formats, sheet: OtherSheet) -> None:
    ws = wb.add_worksheet(sheet.name)
    for r, row in enumerate(sheet.grid):
        for c, v in enumerate(row):
            write_cell(ws, r, c, v, fmts)


def _write_findings(wb, fmts: Formats, result: Result, name: str):
    """Headers by xlsxwriter; the rows generated whole columns at a time (see batch.sheetxml)."""
    ws = wb.add_worksheet(name)
    widths = [16, 7, 16, 28, 30, 9, 100, 26]
    wrap = fmts.get(wrap=True)
    for j, w in enumerate(widths):
        ws.set_column(j, j, w, wrap if j == 6 else None)
    for j, h in enumerate(FINDINGS_COLUMNS):
        ws.write_string(0, j, h, fmts.get(header=HEADER_BG))
    f = result.findings
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, max(len(f), 1), len(FINDINGS_COLUMNS) - 1)
    wrap_style = _style(wrap)
    letters = [sheetxml.column_letters(j) for j in range(len(FINDINGS_COLUMNS))]

    def rows():
        for start in range(0, len(f), sheetxml.CHUNK_ROWS):
            part = f.iloc[start : start + sheetxml.CHUNK_ROWS]
            numbers = np.arange(start + 2, start + 2 + len(part)).astype(str).astype(object)
            acc = np.full(len(part), "", dtype=object)
            for j, col in enumerate(FINDINGS_COLUMNS):
                values = part[col]
                if col == "Row":
                    acc = acc + sheetxml.computed_cells(values.astype("Float64"), letters[j] + numbers, "", cents=False)
                else:
                    text = values.astype(object).where(values.notna() & (values.astype(str) != ""))
                    acc = acc + sheetxml.computed_cells(
                        text.astype(object), letters[j] + numbers, wrap_style if col == "Message" else "", cents=False, text=True
                    )
            yield "".join(('<row r="' + numbers + '">' + acc + "</row>").tolist()).encode("utf-8")

    return rows, f"A1:H{len(f) + 1}"


def write_table(ws, fmts: Formats, r: int, t: SummaryTable) -> int:
    ws.write_string(r, 0, t.title, fmts.get(header="#FFFFFF"))
    r += 1
    for j, h in enumerate(t.table.columns):
        ws.write_string(r, j, str(h), fmts.get(header=HEADER_BG))
    num = [{"money": MONEY, "percent": PERCENT}.get(t.formats.get(str(h))) for h in t.table.columns]
    for row in t.table.itertuples(index=False):
        r += 1
        for j, v in enumerate(row):
            if isinstance(v, str):
                ws.write_string(r, j, v)
            elif v is not None and not pd.isna(v):
                ws.write_number(r, j, float(v) / 100 if num[j] == MONEY else float(v), fmts.get(num[j]))
    return r + 2


def awards_by_program(result: Result) -> SummaryTable:
    """Rows and award dollars of each sheet, for the chart."""
    rows = []
    for res in result.intake:
        m = res.module
        counts = res.counts
        counted = ~res.status.isin(["Invalid", "Ineligible", ""])  # "": a totals row, no record
        award = res.computed[m.AWARD_COLUMN] if m.AWARD_COLUMN in res.computed else res.typed[m.AWARD_COLUMN]
        rows.append(
            {
                "Sheet": res.sheet.name,
                "Program": m.SPEC.program,
                "Rows": counts["rows"],
                **{s: counts[s] for s in ("OK", "Flagged", "Ineligible", "Invalid")},
                "Award ($)": int(award[counted].fillna(0).sum()),
            }
        )
    table = pd.DataFrame(rows, columns=["Sheet", "Program", "Rows", "OK", "Flagged", "Ineligible", "Invalid", "Award ($)"])
    return SummaryTable("Rows by status and award by program (award excludes Invalid and Ineligible rows)", table, {"Award ($)": "money"})


def _write_summary(wb, fmts: Formats, result: Result, name: str) -> None:
    ws = wb.add_worksheet(name)
    ws.set_column(0, 0, 26)
    ws.set_column(1, 12, 18)
    ws.write_string(0, 0, f"{SUMMARY_TITLE} {result.path.name}", fmts.get(header="#FFFFFF"))
    totals = awards_by_program(result)
    r = write_table(ws, fmts, 2, totals)
    if len(totals.table):
        chart = wb.add_chart({"type": "column"})
        first, last = 4, 3 + len(totals.table)
        chart.add_series(
            {
                "name": "Award ($)",
                "categories": [name, first, 1, last, 1],
                "values": [name, first, 7, last, 7],
                "data_labels": {"value": True, "num_format": "$#,##0"},
            }
        )
        chart.set_title({"name": "Awards by program"})
        chart.set_legend({"none": True})
        chart.set_y_axis({"num_format": "$#,##0"})
        ws.insert_chart(1, 9, chart)
    for res in result.intake:
        for t in res.summary:
            r = write_table(ws, fmts, r, SummaryTable(f"{res.sheet.name}: {t.title}", t.table, t.formats))
    sev = result.findings.pivot_table(index="Code", columns="Severity", values="Sheet", aggfunc="count", fill_value=0)
    if len(sev):
        write_table(ws, fmts, r, SummaryTable("Findings by code", sev.reset_index()))


def _write_run(wb, fmts: Formats, result: Result, name: str) -> None:
    ws = wb.add_worksheet(name)
    ws.set_column(0, 0, 30)
    ws.set_column(1, 8, 18)
    ws.write_string(0, 0, RUN_TITLE, fmts.get(header="#FFFFFF"))
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
    write_table(ws, fmts, len(lines) + 2, SummaryTable("Counts per sheet", table))


def tool_sheets(result: Result) -> dict[str, str]:
    """The name of each sheet the tool writes: `Findings`, `Summary`, `Run`, or, where a sheet of the
    user's already has that name, `Summary (njcredits)` (the user's sheet keeps its name)."""
    taken = [s.sheet.name if isinstance(s, SheetResult) else s.name for s in result.sheets]
    names: dict[str, str] = {}
    for role in ("Findings", "Summary", "Run"):
        names[role] = tool_sheet_name(role, taken + list(names.values()))
    return names


def write(result: Result, out_path: Path) -> Path:
    """Write the returned workbook atomically (temporary file, then rename)."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.partial")
    wb = xlsxwriter.Workbook(
        str(tmp),
        {
            "constant_memory": True,
            "strings_to_formulas": False,
            "strings_to_urls": False,
            "strings_to_numbers": False,
            "nan_inf_to_errors": True,
        },
    )
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
                    block += -(-sum(len(c) for c in notes.values()) // 1024)
            else:
                _write_other(wb, fmts, sheet)
        names = tool_sheets(result)
        generated[f"xl/worksheets/sheet{len(result.sheets) + 1}.xml"] = _write_findings(wb, fmts, result, names["Findings"])
        _write_summary(wb, fmts, result, names["Summary"])
        _write_run(wb, fmts, result, names["Run"])
        for role, name in names.items():  # the marker: what the next run replaces (batch.reading)
            wb.define_name(marker_name(role), f"={quoted_sheet(name)}!$A$1")
        wb.close()
        sheetxml.splice(tmp, generated, replace)
        os.replace(tmp, out_path)
        result.timed("write", clock)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out_path
