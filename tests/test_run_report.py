"""The run report as a finance reviewer reads it: readable rules versions, no `nan` anywhere, a
missing value a blank cell, findings by code most frequent first, columns as wide as their content."""

from __future__ import annotations

import datetime as dt
import numbers
import re
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook

from batch.cli import main
from batch.run.ledger import RECORD_FIELDS, Ledger
from batch.run.report import CHANGE_COLUMNS, changes, rules_lines, write_report
from batch.run.runner import FileOutcome

# a missing value shown as text: what pandas or Python print for one
MISSING_AS_TEXT = re.compile(r"\b(nan|NaN|None|NaT)\b|<NA>")
MONEY_COLUMNS = ["Old Award ($)", "New Award ($)"]


def record(record_id, status="OK", award=100_000, codes="", sheet="Transfers", file="nov.xlsx", **more) -> dict:
    return {"sheet": sheet, "record_id": record_id, "status": status, "award_cents": award, "codes": codes, "file": file, **more}


def earlier(*rows: dict, run_id="RUN-1") -> pd.DataFrame:
    """As `Ledger.previous_records` returns them: SQL NULL as None, one run ID per row."""
    return pd.DataFrame([{**r, "run_id": run_id} for r in rows], columns=["run_id", "file", *RECORD_FIELDS])


def assert_no_missing_as_text(frame: pd.DataFrame) -> None:
    """A missing value is None (text) or pd.NA (an award), never NaN or a text saying so."""
    assert all(str(frame[c].dtype) == "Int64" for c in MONEY_COLUMNS)  # cents
    for column in frame.columns:
        for v in frame[column]:
            if column in MONEY_COLUMNS:
                assert v is pd.NA or isinstance(v, numbers.Integral), (column, v)
            elif v is not None:
                assert isinstance(v, str) and v and not MISSING_AS_TEXT.search(v), (column, v)


CASES = {
    "new record": (
        [record("T-9", codes="CONSIDERATION_BELOW_75PCT")],
        [],
        {"Change": "New record", "Old Award ($)": pd.NA, "New Award ($)": 100_000, "Old Status": None, "New Status": "OK"}
        | {"Findings Appeared": None, "Findings Cleared": None, "Previous Run": None, "File": "nov.xlsx"},
    ),
    "new record without an award": (
        [record("T-9", status="Invalid", award=None, codes=None)],
        [],
        {"Change": "New record", "Old Award ($)": pd.NA, "New Award ($)": pd.NA, "Old Status": None, "New Status": "Invalid"},
    ),
    "award changed": (
        [record("T-1", award=350_000)],
        [record("T-1", award=300_000)],
        {"Change": "Award changed", "Old Award ($)": 300_000, "New Award ($)": 350_000, "Previous Run": "RUN-1"}
        | {"Findings Appeared": None, "Findings Cleared": None, "Old Status": "OK", "New Status": "OK"},
    ),
    "award no longer computed": (
        [record("T-1", status="Invalid", award=None, codes="MISSING_VALUE")],
        [record("T-1", award=300_000)],
        {"Change": "Award changed; Status changed; Findings appeared", "Old Award ($)": 300_000, "New Award ($)": pd.NA}
        | {"Old Status": "OK", "New Status": "Invalid", "Findings Appeared": "MISSING_VALUE", "Findings Cleared": None},
    ),
    "status changed": (
        [record("T-1", status="Flagged")],
        [record("T-1", status="OK")],
        {"Change": "Status changed", "Old Status": "OK", "New Status": "Flagged", "Findings Appeared": None},
    ),
    "findings appeared": (
        [record("T-1", codes="CONSIDERATION_BELOW_75PCT; DUPLICATE_ID")],
        [record("T-1", codes="DUPLICATE_ID")],
        {"Change": "Findings appeared", "Findings Appeared": "CONSIDERATION_BELOW_75PCT", "Findings Cleared": None},
    ),
    "findings cleared (the earlier codes NULL in the ledger now)": (
        [record("T-1", codes=None)],
        [record("T-1", codes="CONSIDERATION_BELOW_75PCT")],
        {"Change": "Findings cleared", "Findings Appeared": None, "Findings Cleared": "CONSIDERATION_BELOW_75PCT"},
    ),
    "nothing changed": ([record("T-1", codes="")], [record("T-1", codes=None)], None),
    "nothing changed, no award either time": ([record("T-1", award=None)], [record("T-1", award=None)], None),
}


