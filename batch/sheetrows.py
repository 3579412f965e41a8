"""Rewrite the rows of a user's sheet part as bytes, row by row, changing only what the tool adds.

Part of annotating a workbook in place (the analyst's package copied part by part, `batch.inplace`):
every byte of a row the tool does not touch is copied as it is; in a row it touches, the tool
- appends its cells (already encoded by `batch.cells`) after the row's last cell;
- gives a cell a finding points at another style (`s="N"`: a copy of its own style with the
  finding's fill), keeping every other attribute and the cell's content;
- inserts an empty styled cell, in column order, where a finding points at a cell that has no
  element;
and a row the sheet does not have is inserted in row order. Rows and cells are found with
regular expressions over bytes, one row at a time, never by parsing the whole part into a tree.

Used by `batch.inplace`; on a returned workbook `Changes` also takes out the tool's columns
and gives flagged cells their own style back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from batch.cells import column_letters
from batch.safety import Refused

ROW = re.compile(rb"<row\b([^>]*?)(/>|>(.*?)</row>)", re.S)
ROW_NUMBER = re.compile(rb'\br\s*=\s*["\'](\d+)["\']')  # as Excel writes it, or with single quotes or spaces
CELL = re.compile(rb"<c\b([^>]*?)(/>|>.*?</c>)", re.S)
CELL_REF = re.compile(rb'\br\s*=\s*["\']([A-Z]+)(\d+)["\']')
STYLE = re.compile(rb'\bs\s*=\s*["\']\d+["\']')
STYLE_VALUE = re.compile(rb'\bs\s*=\s*["\'](\d+)["\']')
SHEET_DATA = re.compile(rb"<sheetData\b[^>]*?(/>|>)")
SHEET_DATA_END = b"</sheetData>"
CUSTOM_HEIGHT = re.compile(rb'\bcustomHeight="(?:1|true)"')  # Excel writes 1, LibreOffice true
CUSTOM_FORMAT = re.compile(rb'\bcustomFormat="(?:1|true)"')
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


def _style_of(attrs: bytes) -> int:
    m = STYLE_VALUE.search(attrs)
    return int(m.group(1)) if m else 0


class Changes:
    """What the tool changes in a sheet's rows, beyond appending its cells.

    - `styles`: Excel row number -> {0-based column: value}; the value is the cell's new style
      index, or, with `restyle`, anything `restyle(current style, value)` turns into one (the
      copy of the cell's own style with a finding's fill);
    - `drop`: columns whose cells are removed from every row (the tool's columns of a returned
      workbook);
    - `restore`: style index -> style index, applied to every cell (a returned workbook's cells
      given their own style back);
    - `column_styles`: the style of each column that has one (`<col style>`), the style of a
      blank cell that has no element;
    - `heights`: row -> height in points, set where the row has no custom height of its own.
    """

    def __init__(self, styles=None, restyle=None, drop=(), restore=None, column_styles=None, heights=None, tail_at=None):
        self.styles = styles or {}
        self.tail_at = tail_at  # the column of the first appended cell: a cell of the row's at or after it comes after them
        self.heights = heights or {}  # row -> points, for a row whose height is not the user's own
        self.restyle = restyle
        self.drop = frozenset(drop)
        self.restore = restore or {}
        self.column_styles = column_styles or {}

    @property
    def every_row(self) -> bool:
        """Every row's cells must be looked at (a returned workbook), not only the rows named."""
        return bool(self.drop or self.restore)

    def new_style(self, current: int, value) -> int:
        return self.restyle(current, value) if self.restyle else value


