"""The cell encoder (batch.workbook.cells) against xlsxwriter, the reference: the same values written both
ways read back equal with python-calamine and with openpyxl; and what the format cannot hold
(U+FFFE/U+FFFF, text over 32,767 UTF-16 units, dates outside 1900-01-01..9999-12-31, NaN and
infinities) comes back as the contract says."""

from __future__ import annotations

import datetime as dt
import io
import math
import re
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
import python_calamine
import xlsxwriter
from defusedxml import ElementTree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batch.workbook import cells, sheetxml
from batch.workbook.xlsxwriter_private import check_version, closed_parts, excel_serial, parts_in_memory, utf16_len, xf_index

OPTIONS = {"constant_memory": True, "strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False}


def _formats(wb):
    return wb.add_format({"num_format": "yyyy-mm-dd"}), wb.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})


def write_encoded(path: Path, values: list) -> Path:
    """One column of values, written by the encoder (spliced into an xlsxwriter workbook)."""
    wb = xlsxwriter.Workbook(str(path), OPTIONS)
    wb.add_worksheet("S")
    date, stamp = _formats(wb)
    n = len(values)
    styles = {
        "plain": np.full(n, "", dtype=object),
        "date": np.full(n, f' s="{xf_index(date)}"', dtype=object),
        "datetime": np.full(n, f' s="{xf_index(stamp)}"', dtype=object),
        "time": np.full(n, f' s="{xf_index(stamp)}"', dtype=object),
    }
    numbers = np.arange(1, n + 1).astype(str).astype(object)
    xml = cells.input_cells(np.array(values + [None], dtype=object)[:n], "A" + numbers, styles)
    body = "".join(('<row r="' + numbers + '">' + xml + "</row>").tolist()).encode("utf-8")
    wb.close()
    sheetxml.splice(path, {"xl/worksheets/sheet1.xml": (lambda: iter([body]), f"A1:A{max(n, 1)}")})
    return path


def write_reference(path: Path, values: list) -> Path:
    """The same column written by xlsxwriter's own `write_*` methods."""
    wb = xlsxwriter.Workbook(str(path), OPTIONS)
    ws = wb.add_worksheet("S")
    date, stamp = _formats(wb)
    for r, v in enumerate(values):
        if isinstance(v, bool):
            ws.write_boolean(r, 0, v)
        elif isinstance(v, str):
            ws.write_string(r, 0, v)
        elif isinstance(v, dt.datetime):
            ws.write_datetime(r, 0, v, stamp if (v.hour or v.minute or v.second or v.microsecond) else date)
        elif isinstance(v, dt.date):
            ws.write_datetime(r, 0, v, date)
        elif isinstance(v, (int, float)):
            ws.write_number(r, 0, v)
    wb.close()
    return path


def read_calamine(path: Path) -> list:
    rows = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name("S").to_python(skip_empty_area=False)
    return [r[0] if r else "" for r in rows]


def read_openpyxl(path: Path) -> list:
    wb = openpyxl.load_workbook(path)
    return [c.value for c in wb["S"]["A"]]


def parse_every_part(path: Path) -> None:
    """Every XML part of the workbook is well-formed (a raw U+FFFF, for one, is not)."""
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith((".xml", ".rels", ".vml")):
                ElementTree.fromstring(z.read(name))


# Text the format must escape: control characters, escape-like text, the two non-characters,
# leading and trailing spaces, XML's own characters, characters outside the BMP.
TRICKY = st.sampled_from(
    ["_x0041_", "_X00e9_", "_x005F_", "_x005F", "\r", "\x00", "\x1f", "\x0b", "\t", "\n", " ", "&", "<", ">", '"', "😀", "é", "_"]
)
TEXT = st.lists(st.one_of(TRICKY, st.text(max_size=8)), max_size=8).map("".join).filter(lambda s: s != "")
# a number xlsxwriter writes exactly (it keeps 16 significant digits, the encoder the shortest exact text)
NUMBER = st.one_of(st.integers(-(10**15), 10**15), st.floats(allow_nan=False, allow_infinity=False, width=64)).filter(
    lambda x: float(f"{x:.16G}") == x
)
DATE = st.dates(dt.date(1900, 1, 1), dt.date(9999, 12, 31))
# xlsxwriter adds Excel's 1900-02-29 to any serial above 59, so a time on 1900-02-28 is one day late
# there (59.5 is 1900-02-28 12:00 in Excel); the encoder is checked on that day separately below
DATETIME = st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)).filter(lambda d: d.date() != dt.date(1900, 2, 28))
VALUE = st.one_of(TEXT, NUMBER, DATE, DATETIME.map(lambda d: d.replace(microsecond=0)), st.booleans())


