"""Reviewer decisions read back from a returned workbook: sign-offs, withdrawals and waivers of warnings.

A reviewer writes in the returned workbook's three reviewer columns (`Reviewer Decision`,
`Reviewer`, `Reviewer Note`) and drops it back in. Per row:
- `Approved` signs the row off as it stands; `Status` does not change;
- `Withdrawn` (with a note) says the record no longer stands (a cancelled transfer, a rescinded
  grant): from this run on it counts in no limit of the portfolio (`withdrawn`, read before the
  row is calculated); the row keeps its computed columns and Status and gets RECORD_WITHDRAWN;
  without a note it is not applied (REVIEW_NOTE_MISSING);
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

import numpy as np
import pandas as pd

from validators.columns import REVIEW_COLUMNS

DECISION, REVIEWER, NOTE = REVIEW_COLUMNS
APPROVED = re.compile(r"^approved?$", re.I)
WITHDRAWN = re.compile(r"^withdrawn?$", re.I)
WAIVE = re.compile(r"^waive(?:d|s)?\b(.*)$", re.I | re.S)
CODES = re.compile(r"[A-Za-z0-9_]+")
DECISION_COLUMNS = ["sheet", "record_id", "codes", "decision", "reviewer", "note", "digest", "applied"]
CHOICES = (
    "Approved; Withdrawn (the record no longer stands: it counts in no limit); or Waive CODE (a warning of the row; several: "
    "Waive CODE, CODE). Your name in Reviewer, the reason in Reviewer Note"
)


def withdrawn_codes(codes: pd.Series) -> np.ndarray:
    """Per record: its findings (`codes`, "CODE; CODE", as the ledger keeps them) say the reviewer
    withdrew it (RECORD_WITHDRAWN)."""
    return codes.fillna("").astype(str).str.contains(r"\bRECORD_WITHDRAWN\b", regex=True).to_numpy(dtype=bool)


def digest(values) -> str:
    """A digest of a row's input values (as read), which changes when any input changes."""
    text = "\x1f".join("" if v is None else f"{type(v).__name__}:{v}" for v in values)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _known(sheet_name: str, before: pd.DataFrame | None) -> dict:
    """The digest each decision of the sheet was recorded with (the ledger's latest), by (record ID,
    decision, reviewer, note)."""
    if before is None or not len(before):
        return {}
    ours = before[before["sheet"] == sheet_name]
    return {(r.record_id, r.decision, r.reviewer, r.note): r.digest for r in ours.itertuples(index=False)}


def _stale(known: dict, record: str, entries: tuple, now: str) -> tuple[str | None, bool]:
    """The digest a decision was recorded with (None: new), and whether the row's inputs changed since."""
    earlier = known.get((record, *entries))
    return earlier, earlier is not None and earlier != now


def withdrawn(sheet_name: str, reviews: pd.DataFrame | None, inputs: pd.DataFrame, record_ids, before: pd.DataFrame | None) -> np.ndarray:
    """Per row: the reviewer withdrew its record, and the withdrawal applies (`Withdrawn` with a
    Reviewer Note, not stale): the record counts in no limit of the portfolio. Read before the rows
    are calculated (the sheet's own limits leave it out too); `review` reports it."""
    out = np.zeros(len(inputs), dtype=bool)
    if reviews is None:
        return out
    decisions = reviews[DECISION]
    asked = reviews.index[decisions.str.match(WITHDRAWN) & reviews[NOTE].ne("")]
    known = _known(sheet_name, before)
    for pos in asked.tolist():  # the withdrawn rows only
        entries = tuple(reviews.at[pos, c] for c in REVIEW_COLUMNS)
        out[pos] = not _stale(known, str(record_ids[pos]), entries, digest(inputs.iloc[pos].tolist()))[1]
    return out


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
    known = _known(sheet_name, before)

    def found(pos: int, code: str, value: str = "", variant: str = "default") -> None:
        raw.append({"row": pos, "code": code, "column": DECISION, "value": value, "variant": variant})

    for pos in decided.tolist():
        decision, reviewer, note = (reviews.at[pos, c] for c in REVIEW_COLUMNS)
        record = str(record_ids[pos])
        now = digest(inputs.iloc[pos].tolist())
        row_codes = codes_of.get(pos, {})
        applied = True
        earlier, stale = _stale(known, record, (decision, reviewer, note), now)
        if stale:
            found(pos, "REVIEW_DECISION_STALE", decision)
            applied = False
        waive = WAIVE.match(decision)
        codes = []
        if APPROVED.match(decision):
            pass
        elif WITHDRAWN.match(decision):  # `withdrawn` read it before the calculation, alike
            if not note:
                found(pos, "REVIEW_NOTE_MISSING", decision, "withdrawal")
                applied = False
            elif applied:
                found(pos, "RECORD_WITHDRAWN", note)
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
