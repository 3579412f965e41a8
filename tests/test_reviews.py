"""Reviewer decisions: written in the returned workbook's reviewer columns, read back on the next
run, applied per the contract, and recorded in the ledger once."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner
from databases import ledger_query

from batch.cli import main
from batch.programs.transfers.sheet import TRANSFERS
from batch.reviews import decision_choices
from validators.columns import REVIEW_COLUMNS

HEADERS = [c.header for c in TRANSFERS.columns]
# Transfer ID, Program, Certificate ID, Certificate Amount, Transferor, Transferee, Transfer Date, Credit, Consideration
ROWS = [
    ["T-1", "Grow NJ", "C-1", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30_000, 27_000],  # clean: 90%
    ["T-2", "Grow NJ", "C-2", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 6), 40_000, 44_000],  # a premium: warning
    ["T-3", "Grow NJ", "C-3", 500_000, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 7), 20_000, 18_000],  # under $25,000: error
]
AS_OF = "2026-11-30"
DECISION_COLUMN = 15  # O: after the 9 inputs, 3 computed columns, Status and Findings


def _run(path: Path, out: Path, ledger: Path) -> Path:
    result = CliRunner().invoke(
        main, ["run", str(path), "--out", str(out), "--ledger", str(ledger), "--as-of", AS_OF, "--keep-inputs", "--force"]
    )
    assert result.exit_code == 0, result.output
    return out / (path.name.removesuffix(".xlsx").removesuffix(".annotated") + ".annotated.xlsx")


def _decide(
    path: Path, dest: Path, decisions: dict[str, tuple[str, str, str]], edits: dict[str, dict[int, object]] | None = None, sheet="Transfers"
) -> Path:
    """The returned workbook with the reviewer's entries written by openpyxl on `sheet`, by each row's
    record ID in its first column (and input cells changed)."""
    book = openpyxl.load_workbook(path)
    ws = book[sheet]
    header = [c.value for c in ws[1]]
    at = {h: header.index(h) + 1 for h in REVIEW_COLUMNS}
    for row in ws.iter_rows(min_row=2):
        record = row[0].value
        for h, value in zip(REVIEW_COLUMNS, decisions.get(record, ()), strict=False):
            ws.cell(row[0].row, at[h], value)
        for col, value in (edits or {}).get(record, {}).items():
            ws.cell(row[0].row, col, value)
    dest.parent.mkdir(parents=True, exist_ok=True)
    book.save(dest)
    return dest


def _sheet(path: Path, sheet: str | None = None) -> dict[str, dict[str, object]]:
    """Per record: Status, Findings and the reviewer's entries of the returned sheet (`sheet`, or the
    workbook's first: its intake sheet)."""
    book = openpyxl.load_workbook(path)
    ws = book[sheet] if sheet else book.worksheets[0]
    header = [c.value for c in ws[1]]
    out = {}
    for row in ws.iter_rows(min_row=2, values_only=True):
        if row[0]:
            out[row[0]] = {h: row[header.index(h)] for h in ("Status", "Findings", *REVIEW_COLUMNS)}
    return out


def _findings(path: Path) -> list[dict]:
    ws = openpyxl.load_workbook(path)["Findings"]
    rows = list(ws.iter_rows(values_only=True))
    return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]


def transfers_workbook(path: Path, rows=ROWS) -> Path:
    """A workbook of one Transfers sheet holding `rows`, saved by openpyxl at `path`."""
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Transfers"
    ws.append(HEADERS)
    for r in rows:
        ws.append(r)
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return path


@pytest.fixture
def first(tmp_path) -> tuple[Path, Path]:
    """The first run of the workbook: its returned workbook, and the ledger."""
    transfers_workbook(tmp_path / "in" / "review.xlsx")
    ledger = tmp_path / "ledger.sqlite"
    return _run(tmp_path / "in" / "review.xlsx", tmp_path / "out1", ledger), ledger


def _decision_lists(path: Path, sheet: str = "Transfers") -> list:
    ws = openpyxl.load_workbook(path)[sheet]
    return [v for v in ws.data_validations.dataValidation if v.promptTitle == "Reviewer Decision"]


