"""The Summary's small tables, counted and added up with numpy instead of pandas' pivots and
groupbys (milliseconds each on a workbook of a few rows): the same tables as pandas gives, and the
by-month table worked by hand."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from batch.programs import PROGRAMS
from batch.programs._kit.calculation import crosstab, sum_table, totals_by, with_column
from batch.workbook import rulebook
from batch.workbook.toolsheets import by_month

RNG = np.random.default_rng(7)


def _pair(rows, columns, row_dtype=object, column_dtype=object):
    return pd.Series(rows, name="Code", dtype=row_dtype), pd.Series(columns, name="Severity", dtype=column_dtype)


CROSSTABS = {
    # text of both kinds of string column, unsorted, with a non-ASCII letter (sorted by code point)
    "object text": _pair(["b", "a", "Ä", "b", "z z"], ["warning", "error", "error", "info", "warning"]),
    "str text": _pair(["b", "a", "Ä", "b", "z z"], ["warning", "error", "error", "info", "warning"], "str", "str"),
    "one pair": _pair(["X"], ["error"]),
    "one value many times": _pair(["X"] * 4, ["error"] * 4),
    "random": _pair(RNG.choice(list("abcdef"), 200), RNG.choice(["error", "warning", "info"], 200), "str", "str"),
    "Int64 keys": (
        pd.Series([202601, -1, 202512, 202601], name="month", dtype="Int64"),
        pd.Series(["OK", "OK", "Flagged", "Invalid"], name="status"),
    ),
    "int64 keys": (pd.Series([3, 1, 3], name="month", dtype="int64"), pd.Series(["OK", "OK", "Flagged"], name="status")),
    # empty: no rows, but the index and columns keep their names and kinds
    "empty object": _pair([], []),
    "empty str": _pair([], [], "str", "str"),
    "empty Int64": (pd.Series([], name="month", dtype="Int64"), pd.Series([], name="status", dtype="str")),
    # where the counting falls back to pandas' own: a missing value, values that do not sort together, no name
    "missing value": _pair(["a", None, "b"], ["error", "error", "info"]),
    "mixed kinds": _pair(["a", 1, "b"], ["error", "error", "info"]),
    "unnamed": (pd.Series(["a", "b"]), pd.Series(["x", "y"])),
    # pandas orders categories by their categories, infers the kind of Python numbers in an object
    # column, and lines up two series by their row labels
    "categories": (
        pd.Series(["a", "b", "a"], name="Code", dtype=pd.CategoricalDtype(["b", "a"])),
        pd.Series(["x", "y", "x"], name="Severity"),
    ),
    "numbers as objects": _pair([2, 1, 2], ["x", "y", "x"]),
    "other row labels": (pd.Series(["a", "b"], name="Code", index=[0, 1]), pd.Series(["x", "y"], name="Severity", index=[1, 0])),
}


@pytest.mark.parametrize("case", CROSSTABS)
def test_crosstab_is_pandas_crosstab(case):
    rows, columns = CROSSTABS[case]
    pd.testing.assert_frame_equal(crosstab(rows, columns), pd.crosstab(rows, columns))


def test_crosstab_counts_each_pair():
    rows, columns = CROSSTABS["object text"]
    table = crosstab(rows, columns)
    # rows a, b, z z, Ä (code point order: Ä is U+00C4, after z); b occurs with warning and info
    assert table.index.tolist() == ["a", "b", "z z", "Ä"] and table.columns.tolist() == ["error", "info", "warning"]
    assert table.to_numpy().tolist() == [[1, 0, 0], [0, 1, 1], [0, 0, 1], [1, 0, 0]]


def _sheet(dates, statuses, awards, errors=None):
    """What by_month reads of a sheet's result: the month and award columns, each row's Status, and
    whether it has an error not waived (`errors`, none by default)."""
    program = SimpleNamespace(month_column="Transfer Date", award_column="Award")
    typed = pd.DataFrame({"Transfer Date": pd.to_datetime(pd.Series(dates, dtype=object)), "Award": pd.array(awards, dtype="Int64")})
    return SimpleNamespace(
        program=program,
        typed=typed,
        computed=pd.DataFrame(index=typed.index),
        status=pd.Series(statuses),
        sheet=SimpleNamespace(name="Transfers"),
        open_errors=np.array(errors if errors is not None else [False] * len(statuses), dtype=bool),
    )


BY_MONTH = {
    # 2026-01 twice (OK 100 + Flagged 200 = 300 cents); 2025-12 Invalid (its 300 not counted);
    # a blank date under (no date), last; a totals row (Status "") not counted at all
    # columns: Month, Rows, OK, Flagged with errors, Flagged with warnings only, Ineligible, Invalid, Award
    "months, a blank date and a totals row": (
        [dt.date(2026, 1, 5), dt.date(2026, 1, 20), dt.date(2025, 12, 1), None, dt.date(2026, 1, 1)],
        ["OK", "Flagged", "Invalid", "OK", ""],
        [100, 200, 300, 50, 999],
        [["2025-12", 1, 0, 0, 0, 0, 1, 0], ["2026-01", 2, 1, 0, 1, 0, 0, 300], ["(no date)", 1, 1, 0, 0, 0, 0, 50]],
    ),
    # one row, Ineligible: counted, its award not (0)
    "one ineligible row": ([dt.date(2026, 11, 30)], ["Ineligible"], [700], [["2026-11", 1, 0, 0, 0, 1, 0, 0]]),
    # December before January of the next year; a blank award counts as 0
    "across a year end": (
        [dt.date(2027, 1, 2), dt.date(2026, 12, 31)],
        ["OK", "OK"],
        [None, 2_500_000_000_00],
        [["2026-12", 1, 1, 0, 0, 0, 0, 2_500_000_000_00], ["2027-01", 1, 1, 0, 0, 0, 0, 0]],
    ),
    # Flagged in two: one with an error (an Invalid row's error is no Flagged one), one with a warning; 100 + 200 = 300
    "flagged with an error and with a warning": (
        [dt.date(2026, 2, 1), dt.date(2026, 2, 2), dt.date(2026, 2, 3)],
        ["Flagged", "Flagged", "Invalid"],
        [100, 200, 400],
        [["2026-02", 3, 0, 1, 1, 0, 1, 300]],
        [True, False, True],
    ),
}


@pytest.mark.parametrize("case", BY_MONTH)
def test_by_month_counts_rows_and_awards(case):
    dates, statuses, awards, expected, *errors = BY_MONTH[case]
    table = by_month(_sheet(dates, statuses, awards, *errors)).table
    columns = ["Month", "Rows", "OK", "Flagged with errors", "Flagged with warnings only", "Ineligible", "Invalid", "Award ($)"]
    assert table.columns.tolist() == columns
    assert table.to_numpy().tolist() == expected
    assert all(table[c].dtype == np.int64 for c in table.columns[1:])  # whole counts and cents


def test_by_month_of_only_a_totals_row_is_no_table():
    assert by_month(_sheet([dt.date(2026, 1, 5)], [""], [100])) is None


@pytest.mark.parametrize(
    "programs", [[p] for p in PROGRAMS] + [list(PROGRAMS), list(reversed(PROGRAMS))], ids=lambda ps: "+".join(p.name for p in ps)
)
def test_the_rules_sheet_lays_out_the_rulebook(programs):
    rows, widths, talls = rulebook._layout(programs)
    table = rulebook.rulebook(programs)
    assert rows == tuple(table.itertuples(index=False, name=None))
    for j, col in enumerate(rulebook.COLUMNS):  # each column as wide as its longest line (or header word), within its bounds
        longest = max([len(line) for text in table[col] for line in text.split("\n")] + [len(w) for w in col.split()])
        low, high = (12, rulebook.WRAPPED[col]) if col in rulebook.WRAPPED else rulebook.SIZED[col]
        assert widths[j] == min(high, max(low, longest + 2))
    assert all(t >= 1 for t in talls) and len(talls) == len(rows)
    assert rulebook._layout(list(programs)) is rulebook._layout(tuple(programs))  # worked out once


def _rows(keys, other=None, money=None, flags=None, key_dtype=object):
    """A sheet's rows as a Summary groups them: a key (and a second one), Int64 cents, true/false."""
    n = len(keys)
    return pd.DataFrame(
        {
            "Program": pd.Series(keys, dtype=key_dtype),
            "Year": pd.Series(other if other is not None else [2026] * n, dtype="Int64"),
            "ID": pd.Series([f"T-{i}" for i in range(n)], dtype="str"),
            "Credit": pd.array(money if money is not None else [100] * n, dtype="Int64"),
            "Eligible": np.array(flags if flags is not None else [True] * n, dtype=bool),
            "Count": np.arange(n, dtype=np.int64),
        }
    )


