"""The real-world corpus (README, "The returned workbook" and "The round trip"): each package shape
that Excel, LibreOffice, openpyxl or the .NET Open XML SDK writes, and each hand-made trap, made
small in `tests/realworld/`, is run once through `njcredits run FILE --out OUT` and compared part
by part with its input:

- it comes back in place, as the analyst's own package: every part the tool did not need to
  change is byte-identical, no part of the user's is dropped (but Excel 4 macro sheets), and the
  relationships of every part it changed are all still there;
- every XML part is well-formed, without a DOCTYPE, every part has a content type and every
  relationship a target;
- every value of every sheet is the value it was (read here with lxml, in the input's own
  namespace, not with the product's reader), each cell written once;
- the intake sheet has the tool's Status after the user's columns ($1,000 of Grow NJ credit is
  `Flagged`), a fill and a note on the $1,000 cell, and a dimension covering every cell;
- the Run sheet says what could not be kept (MACROS_REMOVED, ENCRYPTION_REMOVED,
  SHEET_NOT_READABLE) and no shape is written anew (no FORMATTING_NOT_KEPT);
- LibreOffice opens the returned workbook and shows the intake sheet's values and statuses.

Three shapes are refused, each with a reason in the user's words that names what is wrong.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from lxml import etree
from realworld.cells import MAINS, Package, column_number, parts, rels_name, split_ref, xml
from realworld.packages import CONTENT_TYPES, S_MAIN
from realworld.shapes import BY_NAME, FLAGGED_CELL, HEADERS, INTAKE, ROWS, SHAPES, STATUSES, Shape
from test_tool_sheets import soffice_or_skip

from batch.cli import main

AS_OF = "2026-11-30"
KEPT = [s.name for s in SHAPES if not s.refused]
REFUSED = [s.name for s in SHAPES if s.refused]
WORKBOOK_CODES = ("FORMATTING_NOT_KEPT", "MACROS_REMOVED", "ENCRYPTION_REMOVED", "SHEET_NOT_READABLE")
# a reason that repeats a library's exception instead of saying what is wrong with the file
LIBRARY_TEXT = re.compile(r"Traceback|\b[A-Z][A-Za-z]+(Error|Exception)\b|BadZipFile|lxml|zipfile|openpyxl|calamine")
# on one test worker together: each shape is run once (`runs`), and LibreOffice converts them all once;
# spread over the workers, every worker ran the shapes its tests named again
pytestmark = pytest.mark.xdist_group("real-world")


@dataclass
class Run:
    shape: Shape
    source: Path
    given: dict[str, bytes]  # the input's parts (decrypted when it was encrypted)
    exit_code: int
    output: str
    returned: Path
    again: Path | None = None  # the returned workbook run again (round-trip shapes)
    again_output: str = ""


def _run(source: Path, outbox: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", str(source), "--out", str(outbox), "--as-of", AS_OF, "--workers", "1"])
    return result.exit_code, result.output + (f"\n{type(result.exception).__name__}: {result.exception}" if result.exception else "")


def _decrypted(data: bytes, password: str) -> bytes:
    import msoffcrypto

    office = msoffcrypto.OfficeFile(io.BytesIO(data))
    office.load_key(password=password)
    out = io.BytesIO()
    office.decrypt(out)
    return out.getvalue()


def _returned_name(source: Path) -> str:
    """README, "Exit status and names": NAME.xlsx and NAME.annotated.xlsx give NAME.annotated.xlsx,
    any other suffix NAME.SUFFIX.annotated.xlsx."""
    if source.name.endswith(".annotated.xlsx"):
        return source.name
    return (source.stem if source.suffix == ".xlsx" else source.name) + ".annotated.xlsx"


class Runs(dict):
    """Each shape built and run once through `njcredits run FILE --out OUT`, on first use, in
    folders of its own (one workbook per run: the shapes share their record IDs)."""

    def __init__(self, root: Path):
        super().__init__()
        self.root = root

    def __missing__(self, name: str) -> Run:
        shape, folder = BY_NAME[name], self.root / name
        source = folder / "in" / (name + shape.suffix)
        source.parent.mkdir(parents=True)
        data = shape.build()
        source.write_bytes(data)
        plain = _decrypted(data, shape.password) if shape.password else data
        with zipfile.ZipFile(io.BytesIO(plain)) as z:
            given = {n: z.read(n) for n in z.namelist()}
        run = Run(shape, source, given, *_run(source, folder / "out"), folder / "out" / _returned_name(source))
        if shape.round_trip and run.returned.exists():
            again = folder / "again" / run.returned.name
            again.parent.mkdir()
            shutil.copy(run.returned, again)
            code, run.again_output = _run(again, folder / "again-out")
            run.again = folder / "again-out" / _returned_name(again) if code == 0 else None
        self[name] = run
        return run


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> Runs:
    return Runs(tmp_path_factory.mktemp("realworld"))


def _line(run: Run) -> str:
    """The file's line on the terminal (`done  NAME  ...` or `failed  NAME  REASON`)."""
    lines = [ln for ln in run.output.splitlines() if run.source.name in ln and re.match(r"\s*(done|failed|skipped)\b", ln)]
    return lines[0].strip() if lines else run.output.strip()


