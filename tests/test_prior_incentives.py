"""Prior incentives (C.34:1B-247 e.) through `njcredits run`: a BEIP, BRRAP or Grow NJ record of the
same workbook or of an earlier run in the ledger, named once, the workbook winning over the ledger."""

from __future__ import annotations

import datetime as dt
import shutil

import python_calamine
from click.testing import CliRunner
from conftest import write_workbook
from databases import ledger_query

from batch.cli import main

D = dt.date
BEIP_HEADERS = ["Grant ID", "Business Name", "Agreement Date", "Grant Form", "Withholdings Percentage", "Annual Withholdings ($)",
                "Grant Term (years)", "New Employees"]  # fmt: skip
BRRAP_HEADERS = ["Grant ID", "Business Name", "Employees Relocated or Retained", "Yearly Tax Credit Amount ($)", "First Tax Period"]
GROW_HEADERS = [
    "Project ID", "Business Name", "Statute Version", "Application Date", "County", "Area", "Business Type", "Premises Type",
    "Gross Leasable Area (sq ft)", "Capital Investment ($)", "New Full-Time Jobs", "Retained Full-Time Jobs",
    "Annual Withholdings ($)", "Net Benefit ($)", "Prior Incentive Obligations Satisfied", "Separate From Prior Award",
]  # fmt: skip


BEIP_DATE = D(2015, 6, 1)


def beip(gid="B-1", name="Acme Corp.", date=BEIP_DATE):
    return [gid, name, date, "Cash", 0.3, 100_000, 10, 10]


GROW_DATE = D(2016, 1, 4)


def grow(pid="G-1", name="ACME Corporation", satisfied="", separate="", date=GROW_DATE, county="Bergen", capex=1_000_000):
    # Priority, 50 new jobs: 50 x 3,000 = 150,000 a year; applied 2016-01-04, after the BEIP agreement of 2015-06-01
    return [pid, name, "2017", date, county, "Priority", "Other", "Non-Industrial Rehab", 10_000, capex, 50, 0,
            1_000_000, 100_000_000, satisfied, separate]  # fmt: skip


def run(inbox, out, *args):
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(out), "--as-of", "2026-11-30", *args])
    assert result.exit_code == 0, result.output
    return result


def grow_rows(path):
    sheet = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name("GrowNJ").to_python()
    return [dict(zip(sheet[0], r, strict=False)) for r in sheet[1:]]


def findings(path, code):
    sheet = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name("Findings").to_python()
    rows = [dict(zip(sheet[0], r, strict=False)) for r in sheet[1:]]
    return [r for r in rows if r["Code"] == code]


