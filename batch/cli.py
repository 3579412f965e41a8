"""The `njcredits` command line: thin, calls the pipeline."""

from __future__ import annotations

import atexit
import gc
import signal
import sys
from pathlib import Path

import click

from batch import __version__
from batch.run.terminal import Terminal

# As the command ends, what it holds (pandas, numpy, the run's frames: a million objects and more) is
# moved out of the cyclic collector's reach, which the interpreter's last collections would walk
# again for nothing: a run's end took about 0.18 s after its last line, now about 0.06 s. Every file
# and connection is closed by then; an object left in a cycle is not finalized, which the interpreter
# does not promise at exit anyway.
atexit.register(gc.freeze)


@click.group()
@click.version_option(__version__, prog_name="njcredits")
def main():
    """Validate New Jersey tax-credit intake workbooks and return annotated workbooks."""
    from batch.run.workers import worker_path

    # started as `python -c ...`, the working directory is first on the path: a folder there named like
    # a module njcredits imports later (`validators`, `pandas`) would be imported instead
    sys.path[:] = worker_path()


class _LedgerParam(click.ParamType):
    """--ledger: a SQLite file's path, or a PostgreSQL URL (postgresql://user@host:port/db)."""

    name = "PATH|URL"

    def convert(self, value, param, ctx):
        from batch.run.ledger.backends import location

        return location(value)


LEDGER = _LedgerParam()
# what `history` and `validate` print: a closed output (`| head -1`) ends the printing, never changes the exit status
_say = Terminal().echo


def _ledger(path):
    from batch.run.ledger import Ledger, LedgerUnreadable

    try:
        return Ledger(path)
    except LedgerUnreadable as err:
        raise click.ClickException(printable(err)) from err


def _team(settings, ledger, file: Path | None = None):
    """The team whose records and decisions a command reads (`batch.run.teams.team_for`); a shared
    ledger whose team cannot be told is a usage error."""
    from batch.run.teams import TeamNeeded, team_for

    try:
        return team_for(settings, ledger.places() if ledger is not None else [], file)
    except TeamNeeded as err:
        raise click.UsageError(str(err)) from err


def _settings(**flags):
    from batch.run.config import ConfigError, load

    try:
        return load(**flags)
    except ConfigError as err:
        raise click.UsageError(str(err)) from err


def _local_ledger(settings, only_if_there: bool = False) -> None:
    """A SQLite ledger on a network filesystem is refused before anything is touched: exit 3, in one
    line naming the filesystem (`batch.run.ledger.network_filesystem`). `only_if_there`: a command
    that reads the ledger only when there is one."""
    from batch.run.ledger import LedgerOnNetwork, refuse_network_ledger
    from batch.run.ledger.backends import there

    if only_if_there and not there(settings.ledger):
        return
    try:
        refuse_network_ledger(settings.ledger)
    except LedgerOnNetwork as err:
        click.echo(f"Error: {printable(err)}", err=True)
        sys.exit(3)


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
            click.option(
                "--ledger", type=LEDGER, help="Ledger: a SQLite file, or postgresql://user@host:port/db [OUTBOX/.njcredits/ledger.sqlite]."
            ),
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
    """Process every workbook in INBOX (and its subfolders): NAME.annotated.xlsx and a run report into
    OUTBOX; inputs move to processed/<run-id>/ or failed/<run-id>/ (with NAME.reason.txt). With a FILE
    instead of a folder, process that one workbook and leave it where it is (unless --archive is given)."""
    from batch.run.ledger import LedgerUnreadable
    from batch.run.runner import RunLocked, UnsafeLink, run_batch
    from batch.run.teams import TeamNeeded
    from batch.run.watch import folder_problem
    from batch.run.workers import start_fork_server

    files = None
    if inbox is not None and inbox.is_file():  # `run FILE`: the file stays where it is unless --archive
        files = [inbox]
        if flags.get("archive") is None:
            flags["keep_inputs"] = True
        inbox = inbox.parent
    settings = _settings(inbox=inbox, **flags)
    if not settings.inbox.is_dir():
        raise click.UsageError(f"Inbox {settings.inbox} does not exist; give a folder of intake workbooks, or one workbook.")
    _local_ledger(settings)
    problem = folder_problem(settings) if files is None else None
    if problem:
        raise click.UsageError(problem)
    # a closed output (`| head -1`, a terminal closed) never changes what the run does: its lines stop
    # (`Terminal`), and the hangup of a closed terminal is ignored, by the workers too (they inherit it)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    start_fork_server()
    out = Terminal()
    try:
        outcome = run_batch(settings, files=files, echo=out.echo, progress=sys.stderr.isatty(), one_file=files is not None)
    except RunLocked as err:
        click.echo(str(err), err=True)
        sys.exit(1)
    except TeamNeeded as err:  # raised before any input is touched
        raise click.UsageError(str(err)) from err
    except (LedgerUnreadable, UnsafeLink) as err:  # raised before any input is touched
        click.echo(f"Error: {printable(err)}", err=True)
        sys.exit(3)
    except OSError as err:  # the outbox, the ledger's folder or the lock cannot be made: the environment
        click.echo(f"Error: {printable(err.filename)} {err.strerror}; no input was touched.", err=True)
        sys.exit(3)
    sys.exit(outcome.exit_code)