def _returned(run: Run) -> Package:
    """The returned workbook, read; the test fails with the run's own line when there is none."""
    if run.exit_code != 0 or not run.returned.exists():
        pytest.fail(f"{run.shape.name} ({run.shape.why}) did not come back: exit {run.exit_code}; {_line(run)}")
    if not zipfile.is_zipfile(run.returned):
        pytest.fail(f"{run.returned.name} is not a zip package (still encrypted?)")
    return Package(parts(run.returned))


def _changeable(given: Package) -> set[str]:
    """The parts the tool may need to change: the package's lists of parts, types and
    relationships, the workbook, its style table and properties, and the intake sheet with its
    comments and their boxes."""
    names = {"[Content_Types].xml", "_rels/.rels", given.workbook_part, rels_name(given.workbook_part)}
    for kind in ("extended-properties", "extendedProperties", "custom-properties", "customProperties"):
        names |= set(given.related("", kind))
    names |= {given.styles_part()} - {None}
    sheet = given.sheet(INTAKE).part
    names |= {sheet, rels_name(sheet), *given.related(sheet, "comments"), *given.related(sheet, "vmlDrawing")}
    return names


# --- every shape that must come back in place ---------------------------------------------------


@pytest.mark.parametrize("name", KEPT)
def test_the_workbook_comes_back_done(runs, name):
    run = runs[name]
    assert run.exit_code == 0 and _line(run).startswith("done"), _line(run)
    assert run.returned.exists()


@pytest.mark.parametrize("name", KEPT)
def test_every_part_the_tool_did_not_need_to_change_is_byte_identical(runs, name):
    run = runs[name]
    got, given = _returned(run).data, run.given
    assert set(given) - set(got) == set(run.shape.removed), "parts of the user's dropped (or kept that must go)"
    may_change = _changeable(Package(given))
    changed = sorted(n for n in given if n in got and got[n] != given[n] and n not in may_change)
    assert not changed, f"changed although the tool had nothing to change in them: {changed}"
    # the parts it changed keep every relationship they had (but those of removed parts)
    for part in (n for n in given if n.endswith(".rels") and n in got and got[n] != given[n]):
        source = "" if part == "_rels/.rels" else part.replace("_rels/", "").removesuffix(".rels")
        before = {(r.id, r.type, r.target, r.external) for r in Package(given).rels(source) if r.target not in run.shape.removed}
        after = {(r.id, r.type, r.target, r.external) for r in Package(got).rels(source)}
        assert before <= after, f"{part} lost {sorted(before - after)}"


@pytest.mark.parametrize("name", KEPT)
def test_every_xml_part_is_well_formed_typed_and_related(runs, name):
    got = _returned(runs[name])
    for part, data in got.data.items():
        if part.endswith((".xml", ".rels")) or (part.endswith(".vml") and runs[name].given.get(part) != data):
            try:
                tree = etree.ElementTree(xml(data))
            except etree.XMLSyntaxError as e:
                pytest.fail(f"{part} is not well-formed XML: {e}")
            assert not tree.docinfo.doctype, f"{part} has a DOCTYPE"
    # every part has a content type, every internal relationship a part
    types = xml(got.data["[Content_Types].xml"])
    defaults = {el.get("Extension").lower() for el in types.iter(f"{{{CONTENT_TYPES}}}Default")}
    defaults = {"/" + p.lower() for p in got.data if p.rsplit(".", 1)[-1].lower() in defaults}
    overrides = {el.get("PartName").lower() for el in types.iter(f"{{{CONTENT_TYPES}}}Override")}
    untyped = [p for p in got.data if p != "[Content_Types].xml" and ("/" + p).lower() not in overrides | defaults]
    assert not untyped, f"parts without a content type: {untyped}"
    listed = [el.get("PartName").lower() for el in types.iter(f"{{{CONTENT_TYPES}}}Override")]
    assert len(listed) == len(set(listed)), f"a part typed twice: {sorted(p for p in listed if listed.count(p) > 1)}"
    # the workbook's sheets: names unique (ignoring case, as Excel), ids unique
    sheets = got.workbook.iter(got.q("sheet"))
    names, ids = zip(*((el.get("name").casefold(), el.get("sheetId")) for el in sheets), strict=True)
    assert len(set(names)) == len(names) and len(set(ids)) == len(ids), f"sheets {names}, sheetIds {ids}"
    for part in ["", *got.data]:
        where = rels_name(part) if part else "_rels/.rels"
        rels = got.rels(part)
        assert len({r.id for r in rels}) == len(rels), f"{where}: relationship ids used twice: {[r.id for r in rels]}"
        for rel in rels:
            assert rel.external or rel.target in got.data, f"{where}: {rel.id} -> {rel.target}, no such part"


