"""The pages a process freed, handed back to the system.

Python's and the C library's allocators keep the pages of what a process frees, to use them again.
A large sheet frees far more than it keeps as it goes (the read's rows, a block's texts, the XML
of a block of rows written): the freed pages are used again, but glibc's heap cannot shrink past
the live objects above them, so the process stays as large as it ever was, and each stage that
allocates afresh makes it larger. `give_back_freed` hands those pages back at once (glibc's
`malloc_trim`); `Trimmer` does it from a thread whenever the process has grown by `TRIM_GROWTH`
since it last did, so a large file's worker holds about what it uses, not what it once used.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading

TRIM_GROWTH = 128 << 20  # bytes the process grows by before the trimmer hands freed pages back
TRIM_EVERY = 0.25  # seconds between the trimmer's looks at the process's size


def give_back_freed() -> None:
    """Hand the pages of what this process freed back to the system (glibc's `malloc_trim`). The
    allocator keeps the pages Python frees: a million records' read values dropped (about 1.4 GB of
    text) left the process as large as it was. Nothing where the C library has no such call."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def resident_bytes() -> int | None:
    """The process's resident size, from /proc (None where there is no /proc)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class Trimmer:
    """While entered, a thread looks at the process's resident size every `every` seconds and hands
    freed pages back (`give_back_freed`) whenever it has grown by `growth` bytes since the last time
    (or since it was entered); a size that falls is the new mark. The trim runs without the
    interpreter's lock (ctypes releases it): the process goes on meanwhile. Nothing where there is
    no /proc or no `malloc_trim`. `trims`: how many times it trimmed."""

    def __init__(self, growth: int | None = None, every: float | None = None):
        self.growth = TRIM_GROWTH if growth is None else growth
        self.every = TRIM_EVERY if every is None else every
        self.trims = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Trimmer:
        try:
            trim = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):
            return self
        if resident_bytes() is None:
            return self
        self._thread = threading.Thread(target=self._watch, args=(trim,), name="njcredits-trimmer", daemon=True)
        self._thread.start()
        return self

    def _watch(self, trim) -> None:
        mark = resident_bytes() or 0
        while not self._stop.wait(self.every):
            now = resident_bytes() or 0
            if now >= mark + self.growth:
                trim(0)
                self.trims += 1
                mark = resident_bytes() or 0
            elif now < mark:
                mark = now

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
