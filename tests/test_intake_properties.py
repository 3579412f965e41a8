"""Property-based: intake workbooks made the way analysts make them (README.md, "The intake workbook").

A composite strategy builds a program's sheet from valid sample records (`tests/samples.py`) and
then applies the habits the intake must absorb: headers spelled in any accepted way, columns in
any order, title lines above the header, extra columns of the team's own, totals and blank rows
between the records, and a sheet named as the team pleases. Each property compares the run with
the run of the clean sheet (the program's own name, its headers as the template spells them, in
the template's order, nothing else): the records' Status, findings and computed values are the same.
"""

from __future__ import annotations

import datetime as dt
import re
import string
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
import python_calamine
import samples
from conftest import write_workbook
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xlsxwriter.utility import xl_col_to_name

from batch.pipeline import process
from batch.programs import PROGRAMS
from batch.workbook.reading import NEVER_ROUTED, TOOL_SHEETS, sheet_key
from batch.workbook.writing import write
from validators.columns import normalize_header

AS_OF = dt.date(2026, 11, 30)
MODULES = {m.name: m for m in PROGRAMS}
SPECS = {name: m.schema for name, m in MODULES.items()}
INTAKE_KEYS = {sheet_key(name) for name in SPECS}
FIELD_KEYS = {c.key for spec in SPECS.values() for c in spec.columns}
TOOL_KEYS = frozenset().union(*(spec.tool_keys for spec in SPECS.values()))
STATUSES = ("OK", "Flagged", "Ineligible", "Invalid")


def _pool(headers: list[str], rows: list) -> tuple[list[str], list[list]]:
    """The sample's columns that are fields (Transfers' `Notes` is not), blanks as empty cells."""
    keep = [j for j, h in enumerate(headers) if h != "Notes"]
    return [headers[j] for j in keep], [[None if row[j] == "" else row[j] for j in keep] for row in rows]


# Valid records (some Flagged, Ineligible or Invalid by the program's rules, as a month's intake is)
POOLS = {
    "Transfers": _pool(*samples.SHEETS["Transfers"]),
    "BEIP": _pool(*samples.SHEETS["BEIP"]),
    "Emerge": _pool(*samples.SHEETS["Emerge"]),
}
for _name, (_headers, _rows) in POOLS.items():  # the pools are the programs' own columns, every required one among them
    _spec = SPECS[_name]
    assert set(_headers) <= {c.header for c in _spec.columns}, _name
    assert {c.header for c in _spec.columns if c.required} <= set(_headers), _name


# --- header spellings ----------------------------------------------------------------------------

UNIT = re.compile(r"^(?P<base>.*?)\s*(?P<unit>\([^()]*\))?$")
OTHER_UNITS = {"($)": ["($)", "(USD)", "(US $)", "( $ )", "(in dollars)", "($, whole)"], "(sq ft)": ["(sq ft)", "(sq. ft.)", "(SF)"]}
ADDED_UNITS = {"date": ["(mm/dd/yyyy)", "(date)"], "percent": ["(%)", "(pct)"], "yesno": ["(Y/N)"], "integer": ["(#)", "(count)"]}
ABBREVIATED = {
    "Percentage": ["%", "Pct", "Pct.", "PCT", "pct", "Percent", "percentage"],
    "Percent": ["%", "Pct", "Pct.", "percent"],
    "Full-Time": ["FT", "ft", "Ft", "Full Time", "FullTime", "Full_Time", "full-time", "FULL TIME"],
    "Amount": ["Amt", "Amt.", "AMT", "amount"],
}
PUNCTUATION = ["", "", ".", ":", "*", "?"]
SEPARATORS = [" ", " ", "  ", "_", "__", " _ ", "\n", "\u00a0", "-", "/"]


def _recase(draw, word: str) -> str:
    how = draw(st.sampled_from(["as is", "as is", "lower", "upper", "title", "random"]))
    if how == "random":
        return "".join(ch.upper() if draw(st.booleans()) else ch.lower() for ch in word)
    return {"as is": word, "lower": word.lower(), "upper": word.upper(), "title": word.title()}[how]


