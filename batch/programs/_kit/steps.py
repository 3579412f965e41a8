"""Vectorized steps more than one calculator uses: ordered tiers, running totals over a limit,
installments to the cent."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

import numpy as np
import pandas as pd

from batch.programs._kit.exact import Q
from batch.programs._kit.rules import Tier
from batch.programs._kit.text import each


def tier_applies(tier: Tier, f: pd.DataFrame, area_column: str = "Area") -> np.ndarray:
    """A tier's condition: the area column in `area` or any `any_flag` column Y (when either is
    given), every `all_flags` column Y, the area not in `not_area`."""
    ok = np.ones(len(f), dtype=bool)
    if tier.area or tier.any_flag:
        hit = f[area_column].isin(tier.area).to_numpy().copy()
        for flag in tier.any_flag:
            hit |= f[flag].to_numpy(dtype=bool)
        ok &= hit
    for flag in tier.all_flags:
        ok &= f[flag].to_numpy(dtype=bool)
    if tier.not_area:
        ok &= ~f[area_column].isin(tier.not_area).to_numpy()
    return ok


def first_tier(tiers: tuple[Tier, ...], f: pd.DataFrame, extra: list[np.ndarray] | None = None, area_column: str = "Area") -> np.ndarray:
    """Index of the first tier that applies to each row (-1 when none). `extra` adds a mask per tier."""
    masks = [tier_applies(t, f, area_column) & (extra[i] if extra else True) for i, t in enumerate(tiers)]
    return np.select(masks, np.arange(len(tiers)), -1) if tiers else np.full(len(f), -1)


def pick(tiers: tuple[Tier, ...], which: np.ndarray, attr: str, default=None) -> np.ndarray:
    """Per row, an attribute of the chosen tier (`default` where none was chosen)."""
    values = [getattr(t, attr) if hasattr(t, attr) else t.extra.get(attr, default) for t in tiers] + [default]
    return np.array(values, dtype=object)[np.where(which < 0, len(tiers), which)]


def date_order(dates: pd.Series) -> pd.Index:
    """Row labels in date order, row order breaking ties (the index is the row order)."""
    return dates.sort_values(kind="stable").index


def name_key(s: pd.Series) -> pd.Series:
    """Names and IDs are compared trimmed and case-insensitively."""
    return s.astype(str).str.strip().str.casefold()


# A trailing legal form, after punctuation is gone and case folded: "acme corp." -> "acme".
_INVISIBLE = re.compile("[\u200b-\u200d\u2060\ufeff\u00ad]")  # zero-width characters and soft hyphens
_LEGAL_FORM = re.compile(r"\s+(?:inc|incorporated|llc|l\s?l\s?c|corp|corporation|co|company|ltd|l\s?p|l\s?l\s?p)$")
_PUNCTUATION, _SPACE_RUN = re.compile(r"[^\w\s]+|_+"), re.compile(r"\s+")  # read as a space; a run of spaces as one


def business_key(s: pd.Series) -> pd.Series:
    """The one business-name rule: case, punctuation, spaces and a trailing legal form (Inc,
    Incorporated, LLC, L.L.C., Corp, Corporation, Co, Company, Ltd, LP, LLP) ignored, so `Acme Corp.`
    and `ACME Corporation` are one business, and so are `O'Brien` and `OBrien`, `Acme-Jersey` and
    `Acme Jersey`; Unicode forms are unified (NFKC) and invisible characters dropped. A blank name
    gives NA and matches nothing.

    Each distinct name is keyed once: a sheet names few parties many times (a transferor's every
    transfer), and the rule's six text passes cost far more than finding the distinct names."""
    text = s.astype("string")
    codes, names = pd.factorize(text)  # a missing name: code -1
    if 2 * len(names) > len(text):  # mostly distinct: keyed as they are
        return _business_key(text)
    keys = _business_key(pd.Series(names)).array.take(codes, allow_fill=True)  # -1: missing, as a missing name's key is
    return pd.Series(keys, index=s.index, name=s.name)


def _business_key(text: pd.Series) -> pd.Series:
    """`business_key` of `text` (dtype "string"), a name at a time: the rule's passes made on each name
    in one call (`_name_key`), not as six passes over the column, each making a column of its own."""
    values = text.to_numpy(dtype=object, na_value=None)
    keys = np.full(len(values), None, dtype=object)
    named = text.notna().to_numpy()
    if named.any():
        keys[named] = _NAME_KEY(values[named])
        keys[keys == ""] = None  # a name of nothing but punctuation or a legal form: no name
    return pd.Series(keys, index=text.index, name=text.name, dtype="string")