# escape-like text sharing its underscore with the next (`_x005F_x0041_`), or followed by a character
# written as an escape (`_x005F` then a carriage return): xlsxwriter protects neither, so its file
# reads back as `_x005FA` and `_x000D_`; the encoder protects both
SHARED_UNDERSCORE = re.compile(r"_x[0-9a-fA-F]{4}(?:_x[0-9a-fA-F]{4}_|[\x00-\x08\x0b-\x1f\ufffe\uffff])")


def as_calamine_reads(text: str) -> str:
    """What calamine gives back for text written exactly: the two non-characters as their escapes."""
    return text.replace("\ufffe", "_xFFFE_").replace("\uffff", "_xFFFF_")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(VALUE, min_size=1, max_size=12))
def test_encoder_reads_back_as_xlsxwriter_writes(tmp_path, values):
    ours = write_encoded(tmp_path / "ours.xlsx", values)
    parse_every_part(ours)
    back = read_calamine(ours)
    # text exactly as it was (calamine decodes the escapes as Excel does); the other values are
    # compared with xlsxwriter's below
    texts = [(b, as_calamine_reads(v)) for v, b in zip(values, back, strict=True) if isinstance(v, str)]
    assert [b for b, _ in texts] == [t for _, t in texts]
    same = [not (isinstance(v, str) and SHARED_UNDERSCORE.search(v)) for v in values]
    theirs = write_reference(tmp_path / "theirs.xlsx", values)
    pick = lambda xs: [x for x, keep in zip(xs, same, strict=True) if keep]  # noqa: E731
    assert pick(back) == pick(read_calamine(theirs))
    assert pick(read_openpyxl(ours)) == pick(read_openpyxl(theirs))


@pytest.mark.parametrize(
    "value",
    [
        "_x0041_",  # escape-like text stays as typed (xlsxwriter: _x005F_x0041_)
        "_x005F_x0041_",  # two sharing an underscore (xlsxwriter's file reads back as _x005FA)
        "a_x00411_x0042_b_X00e9_",
        "_x005F\r",  # escape-like text, then a character written as an escape
        "_x0041\x01_x0041_",
        "a\rb",
        "\x01=cmd",
        "  leading and trailing  ",
        "x" * 32_767,  # at the limit: whole
        "😀" * 16_383 + "x",  # 32,767 UTF-16 units: whole
        "=SUM(A1:A2)",
        "1,250,000",
    ],
)
def test_text_comes_back_exactly(tmp_path, value):
    back = read_calamine(write_encoded(tmp_path / "t.xlsx", [value]))
    assert back == [value]


@pytest.mark.parametrize(
    "value,expected",
    [
        # 32,768 characters: one over the limit, cut to 32,767
        ("x" * 32_768, "x" * 32_767),
        ("x" * 40_000, "x" * 32_767),
        # 16,384 emoji are 32,768 UTF-16 units: cut to 16,383 emoji (32,766 units), never half a character
        ("😀" * 16_384, "😀" * 16_383),
        # 32,766 + 2 = 32,768 units: the emoji does not fit and is not split
        ("x" * 32_766 + "😀", "x" * 32_766),
    ],
)
def test_text_over_excels_limit_is_cut_to_it(tmp_path, value, expected):
    back = read_calamine(write_encoded(tmp_path / "t.xlsx", [value]))
    assert back == [expected] and utf16_len(back[0]) <= cells.MAX_TEXT


@pytest.mark.parametrize("value,expected", [("a\ufffeb", "a_xFFFE_b"), ("\uffff", "_xFFFF_")])
def test_non_characters_come_back_as_their_escapes(tmp_path, value, expected):
    path = write_encoded(tmp_path / "t.xlsx", [value])
    parse_every_part(path)  # a raw U+FFFF would make the part malformed
    assert read_calamine(path) == [expected]  # calamine leaves these two escapes as they are


