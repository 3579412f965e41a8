"""Looking at a file before any reader touches it, and at what the readers hide.

`inspect(opened, limits)` refuses, before any reader parses the workbook: files that are not
workbooks, encrypted (password-protected) workbooks (`decrypt_default` reads those encrypted with
Excel's built-in default password), truncated, damaged or empty zips, zip bombs (total
uncompressed size, compression ratio, entry count), part names that differ only in case, XML
with a DOCTYPE (the way in for entity-expansion attacks) anywhere in any XML part (each part is
inflated once and searched in chunks: about 0.2 s for 100 MB of sheet XML, half of it
inflating), two sheets of one name, and sheets whose declared dimension is absurd (the 5 KB file
with cells at A1 and XFD1048576 that makes the Rust readers abort the whole process).

`workbook_sheets(opened)` reads the workbook's sheets as XML (Transitional or Strict, any prefix,
either quote), each with the part its relationship leads to, or why it leads nowhere.

`scan_cells(opened)` finds, per sheet, what python-calamine reads as an empty cell: Excel error
values (#N/A, #DIV/0!, ...) and formulas saved without a calculated value, in sheets written
with or without a namespace prefix.

Each takes the workbook opened once (`batch.workbook.opened.Opened`, or a path, which it opens for
the time of the check); what it parses of the package (the workbook's sheets) is kept there for the
stages after it."""

from __future__ import annotations

import html
import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from batch.workbook import deflate, sheetrows, xmlparts
from batch.workbook.opened import Opened, opening
from batch.workbook.refused import Refused

OLE2_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")
ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
ZIP_MAGIC = b"PK"
XML_HEAD_BYTES = 4096
RATIO_MIN_BYTES = 1 << 20  # the compression ratio is judged on members of 1 MiB or more


@dataclass(frozen=True)
class Limits:
    max_uncompressed_mb: int = 2048
    max_compression_ratio: int = 100
    max_entries: int = 10_000
    max_cells: int = 60_000_000  # a sheet's declared rows x columns


def inspect(source: Opened | Path, limits: Limits = Limits(), shown: str | None = None) -> str:
    """Return the kind of file ('zip', 'xls' or 'csv'), or raise Refused with the reason (which
    names the file `shown`, by default the name it was opened under)."""
    with opening(source, shown) as opened:
        return _inspect(opened, limits, shown or opened.name)


def _inspect(opened: Opened, limits: Limits, name: str) -> str:
    if opened.path.suffix.lower() == ".csv":
        return "csv"
    head = opened.head
    if head.startswith(OLE2_MAGIC):
        if ENCRYPTED_STREAM in opened.data():
            raise Refused(
                f"{name} is password-protected (encrypted); remove the password in Excel "
                f"(File > Info > Protect Workbook) and drop it in again."
            )
        return "xls"
    if not head.startswith(ZIP_MAGIC):
        raise Refused(
            f"{name} is not an Excel workbook (it is neither an .xlsx zip package nor a legacy .xls file); "
            f"save it from Excel as .xlsx and drop it in again."
        )
    try:
        z = opened.zip
        infos = z.infolist()
        _check_zip(name, infos, limits)
        names = {i.filename for i in infos}
        if "xl/workbook.xml" not in names:
            raise Refused(
                f"{name} is a zip file but not an Excel workbook (it has no xl/workbook.xml); "
                f"save it from Excel as .xlsx and drop it in again."
            )
        _check_names(name, infos)
        xml_parts = _xml_parts(name, z, names)
        for info in infos:
            if info.filename in xml_parts and _scanned_dtd(name, z, info):
                raise Refused(
                    f"{name} contains an XML DOCTYPE declaration in {info.filename}, which Excel never "
                    f"writes and entity-expansion attacks use; it was not read. Re-save it from Excel."
                )
        _check_sheet_names(name, opened)
        _check_dimensions(name, opened, limits)
    except zipfile.BadZipFile as err:
        raise Refused(damaged(name, err)) from err
    return "zip"


