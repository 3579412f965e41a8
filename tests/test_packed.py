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


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.xlsx")), ids=lambda p: p.name)
def test_read_values_made_as_the_sheet_is_validated_are_those_made_for_the_records(monkeypatch, path):
    """A large sheet returned in place makes its rows' read values as it is validated, held packed
    (`PackedValues`), and lets its cells go: each block of rows gives the values `ReadValues` gives."""
    held = process(path, as_of=AS_OF)
    monkeypatch.setattr(pipeline, "PACKED_FROM_ROWS", 0)
    monkeypatch.setattr(pipeline, "INPUTS_BLOCK", 3)  # blocks of 3 rows: a sheet's rows in several
    packed = process(path, as_of=AS_OF)
    for mine, theirs in zip(packed.intake, held.intake, strict=True):
        assert isinstance(mine.inputs, pipeline.PackedValues) and isinstance(theirs.inputs, pipeline.ReadValues)
        assert len(mine.sheet.cells) == 0  # let go
        want, n = theirs.inputs(), len(theirs.typed)
        assert mine.inputs().tolist() == want.tolist()
        for start in range(n + 1):
            for stop in (start, start + 1, start + 4, n + 2):
                assert mine.inputs(slice(start, stop)).tolist() == want[start:stop].tolist(), (start, stop)


@pytest.mark.parametrize("path", [*sorted(SAMPLES.glob("*.xlsx")), KEPT], ids=lambda p: p.name)
def test_a_workbook_written_once_its_records_are_sent_is_the_same(tmp_path, path):
    """Once the records are sent (`Result.drop_inputs`), the read values and the typed columns the
    write never reads are let go: the same workbook, and records made again are refused."""
    kept = process(path, as_of=AS_OF)
    want = _parts(write(kept, tmp_path / "kept" / path.name))
    sent = process(path, as_of=AS_OF)
    sent.started = kept.started
    sent.drop_inputs()
    for r, whole in zip(sent.intake, kept.intake, strict=True):  # a sheet whose limits hold across workbooks keeps them all (BRRAP)
        read = list(whole.typed.columns) if r.program.run_limits else {r.program.award_column, r.program.month_column}
        assert len(r.typed) == len(r.status) and [c for c in whole.typed.columns if c in read] == list(r.typed.columns)
    got = _parts(write(sent, tmp_path / "sent" / path.name))
    assert [name for name in got if got[name] != want.get(name)] == [] and got.keys() == want.keys()
    with pytest.raises(RuntimeError, match="let go once its records were sent"):
        sent.records()


@pytest.mark.parametrize("path", [*sorted(SAMPLES.glob("*.xlsx")), KEPT], ids=lambda p: p.name)
def test_records_made_a_block_of_rows_at_a_time_are_the_records(path):
    """`Result.record_blocks(rows)`: every column of a block made for its rows alone (the portfolio
    fields over the sheet, sliced), the blocks joined are `records()`, whatever the block's size."""

    def values(records: pd.DataFrame) -> pd.DataFrame:
        # the values, a blank as None: pandas takes a column of texts for text where a block's has no
        # blank, and the sheet's column, blanks and all, is text or objects by what it holds (as the
        # blocks and the whole always were: the ledger keeps a blank of either as NULL)
        return records.astype(object).where(records.notna(), None)

    want = values(process(path, as_of=AS_OF).records())
    for rows in (1, 2, 5, 1_000):
        blocks = list(process(path, as_of=AS_OF).record_blocks(rows))
        assert all(len(b) <= rows for b in blocks)
        pd.testing.assert_frame_equal(values(pipeline.joined_records(blocks)), want)


