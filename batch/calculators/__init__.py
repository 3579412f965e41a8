"""One module per program. Each module defines:

- `SPEC`: the intake sheet (validators), `RULES`: its rules folder, `AWARD_COLUMN`;
- `calculate(frame, rules) -> Calculation`: pure and vectorized over the valid rows;
- `summarize(frame, status, codes, rules) -> list[SummaryTable]`: the sheet's Summary pivots.

`programs()` discovers the modules, so adding a program never touches the pipeline.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import cache

import pandas as pd


@dataclass
class Calculation:
    computed: pd.DataFrame  # the computed columns, indexed like the input frame
    findings: list[pd.DataFrame]  # raw findings (see batch.findings.emit), in the order found
    ineligible: pd.Series  # True where the statute bars the award


@dataclass
class SummaryTable:
    title: str
    table: pd.DataFrame
    formats: dict[str, str] = field(default_factory=dict)  # column -> money (integer cents) | percent


@cache
def programs() -> tuple:
    """Every calculator module, in name order."""
    mods = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "SPEC") and hasattr(mod, "calculate"):
            mods.append(mod)
    return tuple(mods)
