"""`njcredits watch`: process each workbook dropped into the inbox, once it is complete.

watchdog reports files created, written, closed or moved into the inbox. A file is handed to the
batch run only when it is complete:

- on Linux (inotify), after the writer closed it: a file written to since its last close-write is
  still being written, however long it pauses. A file moved into the inbox, or already there when
  the watch starts, counts as closed; so do the files of a folder moved into the inbox, and a file
  first seen by a rescan (below), and every file known when events were lost. (Should a close
  never be seen, a file not closed is taken all the same once it has not changed for
  `OPEN_WRITER_SETTLES` settle times, at least `OPEN_WRITER_MIN_SECONDS`, and this is said);
- in every case, after its size and modification time have not changed for `settle_seconds`;
- a workbook (.xlsx, .xlsm) also has to open as a complete zip (its central directory read). One
  that does not is checked again at each settle time, and once it has stayed unchanged for
  `INCOMPLETE_SETTLES` settle times it is handed over as it is, and the run fails it with the usual
  "damaged or truncated" reason. Bytes that cannot be the start of a zip (text, a password-protected
  workbook) will not become one by being completed: such a file is handed over at once, and the
  run says what it is. A CSV or .xls cannot be checked this way; close-write and settle decide.

The watch never goes blind: when the kernel reports that its inotify event queue overflowed (events
were lost: say 300 files moved in at once), the inbox is listed again at once, and it is listed again
every `RESCAN_SECONDS` whatever the events, so no file waits longer than that unseen (a file the
events missed, a folder the watches missed, a polling observer's gap).

Then it goes through the same batch run as `njcredits run`, so it is moved to processed/ or
failed/, recorded in the ledger and reported. A bad file is set aside like any other; the watcher
keeps going. A run that raises leaves its files queued for the next settle time, and a file it had
already taken into its staging folder is put back by the next run (one of no file, if need be);
after `RUN_ATTEMPTS` runs that raised on a file, or gave it back because the environment failed,
at the same size and time, it is left in the inbox and not tried again until it changes (said
once). Ctrl-C (or SIGTERM) stops the watcher after the run in hand.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from batch.run.config import Settings
from batch.run.names import printable
from batch.run.runner import ARCHIVE_DIRS, WORK_DIR, RunLocked, list_inputs, run_batch
from batch.run.teams import TeamNeeded

try:  # close-write events exist only with inotify (Linux)
    from watchdog.observers.api import BaseObserver
    from watchdog.observers.inotify import InotifyFullEmitter, InotifyObserver
    from watchdog.observers.inotify_c import InotifyFD
except Exception:  # noqa: BLE001 - any platform without inotify
    InotifyObserver = None

POLL_SECONDS = 0.25
ZIP_SUFFIXES = (".xlsx", ".xlsm")
ZIP_MAGIC = b"PK\x03\x04"
INCOMPLETE_SETTLES = 5  # a workbook that is not a complete zip is handed over once unchanged this many settle times
RUN_ATTEMPTS = 3  # runs that raise before a file is left alone
OPEN_WRITER_SETTLES = 30  # a file never seen closed is taken once unchanged this many settle times ...
OPEN_WRITER_MIN_SECONDS = 60.0  # ... and at least this long
RESCAN_SECONDS = 60.0  # the inbox is listed again this often, whatever the events (and at once after an overflow)


class FoldersRefused(ValueError):
    """The folders cannot be watched as given (the outbox inside the inbox, ...)."""


def folder_problem(settings: Settings) -> str | None:
    """Why these folders cannot be run or watched, or None: an outbox, an archive folder or a ledger
    inside the inbox (at any depth; the tool's own `INBOX/.njcredits/` aside), an archive that is the
    outbox. Links are resolved before comparing."""
    folders = (settings.inbox, settings.outbox, settings.archive, settings.home)  # the home: a SQLite ledger's folder
    inbox, outbox, archive, home = (p.expanduser().resolve() for p in folders)
    ledger = settings.ledger.expanduser().resolve() if isinstance(settings.ledger, Path) else home
    own = inbox / WORK_DIR  # the tool's own folder in the inbox, never entered: the one place inside it allowed

    def inside(path: Path) -> bool:
        return inbox in path.parents and not (path == own or own in path.parents)

    if outbox == inbox:
        return (
            f"The outbox {settings.outbox} is the inbox {settings.inbox}: returned workbooks and run reports "
            f"would be read as new intake. Give --out a folder outside the inbox."
        )
    if inside(outbox):
        return (
            f"The outbox {settings.outbox} is inside the inbox {settings.inbox}: returned workbooks and run "
            f"reports would be read as new intake. Give --out a folder outside the inbox."
        )
    if inside(archive):
        return (
            f"The archive folder {settings.archive} is inside the inbox {settings.inbox}: archived inputs would be "
            f"read again at every run. Give --archive (or `archive` in njcredits.toml) a folder outside the inbox, "
            f"or leave it out: the default is the inbox itself, whose processed/ and failed/ are never entered."
        )
    if inside(ledger):
        return (
            f"The ledger {settings.ledger} is inside the inbox {settings.inbox}: a run would take it as a new input "
            f"(and move it to failed/). "
            f"Give --ledger (or `ledger` in njcredits.toml) a file outside the inbox, or leave it out "
            f"(the default is OUTBOX/.njcredits/ledger.sqlite)."
        )
    if archive == outbox:
        return (
            f"The archive folder {settings.archive} is the outbox {settings.outbox}: processed/ and failed/ "
            f"inputs would be mixed with the returned workbooks. Give --archive another folder (the default is the inbox)."
        )
    return None


def complete_zip(path: Path) -> bool:
    """False while the file may still be a workbook arriving: empty, the start of a zip (or zeros
    from a writer that sized the file first) without a readable central directory. True when it
    opens as a zip, or when its first bytes are not a zip's, which completing it would not change
    (the run then says what it is), or when it cannot be read (the run says why)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(ZIP_MAGIC))
            if head and not ZIP_MAGIC.startswith(head) and head.strip(b"\0"):
                return True
            fh.seek(0)
            with zipfile.ZipFile(fh) as z:
                z.infolist()
        return True
    except OSError:
        return True
    except Exception:  # noqa: BLE001 - BadZipFile, EOFError, ValueError, ...: not a complete zip (yet)
        return False