@pytest.mark.parametrize(
    "value,serial",
    [
        # Excel's serials: 1 = 1900-01-01; 60 is Excel's 1900-02-29, so 1900-03-01 is 61
        (dt.date(1900, 1, 1), 1),
        (dt.date(1900, 1, 15), 15),
        (dt.date(1900, 2, 28), 59),
        (dt.datetime(1900, 2, 28, 12), 59.5),  # xlsxwriter writes 60.5 here (Excel's 1900-02-29 12:00)
        (dt.date(1900, 3, 1), 61),
        (dt.date(2016, 3, 31), 42460),
        (dt.date(9999, 12, 31), 2958465),
        (dt.datetime(9999, 12, 31, 18), 2958465.75),
    ],
)
def test_dates_are_excel_serials(tmp_path, value, serial):
    path = write_encoded(tmp_path / "d.xlsx", [value])
    with zipfile.ZipFile(path) as z:
        sheet = ElementTree.fromstring(z.read("xl/worksheets/sheet1.xml"))
    (v,) = sheet.iter("{http://schemas.openxmlformats.org/spreadsheetml/2006/main}v")
    assert float(v.text) == serial
    assert openpyxl.load_workbook(path)["S"]["A1"].is_date
    if value != dt.datetime(1900, 2, 28, 12):
        assert excel_serial(value) == serial  # the reference agrees


@pytest.mark.parametrize(
    "value,text",
    [
        (dt.date(1899, 12, 31), "1899-12-31"),  # the day before Excel's first
        (dt.datetime(1850, 6, 1, 10, 30), "1850-06-01 10:30:00"),
        (np.datetime64("10000-01-01"), "10000-01-01"),  # the day after Excel's last
        (pd.Timestamp("1677-09-22"), "1677-09-22"),
    ],
)
def test_dates_excel_cannot_hold_come_back_as_iso_text(tmp_path, value, text):
    assert read_calamine(write_encoded(tmp_path / "d.xlsx", [value])) == [text]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_numbers_that_are_not_finite_come_back_blank(tmp_path, value):
    path = write_encoded(tmp_path / "n.xlsx", ["before", value, "after"])
    assert read_calamine(path) == ["before", "", "after"]


@pytest.mark.parametrize(
    "value,expected",
    [
        (0.1 + 0.2, 0.30000000000000004),  # 17 significant digits kept (xlsxwriter keeps 16: 0.3)
        (1e15, 1e15),
        (123456789012345678.0, 123456789012345678.0),
        (-0.0, 0.0),
        (5e-324, 5e-324),
        (True, True),
    ],
)
def test_numbers_come_back_as_the_same_double(tmp_path, value, expected):
    assert read_calamine(write_encoded(tmp_path / "n.xlsx", [value])) == [expected]


def test_flagged_blank_cells_are_styled_empty_cells():
    refs = np.array(["A1", "A2", "A3"], dtype=object)
    plain = np.array([' s="7"', ' s="7"', ""], dtype=object)
    styles = {k: plain for k in ("plain", "date", "datetime", "time")}
    xml = cells.input_cells(np.array(["", None, ""], dtype=object), refs, styles, flagged=np.array([True, True, True]))
    # a cell with a fill and no value; where there is no style there is nothing to write
    assert xml.tolist() == ['<c r="A1" s="7"/>', '<c r="A2" s="7"/>', ""]


@pytest.mark.parametrize("version,ok", [("3.2.0", True), ("3.3.1", True), ("3.10", True), ("3.1.9", False), ("4.0.0", False)])
def test_xlsxwriter_versions_outside_the_tested_range_are_refused(version, ok):
    if ok:
        check_version(version)
    else:
        with pytest.raises(RuntimeError, match="xlsxwriter"):
            check_version(version)


def _small_book(target, fail: bool = False):
    """A constant-memory workbook of two sheets, parts assembled in memory, as the tool makes its own;
    `fail`: one whose closing raises (a chart with no series)."""
    wb = xlsxwriter.Workbook(target, {"constant_memory": True})
    parts_in_memory(wb)
    wb.set_properties({"created": dt.datetime(2026, 11, 30)})  # the same properties at any second
    ws = wb.add_worksheet("Findings")
    ws.write_string(0, 0, "Code", wb.add_format({"bold": True}))
    ws.write_number(1, 0, 1.5)
    wb.add_worksheet("Rules").write_string(0, 0, "C.34:1B-248")
    if fail:
        wb.add_worksheet("Chart").insert_chart(0, 0, wb.add_chart({"type": "bar"}))
    return wb


