"""`njcredits watch`: process each workbook dropped into the inbox, once it has stopped changing.

watchdog reports files created, modified or moved into the inbox. A file is read only after its
size and modification time have stayed the same for `settle_seconds` (a file still being copied
is not read); then it goes through the same batch run as `njcredits run`, so it is moved to
processed/ or failed/, recorded in the ledger and reported. A bad file is set aside like any
other; the watcher keeps going. Ctrl-C (or SIGTERM) stops it after the file in hand.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from batch.config import Settings
from batch.runner import RunLocked, list_inputs, run_batch

POLL_SECONDS = 0.25


class _Pending(FileSystemEventHandler):
    def __init__(self, inbox: Path):
        self.inbox = inbox
        self.lock = threading.Lock()
        self.seen: dict[Path, tuple] = {}  # path -> (size, mtime, since)

    def note(self, path: str) -> None:
        p = Path(path)
        if p.parent == self.inbox and p in set(list_inputs(self.inbox)):
            with self.lock:
                self.seen.setdefault(p, (-1, -1, time.monotonic()))

    def on_created(self, event):
        if not event.is_directory:
            self.note(event.src_path)

    def on_modified(self, event):
        if not event.is_directory:
            self.note(event.src_path)

    def on_moved(self, event):
        if not event.is_directory:
            self.note(event.dest_path)

    def settled(self, seconds: float) -> list[Path]:
        """Files whose size and mtime have not changed for `seconds`."""
        ready, now = [], time.monotonic()
        with self.lock:
            for p, (size, mtime, since) in list(self.seen.items()):
                try:
                    st = p.stat()
                except FileNotFoundError:
                    del self.seen[p]
                    continue
                if (st.st_size, st.st_mtime_ns) != (size, mtime):
                    self.seen[p] = (st.st_size, st.st_mtime_ns, now)
                elif now - since >= seconds:
                    ready.append(p)
                    del self.seen[p]
        return ready


def watch_inbox(settings: Settings, echo=print, stop: threading.Event | None = None) -> None:
    stop = stop or threading.Event()
    pending = _Pending(settings.inbox.resolve())
    for p in list_inputs(settings.inbox.resolve()):  # files already waiting when the watch starts
        pending.note(str(p))
    observer = Observer()
    observer.schedule(pending, str(settings.inbox.resolve()), recursive=False)
    observer.start()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    echo(f"Watching {settings.inbox} (Ctrl-C to stop) ...")
    try:
        while not stop.is_set():
            ready = pending.settled(settings.settle_seconds)
            if ready:
                try:
                    run_batch(settings, files=ready, echo=echo)
                except RunLocked as err:
                    echo(str(err))
                    for p in ready:
                        pending.note(str(p))
                except Exception as err:  # noqa: BLE001 - the watcher survives whatever one run meets
                    echo(f"The run for {', '.join(p.name for p in ready)} stopped: {type(err).__name__}: {err}")
            stop.wait(POLL_SECONDS)
    finally:
        observer.stop()
        observer.join()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        echo("Stopped watching.")
