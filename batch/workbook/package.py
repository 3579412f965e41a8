"""A workbook package (the zip of parts) as the tool copies it: part by part, bytes as they are.

Holds what annotating a workbook in place does to the package as a whole (with
`batch.workbook.sheetrows` for the rows and `batch.workbook.stylesxml` for the style table):
- `remove_macros`: an `.xlsm` comes back as an `.xlsx` without its macros: its VBA project (and
  its signatures) and its Excel 4 macro sheets (international ones too), each sheet with its
  `<sheet>` in the workbook, its relationship, parts, content types and the defined names that
  belong to it or refer to it; its main part declared a plain workbook, and every relationship
  to a removed part dropped. ActiveX controls are copied as they are: they are referenced from
  the sheets themselves, and hold control settings rather than code.
- `remove_sheets`: sheets taken out of a workbook with what belongs to them only (shared by the
  macro sheets and the tool's own sheets of a returned workbook).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from lxml import etree

from batch.workbook import opc, xmlparts

MACRO_MAIN = b"application/vnd.ms-excel.sheet.macroEnabled.main+xml"
PLAIN_MAIN = b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
# the main part types of macro-enabled workbooks, templates and add-ins: all come back a plain workbook
MACRO_MAINS = {
    "application/vnd.ms-excel.sheet.macroenabled.main+xml",
    "application/vnd.ms-excel.template.macroenabled.main+xml",
    "application/vnd.ms-excel.addin.macroenabled.main+xml",
}
# parts that are code: the VBA project and its signatures
EXECUTABLE = re.compile(r"^xl/(vbaProject\.bin|vbaProjectSignature[A-Za-z]*\.bin)$", re.IGNORECASE)
VBA_TYPES = ("vbaProject",)
# Excel 4 macro sheets: their relationship types and content types
MACROSHEET_TYPES = ("xlMacrosheet", "xlIntlMacrosheet")
MACROSHEET_CONTENT = {"application/vnd.ms-excel.macrosheet+xml", "application/vnd.ms-excel.intlmacrosheet+xml"}
T_CALC_CHAIN = "calcChain"


class Macro(NamedTuple):
    """Executable content of a workbook: the VBA project (`kind` "vba", `name` "") or an Excel 4
    macro sheet (`kind` "macrosheet", `name` its sheet name, or the part's name for a macro sheet
    part no sheet lists)."""

    kind: str
    name: str

    def words(self) -> str:
        if self.kind == "vba":
            return "the VBA project"
        return f"the Excel 4 macro sheet {self.name}"


def describe(found) -> str:
    """What was removed, in the user's words: `the VBA project and the Excel 4 macro sheet Macro1`."""
    words = [Macro(*m).words() for m in found]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


# -- finding the macros ---------------------------------------------------------------------------


def _vba_parts(parts) -> set[str]:
    """The VBA project (by name, or wherever the workbook's relationship of type vbaProject
    points) and its signatures (its own relationships)."""
    found = {name for name in parts if EXECUTABLE.match(name)}
    book = opc.workbook_part(parts)
    if book is not None:
        found |= {r["part"] for r in opc.relationships(parts, book) if xmlparts.is_type(r["type"], *VBA_TYPES) and r["part"]}
    for name in list(found):
        found |= {r["part"] for r in opc.relationships(parts, name) if r["part"]}
    return {name for name in found if name in parts}


def _is_macro_sheet(parts, sheet: dict) -> bool:
    if sheet["kind"] is not None and sheet["kind"].casefold() in {t.casefold() for t in MACROSHEET_TYPES}:
        return True
    return sheet["part"] is not None and (opc.content_type(parts, sheet["part"]) or "").casefold() in MACROSHEET_CONTENT


def _macro_sheets(parts) -> list[dict]:
    if opc.workbook_part(parts) is None:
        return []
    return [s for s in opc.sheets(parts) if _is_macro_sheet(parts, s)]


