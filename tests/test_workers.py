"""The workers of a run (`batch.run.workers`): a worker reads the run's files in turn, and no file's
outcome or returned workbook depends on which worker read it or what that worker read before."""

from __future__ import annotations

import re
import shutil
import threading
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_faults import assert_settled, folders, ledger, run_cli

from batch.run.config import load
from batch.run.workers import by_memory, isolated

SAMPLES = sorted((Path(__file__).parents[1] / "sample_inputs").glob("*.xlsx"))
# what differs between two readings of one file: the time it was read (the Run sheet, the package's dates)
WHEN = re.compile(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?")


def read_all(tmp_path: Path, name: str, workers: int) -> dict[str, tuple[str, object, Path]]:
    """Every sample read by `isolated` with `workers` workers: file name -> (kind, payload, output)."""
    folder = tmp_path / name
    folder.mkdir()
    items = []
    for src in SAMPLES:
        staged = shutil.copy(src, folder / src.name)
        items.append((SimpleNamespace(name=src.name, staged=Path(staged)), folder / f".{src.stem}.partial.xlsx"))
    settings = load(cwd=tmp_path, inbox=tmp_path, outbox=folder, workers=workers, as_of="2026-11-30")
    return {item.name: (kind, payload, partial) for item, partial, kind, payload in isolated(items, settings, "run-1", threading.Event())}


def parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: WHEN.sub(b"#", z.read(n)) for n in z.namelist()}


def test_one_worker_reads_every_file_of_the_run_and_each_comes_back_as_a_worker_of_its_own_returns_it(tmp_path):
    # one worker: the four samples in turn (the last after three others, of every program);
    # four workers: each sample in a new worker of its own
    shared = read_all(tmp_path, "shared", workers=1)
    alone = read_all(tmp_path, "alone", workers=len(SAMPLES))
    assert {kind for kind, _, _ in shared.values()} == {"ok"} == {kind for kind, _, _ in alone.values()}
    assert len({payload["worker"] for _, payload, _ in shared.values()}) == 1
    assert len({payload["worker"] for _, payload, _ in alone.values()}) == len(SAMPLES)
    for name in shared:  # the same workbook, part by part (but for when it was read)
        assert parts(shared[name][2]) == parts(alone[name][2]), name
        assert shared[name][1]["counts"] == alone[name][1]["counts"], name


@pytest.mark.parametrize(
    "fault",
    [
        "child-read:abort/reused",  # a crash (SIGABRT), as a reader's native code crashes
        "child-read:memory/reused",  # a memory error, as a file over the memory limit gives
        "child-send:memory/reused",  # the same, as the worker sends the run its file's outcome
    ],
)
def test_a_file_that_fails_in_a_worker_that_read_other_files_is_read_again_in_a_new_worker(tmp_path, fault):
    # three files, one worker: the second and third files fail only in a worker that read a file
    # before them, so each is read again in a new worker of its own, where it is processed
    inbox, outbox = folders(tmp_path)
    result = run_cli(inbox, outbox, fault)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout.count("done  ") == 3, result.stdout
    assert_settled(inbox, outbox)
    assert sorted(n for (n,) in ledger(outbox, "SELECT name FROM files WHERE status='processed'")) == ["a.xlsx", "b.xlsx", "c.xlsx"]


def _raised(make) -> BaseException:
    try:
        make()
    except BaseException as err:  # noqa: BLE001 - the error made, whatever it is
        return err
    raise AssertionError("nothing raised")


def _out_of_memory():
    raise MemoryError


def _wrapped_as_reader_does():  # a reader that catches a memory error and says the file is unreadable
    try:
        raise MemoryError
    except Exception as err:
        raise ValueError("cannot read the workbook") from err


def _raised_while_handling():
    try:
        raise MemoryError
    except MemoryError:
        raise RuntimeError("while out of memory")  # noqa: B904 - implicit chaining is the case


def _unrelated():
    try:
        raise KeyError("a")
    except KeyError as err:
        raise ValueError("bad cell") from err


@pytest.mark.parametrize(
    "make,memory",
    [
        (_out_of_memory, True),  # a memory error itself
        (_wrapped_as_reader_does, True),  # `raise ... from` a memory error (its __cause__)
        (_raised_while_handling, True),  # raised in the handler of a memory error (its __context__)
        (_unrelated, False),  # a chain without a memory error
        (lambda: int("x"), False),  # no chain at all
    ],
)
def test_a_memory_error_is_known_however_a_reader_words_it(make, memory):
    # a file that failed by memory in a worker that read other files is read again in a new worker;
    # a reader that words the memory error as its own (calamine's, caught and said unreadable) too
    assert by_memory(_raised(make)) is memory


def test_a_worker_has_its_next_file_before_the_run_records_the_one_it_returned(tmp_path, monkeypatch):
    # one worker, two files: when the run is handed the first file's outcome, the worker already has
    # the second (it never waits for the run's bookkeeping); a run that stops there leaves no output
    # of a file it was not handed
    from batch.run import workers as workers_mod

    given = []
    start = workers_mod.Workers.start

    def giving(self, item, *args, **kwargs):
        given.append(item.name)
        return start(self, item, *args, **kwargs)

    monkeypatch.setattr(workers_mod.Workers, "start", giving)
    folder = tmp_path / "in"
    folder.mkdir()
    items = []
    for src in SAMPLES[:2]:
        staged = shutil.copy(src, folder / src.name)
        items.append((SimpleNamespace(name=src.name, staged=Path(staged)), folder / f".{src.stem}.partial.xlsx"))
    settings = load(cwd=tmp_path, inbox=tmp_path, outbox=folder, workers=1, as_of="2026-11-30")
    run = isolated(items, settings, "run-1", threading.Event())
    item, partial, kind, _payload = next(run)
    assert (item.name, kind) == (SAMPLES[0].name, "ok") and partial.exists()
    assert given == [SAMPLES[0].name, SAMPLES[1].name]
    rest = list(run)
    assert [(i.name, k) for i, _p, k, _ in rest] == [(SAMPLES[1].name, "ok")]


def test_a_file_whose_outcome_does_not_fit_in_its_workers_memory_fails_by_memory_not_as_a_crash(tmp_path):
    # a worker that processed its file but cannot send the run its outcome (the result pickled within
    # the worker's memory limit): the file fails by its memory, with the memory limit's message
    inbox, outbox = folders(tmp_path)
    result = run_cli(inbox, outbox, "child-send:memory")  # every file, each the first of its worker
    assert result.returncode == 1, (result.stdout, result.stderr)
    failed = [line for line in result.stdout.splitlines() if line.startswith("failed")]
    assert len(failed) == 3 and all("MB of memory allowed for one file (memory_limit_mb)" in line for line in failed), result.stdout
    assert "stopped unexpectedly" not in result.stdout and "Traceback" not in result.stderr, (result.stdout, result.stderr)
    assert not list(outbox.rglob("*.annotated.xlsx")) and not list(outbox.rglob("*partial*"))
