"""ISA-L's Deflate in place of zlib's for the large parts (`batch.workbook.deflate`): the same bytes
read back by zipfile's own zlib, each member's CRC checked; a member zlib wrote read the same; a
damaged member still refused by its CRC; a stored member untouched."""

from __future__ import annotations

import io
import os
import zipfile
import zlib

import pytest

from batch.workbook import deflate, sheetxml

XML = b'<row r="1"><c r="A1" t="inlineStr"><is><t>Seller LLC</t></is></c></row>'
CASES = [
    ("empty", b""),
    ("one byte", b"<"),
    # repeated rows, as a sheet is: compresses well
    ("rows", XML * 50_000),
    # random bytes over several of the writer's pieces (BATCH_BYTES): compresses not at all
    ("random", os.urandom(3 * sheetxml.BATCH_BYTES + 11)),
]


def _zip(write) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        write(z)
    return buf.getvalue()


@pytest.mark.parametrize("case,data", CASES, ids=[c for c, _ in CASES])
@pytest.mark.parametrize("level", [0, 1, 9])  # 9: over ISA-L's highest level (3), which is taken
def test_written_by_isal_read_by_zlib(case, data, level):
    def write(z):
        info = zipfile.ZipInfo("xl/worksheets/sheet1.xml")
        info.compress_type = zipfile.ZIP_DEFLATED
        with deflate.writing(z, info, level) as out:
            assert type(out._compressor).__module__.startswith("isal")  # the compressor was replaced before the first byte
            for start in range(0, len(data), sheetxml.BATCH_BYTES):
                out.write(data[start : start + sheetxml.BATCH_BYTES])

    with zipfile.ZipFile(io.BytesIO(_zip(write))) as z:
        info = z.getinfo("xl/worksheets/sheet1.xml")
        assert info.compress_type == zipfile.ZIP_DEFLATED
        assert z.read(info) == data  # inflated by zlib, its CRC-32 checked
        assert z.testzip() is None


@pytest.mark.parametrize("case,data", CASES, ids=[c for c, _ in CASES])
def test_written_by_zlib_read_by_isal(case, data):
    packed = _zip(lambda z: z.writestr("part.xml", data))
    with zipfile.ZipFile(io.BytesIO(packed)) as z:
        with deflate.reading(z, "part.xml") as member:
            assert isinstance(member._decompressor, deflate._Inflater)
            got = b"".join(iter(lambda: member.read(7919), b""))  # small reads: the inflater's unconsumed input carried over
        assert got == data
        assert deflate.read(z, "part.xml") == data


def test_a_damaged_member_is_refused_by_its_crc():
    data = XML * 1000
    packed = bytearray(_zip(lambda z: z.writestr("part.xml", data)))
    with zipfile.ZipFile(io.BytesIO(bytes(packed))) as z:
        info = z.getinfo("part.xml")
    # the stored CRC-32 changed by one bit: the member inflates whole, and its check fails
    at = packed.rindex(b"PK\x01\x02") + 16  # the central directory's CRC field
    packed[at] ^= 1
    packed[info.header_offset + 14] ^= 1  # the local header's
    with zipfile.ZipFile(io.BytesIO(bytes(packed))) as z, pytest.raises(zipfile.BadZipFile, match="CRC"):
        deflate.read(z, "part.xml")


@pytest.mark.parametrize(
    "case,damage",
    [
        # the first block's type set to 11, which Deflate reserves: "invalid block type"
        ("reserved block type", lambda packed, at: packed.__setitem__(at, packed[at] | 0b110)),
        # bytes in the middle of the stream overwritten
        ("overwritten", lambda packed, at: packed.__setitem__(slice(at + 40, at + 60), b"\xff" * 20)),
    ],
)
def test_a_damaged_stream_raises_zlibs_error(case, damage):
    """Whoever reads a part knows a damaged one by `zlib.error` (batch/workbook/reasons.py): ISA-L's own
    error is not one, so it is raised as one."""
    data = XML * 2000
    packed = bytearray(_zip(lambda z: z.writestr("part.xml", data)))
    with zipfile.ZipFile(io.BytesIO(bytes(packed))) as z:
        info = z.getinfo("part.xml")
    at = info.header_offset + 30 + len(info.filename) + len(info.extra)  # the member's first compressed byte
    damage(packed, at)
    with zipfile.ZipFile(io.BytesIO(bytes(packed))) as z, pytest.raises(zlib.error):
        deflate.read(z, "part.xml")