def test_the_first_run_adds_empty_reviewer_columns_with_a_drop_down_that_still_takes_typed_text(first):
    out, _ledger = first
    ws = openpyxl.load_workbook(out)["Transfers"]
    assert [c.value for c in ws[1]][-3:] == list(REVIEW_COLUMNS)
    assert ws.cell(1, DECISION_COLUMN).value == "Reviewer Decision"
    (prompt,) = _decision_lists(out)
    assert "Waive CODE, CODE" in prompt.prompt and str(prompt.sqref) == "O2:O4"
    # a drop-down of the choices and of the sheet's warning codes (T-2's premium; T-3's
    # TRANSFER_BELOW_MINIMUM is an error, which no reviewer may waive), whose error alert is off:
    # `Waive CODE, CODE` can still be typed
    assert prompt.type == "list" and prompt.formula1 == '"Approved,Withdrawn,Waive CONSIDERATION_ABOVE_FACE"'
    assert not prompt.showErrorMessage and prompt.showInputMessage
    assert _sheet(out)["T-2"]["Status"] == "Flagged" and _sheet(out)["T-2"]["Findings"] == "CONSIDERATION_ABOVE_FACE"


def test_a_returned_workbook_gets_one_drop_down_of_its_current_codes_and_the_users_own_validations_stay(first, tmp_path):
    out, ledger = first
    book = openpyxl.load_workbook(out)
    ws = book["Transfers"]
    from openpyxl.worksheet.datavalidation import DataValidation

    own = DataValidation(type="whole", operator="greaterThan", formula1="0", promptTitle="Mine", sqref="H2:H4")
    ws.add_data_validation(own)
    ws.cell(3, 9, 30_000)  # T-2's consideration 44,000 -> 30,000: no premium left (30,000 <= 40,000)
    dest = tmp_path / "rev" / out.name
    dest.parent.mkdir()
    book.save(dest)
    second = _run(dest, tmp_path / "out2", ledger)
    (prompt,) = _decision_lists(second)  # the earlier one replaced, not added to
    assert prompt.formula1 == '"Approved,Withdrawn"' and str(prompt.sqref) == "O2:O4"
    mine = [v for v in openpyxl.load_workbook(second)["Transfers"].data_validations.dataValidation if v.promptTitle == "Mine"]
    assert len(mine) == 1 and str(mine[0].sqref) == "H2:H4" and mine[0].type == "whole"


def test_a_users_own_validation_over_the_decision_cells_is_left_as_it_is(first, tmp_path):
    out, ledger = first
    book = openpyxl.load_workbook(out)
    from openpyxl.worksheet.datavalidation import DataValidation

    book["Transfers"].add_data_validation(DataValidation(type="list", formula1='"Yes,No"', promptTitle="Mine", sqref="O2:O9"))
    dest = tmp_path / "rev" / out.name
    dest.parent.mkdir()
    book.save(dest)
    ws = openpyxl.load_workbook(_run(dest, tmp_path / "out2", ledger))["Transfers"]
    assert [(v.promptTitle, str(v.sqref), v.formula1) for v in ws.data_validations.dataValidation] == [("Mine", "O2:O9", '"Yes,No"')]


