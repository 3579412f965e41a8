"""Findings as data: calculators and validators emit codes and values; this module renders them.

A raw finding frame has the columns `row` (position in the sheet frame, -1 for the whole sheet),
`code`, optionally `column` (the input header the finding points at; defaults to the code's
`column` in findings.yaml), `variant` (which message template), and any template fields.
`render` turns them into the rows of the `Findings` sheet, message by message as whole columns.
"""

from __future__ import annotations

import functools
import re
import string

import numpy as np
import pandas as pd

from batch.programs._kit.joined import concat, held_once, money_pieces
from batch.programs._kit.rules_text import day

# Ratios in messages are integers of hundredths of a percent: 0.7499 -> 7499 -> "74.99%".
BASIS_POINTS = 10_000
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
FINDINGS_COLUMNS = ["Sheet", "Row", "Record ID", "Column", "Code", "Severity", "Message", "Citation"]


def emit(code: str, rows: pd.Index, variant: str | None = None, **fields) -> pd.DataFrame:
    """One finding per row label in `rows`; each field is a scalar or a Series indexed like the sheet."""
    data = {"row": np.asarray(rows), "code": code}
    if variant is not None:
        data["variant"] = variant
    for name, value in fields.items():
        data[name] = _at(value, rows) if isinstance(value, pd.Series) else value
    return pd.DataFrame(data, index=range(len(rows)))


def stacked_as_given(frames: list[pd.DataFrame]) -> bool:
    """Whether `stack` gives each frame's values as the frame gives them (its own way, not pandas'
    concat), so that `render_each` of the frames is `render` of them stacked."""
    if not frames or not all("row" in f and (f.empty or pd.api.types.is_integer_dtype(f["row"].dtype)) for f in frames):
        return False
    return not _settled_otherwise(list(dict.fromkeys(c for f in frames for c in f.columns)), frames)


def render_each(frames: list[pd.DataFrame], sheet: str, table: dict[str, dict]) -> pd.DataFrame:
    """`render(stack(frames), sheet, table)` of frames `stacked_as_given`, rendered a frame at a time
    and put one after the other: a finding's message reads its own fields only, and a field its frame
    does not give is blank either way. The frames' fields together are never made: for a full GrowNJ
    sheet's 1.1 million findings, about 0.5 GB of columns, most of each missing. Each frame is
    rendered as `stack` gives it (its rows in the order given, whatever its labels; each field as
    objects), which takes its columns of objects as they are."""
    done = [render(stack([f]), sheet, table) for f in frames if len(f)]
    if not done:
        return render(stack(frames), sheet, table)
    out = pd.concat(done, ignore_index=True) if len(done) > 1 else done[0].reset_index(drop=True)
    return out.astype({"row": np.int64})


def stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Raw finding frames one after the other, as `render` reads them: `pd.concat(frames,
    ignore_index=True)`, each field as the values its frames give (Python objects; NaN where a
    frame does not give the field), `row` as integers. pandas' concat of a sheet's twenty frames
    of a few findings (forty fields between them) takes milliseconds to align their columns and
    settle each column's kind, which `render` converts to objects anyway. pandas' concat where a
    frame with findings has a `row` that is not whole numbers. Each field but `row` is a column of
    objects."""
    if not stacked_as_given(frames):
        return pd.concat(frames, ignore_index=True)
    names = list(dict.fromkeys(c for f in frames for c in f.columns))  # in the order the frames give them
    index = pd.RangeIndex(sum(len(f) for f in frames))
    given = [f for f in frames if len(f)]  # an empty frame gives no values (its fields are named above)
    columns = {}
    for name in names:
        parts = [f[name].to_numpy(dtype=object) if name in f else np.full(len(f), np.nan, dtype=object) for f in given]
        # one frame's column taken as it is, not copied: a sheet's findings stacked again with its
        # totals rows' (none, mostly) would otherwise be copied whole (a million findings: 0.5 GB)
        columns[name] = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.empty(0, dtype=object)
    # kept as the objects they are (`dtype=object`): else pandas reads texts and dates into kinds of
    # their own, which `render` reads back as objects (a tenth of a second a sheet of 100,000 rows)
    stacked = pd.DataFrame(columns, index=index, columns=names, dtype=object, copy=False)
    stacked["row"] = np.concatenate([f["row"].to_numpy(dtype=np.int64) for f in frames])
    return stacked


def _settled_otherwise(names: list[str], frames: list[pd.DataFrame]) -> bool:
    """Whether pandas' concat would give some field's values as others than its frames give them:
    where the frames (an empty one included) give it in different kinds, or one does not give it,
    true/false of a boolean column become numbers beside numbers, and whole numbers beyond 2**53
    become floats."""
    kinds = [dict(zip(f.columns, f.dtypes, strict=True)) for f in frames]
    for name in names:
        if len({k.get(name) for k in kinds}) <= 1:
            continue
        for f, k in zip(frames, kinds, strict=True):
            kind = k.get(name)
            if kind is None:
                continue
            if pd.api.types.is_bool_dtype(kind):
                return True
            if isinstance(kind, np.dtype) and kind.kind in "iu" and (np.abs(f[name].to_numpy()) > 2**53).any():
                return True
    return False


def _at(values: pd.Series, rows: pd.Index) -> np.ndarray:
    """`values.reindex(rows).to_numpy()`: taken by position where every row is one of its labels
    (a tenth of a millisecond less per field, over a few hundred fields a workbook); reindexed
    where one is not (its value missing, which may change the kind: whole numbers become floats)."""
    if values.index.is_unique:
        at = values.index.get_indexer(rows)
        if not (at < 0).any():
            return values.array.take(at).to_numpy()
    return values.reindex(rows).to_numpy()


def _each(values: np.ndarray, one) -> np.ndarray:
    """`one` of each value (an object array), as an object array."""
    return np.frompyfunc(one, 1, 1)(values).astype(object, copy=False)


def _fmt_money(given: np.ndarray) -> list[np.ndarray]:
    """Integer cents (an object array) -> '$1,234.56' ('-$5.00' when negative; blank where missing),
    as the pieces of that text (`money_pieces`), which `_fill` joins with the rest of the message."""
    present = pd.notna(given)
    cents = np.where(present, given, 0).astype(np.int64)
    pieces = [np.where(cents < 0, "-$", "$"), *money_pieces(np.abs(cents))]
    return pieces if present.all() else [np.where(present, piece, "") for piece in pieces]


def _fmt_bp(bp: np.ndarray) -> np.ndarray:
    """Hundredths of a percent (integer) -> '74.99%'."""
    return _each(bp, lambda v: "" if pd.isna(v) else f"{int(v) // 100}.{int(v) % 100:02d}%")


def _plain(v) -> str:
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if isinstance(v, pd.Timestamp):
        return day(v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _fmt_plain(values: np.ndarray) -> np.ndarray:
    if pd.api.types.infer_dtype(values, skipna=False) == "string":  # every value a text (most fields): as it is
        return values
    return _each(values, _plain)


def _fmt_ratio(values: np.ndarray) -> np.ndarray:
    """A float fraction -> '105.25%' (floored to the hundredth of a percent)."""
    # rounded to 6 places first, so that 0.3 (0.2999999...) is not floored to 29.99%
    return _each(values, lambda v: "" if pd.isna(v) else f"{np.floor(round(float(v) * BASIS_POINTS, 6)) / 100:.2f}%")


def _fmt_count(values: np.ndarray) -> np.ndarray:
    """A number with thousands separators: 210000 -> '210,000', 7.5 -> '7.5'."""
    return _each(values, lambda v: "" if pd.isna(v) else f"{float(v):,.2f}".rstrip("0").rstrip("."))


FORMATTERS = {"money": _fmt_money, "bp": _fmt_bp, "ratio": _fmt_ratio, "count": _fmt_count}


def money_text(values, cents: bool = True) -> np.ndarray:
    """Integer cents -> '1,234.56' (or whole dollars '1,235' with cents=False), as an object array.

    Each distinct amount is formatted once, so a column of repeated amounts costs little.
    """
    return _money_strings(np.asarray(values, dtype=np.int64), cents)


def _money_strings(values: np.ndarray, show_cents: bool) -> np.ndarray:
    if not len(values):
        return np.array([], dtype=object)
    uniq, inverse = np.unique(values, return_inverse=True)
    if show_cents:
        text = [f"{'-' if v < 0 else ''}{abs(int(v)) // 100:,}.{abs(int(v)) % 100:02d}" for v in uniq]
    else:
        text = [f"{int(v) / 100:,.0f}" for v in uniq]
    return np.array(text, dtype=object)[inverse]


# a word of a citation (a defined term in quotes, "last", "paragraph"), kept as a word
_CITE_WORD = re.compile(r'"[^"]*"|[A-Za-z]{2,}')


def short_cite(cite: str) -> str:
    """The compact form used in the Calculation column: the section number without its title and
    chapter, paragraph codes without their dots and spaces, words kept: 'C.34:1B-246 c.(4)' -> '246c(4)',
    'C.34:1B-246 d. last paragraph (a)' -> '246d last para (a)',
    'C.34:1B-243 "mega project" b.(1)' -> '243 "mega project" b(1)'."""
    text = re.sub(r"^C\.\d+:\w+-", "", str(cite)).replace("last paragraph", "last para")
    out, gap = "", ""
    for token in re.findall(r'"[^"]*"|\S+', text):
        if _CITE_WORD.fullmatch(token):
            out, gap = f"{out} {token}", " "
        else:
            out, gap = out + gap + re.sub(r"(?<=[a-z])\.", "", token), ""
    return out.strip()


@functools.cache
def _pieces(template: str) -> tuple[tuple[str, str | None], ...]:
    """The template's literal text and field names, in order (parsed once per template)."""
    return tuple((literal, name) for literal, name, _spec, _conv in string.Formatter().parse(template))


