"""The workbooks of one run see each other (batch.run.samerun): which workbooks a run processes again
and with what (`decide`), and through `run_batch` a certificate shared by two and three workbooks of
one run, in both file orders and on one and two workers, a record in two workbooks, a correction
that moves a record out of a certificate, and a run killed between the calculation and the decision."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from databases import ledger_query
from test_faults import run_cli
from test_portfolio import run, transfer
from test_reviews import _findings, _sheet, transfers_workbook

from batch.programs._kit.program import Portfolio, each_key
from batch.run.config import load
from batch.run.runner import run_batch
from batch.run.samerun import _numbered, _stacked, decide, earlier_keys, held, places

D = dt.date


# -- decide: which workbooks read another, and what they are given --------------------------------


def book(*records):
    """A workbook's held records: (record ID, certificate key or None for a row not computed)."""
    return pd.DataFrame(
        {
            "sheet": "Transfers",
            "record_id": [r for r, _ in records],
            "status": ["Invalid" if k is None else "OK" for _, k in records],
            "fields": [None if k is None else json.dumps({"certificate_key": k}) for _, k in records],
            "key:certificate_key": [k for _, k in records],
            "seq": range(len(records)),
            "workbook": "",
        }
    )


def versions(*records):
    """The ledger's versions of records: (record ID, certificate key)."""
    return pd.DataFrame(
        {"sheet": "Transfers", "record_id": [r for r, _ in records], "fields": [json.dumps({"certificate_key": k}) for _, k in records]}
    )


DECIDE_CASES = [
    # (case, books by place, ledger versions, {reader: [(place, record ID) it is given]})
    ("one workbook reads no other", {0: book(("T-1", "c-1"))}, versions(), {}),
    ("two certificates apart: neither is processed again", {0: book(("T-1", "c-1")), 1: book(("T-2", "c-2"))}, versions(), {}),
    ("one certificate: each is given the other's transfer", {0: book(("T-1", "c-1")), 1: book(("T-2", "c-1"))}, versions(),
     {0: [(1, "T-2")], 1: [(0, "T-1")]}),
    # one ID in two workbooks, in two certificates: RECORD_IN_TWO_WORKBOOKS on both
    ("one record ID in two workbooks", {0: book(("T-1", "c-1")), 1: book(("T-1", "c-2"))}, versions(),
     {0: [(1, "T-1")], 1: [(0, "T-1")]}),
    # T-1 was in c-1 in the ledger and moves to c-2 in workbook 1: workbook 0 (c-1) is given it, so
    # that its ledger version no longer counts in c-1; workbook 1 reads c-2 only, which 0 never held
    ("a record moved out of a certificate", {0: book(("T-5", "c-1")), 1: book(("T-1", "c-2"))}, versions(("T-1", "c-1")),
     {0: [(1, "T-1")]}),
    # a row that was not computed reads nothing and is read by no group
    ("an Invalid row of the same certificate", {0: book(("T-1", "c-1")), 1: book(("T-2", None))}, versions(), {}),
    # 0 and 1 share c-1, 1 and 2 share c-2: each is given only the records of its own groups
    ("three workbooks in a chain", {0: book(("T-1", "c-1")), 1: book(("T-2", "c-1"), ("T-3", "c-2")), 2: book(("T-4", "c-2"))},
     versions(), {0: [(1, "T-2")], 1: [(0, "T-1"), (2, "T-4")], 2: [(1, "T-3")]}),
]  # fmt: skip


@pytest.mark.parametrize("case, books, ledger, expected", DECIDE_CASES, ids=[c[0] for c in DECIDE_CASES])
def test_decide(case, books, ledger, expected):
    given = decide(books, earlier_keys(ledger))
    found = {p: given.records(p) for p in given.readers()}
    assert {p: list(zip(g["place"], g["record_id"], strict=True)) for p, g in found.items()} == expected


def test_decide_does_not_depend_on_the_order_workbooks_finished():
    books = {0: book(("T-1", "c-1"), ("T-2", "c-1")), 1: book(("T-3", "c-1")), 2: book(("T-4", "c-1"))}
    forward, backward = (decide(b, earlier_keys(versions())) for b in (books, dict(reversed(list(books.items())))))
    forward, backward = ({p: g.records(p) for p in g.readers()} for g in (forward, backward))
    assert forward.keys() == backward.keys() and all(forward[p].equals(backward[p]) for p in forward)
    assert list(zip(forward[2]["place"], forward[2]["record_id"], strict=True)) == [(0, "T-1"), (0, "T-2"), (1, "T-3")]


def test_decide_given_the_paths_apart_gives_what_books_holding_them_give():
    books = {0: book(("T-1", "c-1")), 1: book(("T-2", "c-1"), ("T-3", "c-2")), 2: book(("T-4", "c-2"))}
    named = {p: b.assign(workbook=f"w{p}.xlsx") for p, b in books.items()}
    apart, held_in = decide(books, earlier_keys(versions()), {p: f"w{p}.xlsx" for p in books}), decide(named, earlier_keys(versions()))
    assert apart.readers() == held_in.readers() == [0, 1, 2]
    assert all(apart.records(p).equals(held_in.records(p)) for p in apart.readers())
    assert apart.records(1)["workbook"].tolist() == ["w0.xlsx", "w2.xlsx"]


STACKED_CASES = [
    # (case, books by place): stacked as each book with `workbook` and `place` assigned, then concatenated
    ("the same columns", {1: pd.DataFrame({"a": ["x", "y"]}), 0: pd.DataFrame({"a": ["z"]})}),
    # a column only the second book (by place) holds comes after `workbook` and `place`, as concatenating puts it
    ("a column one book lacks", {0: pd.DataFrame({"a": ["x"]}), 1: pd.DataFrame({"a": ["y"], "field:b": [1.5]})}),
    ("an empty book", {0: pd.DataFrame({"a": pd.Series([], dtype=str)}), 1: pd.DataFrame({"a": ["y", "w"]})}),
    # no row at all: the added columns still typed as assigning them types them (text, integers)
    ("every book empty", {0: pd.DataFrame({"a": pd.Series([], dtype=str)}), 1: pd.DataFrame({"a": pd.Series([], dtype=str)})}),
    ("a book that holds its workbook", {0: pd.DataFrame({"workbook": ["old"], "a": ["x"]}), 1: pd.DataFrame({"a": ["y"]})}),
]  # fmt: skip


@pytest.mark.parametrize("case, books", STACKED_CASES, ids=[c[0] for c in STACKED_CASES])
def test_stacked_is_each_book_assigned_then_concatenated(case, books):
    names = {p: f"w{p}.xlsx" for p in books}
    expected = pd.concat([b.assign(workbook=names[p], place=p) for p, b in sorted(books.items())], ignore_index=True)
    found = _stacked(books, names)
    assert list(found.columns) == list(expected.columns) and found.dtypes.equals(expected.dtypes) and found.equals(expected)


