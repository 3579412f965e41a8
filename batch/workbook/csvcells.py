"""A CSV's text as Excel reads it on opening the file, where Excel shows the same characters.

A CSV holds only text; Excel, opening one, reads `1250000` as a number and `2016-03-31` as a date.
A workbook written anew from a CSV does the same where the cell then shows exactly the characters
the file holds, so the returned workbook sorts, sums and aligns as the analyst expects and never
shows other characters than the file's:
- a number: digits, an optional leading `-`, an optional `$` or `%`, commas only as thousands
  separators in groups of three, an optional decimal point with digits after it; no leading zero
  (`007` stays text: Excel would show `7`), no negative zero, at most 15 significant digits (Excel
  keeps no more); shown as Excel shows what it reads: a plain number in General, its shortest form
  in at most 11 characters (`1250000`, `0.5`, `-3.25`; `1.50` and `96.000` stay text, shown `1.5`
  and `96`), a number with thousands separators, `$` or `%` with no decimals or two
  (`1,250,000`, `1,250,000.00` shown `#,##0.00`, `$12.50` shown `"$"#,##0.00`, `35%` shown `0%`;
  `$12.5` and `$1250` stay text, shown `$12.50` and `$1,250`; a negative `$` amount stays text, shown in parentheses);
- an ISO date (`2016-03-31`) between 1900-01-01 and 9999-12-31: a date shown `yyyy-mm-dd`.
Everything else stays text, exactly. Reading the returned workbook back gives the same values
the first run read from the CSV (a number cell's value, a date's day), so both runs judge the
same figures.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

NUMBER = (
    r"(?P<sign>-)?(?P<dollar>\$)?"
    r"(?P<whole>0|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*)"
    r"(?:\.(?P<fraction>\d+))?(?P<percent>%)?"
)
ISO_DATE = r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
SIGNIFICANT = 15  # digits Excel keeps of a number
GENERAL_WIDTH = 11  # the most characters Excel's General format shows a number in without rounding it


@dataclass
class NumberFormats:
    """The number formats of a CSV's numbers that Excel does not show in General: per cell, its
    grid row, grid column and the index of its format in `names`."""

    rows: np.ndarray
    cols: np.ndarray
    codes: np.ndarray
    names: list[str]

    @functools.cached_property
    def _by_column(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        order = np.lexsort((self.rows, self.cols))
        cols, rows, codes = self.cols[order], self.rows[order], self.codes[order]
        keys, first = np.unique(cols, return_index=True)
        bounds = [*first.tolist(), len(cols)]
        return {int(k): (rows[a:b], codes[a:b]) for k, a, b in zip(keys.tolist(), bounds, bounds[1:], strict=False)}

    def at(self, col: int, rows: np.ndarray) -> np.ndarray:
        """Per grid row of `rows` in column `col`: the index of its cell's format, or -1 (General)."""
        out = np.full(len(rows), -1, dtype=np.int64)
        own_rows, own_codes = self._by_column.get(col, (None, None))
        if own_rows is not None:
            i = np.searchsorted(own_rows, rows).clip(0, len(own_rows) - 1)
            hit = own_rows[i] == rows
            out[hit] = own_codes[i[hit]]
        return out


NUMBER_TEXT = re.compile(NUMBER)
STARTS = frozenset("0123456789-$")  # what a number's or an ISO date's text begins with
LONGEST = 40  # longer text is no number or date


def _number(match: re.Match) -> tuple[str, str | None] | None:
    """A number's text (digits and exponent, for one exact conversion) and the number format that
    shows it as written (None: General), or None where Excel would show other characters."""
    sign, dollar, whole, fraction, percent = match.groups()
    sign, fraction = sign or "", fraction or ""
    grouped = "," in whole
    plain = not (grouped or dollar or percent)
    if plain and (fraction.endswith("0") or len(match.string) > GENERAL_WIDTH):
        return None  # General would show `1.5` for `1.50`, `1.23457E+11` for 12 digits
    if not plain and len(fraction) not in (0, 2):
        return None  # shown with two decimals: `1,000.5` as `1,000.50`
    if dollar and (percent or sign or (not grouped and len(whole) > 3)):
        return None  # `-$1,000` is shown `($1,000)`, `$1250` `$1,250`
    digits = whole.replace(",", "") + fraction
    if len(digits.lstrip("0")) > SIGNIFICANT or (sign and not digits.strip("0")):
        return None  # Excel keeps 15 digits; `-0` is shown `0`
    # the value from the digits, rounded once: 12.50% is 1250e-4, not 12.5 / 100
    exponent = len(fraction) + (2 if percent else 0)
    if plain:
        return f"{sign}{digits}e-{exponent}", None
    shown = ('"$"' if dollar else "") + ("#,##0" if grouped or dollar else "0") + (".00" if fraction else "") + ("%" if percent else "")
    return f"{sign}{digits}e-{exponent}", shown


def as_excel_reads(grid: list[list[str]]) -> tuple[list[list], NumberFormats]:
    """The grid of a CSV's text cells with each number and ISO date as Excel reads it (see the
    module), and the number formats that show its numbers as written.

    Only text that begins like a number or a date is looked at (a digit, `-` or `$`), so names,
    IDs such as `T-1` and notes cost one look at their first character."""
    none = NumberFormats(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [])
    if not grid or not grid[0]:
        return grid, none
    cells = np.empty((len(grid), len(grid[0])), dtype=object)  # the grid's rows are of one width
    cells[:] = grid
    flat = cells.ravel()
    maybe = [i for i, v in enumerate(flat.tolist()) if v[:1] in STARTS and len(v) <= LONGEST]
    if not maybe:
        return grid, none
    texts = flat[maybe].tolist()
    # each distinct text parsed once (a month's amounts and dates repeat)
    distinct = pd.unique(pd.Series(texts, dtype=object))
    parsed_once = [_number(m) if m is not None else None for m in map(NUMBER_TEXT.fullmatch, distinct.tolist())]
    which = pd.Index(distinct).get_indexer(texts)
    parsed = [(i, parsed_once[k]) for i, k in zip(maybe, which.tolist(), strict=True) if parsed_once[k] is not None]
    at = np.array([i for i, _ in parsed], dtype=np.int64)
    if len(at):
        flat[at] = pd.Series([p[0] for _, p in parsed], dtype=object).astype(float).to_numpy(dtype=object)
    dated = [i for i, v in zip(maybe, texts, strict=True) if len(v) == 10 and v[4:5] == "-" and v[7:8] == "-"]
    if dated:
        text = pd.Series(flat[dated], dtype=object)
        days = pd.to_datetime(text.where(text.str.fullmatch(ISO_DATE)), format="%Y-%m-%d", errors="coerce")
        good = (days.notna() & (days.dt.year >= 1900)).to_numpy()
        if good.any():
            flat[np.array(dated)[good]] = np.array([dt.date(d.year, d.month, d.day) for d in days[good]], dtype=object)
    formats = [(i, p[1]) for i, p in parsed if p[1] is not None]
    names = list(dict.fromkeys(f for _, f in formats))
    index = {name: k for k, name in enumerate(names)}
    where = np.array([i for i, _ in formats], dtype=np.int64)
    width = cells.shape[1]
    own = NumberFormats(where // width, where % width, np.array([index[f] for _, f in formats], dtype=np.int64), names)
    return cells.tolist(), own
