"""Coerce and validate one intake sheet: a pandera schema derived from the SheetSpec.

`validate(spec, raw)` returns the typed frame and a long-format frame of validation findings
(`row, column, code, value, expected`), every bad cell of the sheet at once (pandera lazy mode).
`row` is the frame position; the pipeline turns it into the Excel row.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from decimal import Decimal

import numpy as np
import pandas as pd
import pandera.pandas as pa

from validators import coerce
from validators.columns import CLOSE_MATCH_CUTOFF, Column, SheetSpec, normalize_header

VALIDATION_CODES = ("MISSING_COLUMN", "MISSING_VALUE", "BAD_TYPE", "BAD_CODE", "OUT_OF_RANGE", "DUPLICATE_ID")
FINDING_COLUMNS = ["row", "column", "code", "value", "expected"]


def _checks(col: Column) -> list[pa.Check]:
    checks = []
    if col.kind == "code":
        allowed = list(col.codes)
        checks.append(pa.Check(lambda s: s.isin(allowed), name="BAD_CODE"))
    if col.minimum is not None or col.maximum is not None:
        scale = 100 if col.kind == "money" else 1
        lo = None if col.minimum is None else col.minimum * scale
        hi = None if col.maximum is None else col.maximum * scale
        strict = col.minimum_exclusive

        def within_bounds(s: pd.Series) -> pd.Series:
            ok = pd.Series(True, index=s.index)
            if lo is not None:
                ok &= (s > lo) if strict else (s >= lo)
            if hi is not None:
                ok &= s <= hi
            return ok

        checks.append(pa.Check(within_bounds, name="OUT_OF_RANGE"))
    return checks


def schema_for(spec: SheetSpec, present: set[str]) -> pa.DataFrameSchema:
    """The pandera schema of the columns present in the sheet (missing ones are reported apart)."""
    return pa.DataFrameSchema(
        {c.header: pa.Column(None, nullable=not c.required, checks=_checks(c)) for c in spec.columns if c.header in present},
        strict=False,
    )


def _as_text(raw: pd.Series) -> pd.Series:
    return coerce.text(raw)[0].fillna("")


def _point_thousands(frame: pd.DataFrame, cells: pd.Series) -> pd.DataFrame:
    """BAD_TYPE of money text such as `96.000` says why: 96 in US notation, 96,000 in much of
    Europe (variant `point_thousands`, with both amounts)."""
    mask, as_point, as_thousands = coerce.point_thousands(cells)
    if not mask.any():
        return frame
    hit = mask.to_numpy(dtype=bool)
    return frame.assign(
        variant=np.where(hit, "point_thousands", "default"),
        as_point=as_point.map(_dollars).to_numpy(),
        as_thousands=as_thousands.to_numpy(),
    )


def _dollars(amount) -> str:
    """A Decimal amount as a reviewer reads it: 96.000 -> '$96.00', 96.001 -> '$96.001',
    -1.25 -> '-$1.25' (blank when missing)."""
    if not isinstance(amount, Decimal):
        return ""
    cents = amount.scaleb(2)
    text = f"{abs(amount):,.2f}" if cents == cents.to_integral_value() else f"{abs(amount):,}"
    return ("-$" if amount < 0 else "$") + text


def coerce_frame(spec: SheetSpec, raw: pd.DataFrame) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Typed columns for every spec column (all-NA when the column is absent) and BAD_TYPE /
    PERCENT_SCALED findings."""
    typed = {}
    findings = []
    for col in spec.columns:
        # an absent column reads as all blank, so that its typed dtype is the same either way
        cells = raw[col.header] if col.header in raw else pd.Series("", index=raw.index, dtype=object)
        errors = (cells.map(type) == coerce.ExcelError).to_numpy()
        if errors.any():  # an Excel error value is reported as such and read as blank
            findings.append(
                pd.DataFrame(
                    {
                        "row": raw.index[errors],
                        "column": col.header,
                        "code": "BAD_TYPE",
                        "value": cells[errors].astype(str).to_numpy(),
                        "expected": col.expected(),
                    }
                )
            )
            cells = cells.where(~errors, "")
        scaled = None
        if col.kind == "code":
            value, bad = coerce.code(cells, col.codes)
            if col.default is not None:
                value = value.where(value.notna(), col.default)
        elif col.kind == "percent":
            value, bad, scaled = coerce.percent(cells)
        else:
            value, bad = getattr(coerce, col.kind)(cells)
        if col.kind == "yesno" and col.blank_unknown:
            value = pd.array(value, dtype="boolean")
            value[coerce.blank_mask(cells).to_numpy()] = pd.NA
        typed[col.header] = pd.Series(value, index=raw.index)
        for code, mask in (("BAD_TYPE", bad), ("PERCENT_SCALED", scaled)):
            if mask is not None and mask.any():
                idx = raw.index[np.asarray(mask, dtype=bool)]
                frame = pd.DataFrame(
                    {
                        "row": idx,
                        "column": col.header,
                        "code": code,
                        "value": _as_text(cells[idx]).to_numpy(),
                        "expected": col.expected(),
                    }
                )
                if code == "BAD_TYPE" and col.kind == "money":
                    frame = _point_thousands(frame, cells[idx])
                findings.append(frame)
    return pd.DataFrame(typed, index=raw.index), findings