@st.composite
def spellings(draw, header: str, kind: str, run_together: bool = False) -> str:
    """One accepted spelling of `header`: case changed, spaces doubled or replaced by underscores,
    line breaks or punctuation, punctuation dropped or added, the trailing unit kept, dropped or
    replaced, and the abbreviations %/Pct, FT, Amt and a trailing # for ID. With `run_together`,
    the words written without spaces, as a database export names its columns (`CreditAmountTransferred`)."""
    m = UNIT.match(header)
    base, unit = m["base"], m["unit"]
    words = base.split(" ")
    if run_together:
        text = "".join(_recase(draw, w.replace("-", "")) for w in words)
        return text + (draw(st.sampled_from(["", "", " ", "_"])) + unit if unit and draw(st.booleans()) else "")
    spelled = []
    for i, w in enumerate(words):
        if w == "ID" and i == len(words) - 1 and draw(st.booleans()):
            w = "#"
        elif w in ABBREVIATED and draw(st.booleans()):
            w = draw(st.sampled_from(ABBREVIATED[w]))
        elif "-" in w and draw(st.booleans()):  # punctuation dropped: Full-Time -> FullTime / Full Time
            w = w.replace("-", draw(st.sampled_from(["", " ", "_"])))
        spelled.append(_recase(draw, w))
    text = spelled[0]
    for i in range(1, len(spelled)):
        text += draw(st.sampled_from(SEPARATORS)) + spelled[i]
    if not text.endswith("#"):
        text += draw(st.sampled_from(PUNCTUATION))
    if unit is not None:
        unit = draw(st.sampled_from([unit, None, *OTHER_UNITS.get(unit, [unit.upper()])]))
    elif kind in ADDED_UNITS and draw(st.booleans()):
        unit = draw(st.sampled_from(ADDED_UNITS[kind]))
    if unit is not None:
        text += draw(st.sampled_from(["", " ", "  ", "\n"])) + unit
    return draw(st.sampled_from(["", "", " ", "  "])) + text + draw(st.sampled_from(["", "", " ", "\n"]))


# --- extra columns, totals rows, sheet names -----------------------------------------------------

VOCABULARY = ["Notes", "Analyst", "Comment", "Reviewed by", "Batch", "Region", "Fiscal Qtr", "Source File", "Internal Ref"]
VOCABULARY += ["Checked", "Memo", "Follow up", "Misc", "Tab", "Q4", "Initials", "Link", "Color", "Priority flag", "Sort"]
NAME_CHARS = string.ascii_letters + string.digits + " _-.()&/"


def _far_from_every_field(name: str) -> bool:
    """Not a field, not a column the tool writes, and like no field of any program ("did you mean")."""
    if not name.strip():
        return False
    key = normalize_header(name)
    return key not in FIELD_KEYS and key not in TOOL_KEYS and not any(spec.closest(name) for spec in SPECS.values())


extra_names = st.one_of(
    st.sampled_from(VOCABULARY),
    st.builds(lambda w, n: f"{w} {n}", st.sampled_from(VOCABULARY), st.integers(1, 12)),
    st.text(alphabet=NAME_CHARS, min_size=1, max_size=14),
).filter(_far_from_every_field)

extra_cells = st.one_of(
    st.none(),
    st.none(),
    st.text(alphabet=string.ascii_letters + string.digits + " .,$%#-=+@'", max_size=10),
    st.sampled_from(["=SUM(A1:A9)", "Total", "Y", "N/A", "$1,250,000", "35%", "see email", "3/31/2016"]),
    st.integers(min_value=-(10**9), max_value=10**12),
    st.floats(min_value=-1e9, max_value=1e12, allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2040, 12, 31)),
)

TOTAL_WORDS = ["Total", "TOTALS", "Grand Total", "sum", "total", "Totals", "GRAND TOTAL", "Sum", "SUM", " Total ", "Grand total:"]