@pytest.mark.parametrize(("current", "previous", "expected"), CASES.values(), ids=CASES.keys())
def test_changes(current, previous, expected):
    ch = changes(pd.DataFrame(current), earlier(*previous))
    assert list(ch.columns) == CHANGE_COLUMNS
    assert_no_missing_as_text(ch)
    if expected is None:
        assert ch.empty
        return
    assert len(ch) == 1
    row = ch.iloc[0]
    for column, value in expected.items():
        assert row[column] is pd.NA if value is pd.NA else row[column] == value, (column, row[column])


def test_changes_of_many_records_at_once():
    current = pd.DataFrame([record("T-1", award=350_000), record("T-2"), record("T-3", status="Flagged"), record("T-9")])
    previous = earlier(record("T-1"), record("T-2"), record("T-3"))
    ch = changes(current, previous)
    assert ch["Record ID"].tolist() == ["T-1", "T-3", "T-9"]
    assert ch["Change"].tolist() == ["Award changed", "Status changed", "New record"]
    assert_no_missing_as_text(ch)


# (codes then, codes now): what appeared and what cleared, row by row
MOVED = [
    ("A; B", "B; C", ["C"], ["A"]),
    ("B; A", "A; B", [], []),  # the same codes in another order
    (None, "A", ["A"], []),  # no earlier codes (NULL in the ledger)
    ("A", float("nan"), [], ["A"]),
    ("", "A (waived)", ["A (waived)"], []),  # a waived code is its own text
    ("A; B", "B; C", ["C"], ["A"]),  # a pair seen before
    ("C", "A; B", ["A", "B"], ["C"]),  # the pair above the other way round
    (None, None, [], []),
]


def test_the_codes_that_appeared_and_cleared_are_each_rows_own():
    from batch.run.report import _codes, _moved_codes

    before = pd.Series([m[0] for m in MOVED], dtype=object)
    now = pd.Series([m[1] for m in MOVED], dtype=object)
    appeared, cleared = _moved_codes(before, now)
    assert appeared == [m[2] for m in MOVED] and cleared == [m[3] for m in MOVED]
    # the same as each row worked out on its own, over many rows in a shuffled order
    order = np.random.default_rng(7).integers(0, len(MOVED), 500)
    before, now = before.iloc[order].reset_index(drop=True), now.iloc[order].reset_index(drop=True)
    appeared, cleared = _moved_codes(before, now)
    assert appeared == [sorted(_codes(n) - _codes(o)) for o, n in zip(before, now, strict=True)]
    assert cleared == [sorted(_codes(o) - _codes(n)) for o, n in zip(before, now, strict=True)]


def test_rules_lines_one_per_sheet_by_name():
    assert rules_lines({"Transfers": "2014-10-24 (sha256 3c1cc5a38b3d)", "GrowNJ": "C.34:1B-246 (sha256 36821ce80202)"}) == [
        ("Rules version: GrowNJ", "C.34:1B-246 (sha256 36821ce80202)"),
        ("Rules version: Transfers", "2014-10-24 (sha256 3c1cc5a38b3d)"),
    ]
    assert rules_lines({}) == [("Rules versions", "no workbook was processed")]


# -- the report, written and read back -----------------------------------------------------------


def cells(path: Path) -> dict[str, list[tuple]]:
    wb = openpyxl.load_workbook(path)
    return {ws.title: [tuple(r) for r in ws.iter_rows(values_only=True)] for ws in wb}


def widths(ws) -> dict[int, float]:
    """1-based column -> width, for the columns given one."""
    out = {}
    for dim in ws.column_dimensions.values():
        if dim.width and dim.min:
            for c in range(dim.min, dim.max + 1):
                out[c] = dim.width
    return out


