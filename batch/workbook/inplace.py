"""The returned workbook of an .xlsx or .xlsm: the user's own package with the tool's additions.

Every part of the input is copied as it is, except what the tool adds:
- on each intake sheet, its columns appended to the rows after the last used column
  (`batch.workbook.sheetrows`), a flagged cell given a copy of its own style with the finding's fill
  (`batch.workbook.stylesxml`), its notes added below the user's comments (`batch.workbook.commentsxml`) with their
  boxes in the sheet's drawing, the widths of its columns, and, only where the sheet has none of
  its own, a frozen pane and an autofilter (never over an Excel Table);
- its sheets (Findings, Summary, Run), written by xlsxwriter into a workbook of their own and
  moved into the package with their styles, chart and defined names;
- an .xlsm loses its macros and comes back as an .xlsx (`batch.workbook.package`).

A returned workbook dropped back in first loses what the tool added (its sheets, its columns,
its fills and its notes), so the second run adds the same again.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import os
import re
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import xlsxwriter
from lxml import etree

from batch.pipeline import Result, SheetResult
from batch.run.faults import fault
from batch.workbook import cells, commentsxml, opc, package, sheetrows, sheetxml, stylesxml, xmlparts
from batch.workbook.beside import Made, MadeBeside, made_beside_all
from batch.workbook.looks import WRITER_OPTIONS, Formats
from batch.workbook.reading import EXCEL_COLUMNS, column_marker, is_tool_name, read_markers, sheets_kept_by_libreoffice
from batch.workbook.refused import Refused
from batch.workbook.stylesxml import FILLS, Styles
from batch.workbook.toolcolumns import (
    NoteCells,
    decision_column,
    decision_prompt,
    frozen_at,
    marked_columns,
    note_cells,
    tool_cells,
    tool_columns,
    tool_styles,
)
from batch.workbook.toolsheets import write_tool_sheets
from batch.workbook.xlsxwriter_private import closed_parts, parts_in_memory, xf_index
from validators.columns import REVIEW_COLUMNS

T_WORKSHEET = opc.REL_NS + "/worksheet"
T_COMMENTS = opc.REL_NS + "/comments"
T_VML = opc.REL_NS + "/vmlDrawing"
T_TABLE = opc.REL_NS + "/table"
CT_COMMENTS = "application/vnd.openxmlformats-officedocument.spreadsheetml.comments+xml"
CT_VML = "application/vnd.openxmlformats-officedocument.vmlDrawing"
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
VML_NS = "urn:schemas-microsoft-com:vml"
VML_OFFICE = "urn:schemas-microsoft-com:office:office"
VML_EXCEL = "urn:schemas-microsoft-com:office:excel"
VML_NAMESPACES = {"v": VML_NS, "o": VML_OFFICE, "x": VML_EXCEL}  # the prefixes the tool's boxes are written with
VML_PREFIX = re.compile(rb"(?<=[<\s/])(v|o|x):(?=[A-Za-z_])")
VML_SHAPES = {"shape", "rect", "roundrect", "oval", "line", "polyline", "arc", "curve", "image", "group"}
SHAPE_NUMBER = re.compile(r"^_x0000_s(\d+)$")
SHAPE_TYPE_ID = "_x0000_t202"  # the comment box's shape type
REF = re.compile(r"^\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?$")


# -- the workbook's sheets and names ------------------------------------------------------------


def _marked(parts: dict[str, bytes]) -> set[str]:
    """The names (casefolded) of the sheets the tool's markers name (see batch.workbook.reading)."""
    book = opc.workbook_part(parts)
    return set(read_markers(parts[book] if book else None).sheets)


def _is_tool_name(el) -> bool:
    return is_tool_name(el.get("name") or "")


def remove_tool_sheets(parts: dict[str, bytes]) -> None:
    """A returned workbook without the tool's sheets (those its markers name), their parts, and
    the tool's defined names (its markers, those that no longer mark anything too: written anew)
    and those scoped to its sheets."""
    marked = _marked(parts)
    gone = {s["index"] for s in opc.sheets(parts) if s["name"].casefold() in marked}
    if gone:
        package.remove_sheets(parts, gone, drop_name=_is_tool_name)
        return
    book, root = opc.workbook(parts)  # no sheet of the tool's left: only its stale markers go
    holder = xmlparts.child(root, "definedNames")
    stale = [] if holder is None else [el for el in xmlparts.children(holder, "definedName") if _is_tool_name(el)]
    if stale:
        package._remove_names(root, lambda el, local: not _is_tool_name(el), {})
        parts[book] = xmlparts.serialize(root, parts[book])


# -- the tool's sheets, written by xlsxwriter and moved in ----------------------------------------


def _tool_book(result: Result) -> tuple[dict[str, bytes], list[dict], tuple]:
    """The tool's sheets and the formats of its columns on each intake sheet, in a workbook of
    their own, in memory; returns its parts, per intake sheet the xlsxwriter style index of each
    format, and the Findings sheet's rows (generated later, straight into the returned workbook)."""
    wb = xlsxwriter.Workbook(io.BytesIO(), WRITER_OPTIONS)
    parts_in_memory(wb)
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
    findings, rules = write_tool_sheets(wb, fmts, result, keep_rules=True)
    parts = closed_parts(wb)
    parts[rules.name] = rules.settle(parts[rules.name])
    return parts, looks, findings


