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

SAMPLES = Path(__file__).resolve().parent.parent / "sample_inputs"
SAMPLE = SAMPLES / "transfers-2026-11.xlsx"
GROW_NJ_SAMPLE = SAMPLES / "grow-nj-2026-11.xlsx"
GRANTS_SAMPLE = SAMPLES / "beip-brrap-erg-2026-11.xlsx"
COMPLIANCE_SAMPLE = SAMPLES / "emerge-gsgz-compliance-2026-11.xlsx"

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


def write_value(ws, r: int, c: int, v, date_format, number_format) -> None:
    """Text as text (never a formula), dates as dates, numbers with the given format; blanks skipped."""
    if v is None or v == "":
        return
    if isinstance(v, str):
        ws.write_string(r, c, v)
    elif isinstance(v, dt.date):
        ws.write_datetime(r, c, v, date_format)
    else:
        ws.write_number(r, c, v, number_format)


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
            write_value(ws, r, j, v, date, money)
        r += 1
    contacts = wb.add_worksheet("Contacts")
    contacts.write_row(0, 0, ["Name", "Role", "Email"], bold)
    contacts.write_row(1, 0, ["Dana Whitfield", "Incentives controller", "mailto:dana.whitfield@example.com"])
    contacts.write_row(2, 0, ["Luis Ortega", "Tax credit analyst", "=IF(1,\"not a formula\")"])
    wb.close()
    return path


