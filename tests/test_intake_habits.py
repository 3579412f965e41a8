"""How finance teams really fill the intake (README.md, "The intake workbook"): sheets named as they
please and routed by their header row, workbooks with no intake sheet at all, abbreviated and
misspelled headers, and totals rows at the foot of a sheet."""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
import python_calamine
import xlsxwriter
from click.testing import CliRunner
from conftest import CERTIFICATE, TRANSFER_HEADERS, write_workbook

from batch.cli import main
from batch.pipeline import _specs, process
from batch.programs import PROGRAMS
from batch.run.config import load
from batch.run.runner import run_batch
from batch.workbook.reading import OtherSheet, UnreadableWorkbook, read_workbook
from batch.workbook.writing import write
from validators.columns import normalize_header

AS_OF = dt.date(2026, 11, 30)
TRANSFERS = TRANSFER_HEADERS


def transfer(i: int, credit: float = 30_000, paid: float | None = None) -> list:
    return [
        f"T-{i}",
        "Grow NJ",
        f"C-{i}",
        "Seller LLC",
        "Buyer Inc.",
        dt.date(2026, 1, 5),
        credit,
        credit if paid is None else paid,
        CERTIFICATE,
    ]


def grid(path: Path, sheet: str) -> list[list]:
    return python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_name(sheet).to_python(skip_empty_area=False)


def codes(result) -> list[tuple]:
    return [(f.Sheet, f.Code) for f in result.findings.itertuples()]


def finding(result, code: str):
    rows = result.findings[result.findings["Code"] == code]
    assert len(rows) == 1, result.findings[["Sheet", "Code", "Message"]].values.tolist()
    return rows.iloc[0]


# --- routing by the header row -------------------------------------------------------------------


def test_a_sheet_named_as_the_team_pleases_is_routed_by_its_header_row(tmp_path):
    src = write_workbook(
        tmp_path / "nov.xlsx",
        {"Transfers (Nov)": [["Transfers register, November"], ["as of 2026-11-30"], TRANSFERS, transfer(1), transfer(2, 30_000, 20_000)]},
    )
    result = process(src, as_of=AS_OF)
    (sheet,) = result.intake
    assert sheet.sheet.name == "Transfers (Nov)" and sheet.sheet.spec.name == "Transfers"
    assert sheet.sheet.header_row == 2  # the header row is found for the candidate, under the title lines
    assert sheet.status.tolist() == ["OK", "Flagged"]  # computed as a Transfers sheet
    routed = finding(result, "SHEET_ROUTED_BY_HEADERS")
    assert routed["Severity"] == "info" and routed["Sheet"] == "Transfers (Nov)" and routed["Row"] is pd.NA
    assert "names 8 of the 8 required columns of Transfers" in routed["Message"]
    assert "(Transfer ID, Program, Certificate ID, Transferor, Transferee, Transfer Date, " in routed["Message"]
    assert "UNKNOWN_SHEET" not in result.findings["Code"].tolist()
    # returned with the tool's columns, and dropped back it gives the same result
    out = write(result, tmp_path / "out" / "nov.annotated.xlsx")
    assert grid(out, "Transfers (Nov)")[2][-5:] == ["Status", "Findings", "Reviewer Decision", "Reviewer", "Reviewer Note"]
    again = process(out, as_of=AS_OF)
    assert again.intake[0].status.tolist() == ["OK", "Flagged"]
    assert again.findings["Message"].tolist() == result.findings["Message"].tolist()


def test_a_csv_of_any_name_is_routed_by_its_header_row(tmp_path):
    src = tmp_path / "export 2026-11-30.csv"
    src.write_text(",".join(TRANSFERS) + '\nT-1,Grow NJ,C-1,A,B,2026-01-05,"$30,000","27,000","1,000,000"\n', encoding="utf-8")
    result = process(src, as_of=AS_OF)
    assert [(s.sheet.name, s.sheet.spec.name) for s in result.intake] == [("export 2026-11-30", "Transfers")]
    assert result.intake[0].status.tolist() == ["OK"]
    assert ("export 2026-11-30", "SHEET_ROUTED_BY_HEADERS") in codes(result)


