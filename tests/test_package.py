"""batch.workbook.package: an .xlsm's package without its VBA project, everything else as it was."""

from __future__ import annotations

import io
import re
import warnings
import zipfile

import openpyxl
import pytest
import python_calamine
from defusedxml import ElementTree

from batch.workbook import opc, stylesxml
from batch.workbook.package import MACRO_MAIN, PLAIN_MAIN, Macro, describe, executable_parts, macros, remove_macros, without_macros
from batch.workbook.safety import Refused


def _xlsm_parts(tmp_path) -> dict[str, bytes]:
    """An .xlsm as Excel lays it out: the workbook declared macro-enabled, a VBA project and its
    signature, each with its relationship and content type."""
    wb = openpyxl.Workbook()
    wb.active["A1"] = "kept"
    wb.save(tmp_path / "plain.xlsx")
    with zipfile.ZipFile(tmp_path / "plain.xlsx") as z:
        parts = {n: z.read(n) for n in z.namelist()}
    main = b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
    parts["[Content_Types].xml"] = (
        parts["[Content_Types].xml"]
        .replace(main, MACRO_MAIN)
        .replace(b"</Types>", b'<Override PartName="/xl/vbaProject.bin" ContentType="application/vnd.ms-office.vbaProject"/></Types>')
    )
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"].replace(
        b"</Relationships>",
        b'<Relationship Id="rId99" Type="http://schemas.microsoft.com/office/2006/relationships/vbaProject" Target="vbaProject.bin"/>'
        b"</Relationships>",
    )
    parts["xl/vbaProject.bin"] = b"\xd0\xcf\x11\xe0 Sub AutoOpen()"
    parts["xl/vbaProjectSignature.bin"] = b"signature"
    return parts


def test_an_xlsm_loses_its_macros_and_nothing_else(tmp_path):
    parts = _xlsm_parts(tmp_path)
    out, removed = without_macros(parts)
    assert removed == [Macro("vba", "")] and describe(removed) == "the VBA project"
    assert set(out) == set(parts) - {"xl/vbaProject.bin", "xl/vbaProjectSignature.bin"}
    untouched = set(out) - {"[Content_Types].xml", "xl/_rels/workbook.xml.rels"}
    assert all(out[n] == parts[n] for n in untouched)  # every other part byte for byte
    assert PLAIN_MAIN in out["[Content_Types].xml"] and MACRO_MAIN not in out["[Content_Types].xml"]
    assert b"vbaProject" not in out["[Content_Types].xml"] + out["xl/_rels/workbook.xml.rels"]
    for name in ("[Content_Types].xml", "xl/_rels/workbook.xml.rels"):
        ElementTree.fromstring(out[name])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in out.items():
            z.writestr(name, data)
    assert openpyxl.load_workbook(io.BytesIO(buffer.getvalue())).active["A1"].value == "kept"
    (tmp_path / "out.xlsx").write_bytes(buffer.getvalue())
    assert python_calamine.CalamineWorkbook.from_path(str(tmp_path / "out.xlsx")).get_sheet_by_index(0).to_python() == [["kept"]]


def test_a_workbook_without_macros_is_unchanged(tmp_path):
    wb = openpyxl.Workbook()
    wb.save(tmp_path / "plain.xlsx")
    with zipfile.ZipFile(tmp_path / "plain.xlsx") as z:
        parts = {n: z.read(n) for n in z.namelist()}
    assert without_macros(parts) == (parts, [])


# -- the package read as XML: any prefix, either quote, Strict -----------------------------------

