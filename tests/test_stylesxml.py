"""batch.workbook.stylesxml: the tool's fills appended to a user's style table, each a copy of the cell's
own style with only the fill changed, marked so that a round trip gives the cell its style back."""

from __future__ import annotations

import io
import re
import zipfile

import openpyxl
import pytest
from lxml import etree
from openpyxl.styles import Alignment, Border, Font, Side

from batch.workbook.sheetrows import rewrite_rows
from batch.workbook.stylesxml import CONTENT_TYPE, ENTRY, FILLS, ORDER, Styles, add_fills, ensure, restored
from batch.workbook.xmlparts import REL, REL_STRICT


@pytest.fixture
def user_workbook(tmp_path):
    """A user's workbook: a bold money cell with a custom format, a bordered and wrapped date, a plain cell."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Transfers"
    ws["A1"], ws["B1"], ws["C1"] = 1250000, "2026-01-05", "plain"
    ws["A1"].number_format, ws["A1"].font = "$#,##0", Font(bold=True, color="FF0000FF")
    ws["B1"].border, ws["B1"].alignment = Border(left=Side(style="thin")), Alignment(wrap_text=True)
    wb.save(tmp_path / "user.xlsx")
    return tmp_path / "user.xlsx"


def _styles_of(path) -> tuple[bytes, dict[str, int]]:
    with zipfile.ZipFile(path) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
        return z.read("xl/styles.xml"), {ref: int(s) for ref, s in re.findall(r'<c r="([A-Z]+1)" s="(\d+)"', sheet)}


def test_a_flagged_cell_keeps_its_style_with_only_the_fill_changed(user_workbook, tmp_path):
    styles, used = _styles_of(user_workbook)
    wanted = {(used["A1"], "error"), (used["B1"], "warning")}
    new_styles, index = add_fills(styles, wanted)
    # every earlier entry keeps its index: the table only grows
    assert new_styles[: styles.index(b"<fills")] == styles[: styles.index(b"<fills")]
    out = tmp_path / "out.xlsx"
    with zipfile.ZipFile(user_workbook) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/styles.xml":
                data = new_styles
            elif item.filename == "xl/worksheets/sheet1.xml":
                restyle = {1: {0: index[(used["A1"], "error")], 1: index[(used["B1"], "warning")], 3: index[(used["A1"], "error")]}}
                data = b"".join(rewrite_rows(data, {}, restyle))
            zout.writestr(item, data)
    ws = openpyxl.load_workbook(io.BytesIO(out.read_bytes()))["Transfers"]
    a, b, d = ws["A1"], ws["B1"], ws["D1"]
    assert (a.fill.fgColor.rgb, b.fill.fgColor.rgb) == (FILLS["error"], FILLS["warning"])
    assert (a.value, a.number_format, a.font.b, a.font.color.rgb) == (1250000, "$#,##0", True, "FF0000FF")  # the user's
    assert (b.value, b.border.left.style, b.alignment.wrap_text) == ("2026-01-05", "thin", True)
    assert d.value is None and d.fill.fgColor.rgb == FILLS["error"]  # a blank cell a finding points at
    assert ws["C1"].fill.fgColor.rgb != FILLS["error"]  # untouched


@pytest.mark.parametrize("severity", ["error", "warning"])
def test_a_round_trip_finds_the_style_each_fill_replaced(user_workbook, severity):
    styles, used = _styles_of(user_workbook)
    new_styles, index = add_fills(styles, {(used["A1"], severity), (0, severity)})
    assert restored(new_styles) == {index[(used["A1"], severity)]: used["A1"], index[(0, severity)]: 0}
    assert restored(styles) == {}  # the user's own table holds no fill of the tool's
    assert f'name="njcredits {severity} {used["A1"]}"'.encode() in new_styles


NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
# style tables as producers write them
TABLES = {
    "empty element": f'{DECLARATION}<styleSheet xmlns="{NS}"/>',
    "empty element, single quotes, a space": f"<styleSheet xmlns='{NS}' />",
    "no named styles, counts missing and wrong": (
        f'<styleSheet xmlns="{NS}"><fonts><font><sz val="11"/><name val="Arial"/></font></fonts>'
        '<fills count="7"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
        '<borders count="1"><border/></borders><cellXfs count="9"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
        '<xf numFmtId="14" fontId="0" fillId="0" borderId="0" applyNumberFormat="1"/></cellXfs>'
        '<dxfs count="0"/><tableStyles count="0"/></styleSheet>'
    ),
    "one fill only, before dxfs and an extension list": (
        f'{DECLARATION}<styleSheet xmlns="{NS}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
        'mc:Ignorable="x14ac" xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac">'
        '<fonts count="1" x14ac:knownFonts="1"><font><sz val="11"/></font></fonts><fills count="1"><fill><patternFill/></fill></fills>'
        '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellXfs><dxfs count="0"/>'
        '<extLst><ext uri="{EB79DEF2-80B8-43e5-95BD-54CBDDF9020C}"/></extLst></styleSheet>'
    ),
    "prefixed (Open XML SDK)": (
        f"<x:styleSheet xmlns:x='{NS}'><x:fonts count='1'><x:font><x:sz val='11'/></x:font></x:fonts>"
        "<x:fills count='2'><x:fill><x:patternFill patternType='none'/></x:fill><x:fill><x:patternFill patternType='gray125'/></x:fill>"
        "</x:fills><x:borders count='1'><x:border/></x:borders><x:cellStyleXfs count='1'><x:xf numFmtId='0' fontId='0' fillId='0' "
        "borderId='0'/></x:cellStyleXfs><x:cellXfs count='2'><x:xf numFmtId='0' fontId='0' fillId='0' borderId='0' xfId='0'/>"
        "<x:xf numFmtId='3' fontId='0' fillId='0' borderId='0' xfId='0' applyNumberFormat='1'/></x:cellXfs><x:cellStyles count='1'>"
        "<x:cellStyle name='Normal' xfId='0' builtinId='0'/></x:cellStyles></x:styleSheet>"
    ),
    "Strict (Excel's Strict Open XML)": (
        f'{DECLARATION}<styleSheet xmlns="{STRICT}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
        '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1">'
        '<xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="2">'
        '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0"/>'
        '</cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>'
    ),
    "Strict, prefixed": (
        f'<s:styleSheet xmlns:s="{STRICT}"><s:cellXfs><s:xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></s:cellXfs></s:styleSheet>'
    ),
    "no styles part": None,
}


def _tool_table() -> bytes:
    """A style table as xlsxwriter writes the tool's own: a bold header and a money format."""
    return (
        f'<styleSheet xmlns="{NS}"><numFmts count="1"><numFmt numFmtId="164" formatCode="&quot;$&quot;#,##0.00"/></numFmts>'
        '<fonts count="2"><font><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font>'
        '<font><b/><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font></fonts>'
        '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="3">'
        '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" '
        'applyFont="1"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>'
    ).encode()