NUMBERED_CASES = [
    # (case, columns, rows that share a number): equal values, missing ones alike, share one
    ("one column", [["a", "b", "a"]], [{0, 2}, {1}]),
    ("missing values alike", [["a", None, np.nan, "a"]], [{0, 3}, {1, 2}]),
    # (1, "x") twice; (1, "y") and (2, "x") each once: the pair decides, not either column
    ("two columns", [[1, 1, 2, 1], ["x", "y", "x", "x"]], [{0, 3}, {1}, {2}]),
    ("three columns", [[0, 0, 0, 0], ["s", "s", "s", "t"], ["r", "r", "q", "r"]], [{0, 1}, {2}, {3}]),
]  # fmt: skip


@pytest.mark.parametrize("case, columns, groups", NUMBERED_CASES, ids=[c[0] for c in NUMBERED_CASES])
def test_numbered_gives_equal_rows_one_number(case, columns, groups):
    number = _numbered([pd.Series(c, dtype=object) for c in columns])
    assert sorted(sorted(np.flatnonzero(number == n)) for n in set(number.tolist())) == sorted(sorted(g) for g in groups)


def test_places_follow_the_printed_paths():
    # east/a.xlsx before west/a.xlsx, whatever order they were listed in; one name twice: listed order
    assert places(["west/a.xlsx", "east/a.xlsx", "b.xlsx", "b.xlsx"]) == [3, 2, 0, 1]


# -- through a run ---------------------------------------------------------------------------------


def two_workbooks(inbox: Path) -> list[Path]:
    """Certificate C-1 ($6,000,000), moved in two workbooks of one run: east/a.xlsx $4,000,000 and
    west/a.xlsx $3,000,000 on one date (together 7,000,000 > 6,000,000), and each T-1."""
    return [
        transfers_workbook(inbox / "west" / "a.xlsx", [transfer("T-2", "C-1", None, D(2026, 11, 10), 3_000_000),
                                                       transfer("T-1", "C-3", 500_000, D(2026, 11, 1), 100_000)]),
        transfers_workbook(inbox / "east" / "a.xlsx", [transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 4_000_000)]),
    ]  # fmt: skip


def outputs(outbox: Path) -> dict:
    """Each returned workbook's Findings sheet and its rows' Status and Findings, as read back."""
    found = {}
    for path in sorted(outbox.rglob("*.annotated.xlsx")):
        found[str(path.relative_to(outbox))] = (_findings(path), _sheet(path))
    return found


def in_both_orders(tmp_path: Path, books, read=None) -> list:
    """`books(inbox)` written and run as one run twice: as listed on one worker, then in the reverse
    order on two; what `read(outbox)` (`outputs`) gives of each run's outbox, the two must agree."""
    seen = []
    for n, (order, workers) in enumerate([(1, 1), (-1, 2)]):
        base = tmp_path / str(n)
        settings = load(cwd=base, inbox=base / "inbox", outbox=base / "outbox", workers=workers, keep_inputs=True)
        run_batch(settings, files=books(base / "inbox")[::order], echo=lambda *_: None)
        seen.append((read or outputs)(base / "outbox"))
    assert seen[1] == seen[0]
    return seen


