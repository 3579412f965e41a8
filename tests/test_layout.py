"""The returned workbook as a reviewer reads it (README.md, "How the returned workbook is laid
out"): no cell of the tool's on an intake sheet wraps, the tool's headers are on one line in
columns as wide as they are, the user's row heights are kept, each row of the tool's own sheets is
as tall as its wrapped text, a CSV's numbers and dates come back as Excel reads them, and every
page of the samples, rendered by LibreOffice, shows no text printed over other text."""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import shutil
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner
from openpyxl.utils import get_column_letter

from batch.cli import main
from batch.pipeline import process
from batch.programs.transfers.sheet import TRANSFERS
from batch.workbook import looks
from batch.workbook.csvcells import FORMATS, excel_values, judged_alike
from batch.workbook.writing import write

pytestmark = pytest.mark.xdist_group("layout")  # the samples' run and their renders, made once

ROOT = Path(__file__).resolve().parent.parent
AS_OF = dt.date(2026, 11, 30)
TOOL_SHEETS = ("Findings", "Summary", "Run", "Rules")
TOOL_HEADERS_END = "Reviewer Note"


# -- wrapped lines ------------------------------------------------------------------------------


def char_width(ch: str, bold: bool) -> float:
    code = ord(ch)
    if code < 128:
        return float(looks.WIDTHS[bold][code])
    return (2.0 if code >= looks.WIDE_CHAR else 1.0) * looks.SLACK


def greedy_lines(text: str, width: float, bold: bool = False) -> int:
    """Lines of `text` wrapped in a column `width` digits wide, one word and one character at a time
    (the plain way the product's array version is checked against): a word goes on the line if it
    fits after the spaces before it, else on the next line; a word wider than the column is broken
    between its characters; a paragraph's leading spaces count."""
    usable = max(width - looks.MARGIN, 0.0)

    def measure(s: str) -> float:
        return sum(char_width(c, bold) for c in s)

    total = 0
    for paragraph in text.split("\n"):
        lines, used, gap = 0, 0.0, 0.0
        for token in re.findall(r" +|[^ ]+", paragraph):
            if token[0] == " ":
                gap += measure(token)
                continue
            w = measure(token)
            if lines == 0 and gap > 0 and gap + w > usable >= w:  # leading spaces fill the line: the word goes below
                lines, start = 2, 0.0
            elif lines == 0:
                lines, start = 1, gap
            elif used + gap + w <= usable:
                start = used + gap
            else:
                lines, start = lines + 1, 0.0
            gap = 0.0
            if start + w <= usable:
                used = start + w
                continue
            used = start  # broken between its characters, from where it starts
            for c in token:
                cw = char_width(c, bold)
                if used > 0 and used + cw > usable:
                    lines, used = lines + 1, cw
                else:
                    used += cw
        total += max(lines, 1)
    return total


# width 40: usable 39.4 digits; `x` is 887/1038 x 1.06 = 0.906 digits wide, `0` 1.06, a space 0.473
LINE_CASES = [
    ("", 40, 1),  # an empty cell is one line
    ("a", 40, 1),
    ("x" * 43, 40, 1),  # 43 x 0.906 = 38.95 <= 39.4: fits
    ("x" * 44, 40, 2),  # 44 x 0.906 = 39.86 > 39.4: the word breaks
    ("0" * 37, 40, 1),  # 37 x 1.06 = 39.22: fits
    ("0" * 38, 40, 2),  # 38 x 1.06 = 40.28: breaks
    ("0" * 18 + " " + "0" * 18, 40, 1),  # 19.08 + 0.47 + 19.08 = 38.63: one line
    ("0" * 19 + " " + "0" * 18, 40, 2),  # 20.14 + 0.47 + 19.08 = 39.69 > 39.4: the second word wraps
    ("a\nb", 40, 2),  # a line feed starts a line
    ("a\n\nb", 40, 3),  # an empty paragraph is a line
    ("\nabc", 40, 2),
    ("abc\n", 40, 2),
    ("x" * 200, 40, 5),  # 181.2 digits: 4 full lines of 39.4 (157.6), then 23.6
    ("0" * 10, 10, 2),  # width 10: usable 9.4; 10.6 digits
]