def assert_reads_clean(path: Path) -> dict[str, list[tuple]]:
    """No cell shows a missing value as text; a blank cell holds nothing (not an empty text)."""
    book = cells(path)
    for sheet, rows in book.items():
        for r, row in enumerate(rows, start=1):
            for c, v in enumerate(row, start=1):
                if isinstance(v, str):
                    assert v.strip() and not MISSING_AS_TEXT.search(v), (sheet, r, c, v)
                elif isinstance(v, float):
                    assert v == v, (sheet, r, c, v)
    return book


def assert_wide_enough(path: Path, sheet: str, header_row: int, wraps_at: int = 60) -> None:
    """Each column at least as wide as its header's longest word and its text (up to where it wraps,
    `wraps_at`); a table's title (a row of one cell) runs on over the empty cells beside it."""
    ws = openpyxl.load_workbook(path)[sheet]
    given = widths(ws)
    rows = [r for r in ws.iter_rows(min_row=header_row, values_only=True) if sum(v is not None for v in r) > 1]
    for c, header in enumerate(rows[0], start=1):
        if header is None:
            continue
        longest_word = max(len(w) for w in str(header).split())
        texts = [len(v) for row in rows[1:] if isinstance(v := row[c - 1], str)]
        need = min(wraps_at, max([longest_word, *texts]))
        assert given.get(c, 8.43) >= need, (sheet, header, given.get(c), need)


def run_records(run_id: str, rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows).reindex(columns=[*RECORD_FIELDS, "file", "open_errors"])  # open_errors: as a run gives them


