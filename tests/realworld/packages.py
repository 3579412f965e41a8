"""Write a small SpreadsheetML package in the dialect of one producer.

A `Dialect` says how the producer spells the XML (namespaces, prefix, quotes, empty elements, the
XML declaration, relationship ids and targets, strings, dates, the style table); a `Sheet` holds
the cells. `package(book)` returns the parts, name -> bytes, in the order they are zipped;
`zipped(parts)` the .xlsx bytes. Shapes that no dialect covers are made by `edit`, which replaces
exactly one occurrence (so a fixture never silently stops being the shape it is named for).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import zipfile
from dataclasses import dataclass, field, replace
from xml.sax.saxutils import escape

# Transitional (ECMA-376 Transitional, what Excel writes by default) and Strict (ISO/IEC 29500 Strict)
T_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
S_MAIN = "http://purl.oclc.org/ooxml/spreadsheetml/main"
T_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
S_R = "http://purl.oclc.org/ooxml/officeDocument/relationships"
T_APP = "http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"
S_APP = "http://purl.oclc.org/ooxml/officeDocument/extendedProperties"
T_VT = "http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"
S_VT = "http://purl.oclc.org/ooxml/officeDocument/docPropsVTypes"
XM = "http://schemas.microsoft.com/office/excel/2006/main"
PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
CORE_TYPE = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
MACROSHEET_TYPE = "http://schemas.microsoft.com/office/2006/relationships/xlMacrosheet"

SHEET_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
MAIN_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
MACRO_MAIN_CT = "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
MACROSHEET_CT = "application/vnd.ms-excel.macrosheet+xml"
STYLES_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"
SST_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
CORE_CT = "application/vnd.openxmlformats-package.core-properties+xml"
APP_CT = "application/vnd.openxmlformats-officedocument.extended-properties+xml"
RELS_CT = "application/vnd.openxmlformats-package.relationships+xml"

EXCEL_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
EXCEL_EPOCH = dt.date(1899, 12, 30)  # serial 1 = 1900-01-01 (after 1900-02-28, the leap-year bug cancels out)


@dataclass(frozen=True)
class Dialect:
    """How one producer writes a package."""

    main: str = T_MAIN
    r: str = T_R  # the namespace of r:id
    types: str = T_R  # the base of the officeDocument relationship types ("<types>/worksheet")
    app: str = T_APP
    vt: str = T_VT
    extended_type: str = "extended-properties"  # Strict: extendedProperties
    prefix: str = ""  # SpreadsheetML under a prefix ("x", as the Open XML SDK writes it)
    quote: str = '"'
    end: str = "/>"  # how an empty element ends ("/>" or " />")
    declaration: str = EXCEL_DECLARATION
    sdk_ids: bool = False  # relationship ids as System.IO.Packaging makes them ("R" and 16 hex digits)
    absolute_targets: bool = False  # relationship targets as "/xl/..." (older Open XML SDK)
    strict: bool = False  # conformance="strict" on the workbook
    strings: str = "shared"  # "shared" or "inline"
    dates: str = "serial"  # "serial" (a number with a date format), "iso" (t="d", ISO 8601), "text" (ISO text)
    styles: str | None = "normal"  # "normal", "empty" (<styleSheet/>) or None (no styles part)
    doc_props: bool = True  # docProps/core.xml and app.xml

    def tag(self, local: str) -> str:
        return f"{self.prefix}:{local}" if self.prefix else local

    def xmlns(self) -> str:
        return f" xmlns:{self.prefix}=" if self.prefix else " xmlns="

    def attrs(self, pairs) -> str:
        q = self.quote
        entities = {q: "&quot;" if q == '"' else "&apos;"}
        return "".join(f" {k}={q}{escape(str(v), entities)}{q}" for k, v in pairs if v is not None)

    def empty(self, local: str, pairs=(), spreadsheetml: bool = True) -> str:
        return f"<{self.tag(local) if spreadsheetml else local}{self.attrs(pairs)}{self.end}"

    def wrap(self, local: str, inner: str, pairs=()) -> str:
        return f"<{self.tag(local)}{self.attrs(pairs)}>{inner}</{self.tag(local)}>"

    def ns(self, prefix: str, uri: str) -> str:
        return f" xmlns:{prefix}={self.quote}{uri}{self.quote}" if prefix else f" xmlns={self.quote}{uri}{self.quote}"

    def decl(self) -> str:
        if self.quote == "'":
            return self.declaration.replace('"', "'")
        return self.declaration


EXCEL = Dialect()
EXCEL_STRICT = Dialect(main=S_MAIN, r=S_R, types=S_R, app=S_APP, vt=S_VT, extended_type="extendedProperties", strict=True, dates="iso")
# what the Open XML SDK (DocumentFormat.OpenXml) writes: the x prefix, " />", a lowercase utf-8
# declaration without standalone, System.IO.Packaging's relationship ids and absolute targets, no docProps
OPEN_XML_SDK = Dialect(
    prefix="x", end=" />", declaration='<?xml version="1.0" encoding="utf-8"?>', sdk_ids=True, absolute_targets=True, doc_props=False
)


@dataclass(frozen=True)
class Formula:
    """A formula cell with its cached value."""

    text: str
    cached: bool | str | float


@dataclass
class Sheet:
    name: str
    rows: list[list]  # row 1 first; None leaves a cell out
    # the order of the cells of a row as written (row number -> column numbers, 1-based), when not left to right
    order: dict[int, list[int]] = field(default_factory=dict)
    head: str = ""  # markup after <sheetViews> (the sheet's head)
    tail: str = ""  # markup after </sheetData>, before <pageMargins>
    declare_r: bool = True  # xmlns:r on the root
    rels: list[tuple[str, str, str, str | None]] = field(default_factory=list)  # the sheet's own (id, type, target, mode)
    macro: bool = False  # an Excel 4 macro sheet (xl/macrosheets/)
    part: str | None = None  # the part's name (default xl/worksheets/sheetN.xml)
    rid: str | None = None  # the r:id in workbook.xml (default: the relationship's id); "" for a broken one


@dataclass
class Book:
    sheets: list[Sheet]
    dialect: Dialect = EXCEL
    defined_names: list[tuple[str, str]] = field(default_factory=list)  # (name, formula)
    macro_enabled: bool = False


def column_letter(n: int) -> str:
    s = ""
    while n:
        n, r = divmod(n - 1, 26)
        s = chr(65 + r) + s
    return s


def _rid(d: Dialect, n: int, salt: str) -> str:
    if d.sdk_ids:
        return "R" + hashlib.sha256(f"{salt}{n}".encode()).hexdigest()[:16]
    return f"rId{n}"


def _target(d: Dialect, source_dir: str, part: str) -> str:
    if d.absolute_targets:
        return "/" + part
    return part[len(source_dir) + 1 :] if source_dir else part


def _rels(d: Dialect, rels: list[tuple[str, str, str, str | None]]) -> bytes:
    body = "".join(
        d.empty("Relationship", [("Id", i), ("Type", t), ("Target", target), ("TargetMode", mode)], False) for i, t, target, mode in rels
    )
    return (d.decl() + f"<Relationships xmlns={d.quote}{PKG_RELS}{d.quote}>{body}</Relationships>").encode()


class _Strings:
    def __init__(self):
        self.items: list[str] = []
        self.index: dict[str, int] = {}
        self.count = 0

    def add(self, text: str) -> int:
        self.count += 1
        if text not in self.index:
            self.index[text] = len(self.items)
            self.items.append(text)
        return self.index[text]


def _cell(d: Dialect, ref: str, value, strings: _Strings) -> str:
    c, v, t, is_ = d.tag("c"), d.tag("v"), d.tag("t"), d.tag("is")
    if isinstance(value, Formula):
        kind, cached = (
            ("b", int(value.cached))
            if isinstance(value.cached, bool)
            else ("str", escape(value.cached))
            if isinstance(value.cached, str)
            else (None, value.cached)
        )
        return f"<{c}{d.attrs([('r', ref), ('t', kind)])}><{d.tag('f')}>{escape(value.text)}</{d.tag('f')}><{v}>{cached}</{v}></{c}>"
    if isinstance(value, bool):
        return f"<{c}{d.attrs([('r', ref), ('t', 'b')])}><{v}>{int(value)}</{v}></{c}>"
    if isinstance(value, dt.date) and d.dates != "text":
        style = [("s", 1)] if d.styles == "normal" else []
        if d.dates == "iso":
            return f"<{c}{d.attrs([('r', ref), *style, ('t', 'd')])}><{v}>{value.isoformat()}T00:00:00</{v}></{c}>"
        return f"<{c}{d.attrs([('r', ref), *style])}><{v}>{(value - EXCEL_EPOCH).days}</{v}></{c}>"
    if isinstance(value, dt.date):
        value = value.isoformat()
    if isinstance(value, str):
        if d.strings == "inline":
            return f"<{c}{d.attrs([('r', ref), ('t', 'inlineStr')])}><{is_}><{t}>{escape(value)}</{t}></{is_}></{c}>"
        return f"<{c}{d.attrs([('r', ref), ('t', 's')])}><{v}>{strings.add(value)}</{v}></{c}>"
    return f"<{c}{d.attrs([('r', ref)])}><{v}>{value!r}</{v}></{c}>"


def _dimension(sheet: Sheet) -> str:
    width = max((len(r) for r in sheet.rows), default=1)
    return f"A1:{column_letter(width)}{max(len(sheet.rows), 1)}"


def _sheet_xml(d: Dialect, sheet: Sheet, first: bool, strings: _Strings) -> bytes:
    rows = []
    for i, row in enumerate(sheet.rows, start=1):
        cols = sheet.order.get(i) or list(range(1, len(row) + 1))
        cells = "".join(_cell(d, f"{column_letter(j)}{i}", row[j - 1], strings) for j in cols if row[j - 1] is not None)
        rows.append(f"<{d.tag('row')}{d.attrs([('r', i), ('spans', f'1:{len(row)}')])}>{cells}</{d.tag('row')}>")
    root = "macrosheet" if sheet.macro else "worksheet"
    if sheet.macro:  # Excel writes the root under xm:, its content in SpreadsheetML
        open_root = f"<xm:macrosheet{d.ns(d.prefix, d.main)}{d.ns('r', d.r)}{d.ns('xm', XM)}>"
        close_root = "</xm:macrosheet>"
    else:
        r = f" xmlns:r={d.quote}{d.r}{d.quote}" if sheet.declare_r else ""
        open_root = f"<{d.tag(root)}{d.xmlns()}{d.quote}{d.main}{d.quote}{r}>"
        close_root = f"</{d.tag(root)}>"
    view = [("tabSelected", 1)] if first else []
    return (
        d.decl()
        + open_root
        + d.empty("dimension", [("ref", _dimension(sheet))])
        + f"<{d.tag('sheetViews')}>{d.empty('sheetView', [*view, ('workbookViewId', 0)])}</{d.tag('sheetViews')}>"
        + sheet.head
        + d.empty("sheetFormatPr", [("defaultRowHeight", 15)])
        + f"<{d.tag('sheetData')}>{''.join(rows)}</{d.tag('sheetData')}>"
        + sheet.tail
        + d.empty("pageMargins", [("left", 0.7), ("right", 0.7), ("top", 0.75), ("bottom", 0.75), ("header", 0.3), ("footer", 0.3)])
        + close_root
    ).encode()


def _styles(d: Dialect) -> bytes:
    if d.styles == "empty":
        return (d.decl() + f"<{d.tag('styleSheet')}{d.xmlns()}{d.quote}{d.main}{d.quote}{d.end}").encode()
    t = d.tag
    xf = [("numFmtId", 0), ("fontId", 0), ("fillId", 0), ("borderId", 0)]
    return (
        d.decl()
        + f"<{t('styleSheet')}{d.xmlns()}{d.quote}{d.main}{d.quote}>"
        + d.wrap("fonts", d.wrap("font", d.empty("sz", [("val", 11)]) + d.empty("name", [("val", "Calibri")])), [("count", 1)])
        + f"<{t('fills')}{d.attrs([('count', 2)])}>"
        + f"<{t('fill')}>{d.empty('patternFill', [('patternType', 'none')])}</{t('fill')}>"
        + f"<{t('fill')}>{d.empty('patternFill', [('patternType', 'gray125')])}</{t('fill')}></{t('fills')}>"
        + f"<{t('borders')}{d.attrs([('count', 1)])}><{t('border')}>"
        + "".join(d.empty(side) for side in ("left", "right", "top", "bottom", "diagonal"))
        + f"</{t('border')}></{t('borders')}>"
        + f"<{t('cellStyleXfs')}{d.attrs([('count', 1)])}>{d.empty('xf', xf)}</{t('cellStyleXfs')}>"
        + f"<{t('cellXfs')}{d.attrs([('count', 2)])}>{d.empty('xf', [*xf, ('xfId', 0)])}"
        + d.empty("xf", [("numFmtId", 14), *xf[1:], ("xfId", 0), ("applyNumberFormat", 1)])
        + f"</{t('cellXfs')}>"
        + d.wrap("cellStyles", d.empty("cellStyle", [("name", "Normal"), ("xfId", 0), ("builtinId", 0)]), [("count", 1)])
        + f"</{t('styleSheet')}>"
    ).encode()


def _sst(d: Dialect, strings: _Strings) -> bytes:
    t = d.tag
    items = "".join(f"<{t('si')}><{t('t')}>{escape(s)}</{t('t')}></{t('si')}>" for s in strings.items)
    return (
        d.decl()
        + f"<{t('sst')}{d.xmlns()}{d.quote}{d.main}{d.quote}{d.attrs([('count', strings.count), ('uniqueCount', len(strings.items))])}>"
        + items
        + f"</{t('sst')}>"
    ).encode()


def _core(d: Dialect) -> bytes:
    q = d.quote
    return (
        d.decl()
        + f"<cp:coreProperties xmlns:cp={q}http://schemas.openxmlformats.org/package/2006/metadata/core-properties{q}"
        + f" xmlns:dc={q}http://purl.org/dc/elements/1.1/{q} xmlns:dcterms={q}http://purl.org/dc/terms/{q}"
        + f" xmlns:dcmitype={q}http://purl.org/dc/dcmitype/{q} xmlns:xsi={q}http://www.w3.org/2001/XMLSchema-instance{q}>"
        + "<dc:creator>Finance Analyst</dc:creator><cp:lastModifiedBy>Finance Analyst</cp:lastModifiedBy>"
        + f"<dcterms:created xsi:type={q}dcterms:W3CDTF{q}>2026-11-02T09:00:00Z</dcterms:created>"
        + f"<dcterms:modified xsi:type={q}dcterms:W3CDTF{q}>2026-11-03T16:30:00Z</dcterms:modified>"
        + "</cp:coreProperties>"
    ).encode()


def _app(d: Dialect, book: Book) -> bytes:
    q = d.quote
    worksheets = [s.name for s in book.sheets if not s.macro]
    macros = [s.name for s in book.sheets if s.macro]
    heading = [("Worksheets", worksheets)] + ([("Excel 4.0 Macros", macros)] if macros else [])
    pairs = "".join(
        f"<vt:variant><vt:lpstr>{h}</vt:lpstr></vt:variant><vt:variant><vt:i4>{len(n)}</vt:i4></vt:variant>" for h, n in heading
    )
    titles = "".join(f"<vt:lpstr>{escape(n)}</vt:lpstr>" for _, names in heading for n in names)
    count = sum(len(n) for _, n in heading)
    return (
        d.decl()
        + f"<Properties xmlns={q}{d.app}{q} xmlns:vt={q}{d.vt}{q}>"
        + "<Application>Microsoft Excel</Application><DocSecurity>0</DocSecurity><ScaleCrop>false</ScaleCrop>"
        + f"<HeadingPairs><vt:vector size={q}{2 * len(heading)}{q} baseType={q}variant{q}>{pairs}</vt:vector></HeadingPairs>"
        + f"<TitlesOfParts><vt:vector size={q}{count}{q} baseType={q}lpstr{q}>{titles}</vt:vector></TitlesOfParts>"
        + "<LinksUpToDate>false</LinksUpToDate><SharedDoc>false</SharedDoc><HyperlinksChanged>false</HyperlinksChanged>"
        + "<AppVersion>16.0300</AppVersion></Properties>"
    ).encode()


def package(book: Book) -> dict[str, bytes]:
    """The parts of the workbook, name -> bytes, in the order they are zipped."""
    d = book.dialect
    strings = _Strings()
    parts: dict[str, bytes] = {}
    wb_rels, sheet_entries, overrides = [], [], []
    n_sheet = n_macro = 0
    for i, sheet in enumerate(book.sheets, start=1):
        if sheet.macro:
            n_macro += 1
            part = sheet.part or f"xl/macrosheets/sheet{n_macro}.xml"
            kind, ct = MACROSHEET_TYPE, MACROSHEET_CT
        else:
            n_sheet += 1
            part = sheet.part or f"xl/worksheets/sheet{n_sheet}.xml"
            kind, ct = f"{d.types}/worksheet", SHEET_CT
        rid = _rid(d, i, "workbook")
        if sheet.rid != "":
            wb_rels.append((rid, kind, _target(d, "xl", part), None))
            overrides.append((part, ct))
            parts[part] = _sheet_xml(d, sheet, i == 1, strings)
            if sheet.rels:
                folder, name = part.rsplit("/", 1)
                parts[f"{folder}/_rels/{name}.rels"] = _rels(d, sheet.rels)
        sheet_entries.append((sheet.name, i, rid if sheet.rid is None else sheet.rid))
    extra = len(book.sheets)
    if d.styles:
        extra += 1
        wb_rels.append((_rid(d, extra, "workbook"), f"{d.types}/styles", _target(d, "xl", "xl/styles.xml"), None))
        overrides.append(("xl/styles.xml", STYLES_CT))
        parts["xl/styles.xml"] = _styles(d)
    if strings.items:
        extra += 1
        wb_rels.append((_rid(d, extra, "workbook"), f"{d.types}/sharedStrings", _target(d, "xl", "xl/sharedStrings.xml"), None))
        overrides.append(("xl/sharedStrings.xml", SST_CT))
        parts["xl/sharedStrings.xml"] = _sst(d, strings)

    t = d.tag
    sheets = "".join(d.empty("sheet", [("name", name), ("sheetId", n), ("r:id", rid)]) for name, n, rid in sheet_entries)
    names = ""
    if book.defined_names:
        names = (
            f"<{t('definedNames')}>"
            + "".join(f"<{t('definedName')}{d.attrs([('name', n)])}>{escape(f)}</{t('definedName')}>" for n, f in book.defined_names)
            + f"</{t('definedNames')}>"
        )
    excel_only = (
        "" if d.prefix else d.empty("fileVersion", [("appName", "xl"), ("lastEdited", 7), ("lowestEdited", 7), ("rupBuild", 27425)])
    )
    workbook = (
        d.decl()
        + f"<{t('workbook')}{d.xmlns()}{d.quote}{d.main}{d.quote} xmlns:r={d.quote}{d.r}{d.quote}"
        + (f" conformance={d.quote}strict{d.quote}" if d.strict else "")
        + ">"
        + excel_only
        + d.empty("workbookPr", [("defaultThemeVersion", 166925)])
        + d.wrap("bookViews", d.empty("workbookView", [("xWindow", 0), ("yWindow", 0), ("windowWidth", 28800), ("windowHeight", 12300)]))
        + f"<{t('sheets')}>{sheets}</{t('sheets')}>"
        + names
        + d.empty("calcPr", [("calcId", 191029)])
        + f"</{t('workbook')}>"
    ).encode()

    package_rels = [(_rid(d, 1, "package"), f"{d.types}/officeDocument", _target(d, "", "xl/workbook.xml"), None)]
    if d.doc_props:
        package_rels += [
            (_rid(d, 2, "package"), CORE_TYPE, _target(d, "", "docProps/core.xml"), None),
            (_rid(d, 3, "package"), f"{d.types}/{d.extended_type}", _target(d, "", "docProps/app.xml"), None),
        ]
        overrides += [("docProps/core.xml", CORE_CT), ("docProps/app.xml", APP_CT)]
    main_ct = MACRO_MAIN_CT if book.macro_enabled else MAIN_CT
    q = d.quote
    types = (
        d.decl()
        + f"<Types xmlns={q}{CONTENT_TYPES}{q}>"
        + d.empty("Default", [("Extension", "rels"), ("ContentType", RELS_CT)], False)
        + d.empty("Default", [("Extension", "xml"), ("ContentType", "application/xml")], False)
        + d.empty("Override", [("PartName", "/xl/workbook.xml"), ("ContentType", main_ct)], False)
        + "".join(d.empty("Override", [("PartName", "/" + p), ("ContentType", ct)], False) for p, ct in overrides)
        + "</Types>"
    ).encode()

    out = {"[Content_Types].xml": types, "_rels/.rels": _rels(d, package_rels)}
    if d.doc_props:
        out["docProps/app.xml"] = _app(d, book)
        out["docProps/core.xml"] = _core(d)
    out["xl/workbook.xml"] = workbook
    out["xl/_rels/workbook.xml.rels"] = _rels(d, wb_rels)
    out.update(parts)
    return out


def edit(parts: dict[str, bytes], name: str, old: str | bytes, new: str | bytes) -> dict[str, bytes]:
    """The parts with exactly one occurrence of `old` in part `name` replaced by `new`."""
    old_b = old.encode() if isinstance(old, str) else old
    new_b = new.encode() if isinstance(new, str) else new
    count = parts[name].count(old_b)
    assert count == 1, f"{name}: {old!r} found {count} times"
    return {**parts, name: parts[name].replace(old_b, new_b)}


def zipped(parts: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 11, 3, 16, 30, 0)), data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def dialect(base: Dialect, **changes) -> Dialect:
    return replace(base, **changes)
