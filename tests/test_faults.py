"""Fault injection: the batch's promises (README, "What the batch promises") under kills, full disks,
unwritable folders, links, odd names and shared folders.

After each fault: every input is in exactly one place (the inbox, or processed/ or failed/ with a
ledger row), no temporary file is left, and no process of the run is left. Kills and injected errors
use the fault points of `batch/run/faults.py` (NJCREDITS_FAULT).
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import launcher
import pytest
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook
from databases import ledger_flag, ledger_query

from batch.run.config import load
from batch.run.names import shown
from batch.run.runner import run_batch

HEADERS = TRANSFER_HEADERS
NAMES = ["a.xlsx", "b.xlsx", "c.xlsx"]


def book(path: Path, rows: int = 50, tag: str = "") -> Path:
    data = [
        [f"T{tag}-{i}", "Grow NJ", f"C-{i}", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30_000 + i, 27_000, CERTIFICATE]
        for i in range(rows)
    ]
    return write_workbook(path, {"Transfers": [HEADERS, *data]})


def folders(tmp_path: Path, names=NAMES) -> tuple[Path, Path]:
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    for i, name in enumerate(names):
        book(inbox / name, tag=str(i))
    return inbox, outbox


def run_cli(
    inbox: Path, outbox: Path, fault: str | None = None, tag: str | None = None, timeout: float = 120, fresh: bool = False
) -> subprocess.CompletedProcess:
    env = {**os.environ, "NJCREDITS_TEST_TAG": tag or uuid.uuid4().hex}
    env.pop("NJCREDITS_FAULT", None)
    if fault:
        env["NJCREDITS_FAULT"] = fault
    ledger = ledger_flag(outbox / ".njcredits" / "ledger.sqlite")  # on PostgreSQL, its ledger there (tests/databases.py)
    return launcher.run(["run", inbox, "--out", outbox, "--workers", "1", *ledger], env=env, timeout=timeout, fresh=fresh)


def processes_tagged(tag: str) -> list[int]:
    """Processes still alive whose environment carries the test's tag (the run, its forkserver, its workers)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or not launcher.tagged(proc.name, tag):
            continue
        try:
            if (proc / "stat").read_text().split(") ")[-1][:1] != "Z":
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def no_process_left(tag: str, seconds: float = 10) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not processes_tagged(tag):
            return True
        time.sleep(0.1)
    return False


def killed(inbox: Path, outbox: Path, fault: str) -> str:
    """A run of `inbox` killed (kill -9) at `fault`, leaving no process of it behind: its tag."""
    tag = uuid.uuid4().hex
    first = run_cli(inbox, outbox, fault, tag)
    assert first.returncode == -signal.SIGKILL, (first.returncode, first.stdout, first.stderr)
    assert no_process_left(tag), f"processes left after {fault}: {processes_tagged(tag)}"
    return tag


def temporary_files(inbox: Path, outbox: Path) -> list[Path]:
    left = [p for p in outbox.rglob("*") if ".partial" in p.name or p.name.endswith(".splice")] if outbox.exists() else []
    staging = inbox / ".njcredits" / "staging"
    return left + ([p for p in staging.rglob("*") if p.is_file()] if staging.exists() else [])


def ledger(outbox: Path, query: str):
    return ledger_query(outbox / ".njcredits" / "ledger.sqlite", query)


def places(inbox: Path, names) -> dict[str, list[str]]:
    """Where each input is: the inbox, processed/<run>/, failed/<run>/ (reason files aside)."""
    out = {n: [] for n in names}
    for n in names:
        if (inbox / n).exists():
            out[n].append("inbox")
        for where in ("processed", "failed"):
            runs = [d for d in (inbox / where).iterdir()] if (inbox / where).is_dir() else []
            out[n] += [where for d in runs if (d / n).exists()]
    return out


def assert_settled(inbox: Path, outbox: Path, names=NAMES) -> None:
    """Every input in exactly one place, recorded when archived; no temporary file left."""
    where = places(inbox, names)
    assert all(len(v) == 1 for v in where.values()), where
    recorded = {n: s for n, s in ledger(outbox, "SELECT name, status FROM files WHERE status IN ('processed', 'failed')")}
    for name, (place,) in where.items():
        if place != "inbox":
            assert recorded.get(shown(name)) == place, (name, place, recorded)
    assert not ledger(outbox, "SELECT name FROM files WHERE status='archiving'")
    assert not temporary_files(inbox, outbox), temporary_files(inbox, outbox)