def test_write_report_reads_clean(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    long_name = "grow-nj-intake-for-the-november-2026-review-final.xlsx"
    first = run_records(
        "RUN-1",
        [
            record("T-1", award=300_000, area="Grow NJ", year=2026),
            record("T-2", status="Flagged", codes="CONSIDERATION_BELOW_75PCT", area="Grow NJ", year=2026),
            record("T-3", area="BEIP", year=2025),
            record("GNJ-1", sheet="GrowNJ", file=long_name, award=2_500_000_00, area="Urban Transit Hub", year=2018),
        ],
    )
    ledger.start_run("RUN-1", "2026-10-31T10:00:00+00:00", "0.1.0", str(tmp_path / "in"), str(tmp_path / "out"))
    for name, part in first.groupby("file"):
        ledger.add_file("RUN-1", {"name": name, "status": "processed"}, part)
    ledger.end_run("RUN-1", "2026-10-31T10:01:00+00:00", {"files": 2, "processed": 2}, None, {})

    second = run_records(
        "RUN-2",
        [
            record("T-1", award=350_000, area="Grow NJ", year=2026),  # award changed
            record("T-2", area="Grow NJ", year=2026),  # status changed, finding cleared
            record("T-3", area="BEIP", year=2025),  # unchanged
            record("T-4", status="Invalid", award=None, codes="MISSING_VALUE", area=None, year=None),  # new, no award
            record("T-5", codes="SMALL_TRANSFER_ALLOWANCE_USED; CONSIDERATION_BELOW_75PCT", area=None, year=None),  # new
            record("T-6", status="Flagged", codes="CONSIDERATION_BELOW_75PCT", area="BEIP", year=2025, open_errors=True),  # an error
            record("GNJ-1", sheet="GrowNJ", file=long_name, status="Flagged", award=2_500_000_00, codes="ANNUAL_CAP_APPLIED")
            | {"area": "Urban Transit Hub", "year": 2018, "open_errors": False},  # a warning only
            record("BR-1", sheet="BRRAP", file="brrap.xlsx", award=900_000_000, area=None, year=2025),
        ],
    )
    started = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.UTC)
    ledger.start_run("RUN-2", started.isoformat(), "0.1.0", str(tmp_path / "in"), str(tmp_path / "out"))
    for name, part in second.groupby("file"):
        ledger.add_file("RUN-2", {"name": name, "status": "processed"}, part)
    outcomes = [
        FileOutcome(
            "nov.xlsx", "processed", output=str(tmp_path / "out" / "nov.annotated.xlsx"), info={"rows_per_sheet": {"Transfers": 6}}
        ),
        FileOutcome(long_name, "processed", output=str(tmp_path / "out" / "g.annotated.xlsx"), info={"rows_per_sheet": {"GrowNJ": 1}}),
        FileOutcome("brrap.xlsx", "processed", output=str(tmp_path / "out" / "brrap.annotated.xlsx"), info={}),
        FileOutcome("notes.txt", "failed", reason="notes.txt is not an intake file (an .xlsx, .xlsm, .xls or .csv workbook)."),
    ]
    per_year = pd.DataFrame(
        {
            "sheet": ["BRRAP", "BRRAP"],
            "year": [2025, 2025],
            "grant": ["BR-1", "BR-2"],
            "file": ["brrap.xlsx", "brrap.xlsx"],
            "credit": [1_200_000_000, 900_000_000],
        }
    )
    rules = {"Transfers": "2014-10-24 (sha256 3c1cc5a38b3d)", "GrowNJ": "C.34:1B-246 (P.L.2014 c.63) (sha256 36821ce80202)"}
    rules["BRRAP"] = "P.L.2004 c.65 s.7 (P.L.2011 c.149) (sha256 64738b3fa990)"
    path = write_report(tmp_path / "run-RUN-2.summary.xlsx", "RUN-2", started, outcomes, ledger, second, per_year, rules)

    book = assert_reads_clean(path)
    assert list(book) == ["Files", "Portfolio", "BRRAP Aggregate", "Decisions", "Changes", "Portfolio changes", "Run"]
    assert book["Portfolio changes"] == [("No earlier record's portfolio findings changed with this run's records.",)]

    run = {k: v for k, v in book["Run"]}
    assert [k for k, _ in book["Run"] if k.startswith("Rules version")] == [
        "Rules version: BRRAP",
        "Rules version: GrowNJ",
        "Rules version: Transfers",
    ]
    assert run["Rules version: GrowNJ"] == rules["GrowNJ"]
    assert not any("{" in str(v) or '"' in str(v) for row in book["Run"] for v in row)
    assert (run["Files processed"], run["Files failed"], run["Files skipped"]) == (3, 1, 0)

    header = book["Changes"][0]
    changed = {r[1]: dict(zip(header, r, strict=True)) for r in book["Changes"][1:]}
    assert set(changed) == {"T-1", "T-2", "T-4", "T-5", "T-6", "GNJ-1", "BR-1"}
    assert changed["T-4"] == {
        "Sheet": "Transfers",
        "Record ID": "T-4",
        "File": "nov.xlsx",
        "Change": "New record",
        "Old Award ($)": None,
        "New Award ($)": None,
        "Old Status": None,
        "New Status": "Invalid",
        "Findings Appeared": None,
        "Findings Cleared": None,
        "Previous Run": None,
    }
    assert (changed["T-1"]["Old Award ($)"], changed["T-1"]["New Award ($)"]) == (3_000, 3_500)
    assert changed["T-2"]["Change"] == "Status changed; Findings cleared" and changed["T-2"]["Findings Appeared"] is None
    assert changed["GNJ-1"]["Findings Appeared"] == "ANNUAL_CAP_APPLIED" and changed["GNJ-1"]["Previous Run"] == "RUN-1"
    assert_wide_enough(path, "Changes", 1)
    assert_wide_enough(path, "Files", 2, wraps_at=32)  # its long texts wrap, so that it prints one page wide
    assert_wide_enough(path, "Portfolio", 2, wraps_at=38)

    portfolio = book["Portfolio"]
    at = next(i for i, r in enumerate(portfolio) if r[0] == "Records by finding code") + 2
    by_code = [r[:3] for r in portfolio[at:] if r[0]]
    assert by_code == [
        ("Transfers", "CONSIDERATION_BELOW_75PCT", 2),
        ("GrowNJ", "ANNUAL_CAP_APPLIED", 1),
        ("Transfers", "MISSING_VALUE", 1),
        ("Transfers", "SMALL_TRANSFER_ALLOWANCE_USED", 1),
    ]
    status_at = next(i for i, r in enumerate(portfolio) if r[0] == "Records by program and status") + 1
    header = ("Sheet", "OK", "Flagged with errors", "Flagged with warnings only", "Ineligible", "Invalid")
    assert portfolio[status_at][:6] == header
    by_status = {r[0]: r[:6] for r in portfolio[status_at + 1 : status_at + 4]}
    # Flagged in two: T-6's error is open (with errors); GNJ-1's finding is a warning (warnings only)
    assert by_status["Transfers"] == ("Transfers", 4, 1, 0, 0, 1)  # OK: T-1, T-2, T-3, T-5; Invalid: T-4
    assert by_status["GrowNJ"] == ("GrowNJ", 0, 0, 1, 0, 0)
    areas = {(r[0], r[1]) for r in portfolio if r[0] in ("Transfers", "BRRAP") and isinstance(r[1], str)}
    assert ("Transfers", "(not given)") in areas and ("BRRAP", "(all)") in areas
    year_blank = [r for r in portfolio if r[:2] == ("Transfers", "(not given)")]
    assert year_blank and all(r[2] is None for r in year_blank)

    brrap = book["BRRAP Aggregate"]
    assert brrap[1] == ("Tax Period", "Grants", "Files", "Credit ($)", "Limit ($)", "Over Limit in This Run")
    assert brrap[2] == ("2025", 2, 1, 21_000_000, 20_000_000, "OVER")


