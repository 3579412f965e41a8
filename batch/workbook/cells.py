"""The one cell encoder: every cell the tool generates as SpreadsheetML goes through here.

The rules are the file format's, as xlsxwriter applies them (tests/test_cell_encoder.py writes
random values both ways and reads them back with python-calamine and openpyxl):
- text is an inline string (`t="inlineStr"`, never a formula), `&`, `<` and `>` escaped; control
  characters (other than tab and line feed) written as `_xHHHH_`; text that already looks like
  such an escape (`_x0041_`) protected as `_x005F_x0041_`, so it reads back as written. Every
  underscore that begins escape-like text in the written XML is protected, also where two share
  it (`_x005F_x0041_`) and where the next character is itself escaped (`_x005F` then a carriage
  return); xlsxwriter protects neither, so Excel and calamine read `_x005FA` and `_x000D_` back
  from its file: the one place where the encoder departs from xlsxwriter. U+FFFE and
  U+FFFF, which no XML part may hold, written as `_xFFFE_` and `_xFFFF_`; text over Excel's
  32,767-character limit (counted in UTF-16 units) cut to it, never inside a character;
- numbers as the shortest text that reads back as the same double; NaN and infinities as blank
  cells;
- booleans as `t="b"`;
- dates and times as serial days in the 1900 date system (1 = 1900-01-01; Excel counts a
  1900-02-29, so dates from 1900-03-01 on are one more than the plain count); a date Excel cannot
  hold (before 1900-01-01 or after 9999-12-31) as ISO text;
- a blank cell that carries a style (a finding's fill) as an empty styled cell.

Each function takes whole columns (numpy/pandas), so a sheet of 100,000 rows is encoded column by
column, not cell by cell.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

from batch.workbook.xlsxwriter_private import utf16_len, utf16_truncate

MAX_TEXT = 32_767  # Excel's limit on one cell's text, in UTF-16 units
FORMULA_TEXT_LIMIT = 255  # Excel's limit on a text constant in a formula
# an underscore that begins escape-like text in the written XML: `_xHHHH` then an underscore, or a
# character that is itself written as an escape (which begins with one)
ESCAPE_START = re.compile(r"_(?=x[0-9a-fA-F]{4}[_\x00-\x08\x0b-\x1f\ufffe\uffff])")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
CONTROL_ANY = re.compile(r"[\x00-\x08\x0b-\x1f\ufffe\uffff]")
NEEDS_ESCAPE = re.compile(r"_x[0-9a-fA-F]{4}_|[\x00-\x08\x0b-\x1f\ufffe\uffff]")
EPOCH = np.datetime64("1899-12-31", "us")  # serial 0
LEAP_BUG = np.datetime64("1900-03-01", "us")  # from here on, serials count Excel's 1900-02-29
FIRST = np.datetime64("1900-01-01", "us")
END = np.datetime64("9999-12-31", "us") + np.timedelta64(1, "D")  # the day after Excel's last
DAY_US = 86_400_000_000


def column_letters(n: int) -> str:
    """A 0-based column number as Excel's column letters: 0 is A, 25 is Z, 26 is AA, 16383 is XFD."""
    out, n = "", n + 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def truncated(values) -> np.ndarray:
    """Per value (str): longer than Excel's cell limit in UTF-16 units."""
    arr = np.asarray(values, dtype=object)
    lengths = np.fromiter(map(len, arr), dtype=np.int64, count=len(arr))
    out = np.zeros(len(arr), dtype=bool)
    maybe = np.flatnonzero(lengths > MAX_TEXT // 2)  # within half the limit, no text can exceed it
    if len(maybe):
        out[maybe] = [utf16_len(v) > MAX_TEXT for v in arr[maybe]]
    return out


def cut(values: np.ndarray) -> np.ndarray:
    """Text cut to Excel's limit where it exceeds it (the reader reports each cut as TEXT_TRUNCATED)."""
    over = np.flatnonzero(truncated(values))
    if not len(over):
        return values
    values = values.copy()
    values[over] = [utf16_truncate(v, MAX_TEXT) for v in values[over]]
    return values


# Whether any text of a column needs work is asked of the column's texts joined by line feeds, one
# regular-expression search for thousands of cells: a line feed is never escaped and cannot be part
# of an escape, so a match means some text needs escaping; at the edges of a text, it may give a
# false alarm (a space before a line feed inside a text), which the per-text check then clears.
# (`\n\s|\s\n` matches the same, but tries both branches at every character: twenty times slower;
# written so, the search jumps from line feed to line feed and looks at the characters beside each)
EDGE_SPACE_JOINED = re.compile(r"\n(?:(?=\s)|(?<=\s\n))")


CONTROL_CHARS = (*map(chr, (*range(0x00, 0x09), *range(0x0B, 0x20))), "\ufffe", "\uffff")  # what CONTROL_ANY matches


def _has_control(joined: str) -> bool:
    """Whether the text holds a character CONTROL_ANY matches: a substring search a character (a
    search for one character scans at memory speed) is ten times faster than the character class."""
    return any(c in joined for c in CONTROL_CHARS)


def _has_xml_chars(joined: str) -> bool:
    """Whether the text holds `&`, `<` or `>` (three substring searches scan faster than a character class)."""
    return "&" in joined or "<" in joined or ">" in joined


def _escape_xml(v: np.ndarray) -> np.ndarray:
    return np.array([t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for t in v.tolist()], dtype=object)


def text(values) -> tuple[np.ndarray, np.ndarray]:
    """The XML text of each string, and whether it needs `xml:space="preserve"`."""
    v = np.asarray(values, dtype=object)
    if pd.api.types.infer_dtype(v, skipna=False) != "string":
        v = np.array([str(t) for t in v.tolist()], dtype=object)
    v = cut(v)
    joined = "\n" + "\n".join(v.tolist()) + "\n"
    # a character class and a substring search scan long text faster than NEEDS_ESCAPE itself (an
    # escape has a lowercase x: `_X0041_` is text to Excel and calamine alike)
    if _has_control(joined) or ("_x" in joined and NEEDS_ESCAPE.search(joined)):
        special = np.fromiter((NEEDS_ESCAPE.search(t) is not None for t in v), dtype=bool, count=len(v))
        v = v.copy()
        s = pd.Series(v[special], dtype=object).str.replace(ESCAPE_START, "_x005F_", regex=True)
        s = s.str.replace(CONTROL, lambda m: f"_x{ord(m.group()):04X}_", regex=True)
        v[special] = s.str.replace("\ufffe", "_xFFFE_", regex=False).str.replace("\uffff", "_xFFFF_", regex=False).to_numpy(dtype=object)
        joined = None
    if joined is None or EDGE_SPACE_JOINED.search(joined):  # str.isspace is what `\s` matches
        preserve = np.fromiter((t[:1].isspace() or t[-1:].isspace() for t in v), dtype=bool, count=len(v))
    else:
        preserve = np.zeros(len(v), dtype=bool)
    if joined is None or _has_xml_chars(joined):
        v = _escape_xml(v)
    return v, preserve


# Each cell's text is made by one f-string over the columns' values (as lists): adding arrays of
# text piece by piece would make every intermediate text of every cell (about twice the time).


def _each(values, n: int) -> list:
    """A column's values as a list; one text (a style for every cell) repeated."""
    return [values] * n if isinstance(values, str) else np.asarray(values, dtype=object).tolist()


def _cells(texts: list[str]) -> np.ndarray:
    out = np.empty(len(texts), dtype=object)
    out[:] = texts
    return out


def strings(values: pd.Series, refs: np.ndarray, style: np.ndarray) -> np.ndarray:
    body, preserve = text(values)
    n = len(body)
    opening = ['<t xml:space="preserve">' if p else "<t>" for p in preserve.tolist()]
    return _cells(
        [
            f'<c r="{r}"{s} t="inlineStr"><is>{t}{b}</t></is></c>'
            for r, s, t, b in zip(_each(refs, n), _each(style, n), opening, body.tolist(), strict=True)
        ]
    )


def numbers(digits: np.ndarray, refs: np.ndarray, style: np.ndarray) -> np.ndarray:
    n = len(digits)
    return _cells([f'<c r="{r}"{s}><v>{d}</v></c>' for r, s, d in zip(_each(refs, n), _each(style, n), _each(digits, n), strict=True)])


def blanks(refs: np.ndarray, style: np.ndarray) -> np.ndarray:
    """Empty cells carrying a style (a finding's fill on a blank cell); nothing where no style."""
    n = len(refs)
    return _cells([f'<c r="{r}"{s}/>' if s != "" else "" for r, s in zip(_each(refs, n), _each(style, n), strict=True)])


def number_text(values: np.ndarray) -> np.ndarray:
    """Finite floats as the shortest text that reads back as the same double (`repr`); whole
    numbers below 10^15 without a decimal point."""
    x = np.asarray(values, dtype=float)
    whole = (np.floor(x) == x) & (np.abs(x) < 1e15)
    out = np.empty(len(x), dtype=object)
    if whole.any():
        out[whole] = x[whole].astype(np.int64).astype(str).astype(object)
    if (~whole).any():
        out[~whole] = np.array([repr(v) for v in x[~whole].tolist()], dtype=object)
    return out


def _stamps(values: pd.Series) -> np.ndarray:
    """Dates, datetimes and timestamps as datetime64[us] (any year numpy holds)."""
    if isinstance(values.dtype, np.dtype) and values.dtype.kind == "M":
        return values.to_numpy().astype("datetime64[us]")
    return np.array(values.tolist(), dtype="datetime64[us]")


def serials(stamps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Excel serial days of datetime64[us] values (as text), and which are within Excel's range."""
    us = (stamps - EPOCH).astype(np.int64)
    in_range = (stamps >= FIRST) & (stamps < END)
    us = np.where(stamps >= LEAP_BUG, us + DAY_US, us)
    days, rest = np.divmod(us, DAY_US)
    out = days.astype(str).astype(object)
    frac = rest != 0
    if frac.any():
        out[frac] = number_text(us[frac] / DAY_US)
    return out, in_range


def iso_text(stamps: np.ndarray) -> np.ndarray:
    """ISO text of dates Excel cannot hold: `1899-12-31`, or `1899-12-31 10:30:00` with a time."""
    secs = np.datetime_as_string(stamps, unit="s").astype(object)
    midnight = (stamps.astype(np.int64) % DAY_US) == 0
    day = np.datetime_as_string(stamps, unit="D").astype(object)
    return np.where(midnight, day, np.char.replace(secs.astype(str), "T", " ").astype(object))


def dates(values: pd.Series, refs: np.ndarray, style: np.ndarray, plain: np.ndarray) -> np.ndarray:
    """Date cells: serials with the date `style`; out of Excel's range, ISO text with `plain`."""
    stamps = _stamps(values)
    digits, in_range = serials(stamps)
    out = numbers(digits, refs, style)
    if not in_range.all():
        far = ~in_range
        out[far] = strings(pd.Series(iso_text(stamps[far]), dtype=object), refs[far], plain[far])
    return out


def day_fractions(values: pd.Series) -> np.ndarray:
    """Times of day and durations as fractions of a day (as text)."""
    seconds = [
        (v.hour * 3600 + v.minute * 60 + v.second + v.microsecond / 1e6) if isinstance(v, dt.time) else v.total_seconds()
        for v in values.tolist()
    ]
    return number_text(np.array(seconds, dtype=float) / 86_400)


def _one_kind(values: np.ndarray, refs: np.ndarray, plain: np.ndarray, flagged: np.ndarray | None) -> np.ndarray | None:
    """The common columns, all text or all numbers (with blanks), without looking at each cell's
    type: None for any other column, which `input_cells` takes cell by cell."""
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred not in ("string", "floating", "integer", "mixed-integer-float", "empty"):
        return None
    out = np.full(len(values), "", dtype=object)
    missing = pd.isna(values)
    if inferred == "string":
        empty = missing | (values == "")
        if (~empty).any():
            out[~empty] = strings(values[~empty], refs[~empty], plain[~empty])
    elif inferred == "empty":
        empty = np.ones(len(values), dtype=bool)
    else:
        x = np.where(missing, np.nan, values).astype(float)
        empty = ~np.isfinite(x)
        if (~empty).any():
            out[~empty] = numbers(number_text(x[~empty]), refs[~empty], plain[~empty])
    if flagged is not None and (empty & flagged).any():
        blank = empty & flagged
        out[blank] = blanks(refs[blank], plain[blank])
    return out


def input_cells(values: np.ndarray, refs: np.ndarray, styles: dict[str, np.ndarray], flagged: np.ndarray | None = None) -> np.ndarray:
    """XML of one column of original input values (str, float, int, bool, date, datetime, time,
    timedelta, None), one per row.

    `styles` holds per-row ` s="N"` attributes (or "") for "plain" cells (text, numbers,
    booleans: the column's number format, or a finding's fill), "date", "datetime" and "time";
    `flagged` marks blank cells a finding points at, written as empty cells with the plain style."""
    values = np.asarray(values, dtype=object)
    fast = _one_kind(values, refs, styles["plain"], flagged)
    if fast is not None:
        return fast
    s = pd.Series(values, dtype=object)
    n = len(s)
    out = np.full(n, "", dtype=object)
    kind = s.map(type)
    kinds = kind.unique()
    is_str = kind.isin([t for t in kinds if issubclass(t, str)]).to_numpy()
    is_bool = kind.isin([bool, np.bool_]).to_numpy()
    is_num = kind.isin([t for t in kinds if issubclass(t, (int, float, np.integer, np.floating)) and t not in (bool, np.bool_)]).to_numpy()
    is_dt = kind.isin([t for t in kinds if issubclass(t, (dt.datetime, np.datetime64))]).to_numpy()
    is_date = kind.isin([t for t in kinds if issubclass(t, dt.date) and not issubclass(t, dt.datetime)]).to_numpy()
    is_time = kind.isin([dt.time, dt.timedelta, pd.Timedelta]).to_numpy()
    plain = styles["plain"]
    empty = np.zeros(n, dtype=bool)
    if is_str.any():
        nonempty = is_str & (s != "").to_numpy()
        empty |= is_str & ~nonempty
        if nonempty.any():
            out[nonempty] = strings(s[nonempty], refs[nonempty], plain[nonempty])
    if is_bool.any():
        digit = np.where(s[is_bool].astype(bool), "1", "0")
        out[is_bool] = '<c r="' + refs[is_bool] + '"' + plain[is_bool] + ' t="b"><v>' + digit + "</v></c>"
    if is_num.any():
        x = s[is_num].astype(float).to_numpy()
        finite = np.isfinite(x)
        at = np.flatnonzero(is_num)
        empty[at[~finite]] = True
        if finite.any():
            out[at[finite]] = numbers(number_text(x[finite]), refs[at[finite]], plain[at[finite]])
    if is_dt.any():
        stamps = _stamps(s[is_dt])
        has_time = (stamps.astype(np.int64) % DAY_US) != 0  # a datetime at midnight is a date
        style = np.where(has_time, styles["datetime"][is_dt], styles["date"][is_dt])
        out[is_dt] = dates(pd.Series(stamps), refs[is_dt], style, plain[is_dt])
    if is_date.any():
        out[is_date] = dates(s[is_date], refs[is_date], styles["date"][is_date], plain[is_date])
    if is_time.any():
        out[is_time] = numbers(day_fractions(s[is_time]), refs[is_time], styles["time"][is_time])
    other = ~(is_str | is_bool | is_num | is_dt | is_date | is_time)
    missing = other & s.isna().to_numpy()
    empty |= missing
    other &= ~missing
    if other.any():
        out[other] = strings(s[other].astype(str), refs[other], plain[other])
    if flagged is not None and (empty & flagged).any():
        blank = empty & flagged
        out[blank] = blanks(refs[blank], plain[blank])
    return out


CENTS = np.array(["", *(f".{c:02d}" for c in range(1, 100))], dtype=object)  # an amount's cents as written after its units


def computed_cells(values: pd.Series, refs: np.ndarray, style: str, cents: bool, as_text: bool = False) -> np.ndarray:
    """XML of one computed column: money from integer cents, numbers, or text; blank where NA."""
    out = np.full(len(values), "", dtype=object)
    present = values.notna().to_numpy()
    if not present.any():
        return out
    every = bool(present.all())  # the common case: no copy of the column, its values as they are
    v = values if every else values[present]
    at_refs = refs if every else refs[present]
    styles = np.full(len(v), style, dtype=object)
    if cents:
        num = v.astype("int64").to_numpy()
        whole, rem = np.divmod(np.abs(num), 100)
        digits = whole.astype(str).astype(object) + CENTS[rem]
        if (num < 0).any():
            digits = np.where(num < 0, "-", "") + digits
        out[present] = numbers(digits.astype(object), at_refs, styles)
    elif as_text or _all_text(v):
        out[present] = strings(v if isinstance(v.dtype, pd.StringDtype) else v.astype(str), at_refs, styles)
    else:
        x = v.astype(float).to_numpy()
        finite = np.isfinite(x)
        at = np.flatnonzero(present)
        out[at[finite]] = numbers(number_text(x[finite]), refs[at[finite]], styles[finite])
    return out


def _all_text(values: pd.Series) -> bool:
    """Whether every value (none missing) is a str: a column of text without looking at each value,
    a column of numbers or flags without either."""
    if isinstance(values.dtype, pd.StringDtype):
        return True
    if pd.api.types.is_numeric_dtype(values.dtype):  # numbers or flags, numpy's or pandas' own
        return False
    return bool(values.map(type).isin([str]).all())


def links(addresses: pd.Series, refs: np.ndarray, style: str) -> np.ndarray:
    """Links to cells of the workbook (`Transfers!H12`, `'Transfers (Nov)'!H12`), each shown as its
    address: a HYPERLINK formula with the address as its calculated value. (Excel keeps at most
    65,530 hyperlink elements per sheet; a formula has no such limit.) Blank where no address."""
    out = np.full(len(addresses), "", dtype=object)
    present = (addresses.notna() & (addresses != "")).to_numpy()
    if not present.any():
        return out
    a = addresses[present].astype(str)
    literal = a.str.replace('"', '""', regex=False)
    # a formula's text constant holds at most 255 characters, and no character a cell escapes: an
    # address that cannot be written in one (a long sheet name the user gave) is written as text
    linkable = ((("#" + literal).str.len() <= FORMULA_TEXT_LIMIT) & ~a.str.contains(CONTROL_ANY)).to_numpy()
    formula = _escape_xml(('HYPERLINK("#' + literal + '","' + literal + '")').to_numpy(dtype=object))
    shown, _ = text(a)
    at = refs[present]
    cells = _cells(
        [
            f'<c r="{r}"{s} t="str"><f>{f}</f><v>{v}</v></c>'
            for r, s, f, v in zip(_each(at, len(at)), _each(style, len(at)), formula.tolist(), shown.tolist(), strict=True)
        ]
    )
    if not linkable.all():
        cells[~linkable] = strings(a[~linkable], refs[present][~linkable], np.full((~linkable).sum(), style, dtype=object))
    out[present] = cells
    return out
