"""batch.workbook.xmlparts: a small part parsed and written back keeps what its producer wrote (prefixes,
namespace declarations, mc:Ignorable, the XML declaration), and a DOCTYPE is refused wherever it
stands in the part."""

from __future__ import annotations

import re

import pytest
from lxml import etree

from batch.workbook import xmlparts
from batch.workbook.safety import Refused

DECLARATION = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
# a workbook part as Excel 365 writes it: mc:Ignorable among the namespace declarations, a
# namespace declared on an inner element, extension lists
EXCEL_WORKBOOK = DECLARATION + (
    b'<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    b'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    b'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x15 xr xr6 xr10 xr2" '
    b'xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main" '
    b'xmlns:xr="http://schemas.microsoft.com/office/spreadsheetml/2014/revision" '
    b'xmlns:xr6="http://schemas.microsoft.com/office/spreadsheetml/2016/revision6" '
    b'xmlns:xr10="http://schemas.microsoft.com/office/spreadsheetml/2016/revision10" '
    b'xmlns:xr2="http://schemas.microsoft.com/office/spreadsheetml/2015/revision2">'
    b'<fileVersion appName="xl" lastEdited="7" lowestEdited="7" rupBuild="27425"/><workbookPr defaultThemeVersion="166925"/>'
    b'<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="x15">'
    b'<x15ac:absPath url="C:\\Users\\analyst\\Documents\\" xmlns:x15ac="http://schemas.microsoft.com/office/spreadsheetml/2010/11/ac"/>'
    b"</mc:Choice></mc:AlternateContent>"
    b'<xr:revisionPtr revIDLastSave="0" documentId="8_{5F0C5E8A-3C4B-4B5E-9B8E-0E7E2C1D6A11}" xr6:coauthVersionLast="47" '
    b'xr6:coauthVersionMax="47" xr10:uidLastSave="{00000000-0000-0000-0000-000000000000}"/>'
    b'<bookViews><workbookView xWindow="-120" yWindow="-120" windowWidth="29040" windowHeight="15840" '
    b'xr2:uid="{A8B1D0C3-0D49-4D5B-8F4A-2E2B7E0C9F10}"/></bookViews>'
    b'<sheets><sheet name="Transfers" sheetId="1" r:id="rId1"/><sheet name="O&apos;Brien &amp; Co" sheetId="2" r:id="rId2"/></sheets>'
    b'<definedNames><definedName name="_xlnm._FilterDatabase" localSheetId="0" hidden="1">Transfers!$A$1:$L$5</definedName>'
    b"<definedName name=\"Rate\">'O''Brien &amp; Co'!$B$2</definedName></definedNames><calcPr calcId=\"191029\"/>"
    b'<extLst><ext uri="{140A7094-0E35-4892-8432-C4D2E57EDEB5}" xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main">'
    b'<x15:workbookPr chartTrackingRefBase="1"/></ext></extLst></workbook>'
)
# as openpyxl and LibreOffice write: namespace declarations first, no declaration line break
OPENPYXL_WORKBOOK = (
    b'<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    b'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><workbookPr/>'
    b'<bookViews><workbookView activeTab="0"/></bookViews><sheets><sheet name="Transfers" sheetId="1" r:id="rId1"/></sheets>'
    b'<definedNames/><calcPr calcId="124519" fullCalcOnLoad="1"/></workbook>'
)
# SpreadsheetML under a prefix, as the .NET Open XML SDK can write it
PREFIXED_WORKBOOK = DECLARATION + (
    b'<x:workbook xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    b'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheets>'
    b'<x:sheet name="Transfers" sheetId="1" r:id="R4f3a"/></x:sheets></x:workbook>'
)
STRICT_WORKBOOK = DECLARATION + (
    b'<workbook xmlns="http://purl.oclc.org/ooxml/spreadsheetml/main" xmlns:r="http://purl.oclc.org/ooxml/officeDocument/relationships" '
    b'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x15" '
    b'xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main" conformance="strict">'
    b'<workbookPr dateCompatibility="0" defaultThemeVersion="166925"/><sheets><sheet name="Transfers" sheetId="1" r:id="rId1"/>'
    b"</sheets></workbook>"
)
ATTRIBUTE = re.compile(rb"""\s+([\w:.-]+)\s*=\s*("[^"]*"|'[^']*')""")
START_TAG = re.compile(rb"<([\w:.-]+)((?:\s+[\w:.-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>")