def test_a_shared_certificate_gives_the_same_findings_in_both_file_orders_and_on_one_and_two_workers(tmp_path):
    seen = []
    for n, (order, workers) in enumerate([(1, 1), (-1, 1), (1, 2), (-1, 2)]):
        base = tmp_path / str(n)
        files = two_workbooks(base / "inbox")[::order]
        settings = load(cwd=base, inbox=base / "inbox", outbox=base / "outbox", workers=workers, keep_inputs=True)
        run_batch(settings, files=files, echo=lambda *_: None)
        seen.append(outputs(base / "outbox"))
    assert seen[1:] == seen[:1] * 3
    east, west = seen[0]["east/a.annotated.xlsx"], seen[0]["west/a.annotated.xlsx"]
    # on 2026-11-10 east/a.xlsx comes first: 4,000,000 <= 6,000,000; then west's 4,000,000 + 3,000,000 = 7,000,000 > 6,000,000
    assert east[1]["T-1"]["Findings"] == "RECORD_IN_TWO_WORKBOOKS"
    assert west[1]["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED" and west[1]["T-1"]["Findings"] == "RECORD_IN_TWO_WORKBOOKS"
    over = next(f for f in west[0] if f["Code"] == "CERTIFICATE_OVERTRANSFERRED")["Message"]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert over.startswith(
        "Certificate C-1 has $7,000,000.00 transferred to date with this row, $4,000,000.00 of it in other workbooks "
        f"(Transfers T-1 (east/a.xlsx, run {today})), $1,000,000.00 more than its Certificate Amount of $6,000,000.00"
    )
    twice = next(f for f in east[0] if f["Code"] == "RECORD_IN_TWO_WORKBOOKS")
    assert twice["Severity"] == "error"
    assert twice["Message"].startswith('Transfer ID "T-1" is also a record of sheet Transfers in west/a.xlsx, in this run')


def test_three_workbooks_of_one_certificate_count_in_place_order(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # C-1 ($1,000,000; given in c.xlsx only): a.xlsx 400,000 and b.xlsx 400,000 on 11-10, c.xlsx 300,000 on 11-01.
    # By date: c 300,000; then a 700,000; then b 1,100,000 > 1,000,000. d.xlsx (C-2) reads none of them.
    for name, row in (("a", transfer("T-1", "C-1", None, D(2026, 11, 10), 400_000)),
                      ("b", transfer("T-2", "C-1", None, D(2026, 11, 10), 400_000)),
                      ("c", transfer("T-3", "C-1", 1_000_000, D(2026, 11, 1), 300_000)),
                      ("d", transfer("T-4", "C-2", 1_000_000, D(2026, 11, 1), 300_000))):  # fmt: skip
        transfers_workbook(inbox / f"{name}.xlsx", [row])
    run(inbox, outbox)
    found = {name: _sheet(outbox / f"{name}.annotated.xlsx") for name in "abcd"}
    assert [found[n][f"T-{i}"]["Findings"] for i, n in enumerate("abcd", start=1)] == [None, "CERTIFICATE_OVERTRANSFERRED", None, None]
    import openpyxl

    ws = openpyxl.load_workbook(outbox / "b.annotated.xlsx")["Transfers"]
    header = [c.value for c in ws[1]]
    assert ws.cell(2, header.index("Certificate Transferred To Date ($)") + 1).value == 1_100_000


def test_a_record_moved_to_another_certificate_in_one_workbook_leaves_it_in_the_other(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: T-1 moved all of C-1's $6,000,000
    transfers_workbook(inbox / "nov.xlsx", [transfer("T-1", "C-1", 6_000_000, D(2026, 11, 10), 6_000_000)])
    run(inbox, outbox)
    # December, one run: a.xlsx corrects T-1's certificate to C-2; b.xlsx moves $500,000 of C-1. This run's
    # T-1 supersedes November's, so C-1 holds 500,000 <= 6,000,000 (not 6,500,000)
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-2", 6_000_000, D(2026, 11, 10), 6_000_000)])
    transfers_workbook(inbox / "b.xlsx", [transfer("T-9", "C-1", 6_000_000, D(2026, 12, 5), 500_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "b.annotated.xlsx")["T-9"]["Findings"] is None


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_a_run_killed_between_the_calculation_and_the_decision_records_nothing_of_it(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    two_workbooks(inbox)
    killed = run_cli(inbox, outbox, fault="decided:run")
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT COUNT(*) FROM records")[0] == (0,)
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT COUNT(*) FROM files")[0] == (0,)
    assert not list(outbox.rglob("*.annotated.xlsx"))  # no output placed
    # the next run returns both to the inbox, removes the partial outputs, and processes both
    run(inbox, outbox)
    assert sorted(p.name for p in outbox.rglob("*.annotated.xlsx")) == ["a.annotated.xlsx", "a.annotated.xlsx"]
    assert not [p for p in outbox.rglob("*.partial*")]  # the killed run's temporary outputs removed
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT COUNT(*) FROM records WHERE fields IS NOT NULL")[0] == (3,)
    assert _sheet(outbox / "west" / "a.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"


def test_a_record_in_twelve_workbooks_names_ten_then_how_many_more():
    from types import SimpleNamespace

    import numpy as np

    from batch.pipeline import _in_two_workbooks
    from batch.programs import BY_NAME
    from batch.run.samerun import SameRun

    others = pd.DataFrame(
        {
            "sheet": "Transfers",
            "record_id": "T-1",
            "status": "OK",
            "fields": None,
            "workbook": [f"w{p:02d}.xlsx" for p in range(1, 13)],
            "place": range(1, 13),
            "seq": 0,
        }  # fmt: skip
    )
    result = SimpleNamespace(same_run=SameRun(0, others))
    (found,) = _in_two_workbooks(BY_NAME["Transfers"], np.array(["T-1", "T-2"], dtype=object), result, np.zeros(2, dtype=bool))
    # T-1 in w01 .. w12 (12 other workbooks): w01 .. w10 named, then 12 - 10 = 2 more; T-2 in none
    assert found[["row", "code", "value"]].values.tolist() == [[0, "RECORD_IN_TWO_WORKBOOKS", "T-1"]]
    assert found["workbooks"].tolist() == [", ".join(f"w{p:02d}.xlsx" for p in range(1, 11)) + " and 2 more"]


# -- a group of workbooks that read each other is recorded whole ------------------------------------


def pair(inbox: Path) -> None:
    """C-1 ($1,000,000): a.xlsx moves $600,000 and b.xlsx $600,000 on one date. Run whole: a (first by
    its path) is OK at 600,000 and b is over at 1,200,000."""
    transfers_workbook(inbox / "a.xlsx", [transfer("T-1", "C-1", 1_000_000, D(2026, 11, 10), 600_000)])
    transfers_workbook(inbox / "b.xlsx", [transfer("T-2", "C-1", 1_000_000, D(2026, 11, 10), 600_000)])


def second_pass(monkeypatch, change):
    """`isolated` as the run calls it, with `change(item name, kind, payload, stop)` applied to what the
    second pass (the call given what the files read of each other) yields."""
    import batch.run.runner as runner

    real = runner.isolated

    def isolated(todo, settings, run_id, stop, same_run=None, **told):
        for item, partial, kind, payload in real(todo, settings, run_id, stop, same_run, **told):
            if same_run is not None:
                kind, payload = change(item.name, kind, payload, stop)
            yield item, partial, kind, payload

    monkeypatch.setattr(runner, "isolated", isolated)


def test_a_file_failing_when_processed_again_leaves_the_portfolio_of_the_others(tmp_path, monkeypatch):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    pair(inbox)
    second_pass(monkeypatch, lambda name, kind, payload, stop: ("error", "it broke") if name == "a.xlsx" else (kind, payload))
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=2), echo=lambda *_: None)
    assert {f.name: f.status for f in outcome.files} == {"a.xlsx": "failed", "b.xlsx": "processed"}
    # b is decided again without a, whose record the ledger does not hold: 600,000 <= 1,000,000
    assert _sheet(outbox / "b.annotated.xlsx")["T-2"]["Findings"] is None


# -- a file the run will process again writes no first output ---------------------------------------


def three_workbooks(inbox: Path) -> list[Path]:
    """C-1 ($1,000,000): a.xlsx and b.xlsx move $600,000 each on one date; d.xlsx moves $300,000 of
    C-2, which no other workbook holds."""
    pair(inbox)
    transfers_workbook(inbox / "d.xlsx", [transfer("T-4", "C-2", 1_000_000, D(2026, 11, 1), 300_000)])
    return [inbox / f"{n}.xlsx" for n in "abd"]


def told(monkeypatch, answer=None) -> list:
    """`isolated` as the run calls it, every stage its workers tell noted [(file, stage)], and the run's
    answer to a worker that asks whether its file is processed again replaced by `answer(groups)`
    (None: the run's own)."""
    import batch.run.runner as runner

    real, stages = runner.isolated, []

    def isolated(todo, settings, run_id, stop, same_run=None, on_stage=None, ask=None, **more):
        if ask is not None and answer is not None:
            ask = answer
        noted = lambda item, stage: stages.append((item.name, stage))  # noqa: E731
        yield from real(todo, settings, run_id, stop, same_run, on_stage=noted, ask=ask, **more)

    monkeypatch.setattr(runner, "isolated", isolated)
    return stages


@pytest.mark.parametrize(
    "answer, writes",
    [
        # the run's own answer, on one worker in the listed order: a.xlsx is read when no other file
        # is, so it writes a first output, and again when processed again with b's record; b.xlsx reads
        # C-1, which a.xlsx holds: it writes once, when processed again; d.xlsx reads no other: once
        (None, {"a.xlsx": 2, "b.xlsx": 1, "d.xlsx": 1}),
        (lambda groups: False, {"a.xlsx": 2, "b.xlsx": 2, "d.xlsx": 1}),  # never told: every first output written
        # always told, rightly or not: none writes a first output, each is processed again (d.xlsx with
        # no other's record, as it reads none)
        (lambda groups: True, {"a.xlsx": 1, "b.xlsx": 1, "d.xlsx": 1}),
    ],
    ids=["as the run answers", "never told", "always told"],
)
def test_a_file_the_run_will_process_again_writes_no_first_output_and_returns_the_same(tmp_path, monkeypatch, answer, writes):
    base = tmp_path / "base"
    run_batch(load(cwd=base, inbox=base / "inbox", outbox=base / "outbox", workers=1), files=three_workbooks(base / "inbox"),
              echo=lambda *_: None)  # fmt: skip
    stages = told(monkeypatch, answer)
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1), files=three_workbooks(inbox), echo=lambda *_: None)
    assert {f.name: f.status for f in outcome.files} == dict.fromkeys(writes, "processed")
    assert {name: sum(1 for n, stage in stages if n == name and stage == "writing") for name in writes} == writes
    assert outputs(outbox) == outputs(base / "outbox")
    # a is OK at 600,000; b is over at 1,200,000 > 1,000,000, reading a's record
    assert _sheet(outbox / "b.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"
    keep = "SELECT sheet, record_id, status, codes, fields FROM records ORDER BY record_id"
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", keep) == ledger_query(
        base / "outbox" / ".njcredits" / "ledger.sqlite", keep
    )


def test_a_file_told_it_is_processed_again_that_then_fails_is_failed_and_placed_nowhere(tmp_path, monkeypatch):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    pair(inbox)
    stages = told(monkeypatch)
    second_pass(monkeypatch, lambda name, kind, payload, stop: ("error", "it broke") if name == "b.xlsx" else (kind, payload))
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1), echo=lambda *_: None)
    assert stages.count(("b.xlsx", "writing")) == 1  # told on its first reading: written only when processed again
    assert {f.name: f.status for f in outcome.files} == {"a.xlsx": "processed", "b.xlsx": "failed"}
    assert sorted(p.name for p in outbox.rglob("*.annotated.xlsx")) == ["a.annotated.xlsx"]  # b placed nowhere
    assert _sheet(outbox / "a.annotated.xlsx")["T-1"]["Findings"] is None  # decided again without b


PRIOR_ONLY = {"key:certificate_key": [None], "key:prior_business": ["acme"]}  # a business's key, in no certificate
GROUP_CASES = [
    # (case, held records as `book` makes them, extra key columns, (groups, groups read))
    ("one certificate a record", book(("T-1", "c-1"), ("T-2", "c-2")), {},
     ({("Transfers", "certificate_key", "c-1"), ("Transfers", "certificate_key", "c-2")},) * 2),
    ("a record not computed is in no group", book(("T-1", None)), {}, (set(), set())),
    ("a record in two groups of one grouping", book(("T-1", "c-1")), {"key:certificate_key": [["c-1", "c-9"]]},
     ({("Transfers", "certificate_key", "c-1"), ("Transfers", "certificate_key", "c-9")},) * 2),
    # a prior incentive's business is known across the sheets ("*"); a BEIP sheet does not read them
    ("a prior incentive's business", book(("T-1", "c-1")).assign(sheet="BEIP"), PRIOR_ONLY, ({("*", "prior_business", "acme")}, set())),
    ("read by a sheet that reads them", book(("T-1", "c-1")).assign(sheet="GrowNJ"), PRIOR_ONLY, ({("*", "prior_business", "acme")},) * 2),
]  # fmt: skip


@pytest.mark.parametrize("case, records, keys, expected", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_group_keys_are_the_groups_decide_finds(case, records, keys, expected):
    from batch.run.samerun import _long_keys, group_keys

    records = records.assign(**keys)
    groups, reads = group_keys(records)
    assert (groups, reads) == tuple(map(frozenset, expected))
    long = _long_keys(records.assign(place=0))  # what `decide` works from
    assert groups == set(zip(long["scope"], long["grouping"], long["key"], strict=True))
    assert reads == set(zip(*(long.loc[long["reads"], c] for c in ("scope", "grouping", "key")), strict=True))


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_a_stop_while_files_are_processed_again_records_none_of_them(tmp_path, monkeypatch):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    pair(inbox)

    def stop_after_one(name, kind, payload, stop):
        stop.set()
        return kind, payload

    second_pass(monkeypatch, stop_after_one)
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=2), echo=lambda *_: None)
    assert {f.name: f.status for f in outcome.files} == {"a.xlsx": "returned", "b.xlsx": "returned"}
    assert sorted(p.name for p in inbox.glob("*.xlsx")) == ["a.xlsx", "b.xlsx"]
    assert not list(outbox.rglob("*.annotated.xlsx")) and not list(outbox.rglob("*.partial*"))
    assert ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT COUNT(*) FROM records")[0] == (0,)


