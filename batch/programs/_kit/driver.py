"""The steps driver every program's `calculate` uses: a program's steps share one object (a
subclass of `Steps`: the rows, the rules, the findings so far and what the steps have computed),
and `run` calls each step on it in the statute's order. No calculator writes its own loop."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import pandas as pd

from batch.programs._kit.findings import emit
from batch.programs._kit.rules import Rules

S = TypeVar("S", bound="Steps")


class Steps:
    """The rows of the sheet (`f`, indexed by row label: `idx`, `n` rows), the rules, and the
    findings the steps have given so far; a program's subclass adds what its steps compute."""

    def __init__(self, f: pd.DataFrame, rules: Rules):
        self.f, self.rules = f, rules
        self.idx, self.n = f.index, len(f)
        self.findings: list[pd.DataFrame] = []

    def emit(self, code: str, mask, **fields) -> None:
        """A finding on the rows where `mask` holds (each field a scalar or a Series indexed like the
        sheet); nothing where it holds nowhere."""
        rows = self.idx[mask]
        if len(rows):
            self.findings.append(emit(code, rows, **fields))

    def series(self, values) -> pd.Series:
        """Values over every row, as a Series indexed like the sheet."""
        return pd.Series(values, index=self.idx)


def run(state: S, steps: Iterable[Callable[[S], None]]) -> S:
    """Each step in turn on `state` (each reads what the earlier ones computed); returns `state`."""
    for step in steps:
        step(state)
    return state