@pytest.mark.parametrize(("text", "width", "want"), LINE_CASES)
def test_lines_of_wrapped_text(text, width, want):
    assert looks.lines(text, width) == want
    assert greedy_lines(text, width) == want


def test_the_array_count_is_the_word_by_word_count_and_never_short():
    rng = random.Random(28)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$.,;:()[]-_/'\"é漢😀\u00a0  \n"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))) for _ in range(400)]
    texts += [" ".join("w" * rng.randint(1, 30) for _ in range(rng.randint(1, 40))) for _ in range(200)]
    texts += [" " * rng.randint(1, 90) + "word " * rng.randint(1, 20) for _ in range(50)]
    texts += ["see https://nj.gov/" + "x" * rng.randint(1, 400) for _ in range(50)]
    for width in (0, 0.5, 8, 10, 30, 34, 80):
        for bold in (False, True):
            got = looks.line_counts(pd.Series(texts, dtype=object), width, bold).tolist()
            want = [greedy_lines(t, width, bold) for t in texts]
            assert all(g >= w for g, w in zip(got, want, strict=True)), (width, bold)
            # the same count where no word is broken between its characters and no paragraph begins
            # with spaces (the array count takes a paragraph's leading spaces as part of its first word)
            usable = width - looks.MARGIN
            plain = [
                i
                for i, t in enumerate(texts)
                if " \n" not in t
                and not t.startswith(" ")
                and all(sum(char_width(c, bold) for c in w) <= usable for w in re.split("[ \n]+", t))
            ]
            assert [got[i] for i in plain] == [want[i] for i in plain], (width, bold)
            assert len(plain) > 10 or width < 1


@pytest.mark.parametrize(
    "texts",
    [
        ["Section 34:1B-242", "N.J.S.A. 34:1B-243(b) and (c) " * 3, None, ""] * 40,  # four texts, 160 rows: each measured once
        ["a"] * 63 + ["word " * 30],  # under REPEATS_FROM: measured as they are
        [f"message {i} " * (i % 9) for i in range(200)],  # few repeats: measured as they are
    ],
)
def test_texts_that_repeat_count_as_each_measured_alone(texts):
    got = looks.line_counts(pd.Series(texts, dtype=object), 30).tolist()
    assert got == [looks.line_counts(pd.Series([t], dtype=object), 30)[0] for t in texts]


def test_a_text_of_many_words_is_counted_by_a_bound_never_short():
    # over LONG_TEXT_WORDS words the count is a bound: each full line holds at least the usable
    # width less the longest word and a space, so the bound is never fewer lines than wrapping gives;
    # `0` x 12 (12.72 digits) 500 times: 6,595 digits over 39.4 - 12.72 - 0.47 = 26.2 a line gives
    # 252 lines where wrapping, 3 words a line, gives 167: the row is taller than it needs, never short
    texts = [" ".join(["word"] * 1000), " ".join(["0" * 12] * 500), "a " * 450]
    got = looks.line_counts(pd.Series(texts, dtype=object), 40).tolist()
    exact = [greedy_lines(t, 40) for t in texts]
    assert got == [142, 252, 18] and exact == [125, 167, 17]


# -- a CSV's values -------------------------------------------------------------------------------

