"""The blank intake template, generated from the sheet specifications (never edited by hand).

`njcredits template --out DIR` writes `DIR/njcredits-intake-template.xlsx`:

- `Instructions`, first: what the template is, what the header colours mean, how to fill each
  intake sheet (what one row is, its required columns) and one worked example row per sheet (shown
  there only, so the intake sheets stay blank);
- one sheet per intake sheet, in the order of the intake contract's table (`SHEET_ORDER`): the
  headers (required ones orange, optional ones grey) with a comment on each, and on every data cell
  down to Excel's last row an input message (the column's hint and what it expects) and a check:
  a drop-down for code and Y/N columns fed from the hidden `Lists` sheet, a date check on date
  columns, a number check (the column's bounds) on money, integer, number and percent columns;
  number formats on the columns (money `#,##0.00`, dates `yyyy-mm-dd`, percents `0.00%`, whole
  numbers `0`, text and codes as text, so `00123` or `2017` stay as typed);
- `Lists`, hidden and protected: one column per list of values, a header cell naming it.

What a check does with a wrong entry (`ERROR_STYLE`): a value off a drop-down list, or a number out
of range or not a number, is refused ("stop"): njcredits would find it Invalid. A date Excel cannot
read as a date only warns ("warning"): njcredits also reads dates written as text (2016-03-31,
3/31/2016), which Excel may keep as text in another locale. A record ID already used in the sheet
warns too (the check counts like Excel's COUNTIF: ignoring case, `*` and `?` as wildcards).

The reader never routes `Instructions` or `Lists` as intake (`batch.workbook.reading.NEVER_ROUTED`).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from pathlib import Path

import xlsxwriter
from xlsxwriter.utility import xl_col_to_name, xl_rowcol_to_cell

from batch.programs import PROGRAMS, Program
from validators.columns import YES_NO, Column, SheetSpec

TEMPLATE_NAME = "njcredits-intake-template.xlsx"
FIXED_TIME = dt.datetime(2026, 1, 1)  # document properties fixed, so regenerating changes nothing
INSTRUCTIONS = "Instructions"
LISTS = "Lists"
# The intake sheets in the order of the intake contract's table: the order of the programs' declarations.
SHEET_ORDER = tuple(p.name for p in PROGRAMS)
LAST_ROW = 1_048_575  # 0-based: Excel's last row, 1,048,576
TITLE_LIMIT, MESSAGE_LIMIT = 32, 255  # Excel's limits on a validation's title and message
REQUIRED_FILL, OPTIONAL_FILL = "#F8CBAD", "#D9D9D9"  # orange, grey
NUMBER_FORMATS = {
    "money": "#,##0.00",
    "date": "yyyy-mm-dd",
    "percent": "0.00%",
    "integer": "0",
    "text": "@",
    "code": "@",
    "yesno": "@",
}  # "number": Excel's General
DATE_RANGE = (dt.date(1900, 1, 1), dt.date(9999, 12, 31))  # every date an Excel cell can hold
NUMBER_LIMIT = 10**15 - 1  # the bound of a number check on a side where the column has none (Excel's 15 digits)
ERROR_STYLE = {"list": "stop", "number": "stop", "date": "warning", "unique": "warning"}
YES_NO_LIST = "Yes/No"  # header of the Y/N list on the Lists sheet

INTRO = (
    "This workbook is the blank intake template of njcredits, the batch tool that checks New Jersey "
    "tax-credit intake workbooks and runs the statutory calculations. Each sheet after this one is an "
    "intake sheet: fill the ones you need, one record per row starting in row 2, and leave the others "
    "blank (or delete them). Blank sheets and blank rows are skipped.",
    "Keep each sheet's name and its header row: njcredits reads a sheet as the program its name "
    "says, and each column by its header. A column of your own is returned as it came, with a "
    "warning naming the closest field, so keep notes on a sheet of their own.",
    "Hover over a header for what goes in the column, or select a cell for a short hint. Code and "
    "Y/N columns have a drop-down list: pick from it. Type dates as 2016-03-31 (they show as "
    "yyyy-mm-dd), money as plain dollars and cents (1250000 or 1,250,000.00, no $ needed) and "
    "percents as 35% (or 0.35). A value off the list, or a number out of range, is refused as you "
    "type it; a date Excel does not read as a date gets a warning you may override (njcredits also "
    "reads a date typed as text, 2016-03-31 or 3/31/2016). Pasted cells are not checked by Excel: "
    "njcredits checks every cell when the workbook is run.",
    "When the workbook is filled, save it as .xlsx (any file name) and drop it in the inbox folder "
    "your team's njcredits runs on (ask whoever runs the batch where that is). It comes back as "
    "NAME.annotated.xlsx: your sheets as you filled them, with a Status and the Findings of every "
    "row, and a Findings sheet explaining each one. This Instructions sheet and the hidden Lists "
    "sheet (the values of the drop-down lists) are never read as intake.",
    "Below: how to fill each intake sheet, with one worked example row of valid values. The "
    "examples are shown here only; to try one, copy its values row into row 2 of its sheet.",
)
COLOURS = (
    ("Required", True, "Orange header: a required column. Every row needs a value in it, or the row is Invalid."),
    ("Optional", False, "Grey header: an optional column. Leave it blank when it does not apply."),
)


@dataclass(frozen=True)
class ListRange:
    """A list of values on the Lists sheet: its header and values, in one column from row 1."""

    name: str
    values: tuple[str, ...]
    column: int  # 0-based

    @property
    def source(self) -> str:
        """The absolute reference a drop-down's source is (`=Lists!$B$2:$B$22`)."""
        letter = xl_col_to_name(self.column)
        return f"={LISTS}!${letter}$2:${letter}${len(self.values) + 1}"


