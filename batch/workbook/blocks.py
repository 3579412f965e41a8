"""A large sheet read a block of rows at a time, each block by python-calamine.

python-calamine reads a sheet only whole: its range of every cell in Rust, then a Python list per
row, beside the Python values it makes (a sheet of 1,048,575 GrowNJ rows: about 3.3 GB at the
highest). Here the sheet part is streamed from the package and cut every `BLOCK_ROWS` rows by the
writer's row reader (`batch.workbook.sheetrows.row_blocks`, which reads every spelling a part may
have), and each block is given to calamine as a package of its own: the workbook's parts as they
are (the shared strings, the styles that make a number a date, the workbook's 1904 flag), the
other sheets' parts empty, and this sheet's part made of its own head, the block's rows as they
are written, and the end tags that close them. The values are calamine's by construction; only
where each block's rows stand in the sheet is worked out here, from where calamine says each
block's first cell is (`CalamineSheet.start`).

`sheet_grid` gives what `to_python(skip_empty_area=False)` of the whole sheet gives: a row for each
row from the first to the last that holds a value, each as wide as the widest, '' where no cell
holds a value. Where calamine would read a block otherwise than it reads the sheet whole, the read
raises `NotByBlocks` and the reader (`batch.workbook.reading`) reads the sheet whole, as it reads a
smaller one, meeting there whatever calamine refuses: rows out of order across blocks
(`RowsNotInOrder`: a block's first value above a value of a block before it); what the cutter
refuses (`sheetrows.row_blocks`: a block that would begin with a row without its number, an
element other than a row among the rows); a part written in UTF-16, which calamine does not read
and the cutter would give it in UTF-8; a package whose part names are not written plainly.
"""

from __future__ import annotations

import datetime
import io
import zipfile
from collections.abc import Iterator

import python_calamine

from batch.workbook import deflate, sheetrows
from batch.workbook.inthread import Beside
from batch.workbook.opened import Opened
from batch.workbook.safety import utf16
from batch.workbook.sheetrows import NotByBlocks

__all__ = ["BLOCK_ROWS", "NotByBlocks", "RowsNotInOrder", "sheet_blocks", "sheet_grid"]

BLOCK_ROWS = 50_000  # rows calamine reads at a time (about 50 MB of a GrowNJ sheet's Python values)
CHUNK_BYTES = 8 << 20  # bytes of the inflated sheet part read at a time
EMPTY_SHEET = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData/></worksheet>'
)


class RowsNotInOrder(NotByBlocks):
    """A block holds a value in a row above one of a block before it: the sheet lists its rows out of order."""


Block = tuple[tuple[int, int], list[list]]  # (0-based row, column) of a block's first value, and its rows from there


def sheet_blocks(opened: Opened, sheet: str, part: str, sheets: list[str], rows: int = BLOCK_ROWS) -> Iterator[Block]:
    """Each block of the sheet named `sheet` (its part `part`; `sheets`, the parts of every sheet
    of the workbook) that holds a value: ((0-based row, column) of its first value, calamine's
    rows from there, `to_python(skip_empty_area=True)`), in the sheet's order."""
    z = opened.zip
    if any(_unusual(name) for name in z.namelist()):  # calamine might find another part than `part`
        raise NotByBlocks("a part name that is not written plainly")
    with deflate.reading(z, part) as member:
        if utf16(member.read(2)):  # calamine reads no such part (the writer's reader does, in UTF-8)
            raise NotByBlocks(f"the part {part} is written in UTF-16")
    # the package's XML parts but the sheet's, made once (its pictures and binaries calamine does not read)
    kept = [i for i in z.infolist() if i.filename != part and i.filename.lower().endswith((".xml", ".rels"))]
    others = io.BytesIO()
    with zipfile.ZipFile(others, "w", zipfile.ZIP_STORED) as out:
        for i in kept:
            out.writestr(i.filename, EMPTY_SHEET if i.filename in sheets else deflate.read(z, i))
    cut = sheetrows.row_blocks(deflate.chunks(z, part, CHUNK_BYTES), rows, where=f"The sheet {sheet!r}")
    # the last block cut is parsed by calamine in a thread (without the interpreter's lock) while this
    # one makes the Python values of the block before it and cuts the next: the read takes two cores
    parsing = None
    try:
        for block in cut.blocks:
            package = io.BytesIO(others.getvalue())
            with zipfile.ZipFile(package, "a", zipfile.ZIP_STORED) as out, out.open(part, "w", force_zip64=True) as sheet_part:
                for piece in (cut.head, *block, cut.close):
                    sheet_part.write(piece)
            del block
            before, parsing = parsing, Beside(_parsed, package, sheet)
            if before is not None:  # its values made while this block parses
                yield from _values(before.result())
        if parsing is not None:
            yield from _values(parsing.result())
            parsing = None
    finally:
        if parsing is not None:  # given up early (an error, the caller stopped): its thread ends before the package goes
            parsing.wait()


