"""Statute values as data: one folder per program under `batch/programs/`.

A program folder holds `parameters.yaml` (every amount, threshold and rate with its citation,
the statute text it comes from, a one-line summary, and dated values) and `findings.yaml`
(each finding code with its severity, the input column it points at, a message template and a
citation). `batch/programs/_kit/findings.yaml` holds the findings shared by every sheet.

A parameter's values are steps: `{since: DATE, value: V}`; a row's date picks the step in force
(`since: null` means in force for every earlier date). Money (`unit: USD`) is converted to
integer cents and ratios (`unit: ratio`) to exact fractions when loaded.

A file with a `statute_version` is one version of a statute's text; a later version names its
`base` (the earlier version) and states only the parameters it changes: each parameter it names
replaces the base's whole (a tier list is replaced whole, never merged row by row).

Every file is checked against a strict schema when loaded (`RulesFile`, `FindingEntry`): an
unknown key, a parameter or tier without a citation, or a unit outside `UNITS` stops the load
with the file and the key named, so a misspelt key never silently means "not set".

A citation names a provision of a statute text: each rules file names the texts it cites
(`texts:`), and `sections.yaml` lists, for each text, its sections and every paragraph they have
(a test checks every citation against it). Where a value, or the date a value took effect, is
not written in the cited text, the entry says so (`not_in_text: [value]`, `[date]` or both) and
its `interpretation:` says where it comes from; the schema refuses the flag without one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

RULES_DIR = Path(__file__).resolve().parents[1]  # batch/programs: one folder per program
KIT_DIR = Path(__file__).resolve().parent  # the findings every sheet shares, the statute texts' sections
# libyaml's parser where PyYAML was built with it (its wheels are): the same documents, ten times faster
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The units a parameter may have: money (converted to cents), exact ratios, dates, counts and the
# rest, which are read as they are written.
UNITS = frozenset(
    {"USD", "ratio", "date", "month-day", "years", "year", "periods", "jobs", "count", "index", "list", "text", "flag", "column", "class"}
)
# Keys a tier may carry besides its value and citation: the conditions it applies under and the
# figures a program's tiers add (minimum jobs, capital investment, installments, ...).
TIER_KEYS = frozenset(
    {
        "label", "cite", "value", "area", "not_area", "any_flag", "all_flags", "interpretation", "summary", "not_in_text",
        "min_jobs", "min_jobs_over", "jobs", "min_capex", "min_capex_over", "min_employees", "from_year", "to_year",
        "installments", "basis", "bucket", "categories", "withholdings", "when_blank", "finding", "south_jersey",
        "shares", "starts_at_later_approval",
    }
)  # fmt: skip


# What an entry may say is not written in its cited text: the value itself, or the date it took effect.
NOT_IN_TEXT = ("value", "date")


class RulesError(ValueError):
    """A rules file that does not follow the schema (the message names the file and the key)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepSpec(_Strict):
    since: dt.date | None
    value: Any


NotInText = list[Literal["value", "date"]]


def _explained(not_in_text: list, *interpretations: str) -> None:
    """A value or date not written in the cited text needs an interpretation saying where it comes from."""
    if not_in_text and not any(i.strip() for i in interpretations):
        raise ValueError(f"not_in_text {not_in_text} needs an interpretation saying where the {' and '.join(not_in_text)} comes from")


class CaseSpec(_Strict):
    cite: str | None = None
    source: str = ""
    summary: str = ""
    interpretation: str = ""
    not_in_text: NotInText = []
    value: Any = None
    values: list[StepSpec] | None = None


