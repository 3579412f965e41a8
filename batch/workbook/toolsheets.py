"""The tool's own sheets of a returned workbook: Findings (every finding, with a link to its cell),
Summary (the awards chart and every summary table), Run (the run's facts and counts) and Rules
(the rules used, drawn by `batch.workbook.rulebook`), named apart from the user's sheets, with the
markers that name them (see `batch.workbook.reading`).

Drawn by xlsxwriter into the workbook a writer gives (`write_tool_sheets`): the in-place writer
(`batch.workbook.inplace`) draws them into a workbook of their own and moves them into the user's
package; the writer of workbooks written anew (`batch.workbook.writing`) draws them after the
user's sheets. The Findings rows are generated (see `batch.workbook.sheetxml`), not written by
xlsxwriter.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from batch import __version__
from batch.pipeline import FLAGGED_ERRORS, FLAGGED_WARNINGS, Result, SheetResult
from batch.programs._kit.calculation import SummaryTable, crosstab
from batch.programs._kit.findings import FINDINGS_COLUMNS, SEVERITY_ORDER
from batch.reviews import APPROVED, DECISION
from batch.workbook import cells, sheetxml
from batch.workbook.looks import HEADER_BG, LINE_HEIGHT, MONEY, PERCENT, Formats, line_counts, lines, print_setup, style
from batch.workbook.reading import RUN_TITLE, SUMMARY_TITLE, OtherSheet, quoted_sheet, sheet_marker, tool_sheet_name
from batch.workbook.rulebook import write_rules_sheet
from batch.workbook.toolcolumns import layout, tool_headers
from batch.workbook.xlsxwriter_private import define_hidden_name, value_labels_only
from validators.columns import each_as_text, each_length

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
    out = np.full(len(f), "", dtype=object)
    of_sheet = f["Sheet"].to_numpy(dtype=object)
    named = f["Column"].to_numpy(dtype=object)
    row = f["Row"].astype("Int64")
    has_row = row.notna().to_numpy()
    rows = row.to_numpy(dtype=np.int64, na_value=0)
    for s in result.sheets:
        name = s.sheet.name if isinstance(s, SheetResult) else s.name
        mine = of_sheet == name
        if not mine.any():
            continue
        if not isinstance(s, SheetResult):
            out[mine] = sheet_ref(name) + "!A1"
            continue
        sheet = s.sheet
        k, computed_headers, at, last_col = layout(sheet)
        column = {}
        for i, (field_name, header) in enumerate(zip(sheet.fields[:k], sheet.headers[:k], strict=False)):
            at_col = sheet.kept[i] if i < len(sheet.kept) else i  # the column in the returned sheet, as in the input
            if field_name:
                column.setdefault(field_name, at_col)
            column.setdefault(str(header), at_col)
        column.update({h: at + j for j, h in enumerate(tool_headers(sheet))})
        column.update(sheet.review_cols)  # a returned workbook's reviewer columns, where they are
        id_col = next((column[h] for h in sheet.spec.key if h in column), 0)
        at = pd.Index(list(column)).get_indexer(named[mine])  # each finding's column among the sheet's, -1: none
        has_col, on_row = at >= 0, has_row[mine]
        places = np.array([*column.values(), 0], dtype=np.int64)  # the last for -1, never chosen: no column
        col = np.where(has_col, places[at], np.where(on_row, id_col, 0))
        line = np.where(on_row, rows[mine], np.where(has_col, sheet.header_row + 1, 1))
        letters = np.array([cells.column_letters(j) for j in range(int(col.max()) + 1)], dtype=object)
        out[mine] = sheet_ref(name) + "!" + letters[col] + line.astype(str).astype(object)
    return pd.Series(out, index=f.index, dtype=object)


WRAPPED = {"Message": 80, "Citation": 34, "Waived": 30}  # the Findings columns that wrap, and their widths


def _findings_widths(f: pd.DataFrame, where: pd.Series) -> list[float]:
    """Each Findings column as wide as its longest value (within bounds); the long texts wrap."""

    def longest(values: pd.Series, low: float, high: float, scale: float = 1.0) -> float:
        present = values.to_numpy(dtype=object)[values.notna().to_numpy()]  # its values as text, blanks left out
        n = int(each_length(each_as_text(present)).max()) if len(present) else 0
        return float(min(high, max(low, round(n * scale) + 2)))

    sized = {"Sheet": (12, 32), "Row": (7, 8), "Record ID": (12, 24), "Column": (14, 36), "Code": (16, 44), "Severity": (9, 9)}
    out = []
    for col in FINDINGS_SHEET_COLUMNS:
        if col in WRAPPED:
            out.append(float(WRAPPED[col]))
        elif col == "Cell":
            out.append(longest(where, 14, 40))
        elif col == "Code":  # capitals and underscores: about a fifth wider than a column's unit (a digit) each
            out.append(longest(f[col], *sized[col], scale=1.2))
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
        style(fmt)  # each format's index is fixed now, before the workbook closes
    letters = [cells.column_letters(j) for j in range(len(FINDINGS_SHEET_COLUMNS))]

    def rows(restyle=lambda s: s):
        """The rows; `restyle` turns a style attribute into another workbook's (see batch.workbook.inplace)."""
        styles = {k: restyle(style(fmt)) for k, fmt in formats.items()}
        plain, link_style = restyle(style(plain_format)), restyle(style(link_format))
        for start in range(0, len(f), sheetxml.CHUNK_ROWS):
            part = f.iloc[start : start + sheetxml.CHUNK_ROWS]
            numbers = np.arange(start + 2, start + 2 + len(part)).astype(str).astype(object)
            columns = []
            for j, col in enumerate(FINDINGS_COLUMNS):
                refs = letters[j] + numbers
                if col == "Row":
                    columns.append(_number_cells(part[col].astype("Float64"), refs, styles["Row"]))
                else:
                    columns.append(_text_cells(part[col], refs, styles.get(col, plain)))
            j = FINDINGS_SHEET_COLUMNS.index("Cell")
            columns.append(cells.links(where.iloc[start : start + sheetxml.CHUNK_ROWS], letters[j] + numbers, link_style))
            if "Waived" in part:  # the reviewer's note of a waived finding
                j = FINDINGS_SHEET_COLUMNS.index("Waived")
                columns.append(_text_cells(part["Waived"], letters[j] + numbers, styles["Message"]))
            tall = np.maximum(line_counts(part["Message"], WRAPPED["Message"]), line_counts(part["Citation"], WRAPPED["Citation"]))
            yield sheetxml.rows_xml(numbers, columns, np.where(tall > 1, tall * LINE_HEIGHT, 0))

    return rows, f"A1:{letters[-1]}{len(f) + 1}"


