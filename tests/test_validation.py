"""Reading cell values (validators.coerce) and located validation findings (validators.schema)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pandera.pandas as pa
import pytest

from batch.programs.grow_nj_compliance.sheet import GROW_NJ_COMPLIANCE
from batch.programs.transfers.sheet import TRANSFERS
from validators import coerce
from validators.columns import normalize_header
from validators.schema import _schema, validate

S = lambda *v: pd.Series(list(v), dtype=object)  # noqa: E731

MONEY_CASES = [
    # (cell, cents or None when blank, bad)
    (1250000, 125_000_000, False),
    (1250000.5, 125_000_050, False),
    ("$1,250,000", 125_000_000, False),
    ("1,250,000", 125_000_000, False),
    (" $ 1,250,000.07 ", 125_000_007, False),
    ("1\u00a0250\u00a0000", 125_000_000, False),  # non-breaking spaces as thousands separators
    ("(1,000)", -100_000, False),  # accountants' negative
    ("-25000", -2_500_000, False),
    (0.1 + 0.2, 30, False),  # 0.30000000000000004 dollars is 30 cents
    ("", None, False),
    ("   ", None, False),
    ("about 95k", None, True),
    ("N/A", None, True),
    (True, None, True),
    (dt.date(2020, 1, 1), None, True),
    (999_999_999_999.99, 99_999_999_999_999, False),
    (1_000_000_000_000, None, True),  # $1 trillion: beyond what the reader accepts
]


@pytest.mark.parametrize("cell,cents,bad", MONEY_CASES)
def test_money(cell, cents, bad):
    value, is_bad = coerce.money(S(cell))
    assert bool(is_bad.iloc[0]) is bad
    assert pd.isna(value[0]) if cents is None else value[0] == cents


YESNO_CASES = [
    ("Y", True),
    ("y", True),
    ("Yes", True),
    ("TRUE", True),
    ("1", True),
    (1, True),
    (1.0, True),
    (True, True),
    ("N", False),
    ("no", False),
    ("FALSE", False),
    ("0", False),
    (0, False),
    (False, False),
    ("", False),
]


@pytest.mark.parametrize("cell,expected", YESNO_CASES)
def test_yesno(cell, expected):
    value, bad = coerce.yesno(S(cell))
    assert not bad.iloc[0] and bool(value.iloc[0]) is expected


def test_yesno_bad():
    assert coerce.yesno(S("maybe", "2"))[1].tolist() == [True, True]


# a column is read a distinct text at a time: the same answers, in the same places, as reading
# each cell on its own (repeated spellings, missing cells, and True beside 1, which hash alike)
COLUMNS = [
    # (cells, why)
    (["Y", None, "y", "Y", "maybe", "", "N", "Y", None], "repeated spellings, missing and blank cells"),
    ([True, 1, "1", 1.0, "1.0", "True", False, 0, "0"], "a bool, a number and their texts"),
    ([None, None, float("nan")], "no cell given"),
    ([" yes ", "YES", "Yes", "no ", "\u00a0", "2", 2], "spaces and case; a 2 is not an answer"),
]


@pytest.mark.parametrize("cells,why", COLUMNS, ids=[w for _, w in COLUMNS])
def test_a_yesno_column_reads_as_each_cell_does(cells, why):
    column = pd.Series(cells, index=range(50, 50 + len(cells)), dtype=object)
    value, bad = coerce.yesno(column)
    alone = [coerce.yesno(column.iloc[[i]]) for i in range(len(column))]
    pd.testing.assert_series_equal(value, pd.concat([v for v, _ in alone]))
    pd.testing.assert_series_equal(bad, pd.concat([b for _, b in alone]))


@pytest.mark.parametrize("cells,why", COLUMNS, ids=[w for _, w in COLUMNS])
def test_a_code_column_reads_as_each_cell_does(cells, why):
    codes = ("Yes", "No", "1")
    column = pd.Series(cells, index=range(50, 50 + len(cells)), dtype=object)
    value, bad = coerce.code(column, codes)
    alone = [coerce.code(column.iloc[[i]], codes) for i in range(len(column))]
    pd.testing.assert_series_equal(value, pd.concat([v for v, _ in alone]))
    pd.testing.assert_series_equal(bad, pd.concat([b for _, b in alone]))


PERCENT_CASES = [
    # (cell, fraction, scaled)
    (0.35, 0.35, False),
    ("35%", 0.35, False),
    (" 35 % ", 0.35, False),
    (35, 0.35, True),
    ("35", 0.35, True),
    (1, 1.0, False),  # 1 is 100%, not scaled
    (1.5, 0.015, True),  # above 1: read as 1.5%
    ("0.75", 0.75, False),
]


@pytest.mark.parametrize("cell,fraction,scaled", PERCENT_CASES)
def test_percent(cell, fraction, scaled):
    value, bad, was_scaled = coerce.percent(S(cell))
    assert not bad.iloc[0]
    assert value[0] == pytest.approx(fraction)
    assert bool(was_scaled.iloc[0]) is scaled


DATE_CASES = [
    (dt.date(2016, 3, 31), "2016-03-31"),
    (dt.datetime(2016, 3, 31, 14, 5), "2016-03-31"),
    ("2016-03-31", "2016-03-31"),
    ("3/31/2016", "2016-03-31"),
    ("03/31/2016", "2016-03-31"),
    (42460, "2016-03-31"),  # an Excel serial day number
    (" 2016-03-31 ", "2016-03-31"),
    ("2016/03/31", "2016-03-31"),
    ("March 31, 2016", "2016-03-31"),
    ("Mar 31, 2016", "2016-03-31"),
    ("31-Mar-2016", "2016-03-31"),
    ("31 March 2016", "2016-03-31"),
    ("03-31-2016", "2016-03-31"),
]


@pytest.mark.parametrize("cell,iso", DATE_CASES)
def test_date(cell, iso):
    value, bad = coerce.date(S(cell))
    assert not bad.iloc[0] and value.iloc[0] == pd.Timestamp(iso)


@pytest.mark.parametrize("cell", ["31/13/2016", "2016-02-30", "next Tuesday", 2016, True])
def test_bad_date(cell):
    assert coerce.date(S(cell))[1].iloc[0]


def test_integer():
    value, bad = coerce.integer(S(12, "1,200", 12.5, "x", ""))
    assert bad.tolist() == [False, False, True, True, False]
    assert value[0] == 12 and value[1] == 1200


def test_text_keeps_what_was_typed():
    value, _ = coerce.text(S(1001.0, " T-1 ", "=SUM(A1)", dt.date(2020, 1, 2), ""))
    assert value.tolist() == ["1001", "T-1", "=SUM(A1)", "2020-01-02", None]


def test_code_matching_ignores_case_and_spacing():
    value, _ = coerce.code(S("grow nj", "GROW  NJ", "Grow New Jersey"), ("Grow NJ", "BEIP"))
    assert value.tolist() == ["Grow NJ", "Grow NJ", "Grow New Jersey"]


@pytest.mark.parametrize(
    "header",
    ["Credit Amount Transferred ($)", "credit_amount_transferred", "CREDIT AMOUNT TRANSFERRED", "Credit\nAmount\u00a0Transferred (USD)"],
)
def test_headers_match_loosely(header):
    assert normalize_header(header) == normalize_header("Credit Amount Transferred ($)")


GOOD = {
    "Transfer ID": "T-1",
    "Program": "Grow NJ",
    "Certificate ID": "C-1",
    "Certificate Amount ($)": "",
    "Transferor": "A",
    "Transferee": "B",
    "Transfer Date": dt.date(2026, 1, 1),
    "Credit Amount Transferred ($)": 100000,
    "Consideration Received ($)": 90000,
}

BAD_INPUT_CASES = [
    # (what, changed cells, column, code)
    ("blank required text", {"Transferee": ""}, "Transferee", "MISSING_VALUE"),
    ("blank required date", {"Transfer Date": "  "}, "Transfer Date", "MISSING_VALUE"),
    ("money text unreadable", {"Credit Amount Transferred ($)": "lots"}, "Credit Amount Transferred ($)", "BAD_TYPE"),
    ("date unreadable", {"Transfer Date": "31/13/2026"}, "Transfer Date", "BAD_TYPE"),
    ("unknown program", {"Program": "Grow New Jersey"}, "Program", "BAD_CODE"),
    ("credit zero (must be > 0)", {"Credit Amount Transferred ($)": 0}, "Credit Amount Transferred ($)", "OUT_OF_RANGE"),
    ("consideration negative", {"Consideration Received ($)": -0.01}, "Consideration Received ($)", "OUT_OF_RANGE"),
    ("certificate amount negative", {"Certificate Amount ($)": "-5"}, "Certificate Amount ($)", "OUT_OF_RANGE"),
]


@pytest.mark.parametrize("what,change,column,code", BAD_INPUT_CASES, ids=[c[0] for c in BAD_INPUT_CASES])
def test_bad_input_is_located(what, change, column, code):
    raw = pd.DataFrame([GOOD, {**GOOD, "Transfer ID": "T-2", **change}], dtype=object)
    _, findings = validate(TRANSFERS, raw)
    assert findings[["row", "column", "code"]].values.tolist() == [[1, column, code]]
    assert findings["expected"].iloc[0]


def test_edges_pass():
    # credit one cent (> 0) and consideration 0 (>= 0) are in range
    raw = pd.DataFrame([{**GOOD, "Credit Amount Transferred ($)": 0.01, "Consideration Received ($)": 0}], dtype=object)
    assert validate(TRANSFERS, raw)[1].empty


def test_every_bad_cell_reported_at_once():
    raw = pd.DataFrame(
        [GOOD, {**GOOD, "Transfer ID": "T-2", "Program": "X", "Transferee": "", "Transfer Date": "bad", "Consideration Received ($)": -1}],
        dtype=object,
    )
    _, findings = validate(TRANSFERS, raw)
    assert sorted(findings["code"]) == ["BAD_CODE", "BAD_TYPE", "MISSING_VALUE", "OUT_OF_RANGE"]


def test_bad_type_is_not_also_missing():
    raw = pd.DataFrame([{**GOOD, "Transfer Date": "soon"}], dtype=object)
    assert validate(TRANSFERS, raw)[1]["code"].tolist() == ["BAD_TYPE"]


def test_duplicate_id_flags_repeats_after_the_first():
    raw = pd.DataFrame([GOOD, {**GOOD, "Transfer ID": "T-2"}, GOOD, GOOD], dtype=object)
    _, findings = validate(TRANSFERS, raw)
    assert findings[["row", "code"]].values.tolist() == [[2, "DUPLICATE_ID"], [3, "DUPLICATE_ID"]]


def test_missing_column_is_one_finding_for_the_sheet():
    raw = pd.DataFrame([GOOD, GOOD]).drop(columns=["Transferee"]).astype(object)
    raw.loc[1, "Transfer ID"] = "T-2"
    _, findings = validate(TRANSFERS, raw)
    assert findings[["row", "column", "code"]].values.tolist() == [[-1, "Transferee", "MISSING_COLUMN"]]


@pytest.mark.parametrize(
    "sheet, header, expected",
    [
        # a calendar year is written as a year, never with a thousands separator
        ("BEIP_Conversion", "Approval Year", "a whole number, at least 2008 and at most 2030"),
        ("GrowNJ_Compliance", "Tax Period", "a whole number, at least 1900 and at most 2100"),
        ("BRRAP", "First Tax Period", "a whole number, at least 1900 and at most 2100"),
        # a count keeps its separator
        ("GrowNJ", "Gross Leasable Area (sq ft)", None),
    ],
)
def test_a_year_is_written_without_a_thousands_separator(sheet, header, expected):
    from batch.programs import BY_NAME

    column = BY_NAME[sheet].schema.column(header)
    if expected is None:
        assert not column.year
    else:
        assert column.year and column.expected() == expected


# Each case: the cells changed on the second row of GOOD, and the columns pandera fails. The bounds
# at, just below and just above: credit > $0 (0.01 passes, 0 and -0.01 fail), consideration and
# certificate amount >= $0 (0 passes, -0.01 fails).
FAILING_CASES = [
    ("every column passes", {}, []),
    ("credit one cent", {"Credit Amount Transferred ($)": 0.01}, []),
    ("credit zero", {"Credit Amount Transferred ($)": 0}, ["Credit Amount Transferred ($)"]),
    ("credit a cent below zero", {"Credit Amount Transferred ($)": -0.01}, ["Credit Amount Transferred ($)"]),
    ("consideration zero", {"Consideration Received ($)": 0}, []),
    ("consideration a cent below zero", {"Consideration Received ($)": -0.01}, ["Consideration Received ($)"]),
    ("certificate amount blank (may be)", {"Certificate Amount ($)": ""}, []),
    ("certificate amount a cent below zero", {"Certificate Amount ($)": -0.01}, ["Certificate Amount ($)"]),
    ("blank required text", {"Transferee": ""}, ["Transferee"]),
    ("blank required money", {"Credit Amount Transferred ($)": ""}, ["Credit Amount Transferred ($)"]),
    ("unknown program", {"Program": "Grow New Jersey"}, ["Program"]),
    ("blank program", {"Program": ""}, ["Program"]),
    ("three at once", {"Program": "X", "Transferee": "", "Consideration Received ($)": -1}, None),
]


@pytest.mark.parametrize("what,change,failing", FAILING_CASES, ids=[c[0] for c in FAILING_CASES])
def test_pandera_validates_the_columns_it_would_fail(what, change, failing):
    """Only the columns with a failing cell go through pandera (`_Schema.failing`): they are the
    columns in which the whole schema finds a failure, no fewer."""
    raw = pd.DataFrame([GOOD, {**GOOD, "Transfer ID": "T-2", **change}], dtype=object)
    schema = _schema(TRANSFERS, set(raw.columns))
    typed, _ = validate(TRANSFERS, raw)
    try:
        schema.schema.validate(typed, lazy=True)
        whole = []
    except pa.errors.SchemaErrors as err:
        whole = list(dict.fromkeys(err.failure_cases["column"]))
    found = schema.failing(typed)
    assert sorted(found) == sorted(whole)
    assert found == ([c for c in typed.columns if c in whole] if failing is None else failing)


def test_a_check_that_breaks_is_pandera_s_to_report(monkeypatch):
    raw = pd.DataFrame([GOOD], dtype=object)
    schema = _schema(TRANSFERS, set(raw.columns))
    typed, _ = validate(TRANSFERS, raw)
    nullable, functions = schema.checks["Program"]

    def broken(values):
        raise ValueError("broken")

    monkeypatch.setitem(schema.checks, "Program", (nullable, (broken,)))
    assert schema.failing(typed) == ["Program"]  # pandera runs its own check and reports what it finds


# (case, the key columns' typed values, the record IDs): one key as its text; two joined with " / "
# (Grow NJ compliance: Project ID and Tax Period); a missing part as ""
RECORD_ID_CASES = [
    ("one key", TRANSFERS, {"Transfer ID": pd.Series(["T-1", None], dtype="str")}, ["T-1", ""]),
    (
        "two keys",
        GROW_NJ_COMPLIANCE,
        {"Project ID": pd.Series(["P-1", "P-2", None], dtype="str"), "Tax Period": pd.Series([2025, None, 2026], dtype="Int64")},
        ["P-1 / 2025", "P-2 / ", " / 2026"],
    ),
]


@pytest.mark.parametrize("spec, typed, expected", [c[1:] for c in RECORD_ID_CASES], ids=[c[0] for c in RECORD_ID_CASES])
def test_record_ids_are_the_key_columns_as_text(spec, typed, expected):
    ids = spec.record_ids(pd.DataFrame(typed).set_axis([4, 9, 11][: len(expected)]))
    assert ids.tolist() == expected and ids.index.tolist() == [4, 9, 11][: len(expected)]
    assert ids.name == (spec.key[0] if len(spec.key) == 1 else None)