def _name_key(name: str) -> str:
    """The one business-name rule on one name (`business_key`)."""
    # NFKC first: a name typed with a combining accent, or in full-width letters, is the same name
    name = _INVISIBLE.sub("", unicodedata.normalize("NFKC", name)).casefold()
    name = _SPACE_RUN.sub(" ", _PUNCTUATION.sub(" ", name)).strip()
    # "l l c" (from "L.L.C.") is matched too; the form is cut only when a name stands before it
    name = _LEGAL_FORM.sub("", name)
    # then punctuation and spaces are ignored: O'Brien is OBrien, Acme-Jersey is Acme Jersey
    return name.replace(" ", "")


_NAME_KEY = np.frompyfunc(_name_key, 1, 1)


def running_over(order: pd.Index, group: pd.Series, amount: pd.Series, limit) -> tuple[pd.Series, pd.Series]:
    """Running total of `amount` per `group` in `order`, and whether it is over `limit` on the row
    that crosses it and on every later row of the group. `limit` is a number or a Series (NA:
    no limit on that row; a later row keeps the last limit given before it)."""
    by = group[order]
    total = amount[order].groupby(by.to_numpy()).cumsum()
    if isinstance(limit, pd.Series):
        limit = limit[order].groupby(by.to_numpy()).ffill()
    over = (total > limit).fillna(False).astype(int)
    over = over.groupby(by.to_numpy()).cummax().astype(bool)
    return total.reindex(group.index), over.reindex(group.index)