class ParameterSpec(_Strict):
    description: str
    unit: str
    cite: str | None = None
    source: str = ""
    summary: str = ""
    interpretation: str = ""
    not_in_text: NotInText = []
    comparison: str = ""
    value: Any = None
    values: list[StepSpec] | None = None
    tiers: list[dict[str, Any]] | None = None
    cases: dict[str, CaseSpec] | None = None
    by: str | None = None
    default_case: str | None = None

    @model_validator(mode="after")
    def _complete(self):
        if self.unit not in UNITS:
            raise ValueError(f"unit {self.unit!r} is not one of {', '.join(sorted(UNITS))}")
        given = [k for k in ("value", "values", "tiers", "cases") if k in self.model_fields_set]
        if len(given) != 1:
            raise ValueError(f"exactly one of value, values, tiers, cases is needed (found {', '.join(given) or 'none'})")
        _explained(self.not_in_text, self.interpretation)
        if self.tiers is not None:
            for i, tier in enumerate(self.tiers):
                unknown = set(tier) - TIER_KEYS
                if unknown:
                    raise ValueError(f"tier {i + 1} has unknown keys {sorted(unknown)}")
                if not tier.get("cite"):
                    raise ValueError(f"tier {i + 1} ({tier.get('label', '')}) has no cite")
                flags = tier.get("not_in_text", [])
                if not isinstance(flags, list) or set(flags) - set(NOT_IN_TEXT):
                    raise ValueError(f"tier {i + 1} ({tier.get('label', '')}): not_in_text is a list of {', '.join(NOT_IN_TEXT)}")
                try:
                    _explained(flags, self.interpretation, str(tier.get("interpretation", "")))
                except ValueError as err:
                    raise ValueError(f"tier {i + 1} ({tier.get('label', '')}): {err}") from None
        elif self.cases is not None:
            if not self.by:
                raise ValueError("cases need `by`, the column that picks the case")
            for name, case in self.cases.items():
                if not (case.cite or self.cite):
                    raise ValueError(f"case {name!r} has no cite")
                if ("value" in case.model_fields_set) == (case.values is not None):
                    raise ValueError(f"case {name!r} needs exactly one of value, values")
                try:
                    _explained(case.not_in_text, self.interpretation, case.interpretation)
                except ValueError as err:
                    raise ValueError(f"case {name!r}: {err}") from None
        elif not self.cite:
            raise ValueError("cite is required")
        return self


class RulesFile(_Strict):
    version: str
    statute_version: str | None = None
    base: str | None = None  # the statute version this one changes
    sources: list[str] = []
    texts: list[str] = []  # the statute texts of sections.yaml its citations name
    parameters: dict[str, ParameterSpec]


class FindingEntry(_Strict):
    severity: Literal["error", "warning", "info"]
    message: str | dict[str, str]
    citation: str
    column: str | None = None
    formats: dict[str, str] = {}
    ineligible: bool = False


def _checked(path: Path, doc: dict, model) -> None:
    try:
        if model is FindingEntry:
            for code, entry in doc.items():
                try:
                    FindingEntry.model_validate(entry)
                except ValidationError as err:
                    raise RulesError(f"{path.parent.name}/{path.name}: finding {code}: {_reason(err)}") from None
        else:
            model.model_validate(doc)
    except ValidationError as err:
        raise RulesError(f"{path.parent.name}/{path.name}: {_reason(err)}") from None


def _reason(err: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(x) for x in e['loc']) or '(file)'}: {e['msg']}" for e in err.errors())


@dataclass(frozen=True)
class Parameter:
    name: str
    description: str
    unit: str
    cite: str
    source: str
    summary: str
    since: tuple[pd.Timestamp | None, ...]
    values: tuple[object, ...]
    interpretation: str = ""
    not_in_text: tuple[str, ...] = ()  # what of it the cited text does not write: value, date

    @property
    def value(self):
        """The value now in force (the last step)."""
        return self.values[-1]

    @cached_property
    def _starts(self) -> np.ndarray:
        """Each step's `since` in integer seconds (every date a cell can hold, 9999-12-31 too);
        `since: null` is the smallest integer, before every date."""
        return np.array(
            [np.iinfo(np.int64).min if s is None else s.to_datetime64().astype("datetime64[s]").view(np.int64) for s in self.since],
            dtype=np.int64,
        )

    def _step(self, dates) -> np.ndarray:
        """The step in force at each date (a Series of dates, or an array of them). A date before the
        first step's `since` takes the first step, as `since: null` does: dating the first value with
        the day its law took effect changes no row (there is no finding for a date before a
        program's first law)."""
        step = np.searchsorted(self._starts, _seconds(dates).view(np.int64), side="right") - 1
        return np.maximum(step, 0)

    def at(self, dates: pd.Series) -> np.ndarray:
        """The value in force at each date (vectorized)."""
        return np.array(self.values, dtype=object)[self._step(dates)]

    def next_change(self, dates: pd.Series) -> np.ndarray:
        """The date the next step takes effect after each date (None when none follows)."""
        step = self._step(dates)
        starts = np.array(list(self.since[1:]) + [None], dtype=object)
        return starts[np.clip(step, 0, len(starts) - 1)]


def _seconds(dates) -> np.ndarray:
    """Dates (a Series, an Index or an array) as datetime64[s]: the type every date a cell can hold fits."""
    if isinstance(dates, (pd.Series, pd.Index)):
        return dates.to_numpy(dtype="datetime64[s]")
    return np.asarray(dates, dtype="datetime64[s]")


@cache
def _cases(names: tuple) -> pd.Index:
    """A parameter table's cases (its keys, in order), as an index to find each row's case in."""
    return pd.Index(list(names), dtype=object)