GROW_NJ_HEADERS = [
    "Project ID", "Business Name", "Statute Version", "Application Date", "County", "Area", "Mega Project",
    "Disaster Recovery Project", "Replaces Disaster-Damaged Facility", "Tourism District", "Business Type",
    "Targeted Industry", "Premises Type", "Gross Leasable Area (sq ft)", "Capital Investment ($)", "New Full-Time Jobs",
    "Retained Full-Time Jobs", "Jobs New to Municipality", "Average Salary ($)", "Benchmark Salary ($)",
    "Municipal Revitalization Index", "Deep Poverty Pocket", "Qualified Incubator", "Mixed-Use Moderate Income Housing",
    "Transit Oriented Development", "LEED Silver or Remediation", "US HQ of Automobile Manufacturer", "Same Municipality",
    "Light Rail Half Mile", "Marine Terminal South Jersey Port District", "Redevelopment Area Near Highways",
    "On-Site Solar 50 Percent", "Vacant Million Square Foot Building", "College Collaboration",
    "Doctoral University Collaboration", "Redevelopment or Rehabilitation Area", "Final Point of Sale Retail",
    "Annual Withholdings ($)", "Amount Necessary ($)", "Net Benefit ($)", "Eligibility Period (years)",
]
GROW_NJ_BASE = {
    "Statute Version": "2017", "Business Type": "Other", "Premises Type": "Non-Industrial Rehab",
    "Eligibility Period (years)": 10,
}
Y = "Y"
# Each project: the columns that differ from GROW_NJ_BASE. About 30 projects across every area type
# and both statute versions, with each kind of finding at least once.
GROW_NJ_ROWS = [
    # Urban Transit Hub
    dict(pid="GNJ-1401", name="Harborview Financial Services LLC", v="2014", d=D(2014, 11, 20), county="Hudson", area="Urban Transit Hub",
         bt="Other", tgt=Y, prem="Non-Industrial Rehab", gla=180_000, capex=36_000_000, new=450, ret=600, avg=118_000, bench=76_000,
         TOD=Y, LR=Y, wh=38_000_000, nb=210_000_000),
    dict(pid="GNJ-1402", name="Newark Data Exchange Inc.", v="2014", d=D(2015, 6, 2), county="Essex", area="Urban Transit Hub",
         bt="Technology Startup", tgt=Y, prem="Non-Industrial New", gla=60_000, capex=9_500_000, new=120, ret=0, avg=96_000,
         bench=71_000, TOD=Y, wh=3_100_000, nb=21_000_000),
    dict(pid="GNJ-1701", name="Meridian Pharma US Corp.", d=D(2018, 3, 14), county="Middlesex", area="Urban Transit Hub",
         bt="Manufacturing", tgt=Y, prem="Industrial Rehab", gla=250_000, capex=22_000_000, new=300, ret=420, avg=104_000,
         bench=70_500, LEED=Y, wh=24_000_000, an=4_500_000, nb=160_000_000),
    dict(pid="GNJ-1702", name="Trenton Transit Labs LLC", d=D(2019, 7, 1), county="Mercer", area="Urban Transit Hub",
         bt="Technology Startup", tgt=Y, prem="Non-Industrial Rehab", gla=40_000, capex=3_000_000, new=60, ret=0,
         wh=2_000_000, nb=12_000_000),  # filed on the deadline
    # Growth Zone
    dict(pid="GNJ-1403", name="Delaware Bay Logistics Co.", v="2014", d=D(2015, 2, 9), county="Camden", area="Growth Zone",
         bt="Other", prem="Industrial New", gla=400_000, capex=40_000_000, new=210, ret=0, avg=58_000, bench=52_000,
         MRI=520, HWY=Y, wh=4_000_000, nb=95_000_000),
    dict(pid="GNJ-1703", name="Camden Waterfront Holdings LLC", d=D(2017, 5, 30), county="Camden", area="Growth Zone",
         bt="Other", tgt=Y, prem="Non-Industrial New", gla=220_000, capex=56_000_000, new=180, ret=640, avg=97_000,
         bench=55_000, MRI=562, TOD=Y, LEED=Y, SOLAR=Y, wh=31_000_000, an=9_000_000, nb=400_000_000),
    dict(pid="GNJ-1704", name="Paterson Textile Works LLC", d=D(2018, 10, 1), county="Passaic", area="Growth Zone",
         bt="Manufacturing", tgt=Y, prem="Industrial Rehab", gla=90_000, capex=1_500_000, new=40, ret=15, avg=51_000,
         bench=48_000, wh=900_000, nb=9_000_000),
    dict(pid="GNJ-1705", name="Passaic River Foods Market", d=D(2018, 4, 17), county="Passaic", area="Growth Zone",
         bt="Other", prem="Non-Industrial New", gla=160_000, capex=24_000_000, new=140, ret=0, retail=Y, wh=2_000_000,
         nb=30_000_000),  # supermarket in a Growth Zone: retail allowed
    # Growth Zone (MRERA)
    dict(pid="GNJ-1404", name="Camden Riverfront Tower LP", v="2014", d=D(2014, 12, 15), county="Camden",
         area="Growth Zone (MRERA)", bt="Other", tgt=Y, prem="Non-Industrial New", gla=300_000, capex=245_000_000, new=100,
         ret=1_050, jnm=320, avg=112_000, bench=55_000, MRI=562, TOD=Y, wh=60_000_000, nb=900_000_000),
    dict(pid="GNJ-1706", name="Holtsville Machining Inc.", d=D(2017, 8, 8), county="Camden", area="Growth Zone (MRERA)",
         bt="Manufacturing", prem="Industrial New", gla=120_000, capex=18_000_000, new=110, ret=0, jnm=110, avg=61_000,
         bench=55_000, MRI=562, wh=5_500_000, nb=20_000_000),
    dict(pid="GNJ-1707", name="Cooper Street Health Partners", d=D(2018, 1, 22), county="Camden", area="Growth Zone (MRERA)",
         bt="Other", tgt=Y, prem="Non-Industrial Rehab", gla=85_000, capex=6_000_000, new=40, ret=30, jnm=36, avg=74_000,
         bench=55_000, MRI=562, wh=1_900_000, nb=5_000_000),
    dict(pid="GNJ-1708", name="Admiral Wilson Distribution LLC", d=D(2019, 2, 11), county="Camden", area="Growth Zone (MRERA)",
         bt="Other", prem="Industrial New", gla=500_000, capex=31_000_000, new=260, ret=0, jnm=255, avg=49_000, bench=55_000,
         MRI=562, HWY=Y, wh=6_800_000),  # net benefit not yet modelled
    # Create Zone (2017 text only)
    dict(pid="GNJ-1709", name="New Brunswick Genomics Inc.", d=D(2018, 9, 5), county="Middlesex", area="Create Zone",
         bt="Technology Startup", tgt=Y, doctoral=Y, prem="Non-Industrial Rehab", gla=45_000, capex=7_000_000, new=85, ret=20,
         avg=131_000, bench=70_500, TOD=Y, wh=5_600_000, nb=45_000_000),
    dict(pid="GNJ-1710", name="Raritan Robotics LLC", d=D(2018, 11, 13), county="Middlesex", area="Create Zone",
         bt="Technology Startup", tgt=Y, prem="Non-Industrial Rehab", gla=30_000, capex=2_200_000, new=40, ret=0,
         avg=98_000, bench=70_500, college=Y, wh=1_500_000, nb=14_000_000),
    dict(pid="GNJ-1711", name="Hoboken Quantum Devices Corp.", d=D(2019, 3, 29), county="Hudson", area="Create Zone",
         bt="Manufacturing", tgt=Y, doctoral=Y, prem="Industrial Rehab", gla=70_000, capex=4_100_000, new=55, ret=10,
         avg=88_000, bench=76_000, wh=2_400_000, nb=20_000_000),
    # Distressed
    dict(pid="GNJ-1405", name="Elizabeth Port Cold Storage LLC", v="2014", d=D(2016, 4, 4), county="Union", area="Distressed",
         bt="Other", prem="Industrial New", gla=200_000, capex=15_000_000, new=60, ret=0, marine=Y, wh=1_200_000,
         nb=11_000_000),
    dict(pid="GNJ-1406", name="Perth Amboy Specialty Chemicals", v="2014", d=D(2016, 9, 19), county="Middlesex", area="Distressed",
         bt="Manufacturing", tgt=Y, prem="Industrial Rehab", gla=140_000, capex=9_000_000, new=120, ret=560, avg=69_000,
         bench=70_500, wh=14_000_000, nb=70_000_000),  # 680 jobs: the tier the 2014 text omits
    dict(pid="GNJ-1712", name="Vineland Glassworks Inc.", d=D(2017, 10, 10), county="Cumberland", area="Distressed",
         bt="Manufacturing", prem="Industrial Rehab", gla=210_000, capex=2_700_000, new=20, ret=140, avg=47_000, bench=44_000,
         MRI=488, disaster=Y, wh=2_100_000, nb=5_500_000),
    dict(pid="GNJ-1713", name="Bridgeton Food Processing Co.", d=D(2018, 6, 6), county="Cumberland", area="Distressed",
         bt="Manufacturing", prem="Industrial New", gla=75_000, capex=2_900_000, new=26, ret=0, avg=45_000, bench=44_000,
         MRI=488, wh=700_000, nb=1_400_000),  # net benefit below 110%
    # Priority
    dict(pid="GNJ-1407", name="Morristown Insurance Services Inc.", v="2014", d=D(2015, 8, 24), county="Morris", area="Priority",
         bt="Other", tgt=Y, prem="Non-Industrial Rehab", gla=150_000, capex=12_000_000, new=90, ret=420, avg=125_000,
         bench=86_000, redev=Y, wh=3_000_000, nb=60_000_000),  # 2014 redevelopment area: no 90% limit
    dict(pid="GNJ-1714", name="Princeton Biologics Corp.", d=D(2017, 2, 27), county="Mercer", area="Priority",
         bt="Technology Startup", tgt=Y, prem="Non-Industrial New", gla=95_000, capex=16_000_000, new=140, ret=60,
         avg=142_000, bench=70_500, incubator=Y, LEED=Y, wh=1_500_000, nb=25_000_000),
    dict(pid="GNJ-1715", name="Edison Data Centers LLC", d=D(2018, 12, 3), county="Middlesex", area="Priority",
         bt="Other", tgt=Y, prem="Non-Industrial New", gla=120_000, capex=11_000_000, new=30, ret=0, avg=99_000,
         bench=70_500, nb=4_000_000),  # jobs below the minimum; withholdings blank
    dict(pid="GNJ-1716", name="Mahwah Auto Group USA Inc.", d=D(2016, 6, 30), county="Bergen", area="Priority", mega=Y,
         bt="Other", prem="Non-Industrial Rehab", gla=400_000, capex=60_000_000, new=150, ret=900, avg=110_000, bench=80_000,
         auto=Y, same=Y, wh=50_000_000, an=10_000_000, nb=600_000_000),
    dict(pid="GNJ-1717", name="Parsippany Outlet Center LLC", d=D(2018, 5, 1), county="Morris", area="Priority",
         bt="Other", prem="Non-Industrial New", gla=250_000, capex=35_000_000, new=300, ret=0, retail=Y, wh=3_000_000,
         nb=20_000_000),  # retail outside a Growth Zone
    dict(pid="GNJ-1718", name="Secaucus Media Partners", d=D(2018, 1, 8), county="Hudson", area="Priority", mega=Y,
         bt="Other", tgt=Y, prem="Non-Industrial New", gla=500_000, capex=150_000_000, new=900, ret=0, avg=120_000, bench=76_000,
         wh=60_000_000, nb=800_000_000),  # mega project filed after 2017-09-18
    # Other Eligible
    dict(pid="GNJ-1408", name="Sussex Hills Software LLC", v="2014", d=D(2015, 3, 3), county="Sussex", area="Other Eligible",
         bt="Technology Startup", tgt=Y, prem="Non-Industrial Rehab", gla=25_000, capex=999_999, new=30, ret=0, avg=88_000,
         bench=60_000, wh=400_000, nb=3_000_000),
    dict(pid="GNJ-1719", name="Flemington Precision Parts Inc.", d=D(2017, 4, 11), county="Hunterdon", area="Other Eligible",
         bt="Manufacturing", prem="Industrial Rehab", gla=60_000, capex=1_150_000, new=22, ret=35, avg=72_000, bench=65_000,
         SOLAR=Y, wh=900_000, nb=4_000_000),  # capex below $20 x 60,000 = $1,200,000
    dict(pid="GNJ-1720", name="Warren County Fulfillment LLC", d=D(2018, 7, 16), county="Warren", area="Other Eligible",
         bt="Other", prem="Industrial New", gla=350_000, capex=28_000_000, new=380, ret=0, avg=46_000, bench=52_000,
         HWY=Y, wh=1_100_000, nb=30_000_000),
    # bad input: an Invalid row each
    dict(pid="GNJ-1409", name="Atlantic Coast Labs", v="2014", d=D(2015, 1, 12), county="Atlantic", area="Create Zone",
         bt="Technology Startup", tgt=Y, prem="Non-Industrial Rehab", gla=30_000, capex=2_000_000, new=25, ret=0,
         wh=900_000, nb=4_000_000),  # no Create Zone in the 2014 text
    dict(pid="GNJ-1721", name="Ocean Grove Hospitality", d=D(2018, 2, 2), county="Monmoth", area="Priority",
         bt="Other", prem="Non-Industrial Rehab", gla=50_000, capex="2.4 million", new=60, ret=0, wh=1_000_000,
         nb=8_000_000),  # misspelt county, capex in words
]
KEYS = {
    "pid": "Project ID", "name": "Business Name", "v": "Statute Version", "d": "Application Date", "county": "County",
    "area": "Area", "mega": "Mega Project", "disaster": "Disaster Recovery Project", "bt": "Business Type",
    "tgt": "Targeted Industry", "prem": "Premises Type", "gla": "Gross Leasable Area (sq ft)", "capex": "Capital Investment ($)",
    "new": "New Full-Time Jobs", "ret": "Retained Full-Time Jobs", "jnm": "Jobs New to Municipality", "avg": "Average Salary ($)",
    "bench": "Benchmark Salary ($)", "MRI": "Municipal Revitalization Index", "incubator": "Qualified Incubator",
    "TOD": "Transit Oriented Development", "LEED": "LEED Silver or Remediation", "auto": "US HQ of Automobile Manufacturer",
    "same": "Same Municipality", "LR": "Light Rail Half Mile", "marine": "Marine Terminal South Jersey Port District",
    "HWY": "Redevelopment Area Near Highways", "SOLAR": "On-Site Solar 50 Percent", "college": "College Collaboration",
    "doctoral": "Doctoral University Collaboration", "redev": "Redevelopment or Rehabilitation Area",
    "retail": "Final Point of Sale Retail", "wh": "Annual Withholdings ($)", "an": "Amount Necessary ($)", "nb": "Net Benefit ($)",
}


