"""Deflate and inflate by ISA-L (python-isal) for the large parts of a workbook.

A returned workbook of 100,000 GrowNJ rows holds about 470 MB of XML. zlib deflates it at level 1
in about 1.4 s of a core and inflates the user's sheet, read again as it is rewritten and scanned
before it is read, in about 0.2 s each time. ISA-L's deflate takes about a third of that time, its
inflate about half, and at level 1 it makes that workbook 55.4 MB where zlib made it 58.2 MB. The
streams are the same Deflate format, checked by the same CRC-32: what is read or written is the
same bytes; only the compressed bytes of a returned workbook differ from zlib's.

`zipfile` has no way to be given another compressor, so the one of a member opened here is
replaced before a byte passes through it (`_ZipWriteFile._compressor`, `ZipExtFile._decompressor`,
in every Python from 3.11 on; tests/test_deflate.py checks the fields are where they are read). A
member whose Deflate stream was made elsewhere (`write_deflated`) has its checksum and size put in
`_ZipWriteFile._crc` and `_file_size` before it closes (the same tests read such a member back
through zlib, its CRC-32 checked).
"""

from __future__ import annotations

import zipfile
import zlib

from isal import isal_zlib

WBITS = -15  # raw Deflate, as a zip member holds it


def compressor(level: int):
    """ISA-L's raw Deflate at `level` (over its highest, 3, that one): what every member written here
    is compressed by, and a part made beside the worker too (`batch.workbook.beside`)."""
    return isal_zlib.compressobj(min(level, isal_zlib.ISAL_BEST_COMPRESSION), zlib.DEFLATED, WBITS)


def writing(zout: zipfile.ZipFile, info: zipfile.ZipInfo, level: int, **kwargs):
    """`zout.open(info, "w", **kwargs)`, a Deflate member compressed by ISA-L at `level` (0 to 3)."""
    member = zout.open(info, "w", **kwargs)
    if info.compress_type == zipfile.ZIP_DEFLATED:
        member._compressor = compressor(level)  # noqa: SLF001
    return member


class _AsMade:
    """A compressor that passes on what it is given: a Deflate stream made already."""

    @staticmethod
    def compress(data: bytes) -> bytes:
        return data

    @staticmethod
    def flush() -> bytes:
        return b""


def write_deflated(member, pieces, crc: int, size: int) -> None:
    """Into a Deflate member just opened (`writing`), the pieces of a Deflate stream made already (by
    `compressor`, elsewhere) of `size` bytes whose CRC-32 is `crc`: the member zipfile closes is the
    one it would have written from those bytes compressed the same way, with no byte inflated or
    compressed again here. zipfile counts what passes as the bytes and their checksum; the part's
    own are put in their place before it closes the member."""
    member._compressor = _AsMade()  # noqa: SLF001
    for piece in pieces:
        member.write(piece)
    member._crc, member._file_size = crc, size  # noqa: SLF001


class _Inflater:
    """ISA-L's inflater raising zlib's error: a damaged part is known as damaged by whoever reads it
    (`isal_zlib.error` is not a `zlib.error`). What zipfile asks of an inflater, and no more."""

    __slots__ = ("_inflater",)

    def __init__(self):
        self._inflater = isal_zlib.decompressobj(WBITS)

    def decompress(self, data, max_length: int = 0) -> bytes:
        try:
            return self._inflater.decompress(data, max_length)
        except isal_zlib.error as err:
            raise zlib.error(str(err)) from err

    def flush(self, *args) -> bytes:
        try:
            return self._inflater.flush(*args)
        except isal_zlib.error as err:
            raise zlib.error(str(err)) from err

    @property
    def eof(self) -> bool:
        return self._inflater.eof

    @property
    def unconsumed_tail(self) -> bytes:
        return self._inflater.unconsumed_tail

    @property
    def unused_data(self) -> bytes:
        return self._inflater.unused_data


def reading(z: zipfile.ZipFile, name: str | zipfile.ZipInfo):
    """`z.open(name)`, a Deflate member inflated by ISA-L (its damage raised as zlib's error)."""
    member = z.open(name)
    if member._compress_type == zipfile.ZIP_DEFLATED:  # noqa: SLF001
        member._decompressor = _Inflater()  # noqa: SLF001
    return member


def chunks(z: zipfile.ZipFile, name: str | zipfile.ZipInfo, size: int = 1 << 22):
    """The member `name` inflated (`reading`) in chunks of `size` bytes: never whole in memory."""
    with reading(z, name) as member:
        while chunk := member.read(size):
            yield chunk


def read(z: zipfile.ZipFile, name: str | zipfile.ZipInfo) -> bytes:
    """`z.read(name)`, inflated by ISA-L (its CRC checked by zipfile as it ends)."""
    with reading(z, name) as member:
        return member.read()