def _restyled(xml: bytes, mapping: dict[int, int]) -> bytes:
    """A sheet of the tool's workbook with its style indices moved to the user's style table (the
    cells' and rows' `s`, the columns' `style`), and never the selected tab (the user's stays so).
    The same sheet moved by the same table of indices (a dict) is worked out once in a process: a
    worker moves the same Rules sheet (`batch.workbook.rulebook.RulesPart`) into every workbook of a
    template."""
    if type(mapping) is dict:
        return _restyled_once(xml, tuple(sorted(mapping.items())))
    return _restyle(xml, mapping)


@functools.lru_cache(maxsize=8)
def _restyled_once(xml: bytes, moves: tuple[tuple[int, int], ...]) -> bytes:
    return _restyle(xml, dict(moves))


def _restyle(xml: bytes, mapping) -> bytes:
    root = xmlparts.parse(xml, "the tool's sheet")
    keys = {"c": "s", "row": "s", "col": "style"}
    for el in root.iter("{*}c", "{*}row", "{*}col", "{*}sheetView"):  # only these, in any namespace (lxml picks them)
        name = xmlparts.local(el)
        key = keys.get(name)
        if key and el.get(key) is not None:
            el.set(key, str(mapping[int(el.get(key))]))
        elif name == "sheetView" and el.get("tabSelected") is not None:
            del el.attrib["tabSelected"]
    return xmlparts.serialize(root, xml)


def _add_names(parts: dict[str, bytes], names: list[tuple[str, str, int]]) -> None:
    """Hidden defined names (name, formula, the index of the sheet it is scoped to) added to the
    workbook's list (in the workbook's own namespace and prefix; the list made when it has none)."""
    book, root = opc.workbook(parts)
    reach = _scope_reach(root)
    names = [n for n in names if n[2] < reach]
    if not names:
        return
    holder = _defined_names(root)
    for name, formula, local in names:
        el = etree.SubElement(holder, xmlparts.qname(root, "definedName"))
        el.set("name", name)
        el.set("localSheetId", str(local))
        el.set("hidden", "1")
        el.text = formula
    parts[book] = xmlparts.serialize(root, parts[book])


def _scope_reach(root) -> int:
    """The sheet index below which a name the tool scopes to a sheet may be written: the number of
    sheets LibreOffice keeps of the workbook (batch.workbook.reading.sheets_kept_by_libreoffice). A workbook
    listing two or more sheet names it refuses opens there with fewer sheets, and a name scoped past
    them stops it opening; such names of the tool's are left out (SHEET_NAMES_REFUSED says so)."""
    return sheets_kept_by_libreoffice([str(el.get("name") or "") for el in opc.sheet_elements(root)])


def _defined_names(root):
    """The workbook's `<definedNames>`, added after the sheets (and the function groups and
    external references that may follow them) when it has none."""
    holder = xmlparts.child(root, "definedNames")
    if holder is None:
        holder = etree.Element(xmlparts.qname(root, "definedNames"))
        before = [el for el in root if isinstance(el.tag, str) and xmlparts.local(el) in BEFORE_NAMES]
        before[-1].addnext(holder)
    return holder


def _add_column_markers(parts: dict[str, bytes], intake: list[tuple[SheetResult, str]], looks: list[dict]) -> None:
    """The marker of the tool's columns of each intake sheet (see batch.workbook.reading), scoped to the
    sheet: the columns the tool writes, and the reviewer's where the sheet has them."""
    at = {s["part"]: (s.get("index", i), s["name"]) for i, s in enumerate(opc.sheets(parts))}
    names = []
    for (res, part), look in zip(intake, looks, strict=True):
        columns = marked_columns(res.sheet, len(look["columns"]))
        if part in at and columns:
            index, name = at[part]
            names.append((*column_marker(name, res.sheet.spec.name, res.sheet.header_row, columns), index))
    _add_names(parts, names)


PART_NUMBER = re.compile(r"^(.*?)(\d+)(\.[A-Za-z]+)$")
# where `<definedNames>` goes in a workbook without one: after the last of these (the schema's order)
BEFORE_NAMES = ("sheets", "functionGroups", "externalReferences")


def _new_sheet(root, sheets, name: str, sheet_id: int, rid: str) -> None:
    """A `<sheet>` added to the workbook's list, in the workbook's own namespace and prefixes."""
    rel = xmlparts.rel_ns(root)
    bound = xmlparts.prefix(sheets, rel)
    nsmap = None
    if bound is None or bound == "":  # the relationships namespace not declared here (or only as the default): declare it
        taken = set(sheets.nsmap)
        nsmap = {next(p for p in ("r", *(f"r{n}" for n in range(1, 100))) if p not in taken): rel}
    el = etree.SubElement(sheets, xmlparts.qname(root, "sheet"), nsmap=nsmap)
    el.set("name", name)
    el.set("sheetId", str(sheet_id))
    el.set(f"{{{rel}}}id", rid)


