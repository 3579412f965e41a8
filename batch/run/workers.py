"""Each file is read in a worker process (a memory limit, a timeout): whatever a file does to the
readers, only its worker ends. A worker that read a file to its end and stayed small reads the run's
next file (start-up is paid once per worker, not per file); a file that fails by memory or by a crash in
a worker that had read other files is read again in a new worker of its own, so no file's outcome
depends on another's (`Workers`). No folder or file of the working directory, the inbox or the outbox
can change what code a worker runs.

The workers' path. Workers are forked from a fork server (`multiprocessing`'s "forkserver": they do not
inherit the inbox lock). The fork server is started as `python -c ...`, which puts the working
directory first on its path, and every worker is given the run's own `sys.path` (with `''` turned
into the working directory: `multiprocessing.spawn.get_preparation_data`) and re-imports the run's
main module (`spawn.prepare`). So a folder named `batch` or `validators` where the tool is run (a
team's notes) would be imported instead of njcredits. Workers therefore start on `worker_path()`: the
run's path without `''`, relative entries and the working directory (unless that is the folder
njcredits itself is installed in). `worker_environment()` puts it in place while workers are
started: the fork server starts with PYTHONSAFEPATH (no working directory) and PYTHONPATH set to it,
and each worker is handed it as its `sys.path`.

The fork server of a command. Started by multiprocessing, the fork server is a new interpreter that
imports everything a worker needs (about a second). The `run` and `watch` commands instead fork it
from themselves (`start_fork_server`) before the run takes its lock or starts a thread, once they
have imported what workers need (they import it anyway for the run report): the same server, the
same workers, no second import. Workers are still given the workers' path, and check where njcredits
comes from, as above.

A worker that cannot start is the environment's failure, never the file's: the worker first imports
what it needs and checks each of njcredits's packages comes from the folder the run's came from
(`check_product`), and says it started; a worker that ends before it says so, or says it cannot
start, leaves the file in the inbox with a message naming the import error (`diagnose` finds it when
the worker could not even say it).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import faulthandler
import functools
import gc
import importlib
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from batch.memory import Trimmer, give_back_freed
from batch.run.environment import WRITE_ERRNOS, WriteFailed, cannot_start, environment_message, is_environment, os_error
from batch.run.faults import fault
from batch.run.names import shown

# what a worker imports before it takes a file (the fork server imports it once, for every worker)
WORKER_MODULES = ("batch.run.preload",)
PRODUCT_PACKAGES = ("batch", "validators")  # njcredits's own packages: each must come from njcredits's folder
STOP_GRACE_SECONDS = 0.5  # how long a worker's unexpected end waits for the run to note a stop signal
# a worker takes another file only when the last one left it at most this resident (and under half
# its memory limit): a worker that grew stays no longer than its file
REUSE_RSS_MB = 512
RETIRE_SECONDS = 5  # how long a worker the run is done with may take to end before it is killed
DIAGNOSIS_SECONDS = 120  # longest the interpreter that finds why a worker could not start may take
# a file of at least this many records sends them to the run before its write, for the run to record
# them in the ledger while the worker writes (about a second of 100,000 records); a smaller file's
# take the ledger under a tenth of a second, not worth a message and a transaction of their own
EARLY_RECORDS = 10_000
# the records of a file of at most this many are made and sent by a forked copy of the worker while
# the worker writes the file (`RecordsBeside`: about half a second of 100,000 Transfers rows off the
# worker's path); a larger file's by the worker before its write, as the copy holds them, and the pages
# of the result it copies as it reads them, beside the write (a full sheet's would be gigabytes)
RECORDS_BESIDE_UP_TO = 250_000
# a larger file's are made and sent this many at a time (`Result.record_blocks`), and recorded by the
# run as they come: a full sheet's are never whole in either process. A whole number of the blocks in
# which the read values are made (`batch.reviews.INPUTS_BLOCK`), so each block's are made as whole
RECORD_BLOCK = 20_000
TRIM_FROM = 8 << 20  # bytes on disk of a file processed with a trimmer (`work`): 100,000 GrowNJ rows take 13 MB
STOPPED_READING = "the run was stopped (a stop signal) before this file was done; it stays in the inbox."
STOPPED_WAITING = "the run was stopped (a stop signal) before this file was read; it stays in the inbox."


# -- the workers' path --------------------------------------------------------------------------


def product_home() -> str:
    """The folder njcredits's packages are installed in (site-packages, or the checkout of an editable
    install), as the run imported them."""
    return os.path.dirname(_folder_of(importlib.import_module("batch")))


def product_folders() -> dict[str, str]:
    """Where each of njcredits's own packages must come from: {"batch": "/.../batch", ...}."""
    home = product_home()
    return {name: os.path.realpath(os.path.join(home, name)) for name in PRODUCT_PACKAGES}


def _folder_of(module) -> str:
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.realpath(path)) if path else ""


def worker_path() -> list[str]:
    """The `sys.path` workers start with: the run's own, without `''`, relative entries and the working
    directory (now, or when the run started), unless that is the folder njcredits is installed in; that
    folder is on it. What is left holds the installed product and its dependencies."""
    from multiprocessing import process

    home = os.path.realpath(product_home())
    here = {os.path.realpath(d) for d in (os.getcwd(), process.ORIGINAL_DIR) if d}
    path = []
    for entry in sys.path:
        if not os.path.isabs(entry) and (not entry or os.path.exists(entry) or not _claimed(entry)):
            continue  # '' and relative paths name the working directory; an installer's placeholder stays
        real = os.path.realpath(entry)
        if real in here and real != home:
            continue
        if entry not in path:
            path.append(entry)
    if home not in {os.path.realpath(entry) for entry in path}:  # found through '' (a checkout, not installed)
        path.append(home)
    return path


def _claimed(entry: str) -> bool:
    """An entry of sys.path that is no path but a path hook's own (an editable install's placeholder)."""
    for hook in sys.path_hooks:
        try:
            hook(entry)
        except ImportError:
            continue
        return True
    return False


