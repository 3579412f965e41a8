"""What an analyst made in the fixture workbook `tests/fixtures/kept.xlsx`, described so that an
input and the tool's output can be compared feature by feature.

`features(path)` reads each feature straight from the package (its parts and relationships,
with openpyxl for the cells) and describes only the user's things, so that
`features(input) == features(output)`, key by key, proves each came back present and unchanged
while the tool added what it adds to a returned workbook:
- on sheet Transfers its columns after I (header and cells in rows 3..11), its fill on the
  flagged input cells (H4, I5, F7), its note below the user's comment after a line
  `--- njcredits ---` and comments of its own, and a frozen pane;
- its sheets at the end (Findings, Summary, Run), with the defined names that mark them
  (`njcredits_*`) and any name scoped to them (their print titles), the name that marks its
  columns on Transfers (`njcredits_Columns_*`, scoped to Transfers), and the filter range of its
  autofilter on Transfers (`_xlnm._FilterDatabase`);
- whatever it adds to the shared parts (styles, shared strings, content types, relationships).

`parts(path)` gives every part of the package as bytes, for tests that look at one directly.
`tests/fixtures/make_kept.py` writes the fixture and says what it holds.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from openpyxl import load_workbook
from openpyxl.utils import get_column_letter

INTAKE_SHEET = "Transfers"
INPUT_COLUMNS = 9  # A..I: the user's columns of the intake sheet; the tool's start at J
INPUT_ROWS = 11  # the title (1), a blank row (2), the header (3) and eight transfers (4..11)
HEADER_ROW = 3
FLAGGED = ("H4", "I5", "F7")  # the input cells the tool's findings point at: their fill changes
RECONCILIATION = "Reconciliation"
TOOL_PREFIX = "njcredits"  # the tool's defined names start with it
TOOL_SHEETS = ("Findings", "Summary", "Run", "Rules")
TOOL_SHEET = re.compile(r"^(?:" + "|".join(TOOL_SHEETS) + r")(?: \(njcredits(?: \d+)?\))?$", re.I)
FILTER_DATABASE = "_xlnm._filterdatabase"  # casefolded: the name Excel keeps an autofilter's range in
COMMENT_MARKER = "--- njcredits ---"  # the line above the tool's note in a comment

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
OFFICE_DOCUMENT = R + "/officeDocument"
COMMENTS_REL = R + "/comments"
VML_REL = R + "/vmlDrawing"
TABLE_REL = R + "/table"
DRAWING_REL = R + "/drawing"
CHART_REL = R + "/chart"
THREAD_REL = "http://schemas.microsoft.com/office/2017/10/relationships/threadedComment"
PERSON_REL = "http://schemas.microsoft.com/office/2017/10/relationships/person"

DATA_VALIDATIONS = re.compile(rb"<(?:\w+:)?dataValidations\b.*?</(?:\w+:)?dataValidations>", re.S)
CONDITIONAL = re.compile(rb"<(\w+:|)conditionalFormatting\b.*?</\1conditionalFormatting>", re.S)
DXF_ID = re.compile(rb'\bdxfId="(\d+)"')
DXF = re.compile(rb"<(\w+:|)dxf\b(?:/>|.*?</\1dxf>)", re.S)
DXFS = re.compile(rb"<(\w+:|)dxfs\b[^>]*?(?:/>|>(.*?)</\1dxfs>)", re.S)
ANCHOR = re.compile(rb"<(\w+:|)(oneCellAnchor|twoCellAnchor|absoluteAnchor)\b.*?</\1\2>", re.S)
CHART_ID = re.compile(rb"<(?:\w+:)?chart\b[^>]*?\b(?:\w+:)?id=\"([^\"]+)\"")
EMPTY_ELEMENT_SPACE = re.compile(rb"\s+/>")
VML_SHAPE = re.compile(rb"<(\w+:|)shape(?=[\s>])([^>]*)>(.*?)</\1shape>", re.S)
VML_STYLE = re.compile(rb'\bstyle="([^"]*)"')
CLIENT_DATA = re.compile(rb"<(\w+:|)ClientData\b([^>]*)>(.*?)</\1ClientData>", re.S)
VML_ROW = re.compile(rb"<(?:\w+:)?Row>\s*(\d+)\s*<")
VML_COLUMN = re.compile(rb"<(?:\w+:)?Column>\s*(\d+)\s*<")
PREFIX = re.compile(rb"<(/?)\w+:")


def parts(path: str | Path) -> dict[str, bytes]:
    """Every part of the package: name -> uncompressed bytes."""
    with zipfile.ZipFile(path) as z:
        return {info.filename: z.read(info) for info in z.infolist() if not info.is_dir()}


def _q(ns: str, tag: str) -> str:
    """A tag as ElementTree names it: `{namespace}tag`."""
    return f"{{{ns}}}{tag}"


def _rels_name(part: str) -> str:
    """The relationships part of `part` (`xl/workbook.xml` -> `xl/_rels/workbook.xml.rels`)."""
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", name + ".rels")


def _rels(package: dict[str, bytes], part: str) -> dict[str, tuple[str, str]]:
    """The internal relationships of `part`: Id -> (Type, resolved part name)."""
    data = package.get(_rels_name(part))
    if data is None:
        return {}
    out = {}
    for rel in ElementTree.fromstring(data).iter(_q(PACKAGE_RELS, "Relationship")):
        if rel.get("TargetMode") == "External":
            continue
        target = rel.get("Target", "")
        base = posixpath.dirname(part)
        resolved = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(base, target))
        out[rel.get("Id", "")] = (rel.get("Type", ""), resolved)
    return out


def _related(package: dict[str, bytes], part: str, rel_type: str) -> list[str]:
    """The parts `part` relates to by relationships of `rel_type`, in Id order."""
    return [target for _id, (t, target) in sorted(_rels(package, part).items()) if t == rel_type]


def _content_type(package: dict[str, bytes], part: str) -> str:
    """The content type `[Content_Types].xml` gives `part`: its Override, else its extension's Default."""
    root = ElementTree.fromstring(package["[Content_Types].xml"])
    for override in root.iter(_q(CONTENT_TYPES, "Override")):
        if override.get("PartName", "").lstrip("/").casefold() == part.casefold():
            return override.get("ContentType", "")
    extension = part.rsplit(".", 1)[-1].casefold()
    for default in root.iter(_q(CONTENT_TYPES, "Default")):
        if default.get("Extension", "").casefold() == extension:
            return default.get("ContentType", "")
    return ""