def add_tool_sheets(parts: dict[str, bytes], tool: dict[str, bytes], mapping: dict[int, int]) -> dict[str, str]:
    """Move the tool's sheets (with their drawings and charts) into the package, after the user's
    sheets, with their defined names (the marker, print titles, the Findings filter); returns the
    new name of each part moved. In a Strict workbook the tool's parts (written Transitional by
    xlsxwriter) come in Strict, and what is added to the workbook part takes its namespace and
    prefixes."""
    ours = opc.sheets(tool)
    book, root = opc.workbook(parts)
    strict = xmlparts.is_strict(root)
    listed = opc.sheet_elements(root)
    n_user = len(listed)
    ids = [int(el.get("sheetId")) for el in listed if (el.get("sheetId") or "").strip().isdigit()]
    sheets = xmlparts.child(root, "sheets")
    if sheets is None:
        sheets = etree.SubElement(root, xmlparts.qname(root, "sheets"))
    moved = {}
    for k, s in enumerate(ours):
        renamed = {}
        for part in sorted(opc.reachable(tool, s["part"])):
            m = PART_NUMBER.match(part)
            renamed[part] = opc.free_name(parts, f"{m.group(1)}{{}}{m.group(3)}") if m else part
            data = tool[part]
            if part == s["part"]:
                data = _restyled(data, mapping)
            parts[renamed[part]] = xmlparts.to_strict(data) if strict and part.endswith(".xml") else data
            opc.declare(parts, renamed[part], opc.content_type(tool, part))
        for part, new in renamed.items():  # relationships between the moved parts, renamed, their ids kept
            for rel in opc.relationships(tool, part):
                if rel["part"] in renamed:
                    opc.add_relationship(parts, new, rel["type"], renamed[rel["part"]], rid=rel["id"])
        moved.update(renamed)
        rid = opc.add_relationship(parts, book, T_WORKSHEET, renamed[s["part"]])
        _new_sheet(root, sheets, s["name"], max(ids, default=0) + 1 + k, rid)
    _tool_book_name, tool_root = opc.workbook(tool)
    tool_names = xmlparts.child(tool_root, "definedNames")
    reach = _scope_reach(root)
    scoped = list(xmlparts.children(tool_names, "definedName")) if tool_names is not None else []
    scoped = [one for one in scoped if one.get("localSheetId") is None or int(one.get("localSheetId")) + n_user < reach]
    if scoped:
        holder = _defined_names(root)
        for one in scoped:
            el = etree.SubElement(holder, xmlparts.qname(root, "definedName"))
            for key, value in one.attrib.items():
                el.set(key, str(int(value) + n_user) if key == "localSheetId" else value)
            el.text = one.text
    parts[book] = xmlparts.serialize(root, parts[book])
    return moved


# -- an intake sheet ------------------------------------------------------------------------------
# Its head and tail (everything but the rows) are edited as XML: the part without its rows
# (`sheetrows.skeleton`) is parsed with lxml, changed in the sheet's own namespace (Transitional or
# Strict) and prefix, written back, and cut again around the rows element, whose rows are streamed
# between (`sheetrows.rewrite_stream`).

MC_NAMESPACE = xmlparts.MC
REL_NAMESPACES = {  # the relationships namespace (r:id) of each SpreadsheetML namespace
    xmlparts.MAIN: xmlparts.REL,
    xmlparts.MAIN_STRICT: xmlparts.REL_STRICT,
}
SPREADSHEETML = frozenset(REL_NAMESPACES)
EVERY_ROW = (1 << 20) - 1  # the last row (0-based) of a sheet


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


def _kind(rel: dict) -> str | None:
    """The last segment of a relationship's type (`.../vmlDrawing`), Transitional or Strict."""
    return xmlparts.type_name(rel["type"])


def _root(data: bytes):
    """The root element of a part as its start tag declares it (its namespace, prefix and
    declarations), read from the first bytes only (a sheet part is never parsed whole here)."""
    parser = etree.XMLPullParser(events=("start",), resolve_entities=False, no_network=True, load_dtd=False)
    for at in range(0, len(data), 1 << 16):
        parser.feed(data[at : at + (1 << 16)])
        for _event, element in parser.read_events():
            return element
    return None


def _vml(data: bytes, name: str):
    """The drawing's tree, or None when it is not well-formed XML (old Excel wrote VML as HTML,
    with `<br>` unclosed): such a drawing is edited as bytes, as the tool did before it read VML."""
    try:
        return xmlparts.parse(data, name).getroottree()
    except xmlparts.NotWellFormed:
        return None


def _bound(tree) -> dict[str, str]:
    """The prefix the drawing's root binds to each VML namespace (v, o, x), declared there when missing."""
    root = tree.getroot()
    at_root = {uri: p for p, uri in root.nsmap.items() if p}
    top = {}
    for p, uri in VML_NAMESPACES.items():
        if uri not in at_root:
            q, n = p, 1
            while q in root.nsmap or q in top:
                q, n = f"{p}{n}", n + 1
            top[q] = uri
    if top:  # declared on the root (a declaration on an inner element that says the same moves up to it)
        prefixes = {p for el in tree.iter() if isinstance(el.tag, str) for p in el.nsmap if p}
        etree.cleanup_namespaces(tree, top_nsmap=top, keep_ns_prefixes=sorted(prefixes | set(top)))
        at_root = {uri: p for p, uri in tree.getroot().nsmap.items() if p}
    return {p: at_root[uri] for p, uri in VML_NAMESPACES.items()}


