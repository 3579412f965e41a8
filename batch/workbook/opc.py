"""The parts of a workbook package and the links between them, read and edited as XML.

A package is a zip of parts; `[Content_Types].xml` gives each part's type, and each part's
relationships (`dir/_rels/name.rels`) name the parts it refers to. The tool adds parts (its
sheets, a comments part) and removes its own on a round trip; every other part is left as it is.

These small parts are parsed with `batch.workbook.xmlparts` and written back with every prefix, namespace
declaration and element the tool does not change, so a package written under a namespace prefix
(as the .NET Open XML SDK writes it), with single-quoted attributes, or in Strict Open XML is
edited in its own namespaces. Part names are compared as the Open Packaging Conventions say,
ignoring case: a package holding two part names equal but for case is refused as ambiguous.
Sheets are identified by their relationship, not by their name.
"""

from __future__ import annotations

import functools
import posixpath
import zipfile
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from batch.workbook import deflate, xmlparts
from batch.workbook.opened import Opened, opening
from batch.workbook.refused import Refused

CONTENT_TYPES = "[Content_Types].xml"
WORKBOOK = "xl/workbook.xml"  # where Excel puts the workbook part; `workbook_part` finds it wherever it is
ROOT_RELS = "_rels/.rels"
REL_NS = xmlparts.REL
MAIN_NS = xmlparts.MAIN
T_OFFICE_DOCUMENT = REL_NS + "/officeDocument"
T_STYLES = REL_NS + "/styles"
# the relationship types of a workbook's sheets (last segments, casefolded)
SHEET_KINDS = {"worksheet", "chartsheet", "dialogsheet", "xlmacrosheet", "xlintlmacrosheet"}
EMPTY_RELS = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"></Relationships>'
)


class Package(dict):
    """The parts of a workbook package by name. A part is read from the source zip the first time
    it is asked for; a part never asked for is copied from the source as it is, in chunks, when
    the package is written (`unread`, `chunks`). A package holding two part names that differ
    only in case is refused (`Refused`): readers would take one part and writers the other."""

    UNREAD = object()

    def __init__(self, source: zipfile.ZipFile):
        super().__init__()
        self.source = source
        names = [info.filename for info in source.infolist()]
        check_names(names)
        for name in names:
            dict.__setitem__(self, name, Package.UNREAD)

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
        return deflate.chunks(self.source, name, size)


def check_names(names) -> None:
    """Refuse (`Refused`) a package in which two part names are equal ignoring case (the Open
    Packaging Conventions compare part names so)."""
    seen: dict[str, str] = {}
    for name in names:
        if name.endswith("/"):  # a folder entry, not a part
            continue
        key = name.casefold()
        if key in seen and seen[key] == name:
            raise Refused(
                f"The workbook holds the part {name} twice, so it is ambiguous which one is meant. Save it again from Excel "
                f"and drop it in again."
            )
        if key in seen:
            raise Refused(
                f"The workbook holds two parts whose names differ only in case ({seen[key]} and {name}); a workbook "
                f"compares part names ignoring case, so it is ambiguous which one is meant. Save it again from Excel "
                f"and drop it in again."
            )
        seen.setdefault(key, name)


def find(parts, name: str | None) -> str | None:
    """The name under which the package holds the part `name`, compared ignoring case (and with
    percent-escapes decoded, as a relationship's target may write them); None when it has none."""
    if not name:
        return None
    if name in parts:
        return name
    wanted = {name.casefold(), unquote(name).casefold()}
    return next((n for n in parts if n.casefold() in wanted), None)


def rels_name(part: str) -> str:
    """`xl/worksheets/sheet1.xml` -> `xl/worksheets/_rels/sheet1.xml.rels` (`` -> `_rels/.rels`, the package's own)."""
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", name + ".rels")


def source_of(rels: str) -> str:
    """The part a relationships part belongs to (`xl/_rels/workbook.xml.rels` -> `xl/workbook.xml`; `_rels/.rels` -> ``)."""
    folder = posixpath.dirname(posixpath.dirname(rels))
    return posixpath.join(folder, posixpath.basename(rels)[: -len(".rels")])


def resolve(part: str, target: str) -> str:
    """The part a relationship of `part` points at (as a name; see `find` for the part held)."""
    target = target.split("#", 1)[0]
    if target.startswith("/"):
        return posixpath.normpath(target.lstrip("/"))
    return posixpath.normpath(posixpath.join(posixpath.dirname(part), target)).lstrip("/")


