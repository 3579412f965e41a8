"""What a command prints: lines that a closed output never stops (`Terminal`).

A run's output read by `head -1`, or a terminal closed while it runs, is the reader's choice: the run
goes on, records everything, and exits as it would have. The first write that finds its output
closed (EPIPE, or EIO/ENXIO of a terminal that hung up) points that stream at /dev/null, so nothing
later (the next line, the interpreter's flush at exit) meets the closed output again.
"""

from __future__ import annotations

import errno
import os
import sys

import click

CLOSED = (errno.EPIPE, errno.EIO, errno.ENXIO, errno.ECONNRESET)


def closed_output(err: BaseException) -> bool:
    """Whether `err` is a write that found its output closed (a pipe's reader gone, a terminal hung up)."""
    return isinstance(err, BrokenPipeError) or (isinstance(err, OSError) and err.errno in CLOSED)


def silence(stream) -> None:
    """Point a standard stream whose reader is gone at /dev/null (its descriptor too, so the pending
    buffer and the interpreter's flush at exit go nowhere instead of failing)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


class Terminal:
    """`echo` as click's, on stdout or stderr, except that a closed output is noted (`closed`) and
    the stream silenced, never raised: what the command does and its exit status stay as they were."""

    def __init__(self):
        self.closed: set[str] = set()

    def echo(self, message="", err: bool = False, nl: bool = True) -> None:
        name = "stderr" if err else "stdout"
        if name in self.closed:
            return
        stream = sys.stderr if err else sys.stdout
        try:
            click.echo(message, err=err, nl=nl)
            stream.flush()
        except OSError as exc:
            if not closed_output(exc):
                raise
            self.closed.add(name)
            silence(stream)


def width() -> int | None:
    """The width lines are wrapped to: the terminal's (or COLUMNS), None (no wrapping) for a file or a pipe."""
    import shutil

    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return shutil.get_terminal_size((80, 24)).columns
    return None


def wrapped(text: str, at: int | None, indent: str = "", more: str | None = None) -> list[str]:
    """`text` as lines of at most `at` characters (None: one line), the first after `indent`, the
    others after `more` (default: `indent`). Words are never split: a file name or a path longer than
    the line stands alone on its line, whole."""
    import textwrap

    more = indent if more is None else more
    if at is None:
        return [indent + text]
    return textwrap.wrap(
        text, max(at, len(indent) + 20), initial_indent=indent, subsequent_indent=more, break_long_words=False, break_on_hyphens=False
    ) or [indent.rstrip()]


def aligned(rows: list[list[str]]) -> list[str]:
    """Rows of short fields as lines, each field but the last padded to its column's width."""
    if not rows:
        return []
    sizes = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join([*(f.ljust(s) for f, s in zip(r, sizes, strict=False)), r[-1]]).rstrip() for r in rows]


def blocks(title: str, entries: list[tuple[list[str], list[tuple[str, str]]]], at: int | None, whole: tuple[str, ...] = ()) -> list[str]:
    """Entries of a listing as blocks readable at any width: each entry's head (its short fields, in
    aligned columns) on one line, then each of its details (label, text) on its own lines, indented
    and wrapped; an empty detail is left out. The details labelled in `whole` (paths) are never
    wrapped: too long for the line after their label, they stand alone on the next. `title` first."""
    lines = [*wrapped(title, at)]
    heads = aligned([head for head, _ in entries])
    for head, (_fields, details) in zip(heads, entries, strict=True):
        lines += wrapped(head, at, "", "    ")  # a head too long for the line goes on at its spaces, codes whole
        for label, text in details:
            if text in ("", None):
                continue
            if label in whole:
                said = f"    {label}: {text}"
                lines += [said] if at is None or len(said) <= at else [f"    {label}:", f"      {text}"]
                continue
            lines += wrapped(f"{label}: {text}" if label else str(text), at, "    ", "      " if label else "    ")
    return lines
