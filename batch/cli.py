"""The `njcredits` command line: thin, calls the pipeline."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from batch import __version__


@click.group()
@click.version_option(__version__, prog_name="njcredits")
def main():
    """Validate New Jersey tax-credit intake workbooks and return annotated workbooks."""


def _ledger(path):
    from batch.ledger import Ledger, LedgerUnreadable

    try:
        return Ledger(path)
    except LedgerUnreadable as err:
        raise click.ClickException(str(err)) from err


def _settings(**flags):
    from batch.config import ConfigError, load

    try:
        return load(**flags)
    except ConfigError as err:
        raise click.UsageError(str(err)) from err


def _as_of_date(ctx, param, value):
    return value.date() if value is not None else None


AS_OF_OPTION = click.option(
    "--as-of",
    "as_of",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    callback=_as_of_date,
    help="The run's as-of date, YYYY-MM-DD, for deadlines that depend on the day of the run [the day each file is processed].",
)


def _batch_options(fn):
    for option in reversed(
        [
            click.option(
                "--out", "outbox", type=click.Path(path_type=Path), help="Folder for returned workbooks and run reports [./outbox]."
            ),
            click.option("--archive", type=click.Path(path_type=Path), help="Folder for processed/ and failed/ inputs [the inbox]."),
            click.option("--ledger", type=click.Path(path_type=Path), help="Ledger file [OUTBOX/.njcredits/ledger.sqlite]."),
            click.option("--workers", type=click.IntRange(1, 64), help="Files processed in parallel [the number of cores]."),
            click.option("--keep-inputs", is_flag=True, default=None, help="Leave inputs where they are (ad-hoc runs)."),
            click.option("--force", is_flag=True, default=None, help="Process files even if identical ones were processed before."),
            click.option("--wait", is_flag=True, default=None, help="Wait for another run on the same inbox instead of exiting."),
            AS_OF_OPTION,
        ]
    ):
        fn = option(fn)
    return fn


@main.command()
@click.argument("inbox", required=False, type=click.Path(path_type=Path))
@_batch_options
def run(inbox: Path | None, **flags):
    """Process every workbook in INBOX: NAME.annotated.xlsx and a run report into OUTBOX; inputs move to
    processed/<run-id>/ or failed/<run-id>/ (with NAME.reason.txt)."""
    from batch.ledger import LedgerUnreadable
    from batch.runner import RunLocked, UnsafeLink, run_batch

    settings = _settings(inbox=inbox, **flags)
    if not settings.inbox.is_dir():
        raise click.UsageError(f"Inbox {settings.inbox} does not exist; give a folder of intake workbooks.")
    try:
        outcome = run_batch(settings, echo=click.echo, progress=sys.stderr.isatty())
    except RunLocked as err:
        click.echo(str(err), err=True)
        sys.exit(1)
    except (LedgerUnreadable, UnsafeLink) as err:  # raised before any input is touched
        click.echo(f"Error: {err}", err=True)
        sys.exit(3)
    except OSError as err:  # the outbox, the ledger's folder or the lock cannot be made: the environment
        click.echo(f"Error: {err.filename or ''} {err.strerror}; no input was touched.", err=True)
        sys.exit(3)
    sys.exit(outcome.exit_code)


@main.command()
@click.option("--ledger", type=click.Path(path_type=Path), help="Ledger file [OUTBOX/.njcredits/ledger.sqlite].")
@click.option("--out", "outbox", type=click.Path(path_type=Path), help="Outbox whose ledger to read [./outbox].")
@click.option("--run", "run_id", help="Show the files of this run.")
def history(ledger: Path | None, outbox: Path | None, run_id: str | None):
    """List past runs, or the files of one run, from the ledger."""
    from rich.console import Console
    from rich.table import Table

    settings = _settings(ledger=ledger, outbox=outbox)
    if not settings.ledger.exists():
        click.echo(f"No ledger at {settings.ledger}: no runs yet.")
        return
    book = _ledger(settings.ledger)
    console = Console(width=200 if not sys.stdout.isatty() else None)
    if run_id:
        table = Table(title=f"Files of run {run_id}")
        for col in ("name", "status", "reason", "rows_per_sheet", "errors", "warnings", "output", "archived", "sha256"):
            table.add_column(col, overflow="fold")
        for f in book.files(run_id).itertuples(index=False):
            table.add_row(
                f.name,
                f.status,
                f.reason or "",
                f.rows_per_sheet or "",
                str(f.errors or 0),
                str(f.warnings or 0),
                f.output or "",
                f.archived or "",
                (f.sha256 or "")[:16],
            )
    else:
        table = Table(title=f"Runs in {settings.ledger}")
        for col in ("run", "started", "ended", "files", "processed", "skipped", "failed", "version", "report"):
            table.add_column(col, overflow="fold")
        for r in book.runs().itertuples(index=False):
            table.add_row(
                r.run_id,
                r.started[:19],
                (r.ended or "")[:19],
                str(r.files),
                str(r.processed),
                str(r.skipped),
                str(r.failed),
                r.tool_version or "",
                r.report or "",
            )
    console.print(table)


@main.command()
@click.argument("inbox", required=False, type=click.Path(path_type=Path))
@_batch_options
@click.option("--settle", "settle_seconds", type=float, help="Seconds a file must stop changing before it is read [2].")
def watch(inbox: Path | None, **flags):
    """Watch INBOX and process each workbook dropped in once it is complete: closed by its writer, unchanged
    for the settle time, and (a workbook) a complete zip (Ctrl-C stops)."""
    from batch.watch import folder_problem, watch_inbox

    settings = _settings(inbox=inbox, **flags)
    problem = folder_problem(settings)  # before anything is created or watched
    if not settings.settle_seconds > 0:
        problem = f"The settle time must be more than 0 seconds (it is {settings.settle_seconds:g}); give --settle 2, say."
    if problem:
        raise click.UsageError(problem)
    settings.inbox.mkdir(parents=True, exist_ok=True)
    _ledger(settings.ledger)  # an unusable ledger is said once, before watching
    sys.exit(watch_inbox(settings, echo=click.echo))  # 3: a stop cut a run short, its files wait in the inbox


@main.command()
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Folder for the template.")
def template(out_dir: Path):
    """Write the blank intake template (one sheet per intake sheet)."""
    from batch.template import write_template

    click.echo(f"Wrote {write_template(out_dir)}")


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@AS_OF_OPTION
@click.option("--ledger", type=click.Path(path_type=Path), help="Ledger read for prior incentives [OUTBOX/.njcredits/ledger.sqlite].")
@click.option("--out", "outbox", type=click.Path(path_type=Path), help="Outbox whose ledger to read [./outbox].")
def validate(file: Path, as_of, ledger: Path | None, outbox: Path | None):
    """Validate and calculate FILE without writing; print the findings as a table."""
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from batch.ledger import LedgerUnreadable
    from batch.pipeline import process
    from batch.reading import UnreadableWorkbook

    settings = _settings(as_of=as_of, ledger=ledger, outbox=outbox)
    book = settings.ledger if settings.ledger.is_file() else None
    try:
        try:
            result = process(file, settings.limits, as_of=settings.as_of, ledger=book)
        except LedgerUnreadable as err:
            click.echo(f"{err} Prior incentives of earlier runs were not checked.", err=True)
            book = None
            result = process(file, settings.limits, as_of=settings.as_of, ledger=None)
    except UnreadableWorkbook as err:
        click.echo(f"FAILED {file.name}: {err}", err=True)
        sys.exit(1)
    click.echo(
        f"As of {result.as_of.isoformat()}; "
        + (
            f"prior incentives read from the ledger {book}."
            if book
            else f"no ledger at {settings.ledger}: prior incentives of earlier runs not checked."
        )
    )
    table = Table(title=f"Findings in {file.name}", show_lines=False)
    for col in ("Sheet", "Row", "Record ID", "Column", "Code", "Severity", "Message", "Citation"):
        table.add_column(col, overflow="fold")
    for row in result.findings.itertuples(index=False):
        table.add_row(
            row.Sheet, "" if pd.isna(row.Row) else str(row.Row), row[2], row.Column, row.Code, row.Severity, row.Message, row.Citation
        )
    Console(width=200 if not sys.stdout.isatty() else None).print(table)
    for r in result.intake:
        c = r.counts
        click.echo(
            f"{r.sheet.name}: {c['rows']} rows, {c['OK']} OK, {c['Flagged']} flagged, {c['Ineligible']} ineligible, {c['Invalid']} invalid"
        )