def _duplicates(spec: SheetSpec, typed: pd.DataFrame) -> list[pd.DataFrame]:
    """DUPLICATE_ID on every repeat of a record ID after its first row (blank IDs are MISSING_VALUE)."""
    key = list(spec.key)
    complete = typed[key].notna().all(axis=1)
    dup = typed[key].duplicated(keep="first") & complete
    if not dup.any():
        return []
    rows = typed.index[dup.to_numpy()]
    return [
        pd.DataFrame(
            {
                "row": rows,
                "column": key[0],
                "code": "DUPLICATE_ID",
                "value": spec.record_ids(typed.loc[rows]).to_numpy(),
                "expected": "a record ID (" + " and ".join(key) + ") not used on an earlier row",
            }
        )
    ]


def _missing_columns(spec: SheetSpec, raw: pd.DataFrame, unknown: Sequence[str]) -> list[pd.DataFrame]:
    """MISSING_COLUMN for each required column absent from the sheet; when one of the sheet's
    unknown headers resembles it (difflib), the finding names that header (variant `resembles`)."""
    by_key: dict[str, str] = {}
    for header in unknown:
        by_key.setdefault(normalize_header(header), str(header))
    out = []
    for col in (c for c in spec.columns if c.required and c.header not in raw):
        like = difflib.get_close_matches(col.key, list(by_key), 1, CLOSE_MATCH_CUTOFF)
        out.append(
            pd.DataFrame(
                {
                    "row": [-1],
                    "column": [col.header],
                    "code": ["MISSING_COLUMN"],
                    "variant": ["resembles" if like else "default"],
                    "value": [by_key[like[0]] if like else ""],
                    "expected": [col.expected()],
                }
            )
        )
    return out


def validate(spec: SheetSpec, raw: pd.DataFrame, unknown: Sequence[str] = ()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Typed frame and every validation finding of the sheet.

    `raw` holds the sheet's cells (object dtype) under the spec's headers, one row per
    non-blank input row, indexed 0..n-1. `unknown` are the sheet's headers that match no field:
    a missing required column that one of them resembles is said to be perhaps that column.
    """
    typed, findings = coerce_frame(spec, raw)
    findings.extend(_missing_columns(spec, raw, unknown))
    bad_type = {(r, c) for f in findings if (f["code"] == "BAD_TYPE").any() for r, c in zip(f["row"], f["column"], strict=False)}
    try:
        schema_for(spec, set(raw.columns)).validate(typed, lazy=True)
    except pa.errors.SchemaErrors as err:
        fc = err.failure_cases
        broken = fc[fc["index"].isna()]
        if len(broken):  # a check that failed to run, not a bad cell: never drop it silently
            raise RuntimeError(f"schema check failed on sheet {spec.name}: {broken.to_dict('records')}") from err
        fc = fc[fc["index"].notna()]
        code = fc["check"].astype(str).where(fc["check"] != "not_nullable", "MISSING_VALUE")
        fc = fc.assign(code=code)[code.isin(VALIDATION_CODES)]
        if len(fc):
            rows = fc["index"].astype(int).to_numpy()
            cols = fc["column"].astype(str).to_numpy()
            keep = np.array([(r, c) not in bad_type for r, c in zip(rows, cols, strict=False)], dtype=bool)
            fc, rows, cols = fc[keep], rows[keep], cols[keep]
            expected = {c.header: c.expected() for c in spec.columns}
            values = [raw[c].iloc[r] if c in raw else "" for r, c in zip(rows, cols, strict=False)]
            findings.append(
                pd.DataFrame(
                    {
                        "row": rows,
                        "column": cols,
                        "code": fc["code"].to_numpy(),
                        "value": _as_text(pd.Series(values, dtype=object)).to_numpy(),
                        "expected": [expected[c] for c in cols],
                    }
                )
            )
    findings.extend(_duplicates(spec, typed))
    flagged = {(r, c) for f in findings for r, c in zip(f["row"], f["column"], strict=False)}
    for check in spec.row_checks:
        mask = check.bad(typed).fillna(False).astype(bool).to_numpy()
        rows = [r for r in np.flatnonzero(mask) if (r, check.column) not in flagged]
        if rows:
            cells = raw[check.column].iloc[rows] if check.column in raw else pd.Series([""] * len(rows), dtype=object)
            findings.append(
                pd.DataFrame(
                    {
                        "row": rows,
                        "column": check.column,
                        "code": check.code,
                        "value": _as_text(cells).to_numpy(),
                        "expected": check.expected,
                    }
                )
            )
    out = pd.concat(findings, ignore_index=True) if findings else pd.DataFrame(columns=FINDING_COLUMNS)
    return typed, out
