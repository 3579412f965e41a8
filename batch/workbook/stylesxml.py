"""The tool's styles added to a user's style table (`xl/styles.xml`), edited as XML, and taken out again.

A cell a finding points at gets a copy of its own style with only the fill changed, so its font,
number format, borders and alignment stay the user's. Each copy points at a named cell style of
the tool's, `njcredits error N` or `njcredits warning N`, where N is the index of the style it
replaced: the name marks the fill as the tool's and records what to give back on a round trip
(`Styles.restore_map`). The styles of the tool's own cells and sheets (written by xlsxwriter into
a workbook of their own) are merged in with `Styles.merge`.

The table is read as XML (`batch.workbook.xmlparts`), whatever its producer wrote: the SpreadsheetML
namespace of Transitional or Strict Open XML, with or without a prefix, any quoting, a table
written as an empty element, lists missing or with a wrong `count`. Entries are only ever
appended, so every index the user's cells use keeps its meaning, and an entry the table already
holds is used again rather than appended twice (a second round trip adds nothing). A list the
table lacks is made in the schema's order, in the table's own namespace and prefix; a list the
tool adds to gets Excel's default first entries when it has none (a font, the fills `none` and
`gray125` that Excel reserves, a border, the default cell style), so the tool's entries never take
an index that means something else. The `count` of every list the tool changes is its number of
entries. Everything else in the table is written back as it was.

A package without a style table gets one (`ensure`): Excel's default table, with its
relationship from the workbook and its content type.
"""

from __future__ import annotations

import copy
import posixpath

from lxml import etree

from batch.workbook import opc, xmlparts

FILLS = {"error": "FFFFC7CE", "warning": "FFFFEB9C"}  # the fills of the returned workbook's flagged cells
STYLE_PREFIX = "njcredits "
TRANSITIONAL = xmlparts.MAIN
STRICT = xmlparts.MAIN_STRICT
MAIN = (TRANSITIONAL, STRICT)
# the children of a style table in the order the schema requires, and the entry of each list
ORDER = ("numFmts", "fonts", "fills", "borders", "cellStyleXfs", "cellXfs", "cellStyles", "dxfs", "tableStyles", "colors", "extLst")
ENTRY = {
    "numFmts": "numFmt",
    "fonts": "font",
    "fills": "fill",
    "borders": "border",
    "cellStyleXfs": "xf",
    "cellXfs": "xf",
    "cellStyles": "cellStyle",
    "dxfs": "dxf",
}
LISTS = tuple(ENTRY)
FIRST_CUSTOM_FORMAT = 164  # number formats below are Excel's built-in ones
PART = "xl/styles.xml"
CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"
# Excel's defaults: the first entries of the lists, as Excel writes a new workbook's table
DEFAULT_FONT = b'<font><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
DEFAULT_FILLS = (b'<fill><patternFill patternType="none"/></fill>', b'<fill><patternFill patternType="gray125"/></fill>')
DEFAULT_BORDER = b"<border><left/><right/><top/><bottom/><diagonal/></border>"
DEFAULT_XF = b'<xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
DEFAULT_CELL_XF = b'<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
NORMAL = b'<cellStyle name="Normal" xfId="0" builtinId="0"/>'


def minimal(namespace: str = TRANSITIONAL) -> bytes:
    """Excel's default style table: one font, the two reserved fills, one border, the default cell style."""
    return (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet xmlns="'
        + namespace.encode()
        + b'"><fonts count="1">'
        + DEFAULT_FONT
        + b'</fonts><fills count="2">'
        + b"".join(DEFAULT_FILLS)
        + b'</fills><borders count="1">'
        + DEFAULT_BORDER
        + b'</borders><cellStyleXfs count="1">'
        + DEFAULT_XF
        + b'</cellStyleXfs><cellXfs count="1">'
        + DEFAULT_CELL_XF
        + b'</cellXfs><cellStyles count="1">'
        + NORMAL
        + b'</cellStyles><dxfs count="0"/>'
        b'<tableStyles count="0" defaultTableStyle="TableStyleMedium2" defaultPivotStyle="PivotStyleLight16"/></styleSheet>'
    )


def _local(element) -> str | None:
    return etree.QName(element).localname if isinstance(element.tag, str) else None