def build_grow_nj(path: Path = GROW_NJ_SAMPLE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    wb.set_properties({"title": "Grow NJ awards, November 2026 intake", "created": dt.datetime(2026, 11, 1)})
    bold = wb.add_format({"bold": True, "text_wrap": True})
    money = wb.add_format({"num_format": "#,##0"})
    date = wb.add_format({"num_format": "m/d/yyyy"})
    ws = wb.add_worksheet("GrowNJ")
    for j, h in enumerate(GROW_NJ_HEADERS):
        ws.write_string(0, j, h, bold)
        ws.set_column(j, j, 16)
    for r, short in enumerate(GROW_NJ_ROWS, start=1):
        row = {**GROW_NJ_BASE, **{KEYS[k]: v for k, v in short.items()}}
        for j, h in enumerate(GROW_NJ_HEADERS):
            write_value(ws, r, j, row.get(h), date, money if h.endswith("($)") else None)
    ws.freeze_panes(1, 2)
    wb.close()
    return path


BEIP_HEADERS = [
    "Grant ID", "Business Name", "Agreement Date", "Grant Form", "Smart Growth", "Withholdings Percentage",
    "Annual Withholdings ($)", "Partner Estimated Tax Percentage", "Annual Partner Estimated Tax ($)", "Grant Term (years)",
    "New Employees", "Remote Work Waiver Elected", "Waiver Election Date", "Minimum Time at Facility",
    "2022 Tax Period Credit ($)",
]
BEIP_ROWS = [
    ["BEIP-0455", "Princeton Biologics Corp.", D(2006, 3, 1), "Tax Credit", "", 0.5, 3_600_000, None, None, 10, 450, "", None, None, None],
    ["BEIP-0456", "Trenton Precision Machining LLC", D(2008, 9, 15), "Cash", "", 0.35, 480_000, None, None, 10, 60, "", None, None, None],
    ["BEIP-0457", "Vineland Glassworks Inc.", D(2009, 2, 2), "Tax Credit", "Y", 0.8, 1_500_000, None, None, 10, 250, "", None, None, None],
    ["BEIP-0458", "Hackensack Legal Partners LLP", D(2010, 6, 30), "Cash", "", None, None, 0.3, 1_600_000, 8, 80, "", None, None, None],
    ["BEIP-0459", "Edison Data Centers LLC", D(2011, 11, 11), "Tax Credit", "", "55%", 2_400_000, None, None, 10, 300, "", None, None, None],
    ["BEIP-0460", "Morristown Insurance Services Inc.", D(2012, 4, 4), "Tax Credit", "", 0.45, 9_000_000, None, None, 10, 900, "Y",
     D(2023, 6, 30), 0.25, 1_350_000],
    ["BEIP-0461", "Newark Data Exchange Inc.", D(2013, 1, 22), "Tax Credit", "", 0.4, 3_200_000, None, None, 12, 400, "", None, None, None],
    ["BEIP-0462", "Secaucus Media Partners", D(2014, 7, 7), "Cash", "", 0.5, 8_000_000, None, None, 10, 150, "", None, None, None],
    ["BEIP-0463", "Atlantic Shore Hospitality LLC", D(2002, 12, 1), "Cash", "", 0.5, 8_000_000, None, None, 10, 150, "", None, None, None],
    ["BEIP-0464", "Camden Waterfront Holdings LLC", D(2015, 5, 18), "Tax Credit", "", 0.3, 1_400_000, 0.2, 400_000, 10, 120, "Y",
     D(2024, 1, 15), 0.08, 410_000],
    ["BEIP-0465", "Paterson Textile Works LLC", D(2015, 8, 3), "Tax Credit", "", None, None, None, None, 10, 75, "", None, None, None],
    ["BEIP-0466", "Bridgeton Food Processing Co.", D(2016, 2, 29), "Cash", "", 0.25, 320_000, None, None, 10, 40, "Y",
     D(2023, 3, 1), 0.15, None],
]
CONVERSION_HEADERS = ["Grant ID", "Accrual Year", "Approved Amount ($)", "Approval Year"]
CONVERSION_ROWS = [
    ["BEIP-0455", 2010, 1_850_000.55, None], ["BEIP-0455", 2012, 2_100_000, 2019], ["BEIP-0456", 2014, 310_000.03, None],
    ["BEIP-0456", 2015, 295_000, None], ["BEIP-0457", 2016, 600_000.01, None], ["BEIP-0457", 2017, 640_000, None],
    ["BEIP-0460", 2019, 5_400_000, None], ["BEIP-0460", 2021, 5_100_000.01, None], ["BEIP-0461", 2023, 2_400_000, None],
    ["BEIP-0461", 2025, 2_350_000, None], ["BEIP-0462", 2007, 3_000_000, None], ["BEIP-0462", 2026, 3_100_000, None],
    ["BEIP-0455", 2010, 10_000, None],
]
BRRAP_HEADERS = [
    "Grant ID", "Business Name", "Employees Relocated or Retained", "Yearly Tax Credit Amount ($)", "Bonus Award ($)",
    "First Tax Period", "Certificate of Compliance",
]
BRRAP_ROWS = [
    ["BRRAP-101", "Liberty Harbor Insurance Co.", 180, 1_250_000, None, 2021, ""],
    ["BRRAP-102", "Liberty Harbor Insurance Co.", 380, 2_400_000, 150_000, 2022, "Y"],
    ["BRRAP-103", "Raritan Mutual Insurance", 520, 2_000_000, None, 2022, ""],
    ["BRRAP-104", "Meadowlands Bancorp", 1_250, 9_000_000, 500_000, 2023, "Y"],
    ["BRRAP-105", "meadowlands bancorp ", 640, 2_000_000, None, 2024, "Y"],
    ["BRRAP-106", "Pinelands Casualty Co.", 45, 900_000, None, 2023, ""],
    ["BRRAP-107", "Ocean County Savings Bank", 260, 2_800_000, None, 2023, "Y"],
    ["BRRAP-108", "Hudson County Title Insurance", 950, 4_500_000, 250_000, 2024, "Y"],
    ["BRRAP-109", "Monmouth Energy Partners", 50, 400_000, None, 2025, ""],
]
ERG_HEADERS = [
    "Project ID", "Developer", "Category", "Deep Poverty Pocket or Distressed Municipality", "Growth Zone", "Application Date",
    "Temporary Certificate of Occupancy Date", "Projected Annual Incremental Revenue ($)", "Annual Incentive Grant ($)",
    "Credits Requested ($)",
]
ERG_ROWS = [
    ["ERG-0007", "Asbury Park Residences Urban Renewal LLC", "Other ERG Incentive Area", "", "", D(2014, 2, 3), D(2016, 9, 1), 2_600_000, 1_900_000, 18_000_000],
    ["ERG-0013", "New Brunswick Station Apartments LLC", "Commuter Rail Transit Hub", "", "", D(2014, 5, 19), D(2017, 3, 15), 1_800_000, 1_300_000, 9_500_000],
    ["ERG-0021", "Camden Riverfront Lofts LLC", "South Jersey Growth Zone", "Y", "Y", D(2014, 8, 11), D(2017, 10, 2), 5_000_000, 4_250_000, 38_000_000],
    ["ERG-0022", "Cooper Plaza Homes LLC", "South Jersey Growth Zone", "Y", "Y", D(2015, 1, 6), D(2018, 2, 27), 4_800_000, 4_080_000, 40_000_000],
    ["ERG-0023", "Atlantic City Boardwalk Residences", "South Jersey MRI 400+", "Y", "", D(2015, 3, 30), D(2018, 7, 28), 6_000_000, 4_500_000, 40_000_000],
    ["ERG-0024", "Pleasantville Commons LLC", "South Jersey MRI 400+", "Y", "", D(2015, 6, 1), D(2018, 7, 29), 5_200_000, 3_900_000, 36_000_000],
    ["ERG-0031", "Jersey City Harborside Residential LLC", "Hudson SDA Transitional Aid", "", "", D(2015, 9, 14), None, 3_100_000, 2_400_000, 20_000_000],
    ["ERG-0032", "Paterson Great Falls Housing LP", "Distressed, Deep Poverty or Highlands", "Y", "", D(2015, 10, 5), D(2017, 12, 1), 2_400_000, 1_800_000.01, 24_000_000],
    ["ERG-0033", "Trenton Station Residences LLC", "Growth Zone Outside South Jersey", "Y", "Y", D(2016, 1, 12), D(2018, 5, 5), 3_900_000, 3_300_000, 42_000_000],
    ["ERG-0034", "Highlands Village Homes LLC", "Other ERG Incentive Area", "", "", D(2016, 4, 18), D(2018, 6, 1), 1_200_000, 900_000, 8_000_000],
    ["ERG-0035", "Sussex Meadows Apartments LLC", "Other ERG Incentive Area", "", "", D(2016, 7, 1), D(2018, 6, 30), 900_000, 600_000, 5_000_000],
]


def _write_sheets(path: Path, title: str, sheets) -> Path:
    """A sample workbook of several intake sheets: bold headers, money, percent and date formats."""
    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False})
    wb.set_properties({"title": title, "created": dt.datetime(2026, 11, 1)})
    bold = wb.add_format({"bold": True, "text_wrap": True})
    money = wb.add_format({"num_format": "#,##0.00"})
    pct = wb.add_format({"num_format": "0%"})
    date = wb.add_format({"num_format": "m/d/yyyy"})
    for name, headers, rows in sheets:
        ws = wb.add_worksheet(name)
        for j, h in enumerate(headers):
            ws.write_string(0, j, h, bold)
            ws.set_column(j, j, 18)
        for r, row in enumerate(rows, start=1):
            for j, v in enumerate(row):
                h = headers[j]
                fmt = money if h.endswith("($)") else pct if ("Percentage" in h or "Time at" in h or "Subject to" in h) else None
                write_value(ws, r, j, v, date, fmt)
    wb.close()
    return path


