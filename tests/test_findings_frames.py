"""A sheet's raw findings put one after the other (`stack`) as pandas' concat would, as `render`
reads them: the same fields in the same order, the same values, missing where a frame does not
give a field; and every message rendered from them the same."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pandas as pd
import pytest

from batch.pipeline import _per_row
from batch.programs._kit.findings import _pieces, render, render_each, stack, stacked_as_given
from batch.programs._kit.joined import held_once
from batch.programs._kit.rules import load

TRANSFERS = load("transfers").findings


def _frame(rows, **fields):
    return pd.DataFrame({"row": np.asarray(rows, dtype=np.int64), **fields}, index=range(len(rows)))


STACKS = {
    # a validation finding, then two calculator findings with fields of their own (cents, a date)
    "fields of their own": [
        _frame([1], code="MISSING_VALUE", column="Transferee", value="", expected="text"),
        _frame([0, 2], code="CONSIDERATION_BELOW_75PCT", consideration=[7_000_000, 1], credit=[10_000_000, 2], ratio=[7000, 5000]),
        _frame([3], code="TRANSFER_BELOW_MINIMUM", credit=pd.array([100], dtype="Int64"), date=pd.to_datetime(["2026-01-05"])),
    ],
    # an empty frame (no finding: its fields still named), a sheet finding (row -1), a missing cent amount
    "an empty frame and a sheet finding": [
        pd.DataFrame(columns=["row", "column", "code", "value", "expected"]),
        _frame([-1], code="SHEET_ROUTED_BY_HEADERS", column=""),
        _frame([4], code="CERTIFICATE_OVERTRANSFERRED", certificate_amount=pd.array([None], dtype="Int64")),
    ],
    "one frame": [_frame([0, 1], code="CONSIDERATION_ABOVE_FACE", consideration=[3, 4], credit=[1, 2], ratio=[30000, 20000])],
}
# a sheet's findings stacked, then stacked again with its totals rows' findings, of which there are none
STACKS["stacked again beside no finding"] = [
    stack(STACKS["fields of their own"]),
    _frame([], code=np.array([], dtype=object), column=np.array([], dtype=object), variant=np.array([], dtype=object)),
]
# a frame whose labels are not in increasing order (as a concat without ignore_index leaves them): its
# rows stay in the order given; and a categorical variant (stacked as objects)
RENDERED_EACH = {**STACKS}
RENDERED_EACH["labels out of order, a categorical variant"] = [
    _frame([1], code="MISSING_VALUE", column="Transferee", value="", expected="text"),
    pd.DataFrame({"row": np.array([5, 3], dtype=np.int64), "code": ["MISSING_VALUE", "DUPLICATE_ID"], "column": ["A", "B"]}, index=[1, 0]),
    pd.DataFrame({"row": np.array([6, 7], dtype=np.int64), "code": ["MISSING_VALUE"] * 2, "variant": pd.Categorical([None, None])}),
]


@pytest.mark.parametrize("case", STACKS)
def test_stack_is_pandas_concat_as_render_reads_it(case):
    frames = STACKS[case]
    got, want = stack(frames), pd.concat(frames, ignore_index=True)
    assert list(got.columns) == list(want.columns) and got.index.equals(want.index)
    assert got["row"].tolist() == want["row"].astype(int).tolist()
    assert all(got[c].dtype == object for c in got.columns if c != "row")  # texts and dates as the objects given
    for column in want.columns:
        for mine, theirs in zip(got[column].to_numpy(dtype=object), want[column].to_numpy(dtype=object), strict=True):
            assert (pd.isna(mine) and pd.isna(theirs)) or mine == theirs, (column, mine, theirs)
    # the messages: CONSIDERATION_BELOW_75PCT's "$70,000.00 ... 70.00%", as pandas' frame gives them
    # (pandas' `row` is Python objects where an empty frame's was: the pipeline reads it as integers)
    mine, theirs = render(got, "Transfers", TRANSFERS), render(want, "Transfers", TRANSFERS)
    pd.testing.assert_frame_equal(mine, theirs.astype({"row": np.int64}))


@pytest.mark.parametrize("case", RENDERED_EACH)
def test_frames_rendered_each_on_its_own_are_the_frames_rendered_stacked(case):
    frames = RENDERED_EACH[case]
    assert stacked_as_given(frames)
    pd.testing.assert_frame_equal(render_each(frames, "Transfers", TRANSFERS), render(stack(frames), "Transfers", TRANSFERS))


def test_a_frame_stacked_beside_empty_frames_is_taken_as_it_is_not_copied():
    first, _none = STACKS["stacked again beside no finding"]
    again = stack([first, _none])
    assert list(again.columns) == [*first.columns, "variant"] and len(again) == len(first) == 4
    # a million findings' columns would be copied (about 0.5 GB): each is the first stack's own array
    shared = [c for c in first.columns if np.shares_memory(again[c].to_numpy(dtype=object), first[c].to_numpy(dtype=object))]
    assert shared == [c for c in first.columns if c != "row"]  # `row` is made again, as integers (4 of them)
    assert again["variant"].isna().all()


def test_a_row_that_is_no_whole_number_is_pandas_own():
    frames = [pd.DataFrame({"row": ["1"], "code": ["MISSING_VALUE"]})]
    pd.testing.assert_frame_equal(stack(frames), pd.concat(frames, ignore_index=True))


def test_the_date_of_a_finding_keeps_its_day():
    (date,) = stack(STACKS["fields of their own"])["date"].dropna()
    assert pd.Timestamp(date).date() == dt.date(2026, 1, 5)


# where pandas' concat gives a field's values otherwise (true/false beside numbers become numbers;
# whole numbers beyond 2**53 beside a frame without the field become floats), the frame is pandas' own
SETTLED_BY_PANDAS = {
    "true/false beside numbers": [_frame([0], code="A", x=[True]), _frame([1], code="A", x=[5])],
    "true/false beside an empty frame of floats": [
        _frame([0], code="A", x=[True]),
        pd.DataFrame({"row": np.array([], dtype=np.int64), "code": [], "x": np.array([], dtype=float)}),
    ],
    "beyond 2**53 beside a frame without it": [_frame([0], code="A", x=[2**53 + 1]), _frame([1], code="B")],
}


@pytest.mark.parametrize("case", SETTLED_BY_PANDAS)
def test_fields_pandas_settles_otherwise_are_its_own(case):
    frames = SETTLED_BY_PANDAS[case]
    pd.testing.assert_frame_equal(stack(frames), pd.concat(frames, ignore_index=True))
    assert not stacked_as_given(frames)  # so the pipeline renders them stacked, as pandas gives them


# (case, the findings' rows and codes, rows in the sheet, each row's Findings): each code once a row,
# in the order found, joined with "; "; "" for a row without a finding
PER_ROW_CASES = [
    ("in the order found", [(1, "B_CODE"), (0, "A_CODE"), (1, "A_CODE")], 3, ["A_CODE", "B_CODE; A_CODE", ""]),
    ("a code twice on a row, once", [(0, "A_CODE"), (0, "A_CODE"), (0, "B_CODE")], 1, ["A_CODE; B_CODE"]),
    ("a waived code apart from the code", [(0, "A_CODE (waived)"), (0, "A_CODE")], 1, ["A_CODE (waived); A_CODE"]),
    ("no finding on a row", [], 2, ["", ""]),
]


@pytest.mark.parametrize("found, n, expected", [c[1:] for c in PER_ROW_CASES], ids=[c[0] for c in PER_ROW_CASES])
def test_each_rows_findings_column(found, n, expected):
    pos = np.array([p for p, _ in found], dtype=np.int64)
    codes = np.array([c for _, c in found], dtype=object)
    got = _per_row(pos, codes, n, np.dtype(object))
    assert got.tolist() == expected and got.index.tolist() == list(range(n))


# the money and plain fields of a message, each at its edges: 0, one cent, a negative amount, a
# missing amount (blank), an amount with four groups of digits; a plain field of texts (passed as
# they are), of texts and a missing value, of whole numbers given as floats, of a date
BELOW = "is below the minimum transfer of"
MESSAGES = [
    # (program, credit in cents, minimum in cents, date) -> the message's opening, up to "; a transfer"
    (("Grow NJ", 0, 2_500_000, pd.Timestamp("2026-01-05")), f"Grow NJ transfer of $0.00 on 2026-01-05 {BELOW} $25,000.00"),
    (("Grow NJ", 1, 2_500_000, pd.Timestamp("2026-01-05")), f"Grow NJ transfer of $0.01 on 2026-01-05 {BELOW} $25,000.00"),
    (("BEIP", -250_099, 2_500_000, pd.Timestamp("2026-12-31")), f"BEIP transfer of -$2,500.99 on 2026-12-31 {BELOW} $25,000.00"),
    (("BEIP", None, 2_500_000, pd.Timestamp("2026-12-31")), f"BEIP transfer of  on 2026-12-31 {BELOW} $25,000.00"),
    (("ERG", 123_456_789_012, 2_499_999, None), f"ERG transfer of $1,234,567,890.12 on  {BELOW} $24,999.99"),
    ((None, 100, 2_500_000, pd.Timestamp("2026-01-05")), f" transfer of $1.00 on 2026-01-05 {BELOW} $25,000.00"),
    ((7.0, 100, 2_500_000, pd.Timestamp("2026-01-05")), f"7 transfer of $1.00 on 2026-01-05 {BELOW} $25,000.00"),
]


@pytest.mark.parametrize(("fields", "opening"), MESSAGES)
def test_a_message_is_its_template_filled_in_whatever_the_other_findings_of_its_code(fields, opening):
    program, credit, minimum, date = fields
    # the finding alone, then with findings of the same code around it (their fields all texts, or
    # all present): the message is the same
    alone = _frame(
        [0], code="TRANSFER_BELOW_MINIMUM", program=[program], credit=[credit], minimum=[minimum], date=[date],
        citation=["C.34:1B-248"],
    )  # fmt: skip
    others = _frame(
        [1, 2], code="TRANSFER_BELOW_MINIMUM", program=["Grow NJ"] * 2, credit=[5, 6], minimum=[7, 8],
        date=[pd.Timestamp("2026-02-01")] * 2, citation=["C.34:1B-248"] * 2,
    )  # fmt: skip
    for frames in ([alone], [others, alone], [alone, others]):
        rendered = render(stack(frames), "Transfers", TRANSFERS)
        message = rendered.loc[rendered["row"] == 0, "Message"].item()
        assert message.startswith(opening + "; a transfer certificate"), message
        assert message.endswith("(C.34:1B-248).")


def _template_fields(entry: dict) -> list[str]:
    """The fields a code's messages (every variant) and citation name."""
    messages = entry["message"]
    texts = [messages] if isinstance(messages, str) else list(messages.values())
    return sorted({name for text in [*texts, entry["citation"]] for _literal, name in _pieces(text) if name})


