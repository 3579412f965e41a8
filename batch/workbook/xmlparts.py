"""The small XML parts of a workbook package, read and written as XML.

Content types, relationships, the workbook part, styles, comments and drawings are parsed whole
with lxml (`parse`) and written back (`serialize`) keeping every element, attribute, namespace
declaration and prefix as the producer wrote them, in order, whatever prefix, quoting or
empty-element form it used: only quoting and spacing inside tags may come back normalised. A
DOCTYPE (the way in for entity-expansion attacks, never written by Excel) is refused wherever it
stands in the part. Sheet parts are never parsed whole (see `batch.workbook.sheetrows`).

Namespaces are compared by URI, never by prefix. SpreadsheetML comes in two spellings: the
Transitional namespaces Excel writes by default, and Strict Open XML ("Strict Open XML
Spreadsheet"), whose namespaces and relationship types live under `http://purl.oclc.org/ooxml/`.
Relationship types are matched by their last path segment against either base (`is_type`).
"""

from __future__ import annotations

import re

from lxml import etree

from batch.workbook.refused import Refused

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
MAIN_STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
MAINS = (MAIN, MAIN_STRICT)
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
REL_STRICT = "http://purl.oclc.org/ooxml/officeDocument/relationships"
RELS = (REL, REL_STRICT)
# the relationships part's own namespace and the content types' (one spelling in both)
PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
# the bases of relationship types: the document's (Transitional, Strict) and Microsoft's own
# (vbaProject, xlMacrosheet, ...)
TYPE_BASES = (
    REL,
    REL_STRICT,
    "http://schemas.microsoft.com/office/2006/relationships",
    "http://schemas.microsoft.com/office/2007/relationships",
)
# the Transitional namespaces of what the tool writes (sheets, drawings, charts) and their Strict spelling
STRICT = {
    MAIN: MAIN_STRICT,
    REL: REL_STRICT,
    "http://schemas.openxmlformats.org/drawingml/2006/main": "http://purl.oclc.org/ooxml/drawingml/main",
    "http://schemas.openxmlformats.org/drawingml/2006/chart": "http://purl.oclc.org/ooxml/drawingml/chart",
    "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing": "http://purl.oclc.org/ooxml/drawingml/spreadsheetDrawing",
}


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_blank_text=False, strip_cdata=False
    )


class NotWellFormed(Refused):
    """A part that is not well-formed XML (the reason names the part)."""


def parse(data: bytes, part: str) -> etree._Element:
    """The root element of the XML part `part` (its name, for the reason of a refusal). Refuses
    (`Refused`) a part holding a DOCTYPE, and a part that is not well-formed XML."""
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as err:
        where = f" (line {err.lineno})" if err.lineno else ""
        raise NotWellFormed(
            f"The workbook's part {part} is not well-formed XML{where}, so the workbook cannot be read as it was made; "
            f"open it in Excel, save it again and drop it in again."
        ) from err
    info = root.getroottree().docinfo
    if info.doctype or info.internalDTD is not None or info.externalDTD is not None:
        raise Refused(
            f"The workbook's part {part} contains an XML DOCTYPE declaration, which Excel never writes and entity-expansion "
            f"attacks use; it was not read. Save the workbook again from Excel and drop it in again."
        )
    return root


def _prolog_end(data: bytes) -> int:
    """Where the root element starts: after the XML declaration, comments, processing
    instructions and white space before it (read as tokens)."""
    at = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    while True:
        while at < len(data) and data[at : at + 1] in b" \t\r\n":
            at += 1
        if data.startswith(b"<?", at):
            at = data.index(b"?>", at) + 2
        elif data.startswith(b"<!--", at):
            at = data.index(b"-->", at) + 3
        else:
            return at


def _declaration(original: bytes) -> bytes:
    """An XML declaration in UTF-8 with the original's standalone flag (for a part that was not UTF-8)."""
    text = (
        original[:400].decode("utf-16", "ignore")
        if original.startswith((b"\xff\xfe", b"\xfe\xff"))
        else original[:400].decode("utf-8", "ignore")
    )
    end = text.find("?>") if text.lstrip("\ufeff").startswith("<?xml") else -1
    flag = re.search(r"standalone\s*=\s*[\"'](yes|no)[\"']", text[:end]) if end >= 0 else None
    extra = f' standalone="{flag.group(1)}"' if flag else ""
    return f'<?xml version="1.0" encoding="UTF-8"{extra}?>\n'.encode()


