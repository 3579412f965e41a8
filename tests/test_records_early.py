"""A large file's records recorded in the ledger while its worker writes it (`Run.record_early`,
`Ledger.add_records`): each record kept once when the file is processed, none kept when it is not,
none left by a run killed after recording them, and the same records as when they come with the
file's result."""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import io
import os
import shutil
import sqlite3
import uuid
from pathlib import Path
from types import SimpleNamespace

import openpyxl
import pandas as pd
import pytest
from conftest import write_workbook
from databases import ledger_of, ledger_query
from test_faults import assert_settled, book, killed, no_process_left, run_cli

from batch.pipeline import joined_records
from batch.run import workers
from batch.run.config import load
from batch.run.ledger import Ledger, read_versions
from batch.run.runner import run_batch

SAMPLES = Path(__file__).parents[1] / "sample_inputs"
AS_OF = dt.date(2026, 11, 30)
RECORDS = pd.DataFrame(
    {"sheet": ["Transfers", "Transfers"], "record_id": ["T-1", "T-2"], "status": ["OK", "Flagged"], "fields": ["{}", "{}"]}
)


def begun(tmp_path: Path) -> tuple[Ledger, Path]:
    """A ledger (on the test's database) with run R1 begun and the records of a.xlsx recorded as its
    worker writes it; and where it is."""
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(ledger_of(path))
    ledger.start_run("R1", None, "0", "/in", "/out")
    ledger.add_records("R1", "a.xlsx", RECORDS)
    return ledger, path


def kept(path: Path) -> list[tuple]:
    """(file, records) of the ledger at `path`, by file."""
    return [tuple(r) for r in ledger_query(path, "SELECT file, COUNT(*) FROM records GROUP BY file ORDER BY file")]


# how the run records the file after its records were recorded, and how many of them stay
ENDINGS = [
    ({"status": "processed"}, [("a.xlsx", 2)]),  # inputs kept: recorded processed at once
    ({"status": "archiving", "final_status": "processed"}, [("a.xlsx", 2)]),  # begun before the archive move
    ({"status": "archiving", "final_status": "failed"}, []),
    ({"status": "failed"}, []),  # the file failed as it was written (a crash, the timeout)
    ({"status": "returned"}, []),  # the environment failed: back to the inbox
]


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize(("ending", "left"), ENDINGS)
def test_records_recorded_before_their_file_stay_only_when_it_is_processed(tmp_path, ending, left):
    ledger, path = begun(tmp_path)
    ledger.add_file("R1", {"name": "a.xlsx", **ending}, RECORDS, recorded=True)
    assert kept(path) == left
    # the group keys were recorded with them, once (none here: the records name no group)
    assert ledger_query(path, "SELECT COUNT(*) FROM record_keys") == [(0,)]


@pytest.mark.usefixtures("backend")
def test_a_file_read_again_replaces_the_records_it_recorded_before(tmp_path):
    # its worker stopped after sending them (a memory error in a worker that had read other files):
    # read again in a new worker, it sends them again
    ledger, path = begun(tmp_path)
    ledger.add_records("R1", "a.xlsx", RECORDS.iloc[:1], again=True)
    ledger.add_file("R1", {"name": "a.xlsx", "status": "processed"}, RECORDS.iloc[:1], recorded=True)
    assert kept(path) == [("a.xlsx", 1)]


@pytest.mark.usefixtures("backend")
def test_records_of_an_earlier_reading_the_ledger_could_not_replace_are_replaced_as_the_file_is_recorded(tmp_path):
    # read again, the file's records could not be recorded early (the ledger failed then): those of
    # its first reading are `stale`, and give way to the ones sent with its result
    ledger, path = begun(tmp_path)
    ledger.add_file("R1", {"name": "a.xlsx", "status": "processed"}, RECORDS.iloc[:1], stale=True)
    assert kept(path) == [("a.xlsx", 1)]