class _Workbook:
    """The package's workbook part, its sheets and which of them are the user's."""

    def __init__(self, package: dict[str, bytes]) -> None:
        root_rels = _related(package, "", OFFICE_DOCUMENT) or ["xl/workbook.xml"]
        self.part = root_rels[0]
        self.root = ElementTree.fromstring(package[self.part])
        rels = _rels(package, self.part)
        # (name, state, part) of every sheet, in the workbook's order
        self.sheets = [
            (el.get("name", ""), el.get("state", "visible"), rels[el.get(_q(R, "id"), "")][1]) for el in self.root.iter(_q(MAIN, "sheet"))
        ]
        self.names = list(self.root.iter(_q(MAIN, "definedName")))
        marked = set()
        for el in self.names:  # the markers of the tool's sheets: workbook-level (its column markers are scoped to a sheet)
            if el.get("name", "").casefold().startswith(TOOL_PREFIX) and el.get("localSheetId") is None:
                m = re.match(r"^=?\s*(?:'((?:[^']|'')+)'|([^'!#][^'!]*))!", (el.text or "").strip())
                if m:
                    marked.add((m.group(1).replace("''", "'") if m.group(1) else m.group(2).strip()).casefold())
        self.tool = {name for name, _state, _part in self.sheets if name.casefold() in marked or TOOL_SHEET.match(name)}
        self.user = [(name, state, part) for name, state, part in self.sheets if name not in self.tool]

    def sheet_part(self, name: str) -> str:
        """The part of sheet `name`."""
        return next(part for n, _state, part in self.sheets if n == name)


def _sheet_root(package: dict[str, bytes], part: str) -> ElementTree.Element:
    """A sheet part parsed (the fixture's sheets are small)."""
    return ElementTree.fromstring(package[part])