MONTHS = ["Jan", "Feb", "Nov", "Dec", "November", "2026-11", "Q4"]
OTHER_SHEET_NAMES = st.one_of(
    st.builds(lambda p, m: f"{p} ({m})", st.sampled_from(sorted(SPECS)), st.sampled_from(MONTHS)),
    st.builds(lambda m: f"export_{m.lower()}", st.sampled_from(MONTHS)),
    st.builds(lambda p, y: f"{p} {y}", st.sampled_from(sorted(SPECS)), st.integers(2015, 2030)),
    st.sampled_from(["Sheet1", "Data", "Copy of intake", "Intake", "Register", "Nov intake", "FY26 Q4", "Transfers-Nov"]),
    st.text(alphabet=string.ascii_letters + string.digits + " _-()&.,", min_size=1, max_size=31),
)


def _other_name(name: str) -> bool:
    """A legal sheet name that is no intake sheet's, no template sheet's and no tool sheet's."""
    name_ok = name == name.strip() and name and not name.startswith("'") and not name.endswith("'")
    reserved = {s.casefold() for s in TOOL_SHEETS} | {"history"}
    return bool(name_ok) and sheet_key(name) not in INTAKE_KEYS | set(NEVER_ROUTED) and name.casefold() not in reserved


@st.composite
def proper_names(draw, program: str) -> str:
    """The program's sheet name as a team types it: any case, spaces or underscores between its parts."""
    letters = list(_recase(draw, program.replace("_", "")))
    if len(letters) > 2 and draw(st.booleans()):
        at = draw(st.integers(1, len(letters) - 1))
        letters.insert(at, draw(st.sampled_from([" ", "_", "-"])))
    return "".join(letters)


# --- the workbook --------------------------------------------------------------------------------


@dataclass
class Intake:
    program: str
    sheet: str  # the sheet's name
    picks: tuple[int, ...]  # the pool records, in order
    grid: list[list]  # the sheet's cells
    header_at: int  # 0-based grid row of the header
    fields: list[str | None]  # per grid column: the field it holds, None for an extra column
    kinds: list[str]  # per grid row below the header: "record", "totals" or "blank"

    @property
    def renamed(self) -> bool:
        return sheet_key(self.sheet) != sheet_key(self.program)

    @property
    def extras(self) -> list[int]:
        return [j for j, f in enumerate(self.fields) if f is None]

    def excel_rows(self, kind: str) -> list[int]:
        return [self.header_at + 2 + i for i, k in enumerate(self.kinds) if k == kind]


@st.composite
def intake_workbooks(draw, spell=False, extras=False, totals=False, rename=False, among=tuple(POOLS)):
    """An intake sheet as an analyst makes it: valid sample records of one program under headers
    in any order, below 0 to 2 title lines; with `spell`, each header spelled in a random accepted
    way; with `extras`, 1 to 3 columns of the team's own (names like no field) at random places;
    with `totals`, 1 to 3 totals rows (and blank rows) between the records; with `rename`, the
    sheet named as the team pleases (else the program's name in any case)."""
    program = draw(st.sampled_from(among))
    spec = SPECS[program]
    headers, pool = POOLS[program]
    picks = tuple(draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=6)))
    order = draw(st.permutations(range(len(headers))))
    fields = [headers[j] for j in order]
    written = [draw(spellings(h, spec.column(h).kind, spell == "run together")) if spell else h for h in fields]
    records = [[pool[p][j] for j in order] for p in picks]
    if extras:
        for name in draw(st.lists(extra_names, min_size=1, max_size=3, unique_by=str.casefold)):
            at = draw(st.integers(0, len(fields)))
            fields.insert(at, None)
            written.insert(at, name)
            for row in records:
                row.insert(at, draw(extra_cells))
    width = len(fields)
    kinds = ["record"] * len(records)
    body = [list(r) for r in records]
    if totals:
        for _ in range(draw(st.integers(1, 3))):
            word = draw(st.sampled_from(TOTAL_WORDS))
            row = []
            for j, f in enumerate(fields):
                column = spec.column(f) if f else None
                if column is not None and column.record_id:
                    row.append(word)
                elif column is not None and column.kind == "money" and draw(st.booleans()):
                    row.append(sum(r[j] for r in records if isinstance(r[j], int | float)))
                elif column is None:
                    row.append(draw(extra_cells))
                else:
                    row.append(None)
            at = draw(st.integers(0, len(body)))
            body.insert(at, row)
            kinds.insert(at, "totals")
        for _ in range(draw(st.integers(0, 2))):
            at = draw(st.integers(0, len(body)))
            body.insert(at, [None] * width)
            kinds.insert(at, "blank")
    titles = [[f"{spec.program}: November 2026 intake"], ["as of", AS_OF], ["Prepared by the incentives finance team"]]
    preamble = titles[: draw(st.integers(0, 2))]
    name = draw(OTHER_SHEET_NAMES.filter(_other_name)) if rename else draw(proper_names(program))
    return Intake(program, name, picks, [*preamble, written, *body], len(preamble), fields, kinds)


