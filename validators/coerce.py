"""Turn raw cell values (as the reader gives them) into typed columns, whole column at a time.

Every parser takes an object Series of raw cells (str, float, int, bool, date, datetime, or
"" for an empty cell) and returns the typed Series plus a boolean mask of the cells that could
not be read ("bad"). Blank cells are never bad here: whether a blank is allowed is the
schema's business (MISSING_VALUE).
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

# Largest money magnitude the reader accepts, in dollars. Integer cents must stay far inside
# int64 so that exact ratio arithmetic (cents x 10,000) cannot overflow ($1 trillion).
MONEY_LIMIT_DOLLARS = 10**12
# A bare number in a date column is read as an Excel serial day only inside this window
# (1990-01-01 .. 2099-12-31); anything else is more likely a typo than a date.
EXCEL_SERIAL_WINDOW = (32874, 73415)
EXCEL_EPOCH = pd.Timestamp("1899-12-30")

_YES = {"y", "yes", "true", "1", "1.0"}
_NO = {"n", "no", "false", "0", "0.0"}
_SPACES = re.compile(r"[\s\u00a0\u2007\u202f]+")


class ExcelError(str):
    """A cell holding an Excel error value (#N/A, #DIV/0!, ...): never a valid value of any column."""


def _types(raw: pd.Series) -> pd.Series:
    return raw.map(type)


def _is_str(types: pd.Series) -> pd.Series:
    """Cells whose type is exactly str (not ExcelError, a str subclass)."""
    return types.map(lambda t: t is str).astype(bool)


def blank_mask(raw: pd.Series) -> pd.Series:
    """True where a cell is empty or holds only spaces."""
    blank = raw.isna()
    is_str = _is_str(_types(raw))
    if is_str.any():
        blank[is_str] = raw[is_str].str.replace(_SPACES, "", regex=True) == ""
    return blank


def _number_types(t: pd.Series) -> pd.Series:
    return t.isin([int, float, np.float64, np.int64])


def _text_to_number(text: pd.Series) -> pd.Series:
    """'$1,250,000', ' 1 250 000 ', '(1,000)' -> float; anything else NaN."""
    s = text.astype(str).str.replace(_SPACES, "", regex=True).str.replace(r"[$,]", "", regex=True)
    neg = s.str.match(r"^\(.*\)$")
    s = s.str.replace(r"^\((.*)\)$", r"\1", regex=True)
    num = pd.to_numeric(s.where(s.str.match(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"), None), errors="coerce")
    return num.where(~neg, -num).astype("float64")


def _numbers(raw: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Numeric value of each cell (float, NaN when blank or unreadable) and the bad mask."""
    t = _types(raw)
    blank = blank_mask(raw)
    is_num = _number_types(t)
    is_str = _is_str(t) & ~blank
    out = pd.Series(np.nan, index=raw.index, dtype="float64")
    if is_num.any():
        out[is_num] = raw[is_num].astype("float64")
    if is_str.any():
        out[is_str] = _text_to_number(raw[is_str])
    bad = ~blank & (out.isna() | ~np.isfinite(out.fillna(0)))
    return out.where(~bad), bad


def money(raw: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Integer cents (Int64). Amounts are rounded to the nearest cent."""
    num, bad = _numbers(raw)
    bad = bad | (num.abs() >= MONEY_LIMIT_DOLLARS)
    cents = np.round(num.where(~bad) * 100)
    return pd.array(cents, dtype="Int64") if len(cents) else pd.Series([], dtype="Int64"), bad


def integer(raw: pd.Series) -> tuple[pd.Series, pd.Series]:
    num, bad = _numbers(raw)
    bad = bad | (num.notna() & (num != np.round(num))) | (num.abs() >= 2**53)
    return pd.array(num.where(~bad), dtype="Int64") if len(num) else pd.Series([], dtype="Int64"), bad


def number(raw: pd.Series) -> tuple[pd.Series, pd.Series]:
    num, bad = _numbers(raw)
    return pd.array(num, dtype="Float64"), bad


def percent(raw: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Fraction (Float64), bad mask, and the mask of numbers above 1 read as percents."""
    t = _types(raw)
    is_pct_text = _is_str(t) & raw.astype(str).str.strip().str.endswith("%")
    cleaned = raw.where(~is_pct_text, raw.astype(str).str.strip().str.rstrip("%"))
    num, bad = _numbers(cleaned)
    num = num.where(~is_pct_text, num / 100)
    scaled = ~is_pct_text & (num > 1)
    num = num.where(~scaled, num / 100)
    return pd.array(num, dtype="Float64"), bad, scaled


def yesno(raw: pd.Series) -> tuple[pd.Series, pd.Series]:
    t = _types(raw)
    blank = blank_mask(raw)
    key = raw.astype(str).str.strip().str.casefold()
    is_bool = t.isin([bool, np.bool_])
    yes = key.isin(_YES) & ~is_bool
    no = key.isin(_NO) & ~is_bool
    out = yes | (is_bool & (raw == True))  # noqa: E712 - element-wise comparison
    bad = ~blank & ~is_bool & ~yes & ~no
    return out.astype(bool), bad


def date(raw: pd.Series) -> tuple[pd.Series, pd.Series]:
    t = _types(raw)
    blank = blank_mask(raw)
    out = pd.Series(pd.NaT, index=raw.index, dtype="datetime64[ns]")
    is_dt = t.isin([dt.date, dt.datetime, pd.Timestamp])
    if is_dt.any():
        out[is_dt] = pd.to_datetime(raw[is_dt].map(lambda d: d.isoformat()), errors="coerce").dt.normalize()
    is_num = _number_types(t)
    if is_num.any():
        serial = raw[is_num].astype("float64")
        ok = serial.between(*EXCEL_SERIAL_WINDOW)
        out[is_num] = (EXCEL_EPOCH + pd.to_timedelta(serial.where(ok).round(), unit="D")).dt.normalize()
    is_str = _is_str(t) & ~blank
    if is_str.any():
        text = raw[is_str].astype(str).str.strip()
        parsed = pd.to_datetime(text, format="%Y-%m-%d", errors="coerce")
        # unambiguous spellings finance workbooks use; d/m/y stays unread (3/4/2016 is March 4)
        for fmt in ("%Y-%m-%d %H:%M:%S", "%m/%d/%Y", "%Y/%m/%d", "%m-%d-%Y", "%B %d, %Y", "%b %d, %Y", "%d-%b-%Y", "%d %B %Y", "%Y%m%d"):
            parsed = parsed.fillna(pd.to_datetime(text, format=fmt, errors="coerce"))
        out[is_str] = parsed.dt.normalize()
    bad = ~blank & out.isna()
    return out, bad


def text(raw: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Text as given (spaces trimmed); numbers and dates become their usual text."""
    t = _types(raw)
    blank = blank_mask(raw)

    def as_text(v):
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        if isinstance(v, (dt.date, dt.datetime)):
            return v.isoformat()
        return str(v)

    other = ~blank & ~_is_str(t)
    out = raw.astype(object).where(_is_str(t), None)
    if other.any():
        out[other] = raw[other].map(as_text)
    out = out.where(blank, out.astype(str).str.strip()).where(~blank, None)
    return out.astype(object), pd.Series(False, index=raw.index)


def code(raw: pd.Series, codes: tuple[str, ...]) -> tuple[pd.Series, pd.Series]:
    """Canonical spelling of each code (case and spacing ignored); unknown codes left as given."""
    txt, bad = text(raw)
    canon = {_SPACES.sub(" ", c).strip().casefold(): c for c in codes}
    key = txt.where(txt.isna(), txt.astype(str).str.replace(_SPACES, " ", regex=True).str.casefold())
    mapped = key.map(canon)
    return mapped.where(mapped.notna(), txt).astype(object), bad