@pytest.mark.parametrize("fail", [False, True])
def test_a_workbook_closed_in_memory_gives_the_parts_a_file_holds(tmp_path, fail):
    """`closed_parts`: the parts by name, the same bytes as the workbook written to a file gives
    them; xlsxwriter's zip method is ZIP_DEFLATED again afterwards, even when closing raises."""
    import xlsxwriter.exceptions
    import xlsxwriter.workbook

    if fail:
        with pytest.raises(xlsxwriter.exceptions.EmptyChartSeries):
            closed_parts(_small_book(io.BytesIO(), fail=True))
    else:
        _small_book(str(tmp_path / "file.xlsx")).close()
        with zipfile.ZipFile(tmp_path / "file.xlsx") as z:
            on_file = {n: z.read(n) for n in z.namelist()}
            assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_DEFLATED}
        parts = closed_parts(_small_book(io.BytesIO()))
        assert list(parts) == list(on_file) and parts == on_file
        assert "xl/worksheets/sheet2.xml" in parts  # two sheets: 17 parts in all, none left out
    assert xlsxwriter.workbook.ZIP_DEFLATED == zipfile.ZIP_DEFLATED
    _small_book(str(tmp_path / "after.xlsx")).close()  # a workbook closed after it is deflated as before
    with zipfile.ZipFile(tmp_path / "after.xlsx") as z:
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_DEFLATED}


@pytest.mark.parametrize("n,letters", [(0, "A"), (25, "Z"), (26, "AA"), (27, "AB"), (701, "ZZ"), (702, "AAA"), (16_383, "XFD")])
def test_column_letters(n, letters):
    assert cells.column_letters(n) == letters


# --- U+FFFE and U+FFFF in every part the tool writes --------------------------------------------

NONCHAR = ("\ufffe", "\uffff")


def _every_part_clean(outbox: Path) -> list[str]:
    """The parts of every workbook in `outbox` (returned workbooks and the run report) that do not
    parse with lxml or hold a raw U+FFFE or U+FFFF."""
    from lxml import etree

    bad = []
    for path in sorted(outbox.rglob("*.xlsx")):
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                data = z.read(name)
                if any(c.encode() in data for c in NONCHAR):
                    bad.append(f"{path.name}:{name} holds a raw U+FFFE/U+FFFF")
                if re.search(r"\.(xml|rels|vml)$", name):
                    try:
                        etree.fromstring(data)
                    except etree.XMLSyntaxError as err:
                        bad.append(f"{path.name}:{name} {err}")
    return bad


TRANSFER_HEADERS = [
    "Transfer ID",
    "Program",
    "Certificate ID",
    "Certificate Amount ($)",
    "Transferor",
    "Transferee",
    "Transfer Date",
    "Credit Amount Transferred ($)",
    "Consideration Received ($)",
]


def _nonchar_rows(f: str, g: str) -> tuple[list, list[list]]:
    # an unknown header (UNKNOWN_COLUMN quotes it), a record ID (the Findings sheet's Record ID), a
    # bad amount (BAD_TYPE quotes it in the message and the cell's note), a bad code (BAD_CODE)
    headers = [*TRANSFER_HEADERS, f"Note{f}"]
    rows = [
        [f"T-1{f}", "Grow NJ", f"C-1{g}", 500_000, f"A{f}", "B", "2026-01-05", f"30000{f}", 27_000, f"n{g}"],
        ["T-2", f"Grow NJ{f}", "C-2", 500_000, "A", "B", "2026-01-05", 40_000, 44_000, "x"],
    ]
    return headers, rows


def _run(inbox: Path, outbox: Path):
    from click.testing import CliRunner

    from batch.cli import main

    ledger = inbox.parent / "l.sqlite"
    return CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox), "--ledger", str(ledger), "--as-of", "2026-11-30"])


