"""The tool's styles added to a user's style table (`xl/styles.xml`) as bytes, and taken out again.

A cell a finding points at gets a copy of its own style with only the fill changed, so its font,
number format, borders and alignment stay the user's. Each copy points at a named cell style of
the tool's, `njcredits error N` or `njcredits warning N`, where N is the index of the style it
replaced: the name marks the fill as the tool's and records what to give back on a round trip
(`Styles.restore_map`). The styles of the tool's own cells and sheets (written by xlsxwriter into
a workbook of their own) are merged in with `Styles.merge`.

Everything else in the style table is copied byte for byte; entries are only ever appended, so
every index the user's cells use keeps its meaning, and an entry the table already holds is used
again rather than appended twice (a second round trip adds nothing).
"""

from __future__ import annotations

import re

FILLS = {"error": "FFFFC7CE", "warning": "FFFFEB9C"}  # the fills of the returned workbook's flagged cells
STYLE_PREFIX = "njcredits "
SECTION = r"<{tag}\b[^>]*?(?:/>|>.*?</{tag}>)"
ELEMENT = re.compile(rb"<(xf|fill|cellStyle|font|border|numFmt)\b[^>]*?(?:/>|>.*?</\1>)", re.S)
MARK = re.compile(r"^njcredits (error|warning) (\d+)$")
LISTS = ("numFmts", "fonts", "fills", "borders", "cellStyleXfs", "cellXfs", "cellStyles")
ORDER = LISTS  # the schema's order of these lists in a style table
DEFAULT_XF = b'<xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
FIRST_CUSTOM_FORMAT = 164  # number formats below are Excel's built-in ones


def _section(xml: bytes, tag: str) -> re.Match | None:
    return re.search(SECTION.format(tag=tag).encode(), xml, re.S)


def _items(section: bytes) -> list[bytes]:
    inner = section[section.index(b">") + 1 : section.rindex(b"<")] if not section.endswith(b"/>") else b""
    return [m.group(0) for m in ELEMENT.finditer(inner)]


def _attr(element: bytes, name: str) -> str | None:
    m = re.search(rf'\b{name}="([^"]*)"'.encode(), element)
    return m.group(1).decode() if m else None


def _set(element: bytes, name: str, value: str) -> bytes:
    """The element with attribute `name` set to `value` (added after the others if missing)."""
    if _attr(element, name) is not None:
        return re.sub(rf'\b{name}="[^"]*"'.encode(), f'{name}="{value}"'.encode(), element, count=1)
    head = element[:-2] if element.endswith(b"/>") and b">" not in element[:-2] else element[: element.index(b">")]
    if head.endswith(b"/"):
        head = head[:-1]
    rest = element[len(head) :]
    return head.rstrip() + f' {name}="{value}"'.encode() + rest


def _unset(element: bytes, name: str) -> bytes:
    return re.sub(rf'\s{name}="[^"]*"'.encode(), b"", element, count=1)


def _fill(rgb: str) -> bytes:
    return f'<fill><patternFill patternType="solid"><fgColor rgb="{rgb}"/><bgColor indexed="64"/></patternFill></fill>'.encode()


