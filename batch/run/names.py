"""File names: the output-name rule, names that fit the filesystem, names shown to people.

Any name the filesystem allows works: a name too long once suffixed is shortened to the limit (the
stem cut, a short hash of the full name added, so two long names never meet); a name that is not
valid UTF-8 is kept as it is on disk (Python holds its bytes as surrogate escapes) and shown, in
messages and the ledger, with backslash escapes.

Whatever came from a file, a workbook or the ledger is printed through `printable`: plain text,
control characters shown as escapes, so a name or a note can never act on the terminal (clear it,
make a link) nor break a fixed-form line in two.
"""

from __future__ import annotations

import hashlib
import os
import re

NAME_MAX = 255  # bytes in one file name (Linux filesystems)
OUTPUT_SUFFIX = ".annotated.xlsx"


def size(name: str) -> int:
    """Bytes the name takes on disk."""
    return len(os.fsencode(name))


def shown(name: str) -> str:
    """The name as text for people and the ledger: bytes that are not UTF-8 as escapes (\\xe9)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


# C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    c = match.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) <= 0xFF else f"\\u{ord(c):04x}")


def printable(text) -> str:
    """`text` as it may be printed: bytes that are not UTF-8 as escapes (as `shown`), and every
    control character (C0, DEL, C1, U+2028/U+2029) as an escape (`\\x1b`, `\\n`, `\\u2028`), so the
    result is one line that does nothing to a terminal. Markup is not this function's business:
    print the result as text (`click.echo`, or a `rich.text.Text`), never as markup."""
    if text is None:
        return ""
    try:
        raw = str(text).encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
        raw = str(text).encode("utf-8", "backslashreplace")
    return _CONTROL.sub(_escape, raw.decode("utf-8", "backslashreplace"))


def fit(name: str, limit: int = NAME_MAX, keep: str = "") -> str:
    """`name` when it fits in `limit` bytes; else its start cut to fit, then `~` and eight hex digits
    of the full name's hash, then `keep` (a suffix kept whole, e.g. `.annotated.xlsx`)."""
    if size(name + keep) <= limit:
        return name + keep
    tag = "~" + hashlib.sha256(os.fsencode(name + keep)).hexdigest()[:8]
    room = limit - size(tag + keep)
    head = name[: max(room, 0)]
    while size(head) > room:  # cut whole characters (a cut UTF-8 sequence would make a new invalid name)
        head = head[:-1]
    return head + tag + keep


def output_name(name: str) -> str:
    """The returned workbook's name: `NAME.xlsx` and a returned `NAME.annotated.xlsx` give
    `NAME.annotated.xlsx`; any other suffix gives `NAME.SUFFIX.annotated.xlsx` (`a.xlsm` ->
    `a.xlsm.annotated.xlsx`, `a.csv` -> `a.csv.annotated.xlsx`), always; shortened to fit."""
    stem = name
    if stem.lower().endswith(OUTPUT_SUFFIX):
        stem = stem[: -len(OUTPUT_SUFFIX)]
    elif stem.lower().endswith(".xlsx"):
        stem = stem[: -len(".xlsx")]
    return fit(stem, keep=OUTPUT_SUFFIX)


def temporary(name: str, run_id: str, kind: str = "partial") -> str:
    """A temporary name owned by one run: hidden, the run id in it, never longer than the limit even
    with the writers' own temporary suffixes added after it (`.<pid>.partial`, `.splice`)."""
    keep = f".{run_id}.{kind}"
    return "." + fit(name, limit=NAME_MAX - 40 - size(keep) - 1, keep=keep)
