"""Column and sheet specifications: the one description of an intake sheet.

The reader (header matching, type coercion), the pandera schema, the template and the
returned workbook are all derived from these specifications, so a program's columns are
written down exactly once, in `batch/programs/<program>/sheet.py`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

each_as_text = np.frompyfunc(str, 1, 1)  # each value of an object array as its text, a Python str (never a fixed-width array)
each_length = np.frompyfunc(len, 1, 1)  # each value's length, over an object array of texts

# Kinds of input column and what the reader turns each into.
#   text    -> str (numbers written as text, whole numbers without ".0")
#   code    -> str, canonical spelling of one of `codes` (matched case-insensitively)
#   money   -> Int64, integer cents
#   integer -> Int64
#   number  -> Float64
#   percent -> Float64, a fraction (35% -> 0.35)
#   yesno   -> bool (blank means No)
#   date    -> datetime64
KINDS = ("text", "code", "money", "integer", "number", "percent", "yesno", "date")

YES_NO = ("Y", "N")


# Common abbreviations in headers, word for word: `Withholdings %` is `Withholdings Percentage`,
# `New FT Jobs` is `New Full-Time Jobs`, `Credit Amt` is `Credit Amount`, `Project #` is `Project ID`.
ABBREVIATIONS = {"%": "percent", "pct": "percent", "percentage": "percent", "ft": "fulltime", "amt": "amount"}
HEADER_WORDS = re.compile(r"%|#|[^\W_]+")
# The columns the tool writes after an intake sheet's own (besides the computed columns): never
# an unknown column of the user's.
TOOL_COLUMNS = ("Status", "Findings", "Reviewer Decision", "Reviewer", "Reviewer Note")
REVIEW_COLUMNS = TOOL_COLUMNS[2:]  # the tool's columns that hold the reviewer's entries, read back and kept
CLOSE_MATCH_CUTOFF = 0.6  # difflib's default similarity for "did you mean"


@lru_cache(maxsize=1 << 16)  # header texts repeat across sheets and runs of a worker
def _normalize_text(s: str) -> str:
    s = re.sub(r"\([^()]*\)\s*$", "", s.strip())
    words = HEADER_WORDS.findall(s.casefold())
    if words and words[-1] == "#":  # `Project #`: the number that identifies, an ID
        words[-1] = "id"
    key = "".join(ABBREVIATIONS.get(w, w) for w in words if w != "#")
    # `WithholdingsPercentage` run together is `Withholdings Percentage`: the long word read as the short one
    return key.replace("percentage", "percent")


def normalize_header(text: object) -> str:
    """Header key: case, spaces, punctuation and a trailing unit in parentheses ignored, and the
    common abbreviations (`%`, `Pct`, `FT`, `Amt`, a trailing `#`) read as the words they stand for."""
    return _normalize_text(str(text if text is not None else ""))


@dataclass(frozen=True)
class Column:
    header: str
    kind: str
    required: bool = False
    hint: str = ""
    codes: tuple[str, ...] = ()
    minimum: float | None = None
    minimum_exclusive: bool = False
    maximum: float | None = None
    record_id: bool = False
    default: str | None = None  # value read for a blank cell (codes only)
    blank_unknown: bool = False  # yes/no only: a blank stays unknown (NA) instead of meaning No
    year: bool = False  # integer only: a calendar year, whose bounds are written 2030, not 2,030

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown column kind {self.kind!r} for {self.header!r}")

    @property
    def key(self) -> str:
        return normalize_header(self.header)

    def expected(self) -> str:
        """What a valid cell holds, in a reviewer's words (used in findings and the template)."""
        base = {
            "text": "text",
            "code": "one of " + ", ".join(self.codes) + (f" (blank means {self.default})" if self.default else ""),
            "money": "a dollar amount such as 1250000 or $1,250,000",
            "integer": "a whole number",
            "number": "a number",
            "percent": "a percent such as 35% or 0.35",
            "yesno": "Y or N (Yes/No, TRUE/FALSE, 1/0; " + ("blank means not given)" if self.blank_unknown else "blank means N)"),
            "date": "a date (an Excel date, 2016-03-31 or 3/31/2016)",
        }[self.kind]
        bounds = []
        if self.minimum is not None:
            word = "greater than" if self.minimum_exclusive else "at least"
            bounds.append(f"{word} {self._fmt(self.minimum)}")
        if self.maximum is not None:
            bounds.append(f"at most {self._fmt(self.maximum)}")
        if bounds:
            base += ", " + " and ".join(bounds)
        return base

    def _fmt(self, v: float) -> str:
        if self.kind == "money":
            return f"${v:,.2f}" if v % 1 else f"${v:,.0f}"
        if self.kind == "percent":
            return f"{v:.0%}"
        if self.year:
            return f"{v:g}"
        return f"{v:,g}"


@dataclass(frozen=True)
class RowCheck:
    """A rule across columns of one row: `bad(typed frame) -> boolean mask` of failing rows.

    The finding points at `column` with `code` (a validation code) and says `expected`.
    """

    column: str
    code: str
    expected: str
    bad: Callable[[pd.DataFrame], pd.Series]


@dataclass(frozen=True)
class SheetSpec:
    """An intake sheet: its name, input columns, and the headers of its computed columns."""

    name: str
    program: str
    columns: tuple[Column, ...]
    computed: dict[str, str] = field(default_factory=dict)  # header -> display format
    citation: str = ""
    row_checks: tuple[RowCheck, ...] = ()

    @property
    def key(self) -> tuple[str, ...]:
        """Headers of the record ID (one column, or several together), unique in the sheet."""
        return tuple(c.header for c in self.columns if c.record_id)

    def record_ids(self, typed: pd.DataFrame) -> pd.Series:
        """Each row's record ID as text (key columns joined with ' / ')."""
        out = None
        for h in self.key:  # each column's values taken out of pandas once: a sheet's IDs are asked for several times
            values = typed[h].to_numpy(dtype=object)
            text = np.where(pd.isna(values), "", values)
            if not isinstance(typed[h].dtype, pd.StringDtype):  # a str column's values are text already
                text = each_as_text(text).astype(object)
            out = text if out is None else out + " / " + text
        return pd.Series(out, index=typed.index, dtype=str, name=self.key[0] if len(self.key) == 1 else None)  # named as pandas names it

    def column(self, header: str) -> Column:
        return next(c for c in self.columns if c.header == header)

    @property
    def output_headers(self) -> tuple[str, ...]:
        """Headers the run itself writes; recognised and ignored when a returned workbook is read."""
        return tuple(self.computed) + ("Status", "Findings")

    @property
    def tool_keys(self) -> frozenset[str]:
        """Header keys of every column the tool writes on this sheet (computed columns, Status,
        Findings and the reviewer's columns): never an unknown column."""
        return frozenset(normalize_header(h) for h in (*self.computed, *TOOL_COLUMNS))

    def closest(self, header: object, n: int = 3) -> list[str]:
        """The field names most like `header` (difflib, on header keys), closest first."""
        by_key = {c.key: c.header for c in self.columns}
        return [by_key[k] for k in difflib.get_close_matches(normalize_header(header), list(by_key), n, CLOSE_MATCH_CUTOFF)]
