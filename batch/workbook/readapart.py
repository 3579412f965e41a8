"""A large workbook read by a forked copy of the process, which hands back what it read.

Reading a sheet makes many more Python objects than it keeps: the readers' rows, the grid, texts
made and let go. Python's allocator keeps the pages those leave behind as long as a live object
remains on them, so a process that has read a full GrowNJ sheet (1,048,575 rows of 44 columns)
holds about 2.1 GB where the cells it kept take about 1.0 GB once copied compactly, and every later
stage adds to those 2.1 GB. A file of at least `READ_APART_FROM` bytes is therefore read by a
forked copy of the process (`read_apart`): the copy reads it as the process would, sends back
the workbook it read through a pipe (pickled as it is made, so neither process holds the
pickle whole), and ends; its pages end with it. The workbook comes back as it was read, every
value and type the same; the sheet specs it refers to are the process's own (sent by name).

An error the read raises in the copy is raised here, the same error with the same message. Where
the copy cannot be had or cannot send what it read (no fork, no process, an error that cannot be
pickled, the copy killed), `read_apart` returns None and the caller reads the file itself, as it
does any smaller file: nothing a file does is met in the copy only.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import pickle
import signal
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from batch.memory import Trimmer
from batch.workbook.beside import die_with_parent, fork

READ_APART_FROM = 32 << 20  # bytes on disk: 100,000 GrowNJ rows take about 13 MB, a full sheet 140 MB
PIPE_BUFFER = 1 << 20
COLUMNS_FROM = 10_000  # rows of a sheet's cells sent apart from the workbook, a block of rows at a time (`_cells`)
ROWS_SENT = 10_000  # rows of cells a pickle (`_send_rows`): its memo holds theirs only


class _Pickler(pickle.Pickler):
    def __init__(self, file, shared: dict[int, str]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.shared = shared

    def persistent_id(self, obj):
        return self.shared.get(id(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, shared: dict[str, Any]):
        super().__init__(file)
        self.shared = shared

    def persistent_load(self, pid):
        return self.shared[pid]


def read_apart(read: Callable[[], Any], shared: dict[str, Any]) -> Any | None:
    """What `read()` returns (or raises), called in a forked copy of this process; the objects of
    `shared` (name -> object, each sent by its name) are this process's own in what comes back.
    None when the copy could not read or send it (the caller then reads here)."""
    r, w = os.pipe()
    try:
        parent = os.getpid()
        pid = fork()
    except OSError:  # no fork, no process to be had
        os.close(r)
        os.close(w)
        return None
    if pid == 0:  # the copy: what it read, or the error it met, into the pipe; then out without exit handlers
        code = 1
        try:
            os.close(r)
            faulthandler.disable()  # a crash of the copy is no one's to report: the process reads the file itself
            die_with_parent(parent)
            names = {id(obj): name for name, obj in shared.items()}
            frames = {}
            try:
                with Trimmer():  # the read frees far more than it keeps (its rows, its blocks' packages)
                    book = read()
                frames = _cells(book)
                payload = ("read", book, {i: (f.index, f.columns) for i, f in frames.items()})
            except Exception as error:  # noqa: BLE001 - raised again by the process
                payload = ("raised", error, {})
                pickle.loads(pickle.dumps(payload))  # an error that cannot be sent whole: sent as nothing (exit 1)
            with os.fdopen(w, "wb", buffering=PIPE_BUFFER) as out:
                _Pickler(out, names).dump(payload)
                for frame in frames.values():
                    _send_rows(frame, lambda block: _Pickler(out, names).dump(block))
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    payload = None
    try:
        with os.fdopen(r, "rb", buffering=PIPE_BUFFER) as source:
            try:
                payload = _Unpickler(source, shared).load()
                for i, (index, columns) in payload[2].items():
                    values = np.empty((len(columns), len(index)), dtype=object)
                    for start in range(0, len(index), ROWS_SENT):
                        values[:, start : start + ROWS_SENT] = _Unpickler(source, shared).load()
                    payload[1].sheets[i].cells = pd.DataFrame(values.T, index=index, columns=columns, dtype=object, copy=False)
            except Exception:  # noqa: BLE001 - the copy ended before it sent it whole: read here
                payload = None
    finally:
        status = _ended(pid, payload is None)
    if payload is None or status != 0:
        return None
    kind, value, _frames = payload
    if kind == "raised":
        raise value
    return value


def _send_rows(frame: pd.DataFrame, send: Callable[[np.ndarray], Any]) -> None:
    """The frame's cells (its one block of objects, columns in order) sent `ROWS_SENT` rows at a
    time, (columns, rows) each, and let go once sent: the reader made the cells a row at a time,
    so the pages of the rows sent empty and are given back as the process that reads them fills."""
    block = frame._mgr.blocks[0]
    values = block.values
    if not (block.mgr_locs.as_array == np.arange(frame.shape[1])).all():
        values = values[block.mgr_locs.as_array.argsort()]
    for start in range(0, values.shape[1], ROWS_SENT):
        send(values[:, start : start + ROWS_SENT])
        if values.flags.writeable:
            values[:, start : start + ROWS_SENT] = None


def _cells(book) -> dict[int, pd.DataFrame]:
    """The sheets' cells (sheet's position -> its cells) sent a block of rows at a time, each taken
    out of its sheet (`cells` left empty until they come back): a frame of one block of objects, as
    the reader makes them, of `COLUMNS_FROM` rows or more."""
    out = {}
    for i, sheet in enumerate(getattr(book, "sheets", ())):
        cells = getattr(sheet, "cells", None)
        one_block = isinstance(cells, pd.DataFrame) and cells._mgr.nblocks == 1 and (cells.dtypes == np.dtype(object)).all()
        if one_block and len(cells) >= COLUMNS_FROM:
            out[i] = cells
            sheet.cells = cells.iloc[:0]
    return out


def _ended(pid: int, stop: bool) -> int:
    """The copy's exit status, once it has ended (killed first when `stop`: it sent nothing whole)."""
    if stop:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    while True:
        try:
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        except ChildProcessError:
            return -1
        except InterruptedError:
            continue
