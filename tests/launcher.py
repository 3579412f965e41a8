"""`njcredits` started as a process of its own, without paying the interpreter's start and the
product's imports at every start (about 0.9 CPU second of the 1 to 2.5 that a small run takes).

The first start in a test process starts a helper interpreter (the launcher) that imports what the
command imports and then waits. Each start is a fork of it: a new process, with its own pid, the
environment, folder and standard streams the test gave, its own process group when asked
(`start_new_session`), which runs the command's `main()` as the console script does and ends as
an interpreter ends (its threads joined, its `atexit` functions run, its streams flushed; an
uncaught KeyboardInterrupt ends it by SIGINT). The test sees it as a `subprocess.Popen`: `pid`,
`stdout`, `poll`, `wait`, `communicate`, `send_signal`, `kill`; its exit status comes from the
launcher, whose child it is.

What a fork cannot give is what the interpreter decides as it starts: the encoding of its streams,
`PYTHON*` settings, the locale, the string hash seed; and what the launcher had when it started
(umask, resource limits). A start whose environment differs from the launcher's (the test
process's environment as it started) in what an interpreter reads as it starts is a new
interpreter (`subprocess.Popen` of the installed command), as is a start with `fresh=True`. The
tests of the start itself (the installed command's path, a `batch` folder where it is started, a
copy of the product, `ulimit`) start the interpreter themselves. The fork's path is the console
script's (the tests' folder is not on it), and what the launcher's imports added to the
environment is added to each fork's. A standard stream not given is /dev/null.

A forked process's /proc/PID/environ is the launcher's, not the test's; `tagged()` also knows a
process by its name, which the start sets from NJCREDITS_TEST_TAG and which its forks inherit.
The launcher reaps its children at once, so a pid may be used again: a process that ended is never
signalled, and what ended under a pid before is forgotten when a new process gets it.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

COMMAND = str(Path(sys.executable).parent / "njcredits")
PRELOAD = ("batch.cli", "batch.run.runner", "batch.run.watch", "batch.run.ledger", "batch.run.config", "batch.run.preload")
FIXED_AT_START = ("PYTHON", "LANG", "LC_", "TZ")  # what the interpreter reads as it starts
TAG = "NJCREDITS_TEST_TAG"
TESTS = str(Path(__file__).parent)
BASE_ENV = dict(os.environ)  # as the test process started: the launcher's, whatever a test sets later
PIPE, STDOUT, DEVNULL = subprocess.PIPE, subprocess.STDOUT, subprocess.DEVNULL


def process_name(tag: str) -> str:
    return ("njc" + tag)[:15]  # a process's name holds 15 bytes


def tagged(pid: str, tag: str) -> bool:
    """Whether process `pid` was started with NJCREDITS_TEST_TAG=`tag`, or forked from one."""
    proc = Path("/proc") / pid
    try:
        if f"{TAG}={tag}".encode() in (proc / "environ").read_bytes():
            return True
        return (proc / "comm").read_text().strip() == process_name(tag)
    except OSError:
        return False


def _fixed(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(FIXED_AT_START)}


class _Launcher:
    """The helper interpreter of this test process, and what it said of the processes it forked."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self.said = tempfile.TemporaryFile()  # what the launcher itself writes (a traceback if it fails)
        code = f"import sys; sys.path.insert(0, {TESTS!r}); import launcher; launcher.serve({theirs.fileno()})"
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-c", code], pass_fds=[theirs.fileno()], env=BASE_ENV, stdin=DEVNULL, stdout=DEVNULL, stderr=self.said
        )
        theirs.close()
        self.sock, self.ended, self.buffer = ours, {}, b""
        self.lock = threading.Lock()
        if self._next(("ready",)) is None:
            raise RuntimeError("the test launcher did not start")

    def _next(self, want: tuple, timeout: float | None = 120) -> list | None:
        """The next message starting with `want` (exit statuses met on the way are kept)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                msg = json.loads(line)
                if msg[0] == "exit":
                    self.ended[msg[1]] = msg[2]
                elif msg[0] == "started":  # a pid used again: what ended under it before is not this process
                    self.ended.pop(msg[1], None)
                if tuple(msg[: len(want)]) == want:
                    return msg
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.sock], [], [], left)[0]:
                return None
            data = self.sock.recv(65536)
            if not data:
                self.said.seek(0)
                said = self.said.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"the test launcher ended (exit status {self.proc.wait()}): {said}")
            self.buffer += data

    def start(self, args, env, cwd, fds, new_session) -> int:
        with self.lock:
            request = {"args": [str(a) for a in args], "env": env, "cwd": str(cwd), "new_session": new_session}
            socket.send_fds(self.sock, [json.dumps(request).encode() + b"\n"], fds)
            return self._next(("started",))[1]

    def status(self, pid: int, timeout: float | None) -> int | None:
        with self.lock:
            if pid not in self.ended:
                self._next(("exit", pid), timeout)
            return self.ended.pop(pid, None)


_LAUNCHER: _Launcher | None = None


def _launcher() -> _Launcher:
    global _LAUNCHER
    if _LAUNCHER is None or _LAUNCHER.proc.poll() is not None:
        _LAUNCHER = _Launcher()
    return _LAUNCHER


class Process:
    """A forked `njcredits`, seen as `subprocess.Popen` sees a process."""

    def __init__(self, args, env, cwd, stdin, stdout, stderr, text, new_session):
        self.args, self.returncode, self.stdout, self.stderr = args, None, None, None
        ends, keep = [], []
        devnull = os.open(os.devnull, os.O_RDWR)
        ends.append(devnull if stdin in (None, DEVNULL) else stdin.fileno())
        for which, how in (("stdout", stdout), ("stderr", stderr)):
            if how == PIPE:
                r, w = os.pipe()
                setattr(self, which, open(r, encoding="utf-8" if text else None, mode="r" if text else "rb"))  # noqa: SIM115
                ends.append(w)
                keep.append(w)
            elif how == STDOUT:
                ends.append(ends[1])
            elif how in (None, DEVNULL):
                ends.append(devnull)
            else:
                ends.append(how.fileno())
        self.launcher = _launcher()
        try:
            self.pid = self.launcher.start(args, env, cwd, ends, new_session)
        finally:
            for fd in {devnull, *keep}:
                os.close(fd)

    def poll(self) -> int | None:
        return self.wait(timeout=0) if self.returncode is None else self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            status = self.launcher.status(self.pid, timeout)
            if status is None:
                if timeout == 0:
                    return None
                raise subprocess.TimeoutExpired(self.args, timeout)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple:
        deadline = None if timeout is None else time.monotonic() + timeout
        streams = {s: [] for s in (self.stdout, self.stderr) if s is not None}
        with selectors.DefaultSelector() as sel:
            for s in streams:
                os.set_blocking(s.fileno(), False)
                sel.register(s.fileno(), selectors.EVENT_READ, s)
            while sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        streams[key.data].append(chunk)
                    else:
                        sel.unregister(key.fd)
        out = []
        for s in (self.stdout, self.stderr):
            if s is None:
                out.append(None)
                continue
            data = b"".join(streams[s])
            out.append(data.decode("utf-8") if "b" not in s.mode else data)
            s.close()
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()) or 0.001)
        return out[0], out[1]

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # never a pid that ended (the launcher reaps at once, and a pid is used again)
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def popen(args, *, env=None, cwd=None, stdin=None, stdout=None, stderr=None, text=False, start_new_session=False, fresh=False):
    """`njcredits ARGS` as a process: forked from the launcher, or a new interpreter with `fresh` or
    where the environment differs from the launcher's in what an interpreter fixes as it starts."""
    env = dict(os.environ if env is None else env)
    cwd = os.path.abspath(os.getcwd() if cwd is None else cwd)
    if not fresh and _fixed(env) == _fixed(BASE_ENV):  # the launcher's environment
        return Process(args, env, cwd, stdin, stdout, stderr, text, start_new_session)
    return subprocess.Popen(
        [COMMAND, *map(str, args)],
        env=env,
        cwd=cwd,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        text=text,
        start_new_session=start_new_session,
    )


