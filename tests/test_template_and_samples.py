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


# The table of the README's first section: the bundled samples as of 2026-11-30.
SAMPLE_COUNTS = {  # sheet: (rows, OK, Flagged, Ineligible, Invalid)
    "Transfers": (41, 20, 15, 0, 6),
    "GrowNJ": (30, 16, 4, 8, 2),
    "BEIP": (12, 7, 4, 0, 1),
    "BEIP_Conversion": (13, 10, 0, 2, 1),
    "BRRAP": (9, 3, 5, 1, 0),
    "ERG_Residential": (11, 5, 5, 1, 0),
    "Emerge": (12, 5, 1, 5, 1),
    "GSGZ_Property": (7, 5, 0, 2, 0),
    "GrowNJ_Compliance": (20, 9, 9, 2, 0),
}


def test_samples_give_the_counts_the_readme_states(tmp_path):
    from click.testing import CliRunner

    from batch.cli import main

    for _ in range(2):  # the second run reads the first one's ledger and gives the same result
        result = CliRunner().invoke(main, ["run", str(ROOT / "sample_inputs"), "--out", str(tmp_path), "--as-of", "2026-11-30"])
        assert result.exit_code == 0 and "4 processed, 0 skipped, 0 failed" in result.output, result.output
        assert _status_counts(tmp_path) == SAMPLE_COUNTS
    readme = (ROOT / "README.md").read_text()
    for sheet, (rows, ok, flagged, ineligible, invalid) in SAMPLE_COUNTS.items():
        assert f"| {sheet} | {rows} | {ok} | {flagged} | {ineligible} | {invalid} |" in readme


def _status_counts(folder) -> dict:
    counts = {}
    for path in folder.glob("*.annotated.xlsx"):
        book = python_calamine.CalamineWorkbook.from_path(str(path))
        for name in book.sheet_names:
            if name in SAMPLE_COUNTS:
                rows = book.get_sheet_by_name(name).to_python()
                head = next(i for i, r in enumerate(rows) if "Status" in r)
                status = [r[rows[head].index("Status")] for r in rows[head + 1 :] if any(str(v).strip() for v in r)]
                counts[name] = (len(status), *(status.count(s) for s in ("OK", "Flagged", "Ineligible", "Invalid")))
    return counts