# -- kill -9 of the run, and of a worker, at each point; the next run repairs -----------------------
# on PostgreSQL too, the points where the ledger holds the run's begun and half-recorded state; the
# others (a staged input being hashed, a worker writing) touch no ledger row: SQLite's run is enough
KILLS = [
    "staged:run",  # after the staging renames
    pytest.param("hashing:run", marks=pytest.mark.sqlite_only),  # while a staged input is hashed
    pytest.param("child-partial:run", marks=pytest.mark.sqlite_only),  # while the worker writes its partial file (it kills the run)
    pytest.param("child-partial:worker", marks=pytest.mark.sqlite_only),  # the worker itself killed while writing
    # the run killed as a worker sends it a file's outcome: the output, let go by the worker, is removed by the next run
    pytest.param("child-send:run", marks=pytest.mark.sqlite_only),
    "placed:run",  # between the output rename and the archive move
    "archived:run",  # between the archive move and completing the ledger row
    "report:run",  # while the run report is written
]


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
@pytest.mark.parametrize("fault", KILLS)
def test_kill_at_each_point_and_the_next_run_repairs(tmp_path, fault):
    inbox, outbox = folders(tmp_path)
    tag = uuid.uuid4().hex
    first = run_cli(inbox, outbox, fault, tag)
    assert first.returncode in (-signal.SIGKILL, 3), (first.returncode, first.stdout, first.stderr)
    assert no_process_left(tag), f"processes left after {fault}: {processes_tagged(tag)}"
    # nothing was lost: each input is in the inbox, the staging folder, or the archive
    staged = {p.name for p in inbox.glob(".njcredits/staging/*/*/*") if p.name != ".name"}
    archived = {p.name for p in inbox.glob("*/*/*") if not p.name.endswith(".reason.txt")}
    assert set(NAMES) <= {p.name for p in inbox.iterdir()} | staged | archived
    second = run_cli(inbox, outbox, tag=tag)
    assert second.returncode == 0, (second.stdout, second.stderr)
    assert no_process_left(tag)
    assert_settled(inbox, outbox)
    # every input was processed, and exactly once recorded as processed
    assert sorted(n for (n,) in ledger(outbox, "SELECT name FROM files WHERE status='processed'")) == NAMES
    assert all((outbox / n.replace(".xlsx", ".annotated.xlsx")).exists() for n in NAMES)
    # both runs ended in the ledger; the killed one says it was finished by the next
    runs = ledger(outbox, "SELECT run_id, ended, note FROM runs ORDER BY started")
    assert all(ended for _, ended, _ in runs)
    if fault != "child-partial:worker":
        assert "finished by run" in (runs[0][2] or ""), runs