def test_a_routed_sheet_missing_a_required_column_is_validated_like_any_other(tmp_path):
    # 7 of the 8 required columns of Transfers (and the Certificate Amount): routed (at least half), then MISSING_COLUMN
    headers = [h for h in TRANSFERS if h != "Transferee"]
    row = [v for h, v in zip(TRANSFERS, transfer(1), strict=True) if h != "Transferee"]
    result = process(write_workbook(tmp_path / "a.xlsx", {"Dec": [headers, row]}), as_of=AS_OF)
    assert result.intake[0].status.tolist() == ["Invalid"]
    assert "names 7 of the 8 required columns of Transfers" in finding(result, "SHEET_ROUTED_BY_HEADERS")["Message"]
    assert finding(result, "MISSING_COLUMN")["Column"] == "Transferee"


# name, headers, the program routed to (None: not routed), why
ROUTING_CASES = [
    ("all of one program", ["Grant ID", "Accrual Year", "Approved Amount ($)"], "BEIP_Conversion", "3/3 beats BEIP 1/5 and BRRAP 1/5"),
    (
        "highest share wins",
        ["Grant ID", "Business Name", "Employees Relocated or Retained", "Yearly Tax Credit Amount ($)", "Agreement Date"],
        "BRRAP",
        "BRRAP 4/5 beats BEIP 2/5",
    ),
    (
        "a tie on share goes to the program with more named",
        ["Project ID", "Application Date", "County", "Area", "Business Type", "Category"],
        "GrowNJ",
        "GrowNJ 5/10 and ERG_Residential 3/6 are both one half; GrowNJ names 5",
    ),
    ("exactly half is enough", ["Project ID", "Category", "Application Date", "Developer"], "ERG_Residential", "3/6"),
    ("less than half is not", ["Grant ID", "Agreement Date", "Notes"], None, "BEIP 2/5, BRRAP 1/5, BEIP_Conversion 1/3"),
    (
        "abbreviated headers count",
        ["Project #", "Tax Period", "Approval Date", "Annual Credit ($)", "Tax Liability"],
        "GrowNJ_Compliance",
        "5/9",
    ),
]


@pytest.mark.parametrize("what,headers,program,why", ROUTING_CASES, ids=[c[0] for c in ROUTING_CASES])
def test_routing_by_share_of_required_columns(tmp_path, what, headers, program, why):
    src = write_workbook(tmp_path / "r.xlsx", {"Our sheet": [headers], "Transfers": [TRANSFERS, transfer(1)]})
    book = read_workbook(src, {k: m.schema for k, m in _specs().items()})
    ours = book.sheets[0]
    if program is None:
        assert isinstance(ours, OtherSheet) and ours.not_routed is None, why
        assert ("Our sheet", "UNKNOWN_SHEET") in codes(process(src, as_of=AS_OF))
    else:
        assert not isinstance(ours, OtherSheet) and ours.spec.name == program, why
        assert ours.routed["program_sheet"] == program


def test_a_tie_on_share_and_count_is_not_routed_and_names_the_candidates(tmp_path):
    # Grant ID, Agreement Date, Grant Form: 3 of BEIP's 5; Grant ID, Business Name, Employees Relocated
    # or Retained: 3 of BRRAP's 5
    tie = ["Grant ID", "Agreement Date", "Grant Form", "Business Name", "Employees Relocated or Retained"]
    cells = [tie, ["G-1", dt.date(2015, 1, 1), "Cash", "Acme", 60]]
    src = write_workbook(tmp_path / "tie.xlsx", {"Grants": cells, "Transfers": [TRANSFERS, transfer(1)]})
    result = process(src, as_of=AS_OF)
    assert [s.sheet.name for s in result.intake] == ["Transfers"]
    not_routed = finding(result, "SHEET_NOT_ROUTED")
    assert not_routed["Severity"] == "warning" and not_routed["Sheet"] == "Grants"
    assert "names 3 of the 5 required columns of each of BEIP and BRRAP" in not_routed["Message"]
    assert "NOT checked" in not_routed["Message"]
    assert "UNKNOWN_SHEET" not in result.findings["Code"].tolist()
    out = write(result, tmp_path / "tie.annotated.xlsx")
    assert grid(out, "Grants") == grid(src, "Grants")  # returned as it came, no tool columns


