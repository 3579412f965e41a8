"""Transfers calculator: one table of cases per rule of README, sheet `Transfers`.

Each case lists the rows of a small sheet (in sheet order) and, per row, the finding codes
the calculator must emit, in order; the comment gives the arithmetic.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from conftest import typed_frame, workbook  # noqa: F401 (the fixture, for the tests below)

from batch.programs._kit.rules import load
from batch.programs.transfers import steps as transfers
from batch.programs.transfers.sheet import TRANSFERS

RULES = load("transfers")
D = dt.date


def row(
    tid,
    program="Grow NJ",
    credit=100_000,
    paid=90_000,
    date=None,
    cert="C-1",
    cert_amount=10_000_000,  # None: blank (CERTIFICATE_AMOUNT_NOT_GIVEN)
    frm="Seller LLC",
    to="Buyer Inc.",
):
    return {
        "Transfer ID": tid,
        "Program": program,
        "Certificate ID": cert,
        "Certificate Amount ($)": "" if cert_amount is None else cert_amount,
        "Transferor": frm,
        "Transferee": to,
        "Transfer Date": D(2026, 1, 15) if date is None else date,
        "Credit Amount Transferred ($)": credit,
        "Consideration Received ($)": paid,
    }


def codes(rows):
    frame = typed_frame(TRANSFERS, rows)
    calc = transfers.calculate(frame, RULES)
    found = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])])
    per_row = found.groupby("row")["code"].agg(list)
    return [per_row.get(i, []) for i in frame.index], calc


def check(rows, expected):
    got, calc = codes(rows)
    assert got == expected
    return calc


MINIMUM_CASES = [
    # Grow NJ: not less than $25,000 (C.34:1B-248)
    ("grow nj at 25,000", [row("a", credit=25_000, paid=25_000)], [[]]),
    ("grow nj one cent below", [row("a", credit=24_999.99, paid=24_999.99)], [["TRANSFER_BELOW_MINIMUM"]]),
    ("grow nj one cent above", [row("a", credit=25_000.01, paid=25_000.01)], [[]]),
    # Urban Transit Hub on/after 2014-10-24: $25,000 (C.34:1B-209.1 as amended by P.L.2014 c.63)
    ("uth 2014-10-24 at 25,000", [row("a", "Urban Transit Hub", 25_000, 25_000, D(2014, 10, 24))], [[]]),
    ("uth 2014-10-24 below 25,000", [row("a", "Urban Transit Hub", 24_999.99, 24_999.99, D(2014, 10, 24))], [["TRANSFER_BELOW_MINIMUM"]]),
    # the day before: the earlier $100,000 minimum, with one smaller transfer a tax period
    ("uth 2014-10-23 at 100,000", [row("a", "Urban Transit Hub", 100_000, 100_000, D(2014, 10, 23))], [[]]),
    (
        "uth 2014-10-23 below 100,000 uses the allowance",
        [row("a", "Urban Transit Hub", 99_999.99, 99_999.99, D(2014, 10, 23))],
        [["SMALL_TRANSFER_ALLOWANCE_USED"]],
    ),
    (
        "uth 2014-10-23 at 30,000: allowance, not the new minimum",
        [row("a", "Urban Transit Hub", 30_000, 30_000, D(2014, 10, 23))],
        [["SMALL_TRANSFER_ALLOWANCE_USED"]],
    ),
    # BEIP: $100,000, or the refundable credit issued when less (C.34:1B-129 g.(3))
    ("beip at 100,000", [row("a", "BEIP", 100_000, 100_000)], [[]]),
    ("beip below 100,000, no certificate amount", [row("a", "BEIP", 99_999.99, 99_999.99)], [["TRANSFER_BELOW_MINIMUM"]]),
    (
        "beip certificate 150,000: minimum stays 100,000",
        [row("a", "BEIP", 99_999.99, 99_999.99, cert_amount=150_000)],
        [["TRANSFER_BELOW_MINIMUM"]],
    ),
    ("beip certificate 80,000: minimum 80,000, at it", [row("a", "BEIP", 80_000, 80_000, cert_amount=80_000)], [[]]),
    ("beip certificate 80,000: one cent below", [row("a", "BEIP", 79_999.99, 79_999.99, cert_amount=80_000)], [["TRANSFER_BELOW_MINIMUM"]]),
    # ERG residential: no minimum (C.52:27D-489f b.(3) states none), but under $25,000 the reviewer is
    # asked to confirm it (b.(2)(e): transferred "as if" awarded under C.34:1B-209.3, not in the sources)
    ("erg one cent", [row("a", "ERG Residential", 0.01, 0.01)], [["ERG_TRANSFER_UNDER_25000"]]),
    ("erg one cent below 25,000", [row("a", "ERG Residential", 24_999.99, 24_999.99)], [["ERG_TRANSFER_UNDER_25000"]]),
    ("erg at 25,000", [row("a", "ERG Residential", 25_000, 25_000)], [[]]),
    ("erg one cent above 25,000", [row("a", "ERG Residential", 25_000.01, 25_000.01)], [[]]),
    # before 2014-10-24 too: ERG has no earlier text with a minimum
    ("erg 2014-10-23 under 25,000", [row("a", "ERG Residential", 24_999.99, 24_999.99, D(2014, 10, 23))], [["ERG_TRANSFER_UNDER_25000"]]),
    # Grow NJ has no certificate cap on its minimum: certificate 20,000, transfer 20,000 is still below 25,000
    ("grow nj certificate below the minimum", [row("a", credit=20_000, paid=20_000, cert_amount=20_000)], [["TRANSFER_BELOW_MINIMUM"]]),
]


@pytest.mark.parametrize("name,rows,expected", MINIMUM_CASES, ids=[c[0] for c in MINIMUM_CASES])
def test_minimum_transfer(name, rows, expected):
    check(rows, expected)


def test_minimum_column_values():
    rows = [
        row("a", "Grow NJ", cert="a"),
        row("b", "Urban Transit Hub", credit=100_000, date=D(2014, 10, 23), cert="b"),
        row("c", "Urban Transit Hub", date=D(2014, 10, 24), cert="c"),
        row("d", "BEIP", credit=80_000, paid=72_000, cert_amount=80_000, cert="d"),
        row("e", "BEIP", credit=100_000, cert_amount=150_000, cert="e"),
        row("f", "ERG Residential", cert="f"),
    ]
    calc = check(rows, [[], [], [], [], [], []])
    # in cents: 25,000 / 100,000 / 25,000 / min(100,000, 80,000) / 100,000 / 0
    assert calc.computed["Minimum Transfer ($)"].tolist() == [2_500_000, 10_000_000, 2_500_000, 8_000_000, 10_000_000, 0]


def test_erg_transfer_under_25000_message_and_rules_data():
    from batch.programs._kit.findings import render

    param = RULES["minimum_transfer"]["ERG Residential"]
    # both citations and the page's interpretation are in the rules data
    assert "b.(3)" in param.cite and "b.(2)(e)" in param.cite and "209.3" in param.interpretation
    assert param.value == 0 and RULES["erg_confirm_no_minimum_below"]["ERG Residential"].value == 2_500_000  # cents
    calc = check([row("a", "ERG Residential", 24_999.99, 24_999.99, date=D(2026, 3, 2))], [["ERG_TRANSFER_UNDER_25000"]])
    assert calc.computed["Minimum Transfer ($)"].tolist() == [0]
    shown = render(pd.concat([f for f in calc.findings if len(f)]), "Transfers", RULES.findings)
    assert shown[["Code", "Severity", "Column"]].values.tolist() == [["ERG_TRANSFER_UNDER_25000", "info", "Credit Amount Transferred ($)"]]
    message = shown["Message"].iloc[0]
    assert "$24,999.99 on 2026-03-02 is under $25,000.00" in message and "confirm that no minimum applies" in message
    assert shown["Citation"].iloc[0] == "C.52:27D-489f b.(3), b.(2)(e)"


ALLOWANCE_CASES = [
    # two smaller UTH transfers by one transferor in 2013: the first (by date) is allowed, the second is not
    (
        "second small transfer same year",
        [row("a", "Urban Transit Hub", 60_000, 60_000, D(2013, 11, 8)), row("b", "Urban Transit Hub", 50_000, 50_000, D(2013, 6, 28))],
        [["TRANSFER_BELOW_MINIMUM"], ["SMALL_TRANSFER_ALLOWANCE_USED"]],
    ),
    # same date: row order breaks the tie
    (
        "same date, row order decides",
        [row("a", "Urban Transit Hub", 60_000, 60_000, D(2013, 6, 28)), row("b", "Urban Transit Hub", 50_000, 50_000, D(2013, 6, 28))],
        [["SMALL_TRANSFER_ALLOWANCE_USED"], ["TRANSFER_BELOW_MINIMUM"]],
    ),
    # each transferor has its own allowance; names match trimmed and case-insensitively
    (
        "other transferor has its own allowance",
        [
            row("a", "Urban Transit Hub", 60_000, 60_000, D(2013, 6, 28), frm="Seller LLC"),
            row("b", "Urban Transit Hub", 50_000, 50_000, D(2013, 7, 1), frm="Other LLC"),
            row("c", "Urban Transit Hub", 40_000, 40_000, D(2013, 8, 1), frm=" SELLER llc "),
        ],
        [["SMALL_TRANSFER_ALLOWANCE_USED"], ["SMALL_TRANSFER_ALLOWANCE_USED"], ["TRANSFER_BELOW_MINIMUM"]],
    ),
    # the one business-name rule (README): punctuation and a trailing legal form ignored, so
    # "Seller Corp." and "SELLER Corporation" are one transferor with one allowance
    (
        "business-name rule: one transferor",
        [
            row("a", "Urban Transit Hub", 60_000, 60_000, D(2013, 6, 28), frm="Seller Corp."),
            row("b", "Urban Transit Hub", 50_000, 50_000, D(2013, 7, 1), frm="SELLER Corporation"),
            row("c", "Urban Transit Hub", 40_000, 40_000, D(2013, 8, 1), frm="Seller Holdings"),
        ],
        [["SMALL_TRANSFER_ALLOWANCE_USED"], ["TRANSFER_BELOW_MINIMUM"], ["SMALL_TRANSFER_ALLOWANCE_USED"]],
    ),
    # a new calendar year is a new tax period
    (
        "new tax period, new allowance",
        [row("a", "Urban Transit Hub", 60_000, 60_000, D(2013, 12, 31)), row("b", "Urban Transit Hub", 50_000, 50_000, D(2014, 1, 1))],
        [["SMALL_TRANSFER_ALLOWANCE_USED"], ["SMALL_TRANSFER_ALLOWANCE_USED"]],
    ),
    # transfers at or above $100,000 do not use the allowance
    (
        "large transfers do not count",
        [row("a", "Urban Transit Hub", 100_000, 100_000, D(2013, 3, 1)), row("b", "Urban Transit Hub", 50_000, 50_000, D(2013, 4, 1))],
        [[], ["SMALL_TRANSFER_ALLOWANCE_USED"]],
    ),
    # from 2014-10-24 there is no allowance: $24,000 is below $25,000 even as the first of the year
    ("no allowance under the 2014 text", [row("a", "Urban Transit Hub", 24_000, 24_000, D(2014, 11, 1))], [["TRANSFER_BELOW_MINIMUM"]]),
    # Grow NJ never had the allowance
    ("grow nj has no allowance", [row("a", "Grow NJ", 24_000, 24_000, D(2013, 6, 1))], [["TRANSFER_BELOW_MINIMUM"]]),
]


@pytest.mark.parametrize("name,rows,expected", ALLOWANCE_CASES, ids=[c[0] for c in ALLOWANCE_CASES])
def test_small_transfer_allowance(name, rows, expected):
    check(rows, expected)


CONSIDERATION_CASES = [
    # 75,000 / 100,000 = 75% on the nose passes
    ("75% exactly", 100_000, 75_000, []),
    # 74,999.99 / 100,000 = 74.99999%
    ("one cent below 75%", 100_000, 74_999.99, ["CONSIDERATION_BELOW_75PCT"]),
    ("one cent above 75%", 100_000, 75_000.01, []),
    # 1,875,000.15 / 2,500,000.20 = 0.75 exactly; in floating point 1875000.15 / 2500000.2 = 0.7499999999999999
    ("75% exactly where floats say 74.99999%", 2_500_000.20, 1_875_000.15, []),
    ("one cent below that", 2_500_000.20, 1_875_000.14, ["CONSIDERATION_BELOW_75PCT"]),
    # 0.75 x 33,333.33 = 24,999.9975: 24,999.99 is below, 25,000.00 is at least
    ("odd cents below", 33_333.33, 24_999.99, ["CONSIDERATION_BELOW_75PCT"]),
    ("odd cents above", 33_333.33, 25_000.00, []),
    # zero consideration is allowed as input (>= 0) and is below 75%
    ("zero consideration", 100_000, 0, ["CONSIDERATION_BELOW_75PCT"]),
    # above the face amount: a warning, not an error
    ("consideration equal to credit", 100_000, 100_000, []),
    ("consideration one cent above credit", 100_000, 100_000.01, ["CONSIDERATION_ABOVE_FACE"]),
]


@pytest.mark.parametrize("name,credit,paid,expected", CONSIDERATION_CASES, ids=[c[0] for c in CONSIDERATION_CASES])
@pytest.mark.parametrize("program", ["Grow NJ", "Urban Transit Hub", "BEIP", "ERG Residential"])
def test_consideration(name, credit, paid, expected, program):
    # the certificate amount equals the credit, so BEIP's minimum is the credit itself and only
    # the consideration rules can fire (every other program's minimum is at most $25,000)
    check([row("a", program, credit, paid, cert_amount=credit)], [expected])


def test_consideration_ratio_column_and_message():
    calc = check([row("a", credit=300_000, paid=216_000)], [["CONSIDERATION_BELOW_75PCT"]])
    # 216,000 / 300,000 = 0.72
    assert calc.computed["Consideration Ratio"].iloc[0] == pytest.approx(0.72)
    f = next(f for f in calc.findings if len(f) and f["code"].iloc[0] == "CONSIDERATION_BELOW_75PCT")
    assert f["ratio"].iloc[0] == 7200 and f["minimum_ratio"].iloc[0] == 7500  # hundredths of a percent


CERTIFICATE_CASES = [
    # 60,000 + 40,000 = 100,000: exactly the certificate, not over
    (
        "fully transferred",
        [
            row("a", credit=60_000, paid=60_000, cert_amount=100_000, date=D(2026, 1, 1)),
            row("b", credit=40_000, paid=40_000, cert_amount=100_000, date=D(2026, 2, 1)),
        ],
        [[], []],
    ),
    # 60,000 + 40,000.01 = 100,000.01 > 100,000: the crossing row is flagged
    (
        "one cent over",
        [
            row("a", credit=60_000, paid=60_000, cert_amount=100_000, date=D(2026, 1, 1)),
            row("b", credit=40_000.01, paid=40_000.01, cert_amount=100_000, date=D(2026, 2, 1)),
        ],
        [[], ["CERTIFICATE_OVERTRANSFERRED"]],
    ),
    # rows out of date order: the running total follows Transfer Date, so the row dated last crosses
    (
        "date order, not row order",
        [
            row("c", credit=50_000, paid=50_000, cert_amount=100_000, date=D(2026, 3, 1)),
            row("a", credit=60_000, paid=60_000, cert_amount=100_000, date=D(2026, 1, 1)),
            row("b", credit=30_000, paid=30_000, cert_amount=100_000, date=D(2026, 2, 1)),
        ],
        [["CERTIFICATE_OVERTRANSFERRED"], [], []],
    ),
    # crossing row and every later row, even one that alone would fit, and one with the amount blank
    (
        "every later row",
        [
            row("a", credit=90_000, paid=90_000, cert_amount=100_000, date=D(2026, 1, 1)),
            row("b", credit=30_000, paid=30_000, cert_amount=100_000, date=D(2026, 2, 1)),
            row("c", credit=25_000, paid=25_000, cert_amount=None, date=D(2026, 3, 1)),
        ],
        [[], ["CERTIFICATE_OVERTRANSFERRED"], ["CERTIFICATE_OVERTRANSFERRED"]],
    ),
    # no certificate amount on any row: not checked, and each row says so (a warning: never OK unchecked)
    (
        "no amount given",
        [row("a", credit=900_000, paid=900_000, cert_amount=None), row("b", credit=900_000, paid=900_000, cert_amount=None)],
        [["CERTIFICATE_AMOUNT_NOT_GIVEN"], ["CERTIFICATE_AMOUNT_NOT_GIVEN"]],
    ),
    # an amount given on a later row applies to the earlier one too: 120,000 > 100,000 on a
    (
        "amount given later applies earlier",
        [
            row("a", credit=120_000, paid=120_000, cert_amount=None, date=D(2026, 1, 1)),
            row("b", credit=10_000, paid=10_000, cert_amount=100_000, date=D(2026, 2, 1)),
        ],
        [["CERTIFICATE_OVERTRANSFERRED"], ["TRANSFER_BELOW_MINIMUM", "CERTIFICATE_OVERTRANSFERRED"]],
    ),
    # two amounts: both rows warned; the latest given (b's 80,000) is used: 60,000 fits, 60,000 + 30,000 = 90,000 > 80,000
    (
        "two amounts, the latest used",
        [
            row("a", credit=60_000, paid=60_000, cert_amount=100_000, date=D(2026, 1, 1)),
            row("b", credit=30_000, paid=30_000, cert_amount=80_000, date=D(2026, 2, 1)),
        ],
        [["CERTIFICATE_AMOUNT_CONFLICT"], ["CERTIFICATE_OVERTRANSFERRED", "CERTIFICATE_AMOUNT_CONFLICT"]],
    ),
    # the same amount twice (100,000 and 100,000.00) is no conflict
    (
        "one amount given twice",
        [
            row("a", credit=60_000, paid=60_000, cert_amount=100_000, date=D(2026, 1, 1)),
            row("b", credit=40_000, paid=40_000, cert_amount=100_000.00, date=D(2026, 2, 1)),
        ],
        [[], []],
    ),
    # BEIP's minimum is the certificate's amount when smaller, given on any row: a's blank amount is
    # b's 50,000, so a's 50,000 is not below it; 50,000 + 50,000 = 100,000 > 50,000 on b
    (
        "BEIP minimum from another row's amount",
        [
            row("a", program="BEIP", credit=50_000, paid=50_000, cert_amount=None, date=D(2026, 1, 1)),
            row("b", program="BEIP", credit=50_000, paid=50_000, cert_amount=50_000, date=D(2026, 2, 1)),
        ],
        [[], ["CERTIFICATE_OVERTRANSFERRED"]],
    ),
    # other certificates keep their own totals
    (
        "per certificate",
        [
            row("a", credit=90_000, paid=90_000, cert="C-1", cert_amount=100_000),
            row("b", credit=90_000, paid=90_000, cert="C-2", cert_amount=100_000),
        ],
        [[], []],
    ),
]


@pytest.mark.parametrize("name,rows,expected", CERTIFICATE_CASES, ids=[c[0] for c in CERTIFICATE_CASES])
def test_certificate_overtransferred(name, rows, expected):
    check(rows, expected)


def test_running_total_same_date_uses_row_order():
    rows = [
        row("a", credit=30_000, paid=30_000, date=D(2026, 1, 1)),
        row("b", credit=40_000, paid=40_000, date=D(2026, 1, 1)),
        row("c", credit=50_000, paid=50_000, date=D(2025, 12, 1)),
    ]
    calc = check(rows, [[], [], []])
    # date order c (50,000), a (+30,000 = 80,000), b (+40,000 = 120,000); in cents
    assert calc.computed["Certificate Transferred To Date ($)"].tolist() == [8_000_000, 12_000_000, 5_000_000]


RETRANSFER_CASES = [
    # A -> B, then B -> C of the same BEIP certificate: B is a transferee selling on
    (
        "beip retransfer",
        [row("a", "BEIP", frm="A", to="B", date=D(2026, 1, 1)), row("b", "BEIP", frm="B", to="C", date=D(2026, 2, 1))],
        [[], ["BEIP_RETRANSFER_PROHIBITED"]],
    ),
    (
        "names compared case-insensitively",
        [row("a", "BEIP", frm="A", to="Buyer Inc.", date=D(2026, 1, 1)), row("b", "BEIP", frm=" BUYER INC. ", to="C", date=D(2026, 2, 1))],
        [[], ["BEIP_RETRANSFER_PROHIBITED"]],
    ),
    (
        "business-name rule: Buyer Inc. and BUYER, INCORPORATED are one party",
        [
            row("a", "BEIP", frm="A", to="Buyer Inc.", date=D(2026, 1, 1)),
            row("b", "BEIP", frm="BUYER, INCORPORATED", to="C", date=D(2026, 2, 1)),
        ],
        [[], ["BEIP_RETRANSFER_PROHIBITED"]],
    ),
    (
        "other certificate is not a retransfer",
        [row("a", "BEIP", frm="A", to="B", cert="C-1"), row("b", "BEIP", frm="B", to="C", cert="C-2")],
        [[], []],
    ),
    # B sold before it bought: not a re-transfer of that credit (the purchase is dated after the sale)
    (
        "sale dated before the purchase",
        [row("a", "BEIP", frm="A", to="B", date=D(2026, 2, 1)), row("b", "BEIP", frm="B", to="C", date=D(2026, 1, 1))],
        [[], []],
    ),
    # g.(3): a BEIP row whose Transferor is the Transferee of ANOTHER row of the same certificate dated on or
    # before this row's Transfer Date, wherever that row stands in the sheet
    (
        "same-day resale listed above the purchase is still a resale",
        [row("a", "BEIP", frm="B", to="C", date=D(2026, 1, 1)), row("b", "BEIP", frm="A", to="B", date=D(2026, 1, 1))],
        [["BEIP_RETRANSFER_PROHIBITED"], []],
    ),
    (
        "same-day resale listed below the purchase",
        [row("a", "BEIP", frm="A", to="B", date=D(2026, 1, 1)), row("b", "BEIP", frm="B", to="C", date=D(2026, 1, 1))],
        [[], ["BEIP_RETRANSFER_PROHIBITED"]],
    ),
    (
        "resale dated the day after the purchase, listed above it",
        [row("a", "BEIP", frm="B", to="C", date=D(2026, 1, 2)), row("b", "BEIP", frm="A", to="B", date=D(2026, 1, 1))],
        [["BEIP_RETRANSFER_PROHIBITED"], []],
    ),
    # 2026-01-01 is before the purchase of 2026-01-02: B sold before it bought, not a resale of that credit
    (
        "sale dated the day before the purchase, listed below it",
        [row("a", "BEIP", frm="A", to="B", date=D(2026, 1, 2)), row("b", "BEIP", frm="B", to="C", date=D(2026, 1, 1))],
        [[], []],
    ),
    (
        "sale dated the day before the purchase, listed above it",
        [row("a", "BEIP", frm="B", to="C", date=D(2026, 1, 1)), row("b", "BEIP", frm="A", to="B", date=D(2026, 1, 2))],
        [[], []],
    ),
    (
        "same-day resale of a different certificate",
        [
            row("a", "BEIP", frm="B", to="C", cert="C-2", date=D(2026, 1, 1)),
            row("b", "BEIP", frm="A", to="B", cert="C-1", date=D(2026, 1, 1)),
        ],
        [[], []],
    ),
    (
        "grow nj transferees may sell on",
        [row("a", "Grow NJ", frm="A", to="B", date=D(2026, 1, 1)), row("b", "Grow NJ", frm="B", to="C", date=D(2026, 2, 1))],
        [[], []],
    ),
    (
        "grow nj same-day resale listed above the purchase",
        [row("a", "Grow NJ", frm="B", to="C", date=D(2026, 1, 1)), row("b", "Grow NJ", frm="A", to="B", date=D(2026, 1, 1))],
        [[], []],
    ),
    (
        "urban transit hub transferees may sell on",
        [
            row("a", "Urban Transit Hub", frm="B", to="C", date=D(2026, 1, 1)),
            row("b", "Urban Transit Hub", frm="A", to="B", date=D(2026, 1, 1)),
        ],
        [[], []],
    ),
    (
        "erg residential transferees may sell on",
        [
            row("a", "ERG Residential", frm="B", to="C", date=D(2026, 1, 1)),
            row("b", "ERG Residential", frm="A", to="B", date=D(2026, 1, 1)),
        ],
        [[], []],
    ),
    # the other row must be another row: a transfer to oneself is no earlier purchase of itself
    ("a transfer to oneself alone", [row("a", "BEIP", frm="B", to="B", date=D(2026, 1, 1))], [[]]),
    (
        "a transfer to oneself after buying",
        [row("a", "BEIP", frm="B", to="B", date=D(2026, 1, 2)), row("b", "BEIP", frm="A", to="B", date=D(2026, 1, 2))],
        [["BEIP_RETRANSFER_PROHIBITED"], []],
    ),
    # B bought twice; one purchase on or before the sale is enough
    (
        "one of two purchases before the sale",
        [
            row("a", "BEIP", frm="A", to="B", date=D(2026, 3, 1)),
            row("b", "BEIP", frm="B", to="C", date=D(2026, 2, 1)),
            row("c", "BEIP", frm="D", to="B", date=D(2026, 2, 1)),
        ],
        [[], ["BEIP_RETRANSFER_PROHIBITED"], []],
    ),
    # a chain on one day, listed backwards: every seller but the first bought the credit that day
    (
        "a same-day chain listed backwards",
        [
            row("a", "BEIP", frm="C", to="D", date=D(2026, 1, 1)),
            row("b", "BEIP", frm="B", to="C", date=D(2026, 1, 1)),
            row("c", "BEIP", frm="A", to="B", date=D(2026, 1, 1)),
        ],
        [["BEIP_RETRANSFER_PROHIBITED"], ["BEIP_RETRANSFER_PROHIBITED"], []],
    ),
]


@pytest.mark.parametrize("name,rows,expected", RETRANSFER_CASES, ids=[c[0] for c in RETRANSFER_CASES])
def test_beip_retransfer(name, rows, expected):
    check(rows, expected)


def test_retransfer_message_names_the_purchase(workbook):
    from batch.pipeline import process

    rows = [
        row("sale", "BEIP", frm="B", to="C", date=D(2026, 1, 1)),
        row("later", "BEIP", frm="D", to="B", date=D(2026, 1, 5)),
        row("buy", "BEIP", frm="A", to="B", date=D(2026, 1, 1)),
    ]
    headers = list(rows[0])
    res = process(workbook({"Transfers": [headers] + [[r[h] for h in headers] for r in rows]})).intake[0]
    hit = res.findings[res.findings["Code"] == "BEIP_RETRANSFER_PROHIBITED"]
    # the sale is listed first; the purchase on or before it is "buy" (2026-01-01), listed below it;
    # "later" (2026-01-05) is after the sale and is not the one named
    assert hit[["Record ID", "Column", "Severity"]].values.tolist() == [["sale", "Transferor", "error"]]
    assert "transferee of certificate C-1 on 2026-01-01 (Transfer buy)" in hit["Message"].iloc[0]
    assert res.status.tolist() == ["Flagged", "OK", "OK"]


def test_retransfer_of_a_huge_certificate_is_vectorized():
    # 100,000 rows of one BEIP certificate on one day, a chain listed backwards: P99999 -> P100000 first, ...,
    # P0 -> P1 last; every seller but P0 bought the credit that day (99,999 resales). Each sale meets at most
    # two purchases, never all pairs of the certificate.
    n = 100_000
    frame = pd.DataFrame(
        {
            "Transfer ID": [f"T{i}" for i in range(n)],
            "Program": "BEIP",
            "Certificate ID": "BIG",
            "Certificate Amount ($)": pd.array([pd.NA] * n, dtype="Int64"),
            "Transferor": [f"P{n - 1 - i}" for i in range(n)],
            "Transferee": [f"P{n - i}" for i in range(n)],
            "Transfer Date": pd.Timestamp("2026-01-01"),
            "Credit Amount Transferred ($)": 10_000_000,
            "Consideration Received ($)": 9_000_000,
        }
    )
    calc = transfers.calculate(frame, RULES)
    found = pd.concat([f for f in calc.findings if len(f)])
    resold = found.loc[found["code"] == "BEIP_RETRANSFER_PROHIBITED", "row"]
    assert len(resold) == n - 1 and set(resold) == set(range(n - 1))


def test_shuffled_rows_give_the_same_findings():
    rows = [
        row("a", "Urban Transit Hub", 60_000, 60_000, D(2013, 3, 1), cert="U", cert_amount=150_000),
        row("b", "Urban Transit Hub", 50_000, 50_000, D(2013, 4, 1), cert="U", cert_amount=150_000),
        row("c", "Urban Transit Hub", 45_000, 45_000, D(2013, 5, 1), cert="U", cert_amount=150_000),
        row("d", "BEIP", 120_000, 80_000, D(2026, 1, 1), frm="A", to="B", cert="B1"),
        row("e", "BEIP", 120_000, 100_000, D(2026, 2, 1), frm="B", to="C", cert="B1"),
        row("f", "Grow NJ", 30_000, 21_000, D(2026, 3, 1), cert="G", cert_amount=40_000),
        row("g", "Grow NJ", 30_000, 30_000, D(2026, 4, 1), cert="G", cert_amount=40_000),
    ]
    base, calc = codes(rows)
    expected = {r["Transfer ID"]: c for r, c in zip(rows, base, strict=False)}
    assert expected == {
        "a": ["SMALL_TRANSFER_ALLOWANCE_USED"],
        "b": ["TRANSFER_BELOW_MINIMUM"],
        "c": ["TRANSFER_BELOW_MINIMUM", "CERTIFICATE_OVERTRANSFERRED"],  # 60,000 + 50,000 + 45,000 = 155,000 > 150,000
        "d": ["CONSIDERATION_BELOW_75PCT"],  # 80,000 / 120,000 = 66.66%
        "e": ["BEIP_RETRANSFER_PROHIBITED"],  # 100,000 / 120,000 = 83.33% passes
        "f": ["CONSIDERATION_BELOW_75PCT"],  # 21,000 / 30,000 = 70%
        "g": ["CERTIFICATE_OVERTRANSFERRED"],  # 30,000 + 30,000 = 60,000 > 40,000
    }
    totals = dict(zip([r["Transfer ID"] for r in rows], calc.computed["Certificate Transferred To Date ($)"], strict=False))
    rng = np.random.default_rng(7)
    for _ in range(5):
        perm = rng.permutation(len(rows))
        shuffled = [rows[i] for i in perm]
        got, calc2 = codes(shuffled)
        assert {r["Transfer ID"]: c for r, c in zip(shuffled, got, strict=False)} == expected
        ids = [r["Transfer ID"] for r in shuffled]
        assert dict(zip(ids, calc2.computed["Certificate Transferred To Date ($)"], strict=True)) == totals


def test_no_rows():
    calc = transfers.calculate(typed_frame(TRANSFERS, []), RULES)
    assert calc.computed.empty and all(f.empty for f in calc.findings)


def test_summary_by_program_counts_and_adds_up():
    # Grow NJ: T-1 ($100,000 for $90,000) and T-2 ($50,000 for $40,000) computed, T-3 Invalid;
    # BEIP: T-4 Invalid only (no computed row: not a row of the table); an Invalid row with a blank
    # Program counts under no program
    rows = [row("T-1"), row("T-2", credit=50_000, paid=40_000, date=D(2025, 6, 1)), row("T-3"), row("T-4", program="BEIP"), row("T-5")]
    frame = typed_frame(TRANSFERS, rows).assign(Program=["Grow NJ", "Grow NJ", "Grow NJ", "BEIP", None])
    status = pd.Series(["OK", "OK", "Invalid", "Invalid", "Invalid"])
    codes = pd.DataFrame({"row": [0, 2], "Code": ["CONSIDERATION_BELOW_75PCT", "MISSING_VALUE"]})
    by_program, by_code, by_year = transfers.summarize(frame, status, codes, RULES)
    assert by_program.table.to_dict("records") == [
        {
            "Program": "Grow NJ",
            "Transfers": 2,
            "Credit Transferred ($)": 15_000_000,  # 10,000,000 + 5,000,000 cents
            "Consideration ($)": 13_000_000,  # 9,000,000 + 4,000,000 cents
            "Weighted Consideration Ratio": 13_000_000 / 15_000_000,  # 86.67%
            "Invalid Rows": 1,  # T-3
        }
    ]
    assert by_code.table.to_dict("records") == [
        {"Code": "CONSIDERATION_BELOW_75PCT", "Grow NJ": 1, "Total": 1},
        {"Code": "MISSING_VALUE", "Grow NJ": 1, "Total": 1},
    ]
    # credit by year of transfer: 2025 T-2 5,000,000 cents; 2026 T-1 10,000,000 cents
    assert by_year.table.to_dict("records") == [{"Program": "Grow NJ", "2025": 5_000_000, "2026": 10_000_000}]


# -- the portfolio: records of earlier runs (RunContext.portfolio) ---------------------------------


def far(rid, credit, date, cert="C-1", cert_amount=None, workbook="nov.xlsx", program="Grow NJ", frm="Seller LLC"):
    """A transfer of an earlier run, as the ledger gives it (money in cents, dates as ISO text, its
    group keys as `portfolio_fields` makes them)."""
    cents = pd.Series([round(credit * 100)])
    small = transfers._small_transfer_key(RULES, pd.Series([program]), pd.Series([frm]), pd.Series([pd.Timestamp(date)]), cents)[0]
    return {
        "program": program, "certificate": cert, "certificate_amount": None if cert_amount is None else cert_amount * 100,
        "transferor": frm, "transferee": "Buyer Inc.", "date": date.isoformat(), "credit": int(cents[0]),
        "certificate_key": cert.strip().casefold(), "small_transfer_key": small, "sheet": "Transfers", "record_id": rid,
        "workbook": workbook, "run_date": "2026-11-30", "ended": "2026-11-30T12:00:00",
    }  # fmt: skip


def across(outside, rows):
    from batch.programs._kit.calculation import RunContext

    frame = typed_frame(TRANSFERS, rows)
    context = RunContext(D(2026, 12, 1), portfolio=pd.DataFrame(outside), workbook="dec.xlsx", run_date="2026-12-01")
    calc = transfers.calculate(frame, RULES, context)
    found = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])])
    per_row = found.groupby("row")["code"].agg(list)
    return [per_row.get(i, []) for i in frame.index], calc


NOV, DEC = D(2026, 11, 10), D(2026, 12, 5)
PORTFOLIO_CASES = [
    # November moved the whole 6,000,000; December's 500,000 makes 6,500,000 > 6,000,000 (the amount given in November)
    ("fully transferred last month", [far("T-1", 6_000_000, NOV, cert_amount=6_000_000)],
     [row("d", credit=500_000, paid=450_000, cert_amount=None, date=DEC)], [["CERTIFICATE_OVERTRANSFERRED"]], [6_500_000]),
    # 1,000,000 + 500,000 = 1,500,000 <= 6,000,000 given in November: fits, and the amount is given
    ("partly transferred last month", [far("T-1", 1_000_000, NOV, cert_amount=6_000_000)],
     [row("d", credit=500_000, paid=450_000, cert_amount=None, date=DEC)], [[]], [1_500_000]),
    # a record dated after the row is counted after it: 500,000 to date on the row
    ("an earlier run's later transfer", [far("T-9", 5_800_000, D(2027, 3, 1), cert_amount=6_000_000)],
     [row("d", credit=500_000, paid=450_000, cert_amount=None, date=DEC)], [[]], [500_000]),
    # on one date the earlier run's record comes first: 5,900,000 + 200,000 = 6,100,000 > 6,000,000
    ("same date: earlier runs first", [far("T-1", 5_900_000, DEC, cert_amount=6_000_000)],
     [row("d", credit=200_000, paid=200_000, cert_amount=None, date=DEC)], [["CERTIFICATE_OVERTRANSFERRED"]], [6_100_000]),
    # 6,000,000 in November, 5,000,000 now: the latest (this row's) is used; 5,000,000 + 100,000 > 5,000,000
    ("two amounts across runs", [far("T-1", 5_000_000, NOV, cert_amount=6_000_000)],
     [row("d", credit=100_000, paid=100_000, cert_amount=5_000_000, date=DEC)],
     [["CERTIFICATE_OVERTRANSFERRED", "CERTIFICATE_AMOUNT_CONFLICT"]], [5_100_000]),
    # no amount in November nor now: not checked, said
    ("no amount anywhere", [far("T-1", 9_000_000, NOV)], [row("d", credit=500_000, paid=450_000, cert_amount=None, date=DEC)],
     [["CERTIFICATE_AMOUNT_NOT_GIVEN"]], [9_500_000]),
    # another certificate's record is not this one's
    ("another certificate", [far("T-1", 6_000_000, NOV, cert="C-2", cert_amount=6_000_000)],
     [row("d", credit=500_000, paid=450_000, cert_amount=1_000_000, date=DEC)], [[]], [500_000]),
    # certificate IDs compared trimmed and case-insensitively: " c-1 " is C-1
    ("the certificate ID as typed", [far("T-1", 6_000_000, NOV, cert=" c-1 ", cert_amount=6_000_000)],
     [row("d", credit=500_000, paid=450_000, cert_amount=None, date=DEC)], [["CERTIFICATE_OVERTRANSFERRED"]], [6_500_000]),
    # BEIP: November's transfer made Buyer Inc. the transferee; in December it sells on: barred
    # (C.34:1B-129 g.(3)); 100,000 + 100,000 = 200,000 <= 10,000,000
    ("a BEIP transferee of an earlier run sells on", [far("T-1", 100_000, NOV, cert_amount=10_000_000, program="BEIP")],
     [row("d", "BEIP", credit=100_000, paid=100_000, frm=" BUYER INC. ", to="C", date=DEC)], [["BEIP_RETRANSFER_PROHIBITED"]], [200_000]),
    # the earlier run's purchase is dated after the sale: not a resale of what it bought
    ("a BEIP purchase dated after the sale", [far("T-1", 100_000, DEC, cert_amount=10_000_000, program="BEIP")],
     [row("d", "BEIP", credit=100_000, paid=100_000, frm="Buyer Inc.", to="C", date=NOV)], [[]], [100_000]),
    # a Grow NJ transferee may transfer on (C.34:1B-248)
    ("a Grow NJ transferee of an earlier run sells on", [far("T-1", 100_000, NOV, cert_amount=10_000_000)],
     [row("d", credit=100_000, paid=100_000, frm="Buyer Inc.", to="C", date=DEC)], [[]], [200_000]),
    # another certificate's transferee is not this one's
    ("a BEIP transferee of another certificate", [far("T-1", 100_000, NOV, cert="C-2", cert_amount=10_000_000, program="BEIP")],
     [row("d", "BEIP", credit=100_000, paid=100_000, frm="Buyer Inc.", to="C", date=DEC)], [[]], [100_000]),
]  # fmt: skip


@pytest.mark.parametrize("name,outside,rows,expected,to_date", PORTFOLIO_CASES, ids=[c[0] for c in PORTFOLIO_CASES])
def test_the_certificate_counts_the_portfolio(name, outside, rows, expected, to_date):
    got, calc = across(outside, rows)
    assert got == expected
    assert calc.computed["Certificate Transferred To Date ($)"].tolist() == [d * 100 for d in to_date]


def test_a_finding_names_the_records_of_other_workbooks_it_counted():
    from batch.programs._kit.findings import render

    # twelve November transfers of 100,000 (1,200,000) and December's 100,000: 1,300,000 > 1,000,000
    outside = [far(f"T-{i}", 100_000, NOV, cert_amount=1_000_000) for i in range(1, 13)]
    got, calc = across(outside, [row("d", credit=100_000, paid=100_000, cert_amount=None, date=DEC)])
    assert got == [["CERTIFICATE_OVERTRANSFERRED"]]
    found = render(pd.concat([f for f in calc.findings if len(f)]), "Transfers", RULES.findings)
    (message,) = found.loc[found["Code"] == "CERTIFICATE_OVERTRANSFERRED", "Message"]
    named = "; ".join(f"Transfers T-{i} (nov.xlsx, run 2026-11-30)" for i in range(1, 11))
    assert (
        "Certificate C-1 has $1,300,000.00 transferred to date with this row, $1,200,000.00 of it in other workbooks "
        f"({named}; and 2 more), $300,000.00 more than its Certificate Amount of $1,000,000.00" in message
    )


def test_a_resale_names_the_purchase_of_another_workbook():
    from batch.programs._kit.findings import render

    got, calc = across(
        [far("T-1", 100_000, NOV, cert_amount=10_000_000, program="BEIP")],
        [row("d", "BEIP", credit=100_000, paid=100_000, frm="Buyer Inc.", to="C", date=DEC)],
    )
    found = render(pd.concat([f for f in calc.findings if len(f)]), "Transfers", RULES.findings)
    (message,) = found.loc[found["Code"] == "BEIP_RETRANSFER_PROHIBITED", "Message"]
    assert message.startswith(
        "Buyer Inc. received this BEIP credit as the transferee of certificate C-1 on 2026-11-10, in another workbook "
        "(Transfers T-1 (nov.xlsx, run 2026-11-30)); a tax credit transferee may not transfer"
    )


def test_two_amounts_are_both_named():
    from batch.programs._kit.findings import render

    got, calc = across(
        [far("T-1", 100_000, NOV, cert_amount=6_000_000)], [row("d", credit=100_000, paid=100_000, cert_amount=5_000_000, date=DEC)]
    )
    found = render(pd.concat([f for f in calc.findings if len(f)]), "Transfers", RULES.findings)
    (message,) = found.loc[found["Code"] == "CERTIFICATE_AMOUNT_CONFLICT", "Message"]
    assert message.startswith(
        "Certificate C-1 is given different Certificate Amounts: $6,000,000.00 (Transfers T-1 (nov.xlsx, run 2026-11-30)); "
        "$5,000,000.00 (Transfers d (this workbook)); the latest given, $5,000,000.00, is the certificate's total"
    )


UTH = "Urban Transit Hub"
JUN, SEP = D(2013, 6, 28), D(2013, 9, 3)
ALLOWANCE_ACROSS_CASES = [
    # November's $60,000 of June 2013 used Seller LLC's one smaller transfer of 2013: September's $50,000 is below $100,000
    ("the allowance used in an earlier run", [far("T-1", 60_000, JUN, program=UTH)],
     [row("d", UTH, 50_000, 50_000, SEP)], [["TRANSFER_BELOW_MINIMUM"]]),
    # the earlier run's smaller transfer is dated after this row's: this row is the first of 2013, and uses it
    ("an earlier run's later smaller transfer", [far("T-1", 60_000, SEP, program=UTH)],
     [row("d", UTH, 50_000, 50_000, JUN)], [["SMALL_TRANSFER_ALLOWANCE_USED"]]),
    # on one date the earlier run's record comes first
    ("same date: earlier runs first", [far("T-1", 60_000, JUN, program=UTH)],
     [row("d", UTH, 50_000, 50_000, JUN)], [["TRANSFER_BELOW_MINIMUM"]]),
    # the minimum itself is not a smaller transfer: $100,000.00 uses nothing; $99,999.99 uses the allowance
    ("an earlier transfer at the minimum", [far("T-1", 100_000, JUN, program=UTH)],
     [row("d", UTH, 50_000, 50_000, SEP)], [["SMALL_TRANSFER_ALLOWANCE_USED"]]),
    ("an earlier transfer one cent below it", [far("T-1", 99_999.99, JUN, program=UTH)],
     [row("d", UTH, 50_000, 50_000, SEP)], [["TRANSFER_BELOW_MINIMUM"]]),
    # another Transferor, another year, another program: each has its own allowance (or none to use)
    ("another transferor's", [far("T-1", 60_000, JUN, program=UTH, frm="Other LLC")],
     [row("d", UTH, 50_000, 50_000, SEP)], [["SMALL_TRANSFER_ALLOWANCE_USED"]]),
    ("another year's", [far("T-1", 60_000, D(2012, 12, 31), program=UTH)],
     [row("d", UTH, 50_000, 50_000, D(2013, 1, 1))], [["SMALL_TRANSFER_ALLOWANCE_USED"]]),
    ("a Grow NJ transfer", [far("T-1", 20_000, JUN, program="Grow NJ")],
     [row("d", UTH, 50_000, 50_000, SEP)], [["SMALL_TRANSFER_ALLOWANCE_USED"]]),
    # from 2014-10-24 no transfer has the allowance: November's $24,000 of 2014-11-01 used none of 2014's
    ("a transfer under the 2014 text", [far("T-1", 24_000, D(2014, 11, 1), program=UTH)],
     [row("d", UTH, 50_000, 50_000, D(2014, 6, 2))], [["SMALL_TRANSFER_ALLOWANCE_USED"]]),
    # the one business-name rule: "SELLER, L.L.C." of another workbook is Seller LLC
    ("the transferor as another workbook spells it", [far("T-1", 60_000, JUN, program=UTH, frm="SELLER, L.L.C.")],
     [row("d", UTH, 50_000, 50_000, SEP)], [["TRANSFER_BELOW_MINIMUM"]]),
    # two of the sheet's rows after an earlier run's: both below, neither allowed
    ("the sheet's rows after an earlier run's", [far("T-1", 60_000, JUN, program=UTH)],
     [row("d", UTH, 50_000, 50_000, SEP), row("e", UTH, 40_000, 40_000, D(2013, 10, 1))],
     [["TRANSFER_BELOW_MINIMUM"], ["TRANSFER_BELOW_MINIMUM"]]),
]  # fmt: skip


@pytest.mark.parametrize("name,outside,rows,expected", ALLOWANCE_ACROSS_CASES, ids=[c[0] for c in ALLOWANCE_ACROSS_CASES])
def test_the_small_transfer_allowance_counts_the_portfolio(name, outside, rows, expected):
    got, _calc = across(outside, rows)
    assert got == expected


def test_the_allowance_used_elsewhere_is_named():
    from batch.programs._kit.findings import render

    got, calc = across([far("T-1", 60_000, JUN, program=UTH)], [row("d", UTH, 50_000, 50_000, SEP), row("e", UTH, 40_000, 40_000, SEP)])
    found = render(pd.concat([f for f in calc.findings if len(f)]), "Transfers", RULES.findings)
    messages = found.loc[found["Code"] == "TRANSFER_BELOW_MINIMUM", "Message"].tolist()
    assert messages[0].startswith(
        "Urban Transit Hub transfer of $50,000.00 on 2013-09-03 is below the minimum transfer of $100,000.00, and Seller LLC "
        "already used its one smaller transfer of tax period 2013 in another workbook: Transfers T-1 (nov.xlsx, run 2026-11-30) ("
    )
    assert "in another workbook: Transfers T-1 (nov.xlsx, run 2026-11-30)" in messages[1]


SMALL_GROUP_CASES = [
    # (program, credit, date) -> the group it counts in: a transfer that may use the allowance, below
    # the minimum in force (Urban Transit Hub before 2014-10-24: $100,000), of a year while it stood
    (UTH, 99_999.99, JUN, "2013 seller"),  # one cent below the minimum: a smaller transfer
    (UTH, 100_000, JUN, None),  # at the minimum ("not less than"): no smaller transfer, in no group
    (UTH, 100_000.01, JUN, None),  # one cent above
    (UTH, 24_999.99, D(2014, 10, 23), "2014 seller"),  # the last day of the allowance
    (UTH, 24_999.99, D(2014, 10, 24), None),  # the first day without it (the minimum now $25,000)
    ("Grow NJ", 24_999.99, JUN, None),  # below Grow NJ's $25,000, but Grow NJ never had an allowance
]


@pytest.mark.parametrize("program,credit,date,group", SMALL_GROUP_CASES)
def test_only_a_transfer_that_may_use_the_allowance_is_in_a_smaller_transfers_group(program, credit, date, group):
    fields = transfers.portfolio_fields(typed_frame(TRANSFERS, [row("a", program, credit, credit, date)]))
    assert fields["small_transfer_key"].tolist() == [group]
    # a record of an earlier run, as the ledger gives it, is in the same group
    assert far("T-1", credit, date, program=program)["small_transfer_key"] == group


def test_the_group_of_a_smaller_transfer_is_its_transferor_and_year_while_the_allowance_stood():
    rows = [row("a", UTH, 50_000, date=JUN, frm="Seller, L.L.C."), row("b", UTH, 50_000, date=D(2014, 10, 24)),
            row("c", "Grow NJ", 20_000, date=JUN), row("d", UTH, 50_000, date=JUN, frm="...")]  # fmt: skip
    fields = transfers.portfolio_fields(typed_frame(TRANSFERS, rows))
    # the allowance ends on 2014-10-24 (P.L.2014, c.63); Grow NJ never had one; "..." names no business
    assert fields["small_transfer_key"].tolist() == ["2013 seller", None, None, None]
