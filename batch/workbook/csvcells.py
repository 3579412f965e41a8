"""A CSV's text written as Excel reads it on opening the file, where Excel shows the same
characters and the tool reads the same figure.

A CSV holds only text, and the tool reads a CSV as the text it holds. Excel, opening a CSV, reads
`1250000` as a number and `2016-03-31` as a date. A workbook written anew from a CSV does the same
(`excel_values`) where the cell then shows exactly the characters the file holds:
- a number: ASCII digits, an optional leading `-`, an optional `$` or `%`, commas only as
  thousands separators in groups of three, an optional decimal point with digits after it; no
  leading zero (`007` stays text: Excel would show `7`), no negative zero, at most 15 significant
  digits (Excel keeps no more). Excel shows a plain number in General, its shortest form in at
  most 11 characters (`1250000`, `0.5`, `-3.25`; `1.50` and `96.000` would be shown `1.5` and
  `96`), and a number with thousands separators, `$` or `%` with no decimals or two (`1,250,000`,
  `1,250,000.00` in `#,##0.00`, `$12.50` in `"$"#,##0.00`, `35%` in `0%`; `$12.5` would be shown
  `$12.50`, `$1250` `$1,250`, a negative `$` amount in parentheses);
- an ISO date (`2016-03-31`) from 1900-01-01 on: a date shown `yyyy-mm-dd`.
And, so that the returned workbook dropped back in is judged exactly as the CSV was
(`judged_alike`), a cell of a column the program reads is written so only where the column's
reader reads the value as it reads the text, neither of them bad: `150%` in a percent column
stays text (read as the text, it is 150%, out of range; read as the number 1.5, it would be taken
for 1.5%), `96.125` in a money column stays text (ambiguous as text, a number is never
questioned), `1,001` in a text column stays text (it would read back `1001`). Everything else
stays text, exactly.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

from validators import coerce

NUMBER = re.compile(r"(-)?(\$)?(0|[1-9][0-9]{0,2}(?:,[0-9]{3})+|[1-9][0-9]*)(?:\.([0-9]+))?(%)?")
ISO_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
SIGNIFICANT = 15  # digits Excel keeps of a number
GENERAL_WIDTH = 11  # the most characters Excel's General format shows a number in without rounding it
STARTS = frozenset("0123456789-$")  # what a number's or an ISO date's text begins with
LONGEST = 40  # longer text is no number or date
# the number formats that show a number as its text was written (a plain number: General)
FORMATS = ("#,##0", "#,##0.00", '"$"#,##0', '"$"#,##0.00', "0%", "0.00%")
NOT_CONVERTED = ("code", "yesno")  # kinds whose reader takes text only as text: their cells stay text


def _number(match: re.Match) -> tuple[str, int] | None:
    """A number's text (its digits and exponent, for one exact conversion) and the index in
    FORMATS of the format that shows it as written (-1: General), or None where Excel would show
    other characters."""
    sign, dollar, whole, fraction, percent = match.groups()
    sign, fraction = sign or "", fraction or ""
    grouped = "," in whole
    plain = not (grouped or dollar or percent)
    if plain and (fraction.endswith("0") or len(match.string) > GENERAL_WIDTH):
        return None
    if not plain and len(fraction) not in (0, 2):
        return None
    if dollar and (percent or sign or (not grouped and len(whole) > 3)):
        return None
    digits = whole.replace(",", "") + fraction
    if len(digits.lstrip("0")) > SIGNIFICANT or (sign and not digits.strip("0")):
        return None
    # the value from the digits, rounded once: 12.50% is 1250e-4, not 12.5 / 100
    exponent = len(fraction) + (2 if percent else 0)
    if plain:
        return f"{sign}{digits}e-{exponent}", -1
    shown = ("$" if dollar else "") + ("%" if percent else "") + (".00" if fraction else "")
    return f"{sign}{digits}e-{exponent}", {"": 0, ".00": 1, "$": 2, "$.00": 3, "%": 4, "%.00": 5}[shown]


def excel_values(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell of a CSV (text, or None): the value Excel reads in it where it shows the same
    characters (a float or a date), else the cell as it is; and the index in FORMATS of the
    number format that shows it (-1: General, or not a number).

    Only text that begins like a number or a date is looked at (a digit, `-` or `$`), so names,
    IDs such as `T-1` and notes cost one look at their first character; each distinct text is
    parsed once (a month's amounts and dates repeat)."""
    values = np.array(texts, dtype=object)
    formats = np.full(len(values), -1, dtype=np.int64)
    maybe = [i for i, v in enumerate(values.tolist()) if isinstance(v, str) and v[:1] in STARTS and len(v) <= LONGEST]
    if not maybe:
        return values, formats
    texts = values[maybe].tolist()
    distinct = pd.unique(pd.Series(texts, dtype=object)).tolist()
    parsed = [_number(m) if m is not None else None for m in map(NUMBER.fullmatch, distinct)]
    which = pd.Index(distinct).get_indexer(texts)
    hits = [(i, parsed[k]) for i, k in zip(maybe, which.tolist(), strict=True) if parsed[k] is not None]
    if hits:
        at = np.array([i for i, _ in hits], dtype=np.int64)
        values[at] = pd.Series([p[0] for _, p in hits], dtype=object).astype(float).to_numpy(dtype=object)
        formats[at] = [p[1] for _, p in hits]
    dated = [i for i, v in zip(maybe, texts, strict=True) if len(v) == 10 and v[4:5] == "-" and v[7:8] == "-"]
    if dated:
        text = pd.Series(values[dated], dtype=object)
        days = pd.to_datetime(text.where(text.str.fullmatch(ISO_DATE)), format="%Y-%m-%d", errors="coerce")
        good = (days.notna() & (days.dt.year >= 1900)).to_numpy()
        if good.any():
            values[np.array(dated)[good]] = np.array([dt.date(d.year, d.month, d.day) for d in days[good]], dtype=object)
    return values, formats


def _read(kind: str, cells: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """What a column's reader makes of cells: the values, and where they are bad or were taken as
    something else than written (a number above 1 in a percent column read as a percent)."""
    if kind == "percent":
        value, bad, scaled = coerce.percent(cells)
        return pd.Series(value, dtype=object), np.asarray(bad, dtype=bool) | np.asarray(scaled, dtype=bool)
    value, bad = getattr(coerce, kind)(cells)
    return pd.Series(value, dtype=object), np.asarray(bad, dtype=bool)


def judged_alike(kind: str | None, texts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per cell: whether `values` (from `excel_values`) may be written for `texts` in a column of
    `kind` (None: a column no program reads): the value differs from the text, and the column's
    reader reads the two alike, neither of them bad."""
    converted = np.array([not isinstance(v, str) for v in values.tolist()], dtype=bool) & np.array(
        [isinstance(t, str) for t in texts.tolist()], dtype=bool
    )
    if kind is None or not converted.any():
        return converted
    if kind in NOT_CONVERTED:
        return np.zeros(len(values), dtype=bool)
    at = np.flatnonzero(converted)
    as_text, text_bad = _read(kind, pd.Series(texts[at], dtype=object))
    as_value, value_bad = _read(kind, pd.Series(values[at], dtype=object))
    alike = [a is not pd.NA and b is not pd.NA and a == b for a, b in zip(as_text.tolist(), as_value.tolist(), strict=True)]
    same = np.array(alike, dtype=bool) & ~text_bad & ~value_bad
    out = np.zeros(len(values), dtype=bool)
    out[at[same]] = True
    return out
