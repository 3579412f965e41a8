"""Reviewer decisions read back from a returned workbook: sign-offs, withdrawals and waivers of warnings.

A reviewer writes in the returned workbook's three reviewer columns (`Reviewer Decision`,
`Reviewer`, `Reviewer Note`) and drops it back in. Per row:
- `Approved` signs the row off as it stands; `Status` does not change;
- `Withdrawn` (with a note) says the record no longer stands (a cancelled transfer, a rescinded
  grant): from this run on it counts in no limit of the portfolio (`withdrawn`, read before the
  row is calculated); the row keeps its computed columns and Status and gets RECORD_WITHDRAWN;
  without a note it is not applied (REVIEW_NOTE_MISSING);
- `Waive CODE` or `Waive CODE, CODE` accepts the listed warnings of the row, which then no
  longer count toward `Status`; errors cannot be waived (REVIEW_WAIVER_NOT_ALLOWED: where one code
  is both a warning and an error of the row, its warnings are waived and its errors are not), a
  waiver needs a note (REVIEW_NOTE_MISSING), a code the row does not have as a warning is reported
  (REVIEW_WAIVER_UNUSED).

A decision covers the row's values in the columns the program reads (`row_inputs`: a column the
tool ignores, a blank column, a second column of a field change nothing) as the tool returned them
in the workbook it was written in: a new decision is compared with the row's latest version in the
ledger (`returned`), a decision seen before with the values it was recorded with. Where they differ
the decision is stale (REVIEW_DECISION_STALE, naming each changed column with its value then and
now), is not applied, and is written back with ` (stale)`; that suffix read back is the same stale
decision (never a new one), and the decision typed again without it is a new decision, covering the
row as it now stands. A row is known by its record ID and which of the rows holding that ID it is
(`occurrence`: a repeated ID, DUPLICATE_ID, is another row).

Only rows with a decision are looked at (a loop over the decided rows, not the sheet).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from validators.columns import REVIEW_COLUMNS

DECISION, REVIEWER, NOTE = REVIEW_COLUMNS
APPROVED = re.compile(r"^approved?$", re.I)
WITHDRAWN = re.compile(r"^withdrawn?$", re.I)
WAIVE = re.compile(r"^waive(?:d|s)?\b(.*)$", re.I | re.S)
CODES = re.compile(r"[A-Za-z0-9_]+")
STALE_SUFFIX = " (stale)"
STALE = re.compile(r"\s*\(stale\)$", re.I)
DECISION_COLUMNS = [
    "sheet", "record_id", "codes", "decision", "reviewer", "note", "digest", "applied", "occurrence", "inputs", "state",
]  # fmt: skip
# a decision's state in a run: wholly applied, applied to some of what it names, not applied, stale
STATES = ("applied", "partly applied", "not applied", "stale")
CHOICES = (
    "Approved: signed off as it stands. Withdrawn: the record no longer stands (counts in no limit). "
    "Waive CODE or Waive CODE, CODE: warnings of the row. A waiver or withdrawal needs a Reviewer Note."
)


def withdrawn_codes(codes: pd.Series) -> np.ndarray:
    """Per record: its findings (`codes`, "CODE; CODE", as the ledger keeps them) say the reviewer
    withdrew it (RECORD_WITHDRAWN)."""
    return codes.fillna("").astype(str).str.contains(r"\bRECORD_WITHDRAWN\b", regex=True).to_numpy(dtype=bool)


def digest(values) -> str:
    """A digest of a row's input values (as read), which changes when any input changes: how the
    decisions recorded before the ledger kept their values were compared (every kept column)."""
    text = "\x1f".join("" if v is None else f"{type(v).__name__}:{v}" for v in values)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def inputs_digest(inputs: str | None) -> str:
    """The digest of a row's values in the columns the program reads (`row_inputs`' JSON)."""
    return hashlib.sha256((inputs or "").encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _as_read(kind: str, values: pd.Series) -> np.ndarray:
    """A column's values as its reader read them (none missing), column at a time: money in dollars
    (cents over 100), a date in ISO form, a percent as its fraction, a yes/no answer as Yes or No."""
    if kind == "money":
        return values.to_numpy(dtype=np.int64) / 100
    if kind == "date":
        return pd.to_datetime(values).dt.strftime("%Y-%m-%d").to_numpy(dtype=object)
    if kind == "yesno":
        return np.where(values.to_numpy(dtype=bool), "Yes", "No").astype(object)
    if kind in ("percent", "number"):
        return values.to_numpy(dtype=float)
    if kind == "integer":
        return values.to_numpy(dtype=np.int64)
    return values.astype(str).to_numpy(dtype=object)


def row_inputs(raw: pd.DataFrame, typed: pd.DataFrame | None = None, kinds: dict[str, str] | None = None) -> np.ndarray:
    """Per row: its values in the columns the program reads (`raw`: one column per field, the first
    column naming it), as one JSON object by field (pandas' writer over the whole frame).

    A value is what the column's reader read (`typed`, by `kinds`; `_as_read`): the same figure
    written another way (`1,250,000.00` or the number 1250000, the text `2026-01-05` or a date) is
    the same value, so a CSV and the workbook returned from it give the same values. A cell the
    reader could not read (blank, or bad) is kept as its text, so a change to it is seen. Every
    column is converted at once (a sheet of 100,000 rows and 44 columns: no cell by cell work), a
    block of `INPUTS_BLOCK` rows at a time: the values converted and the JSON text of a block are
    freed before the next (converted whole, 100,000 GrowNJ rows took about 700 MB more at the peak
    than the lines kept)."""
    if raw.empty:
        return np.full(len(raw), "{}", dtype=object)
    out = np.empty(len(raw), dtype=object)
    for start in range(0, len(raw), INPUTS_BLOCK):
        block = slice(start, start + INPUTS_BLOCK)
        out[block] = _row_inputs(raw.iloc[block], typed.iloc[block] if typed is not None else None, kinds)
    return out


def json_lines(text: str) -> np.ndarray:
    """The objects of pandas' JSON lines (`to_json(orient="records", lines=True)`), one a row: split
    at the newlines that end them only (a text value's newline is escaped in JSON, but a NEL or a
    line separator it holds is not, and `str.splitlines` would split the row there)."""
    return np.array(text.removesuffix("\n").split("\n"), dtype=object)


def json_records(frame: pd.DataFrame, **options) -> np.ndarray:
    """`json_lines(frame.to_json(orient="records", lines=True, **options))` without pandas'
    conversion to lines, which reads the text again a byte at a time: the records' array is cut
    before each record's first key (`},{"key":`). A text value cannot hold that cut (its quotes are
    escaped), and a value that is an object or a list of them could: when the cuts are not one
    fewer than the rows, the lines are made as before, as they are for fewer than `CUT_FROM` rows
    (where the conversion costs less than the cut's own steps)."""
    if len(frame) < CUT_FROM or len(frame.columns) == 0:
        return json_lines(frame.to_json(orient="records", lines=True, **options)) if len(frame) else np.empty(0, dtype=object)
    text = frame.to_json(orient="records", **options)
    first = _first_key(frame.columns[0], tuple(sorted(options.items())))
    parts = text[1:-1].split("}," + first)
    if len(parts) != len(frame):
        return json_lines(frame.to_json(orient="records", lines=True, **options))
    rows = [first + p + "}" for p in parts]
    rows[0], rows[-1] = parts[0] + "}", first + parts[-1]
    return np.array(rows, dtype=object)


CUT_FROM = 1_000  # rows from which `json_records` cuts the records' array


@functools.lru_cache(maxsize=256)
def _first_key(label, options: tuple) -> str:
    """A record's start as pandas writes it for a frame whose first column is `label`: `{"key":`."""
    key = pd.DataFrame({label: [None]}).to_json(orient="records", **dict(options))  # [{"key":null}]
    return key[1 : key.rindex(":") + 1]


INPUTS_BLOCK = 20_000  # rows whose read values are converted and written as JSON at once (`row_inputs`)


def _row_inputs(raw: pd.DataFrame, typed: pd.DataFrame | None, kinds: dict[str, str] | None) -> np.ndarray:
    """`row_inputs` of one block of rows."""
    shown = {}
    for column in raw.columns:
        read = np.zeros(len(raw), dtype=bool)
        if typed is not None and kinds and column in typed.columns and column in kinds:
            value = typed[column]
            read = value.notna().to_numpy(dtype=bool)
            if read.all():
                shown[column] = _as_read(kinds[column], value)
                continue
        out = np.empty(len(raw), dtype=object)
        if read.any():
            out[read] = _as_read(kinds[column], value[read])
        cells = raw[column].to_numpy(dtype=object)[~read]  # blank or bad: the cell's text
        text = pd.Series(cells, dtype=object).astype(str).to_numpy(dtype=object)
        text[pd.isna(cells)] = ""
        out[~read] = text
        shown[column] = out
    return json_records(pd.DataFrame(shown, index=raw.index), force_ascii=False, double_precision=15)


def occurrences(record_ids, counted: np.ndarray | None = None) -> np.ndarray:
    """Per row: which of the rows holding its record ID it is (1 the first; a totals row, not
    `counted`, takes no part)."""
    ids = pd.Series(np.asarray(record_ids, dtype=object)).astype(str)
    out = np.ones(len(ids), dtype=np.int64)
    mask = np.ones(len(ids), dtype=bool) if counted is None else np.asarray(counted, dtype=bool)
    if mask.any():
        out[mask] = ids[mask].groupby(ids[mask], sort=False).cumcount().to_numpy() + 1
    return out


def _blank(v) -> bool:
    return v is None or v == "" or (isinstance(v, float) and v != v)


def _shown(v) -> str:
    """A value as a message shows it."""
    if _blank(v):
        return "blank"
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return f'"{v}"'


def changes(then: str | None, now: str | None) -> list[tuple[str, object, object]]:
    """The columns whose values differ between two `row_inputs` of a row: (column, then, now)."""
    a, b = json.loads(then or "{}"), json.loads(now or "{}")
    out = []
    for column in dict.fromkeys([*a, *b]):
        x, y = a.get(column), b.get(column)
        if not (_blank(x) and _blank(y)) and x != y:
            out.append((column, x, y))
    return out


def said(found: list[tuple[str, object, object]]) -> str:
    """`Consideration "44000" then, "48000" now; ...`."""
    return "; ".join(f"{c} {_shown(x)} then, {_shown(y)} now" for c, x, y in found)


@dataclass
class Judged:
    """What a row's decision is, before it is applied: the decision as the reviewer made it (the
    ` (stale)` suffix taken off), whether the cell carried that suffix back, whether it is stale and
    what changed, and the values and digest it covers."""

    decision: str
    carried: bool
    stale: bool
    changed: str
    inputs: str | None
    digest: str


def _latest(before: pd.DataFrame | None, sheet_name: str) -> dict:
    """The ledger's latest decision of each row (record ID, occurrence) of the sheet."""
    if before is None or not len(before):
        return {}
    ours = before[before["sheet"] == sheet_name]
    ours = ours.astype(object).where(ours.notna(), None)
    occurrence = ours["occurrence"] if "occurrence" in ours else pd.Series(1, index=ours.index)
    occurrence = pd.to_numeric(occurrence, errors="coerce").fillna(1).astype(int)
    return {(str(r), int(o)): row for r, o, row in zip(ours["record_id"], occurrence, ours.to_dict("records"), strict=True)}


def judge(
    sheet_name: str,
    reviews: pd.DataFrame | None,
    inputs: np.ndarray,
    record_ids,
    occurrence: np.ndarray,
    before: pd.DataFrame | None,
    returned: dict | None = None,
    legacy=None,
) -> dict[int, Judged]:
    """Per decided row (position): its decision judged against the ledger (see the module). `inputs`:
    per row its `row_inputs`; `before`: the ledger's decisions (sheet, record_id, occurrence, decision,
    reviewer, note, digest, inputs, state), oldest first; `returned`: (record ID, occurrence) -> the
    row's `row_inputs` as the tool last returned it; `legacy(pos)`: the digest of the row as decisions
    recorded without their values were compared."""
    out: dict[int, Judged] = {}
    if reviews is None:
        return out
    latest = _latest(before, sheet_name)
    returned = returned or {}
    for pos in reviews.index[reviews[DECISION] != ""].tolist():
        text, reviewer, note = (reviews.at[pos, c] for c in REVIEW_COLUMNS)
        decision = STALE.sub("", text)
        carried = decision != text
        key = (str(record_ids[pos]), int(occurrence[pos]))
        now = inputs[pos]
        last = latest.get(key)
        same = last is not None and (last["decision"], last["reviewer"] or "", last["note"] or "") == (decision, reviewer, note)
        if carried or (same and last.get("state") != "stale"):  # a decision seen before, or its stale version carried back
            covered = last.get("inputs") if same else None
            if covered is not None:
                found = changes(covered, now)
                stale, made = bool(found) or carried, last["digest"]
            elif same and legacy is not None:  # recorded before the ledger kept the values it covers
                found, covered, made = [], None, last["digest"]
                stale = carried or made != legacy(pos)
            else:
                found, stale, made = [], carried, inputs_digest(now)
            out[pos] = Judged(decision, carried, stale, said(found), covered if covered is not None else now, made)
            continue
        then = returned.get(key)  # a new decision covers the row as the tool returned it
        found = changes(then, now) if then is not None else []
        covered = then if then is not None else now
        out[pos] = Judged(decision, False, bool(found), said(found), covered, inputs_digest(covered))
    return out


def withdrawn(reviews: pd.DataFrame | None, judged: dict[int, Judged], n: int) -> np.ndarray:
    """Per row: the reviewer withdrew its record, and the withdrawal applies (`Withdrawn` with a
    Reviewer Note, not stale): the record counts in no limit of the portfolio. Read before the rows
    are calculated (the sheet's own limits leave it out too); `review` reports it."""
    out = np.zeros(n, dtype=bool)
    if reviews is None:
        return out
    for pos, j in judged.items():  # the decided rows only
        out[pos] = bool(WITHDRAWN.match(j.decision)) and reviews.at[pos, NOTE] != "" and not j.stale
    return out


def review(
    sheet_name: str, reviews: pd.DataFrame, judged: dict[int, Judged], findings: pd.DataFrame, record_ids, occurrence: np.ndarray
) -> tuple[pd.DataFrame, dict[tuple[int, str], str], pd.DataFrame]:
    """The decisions of one sheet. `reviews`: per row the reviewer's three entries; `judged`: each
    decided row's decision (`judge`); `findings`: the sheet's findings (pos, Code, Severity).

    Returns the REVIEW_* findings (raw: row, code, column, value, variant, changed), the waived
    warnings ((row position, code) -> note: the warnings of that code, never its errors), and the
    decisions seen (DECISION_COLUMNS)."""
    raw, waived, seen = [], {}, []
    mine = findings[findings["pos"].isin(list(judged))]
    codes_of: dict[int, dict[str, set[str]]] = {}
    for pos, code, severity in zip(mine["pos"].tolist(), mine["Code"].tolist(), mine["Severity"].tolist(), strict=True):
        codes_of.setdefault(pos, {}).setdefault(code, set()).add(severity)

    def found(pos: int, code: str, value: str = "", variant: str = "default", changed: str = "") -> None:
        raw.append({"row": pos, "code": code, "column": DECISION, "value": value, "variant": variant, "changed": changed})

    for pos, j in judged.items():
        _text, reviewer, note = (reviews.at[pos, c] for c in REVIEW_COLUMNS)
        decision = j.decision
        row_codes = codes_of.get(pos, {})
        state = "applied"
        if j.stale:
            variant = ("carried" if j.changed else "carried_unknown") if j.carried else "default"
            found(pos, "REVIEW_DECISION_STALE", decision, variant, j.changed)
            state = "stale"
        waive = WAIVE.match(decision)
        codes = []
        if APPROVED.match(decision):
            pass
        elif WITHDRAWN.match(decision):  # `withdrawn` read it before the calculation, alike
            if not note:
                found(pos, "REVIEW_NOTE_MISSING", decision, "withdrawal")
                state = "stale" if j.stale else "not applied"
            elif not j.stale:
                found(pos, "RECORD_WITHDRAWN", note)
        elif waive is None:
            found(pos, "REVIEW_WAIVER_UNUSED", decision, "not_a_decision")
            state = "stale" if j.stale else "not applied"
        else:
            codes = [c.upper() for c in CODES.findall(waive.group(1))]
            if not codes:
                found(pos, "REVIEW_WAIVER_UNUSED", decision, "no_code")
            warnings, refused = [], 0
            for code in dict.fromkeys(codes):
                severities = row_codes.get(code, set())
                if "error" in severities:  # its errors stay unwaived, whatever its warnings
                    found(pos, "REVIEW_WAIVER_NOT_ALLOWED", code, "mixed" if "warning" in severities else "default")
                    refused += 1
                if "warning" in severities:
                    warnings.append(code)
                elif "error" not in severities:
                    found(pos, "REVIEW_WAIVER_UNUSED", code, "info" if "info" in severities else "default")
                    refused += 1
            if warnings and not note:
                found(pos, "REVIEW_NOTE_MISSING", ", ".join(warnings))
                warnings = []
            if not j.stale:
                state = "not applied" if not warnings else "partly applied" if refused else "applied"
                waived.update({(pos, code): note for code in warnings})
        seen.append(
            {
                "sheet": sheet_name,
                "record_id": str(record_ids[pos]),
                "codes": ", ".join(codes),
                "decision": decision,
                "reviewer": reviewer,
                "note": note,
                "digest": j.digest,
                "applied": state == "applied",
                "occurrence": int(occurrence[pos]),
                "inputs": j.inputs,
                "state": state,
            }
        )
    return (
        pd.DataFrame(raw, columns=["row", "code", "column", "value", "variant", "changed"]),
        waived,
        pd.DataFrame(seen, columns=DECISION_COLUMNS),
    )


def written_back(reviews: pd.DataFrame | None, judged: dict[int, Judged]) -> dict[int, str]:
    """Per row position: the Reviewer Decision cell as it is written back where it is not as the
    reviewer left it: a stale decision followed by ` (stale)`."""
    if reviews is None:
        return {}
    return {pos: j.decision + STALE_SUFFIX for pos, j in judged.items() if j.stale and not j.carried}


def decision_choices(findings: pd.DataFrame, limit: int = 255) -> list[str]:
    """The drop-down of Reviewer Decision: `Approved`, `Withdrawn` and `Waive CODE` for each warning
    code of the sheet's rows (most rows first), as many as Excel's list of 255 characters holds (a
    code left out is typed)."""
    pos, of_row = findings["pos"].to_numpy(dtype=np.int64), findings["Code"].to_numpy(dtype=object)
    kept = (pos >= 0) & (findings["Severity"].to_numpy(dtype=object) == "warning")
    kept[kept] = ~np.char.startswith(of_row[kept].astype(str), "REVIEW_")
    codes, which = np.unique(of_row[kept].astype(str), return_inverse=True)  # the few codes, each a number
    rows = np.unique(pos[kept] * len(codes) + which)  # each row once for each code it has
    counts = np.bincount(rows % max(len(codes), 1), minlength=len(codes))
    order = [codes[i] for i in np.lexsort((codes, -counts))]  # most rows first, then by code
    out = ["Approved", "Withdrawn"]
    for code in order:
        if len(",".join([*out, f"Waive {code}"])) > limit:
            break
        out.append(f"Waive {code}")
    return out
