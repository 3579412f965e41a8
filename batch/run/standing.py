"""`njcredits portfolio --out DIR`: the standing position of the ledger's latest records, written to
DIR/njcredits-portfolio.xlsx. Each program that keeps portfolio records gives its sheets
(`Portfolio.standing`: Transfers gives `Certificates`, BRRAP `BRRAP`, ERG_Residential `ERG
buckets`, GrowNJ_Compliance `Compliance`); `Prior awards` lists each business's prior incentives
across programs; a `Run` sheet says which ledger was read, when, its latest run, and what it does
not count. The ledger is only read (never migrated nor written). The workbook is written under a
temporary name and then renamed, so a reader never sees half of it; every text is written as text,
never as a formula."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pandas as pd
import xlsxwriter

from batch import __version__
from batch.programs import PROGRAMS, prior_incentive_sheets
from batch.programs._kit import rules as rules_mod
from batch.programs._kit.calculation import SummaryTable
from batch.programs._kit.steps import business_key
from batch.run.ledger import Ledger, read_prior_records, read_standing
from batch.run.report import _fit_columns
from batch.workbook.toolsheets import Formats, write_table

FILE_NAME = "njcredits-portfolio.xlsx"
PORTFOLIO_SCHEMA = 6  # the ledger's first migration that keeps portfolio records


def unkept(found: pd.DataFrame) -> int:
    """How many of the latest versions `found` (`read_standing`) were computed but keep no portfolio
    fields: recorded before their program's portfolio rules kept them (neither Invalid nor withdrawn)."""
    from batch.reviews import withdrawn_codes

    computed = found["status"].isin(["OK", "Flagged", "Ineligible"]).to_numpy() & ~withdrawn_codes(found["codes"])
    return int((computed & found["fields"].isna().to_numpy()).sum())


def records_of(ledger: Path, program, found: pd.DataFrame | None = None) -> pd.DataFrame:
    """The latest version of every record of `program`'s sheet (`read_standing`, or `found`), with its
    portfolio fields as columns and `tie`, the order records of one date count in."""
    found = read_standing(ledger, program.name) if found is None else found
    found = found[found["fields"].notna()].reset_index(drop=True)
    fields = program.portfolio.read(found["fields"])
    # `book`: a workbook of a run (two months' files of one name are two workbooks)
    book = found["workbook"].astype(str) + "\x00" + found["ended"].astype(str)
    return pd.concat([fields, found.drop(columns="fields")], axis=1).assign(tie=range(len(found)), book=book)


def prior_awards(ledger: Path) -> SummaryTable:
    """The `Prior awards` sheet: per business (the one business-name rule), its BEIP, BRRAP and Grow
    NJ records that count as prior incentives of a Grow NJ application (C.34:1B-247 e.): the latest
    version of each record of the ended runs, neither Invalid nor Ineligible nor withdrawn, with the
    date or year it was received, oldest first."""
    columns = ["Business", "Sheet", "Record ID", "Team", "Received", "Status", "Workbook", "Run Date"]
    title = "Prior awards: each business's BEIP, BRRAP and Grow NJ records, the prior incentives of its Grow NJ applications"
    sheets = prior_incentive_sheets()
    found = read_prior_records(ledger, tuple(sheets))
    found = found[~found["status"].isin(["Invalid", "Ineligible"])].reset_index(drop=True)
    if found.empty:
        return SummaryTable(title, pd.DataFrame(columns=columns))
    key = business_key(found["business_name"]).astype(object)
    key = key.where(key.notna(), "\x00" + pd.Series(range(len(found))).astype(str))
    year = pd.array(pd.to_numeric(found["year"], errors="coerce"), dtype="Int64").astype(str)
    when = found["date"].where(found["date"].notna(), pd.Series(year, index=found.index, dtype=object)).astype(str)
    table = pd.DataFrame(
        {
            "key": key,
            "Business": found.groupby(key)["business_name"].transform("first"),  # as the newest record spells it
            "Sheet": found["sheet"],
            "Record ID": found["record_id"],
            "Team": found["team"],
            "Received": found["sheet"].map(sheets) + " " + when,
            "when": when,
            "Status": found["status"],
            "Workbook": found["workbook"],
            "Run Date": found["run_date"],
        }
    )
    table = table.sort_values(["key", "when", "Sheet", "Record ID"], kind="stable")
    return SummaryTable(title, table[columns].reset_index(drop=True))


