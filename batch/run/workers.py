"""Each file is read in a worker process of its own (a memory limit, a timeout): whatever a file does
to the readers, only its worker ends. No folder or file of the working directory, the inbox or the
outbox can change what code a worker runs.

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

import datetime as dt
import errno
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
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from batch.run.environment import WRITE_ERRNOS, WriteFailed, cannot_start, environment_message, is_environment, os_error
from batch.run.faults import fault
from batch.run.names import shown

# what a worker imports before it takes a file (the fork server imports it once, for every worker)
WORKER_MODULES = ("batch.run.preload",)
PRODUCT_PACKAGES = ("batch", "validators")  # njcredits's own packages: each must come from njcredits's folder
STOP_GRACE_SECONDS = 0.5  # how long a worker's unexpected end waits for the run to note a stop signal
DIAGNOSIS_SECONDS = 120  # longest the interpreter that finds why a worker could not start may take
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
    ledger: str
    run_id: str
    modules: tuple[str, ...] = WORKER_MODULES
    product: dict = field(default_factory=dict)


def work(path: str, partial: str, limits=None, as_of: dt.date | None = None, ledger: str | None = None, run_id: str | None = None) -> dict:
    """Process one workbook and write its output under the partial name. `as_of` None means the day
    the file is processed (local time); the ledger is only read (prior incentive records)."""
    from batch.pipeline import process
    from batch.workbook.safety import Limits
    from batch.workbook.writing import write

    started = time.perf_counter()
    result = process(
        Path(path), limits or Limits(), as_of=as_of, ledger=Path(ledger) if ledger else None, run_id=run_id, scratch=Path(partial)
    )
    try:
        fault("child-partial", partial)
        try:
            fault("child-write", partial)
            write(result, Path(partial))
        except Exception as err:  # everything the write meets is the environment's, never the file's
            oserr = os_error(err)
            if oserr is not None and is_environment(oserr):
                raise WriteFailed(oserr) from err
            raise
    finally:
        result.discard()  # a decrypted copy, if any
    sev = result.findings["Severity"].value_counts()
    return {
        "rows_per_sheet": {r.sheet.name: r.counts["rows"] for r in result.intake},
        "counts": {r.sheet.name: r.counts for r in result.intake},
        "errors": int(sev.get("error", 0)),
        "warnings": int(sev.get("warning", 0)),
        "infos": int(sev.get("info", 0)),
        "records": result.records(),
        "decisions": result.decisions(),
        "per_year": _per_year_credits(result),
        "rules_versions": result.rules_versions(),
        "seconds": round(time.perf_counter() - started, 3),
        "timings": result.timings,
        "as_of": result.as_of.isoformat(),
    }


def _per_year_credits(result):
    """Credits per (grant, year) of sheets whose limits hold across workbooks (BRRAP's aggregate)."""
    import pandas as pd

    parts = []
    for r in result.intake:
        if r.program.run_limits:
            parts.append(r.program.run_limits(r.typed, r.computed, r.status).assign(sheet=r.sheet.name))
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


def _watch_run(alive, partial: str) -> None:
    """In a worker: when the run that started it ends (however it ends: its end of `alive` closes),
    remove the worker's temporary files and end the worker, so nothing outlives its run."""
    try:
        alive.recv()
    except (EOFError, OSError):
        pass
    remove_temporary(Path(partial))
    os._exit(1)


def worker(conn, alive, job: Job) -> None:
    """A worker reading one file, under an address-space limit: whatever the file does to the readers
    (a Rust abort, a MemoryError), only this process ends. It first checks it runs njcredits itself and
    says so ("started"); then it sends one message: ("ok", result), ("error", the file's reason),
    ("environment", the environment's reason) or ("cannot-start", the import error)."""
    threading.Thread(target=_watch_run, args=(alive, job.partial), daemon=True).start()
    for sig in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C reaches the whole group: the run decides, and ends its workers
        signal.signal(sig, signal.SIG_IGN)
    if job.memory_mb:
        resource.setrlimit(resource.RLIMIT_AS, (job.memory_mb << 20, job.memory_mb << 20))
    # the child lives for one file and makes no reference cycles worth collecting; the cyclic
    # collector would otherwise walk millions of cell objects again and again (superlinear time)
    gc.disable()
    try:
        check_product(job.modules, job.product)
    except Exception as err:  # noqa: BLE001 - whatever stops njcredits from being imported is the environment's
        conn.send(("cannot-start", f"{type(err).__name__}: {err}"))
        conn.close()
        return
    conn.send(("started", None))
    path, partial = job.path, job.partial
    try:
        conn.send(("ok", work(path, partial, job.limits, job.as_of, job.ledger, job.run_id)))
    except MemoryError:
        conn.send(
            (
                "error",
                f"{Path(path).name} needs more than the {job.memory_mb:,} MB of memory allowed for one file "
                f"(memory_limit_mb); split it into smaller workbooks or raise the limit.",
            )
        )
    except BaseException as err:  # noqa: BLE001 - every failure becomes the file's reason, unless the environment's
        oserr = err.error if isinstance(err, WriteFailed) else os_error(err)
        folder = Path(partial).parent  # the worker writes only there
        writing = str(getattr(oserr, "filename", "") or "").startswith(str(folder))
        if oserr is not None and (isinstance(err, WriteFailed) or oserr.errno in WRITE_ERRNOS or (writing and is_environment(oserr))):
            named = isinstance(oserr.filename, str) and oserr.filename and not writing
            target = Path(oserr.filename).parent if named else folder  # elsewhere: a temporary folder, say
            where = f"the outbox {shown(str(folder))}" if target == folder else f"the folder {shown(str(target))}"
            conn.send(("environment", environment_message(oserr, where)))
        else:
            conn.send(("error", file_reason(err, Path(path).name)))
    finally:
        for p in Path(partial).parent.glob(f"*{Path(partial).name}.*"):  # the writers' own temporary files
            p.unlink(missing_ok=True)
        conn.close()


def remove_temporary(partial: Path) -> None:
    """A partial output and the writers' own temporary files made from its name (`.<name>.<pid>.partial`,
    `.splice`): every one has the run's partial name, which holds the run id, in it."""
    try:
        for p in [Path(partial), *Path(partial).parent.glob(f"*{Path(partial).name}.*")]:
            p.unlink(missing_ok=True)
    except OSError:  # a read-only or vanished outbox: nothing of ours can be there to remove
        pass


# -- the workers of a run -----------------------------------------------------------------------


@dataclass
class Running:
    """A worker at work: its process, the file it was given, when it began, the run's end of `alive`."""

    proc: multiprocessing.process.BaseProcess
    item: object
    partial: Path
    began: float
    alive: object
    started: bool = False  # it said it runs njcredits and took the file


class Workers:
    """Up to `settings.workers` workers at a time, each with the memory limit and the timeout."""

    def __init__(self, settings, run_id: str, stop: threading.Event):
        self.settings, self.run_id, self.stop = settings, run_id, stop
        self.ctx = multiprocessing.get_context("forkserver")  # workers do not inherit the inbox lock
        self.ctx.set_forkserver_preload(list(WORKER_MODULES))
        self.path, self.modules, self.product = worker_path(), WORKER_MODULES, product_folders()
        self.running: dict = {}  # the run's end of each worker's pipe -> Running
        self.broken = ""  # why workers cannot start here: no further worker is started
        self.diagnosed: str | None = None  # Python's error when a worker ended before it could say it started

    def has_room(self) -> bool:
        return len(self.running) < max(1, self.settings.workers)

    def start(self, item, partial: Path) -> None:
        """Start a worker on one staged file, on the workers' path."""
        s = self.settings
        job = Job(str(item.staged), str(partial), s.memory_limit_mb, s.limits, s.as_of, str(s.ledger), self.run_id,
                  modules=self.modules, product=self.product)  # fmt: skip
        recv, send = self.ctx.Pipe(duplex=False)
        alive_r, alive_w = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=worker, args=(send, alive_r, job), daemon=True)
        try:
            with worker_environment(self.path):
                proc.start()
        except (OSError, EOFError) as err:  # the fork server itself could not start
            for end in (recv, send, alive_r, alive_w):
                end.close()
            self.broken = self.broken or cannot_start(self._diagnosis() or f"{type(err).__name__}: {err}")
            raise _NotStarted from err
        send.close()
        alive_r.close()
        self.running[recv] = Running(proc, item, partial, time.monotonic(), alive_w)

    def stop_all(self, queue: list):
        """A stop signal: the running workers are ended, and every file not done is yielded as stopped."""
        for conn, w in list(self.running.items()):
            w.proc.kill()
            w.proc.join()
            w.alive.close()
            conn.close()
            remove_temporary(w.partial)
            yield w.item, w.partial, "environment", STOPPED_READING
        self.running.clear()
        for item, partial in queue:
            yield item, partial, "environment", STOPPED_WAITING

    def not_started(self, queue: list):
        """Workers cannot start here: every file not yet given to one is yielded with the reason."""
        for item, partial in queue:
            yield item, partial, "environment", self.broken

    def collect(self):
        """The workers that sent their message (or ended): each file's outcome."""
        for conn in mp_connection.wait(list(self.running), timeout=0.2):
            w = self.running[conn]
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):
                kind, payload = self._ended(w)
            if kind == "started":
                w.started = True
                continue
            del self.running[conn]
            if kind == "cannot-start":
                self.broken = self.broken or cannot_start(payload)
                kind, payload = "environment", self.broken
            conn.close()
            w.proc.join()
            w.alive.close()
            if kind != "ok":
                remove_temporary(w.partial)
            yield w.item, w.partial, kind, payload

    def _ended(self, w: Running) -> tuple[str, str]:
        """A worker that ended without its message: stopped, killed, unable to start, or crashed by its file."""
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
            if time.monotonic() - w.began > self.settings.timeout_seconds:
                w.proc.kill()
                w.proc.join()
                conn.close()
                w.alive.close()
                del self.running[conn]
                remove_temporary(w.partial)
                yield (
                    w.item,
                    w.partial,
                    "error",
                    f"{shown(w.item.name)} took longer than {self.settings.timeout_seconds:,.0f} seconds "
                    f"(timeout_seconds) and was stopped; split it or raise the limit.",
                )

    def end(self) -> None:
        """However the run ends, no worker outlives it."""
        for w in self.running.values():
            w.proc.kill()
            w.proc.join()
            w.alive.close()
            remove_temporary(w.partial)


class _NotStarted(Exception):
    """A worker could not be started at all (Workers.broken says why)."""


def isolated(todo: list, settings, run_id: str, stop: threading.Event):
    """Process each (item, partial) in its own worker. Yields (item, partial, kind, payload): kind `ok`
    (payload: the result), `error` (the file's reason) or `environment` (the environment's reason: the
    file goes back). When `stop` is set the running workers are ended and everything not done is
    yielded as stopped; when workers cannot start, everything not done is yielded with the reason."""
    workers = Workers(settings, run_id, stop)
    queue = list(todo)
    try:
        while queue or workers.running:
            while queue and workers.has_room() and not stop.is_set() and not workers.broken:
                try:
                    workers.start(*queue[0])
                except _NotStarted:
                    break
                queue.pop(0)
            if stop.is_set():
                yield from workers.stop_all(queue)
                queue.clear()
                break
            if workers.broken:
                yield from workers.not_started(queue)
                queue.clear()
            yield from workers.collect()
            yield from workers.time_out()
    finally:  # an exception in the run: no worker outlives it
        workers.end()
