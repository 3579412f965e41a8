"""Read a package's sheets, cells, relationships and styles with lxml, by namespace URI (any
prefix, Transitional or Strict), independently of the product's own reader."""

from __future__ import annotations

import posixpath
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from realworld.packages import PKG_RELS, S_MAIN, S_R, T_MAIN, T_R

MAINS = (T_MAIN, S_MAIN)
RS = (T_R, S_R)
CELL_REF = re.compile(r"^([A-Z]{1,3})([0-9]+)$")


def parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_blank_text=False, strip_cdata=False
    )


def xml(data: bytes) -> etree._Element:
    return etree.fromstring(data, parser())


def parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def column_number(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def split_ref(ref: str) -> tuple[int, int]:
    """(row, column) of an A1 reference."""
    m = CELL_REF.match(ref)
    assert m, ref
    return int(m.group(2)), column_number(m.group(1))


@dataclass(frozen=True)
class Rel:
    id: str
    type: str
    target: str  # the part's name (resolved), or the URI of an external target
    external: bool


@dataclass(frozen=True)
class SheetEntry:
    name: str
    rid: str
    part: str | None  # None when the relationship is missing or broken
    kind: str  # the last segment of the relationship type ("worksheet", "xlMacrosheet"), "" when broken


def rels_name(part: str) -> str:
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", name + ".rels")


class Package:
    """A package's parts, read as the Open Packaging Conventions say."""

    def __init__(self, data: dict[str, bytes]):
        self.data = data
        self.workbook_part = next(r.target for r in self.rels("") if r.type.endswith("/officeDocument"))
        self.workbook = self.xml(self.workbook_part)
        self.main = etree.QName(self.workbook).namespace
        assert self.main in MAINS, self.main
        self._sst: list[str] | None = None

    def xml(self, part: str) -> etree._Element:
        """The part parsed; a part that is not well-formed fails the test, naming it."""
        try:
            return xml(self.data[part])
        except etree.XMLSyntaxError as e:
            raise AssertionError(f"{part} is not well-formed XML: {e}") from None

    def rels(self, part: str) -> list[Rel]:
        """The relationships of `part` ("" for the package's own)."""
        name = "_rels/.rels" if part == "" else rels_name(part)
        if name not in self.data:
            return []
        out = []
        for el in self.xml(name):
            if etree.QName(el).namespace != PKG_RELS or etree.QName(el).localname != "Relationship":
                continue
            target, external = el.get("Target", ""), el.get("TargetMode") == "External"
            if not external:
                target = target[1:] if target.startswith("/") else posixpath.normpath(posixpath.join(posixpath.dirname(part), target))
            out.append(Rel(el.get("Id", ""), el.get("Type", ""), target, external))
        return out

    def q(self, local: str) -> str:
        return f"{{{self.main}}}{local}"

    def sheets(self) -> list[SheetEntry]:
        by_id = {r.id: r for r in self.rels(self.workbook_part)}
        out = []
        for el in self.workbook.iter(self.q("sheet")):
            rid = next((el.get(f"{{{ns}}}id") for ns in RS if el.get(f"{{{ns}}}id") is not None), "")
            rel = by_id.get(rid) if rid else None
            ok = rel is not None and rel.target in self.data
            out.append(SheetEntry(el.get("name"), rid, rel.target if ok else None, rel.type.rsplit("/", 1)[-1] if ok else ""))
        return out

    def sheet(self, name: str) -> SheetEntry:
        found = [s for s in self.sheets() if s.name == name]
        assert len(found) == 1, (name, [s.name for s in self.sheets()])
        return found[0]

    def related(self, part: str, kind: str) -> list[str]:
        """The parts `part` relates to with relationship type ending in `/kind`."""
        return [r.target for r in self.rels(part) if not r.external and r.type.rsplit("/", 1)[-1] == kind]

    def shared_strings(self) -> list[str]:
        if self._sst is None:
            found = self.related(self.workbook_part, "sharedStrings")
            self._sst = [_text(si, self.main) for si in self.xml(found[0]).iter(self.q("si"))] if found else []
        return self._sst

    def cells(self, part: str) -> tuple[dict[str, tuple[str, object]], list[str]]:
        """Every cell of the sheet holding a value, ref -> (kind, value), and the refs written more
        than once. Kinds: "text" (shared, inline or formula text), "n", "b", "d" (ISO), "e"."""
        root = self.xml(part)
        ns = etree.QName(root).namespace if etree.QName(root).namespace in MAINS else self.main
        out: dict[str, tuple[str, object]] = {}
        seen: dict[str, int] = {}
        for c in root.iter(f"{{{ns}}}c"):
            ref = c.get("r")
            seen[ref] = seen.get(ref, 0) + 1
            value = _value(c, ns, self.shared_strings)
            if value is not None:
                out[ref] = value
        return out, sorted(r for r, n in seen.items() if n > 1)

    def styles_part(self) -> str | None:
        found = self.related(self.workbook_part, "styles")
        return found[0] if found else None

    def fill_of(self, part: str, ref: str) -> str | None:
        """The pattern type of the fill of cell `ref` ("solid"), None when it has none."""
        root = self.xml(part)
        ns = etree.QName(root).namespace
        cell = next((c for c in root.iter(f"{{{ns}}}c") if c.get("r") == ref), None)
        styles = self.styles_part()
        if cell is None or styles is None:
            return None
        sheet = self.xml(styles)
        sns = etree.QName(sheet).namespace
        xfs = sheet.find(f"{{{sns}}}cellXfs")
        fills = sheet.find(f"{{{sns}}}fills")
        if xfs is None or fills is None:
            return None
        xf = list(xfs.iter(f"{{{sns}}}xf"))[int(cell.get("s", "0"))]
        fill = list(fills.iter(f"{{{sns}}}fill"))[int(xf.get("fillId", "0"))]
        pattern = fill.find(f"{{{sns}}}patternFill")
        return pattern.get("patternType") if pattern is not None else "gradient"

    def comment_refs(self, part: str) -> set[str]:
        """The cells of the sheet that carry a (legacy) comment."""
        refs = set()
        for comments in self.related(part, "comments"):
            root = self.xml(comments)
            refs |= {el.get("ref") for el in root.iter(f"{{{etree.QName(root).namespace}}}comment")}
        return refs

    def dimension(self, part: str) -> str | None:
        root = self.xml(part)
        el = root.find(f"{{{etree.QName(root).namespace}}}dimension")
        return el.get("ref") if el is not None else None

    def defined_names(self) -> dict[str, str]:
        return {el.get("name"): el.text or "" for el in self.workbook.iter(self.q("definedName"))}


def _text(el: etree._Element, ns: str) -> str:
    """The text of a string item (<si> or <is>): its runs, without the phonetic hints."""
    return "".join(t.text or "" for t in el.iter(f"{{{ns}}}t") if etree.QName(t.getparent()).localname != "rPh")


def _value(c: etree._Element, ns: str, sst) -> tuple[str, object] | None:
    kind = c.get("t", "n")
    v = c.find(f"{{{ns}}}v")
    if kind == "inlineStr":
        is_ = c.find(f"{{{ns}}}is")
        return ("text", _text(is_, ns)) if is_ is not None else None
    if v is None:
        return None
    text = v.text or ""
    if kind == "s":
        return ("text", sst()[int(text)])
    if kind == "str":
        return ("text", text)
    if kind == "b":
        return ("b", text.strip() in ("1", "true"))
    if kind in ("d", "e"):
        return (kind, text)
    return ("n", float(text))
