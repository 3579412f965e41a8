"""Settings of a batch run: defaults, then `njcredits.toml` in the working directory, then flags.

```toml
inbox = "inbox"                 # where workbooks are dropped
outbox = "outbox"               # where returned workbooks and run reports go
archive = "inbox"               # holds processed/<run-id>/ and failed/<run-id>/ (default: the inbox)
ledger = "outbox/.njcredits/ledger.sqlite"  # or "postgresql://user@host:5432/db", a ledger shared by machines
workers = 2                     # files processed in parallel (default: the number of cores)
settle_seconds = 2.0            # watch: a file must stop changing this long before it is read
memory_limit_mb = 8192          # address space of the process reading one file
timeout_seconds = 1800          # longest one file may take
max_uncompressed_mb = 2048      # refuse a workbook that would inflate beyond this
max_compression_ratio = 100     # refuse a part (1 MiB or more) that inflates more than this many times
max_cells = 60000000            # refuse a sheet declaring more rows x columns than this
as_of = 2026-11-30              # the run's as-of date (default: the day each file is processed)
team = "Finance East"           # whose records the run's are (default: the inbox's absolute path)
```
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from batch.run.ledger.backends import LedgerURL, location

CONFIG_NAME = "njcredits.toml"
KEEP_MARKER = ".njcredits-keep-inputs"  # a folder holding this file never has its inputs moved


class ConfigError(Exception):
    """The configuration file cannot be used; the message says why."""


@dataclass(frozen=True)
class Settings:
    inbox: Path
    outbox: Path
    archive: Path
    ledger: Path | LedgerURL  # a SQLite file, or a PostgreSQL database (batch.run.ledger.backends)
    workers: int
    keep_inputs: bool = False
    force: bool = False
    wait: bool = False
    settle_seconds: float = 2.0
    memory_limit_mb: int = 8192
    timeout_seconds: float = 1800
    max_uncompressed_mb: int = 2048
    max_compression_ratio: int = 100
    max_cells: int = 60_000_000
    as_of: dt.date | None = None  # None: the day each file is processed, in local time
    team: str | None = None  # whose records the run's are; None: told by `batch.run.teams.team_for`

    @property
    def limits(self):
        from batch.workbook.safety import Limits

        return Limits(self.max_uncompressed_mb, self.max_compression_ratio, max_cells=self.max_cells)

    @property
    def moves_inputs(self) -> bool:
        """Inputs are moved to the archive. When not (the samples, --keep-inputs, `run FILE`), nothing
        is written in the inbox: the lock and the staging copies live beside the ledger."""
        return not (self.keep_inputs or self.inputs_protected)

    @property
    def home(self) -> Path:
        """The tool's own folder where the inbox is never written (the samples, --keep-inputs, `run
        FILE`): the lock and the staging copies. Beside a SQLite ledger; for a PostgreSQL ledger, the
        outbox's `.njcredits/`."""
        return self.ledger.parent if isinstance(self.ledger, Path) else self.outbox / ".njcredits"

    @property
    def inputs_protected(self) -> bool:
        return (self.inbox / KEEP_MARKER).exists()


def default_inbox(cwd: Path) -> Path:
    """`sample_inputs/` when run in a checkout of this project, else `./inbox`."""
    if (cwd / "sample_inputs").is_dir() and (cwd / "batch" / "pipeline.py").is_file():
        return cwd / "sample_inputs"
    return cwd / "inbox"


def _as_of(value, path: Path) -> dt.date | None:
    """A TOML date (as_of = 2026-11-30), ISO text, or a date from the --as-of flag."""
    if value is None or (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ConfigError(f"{path}: as_of = {value!r} is not a date; write it as as_of = 2026-11-30.")


class FileSettings(BaseModel):
    """What njcredits.toml may hold: each value checked for its type and range (strict: 0.5 is never
    read as a whole number, "no" never as True)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    inbox: str | None = None
    outbox: str | None = None
    archive: str | None = None
    ledger: str | None = None
    workers: int | None = Field(None, ge=1, le=64)
    keep_inputs: bool | None = None
    force: bool | None = None
    wait: bool | None = None
    settle_seconds: float | None = Field(None, gt=0)
    memory_limit_mb: int | None = Field(None, ge=256)
    timeout_seconds: float | None = Field(None, gt=0)
    max_uncompressed_mb: int | None = Field(None, ge=1)
    max_compression_ratio: int | None = Field(None, ge=1)
    max_cells: int | None = Field(None, ge=1)
    as_of: object = None  # checked by _as_of: a TOML date or YYYY-MM-DD text
    team: str | None = Field(None, max_length=200)


def _checked(values: dict, path: Path) -> dict:
    """The file's values, checked; a bad one is a ConfigError naming the key, in one line."""
    try:
        FileSettings.model_validate(values)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(k) for k in first["loc"])
        raise ConfigError(f"{path}: {key} = {values.get(key)!r}: {first['msg'].lower()}.") from None
    team = values.get("team")
    if team is not None and not team.strip():
        raise ConfigError(f"{path}: team = {team!r}: name the team (it says whose records the run's are), or leave it out.")
    if team is not None and (team != team.strip() or not team.isprintable()):
        raise ConfigError(
            f"{path}: team = {team!r}: a team's name has no spaces at its ends and only printing characters (not a tab, nor a "
            "no-break space): records are found by the name exactly as written."
        )
    return values


def load(cwd: Path | None = None, **flags) -> Settings:
    """Defaults < njcredits.toml < flags (a flag of None is not given)."""
    cwd = Path(cwd or Path.cwd())
    values: dict = {}
    path = cwd / CONFIG_NAME
    if path.exists():
        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path} is not valid TOML ({err}); fix or remove it.") from err
        known = {f.name for f in fields(Settings)}
        unknown = set(values) - known
        if unknown:
            raise ConfigError(f"{path} has unknown settings {sorted(unknown)}; known ones are {sorted(known)}.")
        values = _checked(values, path)
    values.update({k: v for k, v in flags.items() if v is not None})
    inbox = Path(values.get("inbox") or default_inbox(cwd))
    outbox = Path(values.get("outbox") or cwd / "outbox")
    settings = Settings(
        inbox=inbox if inbox.is_absolute() else cwd / inbox,
        outbox=outbox if outbox.is_absolute() else cwd / outbox,
        archive=Path(values.get("archive") or inbox),
        ledger=location(values.get("ledger") or outbox / ".njcredits" / "ledger.sqlite"),
        workers=int(values.get("workers") or os.cpu_count() or 1),
        keep_inputs=bool(values.get("keep_inputs", False)),
        force=bool(values.get("force", False)),
        wait=bool(values.get("wait", False)),
        settle_seconds=float(values.get("settle_seconds", 2.0)),
        as_of=_as_of(values.get("as_of"), path),
        team=values.get("team"),
        **{
            k: type(getattr(Settings, k))(values[k])
            for k in ("memory_limit_mb", "timeout_seconds", "max_uncompressed_mb", "max_compression_ratio", "max_cells")
            if k in values
        },
    )
    absolute = {
        k: (v if v.is_absolute() else cwd / v)
        for k, v in (("archive", settings.archive), ("ledger", settings.ledger))
        if isinstance(v, Path)
    }
    return replace(settings, **absolute)
