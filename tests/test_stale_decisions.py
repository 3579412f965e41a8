"""Reviewer decisions cover the row as the tool returned it, in the columns the program reads: a
column the tool ignores changes nothing; figures changed before or after the decision make it stale,
named column by column, written back with ` (stale)`; typed again without the suffix it applies.
A waiver covers a code's warnings, never its errors. A formula without a value in a column the
program does not read is info."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from databases import ledger_query
from test_reviews import HEADERS, ROWS, _decide, _findings, _run, _sheet, transfers_workbook

from batch.cli import main
from validators.columns import REVIEW_COLUMNS

WAIVER = ("Waive CONSIDERATION_ABOVE_FACE", "JS", "Board-approved premium")
NOTES, DECISION = 18, 15  # R: after the reviewer's three columns (O, P, Q); O: Reviewer Decision


def _returned_with(path: Path, dest: Path, change: str) -> Path:
    """The returned workbook with the analyst's change that the program does not read."""
    book = openpyxl.load_workbook(path)
    ws = book["Transfers"]
    if change == "notes":  # the analyst's own Notes column, filled
        ws.cell(1, NOTES, "Notes")
        for r in range(2, ws.max_row + 1):
            ws.cell(r, NOTES, f"called back {r}")
    elif change == "blank column":  # a new column with a header and no cell
        ws.cell(1, NOTES, "Checked")
    elif change == "second consideration":  # a second column of a field: the first is read
        ws.cell(1, NOTES, HEADERS[8])  # Consideration Received ($) again
        ws.cell(3, NOTES, 99_999)
    dest.parent.mkdir(parents=True, exist_ok=True)
    book.save(dest)
    return dest


@pytest.mark.parametrize("change", ["notes", "blank column", "second consideration", "none"])
def test_a_column_the_program_does_not_read_changes_no_decision(tmp_path, change):
    transfers_workbook(tmp_path / "in" / "review.xlsx")
    ledger = tmp_path / "ledger.sqlite"
    out = _run(tmp_path / "in" / "review.xlsx", tmp_path / "out1", ledger)
    second = _run(_decide(out, tmp_path / "rev" / out.name, {"T-2": WAIVER, "T-1": ("Approved", "JS", "")}), tmp_path / "out2", ledger)
    assert _sheet(second)["T-2"]["Status"] == "OK"
    third = _run(_returned_with(second, tmp_path / "rev2" / second.name, change), tmp_path / "out3", ledger)
    rows = _sheet(third)
    assert (rows["T-2"]["Status"], rows["T-2"]["Findings"]) == ("OK", "CONSIDERATION_ABOVE_FACE (waived)")
    assert [rows[r]["Reviewer Decision"] for r in ("T-1", "T-2")] == ["Approved", WAIVER[0]]  # as the reviewer left them
    assert not [f for f in _findings(third) if f["Code"] == "REVIEW_DECISION_STALE"]
    assert ledger_query(ledger, "SELECT record_id, state FROM decisions ORDER BY rowid") == [("T-1", "applied"), ("T-2", "applied")]


def test_a_repeated_id_beside_a_row_leaves_its_decision_as_it_was(tmp_path):
    # T-2 twice: the second row (consideration 41,000) is DUPLICATE_ID; both rows approved
    rows = [*ROWS[:2], ["T-2", "Grow NJ", "C-2", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 6), 40_000, 41_000], ROWS[2]]
    transfers_workbook(tmp_path / "in" / "review.xlsx", rows)
    ledger = tmp_path / "ledger.sqlite"
    out = _run(tmp_path / "in" / "review.xlsx", tmp_path / "out1", ledger)
    second = _run(_decide(out, tmp_path / "rev" / out.name, {"T-2": ("Approved", "JS", "seen")}), tmp_path / "out2", ledger)
    third = _run(second, tmp_path / "out3", ledger)  # dropped back unchanged
    assert not [f for f in _findings(third) if f["Code"] == "REVIEW_DECISION_STALE"]
    # one decision per row: the first row of T-2 (occurrence 1) and its repeat (2), each recorded once
    assert ledger_query(ledger, "SELECT record_id, occurrence, state FROM decisions ORDER BY rowid") == [
        ("T-2", 1, "applied"),
        ("T-2", 2, "applied"),
    ]


