"""A workbook package (the zip of parts) as the tool copies it: part by part, bytes as they are.

Holds what annotating a workbook in place does to the package as a whole (with
`batch.sheetrows` for the rows and `batch.stylesxml` for the style table):
- `without_macros`: an `.xlsm` comes back as an `.xlsx` without its VBA project (and its
  signatures), its main part declared a plain workbook, and every relationship to a removed part
  dropped. ActiveX controls are copied as they are: they are referenced from the sheets
  themselves, and hold control settings rather than code.
"""

from __future__ import annotations

import posixpath
import re

MACRO_MAIN = b"application/vnd.ms-excel.sheet.macroEnabled.main+xml"
PLAIN_MAIN = b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
# parts that are code: the VBA project and its signatures
EXECUTABLE = re.compile(r"^xl/(vbaProject\.bin|vbaProjectSignature[A-Za-z]*\.bin)$")
RELATIONSHIP = re.compile(rb"<Relationship\b[^>]*?/>")
TARGET = re.compile(rb'\bTarget="([^"]*)"')
OVERRIDE = re.compile(rb"<Override\b[^>]*?/>")
PART_NAME = re.compile(rb'\bPartName="([^"]*)"')


def _rels_source(rels: str) -> str:
    """The folder a relationships part's targets are relative to (`xl/_rels/workbook.xml.rels` -> `xl`)."""
    return posixpath.dirname(posixpath.dirname(rels))


def _drop_relationships(data: bytes, rels: str, removed: set[str]) -> bytes:
    base = _rels_source(rels)

    def keep(m: re.Match) -> bytes:
        target = TARGET.search(m.group(0))
        if target is None or b'TargetMode="External"' in m.group(0):
            return m.group(0)
        path = target.group(1).decode()
        resolved = path.lstrip("/") if path.startswith("/") else posixpath.normpath(posixpath.join(base, path))
        return b"" if resolved in removed else m.group(0)

    return RELATIONSHIP.sub(keep, data)


def without_macros(parts: dict[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    """The package with no executable content, and the names of the parts removed."""
    removed = {name for name in parts if EXECUTABLE.match(name)}
    out = {}
    for name, data in parts.items():
        if name in removed:
            continue
        if name == "[Content_Types].xml":
            data = data.replace(MACRO_MAIN, PLAIN_MAIN)
            data = OVERRIDE.sub(
                lambda m: b"" if PART_NAME.search(m.group(0)).group(1).decode().lstrip("/") in removed else m.group(0), data
            )
        elif name.endswith(".rels"):
            data = _drop_relationships(data, name, removed)
        out[name] = data
    return out, sorted(removed)