def _text_cells(values: pd.Series, refs: np.ndarray, style: str) -> np.ndarray:
    """A Findings column's cells as text, blank where a value is missing or empty: the column's values
    taken out of pandas once (a few findings' columns are many short pandas passes otherwise)."""
    v = values.to_numpy(dtype=object)
    out = np.full(len(v), "", dtype=object)
    present = pd.notna(v)
    present[present] = v[present] != ""
    if present.any():
        v = v[present]
        if pd.api.types.infer_dtype(v, skipna=False) != "string":  # a number or a date: as pandas writes it as text
            v = pd.Series(v, dtype=object).astype(str).to_numpy(dtype=object)
        out[present] = cells.strings(v, refs[present], style)
    return out


def _number_cells(values: pd.Series, refs: np.ndarray, style: str) -> np.ndarray:
    """A Findings column's cells as numbers (`values` Float64), blank where missing or not finite."""
    x = values.to_numpy(dtype=np.float64, na_value=np.nan)
    out = np.full(len(x), "", dtype=object)
    finite = np.isfinite(x)
    if finite.any():
        out[finite] = cells.numbers(cells.number_text(x[finite]), refs[finite], style)
    return out


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
        columns = t.table.to_numpy(dtype=object).T  # each column's values, as iterating the column gives them
        for j, h in enumerate(t.table.columns):
            money = t.formats.get(str(h)) == "money"
            longest = max((len(shown(v, money)) for v in columns[j]), default=0)
            head = len(str(h)) if whole_headers else max((len(w) for w in str(h).split()), default=0)
            widths[j] = max(widths.get(j, low), min(high, max(longest, head) + 2))
    if first:
        widths[0] = max(widths.get(0, 0), first)
    return widths