SUMS = {"Rows": ("ID", "size"), "Credit": ("Credit", "sum"), "Eligible": ("Eligible", "sum"), "Count": ("Count", "sum")}
TOTALS = {
    # BEIP 100 + 250 = 350 cents (its blank Credit counts as 0: 350); Grow NJ 7; text sorted, Ä after z
    "object keys": (_rows(["BEIP", "Grow NJ", "BEIP", "BEIP"], money=[100, 7, 250, None]), ["Program"], True),
    "str keys": (_rows(["z", "Ä", "a"], key_dtype="str"), ["Program"], True),
    "two keys": (_rows(["B", "A", "B", "B"], other=[2026, 2025, 2025, 2026]), ["Program", "Year"], True),
    "two keys the other way": (_rows(["B", "A", "B", "B"], other=[2026, 2025, 2025, 2026]), ["Year", "Program"], True),
    # a missing key: left out (dropna) or its own group, last
    "a missing key left out": (_rows(["B", None, "A"]), ["Program"], True),
    "a missing key kept": (_rows(["B", None, "A"], key_dtype="str"), ["Program"], False),
    "a missing second key kept": (_rows(["B", "B", "A"], other=[2026, None, 2026]), ["Program", "Year"], False),
    "no rows": (_rows([]), ["Program"], True),
    "no rows, two keys": (_rows([]), ["Program", "Year"], False),
    "large cents": (_rows(["A", "A"], money=[2**62, 2**61]), ["Program"], True),
    # pandas' own: categories, and an object key all missing (which pandas' groups read as floats)
    "categories": (_rows(["b", "a", "b"], key_dtype=pd.CategoricalDtype(["b", "a"])), ["Program"], True),
    "all missing, kept": (_rows([None, None]), ["Program"], False),
    # Python numbers or true/false held as objects, whose groups pandas reads as numbers; no group left
    "numbers as objects": (_rows([2026, 2025, 2026]), ["Program"], True),
    "true/false as objects": (_rows([True, False, True]), ["Program"], True),
    "no group left": (_rows([None, None]), ["Program", "Year"], True),
}


