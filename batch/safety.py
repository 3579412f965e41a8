"""Looking at a file before any reader touches it, and at what the readers hide.

`inspect(path, limits)` refuses, in milliseconds and before anything is inflated or parsed:
files that are not workbooks, encrypted (password-protected) workbooks, truncated or empty zips,
zip bombs (total uncompressed size, compression ratio, entry count), XML with a DOCTYPE (the way
in for entity-expansion attacks), and sheets whose declared dimension is absurd (the 5 KB file
with cells at A1 and XFD1048576 that makes the Rust readers abort the whole process).

`scan_cells(path)` finds, per sheet, what python-calamine reads as an empty cell: Excel error
values (#N/A, #DIV/0!, ...) and formulas saved without a calculated value.
"""

from __future__ import annotations

import html
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from defusedxml import ElementTree

OLE2_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")
ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
ZIP_MAGIC = b"PK"
XML_HEAD_BYTES = 4096
RATIO_MIN_BYTES = 1 << 20  # the compression ratio is judged on members of 1 MiB or more


@dataclass(frozen=True)
class Limits:
    max_uncompressed_mb: int = 2048
    max_compression_ratio: int = 100
    max_entries: int = 10_000
    max_cells: int = 60_000_000  # a sheet's declared rows x columns


class Refused(Exception):
    """The file is set aside; the message is one sentence saying what is wrong and what to do."""


def inspect(path: Path, limits: Limits = Limits()) -> str:
    """Return the kind of file ('zip', 'xls' or 'csv'), or raise Refused with the reason."""
    name = path.name
    if path.suffix.lower() == ".csv":
        return "csv"
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head.startswith(OLE2_MAGIC):
        data = path.read_bytes()
        if ENCRYPTED_STREAM in data:
            raise Refused(
                f"{name} is password-protected (encrypted); remove the password in Excel "
                f"(File > Info > Protect Workbook) and drop it in again."
            )
        return "xls"
    if not head.startswith(ZIP_MAGIC):
        raise Refused(
            f"{name} is not an Excel workbook (it is neither an .xlsx zip package nor a legacy .xls file); "
            f"save it from Excel as .xlsx and drop it in again."
        )
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            _check_zip(name, infos, limits)
            names = {i.filename for i in infos}
            if "xl/workbook.xml" not in names:
                raise Refused(
                    f"{name} is a zip file but not an Excel workbook (it has no xl/workbook.xml); "
                    f"save it from Excel as .xlsx and drop it in again."
                )
            for info in infos:
                if info.filename.endswith((".xml", ".rels")):
                    with z.open(info) as member:
                        start = member.read(XML_HEAD_BYTES)
                    if b"<!DOCTYPE" in start or b"<!ENTITY" in start:
                        raise Refused(
                            f"{name} contains an XML DOCTYPE declaration in {info.filename}, which Excel never "
                            f"writes and entity-expansion attacks use; it was not read. Re-save it from Excel."
                        )
            _check_dimensions(name, z, limits)
    except zipfile.BadZipFile as err:
        raise Refused(f"{name} is damaged or truncated ({err}); save it again from Excel and drop it in again.") from err
    return "zip"


def _check_zip(name: str, infos: list[zipfile.ZipInfo], limits: Limits) -> None:
    if not infos:
        raise Refused(f"{name} is an empty zip file, not an Excel workbook; save it from Excel as .xlsx.")
    if len(infos) > limits.max_entries:
        raise Refused(
            f"{name} has {len(infos):,} parts, more than the {limits.max_entries:,} a workbook may have here; "
            f"it looks like a zip bomb and was not opened."
        )
    total = sum(i.file_size for i in infos)
    if total > limits.max_uncompressed_mb * (1 << 20):
        raise Refused(
            f"{name} would inflate to {total / (1 << 20):,.0f} MB, more than the limit of "
            f"{limits.max_uncompressed_mb:,} MB (max_uncompressed_mb); split it or raise the limit."
        )
    for i in infos:
        if i.file_size >= RATIO_MIN_BYTES and i.file_size > limits.max_compression_ratio * max(i.compress_size, 1):
            raise Refused(
                f"{name}: part {i.filename} inflates {i.file_size / max(i.compress_size, 1):,.0f} times "
                f"(limit {limits.max_compression_ratio}, max_compression_ratio); it looks like a zip bomb and was not opened."
            )


