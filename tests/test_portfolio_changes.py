"""The run report's `Portfolio changes` sheet (batch/run/changes.py): an earlier record whose verdict a
later run changed (an October transfer processed in December pushes November's over its certificate)
is listed with its findings and Status then and now; its returned workbook is not rewritten."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import openpyxl
import pytest
from test_portfolio import run, transfer
from test_reviews import _sheet, transfers_workbook

D = dt.date


def changes(outbox: Path) -> list[dict]:
    """The Portfolio changes sheet of the latest run report, a dict a row."""
    report = max(outbox.glob("run-*.summary.xlsx"))
    rows = list(openpyxl.load_workbook(report)["Portfolio changes"].iter_rows(values_only=True))
    if len(rows) < 2:
        return []
    return [dict(zip(rows[1], r, strict=True)) for r in rows[2:]]


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_a_backdated_transfer_pushes_an_earlier_run_s_transfer_over(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: T-1 moves 5,500,000 of C-1 (6,000,000) on 11-10: within it. T-2 of C-2 is untouched later.
    transfers_workbook(inbox / "nov.xlsx", [transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 5_500_000),
                                            transfer("T-2", "C-2", 1_000_000, D(2026, 11, 10), 100_000)])  # fmt: skip
    run(inbox, outbox)
    assert changes(outbox) == []
    # December: T-0 of 10-15, 800,000: within the amount on its own date (800,000); November's T-1 now counts after
    # it: 800,000 + 5,500,000 = 6,300,000 > 6,000,000
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-0", "C-1", None, D(2026, 10, 15), 800_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx")["T-0"]["Findings"] is None
    assert _sheet(outbox / "nov.annotated.xlsx")["T-1"]["Findings"] is None  # the returned workbook is not rewritten
    (row,) = changes(outbox)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert {k: row[k] for k in ("Sheet", "Record ID", "Workbook", "Run Date", "Status Then", "Status Now")} == {
        "Sheet": "Transfers", "Record ID": "T-1", "Workbook": "nov.xlsx", "Run Date": today, "Status Then": "OK", "Status Now": "Flagged"
    }  # fmt: skip
    assert (row["Findings Then"], row["Findings Now"], row["Appeared"], row["Cleared"]) == (
        None,
        "CERTIFICATE_OVERTRANSFERRED",
        "CERTIFICATE_OVERTRANSFERRED",
        None,
    )


def test_a_correction_that_clears_an_earlier_verdict_is_listed(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: T-1 5,000,000 and T-2 2,000,000 of C-1 (6,000,000), in two workbooks: T-2 is over (7,000,000)
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 5_000_000)])
    transfers_workbook(inbox / "b.xlsx", [transfer("T-2", "C-1", 6_000_000, D(2026, 11, 20), 2_000_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "b.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"
    # December: a.xlsx corrected, T-1 was 3,000,000: 3,000,000 + 2,000,000 = 5,000,000, T-2 no longer over
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 3_000_000)])
    run(inbox, outbox)
    (row,) = changes(outbox)
    assert (row["Record ID"], row["Status Then"], row["Status Now"], row["Findings Now"], row["Cleared"]) == (
        "T-2",
        "Flagged",
        "OK",
        None,
        "CERTIFICATE_OVERTRANSFERRED",
    )


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_brrap_and_erg_verdicts_of_earlier_runs_are_judged_again(tmp_path):
    from test_samerun import brrap_workbook, erg_workbook

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: BRRAP 12,000,000 of 2026 (B-1); ERG (d) 20,000,000 on 2015-03-05 (P-2). December: BRRAP 9,000,000 of
    # 2026 (D-1): 21,000,000 > 20,000,000, B-1 now over too; ERG (d) 6,000,000 on 2015-01-05 (P-1), before P-2:
    # P-2 now reaches 26,000,000 > 25,000,000
    brrap_workbook(inbox / "brrap-nov.xlsx", [("B-1", "Beta LLC", 9_000_000, 2026), ("B-9", "Gamma Inc", 3_000_000, 2026)])
    erg_workbook(inbox / "erg-nov.xlsx", [("P-2", "Other ERG Incentive Area", D(2015, 3, 5), 20_000_000)])
    run(inbox, outbox)
    brrap_workbook(inbox / "brrap-dec.xlsx", [("D-1", "Delta Co", 9_000_000, 2026)])
    erg_workbook(inbox / "erg-dec.xlsx", [("P-1", "Other ERG Incentive Area", D(2015, 1, 5), 6_000_000)])
    run(inbox, outbox)
    found = {(r["Sheet"], r["Record ID"]): r["Appeared"] for r in changes(outbox)}
    assert found == {
        ("BRRAP", "B-1"): "AGGREGATE_ANNUAL_LIMIT_EXCEEDED",
        ("BRRAP", "B-9"): "AGGREGATE_ANNUAL_LIMIT_EXCEEDED",
        ("ERG_Residential", "P-2"): "BUCKET_LIMIT_EXCEEDED",
    }


def test_a_failure_to_judge_again_leaves_the_rest_of_the_report(tmp_path, monkeypatch):
    import batch.run.changes

    def broken(*_args):
        raise ValueError("a test's failure")

    monkeypatch.setattr(batch.run.changes, "portfolio_changes", broken)
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    transfers_workbook(inbox / "nov.xlsx", [transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 5_500_000)])
    run(inbox, outbox)
    report = openpyxl.load_workbook(max(outbox.glob("run-*.summary.xlsx")))
    assert report.sheetnames[-2:] == ["Portfolio changes", "Run"]
    assert report["Portfolio changes"]["A1"].value == (
        "The earlier records this run's groups hold could not be judged again (ValueError: a test's failure)."
    )


def uth(tid, cert, amount, seller, date, credit):
    # Transfer ID, Program, Certificate ID, Certificate Amount, Transferor, Transferee, Transfer Date, Credit, Consideration
    return [tid, "Urban Transit Hub", cert, amount, seller, "Buyer Inc.", date, credit, credit]


def test_a_record_reached_through_one_group_is_judged_over_all_of_its_groups(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November, C-1 ($1,000,000): T-2 980,000 (Other Co, 2013-06-01), then T-1 60,000 (Seller LLC, 2013-06-28): T-1 uses
    # Seller LLC's allowance of 2013 and is over C-1 (1,040,000 > 1,000,000)
    transfers_workbook(inbox / "nov.xlsx", [uth("T-2", "C-1", 1_000_000, "Other Co", D(2013, 6, 1), 980_000),
                                            uth("T-1", "C-1", 1_000_000, "Seller LLC", D(2013, 6, 28), 60_000)])  # fmt: skip
    run(inbox, outbox)
    assert _sheet(outbox / "nov.annotated.xlsx")["T-1"]["Findings"] == "SMALL_TRANSFER_ALLOWANCE_USED; CERTIFICATE_OVERTRANSFERRED"
    # December: Seller LLC's second smaller transfer of 2013, of another certificate: it touches the allowance's group, not
    # C-1; T-1 judged again over C-1 too is still over, so nothing changed
    transfers_workbook(inbox / "dec.xlsx", [uth("T-5", "C-9", 1_000_000, "Seller LLC", D(2013, 9, 3), 50_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx")["T-5"]["Findings"] == "TRANSFER_BELOW_MINIMUM"
    assert changes(outbox) == []


def test_a_finding_waived_then_stays_waived_now(tmp_path):
    from test_reviews import _decide

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # a.xlsx: T-A (60,000 of 2013-06-28) uses Seller LLC's allowance of 2013; b.xlsx: T-1 (50,000 of 2013-09-03) is below
    # the minimum, and its certificate has no amount (a warning, which the reviewer waives)
    transfers_workbook(inbox / "a.xlsx", [uth("T-A", "U-A", 1_000_000, "Seller LLC", D(2013, 6, 28), 60_000)])
    transfers_workbook(inbox / "b.xlsx", [uth("T-1", "U-B", None, "Seller LLC", D(2013, 9, 3), 50_000)])
    run(inbox, outbox)
    waiver = ("Waive CERTIFICATE_AMOUNT_NOT_GIVEN", "JS", "amount on file")
    _decide(outbox / "b.annotated.xlsx", inbox / "b.annotated.xlsx", {"T-1": waiver})
    run(inbox, outbox)
    assert _sheet(outbox / "b.annotated.xlsx")["T-1"]["Findings"] == "TRANSFER_BELOW_MINIMUM; CERTIFICATE_AMOUNT_NOT_GIVEN (waived)"
    # T-A withdrawn: T-1 is now Seller LLC's one smaller transfer of 2013, allowed; its waiver stands
    _decide(outbox / "a.annotated.xlsx", inbox / "a.annotated.xlsx", {"T-A": ("Withdrawn", "JS", "cancelled")})
    run(inbox, outbox)
    (row,) = changes(outbox)
    assert (row["Record ID"], row["Status Then"], row["Status Now"]) == ("T-1", "Flagged", "OK")
    assert row["Findings Now"] == "SMALL_TRANSFER_ALLOWANCE_USED; CERTIFICATE_AMOUNT_NOT_GIVEN (waived)"
    assert (row["Appeared"], row["Cleared"]) == ("SMALL_TRANSFER_ALLOWANCE_USED", "TRANSFER_BELOW_MINIMUM")


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_a_grow_nj_verdict_a_later_prior_incentive_changes_is_listed(tmp_path):
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, GROW_HEADERS, beip, grow

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    # November: ACME Corporation's Grow NJ application G-1 (2016-01-04), no prior incentive: OK; and G-2 of the same
    # business answering e.(1) and e.(2) N. December: Acme Corp.'s BEIP grant of 2015-06-01, processed now, is a prior
    # incentive of both: G-1 shows neither condition (a warning), G-2 is barred (Ineligible)
    write_workbook(inbox / "nov.xlsx", {"GrowNJ": [GROW_HEADERS, grow(), grow("G-2", satisfied="N", separate="N")]})
    run(inbox, outbox)
    write_workbook(inbox / "dec.xlsx", {"BEIP": [BEIP_HEADERS, beip()]})
    run(inbox, outbox)
    found = {r["Record ID"]: (r["Status Then"], r["Status Now"], r["Appeared"], r["Cleared"]) for r in changes(outbox)}
    assert found == {
        "G-1": ("OK", "Flagged", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", None),
        "G-2": ("OK", "Ineligible", "PRIOR_INCENTIVE_BARS_AGREEMENT", None),
    }
    # January: the BEIP grant withdrawn: both verdicts are again those November returned, nothing is listed
    withdraw_beip(outbox / "dec.annotated.xlsx", inbox / "dec.annotated.xlsx")
    run(inbox, outbox)
    assert changes(outbox) == []


def withdraw_beip(returned: Path, dest: Path) -> None:
    """The returned workbook's BEIP grant B-1 withdrawn, dropped back as `dest`."""
    from test_reviews import _decide

    _decide(returned, dest, {"B-1": ("Withdrawn", "JS", "agreement rescinded")}, sheet="BEIP")