def _row(number: int, attrs: bytes, body: bytes, styles: dict, tail: bytes, changes: Changes | None = None) -> bytes | None:
    """One row with its cells restyled or inserted (`styles`: column -> value, see Changes) and
    `tail` appended; None when nothing in it changes."""
    attrs = plain_attrs = SPANS.sub(b"", attrs)
    if changes is None:
        changes = Changes()
    if number in changes.heights and not CUSTOM_HEIGHT.search(attrs):
        attrs = re.sub(rb'\s(ht|customHeight)="[^"]*"', b"", attrs) + f' ht="{changes.heights[number]}" customHeight="1"'.encode()
    ext = body.find(b"<extLst")  # a row's extensions come after its cells: the tool's cells go before them
    body, extensions = (body, b"") if ext < 0 else (body[:ext], body[ext:])
    if not styles and not changes.every_row:  # only cells appended: the row's own cells are not looked at
        return b"<row" + attrs + b">" + body + tail + extensions + b"</row>"
    if changes.restore and STYLE.search(attrs):
        own = _style_of(attrs)
        attrs = _restyle(attrs, changes.restore.get(own, own))
    row_style = _style_of(attrs) if CUSTOM_FORMAT.search(attrs) else None

    def blank(c: int) -> bytes:
        own = row_style if row_style is not None else changes.column_styles.get(c, 0)
        return f'<c r="{column_letters(c)}{number}" s="{changes.new_style(own, styles[c])}"/>'.encode()

    out, pending = [], sorted(styles)
    col, p, at = -1, 0, 0
    for m in CELL.finditer(body):
        out.append(body[at : m.start()])  # what lies between cells (white space) is kept
        at = m.end()
        ref = CELL_REF.search(m.group(1))
        col = column_number(ref.group(1)) if ref else col + 1  # a cell without `r` follows the one before
        if tail and changes.tail_at is not None and col >= changes.tail_at:  # the reviewer's cells after the tool's
            out.append(tail)
            tail = b""
        while p < len(pending) and pending[p] < col:  # blank cells a finding points at, before this one
            out.append(blank(pending[p]))
            p += 1
        if col in changes.drop:
            continue
        head = m.group(1)
        if changes.restore:
            own = _style_of(head)
            if own in changes.restore:
                head = _restyle(head, changes.restore[own])
        if p < len(pending) and pending[p] == col:
            out.append(b"<c" + _restyle(head, changes.new_style(_style_of(head), styles[col])) + m.group(2))
            p += 1
        else:
            out.append(m.group(0) if head is m.group(1) else b"<c" + head + m.group(2))
    out += [blank(c) for c in pending[p:]]
    out.append(body[at:])
    new = b"".join(out)
    if not tail and not styles and new == body and attrs == plain_attrs:
        return None
    return b"<row" + attrs + b">" + new + tail + extensions + b"</row>"


class LazyTails:
    """The cells appended to rows (see `rewrite_rows`), made a block of rows at a time as the rows
    are written, so that the tool's cells of a whole sheet are never all in memory: `rows` are
    the row numbers in ascending order, `make(start, stop)` the cells of `rows[start:stop]`;
    `fixed` holds rows made beforehand (the header row)."""

    def __init__(self, rows, make, fixed: dict[int, bytes], block: int):
        self.rows, self.make, self.fixed, self.block = rows, make, fixed, block
        self.start, self.current = -1, []

    def __iter__(self):
        yield from self.fixed
        yield from self.rows.tolist()

    def get(self, n: int, default: bytes = b"") -> bytes:
        if n in self.fixed:
            return self.fixed[n]
        i = int(self.rows.searchsorted(n))
        if i >= len(self.rows) or self.rows[i] != n:
            return default
        start = i - i % self.block
        if start != self.start:
            self.start, self.current = start, self.make(start, min(start + self.block, len(self.rows)))
        return self.current[i - start]


class RowsOutOfOrder(Refused):
    """A sheet part whose rows are not in ascending order (not as the file format writes them):
    the tool's cells could not be placed without writing a row twice."""


class _Rows:
    """The rows of a sheet rewritten in order, a segment of whole rows at a time (see rewrite_rows)."""

    def __init__(self, tails, styles: dict[int, dict], changes: Changes):
        self.tails, self.styles, self.changes = tails, styles, changes
        self.every = changes.every_row
        self.wanted = sorted(set(tails) | set(styles))
        self.w, self.number = 0, 0

    def made(self, n: int, attrs: bytes | None = None, body: bytes = b"") -> bytes | None:
        attrs = attrs if attrs is not None else f' r="{n}"'.encode()
        return _row(n, attrs, body, self.styles.get(n, {}), self.tails.get(n, b""), self.changes)

    def segment(self, data: bytes) -> Iterator[bytes]:
        """`data` (whole rows and what lies between them) with the rows changed, and the rows the
        sheet lacks inserted before the rows that follow them."""
        wanted, at = self.wanted, 0
        for m in ROW.finditer(data):
            found = ROW_NUMBER.search(m.group(1))
            number = int(found.group(1)) if found else self.number + 1  # a row without `r` follows the one before
            if number <= self.number:
                raise RowsOutOfOrder(
                    f"A sheet of the workbook lists row {number} after row {self.number}; the file format keeps rows in order, "
                    "as Excel and LibreOffice write them. Open the workbook in Excel, save it, and drop it in again."
                )
            self.number = number
            while self.w < len(wanted) and wanted[self.w] < self.number:  # rows the sheet lacks, in order
                yield data[at : m.start()]
                at = m.start()
                yield self.made(wanted[self.w])
                self.w += 1
            if self.w < len(wanted) and wanted[self.w] == self.number:
                self.w += 1
            elif not self.every:
                continue
            row = self.made(self.number, m.group(1), m.group(3) or b"")
            if row is not None:
                yield data[at : m.start()]
                yield row
                at = m.end()
        yield data[at:]

    def rest(self) -> Iterator[bytes]:
        """The wanted rows after the sheet's last row."""
        yield from (self.made(n) for n in self.wanted[self.w :])
        self.w = len(self.wanted)


