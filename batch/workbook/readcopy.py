"""A copy of a workbook package made for reading only, where python-calamine would not read the
package as it is (the returned workbook is always made from the original, never from this copy).

python-calamine finds a workbook's parts by fixed names and simple paths; valid packages that
Excel and LibreOffice open can defeat it:
- a `<sheet>` whose relationship id is empty, missing, unknown or points at no part: calamine
  refuses the whole workbook ("Relationship not found"). The copy leaves the sheet out; the sheet
  is reported (`SHEET_NOT_READABLE`) and the rest of the workbook is read.
- an Excel 4 macro sheet (`xl/macrosheets/`): calamine refuses the whole workbook ("Unrecognized
  sheet:type"). The copy leaves it out (the returned workbook is returned without it, and
  `MACROS_REMOVED` names it).
- a sheet whose relationship's target is written relative to another folder (`../xl/...`,
  `./worksheets/...`): calamine does not find it; or whose part is not in `worksheets/` (releases
  of calamine before 0.9 refuse its "sheet:type"). The copy points the relationship at the part
  by its absolute name (or puts the part in `worksheets/`).
- a shared string table or style table that is not at `xl/sharedStrings.xml` / `xl/styles.xml`
  (calamine reads those names only, so a cell would find no string, and a date no date format):
  the copy holds it under the name calamine reads.
- a sheet `state` other than visible, hidden and veryHidden: calamine refuses the workbook; the
  copy leaves the attribute out (the tool does not use it).
- a sheet's `<dimension>` (a hint of its extent) that is no cell range, such as `A1:C0`: earlier
  calamine releases refuse the sheet ("Range is missing the expected row component"); the copy
  leaves the hint out (the cells themselves say where they are).
- an XML part calamine reads (the workbook, its relationships, a sheet, the shared strings, the
  styles) written in UTF-16, which the XML standard allows and calamine reads as empty: the copy
  holds it in UTF-8.
- cells calamine refuses (made only when a sheet failed so): an error value it does not know
  (Excel's dynamic-array errors `#SPILL!`, `#CALC!`, `#GETTING_DATA`, ...) is read as `#N/A` (the
  cell scan puts the error as written back into the grid), and an empty value element (`<v/>`,
  `<v></v>`) is left out (the cell is empty either way). The sheet parts are rewritten row by row,
  in chunks, never whole in memory.
Every other part is copied byte for byte.
"""

from __future__ import annotations

import codecs
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from batch.workbook import deflate, xmlparts
from batch.workbook.opened import Opened
from batch.workbook.safety import (
    DECLARED_ENCODING,
    WORKBOOK,
    WORKBOOK_RELS,
    SheetEntry,
    as_utf8,
    is_sheet_element,
    part_named,
    relationship_map,
    sheet_patterns,
    utf16,
    workbook_sheets,
)

CALAMINE_FOLDERS = ("worksheets", "chartsheets", "dialogsheets")  # the sheet folders calamine knows
SHEET_STATES = ("visible", "hidden", "veryHidden")
STRINGS = "xl/sharedStrings.xml"
STYLES = "xl/styles.xml"
EMPTY_RELS = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>'
COPY_CHUNK = 1 << 20
HEAD_BYTES = 1 << 16  # where a sheet's dimension is looked for
PREFIX = rb"(?:[A-Za-z_][\w.-]*:)?"
DIMENSION = re.compile(rb"<" + PREFIX + rb"""dimension\b[^>]*?\bref\s*=\s*(["'])(.*?)\1[^>]*?(?:/>|>\s*</""" + PREFIX + rb"dimension\s*>)")
RANGE = re.compile(rb"\$?[A-Za-z]{1,3}\$?[1-9][0-9]{0,6}(?::\$?[A-Za-z]{1,3}\$?[1-9][0-9]{0,6})?")


def _calamine_path(target: str) -> str:
    """The part name calamine takes a workbook relationship's Target for."""
    if target.startswith("/xl/"):
        return target[1:]
    if target.startswith("xl/"):
        return target
    return "xl/" + target


@dataclass
class ReadingPlan:
    """What the reading copy changes; `needed` is False for a package calamine reads as it is."""

    sheets: list[SheetEntry] = field(default_factory=list)
    unreadable: list[SheetEntry] = field(default_factory=list)  # left out: the relationship is broken
    macro_sheets: list[SheetEntry] = field(default_factory=list)  # left out: Excel 4 macro sheets
    targets: dict[str, str] = field(default_factory=dict)  # relationship id -> the absolute Target calamine finds
    moved: dict[str, str] = field(default_factory=dict)  # new part name -> the part it copies
    states: bool = False  # some sheet state calamine refuses
    heads: dict[str, tuple[int, int]] = field(default_factory=dict)  # sheet part -> the bytes of a dimension that is no range
    cells: set[str] = field(default_factory=set)  # sheet parts whose cells calamine refuses are rewritten (see _fixed_cells)
    utf16: set[str] = field(default_factory=set)  # parts calamine reads that are written in UTF-16
    no_rels: bool = False  # the workbook has no relationships part

    @property
    def needed(self) -> bool:
        changes = (self.unreadable, self.macro_sheets, self.targets, self.moved, self.heads, self.cells, self.utf16)
        return any(changes) or self.states or self.no_rels


