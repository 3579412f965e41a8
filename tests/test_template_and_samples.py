"""The committed template and sample workbook are what the code generates (never stale); the
template holds what the intake contract says, and its worked examples are valid rows."""

from __future__ import annotations

import datetime as dt
import re

import openpyxl
import pytest
import python_calamine
import samples
from conftest import ROOT
from openpyxl.utils import get_column_letter, range_boundaries

from batch.programs import BY_NAME, PROGRAMS
from batch.workbook.template import (
    INSTRUCTIONS,
    LISTS,
    MESSAGE_LIMIT,
    OPTIONAL_FILL,
    REQUIRED_FILL,
    SHEET_ORDER,
    TEMPLATE_NAME,
    TITLE_LIMIT,
    choices,
    number_check,
    write_template,
)
from validators.columns import Column

LAST_ROW = 1_048_576  # Excel's last row


def fingerprint(path):
    """Everything a user of the template sees: every cell's value (the Instructions text, the
    headers, the Lists values), header comments and fills, every data validation (its check, list
    source, messages and styles), column widths and number formats, row heights, merged ranges,
    frozen panes, which sheets are hidden, and the document properties."""
    wb = openpyxl.load_workbook(path)
    out = {"properties": (wb.properties.title, wb.properties.created, wb.sheetnames)}
    for ws in wb.worksheets:
        out[ws.title] = (
            ws.sheet_state,
            [[(c.value, c.comment.text if c.comment else None, c.fill.fgColor.rgb) for c in row] for row in ws.iter_rows()],
            sorted(
                (
                    str(d.sqref),
                    d.type,
                    d.operator,
                    d.formula1,
                    d.formula2,
                    d.errorStyle,
                    d.errorTitle,
                    d.error,
                    d.promptTitle,
                    d.prompt,
                    d.allow_blank,
                )
                for d in ws.data_validations.dataValidation
            ),
            sorted((d.min, d.max, d.width, d.number_format) for d in ws.column_dimensions.values()),
            sorted((r, d.height) for r, d in ws.row_dimensions.items() if d.height),
            sorted(str(m) for m in ws.merged_cells.ranges),
            ws.freeze_panes,
        )
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return write_template(tmp_path_factory.mktemp("template"))


@pytest.fixture(scope="module")
def book(template):
    return openpyxl.load_workbook(template)


def test_committed_template_is_current(template):
    committed = ROOT / "templates" / TEMPLATE_NAME
    assert committed.exists(), "run `njcredits template --out templates` and commit the file"
    assert fingerprint(template) == fingerprint(committed), "templates/ is stale: run `njcredits template --out templates`"


def test_regenerating_the_template_changes_no_byte(template, tmp_path):
    assert write_template(tmp_path).read_bytes() == template.read_bytes()


def test_instructions_first_then_the_intake_sheets_in_the_contracts_order_then_the_hidden_lists(book):
    assert SHEET_ORDER == tuple(m.name for m in PROGRAMS)
    assert book.sheetnames == [INSTRUCTIONS, *SHEET_ORDER, LISTS]
    assert [ws.sheet_state for ws in book.worksheets] == ["visible"] * (len(SHEET_ORDER) + 1) + ["hidden"]
    assert book.active.title == INSTRUCTIONS


SPECS = {m.name: m.schema for m in PROGRAMS}
COLUMNS = [(name, col) for name in SHEET_ORDER for col in SPECS[name].columns]


def _validation(ws, col_letter):
    """The one data validation over the column's data cells (row 2 to Excel's last row)."""
    found = [d for d in ws.data_validations.dataValidation if f"{col_letter}2:{col_letter}{LAST_ROW}" in str(d.sqref).split()]
    assert len(found) == 1, (ws.title, col_letter, found)
    return found[0]


def _argb(hex_colour):
    return "FF" + hex_colour.lstrip("#").upper()


