"""The returned workbook of an .xlsx or .xlsm: the user's own package with the tool's additions.

Every part of the input is copied as it is, except what the tool adds:
- on each intake sheet, its columns appended to the rows after the last used column
  (`batch.sheetrows`), a flagged cell given a copy of its own style with the finding's fill
  (`batch.stylesxml`), its notes added below the user's comments (`batch.commentsxml`) with their
  boxes in the sheet's drawing, the widths of its columns, and, only where the sheet has none of
  its own, a frozen pane and an autofilter (never over an Excel Table);
- its sheets (Findings, Summary, Run), written by xlsxwriter into a workbook of their own and
  moved into the package with their styles, chart and defined names;
- an .xlsm loses its macros and comes back as an .xlsx (`batch.package`).

A returned workbook dropped back in first loses what the tool added (its sheets, its columns,
its fills and its notes), so the second run adds the same again.
"""

from __future__ import annotations

import copy
import html
import os
import posixpath
import re
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import xlsxwriter
from lxml import etree

from batch import cells, commentsxml, opc, package, sheetrows, sheetxml, xmlparts
from batch.pipeline import Result, SheetResult
from batch.reading import EXCEL_COLUMNS, MARKER_PREFIX, MARKER_REF
from batch.safety import Refused
from batch.stylesxml import FILLS, Styles
from batch.writing import (
    LINE_HEIGHT,
    WRITER_OPTIONS,
    Formats,
    _annotations,
    decision_prompt,
    frozen_at,
    lines,
    tool_cells,
    tool_columns,
    tool_styles,
    write_tool_sheets,
)
from batch.xlsxwriter_private import xf_index
from validators.columns import REVIEW_COLUMNS

T_WORKSHEET = opc.REL_NS + "/worksheet"
T_COMMENTS = opc.REL_NS + "/comments"
T_VML = opc.REL_NS + "/vmlDrawing"
T_TABLE = opc.REL_NS + "/table"
T_CALC_CHAIN = opc.REL_NS + "/calcChain"
CT_COMMENTS = "application/vnd.openxmlformats-officedocument.spreadsheetml.comments+xml"
CT_VML = "application/vnd.openxmlformats-officedocument.vmlDrawing"
DEFINED = re.compile(rb"<definedName\b([^>]*)>(.*?)</definedName>|<definedName\b[^>]*/>", re.S)
# the elements a worksheet may hold after its rows, in the order the schema requires
AFTER_ROWS = (
    "sheetCalcPr sheetProtection protectedRanges scenarios autoFilter sortState dataConsolidate customSheetViews mergeCells "
    "phoneticPr conditionalFormatting dataValidations hyperlinks printOptions pageMargins pageSetup headerFooter rowBreaks "
    "colBreaks customProperties cellWatches ignoredErrors smartTags drawing legacyDrawing legacyDrawingHF drawingHF picture "
    "oleObjects controls webPublishItems tableParts extLst"
).split()
# VML elements, whatever prefix the drawing binds to their namespaces (Excel: v, o, x; openpyxl: ns0, ...)
SHAPE = re.compile(rb"<([\w.-]+:)?shape\s.*?</\1?shape>", re.S)
IDMAP = re.compile(rb'<(?:[\w.-]+:)?idmap\b[^>]*\bdata="([^"]*)"')
IDMAP_DATA = re.compile(rb'(<(?:[\w.-]+:)?idmap\b[^>]*\bdata=")([^"]*)(")')
SHAPE_ID = re.compile(rb'\bid="_x0000_s(\d+)"')
NOTE_AT = re.compile(rb"<(?:[\w.-]+:)?Row>(\d+)</(?:[\w.-]+:)?Row>\s*<(?:[\w.-]+:)?Column>(\d+)</(?:[\w.-]+:)?Column>")
VML_NAMESPACES = {
    b"v": b"urn:schemas-microsoft-com:vml",
    b"o": b"urn:schemas-microsoft-com:office:office",
    b"x": b"urn:schemas-microsoft-com:office:excel",
}
REF = re.compile(r"^\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?$")


# -- the workbook's sheets and names ------------------------------------------------------------


def _marked(parts: dict[str, bytes]) -> set[str]:
    """The names (casefolded) of the sheets the tool's marker names."""
    out = set()
    for m in DEFINED.finditer(parts[opc.WORKBOOK]):
        if (opc.attr(m.group(0), "name") or "").casefold().startswith(MARKER_PREFIX):
            ref = MARKER_REF.match(html.unescape((m.group(2) or b"").decode()).strip())
            if ref:
                out.add((ref.group(1).replace("''", "'") if ref.group(1) else ref.group(2).strip()).casefold())
    return out