def test_a_prior_incentive_withdrawn_clears_an_earlier_grow_nj_finding(tmp_path):
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, GROW_HEADERS, beip, grow

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    # October: Acme Corp.'s BEIP grant; November: ACME Corporation's Grow NJ application, returned with
    # PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN; December: the grant withdrawn, the application has no prior incentive now
    write_workbook(inbox / "oct.xlsx", {"BEIP": [BEIP_HEADERS, beip()]})
    run(inbox, outbox)
    write_workbook(inbox / "nov.xlsx", {"GrowNJ": [GROW_HEADERS, grow()]})
    run(inbox, outbox)
    withdraw_beip(outbox / "oct.annotated.xlsx", inbox / "oct.annotated.xlsx")
    run(inbox, outbox)
    (row,) = changes(outbox)
    assert (row["Record ID"], row["Status Then"], row["Status Now"], row["Findings Now"], row["Cleared"]) == (
        "G-1",
        "Flagged",
        "OK",
        None,
        "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN",
    )


# A run judges the prior-incentive findings of earlier Grow NJ applications again only for businesses an earlier
# application names: the whole portfolio's prior records are read only when the run names one of them.
# (earlier sheets and names, this run's sheets and names, listed now, prior records read by the report)
PRIORS_AGAIN = [
    # ACME Corporation and Acme Corp. are one business (the business-name rule): G-1 gains a prior incentive
    ([("GrowNJ", "G-1", "ACME Corporation")], [("BEIP", "B-1", "Acme Corp.")], {"G-1"}, True),
    # the earlier application is of another business: nothing to judge, nothing read
    ([("GrowNJ", "G-1", "Beta LLC")], [("BEIP", "B-1", "Acme Corp.")], set(), False),
    # no earlier application at all (only grants): nothing read
    ([("BEIP", "B-1", "Acme Corp.")], [("BEIP", "B-2", "Acme Corp.")], set(), False),
    # a first run: nothing read
    ([], [("GrowNJ", "G-1", "ACME Corporation"), ("BEIP", "B-1", "Acme Corp.")], set(), False),
    # G-1 sent again with the grant: its latest version is this run's, judged in its own workbook, not listed
    ([("GrowNJ", "G-1", "ACME Corporation")], [("GrowNJ", "G-1", "ACME Corporation"), ("BEIP", "B-1", "Acme Corp.")], set(), True),
]


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
@pytest.mark.parametrize(("earlier", "now", "listed", "read"), PRIORS_AGAIN)
def test_prior_incentives_are_judged_again_only_for_businesses_an_earlier_application_names(tmp_path, monkeypatch, earlier, now,
                                                                                             listed, read):  # fmt: skip
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, GROW_HEADERS, beip, grow

    import batch.run.ledger.reads as reads

    reports = []  # the report's reads of every prior record (the run's own records included)
    plain = reads.read_prior_records

    def spy(*args, including=None, **kwargs):
        if including:
            reports.append(including)
        return plain(*args, including=including, **kwargs)

    monkeypatch.setattr(reads, "read_prior_records", spy)
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()

    def sheets(rows):
        made = {"GrowNJ": [GROW_HEADERS], "BEIP": [BEIP_HEADERS]}
        for sheet, rid, name in rows:
            made[sheet].append(grow(rid, name) if sheet == "GrowNJ" else beip(rid, name))
        return {s: r for s, r in made.items() if len(r) > 1}

    if earlier:
        write_workbook(inbox / "nov.xlsx", sheets(earlier))
        run(inbox, outbox)
    reports.clear()
    write_workbook(inbox / "dec.xlsx", sheets(now))
    run(inbox, outbox)
    assert {r["Record ID"] for r in changes(outbox)} == listed
    assert bool(reports) == read
