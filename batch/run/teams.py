"""Whose records a run's are: a record is known by its team, sheet and record ID, so two teams
sharing a ledger may number their rows alike.

A team is named (`team = "..."` in njcredits.toml) or, by default, its inbox: the inbox's absolute
path. The ledger's runs each recorded their team's name; a default team is known by the folder its
name resolves to, so the same inbox reached by a link or a `..` path, or recorded before paths were
resolved, is one team. One rule (`team_for`) decides a run's team, for `run`, `watch` and
`validate --ledger` alike:

- `team` named: that team. The default team of the inbox's earlier runs becomes the named team's
  (`Team.adopts`: a run of the inbox adopts it in the transaction that begins it), so naming a team
  later keeps the inbox's history, decisions and records its own; one file (`run FILE`, `validate`)
  reads as the team's own the default team of the inboxes the team's runs recorded, never of the
  file's folder (an outbox other teams may share). Another named team is never adopted: a renamed
  team starts anew, and the run says so (`Team.note`).
- A run of the inbox, no team named: the team of this inbox's latest run, else the inbox. A ledger
  holding another team's runs of an inbox is shared: `TeamNeeded`, since the same shared folder
  mounted at two paths would be two teams whose records never supersede each other.
- One file (`run FILE`, `validate FILE`), no team named: the team of the runs of an inbox whose
  inbox or outbox holds the file's folder (a returned workbook run from the outbox is its inbox's
  team's; runs from before migration 5 and runs of one file are asked only when no such run holds
  it); a file from a folder no run used is the ledger's one team's, or its folder's when the
  ledger has no runs. A folder of several teams' runs, or a file from elsewhere when the
  ledger has several teams: `TeamNeeded`. A run of one file never makes a ledger shared.

A run recorded before migration 5 may have been of one file: which it was is not known
(`one_file` None), so it never makes a ledger shared either.
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
    adopts: tuple[str, ...] = ()  # default team names of earlier runs that are this team's
    note: str = ""  # what the run says of its team (a renamed team), "" when nothing

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the team's records are found by until the adoption is recorded."""
        return (self.name, *self.adopts)


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


def _default(place: dict) -> bool:
    """A run of a default team: its team is an absolute path, an inbox's (a named team is never taken
    for a path, whatever folder its name would be relative to)."""
    team = place["team"]
    return bool(team) and Path(team).is_absolute()


def _identity(place: dict) -> tuple[str, str]:
    """Who a run's team is: a named team by its name, a default team by the folder its name (a path) resolves to."""
    if _default(place):
        return ("inbox", str(_resolved(place["team"])))
    return ("named", place["team"] or "")


def _distinct(values) -> list:
    return list(dict.fromkeys(values))


def _shown(places: list[dict]) -> str:
    """The teams of `places` as a message names them: a named team with its inbox, a default one by its inbox."""
    words = []
    for identity in _distinct(_identity(p) for p in places):
        inbox = next(p["inbox"] for p in places if _identity(p) == identity)
        words.append(
            f"the inbox {printable(str(inbox))}"
            if identity[0] == "inbox"
            else f"team {printable(identity[1])!r} (inbox {printable(str(inbox))})"
        )
    more = f" and {len(words) - 2} more" if len(words) > 2 else ""
    return " and ".join(words[:2]) + more


def _needed(settings: Settings, why: str) -> TeamNeeded:
    return TeamNeeded(
        f"The ledger {printable(str(settings.ledger))} {why}: a shared ledger needs each team named. Set "
        f'team = "..." in {CONFIG_NAME} where njcredits runs (records are known by team, sheet and record ID, so two '
        "teams may number their rows alike)."
    )


def _as(identity: tuple[str, str], places: list[dict], note: str = "") -> Team:
    """The team of `identity`, adopting the other names its runs of `places` were recorded under."""
    name = identity[1]
    adopts = _distinct(p["team"] for p in places if _identity(p) == identity and p["team"] != name)
    return Team(name, tuple(adopts), note)


def _named(name: str, mine: list[dict]) -> Team:
    """Team `name` for a run of its inbox, whose runs are `mine` (latest first): it adopts the
    inbox's default team; a note when the inbox's latest run was another named team's (a rename)."""
    adopts = tuple(_distinct(p["team"] for p in mine if _default(p)))
    note = ""
    if mine and not _default(mine[0]) and mine[0]["team"] != name:
        note = (
            f"This run is team {printable(name)!r}'s; this inbox's earlier runs were team {printable(mine[0]['team'])!r}'s, whose "
            "records and decisions stay that team's (a renamed team starts anew: set the earlier name back to keep them)."
        )
    return Team(name, adopts, note)


def _named_file(name: str, places: list[dict]) -> Team:
    """Team `name` for one file: it reads, as its own, the default team of the inboxes its own runs
    recorded (their runs before it was named; adopted at the inbox's next run). Never another
    folder's: a file's folder may be an outbox other teams share."""
    inboxes = {_resolved(p["inbox"]) for p in places if p["team"] == name and p["one_file"] != 1}
    adopts = _distinct(p["team"] for p in places if _default(p) and _resolved(p["team"]) in inboxes)
    note = ""
    if not inboxes:
        note = (
            f"Team {printable(name)!r} has no run of an inbox in this ledger yet: its inbox's earlier runs, recorded before it was "
            "named, are read as its own from the inbox's next run on."
        )
    return Team(name, tuple(adopts), note)


def _holding(places: list[dict], here: Path) -> list[dict]:
    """The runs whose folders hold `here`, the surest first: runs of an inbox (its inbox or outbox);
    else runs from before migration 5 (not known whether of one file); else the outboxes of runs of
    one file. Only the first kind that holds it counts."""
    for kind in (0, None):
        found = [p for p in places if p["one_file"] == kind and (_holds(p["inbox"], here) or _holds(p["outbox"], here))]
        if found:
            return found
    return [p for p in places if p["one_file"] == 1 and _holds(p["outbox"], here)]


def team_for(settings: Settings, places: list[dict], file: Path | None = None) -> Team:
    """The run's team (module docstring). `places`: the ledger's runs, latest first, each with its
    `inbox`, `outbox`, `team` and `one_file` (1: a run of one file, 0: of an inbox, None: not known)
    (`Ledger.places`); `file`: the one file of `run FILE` or `validate FILE`, None for a run of the inbox."""
    here = (file.parent if file is not None else settings.inbox).resolve()
    inbox_runs = [p for p in places if p["one_file"] == 0]  # those that make a ledger shared
    if file is None:
        mine = [p for p in places if p["one_file"] != 1 and _resolved(p["inbox"]) == here]
        if settings.team is not None:
            return _named(settings.team, mine)
        identity = _identity(mine[0]) if mine else ("inbox", str(here))
        others = [p for p in inbox_runs if _identity(p) != identity]
        if others:
            raise _needed(settings, f"is shared with {_shown(others)}")
        return _as(identity, mine)
    if settings.team is not None:
        return _named_file(settings.team, places)
    holders = _holding(places, here)
    known = _distinct(_identity(p) for p in holders)
    if len(known) > 1:
        raise _needed(settings, f"holds runs of {_shown(holders)} whose folders hold {printable(str(file))}")
    if known:
        return _as(known[0], holders)
    teams = _distinct(_identity(p) for p in inbox_runs) or _distinct(_identity(p) for p in places)
    if len(teams) > 1:
        raise _needed(settings, f"is shared by {_shown(inbox_runs or places)}, and {printable(str(file))} is in none of their folders")
    return _as(teams[0], places) if teams else Team(str(here))