def _prefixed(xml: bytes, prefixes: dict[str, str]) -> bytes:
    """VML written with the prefixes v, o and x, with the drawing's own prefixes instead."""
    if all(p == q for p, q in prefixes.items()):
        return xml
    return VML_PREFIX.sub(lambda m: prefixes[m.group(1).decode()].encode() + b":", xml)


def _shape_blocks(tree) -> set[int]:
    """The shape-id blocks the drawing's shapes use (`_x0000_s2049` is in block 2)."""
    out = set()
    for el in tree.iter():
        if isinstance(el.tag, str):
            for key in ("id", f"{{{VML_OFFICE}}}spid"):
                m = SHAPE_NUMBER.match(el.get(key) or "")
                if m:
                    out.add(int(m.group(1)) // 1024)
    return out


def _idmap(tree):
    return next(tree.getroot().iter(f"{{{VML_OFFICE}}}idmap"), None)


def _with_boxes(data: bytes, name: str, rows: np.ndarray, cols: np.ndarray, first: int, count: int) -> bytes:
    """A drawing of the user's with the boxes of the tool's new comments, in the shape-id blocks
    from `first` on (added to its `idmap`), and the comment box's shape type when it lacks it."""
    tree = _vml(data, name)
    if tree is None:
        return _with_boxes_bytes(data, rows, cols, first, count)
    prefixes = _bound(tree)
    root = tree.getroot()
    wrapper = "<xml " + " ".join(f'xmlns:{prefixes[p]}="{uri}"' for p, uri in VML_NAMESPACES.items()) + ">{}</xml>"
    layout = next((c for c in root if c.tag == f"{{{VML_OFFICE}}}shapelayout"), None)
    more = ",".join(str(first + b) for b in range(count))
    idmap = _idmap(tree)
    if idmap is None:  # a drawing that declares no blocks: the blocks its shapes use, and the tool's
        listed_blocks = ",".join([*(str(b) for b in sorted(_shape_blocks(tree))), more])
        layout_xml = f'<o:shapelayout v:ext="edit"><o:idmap v:ext="edit" data="{listed_blocks}"/></o:shapelayout>'
        made = etree.fromstring(_prefixed(wrapper.format(layout_xml).encode(), prefixes))[0]
        root.insert(0, made)
        layout = made
    else:
        listed = [b.strip() for b in (idmap.get("data") or "").split(",") if b.strip()]
        idmap.set("data", ",".join([*listed, more]))
    if not any(el.get("id") == SHAPE_TYPE_ID for el in root.iter(f"{{{VML_NS}}}shapetype")):
        shapetype = etree.fromstring(_prefixed(wrapper.format(sheetxml.SHAPE_TYPE).encode(), prefixes))[0]
        if layout is not None:
            layout.addnext(shapetype)
        else:
            root.insert(0, shapetype)
    place = etree.ProcessingInstruction("njcredits-boxes")
    root.append(place)
    out = xmlparts.serialize(tree, data)
    mark = etree.tostring(place)
    at = out.index(mark)
    return out[:at] + _prefixed(b"".join(sheetxml.vml_shapes(rows, cols, first)), prefixes) + out[at + len(mark) :]


def _with_boxes_bytes(data: bytes, rows: np.ndarray, cols: np.ndarray, first: int, count: int) -> bytes:
    """`_with_boxes` for a drawing that is not well-formed XML: edited as bytes."""
    root = re.search(rb"<xml\b[^>]*>", data)
    missing = [k for k in VML_NAMESPACES if f"xmlns:{k}=".encode() not in root.group(0)]
    declared = "".join(f' xmlns:{k}="{VML_NAMESPACES[k]}"' for k in missing).encode()
    if declared:  # the boxes added are written with the prefixes v, o and x
        data = data[: root.end() - 1] + declared + data[root.end() - 1 :]
    if b'id="_x0000_t202"' not in data:
        layout = re.search(rb"</(?:[\w.-]+:)?shapelayout>", data)
        at = layout.end() if layout else re.search(rb"<xml\b[^>]*>", data).end()
        data = data[:at] + sheetxml.SHAPE_TYPE.encode() + data[at:]
    more = ",".join(str(first + b) for b in range(count)).encode()
    data = IDMAP_DATA.sub(lambda m: m.group(1) + m.group(2) + b"," + more + m.group(3), data, count=1)
    at = data.rindex(b"</xml>")
    return data[:at] + b"".join(sheetxml.vml_shapes(rows, cols, first)) + data[at:]


def _notes(parts: dict[str, bytes], part: str, notes: Mapping[str, str], at: tuple, streams: dict, blocks: set[int]) -> str | None:
    """Merge the tool's notes into the sheet's comments and their boxes into its drawing (`at`: the
    0-based row and the column of each note's cell, in the notes' order, as arrays; a new
    comments part or drawing is written as the package is, into `streams`: a new drawing as `Made`
    from the result alone, which a process of its own may make (`write_in_place`); `blocks` are the
    drawing's shape-id blocks taken in the package); returns the relationship id of the drawing
    made for the sheet when it had none (its `<legacyDrawing>` is added by `_drawing_element`).
    New parts and relationships are of the sheet's kind (Strict Open XML in a Strict sheet)."""
    sheet = _root(parts[part])
    main = etree.QName(sheet).namespace
    rels = opc.relationships(parts, part)
    comments = next((r["part"] for r in rels if _kind(r) == "comments"), None)
    vml = next((r["part"] for r in rels if _kind(r) == "vmlDrawing"), None)
    comments, vml = opc.find(parts, comments) or comments, opc.find(parts, vml) or vml
    old = parts.get(comments) if comments else None
    commented = commentsxml.refs(old, comments)
    if comments is None:
        comments = opc.free_name(parts, "xl/comments{}.xml")
        opc.add_relationship(parts, part, T_COMMENTS, comments)
    if old is None:  # written as the package is
        parts[comments] = b""
        streams[comments] = lambda: commentsxml.merged_chunks(None, notes, main or commentsxml.NS)  # made here (see beside.py)
    else:
        parts[comments] = commentsxml.merged(old, notes, name=comments)
    opc.declare(parts, comments, CT_COMMENTS)
    new = np.fromiter((ref not in commented for ref in notes), dtype=bool, count=len(notes)) if commented else slice(None)
    rows, cols = (np.asarray(a, dtype=np.int64)[new] for a in at)
    first = max(blocks, default=0) + 1
    count = sheetxml.blocks_for(len(rows))
    made = None
    if vml is None or vml not in parts:
        if vml is None:
            vml = opc.free_name(parts, "xl/drawings/vmlDrawing{}.vml")
            made = opc.add_relationship(parts, part, T_VML, vml)
        opc.declare_default(parts, "vml", CT_VML)
        parts[vml] = b""  # written as the package is
        streams[vml] = Made(lambda: sheetxml.vml_xml(sheetxml.NOTE_VML, rows, cols, first))  # of the result alone
    elif len(rows):
        parts[vml] = _with_boxes(parts[vml], vml, rows, cols, first, count)
    if len(rows):
        blocks.update(range(first, first + count))
    return made


def _blocks(parts: dict[str, bytes]) -> set[int]:
    """The shape-id blocks the package's VML drawings take: those their `idmap` declares
    (`<o:idmap data="1,2"/>`) and those their shapes' ids fall in."""
    out = set()
    for name in parts:
        if not name.casefold().endswith(".vml"):
            continue
        tree = _vml(parts[name], name)
        if tree is None:  # not well-formed: read as bytes
            out |= {int(b) for m in IDMAP.finditer(parts[name]) for b in m.group(1).split(b",") if b.strip().isdigit()}
            out |= {int(n) // 1024 for n in SHAPE_ID.findall(parts[name])}
            continue
        for idmap in tree.getroot().iter(f"{{{VML_OFFICE}}}idmap"):
            out |= {int(b) for b in (idmap.get("data") or "").split(",") if b.strip().isdigit()}
        out |= _shape_blocks(tree)
    return out


def _remove(element) -> None:
    """Take an element out of its tree, keeping any text after it that is not only spacing."""
    parent, tail = element.getparent(), element.tail
    if tail and tail.strip():
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def _note_box(shape) -> tuple[int, int] | None:
    """The cell (row, column; 0-based) a comment box is anchored to, or None for another shape."""
    data = shape.find(f"{{{VML_EXCEL}}}ClientData")
    if data is None or data.get("ObjectType") != "Note":
        return None
    row, col = data.find(f"{{{VML_EXCEL}}}Row"), data.find(f"{{{VML_EXCEL}}}Column")
    if row is None or col is None or not (row.text or "").strip().isdigit() or not (col.text or "").strip().isdigit():
        return None
    return int(row.text), int(col.text)


def _without_drawing(sheet: bytes, part: str, rid: str) -> bytes:
    """The sheet (its head and tail) without its `<legacyDrawing>` of relationship `rid`."""
    try:
        tree = xmlparts.parse(sheet, part).getroottree()
    except xmlparts.NotWellFormed:
        return re.sub(rb"<(?:[\w.-]+:)?legacyDrawing\s+[\w.-]+:id=[\"']" + re.escape(rid.encode()) + rb"[\"']\s*/>", b"", sheet, count=1)
    for el in tree.getroot():
        if isinstance(el.tag, str) and etree.QName(el).localname == "legacyDrawing":
            if any(el.get(f"{{{ns}}}id") == rid for ns in xmlparts.RELS):
                _remove(el)
                return xmlparts.serialize(tree, sheet)
    return sheet


def _strip_notes(parts: dict[str, bytes], part: str) -> None:
    """A returned sheet without the tool's notes, their boxes, and the comments and drawing parts
    the tool made for them. The drawing is read as XML (any prefix; its `idmap` keeps the blocks
    its shapes use); one that is not well-formed is edited as bytes."""
    rels = opc.relationships(parts, part)
    comments = next((r for r in rels if _kind(r) == "comments"), None)
    name = opc.find(parts, comments["part"]) if comments else None
    if name is None:
        return
    left, refs = commentsxml.cut(parts[name], name)
    gone = {_at(ref.upper()) for ref in refs if ref and REF.match(ref.upper())}
    if left is None:
        opc.remove_relationships(parts, part, {comments["id"]})
        opc.remove_parts(parts, {name})
    elif left is not parts[name]:
        parts[name] = left
    vml = next((r for r in rels if _kind(r) == "vmlDrawing"), None)
    drawing = opc.find(parts, vml["part"]) if vml else None
    if drawing is None or not gone:
        return
    tree = _vml(parts[drawing], drawing)
    if tree is None:
        _strip_boxes_bytes(parts, part, vml, drawing, gone)
        return
    root = tree.getroot()
    for shape in list(root.iter(f"{{{VML_NS}}}shape")):
        if _note_box(shape) in gone:
            _remove(shape)
    if not any(etree.QName(el).localname in VML_SHAPES for el in root.iter(f"{{{VML_NS}}}*")):  # the drawing held only the tool's boxes
        opc.remove_relationships(parts, part, {vml["id"]})
        opc.remove_parts(parts, {drawing})
        parts[part] = _without_drawing(parts[part], part, vml["id"])
        return
    idmap = _idmap(tree)
    if idmap is not None:  # the blocks the tool added at the end of the list, now without shapes
        held = _shape_blocks(tree)
        listed = [b.strip() for b in (idmap.get("data") or "").split(",") if b.strip()]
        while len(listed) > 1 and listed[-1].isdigit() and int(listed[-1]) not in held:
            listed.pop()
        idmap.set("data", ",".join(listed))
    parts[drawing] = xmlparts.serialize(tree, parts[drawing])


def _strip_boxes_bytes(parts: dict[str, bytes], part: str, vml: dict, drawing: str, gone: set) -> None:
    """`_strip_notes`'s work on a drawing that is not well-formed XML: edited as bytes."""

    def keep(m: re.Match) -> bytes:
        at = NOTE_AT.search(m.group(0))
        return b"" if at and b'ObjectType="Note"' in m.group(0) and (int(at.group(1)), int(at.group(2))) in gone else m.group(0)

    data = SHAPE.sub(keep, parts[drawing])
    if SHAPE.search(data) is None:  # the drawing held only the tool's boxes
        opc.remove_relationships(parts, part, {vml["id"]})
        opc.remove_parts(parts, {drawing})
        parts[part] = _without_drawing(parts[part], part, vml["id"])
        return
    held = {int(n) // 1024 for n in SHAPE_ID.findall(data)}
    listed = IDMAP.search(data)
    if listed:  # the blocks the tool added at the end of the list, now without shapes
        blocks = [b for b in listed.group(1).decode().split(",") if b.strip()]
        while len(blocks) > 1 and int(blocks[-1]) not in held:
            blocks.pop()
        data = IDMAP_DATA.sub(lambda m: m.group(1) + ",".join(blocks).encode() + m.group(3), data, count=1)
    parts[drawing] = data


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


def _note_texts(found: NoteCells, start: int, stop: int) -> np.ndarray:
    """The notes of cells `start:stop`, a text past Excel's limit cut to it."""
    texts = found.texts(start, stop)
    long = np.flatnonzero(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) > cells.MAX_TEXT)
    texts[long] = [t[: cells.MAX_TEXT] for t in texts[long]]
    return texts


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
    found = note_cells(res)  # each cell once, in the order its note is written
    at_rows = np.asarray(sheet.excel_rows, dtype=np.int64)[found.pos]
    at_cols = np.asarray(sheet.kept, dtype=np.int64)[found.col]
    notes = commentsxml.Notes(at_rows, at_cols, functools.partial(_note_texts, found))  # made as the comments part is written
    filled = pd.Series(found.severity).isin(FILLS).to_numpy()  # an info finding gets a note but no fill
    flagged = sheetrows.LazyFlags(at_rows[filled], at_cols[filled], found.severity[filled], sheetxml.CHUNK_ROWS)
    made_styles: dict[tuple[int, str], int] = {}

    def restyle(own: int, severity: str) -> int:
        if (own, severity) not in made_styles:
            made_styles[(own, severity)] = styles.flagged(own, severity)
        return made_styles[(own, severity)]

    widths = {at + j: c.width for j, c in enumerate(columns)}
    changes = sheetrows.Changes(
        restyle=restyle if flagged else None,
        drop=set(sheet.dropped),
        restore=restore,
        column_styles=_column_styles(root),
        tail_at=at,
        replace=_cut_cells(sheet),
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
    decision = decision_column(res, columns) if not sheet.no_room else None
    if decision is not None:  # the choices of a decision: a drop-down, and a message when the cell is selected
        letter = cells.column_letters(decision)
        changed = _prompt(root, f"{letter}{h + 2}:{letter}{max(last_row, h + 2)}", decision_prompt(res)) or changed
    if notes:
        made = _notes(parts, part, notes, (at_rows - 1, at_cols), streams, blocks)
        if made is not None:
            _drawing_element(root, made)
            changed = True
    if changed:
        data = xmlparts.serialize(root, data)
    head, tail = sheetrows.split_part([data])
    streams[part] = lambda: sheetrows.rewrite_stream(parts.chunks(part), tails, flagged, changes, head=head, tail=tail, where=_where(res))


# U+FFFE and U+FFFF in UTF-8: not characters XML may hold (a part holding one is malformed: openpyxl
# refuses the file, LibreOffice shows a truncated sheet), written as Excel's escapes instead.
NONCHARS = ((b"\xef\xbf\xbe", b"_xFFFE_"), (b"\xef\xbf\xbf", b"_xFFFF_"))
XML_PART = re.compile(r"\.(xml|rels|vml)$", re.IGNORECASE)


def is_xml_part(name: str) -> bool:
    """A part whose text may hold a cell's or a name's characters (XML, relationships, VML)."""
    return bool(XML_PART.search(name))


def without_nonchars(chunks):
    """The chunks of a UTF-8 part with every U+FFFE and U+FFFF written as `_xFFFE_` / `_xFFFF_`
    (a character split between two chunks included). A reader that accepted a raw one (calamine,
    LibreOffice) gave the tool the text; what it writes back is always well-formed."""
    carry = b""
    for chunk in chunks:
        data = carry + bytes(chunk)
        if b"\xef" not in data:  # no character from U+F000 on (one byte searched: ten times faster than the two replaced)
            carry = b""
            if data:
                yield data
            continue
        keep = 2 if data.endswith(b"\xef\xbf") else 1 if data.endswith(b"\xef") else 0
        data, carry = (data[:-keep], data[-keep:]) if keep else (data, b"")
        for raw, escape in NONCHARS:
            data = data.replace(raw, escape)
        if data:
            yield data
    if carry:
        yield carry


def _cut_cells(sheet) -> dict[int, dict[int, str]]:
    """Excel row -> {column: text} of the cells whose text was cut to Excel's limit when read
    (TEXT_TRUNCATED): the returned cell holds what was checked, the reviewer's columns included."""
    out: dict[int, dict[int, str]] = {}
    for (r, c), value in getattr(sheet, "cut_text", {}).items():
        if c not in sheet.dropped:
            out.setdefault(r + 1, {})[c] = value
    return out


def _where(res: SheetResult) -> str:
    """How a refusal names the sheet."""
    return f"The sheet {res.sheet.name!r}"


def _ranges(sqref: str) -> list[tuple[int, int, int, int]]:
    """The ranges of a space-separated list of references (first row, first col, last row, last
    col; 0-based); a reference that is not one is left out."""
    out = []
    for ref in (sqref or "").split():
        m = REF.match(ref.upper())
        if m:
            out.append((int(m.group(2)) - 1, _number(m.group(1)), int(m.group(4) or m.group(2)) - 1, _number(m.group(3) or m.group(1))))
    return out


def _is_tool_prompt(element, column: int) -> bool:
    """A data validation is the tool's own: titled as the Reviewer Decision column's and over cells
    of that column only (a column the tool's marker names)."""
    ranges = _ranges(element.get("sqref"))
    return element.get("promptTitle") == REVIEW_COLUMNS[0] and bool(ranges) and all(r[1] == r[3] == column for r in ranges)


def _prompt(root, sqref: str, prompt: dict | None = None) -> bool:
    """The drop-down and input message of the Reviewer Decision cells `sqref` (one column) in the
    sheet's data validations (a list of its own when it has none): the tool's own from an earlier
    return is replaced; a user's own over any of those cells is left as it is, and the tool adds
    none. `prompt`: the validation (`decision_prompt`); its error alert is off, so that any decision can
    be typed. Returns whether the sheet changed."""
    prompt = prompt or decision_prompt()
    (wanted,) = _ranges(sqref)
    lists = root.find(_tag(root, "dataValidations"))
    changed = False
    if lists is not None:
        for old in [v for v in lists.findall(_tag(root, "dataValidation")) if _is_tool_prompt(v, wanted[1])]:
            lists.remove(old)
            changed = True
        if any(_overlap(wanted, r) for v in lists.findall(_tag(root, "dataValidation")) for r in _ranges(v.get("sqref"))):
            if not len(lists):
                root.remove(lists)
            elif lists.get("count") is not None:
                lists.set("count", str(len(lists.findall(_tag(root, "dataValidation")))))
            return changed  # the user's own validation of those cells stays theirs
    if lists is None:
        lists = root.makeelement(_tag(root, "dataValidations"), {"count": "0"})
        _insert_after_rows(root, lists, "dataValidations")
    element = lists.makeelement(_tag(root, "dataValidation"), {})
    for name, value in (
        ("type", "list"),
        ("allowBlank", "1"),
        ("showInputMessage", "1"),
        ("showErrorMessage", "0"),
        ("promptTitle", prompt["input_title"]),
        ("prompt", prompt["input_message"]),
        ("sqref", sqref),
    ):
        element.set(name, value)
    formula = element.makeelement(_tag(root, "formula1"), {})
    formula.text = '"' + ",".join(prompt["source"]) + '"'
    element.append(formula)
    lists.append(element)
    if lists.get("count") is not None:
        lists.set("count", str(len(lists.findall(_tag(root, "dataValidation")))))
    return True


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


def _sheet_parts(result: Result, listed: list[dict]) -> list[str | None]:
    """The part of each sheet of the result, from the workbook's sheets as read (`opc.sheets`,
    without the macro sheets and the tool's sheets): by name (ignoring case, as Excel compares
    sheet names), else, when the names read back differ (escapes) but the sheets are as many, in
    order. A sheet that has no part (a broken relationship) gets None, and is left as it is."""
    names = [s.sheet.name if isinstance(s, SheetResult) else s.name for s in result.sheets]
    by_name = {s["name"].casefold(): s["part"] for s in listed}
    if all(n.casefold() in by_name for n in names):
        return [by_name[n.casefold()] for n in names]
    if len(listed) == len(names):
        return [s["part"] for s in listed]
    return [by_name.get(n.casefold()) for n in names]


@contextlib.contextmanager
def _source(result: Result):
    """The zip of the workbook read (`result.reading`): the one `batch.pipeline.process` opened and
    handed on with the result (left open: `Result.discard` closes it), else the file opened now."""
    opened = result.opened
    if opened is not None and not opened.closed and opened.path == Path(result.reading):
        yield opened.zip
        return
    with zipfile.ZipFile(result.reading) as z:
        yield z


def _pieces(make, xml: bool):
    """A part's bytes (`make()`'s chunks) as they are compressed: in pieces of exactly `BATCH_BYTES`
    (`sheetxml.batched`), an XML part's with U+FFFE and U+FFFF escaped (`without_nonchars`)."""
    made = sheetxml.batched(make())
    return sheetxml.batched(without_nonchars(made)) if xml else made


# a result of at least this many findings has its Findings sheet and new comment boxes made beside the intake (`made_beside_all`)
BESIDE_ROWS = 10_000
# and of at most this many: a larger result's are made by the worker, after the intake's rows. The
# copy's pages grow as it reads the findings (a full GrowNJ sheet's 1.1 million: about 1.5 GB beside
# the worker, its run's highest), more than the quarter-minute it saves such a sheet is worth
BESIDE_UP_TO = 250_000


def write_in_place(result: Result, out_path: Path) -> Path:
    """Write the returned workbook of an .xlsx or .xlsm atomically (temporary file, then rename)."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.partial")
    beside = None
    try:
        with _source(result) as z:
            infos = {i.filename: i for i in z.infolist()}
            parts = opc.Package(z)
            package.remove_macros(parts)
            remove_tool_sheets(parts)
            styles_part = stylesxml.ensure(parts)  # a package without a style table gets Excel's default one
            styles = Styles(parts[styles_part], styles_part)
            restore = styles.restore_map()
            tool, looks, (findings_rows, dimension) = _tool_book(result)
            mapping = styles.merge(tool[opc.styles_part(tool)])
            where = _sheet_parts(result, opc.sheets(parts))  # the user's sheets: the macro sheets and the tool's are gone
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
            _add_column_markers(parts, intake, looks)
            findings = moved[opc.sheets(tool)[0]["part"]]  # the tool's workbook's first sheet

            def restyle(attr: str) -> str:
                return f' s="{mapping[int(attr[4:-1])]}"' if attr else ""

            def findings_part():
                return sheetxml.spliced(parts[findings], findings_rows(restyle), dimension)

            # the parts made from the result alone, never from the file (the Findings sheet, and a
            # sheet's new drawing of comment boxes: `Made` by `_notes`): when there are many
            # findings, made by a process of their own as the intake's rows are written
            fresh = {findings: findings_part, **{name: made.make for name, made in streams.items() if isinstance(made, Made)}}
            fresh = {name: functools.partial(_pieces, make, is_xml_part(name)) for name, make in fresh.items()}
            if BESIDE_ROWS <= len(result.findings) <= BESIDE_UP_TO:
                beside = made_beside_all(fresh, tmp.parent, functools.partial(fault, "child-beside"))
            else:
                beside = {name: Made(make) for name, make in fresh.items()}
            streams.update(beside)
            order = [n for n in infos if n in parts] + [n for n in parts if n not in infos]
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zout:
                for name in order:
                    info = zipfile.ZipInfo(name, date_time=infos[name].date_time if name in infos else (1980, 1, 1, 0, 0, 0))
                    xml = is_xml_part(name)
                    deflated = streams[name].deflated() if isinstance(streams.get(name), MadeBeside) else None
                    if deflated is not None:  # compressed beside: its Deflate stream copied as it is
                        sheetxml.stream_deflated(zout, info, *deflated)
                    elif name in streams:  # rows come a row at a time: escaped, compressed and written in pieces
                        sheetxml.stream(zout, info, streams[name]() if name in beside else _pieces(streams[name], xml), 1)
                    elif name in infos and parts.unread(name) and xml:  # never looked at: copied as it is, but for U+FFFE/U+FFFF
                        sheetxml.stream(zout, info, without_nonchars(parts.chunks(name)), 1)
                    elif name in infos and parts.unread(name):  # never looked at: copied as it is
                        sheetxml.stream(zout, info, parts.chunks(name), 1, size=infos[name].file_size)
                    elif name != styles_part:  # the style table last: the rows add the flagged cells' styles
                        data = b"".join(without_nonchars([parts[name]])) if xml else parts[name]
                        zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)
                stamp = infos[styles_part].date_time if styles_part in infos else (1980, 1, 1, 0, 0, 0)
                info = zipfile.ZipInfo(styles_part, date_time=stamp)
                zout.writestr(info, styles.xml(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)
        os.replace(tmp, out_path)
        result.timed("write", clock)
    finally:
        for made in (beside or {}).values():  # a write that failed first: the process making the parts stopped
            made.close()
        if tmp.exists():
            tmp.unlink()
    return out_path
