"""The intake text of sheet `GSGZ_Property`: what one row is, the Instructions paragraph's notes, the worked
example row of the template, and the sample rows of the bundled sample workbook."""

from __future__ import annotations

import datetime as dt

from batch.programs._kit.program import Intake, Sample

D = dt.date


HEADERS = [
    "Property ID",
    "Owner",
    "Development Entity",
    "Municipality Opted In",
    "Certificate of Occupancy Date",
    "Annual Taxes Otherwise Due ($)",
]
ROWS = [
    ["GZ-301", "Camden Growth Zone Development Corp.", "Y", "Y", D(2016, 5, 12), 1_250_000],
    ["GZ-302", "Camden Growth Zone Development Corp.", "Y", "Y", D(2019, 10, 1), 845_500.55],
    ["GZ-303", "Trenton Riverfront Owner LLC", "N", "", D(2018, 3, 30), 312_000],
    ["GZ-304", "Paterson Mills Redevelopment Entity", "Y", "N", D(2017, 8, 8), 420_000],
    ["GZ-305", "Passaic Avenue Partners LLC", "N", "Y", D(2021, 1, 15), 98_765.43],
    ["GZ-306", "Atlantic City Boardwalk Development Entity", "Y", "Y", D(2023, 9, 18), 2_100_000],
    ["GZ-307", "Atlantic City Boardwalk Development Entity", "Y", "Y", D(2023, 9, 19), 1_600_000],
    ["GZ-308", "Newark Broad Street Development Entity", "Y", "Y", D(2013, 9, 17), 550_000],  # before the enactment
    ["GZ-309", "Trenton Growth Zone Development Corp.", "Y", "Y", D(2020, 6, 1), 100_000.01],  # county share rounded up
]


INTAKE = Intake(
    row_is="one property whose improvements seek the Garden State Growth Zone property tax exemption.",
    notes="Give Development Entity and Municipality Opted In as Y or N; they decide which schedule applies.",
    example={
        "Property ID": "GZ-301",
        "Owner": "Camden Growth Zone Development Corp.",
        "Development Entity": "Y",
        "Municipality Opted In": "Y",
        "Certificate of Occupancy Date": D(2016, 5, 12),
        "Annual Taxes Otherwise Due ($)": 1_250_000,
    },
    sample=Sample(tuple(HEADERS), tuple(tuple(row) for row in ROWS), workbook="emerge-gsgz-compliance-2026-11.xlsx"),
)
