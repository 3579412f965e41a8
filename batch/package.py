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
VBA_TYPE = b"/relationships/vbaProject"


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


def executable_parts(parts) -> set[str]:
    """The parts that are code: the VBA project (by name, or wherever the workbook's relationship
    of type vbaProject points) and its signatures (its own relationships)."""
    found = {name for name in parts if EXECUTABLE.match(name)}
    rels = parts.get("xl/_rels/workbook.xml.rels") or b""
    for m in RELATIONSHIP.finditer(rels):
        if m.group(0).find(VBA_TYPE) >= 0 and b'TargetMode="External"' not in m.group(0):
            target = TARGET.search(m.group(0)).group(1).decode()
            found.add(target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target)))
    for name in list(found):
        folder, base = posixpath.split(name)
        own = parts.get(posixpath.join(folder, "_rels", base + ".rels")) or b""
        for m in RELATIONSHIP.finditer(own):
            target = TARGET.search(m.group(0))
            if target and b'TargetMode="External"' not in m.group(0):
                path = target.group(1).decode()
                found.add(path.lstrip("/") if path.startswith("/") else posixpath.normpath(posixpath.join(folder, path)))
    return {name for name in found if name in parts}


def remove_macros(parts) -> list[str]:
    """Remove every executable part from the package (a mapping of part names to bytes, changed
    in place), with its relationships and content types, and declare the workbook plain (an
    .xlsm's main part type in an .xlsx makes Excel refuse it); returns the names removed."""
    removed = executable_parts(parts)
    for name in removed:
        folder, base = posixpath.split(name)
        parts.pop(posixpath.join(folder, "_rels", base + ".rels"), None)
        del parts[name]
    types = parts["[Content_Types].xml"].replace(MACRO_MAIN, PLAIN_MAIN)
    if removed:
        types = OVERRIDE.sub(lambda m: b"" if PART_NAME.search(m.group(0)).group(1).decode().lstrip("/") in removed else m.group(0), types)
        for name in [n for n in parts if n.endswith(".rels")]:
            parts[name] = _drop_relationships(parts[name], name, removed)
    parts["[Content_Types].xml"] = types
    return sorted(removed)


def without_macros(parts: dict[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    """The package with no executable content, and the names of the parts removed."""
    out = dict(parts)
    return out, remove_macros(out)
