"""The tool's fills added to a user's style table (`xl/styles.xml`) as bytes, and taken out again.

A cell a finding points at gets a copy of its own style with only the fill changed, so its font,
number format, borders and alignment stay the user's. Each copy points at a named cell style of
the tool's, `njcredits error N` or `njcredits warning N`, where N is the index of the style it
replaced: the name marks the fill as the tool's and records what to give back on a round trip
(`restored`). Everything else in the style table is copied byte for byte; entries are only ever
appended, so every index the user's cells use keeps its meaning.

The second piece of annotating a workbook in place (with `batch.sheetrows`); not yet used by
the writer.
"""

from __future__ import annotations

import re

FILLS = {"error": "FFFFC7CE", "warning": "FFFFEB9C"}  # the fills of the returned workbook's flagged cells
STYLE_PREFIX = "njcredits "
SECTION = r"<{tag}\b[^>]*?(?:/>|>.*?</{tag}>)"
ELEMENT = re.compile(rb"<(xf|fill|cellStyle)\b[^>]*?(?:/>|>.*?</\1>)", re.S)
MARK = re.compile(r"^njcredits (error|warning) (\d+)$")


def _section(xml: bytes, tag: str) -> re.Match | None:
    return re.search(SECTION.format(tag=tag).encode(), xml, re.S)


def _items(section: bytes) -> list[bytes]:
    inner = section[section.index(b">") + 1 : section.rindex(b"<")] if not section.endswith(b"/>") else b""
    return [m.group(0) for m in ELEMENT.finditer(inner)]


def _with_items(xml: bytes, tag: str, items: list[bytes]) -> bytes:
    """`xml` with section `tag` holding `items` (its count updated; created empty if missing)."""
    m = _section(xml, tag)
    body = f'<{tag} count="{len(items)}">'.encode() + b"".join(items) + f"</{tag}>".encode()
    if m is None:
        raise ValueError(f"styles.xml has no <{tag}>")
    return xml[: m.start()] + body + xml[m.end() :]


def _attr(element: bytes, name: str) -> str | None:
    m = re.search(rf'\b{name}="([^"]*)"'.encode(), element)
    return m.group(1).decode() if m else None


def _set(element: bytes, name: str, value: str) -> bytes:
    if _attr(element, name) is not None:
        return re.sub(rf'\b{name}="[^"]*"'.encode(), f'{name}="{value}"'.encode(), element, count=1)
    head = element[:-2] if element.endswith(b"/>") else element[: element.index(b">")]
    rest = element[len(head) :]
    return head + f' {name}="{value}"'.encode() + rest


def add_fills(xml: bytes, wanted: set[tuple[int, str]]) -> tuple[bytes, dict[tuple[int, str], int]]:
    """Append, for each (style index, severity) wanted, a copy of that cell style with the
    severity's solid fill, marked by a named style recording the index it replaces. Returns the
    new table and the index of each copy."""
    fills = _items(_section(xml, "fills").group(0))
    style_xfs = _items(_section(xml, "cellStyleXfs").group(0))
    cell_xfs = _items(_section(xml, "cellXfs").group(0))
    styles = _items(_section(xml, "cellStyles").group(0)) if _section(xml, "cellStyles") else []
    fill_id = {}
    for severity, rgb in FILLS.items():
        fill_id[severity] = len(fills)
        fills.append(f'<fill><patternFill patternType="solid"><fgColor rgb="{rgb}"/><bgColor indexed="64"/></patternFill></fill>'.encode())
    out = {}
    for index, severity in sorted(wanted):
        base = cell_xfs[index] if index < len(cell_xfs) else cell_xfs[0]
        named = len(style_xfs)
        style_xfs.append(_set(_set(style_xfs[0], "fillId", str(fill_id[severity])), "applyFill", "1"))
        styles.append(f'<cellStyle name="{STYLE_PREFIX}{severity} {index}" xfId="{named}"/>'.encode())
        copy = _set(_set(_set(base, "fillId", str(fill_id[severity])), "applyFill", "1"), "xfId", str(named))
        out[(index, severity)] = len(cell_xfs)
        cell_xfs.append(copy)
    for tag, items in (("fills", fills), ("cellStyleXfs", style_xfs), ("cellXfs", cell_xfs)):
        xml = _with_items(xml, tag, items)
    if _section(xml, "cellStyles"):
        xml = _with_items(xml, "cellStyles", styles)
    else:  # the section follows cellXfs
        end = _section(xml, "cellXfs").end()
        xml = xml[:end] + f'<cellStyles count="{len(styles)}">'.encode() + b"".join(styles) + b"</cellStyles>" + xml[end:]
    return xml, out


def restored(xml: bytes) -> dict[int, int]:
    """For each cell style that is a tool's fill (its named style `njcredits error N`), the index
    N of the user's style it replaced: what a round trip gives the cell back."""
    section = _section(xml, "cellStyles")
    if section is None:
        return {}
    marked = {}
    for element in _items(section.group(0)):
        m = MARK.match(_attr(element, "name") or "")
        if m:
            marked[int(_attr(element, "xfId"))] = int(m.group(2))
    cell_xfs = _items(_section(xml, "cellXfs").group(0))
    return {i: marked[int(_attr(x, "xfId") or 0)] for i, x in enumerate(cell_xfs) if int(_attr(x, "xfId") or 0) in marked}