# text in the CSV -> the value written (None: stays text) and the number format that shows it
CSV_CASES = [
    ("1250000", 1250000.0, "General"),  # a plain number: General shows it as written
    ("12345678901", 12345678901.0, "General"),  # 11 digits: General's widest
    ("123456789012", None, None),  # 12 digits: General shows 1.23457E+11
    ("0.5", 0.5, "General"),
    ("-3.25", -3.25, "General"),
    ("1.50", None, None),  # General shows 1.5
    ("96.000", None, None),  # General shows 96 (and the reader calls it ambiguous: BAD_TYPE)
    ("007", None, None),  # Excel would show 7
    ("-0", None, None),  # Excel would show 0
    ("1e5", None, None),  # Excel would show 100000
    ("1٢٣", None, None),  # Arabic-Indic digits: not Excel's number
    ("1,250,000", 1250000.0, "#,##0"),
    ("1,250,000.00", 1250000.0, "#,##0.00"),
    ("-1,000", -1000.0, "#,##0"),
    ("1,000.5", None, None),  # shown 1,000.50
    ("123,456,789,012,345", 123456789012345.0, "#,##0"),  # 15 significant digits: Excel keeps them
    ("1,234,567,890,123,456", None, None),  # 16: Excel would not
    ("1,2", None, None),  # a decimal comma: never a number
    ("$999", 999.0, '"$"#,##0'),
    ("$1000", None, None),  # shown $1,000
    ("$1,000", 1000.0, '"$"#,##0'),
    ("$12.50", 12.5, '"$"#,##0.00'),
    ("$12.5", None, None),  # shown $12.50
    ("-$1,000", None, None),  # shown ($1,000)
    ("35%", 0.35, "0%"),
    ("12.50%", 0.125, "0.00%"),  # 1250e-4, rounded once
    ("12.5%", None, None),  # shown 12.50%
    (" 12", None, None),
    ("2016-03-31", dt.date(2016, 3, 31), "yyyy-mm-dd"),
    ("1900-01-01", dt.date(1900, 1, 1), "yyyy-mm-dd"),  # Excel's first day
    ("1899-12-31", None, None),  # before it: text
    ("2016-02-30", None, None),  # no such day
    ("3/31/2016", None, None),  # not ISO: text (the reader still reads it as a date)
]


@pytest.mark.parametrize(("text", "value", "shown"), CSV_CASES)
def test_a_csv_value_as_excel_reads_it(text, value, shown):
    values, formats = excel_values(np.array([text], dtype=object))
    got = values[0]
    if value is None:
        assert got == text and isinstance(got, str)
    else:
        assert got == value and type(got) is type(value)
        expected = -1 if shown in ("General", "yyyy-mm-dd") else FORMATS.index(shown)
        assert formats[0] == expected


# a CSV's text in a column of a kind -> written as Excel reads it (True) or left as text, so that the
# returned workbook dropped back in is read exactly as the CSV was
KIND_CASES = [
    (None, "150%", True),  # a column no program reads: as Excel reads it
    ("percent", "35%", True),  # 0.35, read as the text 35% is
    ("percent", "100%", True),  # 1.0: not above 1, read as a fraction
    ("percent", "150%", False),  # as text 150%, out of range; the number 1.5 would be taken for 1.5%
    ("percent", "0.35", True),
    ("percent", "35", False),  # read as 35% (PERCENT_SCALED): a figure taken for another stays text
    ("percent", "12.50%", True),
    ("money", "1,250,000.00", True),
    ("money", "$1,000", True),
    ("money", "-3.25", True),
    ("money", "96.125", False),  # ambiguous as text (BAD_TYPE); a number would never be questioned
    ("money", "35%", False),  # BAD_TYPE as text; never $0.35
    ("integer", "1,000", True),
    ("integer", "6000%", False),  # BAD_TYPE as text; never 60
    ("number", "1.5", True),
    ("text", "1001", True),  # the number reads back as the text 1001
    ("text", "1,001", False),  # would read back 1001
    ("text", "0.00001", False),  # would read back 1e-05
    ("date", "2016-03-31", True),
    ("code", "1", False),  # codes and yes/no answers are read as text only
    ("yesno", "1", False),
]


@pytest.mark.parametrize(("kind", "text", "written"), KIND_CASES)
def test_a_csv_value_is_written_as_excel_reads_it_only_where_it_is_read_alike(kind, text, written):
    texts = np.array([text], dtype=object)
    values, _ = excel_values(texts)
    assert judged_alike(kind, texts, values).tolist() == [written]


# the columns of a Transfers sheet, and one of the analyst's own
TRANSFERS_HEADERS = [c.header for c in TRANSFERS.columns if c.header != "Notes"] + ["Reference"]


