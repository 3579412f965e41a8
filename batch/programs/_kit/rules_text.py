"""Statute values from the rules data, written as the column hints show them.

A hint that names an amount, a share, a date or a year takes it from the program's rules
(`batch/programs/<program>/`), so the template says what the calculators apply: money as $1,250,000,
shares as 10% or 7.5%, dates as YYYY-MM-DD.
"""

from __future__ import annotations

from fractions import Fraction

import pandas as pd


def money(cents: int) -> str:
    """Integer cents -> '$1,250,000' (whole dollars) or '$1,250,000.50'."""
    dollars, rest = divmod(int(cents), 100)
    return f"${dollars:,}" + (f".{rest:02d}" if rest else "")


def percent(ratio) -> str:
    """A ratio -> '10%', '7.5%'."""
    value = Fraction(ratio) * 100
    return f"{value.numerator // value.denominator}%" if value.denominator == 1 else f"{float(value):g}%"


def day(date: pd.Timestamp) -> str:
    """A date -> '2016-07-01', written from its parts: a deadline years after 9999-12-31 (an
    approval dated 9999-12-31 plus four years) has no strftime."""
    d = pd.Timestamp(date)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def either(words: list[str] | tuple[str, ...], last: str = "or") -> str:
    """['A', 'B', 'C'] -> 'A, B or C'."""
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"