@pytest.mark.parametrize("name", KEPT)
def test_every_value_of_every_sheet_comes_back(runs, name):
    run = runs[name]
    got, given = _returned(run), Package(run.given)
    kept = [s for s in given.sheets() if s.part not in run.shape.removed]
    names = [s.name for s in got.sheets()]
    at = [names.index(s.name) if s.name in names else -1 for s in kept]
    assert -1 not in at and at == sorted(at), f"the user's sheets {[s.name for s in kept]} are not all in {names} in their order"
    for sheet in kept:
        if sheet.part is None:  # a broken relationship: listed as it was, nothing to read
            assert got.sheet(sheet.name).rid == sheet.rid
            continue
        before, _ = given.cells(sheet.part)
        after, twice = got.cells(got.sheet(sheet.name).part)
        assert not twice, f"{sheet.name}: cells written twice: {twice}"
        differ = {ref: (v, after.get(ref)) for ref, v in before.items() if after.get(ref) != v}
        assert not differ, f"{sheet.name}: values changed (before, after): {dict(list(differ.items())[:8])}"
        if sheet.name != INTAKE:
            assert after == before, f"{sheet.name}: cells added {sorted(set(after) - set(before))}"
    # the user's defined names stay as they were (but those of a removed macro sheet)
    removed = {s.name for s in given.sheets() if s.part in run.shape.removed}
    names = {n: f for n, f in given.defined_names().items() if not any(r in f for r in removed)}
    kept_names = got.defined_names()
    assert {n: kept_names.get(n) for n in names} == names, "the user's defined names"


def _statuses(got: Package, given: Package) -> tuple[list[str], list]:
    """The letters of the Status columns after the user's last column, and the statuses of T-1,
    T-2, T-3 in the first of them."""
    before, _ = given.cells(given.sheet(INTAKE).part)
    last = max(split_ref(ref)[1] for ref in before)  # the user's last column
    cells, _ = got.cells(got.sheet(INTAKE).part)
    header = {ref: v for ref, v in cells.items() if split_ref(ref)[0] == 1}
    tools = sorted((split_ref(ref)[1], re.match(r"[A-Z]+", ref).group()) for ref, v in header.items() if v == ("text", "Status"))
    tools = [letter for column, letter in tools if column > last]
    assert tools, f"no Status column of the tool's after the user's last column ({last}); row 1: {sorted(header.items())}"
    return tools, [cells.get(f"{tools[0]}{r}", ("", None))[1] for r in range(2, len(ROWS) + 2)]


@pytest.mark.parametrize("name", KEPT)
def test_the_intake_sheet_has_the_tools_status_fill_and_note(runs, name):
    run = runs[name]
    got, given = _returned(run), Package(run.given)
    tools, statuses = _statuses(got, given)
    assert statuses == STATUSES, f"Status of T-1, T-2 ($1,000), T-3 in column {tools[0]}"
    part = got.sheet(INTAKE).part
    assert got.fill_of(part, FLAGGED_CELL) == "solid", f"{FLAGGED_CELL} ($1,000) has no fill"
    assert FLAGGED_CELL in got.comment_refs(part), f"{FLAGGED_CELL} ($1,000) has no note"


@pytest.mark.parametrize("name", KEPT)
def test_the_dimension_of_the_intake_sheet_covers_every_cell(runs, name):
    got = _returned(runs[name])
    part = got.sheet(INTAKE).part
    ref = got.dimension(part)
    cells, _ = got.cells(part)
    rows, cols = zip(*(split_ref(r) for r in cells), strict=True)
    if ref is None:  # a sheet without one (optional) is read in full by every reader
        return
    m = re.fullmatch(r"([A-Z]+)([0-9]+)(?::([A-Z]+)([0-9]+))?", ref)
    assert m, ref
    last_col, last_row = column_number(m.group(3) or m.group(1)), int(m.group(4) or m.group(2))
    assert last_row >= max(rows) and last_col >= max(cols), f"dimension {ref}; cells up to row {max(rows)}, column {max(cols)}"