@pytest.mark.usefixtures("backend")
def test_the_records_of_a_file_a_killed_run_never_recorded_are_removed_by_the_next_run(tmp_path):
    ledger, path = begun(tmp_path)
    ledger.add_file("R1", {"name": "a.xlsx", "status": "processed"}, RECORDS, recorded=True)
    ledger.add_records("R1", "b.xlsx", RECORDS)  # the run killed as b.xlsx was written
    ledger.add_file("R1", {"name": "c.xlsx", "status": "processed"}, RECORDS)  # recorded with its file
    assert kept(path) == [("a.xlsx", 2), ("b.xlsx", 2), ("c.xlsx", 2)]
    ledger.close_interrupted("R1", None, "stopped before its end")
    assert kept(path) == [("a.xlsx", 2), ("c.xlsx", 2)]


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize(("early", "left"), [(True, [("a.xlsx", 2)]), (False, [("a.xlsx", 2), ("b.xlsx", 2)])])
def test_a_run_that_recorded_records_early_ends_without_those_of_a_file_it_could_not_record(tmp_path, early, left):
    # b.xlsx: its records recorded as it was written, then the ledger failed as the file was
    # recorded (no row of it); the run's end removes them. A run that recorded none early
    # (`early` False) does not look
    ledger, path = begun(tmp_path)
    ledger.add_file("R1", {"name": "a.xlsx", "status": "processed"}, RECORDS, recorded=True)
    ledger.add_records("R1", "b.xlsx", RECORDS)
    ledger.end_run("R1", None, {}, None, {}, early=early)
    assert kept(path) == left


@pytest.mark.usefixtures("backend")
def test_records_of_a_run_that_has_not_ended_are_read_by_no_other_run(tmp_path):
    # R1 recorded a.xlsx's records as its worker wrote it and has not ended (killed, or going on on
    # another machine): R2, of the same team, reads none of them, neither as their latest earlier
    # appearance (its report's Changes) nor as earlier versions (which groups they were in); its own
    # versions it reads. Once R1 ends, R3 reads R1's (R2 has not ended)
    ledger, path = begun(tmp_path)
    ids = RECORDS[["sheet", "record_id"]]
    ledger.start_run("R2", None, "0", "/in", "/out")
    ledger.add_file("R2", {"name": "b.xlsx", "status": "processed"}, RECORDS)
    assert ledger.previous_records("R2").empty
    assert read_versions(ledger_of(path), ("/in",), ids, exclude_run="R2").empty
    assert len(read_versions(ledger_of(path), ("/in",), ids, including="R2")) == 2
    ledger.add_file("R1", {"name": "a.xlsx", "status": "processed"}, RECORDS, recorded=True)
    ledger.end_run("R1", None, {}, None, {}, early=True)
    ledger.start_run("R3", None, "0", "/in", "/out")
    ledger.add_file("R3", {"name": "c.xlsx", "status": "processed"}, RECORDS)
    assert sorted(ledger.previous_records("R3")["run_id"]) == ["R1", "R1"]
    assert len(read_versions(ledger_of(path), ("/in",), ids, exclude_run="R3")) == 2