@pytest.mark.parametrize("case", TOTALS)
def test_totals_by_is_pandas_groupby(case):
    rows, keys, dropna = TOTALS[case]
    expected = rows.groupby(keys, sort=True, dropna=dropna).agg(**SUMS).reset_index()
    pd.testing.assert_frame_equal(totals_by(rows, keys, dropna, **SUMS), expected)


def test_totals_by_adds_each_group():
    rows, keys, dropna = TOTALS["object keys"]
    table = totals_by(rows, keys, dropna, **SUMS)
    # BEIP rows 0, 2, 3: 100 + 250 + blank = 350 cents, Count 0 + 2 + 3 = 5; Grow NJ row 1: 7 cents
    assert table.to_numpy().tolist() == [["BEIP", 3, 350, 3, 5], ["Grow NJ", 1, 7, 1, 1]]


def test_an_aggregate_other_than_size_and_sum_is_pandas_own():
    rows = _rows(["A", "A", "B"], money=[5, 7, 1])
    table = totals_by(rows, ["Program"], Last=("Credit", "last"), Most=("Count", "max"))
    assert table.to_numpy().tolist() == [["A", 7, 1], ["B", 1, 2]]  # A: last 7, max row 1; B: 1, 2


def test_a_float_total_is_pandas_own():
    rows = pd.DataFrame({"Program": ["A", "A", "A"], "Ratio": [0.1, 0.2, 0.3]})
    table = totals_by(rows, ["Program"], Ratio=("Ratio", "sum"))
    pd.testing.assert_frame_equal(table, rows.groupby("Program").agg(Ratio=("Ratio", "sum")).reset_index())