def _tool_sheet(got: Package, given: Package, role: str) -> dict[int, list[str]]:
    """The rows (number -> cell texts) of the tool's sheet `role` (`Run`, `Findings`): a new sheet
    named for it."""
    users = {s.name for s in given.sheets()}
    found = [s for s in got.sheets() if s.name not in users and re.fullmatch(rf"{role}( \(njcredits.*\))?", s.name)]
    assert found, f"no {role} sheet of the tool's in {[s.name for s in got.sheets()]}"
    cells, _ = got.cells(found[0].part)
    rows: dict[int, list[str]] = {}
    for ref, (_kind, value) in cells.items():
        rows.setdefault(split_ref(ref)[0], []).append(str(value))
    return rows


@pytest.mark.parametrize("name", KEPT)
def test_the_run_sheet_says_what_could_not_be_kept(runs, name):
    run = runs[name]
    got, given = _returned(run), Package(run.given)
    run_rows = _tool_sheet(got, given, "Run")
    found = {code: [" | ".join(r) for r in run_rows.values() if any(code in v for v in r)] for code in WORKBOOK_CODES}
    on_run = {code for code, rows in found.items() if rows}
    if set(run.shape.findings) - on_run:
        elsewhere = {c for c in WORKBOOK_CODES for r in _tool_sheet(got, given, "Findings").values() if any(c in v for v in r)}
        pytest.fail(f"the Run sheet shows {sorted(on_run)}, not {sorted(run.shape.findings)} (Findings sheet: {sorted(elsewhere)})")
    assert on_run == set(run.shape.findings), f"workbook findings on the Run sheet: {found}"
    users = {s.name for s in given.sheets()}
    tools = [s for s in got.sheets() if s.name not in users and s.part]
    written_anew = [s.name for s in tools if any("FORMATTING_NOT_KEPT" in str(v) for _kind, v in got.cells(s.part)[0].values())]
    assert not written_anew, f"FORMATTING_NOT_KEPT on {written_anew}: the workbook was written anew"
    for code, word in run.shape.findings.items():
        assert any(word in row for row in found[code]), f"{code} does not name {word!r}: {found[code]}"


# --- what each shape keeps of its own ------------------------------------------------------------


def test_an_xlsm_comes_back_as_an_xlsx_without_its_excel4_macro_sheet(runs):
    run = runs["excel4-macro-sheet"]
    got = _returned(run)
    assert run.returned.name == "excel4-macro-sheet.xlsm.annotated.xlsx"
    types = got.data["[Content_Types].xml"]
    assert b"macroEnabled" not in types and b"macrosheet" not in types
    assert not [p for p in got.data if "macrosheet" in p.lower()]
    assert not [r for part in ["", *got.data] for r in got.rels(part) if "macrosheet" in r.type.lower()]
    assert "Macro1" not in [s.name for s in got.sheets()]
    # no name is left running, or pointing at, what was removed
    assert {n: f for n, f in got.defined_names().items() if n.casefold() == "auto_open" or "Macro1" in f} == {}


def test_a_strict_package_stays_strict(runs):
    """Annotated in its own namespaces: every SpreadsheetML part the returned workbook holds, the
    tool's included, is Strict, and every relationship type is a Strict one."""
    got = _returned(runs["strict"])
    assert got.main == S_MAIN and got.workbook.get("conformance") == "strict"
    transitional = (
        "http://schemas.openxmlformats.org/spreadsheetml/",
        "http://schemas.openxmlformats.org/drawingml/",
        "http://schemas.openxmlformats.org/officeDocument/2006/",  # r:id, extended and custom properties
    )
    for part, data in got.data.items():
        if part.endswith(".xml") and part != "[Content_Types].xml":
            for el in xml(data).iter(tag=etree.Element):
                names = [el.tag, *el.attrib]
                used = [n for n in names if str(etree.QName(n).namespace).startswith(transitional)]
                assert not used, f"{part}: {etree.QName(el).localname} is Transitional in a Strict package ({used[0]})"
    for part in ["", *got.data]:
        for rel in got.rels(part):
            assert not rel.type.startswith("http://schemas.openxmlformats.org/officeDocument/2006/relationships/"), (
                f"{rels_name(part) if part else '_rels/.rels'}: {rel.type} is a Transitional type in a Strict package"
            )
    assert etree.QName(xml(got.data[got.sheet(INTAKE).part])).namespace == S_MAIN