def _merged(package, book) -> dict[str, list[str]]:
    """The merged ranges of each user sheet."""
    out = {}
    for name, _state, part in book.user:
        refs = sorted(el.get("ref", "") for el in _sheet_root(package, part).iter(_q(MAIN, "mergeCell")))
        if refs:
            out[name] = refs
    return out


def _comment_text(comment: ElementTree.Element) -> str:
    """The text of a legacy comment: its plain text or its runs joined (phonetic runs left out)."""
    text = comment.find(_q(MAIN, "text"))
    if text is None:
        return ""
    out = []
    for child in text:
        if child.tag == _q(MAIN, "t"):
            out.append(child.text or "")
        elif child.tag == _q(MAIN, "r"):
            out.extend(t.text or "" for t in child.iter(_q(MAIN, "t")))
    return "".join(out)


def _user_comments(package, book) -> dict[str, tuple[str, str]]:
    """`Sheet!ref` -> (author, text) of each user comment (legacy note) on a user sheet, its text
    cut at the tool's marker line; the comments holding only a note of the tool's are left out."""
    out = {}
    for name, _state, part in book.user:
        for comments in _related(package, part, COMMENTS_REL):
            root = ElementTree.fromstring(package[comments])
            authors = [a.text or "" for a in root.iter(_q(MAIN, "author"))]
            for comment in root.iter(_q(MAIN, "comment")):
                text = _comment_text(comment)
                if text.startswith(COMMENT_MARKER):
                    continue
                text = text.split("\n" + COMMENT_MARKER, 1)[0]
                author = int(comment.get("authorId", "0"))
                out[f"{name}!{comment.get('ref')}"] = (authors[author] if author < len(authors) else "", text)
    return out


def _spaced(xml: bytes) -> bytes:
    """XML with the spacing a writer may change removed (`<b />` and `<b/>` say the same)."""
    return EMPTY_ELEMENT_SPACE.sub(b"/>", xml)


def _comment_boxes(package, book, comments: dict[str, tuple[str, str]]) -> dict[str, tuple[bytes, bytes, bytes]]:
    """`Sheet!ref` -> the box of each user comment in the sheet's VML drawing: its style (position,
    size, visibility) and its client data (the cell, moving and sizing with cells), namespace
    prefixes dropped."""
    out = {}
    for name, _state, part in book.user:
        for vml in _related(package, part, VML_REL):
            for shape in VML_SHAPE.finditer(package[vml]):
                data = CLIENT_DATA.search(shape.group(3))
                row, column = VML_ROW.search(shape.group(3)), VML_COLUMN.search(shape.group(3))
                if not (data and row and column):
                    continue
                ref = f"{name}!{get_column_letter(int(column.group(1)) + 1)}{int(row.group(1)) + 1}"
                if ref in comments:
                    style = VML_STYLE.search(shape.group(2))
                    out[ref] = (style.group(1) if style else b"", data.group(2).strip(), _spaced(PREFIX.sub(rb"<\1", data.group(3))))
    return out


def _columns(package, book) -> tuple[dict[str, list[str]], dict[str, dict[str, tuple[float | None, bool]]]]:
    """The hidden columns and the (width, customWidth) of each column with a `col` element, per
    user sheet; on the intake sheet only the user's columns A..I."""
    hidden, widths = {}, {}
    for name, _state, part in book.user:
        last = INPUT_COLUMNS if name == INTAKE_SHEET else 16384
        for col in _sheet_root(package, part).iter(_q(MAIN, "col")):
            low, high = int(col.get("min", "0")), min(int(col.get("max", "0")), last)
            for c in range(low, high + 1):
                letter = get_column_letter(c)
                if col.get("hidden") in ("1", "true"):
                    hidden.setdefault(name, []).append(letter)
                width = col.get("width")
                widths.setdefault(name, {})[letter] = (float(width) if width is not None else None, col.get("customWidth") in ("1", "true"))
    return hidden, widths