def lookup(table: dict[str, Parameter], keys: pd.Series, dates: pd.Series | None = None) -> tuple[pd.Series, pd.Series]:
    """Per-row value and citation of a parameter table keyed by a code column (e.g. Program).

    Rows whose key has no case get NaN (missing). With `dates`, each row gets the step in force at its date.
    """
    case = _cases(tuple(table)).get_indexer(keys)  # each row's case (-1: none), in one pass
    at = None if dates is None else _seconds(dates)  # once, for every case
    values = np.full(len(keys), np.nan, dtype=object)  # NaN where no case, as pandas fills an empty object column
    cites = np.full(len(keys), np.nan, dtype=object)
    for i, param in enumerate(table.values()):
        mask = case == i
        if mask.any():
            values[mask] = param.at(at[mask]) if at is not None else param.value
            cites[mask] = param.cite
    return pd.Series(values, index=keys.index, dtype=object), pd.Series(cites, index=keys.index, dtype=object)


def _convert(unit: str, value):
    if value is None:
        return None
    if isinstance(value, list):
        return [_convert(unit, v) for v in value]
    if unit == "USD":
        return int(round(Fraction(str(value)) * 100))
    if unit == "ratio":
        return Fraction(str(value))
    if unit == "date":
        return pd.Timestamp(value)
    return value


def _parameter(name: str, spec: dict, defaults: dict) -> Parameter:
    merged = {**defaults, **spec}
    steps = merged.get("values")
    if steps is None:
        steps = [{"since": None, "value": merged["value"]}]
    steps = sorted(steps, key=lambda s: (s.get("since") is not None, str(s.get("since") or "")))
    unit = merged.get("unit", "")
    return Parameter(
        name=name,
        description=merged.get("description", ""),
        unit=unit,
        cite=merged["cite"],
        source=merged.get("source", ""),
        summary=merged.get("summary", ""),
        since=tuple(None if s.get("since") is None else pd.Timestamp(s["since"]) for s in steps),
        values=tuple(_convert(unit, s["value"]) for s in steps),
        interpretation=merged.get("interpretation", ""),
        not_in_text=tuple(merged.get("not_in_text", ())),
    )


@dataclass(frozen=True)
class Tier:
    """One row of an ordered table: a value, its citation, and the condition it applies under."""

    label: str
    cite: str
    value: object
    area: tuple[str, ...] = ()
    not_area: tuple[str, ...] = ()
    any_flag: tuple[str, ...] = ()
    all_flags: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)  # min_jobs, min_capex, finding, withholdings, ...
    not_in_text: tuple[str, ...] = ()  # what of it the cited text does not write: value, date


def _tiers(spec: dict) -> tuple[Tier, ...]:
    unit = spec.get("unit", "")
    known = {"label", "cite", "value", "area", "not_area", "any_flag", "all_flags", "interpretation", "summary", "not_in_text"}
    out = []
    for t in spec["tiers"]:
        extra = {k: (_convert(unit, v) if k.startswith("min_capex") else v) for k, v in t.items() if k not in known}
        out.append(
            Tier(
                label=t.get("label", ""),
                cite=t["cite"],
                value=_convert(unit, t.get("value")),
                area=tuple(t.get("area", ())),
                not_area=tuple(t.get("not_area", ())),
                any_flag=tuple(t.get("any_flag", ())),
                all_flags=tuple(t.get("all_flags", ())),
                extra=extra,
                not_in_text=tuple(t.get("not_in_text", ()) or spec.get("not_in_text", ())),
            )
        )
    return tuple(out)


def _parameters(doc: dict) -> dict:
    params: dict = {}
    for name, spec in doc.get("parameters", {}).items():
        if "tiers" in spec:
            params[name] = _tiers(spec)
        elif "cases" in spec:
            defaults = {k: v for k, v in spec.items() if k not in ("cases", "by", "default_case")}
            params[name] = {case: _parameter(name, sub, defaults) for case, sub in spec["cases"].items()}
        else:
            params[name] = _parameter(name, spec, {})
    return params


@dataclass(frozen=True)
class Rules:
    """A program's rules folder: parameters shared by every row, and per statute version."""

    program: str
    version: str
    digest: str
    parameters: dict
    versions: dict[str, dict] = field(default_factory=dict)  # statute version -> parameters
    findings: dict[str, dict] = field(default_factory=dict)

    def __getitem__(self, name: str):
        return self.parameters[name]

    @property
    def label(self) -> str:
        """Rules version as shown in the Run sheet: declared versions and content digest."""
        return f"{self.version} (sha256 {self.digest[:12]})"