def _stale(path: Path) -> dict:
    (found,) = [f for f in _findings(path) if f["Code"] == "REVIEW_DECISION_STALE"]
    return found


def test_figures_changed_with_the_waiver_make_it_stale_until_it_is_typed_again(tmp_path):
    transfers_workbook(tmp_path / "in" / "review.xlsx")
    ledger = tmp_path / "ledger.sqlite"
    out = _run(tmp_path / "in" / "review.xlsx", tmp_path / "out1", ledger)
    # the waiver written and T-2's consideration changed from 44,000 to 48,000 in the same edit
    edited = _decide(out, tmp_path / "rev" / out.name, {"T-2": WAIVER}, {"T-2": {9: 48_000}})
    second = _run(edited, tmp_path / "out2", ledger)
    row = _sheet(second)["T-2"]
    assert (row["Status"], row["Findings"]) == ("Flagged", "CONSIDERATION_ABOVE_FACE; REVIEW_DECISION_STALE")
    assert row["Reviewer Decision"] == "Waive CONSIDERATION_ABOVE_FACE (stale)"
    assert 'Consideration Received ($) "44000" then, "48000" now' in _stale(second)["Message"]
    assert ledger_query(ledger, "SELECT decision, applied, state FROM decisions") == [(WAIVER[0], 0, "stale")]
    # dropped back as it came: still stale (the suffix is no new decision), not recorded again
    third = _run(second, tmp_path / "out3", ledger)
    row = _sheet(third)["T-2"]
    assert (row["Status"], row["Reviewer Decision"]) == ("Flagged", "Waive CONSIDERATION_ABOVE_FACE (stale)")
    assert 'Consideration Received ($) "44000" then, "48000" now' in _stale(third)["Message"]
    assert ledger_query(ledger, "SELECT COUNT(*) FROM decisions")[0][0] == 1
    # typed again without the suffix: a new decision, over the figures as returned (48,000)
    fourth = _run(_decide(third, tmp_path / "rev4" / third.name, {"T-2": WAIVER}), tmp_path / "out4", ledger)
    row = _sheet(fourth)["T-2"]
    assert (row["Status"], row["Findings"], row["Reviewer Decision"]) == ("OK", "CONSIDERATION_ABOVE_FACE (waived)", WAIVER[0])
    assert ledger_query(ledger, "SELECT applied, state FROM decisions ORDER BY rowid") == [(0, "stale"), (1, "applied")]


def test_approved_typed_again_after_a_change_applies_and_history_shows_each_decisions_latest_state(tmp_path):
    transfers_workbook(tmp_path / "in" / "review.xlsx")
    ledger = tmp_path / "ledger.sqlite"
    out = _run(tmp_path / "in" / "review.xlsx", tmp_path / "out1", ledger)
    approved = {"T-1": ("Approved", "JS", "")}
    second = _run(_decide(out, tmp_path / "rev" / out.name, approved), tmp_path / "out2", ledger)
    # T-1's credit 30,000 -> 31,000 under the same sign-off: stale, written back with the suffix
    third = _run(_decide(second, tmp_path / "rev2" / second.name, {}, {"T-1": {8: 31_000}}), tmp_path / "out3", ledger)
    assert _sheet(third)["T-1"]["Reviewer Decision"] == "Approved (stale)"
    assert 'Credit Amount Transferred ($) "30000" then, "31000" now' in _stale(third)["Message"]
    shown = CliRunner().invoke(main, ["history", "--ledger", str(ledger), "--decisions"])
    assert shown.exit_code == 0 and "stale" in shown.output and "applied" not in shown.output.replace("not applied", "")
    # Approved typed again: it applies to the new figures
    fourth = _run(_decide(third, tmp_path / "rev3" / third.name, approved), tmp_path / "out4", ledger)
    assert _sheet(fourth)["T-1"]["Reviewer Decision"] == "Approved"
    assert not [f for f in _findings(fourth) if f["Code"].startswith("REVIEW_")]
    assert ledger_query(ledger, "SELECT decision, state FROM decisions ORDER BY rowid") == [
        ("Approved", "applied"),
        ("Approved", "stale"),
        ("Approved", "applied"),
    ]
    from batch.run.ledger import Ledger

    latest = Ledger.for_reading(ledger).decisions(latest=True)
    assert latest[["record_id", "decision", "state"]].values.tolist() == [["T-1", "Approved", "applied"]]


