"""Parts' bytes made by a process of their own while the writer does other work.

The write of a large file is one Python thread making rows, with deflate on the second core. The
Findings sheet, and the drawing of the comment boxes of a sheet that had none, depend on the file's
result alone, not on the intake's rows written before them; so a forked copy of the worker makes
them in turn while the worker rewrites the intake, each deflated into an unnamed temporary file of
its own in the outbox, with its CRC-32 and size, and when its turn comes the worker copies that
Deflate stream into the returned workbook as it is (`MadeBeside.deflated`): no byte of it is
inflated or compressed again there. The temporary files take as much room on the disk as the parts
take in the returned workbook. `make()` yields the pieces the worker compresses (exactly
`BATCH_BYTES` each, `batch.workbook.sheetxml.batched`), and both compress them with the same
compressor (`batch.workbook.deflate.compressor`), so the member is byte for byte the one the worker
would have written. A process that could not be started, failed, did not finish, or has not ended
once the worker has waited for it as long again as it worked beside it (at least `WAIT_AT_LEAST`
seconds) leaves every part to the worker, which makes each again from its start: a part is always
written whole, and the same.

What the copy reads of the worker's Python objects it copies (a page the copy reads an object on
is written, as its reference count moves): the findings' pages for the Findings sheet. The boxes'
drawing reads two arrays of numbers, whose pages stay shared; the comments part, which reads the
text of every note, is left to the worker (made beside, it copied about 370 MB more of a million
Transfers rows, to save a tenth of a second of 100,000).
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import signal
import struct
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from isal import isal_zlib

from batch.workbook.deflate import compressor

PIECE = 1 << 20  # the bytes read back at once
DONE = b"\x00njcredits: made to its end"  # the child's last bytes, after a part's CRC-32 and size (`MADE`)
MADE = struct.Struct("<IQ")  # a part's CRC-32 and size in bytes, after its Deflate stream
PR_SET_PDEATHSIG = 1
WAIT_AT_LEAST = 5.0  # seconds the worker waits for the process, however soon it asks for the part


def die_with_parent(parent: int) -> None:
    """A child forked from the worker (`fork`) is killed with the worker (a worker the run stops
    takes it along, and its copy of the worker's pipes never keeps the run waiting). A worker that
    died before the child asked for this (the child's parent is then another process) ends the
    child now."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the child ends when its work is done
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def fork() -> int:
    """`os.fork()` in a worker, for a child that does part of its work beside it (here, and the
    records sent beside the write, `batch.run.workers`); OSError where there is no fork."""
    if not hasattr(os, "fork"):  # a system without fork: the work is done by the worker
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


class _Child:
    """One forked process making several parts in turn, each deflated (`compressor(1)`) into an
    unnamed temporary file of its own in `folder`, followed by its CRC-32 and size (`MADE`) and
    `DONE`. `fault`: called in the child before it makes anything (the tests' way to fail it)."""

    def __init__(self, makes: list[Callable[[], Iterable[bytes]]], folder: Path, fault: Callable[[], None] | None):
        self.pid, self.status, self.files = None, None, []
        try:
            for _ in makes:
                self.files.append(tempfile.TemporaryFile(dir=folder))
        except OSError:
            self.close_files()
            raise
        parent, self.started = os.getpid(), time.monotonic()
        try:
            self.pid = fork()
        except OSError:  # no process to be had (memory, the process limit): made here when their turn comes
            self.close_files()
            raise
        if self.pid == 0:  # the child: the parts into their files, then out without the worker's exit handlers
            code = 1
            try:
                faulthandler.disable()  # a crash of the child is no one's to read: the worker makes the parts
                die_with_parent(parent)
                if fault is not None:
                    fault()
                for make, held in zip(makes, self.files, strict=True):
                    at, deflater, crc, size = 0, compressor(1), 0, 0
                    for piece in make():
                        crc, size = isal_zlib.crc32(piece, crc), size + len(piece)
                        at = _write_all(held.fileno(), deflater.compress(piece), at)
                    _write_all(held.fileno(), deflater.flush() + MADE.pack(crc, size) + DONE, at)
                code = 0
            finally:
                os._exit(code)

    def ended(self, stop: bool) -> int:
        """The child's exit status once it has ended (asked again, the same): killed first when
        `stop`, or when it has not ended within as long again as it has run (at least
        WAIT_AT_LEAST seconds); -1 when it was killed so. Its status is kept only once it is
        reaped: a wait cut short (an exception in it) leaves it to be killed by `close()`."""
        if self.status is not None:
            return self.status
        if not stop:
            asked = time.monotonic()
            deadline = asked + max(WAIT_AT_LEAST, asked - self.started)
            while time.monotonic() < deadline:
                if self._reaped(os.WNOHANG):
                    return self.status
                time.sleep(0.002)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        self._reaped(0)
        self.status = -1
        return -1

    def _reaped(self, options: int) -> bool:
        """Whether the child is reaped now (`os.waitpid` with `options`), its status then kept."""
        try:
            done, status = os.waitpid(self.pid, options)
        except ChildProcessError:  # reaped before, by whoever: nothing to read of it
            done, status = self.pid, -1
        if done:
            self.pid, self.status = None, status
        return bool(done)

    def close_files(self) -> None:
        for held in self.files:
            held.close()


class MadeBeside(Made):
    """A part's pieces made and deflated by a forked process (`_Child`, which may make others too)
    from now on: `deflated()` gives its Deflate stream once that process has ended, or None, and the
    part is then made here, called as a `Made`. `close()` ends the process and frees the part's
    file, whether or not the part was written."""

    def __init__(self, make: Callable[[], Iterable[bytes]], child: _Child, index: int):
        super().__init__(make)
        self.child, self.held = child, child.files[index]

    @property
    def pid(self) -> int | None:
        """The process making the part, until it has ended."""
        return self.child.pid

    def made(self) -> tuple[int, int, int] | None:
        """Once the child has ended: how many bytes it wrote of this part's Deflate stream, and the
        part's CRC-32 and size; None when it did not make every part whole."""
        status = self.child.ended(stop=False)
        fd = self.held.fileno()
        end = os.fstat(fd).st_size - MADE.size - len(DONE)
        if status != 0 or end < 0 or os.pread(fd, len(DONE), end + MADE.size) != DONE:
            self.held.close()  # the child's failure: what it made is not kept, nor its room on the disk
            return None
        return end, *MADE.unpack(os.pread(fd, MADE.size, end))

    def deflated(self) -> tuple[Iterator[bytes], int, int] | None:
        """The part's Deflate stream (pieces of it, read as they are written), its CRC-32 and its size
        (`sheetxml.stream_deflated`); None when the process did not make it (see `made`)."""
        made = self.made()
        if made is None:
            return None
        end, crc, size = made
        return self._read(end), crc, size

    def _read(self, end: int) -> Iterator[bytes]:
        fd = self.held.fileno()
        try:
            at = 0
            while at < end:
                piece = os.pread(fd, min(PIECE, end - at), at)
                if not piece:
                    raise OSError(f"the temporary copy of a part ended at byte {at} of {end}")
                at += len(piece)
                yield piece
        finally:
            self.held.close()

    def close(self) -> None:
        self.child.ended(stop=True)
        self.held.close()


def made_beside_all(
    makes: dict[str, Callable[[], Iterable[bytes]]], folder: Path, fault: Callable[[], None] | None = None
) -> dict[str, Made]:
    """Each part's pieces (`makes`: name -> `make`, yielding the pieces the worker compresses), made
    in turn by one process of their own from now on when one can be had (`MadeBeside`), else each
    here when its turn comes (`Made`)."""
    try:
        child = _Child(list(makes.values()), folder, fault)
    except OSError:
        return {name: Made(make) for name, make in makes.items()}
    return {name: MadeBeside(make, child, i) for i, (name, make) in enumerate(makes.items())}