def test_stop_signal_leaves_the_inputs_in_the_inbox(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    for i, name in enumerate(NAMES):
        book(inbox / name, rows=20_000, tag=str(i))
    tag = uuid.uuid4().hex
    env = {**os.environ, "NJCREDITS_TEST_TAG": tag}
    cmd = ["run", inbox, "--out", outbox, "--workers", "1"]
    proc = launcher.popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not list(outbox.glob(".*.partial*")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)  # systemctl stop
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 3, out
    assert "stop signal" in out
    assert no_process_left(tag)
    # the file in hand and the files not begun are back in the inbox, none in failed/
    assert not (inbox / "failed").exists()
    assert_settled(inbox, outbox)
    assert set(NAMES) - {p.name for p in (inbox / "processed").glob("*/*")} <= {p.name for p in inbox.iterdir()}


# -- the environment is never blamed on a workbook ------------------------------------------------
ENVIRONMENT = [
    # (fault, what the message names)
    ("child-partial:enospc", "no space left"),  # a full disk while the output is written
    ("place:eacces", "cannot be written"),  # an unwritable outbox
    ("place:enospc", "no space left"),
    ("archive:eacces", "cannot be written"),  # an unwritable archive
]


@pytest.mark.parametrize("fault,words", ENVIRONMENT)
def test_environment_failures_leave_the_input_in_the_inbox(tmp_path, fault, words):
    inbox, outbox = folders(tmp_path)
    tag = uuid.uuid4().hex
    first = run_cli(inbox, outbox, fault, tag)
    assert first.returncode == 3, (first.stdout, first.stderr)
    assert words in first.stdout and "Traceback" not in first.stdout + first.stderr
    assert not (inbox / "failed").exists()  # never blamed on the file
    assert sorted(p.name for p in inbox.iterdir() if p.is_file() and not p.name.startswith(".")) == NAMES
    assert no_process_left(tag)
    assert_settled(inbox, outbox)
    # the ledger says why, and the run ended; the next run processes the files
    assert ledger(outbox, "SELECT COUNT(*) FROM files WHERE status='returned'")[0][0] == len(NAMES)
    second = run_cli(inbox, outbox, tag=tag)
    assert second.returncode == 0 and sorted(n for (n,) in ledger(outbox, "SELECT name FROM files WHERE status='processed'")) == NAMES


def test_a_full_disk_for_real(tmp_path):
    """A small tmpfs as the outbox (when this test may mount one, as root): the writer meets ENOSPC."""
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(small)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        inbox = tmp_path / "inbox"
        inbox.mkdir()
        book(inbox / "big.xlsx", rows=20_000)
        result = run_cli(inbox, small / "outbox")
        assert result.returncode == 3 and "no space left" in result.stdout, (result.stdout, result.stderr)
        assert (inbox / "big.xlsx").exists() and not (inbox / "failed").exists()
        assert not [p for p in (small / "outbox").rglob("*") if ".partial" in p.name]
    finally:
        subprocess.run(["umount", str(small)], capture_output=True)


# -- files deleted or replaced during the run -----------------------------------------------------
def test_a_file_deleted_before_it_is_read_fails_alone(tmp_path):
    inbox, outbox = folders(tmp_path)
    settings = load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1)
    outcome = run_batch(settings, files=[inbox / "gone.xlsx", *(inbox / n for n in NAMES)], echo=lambda *_: None)
    assert {f.name: f.status for f in outcome.files} == {"gone.xlsx": "gone", **{n: "processed" for n in NAMES}}
    assert outcome.exit_code == 0
    assert_settled(inbox, outbox)


def test_a_file_replaced_during_the_run_is_recorded_under_its_own_sha(tmp_path, monkeypatch):
    import batch.run.runner as runner

    inbox, outbox = folders(tmp_path, ["a.xlsx"])
    original = (inbox / "a.xlsx").read_bytes()

    def replace_after_staging(point, path=None):
        if point == "staged":  # the user drops a corrected a.xlsx while the run works on the first
            book(inbox / "a.xlsx", rows=7, tag="new")

    monkeypatch.setattr(runner, "fault", replace_after_staging)
    settings = load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1)
    run_batch(settings, echo=lambda *_: None)
    import hashlib

    (sha,) = ledger(outbox, "SELECT sha256 FROM files WHERE status='processed'")[0]
    assert sha == hashlib.sha256(original).hexdigest()  # what was processed is what was recorded
    assert (inbox / "a.xlsx").exists()  # the replacement waits for the next run, never skipped as "already processed"
    monkeypatch.setattr(runner, "fault", lambda *a, **k: None)
    second = run_batch(settings, echo=lambda *_: None)
    assert [f.status for f in second.files] == ["processed"]


# -- links are never followed ---------------------------------------------------------------------
def test_links_in_the_inbox_are_not_read_or_moved(tmp_path):
    inbox, outbox = folders(tmp_path, ["a.xlsx"])
    secret = tmp_path / "payroll.xlsx"
    book(secret, tag="secret")
    before = secret.read_bytes()
    (inbox / "environ.csv").symlink_to("/proc/self/environ")
    (inbox / "payroll.xlsx").symlink_to(secret)
    result = run_cli(inbox, outbox, fresh=True)  # a new interpreter: its /proc/self/environ holds the tag
    assert result.returncode == 0, result.stdout + result.stderr
    assert "skipped link environ.csv -> /proc/self/environ" in result.stdout
    assert "skipped link payroll.xlsx" in result.stdout
    assert sorted(p.name for p in outbox.glob("*.annotated.xlsx")) == ["a.annotated.xlsx"]
    assert (inbox / "environ.csv").is_symlink() and (inbox / "payroll.xlsx").is_symlink()  # not moved
    assert secret.read_bytes() == before
    for p in outbox.rglob("*.xlsx"):
        assert b"NJCREDITS_TEST_TAG" not in p.read_bytes()


