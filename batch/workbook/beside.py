"""A part's bytes made by a process of its own while the writer does other work.

The write of a large file is one Python thread making rows, with deflate on the second core. The
rows of the Findings sheet depend on the file's result alone, not on the intake's rows written
before them; so a forked copy of the worker makes them while the worker rewrites the intake,
deflated (ISA-L, level 1) into an unnamed temporary file in the outbox, and the worker inflates
them from there when the Findings sheet's turn comes: the temporary file takes about as much room
on the disk as the part takes in the returned workbook. The bytes are those `make()` yields in the
worker itself. A process that could not be started, failed, did not finish, or has not ended once
the worker has waited for it as long again as it worked beside it (at least `WAIT_AT_LEAST`
seconds) leaves the part to the worker, which makes it again from its start: the part is always
written whole, and the same.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import signal
import tempfile
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from isal import isal_zlib

from batch.workbook.deflate import WBITS

PIECE = 1 << 20  # the bytes read back at once
DONE = b"\x00njcredits: made to its end"  # the child's last bytes (no part of XML holds a NUL)
PR_SET_PDEATHSIG = 1
WAIT_AT_LEAST = 5.0  # seconds the worker waits for the process, however soon it asks for the part


def _die_with_parent(parent: int) -> None:
    """The child is killed with the worker (a worker the run stops takes it along, and its copy of
    the worker's pipes never keeps the run waiting). A worker that died before the child asked for
    this (the child's parent is then another process) ends the child now."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the child ends when its part is made
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _fork() -> int:
    if not hasattr(os, "fork"):  # a system without fork: the part is made by the worker
        raise OSError("no fork on this system")
    with warnings.catch_warnings():  # Python 3.12 warns of a fork beside threads: the child runs none of them
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def _write_all(fd: int, data: bytes, at: int) -> int:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, at)
        at, view = at + n, view[n:]
    return at


class Made:
    """A part's chunks made here when their turn comes (no process of their own)."""

    def __init__(self, make: Callable[[], Iterable[bytes]]):
        self.make = make

    def __call__(self) -> Iterator[bytes]:
        return iter(self.make())

    def close(self) -> None:
        pass


class MadeBeside(Made):
    """A part's chunks made by a forked process from now on; called, it yields the same bytes (once
    that process has ended). `folder` holds the unnamed temporary file (the output's folder).
    `fault`: called in the child before it makes anything (the tests' way to fail it). `close()`
    ends the process and frees the file, whether or not the part was written."""

    def __init__(self, make: Callable[[], Iterable[bytes]], folder: Path, fault: Callable[[], None] | None = None):
        super().__init__(make)
        self.pid, self.held = None, tempfile.TemporaryFile(dir=folder)
        parent, self.started = os.getpid(), time.monotonic()
        try:
            self.pid = _fork()
        except OSError:  # no process to be had (memory, the process limit): made here when its turn comes
            self.held.close()
            raise
        if self.pid == 0:  # the child: the part into the file, then out without the worker's exit handlers
            code = 1
            try:
                faulthandler.disable()  # a crash of the child is no one's to read: the worker makes the part
                _die_with_parent(parent)
                if fault is not None:
                    fault()
                at, deflater = 0, isal_zlib.compressobj(1, zlib.DEFLATED, WBITS)
                for chunk in make():
                    at = _write_all(self.held.fileno(), deflater.compress(chunk), at)
                _write_all(self.held.fileno(), deflater.flush() + DONE, at)
                code = 0
            finally:
                os._exit(code)

    def _ended(self, stop: bool) -> int:
        """The child's exit status once it has ended: killed first when `stop`, or when it has not
        ended within as long again as it has run (at least WAIT_AT_LEAST seconds); -1 when it was
        killed so, or was reaped before."""
        if self.pid is None:
            return -1
        pid, self.pid = self.pid, None
        try:
            if not stop:
                asked = time.monotonic()
                deadline = asked + max(WAIT_AT_LEAST, asked - self.started)
                while True:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        return status
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.002)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        return -1

    def made(self) -> int | None:
        """Once the child has ended: how many bytes it wrote (the part deflated), or None when it did
        not make the whole part."""
        status = self._ended(stop=False)
        fd = self.held.fileno()
        end = os.fstat(fd).st_size - len(DONE)
        if status != 0 or end < 0 or os.pread(fd, len(DONE), end) != DONE:
            self.held.close()  # the child's failure: what it made is not kept, nor its room on the disk
            return None
        return end

    def __call__(self) -> Iterator[bytes]:
        end = self.made()
        if end is None:
            yield from self.make()
            return
        fd = self.held.fileno()
        try:
            at, inflater = 0, isal_zlib.decompressobj(WBITS)
            while at < end:
                piece = os.pread(fd, min(PIECE, end - at), at)
                if not piece:
                    raise OSError(f"the temporary copy of a part ended at byte {at} of {end}")
                at += len(piece)
                yield inflater.decompress(piece)
            yield inflater.flush()
            if not inflater.eof:
                raise OSError(f"the temporary copy of a part ends before its Deflate stream does ({end} bytes)")
        finally:
            self.held.close()

    def close(self) -> None:
        self._ended(stop=True)
        self.held.close()


def made_beside(make: Callable[[], Iterable[bytes]], folder: Path, fault: Callable[[], None] | None = None) -> Made:
    """`make()`'s chunks, made by a process of their own from now on when one can be had
    (`MadeBeside`), else here when their turn comes (`Made`)."""
    try:
        return MadeBeside(make, folder, fault)
    except OSError:
        return Made(make)