EMERGE_HEADERS = [
    "Project ID", "Application Date", "Location", "Premises Type", "Gross Leasable Area (sq ft)", "Capital Investment ($)",
    "New Full-Time Jobs", "Retained Full-Time Jobs", "Requested Tax Credit ($)", "Net Benefit ($)",
    "Withholdings Subject to NJ Income Tax", "Accommodates Majority of Employees", "Material Factor",
    "Meets Environmental Standards", "Affirmative Action Compliance", "Prevailing Wage Compliance",
]  # fmt: skip
# min capex $40 x 10,000 = $400,000 <= 500,000; 35 new jobs; net benefit 4,000,000 / 1,000,000 = 4.00
EMERGE_ROW = ["E-1", dt.date(2024, 1, 8), "Other Qualified Incentive Area", "Non-Industrial Rehab", 10_000, 500_000, 35, 0,
              1_000_000, 4_000_000, 0.9, "Y", "Y", "Y", "Y", "Y"]  # fmt: skip


@pytest.mark.parametrize(
    "material,environment,state,findings",
    [
        # N (an error: the project is ineligible) and a blank (a warning), both CERTIFICATION_MISSING: the warning is waived
        ("N", None, "partly applied", "CERTIFICATION_MISSING; CERTIFICATION_MISSING (waived); REVIEW_WAIVER_NOT_ALLOWED"),
        # the blank alone: wholly waived
        ("Y", None, "applied", "CERTIFICATION_MISSING (waived)"),
        # the N alone: nothing to waive
        ("N", "Y", "not applied", "CERTIFICATION_MISSING; REVIEW_WAIVER_NOT_ALLOWED"),
    ],
)
def test_a_waiver_covers_the_warnings_of_a_code_never_its_errors(tmp_path, material, environment, state, findings):
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Emerge"
    ws.append(EMERGE_HEADERS)
    ws.append([*EMERGE_ROW[:12], material, environment, *EMERGE_ROW[14:]])
    (tmp_path / "in").mkdir()
    book.save(tmp_path / "in" / "emerge.xlsx")
    ledger = tmp_path / "ledger.sqlite"
    out = _run(tmp_path / "in" / "emerge.xlsx", tmp_path / "out1", ledger)
    waiver = ("Waive CERTIFICATION_MISSING", "JS", "Certified by letter of 2024-02-01")
    second = _run(_decide(out, tmp_path / "rev" / out.name, {"E-1": waiver}, sheet="Emerge"), tmp_path / "out2", ledger)
    row = _sheet(second, "Emerge")["E-1"]
    assert row["Findings"] == findings
    assert row["Status"] == ("Ineligible" if material == "N" else "OK")
    found = [f for f in _findings(second) if f["Code"] == "CERTIFICATION_MISSING"]
    assert sorted((f["Severity"], bool(f["Waived"])) for f in found) == sorted(
        [("error", False)] * (material == "N") + [("warning", True)] * (environment is None)
    )
    refused = [f for f in _findings(second) if f["Code"] == "REVIEW_WAIVER_NOT_ALLOWED"]
    assert [f["Message"].startswith("The waiver names CERTIFICATION_MISSING, which is both") for f in refused] == (
        [environment is None] if material == "N" else []
    )
    assert ledger_query(ledger, "SELECT applied, state FROM decisions") == [(int(state == "applied"), state)]


@pytest.mark.parametrize(
    "column,severity,status",
    [
        (12, "info", "OK"),  # L, hidden, "Helper": a column the program does not read
        (9, "warning", "Invalid"),  # I: Consideration Received ($), which it reads: blank, so also MISSING_VALUE
    ],
)
def test_a_formula_without_a_value_counts_only_in_a_column_the_program_reads(tmp_path, column, severity, status):
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Transfers"
    ws.append([*HEADERS, None, None, "Helper"])
    ws.append(ROWS[0])
    ws.cell(2, column, "=H2*0.9")  # openpyxl saves a formula without its value
    ws.column_dimensions["L"].hidden = True
    (tmp_path / "in").mkdir()
    book.save(tmp_path / "in" / "helper.xlsx")
    out = _run(tmp_path / "in" / "helper.xlsx", tmp_path / "out", tmp_path / "ledger.sqlite")
    (found,) = [f for f in _findings(out) if f["Code"] == "FORMULA_NOT_CALCULATED"]
    assert found["Severity"] == severity
    assert _sheet(out)["T-1"]["Status"] == status


