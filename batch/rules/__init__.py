"""Statute values as data: one folder per program under `batch/rules/`.

A program folder holds `parameters.yaml` (every amount, threshold and rate with its citation,
the statute text it comes from, a one-line summary, and dated values) and `findings.yaml`
(each finding code with its severity, the input column it points at, a message template and a
citation). `batch/rules/findings.yaml` holds the findings shared by every sheet.

A parameter's values are steps: `{since: DATE, value: V}`; a row's date picks the step in force
(`since: null` means in force for every earlier date). Money (`unit: USD`) is converted to
integer cents and ratios (`unit: ratio`) to exact fractions when loaded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

RULES_DIR = Path(__file__).parent


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

    @property
    def value(self):
        """The value now in force (the last step)."""
        return self.values[-1]

    def _step(self, dates: pd.Series) -> np.ndarray:
        # integer seconds (every date a cell can hold, 9999-12-31 too); `since: null` is the
        # smallest integer, before every date
        starts = np.array(
            [np.iinfo(np.int64).min if s is None else s.to_datetime64().astype("datetime64[s]").view(np.int64) for s in self.since],
            dtype=np.int64,
        )
        return np.searchsorted(starts, dates.to_numpy(dtype="datetime64[s]").view(np.int64), side="right") - 1

    def at(self, dates: pd.Series) -> np.ndarray:
        """The value in force at each date (vectorized); None where no step is yet in force."""
        step = self._step(dates)
        vals = np.array(list(self.values) + [None], dtype=object)
        return vals[np.where(step < 0, len(self.values), step)]

    def next_change(self, dates: pd.Series) -> np.ndarray:
        """The date the next step takes effect after each date (None when none follows)."""
        step = self._step(dates)
        starts = np.array(list(self.since[1:]) + [None], dtype=object)
        return starts[np.clip(step, 0, len(starts) - 1)]


def lookup(table: dict[str, Parameter], keys: pd.Series, dates: pd.Series | None = None) -> tuple[pd.Series, pd.Series]:
    """Per-row value and citation of a parameter table keyed by a code column (e.g. Program).

    Rows whose key has no case get None. With `dates`, each row gets the step in force at its date.
    """
    values = pd.Series(None, index=keys.index, dtype=object)
    cites = pd.Series(None, index=keys.index, dtype=object)
    for case, param in table.items():
        mask = (keys == case).to_numpy()
        if mask.any():
            values[mask] = param.at(dates[mask]) if dates is not None else param.value
            cites[mask] = param.cite
    return values, cites


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


def _tiers(spec: dict) -> tuple[Tier, ...]:
    unit = spec.get("unit", "")
    known = {"label", "cite", "value", "area", "not_area", "any_flag", "all_flags", "interpretation", "summary"}
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


def _load_yaml(path: Path) -> dict:
    with path.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


@cache
def load(program: str) -> Rules:
    """Every YAML file of `batch/rules/<program>/`: files with a `statute_version` go to
    `versions`, the others are merged into `parameters`; `findings.yaml` is the findings table."""
    folder = RULES_DIR / program
    params: dict = {}
    versions: dict[str, dict] = {}
    labels = []
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.yaml")):
        digest.update(path.read_bytes())
        if path.name == "findings.yaml":
            continue
        doc = _load_yaml(path)
        labels.append(str(doc["version"]))
        if doc.get("statute_version") is not None:
            versions[str(doc["statute_version"])] = _parameters(doc)
        else:
            params.update(_parameters(doc))
    findings = {**common_findings(), **_load_yaml(folder / "findings.yaml")}
    return Rules(program, "; ".join(labels), digest.hexdigest(), params, versions, findings)


@cache
def common_findings() -> dict[str, dict]:
    return _load_yaml(RULES_DIR / "findings.yaml")
