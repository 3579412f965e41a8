"""batch.package: an .xlsm's package without its VBA project, everything else as it was."""

from __future__ import annotations

import io
import zipfile

import openpyxl
import python_calamine
from defusedxml import ElementTree

from batch.package import MACRO_MAIN, PLAIN_MAIN, without_macros


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
    assert removed == ["xl/vbaProject.bin", "xl/vbaProjectSignature.bin"]
    assert set(out) == set(parts) - set(removed)
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
