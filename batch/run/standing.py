"""`njcredits portfolio --out DIR`: the standing position of the ledger's latest records, written to
DIR/njcredits-portfolio.xlsx. Each program that keeps portfolio records gives its sheets
(`Portfolio.standing`: Transfers gives `Certificates`, BRRAP `BRRAP`, ERG_Residential `ERG
buckets`, GrowNJ_Compliance `Compliance`); a `Run` sheet says which ledger was read, when, its latest run, and which of the
portfolio's sheets are not built yet. The ledger is only read (never migrated nor written). The
workbook is written under a temporary name and then renamed, so a reader never sees half of it;
every text is written as text, never as a formula."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pandas as pd
import xlsxwriter

from batch import __version__
from batch.programs import PROGRAMS
from batch.programs._kit import rules as rules_mod
from batch.run.ledger import Ledger, read_standing
from batch.run.report import _fit_columns
from batch.workbook.toolsheets import Formats, write_table

FILE_NAME = "njcredits-portfolio.xlsx"
PORTFOLIO_SCHEMA = 6  # the ledger's first migration that keeps portfolio records
# the sheets portfolio.md lists whose rules do not read the portfolio yet (README, "The portfolio")
NOT_BUILT = "Prior awards"


def unkept(found: pd.DataFrame) -> int:
    """How many of the latest versions `found` (`read_standing`) were computed but keep no portfolio
    fields: recorded before their program's portfolio rules kept them (neither Invalid nor withdrawn)."""
    from batch.pipeline import withdrawn_codes

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
                ws = wb.add_worksheet(name)
                _fit_columns(ws, [table], low=14)
                write_table(ws, fmts, 0, table)
                ws.freeze_panes(2, 1)
                _printed(ws)
                ws.repeat_rows(1)  # the header row on every printed page
                ws.autofilter(1, 0, 1 + len(table.table), len(table.table.columns) - 1)
                counts[name] = len(table.table)
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
            ("Not shown yet", f"{NOT_BUILT}: their limits do not read the portfolio yet"),
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
