"""The rulebook (batch.workbook.rulebook): the `Rules` sheet of a returned workbook and `njcredits rules`.

Every value of the rules data is a row, with its dates, citation and interpretation; values
read as the column hints write them; the sheet is text only, never a formula."""

from __future__ import annotations

from fractions import Fraction

import openpyxl
import pandas as pd
import pytest
import python_calamine
import xlsxwriter
from click.testing import CliRunner

from batch.cli import main
from batch.programs import BY_NAME, PROGRAMS
from batch.programs._kit.rules import Parameter, load
from batch.workbook import rulebook as rb
from batch.workbook.looks import WRITER_OPTIONS, Formats


def values_in_rules(program) -> int:
    """The values of a program's loaded rules: each dated value of a parameter, each case's, each
    tier; the shared parameters and those of every statute version."""

    def count(param) -> int:
        if isinstance(param, Parameter):
            return len(param.values)
        if isinstance(param, dict):
            return sum(count(p) for p in param.values())
        return len(param)  # a tier table

    rules = load(program.rules)
    groups = [rules.parameters, *rules.versions.values()]
    return sum(count(p) for params in groups for p in params.values())


@pytest.fixture(scope="module")
def book() -> pd.DataFrame:
    return rb.rulebook(PROGRAMS)


def test_the_table_has_the_columns_in_order(book):
    # the columns a reviewer reads, exactly these and in this order
    assert list(book.columns) == [
        "Sheet",
        "Program",
        "Rules version",
        "Parameter",
        "Description",
        "Value",
        "In force from",
        "In force until",
        "Citation",
        "Interpretation",
    ]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_every_value_of_the_rules_data_is_a_row(book, program):
    # each program: as many rows as its loaded rules have values (dated values, cases, tiers and
    # every statute version counted), labelled with its sheet, name and rules version
    rows = book[book["Sheet"] == program.name]
    assert len(rows) == values_in_rules(program) > 0
    assert set(rows["Program"]) == {program.schema.program}
    assert set(rows["Rules version"]) == {load(program.rules).label}
    # every parameter key of the rules data appears
    rules = load(program.rules)
    keys = set(rules.parameters) | {k for params in rules.versions.values() for k in params}
    assert set(rows["Parameter"]) == keys


@pytest.mark.parametrize(
    "sheets",
    [
        ["Transfers"],  # a workbook with one program: its rows only
        ["BEIP", "GrowNJ"],  # two programs: theirs only, in the order given
    ],
)
def test_only_the_programs_given_are_written(sheets):
    table = rb.rulebook([BY_NAME[s] for s in sheets])
    assert list(dict.fromkeys(table["Sheet"])) == sheets
    assert len(table) == sum(values_in_rules(BY_NAME[s]) for s in sheets)


@pytest.mark.parametrize(
    "column",
    ["Sheet", "Program", "Rules version", "Parameter", "Description", "Value", "Citation"],
)
def test_no_row_lacks_what_a_reviewer_checks(book, column):
    # every value has its description and citation in the rules data (nothing is made up here)
    assert (book[column].str.strip() != "").all(), book.loc[book[column].str.strip() == "", ["Sheet", "Parameter"]]


def rows_of(book, sheet, parameter, picked=None):
    rows = book[(book["Sheet"] == sheet) & (book["Parameter"] == parameter)]
    if picked is not None:
        rows = rows[rows["Value"].str.split("\n").str[-1] == picked]
    return rows


@pytest.mark.parametrize(
    "sheet, parameter, picked, expected",
    [
        # the Transfers minimum for Urban Transit Hub: $100,000 until P.L.2014, c.63 took effect,
        # $25,000 from 2014-10-24 (C.34:1B-209.1)
        (
            "Transfers",
            "minimum_transfer",
            "Program: Urban Transit Hub",
            [
                ("$100,000", "", "2014-10-23", "C.34:1B-209.1"),
                ("$25,000", "2014-10-24", "", "C.34:1B-209.1"),
            ],
        ),
        # the one smaller transfer per tax period the earlier Urban Transit Hub text allowed
        (
            "Transfers",
            "small_transfers_per_tax_period",
            "Program: Urban Transit Hub",
            [("1", "", "2014-10-23", "C.34:1B-209.1"), ("0", "2014-10-24", "", "C.34:1B-209.1")],
        ),
        # BEIP's average grant limit: none before 2003-07-01, $50,000 from then
        (
            "BEIP",
            "max_average_grant",
            None,
            [("none", "", "2003-06-30", "C.34:1B-129 a."), ("$50,000", "2003-07-01", "", "C.34:1B-129 a.")],
        ),
        # a single value dated by its law: in force from that day, with no end
        ("ERG_Residential", "application_deadline", None, [("2016-07-01", "2014-10-24", "", "C.52:27D-489f b.(2)(e)")]),
        # an undated value: no dates
        ("Transfers", "minimum_transfer", "Program: Grow NJ", [("$25,000", "", "", "C.34:1B-248")]),
    ],
)
def test_dated_values_give_one_row_each_oldest_first(book, sheet, parameter, picked, expected):
    rows = rows_of(book, sheet, parameter, picked)
    got = [
        (v.split("\n")[0], f, u, c) for v, f, u, c in rows[["Value", "In force from", "In force until", "Citation"]].itertuples(index=False)
    ]
    assert got == expected


