"""Every cell of the returned workbook exactly as it came (README.md, "The returned workbook"), and
the tool's Findings and Summary sheets as a reviewer reads them: hostile text, long text, edge
dates and blank required cells, read back with python-calamine and openpyxl, every part parsed."""

from __future__ import annotations

import csv
import datetime as dt
import html
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest
import python_calamine
from click.testing import CliRunner
from conftest import CERTIFICATE, ROOT, TRANSFER_HEADERS, write_workbook
from defusedxml import ElementTree

from batch.cli import main
from batch.pipeline import process
from batch.workbook.reading import excel_refuses, sheets_kept_by_libreoffice
from batch.workbook.toolsheets import FINDINGS_SHEET_COLUMNS, sheet_ref
from batch.workbook.writing import write

# its module fixtures (the samples run, the odd names made and converted by LibreOffice) made once, on one worker
pytestmark = pytest.mark.xdist_group("returned-cells")
AS_OF = dt.date(2026, 11, 30)
NS = {"x": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
DRAWING = {"xdr": "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"}
# extra columns carried through as they came: text the format must escape, and dates at Excel's edges
HOSTILE = [
    ("_x0041_", dt.date(1900, 1, 15)),
    ("a\rb\x01c", dt.date(1900, 3, 1)),
    ('=HYPERLINK("http://x")', dt.date(9999, 12, 31)),
    ("  spaced  ", dt.datetime(2026, 1, 5, 10, 30)),
    ("_x0041_ & <tag> _x00e9_", dt.date(1900, 2, 28)),
]


def _row(i: int, note, when, certificate="C-1") -> list:
    return [f"T-{i}", "Grow NJ", certificate, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 100_000, 90_000, CERTIFICATE, note, when]


def annotate(src: Path, tmp_path: Path) -> Path:
    return write(process(src, as_of=AS_OF), tmp_path / (src.name + ".annotated.xlsx"))


def parse_every_part(path: Path) -> None:
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith((".xml", ".rels", ".vml")):
                ElementTree.fromstring(z.read(name))


def calamine(path: Path, sheet: str) -> list[list]:
    return python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name(sheet).to_python(skip_empty_area=False)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    rows = [TRANSFER_HEADERS + ["Note", "When"]] + [_row(i, note, when) for i, (note, when) in enumerate(HOSTILE, start=1)]
    rows.append(_row(9, "blank certificate", dt.date(2026, 2, 1), certificate=None))  # MISSING_VALUE on a blank cell
    src = write_workbook(tmp / "hostile.xlsx", {"Transfers": rows, "Notes": [["Kept"], ["_x0041_"], [dt.date(1900, 1, 15)]]})
    return annotate(src, tmp)


def test_every_part_parses_and_openpyxl_opens_it(hostile):
    parse_every_part(hostile)
    openpyxl.load_workbook(hostile).close()


def test_hostile_text_and_edge_dates_come_back_exactly(hostile):
    g = calamine(hostile, "Transfers")
    header = g[0]
    back = [(r[header.index("Note")], r[header.index("When")]) for r in g[1 : 1 + len(HOSTILE)]]
    assert back == HOSTILE
    assert calamine(hostile, "Notes") == [["Kept"], ["_x0041_"], [dt.date(1900, 1, 15)]]
    # every cell of the input sheet as calamine read it from the input (the user's view)
    source = calamine(hostile.parent / "hostile.xlsx", "Transfers")
    assert [r[: len(source[0])] for r in g[: len(source)]] == source


def test_a_blank_cell_a_finding_points_at_has_its_fill(hostile):
    ws = openpyxl.load_workbook(hostile)["Transfers"]
    cell = ws["C7"]  # Certificate ID of T-9, blank
    assert cell.value is None and cell.fill.fgColor.rgb == "FFFFC7CE"
    assert "MISSING_VALUE" in cell.comment.text


def test_findings_sheet_links_each_finding_to_its_cell(hostile):
    wb = openpyxl.load_workbook(hostile)
    ws = wb["Findings"]
    header = [c.value for c in ws[1]]
    assert header == FINDINGS_SHEET_COLUMNS and header[-2:] == ["Cell", "Waived"]
    shown = calamine(hostile, "Findings")
    checked = 0
    for row, cached in zip(ws.iter_rows(min_row=2), shown[1:], strict=True):
        f = dict(zip(header, [c.value for c in row], strict=True))
        link = re.fullmatch(r'=HYPERLINK\("#(.+)!([A-Z]+)(\d+)","(.+)"\)', f["Cell"])
        assert link and link.group(4) == cached[header.index("Cell")] == f"{link.group(1)}!{link.group(2)}{link.group(3)}"
        assert f["Waived"] is None  # empty until reviewer decisions exist
        target = wb[link.group(1).strip("'")]
        column, number = link.group(2), int(link.group(3))
        if f["Row"]:  # a finding about a row points into that row, at its column's cell
            assert number == f["Row"]
            if f["Column"] in TRANSFER_HEADERS:
                assert target[f"{column}1"].value == f["Column"]
                checked += 1
        elif f["Column"]:  # about a column: its header cell
            assert (number, target[f"{column}1"].value) == (1, f["Column"])
            checked += 1
    assert checked >= 3  # MISSING_VALUE, and UNKNOWN_COLUMN of Note and When


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("samples")
    return {p.name: annotate(p, tmp) for p in sorted((ROOT / "sample_inputs").glob("*.xlsx"))}


def _anchors(z: zipfile.ZipFile, drawing: str) -> list[tuple[int, int, int, int]]:
    root = ElementTree.fromstring(z.read(drawing))
    out = []
    for anchor in root.findall("xdr:twoCellAnchor", DRAWING):
        f, t = anchor.find("xdr:from", DRAWING), anchor.find("xdr:to", DRAWING)
        out.append(tuple(int(e.find(f"xdr:{k}", DRAWING).text) for e in (f, t) for k in ("col", "row")))
    return out


def _filled_cells(sheet_xml: bytes) -> set[tuple[int, int]]:
    cells = set()
    for c in ElementTree.fromstring(sheet_xml).iter(f"{{{NS['x']}}}c"):
        if c.find("x:v", NS) is not None or c.find("x:is", NS) is not None:
            letters, number = re.fullmatch(r"([A-Z]+)(\d+)", c.get("r")).groups()
            col = 0
            for ch in letters:
                col = col * 26 + ord(ch) - 64
            cells.add((col - 1, int(number) - 1))
    return cells


def test_no_chart_covers_a_table_of_the_summary(samples):
    charts = 0
    for path in samples.values():
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                m = re.fullmatch(r"xl/worksheets/_rels/(sheet\d+)\.xml\.rels", name)
                if not m:
                    continue
                for drawing in re.findall(r'Target="\.\./drawings/(drawing\d+\.xml)"', z.read(name).decode()):
                    filled = _filled_cells(z.read(f"xl/worksheets/{m.group(1)}.xml"))
                    for c0, r0, c1, r1 in _anchors(z, f"xl/drawings/{drawing}"):
                        charts += 1
                        inside = {(c, r) for c, r in filled if c0 <= c <= c1 and r0 <= r <= r1}
                        assert not inside, (path.name, drawing, sorted(inside)[:5])
    assert charts == len(samples)  # one awards chart per returned workbook


def _tables(g: list[list]) -> dict[str, list[list]]:
    """The Summary's tables by title: a title row, a header row, then rows up to a blank row."""
    out, i = {}, 0
    while i < len(g):
        if g[i] and isinstance(g[i][0], str) and g[i][0] and i + 1 < len(g) and any(v != "" for v in g[i + 1]):
            title, j = g[i][0], i + 1
            while j < len(g) and any(v != "" for v in g[j]):
                j += 1
            out[title] = [[v for v in r] for r in g[i + 1 : j]]
            i = j
        else:
            i += 1
    return out


def test_summary_has_a_by_month_pivot_and_findings_by_count(samples):
    g = calamine(samples["transfers-2026-11.xlsx"], "Summary")
    tables = _tables(g)
    month = next(v for k, v in tables.items() if "by month of Transfer Date" in k)
    head = month[0]
    assert head[:8] == ["Month", "Rows", "OK", "Flagged with errors", "Flagged with warnings only", "Ineligible", "Invalid", "Award ($)"]
    body = month[1:]
    months = [r[0] for r in body]
    assert months == sorted(m for m in months if m != "(no date)") + [m for m in months if m == "(no date)"]
    assert all(re.fullmatch(r"\d{4}-\d{2}|\(no date\)", m) for m in months)
    # every row counted once: the months' rows add up to the sheet's rows (41, see README), each month's statuses to its rows
    assert sum(r[1] for r in body) == 43
    assert all(r[1] == sum(r[2:7]) for r in body)
    codes = tables["Findings by code (most frequent first)"]
    totals = [r[codes[0].index("Total")] for r in codes[1:]]
    assert totals == sorted(totals, reverse=True) and sum(totals) == len(calamine(samples["transfers-2026-11.xlsx"], "Findings")) - 1


def test_text_over_the_limit_is_cut_and_reported(tmp_path):
    src = tmp_path / "long.csv"
    with src.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(TRANSFER_HEADERS + ["Note"])
        w.writerow(["T-1", "Grow NJ", "C-1", "A", "B", "2026-01-05", "100000", "90000", "1000000", "x" * 40_000])
        w.writerow(["T-2", "Grow NJ", "C-2", "A", "B", "2026-01-05", "100000", "90000", "1000000", "x" * 32_767])
        w.writerow(["T-3", "Grow NJ", "C-3", "😀" * 16_384, "B", "2026-01-05", "100000", "90000", "1000000", "ok"])
    result = process(src, as_of=AS_OF)
    out = write(result, tmp_path / "long.annotated.xlsx")
    f = result.findings[result.findings["Code"] == "TEXT_TRUNCATED"]
    # 40,000 > 32,767: cut; 32,767: at the limit, whole; 16,384 emoji are 32,768 UTF-16 units: cut
    assert f[["Row", "Column", "Severity"]].values.tolist() == [[2, "Note", "warning"], [4, "Transferor", "warning"]]
    assert "40,000 characters" in f["Message"].iloc[0] and "keeps the first 32,767 " in f["Message"].iloc[0]
    # 16,384 emoji = 32,768 units: 16,383 emoji kept, 32,766 units (a character is never split)
    assert "32,768 characters" in f["Message"].iloc[1] and "keeps the first 32,766 " in f["Message"].iloc[1]
    g = calamine(out, "long")
    status = g[0].index("Status")
    assert [len(g[1][9]), len(g[2][9]), g[3][3]] == [32_767, 32_767, "😀" * 16_383]
    assert [g[1][status], g[2][status], g[3][status]] == ["Flagged", "OK", "Flagged"]


def test_tool_sheets_widths_are_capped_and_codes_are_rows(samples):
    from batch.programs._kit.rules import common_findings

    codes = set(common_findings())
    for path in [*samples.values(), ROOT / "templates" / "njcredits-intake-template.xlsx"]:
        parse_every_part(path)
    for path in samples.values():
        wb = openpyxl.load_workbook(path)
        for name in ("Findings", "Summary", "Run"):
            ws = wb[name]
            widths = [d.width for d in ws.column_dimensions.values() if d.width]
            assert widths and max(widths) <= 81, (path.name, name, max(widths))  # 80 and the padding xlsxwriter adds
            # landscape, fit to one page wide (fitToWidth 1 is the default, left out), any number of pages tall
            assert ws.page_setup.orientation == "landscape" and ws.sheet_properties.pageSetUpPr.fitToPage
            assert ws.page_setup.fitToWidth in (None, 1) and ws.page_setup.fitToHeight == 0
        for title, table in _tables(calamine(path, "Summary")).items():
            header = table[0]
            assert not any(h in codes or re.fullmatch(r"[A-Z][A-Z0-9_]{5,}", str(h)) for h in header), (path.name, title, header)


# --- sheet names Excel would refuse -------------------------------------------------------------

ODD_NAMES = ["Tr[1]", "a*b?c", "x/y\\z", "p:q", "'quoted'", "History", 'say "hi"', "N" * 40, "L" * 300]


def _odd_names_workbook(tmp_path: Path, names: list[str]) -> Path:
    """A Transfers sheet under each name (routed by its headers), written as LibreOffice would
    keep it: the names only in workbook.xml, which openpyxl would refuse to write."""
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for i, _name in enumerate(names):
        ws = wb.create_sheet(f"S{i}QQ")
        ws.append(TRANSFER_HEADERS)
        ws.append([f"T-{i}", "Grow NJ", f"C-{i}", "A", "B", dt.date(2026, 1, 5), 30_000, "27,000x", CERTIFICATE])  # a BAD_TYPE
    wb.save(tmp_path / "src.xlsx")
    path = tmp_path / "in" / "odd.xlsx"
    path.parent.mkdir()
    with zipfile.ZipFile(tmp_path / "src.xlsx") as z, zipfile.ZipFile(path, "w") as out:
        for info in z.infolist():
            data = z.read(info.filename)
            if info.filename == "xl/workbook.xml":
                for i, name in enumerate(names):
                    attr = name.replace("&", "&amp;").replace('"', "&quot;")
                    data = data.replace(f'name="S{i}QQ"'.encode(), f'name="{attr}"'.encode())
            out.writestr(info, data)
    return path


def _libreoffice_opens(paths: dict[str, Path], folder: Path) -> tuple[set[str], str]:
    """The keys of the workbooks LibreOffice opens (converts to CSV), all in one call; and what it said."""
    inputs = folder / "in"
    inputs.mkdir(parents=True)
    for key, path in paths.items():
        shutil.copyfile(path, inputs / f"{key}.xlsx")  # a name of its own: the CSVs land side by side
    out = folder / "csv"
    profile = (folder / "lo-profile").as_uri()
    done = subprocess.run(
        ["soffice", f"-env:UserInstallation={profile}", "--headless", "--convert-to", "csv", "--outdir", str(out),
         *[str(inputs / f"{key}.xlsx") for key in paths]],
        capture_output=True,
        timeout=180 + 20 * len(paths),
        check=False,
        text=True,
    )  # fmt: skip
    return {p.stem for p in out.glob("*.csv")}, done.stderr


@pytest.fixture(scope="module")
def odd_names_run(tmp_path_factory):
    """For each odd name: its input workbook and the run over it (made once), and whether LibreOffice
    opens the input and the returned workbook (one conversion for all of them)."""
    made, opens = {}, {}
    for i, name in enumerate(ODD_NAMES):
        folder = tmp_path_factory.mktemp(f"odd-{i}")
        src = _odd_names_workbook(folder, [name])
        opens[f"{i}-input"] = folder / "input.xlsx"
        shutil.copyfile(src, opens[f"{i}-input"])  # the run moves the input to processed/
        run = CliRunner().invoke(
            main, ["run", str(src.parent), "--out", str(folder / "out"), "--ledger", str(folder / "l.sqlite"), "--as-of", AS_OF.isoformat()]
        )
        returned = folder / "out" / "odd.annotated.xlsx"
        if returned.exists():
            opens[f"{i}-returned"] = returned
        made[name] = (i, run, returned)
    opened, said = _libreoffice_opens(opens, tmp_path_factory.mktemp("lo-odd"))
    return made, opened, said


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
@pytest.mark.parametrize("name", ODD_NAMES, ids=lambda n: n[:12])
def test_a_sheet_name_excel_would_refuse_is_kept_and_the_output_opens(odd_names_run, name):
    made, opened, said = odd_names_run
    i, run, returned = made[name]
    assert f"{i}-input" in opened, said  # the input opens where it was made
    assert run.exit_code == 0, run.output
    assert f"{i}-returned" in opened, said
    parse_every_part(returned)
    book = python_calamine.CalamineWorkbook.from_path(str(returned))
    assert book.sheet_names[0] == name  # the user's name, kept
    quoted = "'" + name.replace("'", "''") + "'!"
    with zipfile.ZipFile(returned) as z:
        workbook = z.read("xl/workbook.xml").decode()
        sheets = b"".join(z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/sheet")).decode()
    # the marker of the tool's columns refers to the sheet by its quoted name ('' for an apostrophe)
    assert html.escape(quoted, quote=False) in workbook or quoted.replace("'", "&apos;") in workbook
    ref = sheet_ref(name) + "!"  # quoted unless a plain name (History, NNN...)
    cell = [r[8] for r in book.get_sheet_by_name("Findings").to_python()[1:] if r[0] == name]
    assert cell and all(c.startswith(ref) for c in cell)  # the Cell column: the address as a formula writes it
    literal = html.escape(ref.replace('"', '""'), quote=False)
    linked = f"HYPERLINK(&quot;#{literal}" in sheets or f'HYPERLINK("#{literal}' in sheets
    # a link whose address is too long for a formula's text constant (255 characters) is written as text
    assert linked is (len(ref.replace('"', '""')) + len("#A2") <= 255)
    run_sheet = book.get_sheet_by_name("Run").to_python()
    assert not [r for r in run_sheet if r[0] == "SHEET_NAMES_REFUSED"]  # one refused name: LibreOffice keeps every sheet


# Excel refuses a sheet name that is empty, over 31 UTF-16 code units, holds []:*?/\ or a control
# character, starts or ends with an apostrophe, or is History (any case).
@pytest.mark.parametrize(
    "name, refused",
    [
        ("Transfers", False),
        ("N" * 31, False),  # at the limit
        ("N" * 32, True),  # one over
        ("\U0001f600" * 15 + "N", False),  # 15 x 2 + 1 = 31 UTF-16 units
        ("\U0001f600" * 16, True),  # 16 x 2 = 32 units
        ("", True),
        ("Tr[1]", True),
        ("a*b?c", True),
        ("p:q", True),
        ("x/y", True),
        ("x\\y", True),
        ("tab\there", True),
        ("'quoted'", True),
        ("O'Brien", False),  # an apostrophe inside is legal
        ("History", True),
        ("history", True),
        ("History 2", False),
        ('say "hi"', False),
    ],
)
def test_which_sheet_names_excel_refuses(name, refused):
    assert excel_refuses(name) is refused


@pytest.mark.parametrize(
    "names, kept",
    [
        (["A", "B", "Findings", "Summary", "Run", "Rules"], 6),  # no refused name: every sheet
        (["Tr[1]", "B", "Findings", "Summary", "Run", "Rules"], 6),  # one: renamed, kept
        (["Tr[1]", "a*b?c", "Findings", "Summary", "Run", "Rules"], 5),  # two: 6 - (2 - 1)
        (["a[", "b[", "c[", "d[", "e[", "f[", "g[", "Findings", "Summary", "Run", "Rules"], 5),  # seven: 11 - (7 - 1)
    ],
)
def test_how_many_sheets_libreoffice_keeps(names, kept):
    assert sheets_kept_by_libreoffice(names) == kept


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
@pytest.mark.parametrize(
    "names",
    [
        ["Tr[1]", "a*b?c"],  # LibreOffice would drop the scoped names of Rules (index 5 of 5 kept)
        ["Tr[1]", "a*b?c", "p:q"],
        [f"{c}[1]" for c in "abcdefg"],  # and, with seven, the column markers of the last two intake sheets
    ],
    ids=len,
)
def test_several_sheet_names_excel_would_refuse_come_back_openable(tmp_path, names):
    src = _odd_names_workbook(tmp_path, names)
    shutil.copyfile(src, tmp_path / "input.xlsx")  # the run moves the input to processed/
    run = CliRunner().invoke(
        main, ["run", str(src.parent), "--out", str(tmp_path / "out"), "--ledger", str(tmp_path / "l.sqlite"), "--as-of", AS_OF.isoformat()]
    )
    assert run.exit_code == 0, run.output
    returned = tmp_path / "out" / "odd.annotated.xlsx"
    opened, said = _libreoffice_opens({"input": tmp_path / "input.xlsx", "returned": returned}, tmp_path / "lo")
    assert opened == {"input", "returned"}, said  # the input opens (with one of the refused sheets), and so does the output
    book = python_calamine.CalamineWorkbook.from_path(str(returned))
    assert book.sheet_names[: len(names)] == names  # the user's names, kept
    reach = len(book.sheet_names) - (len(names) - 1)
    with zipfile.ZipFile(returned) as z:
        workbook = ElementTree.fromstring(z.read("xl/workbook.xml"))
    scoped = [int(el.get("localSheetId")) for el in workbook.iter() if el.tag.endswith("definedName") and el.get("localSheetId")]
    assert scoped and max(scoped) < reach  # every scoped name within the sheets LibreOffice keeps
    run_rows = book.get_sheet_by_name("Run").to_python()
    found = [r for r in run_rows if r[0] == "SHEET_NAMES_REFUSED"]
    assert len(found) == 1 and found[0][1] == "warning", run_rows
    assert f"odd.xlsx has {len(names)} sheets whose names Excel refuses" in found[0][2] and ", ".join(names) in found[0][2]
