"""The run report `OUTBOX/run-<run-id>.summary.xlsx`: what one batch run did, across every file.

Sheets: `Files` (each input with its status, reason, counts and output), `Portfolio` (awards by
program, area and year; findings by code; across all files), one sheet per limit a program
declares across workbooks (`Program.records`: BRRAP's `BRRAP Aggregate`, the aggregate limit of a
tax period checked across every workbook of the run), `Changes` (each record ID against
its latest earlier appearance in the ledger), `Run`.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xlsxwriter

from batch import __version__
from batch.pipeline import FLAGGED_ERRORS, FLAGGED_WARNINGS
from batch.programs import PROGRAMS, Limit, Records
from batch.programs._kit.calculation import SummaryTable
from batch.run.ledger import Ledger
from batch.workbook.looks import HEADER_BG, Formats, print_setup
from batch.workbook.toolsheets import row_heights, table_widths, write_table

CHANGE_COLUMNS = [
    "Sheet",
    "Record ID",
    "File",
    "Change",
    "Old Award ($)",
    "New Award ($)",
    "Old Status",
    "New Status",
    "Findings Appeared",
    "Findings Cleared",
    "Previous Run",
]


def _missing(value) -> bool:
    """None, float NaN, pd.NA and NaT: a blank cell in the report, never the text `nan`."""
    return value is None or (not isinstance(value, (str, list, tuple, set, dict)) and bool(pd.isna(value)))


def _codes(text) -> set[str]:
    return set() if _missing(text) else {c for c in str(text).split("; ") if c}


def _each_distinct(values: pd.Series, fn) -> pd.Series:
    """`fn` of each value of `values`, as objects, worked out once for each distinct value (a missing
    one as None): a run's records repeat a few areas, years and sets of codes many times."""
    codes, distinct = pd.factorize(values)  # a missing value: code -1, the last of `made`
    made = pd.array([*map(fn, distinct), fn(None)], dtype=object)
    return pd.Series(made.take(codes), index=values.index, dtype=object)


def _text(values) -> pd.Series:
    """Text with None (never NaN or pd.NA) for a missing value."""
    s = pd.Series(values, dtype=object)
    return s.where(s.notna(), None)


def _cents(values) -> pd.Series:
    return pd.to_numeric(pd.Series(values), errors="coerce").round().astype("Int64")