MAIN_T = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
MAIN_S = "http://purl.oclc.org/ooxml/spreadsheetml/main"
REL_T = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
REL_S = "http://purl.oclc.org/ooxml/officeDocument/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
SHEET_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
MACRO_TYPE = "application/vnd.ms-excel.macrosheet+xml"
MS_REL = "http://schemas.microsoft.com/office/2006/relationships"
DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def _package(sheets, rels, *, main=MAIN_T, rel=REL_T, wb_prefix="", rels_prefix="", q='"', names="", views="", types_extra="") -> dict:
    """A small package: the workbook's `sheets` [(name, r:id)], its relationships [(id, type, target)]
    (a type's last segment under the base `rel`, or a full type), written with the prefixes and the
    quote given."""
    p = f"{wb_prefix}:" if wb_prefix else ""
    xmlns = f"xmlns:{wb_prefix}" if wb_prefix else "xmlns"
    listed = "".join(f"<{p}sheet name={q}{n}{q} sheetId={q}{i + 1}{q} r:id={q}{rid}{q}/>" for i, (n, rid) in enumerate(sheets))
    workbook = f"{DECL}<{p}workbook {xmlns}={q}{main}{q} xmlns:r={q}{rel}{q}>{views}<{p}sheets>{listed}</{p}sheets>{names}</{p}workbook>"
    rp = f"{rels_prefix}:" if rels_prefix else ""
    rxmlns = f"xmlns:{rels_prefix}" if rels_prefix else "xmlns"
    items = "".join(
        f"<{rp}Relationship Id={q}{i}{q} Type={q}{t if '/' in t else rel + '/' + t}{q} Target={q}{target}{q}/>" for i, t, target in rels
    )
    wb_rels = f"{DECL}<{rp}Relationships {rxmlns}={q}{PKG}{q}>{items}</{rp}Relationships>"
    root_rels = (
        f'{DECL}<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
    )
    overrides = "".join(
        f'<Override PartName="/xl/{target}" ContentType="{MACRO_TYPE if "macro" in target else SHEET_TYPE}"/>' for _i, _t, target in rels
    )
    types = f'{DECL}<Types xmlns="{TYPES}"><Default Extension="xml" ContentType="application/xml"/>{overrides}{types_extra}</Types>'
    out = {
        "[Content_Types].xml": types.encode(),
        "_rels/.rels": root_rels.encode(),
        "xl/workbook.xml": workbook.encode(),
        "xl/_rels/workbook.xml.rels": wb_rels.encode(),
    }
    for _i, _t, target in rels:
        out["xl/" + target] = f'<worksheet xmlns="{main}"><sheetData/></worksheet>'.encode()
    return out


TWO = [("Transfers", "rId1"), ("BEIP", "rId2")]
TWO_RELS = [("rId1", "worksheet", "worksheets/sheet1.xml"), ("rId2", "worksheet", "worksheets/sheet2.xml")]
BOTH = [("Transfers", "xl/worksheets/sheet1.xml"), ("BEIP", "xl/worksheets/sheet2.xml")]
FIRST = [("Transfers", "xl/worksheets/sheet1.xml"), ("BEIP", None)]


@pytest.mark.parametrize(
    "case,package,expected",
    [
        ("as Excel writes it", _package(TWO, TWO_RELS), BOTH),
        # the .NET Open XML SDK: SpreadsheetML and the relationships under prefixes
        (
            "prefixed",
            _package(TWO, TWO_RELS, wb_prefix="x", rels_prefix="pr"),
            BOTH,
        ),
        ("single quotes", _package(TWO, TWO_RELS, q="'"), BOTH),
        # Strict Open XML: its namespaces and relationship types
        (
            "Strict",
            _package(TWO, TWO_RELS, main=MAIN_S, rel=REL_S),
            BOTH,
        ),
        # a relationship's target in another case than the part's name: the part as the package holds it
        (
            "target in another case",
            {**_package(TWO, TWO_RELS[:1] + [("rId2", "worksheet", "Worksheets/SHEET2.xml")]), "xl/worksheets/sheet2.xml": b"<worksheet/>"}
            | {"xl/Worksheets/SHEET2.xml": None},
            BOTH,
        ),
        # broken relationships: no part, never a guess
        ("empty r:id", _package([("Transfers", "rId1"), ("BEIP", "")], TWO_RELS[:1]), FIRST),
        ("r:id naming nothing", _package([("Transfers", "rId1"), ("BEIP", "rId7")], TWO_RELS), FIRST),
        ("a relationship to no sheet", _package(TWO, TWO_RELS[:1] + [("rId2", "styles", "styles.xml")]), FIRST),
        (
            "target missing",
            {k: v for k, v in _package(TWO, TWO_RELS).items() if k != "xl/worksheets/sheet2.xml"},
            FIRST,
        ),
    ],
)
def test_sheets_are_identified_by_their_relationship(case, package, expected):
    package = {k: v for k, v in package.items() if v is not None}
    got = opc.sheets(package)
    assert [(s["name"], s["part"]) for s in got] == expected, case
    assert [s["index"] for s in got] == list(range(len(expected)))