def _rels_root(parts, part: str, parse=None) -> tuple[str | None, etree._Element | None]:
    """The relationships part of `part` (its name, its root), or (None, None); `parse`: `_parse`
    unless given (`_viewed`, for a reader that never changes the root)."""
    name = find(parts, rels_name(part))
    if name is None:
        return None, None
    return name, (parse or _parse)(parts, name)


def _relationship_elements(root: etree._Element) -> list[etree._Element]:
    return [el for el in root if isinstance(el.tag, str) and xmlparts.local(el) == "Relationship"]


def relationships(parts, part: str) -> list[dict]:
    """The relationships of `part`, in order: id; type (a Strict document type given in its
    Transitional spelling, so one comparison serves both; `written_type` as the part has it);
    target as written; external (True for a target outside the package); part (for an internal
    target: the name the package holds it under, or the resolved name when the package lacks it;
    None for an external target)."""
    _name, root = _rels_root(parts, part, _viewed)
    if root is None:
        return []
    out = []
    for el in _relationship_elements(root):
        external = (el.get("TargetMode") or "").casefold() == "external"
        target = el.get("Target") or ""
        resolved = None if external else resolve(part, target)
        out.append(
            {
                "id": el.get("Id"),
                "type": xmlparts.transitional_type(el.get("Type") or ""),
                "written_type": el.get("Type") or "",
                "target": target,
                "external": external,
                "part": None if external else find(parts, resolved) or resolved,
            }
        )
    return out


def is_strict(parts) -> bool:
    """The workbook is written in Strict Open XML (its workbook part in the Strict namespace)."""
    name = workbook_part(parts)
    return name is not None and xmlparts.is_strict(_viewed(parts, name))


def add_relationship(parts, part: str, kind: str, target: str, rid: str | None = None) -> str:
    """Add a relationship from `part` to the part `target`; returns its id (`rid` when given and
    free, else the first `rIdN` free). A document relationship type is written in the package's
    own spelling (Strict in a Strict package)."""
    name = find(parts, rels_name(part)) or rels_name(part)
    original = parts.get(name, EMPTY_RELS)
    root = xmlparts.parse(original, name)
    taken = {el.get("Id") for el in _relationship_elements(root)}
    if rid is None or rid in taken:
        n = 1
        while f"rId{n}" in taken:
            n += 1
        rid = f"rId{n}"
    if is_strict(parts):
        kind = xmlparts.strict_type(kind)
    relative = posixpath.relpath(target, posixpath.dirname(part) or ".")
    el = etree.SubElement(root, f"{{{xmlparts.PACKAGE_RELS}}}Relationship")
    el.set("Id", rid)
    el.set("Type", kind)
    el.set("Target", relative)
    parts[name] = xmlparts.serialize(root, original)
    return rid


def remove_relationships(parts, part: str, ids: set[str]) -> None:
    """Remove relationships of `part` by id; a relationships part left empty is removed."""
    name, root = _rels_root(parts, part)
    if root is None:
        return
    for el in _relationship_elements(root):
        if el.get("Id") in ids:
            root.remove(el)
    if not _relationship_elements(root):
        del parts[name]
    else:
        parts[name] = xmlparts.serialize(root, parts[name])


def free_name(parts, pattern: str) -> str:
    """The first part name `pattern.format(n)` (n = 1, 2, ...) not in the package (part names
    ignore case)."""
    taken = {name.casefold() for name in parts}
    n = 1
    while pattern.format(n).casefold() in taken:
        n += 1
    return pattern.format(n)


def _types(parts) -> etree._Element:
    return _viewed(parts, CONTENT_TYPES)


def _entries(root: etree._Element, kind: str) -> list[etree._Element]:
    return [el for el in root if isinstance(el.tag, str) and xmlparts.local(el) == kind]


def _same_part(part_name: str | None, part: str) -> bool:
    """An Override's PartName (`/xl/a%20b.xml`) names the part `part` (compared ignoring case)."""
    written = (part_name or "").lstrip("/")
    return part.casefold() in {written.casefold(), unquote(written).casefold()}


def content_type(parts, part: str) -> str | None:
    root = _types(parts)
    for el in _entries(root, "Override"):
        if _same_part(el.get("PartName"), part):
            return el.get("ContentType")
    ext = part.rsplit(".", 1)[-1].casefold()
    for el in _entries(root, "Default"):
        if (el.get("Extension") or "").casefold() == ext:
            return el.get("ContentType")
    return None