def _credit(programs, years, cents, program_dtype=object):
    return (
        pd.Series(programs, name="Program", dtype=program_dtype),
        pd.Series(years, name="Year", dtype="int32"),
        pd.Series(pd.array(cents, dtype="Int64"), name="Credit"),
    )


SUM_TABLES = {
    # Grow NJ 2026: 5 + 6 = 11; BEIP 2025: 3 (a blank counts 0); pairs that do not occur are 0
    "object programs": _credit(["Grow NJ", "BEIP", "Grow NJ", "BEIP"], [2026, 2025, 2026, 2025], [5, 3, 6, None]),
    "str programs": _credit(["b", "a", "b"], [2024, 2026, 2025], [1, 2, 3], "str"),
    "one row": _credit(["a"], [2026], [2**62]),
    # pandas' own: no rows, a missing program
    "no rows": _credit([], [], []),
    "a missing program": _credit(["a", None], [2026, 2026], [1, 2]),
}


@pytest.mark.parametrize("case", SUM_TABLES)
def test_sum_table_is_pandas_pivot_table(case):
    programs, years, cents = SUM_TABLES[case]
    frame = pd.DataFrame({"Program": programs, "Year": years, "Credit": cents})
    expected = frame.pivot_table(index="Program", columns="Year", values="Credit", aggfunc="sum", fill_value=0)
    pd.testing.assert_frame_equal(sum_table(programs, years, cents), expected)


def test_sum_table_adds_each_pair():
    table = sum_table(*SUM_TABLES["object programs"])
    # rows BEIP, Grow NJ; columns 2025, 2026: BEIP 2025 = 3 + blank = 3, Grow NJ 2026 = 5 + 6 = 11
    assert table.index.tolist() == ["BEIP", "Grow NJ"] and table.columns.tolist() == [2025, 2026]
    assert table.to_numpy().tolist() == [[3, 0], [0, 11]]


def _codes(rows, codes):
    return pd.DataFrame({"row": pd.Series(rows, dtype="int64"), "Code": codes})


def _programs(labels, values, dtype=object):
    return pd.DataFrame({"Program": pd.Series(values, index=labels, dtype=dtype), "Other": 1})


WITH_COLUMN = {
    # every finding's row in the frame, in the findings' own order (row 2 before row 0)
    "every row": (_codes([2, 0, 2], ["A", "B", "C"]), _programs([0, 1, 2], ["BEIP", "ERG", "Grow NJ"])),
    # rows the frame left out (a totals row, a withdrawn record): their findings are dropped
    "rows left out": (_codes([0, 3, 1, 3], ["A", "A", "B", "C"]), _programs([0, 1, 2], ["BEIP", "ERG", "BEIP"])),
    "labels not positions": (_codes([7, 5], ["A", "B"]), _programs([5, 7, 9], ["BEIP", "ERG", "BEIP"], "str")),
    "no finding in the frame": (_codes([4], ["A"]), _programs([0, 1], ["BEIP", "ERG"], "str")),
    "no finding": (_codes([], []), _programs([0, 1], ["BEIP", "ERG"], "str")),
    # a frame whose rows are not each labelled once: pandas' merge, one finding per label matched
    "a label twice": (_codes([1, 0], ["A", "B"]), _programs([0, 1, 1], ["BEIP", "ERG", "Grow NJ"])),
}


@pytest.mark.parametrize("case", WITH_COLUMN)
def test_with_column_is_pandas_merge(case):
    codes, frame = WITH_COLUMN[case]
    expected = codes.merge(frame[["Program"]], left_on="row", right_index=True)
    got = with_column(codes, frame, "Program")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True))


def test_with_column_gives_each_finding_its_rows_value():
    codes, frame = WITH_COLUMN["rows left out"]
    got = with_column(codes, frame, "Program")
    # rows 0 and 1 are in the frame (BEIP, ERG); both findings of row 3 are dropped
    assert got[["row", "Code", "Program"]].values.tolist() == [[0, "A", "BEIP"], [1, "B", "ERG"]]