def _write_sheet(wb, fmts, name: str, table: SummaryTable) -> None:
    """A standing sheet: its title, header row with filters, frozen panes, printed landscape one page wide."""
    ws = wb.add_worksheet(name)
    _fit_columns(ws, [table], low=14)
    write_table(ws, fmts, 0, table)
    ws.freeze_panes(2, 1)
    _printed(ws)
    ws.repeat_rows(1)  # the header row on every printed page
    ws.autofilter(1, 0, 1 + len(table.table), len(table.table.columns) - 1)


def _printed(ws) -> None:
    """A sheet printed landscape, one page wide."""
    ws.set_landscape()
    ws.fit_to_pages(1, 0)


def write_portfolio(ledger: Path, out: Path) -> tuple[Path, dict[str, int]]:
    """Write `out`/njcredits-portfolio.xlsx from `ledger`; returns its path and the rows of each sheet."""
    book = Ledger.for_reading(ledger)
    runs = book.runs()
    ended = runs[runs["ended"].notna()].sort_values("ended")
    going = len(runs) - len(ended)
    out.mkdir(parents=True, exist_ok=True)
    path = out / FILE_NAME
    tmp = out / f".{FILE_NAME}.{os.getpid()}.partial"
    wb = xlsxwriter.Workbook(str(tmp), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    try:
        fmts = Formats(wb)
        counts, old = {}, []
        for program in PROGRAMS:
            if program.portfolio is None or program.portfolio.standing is None:
                continue
            rules = rules_mod.load(program.rules)
            found = read_standing(ledger, program.name)
            if n := unkept(found):
                old.append(f"{n:,} {program.name}")
            for name, table in program.portfolio.standing(records_of(ledger, program, found), rules).items():
                _write_sheet(wb, fmts, name, table)
                counts[name] = len(table.table)
        table = prior_awards(ledger)
        _write_sheet(wb, fmts, "Prior awards", table)
        counts["Prior awards"] = len(table.table)
        latest = ended.iloc[-1] if len(ended) else None
        notes = []
        if going:
            notes.append(("Runs not ended", f"{going}: going on, or stopped and not yet finished by a later run; not counted"))
        if old:
            notes.append(("Records not counted", f"{'; '.join(old)}: recorded before njcredits kept their portfolio fields, so no sheet "
                          "here and no run counts them; run their returned workbooks again with --force to count them"))  # fmt: skip
        if book.version < PORTFOLIO_SCHEMA:
            notes.append(("Ledger schema", f"{book.version}, before the portfolio ({PORTFOLIO_SCHEMA}): no records; a run migrates it"))
        lines = [
            ("Ledger", str(ledger)),
            ("Read at (UTC)", dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")),
            ("Latest run", f"{latest['run_id']}, ended {str(latest['ended'])[:19]}" if latest is not None else "no run has ended"),
            ("Runs ended", str(len(ended))),
            *notes,
            ("njcredits version", __version__),
            ("Records counted", "the latest version of each record (team, sheet, record ID) of the runs that have ended"),
        ]
        ws = wb.add_worksheet("Run")
        ws.set_column(0, 0, 20)
        ws.set_column(1, 1, min(100, max(60, *(len(v) + 2 for _, v in lines))), fmts.get(wrap=True))
        _printed(ws)
        for i, (k, v) in enumerate(lines):
            ws.write_string(i, 0, k)
            ws.write_string(i, 1, v)
        wb.close()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path, counts