def build_grants(path: Path = GRANTS_SAMPLE) -> Path:
    """BEIP, BEIP_Conversion, BRRAP and ERG_Residential sheets in one workbook."""
    return _write_sheets(path, "BEIP, BRRAP and ERG residential intake, November 2026", (
        ("BEIP", BEIP_HEADERS, BEIP_ROWS), ("BEIP_Conversion", CONVERSION_HEADERS, CONVERSION_ROWS),
        ("BRRAP", BRRAP_HEADERS, BRRAP_ROWS), ("ERG_Residential", ERG_HEADERS, ERG_ROWS)))

EMERGE_HEADERS = [
    "Project ID", "Business Name", "Application Date", "Location", "Small Business", "Targeted Industry", "Mega Project",
    "Premises Type", "Gross Leasable Area (sq ft)", "Capital Investment ($)", "New Full-Time Jobs", "Retained Full-Time Jobs",
    "Current Workforce", "Requested Tax Credit ($)", "Net Benefit ($)", "Withholdings Subject to NJ Income Tax",
    "Accommodates Majority of Employees", "Material Factor", "Meets Environmental Standards", "Affirmative Action Compliance",
    "Prevailing Wage Compliance",
]
OK5 = ["Y", "Y", "Y", "Y", "Y"]
EMERGE_ROWS = [
    ["EM-2101", "Newark Fintech Labs Inc.", D(2021, 9, 14), "Government-Restricted Municipality", "", "Y", "", "Non-Industrial Rehab",
     60_000, 3_200_000, 120, 180, None, 9_000_000, 21_000_000, 0.92, *OK5],
    ["EM-2102", "Camden Robotics Corp.", D(2022, 2, 7), "Qualified Incentive Tract", "", "Y", "", "Industrial New",
     90_000, 7_000_000, 60, 0, None, 6_000_000, 25_000_000, 0.88, *OK5],
    ["EM-2103", "Paterson Pantry Foods LLC", D(2022, 6, 30), "Distressed Municipality", "Y", "", "", "Industrial Rehab",
     20_000, 250_000, 8, 0, 24, 800_000, 2_600_000, 0.95, *OK5],
    ["EM-2104", "Princeton Quantum Devices Inc.", D(2023, 3, 3), "Enhanced Area", "", "Y", "", "Non-Industrial New",
     40_000, 3_900_000, 30, 0, None, 5_000_000, 16_000_000, 0.85, *OK5],
    ["EM-2105", "Morris Plains Pharma USA", D(2023, 8, 21), "Other Qualified Incentive Area", "", "Y", "Y", "Industrial New",
     400_000, 260_000_000, 900, 1_200, None, 150_000_000, 330_000_000, 0.90, *OK5],
    ["EM-2106", "Trenton Logistics Hub LLC", D(2023, 11, 1), "Other Qualified Incentive Area", "", "", "", "Industrial New",
     300_000, 21_000_000, 20, 1_100, None, 12_000_000, 52_000_000, 0.83, *OK5],
    ["EM-2107", "Secaucus Cloud Services", D(2024, 4, 15), "Outside Qualified Incentive Area", "", "Y", "", "Non-Industrial Rehab",
     50_000, 2_500_000, 40, 0, None, 3_000_000, 13_000_000, 0.9, *OK5],
    ["EM-2108", "Edison Battery Works LLC", D(2024, 7, 9), "Other Qualified Incentive Area", "", "", "", "Industrial Rehab",
     80_000, 2_000_000, 30, 0, None, 4_000_000, 17_000_000, 0.9, *OK5],
    ["EM-2109", "Bayonne Marine Services", D(2024, 10, 2), "Distressed Municipality", "", "", "", "Industrial Rehab",
     50_000, 1_200_000, 45, 0, None, 4_000_000, 11_000_000, 0.76, *OK5],
    ["EM-2110", "Hoboken Health Analytics", D(2025, 1, 27), "Enhanced Area", "", "Y", "", "Non-Industrial Rehab",
     30_000, 1_300_000, 28, 0, None, 2_000_000, 6_500_000, 0.9, "Y", "N", "Y", "", "Y"],
    ["EM-2111", "Atlantic City Hospitality Group", D(2029, 3, 1), "Government-Restricted Municipality", "", "", "", "Non-Industrial New",
     120_000, 20_000_000, 200, 0, None, 10_000_000, 25_000_000, 0.9, *OK5],
    ["EM-2112", "Vineland Craft Foods", D(2025, 5, 5), "Qualified Incentive Tract", "Y", "", "", "Industrial Rehab",
     15_000, 100_000, 5, 0, None, 500_000, 1_800_000, 0.9, *OK5],
]
GSGZ_HEADERS = ["Property ID", "Owner", "Development Entity", "Municipality Opted In", "Certificate of Occupancy Date",
                "Annual Taxes Otherwise Due ($)"]