@main.command()
@click.option("--ledger", type=LEDGER, help="Ledger: a SQLite file or a PostgreSQL URL [OUTBOX/.njcredits/ledger.sqlite].")
@click.option("--out", "outbox", type=click.Path(path_type=Path), help="Outbox whose ledger to read [./outbox].")
@click.option("--run", "run_id", help="Show the files of this run.")
@click.option("--decisions", is_flag=True, help="List the reviewer decisions recorded (of the run given with --run, or all).")
def history(ledger, outbox: Path | None, run_id: str | None, decisions: bool):
    """List past runs, the files of one run, or the reviewer decisions, from the ledger (read-only:
    never migrated nor written, so a ledger on a read-only disk is read too)."""
    from batch.run.ledger import SCHEMA_VERSION, Ledger, LedgerEmpty, LedgerUnreadable, there

    settings = _settings(ledger=ledger, outbox=outbox)
    if not there(settings.ledger):
        _say(f"No ledger at {printable(settings.ledger)}: no runs yet.")
        return
    _local_ledger(settings)
    try:
        book = Ledger.for_reading(settings.ledger)
    except LedgerEmpty as err:
        _say(printable(err))
        return
    except LedgerUnreadable as err:
        raise click.ClickException(printable(err)) from err
    if book.version < SCHEMA_VERSION:
        _say(
            f"The ledger {printable(settings.ledger)} is older than this njcredits (schema {book.version}, this version uses "
            f"{SCHEMA_VERSION}); it is read as it is, not migrated, and what it does not hold is shown empty."
        )
    if decisions:
        title = "Reviewer decisions" + (f" recorded by run {run_id}" if run_id else ", each in its latest state")
        columns = ("run", "file", "sheet", "record", "decision", "codes", "reviewer", "note", "state", "sha256")
        found = book.decisions(run_id, latest=not run_id)  # the run of the latest state
        rows = [
            (d.run_id, d.file, d.sheet, d.record_id, d.decision, d.codes, d.reviewer, d.note, d.state, (d.sha256 or "")[:16])
            for d in found.itertuples(index=False)
        ]  # fmt: skip
        if "team" in found and found["team"].nunique() > 1:  # a ledger shared by teams: whose each decision is
            columns = ("team", *columns)
            rows = [(team or "", *row) for team, row in zip(found["team"], rows, strict=True)]
        head = ("decision", "sheet", "record")  # each decision's line; the rest under it
    elif run_id:
        title = f"Files of run {run_id}"
        columns = ("status", "name", "reason", "rows", "findings", "output", "archived", "sha256")
        rows = [
            (f.status, f.name, f.reason, _rows_in_words(f.rows_per_sheet), f"{f.errors or 0} errors, {f.warnings or 0} warnings",
             f.output, f.archived, (f.sha256 or "")[:16])
            for f in book.files(run_id).itertuples(index=False)
        ]  # fmt: skip
        head = ("status", "name")
    else:
        title = f"Runs in {settings.ledger}"
        columns = ("run", "started", "ended", "files", "team", "version", "report")
        rows = [
            (r.run_id, (r.started or "")[:19].replace("T", " "), _ended(r.started, r.ended),
             f"{r.files or 0} ({r.processed or 0} processed, {r.skipped or 0} skipped, {r.failed or 0} failed)",
             getattr(r, "team", None) or "", r.tool_version, r.report)
            for r in book.runs().itertuples(index=False)
        ]  # fmt: skip
        head = ("run", "started", "ended")
    _print_blocks(title, columns, rows, head)


