"""The monthly batch: every file in the inbox ends in exactly one place; nothing lost, nothing overwritten.

`run_batch` reads as the run's steps, in order:

    lock      an exclusive lock on the inbox (`inbox_lock`), and a stop signal noted, never obeyed
              in the middle of a move (`stop_signals`)
    recover   finish the bookkeeping of a killed run of this inbox: end it in the ledger, complete
              the file rows it began, return its staged inputs to the inbox, remove its temporary
              files; then this run is begun in the ledger (`Run.recover`)
    list      the inbox's regular files (a link is reported, never read or moved) (`Run.list`)
    stage     each input renamed into INBOX/.njcredits/staging/<run-id>/ (a copy for inputs that are
              never moved), so what is hashed, read, recorded and archived is that one file (`Run.stage`)
    hash      a file already processed (SHA-256) is skipped, unless --force; a file that is not an
              intake file fails; a copy of a file earlier in the run waits for it (`Run.sort`)
    process   each file in its own worker process (memory limit, timeout), which writes the output
              under a temporary name owned by the run (`Run.process`, with `batch.run.workers`)
    decide    in a run of several files, the files whose portfolio rules read another workbook of
              the run are processed again with its records (`Run.settle`, with `batch.run.samerun`)
    place     the output renamed to its final name (an earlier one moved to previous/<run-id>/) (`Run.place`)
    archive   a ledger row begun, the input moved to processed/ or failed/ (with its reason), the row
              completed (`Run.archive`)
    record    run-<run-id>.summary.xlsx, and the run ended in the ledger (`Run.report`, `Run.record`)

One file's trouble fails that file alone. A failure of the environment (a full disk, an unwritable
folder, a worker that cannot start, a stop signal) never sends a file to failed/: the input goes back
to the inbox for the next run, the message names the environment, and the run's exit status is 3.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import itertools
import os
import secrets
import shutil
import signal
import stat
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from batch import __version__
from batch.memory import give_back_freed
from batch.run.config import Settings
from batch.run.environment import EnvironmentStop, environment_message, is_environment, os_error
from batch.run.faults import fault
from batch.run.ledger import Ledger, LedgerUnreadable, read_versions, record_rows, server_errors
from batch.run.ledger.reads import read_outputs_since
from batch.run.names import fit, output_name, printable, shown, temporary
from batch.run.samerun import SameRun, decide, earlier_keys, held, held_rows, places, reads_nothing
from batch.run.teams import team_for
from batch.run.workers import SpoolFailed, file_reason, isolated, remove_temporary

INTAKE_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".csv")
RECORD_COLUMNS = ["sheet", "record_id", "status", "award_cents", "codes", "area", "year", "file"]
LOCK_NAME = ".njcredits.lock"
WORK_DIR = ".njcredits"  # the tool's own folder in the inbox: staging/<run-id>/
NAME_FILE = ".name"  # in a staging slot: the input's name as it was in the inbox (bytes)
# a file waiting for the run's decision with at most this many records has its ledger rows made as its
# result arrives (`_prepared`); a larger one's are made when it is recorded
PREPARED_RECORDS = 2_000
# the run report's reads of a one-file run's records are made as its worker writes the file
# (`Run.read_ahead`) for at most this many records: a full sheet's would hold a copy of its
# records (and the report's tables of them) beside the worker's write, its peak
READ_AHEAD_UP_TO = 250_000


@dataclass
class LostRecords:
    """The records of a file sent a block at a time, which the ledger failed to take as they came
    (`Run.record_early`): the blocks it had were let go, so the file goes back to the inbox
    (`reason`), processed again by the next run."""

    reason: str


class RunLocked(Exception):
    """Another run holds the inbox."""


class UnsafeLink(Exception):
    """A folder the tool writes inside the inbox is a link; nothing is written through it."""


@dataclass
class FileOutcome:
    name: str
    status: str  # processed | failed | skipped | returned (left in the inbox: the environment failed) | gone
    reason: str = ""
    output: str | None = None
    archived: str | None = None
    info: dict = field(default_factory=dict)

    WORDS = {"processed": "done", "failed": "failed", "skipped": "skipped", "returned": "left", "gone": "gone"}

    @property
    def line(self) -> str:
        """The file's line in the one fixed form scripts may parse, on the terminal and in the report:
        `done  NAME  30 rows: 17 OK, 6 flagged, 4 ineligible, 3 invalid; 11 errors`, or
        `failed  NAME  REASON` (`skipped`, `left`: left in the inbox, `gone`: deleted before it was read).
        Counts in plain digits (20000, never 20,000): scripts parse them.
        Always one line: the name and the reason are printed as text, control characters escaped."""
        word = self.WORDS[self.status]
        if self.status != "processed":
            return f"{word}  {printable(self.name)}  {printable(self.reason)}"
        sheets = (self.info.get("counts") or {}).values()
        total = {k: sum(c.get(k, 0) for c in sheets) for k in ("rows", "OK", "Flagged", "Ineligible", "Invalid")}
        return (
            f"done  {printable(self.name)}  {total['rows']} rows: {total['OK']} OK, {total['Flagged']} flagged, "
            f"{total['Ineligible']} ineligible, {total['Invalid']} invalid; {self.info.get('errors', 0)} errors"
        )


@dataclass
class RunOutcome:
    run_id: str
    files: list[FileOutcome]
    report: Path | None
    stopped: str = ""  # why the run stopped early (a signal, the environment), if it did

    @property
    def failed(self) -> int:
        return sum(f.status == "failed" for f in self.files)

    @property
    def returned(self) -> int:
        return sum(f.status == "returned" for f in self.files)

    @property
    def exit_code(self) -> int:
        """0: every file processed or skipped; 1: a file could not be processed; 3: the environment
        (or a stop signal) stopped the run or some files, which stay in the inbox."""
        if self.returned or self.stopped:
            return 3
        return 1 if self.failed else 0


def new_run_id() -> str:
    now = dt.datetime.now(dt.UTC)
    return now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z-" + secrets.token_hex(2)


ARCHIVE_DIRS = ("processed", "failed")


def list_inputs(folder: Path, echo=None) -> list[Path]:
    """The regular files dropped in the folder and its subfolders: hidden files and folders (the tool's
    own `.njcredits/` among them), Office lock files (~$), reasons, and the archive folders `processed/`
    and `failed/` at the top aside. A symbolic link is never read, moved or entered: it is reported
    (`skipped link name -> target`)."""
    out = []

    def walk(d: Path) -> None:
        for p in sorted(d.iterdir()):
            if p.name.startswith((".", "~$")) or p.name.endswith(".reason.txt"):
                continue
            try:
                st = p.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(st.st_mode):
                if echo:
                    echo(f"skipped link {printable(p.relative_to(folder))} -> {printable(os.readlink(p))}")
            elif stat.S_ISDIR(st.st_mode):
                if not (d == folder and p.name in ARCHIVE_DIRS):
                    walk(p)
            elif stat.S_ISREG(st.st_mode):
                out.append(p)

    walk(folder)
    return out


def safe_dir(base: Path, *parts: str) -> Path:
    """base/parts..., made as needed; none of `parts` may be a link (base may: the user chose it)."""
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise UnsafeLink(f"{path} is a link; njcredits never writes through a link inside its folders: remove it.")
        path.mkdir(exist_ok=True)
    return path


@contextmanager
def inbox_lock(settings: Settings, echo):
    """An exclusive lock per inbox, so two runs cannot interleave. Released when the process ends,
    however it ends (a killed run never leaves a stale lock). The lock file is never opened through a
    link: a link at its name is refused. With a PostgreSQL ledger, shared by machines, the lock is
    also held in the database (`server_locks`), where a run on another machine meets it."""
    folder = settings.inbox if settings.moves_inputs else settings.home
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeLink(f"{path} is a link; njcredits never opens its lock through a link: remove it.") from err
        raise
    with os.fdopen(fd, "r+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not settings.wait:
                raise RunLocked(
                    f"Another njcredits run is processing {settings.inbox} (lock {path}); "
                    f"try again when it ends, or use --wait to wait for it."
                ) from None
            echo(f"Waiting for the run already processing {settings.inbox} to finish ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            with server_locks(settings, folder, echo) as held:
                yield held
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def server_locks(settings: Settings, folder: Path, echo):
    """With a PostgreSQL ledger, the inbox lock held in the database too, for the run's length: a
    session advisory lock on the lock's folder as this machine names it, and, for a run of a named
    team's inbox, on the team (the same shared inbox mounted at another path on another machine is
    the same team's). The server ends the session of a killed run, and its locks with it."""
    from batch.run.ledger.backends import ServerLock, lock_key, on_server

    if not on_server(settings.ledger):
        yield []
        return
    names = [f"folder {settings.team or ''} {folder.resolve()}"]  # two teams' folders of one path on two machines are two
    if settings.team and settings.moves_inputs:
        names.append(f"team {settings.team}")
    held = []
    try:
        for name in names:
            lock = ServerLock(settings.ledger, lock_key(name))
            try:
                taken = lock.take(wait=False)
            except server_errors() as err:  # before any input is touched
                raise LedgerUnreadable(
                    f"The ledger {settings.ledger} cannot be reached to lock the inbox ({' '.join(str(err).split())}); check the URL, "
                    "that the server is running and that the user may connect; nothing was touched."
                ) from err
            if not taken:
                if not settings.wait:
                    who = lock.holder()
                    raise RunLocked(
                        f"Another njcredits run is processing {settings.inbox}"
                        + (f" for team {printable(settings.team)}" if name.startswith("team ") else "")
                        + f" (its lock is held in the ledger's database{', by ' + who if who else ''}); try again when it "
                        "ends, or use --wait to wait for it."
                    )
                echo(f"Waiting for the run already processing {settings.inbox} (on another machine) to finish ...")
                lock.take(wait=True)
            held.append(lock)
        yield held
    finally:
        for lock in held:
            lock.release()


