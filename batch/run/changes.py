"""The run report's `Portfolio changes` sheet: the verdicts of earlier records that a run changed.

A record arriving now can change the verdict of a record returned earlier: an October transfer
processed in December pushes a November transfer over its certificate. The earlier workbook is not
rewritten. After a run has recorded its workbooks, for each program whose rules read the portfolio
and can be judged again (`Portfolio.rows`, `Portfolio.judged`), the groups the run touched (its
records' groups now, and those of their earlier versions) are judged again over the latest version
of every record in them, this run's included, by the program's own calculator. Each earlier record
whose portfolio findings (`judged`) differ from those it was returned with is listed: its findings
and Status then, and what they would be now.

Only the groups the run touched are read, by their keys, and the other groups of their records (a
record is judged over every group it is in); a group's records are judged in the order the rules
count them (the order records first entered the portfolio, then this run's by workbook and row), as
a run does. Grow NJ's prior-incentive findings (C.34:1B-247 e.) are judged again for the earlier
applications of the businesses whose prior incentives the run touched (`_priors_again`).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd

from batch.programs._kit.calculation import RunContext
from batch.programs._kit.findings import render
from batch.programs._kit.program import each_key
from batch.programs._kit.rules import load

COLUMNS = ["Sheet", "Record ID", "Team", "Workbook", "Run Date", "Status Then", "Findings Then", "Status Now", "Findings Now",
           "Appeared", "Cleared"]  # fmt: skip
NOT_COUNTED = ("Invalid", "Ineligible")


def _touched(ledger: Path, run_id: str, team: tuple[str, ...], sheet: str, portfolio, mine: pd.DataFrame) -> dict[str, list[str]]:
    """The groups of `sheet` the run's records `mine` (with their `key:<grouping>` columns) are in
    now, and were in by an earlier version: {grouping: [key, ...]}."""
    from batch.run.ledger import read_versions
    from batch.run.samerun import earlier_keys

    keys: dict[str, set] = {g: set() for g in portfolio.groupings}
    for g in portfolio.groupings:
        if f"key:{g}" in mine:
            keys[g].update(each_key(mine[f"key:{g}"]).tolist())
    before = earlier_keys(read_versions(ledger, team, mine[["sheet", "record_id"]].drop_duplicates(), exclude_run=run_id))
    for g, k in zip(before["grouping"], before["key"], strict=True):
        if g in keys:  # the program's own groups (a prior incentive's business is not one)
            keys[g].add(k)
    return {g: sorted(k) for g, k in keys.items() if k}


def _groups(ledger: Path, program, keys: dict, run_id: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The latest version of every record of `program`'s sheet whose latest fields are in one of the
    groups `keys`, counted (neither Invalid nor Ineligible, nor withdrawn), this run's included; and
    their fields."""
    from batch.run.ledger import read_portfolio

    portfolio = program.portfolio
    found = read_portfolio(ledger, program.name, keys, including=run_id)
    found = found[~found["status"].isin(NOT_COUNTED) & found["fields"].notna()].reset_index(drop=True)
    fields = portfolio.read(found["fields"])
    inside = np.zeros(len(found), dtype=bool)
    for g in portfolio.groupings:  # the record's latest version is in one of the groups
        at = each_key(fields[g])
        inside[at.index[at.isin(keys.get(g, [])).to_numpy()]] = True
    return found[inside].reset_index(drop=True), fields[inside].reset_index(drop=True)


def _order(ledger: Path, sheet: str, found: pd.DataFrame, run_id: str) -> pd.Series:
    """Each record's rank among `found` on one date: those that entered the portfolio in ended runs
    first, where each first entered it; then this run's, by workbook and row."""
    from batch.run.ledger import read_entries

    entered = read_entries(ledger, sheet, found[["team", "record_id"]].drop_duplicates())
    at = found[["team", "record_id", "workbook", "seq"]].reset_index(drop=True).assign(pos=np.arange(len(found)))
    at = at.merge(entered.rename(columns={"workbook": "e_workbook", "seq": "e_seq"}), on=["team", "record_id"], how="left")
    at["new"] = at["ended"].isna()
    order = at.sort_values(["new", "ended", "run_id", "e_workbook", "e_seq", "workbook", "seq", "pos"], kind="stable", na_position="last")
    rank = np.empty(len(at), dtype=np.int64)
    rank[order["pos"].to_numpy()] = np.arange(len(at))
    return pd.Series(rank, index=found.index)