def _random_column(rng: random.Random, kind: str, n: int):
    """A field of `n` findings as a calculator may give it: whole numbers, numbers with missing ones,
    floats, texts (blank, missing, beyond ASCII), dates, or objects of mixed kinds."""
    pick = {
        "int": lambda: np.array([rng.randint(-(10**6), 10**9) for _ in range(n)], dtype=np.int64),
        "Int64": lambda: pd.array([rng.choice([None, rng.randint(0, 10**7)]) for _ in range(n)], dtype="Int64"),
        "float": lambda: np.array([rng.choice([np.nan, rng.random() * 1e6, 7.0]) for _ in range(n)]),
        "text": lambda: np.array([rng.choice(["", "abc", "Seller, LLC", "\u20ac 12", None]) for _ in range(n)], dtype=object),
        "date": lambda: pd.to_datetime([rng.choice(["2026-01-05", None, "2025-12-31"]) for _ in range(n)]),
        "mixed": lambda: np.array([rng.choice([1, 2.5, "x", None, np.nan, dt.date(2026, 1, 2)]) for _ in range(n)], dtype=object),
    }
    return pick[kind]()


@pytest.mark.parametrize("seed", range(8))
def test_random_frames_rendered_each_on_its_own_are_the_frames_rendered_stacked(seed):
    # 25 sheets' findings a seed: 1 to 4 frames of 0, 1, 3 or 10 findings of one code of a program's
    # table each, with a variant, most of the code's fields (each of a random kind), a column and a
    # severity or not; every such set that `stack` gives as given renders the same both ways, or fails
    # the same way both ways
    rng = random.Random(seed)
    programs = ["transfers", "grow_nj", "beip", "erg_residential"]
    compared = 0
    for _ in range(25):
        table = load(rng.choice(programs)).findings
        frames = []
        for _ in range(rng.randint(1, 4)):
            n, code = rng.choice([0, 1, 3, 10]), rng.choice(sorted(table))
            entry = table[code]
            given = {"row": np.array([rng.randint(-1, 50) for _ in range(n)], dtype=np.int64), "code": np.full(n, code, dtype=object)}
            if not isinstance(entry["message"], str) and rng.random() < 0.7:
                given["variant"] = np.array([rng.choice(sorted(entry["message"])) for _ in range(n)], dtype=object)
            for name in _template_fields(entry):
                if rng.random() < 0.8:
                    given[name] = _random_column(rng, rng.choice(["int", "Int64", "float", "text", "date", "mixed"]), n)
            if rng.random() < 0.3:
                given["column"] = _random_column(rng, "text", n)
            if rng.random() < 0.2:
                given["severity"] = np.array([rng.choice(["error", "warning", None]) for _ in range(n)], dtype=object)
            frames.append(pd.DataFrame(given))
        if not stacked_as_given(frames):
            continue
        try:
            want = render(stack(frames), "S", table)
        except (TypeError, ValueError) as stacked:  # a field of a kind its format cannot take (a date as money): so each way
            with pytest.raises(type(stacked)):
                render_each(frames, "S", table)
            continue
        pd.testing.assert_frame_equal(render_each(frames, "S", table), want)
        compared += 1
    assert compared >= 10  # of 25 sets, 17 to 22 render (a date or a text in a money field does not) and are stacked as given


# (values, how many distinct objects hold the texts after): texts that repeat, each held once; a missing
# value (None, NaN) as it was; nothing but missing values; nothing
@pytest.mark.parametrize(
    ("values", "objects"),
    [
        (["C.54:10A-5.39 b.", "Column A", "C.54:10A-5.39 b.", "Column A", "Column A"], 2),
        (["a", None, "a", np.nan, "b"], 2),
        ([None, np.nan], 0),
        ([], 0),
    ],
)
def test_a_findings_repeated_texts_are_held_once_and_missing_values_stay(values, objects):
    # each text made anew, as a template fills it for every row: equal, never the same object
    made = np.array([("" + v + " ")[:-1] if isinstance(v, str) else v for v in values], dtype=object)
    shared = held_once(made)
    assert len(shared) == len(made)
    for got, was in zip(shared, made, strict=True):
        assert (got is was) if not isinstance(was, str) else got == was
    assert len({id(v) for v in shared if isinstance(v, str)}) == objects