def rewrite_rows(
    part: bytes, tails, styles: dict[int, dict], changes: Changes | None = None, head: bytes | None = None, tail: bytes | None = None
) -> Iterator[bytes]:
    """The sheet part with its rows changed: `tails` maps an Excel row number to the XML of the
    cells appended to it (a dict or `LazyTails`), `styles` maps a row number to {0-based column:
    style index} (or to what `changes.restyle` takes). Yields the part in chunks; rows neither
    names are copied byte for byte, unless `changes` asks for every row (a returned workbook's
    own additions taken out). `head` and `tail` replace what comes before `<sheetData>` and after
    its end."""
    yield from rewrite_stream([part], tails, styles, changes, head, tail)


def _up_to_rows(chunks) -> tuple[bytes, re.Match, Iterator[bytes]]:
    """A sheet part read in chunks up to its `<sheetData>` tag: what was read, the tag's match in
    it, and the chunks not read yet."""
    buf, chunks = b"", iter(chunks)
    for chunk in chunks:
        buf += chunk
        start = SHEET_DATA.search(buf)
        if start:
            return buf, start, chunks
    raise ValueError("not a worksheet part: no <sheetData>")


def rewrite_stream(
    chunks, tails, styles: dict[int, dict], changes: Changes | None = None, head: bytes | None = None, tail: bytes | None = None
) -> Iterator[bytes]:
    """`rewrite_rows` of a sheet part read in chunks of bytes (the part is never whole in memory)."""
    changes = changes or Changes(styles)
    changes.styles = styles
    rows = _Rows(tails, styles, changes)
    buf, start, chunks = _up_to_rows(chunks)
    opening = b"<sheetData" + buf[start.start() + len(b"<sheetData") : start.end()].rstrip(b"/>") + b">"
    yield (buf[: start.start()] if head is None else head) + opening
    if start.group(1) == b"/>":  # an empty sheet
        yield from rows.rest()
        rest = buf[start.end() :] + b"".join(chunks)
        yield b"</sheetData>" + (rest if tail is None else tail)
        return
    buf = buf[start.end() :]
    while True:
        end = buf.find(SHEET_DATA_END)
        if end >= 0:
            yield from rows.segment(buf[:end])
            yield from rows.rest()
            rest = buf[end + len(SHEET_DATA_END) :] + (b"".join(chunks) if tail is None else b"")
            yield SHEET_DATA_END + (rest if tail is None else tail)
            return
        last = buf.rfind(b"</row>")
        if last >= 0:  # whole rows so far; the rest waits for the next chunk
            yield from rows.segment(buf[: last + len(b"</row>")])
            buf = buf[last + len(b"</row>") :]
        chunk = next(chunks, None)
        if chunk is None:
            raise ValueError("not a worksheet part: no </sheetData>")
        buf += chunk


def split_part(chunks) -> tuple[bytes, bytes]:
    """What comes before a sheet part's `<sheetData` and after its rows, read in chunks (the rows
    themselves are not kept)."""
    buf, start, chunks = _up_to_rows(chunks)
    head = buf[: start.start()]
    if start.group(1) == b"/>":
        return head, buf[start.end() :] + b"".join(chunks)
    buf = buf[start.end() :]
    while True:
        end = buf.find(SHEET_DATA_END)
        if end >= 0:
            return head, buf[end + len(SHEET_DATA_END) :] + b"".join(chunks)
        buf = buf[-len(SHEET_DATA_END) :]  # a marker cut between two chunks
        chunk = next(chunks, None)
        if chunk is None:
            raise ValueError("not a worksheet part: no </sheetData>")
        buf += chunk
