"""batch.programs._kit.exact.Q: exact fractions over whole columns. Money thresholds are compared exactly (75%
on the nose passes), rounding to cents happens once (half up), and a zero divisor is never a
silent 0."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from batch.programs._kit.exact import Q


def fractions(q: Q) -> list[Fraction]:
    return [Fraction(int(n), int(d)) for n, d in zip(q.num, q.den, strict=True)]


@pytest.mark.parametrize(
    "a,op,b,expected",
    [
        ((1, 3), "+", (1, 6), Fraction(1, 2)),  # 2/6 + 1/6 = 3/6
        ((1, 3), "-", (1, 2), Fraction(-1, 6)),
        ((2, 3), "*", (3, 4), Fraction(1, 2)),
        ((3, 4), "/", (3, 2), Fraction(1, 2)),
        ((3, 4), "/", (-3, 2), Fraction(-1, 2)),  # the sign moves to the numerator
        ((10**30, 1), "*", (10**30, 1), Fraction(10**60)),  # no overflow: Python integers
    ],
)
def test_arithmetic_is_exact(a, op, b, expected):
    x, y = Q([a[0]], a[1]), Q([b[0]], b[1])
    result = {"+": x + y, "-": x - y, "*": x * y, "/": x / y}[op]
    assert fractions(result) == [expected]


def test_a_zero_divisor_raises():
    with pytest.raises(ZeroDivisionError, match="1 of 2 divisors are 0"):
        Q([1, 2]) / Q([1, 0])


@pytest.mark.parametrize(
    "zero,expected",
    [
        (0, [Fraction(1, 2), Fraction(0)]),
        (1, [Fraction(1, 2), Fraction(1)]),
        (Q([7, 9], 1), [Fraction(1, 2), Fraction(9)]),  # a column: the row's own value
    ],
)
def test_div_says_what_a_zero_divisor_gives(zero, expected):
    assert fractions(Q([1, 2]).div(Q([2, 0]), zero=zero)) == expected


@pytest.mark.parametrize(
    "paid,credit,at_least_75",
    [
        (74_999, 100_000, False),  # 74.999%: just below
        (75_000, 100_000, True),  # 75% on the nose passes
        (75_001, 100_000, True),  # just above
        (1, 3, False),  # 33.3...%
        (3, 4, True),
    ],
)
def test_thresholds_compare_exactly(paid, credit, at_least_75):
    ratio = Q([paid]) / Q([credit])
    assert bool((ratio >= Fraction(3, 4))[0]) is at_least_75
    assert bool((ratio < Fraction(3, 4))[0]) is not at_least_75


@pytest.mark.parametrize(
    "num,den,cents",
    [
        (1, 2, 1),  # 0.5 cent rounds half up to 1
        (3, 2, 2),  # 1.5 -> 2
        (5, 2, 3),  # 2.5 -> 3 (half up, not to even)
        (149, 100, 1),  # 1.49 -> 1
        (-1, 2, 0),  # -0.5 -> 0 (half up, toward +infinity)
        (-3, 2, -1),
        (2, 3, 1),
    ],
)
def test_cents_round_half_up_once(num, den, cents):
    assert Q([num], den).cents().tolist() == [cents]


@pytest.mark.parametrize(
    "num,den,cents",
    [
        (4, 2, 2),  # 2 cents on the nose stays 2
        (1, 20, 1),  # 0.05 cent just above 0 rounds up to 1
        (1, 2, 1),  # 0.5 -> 1
        (41, 20, 3),  # 2.05 -> 3 (half up would give 2)
        (59, 20, 3),  # 2.95 -> 3
        (0, 1, 0),
        (-3, 2, -1),  # -1.5 -> -1 (toward +infinity)
    ],
)
def test_ceil_rounds_up(num, den, cents):
    assert Q([num], den).ceil().tolist() == [cents]


@pytest.mark.parametrize(
    "typed,expected",
    [
        (0.3, Fraction(3, 10)),  # the float 0.29999999999999998... is the 0.3 that was typed
        (0.35, Fraction(7, 20)),
        (1.0, Fraction(1)),
        (0.074999, Fraction(74999, 1_000_000)),
    ],
)
def test_percent_reads_the_decimal_that_was_typed(typed, expected):
    assert fractions(Q.percent(pd.Series([typed]))) == [expected]


@pytest.mark.parametrize(
    "typed,expected",
    [
        (10000.004, Fraction(10000004, 1000)),
        (1e12 + 0.5, Fraction(2 * 10**12 + 1, 2)),
        (float("nan"), Fraction(0)),  # NA reads as 0
    ],
)
def test_decimal_reads_the_decimal_that_was_typed(typed, expected):
    assert fractions(Q.decimal(pd.Series([typed]))) == [expected]


def test_where_minimum_maximum_floor():
    a, b = Q([1, 5, 3]), Q([2, 4, 3])
    assert fractions(a.minimum(b)) == [1, 4, 3]
    assert fractions(a.maximum(b)) == [2, 5, 3]
    assert fractions(a.where(np.array([True, False, True]), 0)) == [1, 0, 3]
    assert (Q([7, -7], 2)).floor().tolist() == [3, -4]  # floor, not truncation


def test_of_and_from_fractions():
    assert fractions(Q.of(Fraction(2, 3), 2)) == [Fraction(2, 3)] * 2
    assert fractions(Q.of(5, 3)) == [5, 5, 5]
    assert fractions(Q.from_fractions([Fraction(1, 2), Fraction(1, 3), Fraction(1, 2)])) == [Fraction(1, 2), Fraction(1, 3), Fraction(1, 2)]


THREE_QUARTERS = Fraction(3, 4)


@pytest.mark.parametrize(
    "values,expected",
    [
        ([THREE_QUARTERS, THREE_QUARTERS, THREE_QUARTERS], [Fraction(3, 4)] * 3),  # one object, taken apart once
        ([THREE_QUARTERS, Fraction(3, 4), Fraction(6, 8)], [Fraction(3, 4)] * 3),  # equal values, three objects: equal numbers
        ([Fraction(1, 2), None, np.nan, pd.NA, Fraction(1, 2)], [Fraction(1, 2), 0, 0, 0, Fraction(1, 2)]),  # missing reads as 0
        ([Fraction(-5, 3), 0.75, 2], [Fraction(-5, 3), Fraction(3, 4), 2]),  # a float or an integer a rule gives, exactly
        ([], []),
    ],
)
def test_from_fractions_tells_values_apart_by_object_and_reads_missing_as_zero(values, expected):
    q = Q.from_fractions(pd.Series(values, dtype=object))
    assert fractions(q) == expected
    assert all(d > 0 for d in q.den)