def run(args, *, env=None, cwd=None, timeout: float | None = None, fresh=False) -> subprocess.CompletedProcess:
    """`subprocess.run([njcredits, *args], capture_output=True, text=True, timeout=...)`, started by `popen`."""
    proc = popen(args, env=env, cwd=cwd, stdout=PIPE, stderr=PIPE, text=True, fresh=fresh)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    return subprocess.CompletedProcess([COMMAND, *map(str, args)], proc.returncode, out, err)


# -- the launcher's side ---------------------------------------------------------------------------


def serve(fd: int) -> None:
    """Import what the command imports, then fork one process per request and say how each ended."""
    import importlib

    sys.path[:] = [str(Path(COMMAND).parent), *(p for p in sys.path if p != TESTS)]  # as the console script's
    before = dict(os.environ)
    for name in PRELOAD:
        importlib.import_module(name)
    added = {k: v for k, v in os.environ.items() if k not in before}  # set by the imports (pandera sets two)
    sock = socket.socket(fileno=fd)
    sock.setblocking(True)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    sock.sendall(b'["ready"]\n')
    buffer = b""
    while True:
        for key, _ in sel.select():
            if key.fileobj == wake_r:
                while True:
                    try:
                        if not os.read(wake_r, 4096):
                            break
                    except BlockingIOError:
                        break
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    sock.sendall(json.dumps(["exit", pid, status]).encode() + b"\n")
                continue
            data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 3)
            if not data:
                os._exit(0)  # the test process ended
            buffer += data
            while b"\n" not in buffer:
                more = sock.recv(1 << 20)
                if not more:
                    os._exit(0)
                buffer += more
            line, buffer = buffer.split(b"\n", 1)
            request = json.loads(line)
            request["env"] = {**added, **request["env"]}
            ready_r, ready_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                sel.close()
                sock.close()
                for f in (wake_r, wake_w, ready_r):
                    os.close(f)
                _child(request, fds, ready_w)
            for f in (*fds, ready_w):
                os.close(f)
            os.read(ready_r, 1)  # set up (or ended): as Popen returns once the child has started
            os.close(ready_r)
            sock.sendall(json.dumps(["started", pid]).encode() + b"\n")