def _run(
    tmp_path: Path,
    name: str,
    sources: list[Path],
    threshold: int,
    monkeypatch,
    fails: bool = False,
    beside: int | None = None,
    block: int | None = None,
    fail_after: int | None = None,
    processed: bool = True,
) -> SimpleNamespace:
    """A run of copies of `sources` with records sent early from `threshold` records on: the files
    whose records were recorded early and how many (`early`: a list of each block's records for
    those sent a block at a time), and the ledger's records (`records`) and group keys (`keys`).
    `fails`: the ledger refuses each early recording (after the spy notes it). `beside`: sent by the
    worker's copy up to this many (`RECORDS_BESIDE_UP_TO`), a block of `block` at a time above it
    (`RECORD_BLOCK`); `fail_after`: the ledger fails as it takes the block after this many.
    `processed`: every file must be processed (`outcome`: the run's)."""
    inbox, outbox = tmp_path / name / "inbox", tmp_path / name / "outbox"
    inbox.mkdir(parents=True)
    for src in sources:
        shutil.copy(src, inbox / src.name)
    monkeypatch.setattr(workers, "EARLY_RECORDS", threshold)
    if beside is not None:
        monkeypatch.setattr(workers, "RECORDS_BESIDE_UP_TO", beside)
    if block is not None:
        monkeypatch.setattr(workers, "RECORD_BLOCK", block)
    early, real = [], getattr(Ledger.add_records, "real", Ledger.add_records)  # not the spy of an earlier run of the test

    def counted(blocks, sizes: list[int]):
        for block in blocks:
            if len(sizes) == fail_after:
                raise sqlite3.OperationalError("database is locked")
            sizes.append(len(block))
            yield block

    def add_records(self, run_id, file, records, **kwargs):
        if not isinstance(records, pd.DataFrame):  # a block at a time, as the worker sends them
            early.append((file, sizes := []))
            records = counted(records, sizes)
        else:
            early.append((file, len(records)))
        if fails:
            raise sqlite3.OperationalError("database is locked")
        return real(self, run_id, file, records, **kwargs)

    add_records.real = real
    monkeypatch.setattr(Ledger, "add_records", add_records)
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1, as_of="2026-11-30"))
    if processed:
        assert {o.status for o in outcome.files} == {"processed"}, [(o.name, o.reason) for o in outcome.files]
        assert outcome.report is not None and outcome.report.exists()  # written from what the run kept of the records
    ledger = outbox / ".njcredits" / "ledger.sqlite"
    columns = "file, sheet, record_id, status, award_cents, codes, area, year, business_name, record_date, fields, inputs, team"
    records = pd.DataFrame(ledger_query(ledger, f"SELECT {columns} FROM records ORDER BY file, rowid"), columns=columns.split(", "))
    keys = sorted(ledger_query(ledger, "SELECT sheet, record_id, grouping, key FROM record_keys"))
    return SimpleNamespace(early=early, records=records, keys=keys, outcome=outcome, inbox=inbox, outbox=outbox)


@pytest.mark.usefixtures("backend")
def test_a_large_files_records_recorded_as_it_is_written_are_those_it_would_have_sent_with_its_result(tmp_path, monkeypatch):
    # 50 rows: sent early from 50 records on, not from 51 (each record once either way)
    source = book(tmp_path / "a.xlsx", rows=50)
    at = _run(tmp_path, "at", [source], 50, monkeypatch)
    above = _run(tmp_path, "above", [source], 51, monkeypatch)
    assert at.early == [("a.xlsx", 50)] and above.early == []
    assert len(at.records) == 50 and at.records["record_id"].is_unique
    pd.testing.assert_frame_equal(at.records.drop(columns="team"), above.records.drop(columns="team"))
    # a ledger that cannot take them as the file is written takes them with the file, once
    failed = _run(tmp_path, "failed", [source], 50, monkeypatch, fails=True)
    assert failed.early == [("a.xlsx", 50)]
    pd.testing.assert_frame_equal(failed.records.drop(columns="team"), above.records.drop(columns="team"))


