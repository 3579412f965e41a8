"""The run report `OUTBOX/run-<run-id>.summary.xlsx`: what one batch run did, across every file.

Sheets: `Files` (each input with its status, reason, counts and output), `Portfolio` (awards by
program, area and year; findings by code; across all files), `BRRAP Aggregate` (the $20,000,000
limit a tax period checked across every workbook of the run), `Changes` (each record ID against
its latest earlier appearance in the ledger), `Run`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pandas as pd
import xlsxwriter

from batch import __version__
from batch.calculators import SummaryTable
from batch.ledger import Ledger
from batch.writing import HEADER_BG, Formats, write_table

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


def _codes(text) -> set[str]:
    return {c for c in str(text or "").split("; ") if c}


def changes(current: pd.DataFrame, previous: pd.DataFrame) -> pd.DataFrame:
    """New records, changed awards (old and new), status changes, findings that appeared or cleared."""
    if current.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    current = current.drop_duplicates(["sheet", "record_id"], keep="first")  # later repeats are DUPLICATE_ID rows
    previous = previous.rename(columns={"run_id": "run_id_old"})
    both = current.merge(previous, on=["sheet", "record_id"], how="left", suffixes=("", "_old"), indicator=True)
    new = both["_merge"] == "left_only"
    old_codes = both["codes_old"].map(_codes)
    new_codes = both["codes"].map(_codes)
    appeared = [sorted(n - o) for n, o in zip(new_codes, old_codes, strict=False)]
    cleared = [sorted(o - n) for n, o in zip(new_codes, old_codes, strict=False)]
    award_old = pd.to_numeric(both["award_cents_old"], errors="coerce")
    award_new = pd.to_numeric(both["award_cents"], errors="coerce")
    award_changed = ~new & ~((award_old == award_new) | (award_old.isna() & award_new.isna()))
    status_changed = ~new & (both["status"] != both["status_old"])
    kinds = []
    for is_new, a, s, ap, cl in zip(new, award_changed, status_changed, appeared, cleared, strict=False):
        parts = ["New record"] if is_new else []
        if not is_new:
            parts += ["Award changed"] if a else []
            parts += ["Status changed"] if s else []
            parts += ["Findings appeared"] if ap else []
            parts += ["Findings cleared"] if cl else []
        kinds.append("; ".join(parts))
    out = pd.DataFrame(
        {
            "Sheet": both["sheet"],
            "Record ID": both["record_id"],
            "File": both["file"],
            "Change": kinds,
            "Old Award ($)": award_old,
            "New Award ($)": award_new,
            "Old Status": both["status_old"],
            "New Status": both["status"],
            "Findings Appeared": ["; ".join(x) for x in appeared],
            "Findings Cleared": ["; ".join(x) for x in cleared],
            "Previous Run": both["run_id_old"],
        }
    )
    return out[out["Change"] != ""].reset_index(drop=True)


def portfolio(records: pd.DataFrame) -> list[SummaryTable]:
    if records.empty:
        return []
    counted = records[~records["status"].isin(["Invalid", "Ineligible"])].copy()
    counted["award"] = pd.to_numeric(counted["award_cents"], errors="coerce").fillna(0)
    counted["area"] = counted["area"].fillna("(all)").astype(str)
    counted["year"] = pd.to_numeric(counted["year"], errors="coerce").astype("Int64").astype(str).replace("<NA>", "")
    by_program = counted.groupby("sheet").agg(Records=("record_id", "size"), **{"Award ($)": ("award", "sum")}).reset_index()
    by_area_year = (
        counted.groupby(["sheet", "area", "year"]).agg(Records=("record_id", "size"), **{"Award ($)": ("award", "sum")}).reset_index()
    )
    by_area_year.columns = ["Sheet", "Area or Category", "Year", "Records", "Award ($)"]
    status = records.pivot_table(index="sheet", columns="status", values="record_id", aggfunc="count", fill_value=0).reset_index()
    codes = records.assign(code=records["codes"].map(lambda t: sorted(_codes(t)))).explode("code").dropna(subset=["code"])
    by_code = codes.groupby(["sheet", "code"]).size().rename("Records").reset_index()
    by_code.columns = ["Sheet", "Code", "Records"]
    money = {"Award ($)": "money"}
    return [
        SummaryTable("Awards by program (rows neither Invalid nor Ineligible)", by_program.rename(columns={"sheet": "Sheet"}), money),
        SummaryTable("Awards by program, area and year", by_area_year, money),
        SummaryTable("Records by program and status", status.rename(columns={"sheet": "Sheet"})),
        SummaryTable("Records by finding code", by_code),
    ]


def brrap_aggregate(per_year: pd.DataFrame, limit_cents: int) -> SummaryTable | None:
    if per_year.empty:
        return None
    table = per_year.groupby("year").agg(Grants=("grant", "size"), Files=("file", "nunique"), Credit=("credit", "sum")).reset_index()
    table["Limit"] = limit_cents
    table["Over"] = (table["Credit"] > limit_cents).map({True: "OVER", False: ""})
    table.columns = ["Tax Period", "Grants", "Files", "Credit ($)", "Limit ($)", "Over Limit"]
    table["Tax Period"] = table["Tax Period"].astype(str)
    return SummaryTable(
        "BRRAP credit per tax period across every workbook of the run (P.L.2004 c.65 s.7 a.)",
        table,
        {"Credit ($)": "money", "Limit ($)": "money"},
    )


def write_report(
    path: Path,
    run_id: str,
    started: dt.datetime,
    outcomes,
    ledger: Ledger,
    records: pd.DataFrame,
    per_year: pd.DataFrame,
    rules_versions: dict,
) -> Path:
    """`records`: the run's per-record results (as the ledger keeps them), across every file."""
    from batch.rules import load

    previous = ledger.previous_records(run_id)
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
                "Reason": o.reason,
                "Rows": sum((o.info.get("rows_per_sheet") or {}).values()),
                "Errors": o.info.get("errors", 0),
                "Warnings": o.info.get("warnings", 0),
                "Info": o.info.get("infos", 0),
                "Output": o.output or "",
                "Archived As": o.archived or "",
                "Seconds": o.info.get("seconds", 0),
            }
            for o in outcomes
        ],
        columns=["File", "Line", "Status", "Reason", "Rows", "Errors", "Warnings", "Info", "Output", "Archived As", "Seconds"],
    )
    ws.set_column(0, 0, 34)
    ws.set_column(1, 1, 80)
    ws.set_column(3, 3, 70)
    ws.set_column(8, 9, 50)
    write_table(ws, fmts, 0, SummaryTable(f"Files of run {run_id}", files))

    ws = wb.add_worksheet("Portfolio")
    ws.set_column(0, 2, 28)
    ws.set_column(3, 8, 16)
    r = 0
    for t in portfolio(records):
        r = write_table(ws, fmts, r, t)

    ws = wb.add_worksheet("BRRAP Aggregate")
    ws.set_column(0, 5, 18)
    table = brrap_aggregate(per_year, load("brrap")["aggregate_annual_limit"].value)
    if table is not None:
        write_table(ws, fmts, 0, table)
    else:
        ws.write_string(0, 0, "No BRRAP rows in this run.")

    ws = wb.add_worksheet("Changes")
    if previous.empty and ledger.runs().shape[0] <= 1:
        # the first run of a ledger has nothing to compare with: every record would be "New record"
        ws.write_string(0, 0, "No earlier run in the ledger: every record of this run is new, and later runs are compared with it.")
        return _finish_report(wb, fmts, tmp, path, run_id, started, outcomes, rules_versions)
    ch = changes(records, previous)
    for j, h in enumerate(CHANGE_COLUMNS):
        ws.write_string(0, j, h, fmts.get(header=HEADER_BG))
        ws.set_column(j, j, 22)
    for i, row in enumerate(ch.itertuples(index=False), start=1):
        for j, v in enumerate(row):
            if CHANGE_COLUMNS[j].endswith("($)"):
                if not pd.isna(v):
                    ws.write_number(i, j, float(v) / 100, fmts.get("#,##0.00"))
            elif v is not None and not (isinstance(v, float) and pd.isna(v)):
                ws.write_string(i, j, str(v))
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, max(len(ch), 1), len(CHANGE_COLUMNS) - 1)
    return _finish_report(wb, fmts, tmp, path, run_id, started, outcomes, rules_versions)


def _finish_report(wb, fmts, tmp: Path, path: Path, run_id: str, started, outcomes, rules_versions: dict) -> Path:
    ws = wb.add_worksheet("Run")
    ws.set_column(0, 0, 30)
    ws.set_column(1, 1, 60)
    lines = [
        ("Run", run_id),
        ("Started (UTC)", started.strftime("%Y-%m-%d %H:%M:%S")),
        ("njcredits version", __version__),
        ("Rules versions", json.dumps(rules_versions, sort_keys=True)),
        *[(f"Files {s}", str(sum(o.status == s for o in outcomes))) for s in ("processed", "skipped", "failed")],
    ]
    for i, (k, v) in enumerate(lines):
        ws.write_string(i, 0, k)
        ws.write_string(i, 1, v)
    wb.close()
    os.replace(tmp, path)
    return path
