"""One workbook: read -> validate -> calculate -> annotate -> write.

Nothing here knows a program: every intake sheet goes through its program's declaration
(`batch.programs.PROGRAMS`): its schema, its rules folder and its calculator.
"""

from __future__ import annotations

import datetime as dt
import time
import weakref
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from batch.memory import give_back_freed
from batch.programs import PRIOR_INCENTIVES, PROGRAMS, Program, prior_incentive_sheets
from batch.programs._kit import rules as rules_mod
from batch.programs._kit.calculation import PRIOR_COLUMNS, Calculation, RunContext, SummaryTable, append_tails
from batch.programs._kit.findings import FINDINGS_COLUMNS, SEVERITY_ORDER, render, render_each, stack, stacked_as_given
from batch.programs._kit.joined import held_once
from batch.programs._kit.program import each_key
from batch.programs._kit.steps import listing
from batch.reviews import (
    DECISION_COLUMNS,
    INPUTS_BLOCK,
    json_records,
    judge,
    occurrences,
    review,
    row_inputs,
    withdrawn,
    withdrawn_codes,
    written_back,
)
from batch.reviews import digest as legacy_digest
from batch.run.ledger.backends import there
from batch.workbook import cells, readapart
from batch.workbook.cells import column_letters
from batch.workbook.opc import refusal
from batch.workbook.opened import Opened
from batch.workbook.package import describe
from batch.workbook.readcopy import scratch_file
from batch.workbook.reading import (
    EXCEL_COLUMNS,
    IntakeSheet,
    OtherSheet,
    UnreadableWorkbook,
    excel_refuses,
    read_workbook,
    sheet_key,
    sheets_kept_by_libreoffice,
    totals_rows,
)
from batch.workbook.safety import Limits, decrypt_default, encrypted
from validators.columns import REVIEW_COLUMNS, each_length, normalize_header
from validators.schema import VALIDATION_CODES, validate

SENT = object()  # a sheet's `inputs` once its records are sent (`Result.drop_inputs`)


@dataclass(frozen=True, eq=False)
class ReadValues:
    """How a sheet's rows' read values are made (`batch.reviews.row_inputs`), for every row or for a
    block of rows (`rows`)."""

    raw: pd.DataFrame
    typed: pd.DataFrame
    kinds: dict

    def __call__(self, rows: slice | None = None) -> np.ndarray:
        if rows is None:
            return row_inputs(self.raw, self.typed, self.kinds)
        return row_inputs(self.raw.iloc[rows], self.typed.iloc[rows], self.kinds)


# a sheet of more rows, annotated in place, holds its long text columns packed (`PackedText`) from its
# calculation on (`process_sheet`): only the writer reads them again, a block of rows at a time
PACKED_FROM_ROWS = 250_000
PACKED_COLUMNS = ("Calculation",)  # the computed columns so held: a GrowNJ row's text is about 800 characters
PACK_ROWS = 5_000  # rows of text packed together: as many as the writer makes the tool's cells of at once
_SEP = "\x00"  # between two rows' texts in a block: no text the writer can write holds it (XML cannot)


@dataclass(frozen=True, eq=False)
class PackedText:
    """A text column held compressed, `rows` texts to a block, each block's texts joined by `_SEP`
    (a missing value kept apart, as a mask): the benchmark's 100,000 generated GrowNJ rows'
    Calculation column is 89 MB as Python strings, 10.5 MB packed (in 0.28 s; read back a block at a
    time in 0.14 s). `PackedText.of` the column, then a slice of it gives the column's values of
    those rows again, as they were."""

    blocks: tuple[bytes, ...]
    missing: np.ndarray
    rows: int
    dtype: object
    longest: int  # the length of the longest text (the writer's column width reads it)

    @classmethod
    def of(cls, column: pd.Series, rows: int = PACK_ROWS) -> PackedText | None:
        """`column` packed; None where a text holds `_SEP` (none can: a safeguard)."""
        values = column.to_numpy(dtype=object)
        return cls.of_blocks((values[start : start + rows] for start in range(0, len(values), rows)), rows, column.dtype)

    @classmethod
    def of_blocks(cls, pieces: Iterator[np.ndarray], rows: int, dtype=object) -> PackedText | None:
        """The values of `pieces` (`rows` values each, the last fewer), one after the other, packed a
        piece to a block, each piece let go as it is packed; None where they are not texts or a text
        holds `_SEP`."""
        blocks, missing, longest = [], [], 0
        for values in pieces:
            absent = pd.isna(values)
            present = values[~absent]
            if len(present) and pd.api.types.infer_dtype(present, skipna=False) != "string":
                return None
            block = np.where(absent, "", values)
            joined = _SEP.join(block.tolist())
            if joined.count(_SEP) != len(block) - 1:
                return None
            longest = max(longest, int(each_length(block).max())) if len(block) else longest
            blocks.append(zlib.compress(joined.encode("utf-8", "surrogatepass"), 1))
            missing.append(absent)
        return cls(tuple(blocks), np.concatenate(missing) if missing else np.zeros(0, dtype=bool), rows, dtype, longest)

    def __len__(self) -> int:
        return len(self.missing)

    def values(self, start: int, stop: int) -> np.ndarray:
        """The texts of rows `start:stop` (NaN where missing), as objects."""
        stop = min(stop, len(self))
        if stop <= start:
            return np.empty(0, dtype=object)
        first, last = start // self.rows, (stop - 1) // self.rows
        texts = []
        for block in self.blocks[first : last + 1]:
            texts.extend(zlib.decompress(block).decode("utf-8", "surrogatepass").split(_SEP))
        at = start - first * self.rows
        out = np.array(texts[at : at + stop - start], dtype=object)
        out[self.missing[start:stop]] = np.nan
        return out


@dataclass(frozen=True, eq=False)
class PackedValues:
    """A sheet's rows' read values (`ReadValues`), made as it was validated and held packed: those of
    every row, or of a block of rows (`rows`), as `ReadValues` gives them."""

    held: PackedText

    @classmethod
    def of(cls, values: ReadValues, n: int) -> PackedValues | None:
        made = (values(slice(start, start + INPUTS_BLOCK)) for start in range(0, n, INPUTS_BLOCK))
        held = PackedText.of_blocks(made, INPUTS_BLOCK)
        return cls(held) if held is not None else None

    def __call__(self, rows: slice | None = None) -> np.ndarray:
        start, stop, _ = (rows or slice(None)).indices(len(self.held))
        return self.held.values(start, stop)


def pack_text(computed: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, PackedText]]:
    """The computed columns but the long text columns (PACKED_COLUMNS), and those held packed."""
    packed = {}
    for header in PACKED_COLUMNS:
        if header in computed.columns:
            held = PackedText.of(computed[header])
            if held is not None:
                packed[header] = held
    return computed.drop(columns=list(packed)), packed


STATUSES = ("OK", "Flagged", "Ineligible", "Invalid")
FLAGGED_ERRORS, FLAGGED_WARNINGS = "Flagged with errors", "Flagged with warnings only"  # Flagged in two (counts)