def plan(opened: Opened) -> ReadingPlan:
    """What a reading copy of the opened package must change for calamine (nothing, usually)."""
    z = opened.zip
    names = z.namelist()
    out = ReadingPlan(sheets=workbook_sheets(opened))
    out.no_rels = part_named(names, WORKBOOK_RELS) is None
    taken = {n.casefold() for n in names}
    for s in out.sheets:
        if s.broken:
            out.unreadable.append(s)
            continue
        if s.macro:
            out.macro_sheets.append(s)
            continue
        if s.state is not None and s.state not in SHEET_STATES:
            out.states = True
        with z.open(s.part) as member:
            head = member.read(HEAD_BYTES)
        if utf16(head):
            out.utf16.add(s.part)
            head = as_utf8(head[: len(head) // 2 * 2])
        m = DIMENSION.search(head)
        if m and not RANGE.fullmatch(m.group(2).strip()):
            out.heads[s.part] = (m.start(), m.end())
        seen = _calamine_path(s.target)
        folder = seen.split("/")[1] if seen.count("/") >= 2 else ""
        if seen.casefold() == s.part.casefold() and folder in CALAMINE_FOLDERS:
            continue
        if s.part.casefold().startswith(tuple(f"xl/{f}/" for f in CALAMINE_FOLDERS)) and s.part.count("/") == 2:
            out.targets[s.rid] = "/" + s.part
        else:  # a sheet part outside the folders calamine knows: copied into worksheets/
            n = 1
            while f"xl/worksheets/reading{n}.xml" in taken:
                n += 1
            new = f"xl/worksheets/reading{n}.xml"
            taken.add(new)
            out.moved[new] = s.part
            out.targets[s.rid] = "/" + new
    rels = relationship_map(opened, WORKBOOK_RELS, "xl")
    for kind, fixed in (("sharedStrings", STRINGS), ("styles", STYLES)):
        part = next((r["part"] for r in rels.values() if r["kind"] == kind and r["part"]), None)
        if part is not None and part.casefold() != fixed.casefold():
            out.moved[fixed] = part
        for small in (part, part_named(names, WORKBOOK), part_named(names, WORKBOOK_RELS)):
            if small is not None:
                with z.open(small) as member:
                    if utf16(member.read(2)):
                        out.utf16.add(small)
    return out


def scratch_file(scratch: Path | None, role: str) -> Path:
    """A temporary file for `role` (`reading`, `decrypted`): beside `scratch` (the run's partial
    output, whose name every temporary file of the run carries, so the run removes it on every
    path), or in the system's temporary folder when there is no run."""
    if scratch is not None:
        return Path(scratch).with_name(f".{Path(scratch).name}.{role}.xlsx")
    fd, name = tempfile.mkstemp(prefix="njcredits-", suffix=f".{role}.xlsx")
    os.close(fd)
    return Path(name)


def make(source: Opened, dest: Path, reading: ReadingPlan) -> Path:
    """Write the reading copy of the opened package `source` to `dest` (parts stored, not
    compressed: it lives for one read); a copy left half-written by a failure is removed."""
    try:
        return _make(source, dest, reading)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise


def _make(source: Opened, dest: Path, reading: ReadingPlan) -> Path:
    left_out = {s.name for s in reading.unreadable + reading.macro_sheets}
    zin = source.zip
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_STORED) as zout:
        names = zin.namelist()
        workbook = part_named(names, WORKBOOK) or WORKBOOK
        rels = part_named(names, WORKBOOK_RELS)
        replaced = {n.casefold() for n in reading.moved}
        for info in zin.infolist():
            name = info.filename
            if name.casefold() in replaced:
                continue  # written below, as the part calamine reads
            if name == workbook:
                zout.writestr(WORKBOOK, _workbook(as_utf8(zin.read(name)), left_out, reading.states))
            elif name == rels:
                zout.writestr(WORKBOOK_RELS, _relationships(as_utf8(zin.read(name)), reading.targets))
            elif name in reading.cells:
                _copy_cells(zin, name, zout, name, reading.heads.get(name))
            elif name in reading.heads:
                _copy(zin, name, zout, name, reading.heads[name])
            else:
                _copy(zin, name, zout, name)
        if rels is None:
            zout.writestr(WORKBOOK_RELS, EMPTY_RELS)
        for new, old in reading.moved.items():
            if old in reading.cells:
                _copy_cells(zin, old, zout, new, reading.heads.get(old))
            else:
                _copy(zin, old, zout, new, reading.heads.get(old))
    return dest


def _copy(zin: zipfile.ZipFile, name: str, zout: zipfile.ZipFile, as_name: str, cut: tuple[int, int] | None = None) -> None:
    """Copy a part, leaving out the bytes `cut` (start, end) of its head (counted in UTF-8)."""
    with deflate.reading(zin, name) as src, zout.open(zipfile.ZipInfo(as_name), "w", force_zip64=True) as dst:
        chunks = _utf8_chunks(src)
        if cut is not None:
            head = next(chunks, b"")
            dst.write(head[: cut[0]] + head[cut[1] :])
        for chunk in chunks:
            dst.write(chunk)


def _utf8_chunks(src):
    """A part's bytes in chunks, in UTF-8: a part written in UTF-16 is decoded as it streams (its
    first chunk, of HEAD_BYTES, holds its declaration, which is made to say UTF-8)."""
    head = src.read(HEAD_BYTES)
    encoding = utf16(head)
    if encoding is None:
        yield head
        yield from iter(lambda: src.read(COPY_CHUNK), b"")
        return
    decoder = codecs.getincrementaldecoder(encoding)()
    first = decoder.decode(head).lstrip("\ufeff").encode("utf-8")
    yield DECLARED_ENCODING.sub(rb"\1UTF-8\2", first, count=1)
    while chunk := src.read(COPY_CHUNK):
        yield decoder.decode(chunk).encode("utf-8")
    yield decoder.decode(b"", final=True).encode("utf-8")


def _workbook(data: bytes, left_out: set[str], states: bool) -> bytes:
    root = xmlparts.parse(data, WORKBOOK)
    for el in list(root.iter()):
        if not is_sheet_element(el):
            continue
        if str(el.get("name") or "") in left_out:
            el.getparent().remove(el)
        elif states and el.get("state") is not None and el.get("state") not in SHEET_STATES:
            del el.attrib["state"]
    return xmlparts.serialize(root, data)


def _relationships(data: bytes, targets: dict[str, str]) -> bytes:
    root = xmlparts.parse(data, WORKBOOK_RELS)
    for el in root.iter():
        if xmlparts.local(el) == "Relationship" and el.get("Id") in targets:
            el.set("Target", targets[el.get("Id")])
    return xmlparts.serialize(root, data)


KNOWN_ERRORS = {b"#DIV/0!", b"#N/A", b"#NAME?", b"#NULL!", b"#NUM!", b"#REF!", b"#VALUE!"}  # what calamine reads
_FIXES: dict[bytes, tuple[re.Pattern, re.Pattern, re.Pattern, bytes]] = {}


def _cell_fixes(prefix: bytes) -> tuple[re.Pattern, re.Pattern, re.Pattern, bytes]:
    """For a sheet written under `prefix`: an error cell, the value element inside a cell, an empty
    value element, and the end tag of a row."""
    if prefix not in _FIXES:
        p = re.escape(prefix + b":") if prefix else b""
        _FIXES[prefix] = (
            re.compile(rb"<" + p + rb"""c\b[^>]*?\bt\s*=\s*["']e["'][^>]*>.*?</""" + p + rb"c\s*>", re.S),
            re.compile(rb"(<" + p + rb"v\b[^>]*>)(.*?)(</" + p + rb"v\s*>)", re.S),
            re.compile(rb"<" + p + rb"v\b[^>/]*/>|<" + p + rb"v\b[^>/]*></" + p + rb"v\s*>"),
            b"</" + (prefix + b":" if prefix else b"") + b"row",
        )
    return _FIXES[prefix]


def _fixed_cells(data: bytes, fixes) -> bytes:
    error_cell, value, empty, _row_end = fixes

    def known(v: re.Match) -> bytes:
        return v.group(0) if v.group(2).strip() in KNOWN_ERRORS else v.group(1) + b"#N/A" + v.group(3)

    data = error_cell.sub(lambda m: value.sub(known, m.group(0)), data)
    return empty.sub(b"", data)


def _copy_cells(zin: zipfile.ZipFile, name: str, zout: zipfile.ZipFile, as_name: str, cut: tuple[int, int] | None) -> None:
    """Copy a sheet part with its cells made readable for calamine (`_fixed_cells`), row by row:
    each chunk is rewritten up to the last row it ends, the rest waits for the next chunk."""
    with deflate.reading(zin, name) as src, zout.open(zipfile.ZipInfo(as_name), "w", force_zip64=True) as dst:
        chunks = _utf8_chunks(src)
        pending = next(chunks, b"")
        if cut is not None:
            pending = pending[: cut[0]] + pending[cut[1] :]
        fixes = _cell_fixes(sheet_patterns(pending).prefix)
        for chunk in chunks:
            pending += chunk
            at = pending.rfind(fixes[3])
            if at >= 0:
                dst.write(_fixed_cells(pending[:at], fixes))
                pending = pending[at:]
        dst.write(_fixed_cells(pending, fixes))