def _key(element) -> tuple:
    """What an entry says, whatever its prefix, attribute order, quoting or spacing: two entries
    with the same key are the same style."""
    qname = etree.QName(element)
    tag = qname.localname if qname.namespace in MAIN else element.tag
    children = tuple(_key(c) for c in element if isinstance(c.tag, str))
    return tag, tuple(sorted(element.attrib.items())), (element.text or "").strip(), children


def _adopt(element, namespace: str):
    """A copy of an entry of another table, in this table's namespace (the prefix comes from where it is placed)."""
    qname = etree.QName(element)
    tag = f"{{{namespace}}}{qname.localname}" if qname.namespace in MAIN else element.tag
    out = etree.Element(tag, dict(element.attrib))
    out.text = element.text
    for child in element:
        if isinstance(child.tag, str):
            c = _adopt(child, namespace)
            c.tail = child.tail
            out.append(c)
    return out


def _set(element, name: str, value: str):
    """A copy of `element` with attribute `name` set to `value` (or removed when `value` is None)."""
    out = copy.deepcopy(element)
    out.tail = None
    if value is None:
        out.attrib.pop(name, None)
    else:
        out.set(name, value)
    return out


class Styles:
    """A style table that the tool adds to; `xml()` is the table with every addition."""

    def __init__(self, xml: bytes | None, part: str = PART, namespace: str = TRANSITIONAL):
        self.new = xml is None
        self.source = minimal(namespace) if xml is None else xml
        self.tree = xmlparts.parse(self.source, part).getroottree()
        self.root = self.tree.getroot()
        self.ns = etree.QName(self.root).namespace or TRANSITIONAL
        self.sections = {}
        self.items = {}
        for tag in LISTS:
            section = next((c for c in self.root if _local(c) == tag and etree.QName(c).namespace == self.ns), None)
            self.sections[tag] = section
            entry = f"{{{self.ns}}}{ENTRY[tag]}"
            self.items[tag] = [] if section is None else [c for c in section if c.tag == entry]
        self.changed: set[str] = set()  # the lists the tool changed (entries appended or changed in place)
        self._keys: dict[str, dict[tuple, int]] = {}  # per list, the first index of each entry's key (made when first asked)

    # -- the lists ---------------------------------------------------------------------------------

    def _make(self, xml: bytes):
        """An element of this table's namespace from the text of an entry (written without a namespace)."""
        return _adopt(etree.fromstring(b'<t xmlns="' + TRANSITIONAL.encode() + b'">' + xml + b"</t>")[0], self.ns)

    def _section(self, tag: str):
        """The list `tag`, made empty in the schema's order when the table lacks it."""
        if self.sections[tag] is None:
            section = etree.Element(f"{{{self.ns}}}{tag}")
            rank = ORDER.index(tag)
            later = next((c for c in self.root if _local(c) in ORDER and ORDER.index(_local(c)) > rank), None)
            if later is not None:
                later.addprevious(section)
            else:
                self.root.append(section)
            self.sections[tag] = section
        return self.sections[tag]

    def _append(self, tag: str, element) -> int:
        items = self.items[tag]
        section = self._section(tag)
        if items:
            items[-1].addnext(element)  # after the list's last entry (anything after it stays after it)
        else:
            section.insert(0, element)
        element.tail = None
        items.append(element)
        self.changed.add(tag)
        if tag in self._keys:
            self._keys[tag].setdefault(_key(element), len(items) - 1)
        return len(items) - 1

    def _add(self, tag: str, element) -> int:
        """The index of `element` in list `tag`, appended when the list does not hold it yet."""
        if tag not in self._keys:
            keys: dict[tuple, int] = {}
            for i, item in enumerate(self.items[tag]):
                keys.setdefault(_key(item), i)
            self._keys[tag] = keys
        found = self._keys[tag].get(_key(element))
        return self._append(tag, element) if found is None else found

    def _defaults(self) -> None:
        """The first entries every list the tool adds to must start with, where the table lacks them."""
        if not self.items["fonts"]:
            self._append("fonts", self._make(DEFAULT_FONT))
        for fill in DEFAULT_FILLS[len(self.items["fills"]) :]:  # Excel reserves fills 0 and 1 whatever they say
            self._append("fills", self._make(fill))
        if not self.items["borders"]:
            self._append("borders", self._make(DEFAULT_BORDER))
        if not self.items["cellStyleXfs"]:  # a table without named styles: the default one first, the parent of every cell style
            self._append("cellStyleXfs", self._make(DEFAULT_XF))
            if not any(c.get("builtinId") == "0" for c in self.items["cellStyles"]):
                normal = self._make(NORMAL)
                if self.items["cellStyles"]:
                    self.items["cellStyles"][0].addprevious(normal)
                    self.items["cellStyles"].insert(0, normal)
                    self.changed.add("cellStyles")
                    self._keys.pop("cellStyles", None)
                else:
                    self._append("cellStyles", normal)
        if not self.items["cellXfs"]:
            self._append("cellXfs", self._make(DEFAULT_CELL_XF))

    def _named(self, name: str) -> str | None:
        return next((c.get("xfId") for c in self.items["cellStyles"] if c.get("name") == name), None)

    # -- what the tool adds ------------------------------------------------------------------------

    def flagged(self, index: int, severity: str) -> int:
        """The style of a flagged cell whose own style is `index`: a copy with the severity's fill."""
        self._defaults()
        fill = str(self._add("fills", self._make(_fill(FILLS[severity]))))
        name = f"{STYLE_PREFIX}{severity} {index}"
        named = self._named(name)
        if named is None:
            base = self.items["cellStyleXfs"][0]
            named = str(self._append("cellStyleXfs", _set(_set(base, "fillId", fill), "applyFill", "1")))
            cell_style = self._make(b'<cellStyle name="x"/>')
            cell_style.set("name", name)
            cell_style.set("xfId", named)
            self._append("cellStyles", cell_style)
        xfs = self.items["cellXfs"]
        base = xfs[index] if index < len(xfs) else xfs[0]
        return self._add("cellXfs", _set(_set(_set(base, "fillId", fill), "applyFill", "1"), "xfId", named))

    def merge(self, other: bytes) -> dict[int, int]:
        """Add the cell styles of another style table (the tool's own, written by xlsxwriter);
        returns the index here of each of its cell styles."""
        self._defaults()
        theirs = Styles(other, "the tool's style table")
        mine = {f.get("formatCode"): f.get("numFmtId") for f in self.items["numFmts"]}
        used = [int(f.get("numFmtId") or 0) for f in self.items["numFmts"]]
        formats = {}
        for f in theirs.items["numFmts"]:
            code = f.get("formatCode")
            if code not in mine:
                mine[code] = str(max([FIRST_CUSTOM_FORMAT - 1, *used]) + 1)
                used.append(int(mine[code]))
                entry = self._make(b"<numFmt/>")
                entry.set("numFmtId", mine[code])
                entry.set("formatCode", code)
                self._append("numFmts", entry)
            formats[f.get("numFmtId")] = mine[code]
        maps = {
            key: [self._add(tag, _adopt(item, self.ns)) for item in theirs.items[tag]]
            for key, tag in (("fontId", "fonts"), ("fillId", "fills"), ("borderId", "borders"))
        }
        out = {}
        for i, xf in enumerate(theirs.items["cellXfs"]):
            xf = _adopt(xf, self.ns)
            number = xf.get("numFmtId") or "0"
            xf.set("numFmtId", formats.get(number, number))
            for key, index in maps.items():
                xf.set(key, str(index[int(xf.get(key) or 0)]))
            xf.set("xfId", "0")
            out[i] = self._add("cellXfs", xf)
        return out

    def restore_map(self) -> dict[int, int]:
        """For each cell style that is a tool's fill (its named style `njcredits error N`), the
        style to give the cell back on a round trip: N, when the table still holds the styles as
        the tool wrote them; otherwise (the table was rewritten by another program) the same
        style without the fill."""
        marked = {}
        for element in self.items["cellStyles"]:
            severity, number = _mark(element.get("name") or "")
            if severity:
                marked[element.get("xfId")] = number
        out = {}
        xfs = self.items["cellXfs"]
        for i, xf in enumerate(list(xfs)):
            index = marked.get(xf.get("xfId") or "0")
            if index is None:
                continue
            made = None
            if index < len(xfs):  # the copy the tool made of style N
                made = _set(_set(_set(xfs[index], "fillId", xf.get("fillId")), "applyFill", "1"), "xfId", xf.get("xfId"))
            if made is not None and _key(made) == _key(xf):
                out[i] = index
            else:
                out[i] = self._add("cellXfs", _set(_set(_set(xf, "fillId", "0"), "xfId", "0"), "applyFill", None))
        return out

    def mark(self, index: int, plain: int, severity: str) -> None:
        """Mark cell style `index` (a fill of the tool's, in a table the tool wrote) as replacing `plain`."""
        self._defaults()
        name = f"{STYLE_PREFIX}{severity} {plain}"
        named = self._named(name)
        if named is None:
            base = self.items["cellStyleXfs"][0]
            fill = self.items["cellXfs"][index].get("fillId") or "0"
            named = str(self._append("cellStyleXfs", _set(_set(base, "fillId", fill), "applyFill", "1")))
            cell_style = self._make(b'<cellStyle name="x"/>')
            cell_style.set("name", name)
            cell_style.set("xfId", named)
            self._append("cellStyles", cell_style)
        self.items["cellXfs"][index].set("xfId", named)
        self.changed.add("cellXfs")
        self._keys.pop("cellXfs", None)  # an entry changed in place

    def xml(self) -> bytes:
        """The style table with every addition (the source itself when nothing was added)."""
        if not self.changed and not self.new:
            return self.source
        for tag in self.changed:
            self.sections[tag].set("count", str(len(self.items[tag])))
        return xmlparts.serialize(self.tree, self.source)


