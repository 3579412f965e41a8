"""How the tool's cells look in the sheets xlsxwriter writes, shared by every sheet the tool
draws (the tool's sheets, `batch.workbook.toolsheets`; the Rules sheet, `batch.workbook.rulebook`;
a workbook written anew, `batch.workbook.writing`; the tool's columns, `batch.workbook.toolcolumns`):
the formats, each made once (`Formats`), the number formats and colours, the writer's options,
the height of wrapped text, and the printed page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xlsxwriter

from batch.workbook.xlsxwriter_private import xf_index

MONEY = "#,##0.00"
PERCENT = "0.00%"
DATE = "yyyy-mm-dd"
DATETIME = "yyyy-mm-dd hh:mm:ss"
TIME = "hh:mm:ss"
FILL = {"error": "#FFC7CE", "warning": "#FFEB9C"}
HEADER_BG = "#D9D9D9"
COMPUTED_BG = "#BDD7EE"


class Formats:
    """xlsxwriter formats, each created once."""

    def __init__(self, wb: xlsxwriter.Workbook):
        self.wb = wb
        self.cache: dict[tuple, object] = {}

    def get(
        self,
        num_format: str | None = None,
        fill: str | None = None,
        header: str | None = None,
        wrap=False,
        link=False,
        title=False,
        center=False,
        top=False,
        right=False,
    ):
        key = (num_format, fill, header, wrap, link, title, center, top, right)
        if key not in self.cache:
            props = {}
            if num_format:
                props["num_format"] = num_format
            if fill:
                props.update(bg_color=fill, pattern=1)
            if header:
                props.update(bold=True, bg_color=header, pattern=1, bottom=1, text_wrap=True, valign="top")
            if wrap:
                props.update(text_wrap=True, valign="top")
            if link:
                props.update(font_color="#0563C1", underline=1)
            if title:  # a title runs over the empty cells to its right: never wrapped
                props.update(bold=True, font_size=12)
            if center:
                props.update(align="center")
            if top:
                props.update(valign="top")
            if right:  # a header over numbers, which Excel aligns right
                props.update(align="right")
            self.cache[key] = self.wb.add_format(props) if props else None
        return self.cache[key]


def style(fmt) -> str:
    """The ` s="N"` attribute of a format (its index in the style table is fixed on first use)."""
    index = xf_index(fmt)
    return f' s="{index}"' if index else ""


LINE_HEIGHT = 15  # points: one line of the default 11-point font


def lines(text, width: float) -> int:
    """Lines a text takes when wrapped in a column `width` characters wide (an estimate: one
    character a unit of width, less one for the margins)."""
    per_line = max(int(width) - 1, 1)
    return sum(max(1, -(-len(part) // per_line)) for part in str(text).split("\n"))


def line_counts(texts: pd.Series, width: float) -> np.ndarray:
    """`lines` of a whole column of texts (paragraphs counted approximately: each line feed adds one)."""
    t = texts.fillna("").astype(str)
    per_line = max(int(width) - 1, 1)
    return (np.maximum(1, -(-t.str.len().to_numpy() // per_line)) + t.str.count("\n").to_numpy()).astype(int)


def print_setup(ws, title_rows: int | None = 0) -> None:
    """Printed as a reviewer reads it: landscape, one page wide, the header row on every page, and
    the sheet, file and page in the footer."""
    ws.set_landscape()
    ws.fit_to_pages(1, 0)
    if title_rows is not None:
        ws.repeat_rows(title_rows)
    ws.set_footer("&L&A&C&F&RPage &P of &N")


WRITER_OPTIONS = {
    "constant_memory": True,
    "strings_to_formulas": False,
    "strings_to_urls": False,
    "strings_to_numbers": False,
    "nan_inf_to_errors": True,
}
