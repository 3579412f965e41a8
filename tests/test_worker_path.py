"""No folder or file in the working directory, the inbox or the outbox changes what code runs: a team's
notes in a folder named `batch` or `validators` beside the inbox (or in it) are never imported by a
worker, and a worker that cannot import njcredits is the environment's failure (exit 3, the file left
in the inbox, the message naming the import error), never the file's."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook

import batch.run.workers as workers
from batch.run.config import load
from batch.run.runner import run_batch

CONSOLE_SCRIPT = Path(sys.executable).parent / "njcredits"
MARKER = "IMPORTED-THE-NOTES"

# a team's notes: packages that raise when imported, or that leave a file behind when they are run
NOTES = {
    "raise": {
        "batch/__init__.py": 'raise RuntimeError("team notes, not code")\n',
        "validators/__init__.py": 'raise RuntimeError("team notes, not code")\n',
    },
    "visible": {
        "batch/__init__.py": "",
        "batch/pipeline.py": f"open({MARKER!r}, 'a').write('batch.pipeline\\n')\n",
        "batch/cli.py": f"open({MARKER!r}, 'a').write('batch.cli\\n')\n",
        "validators/__init__.py": f"open({MARKER!r}, 'a').write('validators\\n')\n",
        "validators/schema.py": f"open({MARKER!r}, 'a').write('validators.schema\\n')\n",
    },
}


def notes(folder: Path, kind: str) -> list[str]:
    """The notes written into `folder`; their names as the inbox lists them."""
    for name, text in NOTES[kind].items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return sorted(NOTES[kind])


def transfers(path: Path, tag: str) -> Path:
    row = [f"T-{tag}", "Grow NJ", f"C-{tag}", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30_000, 27_000, CERTIFICATE]
    return write_workbook(path, {"Transfers": [TRANSFER_HEADERS, row]})


def njcredits_run(cwd: Path, inbox: Path, outbox: Path, workers: int = 1, **env: str) -> subprocess.CompletedProcess:
    """`njcredits run INBOX --out OUTBOX` as the installed command, started in `cwd`."""
    return subprocess.run(
        [str(CONSOLE_SCRIPT), "run", str(inbox), "--out", str(outbox), "--workers", str(workers)],
        cwd=cwd,
        env={**clean_env(), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def clean_env() -> dict:
    env = dict(os.environ)
    for key in ("NJCREDITS_FAULT", "PYTHONPATH", "PYTHONSAFEPATH"):
        env.pop(key, None)
    return env


# where the notes are, and where `njcredits run` is started:
#   cwd          notes in the working directory, the inbox beside them
#   inbox        notes in the inbox, started elsewhere
#   inbox-is-cwd notes in the inbox, started in the inbox (`njcredits run .`)
WHERE = ["cwd", "inbox", "inbox-is-cwd"]


@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="the njcredits command is not installed beside this Python")
@pytest.mark.parametrize("kind", sorted(NOTES))
@pytest.mark.parametrize("where", WHERE)
def test_a_batch_or_validators_folder_where_the_tool_runs_is_never_imported(tmp_path, where, kind):
    inbox, outbox, home = tmp_path / "drop", tmp_path / "results", tmp_path / "team"
    inbox.mkdir()
    home.mkdir()
    transfers(inbox / "march.xlsx", "1")
    transfers(inbox / "april.xlsx", "2")
    listed = []
    if where == "cwd":
        notes(home, kind)
        cwd, target = home, inbox
    else:
        listed = notes(inbox, kind)
        cwd, target = (inbox, Path(".")) if where == "inbox-is-cwd" else (home, inbox)
    done = njcredits_run(cwd, target, outbox, workers=2)
    lines = done.stdout.splitlines()
    assert {line.split("  ")[1] for line in lines if line.startswith("done  ")} == {"march.xlsx", "april.xlsx"}, done.stdout + done.stderr
    assert (outbox / "march.annotated.xlsx").is_file() and (outbox / "april.annotated.xlsx").is_file()
    assert not list(tmp_path.rglob(MARKER)), "a worker imported the notes"
    assert "stopped unexpectedly" not in done.stdout and "could not start" not in done.stdout
    # notes dropped in the inbox are files like any other: not intake files, failed with that reason
    failed = sorted(line.split("  ")[1] for line in lines if line.startswith("failed  "))
    assert failed == listed
    assert all("is not an intake file" in line for line in lines if line.startswith("failed  "))
    assert done.returncode == (1 if listed else 0), done.stdout + done.stderr


def test_a_worker_that_cannot_import_njcredits_leaves_the_file_in_the_inbox(tmp_path, monkeypatch):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    names = ["march.xlsx", "april.xlsx", "may.xlsx"]
    for i, name in enumerate(names):
        transfers(inbox / name, str(i))
    # the seam: what a worker imports before it takes a file names a module that is not installed
    monkeypatch.setattr(workers, "WORKER_MODULES", (*workers.WORKER_MODULES, "batch.not_installed"))
    lines = []
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=2), echo=lines.append)
    assert outcome.exit_code == 3
    assert [f.status for f in outcome.files] == ["returned"] * 3
    assert sorted(p.name for p in inbox.iterdir() if p.is_file() and not p.name.startswith(".")) == sorted(names)
    assert not (inbox / "failed").exists() and not (inbox / "processed").exists()
    for f in outcome.files:
        assert f.reason == (
            "a worker process could not start (ModuleNotFoundError: No module named 'batch.not_installed'); "
            "check the njcredits installation; the file stays in the inbox for the next run."
        )
    assert sum(line.startswith("left  ") for line in lines) == 3


# a worker started on a path where a folder of notes comes first: the fork server dies importing the
# notes, or the worker finds the notes' `batch` instead of its own; the message is Python's last line
# (which import fails depends on how njcredits is installed: an editable install finds its own
# subpackages under the notes' `batch`, a plain one does not)
NOT_STARTED = [
    ("raise", r"RuntimeError: team notes, not code"),
    ("visible", r"(ImportError: cannot import name '__version__' from 'batch' \(.*/team/batch/__init__.py\)"
                r"|ModuleNotFoundError: No module named 'batch\.\w+')"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "error"), NOT_STARTED)
def test_a_worker_that_dies_before_it_starts_is_the_environments_failure(tmp_path, kind, error):
    inbox, outbox, team = tmp_path / "inbox", tmp_path / "outbox", tmp_path / "team"
    inbox.mkdir()
    team.mkdir()
    notes(team, kind)
    transfers(inbox / "march.xlsx", "1")
    # the seam: the workers' path with the notes first, as it was before workers had a path of their own
    code = (
        "import sys; import batch.run.workers as w; real = w.worker_path; "
        f"w.worker_path = lambda: [{str(team)!r}, *real()]; "
        "from batch.run.config import load; from batch.run.runner import run_batch; "
        f"sys.exit(run_batch(load(inbox={str(inbox)!r}, outbox={str(outbox)!r}, workers=1)).exit_code)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr
    assert (inbox / "march.xlsx").is_file() and not (inbox / "failed").exists()
    left = [line for line in done.stdout.splitlines() if line.startswith("left  ")]
    pattern = (
        r"left  march\.xlsx  a worker process could not start \(" + error + r"\); check the njcredits installation; "
        r"the file stays in the inbox for the next run\."
    )
    assert len(left) == 1 and re.fullmatch(pattern, left[0]), done.stdout


# the run's sys.path -> the workers' (HOME: where njcredits is installed; CWD: the working directory)
PATHS = [
    (["", "/lib", "HOME"], ["/lib", "HOME"]),  # '' (python -c): the working directory, dropped
    ([".", "notes", "/lib", "HOME"], ["/lib", "HOME"]),  # relative entries: the working directory's, dropped
    (["CWD", "/lib", "HOME"], ["/lib", "HOME"]),  # the working directory itself (python -m, a script there)
    (["/lib", "/lib", "HOME"], ["/lib", "HOME"]),  # an entry twice: once
    (["", "/lib"], ["/lib", "HOME"]),  # njcredits found through '' (a checkout run from itself): its folder added
    (["/lib", "/site"], ["/lib", "/site", "HOME"]),  # found by an editable install's finder: its folder added
]


@pytest.mark.parametrize(("run_path", "expected"), PATHS)
def test_the_workers_path_holds_no_working_directory(tmp_path, monkeypatch, run_path, expected):
    home, cwd = tmp_path / "installed", tmp_path / "team"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(workers, "product_home", lambda: str(home))
    names = {"HOME": str(home), "CWD": str(cwd)}
    monkeypatch.setattr(sys, "path", [names.get(p, p) for p in run_path])
    assert workers.worker_path() == [names.get(p, p) for p in expected]


def test_the_working_directory_stays_when_it_is_where_njcredits_is_installed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(workers, "product_home", lambda: str(tmp_path))
    monkeypatch.setattr(sys, "path", ["", "/lib", str(tmp_path)])
    assert workers.worker_path() == ["/lib", str(tmp_path)]


def test_a_package_of_njcredits_imported_from_another_folder_is_refused(tmp_path):
    with pytest.raises(ImportError, match=f"batch was imported from .*, not from njcredits's own {tmp_path / 'batch'}"):
        workers.check_product((), {"batch": str(tmp_path / "batch")})
    workers.check_product(workers.WORKER_MODULES, workers.product_folders())  # the run's own: accepted


def test_the_commands_fork_the_fork_server_from_themselves_and_its_workers_run_as_before(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    transfers(inbox / "march.xlsx", "1")
    code = (
        "import os, sys; from multiprocessing import forkserver; import batch.run.workers as w; "
        "from batch.run.config import load; from batch.run.runner import run_batch; "
        f"stray = os.open({str(tmp_path / 'stray.txt')!r}, os.O_RDONLY | os.O_CREAT); os.set_inheritable(stray, True); "
        "assert w.start_fork_server(); pid = forkserver._forkserver._forkserver_pid; "
        "assert not w.start_fork_server(); "  # one server
        f"code = run_batch(load(inbox={str(inbox)!r}, outbox={str(outbox)!r}, workers=1)).exit_code; "
        # after the run: the server has long been at its loop (and is alive while this process is)
        "print('cmdline', open(f'/proc/{pid}/cmdline', 'rb').read()); "
        "print('fds', [os.readlink(f'/proc/{pid}/fd/{n}') for n in os.listdir(f'/proc/{pid}/fd')]); "
        "sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("cmdline ", "fds ")))
    cmdline, fds = said["cmdline"], said["fds"]
    assert "multiprocessing.forkserver" not in cmdline  # not a new interpreter: the command, forked
    # as a fork server started by multiprocessing: the caller's descriptors are not held
    assert "stray.txt" not in fds and "done  march.xlsx  1 rows: 1 OK" in done.stdout, fds
    assert (outbox / "march.annotated.xlsx").is_file() and not done.stderr


def test_a_workers_crash_report_goes_to_stderr_whatever_file_the_caller_reports_crashes_to(tmp_path):
    # the caller reports crashes to a file of its own (pytest: a copy of stderr); the forked server
    # closes that descriptor, and a worker's crash report went to whatever later took its number: the
    # server's own pipe, once, which ended the server, and with it every worker (exit 255), a
    # finished file's output removed under the run. The report now goes to stderr, as it is there
    import hostile

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    bomb = hostile.size_bomb(inbox, with_dimension=False)  # calamine aborts the process reading it (SIGABRT)
    transfers(inbox / "march.xlsx", "1")
    code = (
        "import faulthandler, os, sys; from multiprocessing import forkserver; import batch.run.workers as w; "
        "from batch.run.config import load; from batch.run.runner import run_batch; "
        f"faulthandler.enable(open({str(tmp_path / 'crashes.txt')!r}, 'w')); "
        "assert w.start_fork_server(); pid = forkserver._forkserver._forkserver_pid; "
        f"out = run_batch(load(inbox={str(inbox)!r}, outbox={str(outbox)!r}, workers=2)); "
        "[print('file', f.name, f.status, f.reason) for f in out.files]; "
        "print('server', open(f'/proc/{pid}/stat').read().split(') ')[-1][:1])"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=300)
    said = {line.split(" ")[1]: line for line in done.stdout.splitlines() if line.startswith("file ")}
    assert said["march.xlsx"].startswith("file march.xlsx processed"), done.stdout + done.stderr
    assert f"file {bomb.name} failed" in said[bomb.name] and "(exit -6)" in said[bomb.name], done.stdout  # its own crash
    assert "Fatal Python error: Aborted" in done.stderr, done.stderr  # the worker's report, where its stderr is
    assert "server S" in done.stdout or "server R" in done.stdout, done.stdout  # the server outlived it


@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="the njcredits command is not installed beside this Python")
def test_a_fork_server_that_cannot_be_forked_leaves_the_start_to_multiprocessing(tmp_path):
    # a process running a second thread (a fork would copy that thread's locks)
    busy = threading.Event()
    helper = threading.Thread(target=busy.wait, daemon=True)
    helper.start()
    try:
        assert not workers.start_fork_server()
    finally:
        busy.set()
        helper.join()
    # a temporary folder whose socket path is longer than a socket's address allows: the command
    # goes on, and the run says the workers could not start, as it always has (exit 3, file kept)
    inbox, outbox, deep = tmp_path / "inbox", tmp_path / "outbox", tmp_path / ("x" * 60) / ("y" * 60)
    inbox.mkdir()
    deep.mkdir(parents=True)
    transfers(inbox / "march.xlsx", "1")
    done = njcredits_run(tmp_path, inbox, outbox, TMPDIR=str(deep))
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "left  march.xlsx  a worker process could not start (OSError: AF_UNIX path too long)" in done.stdout
    assert (inbox / "march.xlsx").is_file()


@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="the njcredits command is not installed beside this Python")
def test_no_module_of_the_working_directory_runs_in_the_commands_helpers(tmp_path):
    """Modules named as the standard library's (`signal`, `socket`, `threading`, `pickle`) in the
    working directory: neither the fork server nor the resource tracker multiprocessing starts with
    it imports them."""
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    transfers(inbox / "march.xlsx", "1")
    for name in ("signal", "socket", "threading", "pickle"):
        (tmp_path / f"{name}.py").write_text(f"open({str(tmp_path / MARKER)!r}, 'a').write({name!r})\n")
    done = njcredits_run(tmp_path, inbox, outbox)
    assert done.returncode == 0 and not done.stderr, done.stdout + done.stderr
    assert not (tmp_path / MARKER).exists(), (tmp_path / MARKER).read_text()
