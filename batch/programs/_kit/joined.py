"""Columns of text joined from pieces in one pass (`concat`): a piece is a text, a column of texts,
or a list of those. Amounts in cents as such pieces (`money_pieces`), looked up in tables, not
formatted a row at a time; a column's repeated values held once (`held_once`). The explanation
columns (`batch.programs._kit.text`) and the findings' messages (`batch.programs._kit.findings`)
are built so."""

from __future__ import annotations

import numpy as np
import pandas as pd

# "0".."999" (the leading group), ",000"..",999" (a later group), then "" (no group there)
_GROUPS = np.array([str(i) for i in range(1000)] + [f",{i:03d}" for i in range(1000)] + [""], dtype=object)
_NO_GROUP = 2000
_CENTS = np.array([f".{i:02d}" for i in range(100)], dtype=object)
# ends each row while the pieces of all rows are joined as one text (no cell can hold it: XML 1.0)
_ROW_END = "\x00"


def flat(pieces: list):
    for piece in pieces:
        if isinstance(piece, list):
            yield from flat(piece)
        else:
            yield piece


def _grid(pieces: list, n: int, end: str | None = None) -> np.ndarray:
    """The pieces of `n` rows as a grid, a row's pieces in a row of it (and `end` after them)."""
    every = list(flat(pieces))
    grid = np.empty((n, len(every) + (end is not None)), dtype=object)
    for j, piece in enumerate(every):
        grid[:, j] = piece
    if end is not None:
        grid[:, -1] = end
    return grid


def whole(pieces: list, n: int) -> str:
    """The pieces of `n` rows joined as one text, row after row: no text is made per row."""
    return "".join(_grid(pieces, n).ravel().tolist())


def concat(pieces: list, n: int) -> np.ndarray:
    """Row by row, the pieces joined in order. The pieces of all rows are written as one text, each
    row ended by _ROW_END, and split at the ends: one pass, however many pieces."""
    grid = _grid(pieces, n, _ROW_END)
    rows = "".join(grid.ravel().tolist()).split(_ROW_END)
    if len(rows) != n + 1:  # a piece holds _ROW_END itself: join column by column instead
        return grid[:, :-1].sum(axis=1)
    return np.array(rows[:n], dtype=object)


def money_pieces(cents) -> list[np.ndarray]:
    """Amounts in cents as the pieces of '-1,234,567.89' (the text of `money_text`): the sign, each
    group of three digits and the cents, each looked up in a table."""
    cents = np.asarray(cents, dtype=np.int64)
    size = np.abs(cents)
    dollars = size // 100
    pieces = [np.where(cents < 0, "-", "")] if (cents < 0).any() else []
    digits = len(str(int(dollars.max()))) if len(cents) else 1
    for group in range((digits - 1) // 3, -1, -1):
        unit = 1000**group
        three = dollars // unit % 1000
        leading = np.where((dollars >= unit) | (group == 0), three, _NO_GROUP)
        pieces.append(_GROUPS[np.where(dollars >= unit * 1000, 1000 + three, leading)])
    pieces.append(_CENTS[size % 100])
    return pieces


def held_once(values: np.ndarray) -> np.ndarray:
    """`values` (objects) with each distinct value held once: equal values become the same object
    (a column of texts or numbers rendered for every row holds as many copies of a few values). A
    missing value (None, NaN) stays as it is."""
    present = ~pd.isna(values)
    if not present.any():
        return values
    codes, uniques = pd.factorize(values[present])
    out = values.copy()
    out[present] = np.asarray(uniques, dtype=object)[codes]
    return out