def declare(parts, part: str, kind: str) -> None:
    """Give `part` its content type (an Override, unless the extension's Default already says it)."""
    if content_type(parts, part) == kind:
        return
    original = parts[CONTENT_TYPES]
    root = xmlparts.parse(original, CONTENT_TYPES)
    for el in _entries(root, "Override"):
        if _same_part(el.get("PartName"), part):
            root.remove(el)
    el = etree.SubElement(root, xmlparts.qname(root, "Override"))
    el.set("PartName", "/" + part)
    el.set("ContentType", kind)
    parts[CONTENT_TYPES] = xmlparts.serialize(root, original)


def declare_default(parts, extension: str, kind: str) -> None:
    original = parts[CONTENT_TYPES]
    root = xmlparts.parse(original, CONTENT_TYPES)
    if any((el.get("Extension") or "").casefold() == extension.casefold() for el in _entries(root, "Default")):
        return
    el = etree.Element(xmlparts.qname(root, "Default"))
    el.set("Extension", extension)
    el.set("ContentType", kind)
    root.insert(0, el)  # the schema lets Defaults and Overrides mix; Excel writes Defaults first
    parts[CONTENT_TYPES] = xmlparts.serialize(root, original)


def remove_parts(parts, names: set[str]) -> None:
    """Remove parts, their relationships parts and their content-type Overrides (names compared ignoring case)."""
    folded = set()
    for name in names:
        for one in (name, rels_name(name)):
            held = find(parts, one)
            if held is not None:
                del parts[held]
        folded.add(name.casefold())
    if CONTENT_TYPES not in parts:
        return
    original = parts[CONTENT_TYPES]
    root = xmlparts.parse(original, CONTENT_TYPES)
    gone = [el for el in _entries(root, "Override") if any(_same_part(el.get("PartName"), name) for name in folded)]
    for el in gone:
        root.remove(el)
    if gone:
        parts[CONTENT_TYPES] = xmlparts.serialize(root, original)


def reachable(parts, start: str) -> set[str]:
    """`start` and every part its relationships lead to, and theirs, within the package."""
    seen, todo = set(), [start]
    while todo:
        part = todo.pop()
        if part is None or part in seen or part not in parts:
            continue
        seen.add(part)
        todo += [r["part"] for r in relationships(parts, part) if r["part"]]
    return seen


def workbook_part(parts) -> str | None:
    """The workbook part: where the package's officeDocument relationship points (Excel: `xl/workbook.xml`)."""
    for rel in relationships(parts, ""):
        if xmlparts.is_type(rel["type"], "officeDocument") and rel["part"] in parts:
            return rel["part"]
    return find(parts, WORKBOOK)


def workbook(parts) -> tuple[str, etree._Element]:
    """The workbook part's name and root element."""
    name = workbook_part(parts)
    if name is None:
        raise Refused("The file has no workbook part (xl/workbook.xml), so it is not an Excel workbook; save it from Excel as .xlsx.")
    return name, _parse(parts, name)


def sheet_elements(root: etree._Element) -> list[etree._Element]:
    """The `<sheet>` elements of a workbook, in order."""
    sheets = xmlparts.child(root, "sheets")
    return [] if sheets is None else xmlparts.children(sheets, "sheet")