@dataclass
class _Entry:
    since: float  # monotonic time of the last change seen
    closed: bool  # no write seen since the last close-write (or moved in, or there at the start)
    key: tuple = (-1, -1)  # (size, mtime_ns) at the last look
    checked: float | None = None  # when the zip was last checked, at this key
    complete: bool = False
    said: set = field(default_factory=set)


class _Pending(FileSystemEventHandler):
    """The inbox's files not yet handed over; the observer thread notes events, the watch loop asks
    which files are ready."""

    def __init__(self, inbox: Path, closes: bool, echo=print):
        self.inbox = inbox
        self.closes = closes  # close-write events are reported (inotify)
        self.echo = echo
        self.lock = threading.Lock()
        self.files: dict[Path, _Entry] = {}
        self.handed: dict[Path, tuple] = {}  # file -> (size, mtime_ns) when handed to the run in hand
        self.attempts: dict[Path, tuple[int, tuple]] = {}  # runs that raised (or gave it back), at that (size, mtime_ns)
        self.given_up: dict[Path, tuple] = {}  # not tried again while its (size, mtime_ns) is this
        self.lost = threading.Event()  # the kernel reported an event queue overflow

    def _path(self, path) -> Path | None:
        if not path:
            return None
        p = Path(os.fsdecode(path))
        if self.inbox not in p.parents:
            return None
        # subfolders too, but not the tool's own folder (staging) or the archive folders
        top = p.relative_to(self.inbox).parts[0]
        return None if top.startswith(".") or (top in ARCHIVE_DIRS and p.parent != self.inbox) else p

    def note(self, path, closed: bool, fresh: bool = True) -> None:
        """A file written to (closed False), closed or moved in (True). Not `fresh` (the files there when
        the watch starts): only a file not yet known is added."""
        p = self._path(path)
        if p is None:
            return
        with self.lock:
            entry = self.files.get(p)
            if entry is None:
                self.files[p] = _Entry(since=time.monotonic(), closed=closed or not self.closes)
            elif fresh:
                entry.closed = closed or not self.closes

    def forget(self, path) -> _Entry | None:
        p = self._path(path)
        with self.lock:
            return self.files.pop(p, None) if p else None

    def rescan(self, lost: bool = False) -> int:
        """List the inbox again: a file not known yet (its events lost, or missed) is added as closed,
        to be taken once settled. After events were `lost`, a known file counts as closed too (its
        close-write may have been among them; a file still written to says so again with its next
        write). Returns how many were added."""
        try:
            found = list_inputs(self.inbox)
        except OSError:  # a subfolder went away while listed: the next rescan sees the rest
            return 0
        with self.lock:
            known = set(self.files) | set(self.handed)
            if lost:
                for entry in self.files.values():
                    entry.closed = True
        for p in found:
            if p not in known:
                self.note(str(p), closed=True, fresh=False)
        return sum(p not in known for p in found)

    def overflowed(self) -> None:
        """The kernel dropped events (observer thread): the watch loop lists the inbox again."""
        self.lost.set()

    def on_created(self, event):
        # with full inotify events, a file moved in comes as a move. A file already known is kept as it is:
        # the files of a folder moved in are noted (closed) before their creation events arrive.
        if not event.is_directory:
            self.note(event.src_path, closed=False, fresh=False)

    def on_modified(self, event):
        if not event.is_directory:
            self.note(event.src_path, closed=False)

    def on_closed(self, event):  # inotify IN_CLOSE_WRITE: the writer is done
        if not event.is_directory:
            self.note(event.src_path, closed=True)

    def on_moved(self, event):
        if event.is_directory:  # a folder moved in: its files are complete, as a file moved in is
            dest = os.fsdecode(event.dest_path) if event.dest_path else ""
            if dest and self._path(dest) is not None:
                for root, _dirs, names in os.walk(dest):
                    for name in names:
                        self.note(os.path.join(root, name), closed=True, fresh=False)
            return
        before = self.forget(event.src_path)  # a rename within the inbox keeps what was known
        self.note(event.dest_path, closed=True if before is None else before.closed)

    def on_deleted(self, event):
        if not event.is_directory:
            self.forget(event.src_path)

    def after_run(self, ready: list[Path], retry: set[Path] | None = None) -> list[Path]:
        """After the run of `ready`: the files in `retry` (all of them when None: the run did not happen)
        go back in the queue, ready at the next settle time; those in `retry` count an attempt, and after
        `RUN_ATTEMPTS` at the same size and time are left alone (said once). Returns the files of `retry`
        no longer in the inbox (taken into the run's staging folder)."""
        counted, missing = retry is not None, []
        retry = set(ready) if retry is None else retry
        now = time.monotonic()
        with self.lock:
            for p in ready:
                key = self.handed.pop(p, None)
                if p not in retry:
                    self.attempts.pop(p, None)
                    continue
                if counted:
                    n, at = self.attempts.get(p, (0, key))
                    n = n + 1 if at == key else 1
                    self.attempts[p] = (n, key)
                    if n >= RUN_ATTEMPTS:
                        self.given_up[p] = key
                        self.files.pop(p, None)
                        self.echo(
                            f"{printable(p.name)}: {n} runs in a row did not get it done; it is left in the inbox and not tried again "
                            f"until it changes or the watch is restarted."
                        )
                        continue
                try:
                    st = p.stat()
                except OSError:
                    missing.append(p)
                    continue
                entry = self.files.setdefault(p, _Entry(since=now, closed=True))
                entry.key, entry.since = (st.st_size, st.st_mtime_ns), now
        return missing

    def settled(self, seconds: float) -> list[Path]:
        """Files complete by the rules above, taken out of the queue."""
        ready, now, inputs = [], time.monotonic(), None
        with self.lock:
            for p, e in list(self.files.items()):
                try:
                    st = p.stat()
                except FileNotFoundError:
                    del self.files[p]
                    continue
                except OSError:
                    continue
                key = (st.st_size, st.st_mtime_ns)
                if p in self.given_up:
                    if self.given_up[p] == key:  # the file given up, as it was (moved back, say)
                        del self.files[p]
                        continue
                    del self.given_up[p]  # changed: a fresh start
                    self.attempts.pop(p, None)
                if key != e.key:
                    e.key, e.since, e.checked = key, now, None
                    continue
                quiet = now - e.since
                if quiet < seconds:
                    continue
                if inputs is None:
                    inputs = set(list_inputs(self.inbox))
                if p not in inputs:  # hidden, an Office lock file, a link, one of ours
                    del self.files[p]
                    continue
                if not e.closed:
                    if quiet < max(OPEN_WRITER_SETTLES * seconds, OPEN_WRITER_MIN_SECONDS):
                        continue
                    self.echo(
                        f"{printable(p.name)} was not closed by its writer but has not changed for {quiet:.0f} s: taking it as it is."
                    )
                if p.suffix.lower() in ZIP_SUFFIXES:
                    if e.checked is None or now - e.checked >= seconds:  # checked again at each settle time
                        e.checked, e.complete = now, complete_zip(p)
                    if not e.complete and quiet < INCOMPLETE_SETTLES * seconds:
                        if "incomplete" not in e.said:
                            e.said.add("incomplete")
                            self.echo(
                                f"Waiting for {printable(p.name)}: not a complete workbook yet (still arriving?); checked again every "
                                f"{seconds:g} s, and handed over as it is once unchanged for {INCOMPLETE_SETTLES * seconds:g} s."
                            )
                        continue
                    if not e.complete:
                        self.echo(
                            f"{printable(p.name)} is still not a complete workbook after {quiet:.0f} s unchanged: handing it over as it is."
                        )
                ready.append(p)
                self.handed[p] = key
                del self.files[p]
        return ready