def test_a_dated_value_carries_its_interpretation(book):
    # the Urban Transit Hub minimum's interpretation (when the earlier text applies) is on both rows
    rows = rows_of(book, "Transfers", "minimum_transfer", "Program: Urban Transit Hub")
    assert len(rows) == 2
    assert all("2014-10-24" in text for text in rows["Interpretation"])
    # and a value without one has a blank Interpretation
    assert set(rows_of(book, "Transfers", "minimum_transfer", "Program: Grow NJ")["Interpretation"]) == {""}


@pytest.mark.parametrize(
    "sheet, parameter, value, citation",
    [
        # a tier of the 2017 text: its value, the version and its condition, its own citation
        (
            "GrowNJ",
            "base_amount",
            "$5,000\nStatute Version 2017; tier 2 of 6: base Create Zone; area: Create Zone; "
            "all flags Y: Targeted Industry, Doctoral University Collaboration",
            "C.34:1B-246 b.(1)(b)",
        ),
        # a parameter the 2017 text states anew, and the 2014 text's value of it ("null": none)
        ("GrowNJ", "vacant_building_min_sq_ft", "1,000,000\nStatute Version 2017", "C.34:1B-246 c.(17)"),
        ("GrowNJ", "vacant_building_min_sq_ft", "none\nStatute Version 2014", "C.34:1B-246 c."),
        # a tier's money figure (min_capex, converted to cents when loaded) reads as money
        (
            "GrowNJ",
            "mrera_tiers",
            "$5,000,000\nStatute Version 2014; tier 2 of 5: MRERA (d); min jobs: 150; min capex: $20,000,000",
            "C.34:1B-246 d. last paragraph (d)",
        ),
        # a share that has no exact decimal is given as its fraction too
        ("GrowNJ", "reduced_minimum_capex_share", "2/3 (66.67%)", "C.34:1B-244 b. last paragraph"),
        # a case picked by a column other than Program
        ("ERG_Residential", "pledge_share", "85%\nGrowth Zone: Y", "C.52:27D-489f b.(1)"),
        # a schedule (a list of shares), item by item
        (
            "GSGZ_Property",
            "development_entity_schedule",
            "0%, 0%, 0%, 0%, 0%, 0%, 0%, 0%, 0%, 0%, 10%, 20%, 30%, 40%, 50%, 60%, 70%, 80%, 90%, 100%",
            "C.52:27D-489s c., c.(1), c.(2), c.(3), c.(4), c.(5), c.(6), c.(7), c.(8), c.(9), c.(10)",
        ),
    ],
)
def test_known_rows_read_as_the_rules_say(book, sheet, parameter, value, citation):
    rows = rows_of(book, sheet, parameter)
    assert ((rows["Value"] == value) & (rows["Citation"] == citation)).sum() == 1, rows[["Value", "Citation"]].to_dict("records")


def test_a_tier_carries_its_own_interpretation(book):
    # the 2017 Create Zone tier that takes the Priority base says why, on its row only
    rows = rows_of(book, "GrowNJ", "base_amount")
    said = rows[rows["Interpretation"] != ""]
    assert len(said) == 1
    assert "tier 3 of 6: base Create Zone as Priority" in said["Value"].iloc[0]
    assert "Priority base" in said["Interpretation"].iloc[0]