def _names(wb: bytes, keep, shift: dict[int, int]) -> bytes:
    """The workbook with only the defined names `keep(name, localSheetId)` accepts, sheet-scoped
    names renumbered by `shift` (old sheet index -> new); no `<definedNames>` when none is left."""

    def one(m: re.Match) -> bytes:
        el = m.group(0)
        local = opc.attr(el, "localSheetId")
        if not keep(opc.attr(el, "name") or "", None if local is None else int(local)):
            return b""
        if local is not None and int(local) in shift:
            el = re.sub(rb'localSheetId="\d+"', f'localSheetId="{shift[int(local)]}"'.encode(), el, count=1)
        return el

    wb = DEFINED.sub(one, wb)
    return re.sub(rb"<definedNames>\s*</definedNames>|<definedNames\s*/>", b"", wb)


def remove_tool_sheets(parts: dict[str, bytes], recognised=()) -> None:
    """A returned workbook without the tool's sheets (those its marker names, and those
    `recognised` by name: a release before the marker), their parts and their defined names."""
    marked = _marked(parts) | {n.casefold() for n in recognised}
    listed = opc.sheets(parts)
    gone = [i for i, s in enumerate(listed) if (s["name"] or "").casefold() in marked]
    if not gone and not marked:
        return
    shift = {old: new for new, old in enumerate(i for i in range(len(listed)) if i not in gone)}
    wb = parts[opc.WORKBOOK]
    for i in gone:
        wb = wb.replace(listed[i]["xml"], b"", 1)
    wb = _names(wb, lambda name, local: not name.casefold().startswith(MARKER_PREFIX) and local not in gone, shift)
    active = re.search(rb'\bactiveTab="(\d+)"', wb)
    if active and int(active.group(1)) not in shift:  # the tool's sheet was the active one
        wb = wb.replace(active.group(0), b'activeTab="0"', 1)
    elif active and shift[int(active.group(1))] != int(active.group(1)):
        wb = wb.replace(active.group(0), f'activeTab="{shift[int(active.group(1))]}"'.encode(), 1)
    parts[opc.WORKBOOK] = wb
    removed = set().union(*(opc.reachable(parts, listed[i]["part"]) for i in gone)) if gone else set()
    # a part that a part of the user's also refers to stays (the workbook's own relationships to the sheets go below)
    removed -= {
        r["part"]
        for name in parts
        if name.endswith(".rels") and _source(name) not in removed | {opc.WORKBOOK}
        for r in opc.relationships(parts, _source(name))
    }
    chain = [r for r in opc.relationships(parts, opc.WORKBOOK) if r["type"] == T_CALC_CHAIN]
    if gone and chain:  # Excel's list of formula cells names the removed sheets' cells: Excel rebuilds it when it is missing
        removed |= {r["part"] for r in chain}
    opc.remove_relationships(parts, opc.WORKBOOK, {listed[i]["rid"] for i in gone} | {r["id"] for r in chain if gone})
    opc.remove_parts(parts, removed)


def _source(rels: str) -> str:
    """The part a relationships part belongs to (`xl/_rels/workbook.xml.rels` -> `xl/workbook.xml`)."""
    folder = posixpath.dirname(posixpath.dirname(rels))
    return posixpath.join(folder, posixpath.basename(rels)[: -len(".rels")])


# -- the tool's sheets, written by xlsxwriter and moved in ----------------------------------------


def _tool_book(result: Result, path: Path) -> tuple[dict[str, bytes], list[dict], tuple]:
    """The tool's sheets and the formats of its columns on each intake sheet, in a workbook of
    their own; returns its parts, per intake sheet the xlsxwriter style index of each format, and
    the Findings sheet's rows (generated later, straight into the returned workbook)."""
    wb = xlsxwriter.Workbook(str(path), WRITER_OPTIONS)
    fmts = Formats(wb)
    looks = []
    for res in result.intake:
        columns = tool_columns(res)
        styles = tool_styles(fmts, columns)
        looks.append(
            {
                "columns": columns,
                "header": xf_index(styles["header"]),
                "cells": [xf_index(f) if f is not None else 0 for f in styles["columns"]],
                "status": {v: xf_index(f) for v, f in styles["status"].items()},
            }
        )
    findings = write_tool_sheets(wb, fmts, result)
    wb.close()
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}, looks, findings