@pytest.mark.parametrize("producer", list(TABLES))
def test_any_style_table_takes_the_tools_styles(producer):
    """Fills and the tool's own styles go into any producer's table, in its namespace and prefix,
    lists made in the schema's order, counts right; the output is XML; a round trip finds the
    style each fill replaced, and a second pass adds nothing."""
    source = None if TABLES[producer] is None else TABLES[producer].encode()
    styles = Styles(source)
    ns = styles.ns
    user_xfs = len(styles.items["cellXfs"])
    flagged = {(i, sev): styles.flagged(i, sev) for i in range(max(user_xfs, 1)) for sev in FILLS}
    merged = styles.merge(_tool_table())
    xml = styles.xml()
    root = etree.fromstring(xml)  # well-formed, one root
    original = etree.fromstring(source) if source else None
    assert etree.QName(root).namespace == (etree.QName(original).namespace if source else NS)
    assert root.prefix == (original.prefix if source else None)
    assert all(
        etree.QName(e).namespace == ns and e.prefix == root.prefix
        for e in root.iter()
        if isinstance(e.tag, str) and e.tag.startswith(f"{{{ns}}}")
    )
    assert xml.count(b"xmlns") == (source.count(b"xmlns") if source else 1)  # no namespace declared again
    if source and source.startswith(b"<?xml"):
        assert xml.startswith(DECLARATION.encode())
    order = [etree.QName(c).localname for c in root if isinstance(c.tag, str)]
    ranks = [ORDER.index(n) for n in order]
    assert ranks == sorted(ranks) and len(set(order)) == len(order), order  # the schema's order, each list once
    lists = {etree.QName(c).localname: c for c in root}
    for name in (n for n in ENTRY if n != "dxfs"):  # the lists the tool writes to (a table may have no dxfs)
        entries = [e for e in lists[name] if etree.QName(e).localname == ENTRY[name]]
        assert lists[name].get("count") == str(len(entries)), name
    fills = [f for f in lists["fills"]]
    assert fills[1][0].get("patternType") == "gray125"  # Excel reserves fills 0 and 1: never the tool's
    xfs = [x for x in lists["cellXfs"]]
    for (own, severity), index in flagged.items():
        fill = fills[int(xfs[index].get("fillId"))]
        assert fill[0][0].get("rgb") == FILLS[severity] and int(xfs[index].get("fillId")) >= 2
        assert {k: v for k, v in xfs[index].attrib.items() if k not in ("fillId", "applyFill", "xfId")} == {
            k: v for k, v in xfs[own].attrib.items() if k not in ("fillId", "applyFill", "xfId")
        }  # the user's number format, font, border
    assert int(xfs[merged[2]].get("numFmtId")) >= 164 and len(set(merged.values())) == 3
    assert restored(xml) == {index: own for (own, _), index in flagged.items()}
    again = Styles(xml)
    assert {key: again.flagged(*key) for key in flagged} == flagged and again.merge(_tool_table()) == merged
    assert again.xml() == xml  # nothing added twice


