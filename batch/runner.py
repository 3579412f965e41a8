"""The monthly batch: every workbook in the inbox processed once, nothing lost, nothing overwritten.

One run: take the inbox lock -> list the inputs -> skip files already processed (by SHA-256) ->
process the rest in parallel worker processes -> put each output in place atomically -> move each
input to `processed/<run-id>/` or `failed/<run-id>/` (with `<name>.reason.txt`) -> record it all
in the ledger -> write the run report `run-<run-id>.summary.xlsx`.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import gc
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import resource
import secrets
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from batch import __version__
from batch.config import Settings
from batch.ledger import Ledger

INTAKE_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".csv")
PARTIAL = ".partial"
RECORD_COLUMNS = ["sheet", "record_id", "status", "award_cents", "codes", "area", "year", "file"]
LOCK_NAME = ".njcredits.lock"


class RunLocked(Exception):
    """Another run holds the inbox."""


@dataclass
class FileOutcome:
    name: str
    status: str  # processed | failed | skipped
    reason: str = ""
    output: str | None = None
    archived: str | None = None
    info: dict = field(default_factory=dict)


@dataclass
class RunOutcome:
    run_id: str
    files: list[FileOutcome]
    report: Path | None

    @property
    def failed(self) -> int:
        return sum(f.status == "failed" for f in self.files)


def new_run_id() -> str:
    now = dt.datetime.now(dt.UTC)
    return now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z-" + secrets.token_hex(2)


def output_name(path: Path) -> str:
    """NAME.xlsx -> NAME.annotated.xlsx (a returned workbook dropped back in keeps its name)."""
    stem = path.stem
    if stem.endswith(".annotated"):
        stem = stem[: -len(".annotated")]
    return f"{stem}.annotated.xlsx"


def list_inputs(folder: Path) -> list[Path]:
    """Every file dropped in the folder: hidden files, Office lock files (~$) and our own files aside."""
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith((".", "~$")) and not p.name.endswith(".reason.txt"))


@contextmanager
def inbox_lock(settings: Settings, echo):
    """An exclusive lock per inbox, so two runs cannot interleave. Released when the process ends,
    however it ends (a killed run never leaves a stale lock)."""
    folder = settings.ledger.parent if settings.inputs_protected else settings.inbox
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not settings.wait:
                raise RunLocked(
                    f"Another njcredits run is processing {settings.inbox} (lock {path}); "
                    f"try again when it ends, or use --wait to wait for it."
                ) from None
            echo(f"Waiting for the run already processing {settings.inbox} to finish ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _move(src: Path, folder: Path) -> Path:
    """Move a file into folder, never over another file."""
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / src.name
    n = 1
    while dest.exists():
        dest = folder / f"{src.stem} ({n}){src.suffix}"
        n += 1
    shutil.move(str(src), str(dest))
    return dest


def _place_output(partial: Path, final: Path, run_id: str) -> Path:
    """Rename the finished output to its final name; an earlier output of that name is moved to
    `previous/<run-id>/` first, so nothing is ever overwritten."""
    if final.exists():
        _move(final, final.parent / "previous" / run_id)
    os.replace(partial, final)
    return final


def work(path: str, partial: str, limits=None, as_of: dt.date | None = None, ledger: str | None = None, run_id: str | None = None) -> dict:
    """Process one workbook and write its output under the partial name. `as_of` None means the day
    the file is processed (local time); the ledger is only read (prior incentive records)."""
    from batch.pipeline import process
    from batch.safety import Limits
    from batch.writing import write

    started = time.perf_counter()
    result = process(Path(path), limits or Limits(), as_of=as_of, ledger=Path(ledger) if ledger else None, run_id=run_id)
    write(result, Path(partial))
    sev = result.findings["Severity"].value_counts()
    return {
        "rows_per_sheet": {r.sheet.name: r.counts["rows"] for r in result.intake},
        "counts": {r.sheet.name: r.counts for r in result.intake},
        "errors": int(sev.get("error", 0)),
        "warnings": int(sev.get("warning", 0)),
        "infos": int(sev.get("info", 0)),
        "records": result.records(),
        "per_year": _per_year_credits(result),
        "rules_versions": result.rules_versions(),
        "seconds": round(time.perf_counter() - started, 3),
        "timings": result.timings,
        "as_of": result.as_of.isoformat(),
    }


def _per_year_credits(result) -> pd.DataFrame:
    """Credits per (grant, year) of sheets whose limits hold across workbooks (BRRAP's aggregate)."""
    parts = []
    for r in result.intake:
        fn = getattr(r.module, "run_credit_by_year", None)
        if fn:
            parts.append(fn(r.typed, r.computed, r.status).assign(sheet=r.sheet.name))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _reason(err: BaseException) -> str:
    from batch.safety import Refused

    if isinstance(err, Refused):
        return str(err)
    return f"It could not be processed ({type(err).__name__}: {err})."


def run_batch(settings: Settings, files: list[Path] | None = None, echo=print, progress: bool = False) -> RunOutcome:
    """One run over the inbox (or over `files`, all inside the inbox)."""
    with inbox_lock(settings, echo):
        return _run(settings, files, echo, progress)


def _run(settings: Settings, files, echo, progress) -> RunOutcome:
    from batch.report import write_report

    keep = settings.keep_inputs or settings.inputs_protected
    run_id = new_run_id()
    started = dt.datetime.now(dt.UTC)
    ledger = Ledger(settings.ledger)
    ledger.start_run(run_id, started.isoformat(), __version__, str(settings.inbox), str(settings.outbox))
    settings.outbox.mkdir(parents=True, exist_ok=True)
    for stale in settings.outbox.glob(f".*{PARTIAL}*"):  # left by a run that was killed while writing
        stale.unlink()
    inputs = [Path(f) for f in files] if files is not None else list_inputs(settings.inbox)
    inputs = [p for p in inputs if p.exists()]
    outcomes: list[FileOutcome] = []
    per_year, records, rules_versions = [], [], {}
    seen: dict[str, str] = {}
    twins: list = []

    def finish(path: Path, outcome: FileOutcome, info: dict) -> None:
        if not keep:
            where = settings.archive / ("failed" if outcome.status == "failed" else "processed") / run_id
            outcome.archived = str(_move(path, where))
            if outcome.status == "failed":
                Path(outcome.archived).with_name(Path(outcome.archived).name + ".reason.txt").write_text(
                    outcome.reason + "\n", encoding="utf-8"
                )
        ledger.add_file(
            run_id,
            {
                **info,
                "name": path.name,
                "status": outcome.status,
                "reason": outcome.reason,
                "output": outcome.output,
                "archived": outcome.archived,
            },
            info.get("records"),
        )
        outcomes.append(outcome)
        line = {"processed": "OK     ", "skipped": "SKIPPED", "failed": "FAILED "}[outcome.status]
        detail = outcome.output if outcome.status == "processed" else outcome.reason
        echo(f"{line} {path.name}: {detail}")

    todo = []
    for path in inputs:
        info = {"size": path.stat().st_size, "sha256": _sha(path)}
        if path.suffix.lower() not in INTAKE_SUFFIXES:
            finish(
                path,
                FileOutcome(
                    path.name,
                    "failed",
                    f"{path.name} is not an intake file (.xlsx, .xlsm, .xls or .csv); save it as .xlsx and drop it in again.",
                ),
                info,
            )
            continue
        # a protected folder (the bundled samples) is a demonstration: it is processed every time
        if info["sha256"] in seen and not settings.force:  # a copy of a file earlier in this run: decided after it
            twins.append((path, info, seen[info["sha256"]]))
            continue
        earlier = None if settings.force or settings.inputs_protected else ledger.processed_before(info["sha256"])
        if earlier:
            reason = (
                f"identical to {earlier['name']}, already processed in run {earlier['run_id']}"
                + (f" (output {earlier['output']})" if earlier["output"] else "")
                + "; use --force to process it again."
            )
            finish(path, FileOutcome(path.name, "skipped", reason), info)
            continue
        seen[info["sha256"]] = path.name
        todo.append((path, info))

    bar = _progress(progress and len(todo) > 3, len(todo))

    def done(path: Path, info: dict, partial: Path, result: dict | None, reason: str) -> None:
        if bar:
            bar.advance()
        if result is None:
            finish(path, FileOutcome(path.name, "failed", reason), info)
            return
        final = _place_output(partial, settings.outbox / output_name(path), run_id)
        info.update({k: result[k] for k in ("rows_per_sheet", "errors", "warnings", "infos", "seconds", "timings", "as_of")})
        info["records"] = result["records"].assign(file=path.name)
        records.append(info["records"])
        if len(result["per_year"]):
            per_year.append(result["per_year"].assign(file=path.name))
        rules_versions.update(result["rules_versions"])
        finish(path, FileOutcome(path.name, "processed", output=str(final), info=result), info)

    for path, info, partial, result, reason in isolated(todo, settings, run_id):
        done(path, info, partial, result, reason)
    if bar:
        bar.stop()
    by_name = {o.name: o for o in outcomes}
    for path, info, original in twins:
        first = by_name[original]
        if first.status == "processed":
            finish(
                path,
                FileOutcome(
                    path.name,
                    "skipped",
                    f"identical to {original}, processed in this run (output {first.output}); use --force to process it again.",
                ),
                info,
            )
        else:
            finish(path, FileOutcome(path.name, "failed", f"identical to {original}, which could not be processed: {first.reason}"), info)

    counts = {"files": len(outcomes), **{s: sum(o.status == s for o in outcomes) for s in ("processed", "failed", "skipped")}}
    report = write_report(
        settings.outbox / f"run-{run_id}.summary.xlsx",
        run_id,
        started,
        outcomes,
        ledger,
        pd.concat(records, ignore_index=True) if records else pd.DataFrame(columns=RECORD_COLUMNS),
        pd.concat(per_year, ignore_index=True) if per_year else pd.DataFrame(),
        rules_versions,
    )
    ledger.end_run(run_id, dt.datetime.now(dt.UTC).isoformat(), counts, str(report), rules_versions)
    echo(f"Run {run_id}: {counts['processed']} processed, {counts['skipped']} skipped, {counts['failed']} failed; report {report}")
    return RunOutcome(run_id, outcomes, report)


def _child(conn, path: str, partial: str, memory_mb: int, limits, as_of, ledger: str, run_id: str) -> None:
    """A child process reading one file, under an address-space limit: whatever the file does to the
    readers (a Rust abort, a MemoryError), only this process ends."""
    if memory_mb:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    # the child lives for one file and makes no reference cycles worth collecting; the cyclic
    # collector would otherwise walk millions of cell objects again and again (superlinear time)
    gc.disable()
    try:
        conn.send(("ok", work(path, partial, limits, as_of, ledger, run_id)))
    except MemoryError:
        conn.send(
            (
                "error",
                f"{Path(path).name} needs more than the {memory_mb:,} MB of memory allowed for one file "
                f"(memory_limit_mb); split it into smaller workbooks or raise the limit.",
            )
        )
    except BaseException as err:  # noqa: BLE001 - every failure becomes the file's reason
        conn.send(("error", _reason(err)))
    finally:
        conn.close()


def isolated(todo: list, settings: Settings, run_id: str):
    """Process each (path, info) in its own child process, up to `workers` at a time, each with the
    memory limit and the timeout. Yields (path, info, partial, result or None, reason)."""
    ctx = multiprocessing.get_context("forkserver")  # children do not inherit the inbox lock
    ctx.set_forkserver_preload(["batch.pipeline", "batch.writing"])
    queue = list(todo)
    running: dict = {}
    while queue or running:
        while queue and len(running) < max(1, settings.workers):
            path, info = queue.pop(0)
            partial = settings.outbox / f".{output_name(path)}.{run_id}{PARTIAL}"
            recv, send = ctx.Pipe(duplex=False)
            args = (send, str(path), str(partial), settings.memory_limit_mb, settings.limits, settings.as_of, str(settings.ledger), run_id)
            proc = ctx.Process(target=_child, args=args, daemon=True)
            proc.start()
            send.close()
            running[recv] = (proc, path, info, partial, time.monotonic())
        for conn in mp_connection.wait(list(running), timeout=0.2):
            proc, path, info, partial, _ = running.pop(conn)
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):
                proc.join()
                kind, payload = (
                    "error",
                    (
                        f"The process reading {path.name} stopped unexpectedly (exit {proc.exitcode}): "
                        f"the file makes the reader crash or run out of memory; check its size and contents."
                    ),
                )
            conn.close()
            proc.join()
            yield (path, info, partial, payload, "") if kind == "ok" else (path, info, partial, None, payload)
        for conn, (proc, path, info, partial, start) in list(running.items()):
            if time.monotonic() - start > settings.timeout_seconds:
                proc.kill()
                proc.join()
                conn.close()
                del running[conn]
                yield (
                    path,
                    info,
                    partial,
                    None,
                    (
                        f"{path.name} took longer than {settings.timeout_seconds:,.0f} seconds "
                        f"(timeout_seconds) and was stopped; split it or raise the limit."
                    ),
                )


def _sha(path: Path) -> str:
    from batch.pipeline import sha256_of

    return sha256_of(path)


class _Bar:
    def __init__(self, total: int):
        from rich.progress import Progress

        self.progress = Progress(transient=True)
        self.task = self.progress.add_task("Processing workbooks", total=total)
        self.progress.start()

    def advance(self):
        self.progress.advance(self.task)

    def stop(self):
        self.progress.stop()


def _progress(enabled: bool, total: int):
    return _Bar(total) if enabled else None
