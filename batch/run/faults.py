"""Fault points for the fault-injection tests (tests/test_faults.py): nothing happens unless the
environment variable NJCREDITS_FAULT names a point.

    NJCREDITS_FAULT=POINT:run     kill -9 the run at POINT
    NJCREDITS_FAULT=POINT:worker  kill -9 the worker at POINT (worker points only)
    NJCREDITS_FAULT=POINT:enospc  raise "no space left on device" at POINT
    NJCREDITS_FAULT=POINT:eacces  raise "permission denied" at POINT (a folder that cannot be written,
                                  which root, who ignores permissions, cannot otherwise be shown)
    NJCREDITS_FAULT=POINT:erofs   (and edquot, efbig, eio) raise that OS error at POINT
    NJCREDITS_FAULT=POINT:ERRNO/wrapped  the same error wrapped as xlsxwriter wraps it (FileCreateError)
    NJCREDITS_FAULT=POINT:abort   the process aborts (SIGABRT), as a reader's native crash does
    NJCREDITS_FAULT=POINT:memory  raise MemoryError, as a file that needs more than the memory limit does
    NJCREDITS_FAULT=POINT:ACTION/reused  the action only in a worker that has read other files before
    NJCREDITS_FAULT=POINT:hold    the process waits at POINT (saying so in the file NJCREDITS_FAULT_GATE
                                  names, plus ".held") until that file exists: runs held side by side

Points: `staged` (after the inputs are staged), `hashing` (while a staged input is hashed),
`child-read` (in a worker, as it begins a file), `child-partial` (in a worker, as it starts writing
its output), `child-records` (in a worker, as it sends the run a large file's records before
writing it), `child-send` (in a worker, as it sends the run its file's outcome), `recorded-early`
(in the run, once it has recorded those records, as the worker writes), `decided` (in a run
of several files, once the run has decided which files are processed again with the others'
records), `placed` (between the output's rename and the archive move), `archived` (between the
archive move and the ledger row's completion), `report` (as the run report is written); and for
injected errors `place` (as the output is put in the outbox), `archive` (as the input is moved to
the archive), `child-write` (in a worker, as the output workbook is closed) and `ledger` (as a
file's ledger row is begun). `child-beside` is met in the process a worker forks to make a large
Findings sheet as it writes the intake (`batch.workbook.beside`): an action there but `run` (which
kills the run) fails only that process, and the worker makes the sheet itself.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import signal
import time
from pathlib import Path

ENV = "NJCREDITS_FAULT"
ERRNOS = {name: getattr(errno, name.upper()) for name in ("enospc", "eacces", "erofs", "edquot", "efbig", "eio")}


def fault(point: str, path: str | None = None, reused: bool = False) -> None:
    """The fault NJCREDITS_FAULT names, at `point` (`reused`: in a worker that has read other files)."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, _, action = spec.partition(":")
    if name != point:
        return
    action, _, modifier = action.partition("/")
    if modifier == "reused" and not reused:
        return
    if action == "hold":
        gate = Path(os.environ["NJCREDITS_FAULT_GATE"])
        Path(f"{gate}.{os.getpid()}.held").write_text(point, encoding="utf-8")
        deadline = time.monotonic() + 300
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return
    if action == "abort":
        os.abort()
    if action == "memory":
        raise MemoryError
    if action in ERRNOS:
        code = ERRNOS[action]
        err = OSError(code, os.strerror(code), path)
        if modifier == "wrapped":
            from xlsxwriter.exceptions import FileCreateError

            raise FileCreateError(err) from err
        raise err
    if action == "worker":
        if path:  # leave a started temporary file behind, as a real kill would
            Path(path).write_bytes(b"PK\x03\x04")
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "run":
        parent = multiprocessing.parent_process()  # in a worker, the run that started it
        run = parent.pid if parent is not None else os.getpid()
        if path:
            Path(path).write_bytes(b"PK\x03\x04")
        os.kill(run, signal.SIGKILL)