STYLE_ATTR = re.compile(rb'(<c r="[A-Z]+\d+" s=")(\d+)(")|(<row\b[^>]*?\bs=")(\d+)(")|(<col\b[^>]*?\bstyle=")(\d+)(")')


def _restyled(xml: bytes, mapping: dict[int, int]) -> bytes:
    """A sheet of the tool's workbook with its style indices moved to the user's style table."""

    def one(m: re.Match) -> bytes:
        for g in (1, 4, 7):
            if m.group(g):
                return m.group(g) + str(mapping[int(m.group(g + 1))]).encode() + m.group(g + 2)
        return m.group(0)

    return STYLE_ATTR.sub(one, xml)


PART_NUMBER = re.compile(r"^(.*?)(\d+)(\.[A-Za-z]+)$")


def add_tool_sheets(parts: dict[str, bytes], tool: dict[str, bytes], mapping: dict[int, int]) -> dict[str, str]:
    """Move the tool's sheets (with their drawings and charts) into the package, after the user's
    sheets, with their defined names (the marker, print titles, the Findings filter); returns the
    new name of each part moved."""
    ours = opc.sheets(tool)
    n_user = len(opc.sheets(parts))
    wb = parts[opc.WORKBOOK]
    r = opc.prefix(wb, opc.REL_NS) or "r"
    ids = [int(opc.attr(m.group(0), "sheetId") or 0) for m in opc.SHEET.finditer(wb)]
    new_sheets = b""
    moved = {}
    for k, s in enumerate(ours):
        renamed = {}
        for part in sorted(opc.reachable(tool, s["part"])):
            m = PART_NUMBER.match(part)
            renamed[part] = opc.free_name(parts, f"{m.group(1)}{{}}{m.group(3)}") if m else part
            data = tool[part]
            if part == s["part"]:
                data = _restyled(data.replace(b' tabSelected="1"', b""), mapping)
            parts[renamed[part]] = data
            opc.declare(parts, renamed[part], opc.content_type(tool, part))
        for part, new in renamed.items():  # relationships between the moved parts, renamed
            for rel in opc.relationships(tool, part):
                if rel["part"] in renamed:
                    opc.add_relationship(parts, new, rel["type"], renamed[rel["part"]])
        moved.update(renamed)
        rid = opc.add_relationship(parts, opc.WORKBOOK, T_WORKSHEET, renamed[s["part"]])
        sheet_id = max(ids, default=0) + 1 + k
        # the prefix declared on the element itself: a producer may declare it on each `<sheet>` rather than the root
        new_sheets += f'<sheet xmlns:{r}="{opc.REL_NS}" name="{html.escape(s["name"])}" sheetId="{sheet_id}" {r}:id="{rid}"/>'.encode()
    wb = wb.replace(b"</sheets>", new_sheets + b"</sheets>", 1)
    names = b"".join(
        re.sub(rb'localSheetId="(\d+)"', lambda m: f'localSheetId="{int(m.group(1)) + n_user}"'.encode(), m.group(0))
        for m in DEFINED.finditer(tool[opc.WORKBOOK])
    )
    wb = re.sub(rb"<definedNames\s*/>", b"<definedNames></definedNames>", wb, count=1)  # as openpyxl writes an empty list
    if b"</definedNames>" in wb:
        wb = wb.replace(b"</definedNames>", names + b"</definedNames>", 1)
    else:  # after the sheets (and the external references and function groups that may follow them)
        ends = [wb.index(b"</sheets>") + len(b"</sheets>")]
        ends += [wb.index(t) + len(t) for t in (b"</functionGroups>", b"</externalReferences>") if t in wb]
        at = max(ends)
        wb = wb[:at] + b"<definedNames>" + names + b"</definedNames>" + wb[at:]
    parts[opc.WORKBOOK] = wb
    return moved


# -- an intake sheet ------------------------------------------------------------------------------
# Its head and tail (everything but the rows) are edited as XML: the part without its rows
# (`sheetrows.skeleton`) is parsed with lxml, changed in the sheet's own namespace (Transitional or
# Strict) and prefix, written back, and cut again around the rows element, whose rows are streamed
# between (`sheetrows.rewrite_stream`).

MC_NAMESPACE = "http://schemas.openxmlformats.org/markup-compatibility/2006"
REL_NAMESPACES = {  # the relationships namespace (r:id) of each SpreadsheetML namespace
    "http://schemas.openxmlformats.org/spreadsheetml/2006/main": opc.REL_NS,
    "http://purl.oclc.org/ooxml/spreadsheetml/main": "http://purl.oclc.org/ooxml/officeDocument/relationships",
}
SPREADSHEETML = frozenset(REL_NAMESPACES)
EVERY_ROW = (1 << 20) - 1  # the last row (0-based) of a sheet
RELATIONSHIP_ID = re.compile(rb""":id\s*=\s*["']([^"']*)["']""")


