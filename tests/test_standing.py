"""`njcredits portfolio --out DIR`: the standing position of the ledger's latest records
(batch/run/standing.py, the Transfers `Certificates` sheet)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from databases import ledger_query
from test_portfolio import run, transfer
from test_reviews import transfers_workbook

from batch.cli import main

D = dt.date
pytestmark = pytest.mark.usefixtures("backend")  # on both of the ledger's databases


def certificates(outbox: Path) -> dict[str, dict]:
    ws = openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")["Certificates"]
    rows = list(ws.iter_rows(values_only=True))
    header = rows[1]
    return {r[0]: dict(zip(header, r, strict=True)) for r in rows[2:]}


def test_the_standing_position_of_each_certificate(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    transfers_workbook(inbox / "nov.xlsx", [
        transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 6_000_000),
        transfer("T-2", "C-2", 1_000_000, D(2026, 11, 12), 400_000),
        transfer("T-3", "C-3", 900_000, D(2026, 11, 12), 100_000),
        transfer("T-4", "C-4", None, D(2026, 11, 12), 100_000),
        transfer("T-5", "@SUM(A1)", 500_000, D(2026, 11, 12), 100_000),
        transfer("T-6", "C-2", 1_000_000, D(2026, 11, 12), "not money", paid=1),  # Invalid: counts in nothing
    ])  # fmt: skip
    run(inbox, outbox)
    transfers_workbook(inbox / "dec.xlsx", [
        transfer("T-9", "c-1 ", None, D(2026, 12, 5), 500_000),
        transfer("T-10", "C-3", 800_000, D(2026, 12, 6), 100_000),
        transfer("T-2", "C-2", 1_000_000, D(2026, 11, 12), 300_000),  # November's T-2 restated: its latest version counts
    ])  # fmt: skip
    run(inbox, outbox)
    result = CliRunner().invoke(main, ["portfolio", "--out", str(outbox)])
    assert result.exit_code == 0, result.output
    assert "Certificates (5 rows)" in result.output
    found = certificates(outbox)
    cols = ("Certificate Amount ($)", "Transferred To Date ($)", "Remaining ($)", "Over By ($)", "Transfers", "Workbooks")
    cols = (*cols, "Open Violations")
    assert {c: tuple(r[k] for k in cols) for c, r in found.items()} == {
        # 6,000,000 + 500,000 = 6,500,000 > 6,000,000: 500,000 over; shown as its latest transfer spells it
        "c-1": (6_000_000, 6_500_000, 0, 500_000, 2, 2, "CERTIFICATE_OVERTRANSFERRED"),
        # T-2's latest version, 300,000 (not 400,000 + 300,000); T-6 is Invalid
        "C-2": (1_000_000, 300_000, 700_000, 0, 1, 1, None),
        # 900,000 given in November, 800,000 in December (the latest, used): 200,000 <= 800,000
        "C-3": (800_000, 200_000, 600_000, 0, 2, 2, "CERTIFICATE_AMOUNT_CONFLICT"),
        "C-4": (None, 100_000, None, None, 1, 1, "CERTIFICATE_AMOUNT_NOT_GIVEN"),
        "@SUM(A1)": (500_000, 100_000, 400_000, 0, 1, 1, None),  # text, never a formula
    }
    ws = openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")["Certificates"]
    assert ws.freeze_panes == "B3" and ws.auto_filter.ref == "A2:J7"
    assert ws.cell(3, 3).number_format == "#,##0.00"
    run_sheet = dict(openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")["Run"].iter_rows(values_only=True))
    assert run_sheet["Runs ended"] == "2" and "Not shown yet" not in run_sheet


@pytest.mark.sqlite_only  # a PostgreSQL ledger is always there; an empty one says so (tests/test_ledger_backends.py)
def test_without_a_ledger_it_says_so(tmp_path):
    result = CliRunner().invoke(main, ["portfolio", "--out", str(tmp_path / "outbox")])
    assert result.exit_code == 1 and "No ledger at" in result.output
    assert not (tmp_path / "outbox" / "njcredits-portfolio.xlsx").exists()


@pytest.mark.sqlite_only
def test_a_ledger_from_before_the_portfolio_and_a_folder_that_cannot_take_it_are_said(tmp_path):
    import sqlite3

    from helpers import ledger_at

    outbox = tmp_path / "outbox"
    (outbox / ".njcredits").mkdir(parents=True)
    with sqlite3.connect(outbox / ".njcredits" / "ledger.sqlite", isolation_level=None) as db:
        ledger_at(db, 5)
    result = CliRunner().invoke(main, ["portfolio", "--out", str(outbox)])
    assert result.exit_code == 0, result.output
    run_sheet = dict(openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")["Run"].iter_rows(values_only=True))
    assert run_sheet["Ledger schema"].startswith("5, before the portfolio (6): no records")
    (outbox / "njcredits-portfolio.xlsx").unlink()
    (outbox / "njcredits-portfolio.xlsx").mkdir()  # a folder where the workbook goes: the folder's fault
    result = CliRunner().invoke(main, ["portfolio", "--out", str(outbox), "--ledger", str(outbox / ".njcredits" / "ledger.sqlite")])
    assert result.exit_code == 3 and "njcredits-portfolio.xlsx cannot be written in" in result.output
    assert "Traceback" not in result.output and not list(outbox.glob(".*.partial"))


def test_the_standing_position_of_brrap_credit_per_business_and_year(tmp_path):
    from test_samerun import brrap_workbook

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: Acme 6,000,000 (2026), Beta 9,000,000 (2026); December: ACME CORPORATION 4,000,000.01 (2026),
    # Beta 1,000,000 (2027)
    brrap_workbook(inbox / "nov.xlsx", [("B-1", "Acme Corp.", 6_000_000, 2026), ("B-2", "Beta LLC", 9_000_000, 2026)])
    run(inbox, outbox)
    brrap_workbook(inbox / "dec.xlsx", [("B-3", "ACME CORPORATION", 4_000_000.01, 2026), ("B-4", "Beta LLC", 1_000_000, 2027)])
    run(inbox, outbox)
    result = CliRunner().invoke(main, ["portfolio", "--out", str(outbox)])
    assert result.exit_code == 0, result.output
    ws = openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")["BRRAP"]
    rows = list(ws.iter_rows(values_only=True))
    assert rows[1] == ("Tax Period", "Business", "Credit ($)", "Grants", "Workbooks", "Over Business Limit By ($)", "Year Total ($)",
                       "Over Aggregate Limit By ($)")  # fmt: skip
    assert rows[2:] == [
        # Acme: 6,000,000 + 4,000,000.01 = 10,000,000.01, one cent over 10,000,000; 2026: 19,000,000.01 <= 20,000,000
        ("2026", "ACME CORPORATION", 10_000_000.01, 2, 2, 0.01, 19_000_000.01, 0),
        ("2026", "Beta LLC", 9_000_000, 1, 1, 0, 19_000_000.01, 0),
        ("2027", "Beta LLC", 1_000_000, 1, 1, 0, 1_000_000, 0),
    ]


def test_the_standing_position_of_the_erg_buckets(tmp_path):
    from test_samerun import erg_workbook

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: (d) 15,000,000 and (a) South Jersey Growth Zone 10,000,000; December: (d) 10,000,000.01 (over its
    # 25,000,000 by 0.01) and one of 2016-07-01, after the deadline (Ineligible: counts in nothing)
    erg_workbook(inbox / "nov.xlsx", [("P-1", "Other ERG Incentive Area", D(2015, 1, 5), 15_000_000),
                                      ("P-2", "South Jersey Growth Zone", D(2015, 2, 5), 10_000_000)])  # fmt: skip
    run(inbox, outbox)
    erg_workbook(inbox / "dec.xlsx", [("P-3", "Other ERG Incentive Area", D(2015, 3, 5), 10_000_000.01),
                                      ("P-4", "Disaster Recovery", D(2016, 7, 1), 5_000_000)])  # fmt: skip
    run(inbox, outbox)
    assert CliRunner().invoke(main, ["portfolio", "--out", str(outbox)]).exit_code == 0
    ws = openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")["ERG buckets"]
    rows = {r[0]: r[1:] for r in list(ws.iter_rows(values_only=True))[2:]}
    # Limit, Credits Requested, Applications, Workbooks, Remaining, Over By
    assert rows["(d)"] == (25_000_000, 25_000_000.01, 2, 2, 0, 0.01)
    assert rows["(a) South Jersey Growth Zone"] == (175_000_000, 10_000_000, 1, 1, 165_000_000, 0)
    assert rows["(a) total"] == (250_000_000, 10_000_000, 1, 1, 240_000_000, 0)
    assert rows["(b)"] == (250_000_000, 0, 0, 0, 250_000_000, 0)
    assert rows["all buckets"] == (600_000_000, 35_000_000.01, 3, 2, 564_999_999.99, 0)


def test_records_kept_before_their_portfolio_fields_are_said_not_counted(tmp_path):
    from test_samerun import brrap_workbook

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    brrap_workbook(inbox / "nov.xlsx", [("B-1", "Beta LLC", 6_000_000, 2026), ("B-2", "Gamma Inc", 1_000_000, 2026)])
    run(inbox, outbox)
    # as a release before the BRRAP portfolio left them
    ledger_query(outbox / ".njcredits" / "ledger.sqlite", "UPDATE records SET fields = NULL WHERE record_id = 'B-1' RETURNING 1")
    ledger_query(outbox / ".njcredits" / "ledger.sqlite", "DELETE FROM record_keys WHERE record_id = 'B-1' RETURNING 1")
    assert CliRunner().invoke(main, ["portfolio", "--out", str(outbox)]).exit_code == 0
    book = openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")
    said = {r[0]: r[1] for r in book["Run"].iter_rows(values_only=True)}
    assert said["Records not counted"].startswith("1 BRRAP: recorded before njcredits kept their portfolio fields")
    assert [r[2] for r in list(book["BRRAP"].iter_rows(values_only=True))[2:]] == [1_000_000]  # Gamma only


def test_the_standing_position_of_each_compliance_project(tmp_path):
    from test_portfolio import compliance_workbook

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # P-1: 2019 credit 1,000, liability 400 (600 carried); 2020 credit 1,000, liability 0 (1,000 carried): balance 1,600,
    # of which 2019's 600 is the oldest, usable through 2039. P-2: 2020 credit 1,000, liability 1,000: nothing carried.
    compliance_workbook(inbox / "nov.xlsx", [("P-1", 2019, 1_000, 400), ("P-2", 2020, 1_000, 1_000)])
    run(inbox, outbox)
    compliance_workbook(inbox / "dec.xlsx", [("P-1", 2020, 1_000, 0)])
    run(inbox, outbox)
    assert CliRunner().invoke(main, ["portfolio", "--out", str(outbox)]).exit_code == 0
    ws = openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")["Compliance"]
    rows = {r[1]: r[2:] for r in list(ws.iter_rows(values_only=True))[2:]}
    # First, Last, Periods, Allowed, Used, Balance, Expired, Next Expiry, Expiring Then
    assert rows["P-1"] == ("2019", "2020", 2, 2_000, 400, 1_600, 0, "2039", 600)
    assert rows["P-2"] == ("2020", "2020", 1, 1_000, 1_000, 0, 0, None, None)


def test_the_prior_awards_of_each_business(tmp_path):
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, BRRAP_HEADERS, GROW_HEADERS, beip, grow

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    # Acme: a BEIP grant (2015-06-01), a BRRAP grant (first period 2015, as ACME CO) and its Grow NJ application
    # (2016-01-04); Other Business Inc: a BEIP grant of 2014-02-03. B-3 (no Agreement Date) is Invalid: no prior award
    write_workbook(inbox / "acme.xlsx", {
        "BEIP": [BEIP_HEADERS, beip(), beip("B-2", "Other Business Inc", D(2014, 2, 3)), beip("B-3", "Acme Corp.", "not a date")],
        "BRRAP": [BRRAP_HEADERS, ["R-1", "ACME CO", 300, 1_000_000, 2015]],
        "GrowNJ": [GROW_HEADERS, grow()],
    })  # fmt: skip
    run(inbox, outbox)
    assert CliRunner().invoke(main, ["portfolio", "--out", str(outbox)]).exit_code == 0
    ws = openpyxl.load_workbook(outbox / "njcredits-portfolio.xlsx")["Prior awards"]
    rows = [(r[1], r[2], r[4]) for r in list(ws.iter_rows(values_only=True))[2:]]
    assert rows == [
        ("BRRAP", "R-1", "First Tax Period 2015"),
        ("BEIP", "B-1", "Agreement Date 2015-06-01"),
        ("GrowNJ", "G-1", "Application Date 2016-01-04"),
        ("BEIP", "B-2", "Agreement Date 2014-02-03"),
    ]