# --- running it ----------------------------------------------------------------------------------


@dataclass
class Run:
    result: object  # batch.pipeline.Result
    before: list[list]  # the input sheet as read back (python-calamine)
    after: list[list] | None  # the returned sheet, when written
    run_sheet: list[list] | None  # the returned `Run` sheet, when written


def run(intake: Intake, returned: bool = False) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        src = write_workbook(Path(tmp) / "intake.xlsx", {intake.sheet: intake.grid})
        result = process(src, as_of=AS_OF)
        before = python_calamine.CalamineWorkbook.from_path(str(src)).get_sheet_by_name(intake.sheet).to_python(skip_empty_area=False)
        after = run_sheet = None
        if returned:
            out = python_calamine.CalamineWorkbook.from_path(str(write(result, Path(tmp) / "intake.annotated.xlsx")))
            after = out.get_sheet_by_name(intake.sheet).to_python(skip_empty_area=False)
            run_sheet = out.get_sheet_by_name("Run").to_python(skip_empty_area=False)
    return Run(result, before, after, run_sheet)


@cache
def clean_run(program: str, picks: tuple[int, ...]):
    """The same records in the program's own sheet, headers as the template spells them, in its order."""
    headers, pool = POOLS[program]
    with tempfile.TemporaryDirectory() as tmp:
        src = write_workbook(Path(tmp) / "clean.xlsx", {program: [headers, *[pool[p] for p in picks]]})
        result = process(src, as_of=AS_OF)
    (res,) = result.intake
    assert res.totals == 0 and res.sheet.routed is None
    assert "UNKNOWN_COLUMN" not in result.findings["Code"].tolist()
    return result


def clean(program: str, picks: tuple[int, ...]):
    return clean_run(program, picks).intake[0]


def codes(row_findings) -> list[list[str]]:
    """Each row's codes, in any order (the order found may follow the order of the columns)."""
    return [sorted(c for c in s.split("; ") if c) for s in row_findings]


def sheet_result(intake: Intake, result):
    (res,) = result.intake
    assert res.sheet.name == intake.sheet
    assert res.sheet.spec.name == intake.program, (intake.sheet, res.sheet.spec.name)
    return res


def assert_records_as_clean(intake: Intake, res, also: set[str] = frozenset()) -> None:
    """The records' Status, codes and computed values are those of the clean sheet; `also`: the
    codes a record may have besides (none so far: sheet findings such as UNKNOWN_COLUMN are the sheet's)."""
    base = clean(intake.program, intake.picks)
    records = (res.status != "").to_numpy()
    assert res.status[records].tolist() == base.status.tolist()
    got = [[c for c in cs if c not in also] for cs in codes(res.row_findings[records])]
    assert got == codes(base.row_findings)
    pd.testing.assert_frame_equal(
        res.computed[records].reset_index(drop=True), base.computed.reset_index(drop=True), check_dtype=False, check_exact=True
    )
    assert res.counts == base.counts


def sheet_codes(result, sheet: str) -> list[str]:
    return result.findings.loc[result.findings["Sheet"] == sheet, "Code"].tolist()


# on one test worker together: the clean runs their examples are compared with (`clean_run`) are made
# once for all of them
pytestmark = pytest.mark.xdist_group("intake-properties")
SETTINGS = settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- properties ----------------------------------------------------------------------------------


