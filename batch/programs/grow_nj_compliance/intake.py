"""The intake text of sheet `GrowNJ_Compliance`: what one row is, the Instructions paragraph's notes, the worked
example row of the template, and the sample rows of the bundled sample workbook."""

from __future__ import annotations

import datetime as dt

from batch.programs._kit.program import Intake, Sample

D = dt.date


HEADERS = [
    "Project ID",
    "Tax Period",
    "Approval Date",
    "Certification Date",
    "Annual Credit ($)",
    "Agreement Jobs",
    "Baseline Statewide Employees",
    "Statewide Employees",
    "Facility Employees",
    "Period Documentation Certified Date",
    "Tax Liability ($)",
    "Facility Sold",
    "Eligibility Period (years)",
]


def _rows():
    rows = []
    # GNJ-1403: ten periods, liability below the credit early, carry-forward used later; 2021 short at the facility
    for i, year in enumerate(range(2017, 2027)):
        rows.append(
            [
                "GNJ-1403",
                year,
                D(2015, 6, 10),
                D(2017, 4, 3),
                2_625_000,
                210,
                1_800,
                1_850 - 10 * i,
                205 if year != 2021 else 160,
                D(year + 1, 9, 15),
                [900_000, 1_200_000, 1_500_000, 2_000_000, 2_400_000, 4_000_000, 5_500_000, 3_000_000, 2_800_000, 2_600_000][i],
                "",
                None,
            ]
        )
    # GNJ-1703: statewide workforce cut by more than 20% in 2020; documentation of 2021 never certified; sold in 2024
    for year in range(2018, 2026):
        rows.append(
            [
                "GNJ-1703",
                year,
                D(2017, 8, 1),
                D(2020, 10, 15),
                6_375_909.09,
                820,
                3_000,
                2_399 if year == 2020 else 3_050,
                830,
                None if year == 2021 else D(year + 2, 6, 30),
                4_000_000,
                "Y" if year == 2024 else "",
                None,
            ]
        )
    # GNJ-1401: certified more than four years after approval: no credit at all
    for year in (2019, 2020):
        rows.append(
            [
                "GNJ-1401",
                year,
                D(2014, 12, 18),
                D(2019, 2, 1),
                6_669_642.86,
                1_050,
                5_200,
                5_300,
                1_060,
                D(year + 1, 5, 1),
                3_000_000,
                "",
                None,
            ]
        )
    # GNJ-1510: a five-year eligibility period (2016-2020); 2021 and 2022 have no credit of their own but use the carry-forward
    for year, liability in ((2019, 400_000), (2020, 500_000), (2021, 900_000), (2022, 700_000)):
        rows.append(["GNJ-1510", year, D(2014, 9, 9), D(2016, 6, 1), 750_000, 120, 900, 930, 125, D(year + 1, 4, 1), liability, "", 5])
    # GNJ-2402: certification not yet accepted: 2025 closed without it (outside the eligibility period), 2026 pending
    for year in (2025, 2026):
        rows.append(["GNJ-2402", year, D(2024, 2, 1), None, 1_200_000, 300, 2_000, 2_050, 310, None, 1_500_000, "", None])
    rows.reverse()  # periods in any order: read in Tax Period order per project
    return rows


INTAKE = Intake(
    row_is="one tax period of one Grow NJ project after its approval.",
    notes="Leave the date columns of steps not yet done blank; they are judged against the run's as-of date.",
    example={
        "Project ID": "GNJ-1522",
        "Tax Period": 2024,
        "Approval Date": D(2015, 6, 10),
        "Certification Date": D(2017, 4, 3),
        "Annual Credit ($)": 2_625_000,
        "Agreement Jobs": 210,
        "Baseline Statewide Employees": 1_800,
        "Statewide Employees": 1_760,
        "Facility Employees": 205,
        "Period Documentation Certified Date": D(2025, 9, 15),
        "Tax Liability ($)": 2_600_000,
        "Facility Sold": "N",
    },
    sample=Sample(tuple(HEADERS), tuple(tuple(row) for row in _rows()), workbook="emerge-gsgz-compliance-2026-11.xlsx", order=1),
)
