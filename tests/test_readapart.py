"""A large workbook read by a forked copy of the process (`batch.workbook.readapart`): what comes
back is what the process would have read (the returned workbook and the records the same, byte for
byte), an error the read meets is raised the same, and where the copy cannot give back what it read
the process reads the file itself."""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import threading
import weakref
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hostile import csv_named_after_sheet, default_password, empty_zip, legacy_xls, macro_workbook

import batch.pipeline as pipeline
import batch.workbook.readapart as readapart
from batch.pipeline import process
from batch.workbook.readapart import read_apart
from batch.workbook.reading import UnreadableWorkbook, read_workbook
from batch.workbook.refused import Refused
from batch.workbook.writing import write

SAMPLES = Path(__file__).parents[1] / "sample_inputs"
KEPT = Path(__file__).parent / "fixtures" / "kept.xlsx"
AS_OF = dt.date(2026, 11, 30)


def _parts(path: Path) -> dict[str, bytes]:
    """The returned workbook's parts; a workbook written anew (from a CSV or a legacy .xls) without
    the second it was written at (its properties' creation time)."""
    with zipfile.ZipFile(path) as z:
        parts = {i.filename: z.read(i) for i in z.infolist()}
    if "docProps/core.xml" in parts:
        parts["docProps/core.xml"] = re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*", rb"\1", parts["docProps/core.xml"])
    return parts


@pytest.fixture
def apart(monkeypatch) -> list:
    """Every file read apart (READ_APART_FROM 0); the list holds what each copy gave back (None: the
    process read the file itself)."""
    given = []
    real = readapart.read_apart

    def spy(read, shared):
        given.append(None)  # asked (an error raised again here leaves it None)
        given[-1] = real(read, shared)
        return given[-1]

    monkeypatch.setattr(readapart, "READ_APART_FROM", 0)
    monkeypatch.setattr(readapart, "COLUMNS_FROM", 0)  # every sheet's cells sent apart,
    monkeypatch.setattr(readapart, "ROWS_SENT", 3)  # 3 rows at a time (a sample's rows: several blocks and a last one short)
    monkeypatch.setattr(readapart, "read_apart", spy)
    return given


MADE = {
    **{p.name: (lambda _folder, p=p: p) for p in sorted(SAMPLES.glob("*.xlsx"))},
    "kept.xlsx": lambda _folder: KEPT,  # the user's comments, formats, formulas and hidden columns
    "csv": csv_named_after_sheet,
    "default-password": default_password,  # read decrypted
    "xls": legacy_xls,
    "macros": macro_workbook,
}


@pytest.mark.parametrize("make", list(MADE.values()), ids=list(MADE))
def test_a_workbook_read_apart_is_returned_the_same(tmp_path, monkeypatch, apart, make):
    path = make(tmp_path)
    monkeypatch.setattr(readapart, "READ_APART_FROM", 1 << 40)  # read here first
    here = process(path, as_of=AS_OF)
    want = _parts(write(here, tmp_path / "here" / (path.stem + ".xlsx")))
    monkeypatch.setattr(readapart, "READ_APART_FROM", 0)
    got_result = process(path, as_of=AS_OF)
    assert len(apart) == 1 and apart[0] is not None  # the copy read it, and gave it back
    got_result.started = here.started  # the run's time, shown in the Run sheet
    pd.testing.assert_frame_equal(got_result.records(), here.records())
    pd.testing.assert_frame_equal(got_result.findings, here.findings)
    got = _parts(write(got_result, tmp_path / "apart" / (path.stem + ".xlsx")))
    assert got.keys() == want.keys()
    assert [name for name in got if got[name] != want[name]] == []


READ = {name: make for name, make in MADE.items() if name != "default-password"}  # decrypted by `process`, before the read


@pytest.mark.parametrize("make", list(READ.values()), ids=list(READ))
def test_the_workbook_the_copy_read_is_the_one_read_here(tmp_path, monkeypatch, make):
    """Every field of every sheet as read here; the cells (sent 3 rows at a time) the same values
    of the same kinds, in one block of objects as the reader makes them."""
    monkeypatch.setattr(readapart, "COLUMNS_FROM", 0)
    monkeypatch.setattr(readapart, "ROWS_SENT", 3)
    path, specs = make(tmp_path), {k: m.schema for k, m in pipeline._specs().items()}
    here = read_workbook(path, specs)
    apart = read_apart(lambda: read_workbook(path, specs), specs)
    assert apart is not None and len(apart.sheets) == len(here.sheets) > 0
    for mine, theirs in zip(apart.sheets, here.sheets, strict=True):
        assert type(mine) is type(theirs) and getattr(mine, "spec", None) is getattr(theirs, "spec", None)
        if hasattr(theirs, "cells"):
            pd.testing.assert_frame_equal(mine.cells, theirs.cells, check_exact=True)
            assert mine.cells._mgr.nblocks == theirs.cells._mgr.nblocks == 1
            assert repr(replace(mine, cells=None)) == repr(replace(theirs, cells=None))  # every other field
    assert repr(replace(apart, sheets=[])) == repr(replace(here, sheets=[]))