@pytest.mark.parametrize(
    "case,package,words",
    [
        ("two sheets of one name", _package([("Transfers", "rId1"), ("Transfers", "rId2")], TWO_RELS), "two sheets named 'Transfers'"),
        ("equal ignoring case", _package([("Transfers", "rId1"), ("TRANSFERS", "rId2")], TWO_RELS), "two sheets named 'Transfers'"),
        ("two sheets, one part", _package([("Transfers", "rId1"), ("BEIP", "rId1")], TWO_RELS), "one and the same part"),
    ],
)
def test_a_workbook_excel_would_not_write_is_refused_with_a_reason(case, package, words):
    with pytest.raises(Refused, match=words):
        opc.sheets(package)


@pytest.mark.parametrize(
    "second,words",
    [
        ("xl/worksheets/Sheet1.xml", "two parts whose names differ only in case (xl/worksheets/sheet1.xml and xl/worksheets/Sheet1.xml)"),
        ("xl/worksheets/sheet1.xml", "the part xl/worksheets/sheet1.xml twice"),
    ],
)
def test_a_part_name_held_twice_is_refused(tmp_path, second, words):
    path = tmp_path / "twice.xlsx"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in _package(TWO, TWO_RELS).items():
            z.writestr(name, data)
        with warnings.catch_warnings():  # zipfile warns of a name written twice
            warnings.simplefilter("ignore", UserWarning)
            z.writestr(second, b"<worksheet/>")
    with zipfile.ZipFile(path) as z, pytest.raises(Refused) as err:
        opc.Package(z)
    assert words in str(err.value) and "save it again from excel" in str(err.value).lower()


@pytest.mark.parametrize(
    "case,package,rels_root,new_type",
    [
        ("as Excel writes it", _package(TWO, TWO_RELS), b"<Relationships ", REL_T + "/comments"),
        # the new relationship takes the part's own prefix
        ("prefixed", _package(TWO, TWO_RELS, wb_prefix="x", rels_prefix="pr"), b"<pr:Relationships ", REL_T + "/comments"),
        ("single quotes", _package(TWO, TWO_RELS, q="'"), b"<Relationships ", REL_T + "/comments"),
        # a Strict package gets the Strict type
        ("Strict", _package(TWO, TWO_RELS, main=MAIN_S, rel=REL_S), b"<Relationships ", REL_S + "/comments"),
    ],
)
def test_a_relationship_added_takes_the_parts_prefix_and_the_packages_type(case, package, rels_root, new_type):
    rid = opc.add_relationship(package, "xl/workbook.xml", REL_T + "/comments", "xl/comments1.xml")
    assert rid == "rId3", case  # rId1 and rId2 are taken, whatever the quotes
    rels = opc.relationships(package, "xl/workbook.xml")
    assert [(r["id"], r["written_type"], r["part"]) for r in rels][-1] == ("rId3", new_type, "xl/comments1.xml")
    assert [r["type"] for r in rels][-1] == REL_T + "/comments"  # compared in one spelling
    data = package["xl/_rels/workbook.xml.rels"]
    assert rels_root in data and b"ns0" not in data
    opc.remove_relationships(package, "xl/workbook.xml", {"rId1", "rId2", "rId3"})
    assert "xl/_rels/workbook.xml.rels" not in package  # a relationships part left empty goes