@dataclass
class SheetResult:
    sheet: IntakeSheet
    program: Program
    typed: pd.DataFrame  # typed inputs, every row
    computed: pd.DataFrame  # computed columns, every row (NA where Invalid)
    status: pd.Series  # "" for a totals row (TOTALS_ROW_SKIPPED: not a record, not counted)
    row_findings: pd.Series  # "CODE; CODE" per row
    findings: pd.DataFrame  # rendered findings with `pos` (frame row, -1 for the sheet) and `Waived` (the note of a waived one)
    summary: list[SummaryTable]
    decisions: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DECISION_COLUMNS))  # the reviewer's, see batch.reviews
    withdrawn: np.ndarray | None = None  # per row: the reviewer withdrew its record (it counts in no limit); None: none was
    # per row: its values in the columns the program reads, JSON (batch.reviews.row_inputs); or how to
    # make them, when nothing reads them before the records are made (`_inputs`)
    inputs: np.ndarray | Callable[[], np.ndarray] | None = None
    # the valid rows' portfolio fields as read before the calculation (`Portfolio.of(valid, None)`, for
    # their group keys), when the sheet read the portfolio and has at most FIELDS_KEPT_ROWS valid rows
    fields_before: pd.DataFrame | None = None
    # computed columns held packed, left out of `computed` (`pack_text`): read by `column`
    packed: dict[str, PackedText] = field(default_factory=dict)

    def column(self, header: str, start: int = 0, stop: int | None = None) -> pd.Series:
        """Computed column `header`, of rows `start:stop`, from `computed` or as packed."""
        stop = len(self.typed) if stop is None else min(stop, len(self.typed))
        if header not in self.packed:
            return self.computed[header].iloc[start:stop]
        held = self.packed[header]
        return pd.Series(held.values(start, stop), index=self.typed.index[start:stop], dtype=held.dtype, name=header)

    @property
    def counted(self) -> np.ndarray:
        """The rows that are records: every row but the totals rows (blank Status)."""
        return (self.status != "").to_numpy()

    @property
    def totals(self) -> int:
        """How many totals rows were returned as they came and not counted."""
        return int((~self.counted).sum())

    @property
    def open_errors(self) -> np.ndarray:
        """Per row: it has an error finding that is not waived (a `Flagged` row with one is red:
        a reviewer must have the cell fixed; without one it is amber). Worked out once for the
        findings it is asked of (the writers ask it for each chunk of rows)."""
        f = self.findings
        known = self.__dict__.get("_open_errors")
        if known is not None and known[0] is f and known[1] == len(f):
            return known[2]
        waived = f["Waived"].fillna("").astype(str).ne("") if "Waived" in f else pd.Series(False, index=f.index)
        at = f.loc[(f["pos"] >= 0) & f["Severity"].eq("error") & ~waived, "pos"].to_numpy(dtype=np.int64)
        out = np.zeros(len(self.status), dtype=bool)
        out[at] = True
        self.__dict__["_open_errors"] = (f, len(f), out)
        return out

    @property
    def counts(self) -> dict[str, int]:
        """Rows (records) and rows by Status; totals rows are not counted. `Flagged` also in two:
        the rows with an error not waived, and those with warnings only. Counted once for the
        Status and findings it is asked of (the tool's sheets ask it several times)."""
        known = self.__dict__.get("_counts")
        if known is not None and known[0] is self.status and known[1] is self.findings and known[2] == len(self.findings):
            return dict(known[3])
        c = self.status.value_counts()
        flagged = (self.status == "Flagged").to_numpy()
        errors = int((flagged & self.open_errors).sum())
        counts = {
            "rows": int(self.counted.sum()),
            **{s: int(c.get(s, 0)) for s in STATUSES},
            FLAGGED_ERRORS: errors,
            FLAGGED_WARNINGS: int(flagged.sum()) - errors,
        }
        self.__dict__["_counts"] = (self.status, self.findings, len(self.findings), counts)
        return dict(counts)


@dataclass
class Result:
    path: Path
    sha256: str
    started: dt.datetime
    sheets: list[SheetResult | OtherSheet] = field(default_factory=list)
    findings: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=FINDINGS_COLUMNS))
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage: read, validate, calculate, annotate, write
    as_of: dt.date | None = None  # the run's as-of date for this file
    kind: str = "zip"  # the input's kind (batch.workbook.safety.inspect): zip (.xlsx, .xlsm), xls or csv
    in_place: bool = False  # the returned workbook is the input's own package with the tool's additions (batch.workbook.inplace)
    tool_sheets: list[str] = field(default_factory=list)  # the tool's own sheets of a returned workbook (left out)
    decisions_before: pd.DataFrame | None = None  # the reviewer decisions the ledger holds (batch.reviews)
    portfolio_from: tuple[Path, str | None, tuple[str, ...]] | None = None  # the ledger, run and team whose portfolio the rules read
    same_run: object | None = None  # the records of this run's other workbooks it reads (batch.run.samerun.SameRun)
    source: Path | None = None  # the decrypted copy read and annotated in place of `path` (see `process`)
    opened: Opened | None = field(default=None, repr=False, compare=False)  # `reading`, opened once (see `process`)

    @property
    def reading(self) -> Path:
        """The package that is read and annotated: `path`, or its decrypted copy."""
        return self.source or self.path

    def discard(self) -> None:
        """Close the workbook opened for the result, and remove the temporary decrypted copy, if any."""
        if self.opened is not None:
            self.opened.close()
        if self.source is not None:
            self.source.unlink(missing_ok=True)

    def timed(self, stage: str, started: float) -> float:
        now = time.perf_counter()
        self.timings[stage] = round(self.timings.get(stage, 0.0) + now - started, 3)
        return now

    @property
    def intake(self) -> list[SheetResult]:
        return [s for s in self.sheets if isinstance(s, SheetResult)]

    def decisions(self) -> pd.DataFrame:
        """The reviewer decisions of every intake sheet (see batch.reviews)."""
        frames = [r.decisions for r in self.intake if len(r.decisions)]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=DECISION_COLUMNS)

    def record_count(self) -> int:
        """How many records `records()` holds, without making them."""
        return sum(int(r.counted.sum()) for r in self.intake)

    def records(self) -> pd.DataFrame:
        """One row per input row of every intake sheet: what the ledger keeps for month-over-month
        comparison and the run report (award in cents; area and year as text)."""
        return joined_records(list(self.record_blocks()))

    def record_blocks(self, rows: int | None = None) -> Iterator[pd.DataFrame]:
        """`records()` a block of at most `rows` rows of a sheet at a time (None: a sheet at a time),
        in order: `joined_records` of the blocks is `records()`. A block's read values (`inputs`, the
        most of a record) are made for its rows alone, so a full sheet's records are never whole."""
        for r in self.intake:
            if r.inputs is SENT:  # its typed columns let go too
                _inputs(r)
            fields, counted, n = _portfolio_fields(r), r.counted, len(r.typed)  # over the sheet: its portfolio rules may read several rows
            step = rows or n or 1
            for start in range(0, n or 1, step):
                at = slice(start, start + step)
                part = pd.DataFrame({**_record_columns(r, at), **{k: v[at] for k, v in fields.items()}})
                part = part.assign(inputs=_inputs(r, at if rows else None))
                if not counted[at].all():  # a totals row is no record (taking every row would copy each column)
                    part = part.loc[counted[at]]
                yield _ordered(part)

    def drop_inputs(self) -> None:
        """Let go of every row's read values once the records that hold them are sent to the run (a
        full GrowNJ sheet's are about 1.5 GB of text, else held through the write, which never reads
        them); records made again afterwards would have none, so making them is refused then. The
        typed columns go too, but those a later stage reads: the award and the month the Summary
        sheet counts by, and every column of a sheet whose limits hold across the run's workbooks
        (`per_year`, made after the write)."""
        for r in self.intake:
            r.inputs = SENT
            if not r.program.run_limits:
                read = (r.program.award_column, r.program.month_column)
                r.typed = r.typed[[c for c in r.typed.columns if c in read]]

    def rules_versions(self) -> dict[str, str]:
        return {r.program.name: rules_mod.load(r.program.rules).label for r in self.intake}


class _Columns:
    """A column of the typed inputs or of the computed columns, by name (no name is in both), read
    where it is: the two frames joined would copy every column for the few that the records keep."""

    def __init__(self, typed: pd.DataFrame, computed: pd.DataFrame):
        self.typed, self.computed = typed, computed

    def __contains__(self, name) -> bool:
        return name in self.typed.columns or name in self.computed.columns

    def __getitem__(self, name) -> pd.Series:
        return self.typed[name] if name in self.typed.columns else self.computed[name]


RECORD_COLUMNS = ["sheet", "record_id", "status", "award_cents", "codes", "area", "year", "business_name", "record_date", "fields"]
RECORD_COLUMNS += ["inputs", "open_errors"]  # and a column `key:<grouping>` each for the group keys of the sheets that have them


def _ordered(found: pd.DataFrame) -> pd.DataFrame:
    """Records in the order of their columns (`RECORD_COLUMNS`, then the group keys)."""
    return found[[*RECORD_COLUMNS, *(c for c in found.columns if c.startswith("key:"))]]


def joined_records(blocks: list[pd.DataFrame]) -> pd.DataFrame:
    """The records of `Result.record_blocks`, in one frame (`Result.records()`)."""
    if not blocks:
        return pd.DataFrame(columns=RECORD_COLUMNS)
    return _ordered(pd.concat(blocks, ignore_index=True))