def _normalised(xml: bytes) -> bytes:
    """The part with each start tag's namespace declarations first, then its attributes (each in
    its own order), double-quoted: what serialization may change, and nothing else."""

    def tag(m: re.Match) -> bytes:
        attrs = [(k, v[1:-1].replace(b"&apos;", b"'")) for k, v in ATTRIBUTE.findall(m.group(2))]
        ordered = [a for a in attrs if a[0].startswith(b"xmlns")] + [a for a in attrs if not a[0].startswith(b"xmlns")]
        return b"<" + m.group(1) + b"".join(b" " + k + b'="' + v + b'"' for k, v in ordered) + m.group(3) + b">"

    return START_TAG.sub(tag, xml)


@pytest.mark.parametrize(
    "name,data,same_bytes",
    [
        # Excel writes mc:Ignorable before some declarations, and x15ac's declaration after its attribute:
        # lxml writes declarations first; everything else byte for byte
        ("Excel 365", EXCEL_WORKBOOK, False),
        ("openpyxl", OPENPYXL_WORKBOOK, True),
        ("Open XML SDK, prefixed", PREFIXED_WORKBOOK, True),
        ("Strict, written by Excel", STRICT_WORKBOOK, False),
    ],
)
def test_parse_and_serialize_give_the_part_back(name, data, same_bytes):
    out = xmlparts.serialize(xmlparts.parse(data, "xl/workbook.xml"), data)
    assert _normalised(out) == _normalised(data), name
    assert (out == data) is same_bytes, name
    assert out.startswith(data[: data.find(b">") + 1]) if data.startswith(b"<?xml") else not out.startswith(b"<?xml")


def test_serialize_keeps_prefixes_declarations_and_ignorable_of_an_edited_part():
    root = xmlparts.parse(EXCEL_WORKBOOK, "xl/workbook.xml")
    sheets = xmlparts.child(root, "sheets")
    new = etree.SubElement(sheets, xmlparts.qname(root, "sheet"))
    new.set("name", "Findings")
    new.set(f"{{{xmlparts.REL}}}id", "rId9")
    out = xmlparts.serialize(root, EXCEL_WORKBOOK)
    assert out.startswith(DECLARATION)
    assert (
        b'mc:Ignorable="x15 xr xr6 xr10 xr2"' in out
        and b'xmlns:xr2="http://schemas.microsoft.com/office/spreadsheetml/2015/revision2"' in out
    )
    assert b'<sheet name="Findings" r:id="rId9"/></sheets>' in out  # the workbook's own (default) namespace and its r prefix
    assert b"ns0" not in out
    before = _normalised(EXCEL_WORKBOOK).replace(b"</sheets>", b'<sheet name="Findings" r:id="rId9"/></sheets>')
    assert _normalised(out) == before


@pytest.mark.parametrize(
    "data,standalone",
    [
        (b'<?xml version="1.0" encoding="UTF-8"?>\n<a/>', None),
        (b'<?xml version="1.0" encoding="UTF-8" standalone="no"?><a/>', False),
        (b"<?xml version='1.0' encoding='utf-8' standalone='yes'?><a/>", True),
    ],
)
def test_the_declaration_is_kept_as_it_was(data, standalone):
    root = xmlparts.parse(data, "x.xml")
    etree.SubElement(root, "b")
    assert xmlparts.serialize(root, data) == data.replace(b"<a/>", b"<a><b/></a>")
    # the same part in UTF-16: rewritten in UTF-8, its standalone flag kept
    wide = data.decode().replace("UTF-8", "UTF-16").replace("utf-8", "UTF-16").encode("utf-16")
    flag = "" if standalone is None else f' standalone="{"yes" if standalone else "no"}"'
    assert xmlparts.serialize(xmlparts.parse(wide, "x.xml"), wide) == f'<?xml version="1.0" encoding="UTF-8"{flag}?>\n<a/>'.encode()