@pytest.mark.parametrize("path", [*sorted(SAMPLES.glob("*.xlsx")), KEPT], ids=lambda p: p.name)
def test_a_workbook_whose_texts_were_packed_as_each_chunk_was_calculated_is_the_same(tmp_path, monkeypatch, path):
    """A large sheet returned in place packs its long texts as each chunk of its calculation is made
    (`calculate_held`), the steps across rows' parts of each text apart (`HeldTexts`): chunks of 2
    rows and blocks of 3 cross each other, and the Invalid and totals rows of the samples fall
    between them. The same workbook and records as when the whole column is made and then packed."""
    monkeypatch.setattr(pipeline, "PACKED_FROM_ROWS", 0)
    monkeypatch.setattr(pipeline, "PACK_ROWS", 3)
    monkeypatch.setattr(pipeline, "CALC_CHUNK_ROWS", 2)
    real = pipeline.calculate_held
    monkeypatch.setattr(pipeline, "calculate_held", lambda *a: None)  # the column made whole, then packed
    whole = process(path, as_of=AS_OF)
    want = _parts(write(whole, tmp_path / "whole" / path.name))
    held = []
    monkeypatch.setattr(pipeline, "calculate_held", lambda *a: held.append(real(*a)) or held[-1])
    chunked = process(path, as_of=AS_OF)
    chunked.started = whole.started  # the run's time, shown in the Run sheet
    # every row-independent sheet of more than 2 valid rows took the held way (Grow NJ with its steps across rows)
    took = {r.sheet.name for r, h in zip(chunked.intake, held, strict=False) if h is not None}
    assert ("GrowNJ" in took) == ("GrowNJ" in {r.sheet.name for r in chunked.intake})
    assert [list(r.packed) for r in chunked.intake] == [list(r.packed) for r in whole.intake]
    pd.testing.assert_frame_equal(chunked.records(), whole.records())
    for mine, theirs in zip(chunked.intake, whole.intake, strict=True):
        pd.testing.assert_frame_equal(mine.computed, theirs.computed)
        for header in theirs.packed:
            pd.testing.assert_series_equal(mine.column(header), theirs.column(header))
    got = _parts(write(chunked, tmp_path / "chunked" / path.name))
    assert got.keys() == want.keys()
    assert [name for name in got if got[name] != want[name]] == []


# (valid rows' places among 9 rows, chunk rows, block rows): rows missing first, between and last;
# chunks and blocks of 1, and ones that cross each other
@pytest.mark.parametrize(
    ("at", "chunk", "block"),
    [([0, 1, 2, 3, 4, 5, 6, 7, 8], 2, 3), ([1, 2, 4, 7], 2, 3), ([0, 8], 1, 1), ([3, 4, 5], 5, 2), ([], 2, 3), ([2, 3, 5, 6, 7], 3, 4)],
)
def test_texts_held_by_chunks_give_each_valid_rows_head_and_tails_in_its_place(monkeypatch, at, chunk, block):
    monkeypatch.setattr(pipeline, "CALC_CHUNK_ROWS", chunk)
    monkeypatch.setattr(pipeline, "PACK_ROWS", block)
    heads = [f"h{i}" for i in range(len(at))]  # what each chunk wrote of its rows
    tails = [np.array([f"+a{i}" for i in range(len(at))], dtype=object), "+b"]  # a piece a row, and one alike for all
    chunks = [PackedText.of(pd.Series(heads[s : s + chunk], dtype="str"), block) for s in range(0, len(at), chunk)]
    pieces = [np.broadcast_to(np.asarray(t, dtype=object), (len(at),)) for t in tails]
    held = pipeline.HeldTexts(chunks, pieces, np.dtype(object), 0)
    # h0 +a0 +b for the first valid row, and so on; a row that is not valid is missing
    want = np.full(9, np.nan, dtype=object)
    want[np.array(at, dtype=int)] = [f"h{i}+a{i}+b" for i in range(len(at))]
    got = list(held.blocks(np.array(at, dtype=np.int64), 9))
    assert [len(b) for b in got] == [min(block, 9 - s) for s in range(0, 9, block)]
    joined = np.concatenate(got)
    assert [None if pd.isna(x) else x for x in joined] == [None if pd.isna(x) else x for x in want]
    for start in range(len(at) + 1):
        for stop in range(start, len(at) + 1):
            assert held.values(start, stop).tolist() == [f"h{i}+a{i}+b" for i in range(start, stop)]