def _record_columns(r: SheetResult, at: slice) -> dict:
    """A sheet's records of rows `at` but their read values and portfolio fields, a column each (its
    name, once): made a block at a time, so the values of a full sheet's records (a Python object
    each) are never made for every row at once."""
    m, spec = r.program, r.program.schema
    both = _Columns(r.typed, r.computed)
    index = r.typed.index[at]

    def column(name: str) -> pd.Series:  # the block's rows of one column: a view, never a copy of the frame
        return both[name].iloc[at]

    award = column(m.award_column) if m.award_column in both else pd.Series(pd.NA, index=index)
    year = column(m.year_column)
    year = year.dt.year if str(year.dtype).startswith("datetime") else year
    prior = m.prior_incentive
    return {
        "sheet": spec.name,
        "record_id": spec.record_ids(pd.DataFrame({h: column(h) for h in spec.key}, index=index)).to_numpy(dtype=object),
        "status": held_once(r.status.iloc[at].to_numpy(dtype=object)),
        "award_cents": pd.array(award, dtype="Int64").to_numpy(dtype=object, na_value=None),
        "codes": held_once(r.row_findings.iloc[at].to_numpy(dtype=object)),
        "area": held_once(column(m.area_column).astype(object).to_numpy()) if m.area_column else np.full(len(index), None, dtype=object),
        "year": held_once(pd.array(year, dtype="Int64").to_numpy(dtype=object, na_value=None)),
        "open_errors": r.open_errors[at],  # for the run report's two Flagged counts (not kept in the ledger)
        **_prior_fields({h: column(h) for h in (prior.name, prior.date) if h} if prior else {}, prior, len(index)),
    }


def _json_lines(frame: pd.DataFrame) -> np.ndarray:
    """Each row of `frame` as one JSON object (text), by pandas' writer over the whole frame."""
    if frame.empty:
        return np.full(len(frame), None, dtype=object)
    return json_records(frame, force_ascii=False, date_format="iso")


def _inputs(r: SheetResult, rows: slice | None = None) -> np.ndarray:
    """Per row: its values in the columns the program reads as returned (what a reviewer decision
    written in the returned workbook covers, batch.reviews); made here the first time when the sheet
    had no reviewer's decision to judge (`process_sheet`): then only the records read them, and a
    large file's records are made by a copy of the worker as it writes (`batch.run.workers`)."""
    if r.inputs is SENT:
        raise RuntimeError(f"{r.sheet.name}: the rows' read values were let go once its records were sent")
    if callable(r.inputs) and rows is not None:  # a block's: not kept
        return r.inputs(rows)
    if callable(r.inputs):
        r.inputs = r.inputs()
    found = r.inputs if r.inputs is not None else np.full(len(r.typed), None, dtype=object)
    return found if rows is None else found[rows]


def _portfolio_fields(r: SheetResult) -> dict:
    """The fields the program's portfolio rules read (`fields`, JSON) and the key of each of its
    groups (a column `key:<grouping>` each), for each row computed (None for an Invalid row, and for
    a program without portfolio rules): what the ledger keeps of each record for later runs."""
    n = len(r.typed)
    fields = np.full(n, None, dtype=object)
    portfolio = r.program.portfolio
    prior = r.program.prior_incentive
    if portfolio is None and prior is not None and prior.conditions:  # the answers its prior-incentive findings read
        computed = (r.status.isin(["OK", "Flagged", "Ineligible"])).to_numpy()
        if computed.any():
            kept = r.typed.loc[computed, list(prior.conditions)].astype("boolean").astype(object)
            fields[computed] = _json_lines(kept.where(kept.notna(), None))
        return {"fields": fields}
    if portfolio is None:
        return {"fields": fields}
    keys = {f"key:{g}": np.full(n, None, dtype=object) for g in portfolio.groupings}
    computed = (r.status.isin(["OK", "Flagged", "Ineligible"])).to_numpy()
    if r.withdrawn is not None:  # a withdrawn record is in no group: it counts in no limit of later runs
        computed = computed & ~r.withdrawn
    if computed.any():
        before = r.fields_before
        if before is not None and not portfolio.reads_computed:  # the same fields: worked out once
            of = before.loc[r.typed.index[computed]]
        else:
            of = portfolio.of(r.typed[computed], r.computed[computed])
        fields[computed] = _json_lines(of[portfolio.kept])
        for g in portfolio.groupings:
            keys[f"key:{g}"][computed] = of[g].astype(object).where(of[g].notna(), None).to_numpy()
    return {"fields": fields, **keys}


def _prior_fields(typed: dict[str, pd.Series], prior, n: int) -> dict:
    """Business Name and the date an incentive was received, for sheets that are prior incentives
    of another program (`prior`, the program's prior_incentive: its name column and its date or year
    column), of `n` rows (`typed`: those columns of theirs)."""
    if not prior:
        return {"business_name": np.full(n, None, dtype=object), "record_date": np.full(n, None, dtype=object)}
    name = typed[prior.name].astype(object).where(typed[prior.name].notna(), None)
    date = typed[prior.date].dt.strftime("%Y-%m-%d") if prior.date else pd.Series(None, index=name.index, dtype=object)
    dates = held_once(date.astype(object).where(date.notna(), None).to_numpy())  # a date a row, of a few hundred days
    return {"business_name": name.to_numpy(dtype=object), "record_date": dates}


def prior_records(result: Result, ledger, run_id: str | None, team: tuple[str, ...] = ()) -> pd.DataFrame:
    """The prior incentive records a Grow NJ row is checked against (C.34:1B-247 e.): every row of
    this workbook's prior-incentive sheets computed so far (BEIP, BRRAP), those of the run's other
    workbooks the run gave it (`Result.same_run`: BEIP, BRRAP, GrowNJ, as first calculated), and the
    latest record of each record (team, sheet, record ID) of earlier runs in the ledger (BEIP, BRRAP,
    GrowNJ); none the reviewer withdrew. A record of this run supersedes its ledger version. A ledger
    record of `team` (its names) with the sheet and record ID of a row of this workbook is that row, and the
    workbook wins, so a round trip or a forced rerun names each record once (a GrowNJ row's own sheet
    is computed after this: `process_sheet` leaves out the ledger's records of its IDs, and its
    calculator reads its rows); another team's record of that ID is another record. Columns:
    PRIOR_COLUMNS and `same_team` (a record of this workbook, or of `team` in the ledger)."""
    mine = result.records()
    received = prior_incentive_sheets()
    sheets = tuple(received)
    mine = mine[mine["sheet"].isin(list(sheets))]
    here = pd.DataFrame(
        {
            "sheet": mine["sheet"],
            "record_id": mine["record_id"],
            "business_name": mine["business_name"],
            "status": mine["status"],
            "date": mine["record_date"],
            "year": mine["year"],
            "workbook": result.path.name,
            "run_date": result.started.strftime("%Y-%m-%d"),
            "same_team": True,
        }
    )
    parts = [here[~withdrawn_codes(mine["codes"])]]  # a withdrawn record is no prior incentive, nor is its ledger version
    same = result.same_run
    if same is not None and len(same.others):  # the prior incentives of the run's other workbooks (batch.run.samerun)
        theirs = same.others[same.others["sheet"].isin(list(sheets)) & same.others["business_name"].notna()]
        counted = ~withdrawn_codes(theirs["codes"])
        theirs = pd.DataFrame(
            {
                "sheet": theirs["sheet"],
                "record_id": theirs["record_id"],
                "business_name": theirs["business_name"],
                "status": theirs["status"],
                "date": theirs["record_date"],
                "year": theirs["year"],
                "workbook": theirs["workbook"],
                "run_date": result.started.strftime("%Y-%m-%d"),
                "same_team": True,
            }
        )
        parts.append(theirs[counted])
        here = pd.concat([here, theirs], ignore_index=True)  # a record of this run supersedes its ledger version
    if there(ledger):
        from batch.run.ledger import read_prior_records

        earlier = read_prior_records(ledger, sheets, exclude_run=run_id, team=team)
        if len(earlier):
            known = pd.MultiIndex.from_arrays([here["sheet"], here["record_id"]])
            again = pd.MultiIndex.from_arrays([earlier["sheet"], earlier["record_id"]]).isin(known)
            parts.append(earlier[~(again & earlier["same_team"].to_numpy(dtype=bool))])
    prior = pd.concat(parts, ignore_index=True)
    # the fact that decides "received before", in the words of the record's own sheet
    column = prior["sheet"].map(received)
    value = prior["date"].where(prior["date"].notna(), pd.array(prior["year"], dtype="Int64").astype(str))
    return prior.assign(received=column + " " + value.astype(str))[[*PRIOR_COLUMNS, "same_team"]]


