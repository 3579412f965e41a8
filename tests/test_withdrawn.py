"""A record the reviewer withdraws (`Reviewer Decision` = `Withdrawn`, with a note) counts in no limit
of the portfolio from that run on: in its own workbook, in the run's other workbooks and in later
runs; its row keeps its computed columns, findings and Status, and gets RECORD_WITHDRAWN. Writing
another decision, or none, over it brings it back."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from databases import ledger_query
from test_portfolio import run, transfer
from test_reviews import _decide, _findings, _sheet, transfers_workbook

from batch.reviews import judge, row_inputs, withdrawn
from validators.columns import REVIEW_COLUMNS

D = dt.date
NOTE = "Transfer cancelled by the parties, letter of 2026-12-01"


WITHDRAWN_CASES = [
    # (Reviewer Decision, Reviewer Note, the ledger's values of that decision: None new, "same" unchanged, "other"), withdrawn
    ("Withdrawn", NOTE, None, True),
    ("withdrawn", NOTE, None, True),  # as typed, any case
    ("Withdraw", NOTE, None, True),
    ("Withdrawn", "", None, False),  # a withdrawal needs its reason (REVIEW_NOTE_MISSING)
    ("Withdrawn", NOTE, "same", True),  # seen before, the row unchanged
    ("Withdrawn", NOTE, "other", False),  # seen before, the row changed since (REVIEW_DECISION_STALE)
    ("Withdrawn (stale)", NOTE, "other", False),  # the stale decision written back: never a new one
    ("Withdrawn (stale)", NOTE, "same", False),
    ("Approved", NOTE, None, False),
    ("Withdrawn later", NOTE, None, False),
    ("", NOTE, None, False),
]


@pytest.mark.parametrize("decision,note,seen,expected", WITHDRAWN_CASES)
def test_which_rows_are_withdrawn(decision, note, seen, expected):
    reviews = pd.DataFrame({REVIEW_COLUMNS[0]: [decision], REVIEW_COLUMNS[1]: ["JS"], REVIEW_COLUMNS[2]: [note]})
    inputs = row_inputs(pd.DataFrame({"Transfer ID": ["T-1"], "Credit": ["100"]}, dtype=object))  # the read columns as read
    before = None
    if seen:
        then = inputs[0] if seen == "same" else row_inputs(pd.DataFrame({"Transfer ID": ["T-1"], "Credit": ["200"]}, dtype=object))[0]
        before = pd.DataFrame([{"sheet": "Transfers", "record_id": "T-1", "occurrence": 1, "decision": decision.removesuffix(" (stale)"),
                                "reviewer": "JS", "note": note, "digest": "d", "inputs": then, "state": "applied"}])  # fmt: skip
    judged = judge("Transfers", reviews, inputs, np.array(["T-1"], dtype=object), np.array([1]), before)
    assert withdrawn(reviews, judged, 1).tolist() == [expected]


def _returned(outbox: Path, name: str, inbox: Path, decisions: dict) -> Path:
    """The returned workbook `name` with the reviewer's entries, dropped back in the inbox."""
    return _decide(outbox / f"{name}.annotated.xlsx", inbox / f"{name}.annotated.xlsx", decisions)


@pytest.fixture
def november(tmp_path):
    """November: T-1 moves all $6,000,000 of C-1 ($6,000,000), T-2 $400,000 of C-2 ($1,000,000)."""
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    transfers_workbook(inbox / "nov.xlsx", [transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 6_000_000),
                                            transfer("T-2", "C-2", 1_000_000, D(2026, 11, 12), 400_000)])  # fmt: skip
    run(inbox, outbox)
    return inbox, outbox


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_a_withdrawn_transfer_counts_in_no_later_run_and_comes_back_when_the_decision_is_cleared(november):
    inbox, outbox = november
    _returned(outbox, "nov", inbox, {"T-1": ("Withdrawn", "JS", NOTE)})
    run(inbox, outbox)
    rows = _sheet(outbox / "nov.annotated.xlsx")
    # the row keeps its Status and columns as computed, and says it is withdrawn
    assert (rows["T-1"]["Status"], rows["T-1"]["Findings"]) == ("OK", "RECORD_WITHDRAWN")
    (said,) = [f for f in _findings(outbox / "nov.annotated.xlsx") if f["Code"] == "RECORD_WITHDRAWN"]
    assert said["Severity"] == "info" and f'withdrew this record ("{NOTE}")' in said["Message"]
    # December: $500,000 of C-1, T-1 withdrawn: 500,000 <= 6,000,000
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-9", "C-1", 6_000_000, D(2026, 12, 5), 500_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx")["T-9"]["Findings"] is None
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT record_id, decision, note, applied FROM decisions") == [
        ("T-1", "Withdrawn", NOTE, 1)
    ]
    # the reviewer clears the decision and drops November back: T-1 stands again, and December's
    # T-9 dropped back counts it: 6,000,000 + 500,000 = 6,500,000 > 6,000,000
    _returned(outbox, "nov", inbox, {"T-1": ("", "", "")})
    run(inbox, outbox)
    assert _sheet(outbox / "nov.annotated.xlsx")["T-1"]["Findings"] is None
    shutil.copy(outbox / "dec.annotated.xlsx", inbox / "dec.annotated.xlsx")
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx")["T-9"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"