GSGZ_ROWS = [
    ["GZ-301", "Camden Growth Zone Development Corp.", "Y", "Y", D(2016, 5, 12), 1_250_000],
    ["GZ-302", "Camden Growth Zone Development Corp.", "Y", "Y", D(2019, 10, 1), 845_500.55],
    ["GZ-303", "Trenton Riverfront Owner LLC", "N", "", D(2018, 3, 30), 312_000],
    ["GZ-304", "Paterson Mills Redevelopment Entity", "Y", "N", D(2017, 8, 8), 420_000],
    ["GZ-305", "Passaic Avenue Partners LLC", "N", "Y", D(2021, 1, 15), 98_765.43],
    ["GZ-306", "Atlantic City Boardwalk Development Entity", "Y", "Y", D(2023, 9, 18), 2_100_000],
    ["GZ-307", "Atlantic City Boardwalk Development Entity", "Y", "Y", D(2023, 9, 19), 1_600_000],
]
COMPLIANCE_HEADERS = [
    "Project ID", "Tax Period", "Approval Date", "Certification Date", "Annual Credit ($)", "Agreement Jobs",
    "Baseline Statewide Employees", "Statewide Employees", "Facility Employees", "Period Documentation Certified Date",
    "Tax Liability ($)", "Facility Sold",
]