def csv_transfers(path: Path) -> Path:
    rows = [
        TRANSFERS_HEADERS,
        ["T-1", "Grow NJ", "C-1", "1,250,000.00", "Seller LLC", "Buyer Inc.", "2026-01-05", "$30,000", "27000", "007"],
        ["T-2", "Grow NJ", "C-2", "500000", "Seller LLC", "Buyer Inc.", "2026-01-06", "20000", "1.50", "1e5"],  # under $25,000
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(",".join(f'"{v}"' for v in r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_a_workbook_written_anew_from_a_csv_shows_its_numbers_as_written(tmp_path):
    src = csv_transfers(tmp_path / "in" / "Transfers.csv")
    first = process(src, as_of=AS_OF)
    out = write(first, tmp_path / "out" / "Transfers.csv.annotated.xlsx")
    ws = openpyxl.load_workbook(out)["Transfers"]
    # (cell, value, number format): each shows the CSV's characters
    for ref, value, fmt in [
        ("D2", 1250000, "#,##0.00"),
        ("D3", 500000, "General"),  # a plain number in a money column: General, not #,##0.00
        ("G2", dt.datetime(2026, 1, 5), "yyyy-mm-dd"),
        ("H2", 30000, '"$"#,##0'),
        ("I2", 27000, "General"),
        ("J2", "007", "General"),
        ("I3", "1.50", "General"),
        ("J3", "1e5", "General"),
    ]:
        assert (ws[ref].value, ws[ref].number_format) == (value, fmt), ref
    # dropped back in, the returned workbook is judged as the CSV was
    again = process(out, as_of=AS_OF)
    assert again.intake[0].status.tolist() == first.intake[0].status.tolist() == ["OK", "Flagged"]
    assert again.findings["Message"].tolist() == first.findings["Message"].tolist()


BEIP_HEADERS = (
    "Grant ID,Business Name,Agreement Date,Grant Form,Withholdings Percentage,Annual Withholdings ($),Grant Term (years),New Employees"
)
HOSTILE_BEIP = [
    # (row, the cells after the ID, the error the CSV's text gets: the returned workbook must get it too)
    ("B-1,Acme LLC,2006-03-01,Tax Credit,150%,3600000,10,450", "OUT_OF_RANGE"),  # 150%, never 1.5%
    ("B-2,Beta LLC,2006-03-01,Tax Credit,0.5,96.125,10,450", "BAD_TYPE"),  # ambiguous: 96.125 or 96,125
    ('B-3,Gamma LLC,2006-03-01,Tax Credit,0.5,35%,"1,000%",450', "BAD_TYPE"),  # a percent in money and years
    ("B-4,Delta LLC,2006-03-01,Tax Credit,0.5,1\u0662\u0663,10,450", "BAD_TYPE"),  # digits that are not ASCII
    ('B-5,Echo LLC,2006-03-01,Tax Credit,35%,"$3,600,000.00","10","1,000"', None),
]


def test_a_csv_dropped_back_as_its_returned_workbook_is_judged_as_it_was(tmp_path):
    src = tmp_path / "BEIP.csv"
    src.write_text("\n".join([BEIP_HEADERS, *(r for r, _ in HOSTILE_BEIP)]) + "\n", encoding="utf-8")
    first = process(src, as_of=AS_OF)
    errors = first.findings[first.findings["Severity"] == "error"]
    for (row, code), record in zip(HOSTILE_BEIP, ("B-1", "B-2", "B-3", "B-4", "B-5"), strict=True):
        assert (code in errors[errors["Record ID"] == record]["Code"].tolist()) if code else record not in errors["Record ID"].tolist(), row
    out = write(first, tmp_path / "out" / "BEIP.csv.annotated.xlsx")
    ws = openpyxl.load_workbook(out)["BEIP"]
    # written as Excel reads them where read alike: B-5's figures; the hostile texts stay text
    assert [ws[f"{c}6"].value for c in "EFGH"] == [0.35, 3600000, 10, 1000]
    assert [ws["E2"].value, ws["F3"].value, ws["F4"].value, ws["G4"].value] == ["150%", "96.125", "35%", "1,000%"]
    again = process(out, as_of=AS_OF)
    assert again.intake[0].status.tolist() == first.intake[0].status.tolist()
    assert again.findings["Message"].tolist() == first.findings["Message"].tolist()


def test_a_decision_written_in_the_workbook_returned_from_a_csv_covers_its_figures(tmp_path):
    # the CSV's text `1,250,000.00` and `$30,000` come back as numbers: the same figures, so an
    # `Approved` written in the returned workbook applies when it is dropped back, never stale
    inbox, outbox = tmp_path / "in", tmp_path / "out"
    csv_transfers(inbox / "Transfers.csv")
    first = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox), "--as-of", AS_OF.isoformat()])
    assert first.exit_code == 0, first.output
    wb = openpyxl.load_workbook(outbox / "Transfers.csv.annotated.xlsx")
    ws = wb["Transfers"]
    decision = [c.value for c in ws[1]].index("Reviewer Decision") + 1
    for r in (2, 3):
        ws.cell(r, decision).value, ws.cell(r, decision + 1).value = "Approved", "JD"
    wb.save(inbox / "Transfers.annotated.xlsx")
    again = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox), "--as-of", AS_OF.isoformat()])
    assert again.exit_code == 0, again.output
    back = process(outbox / "Transfers.annotated.xlsx", as_of=AS_OF)
    assert "REVIEW_DECISION_STALE" not in back.findings["Code"].tolist()
    assert [ws.cell(r, decision).value for r in (2, 3)] == ["Approved", "Approved"]
    returned = openpyxl.load_workbook(outbox / "Transfers.annotated.xlsx")["Transfers"]
    assert [returned.cell(r, decision).value for r in (2, 3)] == ["Approved", "Approved"]  # no ` (stale)`