def _column(ws, j):
    """The column dimension (width, number format) of column j, 1-based (openpyxl keys a run of
    alike columns by its first letter)."""
    return next(d for d in ws.column_dimensions.values() if d.min <= j <= d.max)


def test_intake_sheets_are_blank_below_their_headers_with_a_comment_and_fill_on_each(book):
    for name in SHEET_ORDER:
        ws, spec = book[name], SPECS[name]
        header = [c for c in ws[1]]
        assert [c.value for c in header] == [c.header for c in spec.columns]
        assert ws.max_row == 1 and ws.freeze_panes == "A2"
        for cell, col in zip(header, spec.columns, strict=True):
            assert "Expected:" in cell.comment.text and col.hint in cell.comment.text
            assert cell.fill.fgColor.rgb == _argb(REQUIRED_FILL if col.required else OPTIONAL_FILL), (name, col.header)


# kind -> (validation type, error style, number format of the column); a text record ID gets the
# uniqueness check, other text none
CHECKS = {
    "code": ("list", None, "@"),  # openpyxl reads the default style, stop, as None
    "yesno": ("list", None, "@"),
    "date": ("date", "warning", "yyyy-mm-dd"),
    "money": ("decimal", None, "#,##0.00"),
    "percent": ("decimal", None, "0.00%"),
    "number": ("decimal", None, "General"),
    "integer": ("whole", None, "0"),
    "text": (None, None, "@"),
}


@pytest.mark.parametrize("sheet, col", COLUMNS, ids=[f"{s}-{c.header}" for s, c in COLUMNS])
def test_every_data_column_has_its_check_input_message_and_format_to_the_last_row(book, sheet, col):
    ws = book[sheet]
    j = [c.header for c in SPECS[sheet].columns].index(col.header) + 1
    letter = get_column_letter(j)
    d = _validation(ws, letter)
    kind, style, fmt = CHECKS[col.kind]
    if col.kind == "text" and col.record_id and len(SPECS[sheet].key) == 1:
        kind, style = "custom", "warning"
        assert d.formula1 == f"COUNTIF(${letter}$2:${letter}${LAST_ROW},{letter}2)=1"
    assert (d.type, d.errorStyle) == (kind, style)
    assert d.allow_blank  # a blank cell is the schema's business (MISSING_VALUE), never refused
    # Excel's limits: 32 characters of title, 255 of message
    assert 0 < len(d.promptTitle) <= TITLE_LIMIT and 0 < len(d.prompt) <= MESSAGE_LIMIT
    assert d.prompt.startswith("Required." if col.required else "Optional.")
    assert col.hint[:20] in d.prompt
    if col.kind == "yesno":  # the list takes Y or N (njcredits also reads Yes, TRUE, 1: the list does not)
        assert "Y or N, from the list" in d.prompt and "Pick Y or N" in d.error
    assert d.type is None or d.error  # a check says what it expects
    assert _column(ws, j).number_format == fmt


def _list_values(book, formula):
    """The values of the range a drop-down's source points at (`Lists!$J$2:$J$9`)."""
    sheet, ref = formula.lstrip("=").split("!")
    assert sheet == LISTS and re.fullmatch(r"\$[A-Z]+\$\d+:\$[A-Z]+\$\d+", ref), formula
    lo_col, lo_row, hi_col, hi_row = range_boundaries(ref.replace("$", ""))
    assert lo_col == hi_col and lo_row == 2, formula
    ws = book[LISTS]
    assert ws.cell(1, lo_col).value  # the list's header names it
    assert ws.cell(hi_row + 1, lo_col).value is None  # the range holds the whole list
    return tuple(ws.cell(r, lo_col).value for r in range(lo_row, hi_row + 1))


LISTED = [(s, c) for s, c in COLUMNS if choices(c)]


