"""The blank intake template, generated from the sheet specifications (never edited by hand)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import xlsxwriter

from batch.calculators import programs
from validators.columns import YES_NO

TEMPLATE_NAME = "njcredits-intake-template.xlsx"
VALIDATION_ROWS = 5000  # rows below the header that get the drop-down lists
FIXED_TIME = dt.datetime(2026, 1, 1)  # document properties fixed, so regenerating changes nothing


def write_template(out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / TEMPLATE_NAME
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False})
    wb.set_properties({"title": "njcredits intake template", "created": FIXED_TIME})
    header = wb.add_format({"bold": True, "bg_color": "#D9D9D9", "pattern": 1, "bottom": 1, "text_wrap": True, "valign": "top"})
    required = wb.add_format({"bold": True, "bg_color": "#F8CBAD", "pattern": 1, "bottom": 1, "text_wrap": True, "valign": "top"})
    for module in programs():
        spec = module.SPEC
        ws = wb.add_worksheet(spec.name)
        for j, col in enumerate(spec.columns):
            ws.set_column(j, j, max(14, min(40, len(col.header) + 2)))
            ws.write_string(0, j, col.header, required if col.required else header)
            note = f"{col.header}: {col.hint}\nExpected: {col.expected()}.\n" + ("Required." if col.required else "Optional.")
            if col.record_id:
                note += " Record ID: must be unique in the sheet."
            ws.write_comment(0, j, note, {"x_scale": 2.5, "y_scale": 1.8})
            choices = col.codes if col.kind == "code" else YES_NO if col.kind == "yesno" else ()
            if choices:
                ws.data_validation(
                    1,
                    j,
                    VALIDATION_ROWS,
                    j,
                    {
                        "validate": "list",
                        "source": list(choices),
                        "error_type": "warning",
                        # Excel's limits: 32 characters of title, 255 of message
                        "error_title": col.header[:32],
                        "error_message": f"Expected {col.expected()}."[:255],
                    },
                )
        ws.freeze_panes(1, 0)
    wb.close()
    return path