@pytest.mark.parametrize(
    "unit, value, text",
    [
        ("USD", 2_500_000, "$25,000"),  # cents -> whole dollars, as the column hints write money
        ("USD", 2_500_050, "$25,000.50"),  # cents kept when there are some
        ("ratio", Fraction(3, 4), "75%"),  # a share as a percent
        ("ratio", Fraction(3, 40), "7.5%"),  # a decimal percent
        ("ratio", Fraction(2, 3), "2/3 (66.67%)"),  # no exact decimal: the fraction too
        ("date", pd.Timestamp("2014-10-24"), "2014-10-24"),  # ISO date
        ("years", 10, "10 years"),  # a count with its unit
        ("years", 1, "1 year"),  # singular
        ("years", [11, 20], "11, 20"),  # a first and last year
        ("year", 2007, "2007"),  # a year never gets a thousands separator
        ("count", 1_000_000, "1,000,000"),  # a count does
        ("flag", True, "Yes"),
        ("flag", False, "No"),
        ("list", ["Atlantic", "Cape May"], "Atlantic, Cape May"),
        ("USD", None, "none"),  # the rules data's null: no value in that text
        ("month-day", "12-31", "12-31"),
    ],
)
def test_values_read_with_their_unit(unit, value, text):
    assert rb.value_text(unit, value) == text


# --- the written sheet ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("rules") / "out"
    result = CliRunner().invoke(main, ["rules", "--out", str(out)])
    return out, result


def test_the_rules_command_writes_the_rulebook(written, book):
    out, result = written
    # exit 0, the path said, the folder made
    assert result.exit_code == 0, result.output
    path = out / "njcredits-rules.xlsx"
    assert str(path) in result.output
    # python-calamine reads it: one Rules sheet, a title, the header row, then the rulebook's rows
    wb = python_calamine.CalamineWorkbook.from_path(str(path))
    assert wb.sheet_names == ["Rules"]
    rows = wb.get_sheet_by_name("Rules").to_python()
    assert rows[0][0]
    assert rows[1] == rb.COLUMNS
    assert len(rows) - 2 == len(book)
    assert [list(r) for r in rows[2:]] == book.values.tolist()


def test_the_rules_command_defaults_to_the_current_folder(tmp_path, monkeypatch):
    # no --out: njcredits-rules.xlsx in the folder it runs in
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "njcredits-rules.xlsx").is_file()


def test_no_cell_of_the_rulebook_is_a_formula(written):
    out, _ = written
    ws = openpyxl.load_workbook(out / "njcredits-rules.xlsx")["Rules"]
    kinds = {cell.data_type for row in ws.iter_rows() for cell in row if cell.value is not None}
    assert kinds == {"s"}


def wrapped(ws, letter: str) -> bool:
    """Every written cell of a data column wraps."""
    cells = [c for c in ws[letter][2:] if c.value is not None]
    return bool(cells) and all(c.alignment.wrap_text for c in cells)


LAYOUT = {
    # the title and header rows stay in view, the header printed on every page
    "frozen header": (lambda ws: ws.freeze_panes, "A3"),
    "printed header": (lambda ws: ws.print_title_rows, "$2:$2"),
    # printed landscape, one page wide (fitToWidth 1 is the default, so left out), as long as it takes
    "landscape": (lambda ws: ws.page_setup.orientation, "landscape"),
    "one page wide": (
        lambda ws: (ws.sheet_properties.pageSetUpPr.fitToPage, ws.page_setup.fitToWidth or 1, ws.page_setup.fitToHeight),
        (True, 1, 0),
    ),
    # the header bold on grey, as write_table's; a filter on it
    "bold header": (lambda ws: [c.font.b for c in ws[2]], [True] * 10),
    "grey header": (lambda ws: {c.fill.fgColor.rgb for c in ws[2]}, {"FFD9D9D9"}),
    "filter": (lambda ws: ws.auto_filter.ref.split(":")[0], "A2"),
    # the long texts wrap; the short ones do not
    "Rules version wraps": (lambda ws: wrapped(ws, "C"), True),
    "Description wraps": (lambda ws: wrapped(ws, "E"), True),
    "Value wraps": (lambda ws: wrapped(ws, "F"), True),
    "Citation wraps": (lambda ws: wrapped(ws, "I"), True),
    "Interpretation wraps": (lambda ws: wrapped(ws, "J"), True),
    "Sheet does not wrap": (lambda ws: any(c.alignment.wrap_text for c in ws["A"][2:]), False),
    # columns sized to their content, within bounds
    "Sheet width": (lambda ws: 10 <= ws.column_dimensions["A"].width <= 25, True),
    "Description width": (lambda ws: ws.column_dimensions["E"].width <= rb.WRAPPED["Description"] + 1, True),
    # a row of wrapped text is as tall as it needs (some rows are more than one line)
    "tall rows": (lambda ws: any((ws.row_dimensions[r].height or 0) > 15 for r in range(3, ws.max_row + 1)), True),
}