def _col_number(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


REF = re.compile(rb'<dimension ref="(?:[A-Z]+[0-9]+:)?([A-Z]+)([0-9]+)"')


def sheet_parts(z: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> path of its XML part, from xl/workbook.xml and its relationships."""
    wb = ElementTree.fromstring(z.read("xl/workbook.xml"))
    rels = ElementTree.fromstring(z.read("xl/_rels/workbook.xml.rels")) if "xl/_rels/workbook.xml.rels" in z.namelist() else None
    targets = {}
    if rels is not None:
        for rel in rels:
            target = rel.get("Target", "")
            path = target.lstrip("/") if target.startswith("/") else str(PurePosixPath("xl") / target)
            targets[rel.get("Id")] = path
    out = {}
    for el in wb.iter():
        if el.tag.endswith("}sheet"):
            rid = next((v for k, v in el.attrib.items() if k.endswith("}id")), None)
            if rid in targets:
                out[el.get("name")] = targets[rid]
    return out


def _check_dimensions(name: str, z: zipfile.ZipFile, limits: Limits) -> None:
    for sheet, part in sheet_parts(z).items():
        if part not in z.namelist():
            continue
        with z.open(part) as member:
            head = member.read(XML_HEAD_BYTES)
        m = REF.search(head)
        if m:
            rows, cols = int(m.group(2)), _col_number(m.group(1).decode())
            if rows * cols > limits.max_cells:
                raise Refused(
                    f"{name}: sheet {sheet!r} declares {rows:,} rows x {cols:,} columns "
                    f"({m.group(1).decode()}{rows}), more than the {limits.max_cells:,} cells read here; "
                    f"delete the stray cells far from the data (Ctrl+End shows them) and save again."
                )


CELL = re.compile(rb"<c\b([^>]*?)(/>|>(.*?)</c>)", re.S)
ATTR_R = re.compile(rb'\br="([A-Z]+)([0-9]+)"')
ATTR_T = re.compile(rb'\bt="([a-z]+)"')
FORMULA = re.compile(rb"<f\b[^>]*?(?:/>|>(.*?)</f>)", re.S)
VALUE = re.compile(rb"<v>(.*?)</v>", re.S)


@dataclass
class CellNotes:
    errors: dict[tuple[int, int], str]  # (row, col), 0-based -> "#N/A"
    uncalculated: dict[tuple[int, int], str]  # (row, col) -> formula text
    columns: frozenset[int] = frozenset()  # 0-based columns holding any cell element (a formatted empty cell too)


CELL_COLUMN = re.compile(rb'<c\b[^>]*?\br\s*=\s*["\']([A-Z]{1,3})')  # the reference, wherever it stands among the attributes


def scan_cells(path: Path) -> dict[str, CellNotes]:
    """Per sheet: the columns that hold a cell, Excel error values and formulas without a cached
    value. Sheets without errors or formulas cost one substring search beyond the columns."""
    out: dict[str, CellNotes] = {}
    with zipfile.ZipFile(path) as z:
        for sheet, part in sheet_parts(z).items():
            if part not in z.namelist():
                continue
            data = z.read(part)
            columns = frozenset(_col_number(c.decode()) - 1 for c in set(CELL_COLUMN.findall(data)))
            out[sheet] = notes = CellNotes({}, {}, columns)
            if b't="e"' not in data and b"<f" not in data:
                continue
            for m in CELL.finditer(data):
                attrs, body = m.group(1), m.group(3) or b""
                if b"<f" not in body and b't="e"' not in attrs:
                    continue
                ref = ATTR_R.search(attrs)
                if not ref:
                    continue
                pos = (int(ref.group(2)) - 1, _col_number(ref.group(1).decode()) - 1)
                kind = ATTR_T.search(attrs)
                value = VALUE.search(body)
                if kind and kind.group(1) == b"e" and value:
                    notes.errors[pos] = html.unescape(value.group(1).decode("utf-8", "replace"))
                formula = FORMULA.search(body)
                if formula and (value is None or not value.group(1).strip()):
                    notes.uncalculated[pos] = "=" + html.unescape((formula.group(1) or b"").decode("utf-8", "replace"))
    return out