@pytest.mark.parametrize(
    "rels",
    [
        b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>',
        b"<Relationships xmlns='http://schemas.openxmlformats.org/package/2006/relationships' />",
        b'<p:Relationships xmlns:p="http://schemas.openxmlformats.org/package/2006/relationships"></p:Relationships>',
    ],
)
def test_a_relationship_is_added_to_an_empty_list(rels):
    package = _package(TWO, TWO_RELS)
    package["xl/worksheets/_rels/sheet1.xml.rels"] = rels
    assert opc.relationships(package, "xl/worksheets/sheet1.xml") == []
    assert opc.add_relationship(package, "xl/worksheets/sheet1.xml", REL_T + "/comments", "xl/comments1.xml") == "rId1"
    got = opc.relationships(package, "xl/worksheets/sheet1.xml")
    assert [(r["id"], r["target"], r["part"]) for r in got] == [("rId1", "../comments1.xml", "xl/comments1.xml")]


@pytest.mark.parametrize(
    "types",
    [
        f'<Types xmlns="{TYPES}"><Default Extension="xml" ContentType="application/xml"/></Types>',
        f"<ct:Types xmlns:ct='{TYPES}'><ct:Default Extension='XML' ContentType='application/xml'/></ct:Types>",
        f'<Types xmlns="{TYPES}"><Default Extension="xml" ContentType="application/xml"></Default></Types>',
    ],
)
def test_content_types_in_any_spelling(types):
    package = {"[Content_Types].xml": types.encode()}
    assert opc.content_type(package, "xl/comments1.xml") == "application/xml"
    opc.declare(package, "xl/comments1.xml", "application/comments")
    assert opc.content_type(package, "xl/comments1.xml") == "application/comments"
    assert opc.content_type(package, "XL/Comments1.XML") == "application/comments"  # part names ignore case
    opc.declare_default(package, "vml", "application/vml")
    assert opc.content_type(package, "xl/drawings/a.vml") == "application/vml"
    opc.remove_parts(package, {"xl/Comments1.xml"})
    assert opc.content_type(package, "xl/comments1.xml") == "application/xml"
    assert b"ns0" not in package["[Content_Types].xml"]


@pytest.mark.parametrize(
    "case,package,expected",
    [
        ("as Excel writes it", _package(TWO, TWO_RELS), None),
        ("prefixed", _package(TWO, TWO_RELS, wb_prefix="x", rels_prefix="pr"), None),
        ("Strict", _package(TWO, TWO_RELS, main=MAIN_S, rel=REL_S), None),
        ("no style table", _package(TWO, TWO_RELS), None),
        ("not SpreadsheetML", _package(TWO, TWO_RELS, main="urn:other"), "its workbook part xl/workbook.xml is not SpreadsheetML"),
    ],
)
def test_only_a_workbook_that_truly_cannot_be_kept_is_written_anew(tmp_path, case, package, expected):
    path = tmp_path / "book.xlsx"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in package.items():
            z.writestr(name, data)
    got = opc.refusal(path)
    assert (got if got is None else got[: len(expected)]) == expected, case


@pytest.mark.parametrize("main,rel", [(MAIN_T, REL_T), (MAIN_S, REL_S)])
def test_a_package_without_a_style_table_gets_one_in_its_namespace(main, rel):
    package = _package(TWO, TWO_RELS, main=main, rel=rel, wb_prefix="x")
    name = stylesxml.ensure(package)
    assert name == "xl/styles.xml" and opc.styles_part(package) == name
    assert package[name].startswith(b"<?xml") and f'<styleSheet xmlns="{main}">'.encode() in package[name]
    assert opc.content_type(package, name) == "application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"
    assert [r["written_type"] for r in opc.relationships(package, "xl/workbook.xml")][-1] == rel + "/styles"
    assert stylesxml.ensure(package) == name  # once


# -- Excel 4 macro sheets are macros ---------------------------------------------------------------