def _specs() -> dict[str, Program]:
    return {sheet_key(m.name): m for m in PROGRAMS}


def _unknown_columns(sheet: IntakeSheet) -> pd.DataFrame:
    """UNKNOWN_COLUMN (a sheet finding) for each kept column whose header matches no field, with
    the closest field names, and for each column holding cells under a blank header. The tool's
    own columns (computed, Status, Findings, the reviewer's) are never unknown."""
    ours = sheet.spec.tool_keys
    filled = sheet.filled if sheet.filled is not None else np.ones(len(sheet.headers), dtype=bool)
    found = []
    for i, (header, f) in enumerate(zip(sheet.headers, sheet.fields, strict=False)):
        if f is not None:
            continue
        named = header is not None and str(header).strip() != ""
        if (named and normalize_header(header) in ours) or not (named or (i < len(filled) and filled[i])):
            continue
        like = sheet.spec.closest(header) if named else []
        found.append(
            {
                "column": str(header) if named else "",
                "letter": column_letters(sheet.kept[i]),
                "variant": "resembles" if like else "default" if named else "no_header",
                "closest": _either(like),
            }
        )
    return pd.DataFrame(found, columns=["column", "letter", "variant", "closest"]).assign(row=-1, code="UNKNOWN_COLUMN")


def _either(names: list[str]) -> str:
    """`A`, `A` or `B`, `A`, `B` or `C`."""
    quoted = [f"`{n}`" for n in names]
    return " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)


def _routed(sheet: IntakeSheet) -> list[pd.DataFrame]:
    """SHEET_ROUTED_BY_HEADERS: the sheet was read as a program's sheet because of its header row."""
    return [pd.DataFrame([{**sheet.routed, "row": -1, "code": "SHEET_ROUTED_BY_HEADERS", "column": ""}])] if sheet.routed else []


def _no_room(sheet: IntakeSheet) -> pd.DataFrame:
    """NO_ROOM_FOR_RESULTS: the sheet's cells reach so near Excel's last column that the tool's
    columns cannot follow them; the sheet is refused (one finding, every row Invalid)."""
    last = sheet.results_at - 1
    return pd.DataFrame(
        {
            "row": [-1],
            "code": ["NO_ROOM_FOR_RESULTS"],
            "column": [""],
            "last_column": [column_letters(last)],
            "last_number": [last + 1],
            "needed": [sheet.tool_columns],
            "room": [max(EXCEL_COLUMNS - sheet.results_at, 0)],
        }
    )


def _reader_findings(sheet: IntakeSheet) -> list[pd.DataFrame]:
    """What the reader saw in the cells: formulas without a value, columns named twice, columns
    matching no field."""
    out = [_unknown_columns(sheet)]
    if sheet.uncalculated:
        position = {int(r): i for i, r in enumerate(sheet.excel_rows)}
        column_of = {g: (sheet.fields[i] or str(sheet.headers[i])) for i, g in enumerate(sheet.kept)}
        cells = sorted(sheet.uncalculated.items())
        # the columns the program reads: the first column of each field (a column matching no field,
        # a second column of a field, a helper column: info, changing no Status)
        read = {sheet.kept[i] for i, f in enumerate(sheet.fields) if f is not None and sheet.fields.index(f) == i}
        unread = np.array([c not in read for (_r, c), _f in cells], dtype=bool)
        out.append(
            pd.DataFrame(
                {
                    "row": [position.get(r + 1, -1) for (r, _c), _f in cells],
                    "column": [column_of.get(c, "") for (_r, c), _f in cells],
                    "code": "FORMULA_NOT_CALCULATED",
                    "cell": [f"{column_letters(c)}{r + 1}" for (r, c), _f in cells],
                    "formula": [f for _cell, f in cells],
                    "variant": np.where(unread, "not_read", "default"),
                    "severity": np.where(unread, "info", "warning"),
                }
            )
        )
    if sheet.truncated:
        position = {int(r): i for i, r in enumerate(sheet.excel_rows)}
        column_of = {g: (sheet.fields[i] or str(sheet.headers[i])) for i, g in enumerate(sheet.kept)}
        column_of.update({g: name for name, g in sheet.review_cols.items()})  # the reviewer's columns, cut like any cell
        out.append(_truncated(sheet.truncated, position, column_of))
    for field_name, columns in sheet.duplicates:
        out.append(
            pd.DataFrame(
                {
                    "row": [-1],
                    "column": [field_name],
                    "code": ["DUPLICATE_COLUMN"],
                    "count": [len(columns)],
                    "letters": [", ".join(column_letters(c) for c in columns)],
                }
            )
        )
    return out


def _truncated(cut: list[tuple[int, int, int, int]], position: dict[int, int], column_of: dict[int, str]) -> pd.DataFrame:
    """TEXT_TRUNCATED for each text cell cut to Excel's limit when it was read (batch.workbook.reading)."""
    return pd.DataFrame(
        {
            "row": [position.get(r + 1, -1) for r, *_ in cut],
            "column": [column_of.get(c, "") for _r, c, *_ in cut],
            "code": "TEXT_TRUNCATED",
            "cell": [f"{column_letters(c)}{r + 1}" for r, c, *_ in cut],
            "length": [n for _r, _c, n, _k in cut],
            "kept": [k for *_, k in cut],
            "limit": cells.MAX_TEXT,
        }
    )


CALC_CHUNK_ROWS = 20_000
# a sheet of at most this many valid rows keeps the portfolio fields it works out before the calculation
# for its records (`SheetResult.fields_before`); a larger sheet's would be held through the write, at the
# worker's peak memory (about 40 MB for 100,000 Transfers rows), to save less than a tenth of a second
FIELDS_KEPT_ROWS = 10_000


def calculate_in_chunks(program: Program, valid: pd.DataFrame, rules, context: RunContext) -> Calculation:
    """A calculator whose rows do not depend on each other (row_independent) runs on chunks of rows,
    so its intermediate columns take the memory of a chunk, not of the sheet; the others see every
    row at once (their limits hold across rows). A row-independent program with steps that read other
    rows (`across_rows`) runs its other steps on chunks, then those steps once on every row, so that
    no chunk hides a row from another."""
    if not _by_chunks(program, valid):
        return program.calculate(valid, rules, context)
    across = program.across_rows
    joined = _in_chunks(across.rows if across else program.calculate, valid, rules, context)
    return across.sheet(valid, joined, rules, context) if across else joined


def _by_chunks(program: Program, valid: pd.DataFrame) -> bool:
    """The program's rows are calculated a chunk of CALC_CHUNK_ROWS at a time (`calculate_in_chunks`)."""
    return program.row_independent and len(valid) > CALC_CHUNK_ROWS


def _in_chunks(calculate: Callable, valid: pd.DataFrame, rules, context: RunContext, each: Callable | None = None) -> Calculation:
    """`calculate` of each chunk of CALC_CHUNK_ROWS rows (`each` given each chunk's result as it is
    made), the chunks' results joined."""
    parts = []
    for start in range(0, len(valid), CALC_CHUNK_ROWS):
        part = calculate(valid.iloc[start : start + CALC_CHUNK_ROWS], rules, context)
        if each is not None:
            each(part)
        parts.append(part)
    carry = [p.carry for p in parts if p.carry is not None]
    return Calculation(
        pd.concat([p.computed for p in parts]),
        [f for p in parts for f in p.findings],
        pd.concat([p.ineligible for p in parts]),
        pd.concat(carry) if carry else None,
    )


@dataclass(frozen=True, eq=False)
class _Texts:
    """A chunk's texts as made, where `PackedText` cannot hold them, read as a packed chunk is."""

    texts: np.ndarray

    def values(self, start: int, stop: int) -> np.ndarray:
        return self.texts[start:stop].copy()