@pytest.mark.parametrize("what", LAYOUT)
def test_the_sheet_is_laid_out_for_a_reviewer(written, what):
    out, _ = written
    ws = openpyxl.load_workbook(out / "njcredits-rules.xlsx")["Rules"]
    check, expected = LAYOUT[what]
    assert check(ws) == expected


FORMULA_LIKE = ["=SUM(A1:A2)", '=HYPERLINK("http://example.com","x")', "+1", "-1", "@SUM(A1)", "http://example.com"]


@pytest.mark.parametrize("text", FORMULA_LIKE)
@pytest.mark.parametrize("column", ["Description", "Value", "Interpretation", "Parameter"])
def test_text_that_looks_like_a_formula_stays_text(tmp_path, monkeypatch, text, column):
    # rules text that starts like a formula (or is a link) is written as that text, in every column;
    # even in a workbook left at xlsxwriter's defaults (strings to formulas and links): write_string
    table = rb.rulebook([BY_NAME["Transfers"]]).head(3).copy()
    table[column] = text
    monkeypatch.setattr(rb, "_text_rows", lambda programs: list(table.itertuples(index=False, name=None)))
    path = tmp_path / "f.xlsx"
    wb = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    rb._cached_layout.cache_clear()  # the sheet laid out from these rows, not from the rules
    try:
        rb.write_rules_sheet(wb, Formats(wb), [BY_NAME["Transfers"]])
    finally:
        rb._cached_layout.cache_clear()  # and never these rows for a later sheet
    wb.close()
    ws = openpyxl.load_workbook(path)["Rules"]
    j = rb.COLUMNS.index(column) + 1
    cells = [ws.cell(row=r, column=j) for r in range(3, 6)]
    assert [(c.value, c.data_type) for c in cells] == [(text, "s")] * 3
    assert all(c.data_type != "f" for row in ws.iter_rows() for c in row)
    assert not ws._hyperlinks


def test_the_sheet_takes_the_name_it_is_given(tmp_path):
    # a returned workbook whose user already has a `Rules` sheet gets `Rules (njcredits)`
    path = tmp_path / "n.xlsx"
    wb = xlsxwriter.Workbook(str(path), WRITER_OPTIONS)
    wb.add_worksheet("Rules")
    rb.write_rules_sheet(wb, Formats(wb), [BY_NAME["BRRAP"]], "Rules (njcredits)")
    wb.close()
    book = python_calamine.CalamineWorkbook.from_path(str(path))
    assert book.sheet_names == ["Rules", "Rules (njcredits)"]
    rows = book.get_sheet_by_name("Rules (njcredits)").to_python()
    assert rows[0][0] == rb.TITLE
    assert len(rows) - 2 == values_in_rules(BY_NAME["BRRAP"])


def test_a_returned_workbook_has_the_rules_of_its_programs(tmp_path):
    """The Rules sheet of a returned workbook lists each parameter of the programs present (the
    BEIP sample holds BEIP, BRRAP and ERG_Residential sheets), each with its citation."""
    import datetime as dt
    from pathlib import Path

    from batch.pipeline import process
    from batch.programs import PROGRAMS
    from batch.workbook.writing import write

    sample = Path(__file__).resolve().parents[1] / "sample_inputs" / "beip-brrap-erg-2026-11.xlsx"
    result = process(sample, as_of=dt.date(2026, 11, 30))
    out = write(result, tmp_path / "beip.annotated.xlsx")
    present = [m for m in PROGRAMS if any(r.program is m for r in result.intake)]
    expected = rb.rulebook(present)
    grid = python_calamine.CalamineWorkbook.from_path(str(out)).get_sheet_by_name("Rules").to_python()
    header = next(i for i, r in enumerate(grid) if r[: len(expected.columns)] == list(expected.columns))
    rows = [r for r in grid[header + 1 :] if any(v != "" for v in r)]
    assert len(rows) == len(expected) > 0
    assert {r[0] for r in rows} == {m.name for m in present} and all(r[list(expected.columns).index("Citation")] for r in rows)


# --- the Rules sheet written once in a process ------------------------------------------------