MACRO_SHEETS = [("Transfers", "rId1"), ("Macro1", "rId2"), ("Notes", "rId3")]
MACRO_RELS = [
    ("rId1", "worksheet", "worksheets/sheet1.xml"),
    ("rId2", f"{MS_REL}/xlMacrosheet", "macrosheets/sheet1.xml"),
    ("rId3", "worksheet", "worksheets/sheet2.xml"),
    ("rId4", "calcChain", "calcChain.xml"),
]
MACRO_NAMES = (
    "<definedNames>"
    '<definedName name="_xlnm._FilterDatabase" localSheetId="1" hidden="1">Macro1!$A$1:$A$3</definedName>'
    '<definedName name="_xlnm.Print_Titles" localSheetId="2">Notes!$1:$1</definedName>'
    '<definedName name="Auto_Open">Macro1!$A$1</definedName>'
    "<definedName name=\"Quoted\">'Macro1'!$A$1:$A$2</definedName>"
    '<definedName name="Rate">Transfers!$B$2</definedName>'
    '<definedName name="Label">"Macro1!A1"</definedName>'
    '<definedName name="Local" localSheetId="0">Transfers!$C$2</definedName>'
    "</definedNames>"
)


@pytest.mark.parametrize(
    "case,views,macro_type,kept_views",
    [
        # the active tab was the sheet after the macro sheet: it moves one to the left with its sheet
        ("after", '<bookViews><workbookView activeTab="2" firstSheet="1"/></bookViews>', "xlMacrosheet", 'activeTab="1" firstSheet="1"'),
        # the macro sheet itself was active: the first visible sheet after it takes its place
        ("macro sheet active", '<bookViews><workbookView activeTab="1"/></bookViews>', "xlMacrosheet", 'activeTab="1"'),
        ("active before", '<bookViews><workbookView activeTab="0"/></bookViews>', "xlMacrosheet", 'activeTab="0"'),
        ("an international macro sheet", '<bookViews><workbookView activeTab="2"/></bookViews>', "xlIntlMacrosheet", 'activeTab="1"'),
    ],
)
def test_an_excel_4_macro_sheet_is_removed_with_what_belongs_to_it(case, views, macro_type, kept_views):
    rels = [(i, t.replace("xlMacrosheet", macro_type), target) for i, t, target in MACRO_RELS]
    package = _package(MACRO_SHEETS, rels, names=MACRO_NAMES, views=views)
    package["xl/macrosheets/sheet1.xml"] = f'<xm:macrosheet xmlns:xm="{MAIN_T}"><xm:sheetData/></xm:macrosheet>'.encode()
    package["xl/macrosheets/_rels/sheet1.xml.rels"] = (
        f'<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{REL_T}/printerSettings" '
        f'Target="../printerSettings/printerSettings1.bin"/></Relationships>'
    ).encode()
    package["xl/printerSettings/printerSettings1.bin"] = b"printer"
    package["xl/calcChain.xml"] = f'<calcChain xmlns="{MAIN_T}"><c r="A1" i="2"/></calcChain>'.encode()
    before = dict(package)
    assert "xl/macrosheets/sheet1.xml" in executable_parts(package)
    removed = remove_macros(package)
    assert removed == [Macro("macrosheet", "Macro1")] and describe(removed) == "the Excel 4 macro sheet Macro1"
    assert [(s["name"], s["part"], s["index"]) for s in opc.sheets(package)] == [
        ("Transfers", "xl/worksheets/sheet1.xml", 0),
        ("Notes", "xl/worksheets/sheet2.xml", 1),
    ]
    gone = {"xl/macrosheets/sheet1.xml", "xl/macrosheets/_rels/sheet1.xml.rels", "xl/printerSettings/printerSettings1.bin"}
    gone.add("xl/calcChain.xml")  # Excel's calculation chain names the macro sheet's cells: Excel rebuilds it
    assert set(package) == set(before) - gone, case
    assert {r["id"] for r in opc.relationships(package, "xl/workbook.xml")} == {"rId1", "rId3"}
    assert b"macrosheet" not in package["[Content_Types].xml"] and b"calcChain" not in package["[Content_Types].xml"]
    wb = package["xl/workbook.xml"].decode()
    names = re.findall(r'<definedName name="([^"]+)"(?: localSheetId="(\d+)")?', wb)
    # the macro sheet's own filter and the names referring to it go; the quoted text "Macro1!A1" is no reference
    assert names == [("_xlnm.Print_Titles", "1"), ("Rate", ""), ("Label", ""), ("Local", "0")], case
    assert kept_views in wb
    assert all(package[n] == before[n] for n in set(package) - {"xl/workbook.xml", "xl/_rels/workbook.xml.rels", "[Content_Types].xml"})


