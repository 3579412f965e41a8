"""The parts of a workbook package and the links between them, edited as bytes.

A package is a zip of parts; `[Content_Types].xml` gives each part's type, and each part's
relationships (`dir/_rels/name.rels`) name the parts it refers to. The tool adds parts (its
sheets, a comments part) and removes its own on a round trip; every other part is left as it is.
"""

from __future__ import annotations

import html
import posixpath
import re
import zipfile
from pathlib import Path

CONTENT_TYPES = "[Content_Types].xml"
WORKBOOK = "xl/workbook.xml"
REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
RELATIONSHIP = re.compile(rb"<Relationship\b[^>]*?/>")
OVERRIDE = re.compile(rb"<Override\b[^>]*?/>")
DEFAULT = re.compile(rb"<Default\b[^>]*?/>")
SHEET = re.compile(rb"<sheet\b[^>]*?(?:/>|>\s*</sheet>)")
MAIN_NS = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
EMPTY_RELS = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"></Relationships>'
)


class Package(dict):
    """The parts of a workbook package by name. A part is read from the source zip the first time
    it is asked for; a part never asked for is copied from the source as it is, in chunks, when
    the package is written (`unread`, `chunks`)."""

    UNREAD = object()

    def __init__(self, source: zipfile.ZipFile):
        super().__init__()
        self.source = source
        for info in source.infolist():
            dict.__setitem__(self, info.filename, Package.UNREAD)

    def __getitem__(self, name: str) -> bytes:
        value = dict.__getitem__(self, name)
        if value is Package.UNREAD:
            value = self.source.read(name)
            dict.__setitem__(self, name, value)
        return value

    def get(self, name: str, default=None):
        return self[name] if name in self else default

    def unread(self, name: str) -> bool:
        return dict.__getitem__(self, name) is Package.UNREAD

    def chunks(self, name: str, size: int = 1 << 22):
        """The source's part `name` in chunks of bytes, as stored (never whole in memory)."""
        with self.source.open(name) as member:
            while chunk := member.read(size):
                yield chunk


def attr(element: bytes, name: str) -> str | None:
    """The value of an attribute (`name` may carry a namespace prefix), unescaped."""
    m = re.search(rb"[\s<]" + re.escape(name.encode()) + rb'="([^"]*)"', element)
    return html.unescape(m.group(1).decode("utf-8")) if m else None


def rels_name(part: str) -> str:
    """`xl/worksheets/sheet1.xml` -> `xl/worksheets/_rels/sheet1.xml.rels`."""
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", name + ".rels")


def resolve(part: str, target: str) -> str:
    """The part a relationship of `part` points at."""
    if target.startswith("/"):
        return target.lstrip("/")
    return posixpath.normpath(posixpath.join(posixpath.dirname(part), target))


def relationships(parts: dict[str, bytes], part: str) -> list[dict]:
    """The relationships of `part`: id, type, target part (None for an external target)."""
    data = parts.get(rels_name(part))
    if data is None:
        return []
    out = []
    for m in RELATIONSHIP.finditer(data):
        el = m.group(0)
        external = attr(el, "TargetMode") == "External"
        target = attr(el, "Target") or ""
        out.append({"id": attr(el, "Id"), "type": attr(el, "Type") or "", "part": None if external else resolve(part, target), "xml": el})
    return out


def add_relationship(parts: dict[str, bytes], part: str, kind: str, target: str) -> str:
    """Add a relationship from `part` to the part `target`; returns its new id (the first `rIdN` free)."""
    name = rels_name(part)
    data = parts.get(name, EMPTY_RELS)
    taken = {attr(m.group(0), "Id") for m in RELATIONSHIP.finditer(data)}
    n = 1
    while f"rId{n}" in taken:
        n += 1
    relative = posixpath.relpath(target, posixpath.dirname(part))
    element = f'<Relationship Id="rId{n}" Type="{kind}" Target="{html.escape(relative)}"/>'.encode()
    at = data.rindex(b"</Relationships>")
    parts[name] = data[:at] + element + data[at:]
    return f"rId{n}"


def remove_relationships(parts: dict[str, bytes], part: str, ids: set[str]) -> None:
    """Remove relationships of `part` by id; a relationships part left empty is removed."""
    name = rels_name(part)
    if name not in parts:
        return
    data = RELATIONSHIP.sub(lambda m: b"" if attr(m.group(0), "Id") in ids else m.group(0), parts[name])
    if RELATIONSHIP.search(data) is None:
        del parts[name]
    else:
        parts[name] = data