def test_a_prefixed_package_keeps_its_prefix(runs):
    """SpreadsheetML under x: comes back under x:, the tool's additions too."""
    got = _returned(runs["open-xml-sdk"])
    for part in (got.workbook_part, got.sheet(INTAKE).part, got.styles_part()):
        elements = [el for el in xml(got.data[part]).iter() if isinstance(el.tag, str) and etree.QName(el).namespace in MAINS]
        assert {el.prefix for el in elements} == {"x"}, f"{part}: prefixes {sorted({str(el.prefix) for el in elements})}"


def test_a_users_status_column_stays_on_the_round_trip(runs):
    """The user's Status column is the user's on the first run and on every later one: the round
    trip takes out only the tool's own columns."""
    run = runs["user-status-column"]
    _returned(run)
    assert run.again is not None and run.again.exists(), run.again_output
    got, given = Package(parts(run.again)), Package(run.given)
    before, _ = given.cells(given.sheet(INTAKE).part)
    after, twice = got.cells(got.sheet(INTAKE).part)
    assert not twice, f"cells written twice: {twice}"
    differ = {ref: (v, after.get(ref)) for ref, v in before.items() if after.get(ref) != v}
    assert not differ, f"the user's cells changed on the round trip (before, after): {differ}"
    tools, statuses = _statuses(got, given)
    assert len(tools) == 1 and statuses == STATUSES, f"the tool's Status columns {tools}, statuses {statuses}"


# --- LibreOffice ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def libreoffice_csv(runs, tmp_path_factory) -> Path:
    """Every returned workbook, and every input LibreOffice can open without a password, converted
    by one LibreOffice call, each sheet to its own CSV (`NAME-SHEET.csv`)."""
    soffice = soffice_or_skip()
    folder = tmp_path_factory.mktemp("libreoffice")
    every = [runs[s.name] for s in SHAPES]
    returned = [str(r.returned) for r in every if r.returned.exists() and zipfile.is_zipfile(r.returned)]
    given = [str(r.source) for r in every if not r.shape.password]
    if returned or given:
        subprocess.run(
            [
                soffice,
                "--headless",
                f"-env:UserInstallation=file://{folder}/profile",
                "--convert-to",
                "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1",
                "--outdir",
                str(folder / "csv"),
                *returned,
                *given,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    return folder / "csv"


@pytest.mark.parametrize("name", KEPT)
def test_libreoffice_opens_the_returned_workbook(runs, libreoffice_csv, name):
    run = runs[name]
    _returned(run)
    converted = libreoffice_csv / f"{run.returned.stem}-{INTAKE}.csv"
    assert converted.exists(), f"LibreOffice did not open {run.returned.name}"
    grid = list(csv.reader(converted.read_text(encoding="utf-8").splitlines()))
    assert grid[0][: len(HEADERS)] == HEADERS and "Status" in grid[0][len(HEADERS) :], f"LibreOffice shows the header row {grid[0]}"
    status = len(grid[0]) - 1 - grid[0][::-1].index("Status")  # the tool's: the last Status
    shown = [(r[0], r[status]) for r in grid[1 : len(ROWS) + 1]]
    assert shown == [(row[0], s) for row, s in zip(ROWS, STATUSES, strict=True)], f"LibreOffice shows the statuses {shown}"


@pytest.mark.parametrize("name", [s.name for s in SHAPES if not s.password])
def test_libreoffice_opens_the_input(runs, libreoffice_csv, name):
    """The fixture is a workbook LibreOffice opens, as the real ones were."""
    converted = libreoffice_csv / f"{runs[name].source.stem}-{INTAKE}.csv"
    assert converted.exists(), f"LibreOffice did not open {runs[name].source.name}"
    grid = list(csv.reader(converted.read_text(encoding="utf-8").splitlines()))
    assert grid[0][: len(HEADERS)] == HEADERS and [r[0] for r in grid[1:]] == [row[0] for row in ROWS]


# --- the shapes that are refused -----------------------------------------------------------------


@pytest.mark.parametrize("name", REFUSED)
def test_a_workbook_that_cannot_be_read_safely_is_refused_with_its_reason(runs, name):
    run = runs[name]
    line = _line(run)
    assert run.exit_code == 1 and line.startswith("failed"), f"{run.shape.why}: {line}"
    assert not run.returned.exists()
    reason = line.split(run.source.name, 1)[-1]
    missing = [w for w in run.shape.refused if w.casefold() not in reason.casefold()]
    assert not missing, f"the reason does not name {missing}: {reason}"
    assert not LIBRARY_TEXT.search(reason), f"the reason repeats a library's error: {reason}"
