"""A row's read values (`batch.reviews.row_inputs`): the same JSON whether converted in one block or
in many, and one object a row whatever line break a text holds."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from batch import reviews
from batch.programs.transfers.sheet import TRANSFERS
from validators.schema import validate


def _sheet(rows: int) -> pd.DataFrame:
    """Raw cells of a Transfers sheet: good values, bad ones and blanks, every few rows."""
    good = {
        "Transfer ID": [f"T-{i}" for i in range(rows)],
        "Transfer Date": [dt.datetime(2026, 1, 1 + i % 28) if i % 5 else ("2026-01-05" if i % 2 else "") for i in range(rows)],
        "Credit Amount Transferred ($)": [1250000.0 + i if i % 7 else ("1,250,000.00" if i % 2 else "bad") for i in range(rows)],
        "Transferor": ["line\nbreak" if i % 3 == 0 else ("nel\x85sep\u2028end" if i % 3 == 1 else "") for i in range(rows)],
    }
    return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in good.items()})


def test_read_values_are_the_same_in_blocks_of_any_size(monkeypatch):
    raw = _sheet(53)
    typed, _ = validate(TRANSFERS, raw, [], skip=np.zeros(len(raw), dtype=bool))
    kinds = {c.header: c.kind for c in TRANSFERS.columns}
    whole = reviews.row_inputs(raw, typed, kinds)
    for size in (1, 2, 7, 52):
        monkeypatch.setattr(reviews, "INPUTS_BLOCK", size)
        assert reviews.row_inputs(raw, typed, kinds).tolist() == whole.tolist()
    assert len(whole) == len(raw)
    first = json.loads(whole[1])
    assert first["Credit Amount Transferred ($)"] == 1250001.0 and first["Transfer Date"] == "2026-01-02"


@pytest.mark.parametrize("text", ["a\nb", "a\x85b", "a\u2028b", "a\u2029b", "a\rb", "a\x0bb\x0cc\x1cd\x1de\x1ef"])
def test_a_row_is_one_object_whatever_line_break_its_text_holds(text):
    raw = pd.DataFrame({"Notes": pd.Series([text, "plain", text], dtype=object)})
    lines = reviews.row_inputs(raw)
    assert len(lines) == 3
    assert [json.loads(line)["Notes"] for line in lines] == [text, "plain", text]


# -- each row's JSON cut from the records' array --------------------------------------------------
JSON_FRAMES = {
    "text that holds the cut": pd.DataFrame({"a": ['x},{"a":1', '},{"a":', "plain"], "b": [1, 2, 3]}),
    "quotes, back slashes, line ends": pd.DataFrame({"a": ['say "hi"', "back\\slash", "l1\nl2\u0085\u2028"], "b": [None, 1.5, 2]}),
    "a key that needs escaping": pd.DataFrame({'k"e:y': ["1", "2"], "é": ["ü", None]}),
    "numbers and missing values": pd.DataFrame({"n": [1.0, float("nan"), 1e300], "i": [1, 2, 3]}),
    "dates": pd.DataFrame({"d": pd.to_datetime(["2026-01-31", None, "2025-12-01"]), "s": ["a", "b", "c"]}),
    "a column labelled by a number": pd.DataFrame({0: ["a", "b"], 1: ["c", "d"]}),
    "one row": pd.DataFrame({"a": ["only"]}),
    "no row": pd.DataFrame({"a": pd.Series([], dtype=object)}),
    # objects as values hold the cut: the rows are made as lines, as before
    "objects that hold the cut": pd.DataFrame({"a": [[{"a": 1}, {"a": 2}], [{"a": 3}]], "b": ["x", "y"]}),
}


@pytest.mark.parametrize("case", list(JSON_FRAMES))
@pytest.mark.parametrize("options", [{"force_ascii": False, "double_precision": 15}, {"force_ascii": False, "date_format": "iso"}])
def test_each_rows_json_cut_from_the_records_is_its_json_line(case, options, monkeypatch):
    from batch.reviews import json_lines, json_records

    monkeypatch.setattr(reviews, "CUT_FROM", 2)  # every frame of two rows or more is cut
    frame = JSON_FRAMES[case]
    if case == "dates" and "date_format" not in options:
        pytest.skip("dates are written with a date format (pandas warns without one)")
    want = json_lines(frame.to_json(orient="records", lines=True, **options)) if len(frame) else np.empty(0, dtype=object)
    got = json_records(frame, **options)
    assert got.dtype == object and got.tolist() == want.tolist()


def test_a_block_of_rows_over_the_threshold_is_cut_as_its_lines_are():
    from batch.reviews import CUT_FROM, json_lines, json_records

    n = CUT_FROM + 1  # one over: cut
    frame = pd.DataFrame({"a": [f'row {i} }},{{"a":{i}' for i in range(n)], "b": np.arange(n) / 3})
    options = {"force_ascii": False, "double_precision": 15}
    assert json_records(frame, **options).tolist() == json_lines(frame.to_json(orient="records", lines=True, **options)).tolist()


SAMPLES = sorted((Path(__file__).parents[1] / "sample_inputs").glob("*.xlsx"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_the_read_values_made_when_the_records_are_are_those_read(tmp_path, sample):
    # a sheet with no reviewer's decision to judge has its read values made when its records are
    # (`pipeline._inputs`), after the write for a small file: they are those of the sheet as read
    # (nothing between changes its read cells or typed values), and made once
    from batch.pipeline import process
    from batch.workbook.writing import write

    result = process(sample, as_of=dt.date(2026, 11, 30))
    sheets = result.intake
    assert sheets and all(callable(r.inputs) for r in sheets)  # not made yet
    read = [r.inputs() for r in sheets]  # as the sheet was read
    write(result, tmp_path / "out.xlsx")
    records = result.records()
    assert records["inputs"].tolist() == [v for r, values in zip(sheets, read, strict=True) for v in values[r.counted]]
    assert all(isinstance(r.inputs, np.ndarray) for r in sheets)
    again = result.records()["inputs"].tolist()
    assert all(a is b for a, b in zip(again, records["inputs"].tolist(), strict=True))  # the same texts: made once