def test_a_withdrawal_without_a_note_is_not_applied(november):
    inbox, outbox = november
    _returned(outbox, "nov", inbox, {"T-1": ("Withdrawn", "JS", None)})
    run(inbox, outbox)
    rows = _sheet(outbox / "nov.annotated.xlsx")
    assert (rows["T-1"]["Status"], rows["T-1"]["Findings"]) == ("Flagged", "REVIEW_NOTE_MISSING")
    (said,) = [f for f in _findings(outbox / "nov.annotated.xlsx") if f["Code"] == "REVIEW_NOTE_MISSING"]
    assert said["Message"].startswith('"Withdrawn" has no Reviewer Note, so the record was not withdrawn: it still counts')
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-9", "C-1", None, D(2026, 12, 5), 500_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx")["T-9"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"  # T-1 still counts


def test_a_withdrawn_row_counts_in_no_limit_of_its_own_sheet_and_keeps_its_columns(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # C-1 ($1,000,000): T-1 $800,000 on 11-10, T-2 $300,000 on 11-20: 1,100,000 > 1,000,000, T-2 over
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 1_000_000, D(2026, 11, 10), 800_000),
                                          transfer("T-2", "C-1", 1_000_000, D(2026, 11, 20), 300_000)])  # fmt: skip
    run(inbox, outbox)
    assert _sheet(outbox / "a.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"
    # T-1 withdrawn: T-2 alone, 300,000 <= 1,000,000; T-1 keeps its 800,000 to date
    _returned(outbox, "a", inbox, {"T-1": ("Withdrawn", "JS", NOTE)})
    run(inbox, outbox)
    rows = _sheet(outbox / "a.annotated.xlsx")
    assert (rows["T-1"]["Findings"], rows["T-2"]["Findings"], rows["T-2"]["Status"]) == ("RECORD_WITHDRAWN", None, "OK")
    ws = openpyxl.load_workbook(outbox / "a.annotated.xlsx")["Transfers"]
    header = [c.value for c in ws[1]]
    to_date = [r[header.index("Certificate Transferred To Date ($)")] for r in ws.iter_rows(min_row=2, values_only=True)]
    assert to_date == [800_000, 300_000]


def test_a_withdrawn_row_keeps_its_own_findings_and_status(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # consideration 70% of the credit: CONSIDERATION_BELOW_75PCT (an error of the row itself)
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 1_000_000, D(2026, 11, 10), 100_000, paid=70_000)])
    run(inbox, outbox)
    _returned(outbox, "a", inbox, {"T-1": ("Withdrawn", "JS", NOTE)})
    run(inbox, outbox)
    rows = _sheet(outbox / "a.annotated.xlsx")
    assert (rows["T-1"]["Status"], rows["T-1"]["Findings"]) == ("Flagged", "CONSIDERATION_BELOW_75PCT; RECORD_WITHDRAWN")


