"""Coercing the columns of one kind together gives exactly what coercing each column on its own
gave: the typed frame (values, dtypes, and the kind of each missing value) and every findings frame.

`_coerce_frame_by_column` below, each column coerced on its own as `coerce_frame` did before
columns were batched, is the reference. Random raw frames of 0-8 rows, drawn from cells that intake
sheets hold (blanks, yes/no spellings, numbers and number text, money text, percents, dates and
serials, Excel errors, code spellings, junk), are coerced both ways for every program's sheet.
`NJC_COERCE_FRAMES` sets how many frames per program (a few by default, to keep the test fast) and
`NJC_COERCE_SEED` draws other frames.
"""

from __future__ import annotations

import datetime as dt
import os
import random

import numpy as np
import pandas as pd
import pytest

from batch.programs import PROGRAMS
from validators import schema
from validators.coerce import ExcelError
from validators.columns import SheetSpec


def _coerce_frame_by_column(spec: SheetSpec, raw: pd.DataFrame) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """The reference: each spec column coerced by its own call of its coercer (`_coerce_column`,
    the body of `coerce_frame` before columns were batched)."""
    done = [schema._coerce_column(col, raw) for col in spec.columns]
    typed = {col.header: value for col, (value, _) in zip(spec.columns, done, strict=True)}
    return pd.DataFrame(typed, index=raw.index), [f for _, findings in done for f in findings]


_POOL = [
    None,
    "",
    "  ",
    "\u00a0",
    " \u2007 ",
    "Y",
    "n",
    "yes",
    " No ",
    "TRUE",
    "false",
    True,
    False,
    np.bool_(True),
    0,
    1,
    1.0,
    0.0,
    2.5,
    -3,
    np.int64(7),
    np.float64(1250.5),
    float("nan"),
    "1",
    "0.0",
    "1,250.50",
    "$(1,000)",
    "-$1,250.50",
    "(1,000)",
    " 1 250 000 ",
    "96.000",
    "$1.250",
    "-96.000",
    ".500",
    "1.250,00",
    "1,25,000",
    "1.25E+06",
    "2.675",
    2.675,
    0.005,
    "0.0050",
    "999999999999.995",
    999999999999.99,
    "50%",
    " 7.5 % ",
    "150%",
    0.5,
    75,
    100,
    "75",
    "%",
    "abc%",
    "2026-01-05",
    "1/5/2026",
    "2016/03/31",
    "03-31-2016",
    "March 31, 2016",
    "Mar 31, 2016",
    "31-Mar-2016",
    "31 March 2016",
    "20160331",
    "2016-03-31 13:04:05",
    "3/4/2016",
    "0001-01-01",
    "9999-12-31",
    "2026-02-30",
    dt.date(2026, 1, 5),
    dt.datetime(2026, 1, 5, 13, 4, 5),
    dt.date(1900, 1, 1),
    dt.date(9999, 12, 31),
    pd.Timestamp("2024-02-29 10:00"),
    46027.0,
    46027,
    32874,
    73050,
    73051,
    46027.6,
    1e300,
    -1e300,
    10**20,
    2**53,
    2**53 + 1,
    "9007199254740993",
    "123456789012345678901234567890",
    "1e400",
    1e12,
    "1e12",
    ExcelError("#N/A"),
    ExcelError("#DIV/0!"),
    ExcelError("#VALUE!"),
    "junk",
    "N/A",
    "TBD",
    "  Acme  Corp ",
    "x\x00y",
    "\u00e9t\u00e9",
    "0\x00a",
    "-",
    "+",
    "$",
    "()",
    "1e5e5",
]


def _cell(rng: random.Random, col) -> object:
    if col.kind == "code" and col.codes and rng.random() < 0.5:
        c = rng.choice(col.codes)
        spelled = rng.choice(
            [c, c.upper(), c.lower(), c.swapcase(), "  " + c + " ", c.replace(" ", "  "), c.replace(" ", "\u00a0"), "\u00a0" + c.title()]
        )
        return spelled
    if rng.random() < 0.1:
        return "".join(rng.choice("aZ 9,.$%-/()\u00a0") for _ in range(rng.randint(1, 8)))
    return rng.choice(_POOL)


def _raw(rng: random.Random, spec: SheetSpec) -> pd.DataFrame:
    n = rng.randint(0, 8)
    data = {}
    for col in spec.columns:
        if rng.random() < 0.1:
            continue  # an absent column
        data[col.header] = [_cell(rng, col) for _ in range(n)]
    if rng.random() < 0.1:
        data["Unknown column"] = [_cell(rng, spec.columns[0]) for _ in range(n)]
    raw = pd.DataFrame(data, index=pd.RangeIndex(n), dtype=object)
    if rng.random() < 0.05 and data:
        header = rng.choice(list(data))
        raw[header] = pd.Series([rng.choice([1.0, 2.5, np.nan]) for _ in range(n)], dtype="float64")
    if rng.random() < 0.05:
        raw.index = pd.Index([3 * i + 5 for i in range(n)])
    return raw


def _same_cells(a: pd.Series, b: pd.Series) -> None:
    """Object columns hold the same kind of value in each cell (None is not NaN)."""
    if a.dtype == object:
        assert [type(v) for v in a] == [type(v) for v in b]


def assert_same(spec: SheetSpec, raw: pd.DataFrame) -> None:
    typed, findings = schema.coerce_frame(spec, raw)
    ref_typed, ref_findings = _coerce_frame_by_column(spec, raw)
    pd.testing.assert_frame_equal(typed, ref_typed, check_exact=True)
    for header in typed:
        _same_cells(typed[header], ref_typed[header])
    assert len(findings) == len(ref_findings)
    for got, want in zip(findings, ref_findings, strict=True):
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        for header in got:
            _same_cells(got[header], want[header])


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.schema.name)
def test_batched_coercion_matches_column_by_column(program, monkeypatch):
    rng = random.Random(f"coerce-{program.schema.name}-{os.environ.get('NJC_COERCE_SEED', '')}")
    frames = int(os.environ.get("NJC_COERCE_FRAMES", "1"))
    for _ in range(frames):
        # now and then a batch limit so small that kinds are cut into several batches or left alone
        monkeypatch.setattr(schema, "BATCH_CELLS", rng.choice([1_000_000, 100_000, 100_000, 12, 25, 40]))
        assert_same(program.schema, _raw(rng, program.schema))