def _tool_book(path, indexed: tuple[str, ...], keep: bool):
    """A workbook like the tool's (constant memory), the formats named in `indexed` given their
    style index first, in that order, then the Transfers Rules sheet; returns its parts once closed,
    the Rules part settled, and the RulesPart."""
    import datetime
    import zipfile

    from batch.workbook.xlsxwriter_private import parts_in_memory, xf_index

    wb = xlsxwriter.Workbook(str(path), WRITER_OPTIONS)
    parts_in_memory(wb)
    wb.set_properties({"created": datetime.datetime(2026, 11, 30)})  # its properties' date, not the second it is written
    fmts = Formats(wb)
    wb.add_worksheet("Findings").write_string(0, 0, "before")
    looks = {"wrap": dict(wrap=True), "top": dict(top=True), "title": dict(title=True), "header": dict(header=rb.looks.HEADER_BG)}
    for name in indexed:
        xf_index(fmts.get(**looks[name]))
    part = rb.write_rules_sheet(wb, fmts, [BY_NAME["Transfers"]], keep=keep)
    wb.close()
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    parts[part.name] = part.settle(parts[part.name])
    return parts, part


EVERY_FORMAT = ("title", "header", "wrap", "top")


@pytest.fixture
def no_rules_written(monkeypatch):
    monkeypatch.setattr(rb, "_WRITTEN", {})


@pytest.mark.parametrize(
    "order",
    [EVERY_FORMAT, ("top", "wrap", "header", "title")],  # the style indices 1-4 (xlsxwriter's default is 0) in two orders
)
def test_a_rules_sheet_written_again_in_a_process_is_the_part_written_the_first_time(tmp_path, no_rules_written, order):
    # the first workbook writes the sheet's cells and keeps its part; the second writes only the
    # sheet's settings, and its part is the one kept; both are, part for part, the workbook written
    # in full without keeping anything
    first, kept = _tool_book(tmp_path / "1.xlsx", order, keep=True)
    again, reused = _tool_book(tmp_path / "2.xlsx", order, keep=True)
    whole, _ = _tool_book(tmp_path / "3.xlsx", order, keep=False)
    assert kept.known is None and kept.key is not None and reused.known is not None and reused.key == kept.key
    assert reused.name == "xl/worksheets/sheet2.xml"
    assert first == again == whole
    # the second wrote no cell of the sheet (its file as xlsxwriter closed it): the kept part holds them
    assert python_calamine.CalamineWorkbook.from_path(str(tmp_path / "2.xlsx")).get_sheet_by_name("Rules").to_python() == []
    assert again[reused.name].count(b"<row ") == 2 + values_in_rules(BY_NAME["Transfers"])  # the title, the header, a row a value


def test_a_rules_sheet_whose_formats_have_other_style_indices_is_written_anew(tmp_path, no_rules_written):
    # the same formats at other indices name other styles in the cells: another key, the cells written
    _tool_book(tmp_path / "1.xlsx", EVERY_FORMAT, keep=True)
    again, part = _tool_book(tmp_path / "2.xlsx", ("top", "wrap", "header", "title"), keep=True)
    whole, _ = _tool_book(tmp_path / "3.xlsx", ("top", "wrap", "header", "title"), keep=False)
    assert part.known is None and again == whole
    assert len(rb._WRITTEN) == 2


@pytest.mark.parametrize("indexed", [(), ("title", "header", "wrap")])
def test_a_rules_sheet_whose_formats_its_cells_would_index_is_never_kept(tmp_path, no_rules_written, indexed):
    # a format first used by the sheet's own cells gets its index there: the cells are always written
    for n in range(2):
        parts, part = _tool_book(tmp_path / f"{n}.xlsx", indexed, keep=True)
        whole, _ = _tool_book(tmp_path / f"whole-{n}.xlsx", indexed, keep=False)
        assert part.key is None and part.known is None and parts == whole
    assert rb._WRITTEN == {}


def test_a_returned_workbook_with_the_rules_sheet_kept_from_the_one_before_is_the_same(tmp_path, no_rules_written):
    # a worker returns workbook after workbook: the second returned with the Rules part the first
    # kept is, part for part, the first
    import datetime as dt
    import zipfile
    from pathlib import Path

    from batch.pipeline import process
    from batch.workbook.writing import write

    sample = Path(__file__).resolve().parents[1] / "sample_inputs" / "transfers-2026-11.xlsx"
    result = process(sample, as_of=dt.date(2026, 11, 30))
    outputs = [write(result, tmp_path / f"{n}.annotated.xlsx") for n in range(2)]
    assert len(rb._WRITTEN) == 1
    first, second = ({n: z.read(n) for n in z.namelist()} for z in map(zipfile.ZipFile, outputs))
    assert first == second