def test_the_template_sheets_and_the_tools_sheets_are_never_routed(tmp_path):
    src = write_workbook(
        tmp_path / "t.xlsx",
        {"Instructions": [TRANSFERS, transfer(9)], "lists": [TRANSFERS], "Transfers": [TRANSFERS, transfer(1)]},
    )
    result = process(src, as_of=AS_OF)
    assert [s.sheet.name for s in result.intake] == ["Transfers"]
    assert [(f.Sheet, f.Code) for f in result.findings.itertuples() if f.Sheet != "Transfers"] == [
        ("Instructions", "UNKNOWN_SHEET"),
        ("lists", "UNKNOWN_SHEET"),
    ]
    # the tool's own Findings sheet of a returned workbook names no program's columns, and is dropped
    out = write(result, tmp_path / "t.annotated.xlsx")
    assert [s.sheet.name for s in process(out, as_of=AS_OF).intake] == ["Transfers"]


# --- a workbook in which nothing is computed -----------------------------------------------------

REASON = (
    # the intake sheets in the contract's order (the order of batch.programs)
    f"no intake sheet: found sheets Sheet1, Contacts; an intake sheet is named {', '.join(p.name for p in PROGRAMS)} "
    "or has the headers of one."
)


def test_a_workbook_without_an_intake_sheet_is_refused_with_the_sheets_it_has(tmp_path):
    src = write_workbook(tmp_path / "contacts.xlsx", {"Sheet1": [], "Contacts": [["Name", "Email"], ["Dana", "d@x.test"]]})
    with pytest.raises(UnreadableWorkbook) as err:
        process(src, as_of=AS_OF)
    assert str(err.value) == REASON


def test_a_workbook_whose_only_candidate_was_not_routed_is_refused(tmp_path):
    tie = ["Grant ID", "Agreement Date", "Grant Form", "Business Name", "Employees Relocated or Retained"]
    src = write_workbook(tmp_path / "tie.xlsx", {"Grants": [tie]})
    with pytest.raises(UnreadableWorkbook, match=r"^no intake sheet: found sheets Grants \(its headers fit BEIP and BRRAP equally\);"):
        process(src, as_of=AS_OF)


def test_the_refused_workbook_goes_to_failed_and_the_run_exits_1(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    write_workbook(inbox / "contacts.xlsx", {"Sheet1": [], "Contacts": [["Name", "Email"], ["Dana", "d@x.test"]]})
    write_workbook(inbox / "good.xlsx", {"Transfers": [TRANSFERS, transfer(1)]})
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1), echo=lambda *_: None)
    files = {f.name: f for f in outcome.files}
    assert files["good.xlsx"].status == "processed"
    assert (files["contacts.xlsx"].status, files["contacts.xlsx"].reason) == ("failed", REASON)
    assert (inbox / "failed" / outcome.run_id / "contacts.xlsx.reason.txt").read_text().strip() == REASON
    assert not (outbox / "contacts.annotated.xlsx").exists()
    # the command line: exit status 1
    write_workbook(inbox / "again.xlsx", {"Notes": [["Note"], ["nothing to check"]]})
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox)])
    assert result.exit_code == 1, result.output
    assert "no intake sheet: found sheets Notes;" in result.output


# --- header abbreviations and unknown columns ----------------------------------------------------


@pytest.mark.parametrize(
    "written,field",
    [
        ("Withholdings %", "Withholdings Percentage"),
        ("Withholdings Pct.", "Withholdings Percentage"),
        ("withholdings_pct", "Withholdings Percentage"),
        ("Withholdings Percent", "Withholdings Percentage"),
        ("On-Site Solar 50 %", "On-Site Solar 50 Percent"),
        ("New FT Jobs", "New Full-Time Jobs"),
        ("Retained FT Jobs", "Retained Full-Time Jobs"),
        ("Credit Amt Transferred ($)", "Credit Amount Transferred ($)"),
        ("Project #", "Project ID"),
        ("Grant #", "Grant ID"),
    ],
)
def test_common_abbreviations_name_the_field(written, field):
    assert normalize_header(written) == normalize_header(field)


