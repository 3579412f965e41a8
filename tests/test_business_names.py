"""The one business-name rule (README, "The intake workbook"): BRRAP's single-business limit, Grow NJ's
prior incentives and transfer parties compare names by `business_key`."""

from __future__ import annotations

import pandas as pd
import pytest

from batch.programs._kit.steps import business_key

SAME = [
    ("Acme Corp.", "ACME Corporation"),  # case, punctuation, the legal form
    ("Acme, L.L.C.", "acme llc"),
    ("Acme  Inc", "Acme"),  # repeated spaces, a trailing legal form
    ("Café Labs", "Cafe\u0301 Labs"),  # the accent typed as one character or combined (NFKC)
    ("ＡＣＭＥ", "ACME"),  # full-width letters
    ("Ac\u200bme", "Acme"),  # a zero-width space
    ("O'Brien Co", "OBrien"),  # punctuation is ignored, not read as a space
    ("A.C.M.E. Inc", "ACME"),
    ("Acme-Jersey LLP", "acme jersey"),  # spaces are ignored as well as punctuation
    ("AT&T", "AT T"),
    ("The Company Co", "The Company Inc"),  # one trailing legal form is removed, not every word that looks like one
]
DIFFERENT = [
    ("Café Labs", "Cafe Labs"),
    ("Acme Widgets", "Acme"),
    ("Co", "Company"),  # a name that is only a legal form is kept as it is
]


@pytest.mark.parametrize("a,b", SAME)
def test_same_business(a, b):
    assert business_key(pd.Series([a]))[0] == business_key(pd.Series([b]))[0]


@pytest.mark.parametrize("a,b", DIFFERENT)
def test_different_business(a, b):
    assert business_key(pd.Series([a]))[0] != business_key(pd.Series([b]))[0]


@pytest.mark.parametrize("blank", ["", "   ", None, "...", "\u200b"])
def test_a_blank_name_matches_nothing(blank):
    assert pd.isna(business_key(pd.Series([blank], dtype=object))[0])


# a column that names few businesses many times is keyed a distinct name at a time: the same keys,
# in the same places, as keying every cell (missing names and blanks included)
REPEATED = [
    # (names, why)
    (["Acme Corp.", "ACME Corporation", None, "Acme Corp.", "", "O'Brien Co", "Acme Corp."], "3 of 7 cells distinct"),
    ([None, None, None, "Acme"], "only missing names but one"),
    (["Acme"] * 5, "one name"),
    ([f"Seller {i % 3} LLC" for i in range(12)] + [float("nan"), pd.NA], "3 sellers, NaN and NA"),
]


@pytest.mark.parametrize("names,why", REPEATED, ids=[w for _, w in REPEATED])
def test_repeated_names_are_keyed_as_each_cell_is(names, why):
    column = pd.Series(names, index=range(100, 100 + len(names)), dtype=object, name="Transferor")
    one_by_one = pd.concat([business_key(column.iloc[[i]]) for i in range(len(column))])  # each cell on its own
    keyed = business_key(column)
    pd.testing.assert_series_equal(keyed, one_by_one)
    assert keyed.dtype == "string" and keyed.name == "Transferor"