@pytest.mark.usefixtures("backend")
def test_a_large_files_records_sent_a_block_at_a_time_are_those_it_would_have_sent_whole(tmp_path, monkeypatch):
    # 50 Transfers rows (each record in a group of its certificate's): above 49 made and sent by the
    # worker a block of 7 at a time (7 x 7 + 1), each inserted as it comes; up to 50 by the copy,
    # whole; the ledger's records and group keys the same as those sent with the result
    source = book(tmp_path / "a.xlsx", rows=50)
    blocks = _run(tmp_path, "blocks", [source], 1, monkeypatch, beside=49, block=7)
    whole = _run(tmp_path, "whole", [source], 1, monkeypatch, beside=50, block=7)
    above = _run(tmp_path, "above", [source], 51, monkeypatch)
    assert blocks.early == [("a.xlsx", [7] * 7 + [1])] and whole.early == [("a.xlsx", 50)] and above.early == []
    assert len(above.records) == 50 and len(above.keys) >= 50
    for run in (blocks, whole):
        pd.testing.assert_frame_equal(run.records.drop(columns="team"), above.records.drop(columns="team"))
        assert run.keys == above.keys


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("fail_after", [0, 3])
def test_a_file_whose_records_the_ledger_fails_to_take_block_by_block_goes_back_to_the_inbox(tmp_path, monkeypatch, fail_after):
    # the ledger fails as it takes the first block, or the fourth: the blocks before it were let go
    # as they were inserted, so the file cannot be recorded with its records; it goes back to the
    # inbox, its output not placed, none of its records left; the next run processes it
    source = book(tmp_path / "a.xlsx", rows=50)
    failed = _run(tmp_path, "failed", [source], 1, monkeypatch, beside=49, block=7, fail_after=fail_after, processed=False)
    assert failed.early == [("a.xlsx", [7] * fail_after)]
    (outcome,) = failed.outcome.files
    assert outcome.status == "returned"
    assert outcome.reason.startswith("the ledger cannot be written (database is locked)"), outcome.reason
    assert outcome.reason.endswith("the file stays in the inbox for the next run."), outcome.reason
    assert (failed.inbox / "a.xlsx").read_bytes() == source.read_bytes()
    assert not list(failed.outbox.glob("a*")) and failed.records.empty and failed.keys == []
    monkeypatch.setattr(Ledger, "add_records", Ledger.add_records.real)  # the ledger well again; still a block at a time
    again = run_batch(load(cwd=tmp_path, inbox=failed.inbox, outbox=failed.outbox, workers=1, as_of="2026-11-30"))
    assert [o.status for o in again.files] == ["processed"]
    ledger = failed.outbox / ".njcredits" / "ledger.sqlite"
    assert ledger_query(ledger, "SELECT file, COUNT(*) FROM records GROUP BY file") == [("a.xlsx", 50)]


class _FullDisk(io.BytesIO):
    """A spool on a disk that fills after 1,000 bytes."""

    def write(self, data) -> int:
        if self.tell() + len(data) > 1_000:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(data)


@pytest.mark.parametrize("spool", ["full", "none"])
def test_records_a_block_at_a_time_without_their_spool(tmp_path, monkeypatch, spool):
    # the run writes the blocks' pieces to an unnamed file in the outbox as they come, then inserts
    # each from there (the ledger's transaction begun once they are all in it). A disk that fills as
    # they are written sends the file back, saying so, before the ledger is asked anything; where no
    # such file can be made, they are inserted as they come off the pipe, the same records
    source = book(tmp_path / "a.xlsx", rows=50)

    @contextlib.contextmanager
    def spooled(folder):
        yield _FullDisk() if spool == "full" else None

    monkeypatch.setattr(workers, "_spool", spooled)
    run = _run(tmp_path, spool, [source], 1, monkeypatch, beside=49, block=7, processed=False)
    (outcome,) = run.outcome.files
    if spool == "full":
        assert run.early == [] and outcome.status == "returned" and run.records.empty  # the ledger never asked
        assert outcome.reason.startswith("no space left on the disk of the outbox "), outcome.reason
        assert (run.inbox / "a.xlsx").exists() and not list(run.outbox.glob("a*"))
    else:
        assert run.early == [("a.xlsx", [7] * 7 + [1])] and outcome.status == "processed" and len(run.records) == 50


def _one_sheet(src: Path, sheet: str, path: Path) -> Path:
    """A workbook of one sheet of a sample, its cells' values as they are."""
    grid = [list(row) for row in openpyxl.load_workbook(src, read_only=True)[sheet].iter_rows(values_only=True)]
    return write_workbook(path, {sheet: grid})


