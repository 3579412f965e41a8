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
