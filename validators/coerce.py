"""Turn raw cell values (as the reader gives them) into typed columns, whole column at a time.

Every parser takes an object Series of raw cells (str, float, int, bool, date, datetime, or
"" for an empty cell) and returns the typed Series plus a boolean mask of the cells that could
not be read ("bad"). Each cell is read on its own: its value and badness never depend on the other
cells, and the dtype of what is returned never depends on what the cells hold, so the cells of
several columns may be read in one call. `known` (optional) is `types_and_blanks` of the cells when
the caller has it already. Blank cells are never bad here: whether a blank is allowed is the
schema's business (MISSING_VALUE).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_FLOOR, Decimal, InvalidOperation

import numpy as np
import pandas as pd

# Largest money magnitude the reader accepts, in dollars. Integer cents must stay far inside
# int64 so that exact ratio arithmetic (cents x 10,000) cannot overflow ($1 trillion).
MONEY_LIMIT_DOLLARS = 10**12
# A bare number in a date column is read as an Excel serial day only inside this window
# (1990-01-01 .. 2099-12-31); anything else is more likely a typo than a date. (A cell Excel holds
# as a date arrives as a date, whatever its year, and is read as that date.)
EXCEL_SERIAL_WINDOW = (32874, 73050)
EXCEL_EPOCH = np.datetime64("1899-12-30", "D")
# Typed dates are held at second resolution: every date a cell can hold (1900-01-01 .. 9999-12-31,
# and any year 1..9999 written as text) fits, where datetime64[ns] ends at 2262-04-11.
DATE_DTYPE = "datetime64[s]"
# Excel keeps 15 significant digits: a number cell's decimal "as typed" is its value to 15 digits.
EXCEL_DIGITS = 15

_YES = {"y", "yes", "true", "1", "1.0"}
_NO = {"n", "no", "false", "0", "0.0"}
_SPACES = re.compile(r"[\s\u00a0\u2007\u202f]+")


class ExcelError(str):
    """A cell holding an Excel error value (#N/A, #DIV/0!, ...): never a valid value of any column."""


# numpy ufuncs over arrays of Python objects, calling the builtin on each (no Python frame per cell)
_TYPE, _ISSPACE, _STRIP = np.frompyfunc(type, 1, 1), np.frompyfunc(str.isspace, 1, 1), np.frompyfunc(str.strip, 1, 1)
_FOLDED, _IS_YES, _IS_NO = np.frompyfunc(str.casefold, 1, 1), np.frompyfunc(_YES.__contains__, 1, 1), np.frompyfunc(_NO.__contains__, 1, 1)


def _types(raw: pd.Series) -> pd.Series:
    """The type of each cell: over the array of the cells as the reader gives them (Python objects);
    pandas' map for a column of another kind (or none)."""
    if raw.dtype != object or not len(raw):
        return raw.map(type)
    return pd.Series(_TYPE(raw.to_numpy()), index=raw.index, dtype=object)


def _str_cells(types: pd.Series) -> np.ndarray:
    """Cells whose type is exactly str (not ExcelError, a str subclass), as a boolean array."""
    return types.to_numpy() == str  # noqa: E721 - numpy compares each cell's type


def text_cells(raw: pd.Series) -> np.ndarray:
    """The cells that are text (exactly str: not an Excel error value, a str subclass), as a boolean array."""
    return _str_cells(_types(raw))


def _is_str(types: pd.Series) -> pd.Series:
    """`_str_cells` as a Series of the cells' labels."""
    return pd.Series(_str_cells(types), index=types.index)


def blank_mask(raw: pd.Series, types: pd.Series | None = None) -> pd.Series:
    """True where a cell is empty or holds only spaces (any whitespace, no-break spaces included:
    what `_SPACES` matches is exactly what `str.isspace` calls space). `types` is the type of each
    cell (`raw.map(type)`) when the caller has it already."""
    if types is None:
        types = _types(raw)
    values = raw.to_numpy(dtype=object)
    is_str = _str_cells(types)
    if len(values) and is_str.all():  # a column of text (most are): no cell is missing, none taken out
        return pd.Series((values == "") | _ISSPACE(values).astype(bool), index=raw.index)
    blank = pd.isna(values)
    if is_str.any():
        text = values[is_str]
        blank[is_str] = (text == "") | _ISSPACE(text).astype(bool)
    return pd.Series(blank, index=raw.index)


def types_and_blanks(raw: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The type of each cell and `blank_mask`: what every coercer first reads of its cells. A
    caller that cuts the same cells among several coercers reads them once and hands each coercer
    its part of the pair as `known`."""
    types = _types(raw)
    return types, blank_mask(raw, types)


def _known(raw: pd.Series, known: tuple[pd.Series, pd.Series] | None) -> tuple[pd.Series, pd.Series]:
    return types_and_blanks(raw) if known is None else known


def _number_types(t: pd.Series) -> pd.Series:
    return t.isin([int, float, np.float64, np.int64])


# Number text once spaces are removed: an optional sign, an optional leading `$` (either order),
# then digits with commas only as thousands separators in groups of three (`1,250,000.50`), or
# plain digits with an optional exponent (`1250000`, `1.25E+06`). A decimal comma (`1.250,00`,
# `1,2`, `30000,00`) or any other comma (`1,25,000`) matches nothing: never read as another amount.
_NUMBER_TEXT = re.compile(
    r"^(?P<s1>[+-]?)\$?(?P<s2>[+-]?)"
    r"(?P<num>[1-9]\d{0,2}(?:,\d{3})+(?:\.\d*)?|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$"
)


# The number part of money text whose only separator is one `.` followed by exactly three digits
# (`96.000`, `1.250`, `.500`): 96 in US notation, 96,000 in much of Europe, where a point separates
# thousands. Money has cents, not thousandths, so such text is ambiguous and never read.
_POINT_THOUSANDS = re.compile(r"^(?P<whole>\d*)\.(?P<part>\d{3})$")


def _number_parts(text: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The number as plain decimal text ('$1,250,000', ' 1 250 000 ', '(1,000)', '-$1,250.50' ->
    '1250000', '-1000', '-1250.50') and its number part as typed (without sign, `$`, parentheses
    and spaces); NaN where the text is no number."""
    s = text.astype(str).str.replace(_SPACES, "", regex=True).str.replace(r"^\$\(", "(", regex=True)  # $(1,000) is ($1,000)
    paren = s.str.match(r"^\(.*\)$")
    s = s.str.replace(r"^\((.*)\)$", r"\1", regex=True)
    parts = s.str.extract(_NUMBER_TEXT)
    signs = parts["s1"].fillna("") + parts["s2"].fillna("")
    ok = parts["num"].notna() & (signs.str.len() <= 1) & ~(paren & (signs != ""))
    negative = paren | (signs == "-")
    plain = parts["num"].str.replace(",", "", regex=False)
    return ("-" + plain).where(negative, plain).where(ok), parts["num"].where(ok)


def _text_parts(raw: pd.Series, known: tuple[pd.Series, pd.Series] | None = None) -> tuple[pd.Series, tuple | None]:
    """Which cells are text (not blank), and `_number_parts` of those cells (None when there is
    none): read once for the coercers that look at the same text twice (`money`)."""
    types, blank = _known(raw, known)
    is_str = _is_str(types) & ~blank
    return is_str, (_number_parts(raw[is_str]) if is_str.any() else None)


def point_thousands(
    raw: pd.Series, *, known: tuple[pd.Series, pd.Series] | None = None, text_parts: tuple | None = None
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Money text whose only separator is one `.` followed by exactly three digits (`96.000`,
    `$1.250`, `-96.000`, `.500`): the mask of those cells, and the two amounts the text may mean:
    the point read as a decimal point (a Decimal, 96.000 -> 96.000) and as a thousands separator
    (integer cents, Int64: 96.000 -> 9,600,000). A number cell is a number and is never
    questioned; `1,250.000` (a comma too) and `96.0000` are no such text. `text_parts`: the cells'
    `_text_parts`, when read already."""
    is_str, parts = text_parts or _text_parts(raw, known)
    mask = pd.Series(False, index=raw.index)
    as_point = pd.Series(None, index=raw.index, dtype=object)
    as_thousands = pd.Series(pd.NA, index=raw.index, dtype="Int64")
    if parts is None:
        return mask, as_point, as_thousands
    plain, num = parts
    parts = num.str.extract(_POINT_THOUSANDS)
    hit = parts["part"].notna()
    if not hit.any():
        return mask, as_point, as_thousands
    idx = hit.index[hit.to_numpy()]
    mask[idx] = True
    sign = np.where(plain[idx].str.startswith("-"), -1, 1)
    digits = (parts.loc[idx, "whole"].fillna("") + parts.loc[idx, "part"]).astype("int64").to_numpy()
    as_thousands[idx] = sign * digits * 100
    as_point[idx] = [Decimal(t) for t in plain[idx]]
    return mask, as_point, as_thousands


def _numbers(
    raw: pd.Series, known: tuple[pd.Series, pd.Series] | None = None, text_parts: tuple | None = None
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Numeric value of each cell (float, NaN when blank or unreadable), the bad mask, and the
    decimal text of each text cell that reads as a number (NaN elsewhere). `text_parts`: the
    cells' `_text_parts`, when read already."""
    known = _known(raw, known)  # read once, here and for the text parts
    t, blank = known
    is_num = _number_types(t)
    is_str, parts = text_parts or _text_parts(raw, known)
    out = pd.Series(np.nan, index=raw.index, dtype="float64")
    typed = pd.Series(np.nan, index=raw.index, dtype=object)
    if is_num.any():
        out[is_num] = raw[is_num].astype("float64")
    if parts is not None:
        dec = parts[0]  # the number as plain decimal text
        typed[is_str] = dec
        out[is_str] = pd.to_numeric(dec, errors="coerce").astype("float64")
    bad = ~blank & (out.isna() | ~np.isfinite(out.fillna(0)))
    return out.where(~bad), bad, typed.where(~bad)


def _cents_half_up(value: Decimal) -> int:
    """Whole cents, half up (toward the larger amount, as `batch.programs._kit.exact.Q.cents`)."""
    return int((value * 100 + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR))


def money(raw: pd.Series, *, known: tuple[pd.Series, pd.Series] | None = None) -> tuple[pd.Series, pd.Series]:
    """Integer cents (Int64), rounded half up on the decimal as typed: `0.0050` -> 1 cent, `2.6750`
    -> 268 cents, whether the cell holds text or a number (a number cell's decimal is its value to
    Excel's 15 significant digits, so the binary float 2.67499999... is the 2.675 that was typed).
    Text whose only separator is one `.` followed by exactly three digits (`96.000`) is bad: it is
    96 in US notation and 96,000 in much of Europe (`point_thousands`)."""
    known = _known(raw, known)
    text_parts = _text_parts(raw, known)  # its text read once, for the amount and for `point_thousands`
    num, bad, typed = _numbers(raw, known, text_parts)
    bad = bad | (num.abs() >= MONEY_LIMIT_DOLLARS) | point_thousands(raw, known=known, text_parts=text_parts)[0]
    num = num.where(~bad)
    scaled = (num * 100).to_numpy(dtype="float64", na_value=np.nan)
    cents = np.round(scaled)
    # a whole number of cents (within float error) is exact already; any other amount is rounded
    # on its decimal, never on the binary float (2.675 is 267.4999... cents as a float)
    inexact = np.flatnonzero(~np.isnan(scaled) & (np.abs(scaled - cents) > 1e-6))
    if len(inexact):
        texts = typed.to_numpy(dtype=object)
        values = num.to_numpy(dtype="float64")
        for i in inexact:
            text = texts[i] if isinstance(texts[i], str) else format(values[i], f".{EXCEL_DIGITS}g")
            try:
                cents[i] = _cents_half_up(Decimal(text))
            except InvalidOperation:  # pragma: no cover - the text matched the number pattern
                cents[i] = np.nan
    # an amount that rounds to $1 trillion (999,999,999,999.995) is as refused as $1 trillion
    over = np.abs(np.nan_to_num(cents)) >= MONEY_LIMIT_DOLLARS * 100
    if over.any():
        bad = bad | over
        cents[over] = np.nan
    return pd.array(cents, dtype="Int64") if len(cents) else pd.Series([], dtype="Int64"), bad


def integer(raw: pd.Series, *, known: tuple[pd.Series, pd.Series] | None = None) -> tuple[pd.Series, pd.Series]:
    num, bad, _ = _numbers(raw, known)
    bad = bad | (num.notna() & (num != np.round(num))) | (num.abs() >= 2**53)
    return pd.array(num.where(~bad), dtype="Int64") if len(num) else pd.Series([], dtype="Int64"), bad


def number(raw: pd.Series, *, known: tuple[pd.Series, pd.Series] | None = None) -> tuple[pd.Series, pd.Series]:
    num, bad, _ = _numbers(raw, known)
    return pd.array(num, dtype="Float64"), bad


def percent(raw: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Fraction (Float64), bad mask, and the mask of numbers above 1 read as percents."""
    t = _types(raw)
    is_pct_text = _is_str(t) & raw.astype(str).str.strip().str.endswith("%")
    cleaned = raw.where(~is_pct_text, raw.astype(str).str.strip().str.rstrip("%"))
    num, bad, _ = _numbers(cleaned)
    num = num.where(~is_pct_text, num / 100)
    scaled = ~is_pct_text & (num > 1)
    num = num.where(~scaled, num / 100)
    return pd.array(num, dtype="Float64"), bad, scaled


def yesno(raw: pd.Series, *, known: tuple[pd.Series, pd.Series] | None = None) -> tuple[pd.Series, pd.Series]:
    t, blank = _known(raw, known)
    # each cell's text (`astype(str)`; a missing cell stays missing: code -1), trimmed and case
    # folded once for each distinct text, as a column of yes/no answers holds few
    codes, distinct = pd.factorize(raw.astype(str))
    key = _FOLDED(_STRIP(distinct.to_numpy(dtype=object)))
    is_bool = t.isin([bool, np.bool_])
    yes = pd.Series(np.append(_IS_YES(key).astype(bool), False)[codes], index=raw.index) & ~is_bool  # -1: the False appended
    no = pd.Series(np.append(_IS_NO(key).astype(bool), False)[codes], index=raw.index) & ~is_bool
    out = yes | (is_bool & (raw == True))  # noqa: E712 - element-wise comparison
    bad = ~blank & ~is_bool & ~yes & ~no
    return out.astype(bool), bad


# Text spellings of a date besides ISO `2016-03-31`; d/m/y stays unread (3/4/2016 is March 4)
DATE_FORMATS = ("%Y-%m-%d %H:%M:%S", "%m/%d/%Y", "%Y/%m/%d", "%m-%d-%Y", "%B %d, %Y", "%b %d, %Y", "%d-%b-%Y", "%d %B %Y", "%Y%m%d")


# the days from 0001-01-01 (day 1 of `date.toordinal`) to 1970-01-01 (day 0 of datetime64[D])
_ORDINAL_1970 = dt.date(1970, 1, 1).toordinal()
# the day of a date, a datetime or a Timestamp (a time of day dropped), as `date.toordinal` counts them
_ORDINAL = np.frompyfunc(dt.date.toordinal, 1, 1)


def date(raw: pd.Series, *, known: tuple[pd.Series, pd.Series] | None = None) -> tuple[pd.Series, pd.Series]:
    """The day of each cell as `DATE_DTYPE` (a time of day is dropped), NaT when blank or
    unreadable, and the bad mask. Any date a cell can hold is read as that date, 1900-01-01 and
    9999-12-31 ("no end date") included: the dates are held as days, never as nanoseconds."""
    t, blank = _known(raw, known)
    days = np.full(len(raw), np.datetime64("NaT"), dtype="datetime64[D]")
    is_dt = t.isin([dt.date, dt.datetime, pd.Timestamp]).to_numpy()
    if is_dt.any():
        days[is_dt] = (_ORDINAL(raw.to_numpy(dtype=object)[is_dt]).astype(np.int64) - _ORDINAL_1970).astype("datetime64[D]")
    is_num = _number_types(t).to_numpy()
    if is_num.any():
        serial = raw[is_num].to_numpy(dtype="float64")
        ok = (serial >= EXCEL_SERIAL_WINDOW[0]) & (serial <= EXCEL_SERIAL_WINDOW[1])
        whole = np.round(np.where(ok, serial, 0)).astype(np.int64)
        days[is_num] = np.where(ok, EXCEL_EPOCH + whole.astype("timedelta64[D]"), np.datetime64("NaT"))
    is_str = _str_cells(t) & ~blank.to_numpy(dtype=bool)
    if is_str.any():
        text = raw[is_str].astype(str).str.strip()
        # pandas >= 3 parses text at microsecond resolution (years 1..9999 fit); each format is
        # taken to the day at once, so no step depends on the nanosecond range
        parsed = pd.to_datetime(text, format="%Y-%m-%d", errors="coerce").to_numpy(dtype="datetime64[D]")
        for fmt in DATE_FORMATS:
            left = np.isnat(parsed)
            if not left.any():
                break
            parsed[left] = pd.to_datetime(text[left], format=fmt, errors="coerce").to_numpy(dtype="datetime64[D]")
        days[is_str] = parsed
    out = pd.Series(days.astype(DATE_DTYPE), index=raw.index)
    bad = ~blank & out.isna()
    return out, bad


def _as_text(v) -> str:
    """A cell that is not text, as its usual text: TRUE/FALSE, a whole number without `.0`, a date
    in ISO form."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    return str(v)


_AS_TEXT = np.frompyfunc(_as_text, 1, 1)


def text(raw: pd.Series, *, known: tuple[pd.Series, pd.Series] | None = None) -> tuple[pd.Series, pd.Series]:
    """Text as given (spaces trimmed); numbers and dates become their usual text (`_as_text`)."""
    t, blank = _known(raw, known)
    values, blank = raw.to_numpy(dtype=object), blank.to_numpy(dtype=bool)
    is_str = _str_cells(t)
    out = np.where(is_str & ~blank, values, None)
    other = ~blank & ~is_str
    if other.any():
        out[other] = _AS_TEXT(values[other])
    if (~blank).any():
        out[~blank] = _STRIP(out[~blank])
    return pd.Series(out, index=raw.index, dtype=object), pd.Series(False, index=raw.index)


def code_key(code: str) -> str:
    """How a code is matched: its spaces as one, case ignored."""
    return _SPACES.sub(" ", code).strip().casefold()


_CODE_KEY = np.frompyfunc(code_key, 1, 1)


def _distinct_keys(txt: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each text's place among the distinct texts (-1: missing), the distinct texts, and the
    `code_key` of each: each distinct text keyed once."""
    at, distinct = pd.factorize(txt)
    given = distinct.to_numpy(dtype=object)
    return at, given, _CODE_KEY(given)


def code_keys(txt: pd.Series) -> pd.Series:
    """`code_key` of each text of `text` (already trimmed; None stays None)."""
    at, _given, keys = _distinct_keys(txt)
    return pd.Series(np.append(keys, None)[at], index=txt.index, dtype=object)


def code(raw: pd.Series, codes: tuple[str, ...], *, known: tuple[pd.Series, pd.Series] | None = None) -> tuple[pd.Series, pd.Series]:
    """Canonical spelling of each code (case and spacing ignored); unknown codes left as given."""
    txt, bad = text(raw, known=known)
    canon = {code_key(c): c for c in codes}
    at, given, keys = _distinct_keys(txt)  # each distinct text looked up once (a missing one: NaN, as pandas gave it)
    spelled = [canon.get(k, g) for k, g in zip(keys.tolist(), given.tolist(), strict=True)]
    return pd.Series(np.array([*spelled, np.nan], dtype=object)[at], index=txt.index, dtype=object), bad
