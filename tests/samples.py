"""Build the bundled sample workbook `sample_inputs/transfers-2026-11.xlsx`.

Run `python tests/samples.py` to regenerate it; `tests/test_samples.py` checks the committed
file still holds what this script writes. About 40 realistic transfers across the four
programs, with a handful of each kind of violation and of bad input.
"""
from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import xlsxwriter

SAMPLE = Path(__file__).resolve().parent.parent / "sample_inputs" / "transfers-2026-11.xlsx"

HEADERS = [
    "Transfer ID", "Program", "Certificate ID", "Certificate Amount ($)", "Transferor", "Transferee",
    "Transfer Date", "Credit Amount Transferred ($)", "Consideration Received ($)", "Notes",
]

D = dt.date
# (id, program, certificate, certificate amount, transferor, transferee, date, credit, consideration, notes)
ROWS = [
    # Grow NJ: minimum $25,000 (C.34:1B-248)
    ("T-1001", "Grow NJ", "GNJ-2019-0142", 4_500_000, "Camden Waterfront Holdings LLC", "Liberty Harbor Insurance Co.", D(2026, 1, 15), 1_500_000, 1_357_500, "90.5 cents on the dollar"),
    ("T-1002", "Grow NJ", "GNJ-2019-0142", 4_500_000, "Camden Waterfront Holdings LLC", "Raritan Mutual Insurance", D(2026, 2, 3), 1_000_000, 912_000, ""),
    ("T-1003", "Grow NJ", "GNJ-2019-0142", 4_500_000, "Camden Waterfront Holdings LLC", "Meadowlands Bancorp", D(2026, 3, 20), 25_000, 22_500, "exactly the $25,000 minimum"),
    ("T-1004", "Grow NJ", "GNJ-2019-0142", 4_500_000, "Camden Waterfront Holdings LLC", "Passaic Valley Utilities Inc.", D(2026, 4, 1), 24_999.99, 22_000, "one cent under the minimum"),
    ("T-1005", "Grow NJ", "GNJ-2020-0077", 2_000_000, "Delaware River Logistics LLC", "Liberty Harbor Insurance Co.", D(2025, 11, 4), 800_000, 600_000, "75% on the nose"),
    ("T-1006", "Grow NJ", "GNJ-2020-0077", 2_000_000, "Delaware River Logistics LLC", "Hudson County Title Insurance", D(2025, 12, 9), 400_000, 299_996, "74.999%"),
    ("T-1007", "Grow NJ", "GNJ-2020-0077", 2_000_000, "Delaware River Logistics LLC", "Raritan Mutual Insurance", D(2026, 5, 12), 700_000, 616_000, ""),
    ("T-1008", "Grow NJ", "GNJ-2020-0077", 2_000_000, "Delaware River Logistics LLC", "Meadowlands Bancorp", D(2026, 6, 30), 150_000, 133_500, "takes the certificate past $2,000,000"),
    ("T-1009", "Grow NJ", "GNJ-2020-0077", "$2,000,000", "Delaware River Logistics LLC", "Pinelands Casualty Co.", "7/15/2026", "$100,000", "$89,000", "money and date typed as text"),
    ("T-1010", "Grow NJ", "GNJ-2021-0310", 750_000, "Garden State Pharma Inc.", "Liberty Harbor Insurance Co.", D(2026, 8, 18), 300_000, 216_000, "72%"),
    ("T-1011", "grow nj", "GNJ-2021-0310", 750_000, "Garden State Pharma Inc.", "Monmouth Energy Partners", D(2026, 9, 2), 200_000, 205_000, "price above face"),
    ("T-1012", "Grow NJ", "GNJ-2021-0310", None, "Garden State Pharma Inc.", "Ocean County Savings Bank", D(2026, 10, 5), 100_000, 91_000, "certificate amount left blank"),
    # Urban Transit Hub: $100,000 with one smaller transfer a tax period before 2014-10-24, $25,000 since (C.34:1B-209.1)
    ("T-2001", "Urban Transit Hub", "UTH-2011-0008", 12_000_000, "Newark Gateway Partners LLC", "Liberty Harbor Insurance Co.", D(2013, 3, 14), 2_000_000, 1_800_000, ""),
    ("T-2002", "Urban Transit Hub", "UTH-2011-0008", 12_000_000, "Newark Gateway Partners LLC", "Meadowlands Bancorp", D(2013, 6, 28), 60_000, 52_800, "first smaller transfer of 2013"),
    ("T-2003", "Urban Transit Hub", "UTH-2011-0008", 12_000_000, "Newark Gateway Partners LLC", "Raritan Mutual Insurance", D(2013, 11, 8), 80_000, 70_400, "second smaller transfer of 2013"),
    ("T-2004", "Urban Transit Hub", "UTH-2011-0008", 12_000_000, "Newark Gateway Partners LLC", "Raritan Mutual Insurance", D(2014, 2, 11), 90_000, 80_100, "2014: a new tax period"),
    ("T-2005", "Urban Transit Hub", "UTH-2011-0008", 12_000_000, "Newark Gateway Partners LLC", "Hudson County Title Insurance", D(2014, 10, 24), 25_000, 22_250, "new $25,000 minimum in force"),
    ("T-2006", "Urban Transit Hub", "UTH-2012-0021", 6_500_000, "Jersey City Harborside Tower LLC", "Liberty Harbor Insurance Co.", D(2016, 3, 31), 24_000, 21_600, ""),
    ("T-2007", "Urban Transit Hub", "UTH-2012-0021", 6_500_000, "Jersey City Harborside Tower LLC", "Pinelands Casualty Co.", D(2016, 4, 15), 3_000_000, 2_760_000, ""),
    ("T-2008", "Urban Transit Hub", "UTH-2012-0021", 6_500_000, "Jersey City Harborside Tower LLC", "Ocean County Savings Bank", D(2017, 1, 20), 3_500_000, 3_150_000, "certificate fully transferred"),
    # BEIP: $100,000 or the credit issued if less; a transferee may not re-transfer (C.34:1B-129 g.(3))
    ("T-3001", "BEIP", "BEIP-2018-0455", 480_000, "Princeton Biologics Corp.", "Liberty Harbor Insurance Co.", D(2024, 5, 6), 300_000, 276_000, ""),
    ("T-3002", "BEIP", "BEIP-2018-0455", 480_000, "Princeton Biologics Corp.", "Meadowlands Bancorp", D(2024, 7, 19), 60_000, 55_200, "under $100,000"),
    ("T-3003", "BEIP", "BEIP-2018-0455", 480_000, "Liberty Harbor Insurance Co.", "Raritan Mutual Insurance", D(2024, 9, 30), 120_000, 110_400, "buyer selling on"),
    ("T-3004", "BEIP", "BEIP-2019-0031", 85_000, "Trenton Precision Machining LLC", "Ocean County Savings Bank", D(2025, 3, 3), 85_000, 78_200, "whole $85,000 certificate"),
    ("T-3005", "BEIP", "BEIP-2019-0032", 90_000, "Vineland Glassworks Inc.", "Monmouth Energy Partners", D(2025, 4, 22), 45_000, 41_400, "half of a $90,000 certificate"),
    ("T-3006", "BEIP", "BEIP-2020-0119", 1_250_000, "Edison Data Centers LLC", "Hudson County Title Insurance", D(2025, 6, 13), 500_000, 460_000, ""),
    ("T-3007", "BEIP", "BEIP-2020-0119", 1_250_000, "Edison Data Centers LLC", "Pinelands Casualty Co.", D(2025, 8, 27), 100_000, 74_000, "74%"),
    ("T-3008", "BEIP", "BEIP-2020-0119", 1_250_000, "Edison Data Centers LLC", "Liberty Harbor Insurance Co.", D(2025, 10, 1), 650_000, 598_000, ""),
    # ERG Residential: no minimum (C.52:27D-489f b.(3))
    ("T-4001", "ERG Residential", "ERG-2016-0007", 18_000_000, "Asbury Park Residences Urban Renewal LLC", "Liberty Harbor Insurance Co.", D(2023, 2, 9), 5_000_000, 4_600_000, ""),
    ("T-4002", "ERG Residential", "ERG-2016-0007", 18_000_000, "Asbury Park Residences Urban Renewal LLC", "Meadowlands Bancorp", D(2023, 2, 9), 10_000, 9_200, "small transfers are allowed"),
    ("T-4003", "ERG Residential", "ERG-2016-0007", 18_000_000, "Asbury Park Residences Urban Renewal LLC", "Raritan Mutual Insurance", D(2024, 1, 12), 7_000_000, 5_040_000, "72%"),
    ("T-4004", "ERG Residential", "ERG-2017-0013", 9_500_000, "New Brunswick Station Apartments LLC", "Ocean County Savings Bank", D(2024, 6, 6), 4_000_000, 3_680_000, ""),
    ("T-4005", "ERG Residential", "ERG-2017-0013", 9_500_000, "New Brunswick Station Apartments LLC", "Hudson County Title Insurance", D(2025, 6, 6), 6_000_000, 5_520_000, "past the $9,500,000 certificate"),
    # bad input: each row is Invalid and shows one kind of validation finding
    ("T-5001", "Grow New Jersey", "GNJ-2022-0051", 1_000_000, "Paterson Textile Works LLC", "Meadowlands Bancorp", D(2026, 2, 2), 200_000, 180_000, "program not in the list"),
    ("T-5002", "Grow NJ", "GNJ-2022-0051", 1_000_000, "Paterson Textile Works LLC", None, D(2026, 3, 3), 150_000, 135_000, "transferee left blank"),
    ("T-5003", "Grow NJ", "GNJ-2022-0051", 1_000_000, "Paterson Textile Works LLC", "Raritan Mutual Insurance", "31/13/2026", 120_000, 108_000, "impossible date"),
    ("T-5004", "Grow NJ", "GNJ-2022-0051", 1_000_000, "Paterson Textile Works LLC", "Pinelands Casualty Co.", D(2026, 4, 4), -50_000, 45_000, "negative credit"),
    ("T-1002", "Grow NJ", "GNJ-2022-0051", 1_000_000, "Paterson Textile Works LLC", "Ocean County Savings Bank", D(2026, 5, 5), 90_000, 81_000, "ID used twice"),
    ("T-5006", "Grow NJ", "GNJ-2022-0051", 1_000_000, "Paterson Textile Works LLC", "Monmouth Energy Partners", D(2026, 6, 6), "about 95k", 85_000, "amount in words"),
    # formula-looking text comes back as text, never as a formula
    ("T-5007", "Grow NJ", "GNJ-2022-0051", 1_000_000, "Paterson Textile Works LLC", "=HYPERLINK(\"http://example.com\",\"Buyer\")", D(2026, 7, 7), 100_000, 90_000, "+1 per board memo"),
    ("T-5008", "Grow NJ", "GNJ-2022-0051", 1_000_000, "Paterson Textile Works LLC", "@SUM(A1)", D(2026, 8, 8), 100_000, 90_000, "-see file"),
]


