"""Growth Zone property tax exemption: tables of cases for README, sheet `GSGZ_Property` (C.52:27D-489s)."""

from __future__ import annotations

import datetime as dt

import pytest
from helpers import run_rows

from batch.calculators import gsgz_property

D = dt.date
BASE = {
    "Property ID": "P",
    "Development Entity": "Y",
    "Municipality Opted In": "Y",
    "Certificate of Occupancy Date": D(2018, 6, 1),
    "Annual Taxes Otherwise Due ($)": 100_000,
}


def payments(got):
    return [got[f"Payment Year {y} ($)"] for y in range(1, 21)]


def test_development_entity_schedule():
    got = run_rows(gsgz_property, [BASE])[0]
    # years 1-10 nothing; 10%, 20% ... 90%; year 20 100%
    assert payments(got) == [0] * 10 + [10_000 * k for k in range(1, 10)] + [100_000]
    # paid: 10,000 x (1 + ... + 9) + 100,000 = 550,000 of 2,000,000; exempted 1,450,000; county 5% = 27,500
    assert (got["Total Exempted ($)"], got["County Share Minimum ($)"], got["codes"]) == (1_450_000, 27_500, [])


def test_other_owner_schedule():
    got = run_rows(gsgz_property, [{**BASE, "Development Entity": "N", "Municipality Opted In": ""}])[0]
    # five years not assessed, then 100%: paid 15 x 100,000 = 1,500,000; exempted 500,000; ordinary taxes, no county share
    assert payments(got) == [0] * 5 + [100_000] * 15
    assert (got["Total Exempted ($)"], got["County Share Minimum ($)"], got["codes"]) == (500_000, 0, [])


COUNTY_CASES = [
    # c.: "not less than five percent of all payments pursuant to this subsection": years 11 to 20 of a Development Entity
    # 10,000 x (1 + ... + 9) + 100,000 = 550,000; 5% = 27,500
    pytest.param({}, 27_500, id="development entity"),
    # years 11-20 of 12,345.67: 1,234.57 + 2,469.13 + 3,703.70 + 4,938.27 + 6,172.84 (6,172.835 half up)
    # + 7,407.40 + 8,641.97 + 9,876.54 + 11,111.10 + 12,345.67 = 67,901.19; 5% = 3,395.0595 -> 3,395.06
    pytest.param({"Annual Taxes Otherwise Due ($)": 12_345.67}, 3_395.06, id="development entity, cents"),
    # 10% of 0.10 = 0.01 in year 11 ... : 0.01+0.02+...+0.09+0.10 = 0.55; 5% = 0.0275 -> 0.03
    pytest.param({"Annual Taxes Otherwise Due ($)": 0.10}, 0.03, id="development entity, 10 cents"),
    # e.: the improvements are not assessed for five years, then ordinary taxes: no payment in lieu of taxes
    pytest.param({"Development Entity": "N"}, 0, id="a non-Development-Entity property"),
    pytest.param({"Development Entity": ""}, 0, id="Development Entity blank (N)"),
    # Ineligible: full taxes every year, no payment in lieu of them
    pytest.param({"Municipality Opted In": "N"}, 0, id="municipality not opted in"),
    pytest.param({"Certificate of Occupancy Date": D(2023, 9, 19)}, 0, id="certificate after 2023-09-18"),
    pytest.param({"Certificate of Occupancy Date": D(2023, 9, 18)}, 27_500, id="certificate on 2023-09-18"),
    pytest.param({"Annual Taxes Otherwise Due ($)": 0}, 0, id="no taxes otherwise due"),
]


@pytest.mark.parametrize("change,county", COUNTY_CASES)
def test_county_share_minimum(change, county):
    got = run_rows(gsgz_property, [{**BASE, **change}])[0]
    assert got["County Share Minimum ($)"] == county


def test_cents_round_each_year():
    got = run_rows(gsgz_property, [{**BASE, "Annual Taxes Otherwise Due ($)": 12_345.67}])[0]
    # 10% of 12,345.67 = 1,234.567 -> 1,234.57; 30% = 3,703.701 -> 3,703.70
    assert payments(got)[10] == 1_234.57 and payments(got)[12] == 3_703.70


@pytest.mark.parametrize(
    "change,code",
    [
        ({"Municipality Opted In": "N"}, "MUNICIPALITY_NOT_OPTED_IN"),
        ({"Municipality Opted In": ""}, "MUNICIPALITY_NOT_OPTED_IN"),
        ({"Certificate of Occupancy Date": D(2023, 9, 19)}, "CO_AFTER_DEADLINE"),
    ],
)
def test_ineligible_pays_in_full(change, code):
    got = run_rows(gsgz_property, [{**BASE, **change}])[0]
    assert got["codes"] == [code] and got["ineligible"]
    # full taxes, and no payment in lieu of taxes for the county's share
    assert payments(got) == [100_000] * 20 and got["Total Exempted ($)"] == 0 and got["County Share Minimum ($)"] == 0


@pytest.mark.parametrize("date,late", [(D(2023, 9, 18), False), (D(2023, 9, 19), True)])
def test_certificate_ten_years_after_enactment(date, late):
    got = run_rows(gsgz_property, [{**BASE, "Certificate of Occupancy Date": date}])[0]
    assert ("CO_AFTER_DEADLINE" in got["codes"]) is late


def test_other_owner_has_no_deadline():
    got = run_rows(gsgz_property, [{**BASE, "Development Entity": "N", "Certificate of Occupancy Date": D(2025, 1, 1)}])[0]
    assert got["codes"] == []
