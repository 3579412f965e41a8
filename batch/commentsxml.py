"""The tool's notes merged into a sheet's legacy comments part (`xl/commentsN.xml`), and taken out.

A cell the user already commented keeps the user's comment; the tool's note is added below it,
after a fixed marker line, as a run of its own. A cell without a comment gets one holding the
marker and the note, by the author `njcredits`. On a round trip `stripped` cuts every comment at
the marker and drops the comments that held only the tool's note, so the user's text comes back
as it was. Texts go through the cell encoder's escaping (`batch.cells.text`).

Part of annotating a workbook in place; the comment boxes of the drawing (VML) that go with
new comments are made by `batch.inplace`.
"""

from __future__ import annotations

import re

import numpy as np

from batch import cells

MARKER = "--- njcredits ---"  # the line above the tool's note in a comment
AUTHOR = "njcredits"
NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
COMMENT = re.compile(rb"<comment\b([^>]*?)>(.*?)</comment>", re.S)
REF = re.compile(rb'\bref="([^"]+)"')
TEXT = re.compile(rb"<text>(.*?)</text>", re.S)
PLAIN = re.compile(rb"^\s*<t\b([^>]*)>(.*?)</t>\s*$", re.S)
AUTHORS = re.compile(rb"<authors>(.*?)</authors>|<authors/>", re.S)
AUTHOR_NAME = re.compile(rb"<author>(.*?)</author>|<author/>", re.S)
COMMENT_LIST_END = b"</commentList>"
BLOCK = 5_000  # new comments made at a time
RUN = re.compile(rb"<r\b[^>]*>.*?</r>", re.S)
T_TEXT = re.compile(rb"(<t\b[^>]*>)(.*?)</t>", re.S)
PHONETIC = re.compile(rb"<rPh\b.*?</rPh>|<phoneticPr\b[^>]*/>", re.S)  # a comment's phonetic guide: after its text and runs
EMPTY = (
    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<comments xmlns="{NS}"><authors></authors>'
    "<commentList></commentList></comments>"
).encode()


def _run(text: str) -> bytes:
    body = cells.text(np.array([text], dtype=object))[0][0]
    return b'<r><t xml:space="preserve">' + body.encode("utf-8") + b"</t></r>"


def _author_id(part: bytes) -> tuple[bytes, int]:
    """The part with the tool's author present, and its index."""
    m = AUTHORS.search(part)
    names = [a.group(1) or b"" for a in AUTHOR_NAME.finditer(m.group(1) or b"")] if m else []
    if AUTHOR.encode() in names:
        return part, names.index(AUTHOR.encode())
    authors = (
        b"<authors>" + b"".join(b"<author>" + n + b"</author>" for n in names) + b"<author>" + AUTHOR.encode() + b"</author></authors>"
    )
    return part[: m.start()] + authors + part[m.end() :], len(names)


def merged_chunks(part: bytes | None, notes: dict[str, str]):
    """`merged`, in chunks of bytes (a part of many comments is never whole in memory)."""
    part, author = _author_id(part or EMPTY)
    pending = dict(notes)

    def add(m: re.Match) -> bytes:
        ref = REF.search(m.group(1))
        note = pending.pop(ref.group(1).decode(), None) if ref else None
        if note is None:
            return m.group(0)
        body = m.group(2)
        text = TEXT.search(body)
        inner = text.group(1)
        plain = PLAIN.match(inner)
        if plain:  # a comment of one plain text becomes a run, so the note can follow as another
            inner = b"<r><t" + plain.group(1) + b">" + plain.group(2) + b"</t></r>"
        at = PHONETIC.search(inner)  # the note's run goes after the text and runs, before a phonetic guide
        at = at.start() if at else len(inner)
        inner = inner[:at] + _run(f"\n{MARKER}\n{note}") + inner[at:]
        return b"<comment" + m.group(1) + b">" + body[: text.start()] + b"<text>" + inner + b"</text>" + body[text.end() :] + b"</comment>"

    part = COMMENT.sub(add, part)
    at = part.rindex(COMMENT_LIST_END)
    yield part[:at]
    refs, texts = list(pending), list(pending.values())
    for start in range(0, len(refs), BLOCK):  # the comments of cells without one, a block at a time
        bodies = cells.text(np.array([f"{MARKER}\n{t}" for t in texts[start : start + BLOCK]], dtype=object))[0]
        yield "".join(
            f'<comment ref="{ref}" authorId="{author}"><text><r><t xml:space="preserve">{body}</t></r></text></comment>'
            for ref, body in zip(refs[start : start + BLOCK], bodies.tolist(), strict=True)
        ).encode("utf-8")
    yield part[at:]


def merged(part: bytes | None, notes: dict[str, str]) -> bytes:
    """The comments part with each note (cell reference -> text) below the cell's own comment,
    after the marker line, or in a new comment of the tool's."""
    return b"".join(merged_chunks(part, notes))


def stripped(part: bytes) -> bytes | None:
    """The comments part without the tool's notes: each comment cut at the marker line, and the
    comments that held only a note of the tool's dropped. None when no comment is left."""
    marker = MARKER.encode()

    def cut(m: re.Match) -> bytes:
        body = m.group(2)
        if marker not in body:
            return m.group(0)
        text = TEXT.search(body)
        inner = text.group(1)
        # the note is a run of its own as the tool writes it; a program that saved the workbook
        # may have joined the runs, so the run (or the comment's plain text) holding the marker is
        # cut there, and the runs after it go; phonetic runs of the user's stay
        hit = next((r for r in RUN.finditer(inner) if marker in r.group(0)), None)
        if hit is None:
            hit = next(t for t in T_TEXT.finditer(inner) if marker in t.group(2))
        piece = hit.group(0)
        t = next(t for t in T_TEXT.finditer(piece) if marker in t.group(2))
        before = re.sub(rb"(?:\r|\n|&#10;|&#13;|&#xA;|&#xa;|&#xD;|&#xd;)+$", b"", t.group(2)[: t.group(2).index(marker)])
        piece = piece[: t.start(2)] + before + piece[t.end(2) :] if before else b""
        inner = inner[: hit.start()] + piece + RUN.sub(b"", inner[hit.end() :])
        if not b"".join(x.group(2) for x in T_TEXT.finditer(PHONETIC.sub(b"", inner))).strip():
            return b""
        return b"<comment" + m.group(1) + b">" + body[: text.start()] + b"<text>" + inner + b"</text>" + body[text.end() :] + b"</comment>"

    part = COMMENT.sub(cut, part)
    return part if COMMENT.search(part) else None