def _mark(name: str) -> tuple[str | None, int | None]:
    """(severity, the style replaced) of a named style of the tool's (`njcredits error 12`), else (None, None)."""
    words = name.split(" ")
    if len(words) == 3 and words[0] == STYLE_PREFIX.strip() and words[1] in FILLS and words[2].isdigit() and words[2].isascii():
        return words[1], int(words[2])
    return None, None


def _fill(rgb: str) -> bytes:
    return f'<fill><patternFill patternType="solid"><fgColor rgb="{rgb}"/><bgColor indexed="64"/></patternFill></fill>'.encode()


def marked_fills(xml: bytes, fills: dict[int, tuple[int, str]]) -> bytes:
    """A style table written by xlsxwriter with its fill styles marked as the tool's: each cell
    style of `fills` (index -> (the style it replaces, severity)) points at a named style
    `njcredits SEVERITY N`, as `Styles.flagged` marks its copies, so that a round trip of a
    workbook written anew gives the cells their own style back."""
    styles = Styles(xml)
    for index, (plain, severity) in sorted(fills.items()):
        styles.mark(index, plain, severity)
    return styles.xml()


def add_fills(xml: bytes | None, wanted: set[tuple[int, str]]) -> tuple[bytes, dict[tuple[int, str], int]]:
    """Append, for each (style index, severity) wanted, a copy of that cell style with the
    severity's solid fill, marked by a named style recording the index it replaces. Returns the
    new table and the index of each copy."""
    styles = Styles(xml)
    out = {key: styles.flagged(*key) for key in sorted(wanted)}
    return styles.xml(), out


def restored(xml: bytes) -> dict[int, int]:
    """For each cell style that is a tool's fill, the style a round trip gives the cell back."""
    return Styles(xml).restore_map()


# -- the package's style table ----------------------------------------------------------------------


def ensure(parts) -> str:
    """The name of the package's style table, which a package without one is given: Excel's
    default table (in the Strict namespace in a Strict package), with its relationship from the
    workbook and its content type."""
    found = opc.styles_part(parts)
    if found is not None:
        return found
    workbook = opc.workbook_part(parts) or opc.WORKBOOK
    folder = posixpath.dirname(workbook)
    name = posixpath.join(folder, "styles.xml")
    if opc.find(parts, name) is not None:  # a part of that name that is not the workbook's style table
        name = opc.free_name(parts, posixpath.join(folder, "styles{}.xml"))
    parts[name] = minimal(STRICT if opc.is_strict(parts) else TRANSITIONAL)
    opc.add_relationship(parts, workbook, opc.T_STYLES, name)  # written Strict in a Strict package
    opc.declare(parts, name, CONTENT_TYPE)
    return name