def _rows_in_words(rows_per_sheet) -> str:
    """A file's rows per sheet as the ledger keeps them (JSON), in words: `Transfers 3, Grow NJ 20000`."""
    import json

    try:
        counts = json.loads(rows_per_sheet) if isinstance(rows_per_sheet, str) else (rows_per_sheet or {})
    except ValueError:
        return printable(rows_per_sheet)
    if not isinstance(counts, dict):
        return printable(rows_per_sheet)
    return ", ".join(f"{printable(sheet)} {n}" for sheet, n in counts.items())


def _ended(started, ended) -> str:
    """When a run ended: its time alone on the day it started, `not ended` for a run still going (or killed)."""
    if not ended:
        return "not ended"
    started, ended = (started or "")[:19].replace("T", " "), ended[:19].replace("T", " ")
    return f"to {ended[11:]}" if ended[:10] == started[:10] else f"to {ended}"


def _print_blocks(title: str, columns, rows, head) -> None:
    """A listing readable at any width (`batch.run.terminal.blocks`): of each row, the fields named in
    `head` on one line, then each other field on its own indented lines (`label: text`), wrapped to
    the terminal; everything printed as text, control characters escaped."""
    from batch.run.terminal import blocks, width

    at = [columns.index(c) for c in head]
    entries = [
        ([printable(row[i]) for i in at], [(c, printable(v)) for c, v in zip(columns, row, strict=True) if c not in head]) for row in rows
    ]
    for line in blocks(printable(title), entries, width(), whole=("output", "archived", "report", "team")):
        _say(line)


def printable(value) -> str:
    """What came from a file, a workbook or the ledger, as one line of plain text (`batch.run.names.printable`):
    control characters escaped; None and NaN as empty."""
    from batch.run.names import printable as plain

    if value is None or (isinstance(value, float) and value != value):
        return ""
    return plain(value)


@main.command()
@click.argument("inbox", required=False, type=click.Path(path_type=Path))
@_batch_options
@click.option("--settle", "settle_seconds", type=float, help="Seconds a file must stop changing before it is read [2].")
def watch(inbox: Path | None, **flags):
    """Watch INBOX and process each workbook dropped in once it is complete: closed by its writer, unchanged
    for the settle time, and (a workbook) a complete zip (Ctrl-C stops)."""
    from batch.run.watch import folder_problem, watch_inbox
    from batch.run.workers import start_fork_server

    settings = _settings(inbox=inbox, **flags)
    problem = folder_problem(settings)  # before anything is created or watched
    if not settings.settle_seconds > 0:
        problem = f"The settle time must be more than 0 seconds (it is {settings.settle_seconds:g}); give --settle 2, say."
    if problem:
        raise click.UsageError(problem)
    _local_ledger(settings)
    _team(settings, _ledger(settings.ledger))  # an unusable ledger or an unknown team is said once, before watching
    settings.inbox.mkdir(parents=True, exist_ok=True)
    start_fork_server()
    sys.exit(watch_inbox(settings, echo=Terminal().echo))  # 3: a stop cut a run short, its files wait in the inbox


@main.command()
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
    help="Folder for njcredits-portfolio.xlsx, an outbox whose ledger is read unless --ledger names one [the outbox].",
)  # fmt: skip
@click.option("--ledger", type=LEDGER, help="Ledger to read: a SQLite file or a PostgreSQL URL [OUTBOX/.njcredits/ledger.sqlite].")
def portfolio(out_dir: Path | None, ledger):
    """Write njcredits-portfolio.xlsx: the standing position of the ledger's latest records (each
    certificate, BRRAP business and year, ERG bucket, compliance project, and each business's prior
    awards). The ledger is only read."""
    from batch.run.ledger import LedgerUnreadable, there
    from batch.run.standing import write_portfolio

    settings = _settings(ledger=ledger, outbox=out_dir)
    _local_ledger(settings, only_if_there=True)
    if not there(settings.ledger):
        raise click.ClickException(
            f"No ledger at {printable(settings.ledger)}: no run has recorded a portfolio there. Give the outbox the runs "
            "wrote to (--out OUTBOX), or the ledger itself (--ledger OUTBOX/.njcredits/ledger.sqlite)."
        )
    out = out_dir or settings.outbox
    try:
        path, counts = write_portfolio(settings.ledger, out)
    except LedgerUnreadable as err:
        raise click.ClickException(printable(err)) from err
    except OSError as err:  # the folder cannot take it: the environment's, exit 3 as a run's
        click.echo(f"Error: njcredits-portfolio.xlsx cannot be written in {printable(out)}: {err.strerror or err}.", err=True)
        sys.exit(3)
    sheets = ", ".join(f"{name} ({rows:,} rows)" for name, rows in counts.items())
    click.echo(f"Wrote {printable(path)}: {sheets}, read from {printable(settings.ledger)}.")