def _unusual(name: str) -> bool:
    """A part name with a segment `.` or `..`, an empty segment or an escape (`%`): a relationship's
    target may name such a part in ways the two readers resolve each their own way."""
    segments = name[:-1].split("/") if name.endswith("/") else name.split("/")  # a folder's entry ends with /
    return "%" in name or "\\" in name or any(seg in ("", ".", "..") for seg in segments)


def _parsed(package: io.BytesIO, sheet: str):
    """calamine's sheet `sheet` of a block's package (parsed without the interpreter's lock)."""
    package.seek(0)
    return python_calamine.CalamineWorkbook.from_filelike(package).get_sheet_by_name(sheet)


def _values(read) -> Iterator[Block]:
    if read.start is not None:
        yield read.start, read.to_python(skip_empty_area=True)


def one_object_each(rows: list[list]) -> list[list]:
    """The rows, each value that repeats in them one object: every text, every date, every number
    but zero. calamine makes an object for each cell, and a sheet repeats many of its values (a
    county, a flag, a year): a full GrowNJ sheet's values take about 0.5 GB less so. Only equal
    values of the very same type are made one, so each cell holds what it held (not a float for a
    bool that equals it, nor 0.0 for -0.0). One pass over the block's cells, as calamine's own rows
    are made: pandas' factorize of each column, with the look at every cell's type that keeps the
    types apart, took three times as long (0.82 s a block of 50,000 GrowNJ rows, against 0.26 s)."""
    texts: dict = {}
    numbers: dict = {}
    dates: dict = {}
    date = datetime.date
    return [
        [
            texts.setdefault(v, v)
            if v.__class__ is str
            else (numbers.setdefault(v, v) if v else v)
            if v.__class__ is float
            else dates.setdefault(v, v)
            if v.__class__ is date
            else v
            for v in row
        ]
        for row in rows
    ]


def sheet_grid(opened: Opened, sheet: str, part: str, sheets: list[str], rows: int = BLOCK_ROWS) -> list[list]:
    """The sheet's values as calamine's whole read gives them (`to_python(skip_empty_area=False)`),
    read a block of `rows` rows at a time (`sheet_blocks`)."""
    grid: list[list] = []
    width = 0
    for (first_row, first_col), block in sheet_blocks(opened, sheet, part, sheets, rows):
        if first_row < len(grid):  # calamine placed a value above the block's rows: not rows in order
            raise RowsNotInOrder(f"a block's first value in row {first_row + 1}, after row {len(grid)}")
        grid.extend([] for _ in range(first_row - len(grid)))  # rows without a value
        block = one_object_each(block)
        grid.extend(block if not first_col else ([""] * first_col + row for row in block))
        width = max(width, first_col + (len(block[0]) if block else 0))
    for row in grid:
        if len(row) < width:
            row.extend([""] * (width - len(row)))
    return grid