def _loose_macro_parts(parts, listed: set[str]) -> set[str]:
    """Macro sheet parts that no sheet of the workbook lists."""
    return {
        name
        for name in parts
        if name not in listed
        and not name.endswith((".rels", "/"))
        and (opc.content_type(parts, name) or "").casefold() in MACROSHEET_CONTENT
    }


def macros(parts) -> list[Macro]:
    """The executable content of the package, in the user's words (see `describe`)."""
    found = [Macro("vba", "")] if _vba_parts(parts) else []
    sheets = _macro_sheets(parts)
    found += [Macro("macrosheet", s["name"]) for s in sheets]
    found += [Macro("macrosheet", name) for name in sorted(_loose_macro_parts(parts, {s["part"] for s in sheets if s["part"]}))]
    return found


def executable_parts(parts) -> set[str]:
    """The parts that are code: the VBA project and its signatures, and the Excel 4 macro sheets."""
    sheets = _macro_sheets(parts)
    listed = {s["part"] for s in sheets if s["part"]}
    return _vba_parts(parts) | listed | _loose_macro_parts(parts, listed)


# -- removing them ----------------------------------------------------------------------------------

SHEET_REF = re.compile(r"(?:'((?:[^']|'')+)'|([^\s'!\"(),;=+\-*/&^<>{}\[\]]+))!")
STRING = re.compile(r'"(?:[^"]|"")*"')


def refers_to(formula: str, names: set[str]) -> bool:
    """The formula refers to a sheet named in `names` (casefolded): `Macro1!A1`, `'Macro 1'!A1`,
    `Sheet1:Macro1!A1` (text in quotes is not a reference)."""
    for m in SHEET_REF.finditer(STRING.sub("", formula)):
        written = m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)
        written = written.split("]", 1)[-1]  # an external reference's book: [1]Sheet1
        if any(piece.casefold() in names for piece in written.split(":")):
            return True
    return False


def _defined_names(root: etree._Element) -> tuple[etree._Element | None, list[etree._Element]]:
    names = xmlparts.child(root, "definedNames")
    return names, [] if names is None else xmlparts.children(names, "definedName")


def _remove_names(root: etree._Element, keep: Callable[[etree._Element, int | None], bool], shift: dict[int, int]) -> None:
    """Keep only the defined names `keep(element, localSheetId)` accepts, sheet-scoped names
    renumbered by `shift` (old sheet index -> new); no `<definedNames>` when none is left."""
    holder, names = _defined_names(root)
    for el in names:
        local = el.get("localSheetId")
        index = int(local) if local is not None and local.strip().isdigit() else None
        if not keep(el, index):
            holder.remove(el)
        elif index is not None and index in shift and shift[index] != index:
            el.set("localSheetId", str(shift[index]))
    if holder is not None and not len(xmlparts.children(holder, "definedName")):
        holder.getparent().remove(holder)


def _views(root: etree._Element, shift: dict[int, int], visible: list[int]) -> None:
    """The workbook's views after sheets were removed (`shift`: old index -> new): the active tab
    and the first tab shown moved with their sheets; an active tab removed gives way to the first
    visible sheet left."""
    views = xmlparts.child(root, "bookViews")
    for view in [] if views is None else xmlparts.children(views, "workbookView"):
        for attr in ("activeTab", "firstSheet"):
            value = view.get(attr)
            if value is None or not value.strip().isdigit():
                continue
            old = int(value)
            if old in shift:
                new = shift[old]
            elif attr == "activeTab":
                new = next((i for i in visible if i >= sum(1 for k in shift if k < old)), visible[0] if visible else 0)
            else:
                new = min(sum(1 for k in shift if k < old), max(len(shift) - 1, 0))
            if new != old:
                view.set(attr, str(new))