def test_in_a_run_of_several_only_a_file_that_waits_for_no_other_records_its_records_early(tmp_path, monkeypatch):
    # Transfers' and Grow NJ's rules read the run's other workbooks (each waits for the run's
    # decision, and may be processed again): their records are recorded with them. Emerge's records
    # are none the run holds, and BEIP's are only read by others: neither waits
    sources = [
        SAMPLES / "grow-nj-2026-11.xlsx",
        SAMPLES / "transfers-2026-11.xlsx",
        _one_sheet(SAMPLES / "emerge-gsgz-compliance-2026-11.xlsx", "Emerge", tmp_path / "emerge.xlsx"),
        _one_sheet(SAMPLES / "beip-brrap-erg-2026-11.xlsx", "BEIP", tmp_path / "beip.xlsx"),
    ]
    run = _run(tmp_path, "several", sources, 1, monkeypatch)
    early, records = run.early, run.records
    assert sorted(f for f, _n in early) == ["beip.xlsx", "emerge.xlsx"]
    counts = records.groupby("file").size().to_dict()
    assert {f: counts[f] for f, _n in early} == dict(early)  # each record once
    assert set(counts) == {src.name for src in sources}
    assert not records.duplicated(["file", "sheet", "record_id", "inputs"]).any()


@pytest.fixture(scope="module")
def large_book(tmp_path_factory) -> Path:
    """A Transfers workbook of exactly `EARLY_RECORDS` rows: its records are sent early in a run as
    a process of its own (built once for this module's tests)."""
    return book(tmp_path_factory.mktemp("large") / "large.xlsx", rows=workers.EARLY_RECORDS)


@pytest.mark.usefixtures("backend")
def test_a_run_killed_after_recording_a_files_records_early_leaves_none_of_them(tmp_path, large_book):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    shutil.copy(large_book, inbox / "a.xlsx")
    tag = killed(inbox, outbox, "recorded-early:run")
    assert kept(outbox / ".njcredits" / "ledger.sqlite") == [("a.xlsx", workers.EARLY_RECORDS)]  # recorded, the run killed
    second = run_cli(inbox, outbox, tag=tag)
    assert second.returncode == 0, (second.stdout, second.stderr)
    assert_settled(inbox, outbox, ["a.xlsx"])
    # the killed run's are gone; the next run's, once
    runs = ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT DISTINCT run_id FROM records")
    assert kept(outbox / ".njcredits" / "ledger.sqlite") == [("a.xlsx", workers.EARLY_RECORDS)] and len(runs) == 1


def test_a_worker_without_the_memory_to_send_its_records_early_sends_them_with_its_result(tmp_path, large_book):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    shutil.copy(large_book, inbox / "a.xlsx")
    result = run_cli(inbox, outbox, "child-records:memory")
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert_settled(inbox, outbox, ["a.xlsx"])
    assert kept(outbox / ".njcredits" / "ledger.sqlite") == [("a.xlsx", workers.EARLY_RECORDS)]


@pytest.fixture(scope="module")
def fifty(tmp_path_factory) -> tuple[Path, dict]:
    """A Transfers workbook of 50 rows, and what its worker returns when it sends nothing early."""
    folder = tmp_path_factory.mktemp("fifty")
    source = book(folder / "a.xlsx", rows=50)
    return source, workers.work(str(source), str(folder / "b.partial.xlsx"), as_of=AS_OF)