def test_a_stored_member_is_left_to_zipfile():
    def write(z):
        with deflate.writing(z, zipfile.ZipInfo("image.png"), 1) as out:  # a ZipInfo's own type: stored
            assert out._compressor is None
            out.write(b"\x89PNG" * 100)

    with zipfile.ZipFile(io.BytesIO(_zip(write))) as z, deflate.reading(z, "image.png") as member:
        assert z.getinfo("image.png").compress_type == zipfile.ZIP_STORED
        assert member.read() == b"\x89PNG" * 100


# the same bytes cut into chunks in different ways (sizes in bytes; the rest in one last chunk):
# as a part made beside the worker comes back inflated (a few large pieces), and as the worker
# makes it (row by row)
SIZE = 3 * sheetxml.BATCH_BYTES + 11
CUTS = {
    "one chunk": [],
    "rows": [len(XML)] * (SIZE // len(XML)),
    "inflated pieces": [2_800_000],
    "just under and over a piece": [sheetxml.BATCH_BYTES - 1, 2, sheetxml.BATCH_BYTES + 5],
    "empty chunks between": [0, 12_345, 0, 0, 64 * 1024],
}


def _cut(data: bytes, sizes: list[int]) -> list[bytes]:
    chunks, at = [], 0
    for n in sizes:
        chunks.append(data[at : at + n])
        at += n
    return [*chunks, data[at:]]


@pytest.mark.parametrize("cut", CUTS)
def test_the_pieces_are_the_same_however_the_chunks_came(cut):
    data = (XML * (SIZE // len(XML) + 1))[:SIZE]
    pieces = list(sheetxml.batched(iter(_cut(data, CUTS[cut]))))
    # 3 whole pieces of BATCH_BYTES, then the 11 bytes left
    assert [len(p) for p in pieces] == [sheetxml.BATCH_BYTES] * 3 + [11]
    assert b"".join(pieces) == data


@pytest.mark.parametrize("cut", CUTS)
def test_the_compressed_member_is_the_same_however_the_chunks_came(cut):
    """ISA-L's output depends on where its input is cut: the member is the same bytes only because
    the pieces are."""
    data = (XML * (SIZE // len(XML) + 1))[:SIZE]
    expected = _zip(lambda z: sheetxml.stream(z, zipfile.ZipInfo("part.xml"), iter(_cut(data, [])), 1))
    got = _zip(lambda z: sheetxml.stream(z, zipfile.ZipInfo("part.xml"), iter(_cut(data, CUTS[cut])), 1))
    assert got == expected


@pytest.mark.parametrize("case,data", CASES, ids=[c for c, _ in CASES])
def test_a_member_copied_from_its_deflate_stream_is_the_one_streamed(case, data):
    """A part made and compressed beside the worker (`batch.workbook.beside`) is copied into the
    workbook as its Deflate stream (`stream_deflated`): the member's bytes are those `stream` writes
    of the part itself, and zlib reads the part back, its CRC-32 checked."""
    pieces = list(sheetxml.batched(iter(_cut(data, CUTS["just under and over a piece"]))))
    deflater = deflate.compressor(1)
    stream = [deflater.compress(p) for p in pieces] + [deflater.flush()]
    expected = _zip(lambda z: sheetxml.stream(z, zipfile.ZipInfo("part.xml"), iter([data]), 1))
    got = _zip(lambda z: sheetxml.stream_deflated(z, zipfile.ZipInfo("part.xml"), iter(stream), zlib.crc32(data), len(data)))
    assert got == expected
    with zipfile.ZipFile(io.BytesIO(got)) as z:
        assert z.read("part.xml") == data and z.getinfo("part.xml").file_size == len(data)
