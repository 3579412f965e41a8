"""batch.stylesxml: the tool's fills appended to a user's style table, each a copy of the cell's
own style with only the fill changed, marked so that a round trip gives the cell its style back."""

from __future__ import annotations

import io
import re
import zipfile

import openpyxl
import pytest
from openpyxl.styles import Alignment, Border, Font, Side

from batch.sheetrows import rewrite_rows
from batch.stylesxml import FILLS, add_fills, restored


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
