"""The `njcredits` command line: thin, calls the pipeline."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from batch import __version__

INTAKE_SUFFIXES = (".xlsx", ".xlsm")


def _default_inbox() -> Path:
    """`sample_inputs/` when run in a checkout of this project, else `./inbox`."""
    here = Path.cwd()
    if (here / "sample_inputs").is_dir() and (here / "batch" / "pipeline.py").is_file():
        return here / "sample_inputs"
    return here / "inbox"


def _inputs(inbox: Path) -> list[Path]:
    if inbox.is_file():
        return [inbox]
    return sorted(
        p for p in inbox.iterdir()
        if p.is_file() and p.suffix.lower() in INTAKE_SUFFIXES and not p.name.startswith(("~$", "."))
    )


@click.group()
@click.version_option(__version__, prog_name="njcredits")
def main():
    """Validate New Jersey tax-credit intake workbooks and return annotated workbooks."""


@main.command()
@click.argument("inbox", required=False, type=click.Path(path_type=Path))
@click.option("--out", "outbox", default="outbox", show_default=True, type=click.Path(path_type=Path),
              help="Folder for the returned workbooks.")
def run(inbox: Path | None, outbox: Path):
    """Process every intake workbook in INBOX and write NAME.annotated.xlsx into OUTBOX."""
    from batch.pipeline import output_name, process
    from batch.reading import UnreadableWorkbook
    from batch.writing import write

    inbox = inbox or _default_inbox()
    if not inbox.exists():
        raise click.UsageError(f"Inbox {inbox} does not exist; give a folder of intake workbooks.")
    files = _inputs(inbox)
    if not files:
        click.echo(f"No intake workbooks (.xlsx, .xlsm) in {inbox}.")
    failed = 0
    for path in files:
        try:
            result = process(path)
            out = write(result, outbox / output_name(path))
        except UnreadableWorkbook as err:
            failed += 1
            click.echo(f"FAILED {path.name}: {err}", err=True)
            continue
        except Exception as err:  # one bad file never holds back the batch
            failed += 1
            click.echo(f"FAILED {path.name}: could not be processed ({type(err).__name__}: {err}).", err=True)
            continue
        counts = [f"{r.sheet.name} {r.counts['rows']} rows ({r.counts['OK']} OK, {r.counts['Flagged']} flagged, "
                  f"{r.counts['Ineligible']} ineligible, {r.counts['Invalid']} invalid)" for r in result.intake]
        click.echo(f"OK     {path.name} -> {out}: " + ("; ".join(counts) or "no intake sheets"))
    click.echo(f"{len(files) - failed} of {len(files)} workbooks processed.")
    sys.exit(1 if failed else 0)


@main.command()
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Folder for the template.")
def template(out_dir: Path):
    """Write the blank intake template (one sheet per intake sheet)."""
    from batch.template import write_template

    click.echo(f"Wrote {write_template(out_dir)}")


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def validate(file: Path):
    """Validate and calculate FILE without writing; print the findings as a table."""
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from batch.pipeline import process
    from batch.reading import UnreadableWorkbook

    try:
        result = process(file)
    except UnreadableWorkbook as err:
        click.echo(f"FAILED {file.name}: {err}", err=True)
        sys.exit(1)
    table = Table(title=f"Findings in {file.name}", show_lines=False)
    for col in ("Sheet", "Row", "Record ID", "Column", "Code", "Severity", "Message", "Citation"):
        table.add_column(col, overflow="fold")
    for row in result.findings.itertuples(index=False):
        table.add_row(row.Sheet, "" if pd.isna(row.Row) else str(row.Row),
                      row[2], row.Column, row.Code, row.Severity, row.Message, row.Citation)
    Console(width=200 if not sys.stdout.isatty() else None).print(table)
    for r in result.intake:
        c = r.counts
        click.echo(f"{r.sheet.name}: {c['rows']} rows, {c['OK']} OK, {c['Flagged']} flagged, "
                   f"{c['Ineligible']} ineligible, {c['Invalid']} invalid")
