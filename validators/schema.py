"""Coerce and validate one intake sheet: a pandera schema derived from the SheetSpec.

`validate(spec, raw)` returns the typed frame and a long-format frame of validation findings
(`row, column, code, value, expected`), every bad cell of the sheet at once (pandera lazy mode).
`row` is the frame position; the pipeline turns it into the Excel row.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd
import pandera.pandas as pa

from validators import coerce
from validators.columns import CLOSE_MATCH_CUTOFF, Column, SheetSpec, normalize_header

VALIDATION_CODES = ("MISSING_COLUMN", "MISSING_VALUE", "BAD_TYPE", "BAD_CODE", "OUT_OF_RANGE", "DUPLICATE_ID")
FINDING_COLUMNS = ["row", "column", "code", "value", "expected"]


def _checks(col: Column) -> list[tuple[str, object]]:
    """The column's checks, each (name, function): a function takes the column's non-blank values
    (a Series) and gives True for each value that passes, value by value (element-wise: a value's
    result never depends on the other values)."""
    checks = []
    if col.kind == "code":
        allowed = list(col.codes)
        checks.append(("BAD_CODE", lambda s: s.isin(allowed)))
    if col.minimum is not None or col.maximum is not None:
        scale = 100 if col.kind == "money" else 1
        lo = None if col.minimum is None else col.minimum * scale
        hi = None if col.maximum is None else col.maximum * scale
        strict = col.minimum_exclusive

        def within_bounds(s: pd.Series) -> pd.Series:
            # compared as floats, exactly: cents stay under $1 trillion and whole numbers under 2**53
            # (`validators.coerce`), so each value is a float without rounding
            values = s.to_numpy(dtype="float64", na_value=np.nan)
            ok = np.ones(len(values), dtype=bool)
            if lo is not None:
                ok &= (values > lo) if strict else (values >= lo)
            if hi is not None:
                ok &= values <= hi
            return pd.Series(ok, index=s.index)

        checks.append(("OUT_OF_RANGE", within_bounds))
    return checks


@dataclass(frozen=True)
class _Schema:
    """A sheet's pandera schema, with what each of its columns checks: whether it may be blank,
    and its check functions (`_checks`), as pandera applies them (to the column's non-blank values)."""

    spec: SheetSpec
    schema: pa.DataFrameSchema
    checks: dict[str, tuple[bool, tuple]]  # header -> (may be blank, check functions)
    parts: dict[tuple[str, ...], pa.DataFrameSchema] = field(default_factory=dict)  # the schema of some of its columns

    def failing(self, typed: pd.DataFrame) -> list[str]:
        """The columns in which pandera would find a failing cell: a blank where none may be, or a
        value a check refuses (a check that raises counts, so that pandera reports it). Each column
        is read as pandera reads it: blank values are left out before the checks (`ignore_na`)."""
        out = []
        for header, (nullable, functions) in self.checks.items():
            values = typed[header]
            if values.hasnans:
                if not nullable:
                    out.append(header)
                    continue
                values = values.dropna()
            try:
                passed = all(bool(function(values).all()) for function in functions)
            except Exception:  # noqa: BLE001 - pandera runs the check and reports how it broke
                passed = False
            if not passed:
                out.append(header)
        return out

    def of(self, headers: list[str]) -> pa.DataFrameSchema:
        """The schema of these of its columns (in its order), built once."""
        key = tuple(headers)
        if key not in self.parts:
            self.parts[key] = self.schema if len(key) == len(self.checks) else self.schema.select_columns(list(key))
        return self.parts[key]


# spec identity and the spec's headers present -> its schema; a sheet's schema is built once
_SCHEMAS: dict[tuple[int, frozenset[str]], _Schema] = {}


def _schema(spec: SheetSpec, present: set[str]) -> _Schema:
    """The pandera schema of the columns present in the sheet (missing ones are reported apart) that it
    checks: a column that may be blank and has no check is left out. The schema checks no dtype (the
    coercion makes it), so such a column could never fail, and pandera's cost per column (about a
    millisecond) is paid whatever the column holds. Built once per spec and set of columns present."""
    headers = frozenset(c.header for c in spec.columns if c.header in present)
    known = _SCHEMAS.get((id(spec), headers))
    if known is None or known.spec is not spec:
        columns, checks = {}, {}
        for c in (c for c in spec.columns if c.header in headers):
            functions = _checks(c)
            if c.required or functions:
                columns[c.header] = pa.Column(None, nullable=not c.required, checks=[pa.Check(f, name=n) for n, f in functions])
                checks[c.header] = (not c.required, tuple(f for _, f in functions))
        known = _SCHEMAS[(id(spec), headers)] = _Schema(spec, pa.DataFrameSchema(columns, strict=False), checks)
    return known


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


# Columns of one kind are coerced together, their cells end to end in one Series, while the
# combined Series stays this short: each coercer call costs a few milliseconds of pandas overhead
# whatever its length, which dominates a sheet of a few rows. A column of half this many rows or
# more is coerced alone, as before: there the overhead is lost in the work on the cells, and a
# batch would only hold the intermediate text of several columns at once (a 100,000-row sheet
# batched by the million needed twice the memory for no gain in time).
BATCH_CELLS = 100_000


def _finding(index: pd.Index, header: str, code: str, values: np.ndarray, expected: str) -> pd.DataFrame:
    return pd.DataFrame({"row": index, "column": header, "code": code, "value": values, "expected": expected})


def _findings(col: Column, index: pd.Index, cells: pd.Series, bad, scaled) -> list[pd.DataFrame]:
    """BAD_TYPE and PERCENT_SCALED findings of one column, from its masks (None: no such mask)."""
    out = []
    for code, mask in (("BAD_TYPE", bad), ("PERCENT_SCALED", scaled)):
        if mask is not None and mask.any():
            idx = index[np.asarray(mask, dtype=bool)]
            frame = _finding(idx, col.header, code, _as_text(cells[idx]).to_numpy(), col.expected())
            if code == "BAD_TYPE" and col.kind == "money":
                frame = _point_thousands(frame, cells[idx])
            out.append(frame)
    return out


def _column_cells(raw: pd.DataFrame, col: Column) -> pd.Series:
    # an absent column reads as all blank, so that its typed dtype is the same either way
    return raw[col.header] if col.header in raw else pd.Series("", index=raw.index, dtype=object)


def _coerce_column(col: Column, raw: pd.DataFrame) -> tuple[pd.Series, list[pd.DataFrame]]:
    """The typed column and findings of one spec column, coerced on its own."""
    findings = []
    cells = _column_cells(raw, col)
    known = coerce.types_and_blanks(cells)  # what every coercer first reads of its cells: read once
    errors = (known[0] == coerce.ExcelError).to_numpy()
    if errors.any():  # an Excel error value is reported as such and read as blank
        findings.append(_finding(raw.index[errors], col.header, "BAD_TYPE", cells[errors].astype(str).to_numpy(), col.expected()))
        cells = cells.where(~errors, "")
        known = coerce.types_and_blanks(cells)
    scaled = None
    if col.kind == "code":
        value, bad = coerce.code(cells, col.codes, known=known)
        if col.default is not None:
            value = value.where(value.notna(), col.default)
    elif col.kind == "percent":
        value, bad, scaled = coerce.percent(cells)
    else:
        value, bad = getattr(coerce, col.kind)(cells, known=known)
    if col.kind == "yesno" and col.blank_unknown:
        value = pd.array(value, dtype="boolean")
        value[coerce.blank_mask(cells).to_numpy()] = pd.NA
    findings.extend(_findings(col, raw.index, cells, bad, scaled))
    return pd.Series(value, index=raw.index), findings


def _batches(spec: SheetSpec, raw: pd.DataFrame) -> tuple[list[list[Column]], list[Column]]:
    """The spec's columns that are coerced together, in groups of one kind whose cells add up to at
    most `BATCH_CELLS`, and those coerced on their own: a column the reader did not give as object
    cells (its cells would change type once put end to end with others), a column taller than
    half the batch, and a kind left alone in its group."""
    n = len(raw)
    per_batch = BATCH_CELLS // n if n else 0
    by_kind: dict[str, list[Column]] = {}
    alone = []
    for col in spec.columns:
        if per_batch < 2 or (col.header in raw and raw[col.header].dtype != object):
            alone.append(col)
        else:
            by_kind.setdefault(col.kind, []).append(col)
    groups = []
    for cols in by_kind.values():
        for start in range(0, len(cols), per_batch):
            chunk = cols[start : start + per_batch]
            if len(chunk) > 1:
                groups.append(chunk)
            else:
                alone.extend(chunk)
    return groups, alone


def _split(values, n: int, k: int) -> list:
    """The k consecutive slices of length n of a coercer's output (a Series or an array), each as
    an array of the same dtype."""
    arr = values.array if isinstance(values, pd.Series) else values
    return [arr[i * n : (i + 1) * n] for i in range(k)]


def _code_batch(cells: pd.Series, cols: list[Column], n: int, known) -> tuple[pd.Series, pd.Series]:
    """`coerce.code` of several code columns at once, each read against its own codes: the cells
    are read as text together, and each cell's key is looked up in one table whose keys are the
    column's position in the batch, a NUL, then the key of a code (the position holds no NUL, so no
    key of one column can meet a code of another)."""
    txt, bad = coerce.text(cells, known=known)
    canon = {f"{i}\x00" + coerce.code_key(c): c for i, col in enumerate(cols) for c in col.codes}
    key = coerce.code_keys(txt)
    places = np.array([f"{i}\x00" for i in range(len(cols))], dtype=object)
    tag = pd.Series(np.repeat(places, n), index=cells.index, dtype=object)
    mapped = (tag + key).where(key.notna()).map(canon)
    return mapped.where(mapped.notna(), txt).astype(object), bad


def _read(cols: list[Column], raw: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cells of the columns end to end (an absent column as blanks), read once for all their
    coercers: the cells as given, the cells with Excel error values read as blank, the error mask,
    and the type and blank mask of each cell once errors are blank (`coerce.types_and_blanks`)."""
    n = len(raw)
    given = np.concatenate([raw[c.header].to_numpy(dtype=object) if c.header in raw else np.full(n, "", dtype=object) for c in cols])
    cells = pd.Series(given, dtype=object)
    types = cells.map(type)
    errors = (types == coerce.ExcelError).to_numpy()
    if errors.any():  # an Excel error value is reported as such and read as blank
        cells = cells.where(~errors, "")
        types = cells.map(type)
    blank = coerce.blank_mask(cells, types)
    return given, cells.to_numpy(), errors, types.to_numpy(), blank.to_numpy()


def _coerce_batch(cols: list[Column], raw: pd.DataFrame, read) -> dict[str, tuple[pd.Series, list[pd.DataFrame]]]:
    """Typed columns and findings of columns of one kind, coerced in one call of their coercer.

    Every coercer reads each cell on its own (a cell's value and badness never depend on the
    other cells) and gives the same dtype whatever the cells hold, so the cells of the columns are
    put end to end (`read`: their part of `_read`), coerced once, and the values and masks cut back
    into columns. What follows the coercer (code defaults, blank unknown yes/no, findings) is done
    per column as `_coerce_column` does it, with the blank mask read once."""
    n, k, kind = len(raw), len(cols), cols[0].kind
    given, cell_values, errors, types, blank = read
    cells = pd.Series(cell_values, dtype=object)
    known = (pd.Series(types, dtype=object), pd.Series(blank, dtype=bool))
    scaled = None
    if kind == "code":
        value, bad = _code_batch(cells, cols, n, known)
    elif kind == "percent":  # reads its cells once % signs are dropped: its blanks are its own
        value, bad, scaled = coerce.percent(cells)
    else:
        value, bad = getattr(coerce, kind)(cells, known=known)
    bad = np.asarray(bad, dtype=bool)
    scaled = None if scaled is None else np.asarray(scaled, dtype=bool)
    values = _split(value, n, k)
    out = {}
    for i, col in enumerate(cols):
        part = slice(i * n, (i + 1) * n)
        findings = []
        if errors[part].any():
            err = errors[part]
            shown = pd.Series(given[part][err], dtype=object).astype(str).to_numpy()
            findings.append(_finding(raw.index[err], col.header, "BAD_TYPE", shown, col.expected()))
        typed = pd.Series(values[i], index=raw.index, dtype=value.dtype)
        if kind == "code" and col.default is not None:
            typed = typed.where(typed.notna(), col.default)
        if kind == "yesno" and col.blank_unknown:
            flags = pd.array(typed, dtype="boolean")
            flags[blank[part]] = pd.NA
            typed = pd.Series(flags, index=raw.index)
        col_bad = bad[part]
        col_scaled = None if scaled is None else scaled[part]
        if col_bad.any() or (col_scaled is not None and col_scaled.any()):
            col_cells = pd.Series(cell_values[part], index=raw.index, dtype=object)
            findings.extend(_findings(col, raw.index, col_cells, col_bad, col_scaled))
        out[col.header] = (typed, findings)
    return out


def coerce_frame(spec: SheetSpec, raw: pd.DataFrame) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Typed columns for every spec column (all-NA when the column is absent) and BAD_TYPE /
    PERCENT_SCALED findings, in the spec's column order (for each column: its Excel error values,
    then BAD_TYPE, then PERCENT_SCALED).

    Columns of one kind are coerced in one call (`_coerce_batch`): the same values and findings as
    coercing each column on its own (`_coerce_column`), at a fraction of the cost on a short sheet.
    The cells of all batched columns are read (types, blanks, Excel errors) in one go when they
    add up to at most `BATCH_CELLS`, else batch by batch. An empty sheet, or one whose row labels
    or headers repeat, is coerced column by column."""
    if len(raw) == 0 or not raw.index.is_unique or not raw.columns.is_unique:
        groups, alone = [], list(spec.columns)
    else:
        groups, alone = _batches(spec, raw)
    done = {}
    n = len(raw)
    if groups and n * sum(len(cols) for cols in groups) <= BATCH_CELLS:
        whole = _read([c for cols in groups for c in cols], raw)
        start = 0
        for cols in groups:
            part = slice(start, start + n * len(cols))
            done.update(_coerce_batch(cols, raw, tuple(a[part] for a in whole)))
            start = part.stop
    else:
        for cols in groups:
            done.update(_coerce_batch(cols, raw, _read(cols, raw)))
    for col in alone:
        done[col.header] = _coerce_column(col, raw)
    typed = {col.header: done[col.header][0] for col in spec.columns}
    findings = [f for col in spec.columns for f in done[col.header][1]]
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


def validate(
    spec: SheetSpec, raw: pd.DataFrame, unknown: Sequence[str] = (), skip: np.ndarray | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Typed frame and every validation finding of the sheet.

    `raw` holds the sheet's cells (object dtype) under the spec's headers, one row per
    non-blank input row, indexed 0..n-1. `unknown` are the sheet's headers that match no field:
    a missing required column that one of them resembles is said to be perhaps that column.
    `skip` marks rows that are typed but not checked (a totals row, read as blank): the schema's and
    the sheet's row checks see the other rows only, so a blank totals row costs no finding that
    would be dropped (pandera's cost is in the columns that fail: about 3 ms each).
    """
    typed, findings = coerce_frame(spec, raw)
    findings.extend(_missing_columns(spec, raw, unknown))
    bad_type = {(r, c) for f in findings if (f["code"] == "BAD_TYPE").any() for r, c in zip(f["row"], f["column"], strict=False)}
    schema = _schema(spec, set(raw.columns))
    checked = typed if skip is None or not skip.any() else typed[~skip]
    failing = schema.failing(checked)
    try:
        if failing:  # pandera finds and reports the failing cells of the columns that have one
            schema.of(failing).validate(checked[failing], lazy=True)
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
        if skip is not None:
            mask = mask & ~skip
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