@main.group()
def ledger():
    """The ledger itself: `ledger copy` moves it to another database."""


@ledger.command("copy")
@click.option("--from", "source", required=True, type=LEDGER, help="The ledger to copy: a SQLite file or a PostgreSQL URL.")
@click.option("--to", "destination", required=True, type=LEDGER, help="An empty ledger to copy it into: a SQLite file or a PostgreSQL URL.")
def ledger_copy(source, destination):
    """Copy a ledger into an empty one, every run, file, record and decision as it was: a team's
    SQLite ledger into PostgreSQL when it comes to be shared, or back. The source is only read; a
    destination that holds runs is refused. Exit 1 when refused, 3 when a database cannot be reached
    or written."""
    from batch.run.ledger import LedgerOnNetwork, refuse_network_ledger, server_errors
    from batch.run.ledger.backends import scrubbed
    from batch.run.ledger.copy import CopyRefused, copy_ledger

    try:
        refuse_network_ledger(destination)
    except LedgerOnNetwork as err:
        click.echo(f"Error: {printable(err)}", err=True)
        sys.exit(3)
    try:
        counts = copy_ledger(source, destination)
    except CopyRefused as err:
        click.echo(f"Error: {printable(err)}", err=True)
        sys.exit(1)
    except (*server_errors(), OSError) as err:
        said = printable(scrubbed(scrubbed(err, source), destination))
        click.echo(f"Error: the ledger could not be copied from {source} to {destination} ({said}); nothing was copied.", err=True)
        sys.exit(3)
    said = ", ".join(f"{counts.get(t, 0):,} {t}" for t in ("runs", "files", "records", "decisions"))
    click.echo(f"Copied {said} from {source} to {destination}.")


@main.command()
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Folder for the template.")
def template(out_dir: Path):
    """Write the blank intake template: an Instructions sheet, then one sheet per intake sheet with drop-downs and checks."""
    from batch.workbook.template import write_template

    click.echo(f"Wrote {write_template(out_dir)}")


@main.command()
@click.option(
    "--out", "out_dir", default=".", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder for the rulebook."
)
def rules(out_dir: Path):
    """Write the rulebook, njcredits-rules.xlsx: every statutory value of every program, with the dates it was in
    force, its citation and any interpretation, as the Rules sheet of a returned workbook shows them."""
    from batch.workbook.rulebook import write_rulebook

    click.echo(f"Wrote {write_rulebook(out_dir)}")