def test_abbreviations_do_not_merge_fields():
    from batch.programs import PROGRAMS

    for m in PROGRAMS:
        keys = [c.key for c in m.schema.columns]
        assert len(keys) == len(set(keys)), m.name


BEIP_ROW = {
    "Grant ID": "B-1",
    "Business Name": "Acme",
    "Agreement Date": dt.date(2015, 3, 1),
    "Grant Form": "Cash",
    "Withholdings Percentage": 0.5,
    "Annual Withholdings ($)": 400_000,
    "Grant Term (years)": 10,
    "New Employees": 50,
}


def beip_sheet(rename: dict[str, str], extra: dict[str, object] | None = None) -> list[list]:
    headers = [rename.get(h, h) for h in BEIP_ROW] + list(extra or {})
    return [headers, [*BEIP_ROW.values(), *(extra or {}).values()]]


def test_an_abbreviated_header_is_read_as_its_field(tmp_path):
    plain = process(write_workbook(tmp_path / "plain.xlsx", {"BEIP": beip_sheet({})}), as_of=AS_OF)
    short = process(
        write_workbook(tmp_path / "short.xlsx", {"BEIP": beip_sheet({"Withholdings Percentage": "Withholdings %"})}), as_of=AS_OF
    )
    assert "UNKNOWN_COLUMN" not in short.findings["Code"].tolist()
    assert short.intake[0].computed.to_dict("records") == plain.intake[0].computed.to_dict("records")
    assert short.intake[0].status.tolist() == plain.intake[0].status.tolist()


def test_a_misspelled_header_is_an_unknown_column_with_the_closest_field_names(tmp_path):
    plain = process(write_workbook(tmp_path / "plain.xlsx", {"BEIP": beip_sheet({})}), as_of=AS_OF)
    src = write_workbook(tmp_path / "typo.xlsx", {"BEIP": beip_sheet({"Withholdings Percentage": "Witholdings Percentge"}, {"Notes": "x"})})
    result = process(src, as_of=AS_OF)
    unknown = result.findings[result.findings["Code"] == "UNKNOWN_COLUMN"]
    assert unknown["Column"].tolist() == ["Witholdings Percentge", "Notes"]
    assert (unknown["Severity"] == "warning").all() and unknown["Row"].isna().all()
    typo, notes = unknown["Message"].tolist()
    assert typo.startswith('Column E "Witholdings Percentge" matches no column of sheet BEIP; did you mean `Withholdings Percentage`')
    assert "kept and returned as it came" in typo
    assert 'Column I "Notes" matches no column of sheet BEIP and resembles none' in notes
    # a sheet finding: no row's Status changes because of it (the row lost its Withholdings
    # Percentage, which is what the calculator sees)
    res = result.intake[0]
    assert "UNKNOWN_COLUMN" not in res.row_findings.iloc[0]
    assert (
        res.status.tolist()
        == process(
            write_workbook(
                tmp_path / "without.xlsx",
                {
                    "BEIP": [
                        [h for h in BEIP_ROW if h != "Withholdings Percentage"],
                        [v for h, v in BEIP_ROW.items() if h != "Withholdings Percentage"],
                    ]
                },
            ),
            as_of=AS_OF,
        )
        .intake[0]
        .status.tolist()
    )
    assert plain.intake[0].status.tolist() == ["OK"]
    # kept and returned as they came
    out = write(result, tmp_path / "typo.annotated.xlsx")
    back = grid(out, "BEIP")
    assert back[0][4] == "Witholdings Percentge" and back[1][4] == 0.5 and back[1][8] == "x"