def _moved_codes(before: pd.Series, now: pd.Series) -> tuple[list[list[str]], list[list[str]]]:
    """Per row, the codes of `now` not in `before` and those of `before` not in `now` (each sorted),
    worked out once for each distinct pair of texts of codes (a missing one: no codes): the records
    of a run repeat a few sets of codes many times."""
    old_at, old_texts = pd.factorize(before)  # a missing text: -1, the last of its sets below
    new_at, new_texts = pd.factorize(now)
    old_sets, new_sets = [*map(_codes, old_texts), set()], [*map(_codes, new_texts), set()]
    width = len(new_sets)
    pairs, each = np.unique((old_at % len(old_sets)) * width + new_at % width, return_inverse=True)
    moved = [
        (sorted(new_sets[p % width] - old_sets[p // width]), sorted(old_sets[p // width] - new_sets[p % width])) for p in pairs.tolist()
    ]
    at = each.reshape(-1).tolist()
    return [moved[i][0] for i in at], [moved[i][1] for i in at]


def changes(current: pd.DataFrame, previous: pd.DataFrame) -> pd.DataFrame:
    """New records, changed awards (old and new), status changes, findings that appeared or cleared.

    A value that is not there (the old status of a new record, an award not computed) is None in a
    text column and pd.NA in an award column (cents, Int64): never NaN or the text `nan`."""
    if current.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    needed = ["sheet", "record_id", "file", "status", "award_cents", "codes"]
    current = current.reindex(columns=list(dict.fromkeys([*current.columns, *needed])))
    current = current.drop_duplicates(["sheet", "record_id"], keep="first")  # later repeats are DUPLICATE_ID rows
    previous = previous.reindex(columns=["sheet", "record_id", "run_id", "status", "award_cents", "codes"]).rename(
        columns={"run_id": "run_id_old", "status": "status_old", "award_cents": "award_cents_old", "codes": "codes_old"}
    )
    both = current.merge(previous, on=["sheet", "record_id"], how="left", indicator=True).reset_index(drop=True)
    new = (both["_merge"] == "left_only").to_numpy()
    appeared, cleared = _moved_codes(both["codes_old"], both["codes"])
    award_old, award_new = _cents(both["award_cents_old"]), _cents(both["award_cents"])
    same_award = (award_old == award_new).fillna(False) | (award_old.isna() & award_new.isna())
    award_changed = ~new & ~same_award.to_numpy(dtype=bool)
    status_old, status_new = _text(both["status_old"]), _text(both["status"])
    same_status = (status_old == status_new) | (status_old.isna() & status_new.isna())
    status_changed = ~new & ~same_status.to_numpy(dtype=bool)
    kinds = []
    for is_new, a, s, ap, cl in zip(new, award_changed, status_changed, appeared, cleared, strict=True):
        parts = ["New record"] if is_new else []
        if not is_new:
            parts += ["Award changed"] if a else []
            parts += ["Status changed"] if s else []
            parts += ["Findings appeared"] if ap else []
            parts += ["Findings cleared"] if cl else []
        kinds.append("; ".join(parts))
    out = pd.DataFrame(
        {
            "Sheet": _text(both["sheet"]),
            "Record ID": _text(both["record_id"]),
            "File": _text(both["file"]),
            "Change": _text(kinds),
            "Old Award ($)": award_old,
            "New Award ($)": award_new,
            "Old Status": status_old,
            "New Status": status_new,
            # a new record has nothing to compare its findings with
            "Findings Appeared": _text([None if n or not x else "; ".join(x) for n, x in zip(new, appeared, strict=True)]),
            "Findings Cleared": _text([None if n or not x else "; ".join(x) for n, x in zip(new, cleared, strict=True)]),
            "Previous Run": _text(both["run_id_old"]),
        },
        columns=CHANGE_COLUMNS,
    )
    return out[out["Change"] != ""].reset_index(drop=True)


STATUSES = ["OK", FLAGGED_ERRORS, FLAGGED_WARNINGS, "Ineligible", "Invalid"]


def portfolio(records: pd.DataFrame) -> list[SummaryTable]:
    if records.empty:
        return []
    from batch.reviews import withdrawn_codes

    # the awards count the records that stand: neither Invalid nor Ineligible, nor withdrawn by the reviewer
    stands = ~records["status"].isin(["Invalid", "Ineligible"]) & ~withdrawn_codes(records["codes"])
    counted = records.loc[stands, ["sheet", "record_id", "award_cents", "area", "year"]].copy()
    counted["award"] = pd.to_numeric(counted["award_cents"], errors="coerce").fillna(0)
    # a sheet without an area or category column counts as "(all)"; a row of a sheet with one that
    # leaves it blank, as "(not given)"
    counted["area"] = _each_distinct(counted["area"], lambda a: None if _missing(a) or not str(a).strip() else str(a))
    with_area = {m.name for m in PROGRAMS if m.area_column}
    instead = counted["sheet"].isin(with_area).map({True: "(not given)", False: "(all)"})
    counted["area"] = counted["area"].where(counted["area"].notna(), instead)
    year = pd.to_numeric(counted["year"], errors="coerce").round().astype("Int64")
    counted["year"] = _text(_each_distinct(year, lambda y: "" if _missing(y) else str(y)))  # "": grouped, then written blank
    by_program = counted.groupby("sheet").agg(Records=("record_id", "size"), **{"Award ($)": ("award", "sum")}).reset_index()
    by_area_year = (
        counted.groupby(["sheet", "area", "year"]).agg(Records=("record_id", "size"), **{"Award ($)": ("award", "sum")}).reset_index()
    )
    by_area_year.columns = ["Sheet", "Area or Category", "Year", "Records", "Award ($)"]
    by_area_year["Year"] = _text(by_area_year["Year"].map(lambda y: y or None))
    # Flagged in two: the records with an error not waived, and those with warnings only
    errors = records["open_errors"].fillna(False).astype(bool) if "open_errors" in records else pd.Series(False, index=records.index)
    split = records["status"].where(records["status"] != "Flagged", errors.map({True: FLAGGED_ERRORS, False: FLAGGED_WARNINGS}))
    status = pd.crosstab(records["sheet"], split)
    status = status.reindex(columns=[*STATUSES, *sorted(c for c in status.columns if c not in STATUSES)], fill_value=0)
    status = status.rename_axis(index="Sheet", columns=None).reset_index()
    # the records of each sheet and set of codes counted once, then each code of a set given its records
    each, sets = pd.factorize(records["codes"])  # no codes: -1, left out
    per_set = records[["sheet"]].assign(each=each)[each >= 0].groupby(["sheet", "each"]).size().rename("Records").reset_index()
    in_set = pd.DataFrame([(i, c) for i, t in enumerate(sets) for c in sorted(_codes(t))], columns=["each", "code"], dtype=object)
    by_code = per_set.merge(in_set.astype({"each": per_set["each"].dtype}), on="each").groupby(["sheet", "code"])["Records"].sum()
    by_code = by_code.reset_index()
    by_code.columns = ["Sheet", "Code", "Records"]
    # the most frequent first, as in the returned workbook's Summary
    by_code = by_code.sort_values(["Records", "Sheet", "Code"], ascending=[False, True, True], kind="stable").reset_index(drop=True)
    money = {"Award ($)": "money"}
    return [
        SummaryTable(
            "Awards by program (rows neither Invalid nor Ineligible, nor withdrawn)", by_program.rename(columns={"sheet": "Sheet"}), money
        ),
        SummaryTable("Awards by program, area and year", by_area_year, money),
        SummaryTable("Records by program and status", status),
        SummaryTable("Records by finding code", by_code),
    ]


def limit_table(records: Records, limit: Limit, counted: pd.DataFrame, limit_cents: int) -> SummaryTable | None:
    """One limit a program declares across workbooks, over the records of the run that count
    (`counted`, with the fields the program's records keep and the file of each): per group of the
    limit, the records, the files, the amount against the limit, and whether it is over."""
    if counted.empty:
        return None
    group = list(limit.group_by)
    table = counted.groupby(group).agg(_records=(records.record, "size"), _files=("file", "nunique"), _amount=(records.amount, "sum"))
    table = table.reset_index()
    table["_limit"] = limit_cents
    table["_over"] = _text((table["_amount"] > limit_cents).map({True: "OVER", False: None}))
    amount = f"{records.amount.capitalize()} ($)"
    table.columns = [*limit.group_headers, limit.records_header, "Files", amount, "Limit ($)", "Over Limit in This Run"]
    for header in limit.group_headers:
        table[header] = table[header].astype(str)
    return SummaryTable(limit.title, table, {amount: "money", "Limit ($)": "money"})


def _write_limits(wb, fmts: Formats, counted: pd.DataFrame) -> None:
    """A sheet for each limit a program declares across workbooks with a sheet of the run report."""
    from batch.programs._kit.rules import load

    for program in PROGRAMS:
        if program.records is None:
            continue
        mine = counted[counted["sheet"] == program.name] if len(counted) else counted
        for limit in program.records.limits:
            if limit.sheet is None:
                continue
            ws = wb.add_worksheet(limit.sheet)
            print_setup(ws, 1)
            table = limit_table(program.records, limit, mine, load(program.rules)[limit.parameter].value)
            if table is not None:
                _fit_columns(ws, [table])
                write_table(ws, fmts, 0, table)
            else:
                ws.write_string(0, 0, f"No {program.name} rows in this run.")


def _fit_columns(ws, tables: list[SummaryTable], low: float = 10, high: float = 60, wrap=None, wrapped: tuple = ()) -> dict[int, float]:
    """Each column as wide as its header and its values, up to `high` (headers wrap), across the
    tables written one below the other on a sheet. The `wrapped` columns wrap their text (format
    `wrap`) where it is longer."""
    names: dict[int, set] = {}
    for t in tables:
        for j, h in enumerate(t.table.columns):
            names.setdefault(j, set()).add(str(h))
    widths = table_widths(tables, low=low, high=high, whole_headers=True)
    for j, w in widths.items():
        ws.set_column(j, j, w, wrap if names[j] & set(wrapped) else None)
    return widths


@dataclass(frozen=True)
class Ahead:
    """What the report reads of the ledger and makes of the run's records (`read_ahead`), made once
    every record of the run is in the ledger, while the run's last worker still writes its file."""

    records: pd.DataFrame  # the report's records they were made of (`write_report`)
    previous: pd.DataFrame  # `Ledger.previous_records`
    tables: list[SummaryTable]  # `portfolio`
    found: pd.DataFrame | None  # `batch.run.changes.portfolio_changes`; None: it failed, and is tried again in the report


def read_ahead(ledger: Ledger, run_id: str, team: str, records: pd.DataFrame) -> Ahead:
    """The report's reads and tables that need only the run's records, made before the report (see
    `Ahead`). A failure of the changes is met again in the report, which says it in its sheet."""
    from batch.run.changes import portfolio_changes

    previous = ledger.previous_records(run_id)
    tables = portfolio(records)
    try:
        found = portfolio_changes(ledger.path, run_id, (team,) if team else (), records)
    except Exception:  # noqa: BLE001 - met again in the report (`_portfolio_changes`), which says it
        found = None
    return Ahead(records, previous, tables, found)


def write_report(
    path: Path,
    run_id: str,
    started: dt.datetime,
    outcomes,
    ledger: Ledger,
    records: pd.DataFrame,
    per_year: pd.DataFrame,
    rules_versions: dict,
    team: str = "",
    ahead: Ahead | None = None,
) -> Path:
    """`records`: the run's per-record results (as the ledger keeps them), across every file;
    `per_year`: the records that count against limits across workbooks (`Program.records`), with
    the sheet and file of each; `ahead`: what was read and made of those records before (`read_ahead`).

    A value that is not there is a blank cell, never `nan` or `None`."""
    previous = ahead.previous if ahead is not None else ledger.previous_records(run_id)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    wb = xlsxwriter.Workbook(str(tmp), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    fmts = Formats(wb)

    ws = wb.add_worksheet("Files")
    files = pd.DataFrame(
        [
            {
                "File": o.name,
                "Line": o.line,
                "Status": o.status,
                "Reason": o.reason or None,
                "Rows": sum((o.info.get("rows_per_sheet") or {}).values()),
                **{k: sum(c.get(k, 0) for c in (o.info.get("counts") or {}).values()) for k in (FLAGGED_ERRORS, FLAGGED_WARNINGS)},
                "Errors": o.info.get("errors", 0),
                "Warnings": o.info.get("warnings", 0),
                "Info": o.info.get("infos", 0),
                "Output": o.output or None,
                "Archived As": o.archived or None,
                "Seconds": o.info.get("seconds", 0),
            }
            for o in outcomes
        ],
        columns=[
            *("File", "Line", "Status", "Reason", "Rows", FLAGGED_ERRORS, FLAGGED_WARNINGS),
            *("Errors", "Warnings", "Info", "Output", "Archived As", "Seconds"),
        ],
    )
    table = SummaryTable(f"Files of run {run_id}", files)
    long = ("File", "Line", "Reason", "Output", "Archived As")  # wrapped, so that the sheet prints one page wide
    widths = table_widths([table], low=8, high=34)
    for j, w in widths.items():
        ws.set_column(j, j, w)
    write_table(ws, fmts, 0, table, widths, wrapped=long)
    ws.freeze_panes(2, 1)
    print_setup(ws, 1)

    ws = wb.add_worksheet("Portfolio")
    tables = ahead.tables if ahead is not None else portfolio(records)
    widths = _fit_columns(ws, tables, high=40)
    r = 0
    for t in tables:
        r = write_table(ws, fmts, r, t, widths)
    if not tables:
        ws.write_string(0, 0, "No records in this run.")
    print_setup(ws, None)

    _write_limits(wb, fmts, per_year)

    ws = wb.add_worksheet("Decisions")
    print_setup(ws, 1)
    recorded = ledger.decisions(run_id)
    if len(recorded):
        table = SummaryTable(
            f"Reviewer decisions recorded by run {run_id} (new or changed)",
            pd.DataFrame(
                {
                    "File": recorded["file"],
                    "Sheet": recorded["sheet"],
                    "Record ID": recorded["record_id"],
                    "Decision": recorded["decision"],
                    "Codes": recorded["codes"],
                    "Reviewer": recorded["reviewer"],
                    "Note": recorded["note"],
                    "Applied": recorded["applied"].map({1: "yes", 0: "no"}),
                }
            ),
        )
        widths = _fit_columns(ws, [table], wrap=fmts.get(wrap=True), wrapped=("Note",))
        write_table(ws, fmts, 0, table, widths, wrapped=("Note",))
        ws.freeze_panes(2, 0)
    else:
        ws.write_string(0, 0, "No reviewer decision was new or changed in this run.")

    ws = wb.add_worksheet("Changes")
    print_setup(ws, 0)
    if previous.empty and ledger.runs().shape[0] <= 1:
        # the first run of a ledger has nothing to compare with: every record would be "New record"
        ws.write_string(0, 0, "No earlier run in the ledger: every record of this run is new, and later runs are compared with it.")
        _portfolio_changes(wb, fmts, ledger, run_id, team, records, ahead.found if ahead is not None else None)
        return _finish_report(wb, tmp, path, run_id, started, outcomes, rules_versions, team)
    ch = changes(records, previous)
    money = {c: "money" for c in CHANGE_COLUMNS if c.endswith("($)")}
    wrapped = ("Findings Appeared", "Findings Cleared")
    widths = _fit_columns(ws, [SummaryTable("", ch, money)], low=12, wrap=fmts.get(wrap=True), wrapped=wrapped)
    for j, h in enumerate(CHANGE_COLUMNS):
        ws.write_string(0, j, h, fmts.get(header=HEADER_BG))
    tall = [CHANGE_COLUMNS.index(c) for c in wrapped]
    heights = row_heights(ch, {j: widths.get(j, 12) for j in tall})
    for i, (row, height) in enumerate(zip(ch.itertuples(index=False), heights.tolist(), strict=True), start=1):
        if height:  # as tall as its wrapped findings
            ws.set_row(i, height)
        for j, v in enumerate(row):
            if _missing(v) or (isinstance(v, str) and not v):
                continue  # a blank cell
            if CHANGE_COLUMNS[j] in money:
                ws.write_number(i, j, float(v) / 100, fmts.get("#,##0.00"))
            else:
                ws.write_string(i, j, str(v), fmts.get(wrap=True) if j in tall else None)
    if ch.empty:
        ws.write_string(1, 0, "No record changed since its latest earlier appearance in the ledger.")
    ws.freeze_panes(1, 2)
    ws.autofilter(0, 0, max(len(ch), 1), len(CHANGE_COLUMNS) - 1)
    _portfolio_changes(wb, fmts, ledger, run_id, team, records, ahead.found if ahead is not None else None)
    return _finish_report(wb, tmp, path, run_id, started, outcomes, rules_versions, team)


def _portfolio_changes(wb, fmts, ledger: Ledger, run_id: str, team: str, records: pd.DataFrame, found: pd.DataFrame | None = None) -> None:
    """The `Portfolio changes` sheet (`batch.run.changes`): each earlier record whose portfolio
    findings this run changed, with its findings and Status then and now (`found`: as read ahead)."""
    from batch.run.changes import COLUMNS, portfolio_changes

    ws = wb.add_worksheet("Portfolio changes")
    print_setup(ws, 1)
    try:
        found = portfolio_changes(ledger.path, run_id, (team,) if team else (), records) if found is None else found
    except Exception as err:  # noqa: BLE001 - the rest of the report stands; the sheet says what it could not do
        ws.write_string(0, 0, f"The earlier records this run's groups hold could not be judged again ({type(err).__name__}: {err}).")
        ws.set_column(0, 0, 100)
        return
    if found.empty:
        ws.write_string(0, 0, "No earlier record's portfolio findings changed with this run's records.")
        ws.set_column(0, 0, 80)
        return
    table = SummaryTable(
        "Earlier records whose findings under the portfolio differ now (their workbooks are not rewritten; only the groups this run "
        "touched are judged again)",
        found[COLUMNS].replace("", None),
    )
    widths = _fit_columns(ws, [table], low=12, wrap=fmts.get(wrap=True), wrapped=("Findings Then", "Findings Now"))
    write_table(ws, fmts, 0, table, widths, wrapped=("Findings Then", "Findings Now"))
    ws.freeze_panes(2, 2)
    ws.autofilter(1, 0, 1 + len(found), len(COLUMNS) - 1)


def rules_lines(rules_versions: dict) -> list[tuple[str, str]]:
    """One line per sheet, by sheet name: `Rules version: GrowNJ` and the label of its rules."""
    if not rules_versions:
        return [("Rules versions", "no workbook was processed")]
    return [(f"Rules version: {sheet}", str(rules_versions[sheet])) for sheet in sorted(rules_versions, key=str)]


def _finish_report(wb, tmp: Path, path: Path, run_id: str, started, outcomes, rules_versions: dict, team: str = "") -> Path:
    ws = wb.add_worksheet("Run")
    print_setup(ws, None)
    count = {s: sum(o.status == s for o in outcomes) for s in ("processed", "skipped", "failed", "returned", "gone")}
    lines: list[tuple[str, str | int]] = [
        ("Run", run_id),
        ("Started (UTC)", started.strftime("%Y-%m-%d %H:%M:%S")),
        *([("Team", team)] if team else []),
        ("njcredits version", __version__),
        *rules_lines(rules_versions),
        *[(f"Files {s}", count[s]) for s in ("processed", "skipped", "failed")],
        *([("Files left in the inbox", count["returned"])] if count["returned"] else []),
        *([("Files gone before they were read", count["gone"])] if count["gone"] else []),
    ]
    ws.set_column(0, 0, max(30, *(len(k) + 2 for k, _ in lines)))
    ws.set_column(1, 1, min(120, max(60, *(len(str(v)) + 2 for _, v in lines))))
    for i, (k, v) in enumerate(lines):
        ws.write_string(i, 0, k)
        if isinstance(v, int):
            ws.write_number(i, 1, v)
        else:
            ws.write_string(i, 1, v)
    wb.close()
    os.replace(tmp, path)
    return path