def test_nonchars_of_a_workbook_returned_in_place_come_back_as_escapes(tmp_path):
    """A workbook whose cells hold raw U+FFFE/U+FFFF (malformed XML that calamine and LibreOffice
    read) comes back with `_xFFFE_`/`_xFFFF_` in every part: the user's cells, the headers, a
    sheet the tool does not read, the findings, notes, Summary, Run and the run report."""
    inbox, outbox = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    headers, rows = _nonchar_rows("QQF", "QQG")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Transfers"
    for r in [headers, *rows]:
        ws.append(r)
    wb.create_sheet("Other").append(["hello QQF", "QQG"])
    wb.save(tmp_path / "src.xlsx")
    with zipfile.ZipFile(tmp_path / "src.xlsx") as z, zipfile.ZipFile(inbox / "book.xlsx", "w") as out:
        for info in z.infolist():
            out.writestr(info, z.read(info.filename).replace(b"QQF", "\ufffe".encode()).replace(b"QQG", "\uffff".encode()))
    run = _run(inbox, outbox)
    assert run.exit_code == 0, run.output
    assert _every_part_clean(outbox) == []
    returned = outbox / "book.annotated.xlsx"
    openpyxl.load_workbook(returned)  # openpyxl refuses a part holding a raw one
    grid = python_calamine.CalamineWorkbook.from_path(str(returned)).get_sheet_by_name("Transfers").to_python()
    assert grid[1][0] == "T-1_xFFFE_" and grid[1][2] == "C-1_xFFFF_" and grid[0][9] == "Note_xFFFE_"
    other = python_calamine.CalamineWorkbook.from_path(str(returned)).get_sheet_by_name("Other").to_python()
    assert other[0] == ["hello _xFFFE_", "_xFFFF_"]


