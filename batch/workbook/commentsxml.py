"""The tool's notes merged into a sheet's legacy comments part (`xl/commentsN.xml`), and taken out.

The part is read as XML (`batch.workbook.xmlparts`), whatever its producer wrote: the SpreadsheetML
namespace of Transitional or Strict Open XML, with or without a prefix, any quoting, plain text
or rich text runs. A cell the user already commented keeps the user's comment; the tool's note
is added below it as a run of its own (a comment of one plain text becomes a run first), before
a phonetic guide if the comment has one. A cell without a comment gets one by the author
`njcredits`. New elements are written in the part's own namespace and prefix.

Where the tool's note is, exactly: it is the text from the line `--- njcredits ---` (the
separator) to the line `--- end njcredits ---` (the closing line), both included, as `note`
writes it. Both are whole lines of text, so they survive every way a program saves a comment
(Excel and LibreOffice split, join or reformat runs, write line breaks as characters or as
`&#10;`, `\\r\\n` or `_x000D_`); the note is found in the comment's text as one string, whatever
runs carry it, and cut out character by character across the runs. Everything else is the
user's: the comment above the separator, and whatever a reviewer typed after the closing line
(on its line or below it) stays on a round trip. A note without a closing line (a workbook
returned before the tool wrote one, or a closing line deleted by hand) ends at its last line
written as the tool writes a finding (`CODE (severity): message [citation]`, paragraphs
separated by blank lines); the first other line is the reviewer's. Text a reviewer types between
the separator and the closing line is taken for the tool's. A comment left without text once
the tool's notes are out is dropped (its box in the drawing too, `batch.workbook.inplace`).

Texts go through the cell encoder's escaping (`batch.workbook.cells.text`). A part of many new comments
is written in chunks (`merged_chunks`): the user's part is parsed (it is small), the new
comments are streamed in after its last comment, a block at a time.

Part of annotating a workbook in place; the comment boxes of the drawing (VML) that go with
new comments are made by `batch.workbook.inplace`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from xml.sax.saxutils import unescape

import numpy as np
from lxml import etree

from batch.workbook import cells, sheetrows, xmlparts

MARKER = "--- njcredits ---"  # the line above the tool's note in a comment
END = "--- end njcredits ---"  # the line below it
AUTHOR = "njcredits"
NS = xmlparts.MAIN
STRICT = xmlparts.MAIN_STRICT
MAIN = (NS, STRICT)
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
BLOCK = 5_000  # new comments made at a time
PLACE = "njcredits-new-comments"  # where the new comments are streamed in (a processing instruction, replaced)
NAME = "the comments part"
# a line of the tool's note as it writes a finding: `CODE (severity): message [citation]`
NOTE_LINE = re.compile(r"^[A-Z][A-Z0-9_]* \((?:error|warning|info)\): ")
LINE = re.compile(r"[^\r\n]*?(?:_x000D_)?(?:\r\n|\n|\r|$)")


def empty(namespace: str = NS) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<comments xmlns="{namespace}"><authors></authors>'
        "<commentList></commentList></comments>"
    ).encode()


EMPTY = empty()


def note(text: str) -> str:
    """The tool's note as it stands in a comment: the separator, the text, the closing line."""
    return f"{MARKER}\n{text}\n{END}"


def _escaped(text: str) -> str:
    """The text with the cell encoder's `_xHHHH_` escapes (control characters), not XML-escaped."""
    return unescape(cells.text(np.array([text], dtype=object))[0][0])


def _tag(ns: str, name: str) -> str:
    return f"{{{ns}}}{name}"


def _read(part: bytes, name: str) -> tuple[etree._ElementTree, etree._Element, str]:
    tree = xmlparts.parse(part, name).getroottree()
    root = tree.getroot()
    return tree, root, etree.QName(root).namespace or NS


def refs(part: bytes | None, name: str = NAME) -> set[str]:
    """The cells the part's comments are on."""
    if part is None:
        return set()
    _tree, root, ns = _read(part, name)
    return {c.get("ref") for c in root.iter(_tag(ns, "comment")) if c.get("ref")}


def _author_id(root, ns: str) -> int:
    """The index of the tool's author, added to the part's authors when missing."""
    authors = root.find(_tag(ns, "authors"))
    if authors is None:
        authors = etree.Element(_tag(ns, "authors"))
        root.insert(0, authors)
    names = [a for a in authors if a.tag == _tag(ns, "author")]
    for i, a in enumerate(names):
        if (a.text or "") == AUTHOR:
            return i
    author = etree.Element(_tag(ns, "author"))
    author.text = AUTHOR
    if names:
        names[-1].addnext(author)
        author.tail = None
    else:
        authors.append(author)
    return len(names)