def test_the_vba_project_and_a_macro_sheet_are_named_in_the_order_found():
    package = _package(MACRO_SHEETS, MACRO_RELS[:3] + [("rId9", f"{MS_REL}/vbaProject", "vbaProject.bin")], names=MACRO_NAMES)
    package["xl/macrosheets/sheet1.xml"] = f'<macrosheet xmlns="{MAIN_T}"/>'.encode()
    package["xl/vbaProject.bin"] = b"code"
    main = b'<Override PartName="/xl/workbook.xml" ContentType="' + MACRO_MAIN + b'"/>'
    package["[Content_Types].xml"] = package["[Content_Types].xml"].replace(b"</Types>", main + b"</Types>")
    removed = remove_macros(package)
    assert describe(removed) == "the VBA project and the Excel 4 macro sheet Macro1"
    assert "xl/vbaProject.bin" not in package and "xl/macrosheets/sheet1.xml" not in package
    assert PLAIN_MAIN in package["[Content_Types].xml"] and MACRO_MAIN not in package["[Content_Types].xml"]
    assert remove_macros(package) == [] and macros(package) == []


@pytest.mark.parametrize(
    "case,rels,asks,parses,ids",
    [
        # the readers ask a package being edited the same part again and again: one parse of its bytes
        ("the same bytes, asked three times", TWO_RELS, 3, 1, ["rId1", "rId2"]),
        ("asked once", TWO_RELS, 1, 1, ["rId1", "rId2"]),
        # no relationship: still one parse
        ("an empty list", [], 2, 1, []),
    ],
)
def test_the_readers_parse_a_part_once_for_the_same_bytes(monkeypatch, case, rels, asks, parses, ids):
    opc._parsed_bytes.cache_clear()
    package = _package(TWO, rels)
    seen = []
    real = opc.xmlparts.parse
    monkeypatch.setattr(opc.xmlparts, "parse", lambda data, name: seen.append(name) or real(data, name))
    for _ in range(asks):
        assert [r["id"] for r in opc.relationships(package, "xl/workbook.xml")] == ids, case
    assert seen.count("xl/_rels/workbook.xml.rels") == parses, case


def test_a_reader_sees_each_change_and_a_malformed_part_is_refused_every_time():
    opc._parsed_bytes.cache_clear()
    package = _package(TWO, TWO_RELS)
    assert [r["id"] for r in opc.relationships(package, "xl/workbook.xml")] == ["rId1", "rId2"]
    opc.add_relationship(package, "xl/workbook.xml", REL_T + "/comments", "xl/comments1.xml")  # new bytes: parsed anew
    assert [r["id"] for r in opc.relationships(package, "xl/workbook.xml")] == ["rId1", "rId2", "rId3"]
    opc.remove_relationships(package, "xl/workbook.xml", {"rId3"})
    assert [r["id"] for r in opc.relationships(package, "xl/workbook.xml")] == ["rId1", "rId2"]
    package["xl/_rels/workbook.xml.rels"] = b"<Relationships"  # not well-formed: refused, and again (a refusal is not kept)
    for _ in range(2):
        with pytest.raises(Refused, match="xl/_rels/workbook.xml.rels is not well-formed XML"):
            opc.relationships(package, "xl/workbook.xml")