@pytest.mark.parametrize(
    "early,beside_up_to,by",
    [
        (50, 50, "copy"),  # 50 records, at most 50 beside: made and sent by a copy as the worker writes
        (50, 49, "worker"),  # one over: made and sent by the worker before its write, a block of 20 at a time (20 + 20 + 10)
        (51, None, None),  # under the 51 sent early: with the result
    ],
)
def test_the_records_sent_early_by_the_worker_or_by_a_copy_of_it_are_those_of_the_result(tmp_path, fifty, early, beside_up_to, by):
    source, alone = fifty
    sent = tmp_path / "sent"

    def send(records, each: bool = False) -> bool:  # in the process that sends them: which one, and what
        assert each == (by == "worker")  # the copy sends them whole
        if each:
            blocks = list(records)
            assert [len(b) for b in blocks] == [20, 20, 10]
            records = joined_records(blocks)
        records.to_pickle(sent.with_suffix(f".{os.getpid()}"))
        return True

    found = workers.work(str(source), str(tmp_path / "a.partial.xlsx"), as_of=AS_OF, early=(early, send, beside_up_to or 0, 20))
    senders = {int(p.suffix[1:]): pd.read_pickle(p) for p in tmp_path.glob("sent.*")}
    if by is None:
        assert senders == {} and found["records"] is not None
        pd.testing.assert_frame_equal(found["records"], alone["records"])
        return
    ((pid, records),) = senders.items()
    assert (pid != os.getpid()) == (by == "copy") and found["records"] is None
    pd.testing.assert_frame_equal(records, alone["records"])
    assert (tmp_path / "a.partial.xlsx").read_bytes()[:2] == b"PK"  # written meanwhile


def test_a_copy_without_the_memory_to_send_the_records_leaves_them_to_the_result(tmp_path, monkeypatch, fifty):
    source, _alone = fifty
    monkeypatch.setenv("NJCREDITS_FAULT", "child-records:memory")  # met in the copy, as it sends them

    def send(records) -> bool:  # as the worker's own: a MemoryError pickling them sends nothing
        try:
            workers.fault("child-records")
        except MemoryError:
            return False
        return True

    found = workers.work(str(source), str(tmp_path / "a.partial.xlsx"), as_of=AS_OF, early=(1, send, 50, 20))
    assert found["records"] is not None and len(found["records"]) == 50


def test_a_copy_killed_as_it_sends_the_records_ends_its_worker_and_the_file_stays(tmp_path, large_book):
    """The copy that sends the records beside the write killed (SIGKILL, as the machine's OOM killer
    does) before it could say whether a byte of them was sent: the worker ends the same way, and
    the file is left in the inbox for the next run, as a worker killed from outside leaves it."""
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    shutil.copy(large_book, inbox / "a.xlsx")
    tag = uuid.uuid4().hex
    result = run_cli(inbox, outbox, "child-records:worker", tag)
    assert result.returncode != 0, (result.stdout, result.stderr)
    assert "killed from outside (SIGKILL)" in result.stdout + result.stderr
    assert no_process_left(tag)
    assert (inbox / "a.xlsx").exists() and not list(outbox.glob("*.annotated.xlsx"))
    assert kept(outbox / ".njcredits" / "ledger.sqlite") == []  # the next run reads it as a new file (test_faults.py)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize(
    "fails,several,dropped",
    [
        (False, False, ["inputs", "fields"]),  # recorded, in a run of one file: neither is read again
        (False, True, ["inputs"]),  # in a run of several, the run's other files may read the fields
        (True, False, []),  # not recorded: the ledger takes them whole with the file
    ],
)
def test_the_run_keeps_of_records_recorded_early_what_it_reads_again(tmp_path, monkeypatch, fails, several, dropped):
    # recorded, the records' read values are the ledger's (nothing of the run reads them again); a
    # ledger that could not take them then takes them with the file: the run keeps them whole
    from batch.run.runner import Run

    ledger = Ledger(ledger_of(tmp_path / "ledger.sqlite"))
    ledger.start_run("R1", None, "0", "/in", "/out")
    records = RECORDS.assign(inputs=['{"Credit": 1}', '{"Credit": 2}'])
    if fails:

        def locked(*_args, **_kwargs):
            raise sqlite3.OperationalError("database is locked")

        monkeypatch.setattr(Ledger, "add_records", locked)
    run = SimpleNamespace(ledger=ledger, run_id="R1", read_ahead=lambda processed: None)
    item = SimpleNamespace(name="a.xlsx", recorded=False, stale=False)
    monkeypatch.setattr("batch.run.runner.held_rows", lambda records: records)
    monkeypatch.setattr("batch.run.runner._reads_others", lambda held: False)  # a file none of whose records waits
    kept = Run.record_early(run, item, records, several=several)
    assert item.recorded == (not fails)
    pd.testing.assert_frame_equal(kept, records.drop(columns=dropped))


