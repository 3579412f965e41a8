"""Build the bundled sample workbooks of `sample_inputs/` from every program's sample rows.

Run `python tests/samples.py` to regenerate them; `tests/test_template_and_samples.py` checks the
committed files still hold what this script writes. Each program declares its sample rows and the
workbook they go to (`batch/programs/<program>/intake.py`, `Sample`); a program that names no
workbook gets one of its own. This file holds only the workbooks' own layouts (title rows, formats,
a sheet of contacts): the realistic shapes a month's intake comes in.
"""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path

import xlsxwriter

from batch.programs import ORDER, PROGRAMS

SAMPLES = Path(__file__).resolve().parent.parent / "sample_inputs"
SAMPLE = SAMPLES / "transfers-2026-11.xlsx"  # the one the README's first run starts with


def workbook_of(program) -> str:
    """The sample workbook a program's rows go to: the one it names, or one of its own."""
    return program.intake.sample.workbook or f"{program.rules.replace('_', '-')}-sample.xlsx"


def workbooks() -> dict[str, list[tuple[str, tuple[str, ...], tuple[tuple, ...]]]]:
    """Each sample workbook's file name and its sheets (name, headers, rows), ordered by each
    sample's `order`, then in ORDER."""
    out: dict[str, list] = {}
    ranked = sorted(PROGRAMS, key=lambda p: (workbook_of(p), p.intake.sample.order, ORDER.index(p.rules)))
    for p in ranked:
        out.setdefault(workbook_of(p), []).append((p.name, p.intake.sample.headers, p.intake.sample.rows))
    return dict(sorted(out.items()))


# Each program's sample sheet: its headers and rows, by sheet name.
SHEETS = {p.name: (list(p.intake.sample.headers), [list(row) for row in p.intake.sample.rows]) for p in PROGRAMS}


def write_value(ws, r: int, c: int, v, date_format, number_format) -> None:
    """Text as text (never a formula), dates as dates, numbers with the given format; blanks skipped."""
    if v is None or v == "":
        return
    if isinstance(v, str):
        ws.write_string(r, c, v)
    elif isinstance(v, dt.date):
        ws.write_datetime(r, c, v, date_format)
    else:
        ws.write_number(r, c, v, number_format)


def _open(path: Path, title: str) -> xlsxwriter.Workbook:
    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    wb.set_properties({"title": title, "created": dt.datetime(2026, 11, 1)})
    return wb


def _titled(path: Path, sheets) -> Path:
    """A finance team's workbook: a title and a note above the header row, a blank row between
    programs after the first 20 rows, and a sheet of contacts (one cell looks like a formula)."""
    wb = _open(path, "Credit transfer certificates, November 2026 intake")
    bold = wb.add_format({"bold": True})
    money = wb.add_format({"num_format": "#,##0.00"})
    date = wb.add_format({"num_format": "m/d/yyyy"})
    for name, headers, rows in sheets:
        ws = wb.add_worksheet(name)
        ws.write_string(0, 0, "Tax credit transfer certificates: November 2026 intake", bold)
        ws.write_string(1, 0, "Prepared by the incentives finance team; amounts in US dollars")
        for j, h in enumerate(headers):
            ws.write_string(3, j, h, bold)
            ws.set_column(j, j, 22)
        r = 4
        for i, row in enumerate(rows):
            if i == 20:
                r += 1  # a blank row between programs, as finance workbooks often have
            for j, v in enumerate(row):
                write_value(ws, r, j, v, date, money)
            r += 1
    contacts = wb.add_worksheet("Contacts")
    contacts.write_row(0, 0, ["Name", "Role", "Email"], bold)
    contacts.write_row(1, 0, ["Dana Whitfield", "Incentives controller", "mailto:dana.whitfield@example.com"])
    contacts.write_row(2, 0, ["Luis Ortega", "Tax credit analyst", '=IF(1,"not a formula")'])
    wb.close()
    return path


def _frozen(path: Path, sheets) -> Path:
    """Wrapped headers, whole-dollar money and frozen panes (the ID and name columns)."""
    wb = _open(path, "Grow NJ awards, November 2026 intake")
    bold = wb.add_format({"bold": True, "text_wrap": True})
    money = wb.add_format({"num_format": "#,##0"})
    date = wb.add_format({"num_format": "m/d/yyyy"})
    for name, headers, rows in sheets:
        ws = wb.add_worksheet(name)
        for j, h in enumerate(headers):
            ws.write_string(0, j, h, bold)
            ws.set_column(j, j, 16)
        for r, row in enumerate(rows, start=1):
            for j, h in enumerate(headers):
                write_value(ws, r, j, row[j], date, money if h.endswith("($)") else None)
        ws.freeze_panes(1, 2)
    wb.close()
    return path


def _plain(path: Path, sheets, title: str | None = None) -> Path:
    """A sample workbook of several intake sheets: bold headers, money, percent and date formats."""
    wb = _open(path, title or f"{', '.join(name for name, _, _ in sheets)} intake, November 2026")
    bold = wb.add_format({"bold": True, "text_wrap": True})
    money = wb.add_format({"num_format": "#,##0.00"})
    pct = wb.add_format({"num_format": "0%"})
    date = wb.add_format({"num_format": "m/d/yyyy"})
    for name, headers, rows in sheets:
        ws = wb.add_worksheet(name)
        for j, h in enumerate(headers):
            ws.write_string(0, j, h, bold)
            ws.set_column(j, j, 18)
        for r, row in enumerate(rows, start=1):
            for j, v in enumerate(row):
                h = headers[j]
                fmt = money if h.endswith("($)") else pct if ("Percentage" in h or "Time at" in h or "Subject to" in h) else None
                write_value(ws, r, j, v, date, fmt)
    wb.close()
    return path


# The bundled workbooks' own layouts; a workbook not named here is written plain.
LAYOUTS = {
    "transfers-2026-11.xlsx": _titled,
    "grow-nj-2026-11.xlsx": _frozen,
    "beip-brrap-erg-2026-11.xlsx": partial(_plain, title="BEIP, BRRAP and ERG residential intake, November 2026"),
    "emerge-gsgz-compliance-2026-11.xlsx": partial(
        _plain, title="Emerge, Growth Zone property and Grow NJ compliance intake, November 2026"
    ),
}


def build_workbook(name: str, path: Path | None = None) -> Path:
    """Write the sample workbook `name` (to `sample_inputs/` unless `path` is given)."""
    return LAYOUTS.get(name, _plain)(Path(path) if path else SAMPLES / name, workbooks()[name])


def build_program(sheet: str, path: Path) -> Path:
    """The sample workbook that holds sheet `sheet`, written to `path`."""
    name = workbook_of(next(p for p in PROGRAMS if p.name == sheet))
    return build_workbook(name, path)


if __name__ == "__main__":
    for name in workbooks():
        print(build_workbook(name))