# -- the returned workbooks of the samples --------------------------------------------------------


@pytest.fixture(scope="module")
def returned(tmp_path_factory) -> list[Path]:
    """The samples' returned workbooks, a CSV's, and the run report."""
    inbox = tmp_path_factory.mktemp("inbox")
    for sample in sorted((ROOT / "sample_inputs").glob("*.xlsx")):
        shutil.copy(sample, inbox / sample.name)
    csv_transfers(inbox / "transfers-export.csv")
    out = tmp_path_factory.mktemp("outbox")
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(out), "--as-of", AS_OF.isoformat()])
    assert result.exit_code == 0, result.output
    books = sorted(out.glob("*.xlsx"))
    assert len(books) == 6  # four samples, the CSV's, the run report
    return books


def widths_of(ws) -> dict[int, float]:
    """Each column's width (1-based), the default where none is set."""
    out = {}
    for dim in ws.column_dimensions.values():
        if dim.width and dim.min:
            for c in range(dim.min, (dim.max or dim.min) + 1):
                out[c] = dim.width
    return out


def header_row(ws) -> int | None:
    for r in range(1, 25):
        if any(ws.cell(r, c).value == "Status" for c in range(1, ws.max_column + 1)):
            return r
    return None


def test_no_cell_of_the_tool_on_an_intake_sheet_wraps_and_its_headers_fit(returned):
    checked = 0
    for path in returned:
        if path.name.startswith("run-"):
            continue
        wb = openpyxl.load_workbook(path)
        for ws in wb.worksheets:
            h = header_row(ws) if ws.title not in TOOL_SHEETS else None
            if h is None:
                continue
            headers = [ws.cell(h, c).value for c in range(1, ws.max_column + 1)]
            first = next(c for c, v in enumerate(headers, start=1) if v == "Status") - 1
            while first > 1 and ws.cell(h, first).fill.fgColor.rgb == ws.cell(h, first + 1).fill.fgColor.rgb:
                first -= 1  # the computed columns share the Status header's colour
            last = headers.index(TOOL_HEADERS_END) + 1
            widths = widths_of(ws)
            for c in range(first + 1, last + 1):
                header = ws.cell(h, c).value
                assert not ws.cell(h, c).alignment.wrap_text, (path.name, ws.title, header)
                need = sum(char_width(ch, True) for ch in header) + looks.MARGIN
                assert widths.get(c, 8.43) >= need, (path.name, ws.title, header, widths.get(c), need)
                for r in range(h + 1, ws.max_row + 1):
                    assert not ws.cell(r, c).alignment.wrap_text, (path.name, ws.title, get_column_letter(c), r)
                checked += 1
    assert checked > 50


