"""Text helpers for an explanation column (the `Calculation` text): a column of text is built from
pieces (a text, a column of texts, or a list of those) joined in one pass (`concat`); each distinct
value is formatted once (money from tables of the groups of three digits, whole numbers and
citations once per distinct value, a part that reads only a few results once per distinct
combination of them: `per_distinct`). No row is formatted on its own."""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit import rules_text
from batch.programs._kit.exact import Q
from batch.programs._kit.findings import money_text, short_cite

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


def concat(pieces: list, n: int) -> np.ndarray:
    """Row by row, the pieces joined in order. The pieces of all rows are written as one text, each
    row ended by _ROW_END, and split at the ends: one pass, however many pieces."""
    every = list(flat(pieces))
    grid = np.empty((n, len(every) + 1), dtype=object)
    for j, piece in enumerate(every):
        grid[:, j] = piece
    grid[:, -1] = _ROW_END
    rows = "".join(grid.ravel().tolist()).split(_ROW_END)
    if len(rows) != n + 1:  # a piece holds _ROW_END itself: join column by column instead
        return grid[:, :-1].sum(axis=1)
    return np.array(rows[:n], dtype=object)


def when(mask: np.ndarray, build, otherwise: str = "") -> np.ndarray:
    """The text of `build(rows)` on the rows (positions) where mask holds; `otherwise` elsewhere."""
    rows = np.flatnonzero(mask)
    out = np.full(len(mask), otherwise, dtype=object)
    if len(rows):
        out[rows] = concat(build(rows), len(rows))
    return out


def per_distinct(build, *keys) -> np.ndarray:
    """The text of `build(rows)`, built on one row of each distinct combination of `keys` (every
    result the text reads) and spread to the rows with that combination."""
    code = np.zeros(len(keys[0]), dtype=np.int64)
    for key in keys:
        codes, uniques = pd.factorize(np.asarray(key), use_na_sentinel=False)
        code = pd.factorize(code * len(uniques) + codes)[0]
    first = np.unique(code, return_index=True)[1]
    return concat(build(first), len(first))[code]


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


def cents_of(q: Q, rows: np.ndarray) -> np.ndarray:
    """The amounts of `q` on the rows, rounded to the cent."""
    return Q(q.num[rows], q.den[rows]).cents()


def each(values, template: str = "{}") -> np.ndarray:
    """`template` filled in once with each distinct value, spread to the rows."""
    distinct, inverse = np.unique(np.asarray(values), return_inverse=True)
    return np.array([template.format(v) for v in distinct.tolist()], dtype=object)[inverse]


def join(parts: list[np.ndarray], sep: str) -> np.ndarray:
    """Join text columns, skipping empty pieces (vectorized)."""
    out = np.full(len(parts[0]) if parts else 0, "", dtype=object)
    for p in parts:
        p = np.asarray(p, dtype=object)
        out = np.where(p == "", out, np.where(out == "", p, out + sep + p))
    return out


def short_cites(cites) -> np.ndarray:
    """Each distinct citation shortened once: 'C.34:1B-246 c.(4)' -> '246c(4)'."""
    cites = pd.Series(np.asarray(cites, dtype=object))
    codes, uniques = pd.factorize(cites, use_na_sentinel=False)
    return np.array([short_cite(u) for u in uniques], dtype=object)[codes] if len(cites) else np.array([], dtype=object)


def dollars(values) -> np.ndarray:
    return money_text(values, cents=False)


def pct(fraction) -> str:
    """A share of the rules as the hints write it: exact, '90%', '7.5%'."""
    return rules_text.percent(fraction)


def tier_cites(tiers) -> np.ndarray:
    """Each tier's short citation, then "" (no tier): index with a step's `which`."""
    return np.array([short_cite(t.cite) for t in tiers] + [""], dtype=object)