def choices(col: Column) -> tuple[str, ...]:
    """The values of a column's drop-down list (none for a column without one)."""
    return col.codes if col.kind == "code" else YES_NO if col.kind == "yesno" else ()


def list_ranges(specs) -> dict[tuple[str, str], ListRange]:
    """(sheet, header) of every code and Y/N column -> its list on the Lists sheet: one Y/N list
    shared by every Y/N column, then one list per code column in sheet and column order."""
    yes_no = ListRange(YES_NO_LIST, YES_NO, 0)
    out, n = {}, 1
    for spec in specs:
        for col in spec.columns:
            if col.kind == "yesno":
                out[spec.name, col.header] = yes_no
            elif col.kind == "code":
                out[spec.name, col.header] = ListRange(f"{spec.name}: {col.header}", col.codes, n)
                n += 1
    return out


def fit(text: str, limit: int) -> str:
    """`text`, cut at a word to at most `limit` characters (ending in an ellipsis) when longer."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:.") + "…"


def record_id_note(spec: SheetSpec, col: Column) -> str:
    """What a record-ID column's cell must be, in a sentence ("" for another column)."""
    if not col.record_id:
        return ""
    others = [h for h in spec.key if h != col.header]
    return f"With {' and '.join(others)}, unique in the sheet." if others else "Unique in the sheet."


def expected_entry(col: Column) -> str:
    """What a valid entry of the column is in the template: the column's `expected()`, except that
    a Y/N cell takes Y or N from its list (njcredits also reads Yes/No, TRUE/FALSE and 1/0, which
    the list refuses)."""
    return f"Y or N, from the list ({_blank_yes_no(col)})" if col.kind == "yesno" else col.expected()


def _blank_yes_no(col: Column) -> str:
    return "blank means not given" if col.blank_unknown else "blank means N"


