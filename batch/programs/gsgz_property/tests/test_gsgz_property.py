"""Growth Zone property tax exemption: tables of cases for README, sheet `GSGZ_Property` (C.52:27D-489s)."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import workbook  # noqa: F401 (the fixture, for the tests below)
from helpers import run_rows

from batch.programs.gsgz_property import steps as gsgz_property

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
    # Ineligible: a certificate before the enactment (2013-09-18); on the day itself the row is eligible
    pytest.param({"Certificate of Occupancy Date": D(2013, 9, 17)}, 0, id="certificate on 2013-09-17"),
    pytest.param({"Certificate of Occupancy Date": D(2013, 9, 18)}, 27_500, id="certificate on 2013-09-18"),
    pytest.param({"Certificate of Occupancy Date": D(2013, 9, 19)}, 27_500, id="certificate on 2013-09-19"),
]


# c.: "an amount not less than five percent": a minimum, so a fraction of a cent is rounded UP, never down.
# Payments of years 11 to 20 are 10%, 20%, ... 90%, 100% of the taxes, each rounded half up to the cent.
ROUND_UP_CASES = [
    # (Annual Taxes Otherwise Due, payments of years 11-20, County Share Minimum)
    # whole cents: 10,000 + 20,000 + ... + 90,000 + 100,000 = 550,000.00; 5% = 27,500.00 exactly
    pytest.param(100_000, 550_000, 27_500, id="exactly a whole cent: 27,500.00"),
    # 100,000.25: 10,000.025 -> .03, 20,000.05, 30,000.075 -> .08, 40,000.10, 50,000.125 -> .13, 60,000.15,
    # 70,000.175 -> .18, 80,000.20, 90,000.225 -> .23, 100,000.25: 550,001.40; 5% = 27,500.07 exactly
    pytest.param(100_000.25, 550_001.40, 27_500.07, id="exactly a whole cent: 27,500.07"),
    # 100,000.05: .005 -> .01, .01, .015 -> .02, .02, .025 -> .03, .03, .035 -> .04, .04, .045 -> .05, .05:
    # 550,000.30; 5% = 27,500.015 (half a cent) -> 27,500.02
    pytest.param(100_000.05, 550_000.30, 27_500.02, id="half a cent: 27,500.015"),
    # 100,000.09: 550,000.50; 5% = 27,500.025 (half a cent) -> 27,500.03
    pytest.param(100_000.09, 550_000.50, 27_500.03, id="half a cent: 27,500.025"),
    # the page's case, 100,000.01: .001 -> .00 ... .004 -> .00, .005 -> .01 ... .009 -> .01, .01: 550,000.06;
    # 5% = 27,500.003 -> 27,500.01 (never 27,500.00)
    pytest.param(100_000.01, 550_000.06, 27_500.01, id="fraction above 27,500.00: 27,500.003"),
    # 100,000.11: .011 -> .01, .022 -> .02, .033 -> .03, .044 -> .04, .055 -> .06, .066 -> .07, .077 -> .08,
    # .088 -> .09, .099 -> .10, .11: 550,000.61; 5% = 27,500.0305, just above 27,500.03 -> 27,500.04
    pytest.param(100_000.11, 550_000.61, 27_500.04, id="just above a cent: 27,500.0305"),
    # 100,000.27: 550,001.49; 5% = 27,500.0745 -> 27,500.08 (half up would give 27,500.07)
    pytest.param(100_000.27, 550_001.49, 27_500.08, id="below half a cent: 27,500.0745"),
    # 0.01: years 11-14 .001 to .004 -> 0, years 15-19 .005 to .009 -> .01 each, year 20 .01: 0.06;
    # 5% = 0.003 -> 0.01
    pytest.param(0.01, 0.06, 0.01, id="one cent of taxes: 0.003"),
]


@pytest.mark.parametrize("taxes,paid,county", ROUND_UP_CASES)
def test_county_share_minimum_rounds_up(taxes, paid, county):
    got = run_rows(gsgz_property, [{**BASE, "Annual Taxes Otherwise Due ($)": taxes}])[0]
    assert round(sum(payments(got)[10:]), 2) == paid
    assert got["County Share Minimum ($)"] == county


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
        ({"Certificate of Occupancy Date": D(2013, 9, 17)}, "CO_BEFORE_ENACTMENT"),
        ({"Certificate of Occupancy Date": D(2010, 1, 1)}, "CO_BEFORE_ENACTMENT"),
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


CERTIFICATE_CASES = [
    # b.(1): improvements "after the enactment of P.L.2013, c.161" (2013-09-18); b.(2): a final certificate
    # "within 10 years of the date of enactment" (by 2023-09-18)
    pytest.param(D(2013, 9, 17), ["CO_BEFORE_ENACTMENT"], id="2013-09-17, the day before the enactment"),
    pytest.param(D(2013, 9, 18), [], id="2013-09-18, the day of the enactment"),
    pytest.param(D(2013, 9, 19), [], id="2013-09-19, the day after"),
    pytest.param(D(2023, 9, 18), [], id="2023-09-18, ten years after"),
    pytest.param(D(2023, 9, 19), ["CO_AFTER_DEADLINE"], id="2023-09-19, more than ten years after"),
]


@pytest.mark.parametrize("date,codes", CERTIFICATE_CASES)
def test_certificate_within_the_enactment_window(date, codes):
    got = run_rows(gsgz_property, [{**BASE, "Certificate of Occupancy Date": date}])[0]
    assert got["codes"] == codes and got["ineligible"] is bool(codes)
    if codes:  # 100% of 100,000 every year; nothing exempted, no payment in lieu of taxes for the county
        assert payments(got) == [100_000] * 20 and (got["Total Exempted ($)"], got["County Share Minimum ($)"]) == (0, 0)
    else:  # 10,000 x (1 + ... + 9) + 100,000 = 550,000 paid of 2,000,000; county 5% = 27,500
        assert (got["Total Exempted ($)"], got["County Share Minimum ($)"]) == (1_450_000, 27_500)


@pytest.mark.parametrize(
    "change,codes",
    [
        # another owner (e.) is not bound by b.: no finding for a certificate before the enactment
        ({"Development Entity": "N", "Certificate of Occupancy Date": D(2013, 9, 17)}, []),
        # both bars of b. are reported, each on its own
        (
            {"Municipality Opted In": "N", "Certificate of Occupancy Date": D(2013, 9, 17)},
            ["MUNICIPALITY_NOT_OPTED_IN", "CO_BEFORE_ENACTMENT"],
        ),
    ],
)
def test_certificate_before_the_enactment_other_cases(change, codes):
    assert run_rows(gsgz_property, [{**BASE, **change}])[0]["codes"] == codes


def test_certificate_before_the_enactment_in_the_findings_sheet(workbook):
    from batch.pipeline import process

    rows = [{**BASE, "Property ID": "A"}, {**BASE, "Property ID": "B", "Certificate of Occupancy Date": D(2013, 9, 17)}]
    headers = list(rows[0])
    res = process(workbook({"GSGZ_Property": [headers] + [[r[h] for h in headers] for r in rows]})).intake[0]
    assert res.status.tolist() == ["OK", "Ineligible"]
    got = res.findings[["Record ID", "Column", "Code", "Severity", "Citation"]].values.tolist()
    assert got == [["B", "Certificate of Occupancy Date", "CO_BEFORE_ENACTMENT", "error", "C.52:27D-489s b.(1)"]]
    assert "dated 2013-09-17 is before the enactment of P.L.2013 c.161 on 2013-09-18" in res.findings["Message"].iloc[0]
