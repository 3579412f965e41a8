"""A workbook in, the returned workbook re-opened: the contract of README.md."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest
import python_calamine
from click.testing import CliRunner
from conftest import CERTIFICATE, ROOT, TRANSFER_HEADERS, foreign_formulas

from batch.cli import main
from batch.programs.transfers.sheet import TRANSFERS

SAMPLE = ROOT / "sample_inputs" / "transfers-2026-11.xlsx"
COMPUTED = ["Minimum Transfer ($)", "Consideration Ratio", "Certificate Transferred To Date ($)", "Status", "Findings"]


def grid(path: Path, sheet: str) -> list[list]:
    return python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name(sheet).to_python(skip_empty_area=False)


def nonblank(rows: list[list]) -> list[list]:
    return [r for r in rows if any(v != "" for v in r)]


def run(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


# the samples run (a module fixture) made once, on one worker
pytestmark = pytest.mark.xdist_group("end-to-end")


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("outbox")
    result = run(["run", str(SAMPLE.parent), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out / "transfers-2026-11.annotated.xlsx"


def test_returned_workbook_has_the_contract_sheets(sample_run):
    names = python_calamine.CalamineWorkbook.from_path(str(sample_run)).sheet_names
    assert names == ["Transfers", "Contacts", "Findings", "Summary", "Run", "Rules"]


def test_rows_in_equal_rows_out_and_values_unchanged(sample_run):
    for sheet in ("Transfers", "Contacts"):
        before, after = grid(SAMPLE, sheet), grid(sample_run, sheet)
        assert len(nonblank(before)) == len(nonblank(after))
        for r, row in enumerate(before):
            for c, v in enumerate(row):
                assert after[r][c] == v, (sheet, r + 1, c + 1)


def test_every_sample_sheet_returns_every_row_with_a_status(sample_run):
    from batch.programs import PROGRAMS

    intake = {m.name for m in PROGRAMS}
    outputs = sorted(sample_run.parent.glob("*.annotated.xlsx"))
    assert len(outputs) == len(list(SAMPLE.parent.glob("*.xlsx")))
    seen = set()
    for out in outputs:
        source = SAMPLE.parent / out.name.replace(".annotated", "")
        for name in python_calamine.CalamineWorkbook.from_path(str(source)).sheet_names:
            if name not in intake:
                continue
            seen.add(name)
            before, after = grid(source, name), grid(out, name)
            assert len(nonblank(before)) == len(nonblank(after)), (out.name, name)
            h = next(i for i, r in enumerate(after) if "Status" in r)
            status = after[h].index("Status")
            rows = nonblank(after[h + 1 :])
            assert rows and all(r[status] in ("OK", "Flagged", "Ineligible", "Invalid") for r in rows), (out.name, name)
    assert seen == intake


def test_computed_columns_follow_the_inputs(sample_run):
    g = grid(sample_run, "Transfers")
    header = g[3]
    assert header[10:15] == COMPUTED
    rows = {r[0]: dict(zip(header, r, strict=False)) for r in g[4:] if r[0]}
    # T-1006: 299,996 / 400,000 = 0.74999; running total of GNJ-2020-0077: 800,000 + 400,000
    t = rows["T-1006"]
    assert t["Consideration Ratio"] == pytest.approx(0.74999)
    assert t["Certificate Transferred To Date ($)"] == 1_200_000
    assert t["Minimum Transfer ($)"] == 25_000
    assert (t["Status"], t["Findings"]) == ("Flagged", "CONSIDERATION_BELOW_75PCT")
    # an Invalid row has blank computed columns
    bad = rows["T-5006"]
    assert bad["Status"] == "Invalid" and bad["Findings"] == "BAD_TYPE"
    assert bad["Minimum Transfer ($)"] == "" and bad["Consideration Ratio"] == ""
    # an info finding alone leaves the row OK
    assert (rows["T-2002"]["Status"], rows["T-2002"]["Findings"]) == ("OK", "SMALL_TRANSFER_ALLOWANCE_USED")
    assert {r["Status"] for r in rows.values()} <= {"OK", "Flagged", "Invalid"}


def test_formula_like_text_stays_text(sample_run):
    assert foreign_formulas(sample_run) == []  # the only formulas are the tool's own links in Findings
    g = grid(sample_run, "Transfers")
    texts = {v for row in g for v in row if isinstance(v, str)}
    assert {'=HYPERLINK("http://example.com","Buyer")', "@SUM(A1)", "+1 per board memo", "-see file"} <= texts
    assert '=IF(1,"not a formula")' in {v for row in grid(sample_run, "Contacts") for v in row}


def test_offending_cells_carry_comment_and_fill(sample_run):
    ws = openpyxl.load_workbook(sample_run)["Transfers"]
    cell = ws["H8"]  # T-1004: 24,999.99 of Grow NJ credit
    assert "TRANSFER_BELOW_MINIMUM" in cell.comment.text and "C.34:1B-248" in cell.comment.text
    assert cell.fill.fgColor.rgb.endswith("FFC7CE")  # red: error
    warn = ws["I15"]  # T-1011: consideration above face
    assert "CONSIDERATION_ABOVE_FACE" in warn.comment.text and warn.fill.fgColor.rgb.endswith("FFEB9C")  # amber
    assert ws["H5"].comment is None
    # frozen below the header row and right of the record-ID column (Transfer ID, column A)
    assert ws.freeze_panes == "B5" and ws.auto_filter.ref.startswith("A4:")
    assert ws["H5"].number_format == "#,##0.00" and ws["L5"].number_format == "0.00%"


def test_findings_sheet(sample_run):
    g = grid(sample_run, "Findings")
    assert g[0] == ["Sheet", "Row", "Record ID", "Column", "Code", "Severity", "Message", "Citation", "Cell", "Waived"]
    rows = [dict(zip(g[0], r, strict=False)) for r in g[1:]]
    sev = [r["Severity"] for r in rows]
    assert sev == sorted(sev, key=["error", "warning", "info"].index)
    below = next(r for r in rows if r["Code"] == "CONSIDERATION_BELOW_75PCT" and r["Record ID"] == "T-1010")
    assert below["Row"] == 14 and below["Column"] == "Consideration Received ($)"
    assert below["Message"] == (
        "Consideration $216,000.00 is 72.00% of $300,000.00 transferred; at least 75.00% is required (C.34:1B-248)."
    )
    assert below["Citation"] == "C.34:1B-248"
    assert all(r["Message"].endswith(".") and r["Citation"] for r in rows)
    unknown = next(r for r in rows if r["Code"] == "UNKNOWN_SHEET")
    assert unknown["Sheet"] == "Contacts" and unknown["Severity"] == "info"


def test_summary_and_run_sheets(sample_run):
    summary = grid(sample_run, "Summary")
    assert summary[0][0] == "Summary of transfers-2026-11.xlsx"
    flat = [v for row in summary for v in row]
    assert "Transfers by Program" in " ".join(str(v) for v in flat)
    with zipfile.ZipFile(sample_run) as z:
        assert any(n.startswith("xl/charts/chart") for n in z.namelist())
    run_sheet = {r[0]: r[1] for r in grid(sample_run, "Run") if r and r[0]}
    assert run_sheet["Input SHA-256"] == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert run_sheet["Input file"] == SAMPLE.name
    # the rules file's declared version (the sections it cites) and its content digest
    version = "C.34:1B-209.1, C.34:1B-248, C.52:27D-489f b.(3) (P.L.2014 c.63); C.34:1B-129 g.(3) (P.L.2022 c.134)"
    assert re.match(rf"^{re.escape(version)} \(sha256 [0-9a-f]{{12}}\)$", run_sheet["Rules version: Transfers"])


def _results(path: Path) -> tuple[list, list]:
    g = grid(path, "Transfers")
    header_at = next(i for i, r in enumerate(g) if "Status" in r)
    cols = [g[header_at].index(h) for h in COMPUTED]
    computed = [[r[c] for c in cols] for r in g[header_at + 1 :] if any(v != "" for v in r)]
    findings = [r[:-1] + [re.sub(r"\s+", " ", str(r[-1]))] for r in grid(path, "Findings")]
    return computed, findings


def test_returned_workbook_dropped_back_gives_the_same_result(sample_run, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(sample_run, inbox / sample_run.name)
    result = run(["run", str(inbox), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    second = tmp_path / "out" / sample_run.name
    assert _results(second) == _results(sample_run)
    # the computed columns were replaced, not appended again
    assert grid(second, "Transfers")[3] == grid(sample_run, "Transfers")[3]


def test_headers_in_other_spellings_order_and_position(workbook, tmp_path):
    base = ["T-1", "Grow NJ", "C-1", 50_000, "A LLC", "B Inc.", dt.date(2026, 1, 2), 24_000, 17_000]
    plain = workbook(
        {
            "Transfers": [
                [c.header for c in TRANSFERS.columns],
                base,
            ]
        },
        "plain.xlsx",
    )
    odd = workbook(
        {
            " transfers ": [
                ["Transfers register", None],
                ["as of 2026-01-31"],
                [],
                [
                    "CONSIDERATION RECEIVED",
                    "credit_amount_transferred",
                    "transfer date",
                    "Transferee",
                    "Transferor",
                    "Comment",
                    "Certificate Amount (USD)",
                    "certificate-id",
                    "PROGRAM",
                    "Transfer\nID",
                ],
                [17_000, "$24,000", "1/2/2026", "B Inc.", "A LLC", "keep me", "50,000", "C-1", "grow nj", "T-1"],
            ]
        },
        "odd.xlsx",
    )
    from batch.pipeline import process

    a, b = process(plain).intake[0], process(odd).intake[0]
    assert a.row_findings.tolist() == b.row_findings.tolist() == ["TRANSFER_BELOW_MINIMUM; CONSIDERATION_BELOW_75PCT"]
    assert a.computed.to_dict("records") == b.computed.to_dict("records")
    assert b.sheet.header_row == 3 and b.sheet.excel_rows.tolist() == [5]
    located = b.findings[b.findings["Row"].notna()]
    assert located["Row"].tolist() == [5, 5]
    # the extra column is kept, and said: UNKNOWN_COLUMN, a sheet finding (no row's Status changes)
    unknown = b.findings[b.findings["Code"] == "UNKNOWN_COLUMN"]
    assert unknown["Column"].tolist() == ["Comment"] and unknown["Row"].isna().all()


def test_blank_rows_skipped_but_rows_keep_their_numbers(workbook):
    from batch.pipeline import process

    header = TRANSFER_HEADERS
    row = lambda i, credit: [f"T-{i}", "Grow NJ", f"C-{i}", "A", "B", dt.date(2026, 1, 1), credit, credit, CERTIFICATE]  # noqa: E731
    path = workbook({"Transfers": [header, row(1, 30_000), [], [None, ""], row(2, 20_000)]})
    res = process(path).intake[0]
    assert res.counts["rows"] == 2
    assert res.findings["Row"].tolist() == [5]  # the second transfer is on Excel row 5


def test_missing_column_makes_every_row_invalid(workbook):
    from batch.pipeline import process

    header = [
        "Transfer ID",
        "Program",
        "Certificate ID",
        "Transferor",
        "Transfer Date",
        "Credit Amount Transferred ($)",
        "Consideration Received ($)",
    ]
    path = workbook(
        {"Transfers": [header, ["T-1", "BEIP", "C", "A", dt.date(2026, 1, 1), 1, 1], ["T-2", "BEIP", "C", "A", dt.date(2026, 1, 1), 1, 1]]}
    )
    res = process(path).intake[0]
    assert res.status.tolist() == ["Invalid", "Invalid"]
    assert res.findings[["Code", "Column"]].values.tolist() == [["MISSING_COLUMN", "Transferee"]]
    assert res.row_findings.tolist() == ["", ""]


def test_sheet_with_headers_only(workbook, tmp_path):
    header = TRANSFER_HEADERS
    path = workbook({"Transfers": [header]})
    result = run(["run", str(path), "--out", str(tmp_path / "out")])  # `run FILE`: the outbox may sit beside it
    assert result.exit_code == 0, result.output
    assert grid(tmp_path / "out" / "intake.annotated.xlsx", "Transfers")[0][-5:] == [
        "Status",
        "Findings",
        "Reviewer Decision",
        "Reviewer",
        "Reviewer Note",
    ]


def test_unreadable_file_is_reported_and_the_rest_still_runs(tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(SAMPLE, inbox / "good.xlsx")
    (inbox / "broken.xlsx").write_text("this is not a workbook")
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert (tmp_path / "out" / "good.annotated.xlsx").exists()
    assert not (tmp_path / "out" / "broken.annotated.xlsx").exists()
    failed = [line for line in result.output.splitlines() if line.startswith("failed  ")]
    assert len(failed) == 1 and "broken.xlsx" in failed[0] and "is not an Excel workbook" in failed[0]
    assert not list((tmp_path / "out").glob(".*partial"))


def test_validate_prints_the_findings():
    result = CliRunner().invoke(main, ["validate", str(SAMPLE)])
    assert result.exit_code == 1  # the sample has error findings
    for code in ("TRANSFER_BELOW_MINIMUM", "CONSIDERATION_BELOW_75PCT", "BEIP_RETRANSFER_PROHIBITED", "DUPLICATE_ID"):
        assert code in result.output
    assert "Transfers: 43 rows" in result.output


def test_usage_error_exit_2(tmp_path):
    assert CliRunner().invoke(main, ["run", str(tmp_path / "nowhere")]).exit_code == 2


def test_opens_in_libreoffice(sample_run, tmp_path):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if not soffice:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) is not installed; .ci/run installs libreoffice-calc")
        pytest.skip("LibreOffice not installed")
    proc = subprocess.run(
        [
            soffice,
            "--headless",
            f"-env:UserInstallation=file://{tmp_path}/lo-profile",
            "--convert-to",
            "csv",
            "--outdir",
            str(tmp_path),
            str(sample_run),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    csv = tmp_path / "transfers-2026-11.annotated.csv"
    assert csv.exists()
    lines = csv.read_text(encoding="utf-8", errors="replace").splitlines()
    assert any("T-1004" in line and "Flagged" in line for line in lines)