@SETTINGS
@given(intake_workbooks(spell=True))
def test_every_accepted_spelling_of_a_header_names_its_field(intake):
    result = run(intake).result
    res = sheet_result(intake, result)
    found = sheet_codes(result, intake.sheet)
    assert "MISSING_COLUMN" not in found and "UNKNOWN_COLUMN" not in found and "DUPLICATE_COLUMN" not in found, result.findings[
        ["Code", "Column", "Message"]
    ].values.tolist()
    written = intake.grid[intake.header_at]
    assert res.sheet.fields == intake.fields, [(w, f) for w, f in zip(written, res.sheet.fields, strict=False)]
    for header, field in zip(written, intake.fields, strict=True):
        assert normalize_header(header) == normalize_header(field), (header, field)
    assert_records_as_clean(intake, res)


@pytest.mark.parametrize("program", ["Transfers", "BEIP", "Emerge"])
@SETTINGS
@given(data=st.data())
def test_headers_written_without_spaces_name_their_fields(program, data):
    """Headers match ignoring spaces: `CreditAmountTransferred ($)`, `GrantID`, `WithholdingsPercentage`."""
    intake = data.draw(intake_workbooks(spell="run together", among=(program,)), label="intake")
    result = run(intake).result
    res = sheet_result(intake, result)
    found = sheet_codes(result, intake.sheet)
    written = intake.grid[intake.header_at]
    assert "MISSING_COLUMN" not in found and "UNKNOWN_COLUMN" not in found, [
        (w, f) for w, f, got in zip(written, intake.fields, res.sheet.fields, strict=True) if got != f
    ]
    assert res.sheet.fields == intake.fields
    assert_records_as_clean(intake, res)


@SETTINGS
@given(intake_workbooks(extras=True))
def test_an_extra_column_is_one_unknown_column_and_comes_back_as_it_came(intake):
    ran = run(intake, returned=True)
    result = ran.result
    res = sheet_result(intake, result)
    unknown = result.findings[(result.findings["Sheet"] == intake.sheet) & (result.findings["Code"] == "UNKNOWN_COLUMN")]
    header = intake.grid[intake.header_at]
    names = [header[j] for j in intake.extras]
    assert sorted(unknown["Column"].tolist()) == sorted(names)  # exactly one for each
    assert (unknown["Severity"] == "warning").all() and unknown["Row"].isna().all()  # a sheet finding
    for j in intake.extras:
        (message,) = unknown.loc[unknown["Column"] == header[j], "Message"].tolist()
        assert message.startswith(f'Column {xl_col_to_name(j)} "{header[j]}" matches no column of sheet {intake.sheet}'), message
        assert "resembles none" in message
    assert "MISSING_COLUMN" not in sheet_codes(result, intake.sheet)
    assert_records_as_clean(intake, res)  # no row's Status or Findings changes because of it
    assert not any("UNKNOWN_COLUMN" in s for s in res.row_findings)
    h = intake.header_at
    for j in intake.extras:  # its cells come back unchanged, header included
        for r in range(h, len(ran.before)):
            want = ran.before[r][j] if j < len(ran.before[r]) else ""
            assert ran.after[r][j] == want, (r, j)