def _texts(text) -> list:
    """The `<t>` elements that hold a comment's text, in order (a phonetic guide's are not its text)."""
    ns = etree.QName(text).namespace
    out = []
    for child in text:
        if child.tag == _tag(ns, "t"):
            out.append(child)
        elif child.tag == _tag(ns, "r"):
            out += [t for t in child if t.tag == _tag(ns, "t")]
    return out


def _set_text(t, value: str) -> None:
    t.text = value
    if value[:1].isspace() or value[-1:].isspace():
        t.set(XML_SPACE, "preserve")


def _run(ns: str, text: str):
    run = etree.Element(_tag(ns, "r"))
    t = etree.SubElement(run, _tag(ns, "t"))
    t.set(XML_SPACE, "preserve")
    t.text = _escaped(text)
    return run


def _add_note(comment, ns: str, text: str) -> None:
    body = comment.find(_tag(ns, "text"))
    if body is None:
        body = etree.Element(_tag(ns, "text"))
        comment.insert(0, body)
    for t in [c for c in body if c.tag == _tag(ns, "t")]:  # a comment of plain text becomes a run, so the note can follow as another
        run = etree.Element(_tag(ns, "r"))
        t.addprevious(run)
        run.tail, t.tail = t.tail, None
        run.append(t)
    before = "".join(t.text or "" for t in _texts(body))
    run = _run(ns, ("\n" if before and not before.endswith(("\n", "\r")) else "") + note(text))
    guide = next((c for c in body if etree.QName(c).localname in ("rPh", "phoneticPr")), None)
    if guide is not None:  # the note's run goes after the text and runs, before a phonetic guide
        guide.addprevious(run)
    else:
        body.append(run)
    run.tail = None


class Notes(Mapping):
    """Cell reference -> note text, for the cells at `rows` (Excel's, from 1) and `cols` (from 0), in
    that order, whose texts `texts(start, stop)` makes for the cells `start:stop`: the part is
    written a block of notes at a time (`merged_chunks`), and no text is held for every cell."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, texts: Callable[[int, int], np.ndarray]):
        self.rows, self.cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        self._texts = texts
        self._letters = np.array([cells.column_letters(j) for j in range(int(self.cols.max(initial=-1)) + 1)], dtype=object)
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None

    def refs(self, start: int, stop: int) -> list[str]:
        return (self._letters[self.cols[start:stop]] + self.rows[start:stop].astype(str).astype(object)).tolist()

    def blocks(self, size: int = BLOCK) -> Iterator[tuple[list[str], list[str]]]:
        """(references, texts) of `size` cells at a time, in order."""
        for start in range(0, len(self), size):
            yield self.refs(start, start + size), list(self._texts(start, start + size))

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self), BLOCK):
            yield from self.refs(start, start + BLOCK)

    def __getitem__(self, ref: str) -> str:
        found = REF.fullmatch(ref) if isinstance(ref, str) else None
        if found is None:
            raise KeyError(ref)
        if self._sorted is None:
            keys = self.rows * COLUMNS + self.cols
            order = np.argsort(keys, kind="stable")
            self._sorted = (keys[order], order)
        keys, order = self._sorted
        column = sheetrows.column_number(found.group(1).encode())
        if column >= COLUMNS:  # past XFD: no cell
            raise KeyError(ref)
        key = int(found.group(2)) * COLUMNS + column
        at = int(np.searchsorted(keys, key))
        if at == len(keys) or keys[at] != key:
            raise KeyError(ref)
        i = int(order[at])
        return self._texts(i, i + 1)[0]


REF = re.compile(r"([A-Z]{1,3})([1-9][0-9]{0,6})")  # a cell reference as `Notes` writes one
COLUMNS = 1 << 14  # a row's columns, for a cell's key (row, column) as one number


def _blocks(notes: Mapping[str, str]) -> Iterator[tuple[list[str], list[str]]]:
    """(references, texts) of `BLOCK` notes at a time, in order."""
    if isinstance(notes, Notes):
        yield from notes.blocks(BLOCK)
        return
    refs_, texts = list(notes), list(notes.values())
    for start in range(0, len(refs_), BLOCK):
        yield refs_[start : start + BLOCK], texts[start : start + BLOCK]


def merged_chunks(part: bytes | None, notes: Mapping[str, str], namespace: str = NS, name: str = NAME):
    """`merged`, in chunks of bytes (the comments of many cells are never whole in memory); a new
    part is written in `namespace` (Strict in a Strict package)."""
    source = part if part is not None else empty(namespace)
    tree, root, ns = _read(source, name)
    author = _author_id(root, ns)
    taken = set()  # the cells whose own comment took their note
    for comment in root.iter(_tag(ns, "comment")):
        ref = comment.get("ref")
        text = notes.get(ref) if ref not in taken else None
        if text is not None:
            taken.add(ref)
            _add_note(comment, ns, text)
    listed = root.find(_tag(ns, "commentList"))
    if listed is None:
        listed = etree.Element(_tag(ns, "commentList"))
        root.find(_tag(ns, "authors")).addnext(listed)
    place = etree.ProcessingInstruction(PLACE)
    listed.append(place)
    prefix = f"{listed.prefix}:" if listed.prefix else ""
    data = xmlparts.serialize(tree, source)
    mark = etree.tostring(place)
    at = data.index(mark)
    yield data[:at]
    for refs_, texts in _blocks(notes):  # the comments of cells without one, a block at a time
        if taken:
            kept = [k for k, ref in enumerate(refs_) if ref not in taken]
            refs_, texts = [refs_[k] for k in kept], [texts[k] for k in kept]
        if not refs_:
            continue
        bodies = cells.text(np.array([note(t) for t in texts], dtype=object))[0]
        yield "".join(
            f'<{prefix}comment ref="{ref}" authorId="{author}"><{prefix}text><{prefix}r><{prefix}t xml:space="preserve">{body}'
            f"</{prefix}t></{prefix}r></{prefix}text></{prefix}comment>"
            for ref, body in zip(refs_, bodies.tolist(), strict=True)
        ).encode("utf-8")
    yield data[at + len(mark) :]


def merged(part: bytes | None, notes: dict[str, str], namespace: str = NS, name: str = NAME) -> bytes:
    """The comments part with each note (cell reference -> text) below the cell's own comment,
    after the separator line, or in a new comment of the tool's."""
    return b"".join(merged_chunks(part, notes, namespace, name))