class Styles:
    """A style table that the tool adds to; `xml()` is the table with every addition."""

    def __init__(self, xml: bytes):
        self.source = xml
        self.items = {}
        for tag in LISTS:
            m = _section(xml, tag)
            self.items[tag] = _items(m.group(0)) if m else []
        self.count = {tag: len(v) for tag, v in self.items.items()}
        self.changed: set[str] = set()  # lists with an entry changed in place (not only appended to)

    def _add(self, tag: str, item: bytes) -> int:
        """The index of `item` in list `tag`, appended when the list does not hold it yet."""
        items = self.items[tag]
        try:
            return items.index(item)
        except ValueError:
            items.append(item)
            return len(items) - 1

    def flagged(self, index: int, severity: str) -> int:
        """The style of a flagged cell whose own style is `index`: a copy with the severity's fill."""
        xfs = self.items["cellXfs"]
        fill = str(self._add("fills", _fill(FILLS[severity])))
        name = f"{STYLE_PREFIX}{severity} {index}".encode()
        named = next((_attr(s, "xfId") for s in self.items["cellStyles"] if _attr(s, "name") == name.decode()), None)
        if named is None:
            if not self.items["cellStyleXfs"]:  # a table without named styles: the default one first, the parent of every cell style
                self.items["cellStyleXfs"].append(DEFAULT_XF)
                self.items["cellStyles"].insert(0, b'<cellStyle name="Normal" xfId="0" builtinId="0"/>')
            base = self.items["cellStyleXfs"][0]
            self.items["cellStyleXfs"].append(_set(_set(base, "fillId", fill), "applyFill", "1"))
            named = str(len(self.items["cellStyleXfs"]) - 1)
            self.items["cellStyles"].append(b'<cellStyle name="' + name + f'" xfId="{named}"/>'.encode())
        base = xfs[index] if index < len(xfs) else xfs[0]
        return self._add("cellXfs", _set(_set(_set(base, "fillId", fill), "applyFill", "1"), "xfId", named))

    def merge(self, other: bytes) -> dict[int, int]:
        """Add the cell styles of another style table (the tool's own, written by xlsxwriter);
        returns the index here of each of its cell styles."""
        theirs = Styles(other)
        codes = {_attr(f, "numFmtId"): _attr(f, "formatCode") for f in theirs.items["numFmts"]}
        mine = {_attr(f, "formatCode"): _attr(f, "numFmtId") for f in self.items["numFmts"]}
        used = [int(_attr(f, "numFmtId") or 0) for f in self.items["numFmts"]]
        formats = {}
        for number, code in codes.items():
            if code not in mine:
                mine[code] = str(max([FIRST_CUSTOM_FORMAT - 1, *used]) + 1)
                used.append(int(mine[code]))
                self.items["numFmts"].append(f'<numFmt numFmtId="{mine[code]}" formatCode="{code}"/>'.encode())
            formats[number] = mine[code]
        maps = {
            key: [self._add(tag, item) for item in theirs.items[tag]]
            for key, tag in (("fontId", "fonts"), ("fillId", "fills"), ("borderId", "borders"))
        }
        out = {}
        for i, xf in enumerate(theirs.items["cellXfs"]):
            number = _attr(xf, "numFmtId") or "0"
            xf = _set(xf, "numFmtId", formats.get(number, number))
            for key, index in maps.items():
                xf = _set(xf, key, str(index[int(_attr(xf, key) or 0)]))
            out[i] = self._add("cellXfs", _set(xf, "xfId", "0"))
        return out

    def restore_map(self) -> dict[int, int]:
        """For each cell style that is a tool's fill (its named style `njcredits error N`), the
        style to give the cell back on a round trip: N, when the table still holds the styles as
        the tool wrote them; otherwise (the table was rewritten by another program) the same
        style without the fill."""
        marked = {}
        for element in self.items["cellStyles"]:
            m = MARK.match(_attr(element, "name") or "")
            if m:
                marked[_attr(element, "xfId")] = (int(m.group(2)), m.group(1))
        out = {}
        xfs = self.items["cellXfs"]
        for i, xf in enumerate(list(xfs)):
            mark = marked.get(_attr(xf, "xfId") or "0")
            if mark is None:
                continue
            index, _severity = mark
            copy = (
                _set(_set(_set(xfs[index], "fillId", _attr(xf, "fillId")), "applyFill", "1"), "xfId", _attr(xf, "xfId"))
                if index < len(xfs)
                else None
            )
            if copy == xf:
                out[i] = index
            else:
                out[i] = self._add("cellXfs", _unset(_set(_set(xf, "fillId", "0"), "xfId", "0"), "applyFill"))
        return out

    def xml(self) -> bytes:
        """The style table with every addition (the source itself when nothing was added)."""
        xml = self.source
        for tag in LISTS:
            items = self.items[tag]
            if len(items) == self.count[tag] and tag not in self.changed:
                continue
            m = _section(xml, tag)
            if m is None:  # a list the table lacks: after the lists that come before it in the schema's order
                body = f'<{tag} count="{len(items)}">'.encode() + b"".join(items) + f"</{tag}>".encode()
                earlier = [_section(xml, t) for t in ORDER[: ORDER.index(tag)]]
                at = max((e.end() for e in earlier if e), default=re.search(rb"<styleSheet\b[^>]*>", xml).end())
                xml = xml[:at] + body + xml[at:]
                continue
            opening = re.match(rb"<[^>]*?(?=/?>)", m.group(0)).group(0)
            body = _set(opening + b">", "count", str(len(items))) + b"".join(items) + f"</{tag}>".encode()
            xml = xml[: m.start()] + body + xml[m.end() :]
        return xml


def marked_fills(xml: bytes, fills: dict[int, tuple[int, str]]) -> bytes:
    """A style table written by xlsxwriter with its fill styles marked as the tool's: each cell
    style of `fills` (index -> (the style it replaces, severity)) points at a named style
    `njcredits SEVERITY N`, as `Styles.flagged` marks its copies, so that a round trip of a
    workbook written anew gives the cells their own style back."""
    styles = Styles(xml)
    for index, (plain, severity) in sorted(fills.items()):
        name = f"{STYLE_PREFIX}{severity} {plain}"
        named = next((_attr(c, "xfId") for c in styles.items["cellStyles"] if _attr(c, "name") == name), None)
        if named is None:
            base = styles.items["cellStyleXfs"][0] if styles.items["cellStyleXfs"] else DEFAULT_XF
            fill = _attr(styles.items["cellXfs"][index], "fillId") or "0"
            styles.items["cellStyleXfs"].append(_set(_set(base, "fillId", fill), "applyFill", "1"))
            named = str(len(styles.items["cellStyleXfs"]) - 1)
            styles.items["cellStyles"].append(f'<cellStyle name="{name}" xfId="{named}"/>'.encode())
        styles.items["cellXfs"][index] = _set(styles.items["cellXfs"][index], "xfId", named)
        styles.changed.add("cellXfs")
    return styles.xml()


def add_fills(xml: bytes, wanted: set[tuple[int, str]]) -> tuple[bytes, dict[tuple[int, str], int]]:
    """Append, for each (style index, severity) wanted, a copy of that cell style with the
    severity's solid fill, marked by a named style recording the index it replaces. Returns the
    new table and the index of each copy."""
    styles = Styles(xml)
    out = {key: styles.flagged(*key) for key in sorted(wanted)}
    return styles.xml(), out


def restored(xml: bytes) -> dict[int, int]:
    """For each cell style that is a tool's fill, the style a round trip gives the cell back."""
    return Styles(xml).restore_map()
