"""The data rows of a returned intake sheet, built as SpreadsheetML a whole column at a time.

xlsxwriter spends several microseconds on each cell it writes; an intake sheet of 100,000 rows
has millions of cells. So the returned workbook is written by xlsxwriter (headers, formats,
comments, freeze panes, autofilter, the other sheets) with the intake sheets' data rows left
out, and those rows are then generated here, column by column with vectorized string operations,
in chunks of rows (memory stays bounded), and spliced into the sheet's XML part.

Cells are written the way xlsxwriter writes them in constant-memory mode: text as inline strings
(`t="inlineStr"`, never a formula), numbers as `<v>`, booleans as `t="b"`, dates as serial
numbers with a date format; control characters are escaped as `_xHHHH_`.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

CHUNK_ROWS = 5_000
EXCEL_EPOCH = np.datetime64("1899-12-30")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
SHEETDATA_END = b"</sheetData>"


def column_letters(n: int) -> str:
    out, n = "", n + 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def _escape(text: pd.Series) -> pd.Series:
    s = text.str.replace("&", "&amp;", regex=False).str.replace("<", "&lt;", regex=False).str.replace(">", "&gt;", regex=False)
    ctrl = s.str.contains(CONTROL)
    if ctrl.any():
        s[ctrl] = s[ctrl].str.replace(CONTROL, lambda m: f"_x{ord(m.group()):04X}_", regex=True)
    return s


def _strings(values: pd.Series, refs: np.ndarray, style: np.ndarray) -> np.ndarray:
    v = values.astype(str)
    esc = _escape(v)
    preserve = (v.str.match(r"^\s") | v.str.contains(r"\s$", regex=True)).to_numpy()
    t = np.where(preserve, '<t xml:space="preserve">', "<t>")
    return '<c r="' + refs + '"' + style + ' t="inlineStr"><is>' + t + esc.to_numpy(dtype=object) + "</t></is></c>"


def _numbers(text: np.ndarray, refs: np.ndarray, style: np.ndarray) -> np.ndarray:
    return '<c r="' + refs + '"' + style + "><v>" + text + "</v></c>"


def _serial(values: pd.Series) -> np.ndarray:
    """Dates and datetimes as Excel serial days (as text): microseconds, so 9999-12-31 fits, and one
    day less before 1900-03-01 (Excel counts a 1900-02-29: 1900-01-01 is 1)."""
    stamps = np.array(list(values), dtype="datetime64[us]")
    days = (stamps - EXCEL_EPOCH) / np.timedelta64(1, "D")
    days = np.where(stamps < np.datetime64("1900-03-01"), days - 1, days)
    return pd.Series(days).map(repr).to_numpy(dtype=object)


def input_cells(
    values: np.ndarray, refs: np.ndarray, base_style: np.ndarray, date_style: np.ndarray, datetime_style: np.ndarray, time_style: np.ndarray
) -> np.ndarray:
    """XML of one column of original input values (str, float, int, bool, date, datetime, ... ).

    The style arrays are per row (` s="N"` or ""): the column's number format, or a fill."""
    s = pd.Series(values, dtype=object)
    kind = s.map(type)
    out = np.full(len(s), "", dtype=object)
    is_str = kind.map({t: issubclass(t, str) for t in kind.unique()}).to_numpy(dtype=bool)
    nonempty = is_str & (s.astype(object) != "").to_numpy()
    if nonempty.any():
        out[nonempty] = _strings(s[nonempty], refs[nonempty], base_style[nonempty])
    is_bool = kind.map(lambda t: t is bool).to_numpy(dtype=bool)
    if is_bool.any():
        out[is_bool] = (
            '<c r="'
            + refs[is_bool]
            + '"'
            + base_style[is_bool]
            + ' t="b"><v>'
            + np.where(s[is_bool].to_numpy(dtype=bool), "1", "0")
            + "</v></c>"
        )
    is_num = kind.isin([int, float, np.int64, np.float64]).to_numpy() & ~is_bool
    if is_num.any():
        nums = s[is_num].astype(float)
        finite = np.isfinite(nums.to_numpy())
        text = nums.map(lambda x: repr(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)).to_numpy(dtype=object)
        cells = _numbers(text, refs[is_num], base_style[is_num])
        out[is_num] = np.where(finite, cells, "")
    is_dt = kind.isin([dt.datetime, pd.Timestamp]).to_numpy()
    is_date = (kind == dt.date).to_numpy()
    for mask, style in ((is_date, date_style), (is_dt, None)):
        if mask.any():
            vals = s[mask]
            if style is None:  # a datetime with a time of day keeps it; at midnight it is a date
                has_time = vals.map(lambda d: bool(d.hour or d.minute or d.second)).to_numpy(dtype=bool)
                style_m = np.where(has_time, datetime_style[mask], date_style[mask])
            else:
                style_m = style[mask]
            out[mask] = _numbers(_serial(vals), refs[mask], style_m)
    is_time = (kind == dt.time).to_numpy()
    if is_time.any():
        frac = s[is_time].map(lambda t: repr((t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6) / 86400))
        out[is_time] = _numbers(frac.to_numpy(dtype=object), refs[is_time], time_style[is_time])
    is_delta = (kind == dt.timedelta).to_numpy()
    if is_delta.any():
        days = s[is_delta].map(lambda d: repr(d.total_seconds() / 86400))
        out[is_delta] = _numbers(days.to_numpy(dtype=object), refs[is_delta], time_style[is_delta])
    other = ~(is_str | is_bool | is_num | is_dt | is_date | is_time | is_delta) & s.notna().to_numpy()
    if other.any():
        out[other] = _strings(s[other].astype(str), refs[other], base_style[other])
    return out