def test_prior_record_in_the_same_workbook(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    write_workbook(inbox / "acme.xlsx", {"GrowNJ": [GROW_HEADERS, grow()], "BEIP": [BEIP_HEADERS, beip()]})
    run(inbox, out)
    (row,) = grow_rows(out / "acme.annotated.xlsx")
    assert row["Status"] == "Flagged" and row["Findings"] == "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"
    assert row["Annual Credit ($)"] == 150_000
    (f,) = findings(out / "acme.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")
    assert f["Column"] == "Business Name" and f["Severity"] == "warning"
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert f"BEIP B-1 (Agreement Date 2015-06-01; acme.xlsx, run {today})" in f["Message"] and f["Citation"] == "C.34:1B-247 e."


def test_both_conditions_n_bar_the_agreement(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    rows = [grow("G-1", satisfied="N", separate="N"), grow("G-2", satisfied="Y"), grow("G-3", name="Other Business Inc")]
    write_workbook(inbox / "acme.xlsx", {"GrowNJ": [GROW_HEADERS, *rows], "BEIP": [BEIP_HEADERS, beip()]})
    run(inbox, out)
    got = {r["Project ID"]: r for r in grow_rows(out / "acme.annotated.xlsx")}
    assert (got["G-1"]["Status"], got["G-1"]["Findings"], got["G-1"]["Total Award ($)"]) == (
        "Ineligible",
        "PRIOR_INCENTIVE_BARS_AGREEMENT",
        0,
    )
    assert (got["G-2"]["Status"], got["G-2"]["Findings"], got["G-2"]["Total Award ($)"]) == ("OK", "PRIOR_INCENTIVE_RECEIVED", 1_500_000)
    assert (got["G-3"]["Status"], got["G-3"]["Findings"]) == ("OK", "")


def test_prior_record_through_the_ledger_and_a_round_trip(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    # October: the BEIP grant and a BRRAP grant of the same business (BRRAP first period 2015 <= 2016)
    write_workbook(
        inbox / "beip.xlsx", {"BEIP": [BEIP_HEADERS, beip()], "BRRAP": [BRRAP_HEADERS, ["R-1", "ACME CO", 300, 1_000_000, 2015]]}
    )
    run(inbox, out)
    # November: the Grow NJ application alone
    write_workbook(inbox / "grow.xlsx", {"GrowNJ": [GROW_HEADERS, grow()]})
    run(inbox, out)
    (f,) = findings(out / "grow.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert (
        f"BEIP B-1 (Agreement Date 2015-06-01; beip.xlsx, run {today})" in f["Message"]
        and f"BRRAP R-1 (First Tax Period 2015; beip.xlsx, run {today})" in f["Message"]
    )

    # the BEIP workbook's returned file dropped back in with the Grow NJ row: each record is named once
    # (the workbook's own row wins over the ledger's), the result is the first run's
    both = tmp_path / "both.xlsx"
    write_workbook(both, {"GrowNJ": [GROW_HEADERS, grow()], "BEIP": [BEIP_HEADERS, beip()]})
    shutil.copy(both, inbox / "both.xlsx")
    run(inbox, out)
    first = findings(out / "both.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")[0]["Message"]
    assert (
        first.count("BEIP B-1") == 1 and f"BEIP B-1 (Agreement Date 2015-06-01; both.xlsx, run {today})" in first and "BRRAP R-1" in first
    )
    shutil.copy(out / "both.annotated.xlsx", inbox / "both.annotated.xlsx")
    run(inbox, out)
    again = findings(out / "both.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")[0]["Message"]
    assert again.replace("both.annotated.xlsx", "both.xlsx") == first
    # and a forced rerun of the same file gives the same result
    shutil.copy(both, inbox / "both.xlsx")
    run(inbox, out, "--force")
    assert findings(out / "both.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")[0]["Message"] == first


def test_validate_reads_the_ledger(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    write_workbook(inbox / "beip.xlsx", {"BEIP": [BEIP_HEADERS, beip()]})
    run(inbox, out)
    grow_file = write_workbook(tmp_path / "grow.xlsx", {"GrowNJ": [GROW_HEADERS, grow()]})
    result = CliRunner().invoke(main, ["validate", str(grow_file), "--out", str(out), "--as-of", "2026-11-30"])
    assert "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN" in result.output and "BEIP B-1" in result.output


def test_ledger_before_the_migration_gains_the_new_columns(tmp_path):
    import sqlite3

    from batch.run.ledger import BASE_SCHEMA, SCHEMA_VERSION, Ledger

    path = tmp_path / "ledger.sqlite"
    with sqlite3.connect(path) as db:  # a ledger written by the first release: tables, no user_version
        db.executescript(BASE_SCHEMA)
        db.execute("INSERT INTO runs (run_id, started) VALUES ('old', '2026-01-01T00:00:00')")
        db.execute("INSERT INTO records (run_id, file, sheet, record_id, status) VALUES ('old', 'a.xlsx', 'BEIP', 'B-0', 'OK')")
    Ledger(path)
    Ledger(path)  # a second open applies nothing twice
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        cols = {r[1] for r in db.execute("PRAGMA table_info(records)")}
        assert {"business_name", "record_date"} <= cols
        # a record written before the migration carries no name and matches nothing
        assert db.execute("SELECT business_name FROM records WHERE record_id='B-0'").fetchone() == (None,)


def test_only_runs_ended_before_this_one_started_are_read(tmp_path):
    import sqlite3

    from batch.run.ledger import Ledger, read_prior_records

    path = tmp_path / "ledger.sqlite"
    Ledger(path)
    with sqlite3.connect(path) as db:
        for run, started, ended in (("done", "2026-10-01T00:00:00", "2026-10-01T01:00:00"), ("going", "2026-11-30T00:00:00", None),
                                    ("me", "2026-11-30T00:00:01", None)):  # fmt: skip
            db.execute("INSERT INTO runs (run_id, started, ended) VALUES (?,?,?)", (run, started, ended))
            db.execute(
                "INSERT INTO records (run_id, file, sheet, record_id, status, business_name, record_date, year)"
                " VALUES (?, 'b.xlsx', 'BEIP', ?, 'OK', 'Acme', '2015-01-01', 2015)",
                (run, "B-" + run),
            )
    # a run still going on (another inbox sharing the ledger) is never read, so the result never depends on timing
    assert read_prior_records(path, ("BEIP",), exclude_run="me")["record_id"].tolist() == ["B-done"]
    assert read_prior_records(path, ("BEIP",))["record_id"].tolist() == ["B-done"]


def test_the_latest_version_of_a_record_decides_even_without_a_name(tmp_path):
    import sqlite3

    from batch.run.ledger import Ledger, read_prior_records

    path = tmp_path / "ledger.sqlite"
    Ledger(path)
    with sqlite3.connect(path) as db:
        for run, started in (("r1", "2026-09-01T00:00:00"), ("r2", "2026-10-01T00:00:00")):
            db.execute("INSERT INTO runs (run_id, started, ended) VALUES (?,?,?)", (run, started, started))
        # G-0 named in September, restated in October with its Business Name blank: it no longer names a business
        for run, name in (("r1", "Acme"), ("r2", None)):
            db.execute(
                "INSERT INTO records (run_id, file, sheet, record_id, status, business_name, record_date, year)"
                " VALUES (?, 'g.xlsx', 'GrowNJ', 'G-0', 'OK', ?, '2015-06-01', 2015)",
                (run, name),
            )
        db.execute(
            "INSERT INTO records (run_id, file, sheet, record_id, status, business_name, record_date, year)"
            " VALUES ('r1', 'g.xlsx', 'GrowNJ', 'G-1', 'OK', 'Acme', '2015-07-01', 2015)"
        )
    assert read_prior_records(path, ("GrowNJ",))["record_id"].tolist() == ["G-1"]


def test_an_unreadable_ledger_is_one_clear_line(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    (out / ".njcredits").mkdir(parents=True)
    (out / ".njcredits" / "ledger.sqlite").write_text("not a database")
    grow_file = write_workbook(inbox / "grow.xlsx", {"GrowNJ": [GROW_HEADERS, grow()]})
    # run: the environment stopped it (exit 3); history: an error (exit 1)
    for args, code in ((["run", str(inbox), "--out", str(out)], 3), (["history", "--out", str(out)], 1)):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == code and "cannot be opened" in result.output and "Traceback" not in result.output, result.output
    assert grow_file.exists()  # nothing was moved
    result = CliRunner().invoke(main, ["validate", str(grow_file), "--out", str(out)])
    assert result.exit_code == 0 and "Prior incentives of earlier runs were not checked" in result.output, result.output


def test_prior_grow_nj_awards_of_the_workbook_and_of_earlier_runs(tmp_path):

    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    today = dt.datetime.now(dt.UTC).date().isoformat()
    # run 1: G-0 (2015-06-01); G-5 (2015-07-01) Invalid (no such county); G-6 (2015-08-01) Ineligible
    # (capex $399,999.99 below $40 x 10,000 = $400,000). G-6 has the prior G-0, not G-5 (Invalid).
    write_workbook(
        inbox / "first.xlsx",
        {"GrowNJ": [GROW_HEADERS, grow("G-0", date=D(2015, 6, 1)), grow("G-5", date=D(2015, 7, 1), county="Nowhere"),
                    grow("G-6", date=D(2015, 8, 1), capex=399_999.99)]},
    )  # fmt: skip
    run(inbox, out)
    got = {r["Project ID"]: r for r in grow_rows(out / "first.annotated.xlsx")}
    assert [got[g]["Status"] for g in ("G-0", "G-5", "G-6")] == ["OK", "Invalid", "Ineligible"]
    (f,) = findings(out / "first.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")
    assert f["Record ID"] == "G-6" and f["Column"] == "Business Name"
    g0 = f"GrowNJ G-0 (Application Date 2015-06-01; first.xlsx, run {today})"
    assert f"received {g0} before its application of 2015-08-01" in f["Message"]
    # the ledger keeps the Business Name, status and date of the Grow NJ records
    query = "SELECT record_id, business_name, status, record_date FROM records WHERE sheet='GrowNJ' ORDER BY record_id"
    kept = ledger_query(out / ".njcredits" / "ledger.sqlite", query)
    assert kept == [("G-0", "ACME Corporation", "OK", "2015-06-01"), ("G-5", "ACME Corporation", "Invalid", "2015-07-01"),
                    ("G-6", "ACME Corporation", "Ineligible", "2015-08-01")]  # fmt: skip

    # run 2: G-1 (2016-01-04) of the same business: the ledger's G-0 counts, G-5 (Invalid) and G-6 (Ineligible) do not
    write_workbook(inbox / "second.xlsx", {"GrowNJ": [GROW_HEADERS, grow("G-1", name="Acme Corp.")]})
    run(inbox, out)
    (f,) = findings(out / "second.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")
    assert f["Record ID"] == "G-1" and "G-5" not in f["Message"] and "G-6" not in f["Message"]
    assert f"received GrowNJ G-0 (Application Date 2015-06-01; first.xlsx, run {today}) before" in f["Message"]

    # run 3: G-0 restated, now dated 2016-02-01. The ledger's G-0 is its own earlier version, not another
    # project; G-1 (2016-01-04, second.xlsx) is before it and counts.
    write_workbook(inbox / "third.xlsx", {"GrowNJ": [GROW_HEADERS, grow("G-0", date=D(2016, 2, 1))]})
    run(inbox, out)
    (f,) = findings(out / "third.annotated.xlsx", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN")
    assert f["Record ID"] == "G-0" and "GrowNJ G-0" not in f["Message"]
    g1 = f"GrowNJ G-1 (Application Date 2016-01-04; second.xlsx, run {today})"
    assert f"received {g1} before its application of 2016-02-01" in f["Message"]


def test_a_blank_statute_version_is_computed_under_2017_with_a_warning(tmp_path):
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    blank = grow("G-1", name="Solo LLC")
    blank[GROW_HEADERS.index("Statute Version")] = ""
    write_workbook(inbox / "solo.xlsx", {"GrowNJ": [GROW_HEADERS, blank, grow("G-2", name="Other LLC")]})
    run(inbox, out)
    got = {r["Project ID"]: r for r in grow_rows(out / "solo.annotated.xlsx")}
    g1 = got["G-1"]
    assert (g1["Status"], g1["Findings"], g1["Annual Credit ($)"]) == ("Flagged", "STATUTE_VERSION_NOT_GIVEN", 150_000)
    assert got["G-1"]["Calculation"].startswith("2017 text") and (got["G-2"]["Status"], got["G-2"]["Findings"]) == ("OK", "")
    (f,) = findings(out / "solo.annotated.xlsx", "STATUTE_VERSION_NOT_GIVEN")
    assert (f["Record ID"], f["Column"], f["Severity"]) == ("G-1", "Statute Version", "warning")
    assert "computed under the 2017 text" in f["Message"] and "the reviewer confirms which text governs the application" in f["Message"]