def row_heights(table: pd.DataFrame, wrapped: dict[int, float]) -> np.ndarray:
    """Per row of `table`: the height in points the text of its `wrapped` columns (index -> width)
    needs, or 0 where one line does (the default height); every row's at once (`line_counts`)."""
    tall = np.ones(len(table), dtype=np.int64)
    for j, width in wrapped.items():
        tall = np.maximum(tall, line_counts(table.iloc[:, j].map(lambda v: shown(v, False)), width))
    return np.where(tall > 1, tall * LINE_HEIGHT, 0)


def write_table(ws, fmts: Formats, r: int, t: SummaryTable, widths: dict[int, float] | None = None, wrapped: tuple = ()) -> int:
    """A title, a header row (as tall as its wrapped headers need in `widths`) and the rows, each as
    tall as the text of its `wrapped` columns needs in `widths`; returns the row after the blank row
    that follows the table."""
    ws.write_string(r, 0, t.title, fmts.get(title=True))
    r += 1
    for j, (h, dtype) in enumerate(zip(t.table.columns, t.table.dtypes, strict=True)):
        numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        ws.write_string(r, j, str(h), fmts.get(header=HEADER_BG, right=numeric))
    if widths:
        ws.set_row(r, LINE_HEIGHT * max(lines(h, widths.get(j, 8.43)) for j, h in enumerate(t.table.columns)))
    num = [{"money": MONEY, "percent": PERCENT}.get(t.formats.get(str(h))) for h in t.table.columns]
    tall = [j for j, h in enumerate(t.table.columns) if str(h) in wrapped] if widths else []
    heights = row_heights(t.table, {j: widths.get(j, 8.43) for j in tall})
    top = bool(tall)  # beside wrapped text every cell at the top of its row
    for row, height in zip(t.table.to_numpy(dtype=object), heights.tolist(), strict=True):
        r += 1
        if height:
            ws.set_row(r, height)
        for j, v in enumerate(row):
            if isinstance(v, str):
                ws.write_string(r, j, v, fmts.get(wrap=True) if j in tall else fmts.get(top=top))
            elif v is not None and not pd.isna(v):
                ws.write_number(r, j, float(v) / 100 if num[j] == MONEY else float(v), fmts.get(num[j], top=top))
    return r + 2


CLEAN, OPEN = "clean", "with open errors"  # the two parts of each award total