def input_message(spec: SheetSpec, col: Column) -> tuple[str, str]:
    """The (title, message) shown when a data cell of the column is selected, within Excel's
    limits: whether it is required, the hint, and what a valid cell holds (for a long list of codes,
    "pick a value from the list"; the header comment has the whole text)."""
    lead = " ".join(x for x in ("Required." if col.required else "Optional.", record_id_note(spec, col)) if x)
    expected = f"Expected: {expected_entry(col)}."
    short = "Pick a value from the list" + (f" (blank means {col.default})" if col.default else "") + "."
    for tail in (expected, short) if col.kind == "code" else (expected,):
        text = f"{lead} {col.hint}\n{tail}"
        if len(text) <= MESSAGE_LIMIT:
            return fit(col.header, TITLE_LIMIT), text
    room = MESSAGE_LIMIT - len(f"{lead} \n{tail}")
    return fit(col.header, TITLE_LIMIT), f"{lead} {fit(col.hint, room)}\n{tail}"


def number_check(col: Column, cell: str) -> dict:
    """The xlsxwriter validation of a money, integer, number or percent column: whole numbers for
    integers, decimals otherwise, within the column's bounds (NUMBER_LIMIT on a side without one).
    `cell`: the first data cell (A2), for a custom formula."""
    kind = "integer" if col.kind == "integer" else "decimal"
    lo, hi, strict = col.minimum, col.maximum, col.minimum_exclusive
    if lo is not None and strict and kind == "integer":  # more than 0 is at least 1 for whole numbers
        lo, strict = math.floor(lo) + 1, False
    if lo is not None and strict:
        if hi is None:
            return {"validate": kind, "criteria": ">", "value": lo}
        return {"validate": "custom", "value": f"=AND(ISNUMBER({cell}),{cell}>{lo:g},{cell}<={hi:g})"}
    if lo is not None and hi is None:
        return {"validate": kind, "criteria": ">=", "value": lo}
    if lo is None and hi is not None:
        return {"validate": kind, "criteria": "<=", "value": hi}
    return {
        "validate": kind,
        "criteria": "between",
        "minimum": -NUMBER_LIMIT if lo is None else lo,
        "maximum": NUMBER_LIMIT if hi is None else hi,
    }


def validation(spec: SheetSpec, col: Column, j: int, lists: dict[tuple[str, str], ListRange]) -> dict:
    """The xlsxwriter data validation of a column's data cells: its check and input message."""
    title, message = input_message(spec, col)
    out = {"input_title": title, "input_message": message, "error_title": fit(col.header, TITLE_LIMIT)}
    cell = xl_rowcol_to_cell(1, j)
    if choices(col):
        out |= {
            "validate": "list",
            "source": lists[spec.name, col.header].source,
            "error_type": ERROR_STYLE["list"],
            "error_message": fit(
                f"Pick Y or N from the drop-down list, or leave the cell blank ({_blank_yes_no(col)})."
                if col.kind == "yesno"
                else f"Pick a value from the drop-down list: {col.expected()}.",
                MESSAGE_LIMIT,
            ),
        }
    elif col.kind == "date":
        out |= {
            "validate": "date",
            "criteria": "between",
            # dates, not datetimes: xlsxwriter reads datetime(1900, 1, 1) as a time of day (serial 0)
            "minimum": DATE_RANGE[0],
            "maximum": DATE_RANGE[1],
            "error_type": ERROR_STYLE["date"],
            "error_message": "Excel does not read this as a date. Type a date such as 2016-03-31. Choose Yes to keep "
            "it as typed: njcredits also reads dates written as text (2016-03-31, 3/31/2016, March 31, 2016) "
            "and reports any it cannot read.",
        }
    elif col.kind in ("money", "integer", "number", "percent"):
        out |= number_check(col, cell) | {
            "error_type": ERROR_STYLE["number"],
            "error_message": fit(f"Expected {col.expected()}.", MESSAGE_LIMIT),
        }
    elif col.record_id and len(spec.key) == 1:
        letter = xl_col_to_name(j)
        out |= {
            "validate": "custom",
            "value": f"=COUNTIF(${letter}$2:${letter}${LAST_ROW + 1},{cell})=1",
            "error_type": ERROR_STYLE["unique"],
            "error_message": f"This {col.header} is already used in this sheet; a record ID must be unique (a repeated "
            "one is Invalid). Choose Yes to keep it anyway.",
        }
    else:
        out["validate"] = "any"
    return out