def test_a_missing_required_column_names_the_unknown_column_that_resembles_it(tmp_path):
    headers = ["Transferree" if h == "Transferee" else h for h in TRANSFERS]
    result = process(write_workbook(tmp_path / "m.xlsx", {"Transfers": [headers, transfer(1)]}), as_of=AS_OF)
    missing = finding(result, "MISSING_COLUMN")
    assert missing["Column"] == "Transferee"
    assert 'The sheet\'s column "Transferree" resembles it' in missing["Message"]
    assert "did you mean `Transferee`, " in finding(result, "UNKNOWN_COLUMN")["Message"]  # the closest first
    assert result.intake[0].status.tolist() == ["Invalid"]
    # without a resembling column, the plain message
    headers = [h for h in TRANSFERS if h != "Transferee"]
    row = [v for h, v in zip(TRANSFERS, transfer(1), strict=True) if h != "Transferee"]
    plain = finding(process(write_workbook(tmp_path / "p.xlsx", {"Transfers": [headers, row]}), as_of=AS_OF), "MISSING_COLUMN")
    assert "resembles" not in plain["Message"]


def test_the_tools_own_columns_are_never_unknown(tmp_path):
    headers = [*TRANSFERS, "Minimum Transfer ($)", "Status", "Findings", "Reviewer Decision", "Reviewer", "Reviewer Note"]
    row = [*transfer(1), 25_000, "OK", "", "Approved", "JD", "seen"]
    result = process(write_workbook(tmp_path / "r.xlsx", {"Transfers": [headers, row]}), as_of=AS_OF)
    assert "UNKNOWN_COLUMN" not in result.findings["Code"].tolist()
    # and a returned workbook dropped back has none either
    out = write(result, tmp_path / "r.annotated.xlsx")
    assert "UNKNOWN_COLUMN" not in process(out, as_of=AS_OF).findings["Code"].tolist()


def test_cells_under_a_blank_header_are_an_unknown_column(tmp_path):
    rows = [[*TRANSFERS, None, "Notes"], [*transfer(1), "orphan", ""], transfer(2)]
    result = process(write_workbook(tmp_path / "b.xlsx", {"Transfers": rows}), as_of=AS_OF)
    messages = result.findings.loc[result.findings["Code"] == "UNKNOWN_COLUMN", "Message"].tolist()
    assert messages[0].startswith("Column J holds cells but has no header")
    assert messages[1].startswith('Column K "Notes" matches no column')
    assert result.intake[0].status.tolist() == ["OK", "OK"]


# --- totals rows ---------------------------------------------------------------------------------


def _counts_agree(result, out: Path, sheet: str, counted: int, totals: int) -> None:
    """The returned workbook, the Findings sheet, the Run sheet and SheetResult.counts agree."""
    res = next(r for r in result.intake if r.sheet.name == sheet)
    assert res.counts["rows"] == counted and res.totals == totals
    assert sum(res.counts[s] for s in ("OK", "Flagged", "Ineligible", "Invalid")) == counted
    g = grid(out, sheet)
    h = res.sheet.header_row
    status, found = g[h].index("Status"), g[h].index("Findings")
    rows = [r for r in g[h + 1 :] if any(v != "" for v in r)]
    assert len(rows) == counted + totals  # rows read = rows returned
    assert sum(r[status] == "" for r in rows) == totals
    assert sum(r[found] == "TOTALS_ROW_SKIPPED" for r in rows) == totals
    findings = grid(out, "Findings")
    assert sum(r[0] == sheet and r[4] == "TOTALS_ROW_SKIPPED" for r in findings) == totals
    run = next(r for r in grid(out, "Run") if r and r[0] == sheet)
    header = next(r for r in grid(out, "Run") if r and r[0] == "Sheet")
    run = dict(zip(header, run, strict=False))
    assert run["Rows read"] == counted and run["Totals rows skipped"] == totals
    assert run["Rows computed"] == counted - res.counts["Invalid"]
    assert len(result.records()[lambda d: d["sheet"] == res.program.name]) == counted