def _compliance_rows():
    rows = []
    # GNJ-1403: ten periods, liability below the credit early, carry-forward used later; 2021 short at the facility
    for i, year in enumerate(range(2017, 2027)):
        rows.append(["GNJ-1403", year, D(2015, 6, 10), D(2017, 4, 3), 2_625_000, 210, 1_800, 1_850 - 10 * i,
                     205 if year != 2021 else 160, D(year + 1, 9, 15), [900_000, 1_200_000, 1_500_000, 2_000_000, 2_400_000,
                     4_000_000, 5_500_000, 3_000_000, 2_800_000, 2_600_000][i], ""])
    # GNJ-1703: statewide workforce cut by more than 20% in 2020; documentation of 2021 never certified; sold in 2024
    for i, year in enumerate(range(2018, 2026)):
        rows.append(["GNJ-1703", year, D(2017, 8, 1), D(2020, 10, 15), 6_375_909.09, 820, 3_000, 2_399 if year == 2020 else 3_050,
                     830, None if year == 2021 else D(year + 2, 6, 30), 4_000_000, "Y" if year == 2024 else ""])
    # GNJ-1401: certified more than four years after approval: no credit at all
    for year in (2019, 2020):
        rows.append(["GNJ-1401", year, D(2014, 12, 18), D(2019, 2, 1), 6_669_642.86, 1_050, 5_200, 5_300, 1_060,
                     D(year + 1, 5, 1), 3_000_000, ""])
    rows.reverse()  # periods in any order: read in Tax Period order per project
    return rows


def build_compliance(path: Path = COMPLIANCE_SAMPLE) -> Path:
    """Emerge, GSGZ_Property and GrowNJ_Compliance sheets in one workbook."""
    return _write_sheets(path, "Emerge, Growth Zone property and Grow NJ compliance intake, November 2026", (
        ("Emerge", EMERGE_HEADERS, EMERGE_ROWS), ("GSGZ_Property", GSGZ_HEADERS, GSGZ_ROWS),
        ("GrowNJ_Compliance", COMPLIANCE_HEADERS, _compliance_rows())))

if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE))
    print(build_grow_nj())
    print(build_grants())
    print(build_compliance())