def header_note(spec: SheetSpec, col: Column) -> str:
    """The comment on a header cell: the hint, what a valid cell holds, required or not."""
    note = f"{col.header}: {col.hint}\nExpected: {col.expected()}.\n" + ("Required." if col.required else "Optional.")
    unique = record_id_note(spec, col)
    return note + (f" Record ID: {unique[0].lower()}{unique[1:]}" if unique else "")


def sheet_guide(program: Program) -> str:
    """How to fill a sheet, in one paragraph: what one row is, its required columns, its record ID
    (what one row is and the notes are the program's intake text)."""
    spec, intake = program.schema, program.intake
    required = [c.header for c in spec.columns if c.required]
    key = " and ".join(spec.key)
    unique = f"{key} {'is' if len(spec.key) == 1 else 'are together'} the record ID, unique in the sheet."
    text = f"One row is {intake.row_is} Required (orange): {', '.join(required)}. {unique}"
    return text + (f" {intake.notes}" if intake.notes else "")


def _lines(text: str, width: float) -> int:
    """Lines a wrapped cell of `width` characters shows `text` in (an estimate that errs long)."""
    per_line = max(1.0, width * 1.1)
    return sum(max(1, math.ceil(len(part) / per_line)) for part in text.split("\n"))


def _height(lines: int) -> float:
    return 15.0 * lines + 3


class _Formats:
    def __init__(self, wb):
        head = {"bold": True, "pattern": 1, "bottom": 1, "text_wrap": True, "valign": "top"}
        self.required = wb.add_format(head | {"bg_color": REQUIRED_FILL})
        self.optional = wb.add_format(head | {"bg_color": OPTIONAL_FILL})
        self.column = {kind: wb.add_format({"num_format": f}) for kind, f in NUMBER_FORMATS.items()}
        self.title = wb.add_format({"bold": True, "font_size": 16})
        self.heading = wb.add_format({"bold": True, "font_size": 13})
        self.text = wb.add_format({"text_wrap": True, "valign": "top"})
        self.label = wb.add_format({"italic": True})
        boxed = {"border": 1, "valign": "top"}
        self.example = {kind: wb.add_format(boxed | {"num_format": f}) for kind, f in NUMBER_FORMATS.items()}
        self.example["number"] = wb.add_format(boxed)  # Excel's General
        self.example_head = {
            True: wb.add_format(head | boxed | {"bg_color": REQUIRED_FILL}),
            False: wb.add_format(head | boxed | {"bg_color": OPTIONAL_FILL}),
        }


def _write_value(ws, r: int, c: int, value, fmt) -> None:
    if isinstance(value, dt.date):
        ws.write_datetime(r, c, dt.datetime.combine(value, dt.time()), fmt)
    elif isinstance(value, (int, float)):
        ws.write_number(r, c, value, fmt)
    else:
        ws.write_string(r, c, str(value), fmt)