def test_first_run_report(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    started = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.UTC)
    ledger.start_run("RUN-1", started.isoformat(), "0.1.0", str(tmp_path), str(tmp_path))
    outcomes = [FileOutcome("notes.txt", "failed", reason="notes.txt is not an intake file.")]
    empty = pd.DataFrame(columns=[*RECORD_FIELDS, "file"])
    path = write_report(tmp_path / "r.xlsx", "RUN-1", started, outcomes, ledger, empty, pd.DataFrame(), {})
    book = assert_reads_clean(path)
    assert book["Portfolio"] == [("No records in this run.",)]
    assert dict(book["Run"])["Rules versions"] == "no workbook was processed"


def transfer(tid, credit, paid, program="Grow NJ"):
    return [tid, program, "C-" + tid, "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), credit, paid, CERTIFICATE]


def test_two_runs_of_the_cli_read_clean(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    ledger = tmp_path / "ledger.sqlite"
    book = inbox / "nov.xlsx"
    rows = [transfer("T-1", 30_000, 27_000), transfer("T-2", 50_000, 30_000), transfer("T-3", 40_000, 36_000)]
    write_workbook(book, {"Transfers": [TRANSFER_HEADERS, *rows]})
    args = ["run", str(inbox), "--out", str(out), "--ledger", str(ledger), "--as-of", "2026-11-30", "--keep-inputs", "--workers", "1"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    rows = [
        transfer("T-1", 35_000, 31_500),  # award changed
        transfer("T-2", 50_000, 40_000),  # finding cleared
        transfer("T-3", 40_000, 36_000),  # unchanged
        transfer("T-4", None, 36_000),  # new, no credit amount: Invalid, no award
        transfer("T-5", 60_000, 54_000, program=None),  # new, no program
    ]
    write_workbook(book, {"Transfers": [TRANSFER_HEADERS, *rows]})
    second = CliRunner().invoke(main, [*args, "--force"])
    assert second.exit_code == 0, second.output
    reports = sorted(out.glob("run-*.summary.xlsx"))
    assert len(reports) == 2
    for report in reports:
        assert_reads_clean(report)
    latest = max(reports, key=lambda p: p.stat().st_mtime_ns)
    got = cells(latest)
    header = got["Changes"][0]
    changed = {r[1]: dict(zip(header, r, strict=True)) for r in got["Changes"][1:]}
    assert {"T-1", "T-2", "T-4", "T-5"} <= set(changed) and "T-3" not in changed
    assert changed["T-4"]["Change"] == "New record" and changed["T-4"]["Old Status"] is None
    assert changed["T-4"]["Previous Run"] is None and changed["T-4"]["Findings Cleared"] is None
    assert [k for k, _ in got["Run"] if str(k).startswith("Rules version")] == ["Rules version: Transfers"]
    assert_wide_enough(latest, "Changes", 1)


def test_portfolio_tables_count_each_set_of_codes_area_and_year_as_each_record_would():
    """The Portfolio sheet's tables, worked out once per distinct set of codes, area and year: each record
    counted as itself (a code twice in one record counts once; a set in another order is the same codes)."""
    from batch.run.report import portfolio

    records = pd.DataFrame(
        [
            record("T-1", codes="B_CODE; A_CODE", area="Essex", year=2026.0),
            record("T-2", codes="A_CODE; B_CODE", area=" ", year=2026),  # a blank area: (not given)
            record("T-3", codes="A_CODE; ; A_CODE", area=None, year=None),  # A_CODE once; no year: blank
            record("T-4", status="Invalid", codes="MISSING_VALUE", area="Essex", year=2026),  # codes counted, award not
            record("T-5", codes=None, area="Essex", year="2026"),
            record("G-1", sheet="GrowNJ", codes="A_CODE", area=None, year=2018, award=50_000),
            record("BR-1", sheet="BRRAP", codes=None, area=None, year=2025, award=70_000),  # BRRAP has no area column: (all)
        ]
    ).astype({"codes": "str", "area": "str"})
    by_program, by_area_year, _status, by_code = (t.table for t in portfolio(records))
    # the records that stand: Transfers T-1, T-2, T-3, T-5 (4 x 100,000 cents = 400,000); GrowNJ G-1; BRRAP BR-1
    assert [tuple(r) for r in by_program.itertuples(index=False)] == [
        ("BRRAP", 1, 70_000),
        ("GrowNJ", 1, 50_000),
        ("Transfers", 4, 400_000),
    ]
    assert [tuple(r) for r in by_area_year.itertuples(index=False)] == [
        ("BRRAP", "(all)", "2025", 1, 70_000),
        ("GrowNJ", "(not given)", "2018", 1, 50_000),
        ("Transfers", "(not given)", None, 1, 100_000),  # T-3: no year, a blank cell
        ("Transfers", "(not given)", "2026", 1, 100_000),  # T-2
        ("Transfers", "Essex", "2026", 2, 200_000),  # T-1 (2026.0) and T-5 ("2026"): one year
    ]
    # A_CODE: T-1, T-2, T-3 and G-1 (two sheets); B_CODE: T-1, T-2; MISSING_VALUE: T-4 (Invalid, still counted)
    assert [tuple(r) for r in by_code.itertuples(index=False)] == [
        ("Transfers", "A_CODE", 3),
        ("Transfers", "B_CODE", 2),
        ("GrowNJ", "A_CODE", 1),
        ("Transfers", "MISSING_VALUE", 1),
    ]


# (case, each processed file's records and its name): the report's records stack them without their
# fields, each with its file: as a frame a file, its fields dropped and its file assigned, would
# stack (a key column only a later file has comes after `file`, as such a stack puts it)
REPORT_RECORDS_CASES = [
    ("no file", []),
    ("one file", [({"sheet": ["Transfers"], "record_id": ["T-1"], "fields": ["{}"], "key:certificate_key": ["c-1"]}, "a.xlsx")]),
    (
        "two programs, one file without records",
        [
            (
                {
                    "sheet": ["Transfers", "Transfers"],
                    "record_id": ["T-1", "T-2"],
                    "award_cents": [5, None],
                    "fields": ["{}", None],
                    "key:certificate_key": ["c-1", None],
                },
                "a.xlsx",
            ),
            ({"sheet": [], "record_id": [], "award_cents": [], "fields": []}, "empty.xlsx"),
            ({"sheet": ["BRRAP"], "record_id": ["B-1"], "award_cents": [7], "fields": ["{}"], "key:years": [["2026"]]}, "b.xlsx"),
        ],
    ),  # fmt: skip
]


@pytest.mark.parametrize(("case", "processed"), REPORT_RECORDS_CASES)
def test_the_reports_records_are_each_files_without_fields_with_its_file_stacked(case, processed):
    from batch.run.runner import RECORD_COLUMNS, _report_records

    processed = [(pd.DataFrame(records), name) for records, name in processed]
    got = _report_records(processed)
    if not processed:
        assert list(got.columns) == RECORD_COLUMNS and got.empty
        return
    expected = pd.concat([r.drop(columns=["fields"]).assign(file=name) for r, name in processed], ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got["file"].tolist() == [name for r, name in processed for _ in range(len(r))], case