@SETTINGS
@given(intake_workbooks(totals=True))
def test_a_totals_row_is_returned_skipped_and_not_counted(intake):
    ran = run(intake, returned=True)
    result = ran.result
    res = sheet_result(intake, result)
    totals_at = intake.excel_rows("totals")
    records_at = intake.excel_rows("record")
    # in the result: blank Status, TOTALS_ROW_SKIPPED and nothing else, at the rows where they are
    assert [int(r) for r in res.sheet.excel_rows] == sorted(totals_at + records_at)
    skipped = [int(r) for r, s in zip(res.sheet.excel_rows, res.status, strict=True) if s == ""]
    assert skipped == totals_at
    assert all(f == "TOTALS_ROW_SKIPPED" for f, s in zip(res.row_findings, res.status, strict=True) if s == "")
    assert res.totals == len(totals_at)
    found = result.findings[(result.findings["Sheet"] == intake.sheet) & (result.findings["Code"] == "TOTALS_ROW_SKIPPED")]
    assert sorted(found["Row"].astype(int).tolist()) == totals_at and (found["Severity"] == "info").all()
    # the counts leave them out
    assert res.counts["rows"] == len(records_at) == sum(res.counts[s] for s in STATUSES)
    assert_records_as_clean(intake, res)
    # in the returned sheet: each row where it was, blank Status, `TOTALS_ROW_SKIPPED` in Findings
    h = intake.header_at
    g = ran.after
    status, findings = g[h].index("Status"), g[h].index("Findings")
    returned = [r for r in range(h + 1, len(g)) if any(v != "" for v in g[r][:status])]
    assert [r + 1 for r in returned] == sorted(totals_at + records_at)  # rows read = rows returned
    for r in totals_at:
        assert g[r - 1][status] == "" and g[r - 1][findings] == "TOTALS_ROW_SKIPPED", g[r - 1]
        assert g[r - 1][:status] == [*ran.before[r - 1], *[""] * (status - len(ran.before[r - 1]))]  # as it came
    assert all(g[r - 1][status] in STATUSES for r in records_at)
    # the Run sheet: rows read are the records, and the totals rows are counted apart
    header = next(row for row in ran.run_sheet if row and row[0] == "Sheet")
    line = dict(zip(header, next(row for row in ran.run_sheet if row and row[0] == intake.sheet), strict=False))
    assert line["Rows read"] == len(records_at) and line["Totals rows skipped"] == len(totals_at)


@SETTINGS
@given(intake_workbooks(rename=True, spell=True))
def test_a_sheet_named_otherwise_is_routed_by_its_headers_and_computed_alike(intake):
    result = run(intake).result
    res = sheet_result(intake, result)  # routed to the program whose headers it has
    routed = result.findings[result.findings["Code"] == "SHEET_ROUTED_BY_HEADERS"]
    assert routed["Sheet"].tolist() == [intake.sheet]
    (message,) = routed["Message"].tolist()
    required = sum(c.required for c in SPECS[intake.program].columns)
    assert f"names {required} of the {required} required columns of {intake.program}" in message, message
    assert (routed["Severity"] == "info").all() and routed["Row"].isna().all()
    assert res.sheet.header_row == intake.header_at
    assert {"UNKNOWN_SHEET", "SHEET_NOT_ROUTED", "MISSING_COLUMN", "UNKNOWN_COLUMN"}.isdisjoint(sheet_codes(result, intake.sheet))
    assert_records_as_clean(intake, res)  # the same as under its proper name


@SETTINGS
@given(intake_workbooks(rename=False, spell=True))
def test_a_sheet_named_as_its_program_is_routed_by_its_name(intake):
    result = run(intake).result
    res = sheet_result(intake, result)
    assert res.sheet.routed is None and "SHEET_ROUTED_BY_HEADERS" not in sheet_codes(result, intake.sheet)
    assert_records_as_clean(intake, res)


@SETTINGS
@given(st.booleans().flatmap(lambda rename: intake_workbooks(spell=True, extras=True, totals=True, rename=rename)))
def test_all_habits_at_once(intake):
    ran = run(intake, returned=True)
    result = ran.result
    res = sheet_result(intake, result)
    found = result.findings[result.findings["Sheet"] == intake.sheet]
    expected = {"UNKNOWN_COLUMN", "TOTALS_ROW_SKIPPED"} | ({"SHEET_ROUTED_BY_HEADERS"} if intake.renamed else set())
    assert set(found["Code"]) <= expected | set(clean_run(intake.program, intake.picks).findings["Code"])
    assert (found["Code"] == "UNKNOWN_COLUMN").sum() == len(intake.extras)
    assert (found["Code"] == "TOTALS_ROW_SKIPPED").sum() == len(intake.excel_rows("totals"))
    assert (found["Code"] == "SHEET_ROUTED_BY_HEADERS").sum() == int(intake.renamed)
    assert res.sheet.fields == intake.fields
    assert_records_as_clean(intake, res)
    # every input cell comes back as it came
    for r, row in enumerate(ran.before):
        for c, v in enumerate(row):
            assert ran.after[r][c] == v, (r, c)
