"""The portfolio through `njcredits run`: a certificate's amount and transfers to date count the
records of earlier runs in the ledger (the latest version of each), month after month. On both of
the ledger's databases (tests/databases.py)."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from databases import ledger_of, ledger_query
from helpers import ledger_at
from test_reviews import _findings, _sheet, transfers_workbook

from batch.cli import main
from batch.run.ledger import SCHEMA_VERSION, migrate

D = dt.date
pytestmark = pytest.mark.usefixtures("backend")  # on both of the ledger's databases


def transfer(tid, cert, amount, date, credit, paid=None):
    # Transfer ID, Program, Certificate ID, Certificate Amount, Transferor, Transferee, Transfer Date, Credit, Consideration
    return [tid, "Grow NJ", cert, amount, "Seller LLC", "Buyer Inc.", date, credit, credit * 0.9 if paid is None else paid]


def run(inbox: Path, outbox: Path, *args: str):
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox), "--as-of", "2026-12-15", *args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def november(tmp_path):
    """November's run: certificate C-1 ($6,000,000) fully transferred by T-1 ($6,000,000); C-2
    ($1,000,000) partly, by T-2 ($400,000). Returns the inbox and the outbox."""
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    transfers_workbook(inbox / "nov.xlsx", [transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 6_000_000),
                                            transfer("T-2", "C-2", 1_000_000, D(2026, 11, 12), 400_000)])  # fmt: skip
    run(inbox, outbox)
    return inbox, outbox


def test_december_counts_novembers_transfers(november):
    inbox, outbox = november
    # December: $500,000 more of C-1 (amount left blank: November gave it): 6,000,000 + 500,000 = 6,500,000 > 6,000,000;
    # $500,000 of C-2: 400,000 + 500,000 = 900,000 <= 1,000,000
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-9", "C-1", None, D(2026, 12, 5), 500_000),
                                            transfer("T-10", " c-2 ", None, D(2026, 12, 6), 500_000)])  # fmt: skip
    run(inbox, outbox)
    rows = _sheet(outbox / "dec.annotated.xlsx")
    assert (rows["T-9"]["Status"], rows["T-9"]["Findings"]) == ("Flagged", "CERTIFICATE_OVERTRANSFERRED")
    assert (rows["T-10"]["Status"], rows["T-10"]["Findings"]) == ("OK", None)
    (over,) = [f for f in _findings(outbox / "dec.annotated.xlsx") if f["Code"] == "CERTIFICATE_OVERTRANSFERRED"]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert over["Message"].startswith(
        "Certificate C-1 has $6,500,000.00 transferred to date with this row, $6,000,000.00 of it in other workbooks "
        f"(Transfers T-1 (nov.xlsx, run {today})), $500,000.00 more than its Certificate Amount of $6,000,000.00"
    )
    import openpyxl

    ws = openpyxl.load_workbook(outbox / "dec.annotated.xlsx")["Transfers"]
    header = [c.value for c in ws[1]]
    to_date = [r[header.index("Certificate Transferred To Date ($)")] for r in ws.iter_rows(min_row=2, values_only=True)]
    assert to_date == [6_500_000, 900_000]


def test_a_correction_dropped_back_supersedes_the_earlier_version(november):
    inbox, outbox = november
    # the reviewer corrects T-1 to $5,000,000 and drops November's returned workbook back
    import openpyxl

    book = openpyxl.load_workbook(outbox / "nov.annotated.xlsx")
    book["Transfers"]["H2"] = 5_000_000
    book.save(inbox / "nov.annotated.xlsx")
    run(inbox, outbox)
    # December: 5,000,000 (T-1's latest version, not its first) + 500,000 = 5,500,000 <= 6,000,000
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-9", "C-1", None, D(2026, 12, 5), 500_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx")["T-9"]["Findings"] is None


def test_a_certificate_given_no_amount_anywhere_is_said_unchecked(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    transfers_workbook(inbox / "nov.xlsx", [transfer("T-1", "C-7", None, D(2026, 11, 10), 9_000_000)])
    run(inbox, outbox)
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-2", "C-7", None, D(2026, 12, 10), 500_000)])
    run(inbox, outbox)
    rows = _sheet(outbox / "dec.annotated.xlsx")
    assert (rows["T-2"]["Status"], rows["T-2"]["Findings"]) == ("Flagged", "CERTIFICATE_AMOUNT_NOT_GIVEN")
    (said,) = [f for f in _findings(outbox / "dec.annotated.xlsx") if f["Code"] == "CERTIFICATE_AMOUNT_NOT_GIVEN"]
    assert "the certificate total is not checked" in said["Message"] and said["Severity"] == "warning"


def test_two_amounts_across_months_are_both_named(november):
    inbox, outbox = november
    # December says C-2 is a $300,000 certificate: the latest given, used: 400,000 + 100,000 = 500,000 > 300,000
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-9", "C-2", 300_000, D(2026, 12, 5), 100_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx")["T-9"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED; CERTIFICATE_AMOUNT_CONFLICT"
    (conflict,) = [f for f in _findings(outbox / "dec.annotated.xlsx") if f["Code"] == "CERTIFICATE_AMOUNT_CONFLICT"]
    assert (
        "$1,000,000.00 (Transfers T-2 (nov.xlsx, run" in conflict["Message"]
        and "$300,000.00 (Transfers T-9 (this workbook))" in conflict["Message"]
    )


def test_a_rerun_of_the_same_workbook_counts_each_record_once(november):
    inbox, outbox = november
    shutil.copy(outbox / "nov.annotated.xlsx", inbox / "nov.annotated.xlsx")  # dropped back unchanged
    run(inbox, outbox)
    rows = _sheet(outbox / "nov.annotated.xlsx")
    assert rows["T-1"]["Findings"] is None and rows["T-2"]["Findings"] is None  # its own rows, not the ledger's versions as well


def test_another_teams_transfers_of_a_certificate_count_too(tmp_path, monkeypatch):
    """A certificate is the same whoever processes it: team West's transfer of C-1 counts team East's
    $6,000,000 of November, although West numbers its rows alike (T-1 of each is its own record)."""
    outbox = tmp_path / "outbox"
    for team, name, row in (("East", "nov.xlsx", transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 6_000_000)),
                            ("West", "west.xlsx", transfer("T-1", "C-1", None, D(2026, 12, 1), 100_000))):  # fmt: skip
        where = tmp_path / team
        transfers_workbook(where / "inbox" / name, [row])
        (where / "njcredits.toml").write_text(f'team = "{team}"\n', encoding="utf-8")
        monkeypatch.chdir(where)
        run(where / "inbox", outbox)
    # 6,000,000 (East's T-1) + 100,000 (West's T-1) = 6,100,000 > 6,000,000
    assert _sheet(outbox / "west.annotated.xlsx")["T-1"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT team, record_id, key FROM record_keys ORDER BY team") == [
        ("East", "T-1", "c-1"),
        ("West", "T-1", "c-1"),
    ]


@pytest.mark.sqlite_only
def test_a_ledger_of_migration_4_gains_the_portfolio_and_its_records_keep_no_fields(tmp_path):
    path = tmp_path / "ledger.sqlite"
    with sqlite3.connect(path, isolation_level=None) as db:
        ledger_at(db, 4)
        db.execute("INSERT INTO runs (run_id, started, ended, inbox) VALUES ('R1', '2026-10-01', '2026-10-01', '/in')")
        db.execute("INSERT INTO records (run_id, file, sheet, record_id, status) VALUES ('R1', 'a.xlsx', 'Transfers', 'T-1', 'OK')")
        assert migrate(db) == SCHEMA_VERSION
        assert db.execute("SELECT team, fields FROM records").fetchall() == [("/in", None)]
        assert db.execute("SELECT COUNT(*) FROM record_keys").fetchone() == (0,)


def test_an_amount_typed_on_every_row_is_named_ten_times_at_most(tmp_path):
    """Fifteen rows of one certificate, each giving another amount (a team typing the balance left):
    each warning names the first ten amounts, then how many more, and which one is used."""
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    rows = [transfer(f"T-{i}", "C-1", 10_000_000 - i * 100_000, D(2026, 11, i), 50_000) for i in range(1, 16)]
    transfers_workbook(inbox / "nov.xlsx", rows)
    run(inbox, outbox)
    said = [f["Message"] for f in _findings(outbox / "nov.annotated.xlsx") if f["Code"] == "CERTIFICATE_AMOUNT_CONFLICT"]
    assert len(said) == 15 and len(set(said)) == 1
    # T-15's $8,500,000.00 is the latest given (2026-11-15): used; the list holds T-1 .. T-10, then 5 more
    assert (
        "$9,900,000.00 (Transfers T-1 (this workbook))" in said[0]
        and "$9,000,000.00 (Transfers T-10 (this workbook)); and 5 more" in said[0]
    )
    assert "the latest given, $8,500,000.00, is the certificate's total" in said[0] and len(said[0]) < 1_000


def _ledger_of_one_run(path: Path, rows: list[tuple[str, str, int, int | None]]) -> None:
    """A ledger holding one ended run whose records (workbook, record ID, credit, amount) of C-1 are
    written in the order given (the order their workbooks' workers finished)."""
    import json

    from batch.run.ledger import Ledger, backends

    Ledger(path)
    with backends.connect(ledger_of(path)) as db:
        db.execute(
            "INSERT INTO runs (run_id, started, ended, inbox, team, one_file) VALUES ('R1', '2026-11-30', '2026-11-30', '/in', 'T', 0)"
        )
        for workbook, rid, credit, amount in rows:
            fields = {"program": "Grow NJ", "certificate": "C-1", "certificate_amount": amount, "transferor": "A", "transferee": "B",
                      "date": "2026-11-10", "credit": credit, "certificate_key": "c-1"}  # fmt: skip
            db.execute(
                "INSERT INTO records (run_id, file, sheet, record_id, status, fields, team) VALUES ('R1', ?, 'Transfers', ?, 'OK', ?, 'T')",
                (workbook, rid, json.dumps(fields)),
            )
            db.execute("INSERT INTO record_keys VALUES ('R1', 'T', 'Transfers', ?, 'certificate_key', 'c-1')", (rid,))


@pytest.mark.parametrize("finished", ["a first", "b first"])
def test_records_of_one_run_are_read_in_workbook_order_whichever_finished_first(tmp_path, finished):
    from batch.run.ledger import read_portfolio

    a, b = ("a.xlsx", "T-1", 100, 600_000_000), ("b.xlsx", "T-2", 100, 500_000_000)
    _ledger_of_one_run(tmp_path / "l.sqlite", [a, b] if finished == "a first" else [b, a])
    found = read_portfolio(ledger_of(tmp_path / "l.sqlite"), "Transfers", {"certificate_key": ["c-1"]})
    assert found["workbook"].tolist() == ["a.xlsx", "b.xlsx"]  # so b's amount is the latest given, either way


def test_a_record_in_two_workbooks_of_one_run_counts_in_both(tmp_path):
    from batch.run.ledger import read_portfolio

    _ledger_of_one_run(tmp_path / "l.sqlite", [("b.xlsx", "T-1", 100, None), ("a.xlsx", "T-1", 200, None)])
    found = read_portfolio(ledger_of(tmp_path / "l.sqlite"), "Transfers", {"certificate_key": ["c-1"]})
    assert list(zip(found["workbook"], found["record_id"], strict=True)) == [("a.xlsx", "T-1"), ("b.xlsx", "T-1")]


@pytest.mark.sqlite_only
def test_a_ledger_of_a_newer_njcredits_is_not_written(tmp_path):
    from batch.run.ledger import SCHEMA_VERSION, Ledger, LedgerUnreadable

    Ledger(tmp_path / "l.sqlite")
    with sqlite3.connect(tmp_path / "l.sqlite") as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(LedgerUnreadable, match="written by a newer njcredits"):
        Ledger(tmp_path / "l.sqlite")


def test_a_smaller_transfer_of_last_month_used_the_years_allowance(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: Seller LLC's $60,000 Urban Transit Hub transfer of 2013-06-28, below the $100,000 minimum of the
    # text before P.L.2014, c.63, uses its one smaller transfer of 2013 (C.34:1B-209.1)
    uth = ["T-1", "Urban Transit Hub", "U-1", 1_000_000, "Seller LLC", "Buyer Inc.", D(2013, 6, 28), 60_000, 60_000]
    transfers_workbook(inbox / "nov.xlsx", [uth])
    run(inbox, outbox)
    assert _sheet(outbox / "nov.annotated.xlsx")["T-1"]["Findings"] == "SMALL_TRANSFER_ALLOWANCE_USED"
    # December: its $50,000 of 2013-09-03 of another certificate is the second smaller transfer of 2013
    transfers_workbook(inbox / "dec.xlsx", [["T-2", "Urban Transit Hub", "U-2", 1_000_000, "SELLER, L.L.C.", "Other Inc.",
                                             D(2013, 9, 3), 50_000, 50_000]])  # fmt: skip
    run(inbox, outbox)
    rows = _sheet(outbox / "dec.annotated.xlsx")
    assert (rows["T-2"]["Status"], rows["T-2"]["Findings"]) == ("Flagged", "TRANSFER_BELOW_MINIMUM")
    keys = ledger_query(
        outbox / ".njcredits" / "ledger.sqlite",
        "SELECT record_id, grouping, key FROM record_keys WHERE grouping = 'small_transfer_key' ORDER BY record_id",
    )
    assert keys == [("T-1", "small_transfer_key", "2013 seller"), ("T-2", "small_transfer_key", "2013 seller")]


def test_brrap_credit_of_last_month_counts_in_this_months_limits(tmp_path):
    from test_samerun import brrap_workbook

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: $12,000,000 of 2026 credit (two grants); December: $8,000,000.01 more: 20,000,000.01 > 20,000,000
    brrap_workbook(inbox / "nov.xlsx", [("B-1", "Beta LLC", 6_000_000, 2026), ("B-2", "Gamma Inc", 6_000_000, 2026)])
    run(inbox, outbox)
    brrap_workbook(inbox / "dec.xlsx", [("D-1", "Delta Co", 8_000_000.01, 2026), ("D-2", "Delta Co", 1_000_000, 2027)])
    run(inbox, outbox)
    rows = _sheet(outbox / "dec.annotated.xlsx")
    assert (rows["D-1"]["Status"], rows["D-1"]["Findings"]) == ("Flagged", "AGGREGATE_ANNUAL_LIMIT_EXCEEDED")
    assert (rows["D-2"]["Status"], rows["D-2"]["Findings"]) == ("OK", None)  # 2027: 1,000,000


COMPLIANCE_HEADERS = ["Project ID", "Tax Period", "Approval Date", "Certification Date", "Annual Credit ($)", "Agreement Jobs",
                      "Baseline Statewide Employees", "Statewide Employees", "Facility Employees",
                      "Period Documentation Certified Date", "Tax Liability ($)"]  # fmt: skip


def compliance_workbook(path: Path, periods: list[tuple[str, int, float, float]]) -> Path:
    """A workbook of one GrowNJ_Compliance sheet: (Project ID, Tax Period, Annual Credit, Tax Liability) each,
    approved 2016-03-15, certified 2018-01-10, documented, jobs at their thresholds."""
    from conftest import write_workbook

    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [[pid, year, D(2016, 3, 15), D(2018, 1, 10), credit, 100, 500, 500, 100, D(year + 1, 6, 1), liability]
            for pid, year, credit, liability in periods]  # fmt: skip
    return write_workbook(path, {"GrowNJ_Compliance": [COMPLIANCE_HEADERS, *rows]})


def compliance_columns(path: Path) -> dict:
    import openpyxl

    ws = openpyxl.load_workbook(path)["GrowNJ_Compliance"]
    header = [c.value for c in ws[1]]
    cols = ["Credit Used ($)", "Carry-Forward Used ($)", "Carry-Forward Balance ($)", "Findings"]
    return {r[0]: tuple(r[header.index(c)] for c in cols) for r in ws.iter_rows(min_row=2, values_only=True)}


def test_a_projects_carry_forward_comes_from_its_team_s_earlier_periods(tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    # team East: P-1's 2019 (credit 1,000, liability 400: 600 carried forward) in November, its 2020 (liability 1,500)
    # in December: 1,000 + 500 used, 100 left. Team West's own P-1 of 2020 (liability 1,600), sharing the ledger, is
    # another project: its own 1,000 used, nothing carried
    for team, name, period in (("East", "nov.xlsx", ("P-1", 2019, 1_000, 400)), ("East", "dec.xlsx", ("P-1", 2020, 1_000, 1_500)),
                               ("West", "west.xlsx", ("P-1", 2020, 1_000, 1_600))):  # fmt: skip
        where = tmp_path / team
        compliance_workbook(where / "inbox" / name, [period])
        (where / "njcredits.toml").write_text(f'team = "{team}"\n', encoding="utf-8")
        monkeypatch.chdir(where)
        run(where / "inbox", outbox)
    assert compliance_columns(outbox / "dec.annotated.xlsx")["P-1"] == (1_500, 500, 100, "CARRY_FORWARD_FROM_OTHER_WORKBOOKS")
    assert compliance_columns(outbox / "west.annotated.xlsx")["P-1"] == (1_000, 0, 0, None)