def test_a_withdrawn_brrap_grant_counts_in_no_later_limit(tmp_path):
    from test_samerun import brrap_workbook

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: $12,000,000 of 2026 credit; the grant is rescinded and withdrawn; December's $9,000,000 of 2026
    # is alone: 9,000,000 <= 20,000,000 (with the rescinded grant: 21,000,000 > 20,000,000)
    brrap_workbook(inbox / "nov.xlsx", [("B-1", "Beta LLC", 9_500_000, 2026), ("B-2", "Gamma Inc", 2_500_000, 2026)])
    run(inbox, outbox)
    rescinded = {"B-1": ("Withdrawn", "JS", "Grant rescinded by the board, 2026-11-20")}
    _decide(outbox / "nov.annotated.xlsx", inbox / "nov.annotated.xlsx", rescinded, sheet="BRRAP")
    run(inbox, outbox)
    assert _sheet(outbox / "nov.annotated.xlsx", "BRRAP")["B-1"]["Findings"] == "RECORD_WITHDRAWN"
    brrap_workbook(inbox / "dec.xlsx", [("D-1", "Delta Co", 9_000_000, 2026)])
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx", "BRRAP")["D-1"]["Findings"] is None


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_a_withdrawn_grant_is_no_prior_incentive(tmp_path):
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, GROW_HEADERS, beip, grow, grow_rows

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    # the BEIP grant of Acme Corp. (2015) withdrawn in its returned workbook; ACME Corporation's Grow NJ
    # application of 2016, in the same workbook and in a later run, has no prior incentive
    write_workbook(inbox / "acme.xlsx", {"BEIP": [BEIP_HEADERS, beip()], "GrowNJ": [GROW_HEADERS, grow()]})
    run(inbox, outbox)
    assert grow_rows(outbox / "acme.annotated.xlsx")[0]["Findings"] == "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"
    _decide(outbox / "acme.annotated.xlsx", inbox / "acme.annotated.xlsx", {"B-1": ("Withdrawn", "JS", "Agreement rescinded, 2016-03-01")},
            sheet="BEIP")  # fmt: skip
    run(inbox, outbox)
    assert grow_rows(outbox / "acme.annotated.xlsx")[0]["Findings"] == ""
    write_workbook(inbox / "grow.xlsx", {"GrowNJ": [GROW_HEADERS, grow("G-2")]})
    run(inbox, outbox)
    assert grow_rows(outbox / "grow.annotated.xlsx")[0]["Findings"] == ""


def test_a_withdrawn_record_counts_in_no_other_workbook_of_its_run(november):
    inbox, outbox = november
    # one run: November's T-1 withdrawn, and December's $500,000 of C-1: 500,000 <= 6,000,000
    _returned(outbox, "nov", inbox, {"T-1": ("Withdrawn", "JS", NOTE)})
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-9", "C-1", 6_000_000, D(2026, 12, 5), 500_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "nov.annotated.xlsx")["T-1"]["Findings"] == "RECORD_WITHDRAWN"
    assert _sheet(outbox / "dec.annotated.xlsx")["T-9"]["Findings"] is None


def test_a_withdrawn_row_is_left_out_of_the_summaries(tmp_path):
    from test_samerun import erg_workbook

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # (d): P-1 20,000,000 and P-2 10,000,000 (30,000,000 > 25,000,000); P-1 withdrawn: (d) holds 10,000,000
    erg_workbook(inbox / "a.xlsx", [("P-1", "Other ERG Incentive Area", D(2015, 1, 5), 20_000_000),
                                    ("P-2", "Other ERG Incentive Area", D(2015, 2, 5), 10_000_000)])  # fmt: skip
    run(inbox, outbox)
    _decide(outbox / "a.annotated.xlsx", inbox / "a.annotated.xlsx", {"P-1": ("Withdrawn", "JS", "application withdrawn by the developer")},
            sheet="ERG_Residential")  # fmt: skip
    run(inbox, outbox)
    summary = [r for r in openpyxl.load_workbook(outbox / "a.annotated.xlsx")["Summary"].iter_rows(values_only=True) if r and r[0] == "(d)"]
    assert [(r[2], r[3], r[5]) for r in summary] == [(10_000_000, 1, "")]  # Credits Requested, Projects, Over Limit (not over)
    report = openpyxl.load_workbook(max(outbox.glob("run-*.summary.xlsx")))["Portfolio"]
    awards = [r for r in report.iter_rows(values_only=True) if r and r[0] == "ERG_Residential"]
    assert awards[0][1:3] == (1, 10_000_000)  # Records, Award ($)
