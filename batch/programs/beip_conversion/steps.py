"""BEIP grant-to-credit conversions (README, sheet `BEIP`, sheet `BEIP_Conversion`; C.34:1B-129 e.).

Pure and vectorized: each row's Accrual Year picks its paragraph of e. in
`batch/programs/beip_conversion/parameters.yaml`; the Approved Amount is split into installments to
the cent (remainder to the last) and each lands in its tax period's `Credit YYYY ($)` column.

The calculation is a sequence of named steps, one per provision of C.34:1B-129 e. Each step reads
the columns earlier steps left on the `Conversions` and adds its own findings and columns:

    paragraph_129e -> first_tax_period_129e -> installments_129e -> tax_period_credits_129e
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pandas as pd

from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable, totals_by
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.rules import Rules
from batch.programs._kit.steps import installments, pick
from batch.programs.beip_conversion.sheet import BEIP_CONVERSION as SPEC

ID, YEAR, AMOUNT, APPROVAL = "Grant ID", "Accrual Year", "Approved Amount ($)", "Approval Year"
CREDIT_COLUMNS = {int(re.search(r"\d{4}", h).group()): h for h in SPEC.computed if h.startswith("Credit ")}


def _share_matrix(tiers) -> tuple[np.ndarray, np.ndarray]:
    """Per tier, the numerators and denominators of its installment shares (padded with 0)."""
    width = max(len(t.extra.get("shares", ())) or t.extra["installments"] for t in tiers)
    num = np.zeros((len(tiers) + 1, width), dtype=np.int64)
    den = np.ones((len(tiers) + 1, width), dtype=np.int64)
    for i, t in enumerate(tiers):
        shares = [Fraction(str(s)) for s in t.extra.get("shares", ())] or [Fraction(1, t.extra["installments"])] * t.extra["installments"]
        for j, share in enumerate(shares):
            num[i, j], den[i, j] = share.numerator, share.denominator
    return num, den


class Conversions(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far (`columns`,
    in the order of the computed columns)."""

    def __init__(self, f: pd.DataFrame, rules: Rules):
        super().__init__(f, rules)
        self.tiers = rules["schedule"]
        self.columns: dict = {}


# -- the steps ----------------------------------------------------------------------------------


def paragraph_129e(s: Conversions) -> None:
    """C.34:1B-129 e.: a grant accrued but not paid converts to tax credits under the paragraph of e.
    that covers its Accrual Year; a year no paragraph covers does not convert."""
    tiers = s.tiers
    year = s.f[YEAR].to_numpy(dtype=np.int64)
    masks = [(year >= t.extra["from_year"]) & (year <= t.extra["to_year"]) for t in tiers]
    s.which = np.select(masks, np.arange(len(tiers)), -1) if len(s.idx) else np.zeros(0, dtype=np.int64)
    s.covered = s.which >= 0
    first, last = min(t.extra["from_year"] for t in tiers), max(t.extra["to_year"] for t in tiers)
    s.emit(
        "ACCRUAL_YEAR_NOT_CONVERTIBLE",
        ~s.covered,
        year=s.f[YEAR],
        first=first,
        last=last,
        citation=s.rules["conversion_section"].cite,
    )


def first_tax_period_129e(s: Conversions) -> None:
    """C.34:1B-129 e.(1)-(13): the credits begin in the tax period the paragraph names, or in a later
    Approval Year where the paragraph says so (e.(1): an Approval Year after its first tax period
    starts the five-year period in that year; that year or earlier, or blank, keeps the first)."""
    start = pick(s.tiers, s.which, "value", 0).astype(np.int64)
    shifts = pick(s.tiers, s.which, "starts_at_later_approval", False).astype(bool)
    approval = s.f[APPROVAL].fillna(0).to_numpy(dtype=np.int64)
    s.start = np.where(shifts & (approval > start), approval, start)


def installments_129e(s: Conversions) -> None:
    """C.34:1B-129 e.(1)-(13): the Approved Amount is issued in the paragraph's installments (its shares,
    or equal parts), each rounded down to the cent, the last taking the remainder."""
    num, den = _share_matrix(s.tiers)
    row_tier = np.where(s.covered, s.which, len(s.tiers))
    s.parts = installments(s.f[AMOUNT].to_numpy(dtype=np.int64), num[row_tier], den[row_tier])
    s.count = (num[row_tier] != 0).sum(axis=1)
    s.columns["Installments"] = np.where(s.covered, s.count, 0).astype(float)
    s.columns["First Tax Period"] = np.where(s.covered, s.start, np.nan)


def tax_period_credits_129e(s: Conversions) -> None:
    """C.34:1B-129 e.: each installment is a credit of the tax period it is issued for, one tax period a
    year from the first, and lands in that year's credit column."""
    for y, header in CREDIT_COLUMNS.items():
        col = pd.array([pd.NA] * len(s.idx), dtype="Int64")
        for i in range(s.parts.shape[1]):
            lands = s.covered & (i < s.count) & (s.start + i == y)
            col[lands] = s.parts[lands, i]
        s.columns[header] = col


STEPS = (
    paragraph_129e,
    first_tax_period_129e,
    installments_129e,
    tax_period_credits_129e,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Conversions(frame, rules), STEPS)
    return Calculation(pd.DataFrame(s.columns, index=s.idx), s.findings, ineligible=pd.Series(~s.covered, index=s.idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Credit per tax period year, and approved amounts by accrual year."""
    rows = frame[~status.isin(["Invalid", "Ineligible"])]
    per_year = pd.DataFrame(
        {
            "Tax Period": [str(y) for y in CREDIT_COLUMNS],
            "Grants": [int(rows[h].notna().sum()) for h in CREDIT_COLUMNS.values()],
            "Credit ($)": [int(rows[h].fillna(0).sum()) for h in CREDIT_COLUMNS.values()],
        }
    )
    by_accrual = totals_by(rows, [YEAR], **{"Grants": (ID, "size"), "Approved ($)": (AMOUNT, "sum")})
    by_accrual[YEAR] = by_accrual[YEAR].astype(str)
    return [
        SummaryTable("Credit per tax period year", per_year, {"Credit ($)": "money"}),
        SummaryTable("Approved amounts by accrual year", by_accrual, {"Approved ($)": "money"}),
    ]
