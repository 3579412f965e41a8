"""The intake text of sheet `BEIP_Conversion`: what one row is, the Instructions paragraph's notes, the worked
example row of the template, and the sample rows of the bundled sample workbook."""

from __future__ import annotations

from batch.programs._kit.program import Intake, Sample

HEADERS = ["Grant ID", "Accrual Year", "Approved Amount ($)", "Approval Year"]
ROWS = [
    ["BEIP-0455", 2010, 1_850_000.55, None],
    ["BEIP-0455", 2012, 2_100_000, 2019],
    ["BEIP-0456", 2014, 310_000.03, None],
    ["BEIP-0456", 2015, 295_000, None],
    ["BEIP-0457", 2016, 600_000.01, None],
    ["BEIP-0457", 2017, 640_000, None],
    ["BEIP-0460", 2019, 5_400_000, None],
    ["BEIP-0460", 2021, 5_100_000.01, None],
    ["BEIP-0461", 2023, 2_400_000, None],
    ["BEIP-0461", 2025, 2_350_000, None],
    ["BEIP-0462", 2007, 3_000_000, None],
    ["BEIP-0462", 2026, 3_100_000, None],
    ["BEIP-0455", 2010, 10_000, None],
    ["BEIP-0458", 2011, 750_000, 2030],  # approved in 2030: five installments 2030-2034
    ["BEIP-0459", 2009, 400_000, 2016],  # approved before 2017: the schedule from 2017
]


INTAKE = Intake(
    row_is="one accrual year of a BEIP grant that was converted to tax credits.",
    notes="Approval Year is needed only for amounts approved under e.(1).",
    example={
        "Grant ID": "BEIP-0455",
        "Accrual Year": 2010,
        "Approved Amount ($)": 1_850_000.55,
    },
    sample=Sample(tuple(HEADERS), tuple(tuple(row) for row in ROWS), workbook="beip-brrap-erg-2026-11.xlsx"),
)