def remove_sheets(
    parts, gone: set[int], drop_name: Callable[[etree._Element], bool] | None = None, names_referring: bool = False
) -> set[str]:
    """Take the sheets at `gone` (indices among the workbook's `<sheet>` elements) out of the
    workbook: their `<sheet>` elements, relationships and parts (a part another part still refers
    to stays), their sheet-scoped defined names (later sheets' `localSheetId` renumbered), the
    defined names `drop_name` picks, and with `names_referring` every defined name whose formula
    refers to one of them; the active and first tab follow their sheets. Excel's calculation
    chain, which names the removed sheets' cells, goes too (Excel rebuilds it). Returns the parts
    removed."""
    if not gone:
        return set()
    book, root = opc.workbook(parts)
    listed = opc.sheets(parts)
    elements = opc.sheet_elements(root)
    names = {listed[i]["name"].casefold() for i in gone}
    shift = {old: new for new, old in enumerate(i for i in range(len(listed)) if i not in gone)}
    visible = [shift[i] for i in shift if listed[i]["state"] == "visible"]
    for i in gone:
        elements[i].getparent().remove(elements[i])

    def keep(el: etree._Element, local: int | None) -> bool:
        if local in gone or (drop_name is not None and drop_name(el)):
            return False
        return not (names_referring and refers_to(el.text or "", names))

    _remove_names(root, keep, shift)
    _views(root, shift, visible)
    parts[book] = xmlparts.serialize(root, parts[book])
    removed = set().union(*(opc.reachable(parts, listed[i]["part"]) for i in gone if listed[i]["part"]))
    # a part that a part of the user's also refers to stays (the workbook's own relationships to the sheets go below)
    removed -= {
        r["part"]
        for name in list(parts)
        if name.endswith(".rels") and opc.source_of(name) not in removed | {book}
        for r in opc.relationships(parts, opc.source_of(name))
    }
    chain = [r for r in opc.relationships(parts, book) if xmlparts.is_type(r["type"], T_CALC_CHAIN)]
    removed |= {r["part"] for r in chain if r["part"] in parts}
    opc.remove_relationships(parts, book, {listed[i]["rid"] for i in gone if listed[i]["rid"]} | {r["id"] for r in chain})
    opc.remove_parts(parts, removed)
    return removed


def _drop_relationships(parts, removed: set[str]) -> None:
    """Every relationship to a removed part dropped (a relationships part left empty goes)."""
    folded = {name.casefold() for name in removed}
    for name in [n for n in parts if n.endswith(".rels")]:
        if name not in parts:
            continue
        source = opc.source_of(name)
        ids = {r["id"] for r in opc.relationships(parts, source) if r["part"] and r["part"].casefold() in folded}
        if ids:
            opc.remove_relationships(parts, source, ids)


def _plain_main(parts) -> None:
    """The workbook's main part declared a plain workbook (an .xlsm's main part type in an .xlsx makes Excel refuse it)."""
    original = parts[opc.CONTENT_TYPES]
    root = xmlparts.parse(original, opc.CONTENT_TYPES)
    changed = False
    for el in root:
        if isinstance(el.tag, str) and (el.get("ContentType") or "").casefold() in MACRO_MAINS:
            el.set("ContentType", PLAIN_MAIN.decode())
            changed = True
    if changed:
        parts[opc.CONTENT_TYPES] = xmlparts.serialize(root, original)


def remove_macros(parts) -> list[Macro]:
    """Remove every macro from the package (a mapping of part names to bytes, changed in place):
    the VBA project and its signatures, and the Excel 4 macro sheets (`remove_sheets`, with the
    defined names that belong to them or refer to them), with their relationships and content
    types, and declare the workbook plain; returns what was removed, in order (see `describe`)."""
    found = macros(parts)
    sheets = _macro_sheets(parts)
    listed = {s["part"] for s in sheets if s["part"]}
    loose = _loose_macro_parts(parts, listed)
    vba = _vba_parts(parts)
    if sheets:
        remove_sheets(parts, {s["index"] for s in sheets}, drop_name=lambda el: el.get("xlm") == "1", names_referring=True)
    removed = vba | loose | {p for p in listed if p in parts}
    if removed:
        opc.remove_parts(parts, removed)
        _drop_relationships(parts, removed)
    _plain_main(parts)
    return found


def without_macros(parts: dict[str, bytes]) -> tuple[dict[str, bytes], list[Macro]]:
    """The package with no executable content, and what was removed."""
    out = dict(parts)
    return out, remove_macros(out)
