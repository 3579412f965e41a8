"""BEIP grant-to-credit conversions (README, sheet `BEIP`, sheet `BEIP_Conversion`; C.34:1B-129 e.).

Pure and vectorized: each row's Accrual Year picks its paragraph of e. in
`batch/rules/beip_conversion/parameters.yaml`; the Approved Amount is split into installments to
the cent (remainder to the last) and each lands in its tax period's `Credit YYYY ($)` column.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable
from batch.calculators.shared import installments, pick
from batch.findings import emit
from batch.rules import Rules
from validators.beip import BEIP_CONVERSION as SPEC

RULES = "beip_conversion"
AWARD_COLUMN = "Approved Amount ($)"
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = None
YEAR_COLUMN = "Accrual Year"

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


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    idx = frame.index
    tiers = rules["schedule"]
    year = frame[YEAR].to_numpy(dtype=np.int64)
    masks = [(year >= t.extra["from_year"]) & (year <= t.extra["to_year"]) for t in tiers]
    which = np.select(masks, np.arange(len(tiers)), -1) if len(idx) else np.zeros(0, dtype=np.int64)
    covered = which >= 0
    first, last = min(t.extra["from_year"] for t in tiers), max(t.extra["to_year"] for t in tiers)
    findings = [
        emit(
            "ACCRUAL_YEAR_NOT_CONVERTIBLE",
            idx[~covered],
            year=frame[YEAR],
            first=first,
            last=last,
            citation=rules["conversion_section"].cite,
        )
    ]

    # first tax period: the paragraph's year, or a later Approval Year where the paragraph says so
    start = pick(tiers, which, "value", 0).astype(np.int64)
    shifts = pick(tiers, which, "starts_at_later_approval", False).astype(bool)
    approval = frame[APPROVAL].fillna(0).to_numpy(dtype=np.int64)
    start = np.where(shifts & (approval > start), approval, start)

    num, den = _share_matrix(tiers)
    row_tier = np.where(covered, which, len(tiers))
    parts = installments(frame[AMOUNT].to_numpy(dtype=np.int64), num[row_tier], den[row_tier])
    count = (num[row_tier] != 0).sum(axis=1)

    computed = {
        "Installments": np.where(covered, count, 0).astype(float),
        "First Tax Period": np.where(covered, start, np.nan),
    }
    for y, header in CREDIT_COLUMNS.items():
        col = pd.array([pd.NA] * len(idx), dtype="Int64")
        for i in range(parts.shape[1]):
            lands = covered & (i < count) & (start + i == y)
            col[lands] = parts[lands, i]
        computed[header] = col
    return Calculation(pd.DataFrame(computed, index=idx), findings, ineligible=pd.Series(~covered, index=idx))


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
    by_accrual = rows.groupby(YEAR).agg(**{"Grants": (ID, "size"), "Approved ($)": (AMOUNT, "sum")}).reset_index()
    by_accrual[YEAR] = by_accrual[YEAR].astype(str)
    return [
        SummaryTable("Credit per tax period year", per_year, {"Credit ($)": "money"}),
        SummaryTable("Approved amounts by accrual year", by_accrual, {"Approved ($)": "money"}),
    ]
