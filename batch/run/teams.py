"""Whose records a run's are: a record is known by its team, sheet and record ID, so two teams
sharing a ledger may number their rows alike.

One rule decides a run's team (`team_for`), for `run`, `watch` and `validate --ledger` alike:

- `team` named in njcredits.toml (or `--team`): that team. The runs this inbox recorded before it
  was named, under its default team, become the named team's (`Team.adopts`), so naming a team
  later keeps the inbox's history, decisions and records its own.
- A folder run with no team: the team of this inbox's latest run in the ledger (an inbox is known
  by its resolved path, so a link or `..` to it is the same inbox), else the inbox's resolved path.
  A ledger holding another team's folder runs is shared: `TeamNeeded`, since the same shared
  folder mounted at two paths would be two teams whose records never supersede each other.
- One file (`run FILE`, `validate FILE`) with no team: the team of the runs whose inbox or outbox
  holds the file's folder (a returned workbook run from the outbox is its inbox's team's); a file
  from another folder is the ledger's one team's; with no runs yet, its folder's. A folder several
  teams' runs hold, or a file from elsewhere in a ledger of several teams: `TeamNeeded`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from batch.run.config import CONFIG_NAME, Settings
from batch.run.names import printable


class TeamNeeded(Exception):
    """The ledger is shared by teams and the run's team cannot be told: a usage error, raised before
    anything is touched."""


@dataclass(frozen=True)
class Team:
    name: str
    adopts: tuple[str, ...] = ()  # default team names (inbox paths) of this inbox's earlier runs, now `name`'s


def _resolved(path: str | None) -> Path | None:
    if not path:
        return None
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):  # a path that cannot be resolved is no folder of this one
        return None


def _holds(folder: str | None, here: Path) -> bool:
    where = _resolved(folder)
    return where is not None and (here == where or here.is_relative_to(where))


def _distinct(names) -> list[str]:
    return list(dict.fromkeys(n for n in names if n))


def _needed(settings: Settings, why: str) -> TeamNeeded:
    return TeamNeeded(
        f"The ledger {printable(str(settings.ledger))} {why}: a shared ledger needs each team named. Set "
        f'team = "..." in {CONFIG_NAME} where njcredits runs (records are known by team, sheet and record ID, so two '
        "teams may number their rows alike)."
    )


def _shown(names: list[str]) -> str:
    more = f" and {len(names) - 1} more" if len(names) > 1 else ""
    return f"{printable(names[0])}{more}"


def team_for(settings: Settings, places: list[dict], file: Path | None = None) -> Team:
    """The run's team (module docstring). `places`: the ledger's runs, latest first, each with its
    `inbox`, `outbox`, `team` and `one_file` (`Ledger.places`); `file`: the one file of `run FILE`
    or `validate FILE`, None for a run of the inbox."""
    here = (file.parent if file is not None else settings.inbox).resolve()
    folder_runs = [p for p in places if not p["one_file"]]
    if file is None:
        mine = [p for p in folder_runs if _resolved(p["inbox"]) == here]
        if settings.team is not None:
            defaults = _distinct(p["team"] for p in mine if p["team"] != settings.team and _resolved(p["team"]) == here)
            return Team(settings.team, tuple(defaults))
        name = mine[0]["team"] if mine else str(here)
        others = _distinct(p["team"] for p in folder_runs if p["team"] != name)
        if others:
            inboxes = _distinct(p["inbox"] for p in folder_runs if p["team"] != name)
            raise _needed(settings, f"is shared with the inbox {_shown(inboxes)}")
        return Team(name)
    if settings.team is not None:
        return Team(settings.team)
    known = _distinct(p["team"] for p in places if _holds(p["inbox"], here) or _holds(p["outbox"], here))
    if len(known) > 1:
        raise _needed(settings, f"holds runs of {len(known)} teams whose folders hold {printable(str(file))}")
    if known:
        return Team(known[0])
    teams = _distinct(p["team"] for p in folder_runs) or _distinct(p["team"] for p in places)
    if len(teams) > 1:
        raise _needed(settings, f"is shared by {len(teams)} teams, and {printable(str(file))} is in none of their folders")
    return Team(teams[0] if teams else str(here))
