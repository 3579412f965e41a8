"""A large sheet's long text columns held packed from the end of its checks (`PackedText`,
`pack_text`): each slice of rows gives the column's values as they were, and the returned
workbook is the same, byte for byte, as when the column is held as it was made."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import batch.pipeline as pipeline
from batch.pipeline import PackedText, process
from batch.workbook.writing import write

SAMPLES = Path(__file__).parents[1] / "sample_inputs"
KEPT = Path(__file__).parent / "fixtures" / "kept.xlsx"
AS_OF = dt.date(2026, 11, 30)
# texts as a calculator may write them: a newline, a line separator and a NEL, text beyond Latin-1 and
# beyond the BMP, a lone surrogate, an empty text, and missing values (an Invalid row's) among them
TEXTS = ["a; b", "x\ny\r\n", "\u2028\u0085", "caf\u00e9 \u20ac \U0001f600", "\ud800", "", np.nan, "last", np.nan]


def _column(texts) -> pd.Series:
    return pd.Series(texts, index=pd.RangeIndex(len(texts)) + 10, dtype="str", name="Calculation")


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 100])
def test_each_slice_of_a_packed_column_is_the_column_as_it_was(rows):
    column = _column(TEXTS)
    packed = PackedText.of(column, rows)
    assert isinstance(packed, PackedText) and len(packed) == len(TEXTS)
    assert len(packed.blocks) == -(-len(TEXTS) // rows)  # 9 texts: 9, 5, 3, 3 and 1 blocks
    assert packed.longest == 8  # "caf\u00e9 \u20ac \U0001f600": c a f \u00e9, a space, \u20ac, a space, \U0001f600
    # every slice the writer can ask, within the rows and past their end
    for start in range(len(TEXTS) + 1):
        for stop in range(start, len(TEXTS) + 3):
            want = column.to_numpy(dtype=object)[start:stop]
            got = packed.values(start, stop)
            assert got.dtype == object and len(got) == len(want), (start, stop)
            assert all((pd.isna(a) and pd.isna(b)) or a == b for a, b in zip(got, want, strict=True)), (start, stop)


def test_a_column_packed_and_read_back_through_the_sheet_is_the_same_series():
    column = _column(TEXTS)
    res = pipeline.SheetResult.__new__(pipeline.SheetResult)  # the two fields `column` reads, and the computed columns
    res.typed = pd.DataFrame(index=column.index)
    res.computed, res.packed = pipeline.pack_text(pd.DataFrame({"Eligible": "Y", "Calculation": column}, index=column.index))
    assert list(res.computed.columns) == ["Eligible"] and list(res.packed) == ["Calculation"]
    for start, stop in [(0, None), (0, 4), (3, 7), (8, 9), (9, 20)]:
        pd.testing.assert_series_equal(res.column("Calculation", start, stop), column.iloc[start:stop])
    pd.testing.assert_series_equal(res.column("Eligible", 2, 5), res.computed["Eligible"].iloc[2:5])


@pytest.mark.parametrize(
    "values",
    [
        ["a", "b\x00c"],  # a text holding the separator
        [1.5, "a"],  # a value that is not text
    ],
)
def test_a_column_that_cannot_be_packed_stays_as_it_is(values):
    assert PackedText.of(pd.Series(values, dtype=object)) is None


def test_a_column_of_missing_values_only_packs_to_missing_values():
    packed = PackedText.of(_column([np.nan, np.nan, np.nan]), 2)
    assert packed.longest == 0 and pd.isna(packed.values(0, 3)).all()


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


@pytest.mark.parametrize("path", [*sorted(SAMPLES.glob("*.xlsx")), KEPT], ids=lambda p: p.name)
def test_a_workbook_whose_text_columns_were_packed_is_the_same(tmp_path, monkeypatch, path):
    held = process(path, as_of=AS_OF)
    want = _parts(write(held, tmp_path / "held" / path.name))
    monkeypatch.setattr(pipeline, "PACKED_FROM_ROWS", 0)  # every sheet's long text columns packed
    packed = process(path, as_of=AS_OF)
    packed.started = held.started  # the run's time, shown in the Run sheet
    assert [list(r.packed) for r in packed.intake] == [["Calculation"] if "Calculation" in r.computed else [] for r in held.intake]
    pd.testing.assert_frame_equal(packed.records(), held.records())
    got = _parts(write(packed, tmp_path / "packed" / path.name))
    assert got.keys() == want.keys()
    assert [name for name in got if got[name] != want[name]] == []