def computed_cells(values: pd.Series, refs: np.ndarray, style: str, cents: bool, text: bool = False) -> np.ndarray:
    """XML of one computed column: money from integer cents, numbers, or text; blank where NA."""
    out = np.full(len(values), "", dtype=object)
    present = values.notna().to_numpy()
    if not present.any():
        return out
    v = values[present]
    if cents:
        num = v.astype("int64").to_numpy()
        whole, rem = np.divmod(np.abs(num), 100)
        sign = np.where(num < 0, "-", "")
        text = sign + whole.astype(str).astype(object) + np.where(rem == 0, "", "." + np.char.zfill(rem.astype(str), 2).astype(object))
        out[present] = _numbers(text.astype(object), refs[present], np.full(present.sum(), style, dtype=object))
    elif text or v.map(type).isin([str]).all():
        out[present] = _strings(v.astype(str), refs[present], np.full(present.sum(), style, dtype=object))
    else:
        text = v.astype(float).map(repr).to_numpy(dtype=object)
        out[present] = _numbers(text, refs[present], np.full(present.sum(), style, dtype=object))
    return out


def splice(path: Path, parts: dict[str, object], replace: dict | None = None, compresslevel: int = 1) -> None:
    """Rewrite the workbook at `path`, inserting before `</sheetData>` of each named sheet part the
    rows its generator yields (bytes), and setting its `<dimension>` to the given range. Parts named
    in `replace` are replaced by what their function returns given the part's current bytes."""
    replace = replace or {}
    tmp = path.with_name(path.name + ".splice")
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=compresslevel) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename in replace:
                data = replace[item.filename](data)
            if item.filename not in parts:
                zout.writestr(item, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=compresslevel)
                continue
            rows, dimension = parts[item.filename]
            data = re.sub(rb'<dimension ref="[^"]*"/>', f'<dimension ref="{dimension}"/>'.encode(), data, count=1)
            if b"<sheetData/>" in data:
                data = data.replace(b"<sheetData/>", b"<sheetData></sheetData>", 1)
            head, tail = data.split(SHEETDATA_END, 1)
            info = zipfile.ZipInfo(item.filename, date_time=item.date_time)
            info.compress_type = zipfile.ZIP_DEFLATED
            # the level zipfile uses for a streamed member: `compress_level` from Python 3.13, `_compresslevel` before
            if "compress_level" in zipfile.ZipInfo.__slots__:
                info.compress_level = compresslevel
            else:
                info._compresslevel = compresslevel  # noqa: SLF001
            with zout.open(info, "w", force_zip64=True) as out:
                out.write(head)
                for chunk in rows():
                    out.write(chunk)
                out.write(SHEETDATA_END + tail)
    tmp.replace(path)