def _row_heights(package, book) -> dict[str, dict[int, tuple[str | None, str | None, str | None]]]:
    """(ht, customHeight, hidden) of each row that sets one, per user sheet; on the intake sheet
    only rows 1..11."""
    out = {}
    for name, _state, part in book.user:
        for row in _sheet_root(package, part).iter(_q(MAIN, "row")):
            r = int(row.get("r", "0"))
            if name == INTAKE_SHEET and r > INPUT_ROWS:
                continue
            attrs = (row.get("ht"), row.get("customHeight"), row.get("hidden"))
            if any(attrs):
                out.setdefault(name, {})[r] = attrs
    return out


TOOL_PROMPT = re.compile(rb'<dataValidation\b[^>]*promptTitle="Reviewer Decision"[^>]*?(?:/>|>.*?</dataValidation>)', re.S)


def _data_validations(package, book) -> dict[str, list[bytes]]:
    """The data validations of each user sheet, each as bytes; the tool's own (the input message
    of its Reviewer Decision column) left out."""
    out = {}
    for name, _state, part in book.user:
        m = DATA_VALIDATIONS.search(package[part])
        if m:
            out[name] = [
                v for v in re.findall(rb"<dataValidation\b.*?(?:</dataValidation>|/>)", m.group(0), re.S) if not TOOL_PROMPT.match(v)
            ]
    return out


def _conditional_formats(package, book) -> dict[str, list[tuple[bytes, list[bytes]]]]:
    """Each conditionalFormatting element of each user sheet, with the differential formats (dxf)
    of the styles part its rules use."""
    styles = _related(package, book.part, R + "/styles")
    dxfs = []
    if styles:
        block = DXFS.search(package[styles[0]])
        if block and block.group(2):
            dxfs = [_spaced(m.group(0)) for m in DXF.finditer(block.group(2))]
    out = {}
    for name, _state, part in book.user:
        for m in CONDITIONAL.finditer(package[part]):
            used = [dxfs[int(i)] if int(i) < len(dxfs) else b"" for i in DXF_ID.findall(m.group(0))]
            out.setdefault(name, []).append((m.group(0), used))
    return out


def _defined_names(book) -> list[tuple[str, str | None, str, tuple[tuple[str, str], ...]]]:
    """(name, the sheet it is scoped to or None, formula, other attributes) of each defined name
    that is not the tool's: not `njcredits*`, not scoped to one of the tool's sheets, and not the
    hidden filter range of the intake sheet (the tool's autofilter over its header row and its
    own columns; the fixture has no autofilter of its own there)."""
    out = []
    for el in book.names:
        name = el.get("name", "")
        if name.casefold().startswith(TOOL_PREFIX):
            continue
        local = el.get("localSheetId")
        scope = book.sheets[int(local)][0] if local is not None and int(local) < len(book.sheets) else None
        if scope in book.tool or (name.casefold() == FILTER_DATABASE and scope == INTAKE_SHEET):
            continue
        attrs = tuple(sorted((k, v) for k, v in el.attrib.items() if k not in ("name", "localSheetId")))
        out.append((name, scope, el.text or "", attrs))
    return sorted(out, key=lambda n: (n[0], n[1] or ""))


def _tables(package, book) -> dict[str, list[tuple[bytes, str]]]:
    """The table parts each user sheet lists in its tableParts, with their content types."""
    out = {}
    for name, _state, part in book.user:
        rels = _rels(package, part)
        for el in _sheet_root(package, part).iter(_q(MAIN, "tablePart")):
            rel_type, target = rels[el.get(_q(R, "id"), "")]
            assert rel_type == TABLE_REL, rel_type
            out.setdefault(name, []).append((package[target], _content_type(package, target)))
    return out


def _charts(package, book) -> dict[str, list[tuple[bytes, bytes, str]]]:
    """(anchor in the drawing, chart part, its content type) of each chart on a user sheet, found
    through the sheet's drawing element and the drawing's relationships."""
    out = {}
    for name, _state, part in book.user:
        rels = _rels(package, part)
        for el in _sheet_root(package, part).iter(_q(MAIN, "drawing")):
            rel_type, drawing = rels[el.get(_q(R, "id"), "")]
            assert rel_type == DRAWING_REL, rel_type
            drawing_rels = _rels(package, drawing)
            for anchor in ANCHOR.finditer(package[drawing]):
                chart = CHART_ID.search(anchor.group(0))
                if chart is None:
                    continue
                rel_type, target = drawing_rels[chart.group(1).decode()]
                assert rel_type == CHART_REL, rel_type
                out.setdefault(name, []).append((anchor.group(0), package[target], _content_type(package, target)))
    return out