def _judged_again(program, ledger: Path, run_id: str, team: tuple[str, ...], mine: pd.DataFrame) -> pd.DataFrame:
    """The earlier records of `program`'s groups the run touched whose portfolio findings differ now."""
    from batch.run.ledger import portfolio_holds

    portfolio = program.portfolio
    keys = _touched(ledger, run_id, team, program.name, portfolio, mine)
    if not keys or not portfolio_holds(ledger, program.name, keys):  # no earlier record in the groups: nothing to judge again
        return pd.DataFrame(columns=COLUMNS)
    found, fields = _groups(ledger, program, keys, run_id)
    if not (found["run_id"] != run_id).any():
        return pd.DataFrame(columns=COLUMNS)
    # a record of a touched group is judged over every group it is in: its other groups are read too
    # (their other records are judged, not listed: their groups were not touched)
    listed = pd.MultiIndex.from_frame(found[["team", "record_id"]])
    wider = {g: sorted(set(keys.get(g, [])) | set(each_key(fields[g]).tolist())) for g in portfolio.groupings}
    if wider != {g: keys.get(g, []) for g in portfolio.groupings}:
        found, fields = _groups(ledger, program, wider, run_id)
    judged_here = pd.MultiIndex.from_frame(found[["team", "record_id"]]).isin(listed)
    rules = load(program.rules)
    rows = portfolio.rows(fields.assign(record_id=found["record_id"].to_numpy()))
    context = RunContext(dt.date.today(), portfolio_order=_order(ledger, program.name, found, run_id))
    calc = program.calculate(rows, rules, context)
    raw = [f for f in calc.findings if len(f)]
    now = render(pd.concat(raw, ignore_index=True), program.name, rules.findings) if raw else pd.DataFrame(columns=["row", "Code"])
    judged = list(portfolio.judged)
    now = now[now["Code"].isin(judged)][["row", "Code"]].drop_duplicates()
    earlier = (found["run_id"] != run_id).to_numpy() & judged_here
    # the findings then, a code a row (as kept: "CODE (waived)"), of the earlier records
    then = found["codes"].fillna("").astype(str).str.split("; ").explode().rename("full").reset_index().rename(columns={"index": "row"})
    then = then[then["full"].notna() & then["full"].ne("") & earlier[then["row"].to_numpy(dtype=np.int64)]]
    then["Code"] = then["full"].str.removesuffix(" (waived)")
    now = now.assign(row=now["row"].astype(np.int64))
    now = now[earlier[now["row"].to_numpy()]]
    both = then[then["Code"].isin(judged)][["row", "Code"]].merge(now, on=["row", "Code"], how="outer", indicator=True)
    moved = both[both["_merge"] != "both"]
    if moved.empty:
        return pd.DataFrame(columns=COLUMNS)
    changed = np.unique(moved["row"].to_numpy())
    severity = pd.Series({code: entry["severity"] for code, entry in rules.findings.items()})
    kept = then[~then["Code"].isin(judged) & then["row"].isin(changed)][["row", "full", "Code"]]
    # a finding the reviewer waived then is still waived now
    waived = then[then["full"].str.endswith(" (waived)")][["row", "Code"]].assign(was=True)
    after = now[now["row"].isin(changed)].merge(waived, on=["row", "Code"], how="left")
    after = after.assign(full=np.where(after["was"].eq(True), after["Code"] + " (waived)", after["Code"]))[["row", "full", "Code"]]
    listed = pd.concat([kept, after], ignore_index=True)
    serious = listed["Code"].map(severity).isin(["error", "warning"]) & ~listed["full"].str.endswith(" (waived)")

    def joined(frame: pd.DataFrame, column: str) -> pd.Series:  # each changed record's codes, in order
        return frame.groupby("row", sort=False)[column].agg("; ".join).reindex(changed).fillna("")

    return _listed(
        program,
        found.loc[changed],
        np.where(serious.groupby(listed["row"]).any().reindex(changed, fill_value=False).to_numpy(), "Flagged", "OK"),
        joined(listed, "full").to_numpy(dtype=object),
        joined(moved[moved["_merge"] == "right_only"], "Code").to_numpy(dtype=object),
        joined(moved[moved["_merge"] == "left_only"], "Code").to_numpy(dtype=object),
    )