def test_nonchars_of_a_csv_come_back_as_escapes(tmp_path):
    """The same text in a CSV (a workbook written anew), its file name holding them too."""
    import csv

    inbox, outbox = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    headers, rows = _nonchar_rows(*NONCHAR)
    with (inbox / "tr\ufffex\uffff.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(headers)
        w.writerows(rows)
    run = _run(inbox, outbox)
    assert run.exit_code == 0, run.output
    assert _every_part_clean(outbox) == []


@pytest.mark.parametrize("cut", [1, 2, 3, 4, 5])
def test_a_nonchar_split_between_chunks_is_escaped(cut):
    from batch.workbook.inplace import without_nonchars

    data = "a\ufffeb\uffffc".encode()  # a, EF BF BE, b, EF BF BF, c
    chunks = [data[:cut], data[cut:]]
    assert b"".join(without_nonchars(chunks)) == b"a_xFFFE_b_xFFFF_c"


@pytest.mark.parametrize(
    "chunks,want",
    [
        ([b"<c>plain</c>", b"", b"<c>x</c>"], b"<c>plain</c><c>x</c>"),  # no EF byte: the chunks as they are
        (["\uff01\ufffd".encode(), b"z"], "\uff01\ufffd".encode() + b"z"),  # EF BC 81, EF BF BD: characters, kept
        ([b"a\xef\xbf", b"\xbe"], b"a_xFFFE_"),  # split after two bytes, the rest in a chunk of no EF byte
        ([b"a\xef", b"\xbf\xbf", b"b"], b"a_xFFFF_b"),  # split after one
        ([b"x\xef\xbf"], b"x\xef\xbf"),  # the part ends inside a character: its bytes as they are
    ],
)
def test_only_the_two_nonchars_are_escaped_whatever_the_chunks_hold(chunks, want):
    from batch.workbook.inplace import without_nonchars

    assert b"".join(without_nonchars(chunks)) == want


WHITE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2000", "\u2028", "\u3000"]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from([*WHITE, "a", "_", "&"]), max_size=12))
def test_the_joined_search_for_edge_space_finds_what_the_plain_pattern_finds(text):
    # the search that tells whether any text of a column may begin or end with white space
    # (`text` then checks each) is written for speed; it finds exactly what `\n\s|\s\n` finds
    assert (cells.EDGE_SPACE_JOINED.search(text) is None) == (re.search(r"\n\s|\s\n", text) is None)
    assert cells._has_xml_chars(text) == (re.search(r"[&<>]", text) is not None)


def test_a_part_written_in_pieces_behind_its_making_is_the_same_bytes(tmp_path):
    chunks = [f'<row r="{i}"><c><v>{i}</v></c></row>'.encode() * (i % 7) for i in range(20_000)]
    plain, behind = tmp_path / "plain.zip", tmp_path / "behind.zip"
    with zipfile.ZipFile(plain, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("part.xml", b"".join(chunks))
    with zipfile.ZipFile(behind, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        sheetxml.stream(z, zipfile.ZipInfo("part.xml"), sheetxml.batched(iter(chunks), size=4096), 1)
    with zipfile.ZipFile(plain) as a, zipfile.ZipFile(behind) as b:
        assert a.read("part.xml") == b.read("part.xml")


def test_an_error_while_a_part_is_made_is_raised_and_the_writer_stops():
    written = []

    def pieces():
        yield b"a"
        yield b"b"
        raise ValueError("the maker failed")

    with pytest.raises(ValueError, match="the maker failed"):
        sheetxml.write_behind(written.append, pieces())
    assert written == [b"a", b"b"]


def test_an_error_while_a_part_is_written_is_raised_to_the_maker():
    def write(piece):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        sheetxml.write_behind(write, iter([b"a"] * 100))


def test_a_part_is_written_in_place_when_no_thread_can_be_started(monkeypatch):
    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(sheetxml.threading.Thread, "start", refuse)
    written = []
    sheetxml.write_behind(written.append, iter([b"a", b"b", b"c"]))
    assert written == [b"a", b"b", b"c"]


@pytest.mark.parametrize("pieces", [[], [b"one"], [b"a", b"b"], [b"a", b"b", b"c"]])
def test_a_part_of_one_piece_is_written_without_a_thread(monkeypatch, pieces):
    # two pieces or more: written by the part-writer thread, beside the maker; one or none: here
    started = []
    start = sheetxml.threading.Thread.start
    monkeypatch.setattr(sheetxml.threading.Thread, "start", lambda self: (started.append(self.name), start(self))[1])
    written = []
    sheetxml.write_behind(written.append, iter(pieces))
    assert written == pieces
    assert started == (["part-writer"] if len(pieces) > 1 else [])


# (case, a computed column, how computed_cells writes it): text where every value is a str, else
# numbers; blank where missing; a column without a missing value is written as it is
COMPUTED_CASES = [
    (
        "text",
        pd.Series(["a", "b"], dtype=object),
        ['<c r="Q2" s="9" t="inlineStr"><is><t>a</t></is></c>', '<c r="Q3" s="9" t="inlineStr"><is><t>b</t></is></c>'],
    ),
    ("text held as str", pd.Series(["a", None], dtype="str"), ['<c r="Q2" s="9" t="inlineStr"><is><t>a</t></is></c>', ""]),
    ("text and a number: numbers", pd.Series(["7", 7.5], dtype=object), ['<c r="Q2" s="9"><v>7</v></c>', '<c r="Q3" s="9"><v>7.5</v></c>']),
    ("whole numbers", pd.Series([3, None], dtype="Int64"), ['<c r="Q2" s="9"><v>3</v></c>', ""]),
    ("not finite", pd.Series([float("inf"), 0.25]), ["", '<c r="Q3" s="9"><v>0.25</v></c>']),
    ("flags as numbers", pd.Series([True, False], dtype="boolean"), ['<c r="Q2" s="9"><v>1</v></c>', '<c r="Q3" s="9"><v>0</v></c>']),
    (
        "categories of text",
        pd.Series(["x", "y"], dtype="category"),
        ['<c r="Q2" s="9" t="inlineStr"><is><t>x</t></is></c>', '<c r="Q3" s="9" t="inlineStr"><is><t>y</t></is></c>'],
    ),
]


@pytest.mark.parametrize("values, expected", [c[1:] for c in COMPUTED_CASES], ids=[c[0] for c in COMPUTED_CASES])
def test_computed_cells_text_or_numbers(values, expected):
    refs = np.array(["Q2", "Q3"], dtype=object)
    assert cells.computed_cells(values, refs, ' s="9"', cents=False).tolist() == expected


# (cents, the cells): money from integer cents, to the cent; blank where missing
CENTS_CASES = [
    ([2_500_000, None], ['<c r="Q2" s="9"><v>25000</v></c>', ""]),  # $25,000.00 exactly
    ([2_499_999, -1], ['<c r="Q2" s="9"><v>24999.99</v></c>', '<c r="Q3" s="9"><v>-0.01</v></c>']),  # a cent below; minus a cent
    ([7_500_005, 5], ['<c r="Q2" s="9"><v>75000.05</v></c>', '<c r="Q3" s="9"><v>0.05</v></c>']),
    ([150, 0], ['<c r="Q2" s="9"><v>1.50</v></c>', '<c r="Q3" s="9"><v>0</v></c>']),  # 50 cents keep their 0; none: no point
    ([-250_099, 199], ['<c r="Q2" s="9"><v>-2500.99</v></c>', '<c r="Q3" s="9"><v>1.99</v></c>']),
    ([None, -100], ["", '<c r="Q3" s="9"><v>-1</v></c>']),
]


@pytest.mark.parametrize("cents, expected", CENTS_CASES)
def test_computed_cells_money_from_cents(cents, expected):
    refs = np.array(["Q2", "Q3"], dtype=object)
    assert cells.computed_cells(pd.Series(cents, dtype="Int64"), refs, ' s="9"', cents=True).tolist() == expected


@pytest.mark.parametrize(
    "char,control",
    [
        ("\x00", True),
        ("\x08", True),  # the last before tab
        ("\t", False),  # tab and line feed are text
        ("\n", False),
        ("\x0b", True),  # the first after line feed
        ("\r", True),  # carriage return is escaped (XML readers turn it into a line feed)
        ("\x1f", True),  # the last control character
        (" ", False),  # \x20, the first after it
        ("\x7f", False),  # DEL is a character XML holds
        ("\ufffd", False),
        ("\ufffe", True),  # the two non-characters
        ("\uffff", True),
        ("\U00010000", False),
    ],
)
def test_the_control_character_search_finds_what_the_character_class_does(char, control):
    for text in (char, f"a{char}", f"{char}b", f"a\n{char}\nb"):
        assert bool(cells.CONTROL_ANY.search(text)) is control
        assert cells._has_control(text) is bool(cells.CONTROL_ANY.search(text)), repr(text)


def test_the_control_characters_searched_for_are_every_one_the_character_class_matches():
    every = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]  # every character but the surrogates
    assert [c for c in every if cells.CONTROL_ANY.match(c)] == list(cells.CONTROL_CHARS)


@pytest.mark.parametrize(
    "kind,args,expected",
    [
        # a text, one style for every cell; a leading space keeps its `xml:space="preserve"`; & escaped
        (
            "strings",
            (["a & b", " x"], ["A2", "A3"], ' s="4"'),
            [
                '<c r="A2" s="4" t="inlineStr"><is><t>a &amp; b</t></is></c>',
                '<c r="A3" s="4" t="inlineStr"><is><t xml:space="preserve"> x</t></is></c>',
            ],
        ),
        ("strings", (["q"], ["B9"], [""]), ['<c r="B9" t="inlineStr"><is><t>q</t></is></c>']),  # a style per cell, none
        ("numbers", (["12.5", "-3"], ["C2", "C3"], [' s="1"', ""]), ['<c r="C2" s="1"><v>12.5</v></c>', '<c r="C3"><v>-3</v></c>']),
        ("blanks", (["D2", "D3"], [' s="7"', ""]), ['<c r="D2" s="7"/>', ""]),  # a blank without a style: no cell
        ("strings", ([], [], ' s="4"'), []),
    ],
)
def test_the_cells_texts(kind, args, expected):
    values, *rest = args
    made = getattr(cells, kind)(
        *([pd.Series(values, dtype=object)] if kind == "strings" else [np.array(values, dtype=object)]),
        *(np.array(a, dtype=object) if isinstance(a, list) else a for a in rest),
    )
    assert made.dtype == object and made.tolist() == expected


def test_a_link_to_a_cell_is_a_formula_showing_its_address():
    made = cells.links(pd.Series(["Transfers!H12", None, "'A \"q\"'!B2"]), np.array(["G2", "G3", "G4"], dtype=object), ' s="3"')
    assert made.tolist() == [
        '<c r="G2" s="3" t="str"><f>HYPERLINK("#Transfers!H12","Transfers!H12")</f><v>Transfers!H12</v></c>',
        "",  # no address: blank
        '<c r="G4" s="3" t="str"><f>HYPERLINK("#\'A ""q""\'!B2","\'A ""q""\'!B2")</f><v>\'A "q"\'!B2</v></c>',
    ]
