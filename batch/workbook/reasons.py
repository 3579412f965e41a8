"""The reason a workbook cannot be read, in the user's words: which part or sheet, what is wrong
with it, and what to do. Never a library's exception text or class: python-calamine, zipfile and
the XML parsers each say what failed inside them, which tells a finance team nothing.

`unreadable(name, err, path, sheet)` maps what the readers raise to such a reason, looking into
the package where that names the problem better (which cell refers to which shared string);
`for_failure(name, err)` is the fallback for anything else.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from pathlib import Path

from batch.workbook.opened import Opened, opening
from batch.workbook.safety import (
    ATTR_R,
    ATTR_T,
    WORKBOOK_RELS,
    damaged,
    elements_only,
    part_named,
    read_part,
    relationship_map,
    sheet_parts,
    sheet_patterns,
)

AGAIN = "open it in Excel or LibreOffice, save it again as .xlsx and drop it in again"
ROW_ZERO = re.compile(rb"""<(?:[A-Za-z_][\w.-]*:)?(?:row|c)\b[^>]*?\br\s*=\s*["'](?:[A-Za-z]{1,3})?0["']""")
STRING_INDEX = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?v\b[^>]*>\s*(\d+)\s*<")
SI = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?si\b")
PART_IN_MESSAGE = re.compile(r"'([^']+\.(?:xml|rels|bin|vml))'")


def unreadable(name: str, err: BaseException, path: Opened | Path | None = None, sheet: str | None = None) -> str:
    """The reason for an error a reader raised reading the workbook `name` (or its sheet `sheet`);
    `path`: the workbook, opened (or its path), looked into for a better reason."""
    text = str(err)
    where = f"sheet {sheet!r} of {name}" if sheet else name
    if isinstance(err, zipfile.BadZipFile | zlib.error | EOFError):
        m = PART_IN_MESSAGE.search(text)
        return damaged(name, err, m.group(1) if m else None)
    if "shared strings table" in text or "string index" in text.lower():
        return _string_index(name, sheet, path) or (
            f"{where} has a cell that refers to a shared string the workbook's shared string table does not hold "
            f"(the workbook is damaged, or was written by a pre-release version of Excel); {AGAIN}."
        )
    if "row component" in text or "column component" in text or "alphanumeric" in text or "column name" in text:
        if path is not None and sheet is not None and _uses_row_zero(path, sheet):
            return (
                f"{where} numbers a row 0 (a row or cell reference such as A0), but rows are numbered from 1, so its "
                f"cells cannot be placed; {AGAIN}."
            )
        return f"{where} has a cell or range reference that is not a valid cell address (such as A0 or 1A); {AGAIN}."
    if "float" in text or "integer" in text:
        return f"{where} has a number cell whose value is not a number (a value such as 1,5 or a blank with spaces); {AGAIN}."
    if "sheet:type" in text or "Expecting a worksheet" in text:
        return f"{where} has a sheet of a kind that cannot be read as a worksheet; {AGAIN}."
    if "sheet:state" in text:
        return f"{where} has a sheet whose visibility is not one Excel writes; {AGAIN}."
    if "Relationship not found" in text or "File not found" in text or "not found" in text.lower():
        return f"{where} refers to a part of the workbook that it does not hold (a broken relationship between its parts); {AGAIN}."
    if "Xml" in text or "xml" in text:
        return f"{where} has a part that is not well-formed XML (damaged, or cut short); {AGAIN}."
    if "password" in text.lower():
        return f"{name} is password-protected (encrypted); remove the password in Excel and drop it in again."
    return for_failure(name, err)


def for_failure(name: str, err: BaseException) -> str:
    """The reason for any other failure met processing the file: no library text, no class name."""
    if isinstance(err, zipfile.BadZipFile | zlib.error):
        return damaged(name, err)
    return (
        f"{name} could not be processed: some part of it is written in a way njcredits cannot read or annotate, "
        f"although its data may be sound; {AGAIN}. If it fails again, send the file to the njcredits maintainers."
    )


def _uses_row_zero(path: Opened | Path, sheet: str) -> bool:
    try:
        with opening(path) as opened:
            part = sheet_parts(opened).get(sheet)
            return part is not None and ROW_ZERO.search(read_part(opened.zip, part)) is not None
    except Exception:  # noqa: BLE001 - only a better reason was sought
        return False


def _string_index(name: str, sheet: str | None, path: Opened | Path | None) -> str | None:
    """`sheet` has a cell referring to shared string N while the table holds M: say so, naming the cell."""
    if path is None or sheet is None:
        return None
    try:
        with opening(path) as opened:
            z = opened.zip
            part = sheet_parts(opened).get(sheet)
            if part is None:
                return None
            rels = relationship_map(opened, WORKBOOK_RELS, "xl").values()
            strings = next((r["part"] for r in rels if r["kind"] == "sharedStrings" and r["part"]), None)
            strings = strings or part_named(z.namelist(), "xl/sharedStrings.xml")
            held = len(SI.findall(read_part(z, strings))) if strings else 0
            data = elements_only(read_part(z, part))
            pat = sheet_patterns(data)
            for cell in pat.cell.finditer(data):
                kind = ATTR_T.search(cell.group(1))
                value = STRING_INDEX.search(cell.group(0)) if kind and kind.group(1) == b"s" else None
                if value and int(value.group(1)) >= held:
                    ref = ATTR_R.search(cell.group(1))
                    at = f"cell {ref.group(1).decode()}{ref.group(2).decode()}" if ref else "a cell"
                    table = (
                        f"the workbook's shared string table holds {held:,} (numbered 0 to {held - 1:,})"
                        if held
                        else "the workbook has no shared string table"
                    )
                    return (
                        f"sheet {sheet!r} of {name}: {at} refers to shared string {int(value.group(1)):,}, but {table}, so "
                        f"the cell's text is missing (the workbook is damaged, or was written by a pre-release version of "
                        f"Excel); {AGAIN}."
                    )
    except Exception:  # noqa: BLE001 - only a better reason was sought
        return None
    return None