def test_a_workbook_written_anew_from_a_csv_has_the_drop_down(tmp_path):
    (tmp_path / "in").mkdir()
    lines = [",".join(HEADERS), "T-2,Grow NJ,C-2,500000,Seller LLC,Buyer Inc.,2026-01-06,40000,44000"]
    (tmp_path / "in" / "t.csv").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(
        main, ["run", str(tmp_path / "in" / "t.csv"), "--out", str(tmp_path / "out"), "--as-of", "2026-11-30", "--keep-inputs"]
    )
    assert result.exit_code == 0, result.output
    ws = openpyxl.load_workbook(tmp_path / "out" / "t.csv.annotated.xlsx").worksheets[0]
    (prompt,) = [v for v in ws.data_validations.dataValidation if v.promptTitle == REVIEW_COLUMNS[0]]
    assert prompt.type == "list" and prompt.formula1 == '"Approved,Withdrawn,Waive CONSIDERATION_ABOVE_FACE"'
    assert not prompt.showErrorMessage


# a row's read values as the ledger keeps them (batch.reviews.row_inputs: money in dollars, as its reader reads it)
THEN = '{"Transfer ID":"T-1","Consideration Received ($)":44000}'
NOW = '{"Transfer ID":"T-1","Consideration Received ($)":48000}'
CHANGED = 'Consideration Received ($) "44000" then, "48000" now'

JUDGE_CASES = [
    # (cell, the ledger's latest decision of the row: (decision, state, values) or None, as returned, stale, what changed)
    ("Approved", None, None, False, ""),  # new, no version returned (no ledger): covers the row as it is
    ("Approved", None, NOW, False, ""),  # new, the row as returned
    ("Approved", None, THEN, True, CHANGED),  # new, figures changed before the first drop-back
    ("Approved", ("Approved", "applied", NOW), NOW, False, ""),  # seen again, unchanged
    ("Approved", ("Approved", "applied", THEN), THEN, True, CHANGED),  # seen again, changed since
    ("Approved", ("Approved", "stale", THEN), NOW, False, ""),  # typed again after it went stale: new, over the returned figures
    ("Approved (stale)", ("Approved", "stale", THEN), NOW, True, CHANGED),  # carried back: still stale
    ("Approved (stale)", ("Approved", "stale", NOW), NOW, True, ""),  # carried back, figures back as they were: still not applied
    ("Approved (stale)", None, NOW, True, ""),  # carried back, unknown to the ledger
    ("Approved", ("Waive X", "applied", THEN), NOW, False, ""),  # another decision than the ledger's: new
    ("Approved", ("Approved", None, "legacy-same"), NOW, False, ""),  # recorded before the ledger kept values: by the old digest
    ("Approved", ("Approved", None, "legacy-other"), NOW, True, ""),
]


@pytest.mark.parametrize("cell,latest,returned,stale,changed", JUDGE_CASES)
def test_what_a_decision_covers(cell, latest, returned, stale, changed):
    import numpy as np
    import pandas as pd

    from batch.reviews import digest, judge

    reviews = pd.DataFrame({REVIEW_COLUMNS[0]: [cell], REVIEW_COLUMNS[1]: ["JS"], REVIEW_COLUMNS[2]: [""]})
    before = None
    if latest:
        decision, state, values = latest
        legacy = values.startswith("legacy")
        made = digest(["T-1", 48_000] if values == "legacy-same" else ["T-1", 44_000]) if legacy else "d"
        before = pd.DataFrame([{"sheet": "Transfers", "record_id": "T-1", "occurrence": None if legacy else 1, "decision": decision,
                                "reviewer": "JS", "note": "", "digest": made, "inputs": None if legacy else values,
                                "state": state}])  # fmt: skip
    judged = judge(
        "Transfers",
        reviews,
        np.array([NOW], dtype=object),
        np.array(["T-1"], dtype=object),
        np.array([1]),
        before,
        {("T-1", 1): returned} if returned else {},
        lambda pos: digest(["T-1", 48_000]),  # the row's old-style digest (every kept cell)
    )
    assert (judged[0].stale, judged[0].changed, judged[0].decision) == (stale, changed, "Approved")
