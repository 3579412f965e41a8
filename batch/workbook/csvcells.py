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


def _numbers(text: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The numbers among `text` (floats) and the number format that shows each (None: General),
    indexed as `text`; the rest left out."""
    parts = text.str.extract(f"^{NUMBER}$")
    parts = parts[parts["whole"].notna()]
    if parts.empty:
        return pd.Series(dtype=object, index=text.index[:0]), pd.Series(dtype=object, index=text.index[:0])
    sign, dollar, percent = parts["sign"].fillna(""), parts["dollar"].notna(), parts["percent"].notna()
    grouped = parts["whole"].str.contains(",", regex=False)
    whole = parts["whole"].str.replace(",", "", regex=False)
    fraction = parts["fraction"].fillna("")
    digits = whole + fraction
    # the format Excel gives what it reads, and whether that shows the text's own characters:
    # General shows a plain number in its shortest form; a number with thousands separators,
    # a $ or a % is shown with no decimals or with two
    plain = ~grouped & ~dollar & ~percent
    general = (
        plain
        & ~fraction.str.endswith("0")
        & (parts["whole"].str.len() + sign.str.len() + fraction.str.len() + (fraction != "") <= GENERAL_WIDTH)
    )
    two = fraction.str.len().isin([0, 2])
    shows = (general | (~plain & two)) & ~(dollar & (percent | (sign != "")))
    shows &= ~(dollar & ~grouped & (whole.str.len() > 3))  # `$1250` is shown `$1,250`
    shows &= (digits.str.lstrip("0").str.len() <= SIGNIFICANT) & ~((digits.str.strip("0") == "") & (sign != ""))
    parts, sign, whole, fraction, grouped, dollar, percent, plain = (
        x[shows] for x in (parts, sign, whole, fraction, grouped, dollar, percent, plain)
    )
    if parts.empty:
        return pd.Series(dtype=object, index=text.index[:0]), pd.Series(dtype=object, index=text.index[:0])
    # the value from the digits, rounded once: 12.50% is 1250e-4, not 12.5 / 100
    exponent = fraction.str.len() + np.where(percent, 2, 0)
    value = (sign + whole + fraction + "e-" + exponent.astype(str)).astype(float)
    decimals = np.where(fraction != "", ".00", "")
    fmt = np.where(dollar, '"$"', "") + np.where(grouped | dollar, "#,##0", "0") + decimals + np.where(percent, "%", "")
    fmt = np.where(plain.to_numpy(), None, fmt.astype(object))
    return value.astype(object), pd.Series(fmt, index=parts.index, dtype=object)


def _dates(text: pd.Series) -> pd.Series:
    """The ISO dates among `text` that Excel can hold (a datetime.date each); the rest left out."""
    candidates = text[text.str.fullmatch(ISO_DATE, na=False)]
    if candidates.empty:
        return pd.Series(dtype=object, index=text.index[:0])
    days = pd.to_datetime(candidates, format="%Y-%m-%d", errors="coerce")
    good = days.notna() & (candidates.str[:4] >= "1900")
    return pd.Series([dt.date(d.year, d.month, d.day) for d in days[good]], index=candidates.index[good], dtype=object)


def as_excel_reads(grid: list[list[str]]) -> tuple[list[list], NumberFormats]:
    """The grid of a CSV's text cells with each number and ISO date as Excel reads it (see the
    module), and the number formats that show its numbers as written."""
    none = NumberFormats(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [])
    if not grid or not grid[0]:
        return grid, none
    text = pd.DataFrame(grid, dtype=object).stack()
    text = text[text.str.len().between(1, 40)]  # longer text is no number or date
    if text.empty:
        return grid, none
    numbers, formats = _numbers(text)
    found = pd.concat([numbers, _dates(text)])
    if found.empty:
        return grid, none
    cells = np.empty((len(grid), len(grid[0])), dtype=object)  # the grid's rows are of one width
    cells[:] = grid
    cells[found.index.get_level_values(0), found.index.get_level_values(1)] = found.to_numpy(dtype=object)
    formats = formats[formats.notna()]
    names = list(dict.fromkeys(formats.tolist()))
    codes = formats.map({name: i for i, name in enumerate(names)}).to_numpy(dtype=np.int64)
    where = formats.index
    own = NumberFormats(where.get_level_values(0).to_numpy(np.int64), where.get_level_values(1).to_numpy(np.int64), codes, names)
    return cells.tolist(), own