@dataclass(frozen=True, eq=False)
class HeldTexts:
    """A computed text column of a sheet's valid rows as its calculation made it, a chunk at a time
    (`calculate_held`): each chunk's texts (CALC_CHUNK_ROWS rows) packed as it was made (`heads`),
    and the pieces the steps across rows add to the end of each row's text (`tails`, over every valid
    row, in order; `AcrossRows.parts`). A row's text is its head followed by its tails, joined as
    the rows are read: the sheet's texts are never held whole."""

    heads: list
    tails: list[np.ndarray]
    dtype: object
    at: int  # the column's place among the computed columns, as a chunk made them

    def values(self, start: int, stop: int) -> np.ndarray:
        """The texts of valid rows `start:stop`, as objects."""
        size = CALC_CHUNK_ROWS
        pieces = [
            self.heads[c].values(max(start - c * size, 0), min(stop - c * size, size)) for c in range(start // size, -(-stop // size))
        ]
        texts = np.concatenate(pieces) if pieces else np.empty(0, dtype=object)
        return append_tails(texts, [piece[start:stop] for piece in self.tails])

    def blocks(self, at: np.ndarray, n: int) -> Iterator[np.ndarray]:
        """The column over the sheet's `n` rows, PACK_ROWS rows at a time: the valid rows' texts at
        their positions `at` (ascending), missing elsewhere (an Invalid row's, a totals row's)."""
        for start in range(0, n, PACK_ROWS):
            stop = min(start + PACK_ROWS, n)
            first, last = np.searchsorted(at, [start, stop])
            block = np.full(stop - start, np.nan, dtype=object)
            block[at[first:last] - start] = self.values(int(first), int(last))
            yield block


def calculate_held(program: Program, valid: pd.DataFrame, rules, context: RunContext) -> tuple[Calculation, dict[str, HeldTexts]] | None:
    """`calculate_in_chunks` of a large sheet returned in place: its long text columns
    (PACKED_COLUMNS) leave each chunk's result as it is made, packed, and come back apart
    (`HeldTexts`), so that the sheet's texts are never held whole. None where the program is not
    calculated by chunks, or where its steps across rows cannot give their texts apart."""
    across = program.across_rows
    if not _by_chunks(program, valid) or (across is not None and across.parts is None):
        return None
    heads: dict[str, list] = {}
    kinds: dict[str, tuple] = {}

    def hold(part: Calculation) -> None:
        for header in PACKED_COLUMNS:
            if header in part.computed.columns:
                kinds.setdefault(header, (part.computed[header].dtype, part.computed.columns.get_loc(header)))
                column = part.computed.pop(header)
                heads.setdefault(header, []).append(PackedText.of(column) or _Texts(column.to_numpy(dtype=object)))

    joined = _in_chunks(across.rows if across else program.calculate, valid, rules, context, hold)
    tails: dict[str, list] = {}
    if across is not None:
        joined, tails = across.parts(valid, joined, rules, context)
    n = len(valid)
    as_rows = {h: [np.broadcast_to(np.asarray(piece, dtype=object), (n,)) for piece in pieces] for h, pieces in tails.items()}
    return joined, {h: HeldTexts(chunks, as_rows.get(h, []), *kinds[h]) for h, chunks in heads.items()}


def calculate_counted(program: Program, valid: pd.DataFrame, withdrawn: np.ndarray, rules, context: RunContext) -> Calculation:
    """The calculation of the `valid` rows, of which the `withdrawn` ones (the reviewer withdrew their
    record, batch.reviews) count in no limit: every other row is calculated without them, and they
    keep the columns and findings they have as computed (with every row, once more, only when a row is
    withdrawn)."""
    if not withdrawn.any():
        return calculate_in_chunks(program, valid, rules, context)
    counted = calculate_in_chunks(program, valid[~withdrawn], rules, context)
    every = calculate_in_chunks(program, valid, rules, context)
    mine = valid.index[withdrawn]
    kept = [f[f["row"].isin(counted.computed.index)] for f in counted.findings] + [f[f["row"].isin(mine)] for f in every.findings]
    return Calculation(
        pd.concat([counted.computed, every.computed.loc[mine]]),
        [f for f in kept if len(f)],
        pd.concat([counted.ineligible, every.ineligible.loc[mine]]),
    )


NOT_COUNTED = ("Invalid", "Ineligible")  # statuses of records that count in no limit


def _portfolio(
    program: Program, valid: pd.DataFrame, mine: pd.DataFrame, ids: pd.Series, result: Result, run_date: str
) -> tuple[pd.DataFrame, pd.Series]:
    """The records of other workbooks the sheet's portfolio rules read (`RunContext.portfolio`), in the
    groups of the `valid` rows (their fields `mine`: `Portfolio.of(valid, None)`), that count (neither
    Invalid nor Ineligible) and are still in one of those groups: the latest version of each record of
    the runs that ended before this run started (`Result.portfolio_from`) and the records of this
    run's other workbooks the run gave it (`Result.same_run`, `batch.run.samerun`). A record of the
    run's team (its names) with the ID of a row of the sheet (`ids`, every row's) or of a record of
    this run's other workbooks is superseded by this run's version; another team's record of that ID
    is another record.

    With them, the order in which records of one date count (`_entry_order`): `tie` for each record,
    and for the `valid` rows (`RunContext.portfolio_order`, indexed like them)."""
    portfolio = program.portfolio
    cols = [*portfolio.kept, "sheet", "record_id", "workbook", "run_date", "tie"]
    keys = {g: each_key(mine[g]).unique().tolist() for g in portfolio.groupings}
    same = result.same_run
    others = same.others[same.others["sheet"].eq(program.name)] if same is not None else pd.DataFrame(columns=["record_id"])
    team = result.portfolio_from[2] if result.portfolio_from is not None else ()
    parts = []
    if result.portfolio_from is not None:
        from batch.run.ledger import read_portfolio

        ledger, run_id, _team = result.portfolio_from
        found = read_portfolio(ledger, program.name, keys, exclude_run=run_id)
        if portfolio.within_team:  # its groups are the team's own (a compliance project's periods)
            found = found[found["team"].isin(team)]
        mine_too = found["team"].isin(team) & (found["record_id"].isin(ids) | found["record_id"].isin(others["record_id"]))
        parts.append(found[~mine_too].assign(place=-1, seq=np.arange(len(found))[~mine_too.to_numpy()]))
    if len(others):
        parts.append(others.assign(run_date=run_date, team=team[0] if team else None))
    found = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["status", "fields"])
    found = found[~found["status"].isin(NOT_COUNTED) & found["fields"].notna()]
    if len(found):
        fields = _fields_of(found, portfolio)
        inside = np.zeros(len(found), dtype=bool)
        for g in portfolio.groupings:  # the record's latest version is still in one of the sheet's groups
            at = each_key(fields[g])
            inside[at.index[at.isin(keys[g]).to_numpy()]] = True
        found, fields = found[inside], fields[inside]
    own = pd.DataFrame(
        {
            "team": team[0] if team else None,
            "record_id": program.schema.record_ids(valid).to_numpy(dtype=object),
            "place": same.place if same is not None else 0,
            "seq": np.arange(len(valid)),
        }
    )
    if found.empty:  # none from elsewhere: the sheet's own rows still count in the order they entered the portfolio
        if result.portfolio_from is None:
            return pd.DataFrame(columns=cols), pd.Series(dtype="float64")
        return pd.DataFrame(columns=cols), pd.Series(_entry_order(program, own, result), index=valid.index)
    tie = _entry_order(program, pd.concat([found[["team", "record_id", "place", "seq"]], own], ignore_index=True), result)
    out = fields.assign(sheet=program.name, **{c: found[c] for c in ("record_id", "workbook", "run_date")}, tie=tie[: len(found)])
    return out.reset_index(drop=True)[cols], pd.Series(tie[len(found) :], index=valid.index)


def _entry_order(program: Program, records: pd.DataFrame, result: Result) -> np.ndarray:
    """The order in which `records` (team, record_id, place: -1 for the ledger's, else the workbook's
    place in this run, seq: the order within it) count on one date: the records that entered the
    portfolio in earlier runs first, by where each first entered it (its first version's run end,
    run, workbook, row: a record processed again keeps its place), then the records new in this run,
    by workbook place and row. Returns each record's rank."""
    entered = None
    if result.portfolio_from is not None:
        from batch.run.ledger import read_entries

        ledger, run_id, team = result.portfolio_from
        wanted = records[["team", "record_id"]].dropna()
        mine = records[records["place"].ge(0)]["record_id"]  # this run's records: of the run's team, by every name of it
        wanted = pd.concat([wanted, *(pd.DataFrame({"team": name, "record_id": mine}) for name in team[1:])], ignore_index=True)
        entered = read_entries(ledger, program.name, wanted, exclude_run=run_id)
    first = np.full(len(records), -1, dtype=np.int64)  # each record's place among those that entered before; -1: new
    if entered is not None and not entered.empty:
        entered["team"] = np.where(entered["team"].isin(team), team[0] if team else None, entered["team"])
        entered = entered.sort_values(["ended", "run_id", "workbook", "seq"]).drop_duplicates(["team", "record_id"])
        first = pd.MultiIndex.from_frame(entered[["team", "record_id"]]).get_indexer(
            pd.MultiIndex.from_frame(records[["team", "record_id"]])
        )
    new = first < 0
    place, seq = records["place"].to_numpy(dtype=np.float64), records["seq"].to_numpy(dtype=np.float64)
    return _ranks(np.lexsort((seq, place, np.where(new, 0, first), new)))  # lexsort is stable: then as listed


