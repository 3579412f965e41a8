"""Run one calculator on rows given as {header: cell}; return per-row computed values and codes."""

from __future__ import annotations

import pandas as pd
from conftest import typed_frame

from batch.programs import PROGRAMS
from batch.programs._kit.rules import load


def program_of(module):
    """The declared program whose calculator is `module` (batch.programs)."""
    return next(p for p in PROGRAMS if p.calculate is module.calculate)


def run_rows(module, rows: list[dict], money_in_dollars: bool = True) -> list[dict]:
    program = program_of(module)
    frame = typed_frame(program.schema, rows)
    calc = program.calculate(frame, load(program.rules))
    found = pd.concat([f for f in calc.findings if len(f)] or [pd.DataFrame(columns=["row", "code"])])
    codes = found.groupby("row")["code"].agg(list)
    money = {h for h, kind in program.schema.computed.items() if kind == "money"}
    out = []
    for i in frame.index:
        got = {}
        for k, v in calc.computed.loc[i].items():
            if pd.isna(v):
                got[k] = None
            elif k in money and money_in_dollars:
                got[k] = int(v) / 100
            else:
                got[k] = v
        got["codes"] = codes.get(i, [])
        got["ineligible"] = bool(calc.ineligible.loc[i])
        out.append(got)
    return out


def ledger_at(db, version: int) -> None:
    """Make `db` (a sqlite3 connection in autocommit) the ledger an earlier release left: the first
    `version` migrations applied statement by statement, and its user_version set."""
    from batch.run.ledger import MIGRATIONS

    for _number, script in MIGRATIONS[:version]:
        for statement in filter(None, (s.strip() for s in script.split(";"))):
            db.execute(statement)
    db.execute(f"PRAGMA user_version = {version}")