def _load_yaml(path: Path, model=RulesFile) -> dict:
    """A rules file, checked against its schema."""
    try:
        with path.open(encoding="utf-8") as fh:
            doc = yaml.load(fh, Loader=SAFE_LOADER) or {}
    except (yaml.YAMLError, ValueError) as err:  # ValueError: a date YAML cannot make (2014-13-01)
        raise RulesError(f"{path.parent.name}/{path.name}: not readable YAML ({err})") from None
    _checked(path, doc, model)
    return doc


def _with_base(docs: dict[str, dict]) -> dict[str, dict]:
    """Each statute version's parameters: its base's, with the ones it states replacing them whole."""
    out: dict[str, dict] = {}

    def resolve(version: str, seen: tuple[str, ...] = ()) -> dict:
        if version in seen:
            raise RulesError(f"statute version {version} is its own base ({' -> '.join((*seen, version))})")
        doc = docs[version]
        base = doc.get("base")
        if base is None:
            return dict(doc["parameters"])
        if base not in docs:
            raise RulesError(f"statute version {version} names base {base}, which no file of the folder is")
        return {**resolve(str(base), (*seen, version)), **doc["parameters"]}

    for version in docs:
        out[version] = resolve(version)
    return out


@cache
def load(program: str) -> Rules:
    """Every YAML file of `batch/programs/<program>/`: files with a `statute_version` go to
    `versions` (each on its `base`), the others are merged into `parameters`; `findings.yaml` is
    the findings table."""
    folder = RULES_DIR / program
    params: dict = {}
    statute: dict[str, dict] = {}
    labels = []
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.yaml")):
        digest.update(path.read_bytes())
        if path.name == "findings.yaml":
            continue
        doc = _load_yaml(path)
        labels.append(str(doc["version"]))
        if doc.get("statute_version") is not None:
            statute[str(doc["statute_version"])] = doc
        elif doc.get("base") is not None:
            raise RulesError(f"{program}/{path.name}: `base` is for a file with a statute_version")
        else:
            params.update(_parameters(doc))
    versions = {v: _parameters({"parameters": p}) for v, p in _with_base(statute).items()}
    findings = {**common_findings(), **_load_yaml(folder / "findings.yaml", FindingEntry)}
    return Rules(program, "; ".join(labels), digest.hexdigest(), params, versions, findings)


def rules_of(module: str) -> Rules:
    """The rules of the program a module belongs to (`rules_of(__name__)` in
    `batch/programs/<program>/sheet.py`): its folder is the module's package."""
    return load(module.split(".")[-2])


@cache
def common_findings() -> dict[str, dict]:
    return _load_yaml(KIT_DIR / "findings.yaml", FindingEntry)


# -- the provisions a citation may name ----------------------------------------------------------


class StatuteText(_Strict):
    title: str
    sections: dict[str, list[str]]


class SectionsFile(_Strict):
    texts: dict[str, StatuteText]


@cache
def sections() -> dict[str, dict[str, frozenset[str]]]:
    """`sections.yaml`: statute text -> section -> the paragraphs it has in that text."""
    doc = _load_yaml(KIT_DIR / "sections.yaml", SectionsFile)
    return {text: {sec: frozenset(paras) for sec, paras in t["sections"].items()} for text, t in doc["texts"].items()}


# a section's official citation (C.34:1B-246, C.52:27D-489f, C.34:1B-209.1) or, for a section the
# sources give no codified citation, its public law (P.L.2004 c.65 s.7)
_SECTION = re.compile(r"(C\.\d+[A-Z]?:\d+[A-Z]*-\d+(?:\.\d+)?[a-z]?|P\.L\.\d{4} c\.\d+ s\.\d+)(?:\s+(.+))?")
# ", " between paragraphs, never inside a quoted defined term
_BETWEEN_PARAGRAPHS = re.compile(r',\s+(?=(?:[^"]*"[^"]*")*[^"]*$)')


def citations(cite: str) -> list[tuple[str, str]]:
    """The (section, paragraph) pairs a citation names ('' for a whole section): citations are
    joined by '; ', paragraphs of one section by ', '. A citation that names no section gives
    (its text, None)."""
    out: list[tuple[str, str]] = []
    for one in (c.strip() for c in cite.split(";")):
        m = _SECTION.fullmatch(one)
        if m is None:
            out.append((one, None))
            continue
        paragraphs = _BETWEEN_PARAGRAPHS.split(m.group(2)) if m.group(2) else [""]
        out += [(m.group(1), p.strip()) for p in paragraphs]
    return out