def _tag(root, local: str) -> str:
    """The SpreadsheetML element `local` in the sheet's own namespace."""
    return f"{{{etree.QName(root).namespace}}}{local}"


def _schema_name(el) -> str | None:
    """What a child of a worksheet is in the schema's order: its SpreadsheetML name; for an
    `mc:AlternateContent` (as Excel wraps its controls), the name of what it holds."""
    if not isinstance(el.tag, str):  # a comment or processing instruction
        return None
    name = etree.QName(el)
    if name.namespace in SPREADSHEETML:
        return name.localname
    if name.namespace == MC_NAMESPACE and name.localname == "AlternateContent":
        return next((kind for branch in el for inner in branch if (kind := _schema_name(inner))), None)
    return None


def _insert_after_rows(root, element, tag: str) -> None:
    """Insert `element` (a `tag`) among the elements after a sheet's rows, in schema order."""
    later = set(AFTER_ROWS[AFTER_ROWS.index(tag) + 1 :])
    rows, after = root.find(_tag(root, "sheetData")), False
    for child in root:
        if child is rows:
            after = True
        elif after and _schema_name(child) in later:
            child.addprevious(element)
            return
    root.append(element)


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _cols(root, widths: dict[int, float]) -> bool:
    """The sheet's `<cols>` with the tool's columns (0-based, consecutive) given their widths; a
    range of the user's that covers them is cut around them. Whether anything changed."""
    if not widths:
        return False
    first, last = min(widths) + 1, max(widths) + 1  # 1-based, as `<col>` counts
    col = _tag(root, "col")
    lists = root.findall(_tag(root, "cols"))
    for cols in lists:
        for el in [e for e in cols if e.tag == col]:
            lo, hi = _int(el.get("min")), _int(el.get("max"))
            if lo is None or hi is None or lo > last or hi < first:
                continue
            for a, b in ((lo, min(hi, first - 1)), (max(lo, last + 1), hi)):
                if a <= b:
                    piece = copy.deepcopy(el)
                    piece.set("min", str(a))
                    piece.set("max", str(b))
                    el.addprevious(piece)
            cols.remove(el)
    if not lists:  # `<cols>` comes right before the rows
        lists = [root.makeelement(_tag(root, "cols"), {})]
        root.find(_tag(root, "sheetData")).addprevious(lists[0])
    cols = lists[-1]
    for c, w in sorted(widths.items()):
        new = cols.makeelement(col, {"min": str(c + 1), "max": str(c + 1), "width": f"{w}", "customWidth": "1"})
        later = next((e for e in cols if e.tag == col and (_int(e.get("min")) or 0) > c + 1), None)
        if later is None:
            cols.append(new)
        else:
            later.addprevious(new)
    return True


def _pane(root, row: int, col: int) -> bool:
    """The sheet frozen at (row, col), 0-based, where its first view has no pane of its own."""
    view = root.find(f"{_tag(root, 'sheetViews')}/{_tag(root, 'sheetView')}")
    if view is None or next(root.iter(_tag(root, "pane")), None) is not None:
        return False
    active = "bottomRight" if col and row else "bottomLeft" if row else "topRight"
    pane = view.makeelement(_tag(root, "pane"), {})
    if col:
        pane.set("xSplit", str(col))
    if row:
        pane.set("ySplit", str(row))
    pane.set("topLeftCell", f"{cells.column_letters(col)}{row + 1}")
    pane.set("activePane", active)
    pane.set("state", "frozen")
    view.insert(0, pane)
    view.insert(1, view.makeelement(_tag(root, "selection"), {"pane": active}))
    return True


def _dimension(root, last_col: int, last_row: int) -> bool:
    """The sheet's `<dimension>` (when it has one) widened to cover the tool's columns and rows."""
    el = root.find(_tag(root, "dimension"))
    ref = REF.match((el.get("ref") or "").strip().upper()) if el is not None else None
    if not ref:
        return False
    first = f"{ref.group(1)}{ref.group(2)}"
    end_col = max(_number(ref.group(3) or ref.group(1)), last_col)
    end_row = max(int(ref.group(4) or ref.group(2)), last_row)
    new = f"{first}:{cells.column_letters(end_col)}{end_row}"
    if el.get("ref") == new:
        return False
    el.set("ref", new)
    return True