@pytest.mark.parametrize("word", ["Total", "TOTALS", "Grand Total", "grand  total:", "sum", " Sum "])
def test_a_row_whose_id_says_total_is_skipped(tmp_path, word):
    totals = [word, None, None, None, None, None, 60_000, 50_000]
    src = write_workbook(tmp_path / "t.xlsx", {"Transfers": [TRANSFERS, transfer(1), transfer(2, 30_000, 20_000), totals]})
    result = process(src, as_of=AS_OF)
    res = result.intake[0]
    assert res.status.tolist() == ["OK", "Flagged", ""]
    assert res.row_findings.tolist() == ["", "CONSIDERATION_BELOW_75PCT", "TOTALS_ROW_SKIPPED"]
    assert res.computed.iloc[2].isna().all()  # not computed
    skipped = finding(result, "TOTALS_ROW_SKIPPED")
    assert (skipped["Row"], skipped["Column"], skipped["Severity"]) == (4, "Transfer ID", "info")
    assert skipped["Record ID"] == word.strip()
    assert f'Transfer ID "{word.strip()}" marks a totals row' in skipped["Message"]
    out = write(result, tmp_path / "t.annotated.xlsx")
    assert grid(out, "Transfers")[3][:8] == [word, "", "", "", "", "", 60_000, 50_000]  # as it came
    _counts_agree(result, out, "Transfers", counted=2, totals=1)
    ws = openpyxl.load_workbook(out)["Transfers"]
    assert "TOTALS_ROW_SKIPPED" in ws["A4"].comment.text  # at its record-ID cell
    again = process(out, as_of=AS_OF).intake[0]  # a round trip gives the same result
    assert again.status.tolist() == res.status.tolist() and again.row_findings.tolist() == res.row_findings.tolist()


def test_a_record_id_merely_containing_total_is_a_record(tmp_path):
    src = write_workbook(tmp_path / "t.xlsx", {"Transfers": [TRANSFERS, ["Total-1", *transfer(1)[1:]], ["Sum 2", *transfer(2)[1:]]]})
    assert process(src, as_of=AS_OF).intake[0].status.tolist() == ["OK", "OK"]


def test_totals_rows_are_not_checked_across_rows(tmp_path):
    # two subtotal rows with the same ID are not DUPLICATE_ID; their blank cells are not MISSING_VALUE
    sub = ["Total", None, None, None, None, None, 30_000, 30_000]
    rows = [TRANSFERS, transfer(1), sub, transfer(2), sub, ["Grand Total", None, None, None, None, None, 60_000, 60_000]]
    result = process(write_workbook(tmp_path / "t.xlsx", {"Transfers": rows}), as_of=AS_OF)
    res = result.intake[0]
    assert res.status.tolist() == ["OK", "", "OK", "", ""]
    assert set(result.findings["Code"]) == {"TOTALS_ROW_SKIPPED"}
    out = write(result, tmp_path / "t.annotated.xlsx")
    _counts_agree(result, out, "Transfers", counted=2, totals=3)
    summary = next(r for r in grid(out, "Summary") if r and r[0] == "Transfers")  # the first table's
    header = next(r for r in grid(out, "Summary") if r and r[0] == "Sheet")
    assert dict(zip(header, summary, strict=False))["Rows"] == 2


def _formula_totals(path: Path, g_formula: str, h_formula: str | None, h_value=None) -> Path:
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("Transfers")
    date = wb.add_format({"num_format": "yyyy-mm-dd"})
    ws.write_row(0, 0, TRANSFERS)
    for r in (1, 2):
        row = transfer(r)
        ws.write_row(r, 0, row[:5])
        ws.write_datetime(r, 5, dt.datetime(2026, 1, 5), date)
        ws.write_row(r, 6, row[6:])
    ws.write_formula(3, 6, g_formula, None, 60_000)
    if h_formula:
        ws.write_formula(3, 7, h_formula, None, 60_000)
    elif h_value is not None:
        ws.write_number(3, 7, h_value)
    wb.close()
    return path


