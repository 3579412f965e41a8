"""Reviewer decisions read back from a returned workbook: sign-offs and waivers of warnings.

A reviewer writes in the returned workbook's three reviewer columns (`Reviewer Decision`,
`Reviewer`, `Reviewer Note`) and drops it back in. Per row:
- `Approved` signs the row off as it stands; `Status` does not change;
- `Waive CODE` or `Waive CODE, CODE` accepts the listed warnings of the row, which then no
  longer count toward `Status`; errors cannot be waived (REVIEW_WAIVER_NOT_ALLOWED), a waiver
  needs a note (REVIEW_NOTE_MISSING), a code the row does not have as a warning is reported
  (REVIEW_WAIVER_UNUSED);
- a decision seen before (same decision, reviewer and note, in the ledger) whose row's inputs
  have changed since is not applied (REVIEW_DECISION_STALE): a sign-off never silently covers
  new figures. The inputs are compared by a digest of the row's input cells.

Only rows with a decision are looked at (a loop over the decided rows, not the sheet).
"""

from __future__ import annotations

import hashlib
import re

import pandas as pd

from validators.columns import REVIEW_COLUMNS

DECISION, REVIEWER, NOTE = REVIEW_COLUMNS
APPROVED = re.compile(r"^approved?$", re.I)
WAIVE = re.compile(r"^waive(?:d|s)?\b(.*)$", re.I | re.S)
CODES = re.compile(r"[A-Za-z0-9_]+")
DECISION_COLUMNS = ["sheet", "record_id", "codes", "decision", "reviewer", "note", "digest", "applied"]
CHOICES = (
    "Approved, or Waive CODE (a warning of the row; several: Waive CODE, CODE), with your name in Reviewer and the reason in Reviewer Note"
)


def digest(values) -> str:
    """A digest of a row's input values (as read), which changes when any input changes."""
    text = "\x1f".join("" if v is None else f"{type(v).__name__}:{v}" for v in values)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def review(
    sheet_name: str, reviews: pd.DataFrame, inputs: pd.DataFrame, findings: pd.DataFrame, record_ids, before: pd.DataFrame | None
) -> tuple[pd.DataFrame, dict[tuple[int, str], str], pd.DataFrame]:
    """The decisions of one sheet. `reviews`: per row the reviewer's three entries; `inputs`: the
    row's input cells; `findings`: the sheet's findings (pos, Code, Severity); `before`: decisions
    the ledger holds (sheet, record_id, decision, reviewer, note, digest).

    Returns the REVIEW_* findings (raw: row, code, column, value, variant), the waived findings
    ((row position, code) -> note), and the decisions seen (DECISION_COLUMNS)."""
    decided = reviews.index[reviews[DECISION] != ""]
    raw, waived, seen = [], {}, []
    mine = findings[findings["pos"].isin(decided)]
    codes_of: dict[int, dict[str, str]] = {}
    for pos, code, severity in zip(mine["pos"].tolist(), mine["Code"].tolist(), mine["Severity"].tolist(), strict=True):
        codes_of.setdefault(pos, {}).setdefault(code, severity)
    known = {}
    if before is not None and len(before):
        ours = before[before["sheet"] == sheet_name]
        # the digest each decision was recorded with (the ledger's latest)
        known = {(r.record_id, r.decision, r.reviewer, r.note): r.digest for r in ours.itertuples(index=False)}

    def found(pos: int, code: str, value: str = "", variant: str = "default") -> None:
        raw.append({"row": pos, "code": code, "column": DECISION, "value": value, "variant": variant})

    for pos in decided.tolist():
        decision, reviewer, note = (reviews.at[pos, c] for c in REVIEW_COLUMNS)
        record = str(record_ids[pos])
        now = digest(inputs.iloc[pos].tolist())
        row_codes = codes_of.get(pos, {})
        applied = True
        earlier = known.get((record, decision, reviewer, note))
        if earlier is not None and earlier != now:
            found(pos, "REVIEW_DECISION_STALE", decision)
            applied = False
        waive = WAIVE.match(decision)
        codes = []
        if APPROVED.match(decision):
            pass
        elif waive is None:
            found(pos, "REVIEW_WAIVER_UNUSED", decision, "not_a_decision")
            applied = False
        else:
            codes = [c.upper() for c in CODES.findall(waive.group(1))]
            if not codes:
                found(pos, "REVIEW_WAIVER_UNUSED", decision, "no_code")
            warnings = []
            for code in dict.fromkeys(codes):
                severity = row_codes.get(code)
                if severity == "error":
                    found(pos, "REVIEW_WAIVER_NOT_ALLOWED", code)
                elif severity == "warning":
                    warnings.append(code)
                else:
                    found(pos, "REVIEW_WAIVER_UNUSED", code, "info" if severity == "info" else "default")
            if warnings and not note:
                found(pos, "REVIEW_NOTE_MISSING", ", ".join(warnings))
                applied = False
            applied = applied and bool(warnings)  # a waiver applies when it waives a warning of the row
            if applied:
                waived.update({(pos, code): note for code in warnings})
        seen.append(
            {
                "sheet": sheet_name,
                "record_id": record,
                "codes": ", ".join(codes),
                "decision": decision,
                "reviewer": reviewer,
                "note": note,
                "digest": now if earlier is None else earlier,
                "applied": applied,
            }
        )
    return (
        pd.DataFrame(raw, columns=["row", "code", "column", "value", "variant"]),
        waived,
        pd.DataFrame(seen, columns=DECISION_COLUMNS),
    )
