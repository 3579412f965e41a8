"""Every program, one folder each, found by the code: `batch/programs/<program>/` declares
`PROGRAM = Program(...)` (see `batch.programs._kit.program`). ORDER, the one ordered list of
program names (the contract's order of intake sheets: the template's and the pipeline's), is the
only place a program is named. `_kit/` holds what every program uses.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

from batch.programs._kit.program import (
    AS_OF,
    CROSS_WORKBOOK_LIMITS,
    NEEDS,
    PRIOR_INCENTIVES,
    AcrossRows,
    Intake,
    Limit,
    Portfolio,
    PriorIncentive,
    Program,
    Records,
    Sample,
)

ORDER = (
    "grow_nj",
    "grow_nj_compliance",
    "transfers",
    "beip",
    "beip_conversion",
    "brrap",
    "erg_residential",
    "emerge",
    "gsgz_property",
)
HERE = Path(__file__).parent

__all__ = [
    "AS_OF",
    "BY_NAME",
    "CROSS_WORKBOOK_LIMITS",
    "NEEDS",
    "ORDER",
    "PRIOR_INCENTIVES",
    "PROGRAMS",
    "AcrossRows",
    "Intake",
    "Limit",
    "Portfolio",
    "PriorIncentive",
    "Program",
    "Records",
    "Sample",
]


def folders() -> list[str]:
    """The program folders here: each folder with an `__init__.py`, but `_kit`."""
    return sorted(p.name for p in HERE.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_"))


@cache
def discover() -> tuple[Program, ...]:
    """Every program's declaration, in ORDER. A folder missing from ORDER, or a name of ORDER
    without its folder, is an error naming it: a program is never left out silently."""
    found = set(folders())
    if found != set(ORDER):
        missing, unknown = sorted(found - set(ORDER)), sorted(set(ORDER) - found)
        raise ImportError(f"batch/programs: program folders not in ORDER {missing}, names in ORDER without a folder {unknown}")
    programs = tuple(importlib.import_module(f"{__name__}.{name}").PROGRAM for name in ORDER)
    for name, program in zip(ORDER, programs, strict=True):
        if program.rules != name:
            raise ImportError(f"batch/programs/{name}: its declaration's steps are those of {program.rules!r}, not its own folder's")
    return programs


def prior_incentive_sheets() -> dict[str, str]:
    """Each sheet whose records are prior incentives of a Grow NJ application (C.34:1B-247 e.: BEIP,
    BRRAP, GrowNJ), with the column that says when one was received (its date, else its year)."""
    return {m.name: m.prior_incentive.date or m.year_column for m in discover() if m.prior_incentive}


def __getattr__(name: str):
    """PROGRAMS and BY_NAME are found when first asked for, so a program's own modules can import
    the kit (`batch.programs._kit`) without importing every program."""
    if name == "PROGRAMS":
        return discover()
    if name == "BY_NAME":
        return {p.name: p for p in discover()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
