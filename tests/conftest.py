"""Shared helpers: build typed frames and intake workbooks from plain rows."""

from __future__ import annotations

import compileall
import datetime as dt
import html
import os
import re
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import xlsxwriter
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
# The Transfers columns used across tests: the required ones, then the Certificate Amount (optional,
# but without it on any record of a certificate a row is CERTIFICATE_AMOUNT_NOT_GIVEN, a warning).
# Test rows give the amount last: CERTIFICATE (1,000,000), so their rows are OK.
TRANSFER_HEADERS = [
    "Transfer ID",
    "Program",
    "Certificate ID",
    "Transferor",
    "Transferee",
    "Transfer Date",
    "Credit Amount Transferred ($)",
    "Consideration Received ($)",
    "Certificate Amount ($)",
]
CERTIFICATE = 1_000_000
sys.path.insert(0, str(ROOT / "tests"))
from databases import backend, postgres_database, postgres_ledger  # noqa: E402, F401 - the ledger's databases (tests/databases.py)

# Hypothesis: the property tests keep the example counts they set themselves (25 to 80 workbooks
# each); the profile only lifts the per-example deadline, which a busy machine (or two test workers
# on two cores) would otherwise trip. `HYPOTHESIS_PROFILE=thorough` runs every property test that
# sets no count of its own with ten times Hypothesis's default.
settings.register_profile("njcredits", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", parent=settings.get_profile("njcredits"), max_examples=1_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "njcredits"))

# The longest tests, started first: run in parallel (pytest-xdist), a long test taken up last
# would be the run's end alone.
SLOW_FIRST = (
    "tests/test_watch.py::test_after_an_inotify_queue_overflow",
    "tests/test_tool_sheets.py::test_a_sheet_reaching_xfa",
    "tests/test_tool_sheets.py::test_a_sheet_ending_just_where",
    "tests/test_batch.py::test_killed_run_leaves",
    "tests/test_properties.py::",
    "tests/test_intake_properties.py::",
)


def pytest_configure(config):
    config.addinivalue_line("markers", "sqlite_only: the test is of a SQLite ledger file as such; not run on PostgreSQL")
    # The tests start `njcredits` well over a hundred times, and each start imports the product. Where
    # the environment sets PYTHONDONTWRITEBYTECODE, nothing kept its compiled modules, so every start
    # compiled all of them again (0.17 s). The run compiles them once, before any test, as Python
    # does by itself elsewhere (the compiled files go to __pycache__, which git ignores).
    if sys.dont_write_bytecode and "PYTEST_XDIST_WORKER" not in os.environ:
        for package in ("batch", "validators"):
            compileall.compile_dir(ROOT / package, quiet=2)  # a speed-up only: a tree it cannot write is left as it is


def pytest_xdist_auto_num_workers(config):
    # `-n auto`: one test worker per core, and one more. Some tests mostly wait (the watch's settle
    # times, `njcredits` started as a process, LibreOffice); the extra worker keeps both cores busy
    # while one of them waits. The watch's tests run on one worker together (their xdist_group), so
    # they do not all wait at once. PYTEST_XDIST_AUTO_NUM_WORKERS still decides where it is set.
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(config, items):
    # a test of a SQLite file as such (a ledger an older release left, its user_version) in a module whose tests run on
    # both databases: its PostgreSQL run is left out, not skipped
    sqlite_files = [i for i in items if i.get_closest_marker("sqlite_only") and getattr(i, "callspec", None)
                    and i.callspec.params.get("backend") == "postgresql"]  # fmt: skip
    if sqlite_files:
        config.hook.pytest_deselected(items=sqlite_files)
        items[:] = [i for i in items if i not in sqlite_files]

    def rank(item) -> int:
        return next((i for i, prefix in enumerate(SLOW_FIRST) if item.nodeid.startswith(prefix)), len(SLOW_FIRST))

    items.sort(key=rank)  # stable: the rest keep their order


def typed_frame(spec, rows: list[dict]) -> pd.DataFrame:
    """Rows given as {header: cell} -> the typed frame a calculator receives (must validate)."""
    from validators.schema import validate

    headers = [c.header for c in spec.columns]
    raw = pd.DataFrame([{h: r.get(h, "") for h in headers} for r in rows], columns=headers, dtype=object)
    typed, findings = validate(spec, raw)
    assert findings.empty, findings.to_dict("records")
    return typed


def write_workbook(path: Path, sheets: dict[str, list[list]]) -> Path:
    """A workbook with the given grids (first row usually the headers); text always as text. Its
    parts are put together in memory: xlsxwriter otherwise writes, reads back and removes a
    temporary file for each (about 15 ms a workbook, over the thousands the tests write)."""
    options = {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False, "in_memory": True}
    wb = xlsxwriter.Workbook(str(path), options)
    date = wb.add_format({"num_format": "yyyy-mm-dd"})
    for name, grid in sheets.items():
        ws = wb.add_worksheet(name)
        for r, row in enumerate(grid):
            for c, v in enumerate(row):
                if v is None:
                    continue
                if isinstance(v, str):
                    ws.write_string(r, c, v)
                elif isinstance(v, (dt.date, dt.datetime)):
                    ws.write_datetime(r, c, v, date)
                elif isinstance(v, bool):
                    ws.write_boolean(r, c, v)
                else:
                    ws.write_number(r, c, v)
    wb.close()
    return path


@pytest.fixture
def workbook(tmp_path):
    def make(sheets: dict[str, list[list]], name: str = "intake.xlsx") -> Path:
        return write_workbook(tmp_path / name, sheets)

    return make


# the tool's own links of the Findings sheet's Cell column (`=HYPERLINK("#Transfers!H12","Transfers!H12")`)
OWN_LINK = re.compile(r'HYPERLINK\("#((?:[A-Za-z_][A-Za-z0-9_]*|\'(?:[^\']|\'\')+\')![A-Z]{1,3}[0-9]+)","\1"\)')


def foreign_formulas(path: Path) -> list[tuple[str, str]]:
    """(part, formula) of every formula in the workbook's sheets other than the tool's own links:
    text from the input must never come back as one."""
    out = []
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/sheet"):
                for f in re.findall(r"<f>(.*?)</f>", z.read(name).decode("utf-8"), flags=re.S):
                    if not OWN_LINK.fullmatch(html.unescape(f)):
                        out.append((name, f))
    return out