def _ranks(order: np.ndarray) -> np.ndarray:
    """Each position's rank, of the positions in `order`."""
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


def _fields_of(found: pd.DataFrame, portfolio) -> pd.DataFrame:
    """The portfolio fields of `found` records, a column each: read from their JSON (`fields`), but
    for the records of this run's other workbooks, whose fields the run read once (`field:<name>`)."""
    kept = portfolio.kept
    given = [f"field:{k}" for k in kept]
    read = found[given].notna().any(axis=1) if set(given) <= set(found.columns) else pd.Series(False, index=found.index)
    parts = []
    if (~read).any():
        parts.append(portfolio.read(found.loc[~read.to_numpy(), "fields"]))
    if read.any():
        parts.append(found.loc[read.to_numpy(), given].set_axis(kept, axis=1))
    return pd.concat(parts).reindex(found.index) if len(parts) > 1 else parts[0]


def _in_two_workbooks(program: Program, ids: np.ndarray, result: Result | None, skip: np.ndarray) -> list[pd.DataFrame]:
    """RECORD_IN_TWO_WORKBOOKS on each row (not a totals row) whose record ID another workbook of this
    run also holds on this sheet (`Result.same_run`): the record counts in both, and each names the
    others (the first ten by place, then how many more)."""
    same = result.same_run if result is not None else None
    if same is None or program.portfolio is None or not len(same.others):
        return []
    others = same.others[same.others["sheet"].eq(program.name) & same.others["record_id"].isin(ids[~skip])]
    others = others.drop_duplicates(["record_id", "place"])
    if others.empty:
        return []
    where = listing(others["workbook"], others["record_id"], ", ", " and {:,} more")
    named = pd.Series(ids, dtype=object).map(where)
    hit = named.notna().to_numpy() & ~skip
    if not hit.any():
        return []
    rows = np.flatnonzero(hit)
    found = {"row": rows, "column": program.schema.key[0], "code": "RECORD_IN_TWO_WORKBOOKS", "value": ids[rows]}
    found["records_sheet"] = program.name  # the intake sheet's name: a CSV's sheet is its file's
    return [pd.DataFrame({**found, "workbooks": named.to_numpy()[rows]})]


def _per_row(pos: np.ndarray, codes: np.ndarray, n: int, dtype) -> pd.Series:
    """The Findings column of `n` rows: each row's codes (`codes` of the findings at rows `pos`), each
    once, in the order found, joined with "; "; "" for a row without one. Typed as pandas' groupby
    typed it: text, or where no row has a code the codes' own `dtype` (and of no row, an Index of none)."""
    out = np.full(n, "", dtype=object)
    if not len(pos):
        index = pd.RangeIndex(n, name="pos") if n else pd.Index([], dtype=np.int64, name="pos")
        return pd.Series(out, index=index, name="Code", dtype=dtype)
    number, distinct = pd.factorize(codes)
    _, first = np.unique(pos * len(distinct) + number, return_index=True)
    keep = np.sort(first)  # each (row, code) once, where it was first found
    keep = keep[np.argsort(pos[keep], kind="stable")]  # each row's codes together, still in the order found
    rows, text = pos[keep], codes[keep]
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    joiner = np.full(len(rows), "; ", dtype=object)
    joiner[np.r_[starts[1:], len(rows)] - 1] = ""  # none after a row's last code
    out[rows[starts]] = np.add.reduceat(text + joiner, starts)  # each row's texts added up, in order
    return pd.Series(out, index=pd.RangeIndex(n, name="pos"), name="Code", dtype=str)


