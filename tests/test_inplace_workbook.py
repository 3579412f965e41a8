"""The workbook-level edits of a returned workbook, in every spelling of the workbook part: the
tool's sheets moved in (in the workbook's own namespace and prefixes; Strict parts in a Strict
workbook) and taken out again, leaving the package as it was; an Excel 4 macro sheet taken out
by the writer."""

from __future__ import annotations

import collections
import re
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest

from batch.pipeline import process
from batch.workbook import inplace, opc, xmlparts
from batch.workbook.writing import write

sys.path.insert(0, str(Path(__file__).parent))
from test_in_place import _edited, _transfers_book  # noqa: E402
from test_tool_sheets import AS_OF  # noqa: E402

MAIN = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"
WORKBOOK_PARTS = ("xl/workbook.xml", "xl/_rels/workbook.xml.rels", "[Content_Types].xml")


def _prefixed(parts: dict[str, bytes]) -> dict[str, bytes]:
    """The workbook part and its relationships under prefixes, single-quoted (as the Open XML SDK and hand-made packages write)."""
    wb = parts["xl/workbook.xml"].replace(b'xmlns="' + MAIN + b'"', b"xmlns:x='" + MAIN + b"'")
    wb = re.sub(rb"<(/?)(?![a-zA-Z0-9]+:)([a-zA-Z])", rb"<\1x:\2", wb)
    rels = parts["xl/_rels/workbook.xml.rels"].replace(b'xmlns="', b'xmlns:pr="')
    rels = re.sub(rb"<(/?)(Relationships?)\b", rb"<\1pr:\2", rels)
    return parts | {"xl/workbook.xml": wb, "xl/_rels/workbook.xml.rels": rels}


def _strict(parts: dict[str, bytes]) -> dict[str, bytes]:
    """The package's SpreadsheetML parts and relationships in their Strict namespaces and types."""
    return {name: xmlparts.to_strict(data) if name.endswith((".xml", ".rels")) else data for name, data in parts.items()}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wb")
    src = _transfers_book(folder / "t.xlsx", lambda ws: None)
    result = process(src, as_of=AS_OF)
    tool, _looks, _findings = inplace._tool_book(result)
    with zipfile.ZipFile(src) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    return parts, tool


@pytest.mark.parametrize(
    "case,spelling,sheet_tag,rels_tag,main,rel",
    [
        ("as openpyxl writes it", lambda p: p, b"<sheet ", b"<Relationship ", MAIN, REL),
        ("prefixed", _prefixed, b"<x:sheet ", b"<pr:Relationship ", MAIN, REL),
        ("Strict", _strict, b"<sheet ", b"<Relationship ", xmlparts.MAIN_STRICT.encode(), xmlparts.REL_STRICT.encode()),
    ],
)
def test_the_tools_sheets_come_in_in_the_workbooks_spelling_and_go_out_leaving_it_as_it_was(
    made, case, spelling, sheet_tag, rels_tag, main, rel
):
    user, tool = made
    parts = spelling(dict(user))
    before = dict(parts)
    moved = inplace.add_tool_sheets(parts, tool, collections.defaultdict(int))
    wb = parts["xl/workbook.xml"]
    listed = opc.sheets(parts)
    assert [s["name"] for s in listed] == ["Transfers", "Findings", "Summary", "Run", "Rules"], case
    assert all(s["part"] in parts for s in listed)
    assert wb.count(sheet_tag) == 5 and b"ns0" not in wb, case
    assert re.search(rb"<(?:x:)?definedName name=\"njcredits_Findings_[0-9a-f]{8}\" hidden=\"1\">'Findings'!\$A\$1</", wb), case
    assert parts["xl/_rels/workbook.xml.rels"].count(rels_tag) == len(listed) + 3 - 1, case  # the user's rels and one per sheet
    for new in moved.values():  # the tool's parts in the workbook's namespaces and relationship types
        data = parts[new]
        if new.endswith(".xml") and b"<worksheet" in data:
            assert b'xmlns="' + main + b'"' in data and b'xmlns:r="' + rel + b'"' in data, (case, new)
    kinds = {r["written_type"] for s in listed for r in opc.relationships(parts, "xl/workbook.xml") if r["part"] == s["part"]}
    assert kinds == {rel.decode() + "/worksheet"}, case
    assert b"tabSelected" not in parts[moved["xl/worksheets/sheet1.xml"]]
    # a second run takes them out first: the package as it was, part for part
    inplace.remove_tool_sheets(parts)
    assert set(parts) == set(before), case
    for name in WORKBOOK_PARTS:
        assert _same(parts[name]) == _same(before[name]), (case, name)


def _same(data: bytes) -> bytes:
    """A part as serialization writes it, without an empty list of defined names (openpyxl writes
    one; a list the tool's names leave empty goes)."""
    root = xmlparts.parse(data, "part")
    holder = xmlparts.child(root, "definedNames")
    if holder is not None and not len(holder):
        root.remove(holder)
    return xmlparts.serialize(root, b"")


def test_a_macro_sheet_is_taken_out_by_the_writer_with_its_names(tmp_path):
    """The writer given a workbook holding an Excel 4 macro sheet (the sheets read are the user's
    others): the macro sheet, its part, relationship, content type and the names referring to it
    are gone; the tool's sheets come after the user's."""
    macro = "http://schemas.microsoft.com/office/2006/relationships/xlMacrosheet"

    def edit(name: str, data: bytes) -> bytes:
        if name == "xl/workbook.xml":
            sheet = b'<sheet xmlns:r="' + REL + b'" name="Macro1" sheetId="9" r:id="rId90"/>'
            data = re.sub(rb"<definedNames\s*/>", b"", data.replace(b"</sheets>", sheet + b"</sheets>"))
            names = b'<definedNames><definedName name="Auto_Open">Macro1!$A$1</definedName></definedNames>'
            return data.replace(b"<calcPr", names + b"<calcPr")
        if name == "xl/_rels/workbook.xml.rels":
            rel = f'<Relationship Id="rId90" Type="{macro}" Target="macrosheets/sheet1.xml"/>'.encode()
            return data.replace(b"</Relationships>", rel + b"</Relationships>")
        if name == "[Content_Types].xml":
            over = b'<Override PartName="/xl/macrosheets/sheet1.xml" ContentType="application/vnd.ms-excel.macrosheet+xml"/>'
            return data.replace(b"</Types>", over + b"</Types>")
        return data

    plain = _transfers_book(tmp_path / "made" / "m.xlsx", lambda ws: None)
    src = _edited(plain, tmp_path / "in" / "m.xlsm", edit)
    with zipfile.ZipFile(src, "a") as z:
        z.writestr("xl/macrosheets/sheet1.xml", f'<xm:macrosheet xmlns:xm="{MAIN.decode()}"><xm:sheetData/></xm:macrosheet>')
    result = process(plain, as_of=AS_OF)
    result.path = src
    out = write(result, tmp_path / "out" / "m.xlsm.annotated.xlsx")
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        wb, types = z.read("xl/workbook.xml"), z.read("[Content_Types].xml")
    assert not any("macrosheet" in n for n in names) and b"macrosheet" not in types
    assert b"Macro1" not in wb and b"Auto_Open" not in wb
    book = openpyxl.load_workbook(out)
    assert book.sheetnames == ["Transfers", "Findings", "Summary", "Run", "Rules"]
    assert book["Transfers"]["M3"].value == "Flagged"
