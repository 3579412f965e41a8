"""A workbook file opened once and handed down the stages that read it.

`Opened(path)` opens the file once (one file handle) and gives every stage what it reads from it:
the file's first bytes (`head`: what kind of file it is), its SHA-256 (`sha256`), its whole bytes
(`data`, for a CSV or a legacy .xls), the file handle itself (`file`, for decryption) and, for a
package, one `zipfile.ZipFile` over that handle (`zip`), opened the first time it is asked for.
A part of the package is read from the zip once (`part`) and an XML part parsed once (`parsed`);
what a stage makes of them (the workbook's sheets, the tool's markers, the macros, ...) is kept here
under a name (`once`), so the next stage that needs it takes it instead of reading and parsing the
part again. What is kept is shared: no stage changes it. No stage opens the path again; only python-calamine,
which reads a package by its path, opens it once more (or opens the reading copy instead, see
`batch.workbook.readcopy`).

`batch.pipeline.process` hands the opened file on with its result (`Result.opened`), so the
in-place writer copies the user's package from the same zip; `Result.discard()` closes it. A stage
given a path rather than an `Opened` (a test, a single check) opens it itself for the time of that
stage (`opening`). Nothing here knows a part's meaning: the stages do.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HEAD_BYTES = 8  # enough to tell a zip package (PK) from an OLE2 file (.xls, or an encrypted package)
BLOCK = 1 << 20


class Opened:
    """A workbook file opened once: its handle, its zip package, and what the stages parsed of it."""

    def __init__(self, path: Path | str, shown: str | None = None):
        self.path = Path(path)
        self.name = shown or self.path.name  # the file's name as the user knows it
        self.file = open(self.path, "rb")  # noqa: SIM115 - held open for the stages, closed by `close`
        self.head = self.file.read(HEAD_BYTES)
        self._zip: zipfile.ZipFile | None = None
        self._kept: dict[str, Any] = {}

    @property
    def zip(self) -> zipfile.ZipFile:
        """The package, over the file handle (opened the first time; `zipfile.BadZipFile` when the
        file is no complete zip)."""
        if self._zip is None:
            self.file.seek(0)
            self._zip = zipfile.ZipFile(self.file)
        return self._zip

    def once(self, key: str, make: Callable[[], Any]) -> Any:
        """What `make` returns, made the first time `key` is asked for and kept for the next stage."""
        if key not in self._kept:
            self._kept[key] = make()
        return self._kept[key]

    def part(self, name: str) -> bytes:
        """The bytes of the package's part `name` as stored (read from the zip once)."""
        return self.once(f"part {name}", lambda: self.zip.read(name))

    def parsed(self, name: str, parse: Callable[[bytes, str], Any]) -> Any:
        """The part `name` parsed by `parse` (bytes, name) once; a part that does not parse raises
        each time it is asked for, with the reason `parse` gives."""
        return self.once(f"parsed {name}", lambda: parse(self.part(name), name))

    def data(self) -> bytes:
        """The whole file's bytes (a CSV file, a legacy .xls file: read whole by their readers)."""
        return self.once("data", self._read_all)

    def _read_all(self) -> bytes:
        self.file.seek(0)
        return self.file.read()

    def sha256(self) -> str:
        """The SHA-256 of the file's bytes, read in blocks."""

        def digest() -> str:
            h = hashlib.sha256()
            self.file.seek(0)
            for block in iter(lambda: self.file.read(BLOCK), b""):
                h.update(block)
            return h.hexdigest()

        return self.once("sha256", digest)

    @property
    def closed(self) -> bool:
        return self.file.closed

    def close(self) -> None:
        """Close the zip and the file (again: nothing happens)."""
        if self._zip is not None:
            self._zip.close()
        self.file.close()
        self._kept.clear()

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


@contextmanager
def opening(source: Opened | Path | str, shown: str | None = None) -> Iterator[Opened]:
    """`source` itself when it is already open (left open: its opener closes it), else the file at
    the path `source`, opened for the time of the `with` block."""
    if isinstance(source, Opened):
        yield source
        return
    with Opened(source, shown) as opened:
        yield opened