def free_name(parts: dict[str, bytes], pattern: str) -> str:
    """The first part name `pattern.format(n)` (n = 1, 2, ...) not in the package (part names
    ignore case)."""
    taken = {name.casefold() for name in parts}
    n = 1
    while pattern.format(n).casefold() in taken:
        n += 1
    return pattern.format(n)


def content_type(parts: dict[str, bytes], part: str) -> str | None:
    data = parts[CONTENT_TYPES]
    for m in OVERRIDE.finditer(data):
        if (attr(m.group(0), "PartName") or "").lstrip("/").casefold() == part.casefold():
            return attr(m.group(0), "ContentType")
    ext = part.rsplit(".", 1)[-1].casefold()
    for m in DEFAULT.finditer(data):
        if (attr(m.group(0), "Extension") or "").casefold() == ext:
            return attr(m.group(0), "ContentType")
    return None


def declare(parts: dict[str, bytes], part: str, kind: str) -> None:
    """Give `part` its content type (an Override, unless the extension's Default already says it)."""
    if content_type(parts, part) == kind:
        return
    data = parts[CONTENT_TYPES]
    at = data.rindex(b"</Types>")
    parts[CONTENT_TYPES] = data[:at] + f'<Override PartName="/{html.escape(part)}" ContentType="{kind}"/>'.encode() + data[at:]


def declare_default(parts: dict[str, bytes], extension: str, kind: str) -> None:
    data = parts[CONTENT_TYPES]
    if any((attr(m.group(0), "Extension") or "").casefold() == extension for m in DEFAULT.finditer(data)):
        return
    at = data.index(b">", data.index(b"<Types")) + 1
    parts[CONTENT_TYPES] = data[:at] + f'<Default Extension="{extension}" ContentType="{kind}"/>'.encode() + data[at:]


def remove_parts(parts: dict[str, bytes], names: set[str]) -> None:
    """Remove parts, their relationships parts and their content-type Overrides."""
    for name in names:
        parts.pop(name, None)
        parts.pop(rels_name(name), None)
    parts[CONTENT_TYPES] = OVERRIDE.sub(
        lambda m: b"" if (attr(m.group(0), "PartName") or "").lstrip("/") in names else m.group(0), parts[CONTENT_TYPES]
    )


def reachable(parts: dict[str, bytes], start: str) -> set[str]:
    """`start` and every part its relationships lead to, and theirs, within the package."""
    seen, todo = set(), [start]
    while todo:
        part = todo.pop()
        if part in seen or part not in parts:
            continue
        seen.add(part)
        todo += [r["part"] for r in relationships(parts, part) if r["part"]]
    return seen


def prefix(xml: bytes, namespace: str) -> str | None:
    """The prefix the root element binds to `namespace` (`r` for relationships, usually)."""
    m = re.search(rb'xmlns:([A-Za-z0-9_.-]+)="' + re.escape(namespace.encode()) + rb'"', xml[:4000])
    return m.group(1).decode() if m else None


def sheets(parts: dict[str, bytes]) -> list[dict]:
    """The workbook's sheets in order: name, part, the `<sheet>` element and its relationship id."""
    wb = parts[WORKBOOK]
    r = prefix(wb, REL_NS) or "r"
    rels = {x["id"]: x["part"] for x in relationships(parts, WORKBOOK)}
    out = []
    for m in SHEET.finditer(wb):
        rid = attr(m.group(0), f"{r}:id")
        out.append({"name": attr(m.group(0), "name"), "part": rels.get(rid), "xml": m.group(0), "rid": rid})
    return out


def refusal(path: Path) -> str | None:
    """Why the workbook cannot be annotated in place (its parts are not written as Excel writes
    them: SpreadsheetML under a prefix, or Strict Open XML), or None. Such a workbook is written
    anew from its values, and FORMATTING_NOT_KEPT says why."""
    with zipfile.ZipFile(path) as z:
        parts = Package(z)
        for name, root in ((WORKBOOK, b"<workbook"), ("xl/styles.xml", b"<styleSheet")):
            if name not in parts:
                return f"it has no {name}"
            head = parts[name][:4000]
            if root not in head or MAIN_NS not in head[head.index(root) : head.index(b">", head.index(root))]:
                return f"its {name} is not written in the SpreadsheetML namespace without a prefix, as Excel writes it"
        for s in sheets(parts):
            if s["part"] in parts:
                with z.open(s["part"]) as member:
                    head = member.read(4000)
                at = head.find(b"<worksheet")
                if at >= 0 and MAIN_NS not in head[at : head.find(b">", at)]:
                    return f"its sheet {s['name']} is not written in the SpreadsheetML namespace without a prefix, as Excel writes it"
    return None
