"""`njcredits watch`: a file is taken only once complete (closed, settled, a whole zip); folders
that would feed the watcher its own output are refused; a run that raises does not strand files."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook

import batch.run.watch as watch_module
from batch.cli import main
from batch.run.config import load
from batch.run.watch import FoldersRefused, complete_zip, watch_inbox

SETTLE = 0.5
HEADERS = TRANSFER_HEADERS
# on one test worker together: most of their time is waiting out settle times, which two of them
# side by side would leave both cores idle through
pytestmark = pytest.mark.xdist_group("watch")
inotify_only = pytest.mark.skipif(watch_module.InotifyObserver is None, reason="close-write events need inotify (Linux)")


def workbook_bytes(tmp_path: Path, n: int = 3) -> bytes:
    rows = [[f"T-{i}", "Grow NJ", f"C-{i}", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30_000, 27_000, CERTIFICATE] for i in range(n)]
    return write_workbook(tmp_path / "source.xlsx", {"Transfers": [HEADERS, *rows]}).read_bytes()


class Watcher:
    """watch_inbox in a thread, stopped through its `stop` event; the log kept."""

    def __init__(self, tmp_path: Path, workers: int = 1, **flags):
        self.inbox, self.outbox = tmp_path / "inbox", tmp_path / "outbox"
        self.inbox.mkdir(exist_ok=True)
        self.settings = load(cwd=tmp_path, inbox=self.inbox, outbox=self.outbox, workers=workers, settle_seconds=SETTLE, **flags)
        self.log: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=watch_inbox, args=(self.settings, self.log.append, self.stop), daemon=True)

    def __enter__(self):
        self.thread.start()
        self.wait_for(lambda: any(line.startswith("Watching") for line in self.log), 5)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()

    @staticmethod
    def wait_for(condition, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.05)
        return condition()

    def said(self, text: str) -> list[str]:
        return [line for line in self.log if text in line]

    def ledger(self) -> list[tuple]:
        path = self.outbox / ".njcredits" / "ledger.sqlite"
        if not path.exists():
            return []
        try:
            with sqlite3.connect(path) as db:
                return db.execute("SELECT name, status, reason, rows_per_sheet FROM files ORDER BY rowid").fetchall()
        except sqlite3.OperationalError:  # the run is still making it
            return []


def test_complete_zip_tells_a_workbook_still_arriving(tmp_path):
    data = workbook_bytes(tmp_path)
    cases = {
        "whole.xlsx": (data, True),
        "half.xlsx": (data[: len(data) // 2], False),
        "no-end.xlsx": (data[:-10], False),
        "empty.xlsx": (b"", False),
        "sized-first.xlsx": (b"\0" * len(data), False),  # a writer that set the size before writing
        "text.xlsx": (b"not a workbook", True),  # completing it would not make it a zip: the run says what it is
        "encrypted.xlsx": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, True),
    }
    for name, (content, complete) in cases.items():
        (tmp_path / name).write_bytes(content)
        assert complete_zip(tmp_path / name) is complete, name


@inotify_only
def test_a_csv_written_in_two_halves_while_open_is_read_once_with_all_rows(tmp_path):
    header = ",".join(HEADERS) + "\n"
    rows = [f"T-{i},Grow NJ,C-{i},Seller LLC,Buyer Inc.,2026-01-05,30000,27000,1000000\n" for i in range(40)]
    with Watcher(tmp_path) as w:
        with open(w.inbox / "Transfers.csv", "w", encoding="utf-8") as fh:
            fh.write(header + "".join(rows[:20]))
            fh.flush()
            time.sleep(4 * SETTLE)  # unchanged for longer than the settle time, but not closed
            assert not w.ledger() and not list(w.outbox.glob("*.annotated.xlsx")), w.log
            fh.write("".join(rows[20:]))
        assert w.wait_for(lambda: w.ledger(), 15), w.log
        time.sleep(2 * SETTLE)
    (record,) = w.ledger()
    assert record[:2] == ("Transfers.csv", "processed")
    assert sum(json.loads(record[3]).values()) == 40
    import python_calamine

    book = python_calamine.CalamineWorkbook.from_path(str(w.outbox / "Transfers.csv.annotated.xlsx"))
    grid = book.get_sheet_by_index(0).to_python()
    assert [r[0] for r in grid[1:] if str(r[0]).startswith("T-")] == [f"T-{i}" for i in range(40)]


def test_a_truncated_workbook_left_unchanged_fails_only_after_five_settle_times(tmp_path):
    data = workbook_bytes(tmp_path)
    with Watcher(tmp_path) as w:
        (w.inbox / "cut.xlsx").write_bytes(data[: len(data) // 2])
        written = time.monotonic()
        assert w.wait_for(lambda: list(w.inbox.glob("failed/*/cut.xlsx")), 20), w.log
        waited = time.monotonic() - written
    assert waited >= 5 * SETTLE
    assert len(w.said("Waiting for cut.xlsx: not a complete workbook yet")) == 1
    assert [(n, s) for n, s, *_ in w.ledger()] == [("cut.xlsx", "failed")]
    (reason,) = w.inbox.glob("failed/*/cut.xlsx.reason.txt")
    assert "damaged or truncated" in reason.read_text(encoding="utf-8")


def test_a_truncated_workbook_completed_within_the_retry_window_is_processed(tmp_path):
    data = workbook_bytes(tmp_path)
    half = len(data) // 2
    with Watcher(tmp_path) as w:
        (w.inbox / "late.xlsx").write_bytes(data[:half])
        assert w.wait_for(lambda: w.said("Waiting for late.xlsx"), 5), w.log
        time.sleep(SETTLE)  # checked again at least once more, still incomplete
        assert not w.ledger()
        with open(w.inbox / "late.xlsx", "ab") as fh:
            fh.write(data[half:])
        assert w.wait_for(lambda: (w.outbox / "late.annotated.xlsx").exists(), 15), w.log
        time.sleep(2 * SETTLE)
    assert [(n, s) for n, s, *_ in w.ledger()] == [("late.xlsx", "processed")]
    assert not list(w.inbox.glob("failed/*/late.xlsx"))


def test_a_run_that_raises_is_retried(tmp_path, monkeypatch):
    real, calls = watch_module.run_batch, []

    def flaky(settings, files, echo):
        calls.append([p.name for p in files])
        if len(calls) == 1:
            raise RuntimeError("the ledger disk hiccuped")
        return real(settings, files=files, echo=echo)

    monkeypatch.setattr(watch_module, "run_batch", flaky)
    data = workbook_bytes(tmp_path)
    with Watcher(tmp_path) as w:
        (w.inbox / "again.xlsx").write_bytes(data)
        assert w.wait_for(lambda: (w.outbox / "again.annotated.xlsx").exists(), 15), w.log
        time.sleep(2 * SETTLE)
    assert calls == [["again.xlsx"], ["again.xlsx"]]
    assert len(w.said("stopped: RuntimeError: the ledger disk hiccuped")) == 1
    assert [(n, s) for n, s, *_ in w.ledger()] == [("again.xlsx", "processed")]


def test_a_run_that_raises_after_taking_the_file_does_not_strand_it(tmp_path, monkeypatch):
    import batch.run.runner as runner

    real, calls = runner._sha, []

    def hashing_fails_once(path):
        calls.append(path.name)
        if len(calls) == 1:
            raise RuntimeError("hashing broke")
        return real(path)

    monkeypatch.setattr(runner, "_sha", hashing_fails_once)  # raises after the file is staged
    data = workbook_bytes(tmp_path)
    with Watcher(tmp_path) as w:
        (w.inbox / "staged.xlsx").write_bytes(data)
        assert w.wait_for(lambda: (w.outbox / "staged.annotated.xlsx").exists(), 20), w.log
        time.sleep(2 * SETTLE)
    # the run itself gives the file back to the inbox, says why, and ends; the next run processes it
    assert len(w.said("RuntimeError: hashing broke")) >= 1
    assert [(n, s) for n, s, *_ in w.ledger()] == [("staged.xlsx", "returned"), ("staged.xlsx", "processed")]
    assert not list(w.inbox.glob(".njcredits/staging/*/*/*.xlsx"))


def test_a_file_whose_runs_keep_raising_is_left_after_three_attempts_and_said_once(tmp_path, monkeypatch):
    calls = []

    def broken(settings, files, echo):
        calls.append([p.name for p in files])
        raise OSError("the outbox went away")

    monkeypatch.setattr(watch_module, "run_batch", broken)
    data = workbook_bytes(tmp_path)
    with Watcher(tmp_path) as w:
        (w.inbox / "stuck.xlsx").write_bytes(data)
        assert w.wait_for(lambda: w.said("runs in a row did not get it done"), 15), w.log
        time.sleep(4 * SETTLE)  # not tried again while unchanged
        assert len(calls) == 3 and len(w.said("runs in a row")) == 1
        assert (w.inbox / "stuck.xlsx").exists()
        (w.inbox / "stuck.xlsx").write_bytes(data)  # saved again: a fresh start
        assert w.wait_for(lambda: len(calls) == 4, 10), w.log


def test_without_inotify_the_watch_polls_and_still_takes_settled_files(tmp_path, monkeypatch):
    def no_inotify():
        raise OSError(24, "inotify instance limit reached")

    monkeypatch.setattr(watch_module, "_observer", no_inotify)
    data = workbook_bytes(tmp_path)
    with Watcher(tmp_path) as w:
        (w.inbox / "polled.xlsx").write_bytes(data)
        assert w.wait_for(lambda: (w.outbox / "polled.annotated.xlsx").exists(), 15), w.log
    assert w.said("inotify is not available (inotify instance limit reached); polling")
    assert [(n, s) for n, s, *_ in w.ledger()] == [("polled.xlsx", "processed")]


@pytest.mark.parametrize(
    "where",
    ["inside", "same", "inside through a link", "archive is the outbox"],
)
def test_watch_refuses_folders_that_would_feed_it_its_own_output(tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(watch_module, "watch_inbox", lambda *a, **k: pytest.fail("it started watching"))
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (tmp_path / "link").symlink_to(inbox, target_is_directory=True)
    args = {
        "inside": ["--out", str(inbox / "sub")],
        "same": ["--out", str(inbox)],
        "inside through a link": ["--out", str(tmp_path / "link" / "returned")],
        "archive is the outbox": ["--out", str(tmp_path / "outbox"), "--archive", str(tmp_path / "outbox")],
    }[where]
    result = CliRunner().invoke(main, ["watch", str(inbox), *args])
    assert result.exit_code == 2, result.output
    expected = "is the outbox" if where == "archive is the outbox" else ("is the inbox" if where == "same" else "is inside the inbox")
    assert expected in result.output
    assert not (inbox / "sub").exists() and not (tmp_path / "outbox").exists()


def test_watch_inbox_itself_refuses_an_outbox_inside_the_inbox(tmp_path):
    settings = load(cwd=tmp_path, inbox=tmp_path / "inbox", outbox=tmp_path / "inbox" / "out")
    with pytest.raises(FoldersRefused, match="inside the inbox"):
        watch_inbox(settings, echo=lambda _line: None, stop=threading.Event())


def csv_text(i: int) -> str:
    return ",".join(HEADERS) + "\n" + f"T-{i},Grow NJ,C-{i},Seller LLC,Buyer Inc.,2026-01-05,30000,27000\n"


class Blind:
    """Drops the events reaching the watch while set, as the kernel does when its inotify queue overflows;
    records the observer the watch made, to inject the overflow event into it."""

    def __init__(self, monkeypatch):
        self.on, self.observers = False, []
        real_dispatch, real_observer = watch_module._Pending.dispatch, watch_module._observer

        def dispatch(handler, event):
            if not self.on:
                real_dispatch(handler, event)

        def observer(*args):
            made = real_observer(*args)
            self.observers.append(made[0])
            return made

        monkeypatch.setattr(watch_module._Pending, "dispatch", dispatch)
        monkeypatch.setattr(watch_module, "_observer", observer)

    def overflow(self) -> None:
        """What the kernel sends when events were lost: IN_Q_OVERFLOW, on no watch (wd -1)."""
        from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent

        (observer,) = self.observers
        observer._inotify_fd.handle_event(InotifyEvent(-1, InotifyConstants.IN_Q_OVERFLOW, 0, b""))


# Files lost to one overflow. The overflow is injected (`Blind`), so their number is not what brings
# it about; each is a worker's reading of a file (about 0.12 CPU second), so it is kept to what still
# gives both workers many files each (it was 300, then 100: still the suite's longest test).
LOST = 40


@inotify_only
def test_after_an_inotify_queue_overflow_the_inbox_is_listed_again_and_every_lost_file_is_processed(tmp_path, monkeypatch):
    blind = Blind(monkeypatch)
    outside = tmp_path / "arriving"
    outside.mkdir()
    # the time goes into the files' readings (a worker reads one after another), not into waiting: two at a time
    with Watcher(tmp_path, workers=2) as w:
        assert watch_module.RESCAN_SECONDS >= 60  # the overflow, not the slow timer, brings them in here
        blind.on = True  # the queue overflows: the events of the files are lost
        for i in range(LOST):
            (outside / f"t{i:03}.csv").write_text(csv_text(i), encoding="utf-8")
            (outside / f"t{i:03}.csv").rename(w.inbox / f"t{i:03}.csv")
        time.sleep(4 * SETTLE)
        assert not w.ledger() and len(list(w.inbox.glob("*.csv"))) == LOST  # unseen, as the events were lost
        blind.on = False
        blind.overflow()
        assert w.wait_for(lambda: len(list(w.inbox.glob("processed/*/*.csv"))) == LOST, 600), w.log[
            -5:
        ]  # a liveness bound: a run of many files on a busy machine
        time.sleep(2 * SETTLE)
    assert sorted(n for n, s, *_ in w.ledger() if s == "processed") == [f"t{i:03}.csv" for i in range(LOST)]
    assert len(list(w.outbox.glob("*.annotated.xlsx"))) == LOST
    assert not list(w.inbox.glob("*.csv"))
    (said,) = w.said("event queue overflowed")
    assert said.endswith(f"listed again, {LOST} files not seen before.")
    assert not w.said("not closed by its writer")


def test_the_inbox_is_listed_again_on_a_slow_timer_whatever_the_events(tmp_path, monkeypatch):
    blind = Blind(monkeypatch)
    monkeypatch.setattr(watch_module, "RESCAN_SECONDS", 2.0)
    with Watcher(tmp_path) as w:
        blind.on = True  # no event at all reaches the watch, and no overflow is reported
        (w.inbox / "unseen.csv").write_text(csv_text(1), encoding="utf-8")
        written = time.monotonic()
        assert w.wait_for(lambda: (w.outbox / "unseen.csv.annotated.xlsx").exists(), 20), w.log
        waited = time.monotonic() - written
        time.sleep(2 * SETTLE)
    # 2 s at most unseen, then the settle time: 2 + 0.5 s, and the run
    assert 2 * SETTLE <= waited < 2.0 + 10
    assert [(n, s) for n, s, *_ in w.ledger()] == [("unseen.csv", "processed")]
    assert not w.said("overflowed") and not w.said("not closed by its writer")


@inotify_only
def test_the_files_of_a_folder_moved_in_count_as_closed(tmp_path):
    folder = tmp_path / "east"
    (folder / "deeper").mkdir(parents=True)
    for n, name in enumerate(("a.xlsx", "b.xlsx", "deeper/c.xlsx"), start=1):  # distinct contents: none a duplicate
        (folder / name).write_bytes(workbook_bytes(tmp_path, n))
    with Watcher(tmp_path) as w:
        folder.rename(w.inbox / "east")
        moved = time.monotonic()
        assert w.wait_for(lambda: len(list(w.outbox.rglob("*.annotated.xlsx"))) == 3, 30), w.log
        waited = time.monotonic() - moved
        time.sleep(2 * SETTLE)
    assert waited < watch_module.OPEN_WRITER_MIN_SECONDS / 2  # not held as never closed (a minute)
    assert sorted((n, s) for n, s, *_ in w.ledger()) == [(f"east/{n}", "processed") for n in ("a.xlsx", "b.xlsx", "deeper/c.xlsx")]
    assert not w.said("not closed by its writer")


def test_the_stop_is_one_plain_sentence_and_watchdog_says_nothing(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    (inbox / "east" / "north").mkdir(parents=True)  # nested folders: the run stages into nested folders too
    names = ("a.xlsx", "b.xlsx", "c.xlsx", "d.xlsx", "east/e.xlsx", "east/north/f.xlsx")
    for n, name in enumerate(names, start=1):
        (inbox / name).write_bytes(workbook_bytes(tmp_path, n))
    env = {**os.environ, "PYTHONWARNINGS": "default"}  # a warning would be printed, not hidden
    cmd = [str(Path(sys.executable).parent / "njcredits"), "watch", str(inbox), "--out", str(outbox), "--settle", str(SETTLE)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert Watcher.wait_for(lambda: len(list(outbox.rglob("*.annotated.xlsx"))) == len(names), 60)
        assert Watcher.wait_for(lambda: len(list(outbox.glob("run-*.summary.xlsx"))) == 1, 20)
        time.sleep(1)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, (out, err)
    assert err == ""  # no warning, no object's representation, no traceback
    assert out.splitlines()[-1] == "Stopped watching."
    assert not [line for line in out.splitlines() if "<" in line or "object at 0x" in line]


@inotify_only
def test_a_folder_added_twice_to_the_watch_warns_of_nothing(tmp_path):
    # watchdog adds a folder made in the inbox when it walks the parent and again when the folder's own
    # creation event arrives late (a busy machine); watchdog's own instance warns with the repr of its objects
    import warnings

    from watchdog.observers.inotify_c import InotifyConstants, InotifyFD

    class Group:  # a watch group's callback
        def on_event(self, event): ...

        def on_watch_deleted(self, wd): ...

        def on_queue_overflow(self): ...

    group, mask = Group(), InotifyConstants.IN_CREATE
    results = {}
    for name, fd in (("watchdog's", InotifyFD()), ("the watch's", watch_module._InotifyFD())):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                first = fd.add_callback(str(tmp_path).encode(), mask, group, 7)
                again = fd.add_callback(str(tmp_path).encode(), mask, group, 7)
                fd.remove_callbacks([(first, 7)])
                fd.remove_callbacks([(first, 7)])  # already removed: nothing to say either
            results[name] = (first == again, [str(w.message) for w in caught])
        finally:
            fd.close()
    assert results["watchdog's"][0] and any("already exists" in m for m in results["watchdog's"][1])  # the attack
    assert results["the watch's"] == (True, [])


@inotify_only
def test_a_file_whose_close_was_lost_in_an_overflow_is_not_held_as_never_closed(tmp_path, monkeypatch, caplog):
    caplog.set_level("DEBUG", logger="watchdog")
    blind = Blind(monkeypatch)
    with Watcher(tmp_path) as w:
        with open(w.inbox / "copied.csv", "w", encoding="utf-8") as fh:
            fh.write(csv_text(1))
            fh.flush()
            time.sleep(4 * SETTLE)  # its creation and writes are seen: an open file, not taken
            assert not w.ledger()
            blind.on = True  # the close-write is among the events lost
        time.sleep(2 * SETTLE)
        blind.on = False
        blind.overflow()
        lost = time.monotonic()
        assert w.wait_for(lambda: (w.outbox / "copied.csv.annotated.xlsx").exists(), 20), w.log
        waited = time.monotonic() - lost
        time.sleep(2 * SETTLE)
    assert waited < watch_module.OPEN_WRITER_MIN_SECONDS / 2  # not the minute a never-closed file waits
    assert [(n, s) for n, s, *_ in w.ledger()] == [("copied.csv", "processed")]
    assert not w.said("not closed by its writer")
    (said,) = w.said("event queue overflowed")
    assert said.endswith("listed again, 0 files not seen before.")
    # said once, in words: not again by watchdog, with the repr of a path in bytes
    assert not [r.getMessage() for r in caplog.records if r.levelno >= 30 and r.name.startswith("watchdog")]


def test_each_file_the_watch_processes_counts_the_runs_before_it_in_the_portfolio(tmp_path):
    """November's workbook, then December's, dropped in turn: December's run sees November's run,
    which ended before it began (certificate C-1: 6,000,000 + 500,000 > 6,000,000)."""
    from test_reviews import _sheet, transfers_workbook

    def row(tid, amount, date, credit):
        return [tid, "Grow NJ", "C-1", amount, "Seller LLC", "Buyer Inc.", date, credit, credit]

    src = tmp_path / "src"
    with Watcher(tmp_path) as w:
        for name, rows in (("nov.xlsx", [row("T-1", 6_000_000, dt.date(2026, 11, 10), 6_000_000)]),
                           ("dec.xlsx", [row("T-9", None, dt.date(2026, 12, 5), 500_000)])):  # fmt: skip
            transfers_workbook(src / name, rows).rename(w.inbox / name)
            done = w.outbox / name.replace(".xlsx", ".annotated.xlsx")
            assert w.wait_for(done.exists, 30), w.log
    assert _sheet(w.outbox / "dec.annotated.xlsx")["T-9"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"


def test_a_file_dropped_while_another_is_processed_sees_all_of_it_at_its_own_run(tmp_path):
    """November's workbook (2,000 transfers of C-1 and others) is being processed when December's is
    dropped: December waits for a run of its own, which begins after November's ended, so it counts
    all of November (6,000,000 of C-1 + 500,000 > 6,000,000), never part of it."""
    from test_reviews import _sheet, transfers_workbook

    def row(tid, cert, amount, date, credit):
        return [tid, "Grow NJ", cert, amount, "Seller LLC", "Buyer Inc.", date, credit, credit]

    src = tmp_path / "src"
    others = [row(f"T-{i}", f"C-{i}", 1_000_000, dt.date(2026, 11, 1), 30_000) for i in range(2, 2_001)]
    transfers_workbook(src / "nov.xlsx", [row("T-1", "C-1", 6_000_000, dt.date(2026, 11, 10), 6_000_000), *others])
    transfers_workbook(src / "dec.xlsx", [row("T-9", "C-1", None, dt.date(2026, 12, 5), 500_000)])
    with Watcher(tmp_path) as w:
        (src / "nov.xlsx").rename(w.inbox / "nov.xlsx")
        staging = w.inbox / ".njcredits" / "staging"
        assert w.wait_for(lambda: any(p.is_file() for p in staging.rglob("*")), 30), w.log  # November's run has taken it
        (src / "dec.xlsx").rename(w.inbox / "dec.xlsx")
        assert w.wait_for((w.outbox / "dec.annotated.xlsx").exists, 60), w.log
    with sqlite3.connect(w.outbox / ".njcredits" / "ledger.sqlite") as db:
        runs = dict(db.execute("SELECT name, run_id FROM files"))
    assert runs["nov.xlsx"] != runs["dec.xlsx"]
    assert _sheet(w.outbox / "dec.annotated.xlsx")["T-9"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"
