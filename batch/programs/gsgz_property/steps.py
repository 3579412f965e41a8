"""Garden State Growth Zone property tax exemption (README, sheet `GSGZ_Property`; C.52:27D-489s).

Pure and vectorized: each row's schedule (Development Entity or other owner) gives the share of
taxes otherwise due paid in each of the 20 years after the certificate of occupancy; the county's
minimum share is 5% of the payments in lieu of taxes under c. only, rounded up to the cent.

The calculation is a sequence of named steps, one per provision, in the statute's order. Each
step reads the columns earlier steps left on the `Property` and adds its own:

    opt_in_489s -> improvements_after_enactment_489s_b1 -> certificate_window_489s
    -> schedule_489s_c_e -> county_share_489s_c
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.exact import Q
from batch.programs._kit.rules import Rules
from batch.programs.gsgz_property.sheet import GSGZ_PROPERTY, YEARS

SPEC = GSGZ_PROPERTY

ID, ENTITY, OPTED_IN, CO_DATE, TAXES = (
    "Property ID",
    "Development Entity",
    "Municipality Opted In",
    "Certificate of Occupancy Date",
    "Annual Taxes Otherwise Due ($)",
)
PAYMENTS = [f"Payment Year {y} ($)" for y in YEARS]


class Property(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far."""

    def __init__(self, f: pd.DataFrame, rules: Rules):
        super().__init__(f, rules)
        self.computed: dict[str, pd.arrays.IntegerArray] = {}
        self.entity = f[ENTITY].to_numpy(dtype=bool)
        self.ineligible = np.zeros(self.n, dtype=bool)  # barred rows pay 100% of taxes every year
        self.payment: dict[int, np.ndarray] = {}  # schedule year -> the payment of each row, integer cents


# -- the steps ----------------------------------------------------------------------------------


def opt_in_489s(s: Property) -> None:
    """C.52:27D-489s b.: the Development Entity exemption applies only in a municipality that has
    opted in by ordinance; a Development Entity elsewhere is barred and pays full taxes."""
    not_opted = s.entity & ~s.f[OPTED_IN].to_numpy(dtype=bool)
    s.emit("MUNICIPALITY_NOT_OPTED_IN", not_opted, citation=s.rules["opt_in"].cite)
    s.ineligible |= not_opted


def improvements_after_enactment_489s_b1(s: Property) -> None:
    """C.52:27D-489s b.(1): the exemption depends on the owner "making improvements to the real property
    after the enactment of P.L.2013, c.161"; a Development Entity's final certificate of occupancy dated
    before the enactment shows improvements completed before it: barred, it pays full taxes. A
    certificate dated on the day of the enactment is not before it."""
    enacted, after = s.rules["enactment_date"], s.rules["improvements_after_enactment"]
    early = s.entity & (s.f[CO_DATE] < enacted.value).to_numpy(dtype=bool)
    s.emit("CO_BEFORE_ENACTMENT", early, date=s.f[CO_DATE], enacted=enacted.value, citation=after.cite)
    s.ineligible |= early


def certificate_window_489s(s: Property) -> None:
    """C.52:27D-489s b.(2): a Development Entity's certificate of occupancy must come within the window
    of years after the enactment of P.L.2013, c.161; a later one is barred and pays full taxes."""
    enacted, window = s.rules["enactment_date"], s.rules["certificate_window_years"]
    deadline = enacted.value + pd.DateOffset(years=window.value)
    late = s.entity & (s.f[CO_DATE] > deadline).to_numpy(dtype=bool)
    s.emit(
        "CO_AFTER_DEADLINE",
        late,
        date=s.f[CO_DATE],
        years=window.value,
        enacted=enacted.value,
        deadline=deadline,
        citation=window.cite,
    )
    s.ineligible |= late


def schedule_489s_c_e(s: Property) -> None:
    """C.52:27D-489s c., e.: each year after the certificate of occupancy the owner pays its
    schedule's share of the taxes otherwise due (c.: a Development Entity's payments in lieu of
    taxes; e.: another owner's unassessed improvements), each payment to the cent; a barred row pays
    100% every year. The exemption is what the 20 years' payments leave of 20 years of taxes."""
    dev = s.rules["development_entity_schedule"].value
    other = s.rules["other_owner_schedule"].value
    taxes = Q(s.f[TAXES])
    paid = Q.of(0, s.n)
    for year, header in zip(YEARS, PAYMENTS, strict=True):
        share = Q.of(dev[year - 1], s.n).where(s.entity, Q.of(other[year - 1], s.n)).where(~s.ineligible, 1)
        s.payment[year] = (taxes * share).cents()
        s.computed[header] = pd.array(s.payment[year], dtype="Int64")
        paid = paid + Q(s.payment[year])
    full = (taxes * Q.of(len(YEARS), s.n)).cents()
    s.computed["Total Exempted ($)"] = pd.array(full - paid.cents(), dtype="Int64")


def county_share_489s_c(s: Property) -> None:
    """C.52:27D-489s c.: the county receives "an amount not less than" its share of "all payments
    pursuant to this subsection": the payments in lieu of taxes of an eligible Development Entity (the
    years the rules name). It is a minimum, so a fraction of a cent is rounded up, never down. Another
    owner (e.) and a barred row pay ordinary taxes, so their share is 0."""
    first_pilot, last_pilot = s.rules["county_share_years"].value
    pilot = s.entity & ~s.ineligible
    in_lieu = Q.of(0, s.n)
    for year in YEARS:
        if first_pilot <= year <= last_pilot:
            in_lieu = in_lieu + Q(s.payment[year]).where(pilot, 0)
    s.computed["County Share Minimum ($)"] = pd.array((in_lieu * s.rules["county_share"].value).ceil(), dtype="Int64")


STEPS = (
    opt_in_489s,
    improvements_after_enactment_489s_b1,
    certificate_window_489s,
    schedule_489s_c_e,
    county_share_489s_c,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Property(frame, rules), STEPS)
    return Calculation(pd.DataFrame(s.computed, index=s.idx), s.findings, ineligible=pd.Series(s.ineligible, index=s.idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Payments and exemptions per year after the certificate of occupancy, over every computed row."""
    rows = frame[status != "Invalid"]
    taxes = rows[TAXES].fillna(0)
    table = pd.DataFrame(
        {
            "Year": [str(y) for y in YEARS],
            "Payments ($)": [int(rows[h].fillna(0).sum()) for h in PAYMENTS],
            "Exempted ($)": [int((taxes - rows[h].fillna(0)).sum()) for h in PAYMENTS],
        }
    )
    return [
        SummaryTable(
            "Payments in lieu of taxes and exemptions per year after the certificate",
            table,
            {"Payments ($)": "money", "Exempted ($)": "money"},
        )
    ]