DEFAULT_PASSWORD = "VelvetSweatshop"  # what Excel encrypts with when only the workbook's structure is protected


def encrypted(source: Opened | Path) -> bool:
    """The file is an encrypted Office package (an OLE2 file holding an EncryptedPackage stream)."""
    with opening(source) as opened:
        return opened.head.startswith(OLE2_MAGIC) and ENCRYPTED_STREAM in opened.data()


def decrypt_default(source: Opened | Path, dest: Path, shown: str | None = None) -> Path:
    """Decrypt a workbook encrypted with Excel's default password into `dest` (the package as
    Excel would save it without the encryption). A workbook encrypted with any other password is
    refused, with the reason."""
    import msoffcrypto

    name = shown or (source.name if isinstance(source, Opened) else Path(source).name)
    try:
        with opening(source, shown) as opened:
            opened.file.seek(0)
            office = msoffcrypto.OfficeFile(opened.file)
            office.load_key(password=DEFAULT_PASSWORD, verify_password=True)
            with open(dest, "wb") as out:
                office.decrypt(out)
    except Exception as err:  # noqa: BLE001 - a wrong password, or an encryption msoffcrypto does not know
        dest.unlink(missing_ok=True)
        raise Refused(
            f"{name} is password-protected (encrypted); remove the password in Excel (File > Info > Protect Workbook) and drop it in again."
        ) from err
    return dest


XML_SUFFIXES = (".xml", ".rels", ".vml")
SCAN_CHUNK = 1 << 20  # bytes inflated at a time when a part is searched for a DOCTYPE
# what starts a document type declaration or an entity declaration, in the encodings an XML part
# of a package may have (UTF-8, or UTF-16 with or without its byte order mark); XML is case-sensitive
DTD_MARKS = (b"<!DOCTYPE", b"<!ENTITY")
DTD_MARKS_UTF16 = {
    "utf-16-le": tuple(m.decode().encode("utf-16-le") for m in DTD_MARKS),
    "utf-16-be": tuple(m.decode().encode("utf-16-be") for m in DTD_MARKS),
}
CONTENT_TYPES = "[Content_Types].xml"
BAD_CRC = re.compile(r"Bad CRC-32 for file '(.*)'")


def damaged(name: str, err: BaseException, part: str | None = None) -> str:
    """The reason of a package whose zip cannot be read, in the user's words: which part is damaged
    when a part's checksum or compressed data is wrong, else the package as a whole."""
    m = BAD_CRC.search(str(err))
    part = m.group(1) if m else part
    if part and (m or not isinstance(err, zipfile.BadZipFile)):
        return (
            f"{name}: part {part} of the workbook is damaged (its checksum does not match its contents, or its compressed "
            f"data cannot be inflated), so the workbook cannot be read; save it again from Excel (or restore it from a backup) "
            f"and drop it in again."
        )
    return f"{name} is damaged or truncated (it does not open as a complete zip package); save it again from Excel and drop it in again."


def _check_names(name: str, infos: list[zipfile.ZipInfo]) -> None:
    """Part names are compared ignoring case (Open Packaging Conventions): a package holding two
    parts whose names differ only in case (or one name twice) is ambiguous, whichever a reader takes."""
    seen: dict[str, str] = {}
    for info in infos:
        key = info.filename.casefold()
        if key in seen:
            same = seen[key] == info.filename
            raise Refused(
                f"{name} holds {'the part ' + info.filename + ' twice' if same else 'the parts ' + seen[key] + ' and ' + info.filename}"
                f"{'' if same else ', whose names differ only in case'}; part names in a workbook ignore case, so it is "
                f"ambiguous which one is the workbook's. Open it in Excel, save it again and drop it in again."
            )
        seen[key] = info.filename