def _lines(text: str) -> list[tuple[int, int, int]]:
    """Each line of `text`: (start, end of its content, start of the next line)."""
    out = []
    for m in LINE.finditer(text):
        if m.start() == len(text) and out:
            break
        content = m.group(0).rstrip("\r\n")
        content = content[: -len("_x000D_")] if content.endswith("_x000D_") else content
        out.append((m.start(), m.start() + len(content), m.end()))
        if m.end() == len(text):
            break
    return out


def notes_in(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each of the tool's notes in a comment's text, with the line break that
    joins it to the text before it (or, at the start of the comment, after it)."""
    lines = _lines(text)

    def line(i: int) -> str:
        return text[lines[i][0] : lines[i][1]].strip()

    spans = []
    i = 0
    while i < len(lines):
        if line(i) != MARKER:
            i += 1
            continue
        end = None
        for k in range(i + 1, len(lines)):
            if line(k) == MARKER:
                break
            if line(k).startswith(END):
                end = k
                break
        if end is not None:  # to the end of the closing line's text; the rest of its line is the reviewer's
            stop = text.index(END, lines[end][0]) + len(END)
            whole_line = line(end) == END
            while not whole_line and text[stop] in " \t":
                stop += 1
        else:  # a note without a closing line: its lines written as the tool writes a finding
            end = i
            for k in range(i + 1, len(lines)):
                if NOTE_LINE.match(line(k)):
                    end = k
                elif line(k):
                    break
            stop, whole_line = lines[end][1], True
        start = lines[i][0]
        if whole_line and i > 0:  # the line break before the separator goes with the note
            start = lines[i - 1][1]
        elif whole_line:  # the note opens the comment: the line break after it goes
            stop = lines[end][2]
        spans.append((start, stop))
        i = end + 1
    return spans


def _cut(body, spans: list[tuple[int, int]]) -> None:
    """Take the character ranges `spans` of a comment's text out of its `<t>` elements; a run left
    without text goes."""
    at = 0
    for t in _texts(body):
        value = t.text or ""
        kept = "".join(ch for k, ch in enumerate(value) if not any(a <= at + k < b for a, b in spans))
        if kept != value:
            if kept:
                _set_text(t, kept)
            else:
                gone = t.getparent() if t.getparent() is not body else t
                gone.getparent().remove(gone)
        at += len(value)


def cut(part: bytes, name: str = NAME) -> tuple[bytes | None, set[str]]:
    """The comments part without the tool's notes, and the cells whose comment went because it
    held only a note of the tool's (None for the part when no comment is left)."""
    tree, root, ns = _read(part, name)
    gone = set()
    changed = False
    for comment in list(root.iter(_tag(ns, "comment"))):
        body = comment.find(_tag(ns, "text"))
        if body is None:
            continue
        spans = notes_in("".join(t.text or "" for t in _texts(body)))
        if not spans:
            continue
        changed = True
        _cut(body, spans)
        if not "".join(t.text or "" for t in _texts(body)).strip():
            gone.add(comment.get("ref"))
            comment.getparent().remove(comment)
    if not changed:
        return part, gone
    if next(root.iter(_tag(ns, "comment")), None) is None:
        return None, gone
    return xmlparts.serialize(tree, part), gone


def stripped(part: bytes) -> bytes | None:
    """The comments part without the tool's notes (None when no comment is left)."""
    return cut(part)[0]
