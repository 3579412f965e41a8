"""Shared helpers: build typed frames and intake workbooks from plain rows."""

from __future__ import annotations

import datetime as dt
import html
import re
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import xlsxwriter

ROOT = Path(__file__).resolve().parent.parent
# The Transfers columns without the optional Certificate Amount: the smallest valid intake sheet, used across tests.
TRANSFER_HEADERS = [
    "Transfer ID",
    "Program",
    "Certificate ID",
    "Transferor",
    "Transferee",
    "Transfer Date",
    "Credit Amount Transferred ($)",
    "Consideration Received ($)",
]
sys.path.insert(0, str(ROOT / "tests"))


def typed_frame(spec, rows: list[dict]) -> pd.DataFrame:
    """Rows given as {header: cell} -> the typed frame a calculator receives (must validate)."""
    from validators.schema import validate

    headers = [c.header for c in spec.columns]
    raw = pd.DataFrame([{h: r.get(h, "") for h in headers} for r in rows], columns=headers, dtype=object)
    typed, findings = validate(spec, raw)
    assert findings.empty, findings.to_dict("records")
    return typed


def write_workbook(path: Path, sheets: dict[str, list[list]]) -> Path:
    """A workbook with the given grids (first row usually the headers); text always as text."""
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    date = wb.add_format({"num_format": "yyyy-mm-dd"})
    for name, grid in sheets.items():
        ws = wb.add_worksheet(name)
        for r, row in enumerate(grid):
            for c, v in enumerate(row):
                if v is None:
                    continue
                if isinstance(v, str):
                    ws.write_string(r, c, v)
                elif isinstance(v, (dt.date, dt.datetime)):
                    ws.write_datetime(r, c, v, date)
                elif isinstance(v, bool):
                    ws.write_boolean(r, c, v)
                else:
                    ws.write_number(r, c, v)
    wb.close()
    return path


@pytest.fixture
def workbook(tmp_path):
    def make(sheets: dict[str, list[list]], name: str = "intake.xlsx") -> Path:
        return write_workbook(tmp_path / name, sheets)

    return make


# the tool's own links of the Findings sheet's Cell column (`=HYPERLINK("#Transfers!H12","Transfers!H12")`)
OWN_LINK = re.compile(r'HYPERLINK\("#((?:[A-Za-z_][A-Za-z0-9_]*|\'(?:[^\']|\'\')+\')![A-Z]{1,3}[0-9]+)","\1"\)')


def foreign_formulas(path: Path) -> list[tuple[str, str]]:
    """(part, formula) of every formula in the workbook's sheets other than the tool's own links:
    text from the input must never come back as one."""
    out = []
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/sheet"):
                for f in re.findall(r"<f>(.*?)</f>", z.read(name).decode("utf-8"), flags=re.S):
                    if not OWN_LINK.fullmatch(html.unescape(f)):
                        out.append((name, f))
    return out