def _child(request: dict, fds: list[int], ready: int) -> None:
    """Become `njcredits ARGS` started as the request says, run it, and end as an interpreter ends.
    What differs from a new interpreter's start is set anew (the multiprocessing key, numpy's global
    random state); the string hash seed is the launcher's in every fork."""
    import multiprocessing

    import numpy as np

    from batch.cli import main

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        _become(request, fds)
    except BaseException:  # noqa: BLE001 - where Popen would raise (a folder that is not there): said, status 127
        traceback.print_exc()
        os._exit(127)
    multiprocessing.current_process().authkey = os.urandom(32)
    np.random.seed()
    os.close(ready)
    code: object = 0
    try:
        main()
    except SystemExit as stop:
        code = stop.code
    except KeyboardInterrupt:
        traceback.print_exc()
        code = "SIGINT"
    except BaseException:  # noqa: BLE001 - printed as the interpreter prints it
        traceback.print_exc()
        code = 1
    if code is not None and not isinstance(code, int) and code != "SIGINT":
        print(code, file=sys.stderr)
        code = 1
    try:
        threading._shutdown()  # as the interpreter ends: its threads, then atexit
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - as the interpreter says it, and its status stays
        print("Exception ignored on shutdown:", file=sys.stderr)
        traceback.print_exc()
    if code == "SIGINT":
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: the interpreter's status 120
            code = 120
    os._exit(code or 0)


def _become(request: dict, fds: list[int]) -> None:
    """The process group, standard streams, folder, environment, name and arguments the request gives."""
    if request["new_session"]:
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds) - {0, 1, 2}:
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tag = request["env"].get(TAG)
    if tag:
        import ctypes

        ctypes.CDLL(None).prctl(15, process_name(tag).encode())  # PR_SET_NAME: forks keep it
    sys.argv = [COMMAND, *request["args"]]
