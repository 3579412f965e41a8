"""A new program is one folder plus one word in the ordered list.

The suite's minimal program (`tests/fixtures/programs/demo_credit/`: a sheet of three input
columns, one rule value, one finding) is copied into a copy of the product, its name added to
ORDER in `batch/programs/__init__.py`, and nothing else changed; the copy's own `njcredits` then
runs it end to end: `run` (the returned sheet, its finding, the Summary, the Rules sheet, the run
report), `template` (its intake sheet, what one row is, its worked example) and `rules`."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys

import openpyxl
import pytest
import python_calamine
from conftest import ROOT, write_workbook

FIXTURE = ROOT / "tests" / "fixtures" / "programs" / "demo_credit"
NAME = FIXTURE.name
HEADERS = ["Demo ID", "Application Date", "Amount Requested ($)"]


@pytest.fixture(scope="module")
def product(tmp_path_factory):
    """A copy of the product with the minimal program's folder in it and its name last in ORDER."""
    home = tmp_path_factory.mktemp("product")
    skip = shutil.ignore_patterns("__pycache__", "tests")
    for package in ("batch", "validators"):
        shutil.copytree(ROOT / package, home / package, ignore=skip)
    shutil.copytree(FIXTURE, home / "batch" / "programs" / NAME, ignore=skip)
    listing = home / "batch" / "programs" / "__init__.py"
    text = listing.read_text()
    order = re.search(r"^ORDER = \(\n(?:    \"\w+\",\n)+\)", text, flags=re.M)
    assert order, "ORDER is one tuple of names, one a line"
    listing.write_text(text[: order.end() - 1] + f'    "{NAME}",\n' + text[order.end() - 1 :])  # the one word
    return home


def njcredits(product, *args) -> subprocess.CompletedProcess:
    """The copy's command line, run from the copy (the copy's packages first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(product)}
    code = "from batch.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=product, env=env, capture_output=True, text=True, timeout=600)


def _grid(path, sheet: str) -> list[list]:
    rows = python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name(sheet).to_python()
    return [r for r in rows if any(str(v).strip() for v in r)]


def test_the_copy_runs_its_own_programs_with_the_new_one_last(product):
    code = "import batch.programs as p; print(p.__file__); print(' '.join(x.name for x in p.PROGRAMS))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=product, env={**os.environ, "PYTHONPATH": str(product)}, capture_output=True, text=True
    )
    where, names = out.stdout.splitlines()
    assert where.startswith(str(product)), out.stderr
    assert names.split()[-1] == "Demo"


def test_run_returns_the_new_programs_sheet_computed_with_its_finding_summary_and_rules(product, tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    rows = [["DEMO-1", dt.date(2026, 3, 2), 40_000], ["DEMO-2", dt.date(2026, 4, 9), 250_000]]
    write_workbook(inbox / "demo.xlsx", {"Demo": [HEADERS, *rows]})
    done = njcredits(product, "run", str(inbox), "--out", str(outbox), "--as-of", "2026-11-30")
    assert done.returncode == 0 and "1 processed, 0 skipped, 0 failed" in done.stdout, done.stdout + done.stderr
    returned = outbox / "demo.annotated.xlsx"
    sheet = _grid(returned, "Demo")
    assert sheet[0][:6] == [*HEADERS, "Award ($)", "Status", "Findings"]
    # $40,000 is under the maximum award; $250,000 is capped at $100,000
    assert [r[3:6] for r in sheet[1:]] == [[40_000, "OK", ""], [100_000, "Flagged", "AWARD_CAPPED"]]
    head, *found = _grid(returned, "Findings")
    finding = dict(zip(head, found[0], strict=False))
    assert len(found) == 1 and finding["Code"] == "AWARD_CAPPED" and finding["Column"] == "Amount Requested ($)"
    assert finding["Message"] == (
        "Amount Requested $250,000.00 is more than the maximum award of $100,000.00; the award is $100,000.00 (C.34:1B-209.1)."
    )
    summary = _grid(returned, "Summary")
    # Rows, OK, Flagged with errors, with warnings only (AWARD_CAPPED), Ineligible, Invalid; clean $40,000 + $100,000, with open errors 0
    assert ["Demo", "Demo credit", 2, 1, 0, 1, 0, 0, 140_000, 0] in [r[:10] for r in summary]
    assert any(r[0] == "Demo: Demo awards" for r in summary)
    rules = _grid(returned, "Rules")
    assert any(r[0] == "Demo" and r[3] == "maximum_award" and r[5] == "$100,000" and r[8] == "C.34:1B-209.1" for r in rules)
    report = next(outbox.glob("run-*.summary.xlsx"))
    assert any(r[0] == "Demo" for r in _grid(report, "Portfolio"))


def test_the_template_has_the_new_programs_sheet_and_its_worked_example(product, tmp_path):
    done = njcredits(product, "template", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    book = openpyxl.load_workbook(tmp_path / "njcredits-intake-template.xlsx")
    assert book.sheetnames[-2:] == ["Demo", "Lists"]
    assert [c.value for c in book["Demo"][1]] == HEADERS
    texts = [str(c.value) for row in book["Instructions"].iter_rows() for c in row if c.value is not None]
    assert "Demo: Demo credit (C.34:1B-209.1)" in texts
    assert any(t.startswith("One row is one request for the demo credit. Required (orange): Demo ID, Application Date") for t in texts)
    at = texts.index("Demo: Demo credit (C.34:1B-209.1)")
    assert texts[at:].count("DEMO-1") == 1  # the worked example row


def test_the_rulebook_has_the_new_programs_rule(product, tmp_path):
    done = njcredits(product, "rules", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    book = python_calamine.CalamineWorkbook.from_path(str(tmp_path / "njcredits-rules.xlsx"))
    rows = [r for name in book.sheet_names for r in book.get_sheet_by_name(name).to_python()]
    assert any("maximum_award" in r and "C.34:1B-209.1" in r and "Demo" in r for r in rows)
