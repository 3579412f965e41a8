"""The monthly batch end to end, in temporary folders: drop folder, ledger, lock, watch, run report."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import launcher
import pytest
import python_calamine
import samples
from click.testing import CliRunner
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook
from databases import ledger_query

from batch.cli import main
from batch.run.config import load
from batch.run.runner import run_batch


def transfers_book(path: Path, rows: list[list]) -> Path:
    return write_workbook(path, {"Transfers": [TRANSFER_HEADERS, *rows]})


def transfer(tid, credit, paid, date=dt.date(2026, 1, 5)):
    return [tid, "Grow NJ", "C-" + tid, "Seller LLC", "Buyer Inc.", date, credit, paid, CERTIFICATE]


def folders(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    return inbox, outbox


def settings_for(tmp_path, **flags):
    return load(cwd=tmp_path, inbox=tmp_path / "inbox", outbox=tmp_path / "outbox", workers=2, **flags)


def ledger_rows(outbox: Path, query: str):
    return ledger_query(outbox / ".njcredits" / "ledger.sqlite", query)


def test_good_bad_and_duplicate_files(tmp_path):
    inbox, outbox = folders(tmp_path)
    transfers_book(inbox / "march.xlsx", [transfer("T-1", 30_000, 27_000), transfer("T-2", 20_000, 15_000)])
    shutil.copy(inbox / "march.xlsx", inbox / "march copy.xlsx")
    (inbox / "broken.xlsx").write_text("not a workbook")
    (inbox / "notes.txt").write_text("meeting notes")
    names = sorted(p.name for p in inbox.iterdir())
    outcome = run_batch(settings_for(tmp_path), echo=lambda *_: None)

    processed = sorted(p.name for p in (inbox / "processed" / outcome.run_id).iterdir())
    failed = sorted(p.name for p in (inbox / "failed" / outcome.run_id).iterdir() if not p.name.endswith(".reason.txt"))
    assert sorted(processed + failed) == names and not set(processed) & set(failed)
    assert [p.name for p in inbox.iterdir() if p.is_file() and not p.name.startswith(".")] == []
    assert failed == ["broken.xlsx", "notes.txt"]
    reason = (inbox / "failed" / outcome.run_id / "broken.xlsx.reason.txt").read_text()
    assert "is not an Excel workbook" in reason and reason.count("\n") == 1
    rows = dict(ledger_rows(outbox, "SELECT name, status FROM files"))
    assert rows == {"march copy.xlsx": "processed", "march.xlsx": "skipped", "broken.xlsx": "failed", "notes.txt": "failed"} or rows == {
        "march copy.xlsx": "skipped",
        "march.xlsx": "processed",
        "broken.xlsx": "failed",
        "notes.txt": "failed",
    }
    assert (outbox / f"run-{outcome.run_id}.summary.xlsx").exists()
    assert outcome.failed == 2


def test_rerun_skips_and_force_reprocesses(tmp_path):
    inbox, outbox = folders(tmp_path)
    book = transfers_book(tmp_path / "april.xlsx", [transfer("T-1", 30_000, 27_000)])
    shutil.copy(book, inbox / "april.xlsx")
    first = run_batch(settings_for(tmp_path), echo=lambda *_: None)
    shutil.copy(book, inbox / "april.xlsx")  # the same file dropped again
    second = run_batch(settings_for(tmp_path), echo=lambda *_: None)
    assert [f.status for f in second.files] == ["skipped"] and first.run_id in second.files[0].reason
    assert (inbox / "processed" / second.run_id / "april.xlsx").exists()
    shutil.copy(book, inbox / "april.xlsx")
    third = run_batch(settings_for(tmp_path, force=True), echo=lambda *_: None)
    assert [f.status for f in third.files] == ["processed"]
    # the earlier output was moved aside, not overwritten
    assert (outbox / "april.annotated.xlsx").exists() and (outbox / "previous" / third.run_id / "april.annotated.xlsx").exists()


def test_keep_inputs_leaves_files_in_place(tmp_path):
    inbox, outbox = folders(tmp_path)
    transfers_book(inbox / "may.xlsx", [transfer("T-1", 30_000, 27_000)])
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox), "--keep-inputs"])
    assert result.exit_code == 0, result.output
    assert (inbox / "may.xlsx").exists() and not (inbox / "processed").exists()


def test_history_lists_runs_and_files(tmp_path):
    inbox, outbox = folders(tmp_path)
    transfers_book(inbox / "june.xlsx", [transfer("T-1", 30_000, 27_000)])
    outcome = run_batch(settings_for(tmp_path), echo=lambda *_: None)
    listing = CliRunner().invoke(main, ["history", "--out", str(outbox)])
    assert outcome.run_id in listing.output
    files = CliRunner().invoke(main, ["history", "--out", str(outbox), "--run", outcome.run_id])
    assert "june.xlsx" in files.output and "processed" in files.output


def test_config_file_and_flags(tmp_path):
    (tmp_path / "njcredits.toml").write_text('inbox = "drop"\noutbox = "results"\nworkers = 1\n')
    s = load(cwd=tmp_path)
    assert (s.inbox, s.outbox, s.workers) == (tmp_path / "drop", tmp_path / "results", 1)
    assert s.ledger == tmp_path / "results" / ".njcredits" / "ledger.sqlite" and s.archive == tmp_path / "drop"
    s = load(cwd=tmp_path, outbox=tmp_path / "elsewhere", workers=3)
    assert (s.outbox, s.workers) == (tmp_path / "elsewhere", 3)
    (tmp_path / "njcredits.toml").write_text('inbx = "typo"\n')
    with pytest.raises(Exception, match="unknown settings"):
        load(cwd=tmp_path)


def test_killed_run_leaves_no_partial_output_and_the_next_run_completes(tmp_path):
    inbox, outbox = folders(tmp_path)
    # big enough that writing its returned workbook takes a while (about half a second here), the
    # window the kill must land in: the partial output appears when the writing starts
    rows = [transfer(f"T-{i}", 30_000 + i, 27_000) for i in range(10_000)]
    transfers_book(inbox / "big.xlsx", rows)
    proc = launcher.popen(
        ["run", inbox, "--out", outbox, "--workers", "1"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not list(outbox.glob(".*.partial")):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (outbox / "big.annotated.xlsx").exists()  # nothing under the final name
    # the input waits in the killed run's staging folder, neither processed nor failed
    assert not (inbox / "big.xlsx").exists() and [p.name for p in inbox.glob(".njcredits/staging/*/*/*.xlsx")] == ["big.xlsx"]
    assert not (inbox / "processed").exists() and not (inbox / "failed").exists()
    outcome = run_batch(settings_for(tmp_path, wait=True), echo=lambda *_: None)  # puts it back, then processes it
    assert [f.status for f in outcome.files] == ["processed"]
    assert not list(outbox.glob(".*.partial"))
    book = python_calamine.CalamineWorkbook.from_path(str(outbox / "big.annotated.xlsx"))
    assert len(book.get_sheet_by_name("Transfers").to_python()) == 10_001


def test_two_concurrent_runs_do_not_process_a_file_twice(tmp_path):
    inbox, outbox = folders(tmp_path)
    for i in range(4):
        transfers_book(inbox / f"file{i}.xlsx", [transfer(f"T-{i}-{j}", 30_000 + j, 27_000) for j in range(2_000)])
    cmd = ["run", inbox, "--out", outbox, "--workers", "1", "--wait"]
    a = launcher.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    b = launcher.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out_a, out_b = a.communicate(timeout=300)[0], b.communicate(timeout=300)[0]
    assert a.returncode == 0 and b.returncode == 0, (out_a, out_b)
    processed = ledger_rows(outbox, "SELECT name FROM files WHERE status='processed'")
    assert sorted(n for (n,) in processed) == [f"file{i}.xlsx" for i in range(4)]
    assert len(ledger_rows(outbox, "SELECT run_id FROM runs")) == 2


def test_second_run_without_wait_exits_with_a_message(tmp_path):
    import fcntl

    inbox, outbox = folders(tmp_path)
    with open(inbox / ".njcredits.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        result = launcher.run(["run", inbox, "--out", outbox], timeout=60)
    assert result.returncode == 1 and "Another njcredits run is processing" in result.stderr and "--wait" in result.stderr


def test_watch_waits_for_a_file_written_slowly(tmp_path):
    from batch.run.watch import watch_inbox

    inbox, outbox = folders(tmp_path)
    data = transfers_book(tmp_path / "slow.xlsx", [transfer("T-1", 30_000, 27_000)]).read_bytes()
    stop = threading.Event()
    log: list[str] = []
    settings = settings_for(tmp_path, settle_seconds=1.0)
    watcher = threading.Thread(target=watch_inbox, args=(settings, log.append, stop), daemon=True)
    watcher.start()
    time.sleep(0.5)
    target = inbox / "slow.xlsx"
    with open(target, "wb") as fh:
        for i in range(0, len(data), len(data) // 4 + 1):  # four chunks, 0.4 s apart: longer than it takes to look
            fh.write(data[i : i + len(data) // 4 + 1])
            fh.flush()
            time.sleep(0.4)
    deadline = time.time() + 30
    while time.time() < deadline and not (outbox / "slow.annotated.xlsx").exists():
        time.sleep(0.1)
    (inbox / "junk.xlsx").write_text("not a workbook")  # a bad file does not stop the watcher
    transfers_book(tmp_path / "next.xlsx", [transfer("T-9", 40_000, 36_000)])
    shutil.move(str(tmp_path / "next.xlsx"), str(inbox / "next.xlsx"))
    while time.time() < deadline and not (outbox / "next.annotated.xlsx").exists():
        time.sleep(0.1)
    stop.set()
    watcher.join(timeout=10)
    assert not watcher.is_alive()
    statuses = ledger_rows(outbox, "SELECT name, status FROM files ORDER BY rowid")
    assert ("slow.xlsx", "processed") in statuses and ("next.xlsx", "processed") in statuses
    assert ("junk.xlsx", "failed") in statuses
    assert [s for n, s in statuses if n == "slow.xlsx"] == ["processed"]  # read once, and only when complete


def test_changes_sheet_after_a_second_run(tmp_path):
    inbox, outbox = folders(tmp_path)
    transfers_book(inbox / "july.xlsx", [transfer("T-1", 30_000, 27_000), transfer("T-2", 50_000, 30_000), transfer("T-3", 40_000, 36_000)])
    run_batch(settings_for(tmp_path), echo=lambda *_: None)
    # next month: T-1's amount changed, T-2's consideration fixed (violation resolved), T-4 new
    transfers_book(
        inbox / "august.xlsx",
        [
            transfer("T-1", 35_000, 31_500),
            transfer("T-2", 50_000, 40_000),
            transfer("T-3", 40_000, 36_000),
            transfer("T-4", 60_000, 54_000),
        ],
    )
    second = run_batch(settings_for(tmp_path), echo=lambda *_: None)
    book = python_calamine.CalamineWorkbook.from_path(str(second.report))
    grid = book.get_sheet_by_name("Changes").to_python()
    rows = {r[1]: dict(zip(grid[0], r, strict=False)) for r in grid[1:]}
    assert set(rows) == {"T-1", "T-2", "T-4"}  # T-3 unchanged
    assert rows["T-1"]["Change"] == "Award changed"
    assert (rows["T-1"]["Old Award ($)"], rows["T-1"]["New Award ($)"]) == (30_000, 35_000)
    assert rows["T-2"]["Change"] == "Status changed; Findings cleared"
    assert rows["T-2"]["Findings Cleared"] == "CONSIDERATION_BELOW_75PCT" and rows["T-2"]["New Status"] == "OK"
    assert rows["T-4"]["Change"] == "New record"
    assert book.sheet_names == ["Files", "Portfolio", "BRRAP Aggregate", "Decisions", "Changes", "Portfolio changes", "Run"]


def test_run_report_checks_brrap_across_workbooks(tmp_path):
    inbox, outbox = folders(tmp_path)
    headers = ["Grant ID", "Business Name", "Employees Relocated or Retained", "Yearly Tax Credit Amount ($)", "First Tax Period"]
    # 12,000,000 in one workbook and 9,000,000 in another, both in 2025: 21,000,000 across the run
    write_workbook(inbox / "a.xlsx", {"BRRAP": [headers, ["G-1", "Alpha", 100, 9_000_000, 2025], ["G-2", "Beta", 100, 3_000_000, 2025]]})
    write_workbook(inbox / "b.xlsx", {"BRRAP": [headers, ["G-3", "Gamma", 100, 9_000_000, 2025]]})
    outcome = run_batch(settings_for(tmp_path), echo=lambda *_: None)
    grid = python_calamine.CalamineWorkbook.from_path(str(outcome.report)).get_sheet_by_name("BRRAP Aggregate").to_python()
    row = next(r for r in grid if r[0] == "2025")
    assert row[1:] == [3, 2, 21_000_000, 20_000_000, "OVER"]


def test_demo_inbox_is_never_moved(tmp_path):
    samples_dir = samples.SAMPLES
    before = sorted(p.name for p in samples_dir.iterdir())
    for _ in range(2):
        result = CliRunner().invoke(main, ["run", str(samples_dir), "--out", str(tmp_path / "out")])
        assert result.exit_code == 0 and f"{len(samples.workbooks())} processed, 0 skipped, 0 failed" in result.output
    assert sorted(p.name for p in samples_dir.iterdir()) == before