def process_sheet(
    sheet: IntakeSheet, program: Program, result: Result | None = None, context: RunContext | None = None, pack: bool = False
) -> SheetResult:
    """The sheet's rows validated, calculated and annotated. `pack`: only the writer reads the long
    text columns after the checks (the workbook is returned in place): a sheet of more than
    PACKED_FROM_ROWS rows holds them packed from its calculation on (`pack_text`), and the findings
    are made in the pages their texts held."""
    spec = sheet.spec
    rules = rules_mod.load(program.rules)
    clock = time.perf_counter()
    # totals rows are returned as they came: not validated, not computed, not counted (their cells
    # are read as blank, so they take no part in checks across rows such as DUPLICATE_ID)
    totals, totals_found = totals_rows(sheet)
    raw = sheet.raw
    if totals.any():
        raw = raw.copy()
        raw.iloc[totals] = ""
    unknown = [str(h) for h, f in zip(sheet.headers, sheet.fields, strict=False) if f is None and h not in (None, "")]
    typed, vfind = validate(spec, raw, unknown, skip=totals)
    if sheet.no_room:  # refused, not checked: its one finding makes every row Invalid
        vfind = _no_room(sheet)
    clock = result.timed("validate", clock) if result else clock
    n = len(typed)
    errors = vfind if sheet.no_room else vfind[vfind["code"].isin(VALIDATION_CODES)]
    invalid = np.zeros(n, dtype=bool)
    if (errors["row"] < 0).any():
        invalid[:] = True
    invalid[errors.loc[errors["row"] >= 0, "row"].astype(int).to_numpy()] = True
    invalid &= ~totals
    valid = typed[~invalid & ~totals]
    context = context or RunContext.today()
    if PRIOR_INCENTIVES in program.needs and program.prior_incentive and len(context.prior):
        # a record of an earlier run of this team with the ID of a row of this sheet (valid or not) is
        # that row's earlier version: the row counts, by its own result, not the ledger's record (a
        # round trip); another team's record of that ID is another record
        ours = context.prior["same_team"] if "same_team" in context.prior else True
        mine = context.prior["sheet"].eq(spec.name) & context.prior["record_id"].isin(spec.record_ids(typed[~totals])) & ours
        context = replace(context, prior=context.prior[~mine.to_numpy()])
    reads = result is not None and (result.portfolio_from is not None or result.same_run is not None)
    fields_before = None
    if program.portfolio is not None and reads and len(valid):
        fields = program.portfolio.of(valid, None)
        far, order = _portfolio(program, valid, fields, spec.record_ids(typed[~totals]), result, context.run_day)
        context = replace(context, portfolio=far, portfolio_order=order)
        fields_before = fields if len(valid) <= FIELDS_KEPT_ROWS else None
    before = result.decisions_before if result else None
    # the columns the program reads, as read (a totals row's read as blank): now when a reviewer's
    # decision is judged against them, else when the records are made (`_inputs`); a large sheet
    # returned in place makes them now, held packed, and lets its cells go before its calculation
    inputs = ReadValues(raw, typed, {c.header: c.kind for c in spec.columns})
    if sheet.reviews is not None:
        inputs = inputs()
    elif pack and n > PACKED_FROM_ROWS:
        inputs = PackedValues.of(inputs, n) or inputs
        if isinstance(inputs, PackedValues):  # nothing reads the cells again: the writer copies them from the file
            sheet.drop_cells()
    del raw
    ids = spec.record_ids(typed).to_numpy(dtype=object)
    occurrence = occurrences(ids, ~totals)
    judged = judge(
        sheet.name,
        sheet.reviews,
        inputs,
        ids,
        occurrence,
        before,
        _returned(sheet, ids, occurrence, result),
        lambda pos: legacy_digest(sheet.cells.iloc[pos].tolist()),
    )
    out = withdrawn(sheet.reviews, judged, n)
    pulled = out[~invalid & ~totals]  # the valid rows whose records a reviewer withdrew
    # a large sheet returned in place holds its long texts packed from each chunk of its calculation on
    held = calculate_held(program, valid, rules, context) if pack and n > PACKED_FROM_ROWS and not pulled.any() else None
    calc, texts = held if held is not None else (calculate_counted(program, valid, pulled, rules, context), {})
    clock = result.timed("calculate", clock) if result else clock
    computed = calc.computed.reindex(typed.index)
    ineligible = calc.ineligible.reindex(typed.index, fill_value=False).astype(bool).to_numpy()
    calculated = [f for f in calc.findings if len(f)]
    del calc  # its columns are `computed`'s: the long texts packed below are then held nowhere else
    packed = {}
    if pack and n > PACKED_FROM_ROWS:
        computed, packed = pack_text(computed)
        at = typed.index.get_indexer(valid.index)  # where each valid row stands in the sheet
        for header, held_texts in texts.items():
            packed_texts = PackedText.of_blocks(held_texts.blocks(at, n), PACK_ROWS, held_texts.dtype)
            if packed_texts is not None:
                packed[header] = packed_texts
            else:  # texts no block can hold (none a calculator writes): the column as made
                column = pd.Series(np.concatenate([*held_texts.blocks(at, n), np.empty(0, dtype=object)]), index=typed.index)
                computed.insert(min(held_texts.at, len(computed.columns)), header, column)
        del texts
        give_back_freed()  # the pages of the texts packed and of the calculation's own columns

    reader = [] if sheet.no_room else _reader_findings(sheet)
    record_ids = ids.copy()  # a totals row's ID text is set below
    twice = _in_two_workbooks(program, record_ids, result, totals)
    parts = [*_routed(sheet), vfind, *reader, *twice, *calculated]

    def not_on_totals(raw: pd.DataFrame) -> pd.DataFrame:  # a totals row says only that it was skipped
        if not totals.any():
            return raw
        at = raw["row"].astype(int).to_numpy()
        return raw[(at < 0) | ~totals[np.clip(at, 0, None)]]

    if stacked_as_given(parts):  # each frame rendered on its own: the union of their fields never made
        rendered = render_each([*map(not_on_totals, parts), totals_found.drop(columns="record_id")], sheet.name, rules.findings)
    else:
        raw_found = stack([not_on_totals(stack(parts)), totals_found.drop(columns="record_id")])
        rendered = render(raw_found, sheet.name, rules.findings)
        del raw_found
    del parts, calculated
    record_ids[totals_found["row"].to_numpy(dtype=int)] = totals_found["record_id"].to_numpy(dtype=object)

    def as_findings(rendered: pd.DataFrame) -> pd.DataFrame:
        pos = rendered["row"].astype(int).to_numpy() if len(rendered) else np.array([], dtype=int)
        at = np.where(pos >= 0, pos, n)  # position n looks up the sheet-level blank
        out = pd.DataFrame(
            {
                "Sheet": sheet.name,
                "Row": pd.array(np.where(pos >= 0, np.append(sheet.excel_rows, 0)[at], 0), dtype="Int64"),
                "Record ID": np.append(record_ids, "")[at],
                **{c: rendered[c].to_numpy() for c in ("Column", "Code", "Severity", "Message", "Citation")},
                "pos": pos,
            }
        )
        out.loc[pos < 0, "Row"] = pd.NA
        return out

    findings = as_findings(rendered)
    del rendered
    decisions, waived = pd.DataFrame(columns=DECISION_COLUMNS), {}
    if sheet.reviews is not None:  # a returned workbook's reviewer decisions
        found, waived, decisions = review(sheet.name, sheet.reviews, judged, findings, record_ids, occurrence)
        if len(found):
            findings = pd.concat([findings, as_findings(render(found, sheet.name, rules.findings))], ignore_index=True)
        decision_col = sheet.review_cols.get(REVIEW_COLUMNS[0])
        for pos, text in written_back(sheet.reviews, judged).items():  # a stale decision goes back with " (stale)"
            sheet.reviews.at[pos, REVIEW_COLUMNS[0]] = text
            if decision_col is not None:
                sheet.cut_text[(int(sheet.excel_rows[pos]) - 1, decision_col)] = text
    # a waiver covers the warnings of a code, never its errors (the (row, code) pairs made only where
    # a reviewer waived one: a full sheet's million findings would make a million pairs for nothing)
    is_waived = np.zeros(len(findings), dtype=bool)
    if waived:
        key = list(zip(findings["pos"].tolist(), findings["Code"].tolist(), strict=True))
        is_waived = np.array([k in waived for k in key], dtype=bool) & (findings["Severity"] == "warning").to_numpy(dtype=bool)
        findings["Waived"] = [waived[k] if w else "" for k, w in zip(key, is_waived, strict=True)]
    else:
        findings["Waived"] = ""
    pos = findings["pos"].to_numpy()
    at_row = pos >= 0

    # a waived warning no longer counts toward Status
    flagged = np.zeros(n, dtype=bool)
    flagged[pos[at_row & findings["Severity"].isin(["error", "warning"]).to_numpy() & ~is_waived]] = True
    status = np.select([totals, invalid, ineligible, flagged], ["", "Invalid", "Ineligible", "Flagged"], "OK")
    shown = findings["Code"].where(~is_waived, findings["Code"] + " (waived)") if is_waived.any() else findings["Code"]
    row_findings = _per_row(pos[at_row].astype(np.int64, copy=False), shown.to_numpy(dtype=object)[at_row], n, shown.dtype)
    status = pd.Series(held_once(status.astype(object)), index=typed.index)  # four texts, each held once
    summary_frame = pd.concat([typed, computed], axis=1)
    codes = findings.loc[at_row, ["pos", "Code"]].rename(columns={"pos": "row"})
    left_out = totals | out  # the summary's pivots count records that stand: not a totals row, not withdrawn
    if left_out.any():
        codes = codes[~left_out[codes["row"].to_numpy()]]
        summary = program.summarize(summary_frame[~left_out], status[~left_out], codes, rules)
    else:
        summary = program.summarize(summary_frame, status, codes, rules)
    if result:
        result.timed("annotate", clock)
    return SheetResult(
        sheet, program, typed, computed, status, row_findings, findings, summary, decisions, out, inputs, fields_before, packed
    )


def _returned(sheet: IntakeSheet, record_ids: np.ndarray, occurrence: np.ndarray, result: Result | None) -> dict:
    """(record ID, occurrence) -> the row's values in the columns the program reads as the tool last
    returned it (the ledger's latest version, of the runs ended before this one), for the rows with a
    reviewer decision: what a new decision covers (batch.reviews)."""
    if sheet.reviews is None or result is None or result.portfolio_from is None:
        return {}
    decided = (sheet.reviews[REVIEW_COLUMNS[0]] != "").to_numpy()
    if not decided.any():
        return {}
    from batch.run.ledger.reads import read_returned

    ledger, run_id, team = result.portfolio_from
    found = read_returned(ledger, team, sheet.spec.name, sorted({str(r) for r in record_ids[decided]}), run_id)
    return {(str(r), int(o)): i for r, o, i in zip(found["record_id"], found["occurrence"], found["inputs"], strict=True)}


def _other_sheet_finding(sheet: OtherSheet) -> pd.DataFrame:
    """The finding of a sheet carried through unchecked: SHEET_NOT_ROUTED when its headers fit
    several programs equally, else UNKNOWN_SHEET; and TEXT_TRUNCATED for each text cut to Excel's
    limit (sheet findings: the sheet has no rows of records)."""
    code = "SHEET_NOT_ROUTED" if sheet.not_routed else "UNKNOWN_SHEET"
    raw = pd.DataFrame([{**(sheet.not_routed or {}), "row": -1, "code": code, "column": ""}])
    if sheet.truncated:
        raw = pd.concat([raw, _truncated(sheet.truncated, {}, {})], ignore_index=True)
    return _without_rows(render(raw, sheet.name, rules_mod.common_findings()), sheet.name)


def _without_rows(rendered: pd.DataFrame, sheet: str) -> pd.DataFrame:
    """Findings about a sheet or the workbook (`sheet` ""), in the Findings columns."""
    return pd.DataFrame(
        {
            "Sheet": sheet,
            "Row": pd.array([pd.NA] * len(rendered), dtype="Int64"),
            "Record ID": "",
            "Column": "",
            **{c: rendered[c].to_numpy() for c in ("Code", "Severity", "Message", "Citation")},
        },
        index=range(len(rendered)),
    )


