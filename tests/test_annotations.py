"""The notes of the findings that point at an input cell (`toolcolumns.annotation_frame`): one per
cell, its worst severity, its findings' texts in their order, the cells in the order the notes are
written (rows by their first finding, a row's cells by theirs); and the same as the plain nested
loop it replaced, on random findings."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batch.workbook.toolcolumns import annotation_frame, annotations, note_cells

FIELDS = ["Transfer ID", "Seller", "Buyer", None, "Seller"]  # column 3 an extra column; "Seller" kept twice: the first counts


def _res(rows: list[tuple]) -> SimpleNamespace:
    """A sheet's result with these findings: (pos, Column, Severity, Code, Message, Citation)."""
    findings = pd.DataFrame(rows, columns=["pos", "Column", "Severity", "Code", "Message", "Citation"])
    return SimpleNamespace(sheet=SimpleNamespace(fields=FIELDS), findings=findings)


def _text(code: str, severity: str) -> str:
    return f"{code} ({severity}): m-{code} [c-{code}]"


def _f(pos: int, column: str, severity: str, code: str) -> tuple:
    return (pos, column, severity, code, f"m-{code}", f"c-{code}")


CASES = [
    ("no findings", [], []),
    ("one finding at a cell", [_f(0, "Seller", "error", "A")], [(0, 1, "error", _text("A", "error"))]),
    # two at one cell: the worse severity (error before warning before info), the texts in the findings' order
    (
        "two at one cell",
        [_f(2, "Buyer", "warning", "W"), _f(2, "Buyer", "error", "E")],
        [(2, 2, "error", _text("W", "warning") + "\n\n" + _text("E", "error"))],
    ),
    ("an info finding alone", [_f(1, "Transfer ID", "info", "I")], [(1, 0, "info", _text("I", "info"))]),
    # rows 5, 3, 5 again: row 5's two cells first (its first finding came first), then row 3's
    (
        "rows in the order of their first finding",
        [_f(5, "Buyer", "warning", "X"), _f(3, "Seller", "error", "Y"), _f(5, "Transfer ID", "info", "Z")],
        [(5, 2, "warning", _text("X", "warning")), (5, 0, "info", _text("Z", "info")), (3, 1, "error", _text("Y", "error"))],
    ),
    # a missing message or citation written as an f-string writes it, as the notes always were
    (
        "a missing message",
        [(4, "Seller", "warning", "M", None, float("nan"))],
        [(4, 1, "warning", "M (warning): None [nan]")],
    ),
    # no cell: a finding of the whole row (pos -1 is the sheet's) or of a computed column
    ("findings of no input cell", [_f(-1, "Seller", "error", "S"), _f(0, "Award", "error", "C")], []),
]


@pytest.mark.parametrize("case,rows,expected", CASES, ids=[c for c, _, _ in CASES])
def test_one_note_per_cell(case, rows, expected):
    got = annotation_frame(_res(rows))
    assert list(got.itertuples(index=False, name=None)) == expected
    nested: dict = {}
    for pos, col, severity, text in expected:
        nested.setdefault(pos, {})[col] = (severity, text)
    assert annotations(_res(rows)) == nested


def _reference(res) -> dict:
    """The nested loop the frame replaced: the notes as they were written before."""
    col_index = {}
    for i, f in enumerate(res.sheet.fields):
        if f is not None and f not in col_index:
            col_index[f] = i
    located = res.findings[(res.findings["pos"] >= 0) & res.findings["Column"].isin(col_index)]
    notes: dict = {}
    for pos, column, sev, code, msg, cite in located.itertuples(index=False, name=None):
        notes.setdefault(int(pos), {}).setdefault(col_index[column], []).append((sev, f"{code} ({sev}): {msg} [{cite}]"))
    order = {"error": 0, "warning": 1, "info": 2}
    return {
        pos: {c: (min((s for s, _ in items), key=order.get), "\n\n".join(t for _, t in items)) for c, items in cols.items()}
        for pos, cols in notes.items()
    }


FINDING = st.tuples(
    st.integers(-1, 6),
    st.sampled_from(["Transfer ID", "Seller", "Buyer", "Award"]),
    st.sampled_from(["error", "warning", "info"]),
    st.sampled_from(["A", "B", "C"]),
    st.one_of(st.text(max_size=5), st.none()),
    st.one_of(st.text(max_size=5), st.just(float("nan"))),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(FINDING, max_size=30))
def test_the_same_notes_in_the_same_order_as_the_loop_it_replaced(rows):
    res = _res(rows)
    got, want = annotations(res), _reference(res)
    assert got == want
    assert [(p, list(c.items())) for p, c in got.items()] == [(p, list(c.items())) for p, c in want.items()]  # the order too


@settings(max_examples=200, deadline=None)
@given(st.lists(FINDING, max_size=30), st.integers(0, 12), st.integers(0, 12))
def test_notes_made_a_block_of_cells_at_a_time_are_those_made_at_once(rows, start, size):
    """`NoteCells.texts(start, stop)`: the notes of those cells, whatever the block (within the cells,
    across a cell of several findings, past the last cell)."""
    found = note_cells(_res(rows))
    whole = found.texts()
    assert found.texts(start, start + size).tolist() == whole[start : start + size].tolist()
    blocks = [found.texts(a, a + max(size, 1)) for a in range(0, len(found), max(size, 1))]
    assert [t for b in blocks for t in b.tolist()] == whole.tolist()