@pytest.mark.parametrize("sheet, col", LISTED, ids=[f"{s}-{c.header}" for s, c in LISTED])
def test_each_drop_down_offers_the_columns_codes_whole_from_the_lists_sheet(book, sheet, col):
    letter = get_column_letter([c.header for c in SPECS[sheet].columns].index(col.header) + 1)
    assert _list_values(book, _validation(book[sheet], letter).formula1) == choices(col)


def test_a_code_with_a_comma_is_offered_whole(book):
    col = SPECS["ERG_Residential"].column("Category")
    letter = get_column_letter([c.header for c in SPECS["ERG_Residential"].columns].index("Category") + 1)
    values = _list_values(book, _validation(book["ERG_Residential"], letter).formula1)
    assert "Distressed, Deep Poverty or Highlands" in values and values == col.codes


def _num(text):
    return None if text is None else float(text)


# (sheet, column, validation type, operator, lower, upper): the column's bounds, whole numbers for
# integers (more than 0 is at least 1), Excel's 15 digits on a side without a bound
NUMBER_CHECKS = [
    ("Transfers", "Credit Amount Transferred ($)", "decimal", "greaterThan", 0, None),
    ("Transfers", "Consideration Received ($)", "decimal", "greaterThanOrEqual", 0, None),
    ("BEIP", "New Employees", "whole", "greaterThanOrEqual", 1, None),
    ("BEIP", "Grant Term (years)", "whole", None, 0, 1000),  # None: between, Excel's default
    ("BEIP", "Withholdings Percentage", "decimal", None, 0, 1),  # percents as fractions: 0% to 100%
    ("GrowNJ", "Eligibility Period (years)", "whole", None, 1, 10),
    ("GrowNJ", "Gross Leasable Area (sq ft)", "decimal", "greaterThan", 0, None),
    ("GrowNJ", "Net Benefit ($)", "decimal", None, -(10**15 - 1), 10**15 - 1),  # may be negative
    ("GrowNJ_Compliance", "Tax Period", "whole", None, 1900, 2100),
    ("GrowNJ_Compliance", "Eligibility Period (years)", "whole", None, 1, 10),
    ("BEIP_Conversion", "Accrual Year", "whole", None, -(10**15 - 1), 10**15 - 1),
    ("BEIP_Conversion", "Approval Year", "whole", None, 2008, 2030),  # e.(1) names no bound: the intake accepts 2008 to 2030
]


@pytest.mark.parametrize("sheet, header, kind, operator, lo, hi", NUMBER_CHECKS)
def test_number_columns_are_checked_within_their_bounds(book, sheet, header, kind, operator, lo, hi):
    letter = get_column_letter([c.header for c in SPECS[sheet].columns].index(header) + 1)
    d = _validation(book[sheet], letter)
    assert (d.type, d.operator, _num(d.formula1), _num(d.formula2)) == (kind, operator, lo, hi)


# number_check on bounds no sheet has today: an exclusive minimum with a maximum
@pytest.mark.parametrize(
    "col, expected",
    [
        (
            Column("X", "number", minimum=0, minimum_exclusive=True, maximum=5),
            {"validate": "custom", "value": "=AND(ISNUMBER(C2),C2>0,C2<=5)"},
        ),
        (
            Column("X", "integer", minimum=0, minimum_exclusive=True, maximum=5),
            {"validate": "integer", "criteria": "between", "minimum": 1, "maximum": 5},
        ),
        (Column("X", "percent", maximum=1), {"validate": "decimal", "criteria": "<=", "value": 1}),
    ],
)
def test_number_check_cases(col, expected):
    assert number_check(col, "C2") == expected


def test_dates_accept_every_date_a_cell_can_hold_and_only_warn(book):
    ws = book["Transfers"]
    d = _validation(ws, "G")  # Transfer Date
    # serials 1 (1900-01-01) to 2958465 (9999-12-31); a warning, since njcredits also reads dates typed as text
    assert (d.type, d.operator, d.formula1, d.formula2, d.errorStyle) == ("date", None, "1", "2958465", "warning")