def test_a_waived_warning_makes_the_row_ok_and_is_recorded_once(first, tmp_path):
    out, ledger = first
    decided = _decide(
        out, tmp_path / "rev" / out.name, {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", "Board-approved premium, minutes 2026-11")}
    )
    second = _run(decided, tmp_path / "out2", ledger)
    rows = _sheet(second)
    assert rows["T-2"]["Status"] == "OK" and rows["T-2"]["Findings"] == "CONSIDERATION_ABOVE_FACE (waived)"
    # the decision as the reviewer left it
    assert [rows["T-2"][h] for h in REVIEW_COLUMNS] == ["Waive CONSIDERATION_ABOVE_FACE", "JS", "Board-approved premium, minutes 2026-11"]
    waived = [f for f in _findings(second) if f["Code"] == "CONSIDERATION_ABOVE_FACE"]
    assert len(waived) == 1 and waived[0]["Waived"] == "Board-approved premium, minutes 2026-11"
    assert rows["T-3"]["Status"] == "Flagged"  # not waived
    recorded = ledger_query(ledger, "SELECT record_id, decision, reviewer, note, applied FROM decisions")
    assert recorded == [("T-2", "Waive CONSIDERATION_ABOVE_FACE", "JS", "Board-approved premium, minutes 2026-11", 1)]
    # the same decision seen again (the returned workbook dropped in again) is not recorded twice
    third = _run(second, tmp_path / "out3", ledger)
    assert _sheet(third)["T-2"]["Status"] == "OK"
    assert ledger_query(ledger, "SELECT COUNT(*) FROM decisions")[0][0] == 1


@pytest.mark.parametrize(
    "decision,record,code,status",
    [
        # an error cannot be waived: the waiver is refused and the row stays Flagged
        (("Waive TRANSFER_BELOW_MINIMUM", "JS", "seen"), "T-3", "REVIEW_WAIVER_NOT_ALLOWED", "Flagged"),
        # a waiver needs its reason
        (("Waive CONSIDERATION_ABOVE_FACE", "JS", ""), "T-2", "REVIEW_NOTE_MISSING", "Flagged"),
        # a code the row does not have, a misspelled code, and no code at all
        (("Waive TRANSFER_BELOW_MINIMUM", "JS", "x"), "T-1", "REVIEW_WAIVER_UNUSED", "Flagged"),
        (("Waive CONSIDERATION_ABOVE_FAEC", "JS", "x"), "T-2", "REVIEW_WAIVER_UNUSED", "Flagged"),
        (("Waive", "JS", "x"), "T-1", "REVIEW_WAIVER_UNUSED", "Flagged"),
        # Approved signs off a row with an error: recorded, Status unchanged
        (("Approved", "JS", "seen with Treasury"), "T-3", None, "Flagged"),
        (("approved", "JS", ""), "T-1", None, "OK"),
    ],
)
def test_decisions_that_are_not_applied_say_why(first, tmp_path, decision, record, code, status):
    out, ledger = first
    second = _run(_decide(out, tmp_path / "rev" / out.name, {record: decision}), tmp_path / "out2", ledger)
    assert _sheet(second)[record]["Status"] == status
    review = [f for f in _findings(second) if f["Code"].startswith("REVIEW_")]
    assert [(f["Record ID"], f["Code"], f["Column"]) for f in review] == ([(record, code, "Reviewer Decision")] if code else [])
    assert ledger_query(ledger, "SELECT record_id, decision, applied FROM decisions") == [(record, decision[0], int(code is None))]


def test_an_info_code_cannot_be_waived(first, tmp_path):
    out, ledger = first
    second = _run(_decide(out, tmp_path / "rev" / out.name, {"T-1": ("Waive UNKNOWN_SHEET", "JS", "x")}), tmp_path / "out2", ledger)
    assert [f["Code"] for f in _findings(second) if f["Code"].startswith("REVIEW_")] == ["REVIEW_WAIVER_UNUSED"]


def test_a_decision_is_stale_once_the_rows_inputs_change(first, tmp_path):
    out, ledger = first
    decision = {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", "Board-approved premium")}
    second = _run(_decide(out, tmp_path / "rev" / out.name, decision), tmp_path / "out2", ledger)
    assert _sheet(second)["T-2"]["Status"] == "OK"
    # the consideration changes from 44,000 to 48,000 under the same decision: not applied
    changed = _decide(second, tmp_path / "rev2" / second.name, decision, {"T-2": {9: 48_000}})
    third = _run(changed, tmp_path / "out3", ledger)
    rows = _sheet(third)
    assert rows["T-2"]["Status"] == "Flagged" and rows["T-2"]["Findings"] == "CONSIDERATION_ABOVE_FACE; REVIEW_DECISION_STALE"
    # written again with a new note, it applies to the new figures
    renewed = _decide(third, tmp_path / "rev3" / third.name, {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", "Premium re-approved")})
    assert _sheet(_run(renewed, tmp_path / "out4", ledger))["T-2"]["Status"] == "OK"


def test_history_lists_the_decisions_and_the_run_report_has_them(first, tmp_path):
    out, ledger = first
    decided = _decide(out, tmp_path / "rev" / out.name, {"T-2": ("Waive CONSIDERATION_ABOVE_FACE", "JS", "Board-approved premium")})
    _run(decided, tmp_path / "out2", ledger)
    shown = CliRunner().invoke(main, ["history", "--ledger", str(ledger), "--decisions"])
    assert shown.exit_code == 0 and "Waive CONSIDERATION_ABOVE_FACE" in shown.output and "T-2" in shown.output
    report = next((tmp_path / "out2").glob("run-*.summary.xlsx"))
    ws = openpyxl.load_workbook(report)["Decisions"]
    values = [c for row in ws.iter_rows(values_only=True) for c in row]
    assert "Waive CONSIDERATION_ABOVE_FACE" in values and "Board-approved premium" in values
    with zipfile.ZipFile(report) as z:
        assert any(n.startswith("xl/worksheets/") for n in z.namelist())


def _inline_text(path: Path, ref: str, text: str) -> None:
    """The cell `ref` of the first sheet rewritten to hold `text` as an inline string (what a
    program may write; Excel's readers cut a shared string at the limit, not an inline one)."""
    import re

    parts = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            parts[info.filename] = z.read(info.filename)
    name = "xl/worksheets/sheet1.xml"
    cell = f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'.encode()
    parts[name], n = re.subn(rf'<c r="{ref}"[^>]*?(/>|>.*?</c>)'.encode(), cell, parts[name], count=1, flags=re.S)
    assert n == 1
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data)


def test_a_reviewer_note_over_the_cell_limit_is_cut_like_any_cell(first, tmp_path):
    """A Reviewer Note a program filled with 40,000 characters (more than a cell holds) is cut to
    32,767 when read, like any other cell; TEXT_TRUNCATED says so and the returned cell holds the
    cut text, so the finding is true. A note at the limit is kept whole and finds nothing."""
    out, ledger = first
    decided = _decide(out, tmp_path / "in2" / "review.annotated.xlsx", {"T-1": ("Approved", "AB", "x"), "T-2": ("Approved", "AB", "x")})
    _inline_text(decided, "Q2", "n" * 40_000)  # Reviewer Note of T-1: 40,000 > 32,767
    _inline_text(decided, "Q3", "m" * 32_767)  # of T-2: at the limit
    again = _run(decided, tmp_path / "out2", ledger)
    rows = _sheet(again)
    assert [rows[r]["Reviewer Note"] for r in ("T-1", "T-2")] == ["n" * 32_767, "m" * 32_767]
    cut = [f for f in _findings(again) if f["Code"] == "TEXT_TRUNCATED"]
    assert [(f["Row"], f["Column"]) for f in cut] == [(2, "Reviewer Note")]
    assert "40,000 characters" in cut[0]["Message"]
    assert rows["T-1"]["Status"] == "Flagged" and rows["T-1"]["Findings"] == "TEXT_TRUNCATED"


# (case, findings as (row, severity, code), Excel's list limit, the drop-down): Approved and Withdrawn,
# then "Waive CODE" for each warning code of the rows, most rows first (a code counted once a row),
# then by code; never an error's code, a sheet's (row -1) or the review's own; as many as the list holds
CHOICE_CASES = [
    ("no warning", [(0, "error", "TRANSFER_BELOW_MINIMUM")], 255, ["Approved", "Withdrawn"]),
    (
        "most rows first, a row counted once",
        [(0, "warning", "B_CODE"), (0, "warning", "B_CODE"), (1, "warning", "A_CODE"), (2, "warning", "B_CODE")],
        255,
        ["Approved", "Withdrawn", "Waive B_CODE", "Waive A_CODE"],  # B: rows 0 and 2; A: row 1
    ),
    (
        "a tie, by code",
        [(3, "warning", "Z_CODE"), (4, "warning", "A_CODE")],
        255,
        ["Approved", "Withdrawn", "Waive A_CODE", "Waive Z_CODE"],
    ),
    (
        "a sheet's and the review's own left out",
        [(-1, "warning", "A_CODE"), (2, "warning", "REVIEW_STALE")],
        255,
        ["Approved", "Withdrawn"],
    ),
    # "Approved,Withdrawn,Waive A_CODE" is 31 characters: at a limit of 31 it fits, at 30 it does not
    ("at the limit", [(0, "warning", "A_CODE")], 31, ["Approved", "Withdrawn", "Waive A_CODE"]),
    ("a character over it", [(0, "warning", "A_CODE")], 30, ["Approved", "Withdrawn"]),
]


@pytest.mark.parametrize("found, limit, expected", [c[1:] for c in CHOICE_CASES], ids=[c[0] for c in CHOICE_CASES])
def test_decision_choices(found, limit, expected):
    findings = pd.DataFrame(found, columns=["pos", "Severity", "Code"])
    assert decision_choices(findings, limit) == expected