def _workbook_findings(book, not_in_place: str | None = None) -> pd.DataFrame:
    """What the returned workbook cannot keep of the input, said about the workbook (no sheet):
    FORMATTING_NOT_KEPT for a legacy .xls (info), or an .xlsx that cannot be annotated in place
    (warning; why: `not_in_place`); ENCRYPTION_REMOVED for a workbook encrypted with Excel's default
    password; SHEET_NOT_READABLE for each sheet whose relationship is broken; SHEET_NAMES_REFUSED for
    a workbook listing two or more sheet names Excel refuses; MACROS_REMOVED for a
    workbook with macros (naming the VBA project and each Excel 4 macro sheet removed)."""
    rows = []
    if book.kind == "xls":
        rows.append({"code": "FORMATTING_NOT_KEPT", "variant": "default"})
    if not_in_place:
        rows.append({"code": "FORMATTING_NOT_KEPT", "variant": "in_place", "expected": not_in_place, "severity": "warning"})
    if getattr(book, "encrypted", False):
        rows.append({"code": "ENCRYPTION_REMOVED"})
    for sheet, why in getattr(book, "unreadable", []):
        rows.append({"code": "SHEET_NOT_READABLE", "sheet_name": sheet, "expected": why})
    if sheets_kept_by_libreoffice(book.sheet_names) < len(book.sheet_names) and not not_in_place:
        refused = [name for name in book.sheet_names if excel_refuses(name)]
        rows.append({"code": "SHEET_NAMES_REFUSED", "count": len(refused), "names": ", ".join(refused)})
    if book.macros and not not_in_place:
        rows.append({"code": "MACROS_REMOVED", "removed": describe(book.macros)})
    raw = pd.DataFrame(rows, columns=["code", "variant", "expected", "severity", "sheet_name", "removed", "count", "names"], dtype=object)
    raw = raw.assign(row=-1, column="", value=getattr(book, "name", "") or book.path.name)
    return _without_rows(render(raw, "", rules_mod.common_findings()), "")


def no_intake_reason(sheets: list[OtherSheet], intake_names: list[str], unreadable: list[tuple[str, str]] = ()) -> str:
    """The one-line reason of a workbook in which no sheet is an intake sheet (`unreadable`: the
    sheets that could not be read, with why)."""
    found = [s.name + (f" (its headers fit {s.not_routed['candidates']} equally)" if s.not_routed else "") for s in sheets]
    found += [f"{name} (which could not be read: {why})" for name, why in unreadable]
    return (
        "no intake sheet: "
        + (f"found sheets {', '.join(found)}" if found else "found no sheets")
        + f"; an intake sheet is named {', '.join(intake_names)} or has the headers of one."
    )


def process(
    path: Path,
    limits: Limits = Limits(),
    as_of: dt.date | None = None,
    ledger=None,
    run_id: str | None = None,
    scratch: Path | None = None,
    team: str | tuple[str, ...] | None = None,
    same_run=None,
) -> Result:
    """Read, validate and calculate one workbook (no output written).

    A workbook encrypted with Excel's default password is decrypted into a temporary copy (beside
    `scratch`, the run's partial output, or in the system's temporary folder), which is read and
    then annotated (`Result.source`); `Result.discard()` removes it, as does the end of the process.

    `as_of` is the run's as-of date (default: today, in local time). `ledger`, when given, is read
    (never written) for the prior incentive records of earlier runs, leaving out those of `run_id`,
    and for the reviewer decisions of `team`'s records (a record is known by its team, sheet and
    record ID; `team`: the team's name, or every name its records are found by; None: the file's
    folder, resolved, as a run of that folder's). `same_run` (`batch.run.samerun.SameRun`): the
    records of the run's other workbooks its portfolio rules read, and its place among them.

    The file is opened once (`batch.workbook.opened.Opened`) and handed down: its hash, the check
    for encryption, every stage of reading and the check that it can be annotated in place take it
    from there, never opening the path again (a decrypted copy is opened once in its place). It
    stays open with the result (`Result.opened`) for the in-place writer, until `Result.discard()`
    (or the result's end) closes it.
    """
    path = Path(path)
    opened = Opened(path)
    result = None
    try:
        result = Result(path, opened.sha256(), dt.datetime.now(dt.UTC), as_of=as_of or dt.date.today(), same_run=same_run)
        clock = time.perf_counter()
        if encrypted(opened):
            result.source = decrypt_default(opened, scratch_file(scratch, "decrypted"), path.name)
            weakref.finalize(result, Path.unlink, result.source, missing_ok=True)
            opened.close()
            opened = Opened(result.source, path.name)
        result.opened = opened
        weakref.finalize(result, opened.close)
        names = (team,) if isinstance(team, str) else tuple(team or ()) or (str(path.resolve().parent),)
        return _process(result, opened, clock, limits, ledger, run_id, scratch, names)
    except BaseException:
        opened.close()
        if result is not None:
            result.discard()
        raise


def _process(
    result: Result,
    opened: Opened,
    clock: float,
    limits: Limits,
    ledger,
    run_id: str | None,
    scratch: Path | None,
    team: tuple[str, ...],
) -> Result:
    """`process` of the workbook `opened` (the file itself, or its decrypted copy)."""
    path = result.path
    by_key = _specs()
    specs = {k: m.schema for k, m in by_key.items()}
    try:
        book = None
        if opened.path.stat().st_size >= readapart.READ_APART_FROM:  # read by a copy of this process: its pages end with it
            book = readapart.read_apart(lambda: read_workbook(opened, specs, limits, scratch, path.name), specs)
        if book is None:
            book = read_workbook(opened, specs, limits, scratch, path.name)
    except BaseException:
        result.discard()
        raise
    book.encrypted = result.source is not None
    if there(ledger) and any(isinstance(s, IntakeSheet) and s.reviews is not None for s in book.sheets):
        from batch.run.ledger import read_decisions

        result.decisions_before = read_decisions(ledger, team)
    if there(ledger):
        result.portfolio_from = (ledger, run_id, team)
    result.timed("read", clock)
    # a record of this workbook is named by its file name and the run's date (UTC, as the ledger's)
    context = RunContext(result.as_of, workbook=path.name, run_date=result.started.strftime("%Y-%m-%d"))
    # a sheet is its spec's program, whether routed by its name or by its header row
    by_spec = {m.name: m for m in by_key.values()}
    intake = [(i, s, by_spec[s.spec.name]) for i, s in enumerate(book.sheets) if isinstance(s, IntakeSheet)]
    if not intake:  # nothing would be checked: the file is refused, never said to be OK
        raise UnreadableWorkbook(no_intake_reason(book.sheets, [m.name for m in by_key.values()], book.unreadable))
    # sheets that read prior incentive records (Grow NJ) are computed after those that give them
    not_in_place = refusal(opened) if book.kind == "zip" else None
    in_place = book.kind == "zip" and not_in_place is None  # the returned workbook copies the input's cells from the file
    done: dict[int, SheetResult] = {}
    prior_ready = False
    for i, sheet, program in sorted(intake, key=lambda t: PRIOR_INCENTIVES in t[2].needs):
        if PRIOR_INCENTIVES in program.needs and not prior_ready:
            result.sheets = [done[k] for k in sorted(done)]  # the prior incentive sheets, computed above
            context = replace(context, prior=prior_records(result, ledger, run_id, team))
            prior_ready = True
        done[i] = process_sheet(sheet, program, result, context, pack=in_place)
    result.sheets = []
    extra = []
    result.in_place = in_place
    for i, sheet in enumerate(book.sheets):
        if i in done:
            if in_place:  # the returned workbook copies the input's cells from the file: free them
                done[i].sheet.drop_cells()
            result.sheets.append(done[i])
        else:
            result.sheets.append(sheet)
            extra.append(_other_sheet_finding(sheet))
    result.kind, result.tool_sheets = book.kind, book.skipped
    parts = [r.findings[[*FINDINGS_COLUMNS, "Waived"]] for r in result.intake] + extra + [_workbook_findings(book, not_in_place)]
    if parts:
        allf = pd.concat(parts, ignore_index=True)
        order = {name: i for i, name in enumerate(s.sheet.name if isinstance(s, SheetResult) else s.name for s in result.sheets)}
        allf = allf.assign(
            _sev=allf["Severity"].map(SEVERITY_ORDER), _sheet=allf["Sheet"].map(order), _row=allf["Row"].fillna(0)
        ).sort_values(["_sev", "_sheet", "_row"], kind="stable")
        result.findings = allf[[*FINDINGS_COLUMNS, "Waived"]].fillna({"Waived": ""}).reset_index(drop=True)
    return result
