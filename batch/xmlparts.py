"""The package's small XML parts read and written as XML, keeping what the producer wrote.

`parse` reads a part with a namespace-aware parser that never resolves entities, never reaches
the network and refuses a DOCTYPE (a part holding one is refused, naming the part). `serialize`
writes the tree back: every element, attribute, namespace declaration and prefix the tool did not
change stays as it was, in order; the XML declaration is kept as the original had it (UTF-8).
"""

from __future__ import annotations

import re

from lxml import etree

from batch.safety import Refused

DECLARATION = re.compile(rb"^(?:\xef\xbb\xbf)?\s*<\?xml\b")


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_blank_text=False, strip_cdata=False
    )


def parse(data: bytes, part: str) -> etree._ElementTree:
    """The part's tree; a part that is not well-formed raises `lxml.etree.XMLSyntaxError`."""
    root = etree.fromstring(data, _parser())
    tree = root.getroottree()
    if tree.docinfo.doctype:
        raise Refused(
            f"the part {part} holds a document type declaration (DOCTYPE), which a workbook never needs; save the workbook again in Excel"
        )
    return tree


def serialize(tree, original: bytes) -> bytes:
    """The tree (or its root element) as bytes, with the original's XML declaration (none when it had none)."""
    tree = tree.getroottree() if isinstance(tree, etree._Element) else tree  # noqa: SLF001
    if not DECLARATION.match(original[:200]):
        return etree.tostring(tree, encoding="UTF-8", xml_declaration=False)
    standalone = {True: ' standalone="yes"', False: ' standalone="no"'}.get(tree.docinfo.standalone, "")
    declaration = f'<?xml version="1.0" encoding="UTF-8"{standalone}?>\n'.encode()
    return declaration + etree.tostring(tree, encoding="UTF-8", xml_declaration=False)
