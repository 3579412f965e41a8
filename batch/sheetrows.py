"""Rewrite the rows of a user's sheet part as bytes, row by row, changing only what the tool adds.

The first piece of annotating a workbook in place (the analyst's package copied part by part):
every byte of a row the tool does not touch is copied as it is; in a row it touches, the tool
- appends its cells (already encoded by `batch.cells`) after the row's last cell;
- gives a cell a finding points at another style (`s="N"`: a copy of its own style with the
  finding's fill), keeping every other attribute and the cell's content;
- inserts an empty styled cell, in column order, where a finding points at a cell that has no
  element;
and a row the sheet does not have is inserted in row order. Rows and cells are found with
regular expressions over bytes, one row at a time, never by parsing the whole part into a tree.

Not yet used by the writer: the returned workbook is still written anew (see README, "The
returned workbook").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from batch.cells import column_letters

ROW = re.compile(rb"<row\b([^>]*?)(/>|>(.*?)</row>)", re.S)
ROW_NUMBER = re.compile(rb'\br="(\d+)"')
CELL = re.compile(rb"<c\b([^>]*?)(/>|>.*?</c>)", re.S)
CELL_REF = re.compile(rb'\br="([A-Z]+)(\d+)"')
STYLE = re.compile(rb'\bs="\d+"')
SHEET_DATA = re.compile(rb"<sheetData\b[^>]*?(/>|>)")
SPANS = re.compile(rb'\s+spans="[^"]*"')  # an optional hint of the row's first and last column


def column_number(letters: bytes) -> int:
    """Excel's column letters as a 0-based number: A is 0, XFD is 16383."""
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n - 1


def _restyle(cell_open: bytes, style: int) -> bytes:
    """The attributes of a `<c` element with its style set to `style`."""
    attr = f's="{style}"'.encode()
    return STYLE.sub(attr, cell_open, count=1) if STYLE.search(cell_open) else cell_open + b" " + attr


def _row(number: int, attrs: bytes, body: bytes, styles: dict[int, int], tail: bytes) -> bytes:
    """One row with its cells restyled or inserted (`styles`: column -> style) and `tail` appended."""
    if not styles:  # only cells appended: the row's own cells are not looked at
        return b"<row" + SPANS.sub(b"", attrs) + b">" + body + tail + b"</row>"
    out, pending = [], dict(sorted(styles.items()))
    col = -1
    for m in CELL.finditer(body):
        ref = CELL_REF.search(m.group(1))
        col = column_number(ref.group(1)) if ref else col + 1  # a cell without `r` follows the one before
        for c in [c for c in pending if c < col]:  # blank cells a finding points at, before this one
            out.append(f'<c r="{column_letters(c)}{number}" s="{pending.pop(c)}"/>'.encode())
        if col in pending:
            out.append(b"<c" + _restyle(m.group(1), pending.pop(col)) + m.group(2))
        else:
            out.append(m.group(0))
    out += [f'<c r="{column_letters(c)}{number}" s="{s}"/>'.encode() for c, s in pending.items()]
    return b"<row" + SPANS.sub(b"", attrs) + b">" + b"".join(out) + tail + b"</row>"


def rewrite_rows(part: bytes, tails: dict[int, bytes], styles: dict[int, dict[int, int]]) -> Iterator[bytes]:
    """The sheet part with its rows changed: `tails` maps an Excel row number to the XML of the
    cells appended to it, `styles` maps a row number to {0-based column: style index}. Yields
    the part in chunks; rows neither names are copied byte for byte."""
    wanted = sorted(set(tails) | set(styles))
    start = SHEET_DATA.search(part)
    if start is None:
        raise ValueError("not a worksheet part: no <sheetData>")
    if start.group(1) == b"/>":  # an empty sheet
        yield part[: start.start()] + b"<sheetData>"
        yield from (_row(n, f' r="{n}"'.encode(), b"", styles.get(n, {}), tails.get(n, b"")) for n in wanted)
        yield b"</sheetData>" + part[start.end() :]
        return
    end = part.index(b"</sheetData>", start.end())
    yield part[: start.end()]
    at, w, number = start.end(), 0, 0
    for m in ROW.finditer(part, start.end(), end):
        found = ROW_NUMBER.search(m.group(1))
        number = int(found.group(1)) if found else number + 1  # a row without `r` follows the one before
        while w < len(wanted) and wanted[w] < number:  # rows the sheet lacks, in order
            n = wanted[w]
            yield part[at : m.start()]
            at = m.start()
            yield _row(n, f' r="{n}"'.encode(), b"", styles.get(n, {}), tails.get(n, b""))
            w += 1
        if w < len(wanted) and wanted[w] == number:
            yield part[at : m.start()]
            yield _row(number, m.group(1), m.group(3) or b"", styles.get(number, {}), tails.get(number, b""))
            at = m.end()
            w += 1
    yield part[at:end]
    yield from (_row(n, f' r="{n}"'.encode(), b"", styles.get(n, {}), tails.get(n, b"")) for n in wanted[w:])
    yield part[end:]
