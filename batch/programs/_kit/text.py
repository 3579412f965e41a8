"""Text helpers for an explanation column (the `Calculation` text): a column of text is built from
pieces (a text, a column of texts, or a list of those) joined in one pass (`concat`,
`batch.programs._kit.joined`); each distinct
value is formatted once (money from tables of the groups of three digits, whole numbers and
citations once per distinct value, a part that reads only a few results once per distinct
combination of them: `per_distinct`). No row is formatted on its own."""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit import rules_text
from batch.programs._kit.exact import Q
from batch.programs._kit.findings import money_text, short_cite
from batch.programs._kit.joined import concat


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