def sheets(parts) -> list[dict]:
    """The workbook's sheets in order, each identified by its relationship: name; part (the part
    its relationship points at, as the package holds it; None when its `r:id` is empty, names no
    relationship, or points at no part of the package); rid; sheet_id; state (visible, hidden,
    veryHidden); kind (the last segment of its relationship type: worksheet, chartsheet,
    dialogsheet, xlMacrosheet, ...; None without a relationship); index (its place, as
    `localSheetId` counts); element (its `<sheet>` element in a parse of the workbook part).

    Refuses (`Refused`) a workbook in which two sheets have one name ignoring case (Excel does
    not allow it), or two sheets are one part."""
    name, root = workbook(parts)
    rels = {}
    for rel in relationships(parts, name):
        rels.setdefault(rel["id"], rel)
    out, names, held = [], {}, {}
    for i, el in enumerate(sheet_elements(root)):
        rid = xmlparts.rel_id(el)
        rel = rels.get(rid) if rid else None
        kind = xmlparts.type_name(rel["type"]) if rel else None
        # a relationship to a part that is no sheet (a style table, say) is as broken as none
        wrong = kind is not None and kind.casefold() not in SHEET_KINDS
        part = rel["part"] if rel and not rel["external"] and rel["part"] in parts and not wrong else None
        sheet_name = el.get("name") or ""
        key = sheet_name.casefold()
        if key in names:
            raise Refused(
                f"The workbook has two sheets named {names[key]!r} and {sheet_name!r}, which Excel does not allow (sheet names "
                f"must differ ignoring case); rename one of them, save the workbook in Excel and drop it in again."
            )
        names[key] = sheet_name
        if part is not None and part in held:
            raise Refused(
                f"The workbook's sheets {held[part]!r} and {sheet_name!r} are one and the same part ({part}), which Excel never "
                f"writes; save the workbook again from Excel and drop it in again."
            )
        if part is not None:
            held[part] = sheet_name
        out.append(
            {
                "name": sheet_name,
                "part": part,
                "rid": rid,
                "sheet_id": el.get("sheetId"),
                "state": el.get("state") or "visible",
                "kind": kind,
                "index": i,
                "element": el,
            }
        )
    return out


def styles_part(parts) -> str | None:
    """The workbook's style table: where the workbook's styles relationship points, when the package holds it."""
    name = workbook_part(parts)
    if name is None:
        return None
    return next((r["part"] for r in relationships(parts, name) if xmlparts.is_type(r["type"], "styles") and r["part"] in parts), None)


class ReadOnly(Package):
    """The opened workbook's package as the readers look at it: never changed; each part read from
    the zip once and each XML part parsed once (`parsed`), shared with every stage of reading
    (`batch.workbook.opened.Opened`)."""

    def __init__(self, opened: Opened):
        super().__init__(opened.zip)
        self.opened = opened

    def __getitem__(self, name: str) -> bytes:
        dict.__getitem__(self, name)  # KeyError for a part the package does not hold
        return self.opened.part(name)

    def parsed(self, name: str) -> etree._Element:
        return self.opened.parsed(name, xmlparts.parse)

    def __setitem__(self, name, value):
        raise TypeError("the package read is never changed")

    def __delitem__(self, name):
        raise TypeError("the package read is never changed")


def read_only(opened: Opened) -> ReadOnly:
    """The opened workbook's package as the readers look at it (one for every stage)."""
    return opened.once("package", lambda: ReadOnly(opened))


def _parse(parts, name: str) -> etree._Element:
    """The root of the XML part `name`: parsed once in a package read (`ReadOnly`, never changed),
    else parsed now (a package being edited changes what it parsed)."""
    if isinstance(parts, ReadOnly):
        return parts.parsed(name)
    return xmlparts.parse(parts[name], name)


def _viewed(parts, name: str) -> etree._Element:
    """The root of the XML part `name` for a reader that never changes it (the relationships, the
    content types, whether the package is Strict): the parse of the part's bytes as they are now,
    made once for the same bytes (`_parsed_bytes`) however often the readers ask; a package read
    gives its own (`_parse`)."""
    if isinstance(parts, ReadOnly):
        return parts.parsed(name)
    return _parsed_bytes(parts[name], name)


@functools.lru_cache(maxsize=64)
def _parsed_bytes(data: bytes, name: str) -> etree._Element:
    """`xmlparts.parse` of `data`, kept for the next reader of the same bytes: a package being edited
    is asked its relationships and content types dozens of times between two changes. Only
    `_viewed`'s readers get it, and none changes it; a refusal is raised again each time."""
    return xmlparts.parse(data, name)


def refusal(source: Opened | Path) -> str | None:
    """Why the workbook cannot be annotated in place, or None. Strict Open XML and SpreadsheetML
    under a namespace prefix are annotated in their own namespaces, and a package without a
    style table gets one; only a workbook part that is not SpreadsheetML at all cannot be kept.
    Such a workbook is written anew from its values, and FORMATTING_NOT_KEPT says why."""
    with opening(source) as opened:
        parts = read_only(opened)
        name = workbook_part(parts)
        if name is None:
            return "it has no workbook part (xl/workbook.xml)"
        root = _parse(parts, name)
        if xmlparts.namespace(root) not in xmlparts.MAINS or xmlparts.local(root) != "workbook":
            return f"its workbook part {name} is not SpreadsheetML (its root element is {root.tag})"
    return None