def _number(letters: str) -> int:
    return sheetrows.column_number(letters.encode())


def _tables(parts: dict[str, bytes], part: str) -> list[tuple[int, int, int, int]]:
    """The ranges (first row, first col, last row, last col; 0-based) of the sheet's Excel Tables."""
    out = []
    for rel in opc.relationships(parts, part):
        if rel["type"].rsplit("/", 1)[-1] == "table" and rel["part"] in parts:  # Transitional or Strict
            try:
                ref = xmlparts.parse(parts[rel["part"]], rel["part"]).get("ref")
            except Refused:  # a Table whose range cannot be read: taken to cover the sheet (no filter of the tool's over it)
                out.append((0, 0, EVERY_ROW, EXCEL_COLUMNS - 1))
                continue
            m = REF.match((ref or "").strip().upper())
            if m:
                out.append((int(m.group(2)) - 1, _number(m.group(1)), int(m.group(4) or m.group(2)) - 1, _number(m.group(3) or m.group(1))))
    return out


def _notes(parts: dict[str, bytes], part: str, notes: dict[str, str], cells_at: dict, streams: dict, blocks: set[int]) -> bytes | None:
    """Merge the tool's notes into the sheet's comments and their boxes into its drawing (a new
    drawing is written as the package is, into `streams`; `blocks` are the drawing's shape-id
    blocks taken in the package); returns the `<legacyDrawing>` element to add to the sheet when
    it had none."""
    rels = opc.relationships(parts, part)
    comments = next((r["part"] for r in rels if r["type"] == T_COMMENTS), None)
    vml = next((r["part"] for r in rels if r["type"] == T_VML), None)
    old = parts.get(comments) if comments else None
    commented = {m.decode() for m in re.findall(rb'<comment\b[^>]*\bref="([^"]+)"', old or b"")}
    if comments is None:
        comments = opc.free_name(parts, "xl/comments{}.xml")
        opc.add_relationship(parts, part, T_COMMENTS, comments)
    if old is None:  # written as the package is
        parts[comments] = b""
        streams[comments] = lambda: commentsxml.merged_chunks(None, notes)
    else:
        parts[comments] = commentsxml.merged(old, notes)
    opc.declare(parts, comments, CT_COMMENTS)
    new = [cells_at[ref] for ref in notes if ref not in commented]
    rows = np.array([r for r, _ in new], dtype=np.int64)
    cols = np.array([c for _, c in new], dtype=np.int64)
    first = max(blocks, default=0) + 1
    count = sheetxml.blocks_for(len(new))
    element = None
    if vml is None:
        vml = opc.free_name(parts, "xl/drawings/vmlDrawing{}.vml")
        rid = opc.add_relationship(parts, part, T_VML, vml)
        opc.declare_default(parts, "vml", CT_VML)
        parts[vml] = b""  # written as the package is
        streams[vml] = lambda: sheetxml.vml_xml(sheetxml.NOTE_VML, rows, cols, first)
        r = opc.prefix(parts[part][:4000], opc.REL_NS)
        element = f'<legacyDrawing {r or "r"}:id="{rid}"/>'.encode()
    elif new:
        data = parts[vml]
        root = re.search(rb"<xml\b[^>]*>", data)
        declared = b"".join(b' xmlns:%s="%s"' % (k, v) for k, v in VML_NAMESPACES.items() if b"xmlns:" + k + b"=" not in root.group(0))
        if declared:  # the boxes added are written with the prefixes v, o and x
            data = data[: root.end() - 1] + declared + data[root.end() - 1 :]
        if b'id="_x0000_t202"' not in data:
            layout = re.search(rb"</(?:[\w.-]+:)?shapelayout>", data)
            at = layout.end() if layout else re.search(rb"<xml\b[^>]*>", data).end()
            data = data[:at] + sheetxml.SHAPE_TYPE.encode() + data[at:]
        more = ",".join(str(first + b) for b in range(count)).encode()
        data = IDMAP_DATA.sub(lambda m: m.group(1) + m.group(2) + b"," + more + m.group(3), data, count=1)
        at = data.rindex(b"</xml>")
        parts[vml] = data[:at] + b"".join(sheetxml.vml_shapes(rows, cols, first)) + data[at:]
    if new:
        blocks.update(range(first, first + count))
    return element


def _blocks(parts: dict[str, bytes]) -> set[int]:
    """The shape-id blocks the package's VML drawings take (`<o:idmap data="1,2"/>`)."""
    return {
        int(b) for name in parts if name.endswith(".vml") for m in IDMAP.finditer(parts[name]) for b in m.group(1).split(b",") if b.strip()
    }