def awards_by_program(result: Result, kind: str = "award") -> SummaryTable:
    """Rows by status (Flagged in two: with errors, with warnings only) and the total of each
    sheet with rows whose program adds up `kind` (awards, or credit transferred), in two: "clean"
    (OK rows and rows with warnings only) and "with open errors" (rows with an error not waived)."""
    rows = []
    label = kind[:1].upper() + kind[1:]
    for res in result.intake:
        counts = res.counts
        if res.program.award_kind != kind or not counts["rows"]:
            continue
        award = _award_cents(res)
        errors = res.open_errors
        rows.append(
            {
                "Sheet": res.sheet.name,
                "Program": res.program.schema.program,
                "Rows": counts["rows"],
                "OK": counts["OK"],
                FLAGGED_ERRORS: counts[FLAGGED_ERRORS],
                FLAGGED_WARNINGS: counts[FLAGGED_WARNINGS],
                "Ineligible": counts["Ineligible"],
                "Invalid": counts["Invalid"],
                f"{label} {CLEAN} ($)": int(award[~errors].sum()),
                f"{label} {OPEN} ($)": int(award[errors].sum()),
            }
        )
    money = [f"{label} {CLEAN} ($)", f"{label} {OPEN} ($)"]
    columns = ["Sheet", "Program", "Rows", "OK", FLAGGED_ERRORS, FLAGGED_WARNINGS, "Ineligible", "Invalid", *money]
    title = f"Rows by status and {kind} by program ({kind} excludes Invalid and Ineligible rows; {CLEAN}: OK and warnings only)"
    return SummaryTable(title, pd.DataFrame(rows, columns=columns), dict.fromkeys(money, "money"))


def review_counts(res: SheetResult) -> dict[str, int]:
    """The reviewer's work on a sheet, in rows: approved, waived (a warning waived), withdrawn,
    stale (a decision not applied because the row's inputs changed), and still to review (Flagged
    rows neither approved nor withdrawn), read from the sheet's result (its findings and decisions)."""
    f = res.findings
    at_row = (f["pos"] >= 0).to_numpy()
    n = len(res.status)

    def rows_with(mask) -> np.ndarray:
        out = np.zeros(n, dtype=bool)
        out[f.loc[at_row & np.asarray(mask, dtype=bool), "pos"].to_numpy(dtype=np.int64)] = True
        return out

    stale = rows_with(f["Code"].eq("REVIEW_DECISION_STALE"))
    waived = rows_with(f["Waived"].fillna("").astype(str).ne("")) if "Waived" in f else np.zeros(n, dtype=bool)
    withdrawn = res.withdrawn if res.withdrawn is not None else np.zeros(n, dtype=bool)
    approved = np.zeros(n, dtype=bool)
    reviews = res.sheet.reviews
    if reviews is not None and len(reviews) == n:
        approved = reviews[DECISION].fillna("").astype(str).str.match(APPROVED).to_numpy(dtype=bool) & ~stale
    flagged = (res.status == "Flagged").to_numpy()
    return {
        "Approved": int(approved.sum()),
        "Waived": int(waived.sum()),
        "Withdrawn": int(withdrawn.sum()),
        "Stale": int(stale.sum()),
        "Still to review": int((flagged & ~approved & ~withdrawn).sum()),
    }


def reviews_by_sheet(result: Result) -> SummaryTable:
    """One line per sheet with rows: its rows approved, waived, withdrawn, stale, still to review."""
    rows = [{"Sheet": res.sheet.name, **review_counts(res)} for res in result.intake if res.counts["rows"]]
    columns = ["Sheet", "Approved", "Waived", "Withdrawn", "Stale", "Still to review"]
    title = "Reviewer decisions by sheet, in rows (still to review: Flagged, neither approved nor withdrawn)"
    return SummaryTable(title, pd.DataFrame(rows, columns=columns))


