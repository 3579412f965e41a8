"""Rewrite the rows of a user's sheet part, row by row, read as XML tokens, changing only what the tool adds.

Part of annotating a workbook in place (the analyst's package copied part by part, `batch.workbook.inplace`):
every byte of a row the tool does not touch is copied as it is; in a row it touches, the tool
- appends its cells (already encoded by `batch.workbook.cells`) after the row's last cell;
- gives a cell a finding points at another style (`s="N"`: a copy of its own style with the
  finding's fill), keeping every other attribute and the cell's content;
- inserts an empty styled cell where a finding points at a column that has no cell in the row;
and a row the sheet does not have is inserted in row order.

A sheet part can be hundreds of megabytes, so it is never parsed into a tree: it is read as XML
tokens, in chunks. Markup starts at a `<` outside comments, CDATA sections and processing
instructions (a `<` never stands inside an attribute value of well-formed XML), so the reader
- walks the part's head token by token, with the namespaces in scope, up to the rows element
  (`sheetData` in the SpreadsheetML namespace, Transitional or Strict, under whatever prefix the
  producer bound to it, on the root or on an inner element); a comment or CDATA section that
  holds `<sheetData>` text is skipped whole;
- finds the end of each row with one search for its end tag (`</row>`, `</x:row>`), stopping
  only to skip a comment, CDATA section or processing instruction, whose text is never markup; a
  row spelled as every program writes one (its reference first, nothing in it but elements and
  text) is read whole by one regular expression instead (`_plain_row`), which gives what the
  tokens give;
- reads a row's cells token by token only when the tool must look inside it (a cell restyled or
  inserted, a returned workbook's cells taken out, a row holding its own extensions).
Any well-formed spelling is read: attributes in single or double quotes, spaces around `=`, end
tags with spaces, `<row/>`, cells without `r`, cells out of column order, a part in UTF-16 (read,
and written back, in UTF-8). The cells the tool adds
to a row are written under the row's own prefix.

Used by `batch.workbook.inplace`; on a returned workbook `Changes` also takes out the tool's columns
and gives flagged cells their own style back.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from batch.workbook import cells as encoder
from batch.workbook import xmlparts
from batch.workbook.cells import column_letters
from batch.workbook.refused import Refused

MAIN_NAMESPACES = frozenset({xmlparts.MAIN.encode(), xmlparts.MAIN_STRICT.encode()})  # Transitional, Strict
XML_NAMESPACE = b"http://www.w3.org/XML/1998/namespace"
# the grammar of a tag, for well-formed XML: a name, then attributes whose values are quoted and hold no `<`
NAME = rb"""[^\s<>/=!?"']+"""
START_TAG = re.compile(rb"<(" + NAME + rb""")((?:\s+[^\s<>/="']+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(/?)>""")
END_TAG = re.compile(rb"</(" + NAME + rb")\s*>")
ATTR = re.compile(rb"""(\s+)([^\s<>/="']+)\s*=\s*("[^"<]*"|'[^'<]*')""")
NAMESPACE_DECLARATION = re.compile(rb"""\sxmlns(?::([^\s=]+))?\s*=\s*(?:"([^"]*)"|'([^']*)')""")
# the markup whose text is never markup: opening and closing
OPAQUE = ((b"<!--", b"-->"), (b"<![CDATA[", b"]]>"), (b"<?", b"?>"))
LONGEST_OPENER = len(b"<![CDATA[")
MAX_TAG = 1 << 24  # a tag longer than 16 MB is not one a workbook holds: the part is not well-formed
LETTERS = re.compile(rb"[A-Za-z]+")
TOOL_TAG = re.compile(rb"<(/?)(?=[A-Za-z_])")  # the tags of the tool's own cells (their text is escaped: no other `<`)


class NotASheet(Refused):
    """A worksheet part the reader cannot follow (no rows element, or not well-formed XML)."""


class RowsOutOfOrder(Refused):
    """A sheet part whose rows are not in ascending order (not as the file format writes them):
    the tool's cells could not be placed without writing a row twice."""


def _not_well_formed(what: str) -> NotASheet:
    return NotASheet(
        f"{SOME_SHEET} is not well-formed XML ({what}); Excel would repair it on opening. "
        "Open the workbook in Excel, save it, and drop it in again."
    )


SOME_SHEET = "A sheet of the workbook"


def _named(err: Refused, where: str | None) -> Refused:
    """`err` saying which sheet (`where`: "The sheet 'Transfers'") instead of "A sheet of the workbook"."""
    if not where or not str(err).startswith(SOME_SHEET):
        return err
    return type(err)(where + str(err)[len(SOME_SHEET) :])


def column_number(letters: bytes) -> int:
    """Excel's column letters as a 0-based number: A is 0, XFD is 16383."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + ch - 64
    return n - 1


# -- tokens --------------------------------------------------------------------------------------


def _opaque_end(data: bytes, i: int) -> int | None:
    """Where the comment, CDATA section or processing instruction starting at `i` ends (-1: not
    in `data` yet); None when no such markup starts at `i`."""
    for opener, closer in OPAQUE:
        if data.startswith(opener, i):
            j = data.find(closer, i + len(opener))
            return -1 if j < 0 else j + len(closer)
    return None


def _scope(attrs: bytes, scope: dict) -> dict:
    """The namespaces in scope inside an element: its parent's `scope` with its own declarations."""
    if b"xmlns" not in attrs:
        return scope
    inner = dict(scope)
    for m in NAMESPACE_DECLARATION.finditer(attrs):
        inner[m.group(1) or b""] = m.group(2) if m.group(2) is not None else m.group(3)
    return inner


def _is_main(qname: bytes, local: bytes, scope: dict) -> bool:
    """Whether `qname` is the SpreadsheetML element `local` (its prefix bound to either main namespace)."""
    prefix, _, name = qname.rpartition(b":")
    return name == local and scope.get(prefix) in MAIN_NAMESPACES


def _opaque_start(data: bytes, pos: int, limit: int) -> int:
    """Where the first comment, CDATA section, processing instruction or declaration (`<!`, `<?`)
    starts in `data[pos:limit]`, or -1. Searched for by their rare second character."""
    first = -1
    for mark in (b"!", b"?"):
        x = data.find(mark, pos + 1, limit + 1)
        while x >= 0 and data[x - 1] != 60:  # not after `<`: text
            x = data.find(mark, x + 1, limit + 1)
        if x >= 0 and (first < 0 or x - 1 < first):
            first = x - 1
    return first


def _element_end(data: bytes, pos: int, qname: bytes, depth: int = 1, nested: bool = True) -> tuple[int, int, int]:
    """The end of the element `qname` whose content starts at `pos`: (end, end, 0), or (-1, where
    to search again, depth) when `data` stops first. Its end tag is searched for as bytes; only a
    comment, CDATA section or processing instruction before it (whose text is never markup), or,
    when elements of the same name can nest (`nested`), a start tag of the same name, stops the search."""
    close, opening = b"</" + qname, b"<" + qname
    while True:
        j = data.find(close, pos)
        limit = len(data) if j < 0 else j
        k = _opaque_start(data, pos, limit)
        if nested:
            same = data.find(opening, pos, limit if k < 0 else k)
            k = same if same >= 0 else k
        if k < 0:
            if j < 0:
                return -1, max(pos, len(data) - len(close) - LONGEST_OPENER), depth
            tag = END_TAG.match(data, j)
            if tag is None:
                after = data[j + len(close) : j + len(close) + 1]
                if not after or after in _NAME_END:  # the end tag goes on in the next chunk
                    return -1, j, depth
                pos = j + 1  # `</rowX` of another element, cut by the chunk
                continue
            if tag.group(1) != qname:  # `</rowBreaks>`
                pos = tag.end()
                continue
            depth -= 1
            if not depth:
                return tag.end(), tag.end(), 0
            pos = tag.end()
            continue
        end = _opaque_end(data, k)
        if end is not None:
            if end < 0:
                return -1, k, depth
            pos = end
            continue
        if data.startswith(b"<!", k):
            if len(data) - k < LONGEST_OPENER:
                return -1, k, depth
            raise _not_well_formed(f"a declaration inside <{qname.decode(errors='replace')}>")
        after = data[k + len(opening) : k + len(opening) + 1]
        if not after:
            return -1, k, depth
        if after not in _NAME_END:  # another name that begins the same (`<rowBreaks`)
            pos = k + 1
            continue
        tag = START_TAG.match(data, k)
        if tag is None:
            if len(data) - k > MAX_TAG:
                raise _not_well_formed(f"a tag <{qname.decode(errors='replace')} that does not end")
            return -1, k, depth
        depth += not tag.group(3)
        pos = tag.end()


_NAME_END = frozenset(b" \t\r\n/>"[i : i + 1] for i in range(6))


# -- attributes ----------------------------------------------------------------------------------


_ATTRIBUTES: dict[bytes, re.Pattern] = {}


def attribute(attrs: bytes, name: bytes) -> bytes | None:
    """The raw value of the attribute `name` (unprefixed) in a tag's attributes, or None."""
    find = _ATTRIBUTES.get(name)
    if find is None:  # the attributes before it, then it: never a look inside another attribute's value
        other = rb"""\s+(?!""" + re.escape(name) + rb"""\s*=)[^\s<>/="']+\s*=\s*(?:"[^"<]*"|'[^'<]*')"""
        find = _ATTRIBUTES[name] = re.compile(rb"(?:" + other + rb""")*\s+""" + re.escape(name) + rb"""\s*=\s*(?:"([^"<]*)"|'([^'<]*)')""")
    m = find.match(attrs)
    if m is None:
        return None
    return m.group(1) if m.group(1) is not None else m.group(2)


def _set(attrs: bytes, name: bytes, value: bytes) -> bytes:
    """The attributes with `name` set to `value` (in the attribute's own quotes; added at the end)."""
    for m in ATTR.finditer(attrs):
        if m.group(2) == name:
            quote = m.group(3)[:1]
            return attrs[: m.start(3)] + quote + value + quote + attrs[m.end(3) :]
    return attrs + b" " + name + b'="' + value + b'"'


def _without(attrs: bytes, *names: bytes) -> bytes:
    for n in names:
        if n in attrs:
            break
    else:
        return attrs
    return ATTR.sub(lambda m: b"" if m.group(2) in names else m.group(0), attrs)


def _style_of(attrs: bytes) -> int:
    return _style_number(attribute(attrs, b"s"))


def _style_number(value: bytes | None) -> int:
    """The style index an `s` attribute's value gives (0: none, or not a number)."""
    return int(value) if value and value.strip().isdigit() else 0


def _true(value: bytes | None) -> bool:
    return value is not None and value.strip() in (b"1", b"true")  # Excel writes 1, LibreOffice true


def _restyle(attrs: bytes, style: int) -> bytes:
    """A cell's attributes with its style set to `style`."""
    return _set(attrs, b"s", str(style).encode())


# -- the part, read in chunks --------------------------------------------------------------------


UTF16_STARTS = {b"\xff\xfe": "utf-16", b"\xfe\xff": "utf-16", b"<\x00": "utf-16-le", b"\x00<": "utf-16-be"}
ENCODING = re.compile(rb"""^(\s*<\?xml\b[^?]*?\bencoding\s*=\s*)(["'])[^"']*\2""")


def _utf8(chunks) -> Iterator[bytes]:
    """A part's chunks in UTF-8: one written in UTF-16 (which the XML standard allows, Excel never
    writes) decoded as it streams, its XML declaration then saying UTF-8."""
    chunks = iter(chunks)
    first = b""
    for chunk in chunks:
        first += chunk
        if len(first) >= 2:
            break
    encoding = UTF16_STARTS.get(first[:2])
    if encoding is None:
        yield first
        yield from chunks
        return
    decoder = codecs.getincrementaldecoder(encoding)()
    text, declared = decoder.decode(first).encode("utf-8"), False
    for chunk in chunks:
        text += decoder.decode(chunk).encode("utf-8")
        if not declared and (b"?>" in text or len(text) > 1 << 10):  # the declaration read whole
            text, declared = ENCODING.sub(rb"\1\2UTF-8\2", text, count=1), True
        if declared:
            yield text
            text = b""
    text += decoder.decode(b"", final=True).encode("utf-8")
    yield text if declared else ENCODING.sub(rb"\1\2UTF-8\2", text, count=1)


class _Part:
    """A part read in chunks (in UTF-8): `buf` holds what was read and not yet let go of."""

    def __init__(self, chunks):
        self.chunks = _utf8(chunks)
        self.buf = b""
        self.eof = False

    def more(self) -> bool:
        """Read the next chunk onto `buf`; False at the end of the part."""
        for chunk in self.chunks:
            if chunk:
                self.buf += chunk
                return True
        self.eof = True
        return False


@dataclass
class _RowsElement:
    """Where a sheet's rows element (`sheetData`) starts in a part's `buf`."""

    start: int  # its `<`
    end: int  # after its start tag
    empty: bool  # `<sheetData/>`
    qname: bytes  # `sheetData`, `x:sheetData`
    attrs: bytes
    scope: dict  # the namespaces in scope inside it


def _head_tags(part: _Part) -> Iterator[tuple[re.Match, dict, int]]:
    """The start tags of a sheet part's head, in order, each with the namespaces in scope inside
    it and its depth (the root is 0); stops at the rows element (whose tag is the last yielded).
    Comments, CDATA sections and processing instructions are skipped whole; a DOCTYPE is refused."""
    stack, pos = [{b"xml": XML_NAMESPACE}], 0
    while True:
        buf = part.buf
        i = buf.find(b"<", pos)
        if i < 0 or (len(buf) - i < LONGEST_OPENER and not part.eof):
            pos = len(buf) if i < 0 else i
            if not part.more():
                if i < 0:
                    raise NotASheet(
                        "A sheet of the workbook has no rows element (<sheetData>), so it is not a worksheet as Excel writes it; "
                        "open the workbook in Excel, save it, and drop it in again."
                    )
            continue
        end = _opaque_end(buf, i)
        if end is not None:
            if end < 0:
                if not part.more():
                    raise _not_well_formed("a comment, CDATA section or processing instruction that does not end")
                continue
            pos = end
            continue
        if buf.startswith(b"<!", i):
            raise NotASheet(
                "A sheet of the workbook holds a document type declaration (DOCTYPE), which workbooks never need and which "
                "can hide an entity-expansion attack; save the workbook again from Excel and drop it in again."
            )
        tag = (END_TAG if buf.startswith(b"</", i) else START_TAG).match(buf, i)
        if tag is None:
            if len(buf) - i > MAX_TAG or not part.more():
                raise _not_well_formed("a tag that does not end")
            continue
        pos = tag.end()
        if buf.startswith(b"</", i):
            if len(stack) < 2:
                raise _not_well_formed(f"an end tag {tag.group(0).decode(errors='replace')} without its start")
            stack.pop()
            continue
        scope = _scope(tag.group(2), stack[-1])
        yield tag, scope, len(stack) - 1
        if _is_main(tag.group(1), b"sheetData", scope):
            return
        if not tag.group(3):
            stack.append(scope)


def _rows_element(part: _Part) -> _RowsElement:
    """The rows element of a sheet part read in chunks (read up to its start tag)."""
    for tag, scope, _depth in _head_tags(part):
        if _is_main(tag.group(1), b"sheetData", scope):
            return _RowsElement(tag.start(), tag.end(), bool(tag.group(3)), tag.group(1), tag.group(2), scope)
    raise NotASheet(
        "A sheet of the workbook has no rows element (<sheetData>), so it is not a worksheet as Excel writes it; "
        "open the workbook in Excel, save it, and drop it in again."
    )


def _after_rows(part: _Part, found: _RowsElement) -> tuple[int, int]:
    """Read past the rows of a sheet part (without looking at them): where `</sheetData>` starts
    and ends in `part.buf`, which then holds the part from the rows element's end tag on."""
    pos, depth = found.end, 1
    part.buf = part.buf[pos:]
    pos = 0
    while True:
        end, pos, depth = _element_end(part.buf, pos, found.qname, depth, nested=False)
        if end >= 0:
            return part.buf.rindex(b"<", 0, end), end
        part.buf, pos = part.buf[pos:], 0  # what was passed is let go of
        if not part.more():
            raise _not_well_formed(f"its <{found.qname.decode()}> does not end")


def split_part(chunks, where: str | None = None) -> tuple[bytes, bytes]:
    """What comes before a sheet part's rows element and after it, read in chunks (the rows
    themselves are not kept). `where` names the sheet in a refusal ("The sheet 'Transfers'")."""
    try:
        part = _Part(chunks)
        found = _rows_element(part)
        head = part.buf[: found.start]
        if found.empty:
            return head, part.buf[found.end :] + b"".join(part.chunks)
        _start, end = _after_rows(part, found)
        return head, part.buf[end:] + b"".join(part.chunks)
    except Refused as err:
        raise _named(err, where) from None


def skeleton(chunks, where: str | None = None) -> bytes:
    """A sheet part without its rows: its head, its rows element empty (`<sheetData/>`, in the
    part's own spelling and prefix) and its tail; small enough to parse whole."""
    try:
        part = _Part(chunks)
        found = _rows_element(part)
        head = part.buf[: found.start]
        if found.empty:  # nothing to leave out: the part as it is
            return part.buf + b"".join(part.chunks)
        _start, end = _after_rows(part, found)
        return head + b"<" + found.qname + found.attrs + b"/>" + part.buf[end:] + b"".join(part.chunks)
    except Refused as err:
        raise _named(err, where) from None


def around_rows(data: bytes) -> tuple[bytes, bytes]:
    """A whole sheet part cut where rows would be added after its last row: what comes before
    (the rows element open, with its rows) and after (its end tag, then the tail)."""
    part = _Part([data])
    found = _rows_element(part)
    if found.empty:
        return data[: found.start] + b"<" + found.qname + found.attrs + b">", b"</" + found.qname + b">" + data[found.end :]
    offset = found.end  # one chunk: `_after_rows` counts from the rows element's start tag's end
    start, _end = _after_rows(part, found)
    return data[: offset + start], data[offset + start :]


def with_dimension(data: bytes, ref: str) -> bytes:
    """A sheet part (whole, or its head) with its `<dimension>` set to `ref` (none added when it has none)."""
    part = _Part([data])
    for tag, scope, depth in _head_tags(part):
        if depth == 1 and _is_main(tag.group(1), b"dimension", scope):
            attrs = _set(tag.group(2), b"ref", ref.encode())
            return data[: tag.start(2)] + attrs + data[tag.end(2) :]
    return data


# -- what the tool changes -----------------------------------------------------------------------


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
      blank cell that has no element.
    The rows' heights are the user's: never changed."""

    def __init__(self, styles=None, restyle=None, drop=(), restore=None, column_styles=None, tail_at=None, replace=None):
        self.styles = styles or {}
        self.replace = replace or {}  # row -> {column: the cell's text}: a cell cut to Excel's limit, written as what was read
        self.tail_at = tail_at  # the column of the first appended cell: a cell of the row's at or after it comes after them
        self.restyle = restyle
        self.drop = frozenset(drop)
        self.restore = restore or {}
        self.column_styles = column_styles or {}

    @property
    def every_row(self) -> bool:
        """Every row's cells must be looked at (a returned workbook), not only the rows named."""
        return bool(self.drop or self.restore or self.replace)

    def new_style(self, current: int, value) -> int:
        return self.restyle(current, value) if self.restyle else value


_CELLS: dict[bytes, re.Pattern] = {}
_LETTERS = [bytes([c]) for c in range(ord("A"), ord("Z") + 1)]
_NAMES = itertools.chain(
    _LETTERS, (a + b for a in _LETTERS for b in _LETTERS), (a + b + c for a in _LETTERS for b in _LETTERS for c in _LETTERS)
)
# A..XFD: the one-, two- and three-letter names in Excel's order (A..Z, AA..ZZ, AAA..), the first 16,384
_COLUMNS = dict(zip(_NAMES, range(16_384), strict=False))


def _column(ref: bytes | None, before: int) -> int:
    """The 0-based column of a cell reference (`AB12`), or the one after `before` when it has none."""
    letters = LETTERS.match(ref.strip()) if ref else None
    if letters is None:
        return before + 1  # a cell without `r` follows the one before
    column = _COLUMNS.get(letters.group(0))
    return column if column is not None else column_number(letters.group(0))


def _cells(body: bytes, scope: dict, prefix: bytes) -> tuple[list[tuple], int]:
    """The cells of a row's content in document order, each (start, start and end of its
    attributes, end, 0-based column, style index or None when not read yet), and where the
    cells end (after the last cell; where the row's own elements after its cells begin when it
    has none). `prefix` is the row's."""
    if _plain(body):
        fast = _cells_of_plain_row(body, prefix)
        if fast is not None:
            return fast
    cells = []
    pos, column, first_other = 0, -1, None
    while True:
        i = body.find(b"<", pos)
        if i < 0:
            break
        end = _opaque_end(body, i)
        if end is not None:
            if end < 0:
                raise _not_well_formed("a comment, CDATA section or processing instruction in a row that does not end")
            pos = end
            continue
        tag = START_TAG.match(body, i)
        if tag is None:
            raise _not_well_formed("a tag in a row that does not end, or an end tag without its start")
        inner = _scope(tag.group(2), scope)
        is_cell = _is_main(tag.group(1), b"c", inner)
        end = tag.end() if tag.group(3) else _element_end(body, tag.end(), tag.group(1), nested=not is_cell)[0]
        if end < 0:
            raise _not_well_formed(f"a <{tag.group(1).decode(errors='replace')}> in a row that does not end")
        if is_cell:
            column = _column(attribute(tag.group(2), b"r"), column)
            cells.append((i, tag.start(2), tag.end(2), end, column, None))
        elif first_other is None:
            first_other = i
        pos = end
    return cells, cells[-1][3] if cells else (first_other if first_other is not None else len(body))


def _cell_pattern(prefix: bytes) -> re.Pattern:
    """A cell under `prefix` (`x:` or nothing), from its start tag to its end: group 1 its
    attributes, `letters` the letters of its `r` and `style` its `s` when they come first, as every
    program writes them, each value closed by the quote that opens it (`s="3'>"` is a value of its
    own: its `>` does not end the tag)."""
    cell = _CELLS.get(prefix)
    if cell is None:
        name = re.escape(prefix + b"c")
        first = (
            rb"""(?:\s+r\s*=\s*(?P<rq>["'])(?P<letters>[A-Za-z]+)[0-9]*(?P=rq))?"""
            rb"""(?:\s+s\s*=\s*(?P<sq>["'])(?P<style>[0-9]+)(?P=sq))?"""
        )
        attrs = rb"""(""" + first + rb"""(?:\s+[^\s<>/="']+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)"""
        cell = _CELLS[prefix] = re.compile(rb"<" + name + attrs + rb"\s*(?:/>|>.*?</" + name + rb"\s*>)", re.S)
    return cell


def _plain(body: bytes) -> bool:
    """A row's content holds no comment, CDATA section, processing instruction, namespace
    declaration or extension (as every program writes rows)."""
    return b"<!" not in body and b"<?" not in body and b"xmlns" not in body and b"extLst" not in body


def _cells_of_plain_row(body: bytes, prefix: bytes):
    """`_cells` of a row that holds only cells and white space between them, with no comment,
    CDATA section, processing instruction, namespace declaration or extension (as every program
    writes rows): one regular expression over the row; None when the row is not that plain."""
    found = list(_cell_pattern(prefix).finditer(body))
    if sum(m.end() - m.start() for m in found) != len(body):  # something between or around the cells: only white space may be
        at = 0
        for m in found:
            if m.start() != at and not body[at : m.start()].isspace():
                return None
            at = m.end()
        if at != len(body) and not body[at:].isspace():
            return None
    cells, column, columns = [], -1, _COLUMNS
    for m in found:
        letters = m.group("letters")
        known = columns.get(letters, -1) if letters is not None else -1
        column = known if known >= 0 else _column(attribute(m.group(1), b"r"), column)
        style = m.group("style")
        cells.append((m.start(), m.start(1), m.end(1), m.end(), column, int(style) if style is not None else None))
    return cells, found[-1].end() if found else 0


_REFERENCED: dict[bytes, tuple[bytes, re.Pattern]] = {}
_OF: dict[tuple[bytes, int], re.Pattern] = {}
_FROM: dict[tuple[bytes, int], re.Pattern] = {}
_UNREFERENCED = re.compile(rb'<c(?:[\s/>](?<! )|\s+(?!r="[A-Z]+[0-9]+"))')  # an unprefixed cell not spelled `<c r="B12"`
_PREFIXED = re.compile(rb"""<[^\s<>/!?"'=:]+:c[\s/>]""")  # a cell under a prefix


def _referenced(prefix: bytes) -> tuple[bytes, re.Pattern]:
    """The start of a cell whose first attribute is its reference (`<c r="`), and a search for any
    other start of an element named `c` (under any prefix or none): one that is not this row's
    prefix and a reference in capital letters and digits, spelled so."""
    if prefix not in _REFERENCED:
        start = b"<" + prefix + b'c r="'
        referenced = re.escape(start[1:]) + rb'[A-Z]+[0-9]+"'
        other = re.compile(rb"<(?!" + referenced + rb""")(?:[^\s<>/!?"'=:]+:)?c[\s/>]""")
        _REFERENCED[prefix] = start, other
    return _REFERENCED[prefix]


def _other_cell(body: bytes, prefix: bytes) -> bool:
    """Whether a row's content holds a cell not spelled `<c r="B12"` under the row's prefix (see
    `_referenced`). A row of no prefix, as every program writes them, is searched twice, each
    search anchored on a literal: twice as fast as the one search that looks at every tag."""
    if prefix:
        return _referenced(prefix)[1].search(body) is not None
    return _UNREFERENCED.search(body) is not None or (b":c" in body and _PREFIXED.search(body) is not None)


def _of_column(prefix: bytes, column: int) -> re.Pattern:
    """A search for a cell referenced in column `column` (`<c r="AB`, then its row's digits)."""
    key = (prefix, column)
    if key not in _OF:
        _OF[key] = re.compile(re.escape(b"<" + prefix + b'c r="' + column_letters(column).encode()) + b"[0-9]")
    return _OF[key]


def _from_column(prefix: bytes, column: int) -> re.Pattern:
    """A search for a cell referenced (`<c r="AB12"`) in column `column` or a later one: its letters
    longer than the column's, or as long and not before them, letter by letter."""
    key = (prefix, column)
    if key not in _FROM:
        letters = column_letters(column).encode()
        n = len(letters)
        later = [rb"[A-Z]{%d,}" % (n + 1), letters]
        for i, c in enumerate(letters):
            if c < ord("Z"):
                later.append(letters[:i] + b"[" + bytes([c + 1]) + b"-Z]" + (rb"[A-Z]{%d}" % (n - i - 1) if n - i - 1 else b""))
        _FROM[key] = re.compile(re.escape(b"<" + prefix + b'c r="') + b"(?:" + b"|".join(later) + b")[0-9]")
    return _FROM[key]


def _row_style(attrs: bytes) -> int | None:
    """The style a row gives its blank cells (`customFormat`), or None."""
    return _style_of(attrs) if _true(attribute(attrs, b"customFormat")) else None


def _blank_cell(prefix: bytes, column: int, number: int, row_style: int | None, changes: Changes, flag) -> bytes:
    """A blank cell a finding points at, flagged on the row's style, else its column's."""
    own = row_style if row_style is not None else changes.column_styles.get(column, 0)
    return b"<" + prefix + f'c r="{column_letters(column)}{number}" s="{changes.new_style(own, flag)}"/>'.encode()


def _restyled_in_place(number: int, attrs: bytes, body: bytes, styles: dict, changes: Changes, prefix: bytes) -> tuple[bytes, int] | None:
    """`_row`'s new content for a plain row (`_plain`) whose cells each start with their reference
    (`<c r="B12"`, as every program writes them), when the only changes are styles (no cell at or
    after the tool's columns): each restyled cell found by its column's reference, and where a
    column has no cell, the blank cell inserted before the first cell of a later column, not every
    cell read. Returns the content up to the end of its last cell (and the blank cells after it)
    and where that ends in the row's content (the tool's cells go there, before any white space
    after it); None when the row is not such a row, for `_row` to read every cell."""
    start = _referenced(prefix)[0]
    if _other_cell(body, prefix) or (changes.tail_at is not None and _from_column(prefix, changes.tail_at).search(body)):
        return None
    cell = _cell_pattern(prefix)
    last = body.rfind(start)
    end = cell.match(body, last) if last >= 0 else None
    if end is None or body[end.end() :].strip():  # no cell, or the row's content does not end with its last cell
        return None
    # (where, column, start of the bytes replaced, their end, the cell's match or None for a blank cell)
    edits = []
    for column in styles:
        of = _of_column(prefix, column)
        found = of.search(body)
        if found is None:  # a blank cell, before the first cell of a later column (after the last cell when none)
            later = _from_column(prefix, column + 1).search(body)
            at = later.start() if later is not None else end.end()
            edits.append((at, column, at, at, None))
            continue
        if of.search(body, found.end()) is not None:  # two cells of the column
            return None
        m = cell.match(body, found.start())
        if m is None:
            return None
        edits.append((m.start(), column, m.start(1), m.end(1), m))
    if len(edits) > 1:
        edits.sort(key=lambda e: e[:2])
    # the new styles asked for in the row's order, as `_row` asks for them cell by cell (a blank cell
    # before the cell it precedes): a new style is numbered as it is first asked for
    out, pos, row_style = [], 0, ...  # the row's own style: read at its first blank cell
    for _where, column, a, b, m in edits:
        if m is None:
            row_style = _row_style(attrs) if row_style is ... else row_style
            new = _blank_cell(prefix, column, number, row_style, changes, styles[column])
        elif m.group("style") is not None:  # its style right after its reference (`<c r="B12" s="3"`): its digits replaced
            own = body[a:b]
            at = m.start("style") - a
            new = own[:at] + str(changes.new_style(int(m.group("style")), styles[column])).encode() + own[m.end("style") - a :]
        else:
            own = body[a:b]
            value = attribute(own, b"s")
            style = str(changes.new_style(_style_number(value), styles[column])).encode()
            new = own + b' s="' + style + b'"' if value is None else _set(own, b"s", style)  # `_restyle`, its style read once
        out += [body[pos:a], new]
        pos = b
    out.append(body[pos : end.end()])
    return b"".join(out), end.end()


def _row(
    number: int,
    qname: bytes,
    attrs: bytes,
    body: bytes,
    styles: dict,
    tail: bytes,
    changes: Changes | None = None,
    scope: dict | None = None,
) -> bytes | None:
    """One row (`<qname attrs>body</qname>`) with its cells restyled or inserted (`styles`: column
    -> value, see Changes) and `tail` (the tool's cells, under the row's prefix) appended; None
    when nothing in it changes."""
    changes = changes or Changes()
    attrs = plain = _without(attrs, b"spans")  # an optional hint of the row's first and last column
    close = b"</" + qname + b">"
    replaced = changes.replace.get(number, {})
    if not styles and not changes.every_row and b"extLst" not in body:  # only cells appended: the row's own are not looked at
        return b"<" + qname + attrs + b">" + body + tail + close
    if changes.restore and attribute(attrs, b"s") is not None:
        own = _style_of(attrs)
        attrs = _restyle(attrs, changes.restore.get(own, own))
    prefix = qname[: -len(b"row")]  # `x:` of `x:row`, or nothing
    if styles and not changes.every_row and _plain(body):
        fast = _restyled_in_place(number, attrs, body, styles, changes, prefix)
        if fast is not None:
            new_body = fast[0] + tail + body[fast[1] :]
            return None if new_body == body and attrs == plain else b"<" + qname + attrs + b">" + new_body + close
    row_style = _row_style(attrs)
    cells, cells_end = _cells(body, scope if scope is not None else {b"": next(iter(MAIN_NAMESPACES))}, prefix)

    def blank(c: int) -> bytes:
        return _blank_cell(prefix, c, number, row_style, changes, styles[c])

    # a blank cell only where no cell of the column stands anywhere in the row (cells may be out of order)
    pending = sorted(set(styles) - {cell[4] for cell in cells}) if styles else []
    drop, restore, tail_at = changes.drop, changes.restore, changes.tail_at
    out, at, p = [], 0, 0
    for start, a, b, end, column, style in cells:
        out.append(body[at:start])  # what lies between cells (white space, comments) is kept
        at = end
        while p < len(pending) and pending[p] < column:  # blank cells a finding points at, before this one
            out.append(blank(pending[p]))
            p += 1
        if tail and tail_at is not None and column >= tail_at:  # the reviewer's cells after the tool's
            out.append(tail)
            tail = b""
        if column in drop:
            continue
        own = new = body[a:b]
        if restore:
            style = _style_of(new) if style is None else style
            if style in restore:
                new = _restyle(new, restore[style])
        if column in styles:
            new = _restyle(new, changes.new_style(_style_of(new), styles[column]))
        if column in replaced:  # text cut to Excel's limit when read: the cell holds what was checked
            out.append(_text_cell(prefix, new, replaced[column]))
            continue
        out.append(body[start:end] if new is own else body[start:a] + new + body[b:end])
    out.append(body[at:cells_end])
    added = [blank(c) for c in pending[p:]]
    out += [*added, tail, body[cells_end:]]
    new_body = b"".join(out)
    if not tail and not added and p == 0 and new_body == body and attrs == plain:
        return None
    return b"<" + qname + attrs + b">" + new_body + close


def _text_cell(prefix: bytes, attrs: bytes, value: str) -> bytes:
    """A cell (its attributes kept but its type) holding `value` as an inline string, encoded as
    every cell the tool writes (batch.workbook.cells)."""
    body, preserve = encoder.text(pd.Series([value], dtype=object))
    t = prefix + b"t"
    open_t = b"<" + t + (b' xml:space="preserve">' if preserve[0] else b">")
    return (
        b"<"
        + prefix
        + b"c"
        + _without(attrs, b"t")
        + b' t="inlineStr"><'
        + prefix
        + b"is>"
        + open_t
        + str(body[0]).encode()
        + b"</"
        + t
        + b"></"
        + prefix
        + b"is></"
        + prefix
        + b"c>"
    )


class LazyTails:
    """The cells appended to rows (see `rewrite_rows`), made a block of rows at a time as the rows
    are written, so that the tool's cells of a whole sheet are never all in memory: `rows` are
    the row numbers in ascending order, `make(start, stop)` the cells of `rows[start:stop]`;
    `fixed` holds rows made beforehand (the header row)."""

    def __init__(self, rows, make, fixed: dict[int, bytes], block: int):
        self.rows, self.make, self.fixed, self.block = rows, make, fixed, block
        self.start, self.current, self.at = -1, [], {}

    def __iter__(self):
        yield from self.fixed
        yield from self.rows.tolist()

    def get(self, n: int, default: bytes = b"") -> bytes:
        if n in self.fixed:
            return self.fixed[n]
        i = self.at.get(n)  # a row of the block in hand: found without numpy (a row at a time, numpy costs microseconds)
        if i is not None:
            return self.current[i]
        i = int(self.rows.searchsorted(n))
        if i >= len(self.rows) or self.rows[i] != n:
            return default
        start = i - i % self.block
        if start != self.start:
            stop = min(start + self.block, len(self.rows))
            self.start, self.current = start, self.make(start, stop)
            self.at = dict(zip(self.rows[start:stop].tolist(), range(stop - start), strict=True))
        return self.current[i - start]


class LazyFlags:
    """Row -> {column: its flag} of the cells a finding fills (see `rewrite_rows`), made a block of
    rows at a time as the rows are written, like `LazyTails`: a full sheet's million small dicts
    (about 300 MB) are never all in memory. One cell each of `rows`, `columns`, `flags`, in the order
    found: a row's cells keep that order. Rows without a flagged cell get `default`."""

    def __init__(self, rows, columns, flags, block: int):
        order = np.argsort(rows, kind="stable")
        self.rows, self.columns, self.flags = rows[order], columns[order], flags[order]
        self.numbers = np.unique(self.rows)  # each flagged row once, in ascending order
        self.block, self.low, self.high, self.current = block, 0, -1, {}

    def __bool__(self) -> bool:
        return len(self.rows) > 0

    def __iter__(self):
        yield from self.numbers.tolist()

    def get(self, n: int, default=None):
        if self.low <= n <= self.high:  # within the block in hand: found without numpy
            return self.current.get(n, default)
        i = int(self.numbers.searchsorted(n))
        if i >= len(self.numbers) or self.numbers[i] != n:
            return default
        start = i - i % self.block
        stop = min(start + self.block, len(self.numbers))
        self.low, self.high = int(self.numbers[start]), int(self.numbers[stop - 1])
        a, b = self.rows.searchsorted(self.low), self.rows.searchsorted(self.high, side="right")
        self.current = {}
        for row, column, flag in zip(self.rows[a:b].tolist(), self.columns[a:b].tolist(), self.flags[a:b].tolist(), strict=True):
            self.current.setdefault(row, {})[column] = flag
        return self.current[n]


ROWS_END = -2  # `_markup_at`: the rows element's end tag


def _read_on(part: _Part, held: list, buf: bytes, at: int, i: int) -> tuple[bytes, int, int]:
    """The markup at `i` goes on past `buf`: what was passed (from `at`) goes to `held`, the part's
    next chunk is read onto the rest; the new `buf`, and where to go on in it (0, 0). At the part's
    end the rows element has not ended: not well formed."""
    if part.eof:
        raise _not_well_formed("its rows element does not end")
    held.append(buf[at:i])
    part.buf = buf[i:]
    part.more()  # at the end of the part, what is left is read as it is
    return part.buf, 0, 0


def _markup_at(buf: bytes, i: int, scope: dict) -> tuple[int, re.Match | None, bool, dict]:
    """The markup whose `<` is at `i` among a sheet's rows (`scope`: the namespaces in scope in the
    rows element): where it ends (-1: it goes on past `buf`; `ROWS_END`: it is the rows element's
    end tag, which nothing else closes there in well-formed XML), its start tag (None for a comment,
    CDATA section or processing instruction), whether that is a row's, and the namespaces in scope
    inside it. An element is read to its end tag, counting the elements of its name inside it: rows
    do not nest, but a row's extension list may hold elements of any vocabulary, a `<row>` too."""
    end = _opaque_end(buf, i)
    if end is not None:
        return end, None, False, scope
    if buf[i + 1 : i + 2] == b"/":
        return (ROWS_END if END_TAG.match(buf, i) else -1), None, False, scope
    if buf[i + 1 : i + 2] == b"!":
        raise _not_well_formed("a declaration among its rows")
    tag = START_TAG.match(buf, i)
    if tag is None:
        if len(buf) - i > MAX_TAG:
            raise _not_well_formed("a tag among its rows that does not end")
        return -1, None, False, scope
    inner = _scope(tag.group(2), scope)
    is_row = _is_main(tag.group(1), b"row", inner)
    stop = tag.end() if tag.group(3) else _element_end(buf, tag.end(), tag.group(1))[0]
    return stop, tag, is_row, inner


_PLAIN_ROWS: dict[bytes, re.Pattern] = {}
HELD_PIECES = 512  # pieces of a sheet's rows `_Rows.stream` holds before it lets them go, joined


def _plain_row(prefix: bytes) -> re.Pattern:
    """A row under `prefix` as every program writes one, read whole by one expression: its start
    tag with its reference first (`<row r="12"`, no space before `>`; group 1 its attributes, 2
    its number), its content (group 3) without a comment, CDATA section, processing instruction
    or declaration (`<!`, `<?`), anything that begins like its end tag (`</row x>` is no end
    tag: the token reader refuses the part) or like a row's start tag (rows do not nest, but an
    extension list in a row may hold a `<row>` of another vocabulary: read token by token), and
    its end tag.
    What it matches is the row `_Rows.stream` reads token by token: the same attributes, content
    and end; a row it does not match is read so. A row with a namespace declaration is not
    plain (its caller looks)."""
    if prefix not in _PLAIN_ROWS:
        name = re.escape(prefix + b"row")
        attrs = rb"""(\s+r="([0-9]+)"(?:\s+[^\s<>/="']+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)"""
        content = rb"([^<]*(?:<(?![!?]|/?" + name + rb"[\s/>])[^<]*)*)"
        _PLAIN_ROWS[prefix] = re.compile(rb"<" + name + attrs + rb">" + content + rb"</" + name + rb"\s*>")
    return _PLAIN_ROWS[prefix]


class _Rows:
    """The rows of a sheet rewritten in order, as they are read (see rewrite_rows)."""

    def __init__(self, tails, styles: dict[int, dict], changes: Changes, found: _RowsElement):
        self.tails, self.styles, self.changes = tails, styles, changes
        self.every = changes.every_row
        self.wanted = sorted(set(tails) | set(styles))
        self.w, self.number, self.seen = 0, 0, False
        self.scope = found.scope
        self.prefix = found.qname[: -len(b"sheetData")]  # the prefix of the rows the tool adds
        # rows spelled under the rows element's own prefix, which names a row there, are read by one
        # expression each (`_plain_row`); any other spelling token by token
        self.plain = _plain_row(self.prefix) if _is_main(self.prefix + b"row", b"row", self.scope) else None

    def _tail(self, n: int, prefix: bytes) -> bytes:
        tail = self.tails.get(n, b"")
        return TOOL_TAG.sub(b"<\\1" + prefix, tail) if prefix and tail else tail

    def made(self, n: int) -> bytes | None:
        """A row the sheet lacks."""
        qname = self.prefix + b"row"
        return _row(n, qname, f' r="{n}"'.encode(), b"", self.styles.get(n, {}), self._tail(n, self.prefix), self.changes, self.scope)

    def stream(self, part: _Part) -> Iterator[bytes]:
        """The rows of `part.buf` (which starts inside the rows element) and of the chunks after
        it, changed, up to the rows element's end tag: `part.buf` then starts at that tag. What
        goes out is held and let go of a few hundred pieces at a time (`HELD_PIECES`), the same
        bytes in order."""
        buf, pos, at = part.buf, 0, 0
        wanted, plain, held = self.wanted, self.plain, []
        while True:
            if len(held) >= HELD_PIECES:
                yield b"".join(held)
                held = []
            i = buf.find(b"<", pos)
            m = plain.match(buf, i) if plain is not None and i >= 0 else None
            if m is not None and b"xmlns" not in m.group(1):  # a plain row, read whole: as read below, token by token
                number, stop, attrs = int(m.group(2)), m.end(), m.group(1)
                qname, scope = self.prefix + b"row", self.scope
                pos = stop
            else:
                m, tag, stop = None, None, -1
                if i < 0:
                    i = len(buf)
                elif len(buf) - i >= LONGEST_OPENER or part.eof:
                    stop, tag, is_row, scope = _markup_at(buf, i, self.scope)
                    if stop == ROWS_END:
                        held.append(buf[at:i])
                        yield b"".join(held)
                        part.buf = buf[i:]
                        return
                    if tag is None and stop >= 0:  # a comment, CDATA section or processing instruction between rows
                        pos = stop
                        continue
                if stop < 0:  # the markup at `i` goes on in the next chunk: what was passed goes out first
                    buf, pos, at = _read_on(part, held, buf, at, i)
                    continue
                pos = stop
                if not is_row:  # not a row: copied as it is
                    continue
                qname, attrs = tag.group(1), tag.group(2)
                found = attribute(attrs, b"r")
                number = int(found) if found and found.strip().isdigit() else self.number + 1  # a row without `r` follows the one before
            if self.seen and number <= self.number:
                raise RowsOutOfOrder(
                    f"A sheet of the workbook lists row {number} after row {self.number}; the file format keeps rows in order, "
                    "as Excel and LibreOffice write them. Open the workbook in Excel, save it, and drop it in again."
                )
            self.number, self.seen = number, True
            while self.w < len(wanted) and wanted[self.w] < number:  # rows the sheet lacks, in order
                held += [buf[at:i], self.made(wanted[self.w])]
                at = i
                self.w += 1
            if self.w < len(wanted) and wanted[self.w] == number:
                self.w += 1
            elif not self.every:
                continue
            if m is not None:
                body = m.group(3)
            else:
                body = b"" if tag.group(3) else buf[tag.end() : buf.rindex(b"<", 0, stop)]
            row = _row(
                number, qname, attrs, body, self.styles.get(number, {}), self._tail(number, qname[: -len(b"row")]), self.changes, scope
            )
            if row is not None:
                held += [buf[at:i], row]
                at = stop

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
    own additions taken out). `head` and `tail` replace what comes before the rows element and
    after its end."""
    yield from rewrite_stream([part], tails, styles, changes, head, tail)


def rewrite_stream(
    chunks,
    tails,
    styles: dict[int, dict],
    changes: Changes | None = None,
    head: bytes | None = None,
    tail: bytes | None = None,
    where: str | None = None,
) -> Iterator[bytes]:
    """`rewrite_rows` of a sheet part read in chunks of bytes (the part is never whole in memory).
    `where` names the sheet in a refusal ("The sheet 'Transfers'")."""
    try:
        yield from _rewritten(chunks, tails, styles, changes, head, tail)
    except Refused as err:
        raise _named(err, where) from None


def _rewritten(chunks, tails, styles: dict[int, dict], changes: Changes | None, head: bytes | None, tail: bytes | None) -> Iterator[bytes]:
    changes = changes or Changes(styles)
    changes.styles = styles
    part = _Part(chunks)
    found = _rows_element(part)
    rows = _Rows(tails, styles, changes, found)
    opening = b"<" + found.qname + found.attrs + b">"
    yield (part.buf[: found.start] if head is None else head) + opening
    if found.empty:
        yield from rows.rest()
        yield b"</" + found.qname + b">" + (part.buf[found.end :] + b"".join(part.chunks) if tail is None else tail)
        return
    part.buf = part.buf[found.end :]
    yield from rows.stream(part)
    yield from rows.rest()
    closing = END_TAG.match(part.buf)
    yield part.buf[: closing.end()] + (part.buf[closing.end() :] + b"".join(part.chunks) if tail is None else tail)


# -- a sheet's rows cut into blocks (a large sheet read a block at a time, batch.workbook.blocks) --


@dataclass
class RowBlocks:
    """A sheet part cut into blocks of rows, read in chunks: `head`, the part up to the rows
    element's start tag, and `close`, the end tags of the rows element and of every element
    around it, make a sheet part of each block (`head`, the block's pieces, `close`); `blocks`
    yields each block's rows as they are written, in pieces, in the part's order; `tail` is what
    follows them (the merged ranges, ...)."""

    head: bytes
    close: bytes
    blocks: Iterator[list[bytes]]
    tail: bytes = b""  # the part from the rows element's end tag on, once `blocks` has given every block


def row_blocks(chunks, rows: int, where: str | None = None) -> RowBlocks:
    """The rows of a sheet part read in chunks, `rows` rows a block, each as it is written; a
    comment or processing instruction between rows goes with the rows around it, and any other
    element there raises `NotByBlocks` (see `_cut`). A row without its number (`r`) is numbered by
    the row before it, so one that would begin a block raises `NotByBlocks` too. A part that is not
    well formed raises as the writer's reader does (`rewrite_stream`), `where` naming the sheet.
    The order of the rows is not checked here (see `batch.workbook.blocks`)."""
    try:
        part = _Part(chunks)
        around: list[bytes] = []  # the elements open at the rows element, outermost first
        for tag, scope, depth in _head_tags(part):  # the last is the rows element's
            del around[depth:]
            around.append(tag.group(1))
            last = tag, scope
        tag, scope = last
        found = _RowsElement(tag.start(), tag.end(), bool(tag.group(3)), tag.group(1), tag.group(2), scope)
    except Refused as err:
        raise _named(err, where) from None
    close = b"".join(b"</" + q + b">" for q in reversed(around))
    head = part.buf[: found.start] + b"<" + found.qname + found.attrs + b">"
    if found.empty:
        return RowBlocks(head, close, iter(()), part.buf[found.end :] + b"".join(part.chunks))
    part.buf = part.buf[found.end :]

    def blocks() -> Iterator[list[bytes]]:
        try:
            yield from _cut(part, found, rows)
        except Refused as err:
            raise _named(err, where) from None
        cut.tail = part.buf + b"".join(part.chunks)

    cut = RowBlocks(head, close, blocks())
    return cut


_PLAIN_ENDS: dict[bytes, tuple[bytes, bytes, re.Pattern, re.Pattern]] = {}


def _plain_ends(buf: bytes, pos: int, prefix: bytes) -> list[int] | None:
    """The ends of the rows under `prefix` in `buf` from `pos` (where a row, or the rows element's
    end, starts) up to the last `</row>` in it, when nothing in that run is markup but rows and
    what they hold (no comment, CDATA section, processing instruction, extension list or anything
    named `sheetData`): rows do
    not nest, and a `<` in a cell's text is written `&lt;`, so each end found is a row's end and
    each row's end is found. None when the run holds other markup, or no row ends in `buf`: the
    rows are then read token by token."""
    if prefix not in _PLAIN_ENDS:
        name = re.escape(prefix + b"row")
        _PLAIN_ENDS[prefix] = (
            b"<" + prefix + b"row",
            b"</" + prefix + b"row>",
            re.compile(rb"</" + name + rb">"),
            re.compile(rb"</" + name + rb"\s*>|<" + name + rb"\b[^<>]*/>"),
        )
    start, end_tag, plain_end, any_end = _PLAIN_ENDS[prefix]
    stop = buf.rfind(end_tag, pos)
    if stop < 0:
        return None
    stop += len(end_tag)
    for rare, mark in ((b"!", b"<!"), (b"?", b"<?")):  # a character rare in cells first, then the markup
        if buf.find(rare, pos, stop) >= 0 and buf.find(mark, pos, stop) >= 0:
            return None
    for mark in (b"extLst", b"sheetData"):
        if buf.find(mark, pos, stop) >= 0:
            return None
    rows = buf.count(start, pos, stop)
    ends = [m.end() for m in plain_end.finditer(buf, pos, stop)]
    if len(ends) != rows:  # an end tag with a space, a row written `<row .../>`: the full expression
        ends = [m.end() for m in any_end.finditer(buf, pos, stop)]
    return ends if len(ends) == rows else None


def _numbered(buf: bytes, at: int) -> None:
    """The first tag from `at`, first in its block, is a row's with its number (`r`): a row without
    one is numbered by the row before it, which its block does not hold (and so is a cell without
    a reference outside any row)."""
    tag = START_TAG.match(buf, buf.find(b"<", at))
    given = attribute(tag.group(2), b"r") if tag and tag.group(1).rpartition(b":")[2] == b"row" else None
    if not (given and given.strip().isdigit()):
        raise NotByBlocks("a block would begin with something other than a numbered row")


class NotByBlocks(Exception):
    """A sheet part that calamine would not read by blocks as it reads it whole."""


def _cut(part: _Part, found: _RowsElement, rows: int) -> Iterator[list[bytes]]:
    """`row_blocks`' blocks: the rows of `part.buf` (which starts inside the rows element) and of
    the chunks after it, up to the rows element's end tag. Runs of rows and their cells are cut
    where their rows end (`_plain_ends`); any other markup is read token by token, as
    `_Rows.stream` reads it. A block's first row must have its number (`_numbered`). Between the
    rows, comments and processing instructions go with the rows around them; any other element
    (which the file format does not allow there, and in whose cells calamine would count rows on
    from the row before), or an element named `sheetData` within a row (at whose end tag calamine
    stops reading the rows), raises `NotByBlocks`."""
    prefix = found.qname[: -len(b"sheetData")]
    plain = _is_main(prefix + b"row", b"row", found.scope)
    buf, pos, at = part.buf, 0, 0
    held: list[bytes] = []  # the block's pieces
    count = 0
    while True:
        ends = _plain_ends(buf, pos, prefix) if plain else None
        if ends is not None:
            if not count:
                _numbered(buf, pos)
            while count + len(ends) >= rows:  # the block fills in this run (count < rows): cut after its last row
                cut = ends[rows - count - 1]
                held.append(buf[at:cut])
                yield held
                held, at, count, ends = [], cut, 0, ends[rows - count :]
                if ends:
                    _numbered(buf, cut)
            count += len(ends)
            pos = ends[-1] if ends else at
            continue
        i = buf.find(b"<", pos)
        tag, stop = None, -1
        if i < 0:
            i = len(buf)
        elif len(buf) - i >= LONGEST_OPENER or part.eof:
            stop, tag, is_row, _scope_in = _markup_at(buf, i, found.scope)
            if stop == ROWS_END:
                held.append(buf[at:i])
                if count:
                    yield held
                part.buf = buf[i:]
                return
            if tag is None and stop >= 0:  # a comment, CDATA section or processing instruction
                pos = stop
                continue
        if stop < 0:  # the markup at `i` goes on in the next chunk
            buf, pos, at = _read_on(part, held, buf, at, i)
            continue
        if not is_row:  # the rows element holds rows only: calamine would read this one's cells by its own count
            raise NotByBlocks(f"an element other than a row among the rows ({tag.group(1).decode(errors='replace')})")
        if buf.find(b"sheetData", i, stop) >= 0:  # calamine's read of the rows ends at any end tag of that name
            raise NotByBlocks("a row holds an element named sheetData")
        pos = stop
        if not count:
            _numbered(buf, i)
        count += 1
        if count == rows:  # the block is full
            held.append(buf[at:stop])
            yield held
            held, at, count = [], stop, 0