def installments(total_cents: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Split each total into installments to the cent.

    `num / den` (rows x periods of integers) are each installment's share of the total, 0 past a
    row's last installment, adding up to 1. Each installment but the last is its share rounded
    down to the cent; the last takes the remainder, so the installments add up to the total
    exactly. Returns rows x periods of integer cents.
    """
    rows, periods = num.shape
    out = np.zeros((rows, periods), dtype=np.int64)
    count = (num != 0).sum(axis=1)
    paid = np.zeros(rows, dtype=np.int64)
    total = Q(total_cents)
    for i in range(periods):  # one step per period, each over every row
        part = np.where(count == i + 1, total_cents - paid, (total * Q(num[:, i], np.maximum(den[:, i], 1))).floor())
        part = np.where(i < count, part, 0)
        out[:, i] = part
        paid += part
    return out


LISTED_RECORDS = 10  # records of other workbooks a finding names, then "and N more"


def listing(labels: pd.Series, by, sep: str, more: str, limit: int = LISTED_RECORDS) -> pd.Series:
    """Per group of `by` (one group per row of `labels`, in their order): its first `limit` labels
    joined by `sep`, then `more` (a template of the count left) where there are more. Indexed by group."""
    by = np.asarray(by, dtype=object)
    rank = labels.groupby(by, sort=False).cumcount().to_numpy()
    text = labels[rank < limit].groupby(by[rank < limit], sort=False).agg(sep.join)
    left = labels.groupby(by, sort=False).size() - limit
    left = left[left > 0]
    text[left.index] = text[left.index] + each(left.to_numpy(), more)
    return text


def named_before(group: pd.Series, listed: np.ndarray, label: np.ndarray, limit: int = LISTED_RECORDS) -> tuple[np.ndarray, np.ndarray]:
    """Rows in their order, each in a `group`: for each row, how many `listed` rows of its group
    come before it, and the text naming them (the first `limit` labels joined by "; ", then
    "; and N more"; "" where none). One pass per rank up to `limit`, never group by group."""
    n = len(group)
    codes = pd.factorize(group.to_numpy())[0]
    listed = np.asarray(listed, dtype=bool)
    before = pd.Series(listed.astype(np.int64)).groupby(codes).cumsum().to_numpy() - listed
    text = np.full(n, "", dtype=object)
    if not listed.any():
        return before, text
    at = np.flatnonzero(listed)
    rank = before[at] + 1
    first = at[rank <= limit]
    order = np.lexsort((rank[rank <= limit], codes[first]))  # by group, then rank: each label follows its group's previous one
    first, ranks = first[order], (rank[rank <= limit])[order]
    prefix = np.asarray(label, dtype=object)[first].copy()
    for r in range(2, limit + 1):
        i = np.flatnonzero(ranks == r)
        prefix[i] = prefix[i - 1] + "; " + prefix[i]
    table = pd.DataFrame({"group": codes[first], "shown": ranks, "text": prefix})
    some = np.flatnonzero(before > 0)
    rows = pd.DataFrame({"group": codes[some], "shown": np.minimum(before[some], limit)})
    found = rows.merge(table, on=["group", "shown"], how="left")["text"].to_numpy(dtype=object)
    more = before[some] > limit
    found[more] = found[more] + each(before[some][more] - limit, "; and {:,} more")
    text[some] = found
    return before, text


def record_labels(records: pd.DataFrame) -> np.ndarray:
    """How a finding names each record of another workbook (`RunContext.portfolio`): its sheet, record
    ID, workbook and run date, "Transfers T-1 (nov.xlsx, run 2026-11-30)"."""
    text = records["sheet"] + " " + records["record_id"].astype(str) + " (" + records["workbook"].astype(str) + ", run "
    return (text + records["run_date"].astype(str) + ")").to_numpy(dtype=object)


def portfolio_rows(context, own: dict, dates: pd.Series, rank: np.ndarray, far: Callable[[pd.DataFrame], dict]) -> pd.DataFrame:
    """The sheet's rows and the portfolio's records of other workbooks (`context.portfolio`, a
    `RunContext`) together, in the order a rule counts them: by date, and on one date in the order
    the run gives (`tie` and `context.portfolio_order`: records that entered the portfolio in earlier
    runs first, as they first entered it, then this run's by workbook and row); without it, the
    records of other workbooks first, as they come, then the sheet's rows by `rank`.

    `own`: the columns the rule reads of the sheet's rows (arrays in row order), `dates` their date
    (indexed like the sheet), `far(records)`: the same columns of the records, and their `date`.
    Adds `far` (a record of another workbook), `tie`, `row` (the sheet row's position; -1 for a
    record) and `label` (how a finding names a record; None for a row)."""
    out = context.portfolio
    mine = pd.DataFrame({**own, "date": dates.to_numpy(), "far": False, "tie": np.asarray(rank), "row": np.arange(len(dates))})
    mine["label"] = None
    if len(context.portfolio_order):  # the order the run gives the sheet's rows among the portfolio's
        mine["tie"] = context.portfolio_order.reindex(dates.index).to_numpy()
    if not len(out):
        return mine.sort_values(["date", "tie"], kind="stable").reset_index(drop=True)
    given = "tie" in out and len(context.portfolio_order)
    if not given:
        mine["tie"] += len(out)
    theirs = pd.DataFrame(far(out))
    theirs["date"] = pd.to_datetime(theirs["date"]).to_numpy(dtype=mine["date"].dtype)
    theirs = theirs.assign(far=True, tie=out["tie"].to_numpy() if given else np.arange(len(out)), row=-1, label=record_labels(out))
    both = pd.concat([theirs, mine], ignore_index=True)
    return both.sort_values(["date", "tie"], kind="stable").reset_index(drop=True)


def running_across(a: pd.DataFrame, by: np.ndarray, limit) -> tuple[np.ndarray, ...]:
    """A running total over the portfolio (`a`, as `portfolio_rows` orders it: `credit`, `far`,
    `label`), per group `by`, held to `limit` (one per record; NA: no limit). For each record: the
    group's total to it, whether the total has crossed the limit by then (from the record that
    crosses it on), how much of the total came from other workbooks, and how many records of other
    workbooks it counted and the text naming them (`named_before`)."""
    total = a["credit"].groupby(by, sort=False).cumsum().to_numpy()
    above = (pd.Series(total) > pd.Series(limit).reset_index(drop=True)).fillna(False).to_numpy(dtype=bool)
    crossed = pd.Series(above.astype(int)).groupby(by, sort=False).cummax().to_numpy().astype(bool)
    elsewhere = (a["credit"] * a["far"]).groupby(by, sort=False).cumsum().to_numpy()
    count, named = named_before(pd.Series(by), a["far"].to_numpy(), a["label"].to_numpy(dtype=object))
    return total, crossed, elsewhere, count, named


def picked(fields: dict, mask: np.ndarray) -> dict:
    """The fields of the findings `mask` picks: arrays cut to it, Series (indexed like the sheet) and
    scalars as they are."""
    return {k: v[mask] if isinstance(v, np.ndarray) else v for k, v in fields.items()}