@pytest.mark.usefixtures("backend")
def test_the_run_keeps_of_records_recorded_a_block_at_a_time_all_but_their_read_values_and_fields(tmp_path):
    from batch.run.runner import Run

    ledger = Ledger(ledger_of(tmp_path / "ledger.sqlite"))
    ledger.start_run("R1", None, "0", "/in", "/out")
    records = pd.concat([RECORDS] * 3, ignore_index=True).assign(
        record_id=[f"T-{i}" for i in range(6)],
        inputs=[f'{{"Credit": {i}}}' for i in range(6)],
        award_cents=pd.array([1, None, 3, 4, 5, 6], dtype="Int64"),
    )
    run = SimpleNamespace(ledger=ledger, run_id="R1", read_ahead=lambda processed: None, settings=None)
    item = SimpleNamespace(name="a.xlsx", recorded=False, stale=False)
    blocks = (records.iloc[at].reset_index(drop=True) for at in (slice(0, 2), slice(2, 3), slice(3, 6)))
    kept = Run._record_blocks(run, item, blocks)
    assert item.recorded
    pd.testing.assert_frame_equal(kept, records.drop(columns=["inputs", "fields"]))
    assert ledger_query(tmp_path / "ledger.sqlite", "SELECT count(*) FROM records")[0][0] == 6


# each block's columns as the run keeps them; the join must be pandas' join of the frames, dtype for dtype
JOINED = [
    ("texts, numbers and a missing number", [{"id": ["a", "b"], "cents": [1, 2]}, {"id": ["c"], "cents": [None]}]),
    ("integers that may be missing", [{"n": pd.array([1, None], dtype="Int64")}, {"n": pd.array([3], dtype="Int64")}]),
    ("pandas' text and Python objects", [{"t": pd.Series(["x"], dtype="str")}, {"t": pd.Series([None], dtype=object)}]),
    ("a block without rows", [{"id": ["a"], "f": [1.5]}, {"id": pd.Series([], dtype=object), "f": pd.Series([], dtype=float)}]),
    ("blocks of different columns (joined by pandas)", [{"id": ["a"]}, {"id": ["b"], "extra": [1]}]),
    ("no block", []),
]


@pytest.mark.parametrize("case,blocks", JOINED, ids=[c[0] for c in JOINED])
def test_the_kept_records_are_joined_a_column_at_a_time_as_pandas_joins_their_frames(case, blocks):
    from batch.run.runner import joined_columns

    frames = [pd.DataFrame(b) for b in blocks]
    want = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    held = [{c: f[c].copy() for c in f.columns} for f in frames]
    pd.testing.assert_frame_equal(joined_columns(held), want)
    if all(list(b) == list(held[0]) for b in held):  # each block's columns let go as they are joined
        assert all(b == {} for b in held), case


