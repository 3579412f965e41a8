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
from functools import lru_cache
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
        # integer nanoseconds; `since: null` is the smallest integer, before every date
        starts = np.array([np.iinfo(np.int64).min if s is None else s.value for s in self.since], dtype=np.int64)
        return np.searchsorted(starts, dates.to_numpy(dtype="datetime64[ns]").view(np.int64), side="right") - 1

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
    if unit == "USD":
        return int(round(Fraction(str(value)) * 100))
    if unit == "ratio":
        return Fraction(str(value))
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
class Rules:
    program: str
    version: str
    digest: str
    parameters: dict[str, Parameter | dict[str, Parameter]]
    findings: dict[str, dict] = field(default_factory=dict)

    def __getitem__(self, name: str):
        return self.parameters[name]

    @property
    def label(self) -> str:
        """Rules version as shown in the Run sheet: declared version and content digest."""
        return f"{self.version} (sha256 {self.digest[:12]})"


def _load_yaml(path: Path) -> dict:
    with path.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


@lru_cache(maxsize=None)
def load(program: str) -> Rules:
    folder = RULES_DIR / program
    doc = _load_yaml(folder / "parameters.yaml")
    params: dict[str, Parameter | dict[str, Parameter]] = {}
    for name, spec in doc["parameters"].items():
        if "cases" in spec:
            defaults = {k: v for k, v in spec.items() if k not in ("cases", "by")}
            params[name] = {case: _parameter(name, sub, defaults) for case, sub in spec["cases"].items()}
        else:
            params[name] = _parameter(name, spec, {})
    findings = {**common_findings(), **_load_yaml(folder / "findings.yaml")}
    digest = hashlib.sha256()
    for f in sorted(folder.glob("*.yaml")):
        digest.update(f.read_bytes())
    return Rules(program, str(doc["version"]), digest.hexdigest(), params, findings)


@lru_cache(maxsize=None)
def common_findings() -> dict[str, dict]:
    return _load_yaml(RULES_DIR / "findings.yaml")