@pytest.mark.parametrize("link", ["processed", "failed", ".njcredits", ".njcredits.lock"])
def test_a_folder_of_the_tool_planted_as_a_link_is_never_written_through(tmp_path, link):
    inbox, outbox = folders(tmp_path, ["a.xlsx"])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "target"
    if link == ".njcredits.lock":
        (inbox / link).symlink_to(target)
    else:
        target.mkdir()
        (inbox / link).symlink_to(target, target_is_directory=True)
    result = run_cli(inbox, outbox)
    assert result.returncode == 3 and "link" in result.stdout + result.stderr, (result.stdout, result.stderr)
    assert not list(elsewhere.rglob("*"))[1:] and not (target.exists() and link == ".njcredits.lock")
    assert (inbox / "a.xlsx").exists()  # nothing was touched


def test_configured_folders_may_be_links(tmp_path):
    real_in, real_out = tmp_path / "real-in", tmp_path / "real-out"
    real_in.mkdir()
    real_out.mkdir()
    book(real_in / "a.xlsx")
    (tmp_path / "inbox").symlink_to(real_in, target_is_directory=True)
    (tmp_path / "outbox").symlink_to(real_out, target_is_directory=True)
    result = run_cli(tmp_path / "inbox", tmp_path / "outbox")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (real_out / "a.annotated.xlsx").exists() and list(real_in.glob("processed/*/a.xlsx"))


# -- odd names ------------------------------------------------------------------------------------
def test_odd_names_are_processed(tmp_path):
    long_name = "q" * 245 + ".xlsx"  # 250 bytes
    not_utf8 = os.fsdecode(b"caf\xe9 r\xe9sum\xe9.xlsx")
    odd_csv = "export [Dec] 2026: final?.csv"
    inbox, outbox = folders(tmp_path, [long_name, not_utf8])
    (inbox / odd_csv).write_text(",".join(HEADERS) + "\nT-1,Grow NJ,C-1,S LLC,B Inc,2026-01-05,30000,27000\n", encoding="utf-8")
    result = run_cli(inbox, outbox)
    assert result.returncode == 0, result.stdout + result.stderr
    outputs = [p.name for p in outbox.glob("*.annotated.xlsx")]
    assert len(outputs) == 3 and all(len(os.fsencode(n)) <= 255 for n in outputs)
    assert os.fsdecode(b"caf\xe9 r\xe9sum\xe9.annotated.xlsx") in outputs  # kept as it is on disk
    names = {n for (n,) in ledger(outbox, "SELECT name FROM files WHERE status='processed'")}
    assert "caf\\xe9 r\\xe9sum\\xe9.xlsx" in names  # recorded with escapes
    assert_settled(inbox, outbox, [long_name, not_utf8, odd_csv])


# -- two inboxes, one outbox ----------------------------------------------------------------------
def test_two_inboxes_sharing_an_outbox(tmp_path):
    """Two teams' inboxes, one outbox (and so one ledger), each run from the team's folder, whose
    njcredits.toml names the team (a shared ledger needs it)."""
    outbox = tmp_path / "outbox"
    inboxes = []
    for side in ("east", "west"):
        inbox = tmp_path / side
        inbox.mkdir()
        for i in range(3):
            book(inbox / f"{side}{i}.xlsx", rows=1_500, tag=f"{side}{i}")  # the two runs overlap: each takes seconds
        inboxes.append(inbox)
        (tmp_path / f"{side}-team").mkdir()
        (tmp_path / f"{side}-team" / "njcredits.toml").write_text(f'team = "{side}"\n', encoding="utf-8")
    args = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    procs = [launcher.popen(["run", i, "--out", outbox, "--workers", "1"], cwd=tmp_path / f"{i.name}-team", **args) for i in inboxes]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert len(list(outbox.glob("*.annotated.xlsx"))) == 6
    assert not [p for p in outbox.iterdir() if ".partial" in p.name]
    for inbox in inboxes:
        assert len(list(inbox.glob("processed/*/*.xlsx"))) == 3


def test_environment_errors_are_classified():
    from batch.run.environment import environment_message, is_environment

    assert is_environment(OSError(errno.ENOSPC, "full")) and is_environment(OSError(errno.EROFS, "ro"))
    assert not is_environment(OSError(errno.ENOENT, "gone")) and not is_environment(ValueError("bad cell"))
    assert "no space left on the disk of the outbox" in environment_message(OSError(errno.ENOSPC, "x"), "the outbox")


