"""Exact rational arithmetic on whole columns.

`Q` holds a column of fractions as two numpy object arrays of Python integers (numerator and
denominator), so amounts in cents can be divided, limited and compared without rounding and
without overflow; each operation is one numpy call over the column. Money is rounded to whole
cents only at the end (`cents()`, half up).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

HUNDREDTHS = 100  # cents in a dollar; hundredths of a square foot in a square foot
# Percent cells arrive as binary floats (0.3 is 0.29999999999999998...). Read to the billionth,
# a float becomes the decimal that was typed: 0.3 -> 300,000,000 / 10^9 = 3/10 exactly.
PERCENT_RESOLUTION = 10**9


def _obj(values) -> np.ndarray:
    if isinstance(values, (pd.Series, pd.Index)):
        values = values.astype("int64").to_numpy()
    arr = np.asarray(values)
    if arr.dtype == object:
        return arr
    return arr.astype(np.int64).astype(object)


class Q:
    """A column of exact fractions num / den (den > 0)."""

    __slots__ = ("num", "den")

    def __init__(self, num, den=1):
        self.num = _obj(num)
        n = len(self.num)
        if isinstance(den, (int, np.integer)):
            self.den = np.full(n, int(den), dtype=object)
        else:
            self.den = _obj(den)

    @classmethod
    def of(cls, values, n: int | None = None) -> Q:
        """From integers (a column, or one number repeated n times) or one Fraction repeated."""
        if isinstance(values, Fraction):
            return cls(np.full(n, values.numerator, dtype=object), np.full(n, values.denominator, dtype=object))
        if np.isscalar(values):
            return cls(np.full(n, int(values), dtype=object))
        return cls(values)

    @classmethod
    def decimal(cls, values: pd.Series) -> Q:
        """A number column (floats, as Excel stores them) as the decimals that were typed: read to the
        billionth, 10000.004 sq ft is 10000004/1000 exactly (NA read as 0)."""
        x = pd.Series(values, dtype="Float64").fillna(0).to_numpy(dtype=float)
        whole = np.floor(x)  # the whole part as a Python integer, so any size stays exact
        part = np.round((x - whole) * PERCENT_RESOLUTION).astype(np.int64)
        return cls(whole.astype(np.int64).astype(object) * PERCENT_RESOLUTION + part.astype(object), PERCENT_RESOLUTION)

    @classmethod
    def percent(cls, values: pd.Series) -> Q:
        """A percent column (fractions as floats; NA read as 0) as exact fractions."""
        x = pd.Series(values, dtype="Float64").fillna(0).to_numpy(dtype=float)
        return cls(np.round(x * PERCENT_RESOLUTION).astype(np.int64), PERCENT_RESOLUTION)

    @classmethod
    def from_fractions(cls, values) -> Q:
        """A column of Fraction objects (a few distinct values repeated, as a rules lookup gives them:
        the same object for every row of a case; missing values read as 0) as a Q. The values are told
        apart by identity, not by hashing each Fraction (a Python call a row): each distinct object is
        taken apart once, and objects of equal value give equal numbers."""
        arr = np.asarray(values, dtype=object)
        codes, objects = pd.factorize(np.fromiter(map(id, arr), dtype=np.int64, count=len(arr)))
        first = np.empty(len(objects), dtype=np.int64)
        first[codes[::-1]] = np.arange(len(arr) - 1, -1, -1)  # each object's first row (the last written wins)
        each = [None if pd.isna(v) else Fraction(v) for v in arr[first]] if len(arr) else []
        num = np.array([0 if f is None else f.numerator for f in each], dtype=object)
        den = np.array([1 if f is None else f.denominator for f in each], dtype=object)
        return cls(num[codes], den[codes])

    def __len__(self) -> int:
        return len(self.num)

    def _other(self, other) -> Q:
        return other if isinstance(other, Q) else Q.of(other, len(self))

    def __add__(self, other) -> Q:
        o = self._other(other)
        return Q(self.num * o.den + o.num * self.den, self.den * o.den)

    def __sub__(self, other) -> Q:
        o = self._other(other)
        return Q(self.num * o.den - o.num * self.den, self.den * o.den)

    def __mul__(self, other) -> Q:
        o = self._other(other)
        return Q(self.num * o.num, self.den * o.den)

    def __truediv__(self, other) -> Q:
        """Division; a zero divisor raises ZeroDivisionError: where a divisor may be 0, say what
        the row gets with `div(other, zero=...)`."""
        o = self._other(other)
        if (o.num == 0).any():
            raise ZeroDivisionError(
                f"{int((o.num == 0).sum())} of {len(o)} divisors are 0; use Q.div(other, zero=...) to say what those rows get"
            )
        return self.div(o, zero=0)

    def div(self, other, zero) -> Q:
        """Division, with `zero` (a number or a Q) where the divisor is 0: the caller says what those
        rows get, and masks them where they must not count."""
        o = self._other(other)
        at_zero = o.num == 0
        num = np.where(at_zero, 0, self.num * o.den)
        den = np.where(at_zero, 1, self.den * np.where(at_zero, 1, o.num))
        neg = den < 0
        quotient = Q(np.where(neg, -num, num), np.where(neg, -den, den))
        return quotient.where(~at_zero, zero) if at_zero.any() else quotient

    def _cmp(self, other) -> np.ndarray:
        o = self._other(other)
        return self.num * o.den - o.num * self.den  # sign of self - other

    def __lt__(self, other):
        return (self._cmp(other) < 0).astype(bool)

    def __le__(self, other):
        return (self._cmp(other) <= 0).astype(bool)

    def __gt__(self, other):
        return (self._cmp(other) > 0).astype(bool)

    def __ge__(self, other):
        return (self._cmp(other) >= 0).astype(bool)

    def where(self, mask, other) -> Q:
        o = self._other(other)
        mask = np.asarray(mask, dtype=bool)
        return Q(np.where(mask, self.num, o.num), np.where(mask, self.den, o.den))

    def minimum(self, other) -> Q:
        return self.where(self <= other, other)

    def maximum(self, other) -> Q:
        return self.where(self >= other, other)

    def floor(self) -> np.ndarray:
        return (self.num // self.den).astype(np.int64)

    def ceil(self) -> np.ndarray:
        """Round up to a whole number (of cents): a minimum is never rounded below itself."""
        return (-((-self.num) // self.den)).astype(np.int64)

    def cents(self) -> np.ndarray:
        """Round half up to a whole number (of cents)."""
        return ((2 * self.num + self.den) // (2 * self.den)).astype(np.int64)

    def float(self) -> np.ndarray:
        return (self.num / self.den).astype(float) if len(self) else np.array([], dtype=float)