def _listed(program, at: pd.DataFrame, status_now, findings_now, appeared, cleared) -> pd.DataFrame:
    """The sheet's rows of the records `at` (as the ledger gives them), with what they would be now."""
    return pd.DataFrame(
        {
            "Sheet": program.name,
            "Record ID": at["record_id"].to_numpy(dtype=object),
            "Team": at["team"].to_numpy(dtype=object),
            "Workbook": at["workbook"].to_numpy(dtype=object),
            "Run Date": at["run_date"].to_numpy(dtype=object),
            "Status Then": at["status"].to_numpy(dtype=object),
            "Findings Then": at["codes"].fillna("").to_numpy(dtype=object),
            "Status Now": status_now,
            "Findings Now": findings_now,
            "Appeared": appeared,
            "Cleared": cleared,
        },
        columns=COLUMNS,
    )


PRIOR_CODES = ("PRIOR_INCENTIVE_RECEIVED", "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN", "PRIOR_INCENTIVE_BARS_AGREEMENT")


def _priors_again(ledger: Path, run_id: str, team: tuple[str, ...], records: pd.DataFrame) -> pd.DataFrame:
    """The earlier records of a program whose rows read prior incentives (Grow NJ, C.34:1B-247 e.), of
    the businesses whose prior incentives the run touched (its BEIP, BRRAP and Grow NJ records' names
    now, and their earlier versions'), whose prior-incentive finding differs now: counted as the rule
    counts prior records (the latest version of each, this run's included; neither Invalid nor
    Ineligible nor withdrawn; received before the Application Date), the record's e.(1) and e.(2)
    answers as its ledger version keeps them (`PriorIncentive.conditions`; a record kept before them
    is judged again only when it had a prior-incentive finding, whose answers it implies)."""
    from batch.programs import PROGRAMS, prior_incentive_sheets
    from batch.programs._kit.program import PRIOR_INCENTIVES
    from batch.programs._kit.steps import business_key
    from batch.programs.grow_nj.steps import _prior_matches
    from batch.run.ledger import read_earlier_names, read_prior_records, read_versions

    readers = [m for m in PROGRAMS if PRIOR_INCENTIVES in m.needs and m.prior_incentive and m.prior_incentive.conditions]
    priors = tuple(prior_incentive_sheets())
    mine = records[records["sheet"].isin(priors)]
    if not readers or mine.empty:
        return pd.DataFrame(columns=COLUMNS)
    # the businesses an earlier record of a reader names: none touched (a first run, new businesses),
    # nothing to judge again, and the portfolio's prior records are not read
    earlier = set(business_key(read_earlier_names(ledger, tuple(m.name for m in readers), run_id)).dropna().tolist())
    if not earlier:
        return pd.DataFrame(columns=COLUMNS)
    before = read_versions(ledger, team, mine[["sheet", "record_id"]].drop_duplicates(), exclude_run=run_id)
    names = pd.concat([mine["business_name"], before["business_name"]], ignore_index=True).dropna()
    touched = set(business_key(names).dropna().tolist()) & earlier
    if not touched:
        return pd.DataFrame(columns=COLUMNS)
    every = read_prior_records(ledger, priors, including=run_id)
    every = every.assign(key=business_key(every["business_name"]).astype(object))
    parts = []
    for program in readers:  # Grow NJ
        mine_now = every[every["sheet"].eq(program.name) & every["key"].isin(touched) & every["run_id"].ne(run_id)].reset_index(drop=True)
        if mine_now.empty:
            continue
        parts.append(_prior_verdicts(program, mine_now, every, _prior_matches))
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)


