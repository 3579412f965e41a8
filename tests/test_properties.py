"""Property-based: random intake workbooks with random junk in random cells.

Invariants: the run never crashes (a workbook without an intake sheet is refused with its reason);
rows in = rows out for every sheet; every returned row has a
Status; every Invalid row has at least one finding located to a cell; input values are unchanged
in the returned sheets.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import pytest
import python_calamine
from conftest import write_workbook
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batch.pipeline import process
from batch.programs import PROGRAMS
from batch.workbook.reading import UnreadableWorkbook
from batch.workbook.writing import write

SPECS = {m.name: m.schema for m in PROGRAMS}
junk = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.sampled_from(
        [
            "=SUM(A1)",
            "+1",
            "-x",
            "@A1",
            "N/A",
            "#N/A",
            "$1,250,000",
            "35%",
            "Y",
            "no",
            "TRUE",
            "3/31/2016",
            "2016-02-30",
            " ",
            "\u00a0",
            "Grow NJ",
            "Priority",
            "BEIP",
        ]
    ),
    st.integers(min_value=-(10**9), max_value=10**12),
    st.floats(min_value=-1e9, max_value=1e12, allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2040, 12, 31)),
)


@st.composite
def workbooks(draw):
    sheets = {}
    for name in draw(st.lists(st.sampled_from(sorted(SPECS) + ["Scratch"]), min_size=1, max_size=3, unique=True)):
        spec = SPECS.get(name)
        headers = [c.header for c in spec.columns] if spec else ["A", "B"]
        headers = draw(st.permutations(headers))[: draw(st.integers(1, len(headers)))]
        rows = draw(st.lists(st.lists(junk, min_size=len(headers), max_size=len(headers)), max_size=8))
        sheets[name] = [headers, *rows]
    return sheets


def nonblank(grid):
    return [r for r in grid if any(v not in ("", None) for v in r)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workbooks())
def test_random_workbooks_keep_the_invariants(sheets):
    with tempfile.TemporaryDirectory() as tmp:
        src = write_workbook(Path(tmp) / "random.xlsx", sheets)
        if not set(sheets) & set(SPECS):  # no intake sheet: refused with its reason, never said OK
            with pytest.raises(UnreadableWorkbook, match="^no intake sheet"):
                process(src)
            return
        result = process(src)  # never raises
        out = write(result, Path(tmp) / "random.annotated.xlsx")
        before = python_calamine.CalamineWorkbook.from_path(str(src))
        after = python_calamine.CalamineWorkbook.from_path(str(out))
        findings = result.findings
        for name in sheets:
            g_in = before.get_sheet_by_name(name).to_python(skip_empty_area=False)
            g_out = after.get_sheet_by_name(name).to_python(skip_empty_area=False)
            assert len(nonblank(g_in)) == len(nonblank(g_out))
            for r, row in enumerate(g_in):  # input values unchanged (an empty-text cell may come back empty)
                for c, v in enumerate(row):
                    got = g_out[r][c] if r < len(g_out) and c < len(g_out[r]) else ""
                    assert got == v, (name, r, c)
            if name not in SPECS:
                continue
            res = next(x for x in result.intake if x.sheet.name == name)
            assert res.status.isin(["OK", "Flagged", "Ineligible", "Invalid"]).all()
            header_at = res.sheet.header_row
            status_col = g_out[header_at].index("Status")
            data = [row for row in g_out[header_at + 1 :] if any(v not in ("", None) for v in row)]
            assert all(row[status_col] in ("OK", "Flagged", "Ineligible", "Invalid") for row in data)
            sheet_findings = findings[findings["Sheet"] == name]
            sheet_level_error = (sheet_findings["Row"].isna() & (sheet_findings["Severity"] == "error")).any()
            for pos in res.status.index[res.status == "Invalid"]:
                excel_row = int(res.sheet.excel_rows[pos])
                located = sheet_findings[(sheet_findings["Row"] == excel_row) & (sheet_findings["Column"] != "")]
                assert len(located) or sheet_level_error, (name, excel_row)