@contextmanager
def worker_environment(path: list[str]):
    """While workers are started: `sys.path` is `path` (multiprocessing hands it to each worker), and
    the fork server, if it starts now, starts on it (PYTHONSAFEPATH: not the working directory first;
    PYTHONPATH: the path)."""
    saved_path, saved_env = sys.path[:], {k: os.environ.get(k) for k in ("PYTHONSAFEPATH", "PYTHONPATH")}
    sys.path[:] = path
    os.environ.update(PYTHONSAFEPATH="1", PYTHONPATH=os.pathsep.join(path))
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def check_product(modules: tuple[str, ...], product: dict[str, str]) -> None:
    """In a worker, before it takes a file: import what it needs, and check each of njcredits's packages
    comes from the folder the run's came from (not a folder of the same name somewhere else)."""
    for name in modules:
        importlib.import_module(name)
    for name, folder in product.items():
        found = _folder_of(importlib.import_module(name))
        if found != folder:
            raise ImportError(f"{name} was imported from {found or 'a folder without code'}, not from njcredits's own {folder}")


def diagnose(path: list[str], modules: tuple[str, ...], product: dict[str, str]) -> str:
    """Why a worker ended before it could say it started, in Python's words: an interpreter started as
    a worker is (the same flags, path, working directory and main module, prepared as multiprocessing
    prepares a worker) imports what a worker imports; the last line of its error."""
    from multiprocessing import spawn, util

    with worker_environment(path):
        data = spawn.get_preparation_data("diagnosis")
        env = dict(os.environ)
    data.pop("authkey", None)  # never handed to another process this way; not needed to import
    code = (
        "import pickle, sys; from multiprocessing import spawn; data, modules, product = pickle.load(sys.stdin.buffer); "
        "spawn.prepare(data); from batch.run.workers import check_product; check_product(modules, product)"
    )
    try:
        done = subprocess.run(
            [spawn.get_executable(), *util._args_from_interpreter_flags(), "-c", code],
            input=pickle.dumps((data, modules, product)),
            env=env,
            capture_output=True,
            timeout=DIAGNOSIS_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{type(err).__name__}: {err}"
    lines = [line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].strip() if done.returncode and lines else ""


def start_fork_server() -> bool:
    """Start multiprocessing's fork server as a fork of this process, which has imported what workers
    import, instead of as a new interpreter importing it all again. Only from a process that runs one
    thread and has no fork server yet, and only on the Python versions whose fork server this start
    matches (3.11 to 3.13). Started as a worker is, on the workers' path (the resource tracker that
    multiprocessing starts with it too), and holding only what the fork server multiprocessing starts
    holds: the standard streams, its listener and its end of the clients' pipe. Whatever stops it (a
    socket path too long for the temporary folder, no file descriptor left, a library that fails
    to import) returns False, as do the cases above: multiprocessing then starts its fork server
    itself when the first worker starts, and the run reports a failure there as it always has. What
    the server runs is multiprocessing's own loop (`forkserver.main`)."""
    from multiprocessing import forkserver

    server = forkserver._forkserver
    if not (3, 11) <= sys.version_info[:2] <= (3, 13) or threading.active_count() > 1:
        return False
    if getattr(server, "_forkserver_pid", True) is not None or not hasattr(server, "_forkserver_alive_fd"):
        return False
    try:
        with worker_environment(worker_path()):
            for name in WORKER_MODULES:
                importlib.import_module(name)
            address, alive_w, pid = _fork_server()
    except Exception:  # noqa: BLE001 - multiprocessing's own start meets it again, and the run reports it
        return False
    server._forkserver_address, server._forkserver_alive_fd, server._forkserver_pid = address, alive_w, pid
    return True


def _fork_server() -> tuple[object, int, int]:
    """Fork the fork server (`start_fork_server`): its address, the clients' end of its pipe, its pid."""
    import socket
    from multiprocessing import connection, forkserver, resource_tracker, util

    resource_tracker.ensure_running()
    with socket.socket(socket.AF_UNIX) as listener:
        address = connection.arbitrary_address("AF_UNIX")
        listener.bind(address)
        if not util.is_abstract_socket_namespace(address):
            os.chmod(address, 0o600)
        listener.listen()
        alive_r, alive_w = os.pipe()  # every client holds the write end: the server ends when they all have
        try:
            pid = os.fork()
        except OSError:
            os.close(alive_r)
            os.close(alive_w)
            raise
        if pid == 0:  # the server: it never returns into the command
            code = 1
            try:
                if faulthandler.is_enabled():  # the caller's (pytest's: a copy of stderr) is closed below: a worker's
                    faulthandler.enable(2)  # crash report would go to whatever descriptor takes its number (the server's pipe)
                _close_all_but(0, 1, 2, listener.fileno(), alive_r)
                resource_tracker._resource_tracker._fd = None  # closed above; each worker is handed it
                forkserver.main(listener.fileno(), alive_r, [])
            except SystemExit:  # how the server ends when its clients have
                code = 0
            finally:
                os._exit(code)
        os.close(alive_r)
    return address, alive_w, pid


def _close_all_but(*keep: int) -> None:
    """Close every file descriptor of this process but `keep` (what a new interpreter started with
    `close_fds` would hold)."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: every number up to the limit
        fds = range(3, min(os.sysconf("SC_OPEN_MAX"), 1 << 16))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:  # the listing's own, already closed
                pass


# -- one file, in a worker ----------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What a worker is given: the staged input, the partial output it writes, the run's limits, and
    what it must import and where njcredits's packages are."""

    path: str
    partial: str
    memory_mb: int
    limits: object
    as_of: dt.date | None
    ledger: object  # a SQLite file's path or a LedgerURL (pickled to the worker, password and all: never on a command line)
    run_id: str
    team: str | None = None
    same_run: object = None  # the run's other workbooks' records it reads (batch.run.samerun.SameRun)
    ask: bool = False  # before writing, ask the run whether the file will be processed again (`work`)
    early: int = 0  # the records of a file of at least this many are sent before its write, for the run to record them meanwhile (0: never)
    beside_up_to: int = RECORDS_BESIDE_UP_TO  # those of a file of at most this many are made and sent beside the write (`RecordsBeside`)
    block: int = RECORD_BLOCK  # a larger file's are made and sent this many at a time
    modules: tuple[str, ...] = WORKER_MODULES
    product: dict = field(default_factory=dict)


def work(
    path: str,
    partial: str,
    limits=None,
    as_of: dt.date | None = None,
    ledger=None,
    run_id: str | None = None,
    team: str | None = None,
    same_run=None,
    ask=None,
    early=None,
) -> dict:
    """Process one workbook and write its output under the partial name. `as_of` None means the day
    the file is processed (local time); the ledger is only read (prior incentive records, the
    portfolio, and the reviewer decisions of `team`'s records); `same_run`: what it reads of the
    run's other workbooks (batch.run.samerun).

    `ask` (the first reading of a file in a run of several): the groups of its records
    (`group_keys`) go back with the result; before writing, it is asked with the groups its rules
    read whether another workbook of the run holds one of them. Such a file is processed again with
    the others' records once every file is read (`decide` makes it a reader), and that output
    replaces this one: when the run says so, this one is not written (`written` False in the
    result). What the run holds of the records (`held`) is still worked out by the run: a second
    copy of the records in the result would count against the worker's memory limit as it is sent.

    `early` (a run that records a file's records as it writes the file): (how many records at
    least, a function sending them, how many at most are sent beside the write, how many are made
    and sent at a time otherwise). The records are final before the write: those of a file that is
    written and has at least that many are sent then (the function returns True when sent), by a
    copy of this process as it writes (`RecordsBeside`) when they are at most the third number,
    else here before the write, a block at a time (unless they were made whole to be asked about),
    and dropped here; the result holds none (`records` None), and the run puts back what it keeps
    of those it was sent. A file without the memory left to send them then sends them with its
    result.

    A file of at least `TRIM_FROM` bytes is processed with a `batch.memory.Trimmer` running: the
    pages its stages free are handed back as it goes."""
    large = _size(path) >= TRIM_FROM
    with Trimmer() if large else contextlib.nullcontext():
        return _work(path, partial, limits, as_of, ledger, run_id, team, same_run, ask, early)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:  # the read says what is wrong with it
        return 0


def _work(path: str, partial: str, limits, as_of, ledger, run_id, team, same_run, ask, early) -> dict:
    """`work`, its trimmer running or not."""
    from batch.pipeline import process
    from batch.run.samerun import group_keys, held_rows
    from batch.workbook.safety import Limits
    from batch.workbook.writing import write

    started = time.perf_counter()
    stage("reading")
    with stages_told():
        result = process(
            Path(path),
            limits or Limits(),
            as_of=as_of,
            ledger=ledger or None,  # a path or a LedgerURL, as the run gave it
            run_id=run_id,
            team=team,
            scratch=Path(partial),
            same_run=same_run,
        )
    records, kept, written, sent, beside = None, {}, True, False, None
    try:
        if ask is not None:
            records = result.records()
            groups, reads = group_keys(held_rows(records))
            kept = {"groups": groups}
            written = not (reads and ask(reads))
        told = False  # the run told the write began
        if written and early is not None:
            count = len(records) if records is not None else result.record_count()
            if early[0] <= count <= early[2]:
                stage("writing")  # told before the copy may be sending: the worker sends nothing more until it has ended
                told, beside = True, RecordsBeside.start(result, records, early[1])
            if beside is not None:
                records = None
            elif count >= early[0]:
                # a block at a time when the copy would not make them: made as they are sent
                records = records if records is not None or count > early[2] else result.records()
                if early[1](records) if records is not None else early[1](result.record_blocks(early[3]), each=True):
                    records, sent = None, True
                    result.drop_inputs()  # nothing reads them again: the records are made once
                    give_back_freed()  # their pages, before the write (and its copy) begins
        fault("child-partial", partial)
        try:
            if written:
                fault("child-write", partial)
                if not told:
                    stage("writing")
                write(result, Path(partial))
        except Exception as err:  # everything the write meets is the environment's, never the file's
            oserr = os_error(err)
            if oserr is not None and is_environment(oserr):
                raise WriteFailed(oserr) from err
            raise
    finally:
        sent = beside.sent() if beside is not None else sent  # waited for whatever ends the write: the run reads one message at a time
        result.discard()  # a decrypted copy, if any
    sev = result.findings["Severity"].value_counts()
    return {
        "rows_per_sheet": {r.sheet.name: r.counts["rows"] for r in result.intake},
        "counts": {r.sheet.name: r.counts for r in result.intake},
        "errors": int(sev.get("error", 0)),
        "warnings": int(sev.get("warning", 0)),
        "infos": int(sev.get("info", 0)),
        "records": None if sent else records if records is not None else result.records(),
        "decisions": result.decisions(),
        "per_year": _per_year_credits(result),
        "rules_versions": result.rules_versions(),
        "seconds": round(time.perf_counter() - started, 3),
        "timings": result.timings,
        "as_of": result.as_of.isoformat(),
        "worker": os.getpid(),  # which worker read it (a worker reads several files in turn)
        "written": written,
        **kept,
    }


# -- a large object sent in pieces: the records of a large file -----------------------------------

PIECE_BYTES = 16 << 20  # the pickled records go to the run in pieces of about this many bytes
PIECE_WAIT = 0.2  # seconds the run waits for a piece before it looks at its timeout and stop signal again
PIECE, END, ABORTED = b"p", b"e", b"a"  # each piece's first byte: more of the pickle, its end, or given up


class _Pieces:
    """A file that pickle writes to, each `PIECE_BYTES` sent on `conn` as one message."""

    def __init__(self, conn):
        self.conn, self.held, self.size = conn, [], 0

    def write(self, data) -> int:
        data = memoryview(data)  # bytes, or a buffer of the object's own (`pickle.PickleBuffer`)
        self.held.append(data.tobytes())
        self.size += data.nbytes
        if self.size >= PIECE_BYTES:
            self.send()
        return data.nbytes

    def send(self) -> None:
        if self.held:
            self.conn.send_bytes(b"".join([PIECE, *self.held]))
            self.held, self.size = [], 0


def send_pickled(conn, obj, each: bool = False) -> bool:
    """Send `obj` on `conn` pickled in pieces as pickle makes it (`receive_pickled` reads it): the
    pickle of a million records (about 1.6 GB) is never whole in memory, where pickled whole
    (`Connection.send`) it needed as much again, and up to twice that as its buffer grew, under the
    worker's address-space limit. `each`: `obj` is an iterable, each of whose objects is pickled and
    sent to its end before the next is made (`receive_each` reads them as they come). A MemoryError
    as they are made or pickled ends the pieces as given up (False: nothing sent stands); any other
    error too, and is raised."""
    out = _Pieces(conn)
    try:
        for one in obj if each else (obj,):
            pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(one)
            out.send()
    except BaseException as err:  # the pieces end as given up whatever stops them: no other message is read as one
        out.held = []
        conn.send_bytes(ABORTED)
        if isinstance(err, MemoryError):
            return False
        raise
    conn.send_bytes(END)
    return True


class Abandoned(Exception):
    """The sender gave up the object it was sending (`send_pickled`): nothing of it stands."""


class _Received:
    """The pieces of `send_pickled` read from `conn` as a file that pickle reads; `waiting()` is
    called every `PIECE_WAIT` seconds while no piece has come (it raises to stop waiting)."""

    def __init__(self, conn, waiting=None):
        self.conn, self.waiting, self.buf, self.at, self.ended = conn, waiting, b"", 0, False

    def more(self) -> bool:
        """Whether another piece was read (False at the end)."""
        if self.ended:
            return False
        piece = _next_piece(self.conn, self.waiting)
        if piece is None:
            self.ended = True
            return False
        self.buf, self.at = self.buf[self.at :] + piece, 0
        return True

    def read(self, n: int = -1) -> bytes:
        while (n < 0 or len(self.buf) - self.at < n) and self.more():
            pass
        end = len(self.buf) if n < 0 else self.at + n
        data, self.at = self.buf[self.at : end], min(end, len(self.buf))
        return data

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def readline(self) -> bytes:
        while b"\n" not in self.buf[self.at :] and self.more():
            pass
        end = self.buf.find(b"\n", self.at)
        end = len(self.buf) if end < 0 else end + 1
        data, self.at = self.buf[self.at : end], end
        return data


def _next_piece(conn, waiting=None) -> bytes | None:
    """The next piece of what `send_pickled` sends on `conn` (None at its end), `waiting()` called
    every `PIECE_WAIT` seconds until it comes; `Abandoned` when the sender gave it up."""
    while waiting is not None and not conn.poll(PIECE_WAIT):
        waiting()
    piece = conn.recv_bytes()
    if piece[:1] == ABORTED:
        raise Abandoned("the sender gave up the object it was sending")
    return None if piece[:1] == END else piece[1:]


def receive_pickled(conn, waiting=None):
    """What `send_pickled` sent on `conn`, read as its pieces come; `Abandoned` when the sender gave
    it up, EOFError when the sender ended first; what `waiting()` raises while a piece is awaited."""
    received = _Received(conn, waiting)
    obj = pickle.Unpickler(received).load()
    while received.more():  # up to its end
        pass
    return obj


class SenderGone(Exception):
    """The sender ended, or its pipe failed, before the objects it was sending were all read
    (`receive_each`): told apart from what their reader meets as it takes each of them."""


def receive_each(conn, waiting=None, spool=None) -> Iterator:
    """The objects `send_pickled(..., each=True)` sent on `conn`, each as soon as it is read:
    `Abandoned` when the sender gave them up, `SenderGone` when it ended first; what `waiting()`
    raises while a piece is awaited.

    `spool` (a binary file): every piece is written there as it comes, before the first object is
    read back from it, one at a time. The sender is then never held up by what is done with each
    (the run inserts a million records into the ledger in about half a minute, where the worker
    makes and sends them in less, and then writes its file), and only one object is in memory."""
    if spool is not None:
        failed = None
        while (piece := _piece_or_gone(conn, waiting)) is not None:
            if failed is None:
                try:
                    spool.write(piece)
                except OSError as err:  # the disk's: the rest is read off the pipe all the same
                    failed = err
        if failed is not None:
            raise SpoolFailed(failed)
        end = spool.tell()
        spool.seek(0)
        while spool.tell() < end:
            yield pickle.load(spool)
        return
    received = _Received(conn, waiting)
    try:
        while received.at < len(received.buf) or received.more():
            yield pickle.Unpickler(received).load()
    except (EOFError, OSError) as err:
        raise SenderGone(str(err)) from err


def _piece_or_gone(conn, waiting) -> bytes | None:
    """`_next_piece`, the pipe's end or failure raised as `SenderGone`."""
    try:
        return _next_piece(conn, waiting)
    except (EOFError, OSError) as err:
        raise SenderGone(str(err)) from err


@contextmanager
def _spool(folder: Path):
    """An unnamed file in `folder` (the outbox, where the worker writes) for the pieces of a file's
    records (`receive_each`), gone when closed; None when none can be made there (they are then
    read as they come, the worker held up by the run's insert)."""
    try:
        spool = tempfile.TemporaryFile(dir=folder)
    except OSError:
        yield None
        return
    with spool:
        yield spool


class SpoolFailed(Exception):
    """The file the pieces of `receive_each` were written to failed (`error`: the disk's); every
    piece was read off the pipe all the same."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


class RecordsBeside:
    """A large file's records made and sent to the run by a forked copy of the worker while the worker
    writes the file (`work`), on the pipe the worker sends its own messages on: the worker sends
    nothing from the moment it starts the copy until it has waited for it (`sent`). The copy's exit
    says what it did: `SENT`; `NOT_SENT`, nothing sent (not the memory to pickle them, or it failed
    before it began to send), and the records then go with the result; anything else (killed as it
    sent) may have left part of a message in the pipe, which no message after it could be read
    past, so the worker ends as the copy did (the file's outcome is then a crashed worker's)."""

    SENT, NOT_SENT = 0, 3

    def __init__(self, pid: int):
        self.pid = pid

    @classmethod
    def start(cls, result, records, send) -> RecordsBeside | None:
        """The copy, sending `records` (None: `result.records()`, made there) with `send`; None when no
        process could be had (the worker then makes and sends them itself)."""
        from batch.workbook.beside import die_with_parent, fork

        parent = os.getpid()
        try:
            pid = fork()
        except OSError:  # no process to be had (memory, the process limit)
            return None
        if pid:
            return cls(pid)
        code = 1  # the child: whatever ends it before it has sent them, or as it sends them
        try:
            faulthandler.disable()  # a crash of the copy is the worker's to say (`sent`)
            die_with_parent(parent)
            try:
                made = records if records is not None else result.records()
            except BaseException:  # nothing sent: the worker makes them itself, and meets what this met
                os._exit(cls.NOT_SENT)
            code = cls.SENT if send(made) else cls.NOT_SENT
        finally:
            os._exit(code)

    def sent(self) -> bool:
        """Waits for the copy: whether it sent the records (False: nothing sent). A copy that ended
        otherwise ends this process: killed from outside (SIGKILL: the machine's OOM killer, say) as
        it was, else with exit 1."""
        code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        if code in (self.SENT, self.NOT_SENT):
            return code == self.SENT
        if code == -signal.SIGKILL:
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(1)


# -- the stage of the file in hand, told to the run -----------------------------------------------

# what begins when the pipeline ends a stage (it times each as it ends: `Result.timed`)
NEXT_STAGE = {"read": "validating", "validate": "calculating", "calculate": "checking", "annotate": "validating"}
_teller: list = [None]  # in a worker: how it tells the run the stage of the file in hand (`worker`)
_asker: list = [None]  # in a worker: how it asks the run whether the file in hand is processed again (`work`)
_sender: list = [None]  # in a worker: how it sends the run the records of the file in hand before writing it (`work`)


def stage(name: str) -> None:
    """Tell the run that the file in hand enters stage `name` (reading, validating, calculating,
    checking, writing), when a run listens (a worker's message; nothing otherwise)."""
    if _teller[0] is not None:
        try:
            _teller[0](name)
        except (OSError, ValueError):  # the run is gone: the worker learns it from `alive`
            _teller[0] = None


@contextmanager
def stages_told():
    """While a worker's file is read: each stage the pipeline ends (`Result.timed`, which every stage
    calls as it ends) also tells the run the stage that begins (`NEXT_STAGE`). The pipeline itself
    knows nothing of the run; in a worker, nothing else reads a file."""
    from batch.pipeline import Result

    if _teller[0] is None:
        yield
        return
    timed = Result.timed

    def telling(self, name, started):
        now = timed(self, name, started)
        if name in NEXT_STAGE:
            stage(NEXT_STAGE[name])
        return now

    Result.timed = telling
    try:
        yield
    finally:
        Result.timed = timed


def _per_year_credits(result):
    """Credits per (grant, year) of sheets whose limits hold across workbooks (BRRAP's aggregate)."""
    import pandas as pd

    parts = []
    for r in result.intake:
        if r.program.run_limits:  # a withdrawn record counts in no limit
            keep = ~r.withdrawn if r.withdrawn is not None else slice(None)
            parts.append(r.program.run_limits(r.typed[keep], r.computed[keep], r.status[keep]).assign(sheet=r.sheet.name))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def file_reason(err: BaseException, name: str) -> str:
    """Why a file could not be processed, in the user's words, never a library's exception text."""
    from batch.workbook.reasons import for_failure
    from batch.workbook.refused import Refused

    if isinstance(err, Refused):
        return str(err)
    if isinstance(err, OSError) and err.errno in (errno.EACCES, errno.EPERM):
        return f"{name} cannot be read (permission denied); give njcredits read access and drop it in again."
    return for_failure(name, err)


def _watch_run(alive, current: list, handing: threading.Lock) -> None:
    """In a worker: when the run that started it ends (however it ends: its end of `alive` closes),
    remove the temporary files of the file in hand (`current[0]`, its partial name, if any) and end
    the worker, so nothing outlives its run. A file whose outcome the worker sends is no longer in
    hand (`worker` lets it go under `handing` first): its output is the run's, whatever `alive` says
    after (a run that was killed meanwhile leaves it to the next run's `recover`)."""
    try:
        alive.recv()
    except (EOFError, OSError):
        pass
    with handing:
        if current[0]:
            remove_temporary(Path(current[0]))
        os._exit(1)


def worker(conn, jobs, alive, job: Job) -> None:
    """A worker reading files one at a time, under an address-space limit: whatever a file does to the
    readers (a Rust abort, a MemoryError), only this process ends. It first checks it runs njcredits
    itself and says so ("started"); then, for each file, it sends one message (kind, payload, more):
    ("ok", result), ("error", the file's reason), ("environment", the environment's reason),
    ("cannot-start", the import error) or ("again", why: a memory error in a worker that had read other
    files, for the run to read the file again in a new worker). `more` says it can take another file,
    which the run then sends on `jobs` (the run's end of `jobs` closing ends it): only after a file that
    was read to its end (`read_one`), leaving the worker under `REUSE_RSS_MB` resident and under half its
    memory limit (`fit`)."""
    current, handing = [job.partial], threading.Lock()  # the partial name of the file in hand, for `_watch_run`
    threading.Thread(target=_watch_run, args=(alive, current, handing), daemon=True).start()
    for sig in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C reaches the whole group: the run decides, and ends its workers
        signal.signal(sig, signal.SIG_IGN)
    if job.memory_mb:
        resource.setrlimit(resource.RLIMIT_AS, (job.memory_mb << 20, job.memory_mb << 20))
    try:
        check_product(job.modules, job.product)
    except Exception as err:  # noqa: BLE001 - whatever stops njcredits from being imported is the environment's
        conn.send(("cannot-start", f"{type(err).__name__}: {err}", False))
        conn.close()
        return
    # no cyclic collection while a file is read: it would walk millions of cell objects of a large
    # sheet again and again (superlinear time). What the worker holds before its first file (modules,
    # the libraries' tables) is frozen, so the collection after each file walks only what that file
    # left in cycles: well under a millisecond after a small one
    gc.disable()
    gc.freeze()
    conn.send(("started", None, False))
    _teller[0] = lambda name: conn.send(("stage", name, False))

    def ask(groups: frozenset) -> bool:  # the run answers on `jobs`, where it sends nothing else while a file is in hand
        try:
            conn.send(("ask", groups, False))
            return bool(jobs.recv())
        except (EOFError, OSError):  # the run is gone: the worker learns it from `alive`
            return False

    _asker[0] = ask

    def send_records(records, each: bool = False) -> bool:
        try:
            fault("child-records")
        except MemoryError:  # not the memory left to send them now: they go with the result
            return False
        conn.send(("records", "each" if each else None, False))  # they follow, pickled as they are sent (`send_pickled`)
        return send_pickled(conn, records, each)

    _sender[0] = send_records
    done = 0
    while job is not None:
        current[0] = job.partial
        kind, payload, whole = read_one(job, again=done > 0)
        more = whole and fit(job.memory_mb)
        with handing:  # sent, its output is the run's: never removed by `_watch_run` after the run has it
            current[0] = None
        try:
            fault("child-send", job.partial, reused=done > 0)
            conn.send((kind, payload, more))
        except MemoryError:  # its result did not fit in the memory left to send it: the file's memory, as in `read_one`
            payload, more = None, False
            conn.send((*by_memory_outcome(job, again=done > 0), False))
        payload = None  # the result is the run's now: nothing of it is kept
        done += 1
        if not more:
            break
        gc.collect()
        try:
            job = jobs.recv()
        except (EOFError, OSError):
            job = None
    conn.close()


def read_one(job: Job, again: bool) -> tuple[str, object, bool]:
    """One file in this worker: (kind, payload) of the message that says how it went (see `worker`),
    and whether it was read to its end (`ok`, or `error` for a reason of the file's own other than
    memory); `again` when the worker has read other files before this one."""
    path, partial = job.path, job.partial
    try:
        fault("child-read", partial, reused=again)
        ask, early = _asker[0] if job.ask else None, (job.early, _sender[0], job.beside_up_to, job.block) if job.early else None
        return "ok", work(path, partial, job.limits, job.as_of, job.ledger, job.run_id, job.team, job.same_run, ask, early), True
    except BaseException as err:  # noqa: BLE001 - every failure becomes the file's reason, unless the environment's
        if by_memory(err):
            return (*by_memory_outcome(job, again), False)
        oserr = err.error if isinstance(err, WriteFailed) else os_error(err)
        folder = Path(partial).parent  # the worker writes only there
        writing = str(getattr(oserr, "filename", "") or "").startswith(str(folder))
        if oserr is not None and (isinstance(err, WriteFailed) or oserr.errno in WRITE_ERRNOS or (writing and is_environment(oserr))):
            named = isinstance(oserr.filename, str) and oserr.filename and not writing
            target = Path(oserr.filename).parent if named else folder  # elsewhere: a temporary folder, say
            where = f"the outbox {shown(str(folder))}" if target == folder else f"the folder {shown(str(target))}"
            return "environment", environment_message(oserr, where), False
        return "error", file_reason(err, Path(path).name), True
    finally:
        for p in writers_files(Path(partial)):
            p.unlink(missing_ok=True)


def by_memory_outcome(job: Job, again: bool) -> tuple[str, str]:
    """The outcome of a file that ran out of memory in its worker: read again in a new worker when
    the worker had read other files (what they left may be what it lacked), else the file's own."""
    if again:
        return "again", "a memory error in a worker that had read other files"
    return (
        "error",
        f"{Path(job.path).name} needs more than the {job.memory_mb:,} MB of memory allowed for one file "
        f"(memory_limit_mb); split it into smaller workbooks or raise the limit.",
    )


def by_memory(err: BaseException) -> bool:
    """Whether `err` is a MemoryError, or was raised while one was handled or because of one (a reader
    that words a memory error as its own, the way calamine's is caught and said unreadable)."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, MemoryError):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


def fit(memory_mb: int) -> bool:
    """Whether this worker may take another file: under `REUSE_RSS_MB` resident, and under half its
    address-space limit (`memory_mb`, 0 for none), so that what one file leaves takes at most half of
    the next one's room (a file that then runs out of memory is read again in a new worker)."""
    try:
        size, resident = (int(v) * resource.getpagesize() >> 20 for v in Path("/proc/self/statm").read_text().split()[:2])
    except (OSError, ValueError):  # no /proc: one file per worker, as the safe default
        return False
    return resident <= REUSE_RSS_MB and (not memory_mb or size <= memory_mb // 2)


def remove_temporary(partial: Path) -> None:
    """A partial output and the writers' own temporary files made from its name (`.<name>.<pid>.partial`,
    `.splice`): every one has the run's partial name, which holds the run id, in it."""
    try:
        for p in [Path(partial), *writers_files(Path(partial))]:
            p.unlink(missing_ok=True)
    except OSError:  # a read-only or vanished outbox: nothing of ours can be there to remove
        pass


def writers_files(partial: Path):
    """The writers' own temporary files made from a partial output's name."""
    return partial.parent.glob(f"*{partial.name}.*")


# -- the workers of a run -----------------------------------------------------------------------


@dataclass
class Running:
    """A worker: its process, the run's ends of its pipes (`conn` its messages, `jobs` the files it is
    given, `alive`), the file in hand (None while it waits for one) and when it began it, whether it said
    it runs njcredits, and how many files it read before the one in hand."""

    proc: multiprocessing.process.BaseProcess
    conn: object
    jobs: object
    alive: object
    item: object
    partial: Path | None
    began: float
    started: bool = False
    files: int = 0
    stage: str = ""  # the stage of the file in hand, as the worker last told it
    records: object = None  # the records of the file in hand, when its worker sent them before writing it


class Workers:
    """Up to `settings.workers` workers at a time, each with the memory limit and the timeout. A worker
    that read a file to its end and stayed small (`fit`) is given the run's next file instead of a new
    worker being started (`idle` while none is waiting): start-up is paid once per worker, not once
    per file. A file that fails by memory or by a crash in a worker that had read other files is read
    again in a new worker of its own (`again`), so that only a file's own outcome is ever its outcome."""

    def __init__(
        self, settings, run_id: str, stop: threading.Event, same_run: dict | None = None, on_stage=None, ask=None, on_records=None
    ):
        self.settings, self.run_id, self.stop = settings, run_id, stop
        self.on_stage = on_stage  # called (item, stage) as a worker tells the stage of its file
        self.ask = ask  # called (groups) as a worker asks whether its file is processed again (`work`)
        self.on_records = on_records  # called (item, records) as a worker sends its file's records before writing it: what to keep of them
        self.same_run = same_run or {}  # id(item) -> what it reads of the run's other workbooks
        self.ctx = multiprocessing.get_context("forkserver")  # workers do not inherit the inbox lock
        self.ctx.set_forkserver_preload(list(WORKER_MODULES))
        self.path, self.modules, self.product = worker_path(), WORKER_MODULES, product_folders()
        self.size = max(1, settings.workers)  # how many workers at most, busy or waiting
        self.running: dict = {}  # the run's end of each busy worker's message pipe -> Running
        self.idle: list[Running] = []  # workers waiting for the run's next file
        self.broken = ""  # why workers cannot start here: no further worker is started
        self.diagnosed: str | None = None  # Python's error when a worker ended before it could say it started

    def has_room(self) -> bool:
        return len(self.running) < self.size

    def start(self, item, partial: Path, fresh: bool = False) -> None:
        """Give one staged file to a waiting worker or, when none waits (or `fresh`), to a new one started
        on the workers' path."""
        s = self.settings
        job = Job(str(item.staged), str(partial), s.memory_limit_mb, s.limits, s.as_of, s.ledger, self.run_id,
                  s.team, self.same_run.get(id(item)), self.ask is not None, EARLY_RECORDS if self.on_records else 0,
                  RECORDS_BESIDE_UP_TO, RECORD_BLOCK, modules=self.modules, product=self.product)  # fmt: skip
        while self.idle and not fresh:
            w = self.idle.pop()
            try:
                w.jobs.send(job)
            except (OSError, ValueError):  # it ended while it waited (killed from outside): not given the file
                self._retire(w, kill=True)
                continue
            w.item, w.partial, w.began, w.records = item, partial, time.monotonic(), None
            self.running[w.conn] = w
            return
        while self.idle and len(self.running) + len(self.idle) >= self.size:
            self._retire(self.idle.pop(0))  # room for a new worker: one that waits ends
        recv, send = self.ctx.Pipe(duplex=False)
        jobs_r, jobs_w = self.ctx.Pipe(duplex=False)
        alive_r, alive_w = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=worker, args=(send, jobs_r, alive_r, job), daemon=True)
        try:
            with worker_environment(self.path):
                proc.start()
        except (OSError, EOFError) as err:  # the fork server itself could not start
            for end in (recv, send, jobs_r, jobs_w, alive_r, alive_w):
                end.close()
            self.broken = self.broken or cannot_start(self._diagnosis() or f"{type(err).__name__}: {err}")
            raise _NotStarted from err
        for end in (send, jobs_r, alive_r):
            end.close()
        self.running[recv] = Running(proc, recv, jobs_w, alive_w, item, partial, time.monotonic())

    def _retire(self, w: Running, kill: bool = False) -> None:
        """A worker is done with: its pipes closed (a waiting worker then ends: no file is given to it)
        and its process joined; with `kill`, or when it has not ended after `RETIRE_SECONDS`, ended."""
        if kill:
            w.proc.kill()
        for end in (w.jobs, w.conn):
            end.close()
        w.proc.join(None if kill else RETIRE_SECONDS)
        if w.proc.exitcode is None:
            w.proc.kill()
            w.proc.join()
        w.alive.close()

    def stop_all(self, queue: list):
        """A stop signal: the workers are ended, and every file not done is yielded as stopped."""
        for w in list(self.running.values()):
            self._retire(w, kill=True)
            remove_temporary(w.partial)
            yield w.item, w.partial, "environment", STOPPED_READING
        self.running.clear()
        for w in self.idle:
            self._retire(w, kill=True)
        self.idle.clear()
        for item, partial, _ in queue:
            yield item, partial, "environment", STOPPED_WAITING

    def not_started(self, queue: list):
        """Workers cannot start here: every file not yet given to one is yielded with the reason."""
        for item, partial, _ in queue:
            yield item, partial, "environment", self.broken

    def collect(self):
        """The workers that sent their message (or ended): each file's outcome (kind `again`: the file is
        to be read again in a new worker)."""
        for conn in mp_connection.wait(list(self.running), timeout=0.2):
            w = self.running[conn]
            try:
                kind, payload, more = conn.recv()
            except (EOFError, OSError):
                (kind, payload), more = self._ended(w), False
            if kind == "started":
                w.started = True
                continue
            if kind == "stage":  # the file in hand enters a stage: told to whoever shows it
                w.stage = payload
                if self.on_stage is not None:
                    self.on_stage(w.item, payload)
                continue
            if kind == "ask":  # whether the file in hand is processed again: it then writes no first output
                with contextlib.suppress(OSError, ValueError):  # it ended meanwhile: its end is met below
                    w.jobs.send(self.ask is not None and bool(self.ask(payload)))
                continue
            if kind == "records":  # its file's records, final before the write: the run records them as it writes
                each = payload == "each"  # a block at a time (`receive_each`), recorded as they come
                gone = (SenderGone,) if each else (EOFError, OSError)  # the pipe's end or failure
                try:
                    if each:  # sent only to a run that records them early (`on_records`)
                        with _spool(Path(w.partial).parent) as spool:
                            w.records = self.on_records(w.item, receive_each(conn, functools.partial(self._waiting, w), spool))
                    else:
                        w.records = receive_pickled(conn, functools.partial(self._waiting, w))  # they follow in pieces
                except Abandoned:  # not the memory to pickle them: they come with the result
                    w.records = None
                    continue
                except _Stopped:  # every worker is stopped next (`stop_all`)
                    continue
                except _TimedOut:
                    yield self._timed_out(conn, w)
                    continue
                except gone:  # it (or its copy) ended as it sent them: its end is met as any other's
                    w.records = None
                    (kind, payload), more = self._ended(w), False
                else:
                    if self.on_records is not None:
                        if not each:  # what the run keeps of them
                            w.records = self.on_records(w.item, w.records)
                        give_back_freed()  # the pages of what it did not keep
                    continue
            if kind == "ok" and payload["records"] is None:  # sent before the write: put back
                payload["records"] = w.records
            w.records = None
            del self.running[conn]
            if kind == "cannot-start":
                self.broken = self.broken or cannot_start(payload)
                kind, payload = "environment", self.broken
            if kind != "ok":
                remove_temporary(w.partial)
            item, partial = w.item, w.partial
            if more and not self.stop.is_set():
                w.item, w.partial, w.files = None, None, w.files + 1
                self.idle.append(w)
            else:
                self._retire(w)
            yield item, partial, kind, payload

    def _ended(self, w: Running) -> tuple[str, str]:
        """A worker that ended without its message: stopped, killed, unable to start, or crashed (by its
        file, or, in a worker that had read other files, to be read again in a new one)."""
        w.proc.join()
        # a stop signal reaches the whole process group: a worker it ended before the worker could
        # ignore it (while starting) was stopped, not failed by its file; the run's own handler may
        # take a moment longer to note the signal than the worker took to end
        if w.proc.exitcode in (-signal.SIGINT, -signal.SIGTERM) or self.stop.wait(STOP_GRACE_SECONDS):
            return "environment", STOPPED_READING
        if w.proc.exitcode == -signal.SIGKILL:  # killed from outside: the operator, the machine's OOM killer
            return "environment", f"the process reading {shown(w.item.name)} was killed from outside (SIGKILL); it stays in the inbox."
        if not w.started:  # it never took the file: njcredits itself could not be imported there
            return "cannot-start", self._diagnosis() or f"it ended before it began, exit {w.proc.exitcode}"
        if w.files:
            return "again", f"a worker that had read other files stopped unexpectedly (exit {w.proc.exitcode})"
        return (
            "error",
            f"The process reading {shown(w.item.name)} stopped unexpectedly (exit {w.proc.exitcode}): "
            f"the file makes the reader crash or run out of memory; check its size and contents.",
        )

    def _diagnosis(self) -> str:
        """Why workers cannot start here (found once per run: every worker would say the same)."""
        if self.diagnosed is None:
            self.diagnosed = diagnose(self.path, self.modules, self.product)
        return self.diagnosed

    def time_out(self):
        """Workers past the timeout are ended; their files fail."""
        for conn, w in list(self.running.items()):
            if self._late(w):
                yield self._timed_out(conn, w)

    def _late(self, w: Running) -> bool:
        return time.monotonic() - w.began > self.settings.timeout_seconds

    def _timed_out(self, conn, w: Running) -> tuple:
        """A worker past the timeout ended: its file's outcome."""
        del self.running[conn]
        self._retire(w, kill=True)
        remove_temporary(w.partial)
        return (
            w.item,
            w.partial,
            "error",
            f"{shown(w.item.name)} took longer than {self.settings.timeout_seconds:,.0f} seconds "
            f"(timeout_seconds) and was stopped; split it or raise the limit.",
        )

    def _waiting(self, w: Running) -> None:
        """While the run waits for the next piece of a worker's records: its timeout and a stop
        signal stand as they do between messages."""
        if self.stop.is_set():
            raise _Stopped
        if self._late(w):
            raise _TimedOut

    def end(self) -> None:
        """However the run ends, no worker outlives it."""
        for w in self.running.values():
            self._retire(w, kill=True)
            remove_temporary(w.partial)
        for w in self.idle:
            self._retire(w)
        self.running.clear()
        self.idle.clear()


class _NotStarted(Exception):
    """A worker could not be started at all (Workers.broken says why)."""


class _Stopped(Exception):
    """A stop signal came while the run waited for a piece of a worker's records."""


class _TimedOut(Exception):
    """A worker passed the timeout while the run waited for a piece of its records."""


def isolated(
    todo: list, settings, run_id: str, stop: threading.Event, same_run: dict | None = None, on_stage=None, ask=None, on_records=None
):
    """Process each (item, partial) in a worker (`Workers`), given what it reads of the run's other
    workbooks (`same_run`: id(item) -> batch.run.samerun.SameRun, for a second pass). Yields (item, partial, kind, payload): kind
    `ok` (payload: the result), `error` (the file's reason) or `environment` (the environment's reason:
    the file goes back). `on_stage(item, stage)`: called as each worker tells the stage its file enters
    (reading, validating, calculating, checking, writing). `ask(groups)`: whether a file whose rules
    read one of `groups` is processed again, asked by its worker before it writes (`work`).
    `on_records(item, records)`: called as a worker sends the records of a large file before it
    writes it (`work`: `early`), returns what to keep of them; its result then holds those as if
    sent with it. When `stop` is set
    the running workers are ended and everything not done is yielded as stopped; when workers
    cannot start, everything not done is yielded with the reason."""
    workers = Workers(settings, run_id, stop, same_run, on_stage, ask, on_records)
    queue = [(item, partial, False) for item, partial in todo]  # False: any worker may read it
    done: list = []  # files whose workers answered, not yet yielded

    def give() -> None:  # the next files to the workers with room
        while queue and workers.has_room() and not stop.is_set() and not workers.broken:
            try:
                workers.start(*queue[0])
            except _NotStarted:
                break
            queue.pop(0)

    try:
        while queue or workers.running:
            give()
            if stop.is_set():
                yield from workers.stop_all(queue)
                queue.clear()
                break
            if workers.broken:
                yield from workers.not_started(queue)
                queue.clear()
            for item, partial, kind, payload in workers.collect():
                if kind == "again":  # next, in a new worker of its own
                    queue.insert(0, (item, partial, True))
                else:
                    done.append((item, partial, kind, payload))
            # the workers that answered take their next files before the run records these: a worker
            # never waits for the run's bookkeeping of the file it returned (placing, archiving, the ledger)
            give()
            while done:
                yield done.pop(0)
            yield from workers.time_out()
    finally:  # an exception in the run: no worker outlives it; waiting workers end as they would
        workers.end()
        for _item, partial, _kind, _payload in done:  # answered, never taken by the run: their outputs go
            remove_temporary(partial)
