"""Writing a returned workbook leaves nothing in the temporary folder: xlsxwriter's file of each
worksheet's rows (constant memory) is removed, that of a sheet given no cell too (an intake sheet
written anew, whose rows are spliced in; the Rules sheet of a process's second workbook, whose part
was written before)."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

import pytest
from hostile import csv_named_after_sheet, legacy_xls

from batch.pipeline import process
from batch.workbook.writing import write

SAMPLES = Path(__file__).parents[1] / "sample_inputs"
AS_OF = dt.date(2026, 11, 30)


@pytest.mark.parametrize(
    "make",
    [lambda _f: SAMPLES / "transfers-2026-11.xlsx", lambda _f: SAMPLES / "grow-nj-2026-11.xlsx", legacy_xls, csv_named_after_sheet],
    ids=["transfers", "grow-nj", "xls", "csv"],
)
def test_three_workbooks_written_in_one_process_leave_no_temporary_file(tmp_path, monkeypatch, make):
    scratch = tmp_path / "temporary"
    scratch.mkdir()
    path = make(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where xlsxwriter makes its files
    for n in range(3):  # the second and third reuse the Rules sheet's part written by the first
        result = process(path, as_of=AS_OF)
        out = write(result, tmp_path / "out" / f"{n}.xlsx")
        result.discard()
        assert out.exists() and os.listdir(scratch) == [], n