def _fill(template: str, fields, n: int, formats: dict[str, str]) -> np.ndarray:
    """The template filled in for each of `n` findings: its literal texts and each field's column of
    texts (or pieces of them) joined row by row in one pass (`concat`). `fields` gives a field's
    values (an object array) by name; a name it does not know is blank."""
    pieces: list = []
    for literal, name in _pieces(template):
        if literal:
            pieces.append(literal)
        if name is not None and name in fields:  # a field the finding does not give is blank
            pieces.append(FORMATTERS.get(formats.get(name, ""), _fmt_plain)(fields[name]))
    return concat(pieces, n) if pieces else np.full(n, "", dtype=object)


class _Fields(dict):
    """The fields of one group of findings (rows `at` of the raw findings), each taken from its
    column's values when first asked for."""

    def __init__(self, columns: dict[str, np.ndarray], at: np.ndarray):
        super().__init__()
        self.columns, self.at = columns, at

    def __contains__(self, name) -> bool:
        return name in self.columns

    def __missing__(self, name: str) -> np.ndarray:
        self[name] = self.columns[name][self.at]
        return self[name]


def _blank_as(values: np.ndarray, default) -> np.ndarray:
    """The values with each missing one given as `default` (itself blank when missing)."""
    fill = "" if default is None or (not isinstance(default, str) and pd.isna(default)) else default
    return np.where(pd.isna(values), fill, values).astype(object, copy=False)


def render(raw: pd.DataFrame, sheet: str, table: dict[str, dict]) -> pd.DataFrame:
    """Message, citation, severity and column of every finding of one sheet.

    Returns `raw`'s `row` and the columns Column, Code, Severity, Message, Citation, in `raw`'s
    order of labels. Each code (and variant) is rendered over all its findings at once.
    """
    columns = ["row", "Column", "Code", "Severity", "Message", "Citation"]
    if raw.empty:
        return pd.DataFrame(columns=columns)
    n = len(raw)
    # each column's values as an object array, converted once; a group takes its rows of those it reads
    values = {c: raw[c].to_numpy(dtype=object) for c in raw.columns if c != "sheet"}
    values["sheet"] = np.full(n, sheet, dtype=object)
    variant = raw["variant"].fillna("default") if "variant" in raw else pd.Series("default", index=raw.index)
    out = {c: np.empty(n, dtype=object) for c in ["Column", "Code", "Severity", "Message", "Citation"]}
    for (code, which), at in raw.groupby([raw["code"], variant], sort=False).indices.items():
        group = _Fields(values, at)
        entry = table[code]
        messages = entry["message"]
        template = messages if isinstance(messages, str) else messages[which]
        formats = entry.get("formats", {})
        given = group["column"] if "column" in group else np.full(len(at), None, dtype=object)
        out["Column"][at] = _blank_as(given, entry.get("column"))
        out["Code"][at] = code
        # a calculator may pass `severity` to give one code two severities (e.g. N vs blank)
        out["Severity"][at] = _blank_as(group["severity"], entry["severity"]) if "severity" in group else entry["severity"]
        out["Message"][at] = _fill(template, group, len(at), formats)
        out["Citation"][at] = _fill(entry["citation"], group, len(at), formats)
    # a finding's column and citation repeat across its rows: each distinct text held once (a full sheet's
    # million findings made as many copies of a few dozen texts, about 0.1 KB a finding)
    out["Column"], out["Citation"] = held_once(out["Column"]), held_once(out["Citation"])
    # keep the order found (raw order), which the per-row Findings column relies on
    order = np.argsort(raw.index.to_numpy(), kind="stable") if not raw.index.is_monotonic_increasing else slice(None)
    return pd.DataFrame({"row": raw["row"].to_numpy()[order], **{c: v[order] for c, v in out.items()}}, index=raw.index[order])
