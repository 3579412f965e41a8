"""Dates far outside the programs' years, and money text with commas (README "The intake workbook").

- Any date a cell can hold (1900-01-01 .. 9999-12-31, "no end date") is read as that date and
  judged by the rules; a cell that cannot be a date is BAD_TYPE for that cell only. Typed dates are
  `datetime64[s]`, never nanoseconds (which end at 2262-04-11).
- A comma in number text is only a thousands separator in groups of three; a decimal comma is
  BAD_TYPE, never another amount. Money is rounded to the cent half up on the decimal as typed.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib

import numpy as np
import openpyxl
import pandas as pd
import pytest
import python_calamine
import samples as S
from click.testing import CliRunner
from conftest import ROOT, write_workbook

from batch.cli import main
from batch.pipeline import process
from batch.programs import PROGRAMS
from batch.programs.transfers.sheet import TRANSFERS
from batch.workbook import cells as encoder
from validators import coerce
from validators.schema import validate

D = dt.date
FAR = D(9999, 12, 31)
EARLY = D(1900, 1, 1)


def cells(*values) -> pd.Series:
    return pd.Series(list(values), dtype=object)


def one(fn, cell):
    value, bad = fn(cells(cell))[:2]
    return value[0], bool(bad.iloc[0])


# --- money text: commas ---------------------------------------------------------------------

MONEY_TEXT = [
    # (cell, cents, or None when the cell is BAD_TYPE)
    ("1,250,000", 125_000_000),
    ("$1,250.50", 125_050),
    ("$1,250,000.07", 125_000_007),
    ("1,250", 125_000),
    ("999", 99_900),
    ("12,345,678.9", 1_234_567_890),
    ("1,250.", 125_000),
    ("-$1,250.50", -125_050),
    ("$-1,250.50", -125_050),
    ("+1,000", 100_000),
    ("(1,000)", -100_000),
    ("($1,000.25)", -100_025),
    ("$(1,000)", -100_000),
    (" $ 1 250 000 ", 125_000_000),
    (".5", 50),
    ("1e3", 100_000),
    ("1.25E+06", 125_000_000),
    # a comma that is not a thousands separator in groups of three: never read as another amount
    ("1.250,00", None),
    ("1,2", None),
    ("30000,00", None),
    ("1,25,000", None),
    ("12,50", None),
    ("1,250,00", None),
    ("1,2500", None),
    ("1250,000", None),
    ("4.500.000,00", None),
    (",250", None),
    ("1,250,", None),
    ("1,,250", None),
    ("1,250e3", None),
    ("0,005", None),  # a first group of 0 is no thousands separator
    ("012,345", None),
    ("0,250.00", None),
    ("$1.250,50", None),
    # other text
    ("5$", None),
    ("$$5", None),
    ("-$-5", None),
    ("(-5)", None),
    ("USD 5", None),
    ("$", None),
]


@pytest.mark.parametrize("cell,cents", MONEY_TEXT)
def test_money_text_commas(cell, cents):
    value, bad = one(coerce.money, cell)
    assert bad is (cents is None)
    assert pd.isna(value) if cents is None else value == cents


@pytest.mark.parametrize(
    "kind,cell,bad",
    [
        ("integer", "1,200", False),
        ("integer", "1,2", True),
        ("integer", "1.200,0", True),
        ("number", "10,000.5", False),
        ("number", "10000,5", True),
        ("percent", "35,5%", True),
        ("percent", "35.5%", False),
    ],
)
def test_the_comma_rule_holds_for_counts_and_percents_too(kind, cell, bad):
    assert getattr(coerce, kind)(cells(cell))[1].iloc[0] is np.bool_(bad)


# --- money rounding: half up on the decimal as typed ------------------------------------------

MONEY_ROUNDING = [
    # (cell, cents): text and numbers alike. Text with exactly three digits after a lone point
    # (`0.005`) is ambiguous and never read (POINT_THOUSANDS below): the text cases carry four.
    ("0.0050", 1),
    (0.005, 1),
    ("2.6750", 268),  # the float 2.675 is 2.67499999...: rounded on the decimal, not the float
    (2.675, 268),
    ("0.0150", 2),
    (0.015, 2),
    ("0.0250", 3),  # not to even
    (0.025, 3),
    ("1.0050", 101),
    (1.005, 101),
    ("1,234.565", 123_457),
    (1234.565, 123_457),
    ("0.0049999999999999999999", 0),  # as typed, below the half cent
    ("0.00500000000000000000001", 1),
    ("0.0040", 0),
    (0.004, 0),
    ("2.6740", 267),
    ("2.6751", 268),
    ("2.675e0", 268),
    (0.1 + 0.2, 30),
    (1_250_000.5, 125_000_050),
    ("$999,999,999,999.994", 99_999_999_999_999),
    # half up is toward the larger amount, as every other rounding to the cent (batch.programs._kit.exact.Q.cents)
    ("-0.0050", 0),
    ("(2.6750)", -267),
    ("-2.6760", -268),
]


@pytest.mark.parametrize("cell,cents", MONEY_ROUNDING)
def test_money_rounds_half_up_on_the_decimal_as_typed(cell, cents):
    value, bad = one(coerce.money, cell)
    assert not bad and value == cents


def test_money_rounding_matches_the_exact_arithmetic():
    from fractions import Fraction

    from batch.programs._kit.exact import Q

    typed = ["0.0050", "2.6750", "0.0150", "0.0250", "1.0050", "-0.0050", "-2.6750", "7.1250", "123.4550"]
    value, _ = coerce.money(cells(*typed))
    exact = Q.from_fractions([Fraction(t) * 100 for t in typed]).cents()
    assert list(value) == list(exact)


@pytest.mark.parametrize("cell", ["$999,999,999,999.995", 999_999_999_999.995, "1e12", 10**12, "-1,000,000,000,000"])
def test_money_of_a_trillion_dollars_or_more_after_rounding_is_bad(cell):
    value, bad = one(coerce.money, cell)
    assert bad and pd.isna(value)


def test_money_in_many_cells_keeps_each_its_own_value():
    value, bad = coerce.money(cells("1,250", "1,2", 2.675, "", "30000,00", "0.0050", None, "96.000", 96.0))
    assert bad.tolist() == [False, True, False, False, True, False, False, True, False]
    assert [None if pd.isna(v) else int(v) for v in value] == [125_000, None, 268, None, None, 1, None, None, 9_600]


def test_a_decimal_comma_is_a_located_bad_type():
    raw = pd.DataFrame(
        {
            "Transfer ID": ["T-1", "T-2"],
            "Program": ["Grow NJ", "Grow NJ"],
            "Certificate ID": ["C-1", "C-1"],
            "Transferor": ["A", "A"],
            "Transferee": ["B", "B"],
            "Transfer Date": [D(2026, 1, 15), D(2026, 1, 16)],
            "Credit Amount Transferred ($)": ["30000,00", "1,250,000"],
            "Consideration Received ($)": ["27.000,00", 1_000_000],
        },
        dtype=object,
    )
    typed, findings = validate(TRANSFERS, raw)
    got = findings[["row", "column", "code", "value"]].to_dict("records")
    assert got == [
        {"row": 0, "column": "Credit Amount Transferred ($)", "code": "BAD_TYPE", "value": "30000,00"},
        {"row": 0, "column": "Consideration Received ($)", "code": "BAD_TYPE", "value": "27.000,00"},
    ]
    assert typed["Credit Amount Transferred ($)"].iloc[1] == 125_000_000


# --- money text: a lone point before exactly three digits -----------------------------------

POINT_THOUSANDS = [
    # (cell, cents, or None when the cell is BAD_TYPE as ambiguous)
    ("96.00", 9_600),  # two digits: cents, 96
    ("96.0", 9_600),  # one digit
    ("96.", 9_600),  # no digit after the point
    ("96.000", None),  # three: $96 in US notation, $96,000 in much of Europe
    ("96.001", None),
    ("$1.250", None),  # $1.25 or $1,250
    ("-96.000", None),
    ("+96.000", None),
    ("(1.250)", None),
    ("$(1.250)", None),
    (" 96.000 ", None),
    ("9 6.000", None),  # spaces removed first: still one point and three digits
    (".500", None),  # one point, three digits: $0.50 or $500
    ("0.005", None),  # as typed text, a half cent or five dollars
    ("96.0000", 9_600),  # four digits: no thousands group, read as the decimal it is
    ("2.6751", 268),
    (".5000", 50),
    ("1,250", 125_000),  # a comma is a thousands separator
    ("1,250.000", 125_000),  # a comma is there too: the point is the decimal point
    ("1,250.00", 125_000),
    ("96000", 9_600_000),
    ("1.250.000", None),  # two points: never a number (as before)
    ("1.250,00", None),  # a decimal comma (as before)
    ("2.675e0", 268),  # an exponent: the point is a decimal point
    # a number cell is a number and is never questioned
    (96.0, 9_600),
    (96, 9_600),
    (1.25, 125),
    (2.675, 268),
    (0.5, 50),
]


@pytest.mark.parametrize("cell,cents", POINT_THOUSANDS, ids=repr)
def test_money_text_with_a_lone_point_before_three_digits_is_ambiguous(cell, cents):
    value, bad = one(coerce.money, cell)
    assert bad is (cents is None)
    assert pd.isna(value) if cents is None else value == cents
    assert bool(coerce.point_thousands(cells(cell))[0].iloc[0]) is (cents is None and cell not in ("1.250.000", "1.250,00"))


@pytest.mark.parametrize(
    "cell,message",
    [
        # 96.000: the point as a decimal point is $96.00; as a thousands separator 96 x 1,000 = $96,000.00
        ("96.000", "it is $96.00 in US notation but $96,000.00 in much of Europe"),
        ("$1.250", "it is $1.25 in US notation but $1,250.00 in much of Europe"),
        ("96.001", "it is $96.001 in US notation but $96,001.00 in much of Europe"),
        ("-96.000", "it is -$96.00 in US notation but -$96,000.00 in much of Europe"),
        (".500", "it is $0.50 in US notation but $500.00 in much of Europe"),
    ],
)
def test_an_ambiguous_amount_is_a_bad_type_saying_why(tmp_path, cell, message):
    row = list(S.SHEETS["Transfers"][1][0])[:9]
    row[7] = cell  # Credit Amount Transferred ($)
    result = process(write_workbook(tmp_path / "eu.xlsx", {"Transfers": [S.SHEETS["Transfers"][0][:9], row]}))
    (res,) = result.intake
    assert res.status.tolist() == ["Invalid"]
    (finding,) = result.findings.to_dict("records")
    assert (finding["Code"], finding["Column"], finding["Severity"]) == ("BAD_TYPE", "Credit Amount Transferred ($)", "error")
    assert "ambiguous" in finding["Message"] and message in finding["Message"], finding["Message"]
    assert f'holds "{cell}"' in finding["Message"]
    assert "thousandths" in finding["Message"]


def test_other_bad_money_keeps_its_plain_message():
    raw = pd.DataFrame(
        {
            "Transfer ID": ["T-1", "T-2"],
            "Program": ["Grow NJ", "Grow NJ"],
            "Certificate ID": ["C-1", "C-1"],
            "Transferor": ["A", "A"],
            "Transferee": ["B", "B"],
            "Transfer Date": [D(2026, 1, 15), D(2026, 1, 16)],
            "Credit Amount Transferred ($)": ["96.000", "about 95k"],
            "Consideration Received ($)": [96.0, "1,250.000"],
        },
        dtype=object,
    )
    typed, findings = validate(TRANSFERS, raw)
    got = findings[["row", "column", "code", "variant"]].to_dict("records")
    assert got == [
        {"row": 0, "column": "Credit Amount Transferred ($)", "code": "BAD_TYPE", "variant": "point_thousands"},
        {"row": 1, "column": "Credit Amount Transferred ($)", "code": "BAD_TYPE", "variant": "default"},
    ]
    assert typed["Consideration Received ($)"].tolist() == [9_600, 125_000]


def test_a_csv_with_a_point_for_thousands_is_never_read_as_cents(tmp_path):
    path = tmp_path / "transfers-de.csv"
    path.write_text(
        ",".join(S.SHEETS["Transfers"][0][:9]) + "\n" + "T-1,Grow NJ,GNJ-1,4500000,A LLC,B Co,2026-01-15,96.000,90.000\n", encoding="utf-8"
    )
    result = process(path)
    (res,) = result.intake
    assert res.status.tolist() == ["Invalid"]
    bad = result.findings[result.findings["Code"] == "BAD_TYPE"]
    assert bad["Column"].tolist() == ["Credit Amount Transferred ($)", "Consideration Received ($)"]
    assert bad["Message"].str.contains("ambiguous").all()
    assert res.typed[MONEY[1:]].isna().all().all()


# --- dates ------------------------------------------------------------------------------------

DATE_CELLS = [
    # (cell, ISO date read)
    (FAR, "9999-12-31"),
    (EARLY, "1900-01-01"),
    (D(1900, 2, 28), "1900-02-28"),
    (D(1900, 3, 1), "1900-03-01"),
    (D(2262, 4, 12), "2262-04-12"),  # the day after datetime64[ns] ends
    (D(1677, 9, 20), "1677-09-20"),  # the day before it begins
    (dt.datetime(9999, 12, 31, 23, 59, 59), "9999-12-31"),
    (dt.datetime(1900, 1, 1, 12, 0), "1900-01-01"),
    (pd.Timestamp("2016-03-31 10:00"), "2016-03-31"),
    ("9999-12-31", "9999-12-31"),
    ("1900-01-01", "1900-01-01"),
    ("12/31/9999", "9999-12-31"),
    ("1/1/1900", "1900-01-01"),
    ("9999/12/31", "9999-12-31"),
    ("12-31-9999", "9999-12-31"),
    ("December 31, 9999", "9999-12-31"),
    ("Dec 31, 9999", "9999-12-31"),
    ("31-Dec-9999", "9999-12-31"),
    ("31 December 9999", "9999-12-31"),
    ("99991231", "9999-12-31"),
    ("9999-12-31 23:59:59", "9999-12-31"),
    ("1899-12-31", "1899-12-31"),  # text can hold a date Excel cannot
    ("0001-01-01", "0001-01-01"),
    (" 9999-12-31 ", "9999-12-31"),
    (42460, "2016-03-31"),  # an Excel serial day inside the 1990..2099 window
    (32874, "1990-01-01"),
    (73050, "2099-12-31"),
]


@pytest.mark.parametrize("cell,iso", DATE_CELLS)
def test_any_date_a_cell_can_hold_is_that_date(cell, iso):
    value, bad = coerce.date(cells(cell))
    assert not bad.iloc[0]
    assert value.dtype == np.dtype("datetime64[s]")
    assert value.iloc[0] == pd.Timestamp(np.datetime64(iso, "s"))


NOT_DATES = [
    dt.time(0, 0),  # what a reader gives for serial 0 with a date format
    dt.time(12, 0),
    dt.timedelta(days=3),
    32873,  # a bare number outside the serial window is more likely a typo
    73051,  # 2100-01-01
    73415,
    2_958_465,
    -1,
    2016,
    True,
    "31.12.2016",  # d.m.y
    "13/01/2016",  # d/m/y
    "2016-02-30",
    "1900-02-29",  # Excel's phantom day
    "10000-01-01",
    "9999-12-32",
    "no end date",
    "N/A",
    "#VALUE!",
    coerce.ExcelError("#N/A"),
]


@pytest.mark.parametrize("cell", NOT_DATES, ids=repr)
def test_a_cell_that_cannot_be_a_date_is_bad_for_that_cell_only(cell):
    value, bad = coerce.date(cells(FAR, cell, EARLY, ""))
    assert bad.tolist() == [False, True, False, False]
    assert value.iloc[0] == pd.Timestamp("9999-12-31") and value.iloc[2] == pd.Timestamp("1900-01-01")
    assert value.iloc[1:2].isna().all() and pd.isna(value.iloc[3])


def test_dates_are_held_as_seconds_even_when_every_cell_is_blank():
    for raw in (cells(), cells("", None), cells(FAR, "9999-12-31"), cells(D(2016, 3, 31))):
        assert coerce.date(raw)[0].dtype == np.dtype("datetime64[s]")


def test_far_dates_compare_and_count_as_dates():
    value, _ = coerce.date(cells(FAR, EARLY, "2016-03-31"))
    assert (value > pd.Timestamp("2262-04-12")).tolist() == [True, False, False]
    assert value.dt.year.tolist() == [9999, 1900, 2016]
    assert value.dt.strftime("%Y-%m-%d").tolist() == ["9999-12-31", "1900-01-01", "2016-03-31"]
    assert (value + pd.DateOffset(years=4)).iloc[0] == pd.Timestamp(np.datetime64("10003-12-31", "s"))
    assert value.sort_values().index.tolist() == [1, 2, 0]


# --- the whole path: a far date is judged, never a failure of the file -------------------------


def test_a_far_transfer_date_no_longer_fails_the_file(tmp_path):
    row = list(S.SHEETS["Transfers"][1][0])[:9]
    row[6] = FAR
    result = process(write_workbook(tmp_path / "far.xlsx", {"Transfers": [S.SHEETS["Transfers"][0][:9], row]}))
    sheet = result.intake[0]
    assert sheet.typed["Transfer Date"].iloc[0] == pd.Timestamp("9999-12-31")
    assert sheet.status.tolist() == ["OK"]
    assert result.findings.empty


@pytest.mark.parametrize(
    "date,codes",
    [
        (D(2014, 10, 23), ["SMALL_TRANSFER_ALLOWANCE_USED"]),  # before P.L.2014, c.63: minimum $100,000
        (D(2014, 10, 24), []),  # from its effective date: $25,000
        (FAR, []),  # "no end date" is judged on the text in force then, never a wrapped date
        (EARLY, ["SMALL_TRANSFER_ALLOWANCE_USED"]),
    ],
)
def test_far_dates_are_judged_by_the_rules_in_force_at_them(tmp_path, date, codes):
    row = ["T-1", "Urban Transit Hub", "UTH-1", 4_500_000, "A LLC", "B Co", date, 50_000, 45_000]
    result = process(write_workbook(tmp_path / "uth.xlsx", {"Transfers": [S.SHEETS["Transfers"][0][:9], row]}))
    assert result.findings["Code"].tolist() == codes
    assert result.intake[0].computed["Minimum Transfer ($)"].iloc[0] == (10_000_000 if codes else 2_500_000)


# every program's sample sheet (headers, rows), as `tests/samples.py` writes them
SAMPLE_SHEETS = S.SHEETS
SPECS = {m.name: m.schema for m in PROGRAMS}
DATE_COLUMNS = [
    (sheet, header)
    for sheet, (headers, _rows) in SAMPLE_SHEETS.items()
    for header in headers
    if any(c.header == header and c.kind == "date" for c in SPECS[sheet].columns)
]


def test_every_program_with_a_date_column_is_covered():
    with_dates = {s.name for s in SPECS.values() if any(c.kind == "date" for c in s.columns)}
    assert {sheet for sheet, _ in DATE_COLUMNS} == with_dates
    assert len(DATE_COLUMNS) == sum(c.kind == "date" for s in SPECS.values() for c in s.columns)


def _with(sheet: str, header: str, value) -> list[list]:
    headers, rows = SAMPLE_SHEETS[sheet]
    j = headers.index(header)
    return [headers] + [r[:j] + [value] + r[j + 1 :] for r in rows]


@pytest.mark.parametrize("far", [FAR, EARLY, "9999-12-31", dt.datetime(9999, 12, 31, 23, 59, 59)], ids=str)
@pytest.mark.parametrize("sheet,header", DATE_COLUMNS, ids=lambda v: str(v))
def test_a_far_date_flows_through_every_date_column(tmp_path, sheet, header, far):
    result = process(write_workbook(tmp_path / "far.xlsx", {sheet: _with(sheet, header, far)}))
    (res,) = result.intake
    expected = pd.Timestamp(np.datetime64(str(far)[:10], "s"))
    assert (res.typed[header] == expected).all()
    assert res.typed[header].dtype == np.dtype("datetime64[s]")
    mine = result.findings[result.findings["Column"] == header]
    assert "BAD_TYPE" not in set(mine["Code"])
    assert len(res.status) == len(SAMPLE_SHEETS[sheet][1])
    records = result.records()  # the ledger's view (year, prior-incentive date) of every row
    assert len(records) == len(res.status)
    if SPECS[sheet].name in ("BEIP",) and header == "Agreement Date":
        assert set(records["record_date"]) == {expected.strftime("%Y-%m-%d")}


def _all_sheets_with(value) -> dict[str, list[list]]:
    out = {}
    for sheet, (headers, rows) in SAMPLE_SHEETS.items():
        grid = [headers] + [list(r) for r in rows]
        for j, h in enumerate(headers):
            if (sheet, h) in DATE_COLUMNS:
                for r in grid[1:]:
                    r[j] = value
        out[sheet] = grid
    return out


@pytest.mark.parametrize("far", [FAR, EARLY, D(1900, 2, 28), D(1900, 3, 1), dt.datetime(9999, 12, 31, 23, 59, 59)], ids=str)
def test_far_dates_are_written_back_as_the_same_dates(tmp_path, far):
    inbox, outbox = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    write_workbook(inbox / "far.xlsx", _all_sheets_with(far))
    run = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox)], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    returned = outbox / "far.annotated.xlsx"
    book = python_calamine.CalamineWorkbook.from_path(str(returned))
    excel = openpyxl.load_workbook(returned, read_only=True)
    for sheet, (headers, _rows) in SAMPLE_SHEETS.items():
        grid = book.get_sheet_by_name(sheet).to_python()
        for j, h in enumerate(headers):
            if (sheet, h) in DATE_COLUMNS:
                assert {g[j] for g in grid[1:]} == {far}, (sheet, h)
                # Excel's own serial (1900-01-01 is 1; 1900-03-01 is 61), as openpyxl reads it
                col = [row[j].value for row in excel[sheet].iter_rows(min_row=2)]
                assert {c if isinstance(far, dt.datetime) else c.date() for c in col} == {far}, (sheet, h)
    excel.close()


@pytest.mark.parametrize(
    "value,serial",
    [
        (D(1900, 1, 1), 1.0),
        (D(1900, 2, 28), 59.0),
        (D(1900, 3, 1), 61.0),
        (D(2016, 3, 31), 42460.0),
        (FAR, 2958465.0),
        (dt.datetime(9999, 12, 31, 12, 0), 2958465.5),
        (dt.datetime(1900, 2, 28, 12, 0), 59.5),  # Excel's own serial; the day before its 1900-02-29
        (D(1900, 1, 15), 15.0),
    ],
)
def test_dates_are_written_as_excel_serials(value, serial):
    digits, in_range = encoder.serials(np.array([value], dtype="datetime64[us]"))
    assert float(digits[0]) == serial and in_range[0]


@pytest.mark.parametrize(
    "beip_date,app_date,matched",
    [
        (D(2010, 1, 1), FAR, True),
        (D(9999, 12, 30), FAR, True),
        (FAR, FAR, False),  # a BEIP agreement counts from the day after it
        (EARLY, D(1900, 1, 2), True),
        (EARLY, EARLY, False),
    ],
)
def test_far_dates_in_prior_incentives(tmp_path, beip_date, app_date, matched):
    gnj_headers, gnj_rows = S.SHEETS["GrowNJ"]
    beip_headers, beip_rows = S.SHEETS["BEIP"]
    gnj = {**dict(zip(gnj_headers, gnj_rows[0], strict=True)), "Application Date": app_date}
    beip = list(beip_rows[0])
    beip[1], beip[2] = gnj["Business Name"], beip_date
    path = write_workbook(
        tmp_path / "prior.xlsx", {"BEIP": [beip_headers, beip], "GrowNJ": [gnj_headers, [gnj.get(h) for h in gnj_headers]]}
    )
    result = process(path)
    prior = result.findings[result.findings["Code"].str.startswith("PRIOR_INCENTIVE")]
    assert (len(prior) > 0) is matched
    if matched:
        assert f"Agreement Date {beip_date.isoformat()}" in prior["Message"].iloc[0]
    records = result.records().set_index("sheet")
    assert records.loc["BEIP", "record_date"] == beip_date.isoformat()
    assert records.loc["GrowNJ", "year"] == app_date.year


# --- a European CSV export ----------------------------------------------------------------------

EUROPEAN_CSV = (
    "Transfer ID;Program;Certificate ID;Certificate Amount ($);Transferor;Transferee;Transfer Date;"
    "Credit Amount Transferred ($);Consideration Received ($)\n"
    "T-1;Grow NJ;GNJ-1;4500000,00;A LLC;B Co;2026-01-15;30000,00;27000,00\n"
    "T-2;Grow NJ;GNJ-1;4.500.000,00;A LLC;C Co;2026-01-16;1.250.000,00;1.100.000,00\n"
    "T-3;BEIP;B-1;250000,5;A LLC;D Co;2026-01-17;100000,00;90000,00\n"
)
MONEY = ["Certificate Amount ($)", "Credit Amount Transferred ($)", "Consideration Received ($)"]


def test_a_european_csv_export_is_never_read_100_times_too_large(tmp_path):
    path = tmp_path / "transfers-eu.csv"
    path.write_text(EUROPEAN_CSV, encoding="utf-8")
    result = process(path)
    (res,) = result.intake
    assert res.status.tolist() == ["Invalid", "Invalid", "Invalid"]
    bad = result.findings[result.findings["Code"] == "BAD_TYPE"]
    assert sorted(zip(bad["Row"], bad["Column"], strict=True)) == sorted((r, c) for r in (2, 3, 4) for c in MONEY)
    assert res.typed[MONEY].isna().all().all()  # no amount read at all, let alone 3,000,000
    assert res.computed.isna().all().all()


def test_a_european_csv_export_is_reported_invalid_never_ok(tmp_path):
    inbox, outbox = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    (inbox / "transfers-eu.csv").write_text(EUROPEAN_CSV, encoding="utf-8")
    run = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox)], catch_exceptions=False)
    assert re.search(r"\b0 OK\b", run.output) and "3 invalid" in run.output, run.output
    returned = next(outbox.glob("*.annotated.xlsx"))
    grid = python_calamine.CalamineWorkbook.from_path(str(returned)).get_sheet_by_name("transfers-eu").to_python()
    status = grid[0].index("Status")
    assert [g[status] for g in grid[1:]] == ["Invalid"] * 3
    findings = python_calamine.CalamineWorkbook.from_path(str(returned)).get_sheet_by_name("Findings").to_python()
    head = findings[0]
    located = {(int(f[head.index("Row")]), f[head.index("Column")]) for f in findings[1:] if f[head.index("Code")] == "BAD_TYPE"}
    assert located == {(r, c) for r in (2, 3, 4) for c in MONEY}


def test_a_us_csv_with_quoted_thousands_is_read(tmp_path):
    path = tmp_path / "transfers-us.csv"
    path.write_text(
        ",".join(S.SHEETS["Transfers"][0][:9]) + "\n" + 'T-1,Grow NJ,GNJ-1,"4,500,000.00",A LLC,B Co,1/15/2026,"$30,000.00","27,000"\n',
        encoding="utf-8",
    )
    result = process(path)
    (res,) = result.intake
    assert res.status.tolist() == ["OK"]
    assert res.typed[MONEY].iloc[0].tolist() == [450_000_000, 3_000_000, 2_700_000]


# --- the pandas the date path was built for ------------------------------------------------------


def test_pandas_is_pinned_to_the_major_version_tested():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [d for d in deps if re.match(r"pandas\b", d)]
    low, high = (int(x) for x in re.fullmatch(r"pandas>=(\d+)(?:\.\d+)*,<(\d+)", pin).groups())
    assert high == low + 1
    assert int(pd.__version__.split(".")[0]) == low