def _instructions(book):
    return [[c.value for c in row] for row in book[INSTRUCTIONS].iter_rows()]


def _example(rows, spec):
    """The worked example of a sheet on the Instructions sheet: the row after its header row."""
    headers = [c.header for c in spec.columns]
    at = [i for i, row in enumerate(rows) if row[: len(headers)] == headers]
    assert len(at) == 1, spec.name
    return dict(zip(headers, rows[at[0] + 1][: len(headers)], strict=True))


def test_instructions_say_the_colours_how_to_fill_each_sheet_and_where_to_drop_the_file(book):
    ws = book[INSTRUCTIONS]
    text = "\n".join(str(v) for row in _instructions(book) for v in row if isinstance(v, str))
    guides = [v for row in _instructions(book) for v in row if isinstance(v, str) and v.startswith("One row is")]
    assert len(guides) == len(SHEET_ORDER)
    for name, guide in zip(SHEET_ORDER, guides, strict=True):  # in the sheets' order
        spec = SPECS[name]
        assert "Required (orange): " + ", ".join(c.header for c in spec.columns if c.required) + "." in guide, name
        assert " and ".join(spec.key) in guide and "unique in the sheet" in guide, name
    assert "Orange header: a required column" in text and "Grey header: an optional column" in text
    assert "the inbox folder your team's njcredits runs on" in text
    # generated text holds no site's path
    assert not re.search(r"(?:[A-Za-z]:\\|\.\./|~/|/(?:home|srv|mnt|data|work|Users|tmp)/|\\\\)", text), text
    key = {
        row[0]: cell.fill.fgColor.rgb
        for row, cell in zip(_instructions(book), ws["A"], strict=False)
        if row and row[0] in ("Required", "Optional")
    }
    assert key == {"Required": _argb(REQUIRED_FILL), "Optional": _argb(OPTIONAL_FILL)}
    # the prose is wrapped in merged cells of sensible width, with room for its lines
    merged = [m for m in ws.merged_cells.ranges if m.min_row > 1]
    assert merged
    for m in merged:
        cell = ws.cell(m.min_row, m.min_col)
        width = sum(_column(ws, c).width for c in range(m.min_col, m.max_col + 1))
        assert cell.alignment.wrap_text and 60 <= width <= 140, (str(m), width)
        assert ws.row_dimensions[m.min_row].height >= 15 * (len(cell.value) // int(width * 1.3) + 1), str(m)


def test_the_worked_examples_are_shown_on_the_instructions_sheet_only(book):
    rows = _instructions(book)
    for name in SHEET_ORDER:
        spec = SPECS[name]
        example, declared = _example(rows, spec), BY_NAME[name].intake.example
        assert set(declared) <= {c.header for c in spec.columns}
        assert all(example[c.header] is not None for c in spec.columns if c.required), name
        for h, v in declared.items():
            shown = example[h].date() if isinstance(example[h], dt.datetime) else example[h]
            assert shown == v, (name, h)
        assert book[name].max_row == 1  # the intake sheet itself stays blank


def test_a_template_filled_with_the_worked_examples_is_valid_and_its_own_sheets_are_never_intake(template, book, tmp_path):
    from click.testing import CliRunner

    from batch.cli import main
    from batch.pipeline import process

    rows = _instructions(book)
    filled = openpyxl.load_workbook(template)
    for name in SHEET_ORDER:
        for j, value in enumerate(_example(rows, SPECS[name]).values(), start=1):
            if value is not None:
                filled[name].cell(2, j, value)
    path = tmp_path / "filled.xlsx"
    filled.save(path)
    for as_of in (dt.date(2026, 11, 30), dt.date(2040, 1, 1)):  # valid whatever the day of the run
        result = process(path, as_of=as_of)
        assert {s.sheet.name: list(s.status) for s in result.intake} == {name: ["OK"] for name in SHEET_ORDER}
        assert {s.sheet.name: s.sheet.routed for s in result.intake} == {name: None for name in SHEET_ORDER}
        others = [(f.Sheet, f.Code, f.Severity) for f in result.findings.itertuples() if f.Sheet not in SHEET_ORDER]
        # never routed (no SHEET_ROUTED_BY_HEADERS or SHEET_NOT_ROUTED, though the Instructions
        # sheet holds every sheet's header row): carried through, with the info note of any other sheet
        assert others == [(INSTRUCTIONS, "UNKNOWN_SHEET", "info"), (LISTS, "UNKNOWN_SHEET", "info")]
        assert result.findings["Sheet"].isin(SHEET_ORDER).sum() == 0  # no finding on any example row
    out = CliRunner().invoke(main, ["validate", str(path), "--as-of", "2026-11-30", "--format", "json"])
    assert out.exit_code == 0, out.output


def _cells(path):
    book = python_calamine.CalamineWorkbook.from_path(str(path))
    return {name: book.get_sheet_by_name(name).to_python() for name in book.sheet_names}


def test_committed_samples_are_current(tmp_path):
    # every sample workbook the programs' sample rows go to, and nothing else in sample_inputs/
    assert sorted(samples.workbooks()) == sorted(p.name for p in samples.SAMPLES.glob("*.xlsx"))
    for name in samples.workbooks():
        fresh = samples.build_workbook(name, tmp_path / name)
        committed = samples.SAMPLES / name
        assert _cells(fresh) == _cells(committed), f"{committed} is stale: run `python tests/samples.py`"


def _readme_counts() -> dict:
    """The table of the README's first section: each program's sample sheet as of 2026-11-30,
    `| sheet | rows | OK | Flagged | Ineligible | Invalid |`."""
    readme = (ROOT / "README.md").read_text()
    counts = {}
    for name in SHEET_ORDER:
        found = re.findall(rf"^\| {re.escape(name)} \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", readme, flags=re.M)
        assert len(found) == 1, f"the README's table of sample counts has no one row for {name}"
        counts[name] = tuple(int(n) for n in found[0])
    return counts


# sheet: (rows, OK, Flagged, Ineligible, Invalid), one for every program
SAMPLE_COUNTS = _readme_counts()


def test_samples_give_the_counts_the_readme_states(tmp_path):
    from click.testing import CliRunner

    from batch.cli import main

    files = len(samples.workbooks())
    for _ in range(2):  # the second run reads the first one's ledger and gives the same result
        result = CliRunner().invoke(main, ["run", str(ROOT / "sample_inputs"), "--out", str(tmp_path), "--as-of", "2026-11-30"])
        assert result.exit_code == 0 and f"{files} processed, 0 skipped, 0 failed" in result.output, result.output
        assert _status_counts(tmp_path) == SAMPLE_COUNTS
    # every finding names its citation, in its own column and where its message gives one
    for path in tmp_path.glob("*.annotated.xlsx"):
        rows = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name("Findings").to_python()
        head = next(i for i, r in enumerate(rows) if "Message" in r)
        message, citation = rows[head].index("Message"), rows[head].index("Citation")
        bare = [r for r in rows[head + 1 :] if not str(r[citation]).strip() or "()" in str(r[message])]
        assert bare == [], f"{path.name}: findings without their citation: {bare[:3]}"


def _status_counts(folder) -> dict:
    counts = {}
    for path in folder.glob("*.annotated.xlsx"):
        book = python_calamine.CalamineWorkbook.from_path(str(path))
        for name in book.sheet_names:
            if name in SAMPLE_COUNTS:
                rows = book.get_sheet_by_name(name).to_python()
                head = next(i for i, r in enumerate(rows) if "Status" in r)
                status = [r[rows[head].index("Status")] for r in rows[head + 1 :] if any(str(v).strip() for v in r)]
                counts[name] = (len(status), *(status.count(s) for s in ("OK", "Flagged", "Ineligible", "Invalid")))
    return counts