def _reports(path: Path) -> dict[str, list[tuple]]:
    """Every sheet's cell values of a run report, by sheet."""
    wb = openpyxl.load_workbook(path)
    return {ws.title: [tuple(r) for r in ws.iter_rows(values_only=True)] for ws in wb}


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.xlsx")))
def test_the_reports_reads_made_as_the_file_is_written_are_those_made_at_the_reports_time(tmp_path, monkeypatch, sample):
    # a run of one file whose records were recorded as its worker wrote it reads what the report
    # needs of them then (`Run.read_ahead`: earlier records, portfolio tables, portfolio changes):
    # the report written from those reads is, cell for cell, the one written from reads made as the
    # report is written (the same run, the same moment); in a first run of the ledger and in a second
    # run, whose Changes and Portfolio changes read the first's records
    from batch.run import report

    monkeypatch.setattr(workers, "EARLY_RECORDS", 1)
    real, ahead_of = report.write_report, []

    def both(path, *args):
        ahead_of.append(args[-1] is not None)
        if args[-1] is not None:
            real(path.with_name(f"at-end-{path.name}"), *args[:-1], None)
        return real(path, *args)

    monkeypatch.setattr(report, "write_report", both)
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    shutil.copy(SAMPLES / sample, inbox / sample)
    for _ in range(2):
        outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1, as_of="2026-11-30", keep_inputs=True, force=True))
        assert [o.status for o in outcome.files] == ["processed"], [(o.name, o.reason) for o in outcome.files]
        assert _reports(outcome.report) == _reports(outcome.report.with_name(f"at-end-{outcome.report.name}"))
    assert ahead_of == [True, True]
    # the second run's report compares with the first's records: read ahead, they are there
    changes = _reports(outcome.report)["Changes"]
    assert changes[0][0] == "Sheet" and len(changes) > 1


@pytest.mark.parametrize("up_to,ahead", [(50, True), (49, False)])
def test_a_reports_reads_are_made_ahead_for_a_file_of_at_most_so_many_records(tmp_path, monkeypatch, up_to, ahead):
    # 50 records: read as the file is written up to 50 (`READ_AHEAD_UP_TO`), not up to 49 (a full
    # sheet's would hold a copy of its records beside the worker's write); the report the same either way
    from batch.run import report, runner

    monkeypatch.setattr(workers, "EARLY_RECORDS", 1)
    monkeypatch.setattr(runner, "READ_AHEAD_UP_TO", up_to)
    real, ahead_of = report.write_report, []

    def spy(path, *args):
        ahead_of.append(args[-1] is not None)
        return real(path, *args)

    monkeypatch.setattr(report, "write_report", spy)
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    book(inbox / "a.xlsx", rows=50)
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1, as_of="2026-11-30", keep_inputs=True))
    assert [o.status for o in outcome.files] == ["processed"]
    assert ahead_of == [ahead]
    portfolio = _reports(outcome.report)["Portfolio"]
    assert ("Transfers", 50) in [row[:2] for row in portfolio]  # Records by program and status: the 50, ahead or not


@pytest.mark.usefixtures("backend")
def test_a_report_read_ahead_for_a_file_that_then_failed_is_not_the_runs(tmp_path, large_book):
    # the records were recorded and read ahead, then the write failed (out of memory as the output
    # is closed): the file is failed, its records removed, and the report, read at its end, holds none
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    shutil.copy(large_book, inbox / "a.xlsx")
    result = run_cli(inbox, outbox, fault="child-write:memory")
    assert result.returncode == 1, (result.stdout, result.stderr)
    (path,) = outbox.glob("run-*.summary.xlsx")
    sheets = _reports(path)
    assert [(row[0], row[2]) for row in sheets["Files"][2:]] == [("a.xlsx", "failed")]
    assert sheets["Portfolio"] == [("No records in this run.",)]
    assert kept(outbox / ".njcredits" / "ledger.sqlite") == []


@pytest.mark.parametrize(
    "held,now,same",
    [
        ("one", "one", True),  # the same frame of the same file
        ("one", "copy", False),  # equal records, another frame: not the ones read
        ("one", "renamed", False),
        ("one", "none", False),  # the file was not placed
        ("none", "none", True),
        ("one", "two", False),
    ],
)
def test_a_report_takes_what_was_read_ahead_only_for_the_same_records(held, now, same):
    from batch.run.runner import _same_records

    frame = RECORDS.copy()
    lists = {
        "one": [(frame, "a.xlsx")],
        "copy": [(frame.copy(), "a.xlsx")],
        "renamed": [(frame, "b.xlsx")],
        "none": [],
        "two": [(frame, "a.xlsx"), (frame, "b.xlsx")],
    }
    assert _same_records(lists[held], lists[now]) is same