def test_each_row_of_the_tools_sheets_is_as_tall_as_its_wrapped_text(returned):
    rows = 0
    for path in returned:
        wb = openpyxl.load_workbook(path)
        sheets = [ws for ws in wb.worksheets if ws.title in TOOL_SHEETS or path.name.startswith("run-")]
        for ws in sheets:
            widths = widths_of(ws)
            for row in ws.iter_rows():
                need = 1
                for cell in row:
                    if cell.value is None or not cell.alignment.wrap_text:
                        continue
                    need = max(need, greedy_lines(str(cell.value), widths.get(cell.column, 8.43), bool(cell.font.b)))
                height = ws.row_dimensions[row[0].row].height or looks.LINE_HEIGHT
                assert height >= need * looks.LINE_HEIGHT, (path.name, ws.title, row[0].row, height, need)
                rows += need > 1
    assert rows > 20  # rows of several lines were checked


# -- rendered by LibreOffice ----------------------------------------------------------------------


def tools_or_skip() -> tuple[str, str]:
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    pdftotext = shutil.which("pdftotext")
    fonts = subprocess.run(["fc-list"], capture_output=True, text=True).stdout if shutil.which("fc-list") else ""
    if soffice and pdftotext and "carlito" in fonts.lower():  # without Carlito, LibreOffice measures Calibri text in another font
        return soffice, pdftotext
    if os.environ.get("NJC_REQUIRE_RENDER"):
        pytest.fail("LibreOffice, pdftotext and Carlito are needed to render the samples; .ci/run installs them")
    pytest.skip("LibreOffice, pdftotext (poppler-utils) or Carlito (fonts-crosextra-carlito) not installed")


XHTML = "{http://www.w3.org/1999/xhtml}"


def words_by_page(bbox_html: Path) -> list[list[tuple[float, float, float, float, str]]]:
    text = re.sub(r"<!DOCTYPE[^>]*>", "", bbox_html.read_text(encoding="utf-8"))
    root = ElementTree.fromstring(text)
    return [
        [
            (float(w.get("xMin")), float(w.get("yMin")), float(w.get("xMax")), float(w.get("yMax")), w.text or "")
            for w in p.iter(f"{XHTML}word")
        ]
        for p in root.iter(f"{XHTML}page")
    ]


def printed_over(words) -> list[tuple]:
    """Pairs of words of different lines drawn over each other: text that ran out of its row (a
    wrapped cell taller than its row, a header over the first row). Two lines of one wrapped cell
    overlap a little (their boxes are the font's, taller than the line spacing), a few points;
    words on one line (a text cut by the next cell) are never counted."""
    out = []
    ordered = sorted(words, key=lambda w: w[1])
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if b[1] >= a[3]:
                break
            if abs(a[1] - b[1]) < 2:
                continue
            dx = min(a[2], b[2]) - max(a[0], b[0])
            dy = min(a[3], b[3]) - max(a[1], b[1])
            if dx > 1 and dy > 6:
                out.append((a[4], b[4]))
    return out


def test_every_page_rendered_shows_no_text_over_other_text(returned, tmp_path):
    soffice, pdftotext = tools_or_skip()
    pdfs = tmp_path / "pdf"
    proc = subprocess.run(
        [soffice, "--headless", f"-env:UserInstallation=file://{tmp_path}/lo-profile", "--convert-to", "pdf", "--outdir", str(pdfs)]
        + [str(p) for p in returned],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    pages = 0
    for path in returned:
        pdf = pdfs / (path.stem + ".pdf")
        html = pdf.with_suffix(".html")
        subprocess.run([pdftotext, "-bbox-layout", str(pdf), str(html)], check=True, timeout=120)
        for n, words in enumerate(words_by_page(html), start=1):
            assert printed_over(words) == [], (path.name, n)
            pages += 1
    assert pages > 30


def test_the_detector_sees_text_printed_over_other_text():
    # two lines 4 points apart over the same columns (a wrapped cell running into the next row): found;
    # two lines of one wrapped cell (11 points apart, boxes 14.3 tall) and a cut text beside its neighbour: not
    over = [(50, 100, 90, 114.3, "2014"), (50, 104, 80, 118.3, "text")]
    wrapped = [(50, 100, 90, 114.3, "one"), (50, 111, 80, 125.3, "two")]
    cut = [(50, 100, 390, 114.3, "long"), (384, 100, 418, 114.3, "Flagged")]
    assert printed_over(over) == [("2014", "text")]
    assert printed_over(wrapped) == [] and printed_over(cut) == []
