"""The rulebook: every statutory value of the rules data, with its citation, as a table a reviewer
checks figures against without the code.

`rulebook(programs)` builds the table from the rules folders (`batch/programs/<p>/`), one row per
value: a parameter's dated values give one row each (oldest first, with the dates each was in
force), a case (a value picked by a column, `by:`) and a tier (a row of an ordered table) one row
each, and a program with statute versions (`statute_version:` files) one row per value of each
version, as the rows of that version use them. `write_rules_sheet` writes it as the `Rules`
sheet of a returned workbook (the programs present); `write_rulebook` writes the whole rulebook
as `njcredits-rules.xlsx` (`njcredits rules --out DIR`). A value or date the rules data flags as
not written in its cited text (`not_in_text`) says so first in its Interpretation, before the
reading that supplies it. Nothing here names a program: the rows,
texts and units all come from the rules data, and values read as `batch.programs._kit.rules_text` writes
them in the column hints (money as $25,000, shares as 75%, dates as YYYY-MM-DD).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import xlsxwriter

from batch import __version__
from batch.programs._kit import rules as rules_mod
from batch.programs._kit import rules_text
from batch.workbook import looks

COLUMNS = [
    "Sheet",
    "Program",
    "Rules version",
    "Parameter",
    "Description",
    "Value",
    "In force from",
    "In force until",
    "Citation",
    "Interpretation",
]
TITLE = "Rules used by this workbook"
RULEBOOK_TITLE = "njcredits rulebook: every program's rules"
RULEBOOK_NAME = "njcredits-rules.xlsx"
# Widths (characters) of the columns whose long texts wrap; the others are as wide as their
# longest value, within SIZED's bounds.
WRAPPED = {"Rules version": 34, "Description": 50, "Value": 40, "Citation": 28, "Interpretation": 60}
SIZED = {"Sheet": (10, 24), "Program": (12, 36), "Parameter": (14, 40), "In force from": (13, 13), "In force until": (13, 13)}
# units written after a count ("10 years"); singular for 1
COUNTED = {"years": ("year", "years"), "periods": ("period", "periods"), "jobs": ("job", "jobs")}
FLAG = {True: "Yes", False: "No"}
_TIER_FIELDS = {"area": "area", "not_area": "not area", "any_flag": "any flag Y", "all_flags": "all flags Y"}


# --- values as text ---------------------------------------------------------------------------


def _ratio(value) -> str:
    """75%, 7.5%; a share with no exact decimal as its fraction too: '2/3 (66.67%)'."""
    r = Fraction(value)
    den = r.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    if den == 1:
        return rules_text.percent(r)
    return f"{r.numerator}/{r.denominator} ({float(r * 100):.2f}%)"


def _number(value) -> str:
    if isinstance(value, bool):
        return FLAG[value]
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,g}" if not value.is_integer() else f"{int(value):,}"
    return str(value)


def value_text(unit: str, value) -> str:
    """A loaded value (cents for USD, Fraction for ratio, Timestamp for date) as the product writes
    it: `$25,000`, `75%`, `2014-10-24`, `10 years`, `Yes`; a list item by item; None is `none`
    (the rules data's `null`: no value in that text)."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(unit, v) if unit not in COUNTED else _plain(unit, v) for v in value)
    if unit == "USD":
        return rules_text.money(value)
    if unit == "ratio":
        return _ratio(value)
    if unit == "date":
        return rules_text.day(value)
    if unit in COUNTED and isinstance(value, (int, float)) and not isinstance(value, bool):
        one, many = COUNTED[unit]
        return f"{_number(value)} {one if value == 1 else many}"
    return _plain(unit, value)


def _plain(unit: str, value) -> str:
    if unit in ("year", "index", "month-day", "text", "column", "class"):  # a year is never 2,007
        return FLAG[value] if isinstance(value, bool) else str(value)
    return _number(value)


def _extra_text(key: str, value, unit: str) -> str:
    """A tier's other figure (min_jobs, min_capex, installments, ...) as text."""
    if key.startswith("min_capex"):  # converted to cents when loaded (batch.programs._kit.rules._tiers)
        return value_text("USD", value)
    if isinstance(value, (list, tuple)):
        return ", ".join(_extra_text(key, v, unit) for v in value)
    if key.startswith("min_") and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return FLAG[value] if isinstance(value, bool) else str(value)


def _tier_text(tier: rules_mod.Tier, unit: str, has_value: bool, number: int, count: int) -> tuple[str, str]:
    """A tier's value, and when it applies: its place in the table, label, conditions and figures."""
    where = [f"tier {number} of {count}" + (f": {tier.label}" if tier.label else "")]
    for attr, words in _TIER_FIELDS.items():
        names = getattr(tier, attr)
        if names:
            where.append(f"{words}: {', '.join(names)}")
    where += [f"{k.replace('_', ' ')}: {_extra_text(k, v, unit)}" for k, v in tier.extra.items()]
    return (value_text(unit, tier.value) if has_value else ""), "; ".join(where)


# --- the table --------------------------------------------------------------------------------


def _raw(program: str) -> dict[str | None, dict]:
    """The rules folder's parameters as written (the texts a tier keeps only there: the table's
    description and unit, each tier's interpretation): None -> the shared parameters, a statute
    version -> its parameters on its base, as `batch.programs._kit.rules.load` resolves them."""
    shared: dict = {}
    statute: dict[str, dict] = {}
    for path in sorted((rules_mod.RULES_DIR / program).glob("*.yaml")):
        if path.name == "findings.yaml":
            continue
        doc = rules_mod._load_yaml(path)
        if doc.get("statute_version") is not None:
            statute[str(doc["statute_version"])] = doc
        else:
            shared.update(doc["parameters"])
    return {None: shared, **rules_mod._with_base(statute)}


def _day(ts) -> str:
    return "" if ts is None else rules_text.day(ts)


def _steps(param: rules_mod.Parameter) -> Iterable[tuple[object, str, str]]:
    """Each value with the day it took effect and the day before the next one did (oldest first)."""
    for i, (since, value) in enumerate(zip(param.since, param.values, strict=True)):
        following = param.since[i + 1] if i + 1 < len(param.since) else None
        until = "" if following is None else rules_text.day(pd.Timestamp(following) - dt.timedelta(days=1))
        yield value, _day(since), until


def _joined(*texts: str) -> str:
    return "\n".join(t.strip() for t in texts if t and t.strip())


# what the Interpretation column says first of a value or date the cited text does not write
NOT_IN_TEXT = {
    ("value",): "The value is not written in the cited text.",
    ("date",): "The date in force is not written in the cited text.",
    ("date", "value"): "Neither the value nor the date in force is written in the cited text.",
}


def _not_in_text(flags) -> str:
    return NOT_IN_TEXT[tuple(sorted(set(flags)))] if flags else ""


def _program_rows(program) -> list[dict]:
    loaded = rules_mod.load(program.rules)
    raw = _raw(program.rules)
    common = {"Sheet": program.name, "Program": program.schema.program, "Rules version": loaded.label}
    groups = [(None, loaded.parameters)] + [(v, params) for v, params in loaded.versions.items()]
    rows = []
    for version, params in groups:
        written = raw[version]
        for key, param in params.items():
            spec = written[key]
            unit = spec.get("unit", "")
            picked = [f"Statute Version {version}"] if version is not None else []
            if isinstance(param, rules_mod.Parameter):
                cases = [(picked, param)]
            elif isinstance(param, dict):  # cases: the column `by` picks one
                cases = [([*picked, f"{spec.get('by')}: {case}"], p) for case, p in param.items()]
            else:  # tiers: an ordered table
                for i, (tier, tier_spec) in enumerate(zip(param, spec["tiers"], strict=True), start=1):
                    value, where = _tier_text(tier, unit, "value" in tier_spec, i, len(param))
                    rows.append(
                        {
                            **common,
                            "Parameter": key,
                            "Description": spec.get("description", ""),
                            "Value": _joined(value, "; ".join([*picked, where])),
                            "In force from": "",
                            "In force until": "",
                            "Citation": tier.cite,
                            "Interpretation": _joined(
                                _not_in_text(tier.not_in_text), spec.get("interpretation", ""), tier_spec.get("interpretation", "")
                            ),
                        }
                    )
                continue
            for where, p in cases:
                for value, since, until in _steps(p):
                    rows.append(
                        {
                            **common,
                            "Parameter": key,
                            "Description": p.description,
                            "Value": _joined(value_text(p.unit, value), "; ".join(where)),
                            "In force from": since,
                            "In force until": until,
                            "Citation": p.cite,
                            "Interpretation": _joined(_not_in_text(p.not_in_text), p.interpretation),
                        }
                    )
    return rows


def rulebook(programs) -> pd.DataFrame:
    """One row per value of each program's rules (Program objects of batch.programs.PROGRAMS), in
    the programs' order and the rules files' order; columns COLUMNS, every cell text ('' blank)."""
    return pd.DataFrame(_text_rows(programs), columns=COLUMNS).astype(str)


def _text(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _text_rows(programs) -> list[tuple[str, ...]]:
    """The rulebook's rows, each a tuple of the COLUMNS' texts ('' blank)."""
    return [tuple(_text(row.get(c)) for c in COLUMNS) for program in programs for row in _program_rows(program)]


# --- the sheet --------------------------------------------------------------------------------


def _widths(rows) -> list[float]:
    """Each column's width: its longest line of text (or header word), between its bounds."""
    out = []
    for j, col in enumerate(COLUMNS):
        longest = max((len(line) for row in rows for line in row[j].split("\n")), default=0)
        longest = max(longest, *(len(w) for w in col.split()))
        if col in WRAPPED:
            out.append(float(min(WRAPPED[col], max(12, longest + 2))))
        else:
            low, high = SIZED[col]
            out.append(float(min(high, max(low, longest + 2))))
    return out


class _Programs(tuple):
    """Programs as the key of their rulebook's layout: the same programs, in the same order, are
    the same key (a Program holds dicts, so it has no hash of its own)."""

    def __hash__(self):
        return hash(tuple(id(p) for p in self))

    def __eq__(self, other):
        return len(self) == len(other) and all(a is b for a, b in zip(self, other, strict=True))


@functools.lru_cache(maxsize=64)
def _cached_layout(programs: _Programs) -> tuple[tuple[tuple[str, ...], ...], tuple[float, ...], tuple[int, ...]]:
    rows = tuple(_text_rows(programs))
    widths = _widths(rows)
    tall = np.ones(len(rows), dtype=np.int64)
    for j, (col, width) in enumerate(zip(COLUMNS, widths, strict=True)):
        if col in WRAPPED:  # each wrapped column's lines, every row's at once
            tall = np.maximum(tall, looks.line_counts(pd.Series([row[j] for row in rows], dtype=object), width))
    talls = tuple(tall.tolist())
    return rows, tuple(widths), talls


def _layout(programs) -> tuple[tuple[tuple[str, ...], ...], tuple[float, ...], tuple[int, ...]]:
    """The rulebook of `programs` as the sheet lays it out: its rows (text), the columns' widths and
    each row's height in lines; worked out once in a process for the same programs (the rules do
    not change while it runs)."""
    return _cached_layout(_Programs(programs))


@dataclass
class RulesPart:
    """The part xlsxwriter writes a returned workbook's Rules sheet as, and what the writer puts in
    its place (`settle`): the part as xlsxwriter first wrote it in this process for the same sheet,
    when its cells were not written again (`known`); else the part as written, kept for the next
    workbook (`key`: None when it may not be kept)."""

    name: str  # the part's name in the workbook xlsxwriter writes: xl/worksheets/sheetN.xml
    key: tuple | None = None
    known: bytes | None = None

    def settle(self, written: bytes) -> bytes:
        """The part's bytes in the returned workbook, given those xlsxwriter wrote."""
        if self.known is not None:
            return self.known
        if self.key is not None:
            if len(_WRITTEN) >= KEPT_PARTS:
                _WRITTEN.pop(next(iter(_WRITTEN)))
            _WRITTEN[self.key] = written
        return written


# The Rules sheets written in this process, as xlsxwriter wrote them: a worker writes the same sheet
# for every workbook of the same programs, and its cells (every value of the rules data) are most of
# what the tool's sheets of a small workbook cost to write. A sheet's part is the same bytes whenever
# its rows, its name, its title, its place among the sheets and the style index of each format it
# uses are, in a workbook whose text is written in its cells (constant memory: no shared strings):
# that is its key.
_WRITTEN: dict[tuple, bytes] = {}
KEPT_PARTS = 16


def write_rules_sheet(wb, fmts: looks.Formats, programs, name: str = "Rules", *, title: str = TITLE, keep: bool = False) -> RulesPart:
    """The rulebook of `programs` as the worksheet `name` of `wb` (an xlsxwriter Workbook in
    constant-memory mode: every row written once, top to bottom): a title, a header row (frozen,
    repeated on every printed page, with a filter), then one row per value, each as tall as its
    longest wrapped text. Every cell is text (`write_string`), never a formula.

    `keep`: the writer puts the part returned (`RulesPart.settle`) in place of the sheet's part
    once the workbook is closed. When this process wrote the same sheet before (`_WRITTEN`), with
    every format it uses already in the workbook's style table at the same index, only the sheet's
    settings are written here (its defined names, print titles and filter, which are the workbook's),
    not its cells: the part written before takes its place."""
    rows, widths, talls = _layout(programs)
    ws = wb.add_worksheet(name)
    wrap, plain = fmts.get(wrap=True), fmts.get(top=True)
    titled, header = fmts.get(title=True), fmts.get(header=looks.HEADER_BG)
    part = RulesPart(f"xl/worksheets/sheet{sum(not s.is_chartsheet for s in wb.worksheets())}.xml")
    indices = tuple(f.xf_index for f in (wrap, plain, titled, header))
    if keep and ws.constant_memory and None not in indices:  # text written inline, every format's index fixed before: its cells assign none
        part.key = (_Programs(programs), name, title, indices, part.name)
        part.known = _WRITTEN.get(part.key)
    for j, (col, width) in enumerate(zip(COLUMNS, widths, strict=True)):
        ws.set_column(j, j, width, wrap if col in WRAPPED else plain)
    ws.freeze_panes(2, 0)
    looks.print_setup(ws, 1)
    ws.autofilter(1, 0, max(len(rows), 1) + 1, len(COLUMNS) - 1)
    if part.known is not None:
        return part
    ws.write_string(0, 0, title, titled)
    for j, col in enumerate(COLUMNS):
        ws.write_string(1, j, col, header)
    ws.set_row(1, looks.LINE_HEIGHT * max(looks.lines(col, w) for col, w in zip(COLUMNS, widths, strict=True)))
    styles = [wrap if col in WRAPPED else plain for col in COLUMNS]
    for r, (row, tall) in enumerate(zip(rows, talls, strict=True), start=2):
        if tall > 1:
            ws.set_row(r, looks.LINE_HEIGHT * tall)
        for j, text in enumerate(row):
            if text:
                ws.write_string(r, j, text, styles[j])
    return part


def write_rulebook(path: Path) -> Path:
    """The whole rulebook (every program of batch.programs.PROGRAMS) as `path/njcredits-rules.xlsx`,
    one `Rules` sheet; the folder is created, and the file written under a temporary name and
    renamed, so a failure never leaves a half-written rulebook. Returns the file's path."""
    from batch.programs import PROGRAMS

    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / RULEBOOK_NAME
    tmp = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        wb = xlsxwriter.Workbook(str(tmp), looks.WRITER_OPTIONS)
        wb.set_properties({"title": "njcredits rulebook", "comments": f"njcredits {__version__}"})
        write_rules_sheet(wb, looks.Formats(wb), PROGRAMS, "Rules", title=RULEBOOK_TITLE)
        wb.close()
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out