if InotifyObserver is not None:

    class _InotifyFD(InotifyFD):
        """The inotify instance, telling `on_overflow` when the kernel reports that its event queue
        overflowed (IN_Q_OVERFLOW: events were lost), before watchdog rebuilds its watches."""

        def __init__(self) -> None:
            super().__init__()
            self.on_overflow = lambda: None  # set by the watch (`_InotifyObserver.on_overflow`)

        def handle_event(self, event) -> None:
            if event.is_queue_overflow:
                self.on_overflow()
            super().handle_event(event)

        def _add_callback(self, path, mask, callback, id_):
            # watchdog's recursive watch adds a folder made inside the inbox both when it walks its parent
            # and when the folder's own creation event arrives; the second add changes nothing, but watchdog
            # warns of it with the representation of its internal objects. Nothing to do, nothing said.
            watch = self._get_or_create_watch(path, mask)
            if watch.callbacks.get(id_) is callback:
                return watch.wd
            return super()._add_callback(path, mask, callback, id_)

        def _remove_callback(self, wd, id_):
            # a watch already left by this callback (its folder went away meanwhile): nothing to remove
            watch = self._watch_for_wd.get(wd)
            if watch is not None and id_ not in watch.callbacks:
                return
            super()._remove_callback(wd, id_)

    class _InotifyObserver(InotifyObserver):
        """watchdog's inotify observer with full events (a file moved in from outside the inbox comes as
        a move, not as a creation that would wait for a close-write that never comes), on an inotify
        instance that reports overflows."""

        def __init__(self) -> None:
            self._inotify_fd = _InotifyFD()
            self._inotify_fd.start()
            BaseObserver.__init__(self, InotifyFullEmitter, inotify_fd=self._inotify_fd)

        def on_overflow(self, callback) -> None:
            """Call `callback` (in the observer's thread) whenever the kernel reports an overflow."""
            self._inotify_fd.on_overflow = callback


