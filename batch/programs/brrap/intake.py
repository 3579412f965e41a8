"""The intake text of sheet `BRRAP`: what one row is, the Instructions paragraph's notes, the worked
example row of the template, and the sample rows of the bundled sample workbook."""

from __future__ import annotations

from batch.programs._kit.program import Intake, Sample

HEADERS = [
    "Grant ID",
    "Business Name",
    "Employees Relocated or Retained",
    "Yearly Tax Credit Amount ($)",
    "Bonus Award ($)",
    "First Tax Period",
    "Certificate of Compliance",
]
ROWS = [
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


INTAKE = Intake(
    row_is="one Business Retention and Relocation Assistance grant of tax credits.",
    notes="Spell Business Name the same way on every row of one business: the single-business limit adds up its rows.",
    example={
        "Grant ID": "BRRAP-101",
        "Business Name": "Liberty Harbor Insurance Co.",
        "Employees Relocated or Retained": 180,
        "Yearly Tax Credit Amount ($)": 1_250_000,
        "First Tax Period": 2021,
        "Certificate of Compliance": "Y",
    },
    sample=Sample(tuple(HEADERS), tuple(tuple(row) for row in ROWS), workbook="beip-brrap-erg-2026-11.xlsx"),
)