def _threaded_comments(package, book) -> dict[str, object]:
    """The threaded comment parts of the user sheets and the workbook's persons part, each with
    its content type, found through their relationships."""
    threads = {}
    for name, _state, part in book.user:
        for target in _related(package, part, THREAD_REL):
            threads.setdefault(name, []).append((package[target], _content_type(package, target)))
    persons = [(package[t], _content_type(package, t)) for t in _related(package, book.part, PERSON_REL)]
    return {"threads": threads, "persons": persons} if threads and persons else {}


def _tree(obj) -> bytes:
    """An openpyxl style object (font, border, fill, alignment, protection) as comparable XML bytes."""
    return ElementTree.tostring(obj.to_tree()) if obj is not None else b""


def features(path: str | Path) -> dict[str, object]:
    """A comparable description of each feature the analyst made in the workbook, keyed by feature;
    equal for an input and its returned workbook when every feature came back unchanged.

    Keys: `sheets` (the user's sheets in order, with their visibility), `merged`, `user_comment`
    (author and text before the tool's marker of each user comment), `comment_boxes` (their VML
    boxes), `hidden_columns`, `widths` (columns A..I on Transfers), `row_heights`,
    `data_validation`, `conditional_formatting` (with the dxf styles the rules use),
    `defined_names`, `table`, `chart` (drawing anchor and chart part), `threaded_comment`
    (thread and persons parts), `reconciliation` (the Reconciliation sheet part and the values
    readers see), and for the input cells of Transfers: `input_values` (A1:I11, formulas as
    formulas), `number_formats` (A3:I11), `fonts_borders` and `alignments` (A1:I11) and `fills`
    (A1:I11 but the flagged cells, whose fill the tool changes).
    """
    package = parts(path)
    book = _Workbook(package)
    comments = _user_comments(package, book)
    hidden, widths = _columns(package, book)
    wb, cached = load_workbook(path), load_workbook(path, data_only=True)
    ws = wb[INTAKE_SHEET]
    cells = [ws.cell(row=r, column=c) for r in range(1, INPUT_ROWS + 1) for c in range(1, INPUT_COLUMNS + 1)]
    refs = [f"{get_column_letter(c.column)}{c.row}" for c in cells]
    recon = cached[RECONCILIATION]
    out = {
        "sheets": [(name, state) for name, state, _part in book.user],
        "merged": _merged(package, book),
        "user_comment": comments,
        "comment_boxes": _comment_boxes(package, book, comments),
        "hidden_columns": hidden,
        "widths": widths,
        "row_heights": _row_heights(package, book),
        "data_validation": _data_validations(package, book),
        "conditional_formatting": _conditional_formats(package, book),
        "defined_names": _defined_names(book),
        "table": _tables(package, book),
        "chart": _charts(package, book),
        "threaded_comment": _threaded_comments(package, book),
        "reconciliation": {
            "part": package[book.sheet_part(RECONCILIATION)],
            "values": {c.coordinate: c.value for row in recon.iter_rows() for c in row if c.value is not None},
        },
        "input_values": {ref: c.value for ref, c in zip(refs, cells, strict=True)},
        "number_formats": {ref: c.number_format for ref, c in zip(refs, cells, strict=True) if c.row >= HEADER_ROW},
        "fonts_borders": {ref: (_tree(c.font), _tree(c.border)) for ref, c in zip(refs, cells, strict=True)},
        "alignments": {ref: (_tree(c.alignment), _tree(c.protection)) for ref, c in zip(refs, cells, strict=True)},
        "fills": {ref: _tree(c.fill) for ref, c in zip(refs, cells, strict=True) if ref not in FLAGGED},
    }
    wb.close()
    cached.close()
    for key, value in out.items():
        assert value, f"feature {key!r} not found in {Path(path).name}"
    return out