@pytest.mark.usefixtures("backend")  # on both of the ledger's databases
def test_a_run_killed_while_placing_a_group_leaves_the_next_run_its_recorded_files(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    pair(inbox)
    killed = run_cli(inbox, outbox, fault="archived:run")  # killed after a.xlsx is archived, before b.xlsx
    assert killed.returncode == -9, killed.stdout + killed.stderr
    # the next run finishes the killed one (a recorded), which ended before it starts: b reads a's
    # 600,000 as an earlier run's, 600,000 + 600,000 = 1,200,000 > 1,000,000
    run(inbox, outbox)
    assert _sheet(outbox / "a.annotated.xlsx")["T-1"]["Findings"] is None
    assert _sheet(outbox / "b.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"


# -- a record processed again keeps the place where it entered the portfolio ------------------------


@pytest.fixture
def november_t1(tmp_path):
    """November's run: T-1 moves $600,000 of C-1 ($1,000,000) on 2026-11-10. Returns the inbox,
    the outbox, and November's returned workbook (kept aside, to be dropped back later)."""
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    transfers_workbook(inbox / "nov.xlsx", [transfer("T-1", "C-1", 1_000_000, D(2026, 11, 10), 600_000)])
    run(inbox, outbox)
    kept = tmp_path / "nov-returned.xlsx"
    kept.write_bytes((outbox / "nov.annotated.xlsx").read_bytes())
    return inbox, outbox, kept


def test_a_record_dropped_back_with_a_new_one_of_its_date_keeps_its_place(november_t1):
    inbox, outbox, kept = november_t1
    # December, one run: November's T-1 dropped back unchanged (as "nov-restated.xlsx", after b.xlsx by path) and
    # b.xlsx's T-2, $600,000 of C-1 on the same date. T-1 entered the portfolio in November: it
    # counts first, 600,000 <= 1,000,000; then T-2, 600,000 + 600,000 = 1,200,000 > 1,000,000
    (inbox / "nov-restated.xlsx").write_bytes(kept.read_bytes())
    transfers_workbook(inbox / "b.xlsx", [transfer("T-2", "C-1", None, D(2026, 11, 10), 600_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "nov-restated.annotated.xlsx")["T-1"]["Findings"] is None
    assert _sheet(outbox / "b.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"


def test_a_record_dropped_back_after_a_later_one_of_its_date_keeps_its_place(november_t1):
    inbox, outbox, kept = november_t1
    # December: T-2 on the same date, 600,000 + 600,000 = 1,200,000 > 1,000,000: over
    transfers_workbook(inbox / "dec.xlsx", [transfer("T-2", "C-1", None, D(2026, 11, 10), 600_000)])
    run(inbox, outbox)
    assert _sheet(outbox / "dec.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"
    # January: November's workbook dropped back unchanged; T-1 still counts before T-2 (it entered
    # first): 600,000 <= 1,000,000, and its verdict does not move to it
    (inbox / "nov-again.xlsx").write_bytes(kept.read_bytes())
    run(inbox, outbox)
    assert _sheet(outbox / "nov-again.annotated.xlsx")["T-1"]["Findings"] is None


def test_a_beip_transferee_selling_on_in_another_workbook_of_the_run_is_barred(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # a.xlsx: Acme Corp. buys $150,000 of BEIP certificate B-1; b.xlsx: ACME Corporation sells $100,000 of it on
    bought = ["T-1", "BEIP", "B-1", 500_000, "Seller LLC", "Acme Corp.", D(2026, 11, 1), 150_000, 150_000]
    sold = ["T-2", "BEIP", "B-1", None, "ACME Corporation", "Other Inc.", D(2026, 11, 20), 100_000, 100_000]
    transfers_workbook(inbox / "a.xlsx", [bought])
    transfers_workbook(inbox / "b.xlsx", [sold])
    run(inbox, outbox)
    assert _sheet(outbox / "a.annotated.xlsx")["T-1"]["Findings"] is None
    assert _sheet(outbox / "b.annotated.xlsx")["T-2"]["Findings"] == "BEIP_RETRANSFER_PROHIBITED"
    (barred,) = [f for f in _findings(outbox / "b.annotated.xlsx") if f["Code"] == "BEIP_RETRANSFER_PROHIBITED"]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert f"on 2026-11-01, in another workbook (Transfers T-1 (a.xlsx, run {today}))" in barred["Message"]


def test_rows_restated_in_another_order_keep_the_order_they_entered_in(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    # November: T-1 then T-2, $600,000 each of C-1 ($1,000,000) on one date: T-2 is over (1,200,000)
    first, second = (transfer(t, "C-1", 1_000_000, D(2026, 11, 10), 600_000) for t in ("T-1", "T-2"))
    transfers_workbook(inbox / "nov.xlsx", [first, second])
    run(inbox, outbox)
    assert _sheet(outbox / "nov.annotated.xlsx")["T-2"]["Findings"] == "CERTIFICATE_OVERTRANSFERRED"
    # December restates both, the rows swapped: T-1 entered first, so T-2 is still the one over
    transfers_workbook(inbox / "dec.xlsx", [second, first])
    run(inbox, outbox)
    rows = _sheet(outbox / "dec.annotated.xlsx")
    assert (rows["T-1"]["Findings"], rows["T-2"]["Findings"]) == (None, "CERTIFICATE_OVERTRANSFERRED")


def test_a_transferors_smaller_transfers_in_two_workbooks_use_one_allowance_in_both_file_orders(tmp_path):
    # Urban Transit Hub, 2013 (minimum $100,000, one smaller transfer a Transferor and year, C.34:1B-209.1 before
    # P.L.2014, c.63): east/a.xlsx $60,000 and west/a.xlsx $50,000 by Seller LLC on one date, of two certificates.
    # On the tie east/a.xlsx comes first and uses the allowance; west's is below the minimum.
    def books(inbox: Path) -> list[Path]:
        row = ["T-{}", "Urban Transit Hub", "U-{}", 1_000_000, "Seller LLC", "Buyer Inc.", D(2013, 6, 28), 0, 0]
        made = []
        for where, n, credit in (("west", 2, 50_000), ("east", 1, 60_000)):
            cells = [row[0].format(n), row[1], row[2].format(n), *row[3:7], credit, credit]
            made.append(transfers_workbook(inbox / where / "a.xlsx", [cells]))
        return made

    seen = in_both_orders(tmp_path, books)
    east, west = seen[0]["east/a.annotated.xlsx"], seen[0]["west/a.annotated.xlsx"]
    assert east[1]["T-1"]["Findings"] == "SMALL_TRANSFER_ALLOWANCE_USED"
    assert west[1]["T-2"]["Findings"] == "TRANSFER_BELOW_MINIMUM"
    (below,) = [f for f in west[0] if f["Code"] == "TRANSFER_BELOW_MINIMUM"]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert (
        f"already used its one smaller transfer of tax period 2013 in another workbook: Transfers T-1 (east/a.xlsx, run {today})"
        in (below["Message"])
    )


def brrap_workbook(path: Path, grants: list[tuple[str, str, float, int]]) -> Path:
    """A workbook of one BRRAP sheet: (Grant ID, Business Name, Yearly Tax Credit Amount, First Tax
    Period) each, 100 employees (multiple 1: the grant is its yearly amount, in one tax period)."""
    import openpyxl

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "BRRAP"
    ws.append(["Grant ID", "Business Name", "Employees Relocated or Retained", "Yearly Tax Credit Amount ($)", "Bonus Award ($)",
               "First Tax Period", "Certificate of Compliance"])  # fmt: skip
    for gid, name, yearly, year in grants:
        ws.append([gid, name, 100, yearly, None, year, "Y"])
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return path


def test_two_brrap_workbooks_of_one_run_are_over_the_aggregate_in_both_file_orders(tmp_path):
    # two workbooks of $12,000,000 of credit in 2026 each: 24,000,000 > 20,000,000 (P.L.2004 c.65 s.7 a., c.), and
    # Acme's 6,000,000 + 4,500,000 = 10,500,000 > 10,000,000 (its two grants are in the two workbooks)
    def books(inbox: Path) -> list[Path]:
        b = brrap_workbook(inbox / "b.xlsx", [("B-1", "Beta LLC", 7_500_000, 2026), ("B-2", "ACME CORP", 4_500_000, 2026)])
        return [b, brrap_workbook(inbox / "a.xlsx", [("A-1", "Acme Corp.", 6_000_000, 2026), ("A-2", "Gamma Inc", 6_000_000, 2026)])]

    seen = in_both_orders(tmp_path, books)
    a, b = seen[0]["a.annotated.xlsx"], seen[0]["b.annotated.xlsx"]
    both = "BUSINESS_ANNUAL_LIMIT_EXCEEDED; AGGREGATE_ANNUAL_LIMIT_EXCEEDED"
    assert [a[1]["A-1"]["Findings"], a[1]["A-2"]["Findings"]] == [both, "AGGREGATE_ANNUAL_LIMIT_EXCEEDED"]
    assert [b[1]["B-1"]["Findings"], b[1]["B-2"]["Findings"]] == ["AGGREGATE_ANNUAL_LIMIT_EXCEEDED", both]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    (aggregate,) = [f for f in a[0] if f["Code"] == "AGGREGATE_ANNUAL_LIMIT_EXCEEDED" and f["Row"] == 2]
    assert aggregate["Message"].startswith(
        "All BRRAP grants together have $24,000,000.00 of credit in 2026 (this grant: $6,000,000.00), $12,000,000.00 of it in "
        f"other workbooks (BRRAP B-1 (b.xlsx, run {today}); BRRAP B-2 (b.xlsx, run {today})), more than the aggregate annual limit"
    )


ERG_HEADERS = ["Project ID", "Category", "Application Date", "Temporary Certificate of Occupancy Date",
               "Projected Annual Incremental Revenue ($)", "Annual Incentive Grant ($)", "Credits Requested ($)"]  # fmt: skip


def erg_workbook(path: Path, projects: list[tuple[str, str, dt.date, float]]) -> Path:
    """A workbook of one ERG_Residential sheet: (Project ID, Category, Application Date, Credits Requested) each."""
    from conftest import write_workbook

    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [[pid, category, date, D(2017, 1, 1), 1_000_000, 700_000, credits] for pid, category, date, credits in projects]
    return write_workbook(path, {"ERG_Residential": [ERG_HEADERS, *rows]})


def test_erg_applications_of_two_workbooks_fill_one_bucket_in_both_file_orders(tmp_path):
    # (d) Other ERG Incentive Area, $25,000,000: a.xlsx 15,000,000 on 2015-01-05, b.xlsx 10,000,000.01 on 2015-01-05:
    # on the tie a.xlsx comes first; b's 25,000,000.01 > 25,000,000
    def books(inbox: Path) -> list[Path]:
        b = erg_workbook(inbox / "b.xlsx", [("P-2", "Other ERG Incentive Area", D(2015, 1, 5), 10_000_000.01)])
        return [b, erg_workbook(inbox / "a.xlsx", [("P-1", "Other ERG Incentive Area", D(2015, 1, 5), 15_000_000)])]

    seen = in_both_orders(tmp_path, books)
    a, b = seen[0]["a.annotated.xlsx"], seen[0]["b.annotated.xlsx"]
    assert (a[1]["P-1"]["Findings"], b[1]["P-2"]["Findings"]) == (None, "BUCKET_LIMIT_EXCEEDED")
    (over,) = b[0]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert over["Message"].startswith(
        "With this project's $10,000,000.01, credits requested in (d) reach $25,000,000.01 by 2015-01-05, $15,000,000.00 of it in "
        f"other workbooks (ERG_Residential P-1 (a.xlsx, run {today})), more than its limit of $25,000,000.00"
    )


def test_a_projects_periods_in_two_workbooks_of_one_run_carry_forward_in_both_file_orders(tmp_path):
    from test_portfolio import compliance_columns, compliance_workbook

    # b.xlsx: P-1's 2019 (credit 1,000, liability 400: 600 carried forward); a.xlsx: its 2020 (liability 1,500):
    # 1,000 + 500 used, 100 left, whichever file is listed or finishes first
    def books(inbox: Path) -> list[Path]:
        b = compliance_workbook(inbox / "b.xlsx", [("P-1", 2019, 1_000, 400)])
        return [b, compliance_workbook(inbox / "a.xlsx", [("P-1", 2020, 1_000, 1_500)])]

    seen = in_both_orders(
        tmp_path, books, lambda out: {name: compliance_columns(out / name) for name in ("a.annotated.xlsx", "b.annotated.xlsx")}
    )
    assert seen[0]["a.annotated.xlsx"]["P-1"] == (1_500, 500, 100, "CARRY_FORWARD_FROM_OTHER_WORKBOOKS")
    assert seen[0]["b.annotated.xlsx"]["P-1"] == (400, 0, 600, None)


def test_a_prior_incentive_in_another_workbook_of_the_run_is_named_in_both_file_orders(tmp_path):
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, GROW_HEADERS, beip, grow, grow_rows

    # a.xlsx: Acme Corp.'s BEIP grant (2015-06-01); b.xlsx: ACME Corporation's Grow NJ application (2016-01-04), which
    # shows neither condition of C.34:1B-247 e.; c.xlsx: another BEIP grant of another business, read by none
    def books(inbox: Path) -> list[Path]:
        inbox.mkdir(parents=True, exist_ok=True)
        a = write_workbook(inbox / "a.xlsx", {"BEIP": [BEIP_HEADERS, beip()]})
        c = write_workbook(inbox / "c.xlsx", {"BEIP": [BEIP_HEADERS, beip("B-9", "Other Business Inc")]})
        return [write_workbook(inbox / "b.xlsx", {"GrowNJ": [GROW_HEADERS, grow()]}), c, a]

    seen = in_both_orders(tmp_path, books, lambda out: (grow_rows(out / "b.annotated.xlsx"), _findings(out / "b.annotated.xlsx")))
    rows, findings = seen[0]
    assert rows[0]["Findings"] == "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"
    (found,) = [f for f in findings if f["Code"] == "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert f"BEIP B-1 (Agreement Date 2015-06-01; a.xlsx, run {today})" in found["Message"] and "B-9" not in found["Message"]


def test_a_prior_incentive_restated_under_another_business_in_the_run_is_no_longer_named(tmp_path):
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, GROW_HEADERS, beip, grow, grow_rows

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    # November: Acme Corp.'s BEIP grant BE-1. December, one run: BE-1 restated as Zeta Holdings LLC's, and ACME
    # Corporation's Grow NJ application: this run's BE-1 supersedes November's, so Acme has no prior incentive
    write_workbook(inbox / "beip.xlsx", {"BEIP": [BEIP_HEADERS, beip("BE-1")]})
    run(inbox, outbox)
    write_workbook(inbox / "beip-restated.xlsx", {"BEIP": [BEIP_HEADERS, beip("BE-1", "Zeta Holdings LLC")]})
    write_workbook(inbox / "grow.xlsx", {"GrowNJ": [GROW_HEADERS, grow()]})
    run(inbox, outbox)
    assert grow_rows(outbox / "grow.annotated.xlsx")[0]["Findings"] == ""


def test_beip_workbooks_are_placed_at_once_and_still_read_by_a_grow_nj_workbook_of_the_run(tmp_path):
    from conftest import write_workbook
    from test_prior_incentives import BEIP_HEADERS, GROW_HEADERS, beip, grow, grow_rows

    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    # two BEIP workbooks (their rules read no other workbook) and a Grow NJ application of Acme's: killed at the
    # decision, the run has recorded the two BEIP workbooks, not the Grow NJ one, which waited for it
    write_workbook(inbox / "a.xlsx", {"BEIP": [BEIP_HEADERS, beip()]})
    write_workbook(inbox / "b.xlsx", {"BEIP": [BEIP_HEADERS, beip("B-2", "Other Business Inc")]})
    write_workbook(inbox / "c.xlsx", {"GrowNJ": [GROW_HEADERS, grow()]})
    killed = run_cli(inbox, outbox, fault="decided:run")
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert sorted(ledger_query(outbox / ".njcredits" / "ledger.sqlite", "SELECT name FROM files WHERE status = 'processed'")) == [
        ("a.xlsx",),
        ("b.xlsx",),
    ]
    # the next run finishes the killed one (its BEIP records count as an earlier run's) and processes the Grow NJ
    # workbook, which names Acme's BEIP grant of a.xlsx
    run(inbox, outbox)
    assert grow_rows(outbox / "c.annotated.xlsx")[0]["Findings"] == "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN"


# -- the order records of one date count in, when none entered the portfolio before ---------------

FIRST_RUN_ORDERS = [
    # (place, seq) of each record -> its rank: by workbook place, then row, then as listed
    ([(0, 0), (0, 1), (0, 2)], [0, 1, 2]),  # one workbook, in row order
    ([(0, 2), (0, 0), (0, 1)], [2, 0, 1]),  # rows listed out of order
    ([(1, 0), (1, 1), (0, 0), (0, 1)], [2, 3, 0, 1]),  # the second workbook's given first: place 0 counts first
    ([(2, 0), (0, 5), (1, 0), (0, 0)], [3, 1, 2, 0]),  # three workbooks: 0/0, 0/5, 1/0, 2/0
    ([(0, 0), (0, 0), (0, 0)], [0, 1, 2]),  # one place and row (a repeated ID): as listed
    ([(1, 3), (0, 3)], [1, 0]),  # the same row number: the lower place first
    ([], []),  # a sheet with no valid row
]


@pytest.mark.parametrize("places_rows,ranks", FIRST_RUN_ORDERS)
def test_records_none_entered_before_count_by_place_then_row(places_rows, ranks):
    from types import SimpleNamespace

    from batch.pipeline import _entry_order

    records = pd.DataFrame(
        {
            "team": "t",
            "record_id": [f"R{i}" for i in range(len(places_rows))],
            "place": [p for p, _ in places_rows],
            "seq": [s for _, s in places_rows],
        }
    )
    got = _entry_order(None, records, SimpleNamespace(portfolio_from=None))
    assert got.tolist() == ranks
    # the rule the ledger's order follows when records did enter before, with none entered: the same
    at = records.assign(new=True, pos=range(len(records)))
    order = at.sort_values(["new", "place", "seq", "pos"], kind="stable")["pos"].to_numpy()
    assert [int(r) for r in pd.Series(range(len(order)), index=order).sort_index()] == ranks


ENTERED_ORDERS = [
    # records (record ID, place, row) and the ledger's first versions (record ID, run end, run,
    # workbook, row) -> each record's rank: those that entered before first, in the order they
    # entered (run end, run, workbook, row), then the new ones by place and row
    ([("N", 0, 0), ("E", 0, 1)], [("E", "2026-11-30", "r1", "nov.xlsx", 7)], [1, 0]),  # entered before: first
    (
        [("E2", 0, 0), ("E1", 0, 1)],
        [("E1", "2026-10-31", "r0", "oct.xlsx", 9), ("E2", "2026-11-30", "r1", "nov.xlsx", 1)],
        [1, 0],  # October's before November's, however the rows are listed now
    ),
    (
        [("E", 0, 0), ("F", 0, 1)],
        [("E", "2026-11-30", "r1", "b.xlsx", 1), ("F", "2026-11-30", "r1", "a.xlsx", 5)],
        [1, 0],  # one run: by workbook name, then row
    ),
    (
        [("E", 0, 0)],
        [("E", "2026-11-30", "r1", "nov.xlsx", 3), ("E", "2026-10-31", "r0", "oct.xlsx", 8)],
        [0],  # processed twice before: counts where it first entered
    ),
    ([("N2", 1, 0), ("E", 2, 5), ("N1", 0, 3)], [("E", "2026-11-30", "r1", "nov.xlsx", 2)], [2, 0, 1]),
]


@pytest.mark.parametrize("listed,entered,ranks", ENTERED_ORDERS)
def test_records_that_entered_before_count_first_in_the_order_they_entered(monkeypatch, listed, entered, ranks):
    from types import SimpleNamespace

    import batch.run.ledger as ledger
    from batch.pipeline import _entry_order

    found = pd.DataFrame(
        [("t", rid, ended, run, workbook, seq) for rid, ended, run, workbook, seq in entered],
        columns=["team", "record_id", "ended", "run_id", "workbook", "seq"],
    )
    monkeypatch.setattr(ledger, "read_entries", lambda *a, **k: found.copy())
    records = pd.DataFrame(
        {"team": "t", "record_id": [r for r, _, _ in listed], "place": [p for _, p, _ in listed], "seq": [s for _, _, s in listed]}
    )
    got = _entry_order(SimpleNamespace(name="Transfers"), records, SimpleNamespace(portfolio_from=("ledger", "run", ("t",))))
    assert got.tolist() == ranks


def _record(sheet, record_id, fields=None, business=None):
    """A record as a worker returns it (`Result.records()`), with the columns `held` reads."""
    return {"sheet": sheet, "record_id": record_id, "status": "OK", "codes": "", "fields": fields, "business_name": business,
            "record_date": None, "year": 2026, "key:certificate_key": None}  # fmt: skip


HELD_CASES = {
    # record -> held (its place among the held, and what of it the run holds), or None: not held
    "a transfer": (_record("Transfers", "T-1", json.dumps({"credit": 100})), (0, None, 100)),
    "a blank record ID": (_record("Transfers", "", json.dumps({"credit": 200})), None),
    "no record ID": (_record("Transfers", None, json.dumps({"credit": 300})), None),
    "a sheet no rule of another workbook reads": (_record("Emerge", "E-1"), None),
    # a prior incentive: held by its business, as the one business-name rule keys it
    "a BEIP record": (_record("BEIP", "B-1", business="Acme Corp."), (1, "acme", None)),
    "a record ID written as a number": (_record("Transfers", 7, json.dumps({"credit": 400})), (2, None, 400)),
}


def test_the_run_holds_the_records_other_workbooks_read_and_their_fields():
    records = pd.DataFrame([r for r, _ in HELD_CASES.values()])
    got = held(records)
    expected = [(case, r["record_id"], *h) for case, (r, h) in HELD_CASES.items() if h is not None]
    assert got["record_id"].tolist() == [e[1] for e in expected]
    for (case, _id, seq, business, credit), (_, row) in zip(expected, got.iterrows(), strict=True):
        assert row["seq"] == seq, case
        assert (row["key:prior_business"] if pd.notna(row["key:prior_business"]) else None) == business, case
        assert (int(row["field:credit"]) if pd.notna(row["field:credit"]) else None) == credit, case


# (case, the JSON the ledger keeps of each record, the frame read back): a kept field a column each,
# in the portfolio's order, indexed like the JSON; a field no record has is all missing (NaN); a
# field the portfolio does not keep is left out; numbers, text and lists as JSON gives them
READ_CASES = [
    (
        "every field",
        ['{"a": 1, "b": "x", "k": "c-1"}', '{"a": 2, "b": "y", "k": "c-2"}'],
        {"a": [1, 2], "b": ["x", "y"], "k": ["c-1", "c-2"]},
    ),
    ("a field none has", ['{"a": 1}', '{"a": 2}'], {"a": [1, 2], "b": [np.nan, np.nan], "k": [np.nan, np.nan]}),
    (
        "a null and a missing field",
        ['{"a": null, "b": "x"}', '{"b": "y", "k": ["p", "q"]}'],
        {"a": [np.nan, np.nan], "b": ["x", "y"], "k": [np.nan, ["p", "q"]]},
    ),
    ("a field not kept", ['{"a": 5, "z": "dropped"}'], {"a": [5], "b": [np.nan], "k": [np.nan]}),
    ("an empty record", ["{}", '{"a": 3}'], {"a": [np.nan, 3.0], "b": [np.nan, np.nan], "k": [np.nan, np.nan]}),
]


@pytest.mark.parametrize("texts, expected", [c[1:] for c in READ_CASES], ids=[c[0] for c in READ_CASES])
def test_portfolio_read_gives_each_kept_field_a_column(texts, expected):
    portfolio = Portfolio(of=lambda typed, computed: None, fields=("a", "b"), groupings=("k",))
    index = pd.Index([7, 3, 9][: len(texts)])
    got = portfolio.read(pd.Series(texts, index=index, dtype=object))
    assert list(got.columns) == ["a", "b", "k"] and got.index.equals(index)
    for column, values in expected.items():
        assert [v if isinstance(v, list) else (None if pd.isna(v) else v) for v in got[column]] == [
            v if isinstance(v, list) else (None if pd.isna(v) else v) for v in values
        ], column


# (case, a grouping's keys, record by record; each key as text, with the record's position): a record
# in several groups is on several rows, one in none on none
EACH_KEY_CASES = [
    ("one key each", ["c-1", "c-2"], [(0, "c-1"), (1, "c-2")]),
    ("no key", [None, "c-2", float("nan")], [(1, "c-2")]),
    ("none at all", [None, None], []),
    ("several keys, and an empty list", [["2013", "2014"], [], "2015"], [(0, "2013"), (0, "2014"), (2, "2015")]),
    ("a number as its text", [7, None], [(0, "7")]),
]


@pytest.mark.parametrize("keys, expected", [c[1:] for c in EACH_KEY_CASES], ids=[c[0] for c in EACH_KEY_CASES])
def test_each_key_gives_a_row_per_key(keys, expected):
    got = each_key(pd.Series(keys, index=[10 * (i + 1) for i in range(len(keys))], dtype=object))
    assert list(zip(got.index.tolist(), got.tolist(), strict=True)) == expected
    assert all(type(k) is str for k in got.tolist())


def test_portfolio_read_of_no_record_gives_float_columns():
    # no record (a program the ledger holds none of): each kept field a column of floats, as before
    portfolio = Portfolio(of=lambda typed, computed: None, fields=("a", "b"), groupings=("k",))
    got = portfolio.read(pd.Series([], dtype=str))
    assert list(got.columns) == ["a", "b", "k"] and len(got) == 0
    assert [str(t) for t in got.dtypes] == ["float64"] * 3


def test_a_worker_asked_sends_its_records_once_and_their_groups(tmp_path):
    # the worker's result, asked or not, holds the records once: what the run holds of them is worked
    # out by the run, so a large workbook's last message is no larger for the question (a second copy
    # of its records counted against the worker's memory limit as it was sent)
    import pickle

    from batch.run.samerun import group_keys, held
    from batch.run.workers import work

    (path,) = three_workbooks(tmp_path / "inbox")[:1]
    alone = work(str(path), str(tmp_path / "alone.xlsx"), as_of=D(2026, 11, 30))
    asked = work(str(path), str(tmp_path / "asked.xlsx"), as_of=D(2026, 11, 30), ask=lambda reads: False)
    assert asked["written"] and (tmp_path / "asked.xlsx").exists()
    assert set(asked) - set(alone) == {"groups"}  # only the groups added
    assert asked["groups"] == group_keys(held(asked["records"]))[0] == {("Transfers", "certificate_key", "c-1")}
    assert len(pickle.dumps(asked["groups"])) < len(pickle.dumps(asked["records"])) / 10
    told = work(str(path), str(tmp_path / "told.xlsx"), as_of=D(2026, 11, 30), ask=lambda reads: True)
    assert not told["written"] and not (tmp_path / "told.xlsx").exists()


# the samples' sheets whose programs keep portfolio records, and whether the program's fields read its
# computed columns (Grow NJ compliance keeps each period's Credit Allowed, as its sheet decided it)
FIELDS_CASES = [
    ("transfers-2026-11.xlsx", "Transfers", False),
    ("beip-brrap-erg-2026-11.xlsx", "BRRAP", False),
    ("beip-brrap-erg-2026-11.xlsx", "ERG_Residential", False),
    ("emerge-gsgz-compliance-2026-11.xlsx", "GrowNJ_Compliance", True),
]


@pytest.mark.parametrize("book,sheet,reads_computed", FIELDS_CASES)
def test_a_records_fields_are_worked_out_once_only_where_the_computed_columns_do_not_change_them(tmp_path, book, sheet, reads_computed):
    """A sheet that reads the portfolio works out its valid rows' fields before the calculation (their
    group keys). A program whose fields read no computed column keeps those as its records' fields;
    they are the fields its records get when worked out again from the computed rows (the sheets'
    Invalid rows left out: Transfers has six). Where they read one, they are worked out again: taken
    from before the calculation, the Credit Allowed would be missing."""
    from dataclasses import replace

    from batch.pipeline import process
    from batch.run.ledger import Ledger

    Ledger(tmp_path / "ledger.sqlite")
    samples = Path(__file__).resolve().parent.parent / "sample_inputs"
    result = process(samples / book, as_of=D(2026, 11, 30), ledger=tmp_path / "ledger.sqlite")
    (mine,) = [r for r in result.intake if r.sheet.name == sheet]
    assert mine.program.portfolio.reads_computed is reads_computed
    assert mine.fields_before is not None and len(mine.fields_before) > 0
    kept = result.records()
    declared = mine.program

    def records_when(reads: bool) -> pd.DataFrame:
        mine.program = replace(declared, portfolio=replace(declared.portfolio, reads_computed=reads))
        return result.records()

    worked_again, taken_before = records_when(True), records_when(False)
    pd.testing.assert_frame_equal(kept, worked_again if reads_computed else taken_before)
    of_sheet = kept["sheet"].eq(sheet).to_numpy()
    assert kept.loc[of_sheet, "fields"].notna().sum() > 0
    if reads_computed:  # from before the calculation the Credit Allowed is missing: another field
        assert not kept["fields"].equals(taken_before["fields"])
        assert '"allowed":null' in " ".join(taken_before.loc[of_sheet, "fields"].dropna())
    else:
        pd.testing.assert_frame_equal(kept, worked_again)


# (case, rows kept at most, kept): the samples' Transfers sheet has 37 valid rows (43, six Invalid)
FIELDS_KEPT_CASES = [("below", 38, True), ("at", 37, True), ("above", 36, False)]


@pytest.mark.parametrize("case,most,kept", FIELDS_KEPT_CASES)
def test_a_large_sheet_keeps_no_fields_from_before_the_calculation_and_its_records_are_the_same(tmp_path, monkeypatch, case, most, kept):
    """A sheet of more than FIELDS_KEPT_ROWS valid rows does not hold the fields it worked out before
    the calculation through the write (its records work them out again): the same records."""
    import batch.pipeline as pipeline
    from batch.run.ledger import Ledger

    Ledger(tmp_path / "ledger.sqlite")
    sample = Path(__file__).resolve().parent.parent / "sample_inputs" / "transfers-2026-11.xlsx"
    every = pipeline.process(sample, as_of=D(2026, 11, 30), ledger=tmp_path / "ledger.sqlite").records()
    monkeypatch.setattr(pipeline, "FIELDS_KEPT_ROWS", most)
    result = pipeline.process(sample, as_of=D(2026, 11, 30), ledger=tmp_path / "ledger.sqlite")
    (mine,) = result.intake
    assert (mine.fields_before is not None) is kept, case
    pd.testing.assert_frame_equal(result.records(), every)