def test_an_error_the_copy_meets_is_raised_the_same(tmp_path, apart):
    path = empty_zip(tmp_path)
    with pytest.raises(Refused) as raised:
        process(path, as_of=AS_OF)
    assert len(apart) == 1  # raised in the copy, and raised again here
    readapart.READ_APART_FROM = 1 << 40
    try:
        with pytest.raises(Refused) as here:
            process(path, as_of=AS_OF)
    finally:
        readapart.READ_APART_FROM = 0
    assert str(raised.value) == str(here.value) and type(raised.value) is type(here.value)


class _Unsendable(Exception):
    def __init__(self):
        super().__init__("held a lock")
        self.lock = threading.Lock()  # cannot be pickled


def _unsendable():
    raise _Unsendable()


def _killed():
    os.kill(os.getpid(), signal.SIGKILL)


def _exits():
    raise SystemExit(3)


# what comes back (read_apart's answer), for each way the copy may end
@pytest.mark.parametrize(
    "read,want",
    [
        (lambda: {"rows": [1, 2.5, "x", None]}, {"rows": [1, 2.5, "x", None]}),
        (_unsendable, None),  # an error that cannot be sent: the process reads the file itself, and meets it
        (_killed, None),  # killed as it read (the machine's memory): the process reads it itself
        (_exits, None),  # ended otherwise than by an error
        (lambda: threading.Lock(), None),  # what it read cannot be sent
    ],
    ids=["read", "unsendable error", "killed", "exit", "unsendable result"],
)
def test_what_the_copy_gives_back(read, want):
    assert read_apart(read, {}) == want


def test_a_shared_object_comes_back_as_the_process_own():
    spec = object()  # a sheet spec: not picklable as it is in the product (its checks are functions)
    got = read_apart(lambda: {"spec": spec, "again": [spec]}, {"growNJ": spec})
    assert got["spec"] is spec and got["again"][0] is spec


def test_an_error_of_the_read_is_raised_with_its_message():
    def fails():
        raise UnreadableWorkbook("The file is not a workbook.")

    with pytest.raises(UnreadableWorkbook, match="^The file is not a workbook.$"):
        read_apart(fails, {})


def test_without_a_process_to_be_had_the_file_is_read_here(tmp_path, monkeypatch, apart):
    def no_fork():
        raise OSError("no process")

    monkeypatch.setattr(readapart, "fork", no_fork)
    result = process(SAMPLES / "transfers-2026-11.xlsx", as_of=AS_OF)
    assert apart == [None] and [r.sheet.name for r in result.intake] == ["Transfers"]


# -- the cells let go ------------------------------------------------------------------------------


class _Cell:
    """A cell value whose end can be seen (a weak reference to it dies with it)."""

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other) -> bool:
        return isinstance(other, _Cell) and other.text == self.text

    __hash__ = None


def _frame(rows: int, cols: int) -> pd.DataFrame:
    """A frame of one block of objects, as the reader makes cells: row r, column c holds `r,c`."""
    grid = [[_Cell(f"{r},{c}") for c in range(cols)] for r in range(rows)]
    frame = pd.DataFrame(grid, dtype=object)
    assert frame._mgr.nblocks == 1
    return frame


# (rows, rows a block): one block short, blocks that fill, and a last block short (7 = 3 + 3 + 1)
@pytest.mark.parametrize(("rows", "per"), [(2, 3), (6, 3), (7, 3), (1, 1)])
def test_the_rows_sent_come_back_whole_and_the_copy_lets_them_go(monkeypatch, rows, per):
    monkeypatch.setattr(readapart, "ROWS_SENT", per)
    frame = _frame(rows, 4)
    kept = frame.to_numpy(dtype=object).copy()  # what was read, to compare with what comes back
    watch = [weakref.ref(x) for x in kept.ravel()]
    sent = []
    readapart._send_rows(frame, lambda block: sent.append(block.copy()))
    assert [b.shape for b in sent] == [(4, min(per, rows - s)) for s in range(0, rows, per)]
    assert (np.concatenate(sent, axis=1).T == kept).all()
    assert frame.isna().all().all()  # every cell let go once its rows were sent
    sent.clear()
    del kept
    assert all(w() is None for w in watch)


def test_a_sheets_dropped_cells_are_let_go():
    """`drop_cells` keeps the columns and nothing of the cells: an empty slice of the frame (a view)
    held every cell of the frame it was cut from, through the checks and the write."""
    path, specs = SAMPLES / "grow-nj-2026-11.xlsx", {k: m.schema for k, m in pipeline._specs().items()}
    sheet = next(s for s in read_workbook(path, specs).sheets if hasattr(s, "cells"))
    sheet.cells = _frame(5, len(sheet.cells.columns)).set_axis(sheet.cells.columns, axis=1)
    watch = [weakref.ref(x) for x in sheet.cells.to_numpy(dtype=object).ravel()]
    columns = list(sheet.cells.columns)
    sheet.drop_cells()
    assert list(sheet.cells.columns) == columns and len(sheet.cells) == 0
    assert (sheet.cells.dtypes == np.dtype(object)).all()
    assert all(w() is None for w in watch)