@main.command()
@click.argument("file", type=click.Path(path_type=Path))  # a path that is no file is told as a file that cannot be read
@AS_OF_OPTION
@click.option(
    "--ledger", type=LEDGER, help="Ledger read for prior incentives: a SQLite file or a PostgreSQL URL [OUTBOX/.njcredits/ledger.sqlite]."
)
@click.option("--out", "outbox", type=click.Path(path_type=Path), help="Outbox whose ledger to read [./outbox].")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True, help="How the findings are written."
)
def validate(file: Path, as_of, ledger, outbox: Path | None, fmt: str):
    """Validate and calculate FILE without writing; print the findings. Exit status 0 when the file has
    no error finding, 1 when it has error findings, 4 when it cannot be read (--format json then
    prints a document with an `error` field: the reason)."""
    import json

    import pandas as pd

    from batch.pipeline import process
    from batch.run.ledger import Ledger, LedgerUnreadable, on_server, server_errors
    from batch.run.workers import file_reason as _reason

    def unreadable(reason: str):
        """A file that cannot be read: its one-line reason (in JSON, still one document), exit 4."""
        if fmt == "json":
            _say(json.dumps({"file": printable(file.name), "error": reason}, ensure_ascii=False))
        else:
            _say(f"failed  {printable(file.name)}  {reason}", err=True)
        sys.exit(4)

    if not file.is_file():  # no file there, or a folder: said as for any file that cannot be read
        unreadable(
            f"{printable(file.name)} {'is a folder, not a workbook' if file.is_dir() else 'does not exist'}: {printable(str(file))}."
        )
    settings = _settings(as_of=as_of, ledger=ledger, outbox=outbox)
    _local_ledger(settings, only_if_there=True)
    book = settings.ledger if on_server(settings.ledger) or settings.ledger.is_file() else None
    team = None
    if book is not None:
        try:
            found = _team(settings, Ledger.for_reading(book), file)  # the file's team's decisions, as `run FILE` reads them
            if found.note:
                _say(found.note, err=True)
            team = found.names
        except (LedgerUnreadable, *server_errors()) as err:  # nothing of the ledger is read
            _say(f"{printable(err)} Prior incentives of earlier runs were not checked.", err=True)
            book = None
    try:
        try:
            result = process(file, settings.limits, as_of=settings.as_of, ledger=book, team=team)
        except LedgerUnreadable as err:
            _say(f"{printable(err)} Prior incentives of earlier runs were not checked.", err=True)
            book = None
            result = process(file, settings.limits, as_of=settings.as_of, ledger=None)
    except Exception as err:  # noqa: BLE001 - the same one-line reason as `run`, never a traceback
        unreadable(printable(_reason(err, file.name)))
    findings = result.findings
    counts = {r.sheet.name: {k: int(v) for k, v in r.counts.items()} for r in result.intake}
    if fmt == "json":
        document = {
            "file": printable(file.name),
            "as_of": result.as_of.isoformat(),
            "findings": _findings_json(findings),
            "counts": counts,
        }
        _say(json.dumps(document, ensure_ascii=False))
    elif fmt == "csv":
        rows = findings.assign(Row=[("" if pd.isna(v) else str(int(v))) for v in findings["Row"]])
        _say(rows.to_csv(index=False), nl=False)
    else:
        from batch.run.terminal import width, wrapped

        at = width()
        said = f"As of {result.as_of.isoformat()}; " + (
            f"prior incentives read from {book}."
            if book
            else f"no ledger at {settings.ledger}: prior incentives of earlier runs not checked."
        )
        for line in wrapped(said, at):
            _say(line)
        _findings_blocks(file.name, findings, at)
        for r in result.intake:
            c = r.counts
            line = (
                f"{printable(r.sheet.name)}: {c['rows']} rows: {c['OK']} OK, {c['Flagged']} flagged, {c['Ineligible']} ineligible, "
                f"{c['Invalid']} invalid"
            )
            for part in wrapped(line, at, "", "    "):
                _say(part)
    sys.exit(1 if (result.findings["Severity"] == "error").any() else 0)


def _findings_json(findings) -> list[dict]:
    """The findings as JSON objects: `Row` an integer, and `null` for what a finding has none of (the
    row and record of a sheet-level finding, a column, a waiver)."""
    import pandas as pd

    out = []
    for f in findings.to_dict(orient="records"):
        for key, value in f.items():
            if value is None or (not isinstance(value, str) and pd.isna(value)) or value == "":
                f[key] = None
            elif key == "Row":
                f[key] = int(value)
        out.append(f)
    return out


def _findings_blocks(name: str, findings, at: int | None) -> None:
    """The findings as a table that stays readable in an 80-column terminal (`batch.run.terminal.blocks`):
    each finding's severity, sheet, row and code on one line, in aligned columns (codes whole), its
    message on its own indented lines below, wrapped; its citation too when the message does not
    already carry it."""
    import pandas as pd

    from batch.run.terminal import blocks

    entries = []
    for f in findings.itertuples(index=False):
        row = "" if pd.isna(f.Row) else f"row {int(f.Row)}"
        head = [printable(f.Severity), printable(f.Sheet), row, printable(f.Code)]
        details = [("", printable(f.Message))]
        if str(f.Citation) not in str(f.Message):
            details.append(("citation", printable(f.Citation)))
        waived = getattr(f, "Waived", "")
        if waived:
            details.append(("waived", printable(waived)))
        entries.append((head, details))
    title = f"Findings in {printable(name)}: " + (f"{len(findings)}" if len(findings) else "none")
    for line in blocks(title, entries, at):
        _say(line)