STATUS_COLUMNS = ["OK", FLAGGED_ERRORS, FLAGGED_WARNINGS, "Ineligible", "Invalid"]


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
    if not records.any():
        return None
    month = _year_months(res.typed[column][records])
    months, at = np.unique(month, return_inverse=True)  # in order, (no date) = -1 first
    at = at.ravel()
    order = np.concatenate([np.flatnonzero(months >= 0), np.flatnonzero(months < 0)])  # (no date) last
    shown = res.status[records].to_numpy(dtype=object)
    flagged = shown == "Flagged"  # in two: with an error not waived, with warnings only
    shown = np.where(flagged, np.where(res.open_errors[records], FLAGGED_ERRORS, FLAGGED_WARNINGS), shown)
    status = pd.Index(STATUS_COLUMNS).get_indexer(shown)
    counts = np.zeros((len(months), len(STATUS_COLUMNS)), dtype=np.int64)
    known = status >= 0
    np.add.at(counts, (at[known], status[known]), 1)
    award = np.zeros(len(months), dtype=np.int64)
    np.add.at(award, at, _award_cents(res)[records].to_numpy(dtype=np.int64))
    label = np.array(["(no date)" if k < 0 else f"{k // 100:04d}-{k % 100:02d}" for k in months.tolist()], dtype=object)
    table = pd.DataFrame(
        {
            "Month": label[order],
            "Rows": counts.sum(axis=1)[order],
            **{s: counts[order, j] for j, s in enumerate(STATUS_COLUMNS)},
            "Award ($)": award[order],
        }
    )
    return SummaryTable(
        f"{res.sheet.name}: rows and award by month of {column} (award excludes Invalid and Ineligible rows)", table, {"Award ($)": "money"}
    )


