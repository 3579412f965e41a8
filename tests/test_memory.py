"""The pages a process freed, handed back as it goes (`batch.memory.Trimmer`), and a file processed
with the trimmer running (`TRIM_FROM`) returned as it is without it."""

from __future__ import annotations

import datetime as dt
import re
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from batch import memory
from batch.memory import Trimmer
from batch.run import workers

SAMPLES = Path(__file__).parents[1] / "sample_inputs"
AS_OF = dt.date(2026, 11, 30)


def test_the_freed_pages_are_given_back_where_the_c_library_can_and_nothing_happens_where_not(monkeypatch):
    memory.give_back_freed()  # glibc here: its malloc_trim

    def no_library(*_args):
        raise OSError("no C library to load")

    monkeypatch.setattr(memory.ctypes, "CDLL", no_library)
    memory.give_back_freed()
    with Trimmer(growth=0, every=0.01) as trimmer:  # nothing to trim with: no thread
        assert trimmer._thread is None
    monkeypatch.setattr(memory.ctypes, "CDLL", lambda *_args: SimpleNamespace())  # one without malloc_trim
    memory.give_back_freed()
    with Trimmer(growth=0, every=0.01) as trimmer:
        assert trimmer._thread is None


def _grown_and_freed(mb: int) -> list[bytes]:
    """`mb` MB allocated a KB at a time (above the small-object allocator: the C library's heap),
    every other one let go: the heap cannot shrink past the ones kept. The ones kept are returned."""
    made = [bytes(1024) + str(i).encode() for i in range(mb * 1024)]
    return made[::2]


def test_the_trimmer_trims_once_the_process_has_grown_and_stops_with_its_block():
    with Trimmer(growth=8 << 20, every=0.01) as trimmer:
        kept = _grown_and_freed(64)  # 64 MB grown: at least one look sees 8 MB more than the mark
        waited = time.monotonic()
        while trimmer.trims == 0 and time.monotonic() - waited < 10:
            time.sleep(0.01)
        assert trimmer.trims >= 1
    assert not trimmer._thread.is_alive()
    assert len(kept) == 32 * 1024


def test_a_process_that_does_not_grow_is_not_trimmed():
    with Trimmer(growth=1 << 40, every=0.01) as trimmer:
        time.sleep(0.1)
    assert trimmer.trims == 0


def test_without_proc_there_is_no_trimmer(monkeypatch):
    monkeypatch.setattr(memory, "resident_bytes", lambda: None)
    with Trimmer(growth=0, every=0.01) as trimmer:
        time.sleep(0.05)
    assert trimmer._thread is None and trimmer.trims == 0


RUN_AT = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")  # the Run sheet's "Run at (UTC)"


def _parts(path: Path) -> dict[str, bytes]:
    """Every part, but the run's time (the two runs may fall in two seconds) and the properties."""
    with zipfile.ZipFile(path) as z:
        return {n: RUN_AT.sub(b"", z.read(n)) for n in z.namelist() if n != "docProps/core.xml"}


@pytest.mark.parametrize("sample", ["grow-nj-2026-11.xlsx", "transfers-2026-11.xlsx"])
def test_a_file_processed_with_the_trimmer_is_returned_the_same(tmp_path, monkeypatch, sample):
    source = SAMPLES / sample
    monkeypatch.setattr(workers, "TRIM_FROM", 1 << 40)
    plain = workers.work(str(source), str(tmp_path / "plain.xlsx"), as_of=AS_OF)
    monkeypatch.setattr(workers, "TRIM_FROM", 0)
    monkeypatch.setattr(memory, "TRIM_GROWTH", 0)  # a trim at every look
    monkeypatch.setattr(memory, "TRIM_EVERY", 0.001)
    made = []
    monkeypatch.setattr(workers, "Trimmer", lambda: made.append(Trimmer()) or made[-1])
    trimmed = workers.work(str(source), str(tmp_path / "trimmed.xlsx"), as_of=AS_OF)
    assert trimmed["records"].equals(plain["records"])
    assert trimmed["counts"] == plain["counts"]
    a, b = _parts(tmp_path / "plain.xlsx"), _parts(tmp_path / "trimmed.xlsx")
    assert a.keys() == b.keys()
    assert [n for n in a if a[n] != b[n]] == []
    assert len(made) == 1 and made[0].trims > 0