ERRNOS = [
    # (errno, environment?, words of the message)
    (errno.EROFS, True, "read-only filesystem"),
    (errno.EACCES, True, "permission denied"),
    (errno.ENOSPC, True, "no space left"),
    (errno.EDQUOT, True, "quota"),
    (errno.EFBIG, True, "file-size limit"),
    (errno.EIO, True, "EIO"),
    (errno.ENOENT, False, "ENOENT"),
    (errno.EINVAL, False, "EINVAL"),
]


@pytest.mark.parametrize("code,environment,words", ERRNOS)
def test_write_errors_are_classified_also_when_a_library_wraps_them(code, environment, words):
    from xlsxwriter.exceptions import FileCreateError

    from batch.run.environment import environment_message, is_environment, os_error

    plain = OSError(code, os.strerror(code), "/out/x.xlsx")
    wrapped = FileCreateError(plain)  # as xlsxwriter's close() raises it: the OS error in its args
    chained = RuntimeError("while writing")
    chained.__cause__ = plain
    for err in (plain, wrapped, chained):
        assert os_error(err) is plain
        assert is_environment(err) is environment
        message = environment_message(err, "the outbox /out")
        assert words in message and "/out" in message and "\n" not in message
    assert os_error(ValueError("bad cell")) is None


def test_ctrl_c_to_the_whole_process_group_blames_no_file(tmp_path):
    """Ctrl-C in a terminal (and `systemctl stop`) signals every process of the group, workers too:
    the run decides, ends its workers, and the file in hand goes back to the inbox."""
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    book(inbox / "big.xlsx", rows=30_000)
    tag = uuid.uuid4().hex
    env = {**os.environ, "NJCREDITS_TEST_TAG": tag}
    cmd = ["run", inbox, "--out", outbox, "--workers", "1"]
    proc = launcher.popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and not list(inbox.glob(".njcredits/staging/*/*/big.xlsx")):
        time.sleep(0.05)
    time.sleep(0.5)  # the worker is reading
    os.killpg(proc.pid, signal.SIGINT)
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 3, out
    assert not (inbox / "failed").exists() and (inbox / "big.xlsx").exists(), out
    assert no_process_left(tag)
    assert_settled(inbox, outbox, ["big.xlsx"])


def test_two_inputs_with_one_output_name_in_one_run(tmp_path):
    # a.xlsx and a returned a.annotated.xlsx both give a.annotated.xlsx: both are processed, one after the
    # other; the earlier output is kept in previous/<run-id>/, never overwritten, never mixed
    inbox, outbox = folders(tmp_path, ["a.xlsx", "a.annotated.xlsx"])
    settings = load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=2)
    outcome = run_batch(settings, echo=lambda *_: None)
    assert sorted(f.status for f in outcome.files) == ["processed", "processed"]
    assert (outbox / "a.annotated.xlsx").exists() and len(list(outbox.glob("previous/*/a.annotated.xlsx"))) == 1
    assert_settled(inbox, outbox, ["a.xlsx", "a.annotated.xlsx"])


# -- every write of the run classifies its OS error ------------------------------------------------
WRITE_ERRORS = [
    # (fault, what the one line names): the errno at the write, the folder it names
    ("child-write:erofs/wrapped", "read-only file system"),  # xlsxwriter's FileCreateError around EROFS
    ("child-write:eacces/wrapped", "permission denied"),
    ("child-write:enospc/wrapped", "no space left"),
    ("child-write:edquot/wrapped", "quota"),
    ("child-write:efbig/wrapped", "file-size limit"),
    ("child-write:eio/wrapped", "EIO"),
    ("child-write:erofs", "read-only file system"),  # the same error unwrapped
    ("place:erofs", "read-only file system"),  # the output renamed into a read-only outbox
    ("place:efbig", "file-size limit"),
    ("archive:erofs", "read-only file system"),  # the archive move
    ("archive:efbig", "file-size limit"),
    ("archive:eio", "EIO"),
    ("archive:edquot", "quota"),
]