def serialize(root_or_tree, original: bytes) -> bytes:
    """The part as UTF-8 bytes: the original's XML declaration and what stands before its root
    (comments, processing instructions, line ends) as they were, then the root element as lxml
    writes it (every prefix and namespace declaration as the producer wrote them), then any
    comment or processing instruction after the root."""
    tree = root_or_tree.getroottree() if isinstance(root_or_tree, etree._Element) else root_or_tree
    root = tree.getroot()
    body = etree.tostring(root, encoding="UTF-8", xml_declaration=False, with_tail=False)
    after = b"".join(etree.tostring(s, encoding="UTF-8", with_tail=False) for s in root.itersiblings())
    head = None
    if original.startswith((b"\xef\xbb\xbf", b"<", b" ", b"\t", b"\r", b"\n")):  # UTF-8 (a UTF-16 part starts with its BOM)
        try:
            head = original[: _prolog_end(original)]
        except ValueError:  # a declaration or comment never closed: not the part parsed
            head = None
        declared = (head or b"").lstrip(b"\xef\xbb\xbf").lstrip()
        if declared.startswith(b"<?xml"):
            words = declared[: declared.find(b"?>")].lower()
            if b"encoding" in words and b"utf-8" not in words and b"utf8" not in words:
                head = None
    if head is None:
        before = reversed(list(root.itersiblings(preceding=True)))
        head = _declaration(original) + b"".join(etree.tostring(s, encoding="UTF-8", with_tail=False) for s in before)
    return head + body + (b"\n" + after if after else b"")


# -- names in a part --------------------------------------------------------------------------


def namespace(el: etree._Element) -> str | None:
    """The namespace URI of an element's tag."""
    return etree.QName(el).namespace


def local(el) -> str:
    """The local name of an element's tag (`sheet` for `{...main}sheet` and `<x:sheet>` alike)."""
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def qname(el: etree._Element, name: str) -> str:
    """The tag `name` in the namespace of the element `el` (the part's own SpreadsheetML, Transitional or Strict)."""
    ns = namespace(el)
    return f"{{{ns}}}{name}" if ns else name


def prefix(el: etree._Element, uri: str) -> str | None:
    """The prefix bound to `uri` where `el` stands ("" for the default namespace), or None."""
    for p, u in el.nsmap.items():
        if u == uri:
            return p or ""
    return None


def children(el: etree._Element, name: str) -> list[etree._Element]:
    """The child elements of `el` named `name` in its own namespace."""
    return el.findall(qname(el, name))


def child(el: etree._Element, name: str) -> etree._Element | None:
    return el.find(qname(el, name))


def is_strict(root: etree._Element) -> bool:
    """The part is SpreadsheetML in its Strict namespace."""
    return namespace(root) == MAIN_STRICT


def rel_ns(root: etree._Element) -> str:
    """The relationships namespace (of `r:id`) that goes with the part's SpreadsheetML."""
    return REL_STRICT if is_strict(root) else REL


def rel_id(el: etree._Element) -> str | None:
    """An element's `r:id`, in either relationships namespace, whatever its prefix."""
    for ns in RELS:
        value = el.get(f"{{{ns}}}id")
        if value is not None:
            return value
    return None


# -- relationship types -----------------------------------------------------------------------


def type_name(kind: str) -> str | None:
    """The last path segment of a relationship type whose base is one the tool knows (`worksheet`
    for the Transitional and the Strict worksheet type alike), else None."""
    base, _, last = (kind or "").rpartition("/")
    return last if base.casefold() in {b.casefold() for b in TYPE_BASES} else None


def is_type(kind: str, *names: str) -> bool:
    """The relationship type is one of `names` (last segments, compared ignoring case), in either spelling."""
    last = type_name(kind)
    return last is not None and last.casefold() in {n.casefold() for n in names}


def transitional_type(kind: str) -> str:
    """A Strict document relationship type in its Transitional spelling (any other type as it is)."""
    base, _, last = (kind or "").rpartition("/")
    return f"{REL}/{last}" if base.casefold() == REL_STRICT.casefold() else kind


def strict_type(kind: str) -> str:
    """A Transitional document relationship type in its Strict spelling (any other type as it is)."""
    base, _, last = (kind or "").rpartition("/")
    return f"{REL_STRICT}/{last}" if base.casefold() == REL.casefold() else kind


def to_strict(data: bytes) -> bytes:
    """A part the tool wrote (Transitional, by xlsxwriter) in Strict Open XML: its namespaces and
    document relationship types swapped for their Strict URIs. Only for the tool's own parts, whose
    XML it knows."""
    for old, new in STRICT.items():
        data = data.replace(f'"{old}"'.encode(), f'"{new}"'.encode()).replace(f'"{old}/'.encode(), f'"{new}/'.encode())
    return data