class _Quiet(logging.Filter):
    """Keeps watchdog's own lines out of the log where the watch says the same in words: the overflow
    (said with the count of files found by listing the inbox again) and the emitter woken after its stop."""

    SAID = ("Inotify queue overflowed", "InotifyEmitter.queue_events() called when the thread is inactive")

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.SAID)


_QUIET = _Quiet()
for _name in ("watchdog.observers.inotify", "watchdog.observers.inotify_c"):
    if _QUIET not in logging.getLogger(_name).filters:
        logging.getLogger(_name).addFilter(_QUIET)


def _observer():
    """The platform's observer, and whether it reports close-writes (inotify)."""
    if InotifyObserver is not None and Observer is InotifyObserver:
        return _InotifyObserver(), True
    return Observer(), False


def watch_inbox(settings: Settings, echo=print, stop: threading.Event | None = None) -> int:
    """Watch until `stop` is set (or Ctrl-C, SIGTERM). Returns the exit status: 3 when the stop cut a run
    short and its files were left in the inbox, 2 when the ledger came to be shared with another team
    and this inbox names none (`batch.run.teams`), else 0."""
    problem = folder_problem(settings)
    if problem:
        raise FoldersRefused(problem)
    stop = stop or threading.Event()
    inbox = settings.inbox.resolve()
    pending, observer = _Pending(inbox, closes=False, echo=echo), None
    try:
        observer, pending.closes = _observer()
        if hasattr(observer, "on_overflow"):
            observer.on_overflow(pending.overflowed)
        observer.schedule(pending, str(inbox), recursive=True)
        observer.start()
    except OSError as err:  # inotify's instance or watch limit reached: poll instead
        from watchdog.observers.polling import PollingObserver

        if observer is not None:
            try:
                observer.stop()
            except Exception:  # noqa: BLE001 - it never started
                pass
        echo(f"inotify is not available ({err.strerror or err}); polling {settings.inbox}, with the settle time only.")
        observer, pending.closes = PollingObserver(), False
        observer.schedule(pending, str(inbox), recursive=True)
        observer.start()
    for p in list_inputs(inbox):  # files already waiting when the watch starts (after start: none slips between)
        pending.note(str(p), closed=True, fresh=False)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    echo(f"Watching {settings.inbox} (Ctrl-C to stop) ...")
    locked, status = False, 0
    rescan_at = time.monotonic() + RESCAN_SECONDS
    recover_at, recoveries = None, 0  # a run that raised may have left files in its staging folder
    try:
        while not stop.is_set():
            if pending.lost.is_set() or time.monotonic() >= rescan_at:
                overflow = pending.lost.is_set()
                pending.lost.clear()  # cleared before listing: an overflow during the listing lists again
                added = pending.rescan(lost=overflow)
                rescan_at = time.monotonic() + RESCAN_SECONDS
                if overflow:
                    echo(
                        f"The kernel's event queue overflowed (events were lost): {settings.inbox} listed again, "
                        f"{added} file{'' if added == 1 else 's'} not seen before."
                    )
            ready = pending.settled(settings.settle_seconds)
            recovering = recover_at is not None and time.monotonic() >= recover_at
            if ready or recovering:  # a run, even of no file, first puts back what a run that raised took
                try:
                    outcome = run_batch(settings, files=ready, echo=echo)
                except RunLocked as err:
                    if not locked:  # said once while the other run holds the inbox
                        echo(f"{err} Trying again every {settings.settle_seconds:g} s.")
                    locked = True
                    pending.after_run(ready)
                except TeamNeeded as err:  # another inbox began sharing the ledger: nothing was touched
                    echo(f"{err} The files wait in the inbox.")
                    status = 2
                    break
                except Exception as err:  # noqa: BLE001 - the watcher survives whatever one run meets
                    locked = False
                    again = f"; tried again in {settings.settle_seconds:g} s ({RUN_ATTEMPTS} runs at most)" if ready else ""
                    names = ", ".join(printable(p.name) for p in ready) or "no file"
                    echo(f"The run for {names} stopped: {type(err).__name__}: {printable(err)}{again}.")
                    missing = pending.after_run(ready, retry=set(ready))
                    if missing or recovering:
                        recoveries += 1
                        recover_at = time.monotonic() + settings.settle_seconds
                        if recoveries >= RUN_ATTEMPTS:
                            recover_at = None
                            echo(
                                f"Files taken by the runs that stopped may wait in {settings.inbox / '.njcredits' / 'staging'}; "
                                f"the next run puts them back in the inbox."
                            )
                else:
                    locked, recover_at, recoveries = False, None, 0
                    if stop.is_set() and (getattr(outcome, "stopped", "") or getattr(outcome, "returned", 0)):
                        status = 3  # the stop cut this run short: its files wait in the inbox
                    returned = {f.name for f in getattr(outcome, "files", []) if f.status == "returned"}
                    pending.after_run(ready, retry={p for p in ready if p.name in returned})
            stop.wait(POLL_SECONDS)
    finally:
        observer.stop()
        observer.join()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        echo("Stopped watching.")
    return status