@pytest.mark.parametrize(
    "g,h,value,is_totals",
    [
        ("=SUM(G2:G3)", "=SUM(H2:H3)", None, True),
        ("=SUBTOTAL(9,G2:G3)", "=subtotal(109,H2:H3)", None, True),
        ("=SUM(G2:G3)", None, None, True),  # the only filled money cell
        ("=SUM(G2:G3)", None, 60_000, False),  # one amount typed in: a record
        ("=SUM(G2:G3)", "=G4*0.9", None, False),  # another formula: a record
        ('=SUMIF(B2:B3,"Grow NJ",G2:G3)', "=SUM(H2:H3)", None, False),
        ("=SUM(I4:J4)", "=SUM($I$4,J4)", None, False),  # a record's own parts, in its own row: no total
        ("=SUM(G:G)", "=SUBTOTAL(9,$H$2:$H$3)", None, True),
    ],
)
def test_a_row_of_sum_formulas_is_a_totals_row(tmp_path, g, h, value, is_totals):
    result = process(_formula_totals(tmp_path / "f.xlsx", g, h, value), as_of=AS_OF)
    res = result.intake[0]
    if is_totals:
        assert res.status.tolist() == ["OK", "OK", ""] and res.row_findings.iloc[2] == "TOTALS_ROW_SKIPPED"
        skipped = finding(result, "TOTALS_ROW_SKIPPED")
        assert skipped["Column"] == "Transfer ID" and skipped["Row"] == 4
        assert "SUM or SUBTOTAL formula" in skipped["Message"]
        _counts_agree(result, write(result, tmp_path / "f.annotated.xlsx"), "Transfers", counted=2, totals=1)
    else:
        assert res.status.iloc[2] == "Invalid" and res.counts["rows"] == 3


def test_shared_sum_formulas_mark_a_totals_row(tmp_path):
    """Excel writes a formula filled right as a shared formula: the second cell holds no text."""
    src = _formula_totals(tmp_path / "plain.xlsx", "=SUM(G2:G3)", "=SUM(H2:H3)")
    shared = tmp_path / "shared.xlsx"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(shared, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b"<f>SUM(G2:G3)</f>", b'<f t="shared" ref="G4:H4" si="0">SUM(G2:G3)</f>')
                data = data.replace(b"<f>SUM(H2:H3)</f>", b'<f t="shared" si="0"/>')
                assert re.search(rb'<c r="H4"><f t="shared" si="0"/>', data)
            zout.writestr(item, data)
    assert process(shared, as_of=AS_OF).intake[0].status.tolist() == ["OK", "OK", ""]


def test_a_totals_row_of_formulas_without_values_is_a_totals_row(tmp_path):
    """openpyxl saves formulas without a calculated value: the row reads empty but is no blank row."""
    src = tmp_path / "openpyxl.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Transfers"
    for row in (TRANSFERS, transfer(1), transfer(2)):
        ws.append(row)
    ws.append([None] * 6 + ["=SUM(G2:G3)", "=SUM(H2:H3)"])
    wb.save(src)
    result = process(src, as_of=AS_OF)
    assert result.intake[0].status.tolist() == ["OK", "OK", ""]
    assert result.findings["Code"].tolist() == ["TOTALS_ROW_SKIPPED"]  # its formulas are not read, so not reported


def test_in_a_csv_only_the_id_text_marks_a_totals_row(tmp_path):
    src = tmp_path / "Transfers.csv"
    src.write_text(
        ",".join(TRANSFERS) + "\nT-1,Grow NJ,C-1,A,B,2026-01-05,30000,30000,1000000\n"
        "T-2,Grow NJ,C-2,A,B,2026-01-05,=SUM(G2:G3),=SUM(H2:H3),1000000\n"
        "Total,,,,,,60000,60000\n",
        encoding="utf-8",
    )
    res = process(src, as_of=AS_OF).intake[0]
    assert res.status.tolist() == ["OK", "Invalid", ""]  # "=SUM(...)" in a CSV is text, not a formula


def test_the_run_line_does_not_count_totals_rows(tmp_path):
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    write_workbook(inbox / "t.xlsx", {"Transfers": [TRANSFERS, transfer(1), ["Total", None, None, None, None, None, 30_000, 30_000]]})
    outcome = run_batch(load(cwd=tmp_path, inbox=inbox, outbox=outbox, workers=1), echo=lambda *_: None)
    (file,) = outcome.files
    assert file.status == "processed"
    assert file.line == "done  t.xlsx  1 rows: 1 OK, 0 flagged, 0 ineligible, 0 invalid; 0 errors"
