"""A part made by a process of its own while the writer does other work (`batch.workbook.beside`):
the same bytes as made in the writer, whatever becomes of that process; and a returned workbook whose
Findings sheet was made so, part for part the one made without it."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
import zipfile
import zlib
from pathlib import Path

import pytest
from conftest import write_workbook
from test_faults import CERTIFICATE, HEADERS, assert_settled, killed, no_process_left, run_cli

from batch.pipeline import process
from batch.workbook import beside, inplace, sheetxml
from batch.workbook.writing import write

SAMPLES = Path(__file__).parents[1] / "sample_inputs"
XML_ROW = b'<row r="1"><c r="A1" t="inlineStr"><is><t>Seller LLC</t></is></c></row>'
# three chunks, one empty, one of them over the piece read back at once (PIECE bytes): the bytes
# read back cross a piece's end
CHUNKS = [b"<row>" * 10, b"", os.urandom(beside.PIECE + 7).hex().encode()[: beside.PIECE + 7], b"</rows>"]


def _counted(chunks: list[bytes]):
    """A `make` that counts its calls in this process (a forked child's calls are its own)."""
    calls = []

    def make():
        calls.append(1)
        yield from chunks

    return make, calls


def _one(make, folder, fault=None):
    """One part made beside (`made_beside_all` of that part alone)."""
    return beside.made_beside_all({"": make}, folder, fault)[""]


def _bytes(made) -> bytes:
    """The part's bytes as the writer takes them: its Deflate stream made beside, inflated here (its
    CRC-32 and size checked against the bytes), or made here."""
    deflated = made.deflated() if isinstance(made, beside.MadeBeside) else None
    if deflated is None:
        return b"".join(made())
    pieces, crc, size = deflated
    data = zlib.decompress(b"".join(pieces), wbits=-15)
    assert (zlib.crc32(data), len(data)) == (crc, size)
    return data


def _abort():
    os.abort()


def _kill_self():
    os.kill(os.getpid(), signal.SIGKILL)


def _no_memory():
    raise MemoryError


def _no_fork(*_):
    raise OSError(11, "Resource temporarily unavailable")


@pytest.mark.parametrize(
    "case,fault,no_fork,folder,made_here",
    [
        # the child makes the part: the writer never makes it
        ("made beside", None, False, None, 0),
        # the child fails before it makes anything, in each way a process fails: made here once
        ("child out of memory", _no_memory, False, None, 1),
        ("child aborts", _abort, False, None, 1),
        ("child killed", _kill_self, False, None, 1),
        # no process to be had, or no temporary file: made here when its turn comes
        ("no fork", None, True, None, 1),
        ("no temporary file", None, False, "missing", 1),
    ],
)
def test_the_bytes_are_the_same_whatever_becomes_of_the_process(tmp_path, monkeypatch, case, fault, no_fork, folder, made_here):
    make, calls = _counted(CHUNKS)
    if no_fork:
        monkeypatch.setattr(beside, "fork", _no_fork)
    made = _one(make, tmp_path / folder if folder else tmp_path, fault)
    got = _bytes(made)
    made.close()
    assert got == b"".join(CHUNKS)
    assert len(calls) == made_here, case
    assert isinstance(made, beside.MadeBeside) == (not no_fork and folder is None)
    assert list(tmp_path.iterdir()) == []  # the temporary file never had a name in the folder


@pytest.mark.parametrize("fault,made_here", [(None, 0), (_abort, 1)])
def test_several_parts_are_made_in_turn_by_one_process(tmp_path, fault, made_here):
    """Each part its own bytes, all from one process; a process that fails leaves every part to the
    writer, each made here once."""
    chunks = {"a": CHUNKS, "b": [b"<x/>"], "c": []}  # the last one makes no bytes at all
    counted = {name: _counted(c) for name, c in chunks.items()}
    made = beside.made_beside_all({name: make for name, (make, _calls) in counted.items()}, tmp_path, fault)
    assert len({m.pid for m in made.values()}) == 1
    got = {name: _bytes(m) for name, m in made.items()}
    for m in made.values():
        m.close()
    assert got == {name: b"".join(c) for name, c in chunks.items()}
    assert [len(calls) for _make, calls in counted.values()] == [made_here] * 3
    assert list(tmp_path.iterdir()) == []


def test_a_process_that_does_not_end_is_given_up_on(tmp_path, monkeypatch):
    """Waited for as long again as it ran beside the worker (at least WAIT_AT_LEAST): then stopped,
    and the part made here."""
    monkeypatch.setattr(beside, "WAIT_AT_LEAST", 0.3)
    make, calls = _counted(CHUNKS)
    made = _one(make, tmp_path, lambda: time.sleep(60))
    pid, started = made.pid, time.monotonic()
    assert _bytes(made) == b"".join(CHUNKS)
    assert 0.3 <= time.monotonic() - started < 5
    assert len(calls) == 1
    with pytest.raises(ChildProcessError):  # killed and reaped
        os.waitpid(pid, os.WNOHANG)


def test_a_wait_cut_short_still_leaves_the_process_to_be_stopped(tmp_path):
    """An exception while the writer waits for the process (here an interrupt) leaves it running,
    not forgotten: closing the parts kills and reaps it."""

    def slow():
        time.sleep(60)
        yield b"never"

    made = beside.made_beside_all({"a": slow, "b": slow}, tmp_path)
    pid = made["a"].pid

    def interrupt(*_):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            _bytes(made["a"])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    for m in made.values():
        m.close()
    with pytest.raises(ChildProcessError):  # killed and reaped
        os.waitpid(pid, os.WNOHANG)


def test_a_process_whose_worker_died_before_it_was_tied_to_it_ends():
    """A worker that dies between the fork and the child's prctl leaves the child to init: the child
    sees its parent is another process, and ends before making anything."""
    pid = os.fork()
    if pid == 0:
        try:
            beside.die_with_parent(parent=-1)  # not its parent's pid: ends here, with 1
        finally:
            os._exit(0)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 1


def test_the_temporary_file_holds_the_part_deflated(tmp_path):
    rows = [XML_ROW * 1000] * 50  # 3.6 MB of rows
    made = _one(lambda: iter(rows), tmp_path)
    end, crc, size = made.made()
    assert end < len(b"".join(rows)) / 20 and (crc, size) == (zlib.crc32(b"".join(rows)), len(b"".join(rows)))
    made.close()


def test_a_system_without_fork_makes_the_part_in_the_worker(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "fork")
    make, calls = _counted(CHUNKS)
    made = _one(make, tmp_path)
    assert not isinstance(made, beside.MadeBeside)
    assert _bytes(made) == b"".join(CHUNKS) and len(calls) == 1


def test_a_part_failing_in_the_child_and_here_raises_here(tmp_path):
    def make():
        yield b"<row/>"
        raise ValueError("a cell that cannot be written")

    made = _one(make, tmp_path)
    with pytest.raises(ValueError, match="cannot be written"):
        _bytes(made)


def test_close_before_the_part_is_written_ends_the_process(tmp_path):
    def slow():
        time.sleep(60)
        yield b""

    made = _one(slow, tmp_path)
    pid = made.pid
    started = time.monotonic()
    made.close()
    assert time.monotonic() - started < 5
    with pytest.raises(ChildProcessError):  # killed and reaped: no process left behind
        os.waitpid(pid, os.WNOHANG)


@pytest.mark.skipif(sys.platform != "linux", reason="the child is tied to its parent by prctl (Linux)")
def test_the_process_dies_with_the_worker(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        from batch.workbook import beside

        def slow():
            time.sleep(60)
            yield b""

        made = beside.made_beside_all({{"": slow}}, {str(tmp_path)!r})[""]
        print(made.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by init, counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}  # each member's CRC-32 checked as it is read


def _copies_seen(monkeypatch) -> list[int]:
    """The process id of each part made beside from now on (`MadeBeside`), in a list filled as they
    are made."""
    made = []
    real = beside.MadeBeside.__init__

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self.pid)

    monkeypatch.setattr(beside.MadeBeside, "__init__", spy)
    return made


@pytest.fixture(scope="module")
def results():
    """Each sample's result (processed once for the module)."""
    made = {}
    for path in sorted(SAMPLES.glob("*.xlsx")):
        result = process(path, as_of=dt.date(2026, 11, 30))
        made[path.name] = result
    return made


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.xlsx")))
@pytest.mark.parametrize("fault", ["", "child-beside:abort", "child-beside:memory"])
def test_a_workbook_whose_findings_were_made_beside_is_the_same(tmp_path, monkeypatch, results, sample, fault):
    result = results[sample]
    assert len(result.findings) > 0, "a sample with findings shows the Findings sheet's rows"
    here = _parts(write(result, tmp_path / "here" / sample))
    monkeypatch.setattr(inplace, "BESIDE_ROWS", 0)  # every Findings sheet made beside
    if fault:
        monkeypatch.setenv("NJCREDITS_FAULT", fault)
    made = _copies_seen(monkeypatch)
    there = _parts(write(result, tmp_path / "beside" / sample))
    # one process of its own made them (or failed to, and the writer made them): the Findings sheet,
    # and each new drawing of comment boxes
    source = _parts(SAMPLES / sample)
    boxes = [name for name in here if name not in source and re.match(r"xl/drawings/vmlDrawing\d*\.vml$", name)]
    assert len(set(made)) == 1 and len(made) == 1 + len(boxes), boxes
    assert there.keys() == here.keys()
    different = [name for name in here if here[name] != there[name]]
    assert different == []
    # and the file itself, byte for byte: the Deflate streams made beside are the writer's own
    assert (tmp_path / "beside" / sample).read_bytes() == (tmp_path / "here" / sample).read_bytes()
    assert sorted(p.name for p in (tmp_path / "beside").iterdir()) == [sample]  # nothing else left in the outbox


# -- in a worker of a run: a Findings sheet of BESIDE_ROWS findings -----------------------------------


@pytest.fixture(scope="module")
def flagged_book(tmp_path_factory) -> Path:
    """A Transfers workbook of `BESIDE_ROWS` rows, each with one finding (consideration 20,000 for
    credits of 30,000: 66.67%, under 75%): its Findings sheet is made beside (built once for the module)."""
    rows = [
        [f"T-{i}", "Grow NJ", f"C-{i}", "Seller LLC", "Buyer Inc.", dt.date(2026, 1, 5), 30_000, 20_000, CERTIFICATE]
        for i in range(inplace.BESIDE_ROWS)
    ]
    return write_workbook(tmp_path_factory.mktemp("flagged") / "a.xlsx", {"Transfers": [HEADERS, *rows]})


def _returned(outbox: Path) -> dict[str, bytes]:
    """The parts of the returned workbook, the time of the run ("Run at (UTC)") blanked."""
    (path,) = outbox.glob("*.annotated.xlsx")
    return {name: re.sub(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", b"(time)", data) for name, data in _parts(path).items()}


def test_in_a_worker_the_findings_made_beside_are_those_made_without(tmp_path, monkeypatch, flagged_book):
    gate = tmp_path / "gate"  # open from the start: the process that makes the sheet says it was there, and goes on
    gate.touch()
    monkeypatch.setenv("NJCREDITS_FAULT_GATE", str(gate))
    returned = {}
    for case, fault in [("beside", "child-beside:hold"), ("its process killed", "child-beside:worker")]:
        inbox, outbox = tmp_path / case / "inbox", tmp_path / case / "outbox"
        inbox.mkdir(parents=True)
        shutil.copy(flagged_book, inbox / "a.xlsx")
        tag = uuid.uuid4().hex
        done = run_cli(inbox, outbox, fault, tag)
        assert done.returncode == 0, (case, done.stdout, done.stderr)
        assert_settled(inbox, outbox, ["a.xlsx"])
        assert no_process_left(tag)
        returned[case] = _returned(outbox)
        if case == "beside":
            assert len(list(tmp_path.glob("gate.*.held"))) == 1  # made by a process of its own
    findings = [n for n, data in returned["beside"].items() if b"CONSIDERATION_BELOW_75PCT" in data]
    assert findings, "the Findings sheet names each finding's code"
    assert returned["beside"] == returned["its process killed"]


def test_a_run_killed_while_the_findings_are_made_beside_leaves_no_process(tmp_path, flagged_book):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    shutil.copy(flagged_book, inbox / "a.xlsx")
    tag = killed(inbox, outbox, "child-beside:run")  # the worker sees its run gone, and the process it forked dies with it
    second = run_cli(inbox, outbox, tag=tag)
    assert second.returncode == 0, (second.stdout, second.stderr)
    assert_settled(inbox, outbox, ["a.xlsx"])


@pytest.mark.parametrize(("up_to", "copies"), [(None, 1), ("rows", 1), ("rows - 1", 0)])
def test_only_a_result_of_at_most_beside_up_to_findings_has_them_made_beside(tmp_path, monkeypatch, flagged_book, up_to, copies):
    # BESIDE_ROWS findings or more and at most BESIDE_UP_TO: one copy makes the parts; one finding
    # more than BESIDE_UP_TO and the worker makes them itself, the same bytes
    result = process(flagged_book, as_of=dt.date(2026, 11, 30))
    rows = len(result.findings)
    assert rows >= inplace.BESIDE_ROWS
    if up_to is not None:
        monkeypatch.setattr(inplace, "BESIDE_UP_TO", rows if up_to == "rows" else rows - 1)
    made = _copies_seen(monkeypatch)
    written = write(result, tmp_path / "a.xlsx").read_bytes()
    assert len(set(made)) == copies
    monkeypatch.setattr(inplace, "BESIDE_UP_TO", 0)  # the worker makes them
    assert write(result, tmp_path / "worker" / "a.xlsx").read_bytes() == written


def test_the_returned_file_is_the_same_bytes_whoever_made_its_parts(tmp_path, monkeypatch, flagged_book):
    """Not only the parts: the file. Deflate's output depends on where its input is cut, and the
    parts made beside come back in other chunks than the worker makes them (`sheetxml.batched`
    cuts both alike). Its Findings sheet and drawing of comment boxes are over a megabyte each."""
    result = process(flagged_book, as_of=dt.date(2026, 11, 30))
    assert len(result.findings) >= inplace.BESIDE_ROWS
    beside_made = write(result, tmp_path / "beside" / "a.xlsx").read_bytes()
    monkeypatch.setenv("NJCREDITS_FAULT", "child-beside:abort")  # the copy fails: the worker makes every part
    worker_made = write(result, tmp_path / "worker" / "a.xlsx").read_bytes()
    parts = _parts(tmp_path / "beside" / "a.xlsx")
    assert max(len(parts[n]) for n in parts if n.endswith(".vml")) > sheetxml.BATCH_BYTES
    assert beside_made == worker_made
