"""The small XML parts of a package, read and written as XML (namespace-aware, DOCTYPEs refused).

`parse(data, part)` reads a part with lxml, never resolving entities or loading a DTD, and
refuses a part that is not well-formed or holds a document type declaration, naming the part.
`serialize(tree, original)` writes it back with the XML declaration the original had (version,
UTF-8, standalone as it was): lxml keeps every element, attribute, namespace declaration and
prefix as the producer wrote them (quoting and the spelling of empty elements may be
normalised), comments and processing instructions included.
"""

from __future__ import annotations

import re

from lxml import etree

from batch.safety import Refused

DECLARATION = re.compile(rb"^(?:\xef\xbb\xbf)?\s*<\?xml\b(.*?)\?>(\s*)", re.S)
PSEUDO_ATTR = re.compile(rb"""\b(version|standalone)\s*=\s*["']([^"']*)["']""")


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_blank_text=False, strip_cdata=False
    )


def parse(data: bytes, part: str) -> etree._Element:
    """The part's root element (lxml); Refused naming the part when it is not well-formed XML or holds a DOCTYPE."""
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as err:
        raise Refused(
            f"The part {part} of the workbook is not well-formed XML (line {err.lineno}: {err.msg}); "
            "open the workbook in Excel, save it, and drop it in again."
        ) from err
    tree = root.getroottree()
    if tree.docinfo.doctype:
        raise Refused(
            f"The part {part} of the workbook holds a document type declaration (DOCTYPE), which workbooks never need "
            "and which can hide an entity-expansion attack; save the workbook again from Excel and drop it in again."
        )
    return root


def serialize(tree, original: bytes) -> bytes:
    """The tree (or its root) as bytes, with the original's XML declaration (none if it had none)."""
    if not isinstance(tree, etree._ElementTree):
        tree = tree.getroottree()
    body = etree.tostring(tree, encoding="UTF-8", xml_declaration=False)
    m = DECLARATION.match(original)
    if m is None:
        return body
    pseudo = dict(PSEUDO_ATTR.findall(m.group(1)))
    declaration = b'<?xml version="' + pseudo.get(b"version", b"1.0") + b'" encoding="UTF-8"'
    if b"standalone" in pseudo:
        declaration += b' standalone="' + pseudo[b"standalone"] + b'"'
    return declaration + b"?>" + m.group(2) + body