def _prior_verdicts(program, found: pd.DataFrame, every: pd.DataFrame, matches) -> pd.DataFrame:
    """Of `found` (earlier records of `program`, with `key`), those whose prior-incentive finding now
    (over `every` prior record, `matches`: the rule's count) differs from the one they were returned with."""
    satisfied, separate = program.prior_incentive.conditions
    counted = every[~every["status"].isin(NOT_COUNTED)]
    prior = counted.assign(received="")
    count, _ = matches(found["key"], pd.to_datetime(found["date"], errors="coerce"), prior, listed=False)
    kept = pd.DataFrame([json.loads(t) if isinstance(t, str) else {} for t in found["fields"]], index=found.index)
    yes = (kept.get(satisfied) == True) | (kept.get(separate) == True) if len(kept.columns) else pd.Series(False, index=found.index)  # noqa: E712
    no = (kept.get(satisfied) == False) & (kept.get(separate) == False) if len(kept.columns) else pd.Series(False, index=found.index)  # noqa: E712
    then = found["codes"].fillna("").astype(str)
    had = {code: then.str.contains(rf"\b{code}\b").to_numpy() for code in PRIOR_CODES}
    known = found["fields"].notna().to_numpy()
    # a record kept before its answers were: they are implied by the finding it had (none: not judged)
    yes = np.where(known, yes.fillna(False).to_numpy(dtype=bool), had["PRIOR_INCENTIVE_RECEIVED"])
    no = np.where(known, no.fillna(False).to_numpy(dtype=bool), had["PRIOR_INCENTIVE_BARS_AGREEMENT"])
    judged = known | np.any(np.column_stack(list(had.values())), axis=1)
    has = count > 0
    now = np.select([has & yes, has & no, has], list(PRIOR_CODES[:1]) + [PRIOR_CODES[2], PRIOR_CODES[1]], "")
    was = np.select([had[c] for c in PRIOR_CODES], list(PRIOR_CODES), "")
    differ = judged & (now != was)
    if not differ.any():
        return pd.DataFrame(columns=COLUMNS)
    rules = load(program.rules)
    at = found[differ]
    rows = []
    for then_text, now_code, was_code in zip(at["codes"].fillna(""), now[differ], was[differ], strict=True):
        # the few records whose verdict moved: their findings, the one code replaced
        codes = [c for c in str(then_text).split("; ") if c and c.removesuffix(" (waived)") != was_code]
        waived = f"{was_code} (waived)" in str(then_text).split("; ") and now_code == was_code
        codes += [f"{now_code} (waived)" if waived else now_code] if now_code else []
        bare = [c.removesuffix(" (waived)") for c in codes]
        barred = any(rules.findings.get(c, {}).get("ineligible") for c in bare)
        serious = any(rules.findings.get(c, {}).get("severity") in ("error", "warning") for c, full in zip(bare, codes, strict=True)
                      if not full.endswith(" (waived)"))  # fmt: skip
        rows.append(("; ".join(codes), "Ineligible" if barred else "Flagged" if serious else "OK", now_code, was_code))
    return _listed(program, at, [r[1] for r in rows], [r[0] for r in rows], [r[2] for r in rows], [r[3] for r in rows])


def portfolio_changes(ledger: Path, run_id: str, team: tuple[str, ...], records: pd.DataFrame) -> pd.DataFrame:
    """Every earlier record whose portfolio findings the run `run_id` (its records, `records`, with
    their group keys, already in the `ledger`) changed; COLUMNS."""
    from batch.programs import PROGRAMS

    parts = []
    for program in PROGRAMS:
        portfolio = program.portfolio
        if portfolio is None or portfolio.rows is None or not len(records):
            continue
        mine = records[records["sheet"].eq(program.name)]
        if len(mine):
            parts.append(_judged_again(program, ledger, run_id, team, mine))
    if len(records):
        parts.append(_priors_again(ledger, run_id, team, records))
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