def _strip_notes(parts: dict[str, bytes], part: str) -> None:
    """A returned sheet without the tool's notes, their boxes, and the comments and drawing parts
    the tool made for them."""
    rels = opc.relationships(parts, part)
    comments = next((r for r in rels if r["type"] == T_COMMENTS), None)
    if comments is None or comments["part"] not in parts or commentsxml.MARKER.encode() not in parts[comments["part"]]:
        return
    before = set(re.findall(rb'<comment\b[^>]*\bref="([^"]+)"', parts[comments["part"]]))
    left = commentsxml.stripped(parts[comments["part"]])
    after = set(re.findall(rb'<comment\b[^>]*\bref="([^"]+)"', left or b""))
    gone = {_at(ref.decode()) for ref in before - after}
    if left is None:
        opc.remove_relationships(parts, part, {comments["id"]})
        opc.remove_parts(parts, {comments["part"]})
    else:
        parts[comments["part"]] = left
    vml = next((r for r in rels if r["type"] == T_VML), None)
    if vml is None or vml["part"] not in parts:
        return

    def keep(m: re.Match) -> bytes:
        at = NOTE_AT.search(m.group(0))
        return b"" if at and b'ObjectType="Note"' in m.group(0) and (int(at.group(1)), int(at.group(2))) in gone else m.group(0)

    data = SHAPE.sub(keep, parts[vml["part"]])
    if SHAPE.search(data) is None:  # the drawing held only the tool's boxes
        opc.remove_relationships(parts, part, {vml["id"]})
        opc.remove_parts(parts, {vml["part"]})
        r = opc.prefix(parts[part], opc.REL_NS) or "r"
        parts[part] = re.sub(rb"<legacyDrawing\s+" + r.encode() + rb':id="' + vml["id"].encode() + rb'"\s*/>', b"", parts[part], count=1)
        return
    held = {int(n) // 1024 for n in SHAPE_ID.findall(data)}
    listed = IDMAP.search(data)
    if listed:  # the blocks the tool added at the end of the list, now without shapes
        blocks = [b for b in listed.group(1).decode().split(",") if b.strip()]
        while len(blocks) > 1 and int(blocks[-1]) not in held:
            blocks.pop()
        data = IDMAP_DATA.sub(lambda m: m.group(1) + ",".join(blocks).encode() + m.group(3), data, count=1)
    parts[vml["part"]] = data


def _at(ref: str) -> tuple[int, int] | None:
    """`H12` -> (11, 7), 0-based row and column (`H0`, a row 0 Excel does not write, -> (-1, 7));
    None for what is not a cell reference."""
    m = REF.match(ref.strip().upper())
    return (int(m.group(2)) - 1, _number(m.group(1))) if m else None


def _column_styles(root) -> dict[int, int]:
    """The style of each column (0-based) whose `<col>` gives one."""
    out = {}
    for el in root.iter(_tag(root, "col")):
        style, lo, hi = _int(el.get("style")), _int(el.get("min")), _int(el.get("max"))
        if style and lo and hi:
            for c in range(lo - 1, min(hi, EXCEL_COLUMNS)):
                out[c] = style
    return out


def _intake(
    parts: dict[str, bytes],
    part: str,
    res: SheetResult,
    look: dict,
    mapping: dict[int, int],
    styles: Styles,
    restore: dict,
    streams: dict,
    blocks: set,
):
    """The rows of an intake sheet's part with the tool's additions (a generator of bytes, run as
    the package is written); the sheet's head and tail (the part without its rows, parsed as
    XML), comments and drawing are changed here."""
    sheet = res.sheet
    data = parts[part]  # the sheet without its rows (`sheetrows.skeleton`)
    root = xmlparts.parse(data, part)
    columns, at, h = look["columns"], sheet.results_at, sheet.header_row

    def attr(index: int) -> str:
        return f' s="{mapping[index]}"' if index else ""

    looks = {"columns": [attr(i) for i in look["cells"]], "status": {v: attr(i) for v, i in look["status"].items()}}
    letters = [cells.column_letters(j) for j in range(at + len(columns))]
    fixed: dict[int, bytes] = {}
    if columns:
        names = pd.Series([c.header for c in columns], dtype=object)
        refs = np.array([f"{letters[at + j]}{h + 1}" for j in range(len(columns))], dtype=object)
        fixed[h + 1] = "".join(cells.strings(names, refs, np.full(len(columns), attr(look["header"]), dtype=object))).encode()

    def make(first: int, stop: int) -> list[bytes]:
        made = tool_cells(res, columns, looks, first, stop, letters)
        return [r.encode() for r in map("".join, zip(*[c.tolist() for c in made], strict=True))]

    rows = sheet.excel_rows.astype(np.int64) if columns else np.zeros(0, dtype=np.int64)
    tails = sheetrows.LazyTails(rows, make, fixed, sheetxml.CHUNK_ROWS)
    # the cells findings point at: a copy of the cell's style with the finding's fill, and a note
    flagged: dict[int, dict[int, str]] = {}
    notes, cells_at = {}, {}
    for pos, found in _annotations(res).items():
        row = int(sheet.excel_rows[pos])
        for c, (severity, text) in found.items():
            col = sheet.kept[c]
            if severity in FILLS:  # an info finding gets a note but no fill
                flagged.setdefault(row, {})[col] = severity
            ref = f"{cells.column_letters(col)}{row}"
            notes[ref], cells_at[ref] = text[: cells.MAX_TEXT], (row - 1, col)
    made_styles: dict[tuple[int, str], int] = {}

    def restyle(own: int, severity: str) -> int:
        if (own, severity) not in made_styles:
            made_styles[(own, severity)] = styles.flagged(own, severity)
        return made_styles[(own, severity)]

    widths = {at + j: c.width for j, c in enumerate(columns)}
    heights = {}
    if columns:
        tall = max(lines(c.header, c.width) for c in columns)
        heights = {h + 1: tall * LINE_HEIGHT} if tall > 1 else {}
    changes = sheetrows.Changes(
        restyle=restyle if flagged else None,
        drop=set(sheet.dropped),
        restore=restore,
        column_styles=_column_styles(root),
        heights=heights,
        tail_at=at,
    )
    n = len(sheet.excel_rows)
    last_row = int(sheet.excel_rows[-1]) if n else h + 1
    changed = _cols(root, widths)
    changed = _dimension(root, at + len(columns) - 1 if columns else 0, last_row) or changed
    changed = _pane(root, *frozen_at(sheet)) or changed
    filter_range = (h, 0, max(last_row - 1, h), at + len(columns) - 1)
    if root.find(_tag(root, "autoFilter")) is None and columns and not any(_overlap(filter_range, t) for t in _tables(parts, part)):
        ref = f"A{h + 1}:{letters[-1]}{max(last_row, h + 1)}"
        _insert_after_rows(root, root.makeelement(_tag(root, "autoFilter"), {"ref": ref}), "autoFilter")
        changed = True
    decision = next((at + j for j, c in enumerate(columns) if c.header == REVIEW_COLUMNS[0]), None)
    if decision is not None:  # the choices of a decision, shown when the cell is selected
        letter = cells.column_letters(decision)
        _prompt(root, f"{letter}{h + 2}:{letter}{max(last_row, h + 2)}")
        changed = True
    if notes:
        element = _notes(parts, part, notes, cells_at, streams, blocks)
        if element is not None:
            _drawing_element(root, RELATIONSHIP_ID.search(element).group(1).decode())
            changed = True
    if changed:
        data = xmlparts.serialize(root, data)
    head, tail = sheetrows.split_part([data])
    streams[part] = lambda: sheetrows.rewrite_stream(parts.chunks(part), tails, flagged, changes, head=head, tail=tail, where=_where(res))


def _where(res: SheetResult) -> str:
    """How a refusal names the sheet."""
    return f"The sheet {res.sheet.name!r}"


def _prompt(root, sqref: str) -> None:
    """The input message of the Reviewer Decision cells added to the sheet's data validations (a
    list of its own when it has none)."""
    prompt = decision_prompt()
    lists = root.find(_tag(root, "dataValidations"))
    if lists is None:
        lists = root.makeelement(_tag(root, "dataValidations"), {"count": "0"})
        _insert_after_rows(root, lists, "dataValidations")
    element = lists.makeelement(_tag(root, "dataValidation"), {})
    for name, value in (
        ("allowBlank", "1"),
        ("showInputMessage", "1"),
        ("promptTitle", prompt["input_title"]),
        ("prompt", prompt["input_message"]),
        ("sqref", sqref),
    ):
        element.set(name, value)
    lists.append(element)
    if lists.get("count") is not None:
        lists.set("count", str(len(lists.findall(_tag(root, "dataValidation")))))


def _drawing_element(root, rid: str) -> None:
    """The `<legacyDrawing>` that draws the sheet's comment boxes (relationship `rid`), its `r:id`
    in the sheet's relationships namespace, declared on the root when the sheet has none. The
    sheet has no drawing relationship when this is called: a `<legacyDrawing>` it still holds
    (the tool's own, from a returned workbook) points at nothing, and is given the new one."""
    old = root.find(_tag(root, "legacyDrawing"))
    held = [name for name in (old.attrib if old is not None else ()) if etree.QName(name).localname == "id"]
    if held:
        old.set(held[0], rid)
        return
    namespace = next((uri for uri in root.nsmap.values() if uri in REL_NAMESPACES.values()), None)
    if namespace is None:
        namespace = REL_NAMESPACES[etree.QName(root).namespace]
        taken = {p for el in root.iter() if isinstance(el.tag, str) for p in el.nsmap}
        prefix = next(p for p in ("r", *(f"r{n}" for n in range(1, 100))) if p not in taken)
        element = root.makeelement(_tag(root, "legacyDrawing"), nsmap={prefix: namespace})
        element.set(f"{{{namespace}}}id", rid)
        _insert_after_rows(root, element, "legacyDrawing")
        # the declaration moved up to the root (as Excel writes it); every other declaration kept where it is
        etree.cleanup_namespaces(root, top_nsmap={prefix: namespace}, keep_ns_prefixes=sorted(p for p in taken if p))
        return
    element = root.makeelement(_tag(root, "legacyDrawing"), {})
    element.set(f"{{{namespace}}}id", rid)
    _insert_after_rows(root, element, "legacyDrawing")


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def write_in_place(result: Result, out_path: Path) -> Path:
    """Write the returned workbook of an .xlsx or .xlsm atomically (temporary file, then rename)."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.partial")
    tool_tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.tool")
    try:
        with zipfile.ZipFile(result.path) as z:
            infos = {i.filename: i for i in z.infolist()}
            parts = opc.Package(z)
            package.remove_macros(parts)
            remove_tool_sheets(parts, result.tool_sheets)
            styles = Styles(parts["xl/styles.xml"])
            restore = styles.restore_map()
            tool, looks, (findings_rows, dimension) = _tool_book(result, tool_tmp)
            mapping = styles.merge(tool["xl/styles.xml"])
            listed = opc.sheets(parts)
            names = [s.sheet.name if isinstance(s, SheetResult) else s.name for s in result.sheets]
            if len(listed) != len(names):  # the sheets as read: by name
                by_name = {s["name"]: s["part"] for s in listed}
                where = [by_name.get(n) for n in names]
            else:  # the sheets as read are the workbook's, in order (names read back may differ in escapes)
                where = [s["part"] for s in listed]
            intake = [(sheet, part) for sheet, part in zip(result.sheets, where, strict=True) if isinstance(sheet, SheetResult)]
            for sheet, part in intake:
                if part in parts:  # the rows stay in the source, read again as they are written
                    parts[part] = sheetrows.skeleton(parts.chunks(part), where=_where(sheet))
                    _strip_notes(parts, part)  # a returned workbook's notes out first
            streams: dict = {}
            blocks = _blocks(parts)
            for (sheet, part), look in zip(intake, looks, strict=True):
                if part in parts:
                    _intake(parts, part, sheet, look, mapping, styles, restore, streams, blocks)
            moved = add_tool_sheets(parts, tool, mapping)
            findings = moved["xl/worksheets/sheet1.xml"]  # the tool's workbook's first sheet

            def restyle(attr: str) -> str:
                return f' s="{mapping[int(attr[4:-1])]}"' if attr else ""

            streams[findings] = lambda: sheetxml.spliced(parts[findings], findings_rows(restyle), dimension)
            order = [n for n in infos if n in parts] + [n for n in parts if n not in infos]
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zout:
                for name in order:
                    info = zipfile.ZipInfo(name, date_time=infos[name].date_time if name in infos else (1980, 1, 1, 0, 0, 0))
                    if name in streams:
                        sheetxml.stream(zout, info, streams[name](), 1)
                    elif name in infos and parts.unread(name):  # never looked at: copied as it is
                        sheetxml.stream(zout, info, parts.chunks(name), 1, size=infos[name].file_size)
                    elif name != "xl/styles.xml":  # the style table last: the rows add the flagged cells' styles
                        zout.writestr(info, parts[name], compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)
                info = zipfile.ZipInfo("xl/styles.xml", date_time=infos["xl/styles.xml"].date_time)
                zout.writestr(info, styles.xml(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)
        os.replace(tmp, out_path)
        result.timed("write", clock)
    finally:
        for path in (tmp, tool_tmp):
            if path.exists():
                path.unlink()
    return out_path