def _display(col: Column, value) -> str:
    """The example value as its cell shows it (for the column widths)."""
    if value is None:
        return ""
    if col.kind == "money":
        return f"{value:,.2f}"
    if col.kind == "percent":
        return f"{value:.2%}"
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def _write_instructions(ws, fmts: _Formats, programs: tuple[Program, ...]) -> None:
    width = max(len(p.schema.columns) for p in programs)
    widths = [14.0] * width
    for p in programs:
        for j, col in enumerate(p.schema.columns):
            shown = _display(col, p.intake.example.get(col.header))
            widths[j] = min(36.0, max(widths[j], len(shown) + 2.0))
    for j, w in enumerate(widths):
        ws.set_column(j, j, w)
    # the prose spans the first columns, about 110 characters wide
    span, total = 0, 0.0
    while total < 110 and span < width:
        total += widths[span]
        span += 1
    ws.hide_gridlines(2)
    r = 0
    ws.set_row(r, 24)
    ws.write_string(r, 0, "njcredits intake template", fmts.title)
    r += 2

    def paragraph(text: str) -> None:
        nonlocal r
        ws.set_row(r, _height(_lines(text, total)))
        ws.merge_range(r, 0, r, span - 1, text, fmts.text)
        r += 1

    for text in INTRO[:1]:
        paragraph(text)
    r += 1
    ws.write_string(r, 0, "Header colours", fmts.heading)
    r += 1
    for label, required, text in COLOURS:
        ws.set_row(r, _height(_lines(text, total - widths[0])))
        ws.write_string(r, 0, label, fmts.required if required else fmts.optional)
        ws.merge_range(r, 1, r, span - 1, text, fmts.text)
        r += 1
    r += 1
    for text in INTRO[1:]:
        paragraph(text)
        r += 1
    for program in programs:
        spec = program.schema
        ws.write_string(r, 0, f"{spec.name}: {spec.program} ({spec.citation})", fmts.heading)
        r += 1
        paragraph(sheet_guide(program))
        ws.write_string(
            r, 0, f"Worked example (a valid row; copy its values row into row 2 of the {spec.name} sheet to try it):", fmts.label
        )
        r += 1
        lines = max(_lines(c.header, widths[j] - 2) for j, c in enumerate(spec.columns))
        ws.set_row(r, _height(lines))
        example = program.intake.example
        for j, col in enumerate(spec.columns):
            ws.write_string(r, j, col.header, fmts.example_head[col.required])
            value = example.get(col.header)
            fmt = fmts.example.get(col.kind, fmts.example["text"])
            if value is None:
                ws.write_blank(r + 1, j, None, fmt)
            else:
                _write_value(ws, r + 1, j, value, fmt)
        r += 3


def _write_intake(ws, fmts: _Formats, spec: SheetSpec, lists: dict[tuple[str, str], ListRange]) -> None:
    lines = 1
    for j, col in enumerate(spec.columns):
        width = max(14, min(40, len(col.header) + 2))
        lines = max(lines, _lines(col.header, width - 2))
        ws.set_column(j, j, width, fmts.column.get(col.kind))
        ws.write_string(0, j, col.header, fmts.required if col.required else fmts.optional)
        ws.write_comment(0, j, header_note(spec, col), {"x_scale": 2.5, "y_scale": 1.8})
        if ws.data_validation(1, j, LAST_ROW, j, validation(spec, col, j, lists)) != 0:
            raise ValueError(f"the validation of {spec.name} / {col.header} was refused by xlsxwriter")
    ws.set_row(0, _height(lines))
    ws.freeze_panes(1, 0)


def _write_lists(ws, fmts: _Formats, lists: dict[tuple[str, str], ListRange]) -> None:
    for lst in sorted(set(lists.values()), key=lambda x: x.column):
        ws.set_column(lst.column, lst.column, max(12, min(48, max(len(v) for v in (lst.name, *lst.values)) + 2)))
        ws.write_string(0, lst.column, lst.name, fmts.optional)
        for i, v in enumerate(lst.values, start=1):
            ws.write_string(i, lst.column, v)
    ws.freeze_panes(1, 0)
    ws.hide()
    ws.protect()


def write_template(out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / TEMPLATE_NAME
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    wb.set_properties({"title": "njcredits intake template", "created": FIXED_TIME})
    fmts = _Formats(wb)
    specs = [p.schema for p in PROGRAMS]
    lists = list_ranges(specs)
    _write_instructions(wb.add_worksheet(INSTRUCTIONS), fmts, PROGRAMS)
    for spec in specs:
        _write_intake(wb.add_worksheet(spec.name), fmts, spec, lists)
    _write_lists(wb.add_worksheet(LISTS), fmts, lists)
    wb.close()
    return path