def _year_months(dates: pd.Series) -> np.ndarray:
    """Each date's year and month as one number (2026-11: 202611), -1 where it is missing. A column of
    numpy dates (every typed date column) by numpy's calendar, a month since 1970 each; pandas'
    `.dt` for any other."""
    if not isinstance(dates.dtype, np.dtype) or dates.dtype.kind != "M":
        return (dates.dt.year * 100 + dates.dt.month).astype("Int64").fillna(-1).to_numpy(dtype=np.int64)
    day = dates.to_numpy()
    months = day.astype("datetime64[M]").astype(np.int64)  # months since January 1970, before it negative
    return np.where(np.isnat(day), -1, (months // 12 + 1970) * 100 + months % 12 + 1)


def findings_by_code(findings: pd.DataFrame) -> SummaryTable | None:
    """Findings of each code by severity, the most frequent first (codes with as many findings in
    code order). Counted with numpy where every code and severity is text (as the tool renders
    them): pandas' crosstab, reindex, total and sort took about a millisecond a workbook; pandas'
    own for anything else."""
    if findings.empty:
        return None
    title = "Findings by code (most frequent first)"
    code, severity = findings["Code"], findings["Severity"]
    codes, severities = code.to_numpy(dtype=object), severity.to_numpy(dtype=object)
    if not all(pd.api.types.infer_dtype(v, skipna=False) == "string" for v in (codes, severities)):  # text, none missing
        table = crosstab(code, severity)
        table = table.reindex(columns=[s for s in SEVERITY_ORDER if s in table.columns])
        table = table.assign(Total=table.sum(axis=1)).reset_index()
        table = table.sort_values(["Total", "Code"], ascending=[False, True]).reset_index(drop=True)
        table.columns.name = None
        return SummaryTable(title, table)
    keys, at = np.unique(codes, return_inverse=True)  # the codes in sorted order (compared as Python compares text)
    at = at.ravel()
    kept = [s for s in SEVERITY_ORDER if (severities == s).any()]
    counts = {s: np.bincount(at[severities == s], minlength=len(keys)).astype(np.int64) for s in kept}
    # no column of the three: a total of none, as pandas adds no column (0.0)
    total = np.sum([counts[s] for s in kept], axis=0, dtype=np.int64) if kept else np.zeros(len(keys))
    order = np.lexsort((np.arange(len(keys)), -total))  # the most findings first; then in code order
    table = {"Code": pd.array(keys[order], dtype=code.dtype), **{s: counts[s][order] for s in kept}, "Total": total[order]}
    return SummaryTable(title, pd.DataFrame(table))


def _awards_chart(wb, name: str, totals: SummaryTable, first_row: int, kind: str):
    """The totals of a table of `awards_by_program` as horizontal bars (the labels stay level), the
    clean part and the part with open errors side by side, each labelled with its value alone (a
    part of $0 unlabelled); sized to the programs. Returns the chart and the rows it covers."""
    n = len(totals.table)
    chart = wb.add_chart({"type": "bar"})
    last = len(totals.table.columns) - 1
    for j, colour in ((last - 1, "#4472C4"), (last, "#C00000")):
        chart.add_series(
            {
                "name": [name, first_row - 1, j],
                "categories": [name, first_row, 1, first_row + n - 1, 1],
                "values": [name, first_row, j, first_row + n - 1, j],
                "data_labels": {"value": True, "num_format": "$#,##0;-$#,##0;;", "position": "outside_end"},  # no label for 0
                "fill": {"color": colour},
                "gap": 50,
            }
        )
    value_labels_only(chart)
    title = "Awards by program" if kind == "award" else f"{kind[:1].upper() + kind[1:]} by program"
    chart.set_title({"name": title, "name_font": {"size": 12}})
    chart.set_legend({"position": "bottom"})
    chart.set_x_axis({"num_format": '$#,##0.0,,"M"', "min": 0})  # from 0, in millions: short labels that stay level
    chart.set_y_axis({"reverse": True})  # the programs in the table's order, top down
    height = 140 + 56 * n
    chart.set_size({"width": 900, "height": height})
    return chart, -(-height // 20) + 1  # rows of the default 20 pixels, and one to spare


def _write_summary(wb, fmts: Formats, result: Result, name: str) -> None:
    """The totals of the sheets with rows (awards, and credit transferred, apart), one line for each
    sheet without rows, the reviewer's work per sheet, a chart below each totals table, then every
    other table of the sheets with rows below the charts, so a chart never covers a table; columns as
    wide as the tables need."""
    ws = wb.add_worksheet(name)
    print_setup(ws, 0)  # the title on every page
    kinds = list(dict.fromkeys(res.program.award_kind for res in result.intake if res.counts["rows"]))
    totals = {kind: awards_by_program(result, kind) for kind in kinds}
    reviews = reviews_by_sheet(result)
    tables = []
    for res in result.intake:
        if not res.counts["rows"]:
            continue
        month = by_month(res)
        tables += [SummaryTable(f"{res.sheet.name}: {t.title}", t.table, t.formats) for t in res.summary]
        tables += [month] if month else []
    codes = findings_by_code(result.findings)
    tables += [codes] if codes is not None else []
    widths = table_widths([*totals.values(), reviews, *tables], first=24)
    for j, w in widths.items():
        ws.set_column(j, j, w)
    ws.write_string(0, 0, f"{SUMMARY_TITLE} {result.path.name}", fmts.get(title=True))
    r = 2
    empty = [res for res in result.intake if not res.counts["rows"]]
    for res in empty:  # a sheet without rows: one line
        ws.write_string(r, 0, f"{res.sheet.name} ({res.program.schema.program}): no rows.")
        r += 1
    if not result.intake:
        ws.write_string(r, 0, "No intake sheet in this workbook.")
        r += 1
    r += 1 if r > 2 else 0
    charts = []
    for kind, t in totals.items():
        charts.append((kind, t, r + 2))  # the table's first row of values
        r = write_table(ws, fmts, r, t, widths)
    if len(reviews.table):
        r = write_table(ws, fmts, r, reviews, widths)
    for kind, t, first in charts:
        chart, rows = _awards_chart(wb, name, t, first, kind)
        ws.insert_chart(r, 0, chart)
        r += rows + 1
    for t in tables:
        r = write_table(ws, fmts, r, t, widths)


def _write_run(wb, fmts: Formats, result: Result, name: str) -> None:
    ws = wb.add_worksheet(name)
    print_setup(ws, 0)  # the title on every page
    ws.write_string(0, 0, RUN_TITLE, fmts.get(title=True))
    facts = [
        ("Input file", result.path.name),
        ("Input SHA-256", result.sha256),
        ("Run at (UTC)", result.started.strftime("%Y-%m-%d %H:%M:%S")),
        ("As-of date", result.as_of.isoformat() if result.as_of else ""),
        ("njcredits version", __version__),
    ] + [(f"Rules version: {sheet}", label) for sheet, label in result.rules_versions().items()]
    for i, (key, value) in enumerate(facts, start=1):
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
                FLAGGED_ERRORS: c[FLAGGED_ERRORS],
                FLAGGED_WARNINGS: c[FLAGGED_WARNINGS],
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
            FLAGGED_ERRORS,
            FLAGGED_WARNINGS,
            "OK",
            "Errors",
            "Warnings",
            "Info",
            "Totals rows skipped",
        ],
    )
    counts_table = SummaryTable("Counts per sheet", table)
    widths = table_widths([counts_table], first=max(30, max(len(k) for k, _ in facts) + 2))
    for j, w in widths.items():
        ws.set_column(j, j, w)
    r = write_table(ws, fmts, len(facts) + 2, counts_table, widths)
    # what the returned workbook could not keep of the input (FORMATTING_NOT_KEPT, MACROS_REMOVED,
    # ENCRYPTION_REMOVED, SHEET_NOT_READABLE): findings about the workbook, not a sheet
    about = result.findings[result.findings["Sheet"] == ""]
    if len(about):  # each message wrapped across the columns right of Code and Severity, its row as tall as it needs
        last = len(table.columns) - 1
        across = sum(widths.get(j, 8.43) for j in range(2, last + 1))
        ws.write_string(r, 0, "The workbook", fmts.get(title=True))
        for j, h in enumerate(("Code", "Severity")):
            ws.write_string(r + 1, j, h, fmts.get(header=HEADER_BG))
        ws.merge_range(r + 1, 2, r + 1, last, "Message", fmts.get(header=HEADER_BG))
        wrap, top = fmts.get(wrap=True), fmts.get(top=True)
        for i, (code, severity, message) in enumerate(about[["Code", "Severity", "Message"]].itertuples(index=False), start=r + 2):
            ws.set_row(i, LINE_HEIGHT * lines(message, across))
            ws.write_string(i, 0, str(code), top)
            ws.write_string(i, 1, str(severity), top)
            ws.merge_range(i, 2, i, last, str(message), wrap)


def tool_sheets(result: Result) -> dict[str, str]:
    """The name of each sheet the tool writes: `Findings`, `Summary`, `Run`, `Rules`, or, where a
    sheet of the user's already has that name, `Summary (njcredits)` (the user's sheet keeps its
    name)."""
    taken = [s.sheet.name if isinstance(s, SheetResult) else s.name for s in result.sheets]
    names: dict[str, str] = {}
    for role in ("Findings", "Summary", "Run", "Rules"):
        names[role] = tool_sheet_name(role, taken + list(names.values()))
    return names


def write_tool_sheets(wb, fmts: Formats, result: Result, keep_rules: bool = False) -> tuple:
    """The Findings, Summary, Run and Rules sheets, and the marker naming them (what the next run
    replaces, see batch.workbook.reading); returns the Findings rows' generator (see
    batch.workbook.sheetxml) and the Rules sheet's part (`batch.workbook.rulebook.RulesPart`: with
    `keep_rules`, the writer puts what it settles in the part's place once the workbook is closed)."""
    names = tool_sheets(result)
    findings = _write_findings(wb, fmts, result, names["Findings"])
    _write_summary(wb, fmts, result, names["Summary"])
    _write_run(wb, fmts, result, names["Run"])
    programs = []  # each program present, once, in the order of its sheets
    for res in result.intake:
        if all(res.program is not p for p in programs):
            programs.append(res.program)
    rules = write_rules_sheet(wb, fmts, programs, names["Rules"], keep=keep_rules)
    for role, name in names.items():  # the markers of the tool's sheets (see batch.workbook.reading)
        define_hidden_name(wb, *sheet_marker(role, name))
    return findings, rules