def build(path: Path = SAMPLE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    wb.set_properties({"title": "Credit transfer certificates, November 2026 intake", "created": dt.datetime(2026, 11, 1)})
    bold = wb.add_format({"bold": True})
    money = wb.add_format({"num_format": "#,##0.00"})
    date = wb.add_format({"num_format": "m/d/yyyy"})
    ws = wb.add_worksheet("Transfers")
    ws.write_string(0, 0, "Tax credit transfer certificates: November 2026 intake", bold)
    ws.write_string(1, 0, "Prepared by the incentives finance team; amounts in US dollars")
    for j, h in enumerate(HEADERS):
        ws.write_string(3, j, h, bold)
        ws.set_column(j, j, 22)
    r = 4
    for i, row in enumerate(ROWS):
        if i == 20:
            r += 1  # a blank row between programs, as finance workbooks often have
        for j, v in enumerate(row):
            if v is None or v == "":
                continue
            if isinstance(v, str):
                ws.write_string(r, j, v)
            elif isinstance(v, dt.date):
                ws.write_datetime(r, j, v, date)
            else:
                ws.write_number(r, j, v, money)
        r += 1
    contacts = wb.add_worksheet("Contacts")
    contacts.write_row(0, 0, ["Name", "Role", "Email"], bold)
    contacts.write_row(1, 0, ["Dana Whitfield", "Incentives controller", "mailto:dana.whitfield@example.com"])
    contacts.write_row(2, 0, ["Luis Ortega", "Tax credit analyst", "=IF(1,\"not a formula\")"])
    wb.close()
    return path


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE))