COMMENT_RUN = '<r><rPr><sz val="8"/><color indexed="81"/><rFont val="Tahoma"/><family val="2"/></rPr><t xml:space="preserve">'
VML_SHAPE_ID = re.compile(rb'<v:shape id="_x0000_s(\d+)"')


def comments_xml(refs: np.ndarray, texts: pd.Series) -> bytes:
    """The comments part of a sheet: one comment per cell reference, as xlsxwriter writes them."""
    body = (
        '<comment ref="'
        + refs
        + '" authorId="0"><text>'
        + COMMENT_RUN
        + _escape(texts.astype(str)).to_numpy(dtype=object)
        + "</t></r></text></comment>"
    )
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<comments xmlns="http://schemas.openxmlformats.org/'
        'spreadsheetml/2006/main"><authors><author></author></authors><commentList>' + "".join(body.tolist()) + "</commentList></comments>"
    ).encode("utf-8")


def vml_xml(template: bytes, rows: np.ndarray, cols: np.ndarray, first_block: int) -> bytes:
    """The VML drawing of a sheet's comment boxes (hidden until the cell is hovered), from the
    one shape xlsxwriter wrote: shape ids from block `first_block` on, boxes anchored beside each cell."""
    text = template.decode("utf-8")
    start, end = text.index("<v:shape id="), text.rindex("</v:shape>") + len("</v:shape>")
    head, shape, tail = text[:start], text[start:end], text[end:]
    blocks = max(1, -(-len(rows) // 1024))
    head = re.sub(
        r'<o:idmap v:ext="edit" data="[^"]*"/>',
        f'<o:idmap v:ext="edit" data="{",".join(str(first_block + b) for b in range(blocks))}"/>',
        head,
    )
    shape = re.sub(r'id="_x0000_s\d+"', 'id="_x0000_s{ID}"', shape)
    shape = re.sub(r"margin-left:[^;]*;margin-top:[^;]*;", "margin-left:{LEFT}pt;margin-top:{TOP}pt;", shape)
    shape = re.sub(r"z-index:\d+", "z-index:{Z}", shape)
    shape = re.sub(r"<x:Anchor>[^<]*</x:Anchor>", "<x:Anchor>{ANCHOR}</x:Anchor>", shape)
    shape = re.sub(r"<x:Row>\d+</x:Row><x:Column>\d+</x:Column>", "<x:Row>{ROW}</x:Row><x:Column>{COL}</x:Column>", shape)
    parts = re.split(r"\{(ID|LEFT|TOP|Z|ANCHOR|ROW|COL)\}", shape)
    top_row = np.maximum(rows - 1, 0)
    fields = {
        "ID": (first_block * 1024 + 1 + np.arange(len(rows))).astype(str).astype(object),
        "LEFT": ((cols + 1) * 48 + 11.25).astype(str).astype(object),
        "TOP": (top_row * 15 + 7.5).astype(str).astype(object),
        "Z": (np.arange(len(rows)) + 1).astype(str).astype(object),
        "ANCHOR": (
            (cols + 1).astype(str).astype(object)
            + ", 15, "
            + top_row.astype(str).astype(object)
            + ", 10, "
            + (cols + 7).astype(str).astype(object)
            + ", 15, "
            + (top_row + 9).astype(str).astype(object)
            + ", 15"
        ),
        "ROW": rows.astype(str).astype(object),
        "COL": cols.astype(str).astype(object),
    }
    acc = np.full(len(rows), "", dtype=object)
    for i, piece in enumerate(parts):
        acc = acc + (fields[piece] if i % 2 else piece)
    return (head + "".join(acc.tolist()) + tail).encode("utf-8")