def _package(strict: bool, styles: bool) -> dict[str, bytes]:
    """A workbook package's parts (Transitional or Strict), with or without a style table."""
    main, base = (STRICT, REL_STRICT + "/") if strict else (NS, REL + "/")
    rels = f'<Relationship Id="rId1" Type="{base}worksheet" Target="worksheets/sheet1.xml"/>'
    if styles:
        rels += f'<Relationship Id="rId2" Type="{base}styles" Target="Styles.xml"/>'
    out = {
        "[Content_Types].xml": b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        b'<Default Extension="xml" ContentType="application/xml"/></Types>',
        "_rels/.rels": f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" '
        f'Type="{base}officeDocument" Target="xl/workbook.xml"/></Relationships>'.encode(),
        "xl/workbook.xml": f'<workbook xmlns="{main}"><sheets/></workbook>'.encode(),
        "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}'
        "</Relationships>".encode(),
        "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{main}"><sheetData/></worksheet>'.encode(),
    }
    if styles:
        out["xl/Styles.xml"] = TABLES["prefixed (Open XML SDK)"].encode()
    return out


@pytest.mark.parametrize("strict", [False, True])
def test_a_package_without_a_style_table_gets_one(strict):
    parts = _package(strict, styles=False)
    name = ensure(parts)
    assert name == "xl/styles.xml" and etree.QName(etree.fromstring(parts[name])).namespace == (STRICT if strict else NS)
    base = REL_STRICT + "/" if strict else REL + "/"
    assert f'Type="{base}styles" Target="styles.xml"'.encode() in parts["xl/_rels/workbook.xml.rels"]
    assert b'PartName="/xl/styles.xml" ContentType="' + CONTENT_TYPE.encode() in parts["[Content_Types].xml"]
    assert ensure(parts) == name  # found by its relationship the next time
    styles = Styles(parts[name], name)
    assert styles.flagged(0, "error") == 1 and etree.fromstring(styles.xml()) is not None


def test_the_style_table_is_found_by_its_relationship():
    parts = _package(strict=True, styles=True)
    before = dict(parts)
    assert ensure(parts) == "xl/Styles.xml" and parts == before


def test_a_workbook_with_an_empty_style_table_comes_back_in_place(tmp_path):
    """`<styleSheet .../>` as an empty element: the tool's styles go inside it, the output's
    style table is XML, and a round trip works on the returned workbook."""
    from test_in_place import _edited, _transfers_book
    from test_tool_sheets import annotate

    from batch.pipeline import process

    def empty(name: str, data: bytes) -> bytes:
        if name == "xl/styles.xml":
            return f'<styleSheet xmlns="{NS}" />'.encode()
        if name.startswith("xl/worksheets/"):
            return re.sub(rb'\ss="\d+"', b"", data)  # the cells use the default style, the only one
        return data

    src = _edited(_transfers_book(tmp_path / "made" / "e.xlsx", lambda ws: None), tmp_path / "in" / "e.xlsx", empty)
    assert process(src).in_place
    out = annotate(src, tmp_path / "out")
    again = annotate(out, tmp_path / "again")
    for path in (out, again):
        with zipfile.ZipFile(path) as z:
            etree.fromstring(z.read("xl/styles.xml"))
        ws = openpyxl.load_workbook(path)["Transfers"]
        assert ws["H3"].fill.fgColor.rgb == FILLS["error"] and ws["A3"].value == "T-2"


def test_a_package_without_a_style_table_comes_back_with_one(tmp_path):
    """A package with no style table at all (its relationship, content type and part absent):
    the returned workbook, written in place, has Excel's default table with the tool's styles,
    and its round trip works."""
    from test_in_place import _transfers_book
    from test_tool_sheets import AS_OF

    from batch.pipeline import process
    from batch.workbook.inplace import write_in_place

    made = _transfers_book(tmp_path / "made" / "n.xlsx", lambda ws: None)
    src = tmp_path / "in" / "n.xlsx"
    src.parent.mkdir()
    with zipfile.ZipFile(made) as zin, zipfile.ZipFile(src, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/styles.xml":
                continue
            if item.filename == "[Content_Types].xml":
                data = re.sub(rb'<Override PartName="/xl/styles.xml"[^>]*/>', b"", data)
            elif item.filename == "xl/_rels/workbook.xml.rels":
                data = re.sub(rb"<Relationship[^>]*/styles\"[^>]*/>", b"", data)
            elif item.filename.startswith("xl/worksheets/"):
                data = re.sub(rb'\ss="\d+"', b"", data)
            zout.writestr(item.filename, data)
    out = write_in_place(process(src, as_of=AS_OF), tmp_path / "out" / "n.annotated.xlsx")
    again = write_in_place(process(out, as_of=AS_OF), tmp_path / "again" / "n.annotated.xlsx")
    for path in (out, again):
        with zipfile.ZipFile(path) as z:
            assert b"/styles" in z.read("xl/_rels/workbook.xml.rels") and CONTENT_TYPE.encode() in z.read("[Content_Types].xml")
            etree.fromstring(z.read("xl/styles.xml"))
        ws = openpyxl.load_workbook(path)["Transfers"]
        assert ws["H3"].fill.fgColor.rgb == FILLS["error"] and ws["A3"].value == "T-2"