@pytest.mark.parametrize("fault,words", WRITE_ERRORS)
def test_every_write_error_of_the_environment_leaves_the_file_in_the_inbox(tmp_path, fault, words):
    inbox, outbox = folders(tmp_path, ["a.xlsx"])
    result = run_cli(inbox, outbox, fault)
    out = result.stdout
    assert result.returncode == 3, (out, result.stderr)
    assert "Traceback" not in out + result.stderr and "FileCreateError" not in out
    lines = [line for line in out.splitlines() if line.startswith("left  a.xlsx  ")]
    assert len(lines) == 1 and words.lower() in lines[0].lower(), out
    folder = f"the outbox {outbox}" if fault.startswith(("child-write", "place")) else f"the archive {inbox}"
    assert folder in lines[0], lines[0]  # the line names the folder
    assert (inbox / "a.xlsx").exists() and not (inbox / "failed").exists()
    assert_settled(inbox, outbox, ["a.xlsx"])
    # the run ended in the ledger, the file recorded as left in the inbox
    assert ledger(outbox, "SELECT COUNT(*) FROM runs WHERE ended IS NULL")[0][0] == 0
    assert ledger(outbox, "SELECT status FROM files") == [("returned",)]


@pytest.mark.parametrize("errno_name", ["erofs", "efbig", "eio", "eacces"])
def test_a_ledger_row_that_cannot_be_written_blames_no_file(tmp_path, errno_name):
    inbox, outbox = folders(tmp_path, ["a.xlsx"])
    result = run_cli(inbox, outbox, f"ledger:{errno_name}")
    assert result.returncode == 3 and "Traceback" not in result.stdout + result.stderr, (result.stdout, result.stderr)
    assert "left  a.xlsx  " in result.stdout and str(outbox / ".njcredits" / "ledger.sqlite") in result.stdout
    assert (inbox / "a.xlsx").exists() and not (inbox / "failed").exists()
    assert ledger(outbox, "SELECT COUNT(*) FROM runs WHERE ended IS NULL")[0][0] == 0


@pytest.mark.parametrize("fault", ["report:erofs", "report:efbig/wrapped", "report:eio/wrapped"])
def test_the_run_report_is_written_last_and_never_changes_an_outcome(tmp_path, fault):
    inbox, outbox = folders(tmp_path, ["a.xlsx"])
    result = run_cli(inbox, outbox, fault)
    out = result.stdout
    assert result.returncode == 3 and "Traceback" not in out + result.stderr, (out, result.stderr)
    assert out.splitlines()[0].startswith("done  a.xlsx  ")  # processed, as it was
    assert [line for line in out.splitlines() if line.startswith("The run report was not written: ")]
    assert (inbox / "processed").is_dir() and not (inbox / "a.xlsx").exists()
    assert ledger(outbox, "SELECT status FROM files") == [("processed",)]
    assert ledger(outbox, "SELECT COUNT(*) FROM runs WHERE ended IS NULL")[0][0] == 0
    assert not list(outbox.glob("*summary*")) and not temporary_files(inbox, outbox)


def test_a_report_that_fails_for_another_reason_changes_nothing(tmp_path, monkeypatch, capsys):
    import batch.run.report

    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(batch.run.report, "write_report", broken)
    inbox, outbox = folders(tmp_path, ["a.xlsx"])
    outcome = run_batch(load(inbox=inbox, outbox=outbox, workers=1), echo=print)
    out = capsys.readouterr().out
    assert outcome.exit_code == 0 and outcome.report is None and [f.status for f in outcome.files] == ["processed"]
    assert "The run report was not written: njcredits met an internal error" in out and "Traceback" not in out
    assert ledger(outbox, "SELECT COUNT(*) FROM runs WHERE ended IS NULL")[0][0] == 0


def test_a_file_size_limit_for_real(tmp_path):
    """`ulimit -f` in the run's shell: the outputs are larger than the limit, the input and the ledger
    are not; Python ignores SIGXFSZ, so the write meets EFBIG (wrapped by xlsxwriter)."""
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    book(inbox / "big.xlsx", rows=3000)  # about 118 KB in, more out; the limit is 100 KB
    cmd = f'ulimit -f 100; exec "{sys.executable}" -c "from batch.cli import main; main()" run "{inbox}" --out "{outbox}" --workers 1'
    result = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    out = result.stdout
    assert result.returncode == 3, (out, result.stderr)
    assert "Traceback" not in out + result.stderr and "FileCreateError" not in out
    (line,) = [line for line in out.splitlines() if line.startswith("left  big.xlsx  ")]
    assert "file-size limit" in line and "EFBIG" in line and str(outbox) in line
    assert (inbox / "big.xlsx").exists() and not (inbox / "failed").exists()
    assert ledger(outbox, "SELECT COUNT(*) FROM runs WHERE ended IS NULL")[0][0] == 0
    assert not temporary_files(inbox, outbox)