def test_a_utf16_part_comes_back_in_utf8():
    data = '<?xml version="1.0" encoding="UTF-16" standalone="yes"?><a x="é"/>'.encode("utf-16")
    out = xmlparts.serialize(xmlparts.parse(data, "x.xml"), data)
    assert out == '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<a x="é"/>'.encode()


@pytest.mark.parametrize(
    "data",
    [
        b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
        # a billion-laughs DOCTYPE after the first 4 KB of the part
        b'<?xml version="1.0"?><!--' + b"p" * 5000 + b'--><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
        b"<a>&lol2;</a>",
        b'<?xml version="1.0"?><!DOCTYPE a SYSTEM "http://example.com/a.dtd"><a/>',
        b"<!DOCTYPE a><a/>",
    ],
)
def test_a_doctype_is_refused_naming_the_part(data):
    with pytest.raises(Refused, match=r"part docProps/core\.xml contains an XML DOCTYPE"):
        xmlparts.parse(data, "docProps/core.xml")


@pytest.mark.parametrize("data", [b"<a><b></a>", b"", b"<a>&undefined;</a>", b"<a/><b/>"])
def test_a_part_that_is_not_xml_is_refused_in_words(data):
    with pytest.raises(Refused) as err:
        xmlparts.parse(data, "xl/workbook.xml")
    assert str(err.value).startswith("The workbook's part xl/workbook.xml is not well-formed XML")


@pytest.mark.parametrize(
    "kind,names,expected",
    [
        ("http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet", ("worksheet",), True),
        ("http://purl.oclc.org/ooxml/officeDocument/relationships/worksheet", ("worksheet",), True),
        ("http://schemas.microsoft.com/office/2006/relationships/xlMacrosheet", ("xlMacrosheet",), True),
        ("http://schemas.microsoft.com/office/2006/relationships/xlIntlMacrosheet", ("xlMacrosheet", "xlIntlMacrosheet"), True),
        ("http://purl.oclc.org/ooxml/officeDocument/relationships/chartsheet", ("worksheet",), False),
        ("http://example.com/relationships/worksheet", ("worksheet",), False),  # a base the tool does not know
        ("", ("worksheet",), False),
    ],
)
def test_relationship_types_match_by_last_segment_against_either_base(kind, names, expected):
    assert xmlparts.is_type(kind, *names) is expected


@pytest.mark.parametrize(
    "xml,uri,expected",
    [
        (PREFIXED_WORKBOOK, xmlparts.MAIN, "x"),
        (PREFIXED_WORKBOOK, xmlparts.REL, "r"),
        (STRICT_WORKBOOK, xmlparts.MAIN_STRICT, ""),
        (STRICT_WORKBOOK, xmlparts.REL, None),
    ],
)
def test_the_prefix_bound_to_a_namespace(xml, uri, expected):
    root = xmlparts.parse(xml, "xl/workbook.xml")
    assert xmlparts.prefix(root, uri) == expected
    assert xmlparts.qname(root, "sheets") == f"{{{xmlparts.namespace(root)}}}sheets"


def test_the_tools_parts_are_written_strict_by_their_namespaces_and_types():
    rels = (
        b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" '
        b'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/drawing" Target="../drawings/drawing1.xml"/>'
        b"</Relationships>"
    )
    sheet = (
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        b'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><drawing r:id="rId1"/></worksheet>'
    )
    assert xmlparts.to_strict(rels) == rels.replace(
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships/", b"http://purl.oclc.org/ooxml/officeDocument/relationships/"
    )
    assert xmlparts.to_strict(sheet) == (
        b'<worksheet xmlns="http://purl.oclc.org/ooxml/spreadsheetml/main" '
        b'xmlns:r="http://purl.oclc.org/ooxml/officeDocument/relationships"><drawing r:id="rId1"/></worksheet>'
    )