def _free_name(folder: Path, name: str) -> Path:
    """folder/name, or `name (1)`, `name (2)` ... when taken: nothing is ever overwritten."""
    dest = folder / fit(name)
    stem, dot, suffix = name.partition(".") if not name.startswith(".") else (name, "", "")
    n = 1
    while dest.exists() or dest.is_symlink():
        dest = folder / fit(f"{stem} ({n})", keep=(dot + suffix))
        n += 1
    return dest


def _move_whole(src: Path, dest: Path, run_id: str) -> None:
    """Move a file: a rename, or across filesystems (an archive on another disk) a copy under a
    temporary name of the run, synced, renamed into place and only then removed from its source, so
    no folder ever holds a part of a file under its name (a kill during the copy leaves only the
    run's temporary file)."""
    try:
        os.rename(src, dest)
        return
    except OSError as err:
        if err.errno != errno.EXDEV:
            raise
    tmp = dest.parent / temporary(dest.name, run_id)
    try:
        with open(src, "rb") as fin, open(tmp, "xb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
            fout.flush()
            os.fsync(fout.fileno())
        os.rename(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.unlink(src)


def _move(src: Path, folder: Path, name: str, run_id: str) -> Path:
    """Move a file into folder under `name`, never over another file."""
    dest = _free_name(folder, name)
    _move_whole(src, dest, run_id)
    return dest


def _place_output(partial: Path, final: Path, run_id: str) -> Path:
    """Rename the finished output to its final name; an earlier output of that name is moved to
    `previous/<run-id>/` first, so nothing is ever overwritten."""
    if final.exists():
        _move(final, safe_dir(final.parent, "previous", run_id), final.name, run_id)
    os.replace(partial, final)
    return final


def _sha(path: Path) -> str:
    """SHA-256 of a staged file, opened without following a link."""
    import hashlib

    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            fault("hashing")
            h.update(block)
    return h.hexdigest()


# -- the run ------------------------------------------------------------------------------------


@dataclass
class Item:
    """One input of a run: where it was in the inbox (`rel`: its path there, with its subfolders), and
    its staged copy."""

    original: Path
    rel: str
    staged: Path
    slot: Path | None  # the staging slot folder (None: nothing staged)
    moved: bool  # True: the input was renamed into staging (it must go somewhere at the end)
    info: dict = field(default_factory=dict)
    done: bool = False  # recorded (archived, skipped, failed or given back)
    recorded: bool = False  # its records are in the ledger already, recorded as its worker wrote it (`Run.record_early`)
    stale: bool = False  # records of an earlier reading of it are in the ledger, which could not take this reading's then

    @property
    def name(self) -> str:
        return self.rel

    @property
    def folder(self) -> str:
        """Its subfolder in the inbox ("" at the top): kept in the outbox and the archive."""
        return os.path.dirname(self.rel)


def run_batch(
    settings: Settings, files: list[Path] | None = None, echo=print, progress: bool = False, one_file: bool = False
) -> RunOutcome:
    """One run over the inbox (or over `files`, all inside the inbox): the steps of the module's docstring.
    `one_file`: `run FILE`, a run of the one file given rather than of the inbox (`batch.run.teams`)."""
    with stop_signals() as stop, inbox_lock(settings, echo) as locks:  # lock
        run = Run(settings, echo, stop, Path(files[0]) if one_file and files else None, locks)
        run.open()
        run.recover()
        try:
            inputs = run.list(files)
            run.stage(inputs)
            with run.ledger.kept():  # the files' bookkeeping on one connection to the ledger
                todo, copies = run.sort()
                run.process(todo, progress)  # in isolation; each file placed, archived and recorded as it is done
                run.settle_copies(copies)
            run.check_stop()
        except Exception as err:  # noqa: BLE001 - the environment, a stop signal, or an error of njcredits itself
            run.stopped_by(err)
        report = run.report()
        return run.record(report)


@contextmanager
def stop_signals():
    """SIGINT and SIGTERM set the event yielded (the run stops between files, never in a move), and
    reach a caller's own handler (watch); the handlers are put back when the run ends. Off the main
    thread (no signal can be handled there) the event is only the run's."""
    stop = threading.Event()
    previous = {}
    if threading.current_thread() is threading.main_thread():

        def on_signal(signum, frame, _previous=previous):
            stop.set()
            handler = _previous.get(signum)
            if callable(handler) and handler is not signal.default_int_handler:  # a caller's own handler (watch)
                handler(signum, frame)

        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _not_written(payload: dict) -> bool:
    """Whether a file's worker wrote no first output, told the file is processed again (`work`)."""
    return not payload.get("written", True)


class _SameRuns:
    """For the workers (`isolated`): the SameRun of a file processed again, its records built when
    its worker is given it (`get`)."""

    def __init__(self, given, place: dict[int, int]):
        self.given, self.place = given, place

    def get(self, key: int):
        if key not in self.place:
            return None
        return SameRun(self.place[key], self.given.records(self.place[key]))


class Run:
    """One run, under the inbox lock: its steps, and the bookkeeping of each file."""

    def __init__(self, settings: Settings, echo, stop: threading.Event, one_file: Path | None = None, locks=()):
        self.settings, self.echo, self.stop, self.one_file = settings, echo, stop, one_file
        self.locks = locks  # the inbox's locks held in a PostgreSQL ledger (`server_locks`)
        self.team_names: tuple[str, ...] = ()
        self.run_id = new_run_id()
        self.started = dt.datetime.now(dt.UTC)
        self.keep = not settings.moves_inputs
        # the tool's folder: in the inbox, or its own (beside a SQLite ledger) for a folder that is never written (the samples)
        self.work = settings.inbox / WORK_DIR if settings.moves_inputs else settings.home
        self.outcomes: list[FileOutcome] = []
        self.items: list[Item] = []
        self.records, self.per_year, self.rules_versions = [], [], {}
        self.ahead = None  # the report's reads of the run's records, made before it (`read_ahead`)
        self.by_item: dict[int, FileOutcome] = {}  # each file read, its outcome (for its copies)
        self.stopped = ""
        self.report_problem, self.report_environment = "", False

    # -- the steps -----------------------------------------------------------------------------
    def open(self) -> None:
        """Refuse a link where the run would write (its folder in the inbox, the archive folders), open
        the ledger, and tell the run's team (`team_for`: a shared ledger without one is refused)."""
        settings = self.settings
        for part in [WORK_DIR] if settings.moves_inputs else []:
            if (settings.inbox / part).is_symlink():
                raise UnsafeLink(f"{settings.inbox / part} is a link; njcredits never writes through a link inside the inbox: remove it.")
        if not self.keep:
            for where in ("processed", "failed"):
                if (settings.archive / where).is_symlink():
                    raise UnsafeLink(f"{settings.archive / where} is a link; njcredits never writes through a link: remove it.")
        self.ledger = Ledger(settings.ledger)
        try:
            # a shared ledger without a team: refused here, told again below; the names its killed runs are found by
            self.team_names = team_for(settings, self.ledger.places(), self.one_file).names
        except server_errors() as err:  # before any input is touched
            raise LedgerUnreadable(environment_message(err, "the ledger")) from err

    def recover(self) -> None:
        """Finish what a killed run of this inbox left (`recover`), then begin this run in the ledger;
        a ledger that cannot be written stops the run before any input is touched."""
        settings = self.settings
        try:
            recover(settings, self.ledger, self.work, self.run_id, self.echo, self.team_names)
            where = (str(settings.inbox), str(settings.outbox))
            # the team told again in the transaction that begins the run: no other run began between. The run starts
            # by the ledger's clock (a killed run finished here ended before it: the files it recorded count for it).
            team, moved, started = self.ledger.start_run(
                self.run_id,
                None,
                __version__,
                *where,
                lambda places: team_for(settings, places, self.one_file),
                bool(self.one_file),
            )
            self.started = dt.datetime.fromisoformat(started)
        except server_errors() as err:  # before any input is touched
            raise LedgerUnreadable(environment_message(err, "the ledger")) from err
        self.settings = replace(settings, team=team.name)  # the workers and the report read it
        if moved and settings.team is not None:
            where = ", ".join(printable(old) for old in team.adopts)
            self.echo(
                f"The ledger's {moved} earlier run{'' if moved == 1 else 's'} of {where}, recorded before its team was named, "
                f"{'is' if moved == 1 else 'are'} now {printable(team.name)}'s, with their records and decisions."
            )
        if team.note:
            self.echo(team.note)

    def list(self, files) -> list[Path]:
        """The inputs: `files`, or the inbox's regular files (`list_inputs`). The outbox is made first."""
        self.settings.outbox.mkdir(parents=True, exist_ok=True)
        return [Path(f) for f in files] if files is not None else list_inputs(self.settings.inbox, self.echo)

    def stage(self, inputs: list[Path]) -> None:
        """Each input into its own staging slot (`_stage`), in `self.items`. An input deleted meanwhile
        is `gone`; the inbox's disk failing stops the run."""
        staging = safe_dir(self.work, "staging", self.run_id) if inputs else None
        for n, path in enumerate(inputs):
            self.check_stop()
            try:
                self.items.append(self._stage(path, staging / str(n)))
            except FileNotFoundError:
                _remove_tree(staging / str(n))
                self.say(FileOutcome(path.name, "gone", "it was deleted from the inbox before it could be read."))
                self.ledger.add_file(self.run_id, {"name": shown(path.name), "status": "gone", "reason": self.outcomes[-1].reason})
            except OSError as err:
                _remove_tree(staging / str(n))
                if not is_environment(err):
                    raise
                raise EnvironmentStop(environment_message(err, "the inbox")) from err
        fault("staged")

    def sort(self) -> tuple[list, list]:
        """Hash each staged input, and decide which are read: a file that cannot be hashed, is not a
        regular file or not an intake file fails; one already processed is skipped (unless --force);
        a copy of a file earlier in this run waits for it (`copies`). Returns the files to read, each
        with the temporary name of its output in its outbox folder, and the copies."""
        settings = self.settings
        seen: dict[str, Item] = {}
        copies, todo = [], []
        for item in self.items:
            self.check_stop()
            try:
                item.info.update(size=item.staged.stat().st_size, sha256=_sha(item.staged))
            except OSError as err:
                if is_environment(err) and err.errno not in (errno.EACCES, errno.EPERM, errno.EIO):  # reading: the file's
                    self.say(self.give_back(item, environment_message(err, "the inbox")))
                else:
                    self.finish_file(item, FileOutcome(item.name, "failed", file_reason(err, shown(item.name))))
                continue
            if not item.staged.is_file() or item.staged.is_symlink():
                self.finish_file(item, FileOutcome(item.name, "failed", f"{shown(item.name)} is not a regular file."))
                continue
            if not item.name.lower().endswith(INTAKE_SUFFIXES):
                reason = f"{shown(item.name)} is not an intake file (.xlsx, .xlsm, .xls or .csv); save it as .xlsx and drop it in again."
                self.finish_file(item, FileOutcome(item.name, "failed", reason))
                continue
            sha = item.info["sha256"]
            if sha in seen and not settings.force:  # a copy of a file earlier in this run: decided after it
                copies.append((item, seen[sha]))
                continue
            earlier = None if settings.force or settings.inputs_protected else self.ledger.processed_before(sha, self.run_id, settings.team)
            if earlier:
                reason = self.skip_reason(earlier)
                self.finish_file(item, FileOutcome(item.name, "skipped", reason))
                continue
            seen[sha] = item
            try:
                out_dir = safe_dir(settings.outbox, *Path(item.folder).parts)
            except OSError as err:
                if not is_environment(err):
                    raise
                self.say(self.give_back(item, environment_message(err, f"the outbox {shown(str(settings.outbox))}")))
                continue
            # the slot number in the temporary name: two inputs with one output name never share it
            todo.append((item, out_dir / temporary(output_name(item.original.name), f"{self.run_id}-{item.slot.name}")))
        return todo, copies

    def skip_reason(self, earlier: dict) -> str:
        """Why a file already processed is skipped: the earlier run, its output as it was returned then
        (moved to `previous/<run-id>/` by the first later run that returned a workbook of that name),
        and where the latest version of that output is now, and of which run."""
        said = f"identical to {earlier['name']}, already processed in run {earlier['run_id']}"
        output = earlier["output"]
        if not output:
            return said + "; use --force to process it again."
        try:
            later = read_outputs_since(self.settings.ledger, output, earlier["run_id"], self.settings.team)
        except LedgerUnreadable:  # the skip stands; only where its output went is not told
            later = []
        if not later:
            return said + f", returned as {output} (still the latest version there); use --force to process it again."
        moved = Path(output).parent / "previous" / later[0] / Path(output).name
        where = f"now {moved}" if moved.exists() else f"moved to {moved}, no longer there"
        return (
            said + f", returned then as {output} ({where}); the latest version is {output}, of run {later[-1]}; "
            "use --force to process it again."
        )

    def process(self, todo: list, progress: bool) -> None:
        """Each file read in a worker of its own (`batch.run.workers.isolated`); as each is done, its
        output is placed and the input archived and recorded (`done`). In a run of several files, a
        file with portfolio records waits for the run's decision (`decide`, `batch.run.samerun`): the
        files whose results depend on another workbook of the run are processed again with its
        records; then every waiting file is placed, archived and recorded, in the order listed. A run
        that stops or is killed before then has recorded none of them (they go back to the inbox)."""
        several = len(todo) > 1
        waiting = []  # [item, partial, kind, payload, its portfolio records], in the order listed
        provided = []  # [item, its records]: files placed at once whose records other files may read
        groups: set = set()  # the groups of their records, as their workers sent them (`work`, asked: `group_keys`)
        bar = _progress(progress, len(todo))
        echo = self.echo
        if bar:
            self.echo = bar.echo_through(echo)
        try:
            told = {"on_stage": bar.stage} if bar else {}  # the stages of the files in hand, for the display
            if several:  # a file whose rules read a group of one of these is processed again: it writes no first output
                told["ask"] = lambda reads: not groups.isdisjoint(reads)
            told["on_records"] = lambda item, records: self.record_early(item, records, several)
            for item, partial, kind, payload in isolated(todo, self.settings, self.run_id, self.stop, **told):
                if bar:
                    bar.advance(item)
                mine = held(payload["records"]) if several and kind == "ok" else None
                # a file not written yet is processed again whatever it holds (`settle`)
                if mine is not None and (_reads_others(mine) or _not_written(payload)):
                    _prepared(payload)
                    waiting.append([item, partial, kind, payload, mine])
                    groups.update(payload["groups"])
                    continue
                self.by_item[id(item)] = self.done(item, partial, kind, payload)
                if mine is not None and len(mine) and self.by_item[id(item)].status == "processed":
                    provided.append([item, mine])
                    groups.update(payload["groups"])
        finally:
            self.echo = echo
            if bar:
                bar.stop()
        if not waiting:
            return
        listed = {id(item): n for n, (item, _partial) in enumerate(todo)}
        waiting.sort(key=lambda w: listed[id(w[0])])
        try:
            self.check_stop()
            self.settle(waiting, progress, provided)
            for item, partial, kind, payload, _mine in waiting:
                self.by_item[id(item)] = self.done(item, partial, kind, payload)
        except BaseException:
            for item, partial, *_ in waiting:
                if not item.done:
                    remove_temporary(Path(partial))
            raise

    def record_early(self, item: Item, records, several: bool) -> pd.DataFrame | LostRecords:
        """The records of a large file, sent by its worker before it writes the file (`work`), recorded
        in the ledger while it writes: the run then records the file itself (`archive`) without them,
        or removes them when the file is not processed. Not those of a file that waits for the run's
        decision (`process`): it may be processed again, and is recorded then; nor when the ledger
        cannot take them now (they are recorded with the file, where a ledger that cannot is met).
        A file read again in a new worker (`isolated`: `again`) has its records replaced.

        Returns what the run keeps of them: once recorded, all but their read values (`inputs`,
        about 1.4 KB of a GrowNJ record: 1.4 GB of a full sheet's, which the run would else hold
        beside the worker's write), which nothing of the run reads but the ledger's insert, and, in
        a run of one file, their portfolio fields (`fields`, read again only by the run's other
        files, `batch.run.samerun`).

        `records` may be an iterator of blocks of them, read off the worker's pipe as it makes them
        (`batch.run.workers.receive_each`): in a run of one file each is inserted as it comes, in
        the one transaction (`Ledger.add_records`), and only what is kept of it is held, so a full
        sheet's records are never whole here. The blocks before a ledger failure are let go by
        then: the file cannot be recorded with its records, and goes back to the inbox
        (`LostRecords`, `done`). In a run of several files they are joined first, as sent whole."""
        if not isinstance(records, pd.DataFrame):
            if not several:
                return self._record_blocks(item, records)
            from batch.pipeline import joined_records

            records = joined_records(list(records))
        if several and _reads_others(held_rows(records)):  # as `process` tells it, by the sheets of the records the run holds
            return records
        try:
            self.ledger.add_records(self.run_id, shown(item.name), records, again=item.recorded or item.stale)
        except (OSError, *server_errors()):  # the ledger's: met again, and said, as the file is recorded
            item.recorded, item.stale = False, item.stale or item.recorded  # any recorded before are removed then
            return records
        item.recorded, item.stale = True, False
        fault("recorded-early")
        kept = records.drop(columns=["inputs"] if several else ["inputs", "fields"], errors="ignore")
        if not several and len(kept) <= READ_AHEAD_UP_TO:  # the run's records are all in the ledger: the report's reads made now
            self.ahead = self.read_ahead([(kept, shown(item.name))])
        return kept

    def _record_blocks(self, item: Item, blocks) -> pd.DataFrame | LostRecords:
        """`record_early` of a run of one file whose records come a block at a time."""
        kept = []

        def keeping(first):
            for block in itertools.chain(first, blocks):
                yield block
                kept.append({c: block[c].copy() for c in block.columns if c not in ("inputs", "fields")})

        try:
            # the first block taken before the ledger's transaction begins: with the run's unnamed file
            # (`receive_each`), every piece is read into it first, and the ledger is held for the insert alone
            first = [block] if (block := next(blocks, None)) is not None else []
            self.ledger.add_records(self.run_id, shown(item.name), keeping(first), again=item.recorded or item.stale)
        except (OSError, SpoolFailed, *server_errors()) as err:  # the blocks before are gone; the rest read off the pipe
            kept.clear()
            for _block in blocks:
                pass
            item.recorded, item.stale = False, item.stale or item.recorded  # any recorded before are removed then
            if isinstance(err, SpoolFailed):  # the disk of the outbox, where they were held as they came
                return LostRecords(environment_message(err.error, f"the outbox {shown(str(self.settings.outbox))}"))
            return LostRecords(environment_message(err, f"the ledger {shown(str(self.settings.ledger))}"))
        item.recorded, item.stale = True, False
        fault("recorded-early")
        kept = joined_columns(kept)
        if len(kept) <= READ_AHEAD_UP_TO:  # the run's records are all in the ledger: the report's reads made now
            self.ahead = self.read_ahead([(kept, shown(item.name))])
        return kept

    def read_ahead(self, processed: list[tuple[pd.DataFrame, str]]) -> tuple[list, object] | None:
        """What the run report reads of the ledger and makes of the run's records (`batch.run.report.
        read_ahead`), for the records of `processed` (as `done` will list them), made while the run's
        last worker writes its file: off the run's path. `report` takes it when its records are those
        (the file was placed); else it reads them itself."""
        from batch.run.report import read_ahead

        try:
            return processed, read_ahead(self.ledger, self.run_id, self.settings.team, _report_records(processed))
        except Exception:  # noqa: BLE001 - the report reads them again, and meets and says any failure there
            return None

    def settle(self, waiting: list, progress: bool, provided: list = ()) -> None:
        """Decide over the waiting files' records which are processed again, and with what of the
        others (`batch.run.samerun.decide`), and process them again. A file that fails or goes back
        this time leaves the run's portfolio: it is recorded so (`done`, and out of `waiting`) and the
        run decides again over the rest, processing again every file processed again before, so
        that no file is placed counting a record the ledger will not hold. A stop signal stops it
        with none of the waiting files recorded. `provided`: files placed already whose records the
        waiting files may read (`reads_nothing`); they are never processed again."""
        redone: set[int] = set()
        while waiting:
            names = [shown(w[0].name) for w in waiting] + [shown(item.name) for item, _mine in provided]
            place = places(names)
            books = {place[i]: w[4] for i, w in enumerate(waiting)}
            for j, (_item, mine) in enumerate(provided, start=len(waiting)):
                books[place[j]] = mine
            ids = pd.concat([b[["sheet", "record_id"]] for b in books.values()], ignore_index=True)
            try:
                versions = read_versions(self.settings.ledger, (self.settings.team,), ids, including=self.run_id)
            except LedgerUnreadable as err:
                raise EnvironmentStop(str(err)) from err
            given = decide(books, earlier_keys(versions), {place[i]: name for i, name in enumerate(names)})
            fault("decided")
            readers = set(given.readers())
            # a file processed again before that reads no other now is processed again with none, and
            # so is one that wrote no first output (`work`: the run told it another holds a group it reads)
            again = {id(w[0]): place[i] for i, w in enumerate(waiting) if place[i] in readers or id(w[0]) in redone or _not_written(w[3])}
            if not again:
                return
            by_item = {id(w[0]): w for w in waiting}
            todo = [(w[0], w[1]) for w in waiting if id(w[0]) in again]
            bar = _progress(progress, len(todo))
            try:
                told = {"on_stage": bar.stage} if bar else {}
                for item, _partial, kind, payload in isolated(todo, self.settings, self.run_id, self.stop, _SameRuns(given, again), **told):
                    if bar:
                        bar.advance(item)
                    w = by_item[id(item)]
                    if kind == "ok":  # both reads of the file are its time
                        payload["seconds"] = round(payload["seconds"] + w[3]["seconds"], 3)
                        _prepared(payload)
                    w[2:4] = kind, payload
            finally:
                if bar:
                    bar.stop()
            self.check_stop()
            redone |= set(again)
            lost = [w for w in waiting if w[2] != "ok"]
            if not lost:
                return
            for item, partial, kind, payload, _mine in lost:
                self.by_item[id(item)] = self.done(item, partial, kind, payload)
            waiting[:] = [w for w in waiting if w[2] == "ok"]

    def settle_copies(self, copies: list) -> None:
        """A copy of a file earlier in this run follows it: skipped when it was processed, failed when it
        failed, back in the inbox when it went back (or the run stopped before it)."""
        for item, original in copies:
            first = self.by_item.get(id(original))
            if first is None or first.status == "returned":
                self.say(self.give_back(item, first.reason if first else "the run stopped before the file it copies was done."))
            elif first.status == "processed":
                reason = (
                    f"identical to {shown(original.name)}, processed in this run (output {first.output}); use --force to process it again."
                )
                self.finish_file(item, FileOutcome(item.name, "skipped", reason))
            else:
                self.finish_file(
                    item,
                    FileOutcome(item.name, "failed", f"identical to {shown(original.name)}, which could not be processed: {first.reason}"),
                )

    def check_stop(self) -> None:
        """A stop signal stops the run between two files, and so does the loss of the inbox's lock held
        in a PostgreSQL ledger (its session ended: the server restarted, or the network was cut): a run
        on another machine may now take the inbox."""
        if self.stop.is_set():
            raise EnvironmentStop("a stop signal")
        if any(not lock.holding() for lock in self.locks):
            raise EnvironmentStop(
                "the inbox's lock in the ledger's database was lost (its session ended: the server restarted or the network was cut)"
            )

    def stopped_by(self, err: Exception) -> None:
        """The run stopped early (the environment, a stop signal, an error of njcredits itself): it says
        why, and every file not done goes back to the inbox."""
        if isinstance(err, EnvironmentStop):
            self.stopped = str(err)
        elif is_environment(err):  # a folder of the run (the outbox, a subfolder of it) cannot be made
            oserr = os_error(err)
            where = shown(str(Path(oserr.filename).parent)) if oserr is not None and oserr.filename else "a folder of the run"
            self.stopped = environment_message(err, where, stays=False)
        else:
            self.stopped = f"an internal error ({type(err).__name__}: {err})"
        self.echo(f"Run stopped: {self.stopped}")
        for item in self.items:
            if not item.done:
                self.say(self.give_back(item, f"the run stopped ({self.stopped}) before this file was done; it stays in the inbox."))

    def report(self) -> Path | None:
        """run-<run-id>.summary.xlsx in the outbox, written last: its failure never changes a file's outcome."""
        from batch.run.report import write_report

        settings = self.settings
        try:
            fault("report")
            ahead = self.ahead[1] if self.ahead is not None and _same_records(self.ahead[0], self.records) else None
            return write_report(
                settings.outbox / f"run-{self.run_id}.summary.xlsx",
                self.run_id,
                self.started,
                self.outcomes,
                self.ledger,
                ahead.records if ahead is not None else _report_records(self.records),
                pd.concat(self.per_year, ignore_index=True) if self.per_year else pd.DataFrame(),
                self.rules_versions,
                settings.team,
                ahead,
            )
        except Exception as err:  # noqa: BLE001 - written last: its failure never changes a file's outcome
            if is_environment(err):
                problem = environment_message(err, f"the outbox {shown(str(settings.outbox))}", stays=False)
            else:
                problem = f"njcredits met an internal error writing it ({type(err).__name__}: {err})."
            self.echo(f"The run report was not written: {problem}")
            remove_temporary(settings.outbox / f"run-{self.run_id}.summary.xlsx")
            self.report_problem, self.report_environment = problem, is_environment(err)
            return None

    def record(self, report: Path | None) -> RunOutcome:
        """End the run in the ledger (with why it stopped, and why there is no report), say its counts,
        and remove its staging folder when it stopped early."""
        counts = {"files": len(self.outcomes), **{s: sum(o.status == s for o in self.outcomes) for s in ("processed", "failed", "skipped")}}
        note = f"stopped: {self.stopped}" if self.stopped else None
        if self.report_problem:
            note = "; ".join(filter(None, [note, f"no run report: {self.report_problem}"]))
        try:
            early = any(item.recorded or item.stale for item in self.items)
            self.ledger.end_run(self.run_id, None, counts, str(report) if report else None, self.rules_versions, note, early)
        except server_errors() as err:  # the next run of this inbox ends it
            self.stopped = self.stopped or environment_message(err, "the ledger")
            self.echo(f"The run could not be ended in the ledger ({err}); the next run finishes its bookkeeping.")
        left = sum(o.status == "returned" for o in self.outcomes)
        self.echo(
            f"Run {self.run_id}: {counts['processed']} processed, {counts['skipped']} skipped, {counts['failed']} failed"
            + (f", {left} left in the inbox (the environment failed)" if left else "")
            + (f"; report {report}" if report else "; no report")
        )
        if self.stopped:
            _remove_tree(self.work / "staging" / self.run_id)
        # a report the environment stopped: exit 3, the files' outcomes as they were
        return RunOutcome(self.run_id, self.outcomes, report, self.stopped or (self.report_problem if self.report_environment else ""))

    # -- one file ------------------------------------------------------------------------------
    def done(self, item: Item, partial: Path, kind: str, payload) -> FileOutcome:
        """A worker's answer for one file: back to the inbox (the environment), failed (the file), or
        its output placed and the input archived as processed."""
        if kind == "environment":
            outcome = self.give_back(item, payload)
            self.say(outcome)
            return outcome
        if kind == "error":
            self.finish_file(item, FileOutcome(item.name, "failed", payload))
            return self.outcomes[-1]
        if isinstance(payload["records"], LostRecords):
            remove_temporary(partial)
            outcome = self.give_back(item, payload["records"].reason)
            self.say(outcome)
            return outcome
        result, info = payload, item.info
        final = self.place(item, partial)
        if isinstance(final, FileOutcome):
            return final
        info.update({k: result[k] for k in ("rows_per_sheet", "errors", "warnings", "infos", "seconds", "timings", "as_of")})
        rows = result.pop("record_rows", None)  # made as its result arrived (`_prepared`), else made from the records
        info["records"] = rows if rows is not None else result["records"]
        info["decisions"] = result["decisions"]
        outcome = FileOutcome(item.name, "processed", output=str(final), info=result)
        self.finish_file(item, outcome)
        info["records"] = result["records"]  # its rows were the ledger's: not held for the rest of the run
        if self.outcomes[-1].status == "processed":
            # its portfolio fields are in the ledger; the report reads its group keys (Portfolio changes) and its file
            self.records.append((result["records"], shown(item.name)))
            if len(result["per_year"]):
                self.per_year.append(result["per_year"].assign(file=shown(item.name)))
            self.rules_versions.update(result["rules_versions"])
        return self.outcomes[-1]

    def place(self, item: Item, partial: Path) -> Path | FileOutcome:
        """The output renamed from its temporary name to its final one (`_place_output`); when the outbox
        cannot take it, the input goes back to the inbox (the outcome is returned instead)."""
        try:
            fault("place", str(self.settings.outbox))
            final = _place_output(partial, Path(partial).parent / output_name(item.original.name), self.run_id)
        except (OSError, UnsafeLink) as err:
            remove_temporary(partial)
            where = f"the outbox {shown(str(Path(partial).parent))}"
            reason = environment_message(err, where) if isinstance(err, OSError) else str(err)
            outcome = self.give_back(item, reason)
            self.say(outcome)
            return outcome
        fault("placed")
        return final

    def _stage(self, path: Path, slot: Path) -> Item:
        """Take the input into its own staging slot: a rename within the inbox (a copy for inputs that
        are never moved). Its path in the inbox is kept beside it, for a run that is killed."""
        slot.mkdir()
        staged = slot / fit(shown(path.name))
        rel = _relative(path, self.settings.inbox)
        (slot / NAME_FILE).write_bytes(os.fsencode(rel))
        if self.keep:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as src, open(staged, "xb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            return Item(path, rel, staged, slot, moved=False)
        if path.is_symlink():  # it became a link after it was listed: never taken
            raise FileNotFoundError(path)
        os.rename(path, staged)
        return Item(path, rel, staged, slot, moved=True)

    # -- bookkeeping ---------------------------------------------------------------------------
    def say(self, outcome: FileOutcome) -> None:
        """The file's line, on the terminal and (kept) for the report, with names as people read them."""
        # as people read them (names that are not UTF-8 with escapes), in the report and on the terminal
        outcome.name = shown(outcome.name)
        outcome.output, outcome.archived = (shown(v) if v else v for v in (outcome.output, outcome.archived))
        self.outcomes.append(outcome)
        self.echo(outcome.line)

    def archive(self, item: Item, outcome: FileOutcome) -> None:
        """A ledger row begun, the input moved to processed/ or failed/ (with its reason beside it), the
        row completed: a kill between them is finished by the next run. With inputs that are never
        moved, the ledger row alone."""
        info = {
            **item.info,
            "name": shown(item.name),
            "reason": outcome.reason,
            "output": shown(outcome.output) if outcome.output else None,
        }
        if outcome.status in ("returned", "gone"):
            self.ledger.add_file(self.run_id, {**info, "status": outcome.status}, None, item.recorded, item.stale)
            return
        if self.keep:
            fault("ledger", str(self.settings.ledger))
            self.ledger.add_file(self.run_id, {**info, "status": outcome.status}, info.get("records"), item.recorded, item.stale)
            item.done = True
            _discard(item)
            return
        where = "failed" if outcome.status == "failed" else "processed"
        folder = safe_dir(self.settings.archive, where, self.run_id)
        folder = safe_dir(folder, *Path(item.folder).parts)
        dest = _free_name(folder, item.original.name)
        fault("ledger", str(self.settings.ledger))
        rowid = self.ledger.add_file(
            self.run_id,
            {
                **info,
                "status": "archiving",
                "final_status": outcome.status,
                "archived": shown(str(dest)),
                "archived_path": os.fsencode(dest),
            },
            info.get("records"),
            item.recorded,
            item.stale,
        )
        reason = folder / fit(dest.name, keep=".reason.txt")
        try:
            if outcome.status == "failed":
                reason.write_text(outcome.reason + "\n", encoding="utf-8")
            fault("archive", str(folder))
            _move_whole(item.staged, dest, self.run_id)
        except OSError as err:  # the archive cannot take it: the row is not left begun
            try:
                reason.unlink(missing_ok=True)
            except OSError:
                pass
            where = f"the archive {shown(str(folder))}"
            self.ledger.abandon_file(rowid, "returned", environment_message(err, where) if is_environment(err) else str(err))
            err.recorded = True
            raise
        item.done = True
        fault("archived")
        try:
            self.ledger.complete_file(rowid, shown(str(dest)))
        except server_errors() as err:  # the move is done: the next run completes the row from the archive
            self.echo(f"The ledger row of {printable(item.name)} could not be completed ({err}); the next run completes it.")
        outcome.archived = str(dest)
        _discard(item)

    def give_back(self, item: Item, reason: str, recorded: bool = False) -> FileOutcome:
        """The environment failed: the input goes back to the inbox, for the next run."""
        outcome = FileOutcome(item.name, "returned", reason)
        item.done = True
        if item.moved and item.staged.exists():
            try:
                _return(item, self.settings.inbox)
            except OSError as err:  # the inbox itself cannot be written: the file stays staged, found by the next run
                outcome.reason += f" (it waits in {item.slot}: {err.strerror})"
        else:
            _discard(item)
        if not recorded:
            try:
                self.archive(item, outcome)
            except Exception:  # noqa: BLE001 - a ledger that cannot be written is already the environment's failure
                pass
        return outcome

    def finish_file(self, item: Item, outcome: FileOutcome) -> None:
        """Record and archive one file; an environment failure on the way gives it back."""
        try:
            self.archive(item, outcome)
        except Exception as err:  # noqa: BLE001 - one file's bookkeeping never stops the run
            where = f"the archive {shown(str(self.settings.archive))}" if not self.keep else "the ledger"
            if isinstance(err, OSError) and getattr(err, "filename", None) == str(self.settings.ledger):
                where = f"the ledger {shown(str(self.settings.ledger))}"
            if is_environment(err):
                reason = environment_message(err, where)
            elif isinstance(err, UnsafeLink):
                reason = str(err)
            else:  # not the file's fault and not the machine's: it waits in the inbox, and the run says why
                reason = f"njcredits met an internal error recording it ({type(err).__name__}: {err}); it stays in the inbox."
            outcome = self.give_back(item, reason, recorded=getattr(err, "recorded", False))
        self.say(outcome)


def joined_columns(blocks: list[dict[str, pd.Series]]) -> pd.DataFrame:
    """The blocks (each its columns by name, as copies of their own) joined as `pd.concat` joins
    the frames they are, a column at a time, each block's column let go once joined and its pages
    handed back: the records a run keeps of a full sheet are never held twice over (joined at once,
    a full GrowNJ sheet's made the run 68 MB larger at the insert's end, as the worker writes: the
    blocks' small arrays, freed among others, kept their pages in the heap; now 61 MB smaller).
    Blocks of different columns are joined by `pd.concat`."""
    if not blocks:
        return pd.DataFrame()
    columns = list(blocks[0])
    if any(list(b) != columns for b in blocks):
        return pd.concat([pd.DataFrame(b) for b in blocks], ignore_index=True)
    joined = {}
    for c in columns:
        joined[c] = pd.concat([b.pop(c) for b in blocks], ignore_index=True)
        give_back_freed()  # the blocks' arrays of the column, small and among others: their pages stay with the heap unless handed back
    return pd.DataFrame(joined, copy=False)


def _reads_others(mine: pd.DataFrame) -> bool:
    """Whether a file of a run of several, by the records the run holds of it (`held`, `held_rows`),
    may read another workbook of the run: it then waits for the run's decision (`Run.process`)."""
    return bool(len(mine)) and not reads_nothing(mine)


def _prepared(payload: dict) -> None:
    """The ledger's rows of a waiting file's records (`record_rows`), made as its result arrives, while
    the workers run, for a file of at most `PREPARED_RECORDS` records: the files waiting for the
    decision are recorded one after the other at its end, while both workers wait. A larger file's
    are made when it is recorded (made now, they would be held beside its records until then)."""
    if len(payload["records"]) <= PREPARED_RECORDS:
        payload["record_rows"] = record_rows(payload["records"])


def _same_records(a: list[tuple[pd.DataFrame, str]], b: list[tuple[pd.DataFrame, str]]) -> bool:
    """Whether two lists of processed files' records (`Run.records`) hold the same frames, of the same names."""
    return len(a) == len(b) and all(x is y and m == n for (x, m), (y, n) in zip(a, b, strict=True))


def _report_records(processed: list[tuple[pd.DataFrame, str]]) -> pd.DataFrame:
    """The records of the processed files (`Result.records()`, and each file's name as printed) for the
    run report, stacked: without their portfolio fields (the ledger holds them), each with its `file`.
    The frame each file's records without their fields and with their file would stack into (its
    columns in that order), made by one concat (and one copy), not one copy a file."""
    if not processed:
        return pd.DataFrame(columns=RECORD_COLUMNS)
    frames = [records for records, _name in processed]
    order = list(dict.fromkeys(c for records in frames for c in [*(c for c in records.columns if c != "fields"), "file"]))
    out = pd.concat(frames, ignore_index=True).drop(columns=["fields"], errors="ignore")  # a file recorded early: dropped already
    out["file"] = pd.array(np.repeat(np.array([name for _r, name in processed], dtype=object), [len(r) for r in frames]), dtype=str)
    return out[order]


def _relative(path: Path, inbox: Path) -> str:
    """The input's path inside the inbox (`sub/a.xlsx`), or its name when it is not inside (`run FILE`)."""
    folder, inbox = path.parent.resolve(), inbox.resolve()
    if folder == inbox or inbox in folder.parents:
        return str((folder / path.name).relative_to(inbox))
    return path.name


def _discard(item: Item) -> None:
    """Remove what is left of an item's staging slot (its copy, or the slot once the input moved on)."""
    if item.slot is not None:
        _remove_tree(item.slot)


def _remove_tree(path: Path) -> None:
    if path.exists() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)


def _return(item: Item, inbox: Path) -> Path:
    """Put a staged input back in the inbox under its own name (or `name (1)` if a new file took it)."""
    dest = _free_name(safe_dir(inbox, *Path(item.folder).parts), item.original.name)
    os.rename(item.staged, dest)
    _remove_tree(item.slot)
    return dest


def recover(settings: Settings, ledger: Ledger, work: Path, run_id: str, echo, teams: tuple[str, ...] = ()) -> None:
    """Finish what a killed run of this inbox left (the inbox lock is ours, so none is running): end
    it in the ledger and complete the file rows it began; put its staged inputs back in the inbox;
    remove its temporary files. Never touches another inbox's runs or temporary files."""
    archived: dict[str, set[str]] = {}  # per killed run, the inputs already in the archive
    for dead in ledger.unfinished_runs(str(settings.inbox), teams):
        for row in ledger.close_interrupted(dead, None, f"stopped before its end; finished by run {run_id}"):
            archived.setdefault(dead, set()).add(row["name"])
            echo(
                f"Run {dead} was stopped before its end; {printable(row['name'])} had been moved to {printable(row['archived'])}: recorded."
            )
        for folder in (settings.outbox, *(settings.archive / where / dead for where in ARCHIVE_DIRS)):
            if folder.is_dir() and not folder.is_symlink():
                for p in folder.rglob(f".*{dead}*"):
                    if p.is_file() and not p.is_symlink():
                        p.unlink(missing_ok=True)
        echo(f"Run {dead} was stopped before its end; its bookkeeping is finished.")
    staging = work / "staging"
    if not staging.is_dir() or staging.is_symlink():
        return
    for run_dir in sorted(staging.iterdir()):
        if run_dir.is_symlink() or not run_dir.is_dir():
            continue
        for slot in sorted(run_dir.iterdir()):
            if slot.is_symlink() or not slot.is_dir():
                continue
            name_file = slot / NAME_FILE
            files = [p for p in slot.iterdir() if p.name != NAME_FILE and p.is_file() and not p.is_symlink()]
            done = name_file.exists() and shown(os.fsdecode(name_file.read_bytes())) in archived.get(run_dir.name, set())
            if files and name_file.exists() and settings.moves_inputs and not done:
                original = os.fsdecode(name_file.read_bytes())
                where = Path(original)
                dest = _free_name(safe_dir(settings.inbox, *where.parent.parts), where.name)
                os.rename(files[0], dest)
                echo(f"{printable(original)} was taken by run {run_dir.name}, which stopped before it was done: back in the inbox.")
            shutil.rmtree(slot, ignore_errors=True)
        shutil.rmtree(run_dir, ignore_errors=True)


class _Bar:
    """On a terminal (stderr), while files are read: each file in hand with its stage (reading,
    validating, calculating, checking, writing) and the time it has taken, and, for more than 3
    files, how many are done. rich's live display: redrawn at most 4 times a second whatever the
    workers tell, and gone when the files are done. A terminal that closes meanwhile stops the
    display, never the run."""

    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import Progress, TextColumn, TimeElapsedColumn

        columns = [TimeElapsedColumn(), TextColumn("{task.description}")]
        self.progress = Progress(
            *columns, console=Console(stderr=True, highlight=False), transient=True, refresh_per_second=4, redirect_stdout=False,
            redirect_stderr=False,
        )  # fmt: skip
        self.same = _same_terminal()
        self.total, self.done = total, 0
        self.task = self.progress.add_task(f"0 of {total} workbooks done", total=total) if total > 3 else None
        self.files: dict[int, int] = {}  # id(item) -> its task
        self._safely(self.progress.start)

    def echo_through(self, echo):
        """The run's `echo` while the display is shown: a line for the terminal the display is on is
        printed above it, by the display (else the two would share a line); to a pipe or a file, or
        once the terminal is gone, it goes as it always does."""

        def said(message="", **kwargs):
            if self.progress is not None and self.same and not kwargs:
                from rich.text import Text

                self._safely(self.progress.console.print, Text(str(message)), soft_wrap=True)
                if self.progress is not None:
                    return
            echo(message, **kwargs)

        return said

    def _safely(self, action, *args, **kwargs) -> None:
        if self.progress is None:
            return
        try:
            action(*args, **kwargs)
        except OSError:  # the terminal is gone: no more display
            self.progress = None

    def stage(self, item, name: str) -> None:
        """A worker tells the stage its file enters."""
        said = f"{printable(item.name)}: {name}"
        if id(item) not in self.files:
            if self.progress is not None:
                self.files[id(item)] = self.progress.add_task(said, total=None)
            return
        self._safely(self.progress.update, self.files[id(item)], description=said)

    def advance(self, item=None):
        if item is not None and id(item) in self.files:
            self._safely(self.progress.remove_task, self.files.pop(id(item)))
        self.done += 1
        if self.task is not None:
            self._safely(self.progress.update, self.task, advance=1, description=f"{self.done} of {self.total} workbooks done")

    def stop(self):
        self._safely(self.progress.stop)


def _same_terminal() -> bool:
    """Whether stdout and stderr are one terminal (the display is on stderr; the run's lines on stdout)."""
    import sys

    try:
        return sys.stdout.isatty() and sys.stderr.isatty() and os.path.samestat(os.fstat(1), os.fstat(2))
    except (OSError, ValueError):
        return False


def _progress(enabled: bool, total: int):
    return _Bar(total) if enabled else None
