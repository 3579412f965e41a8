"""The committed template and sample workbook are what the code generates (never stale)."""

from __future__ import annotations

import openpyxl
import python_calamine
import samples
from conftest import ROOT

from batch.calculators import programs
from batch.template import TEMPLATE_NAME, write_template


def fingerprint(path):
    """Sheets, header cells, header comments and drop-down lists: what a user of the template sees."""
    wb = openpyxl.load_workbook(path)
    out = {}
    for ws in wb.worksheets:
        out[ws.title] = (
            [(c.value, c.comment.text if c.comment else None) for c in ws[1]],
            sorted((str(d.sqref), d.formula1) for d in ws.data_validations.dataValidation),
            ws.freeze_panes,
        )
    return out


def test_committed_template_is_current(tmp_path):
    fresh = write_template(tmp_path)
    committed = ROOT / "templates" / TEMPLATE_NAME
    assert committed.exists(), "run `njcredits template --out templates` and commit the file"
    assert fingerprint(fresh) == fingerprint(committed), "templates/ is stale: run `njcredits template --out templates`"


def test_template_has_every_intake_sheet_and_its_hints(tmp_path):
    fp = fingerprint(write_template(tmp_path))
    for module in programs():
        headers, lists, frozen = fp[module.SPEC.name]
        assert [h for h, _ in headers] == [c.header for c in module.SPEC.columns]
        assert all(note and "Expected:" in note for _, note in headers)
        code_cols = [c for c in module.SPEC.columns if c.kind in ("code", "yesno")]
        assert len(lists) == len(code_cols) and frozen == "A2"


def _cells(path):
    book = python_calamine.CalamineWorkbook.from_path(str(path))
    return {name: book.get_sheet_by_name(name).to_python() for name in book.sheet_names}


def test_committed_samples_are_current(tmp_path):
    for build, committed in (
        (samples.build, samples.SAMPLE),
        (samples.build_grow_nj, samples.GROW_NJ_SAMPLE),
        (samples.build_grants, samples.GRANTS_SAMPLE),
        (samples.build_compliance, samples.COMPLIANCE_SAMPLE),
    ):
        fresh = build(tmp_path / committed.name)
        assert _cells(fresh) == _cells(committed), f"{committed} is stale: run `python tests/samples.py`"