def _xml_parts(name: str, z: zipfile.ZipFile, names: set[str]) -> set[str]:
    """The parts to search for a DOCTYPE: every .xml, .rels and .vml part, and every part whose
    content type ([Content_Types].xml, by part name or extension) is XML."""
    out = {n for n in names if n.casefold().endswith(XML_SUFFIXES)}
    types = next((n for n in names if n.casefold() == CONTENT_TYPES.casefold()), None)
    if types is None:
        return out
    if _scanned_dtd(name, z, z.getinfo(types)):  # searched before it is parsed
        raise Refused(
            f"{name} contains an XML DOCTYPE declaration in {types}, which Excel never "
            f"writes and entity-expansion attacks use; it was not read. Re-save it from Excel."
        )
    from lxml import etree

    try:
        root = etree.fromstring(z.read(types), etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
    except etree.XMLSyntaxError:
        return out  # the part's own trouble is reported where it is read
    xml_extensions, xml_names = set(), set()
    for el in root:
        kind = str(el.get("ContentType") or "").casefold()
        if not (kind.endswith(("/xml", "+xml")) or "xml" in kind.rpartition("/")[2]):
            continue
        if el.get("Extension") is not None:
            xml_extensions.add("." + el.get("Extension").casefold())
        elif el.get("PartName") is not None:
            xml_names.add(el.get("PartName").lstrip("/").casefold())
    return out | {n for n in names if n.casefold() in xml_names or any(n.casefold().endswith(e) for e in xml_extensions)}


def _scanned_dtd(name: str, z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    try:
        return _declares_dtd(z, info)
    except (zlib.error, EOFError) as err:  # compressed data that does not inflate: this part is damaged
        raise Refused(damaged(name, err, info.filename)) from err
    except NotImplementedError as err:  # Deflate64, bzip2 of old zip tools...: not what Excel writes
        raise Refused(
            f"{name}: part {info.filename} of the workbook is compressed with a method Excel does not use, so it cannot "
            f"be read; open the workbook in Excel or LibreOffice, save it again as .xlsx and drop it in again."
        ) from err
    except RuntimeError as err:  # a part encrypted with a zip password (not Excel's own protection)
        if not info.flag_bits & 0x1:
            raise
        raise Refused(
            f"{name}: part {info.filename} of the workbook is encrypted with a zip password, which Excel never writes; "
            f"open the workbook in Excel or LibreOffice, save it again as .xlsx and drop it in again."
        ) from err


def _declares_dtd(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    """The part holds `<!DOCTYPE` or `<!ENTITY` anywhere (not only at its start): the part is
    inflated and searched in chunks, a mark split across two chunks included."""
    with deflate.reading(z, info) as member:
        chunk = member.read(SCAN_CHUNK)
        marks = DTD_MARKS
        if chunk.startswith((b"\xff\xfe", b"<\x00?\x00", b"<\x00!\x00")):
            marks = DTD_MARKS_UTF16["utf-16-le"]
        elif chunk.startswith((b"\xfe\xff", b"\x00<\x00?", b"\x00<\x00!")):
            marks = DTD_MARKS_UTF16["utf-16-be"]
        keep = max(len(m) for m in marks) - 1
        tail = b""
        while chunk:
            window = tail + chunk
            if any(m in window for m in marks):
                return True
            tail = window[-keep:]
            chunk = member.read(SCAN_CHUNK)
    return False


def _check_zip(name: str, infos: list[zipfile.ZipInfo], limits: Limits) -> None:
    if not infos:
        raise Refused(f"{name} is an empty zip file, not an Excel workbook; save it from Excel as .xlsx.")
    if len(infos) > limits.max_entries:
        raise Refused(
            f"{name} has {len(infos):,} parts, more than the {limits.max_entries:,} a workbook may have here; "
            f"it looks like a zip bomb and was not opened."
        )
    total = sum(i.file_size for i in infos)
    if total > limits.max_uncompressed_mb * (1 << 20):
        raise Refused(
            f"{name} would inflate to {total / (1 << 20):,.0f} MB, more than the limit of "
            f"{limits.max_uncompressed_mb:,} MB (max_uncompressed_mb); split it or raise the limit."
        )
    for i in infos:
        if i.file_size >= RATIO_MIN_BYTES and i.file_size > limits.max_compression_ratio * max(i.compress_size, 1):
            raise Refused(
                f"{name}: part {i.filename} inflates {i.file_size / max(i.compress_size, 1):,.0f} times "
                f"(limit {limits.max_compression_ratio}, max_compression_ratio); it looks like a zip bomb and was not opened."
            )


def _col_number(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


# the sheet's declared extent, `<dimension ref="A1:H20"/>`: with or without a namespace prefix, in
# either quote, spaces around `=`
REF = re.compile(rb"""<(?:[A-Za-z_][\w.-]*:)?dimension\b[^>]*?\bref\s*=\s*["'](?:\$?[A-Z]+\$?[0-9]+:)?\$?([A-Z]+)\$?([0-9]+)["']""")
WORKBOOK = "xl/workbook.xml"
WORKBOOK_RELS = "xl/_rels/workbook.xml.rels"
MACRO_SHEET_TYPES = ("xlMacrosheet", "xlIntlMacrosheet")  # Excel 4 macro sheets (international ones too)


@dataclass
class SheetEntry:
    """One `<sheet>` of the workbook part, as its relationship leads to its part."""

    name: str
    rid: str | None  # its relationship id (r:id), None when absent
    kind: str  # the relationship type's last segment (`worksheet`, `chartsheet`, `xlMacrosheet`, ...), "" when unknown
    part: str | None  # the package's part (its name as stored), None when the relationship is broken
    target: str = ""  # the relationship's Target as written
    state: str | None = None
    broken: str = ""  # why the sheet cannot be read: its relationship is missing, unknown or points at no part

    @property
    def macro(self) -> bool:
        """An Excel 4 macro sheet (by its relationship type, or its part in xl/macrosheets/)."""
        where = (self.part or self.target).casefold().lstrip("/")
        return self.kind in MACRO_SHEET_TYPES or where.startswith(("xl/macrosheets/", "macrosheets/"))


def part_named(names, wanted: str) -> str | None:
    """The part of the package named `wanted`, compared ignoring case (Open Packaging Conventions)."""
    key = wanted.casefold()
    return next((n for n in names if n.casefold() == key), None)


def relationship_map(opened: Opened, rels_part: str, source_folder: str) -> dict[str, dict]:
    """The relationships of a part, by id: type's last segment, Target as written, and the part it
    resolves to (its stored name; None for an external or missing one). Read as XML (any prefix,
    either quote), once per opened workbook."""
    return opened.once(f"relationships {rels_part}", lambda: _relationship_map(opened, rels_part, source_folder))


def _relationship_map(opened: Opened, rels_part: str, source_folder: str) -> dict[str, dict]:
    names = opened.zip.namelist()
    stored = part_named(names, rels_part)
    if stored is None:
        return {}
    root = opened.parsed(stored, xmlparts.parse)
    out = {}
    for el in root.iter():
        if xmlparts.local(el) != "Relationship":
            continue
        target = el.get("Target") or ""
        kind = (el.get("Type") or "").rstrip("/").rpartition("/")[2]
        part = None
        if (el.get("TargetMode") or "").casefold() != "external" and target:
            path = unquote(target.split("#", 1)[0])
            resolved = path.lstrip("/") if path.startswith("/") else posixpath.normpath(posixpath.join(source_folder, path))
            part = part_named(names, resolved)
        out[el.get("Id") or ""] = {"kind": kind, "target": target, "part": part}
    return out


def is_sheet_element(el) -> bool:
    """A workbook's `<sheet>`: in `<sheets>`, in whatever namespace the producer used (Transitional,
    Strict, or a pre-release one), under any prefix."""
    parent = el.getparent()
    return xmlparts.local(el) == "sheet" and parent is not None and xmlparts.local(parent) == "sheets"


def workbook_sheets(opened: Opened) -> list[SheetEntry]:
    """Every `<sheet>` of xl/workbook.xml, in order, read as XML (Transitional or Strict, any
    prefix, either quote), each with the part its relationship leads to or why it leads nowhere.
    Read once per opened workbook: the stages after the first take what it read."""
    return opened.once("workbook sheets", lambda: _workbook_sheets(opened))


def _workbook_sheets(opened: Opened) -> list[SheetEntry]:
    root = opened.parsed(part_named(opened.zip.namelist(), WORKBOOK) or WORKBOOK, lambda data, _name: xmlparts.parse(data, WORKBOOK))
    rels = relationship_map(opened, WORKBOOK_RELS, "xl")
    out = []
    for el in root.iter():
        if not is_sheet_element(el):
            continue
        # r:id in the Transitional or Strict relationships namespace (or a pre-release one), any prefix
        rid = xmlparts.rel_id(el) or next((v for k, v in el.attrib.items() if k.startswith("{") and k.endswith("}id")), None)
        rel = rels.get(rid) if rid else None
        rel = rel or {"kind": "", "part": None, "target": ""}
        entry = SheetEntry(str(el.get("name") or ""), rid, rel["kind"], rel["part"], rel["target"])
        entry.state = el.get("state")
        if not rid:
            entry.broken = "its relationship id in the workbook is empty or missing"
        elif rid not in rels:
            entry.broken = f"its relationship {rid} is not among the workbook's relationships"
        elif entry.part is None:
            entry.broken = f"its relationship {rid} points at {rel['target'] or 'nothing'}, which is not a part of the workbook"
        out.append(entry)
    return out


def sheet_parts(opened: Opened) -> dict[str, str]:
    """Sheet name -> the part of each sheet that can be read (its relationship leads to a part; not
    an Excel 4 macro sheet), from xl/workbook.xml and its relationships."""
    return {s.name: s.part for s in workbook_sheets(opened) if s.part and not s.broken and not s.macro}


UTF16_STARTS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be", b"<\x00": "utf-16-le", b"\x00<": "utf-16-be"}
DECLARED_ENCODING = re.compile(rb"""(<\?xml[^>]*?encoding\s*=\s*["'])[^"']*(["'])""")


def utf16(start: bytes) -> str | None:
    """The encoding of an XML part written in UTF-16 (by its first two bytes), or None (UTF-8)."""
    return UTF16_STARTS.get(start[:2])


def as_utf8(data: bytes) -> bytes:
    """An XML part's bytes in UTF-8 (a part written in UTF-16, which Excel never writes but the XML
    standard allows, is decoded and its declaration made to say UTF-8)."""
    encoding = utf16(data)
    if encoding is None:
        return data
    text = data.decode(encoding).lstrip("\ufeff").encode("utf-8")
    return DECLARED_ENCODING.sub(rb"\1UTF-8\2", text, count=1)


def read_part(z: zipfile.ZipFile, part: str) -> bytes:
    """A part of the package in UTF-8 (see `as_utf8`)."""
    return as_utf8(deflate.read(z, part))


def _check_sheet_names(name: str, opened: Opened) -> None:
    """Excel does not allow two sheets of one name (ignoring case): such a workbook would have its
    sheets mixed up by name, so it is refused."""
    seen: dict[str, str] = {}
    for s in workbook_sheets(opened):
        key = s.name.casefold()
        if key in seen:
            raise Refused(
                f"{name} has two sheets named {seen[key]!r}{'' if seen[key] == s.name else ' and ' + repr(s.name)}, which Excel "
                f"does not allow (sheet names are unique, ignoring case); rename one in Excel and drop it in again."
            )
        seen[key] = s.name


def _check_dimensions(name: str, opened: Opened, limits: Limits) -> None:
    for sheet, part in sheet_parts(opened).items():
        with opened.zip.open(part) as member:
            head = member.read(XML_HEAD_BYTES)
        if utf16(head):
            head = as_utf8(head[: len(head) // 2 * 2])
        m = REF.search(head)
        if m:
            rows, cols = int(m.group(2)), _col_number(m.group(1).decode())
            if rows * cols > limits.max_cells:
                raise Refused(
                    f"{name}: sheet {sheet!r} declares {rows:,} rows x {cols:,} columns "
                    f"({m.group(1).decode()}{rows}), more than the {limits.max_cells:,} cells read here; "
                    f"delete the stray cells far from the data (Ctrl+End shows them) and save again."
                )


ATTR_R = re.compile(rb"""\br\s*=\s*["']([A-Z]+)([0-9]+)["']""")  # either quote, spaces around `=`
ATTR_T = re.compile(rb"""\bt\s*=\s*["']([a-z]+)["']""")
ERROR_TYPE = re.compile(rb"""\bt\s*=\s*["']e["']""")
SHEET_ROOT = re.compile(rb"<(?:([A-Za-z_][\w.-]*):)?(?:worksheet|chartsheet|dialogsheet|macrosheet)\b")


@dataclass
class CellNotes:
    errors: dict[tuple[int, int], str]  # (row, col), 0-based -> "#N/A"
    uncalculated: dict[tuple[int, int], str]  # (row, col) -> formula text
    columns: frozenset[int] = frozenset()  # 0-based columns holding any cell element (a formatted empty cell too)
    merged: tuple[tuple[int, int, int, int], ...] = ()  # the merged ranges, 0-based (first row, last row, first column, last column)
    sums: set[tuple[int, int]] = field(default_factory=set)  # (row, col) of the cells that add up other rows (`_sum_total`)


@dataclass(frozen=True)
class SheetPatterns:
    """The cell, formula and value elements of a sheet part written under `prefix` (b"" for none:
    Excel's own spelling; b"x" for `<x:c>`, as the .NET Open XML SDK writes)."""

    prefix: bytes
    cell: re.Pattern
    column: re.Pattern
    formula: re.Pattern
    value: re.Pattern
    formula_open: bytes  # `<f` or `<x:f`: a part without it holds no formula


_PATTERNS: dict[bytes, SheetPatterns] = {}


def sheet_patterns(data: bytes) -> SheetPatterns:
    """The patterns for the sheet part `data` (its root element's prefix, read from its head)."""
    m = SHEET_ROOT.search(data, 0, XML_HEAD_BYTES)
    prefix = m.group(1) or b"" if m else b""
    if prefix not in _PATTERNS:
        p = re.escape(prefix + b":") if prefix else b""
        _PATTERNS[prefix] = SheetPatterns(
            prefix,
            re.compile(rb"<" + p + rb"c\b([^>]*?)(/>|>(.*?)</" + p + rb"c\s*>)", re.S),
            re.compile(rb"<" + p + rb"""c\b[^>]*?\br\s*=\s*["']([A-Z]{1,3})"""),  # the reference, wherever it stands
            re.compile(rb"<" + p + rb"f\b[^>]*?(?:/>|>(.*?)</" + p + rb"f\s*>)", re.S),
            re.compile(rb"<" + p + rb"v\b[^>]*?(?:/>|>(.*?)</" + p + rb"v\s*>)", re.S),
            b"<" + (prefix + b":" if prefix else b"") + b"f",
        )
    return _PATTERNS[prefix]


# what patterns over a sheet's bytes must not look into: comments and processing instructions (the
# XML declaration aside) hold no cells, and a CDATA section is text, whose `<` is no markup
_OPAQUE = re.compile(rb"<!--.*?-->|<\?(?!xml[\s?]).*?\?>|<!\[CDATA\[(.*?)\]\]>", re.S)


def _escaped(text: bytes) -> bytes:
    return text.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")


def elements_only(data: bytes, rows: bool = False, declared: bool = True) -> bytes:
    """A sheet part as its elements only, for patterns over its bytes: its comments and processing
    instructions left out and its CDATA sections written as the same text escaped, so that a cell
    spelled inside a comment or a CDATA section (`<!-- <c r="H3"><f>SUM(H1:H2)</f></c> -->`) is not
    taken for a cell; and the extension lists of its rows and cells (`<extLst>`, which the schema
    lets hold elements of any namespace, a `<c>` of another vocabulary included) left out, since
    no cell of the sheet stands in one. `rows`: `data` is rows of the part (a block of them, see
    `scan_cells`), not the whole part; `declared`: it begins with the part's XML declaration (a
    processing instruction that is not one). A part without them (as every program writes) is
    returned as it is."""
    if b"<!" in data or data.count(b"<?") > (1 if declared and not rows else 0):
        data = _OPAQUE.sub(lambda m: b"" if m.group(1) is None else _escaped(m.group(1)), data)
    rows_end = len(data) if rows else data.rfind(b"sheetData>")
    if rows_end > 0 and data.find(b"extLst", 0, rows_end) >= 0:  # extensions among the rows
        data = _EXTENSIONS.sub(b"", data[:rows_end]) + data[rows_end:]
    return data


# an extension list, under any prefix (its end tag under the same one)
_EXTENSIONS = re.compile(rb"<((?:[A-Za-z_][\w.-]*:)?)extLst\b[^>]*?(?:/>|>.*?</\1extLst\s*>)", re.S)


_MERGED: dict[bytes, re.Pattern] = {}


def _merged(data: bytes, prefix: bytes) -> tuple[tuple[int, int, int, int], ...]:
    """A sheet's merged ranges (`<mergeCell ref="L1:N1"/>`), 0-based (first row, last row, first
    column, last column): the cells under a merged range show nothing of their own."""
    pattern = _MERGED.get(prefix)
    if pattern is None:
        p = re.escape(prefix + b":") if prefix else b""
        ref = rb"""\bref\s*=\s*["']\$?([A-Z]{1,3})\$?([0-9]+)(?::\$?([A-Z]{1,3})\$?([0-9]+))?["']"""
        pattern = _MERGED[prefix] = re.compile(rb"<" + p + rb"mergeCell\b[^>]*?" + ref)
    out = []
    for m in pattern.finditer(data, max(0, data.rfind(b"sheetData>"))):  # merged ranges follow the rows
        c1, r1 = _col_number(m.group(1).decode()) - 1, int(m.group(2)) - 1
        c2 = _col_number(m.group(3).decode()) - 1 if m.group(3) else c1
        r2 = int(m.group(4)) - 1 if m.group(4) else r1
        out.append((r1, r2, c1, c2))
    return tuple(out)


SCAN_BLOCK_ROWS = 20_000  # rows of a sheet part the cell scan holds at a time
SCAN_CHUNK_BYTES = 8 << 20  # bytes of a sheet part the scan reads at a time


def scan_cells(source: Opened | Path) -> dict[str, CellNotes]:
    """Per sheet: the columns that hold a cell, Excel error values, formulas without a cached value
    and the cells whose SUM or SUBTOTAL formula adds up other rows (`_sum_total`: a column total).
    Sheets without errors or formulas cost one substring search beyond the columns. A sheet part
    is read in chunks and scanned a block of rows at a time (`_scan_by_blocks`), so the scan of a
    part of a gigabyte holds a few megabytes of it; one the row reader does not cut is scanned whole."""
    out: dict[str, CellNotes] = {}
    with opening(source) as opened:
        for sheet, part in sheet_parts(opened).items():
            try:
                out[sheet] = _scan_by_blocks(opened.zip, part)
            except (Refused, sheetrows.NotByBlocks):  # not cut into rows: scanned whole, as it always was
                data = elements_only(read_part(opened.zip, part))
                pat = sheet_patterns(data)
                out[sheet] = notes = CellNotes({}, {}, frozenset(), _merged(data, pat.prefix))
                notes.columns = frozenset(_scan(data, pat, notes, {}))
    return out


def _scan_by_blocks(z: zipfile.ZipFile, part: str) -> CellNotes:
    """`scan_cells` of one sheet part, cut into blocks of `SCAN_BLOCK_ROWS` rows by the writer's row
    reader (`batch.workbook.sheetrows.row_blocks`): a cell's reference says where it is, so each
    block is scanned as the whole part would be, the shared formulas (`_sum_total`) in the part's order."""
    cut = sheetrows.row_blocks(deflate.chunks(z, part, SCAN_CHUNK_BYTES), SCAN_BLOCK_ROWS)
    pat = sheet_patterns(elements_only(cut.head))
    notes, columns, shared = CellNotes({}, {}), set(), {}
    for block in cut.blocks:
        columns |= _scan(elements_only(b"".join(block), rows=True), pat, notes, shared)
    notes.columns = frozenset(columns)
    notes.merged = _merged(elements_only(cut.tail, declared=False), pat.prefix)
    return notes


def _scan(data: bytes, pat: SheetPatterns, notes: CellNotes, shared: dict[bytes, bool]) -> set[int]:
    """The columns holding a cell in `data` (a sheet part, or a block of its rows, `elements_only`),
    its error values, formulas without a value and column totals noted in `notes`."""
    columns = {_col_number(c.decode()) - 1 for c in set(pat.column.findall(data))}
    if pat.formula_open not in data and b'"e"' not in data and b"'e'" not in data:  # no formula, no error value
        return columns
    for m in pat.cell.finditer(data):
        attrs, body = m.group(1), m.group(3) or b""
        is_error = ERROR_TYPE.search(attrs) is not None
        if pat.formula_open not in body and not is_error:
            continue
        ref = ATTR_R.search(attrs)
        if not ref:
            continue
        pos = (int(ref.group(2)) - 1, _col_number(ref.group(1).decode()) - 1)
        value = pat.value.search(body)
        text = value.group(1) if value else None
        if is_error and text:
            notes.errors[pos] = xml_text(text)
        formula = pat.formula.search(body)
        if formula is None:
            continue
        if text is None or not text.strip():
            notes.uncalculated[pos] = "=" + xml_text(formula.group(1) or b"")
        if _sum_total(formula, pos[0] + 1, shared):
            notes.sums.add(pos)
    return columns


SUM_FORMULA = re.compile(r"^\s*=?\s*(?:_xlfn\.)?(?:SUM|SUBTOTAL)\s*\(", re.IGNORECASE)
# a cell or range reference (`G2`, `$G$2:$G$10`), not a function name such as LOG10(
A1_REF = re.compile(r"(?<![A-Za-z0-9_.])\$?([A-Za-z]{1,3})\$?(\d+)(?::\$?([A-Za-z]{1,3})\$?(\d+))?(?![\w(])")
SHARED_INDEX = re.compile(rb"""\bsi\s*=\s*["'](\d+)["']""")


def _sum_total(formula: re.Match, row: int, shared: dict[bytes, bool]) -> bool:
    """Whether the cell of Excel row `row` whose formula element is `formula` holds a SUM or
    SUBTOTAL formula that adds up other rows (a column total; `=SUM(B2:D2)`, a record's own parts
    in its own row, is no total). A shared formula's cells take the formula of the cell that holds
    its text (filled right or down, its rows keep their relation to the cell): `shared` keeps, in
    the part's order, what each shared formula's text gave."""
    si = SHARED_INDEX.search(formula.group(0)[: formula.group(0).find(b">") + 1])
    if formula.group(1) is None:
        return shared.get(si.group(1), False) if si else False
    text = xml_text(formula.group(1))
    total = bool(SUM_FORMULA.match(text)) and not _own_row_only(text, row)
    if si:
        shared[si.group(1)] = total
    return total


def _own_row_only(formula: str, row: int) -> bool:
    """Every cell the formula refers to is in `row` (the formula's own row)."""
    refs = A1_REF.findall(formula)
    return bool(refs) and all(int(r1) == row and (not r2 or int(r2) == row) for _c1, r1, _c2, r2 in refs)


CDATA = re.compile(rb"<!\[CDATA\[(.*?)\]\]>", re.S)


def xml_text(raw: bytes) -> str:
    """The text of an element's content as bytes: entities replaced, CDATA sections taken as they are."""
    parts, at = [], 0
    for m in CDATA.finditer(raw):
        parts.append(html.unescape(raw[at : m.start()].decode("utf-8", "replace")))
        parts.append(m.group(1).decode("utf-8", "replace"))
        at = m.end()
    parts.append(html.unescape(raw[at:].decode("utf-8", "replace")))
    return "".join(parts)
