"""Emerge program eligibility (README, sheet `Emerge`; C.34:1B-339).

Pure and vectorized; every number comes from `batch/rules/emerge/parameters.yaml`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable, codes_by
from batch.calculators.shared import first_tier, pick
from batch.exact import HUNDREDTHS, Q
from batch.findings import emit
from batch.rules import Rules, lookup
from validators.emerge import EMERGE

SPEC = EMERGE
RULES = "emerge"
AWARD_COLUMN = "Requested Tax Credit ($)"
MONTH_COLUMN = "Application Date"  # the Summary's by-month pivot
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = "Location"
# Each row is calculated on its own figures alone, so the pipeline may run the calculator on chunks of rows.
ROW_INDEPENDENT = True
YEAR_COLUMN = "Application Date"

ID, DATE, LOCATION, SMALL, TARGETED = "Project ID", "Application Date", "Location", "Small Business", "Targeted Industry"
PREMISES, GLA, CAPEX = "Premises Type", "Gross Leasable Area (sq ft)", "Capital Investment ($)"
NEW, RETAINED, WORKFORCE = "New Full-Time Jobs", "Retained Full-Time Jobs", "Current Workforce"
REQUESTED, NET_BENEFIT, WITHHOLDINGS = "Requested Tax Credit ($)", "Net Benefit ($)", "Withholdings Subject to NJ Income Tax"


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    idx = frame.index
    n = len(frame)
    small = frame[SMALL].to_numpy(dtype=bool)
    findings = []
    ineligible = np.zeros(n, dtype=bool)

    # a., f.: on or after the effective date of P.L.2020, c.156 and before the deadline; a.(3): a qualified incentive area
    start = rules["program_start"]
    early = (frame[DATE] < start.value).to_numpy(dtype=bool)
    findings.append(emit("APPLICATION_BEFORE_PROGRAM", idx[early], date=frame[DATE], start=start.value, citation=start.cite))
    deadline = rules["application_deadline"]
    late = (frame[DATE] >= deadline.value).to_numpy(dtype=bool)
    findings.append(emit("APPLICATION_AFTER_DEADLINE", idx[late], date=frame[DATE], deadline=deadline.value, citation=deadline.cite))
    areas = rules["qualified_locations"]
    outside = ~frame[LOCATION].isin(areas.value).to_numpy()
    findings.append(emit("NOT_IN_QUALIFIED_INCENTIVE_AREA", idx[outside], citation=areas.cite))

    # b.: minimum capital investment (none for a small business); the uninvested balance is donated
    rate, rate_cite = lookup(rules["minimum_capex_per_sq_ft"], frame[PREMISES])
    min_capex = (Q(rate.to_numpy(dtype=np.int64)) * Q.decimal(frame[GLA])).where(~small, rules["small_business_minimum_capex"].value)
    capex = Q(frame[CAPEX])
    short = capex < min_capex
    donation = (min_capex - capex).where(short, 0)
    findings.append(
        emit(
            "CAPEX_BELOW_MINIMUM_DONATION_DUE",
            idx[short],
            capex=frame[CAPEX],
            minimum=pd.Series(min_capex.cents(), idx),
            donation=pd.Series(donation.cents(), idx),
            citation=rules["donation"].cite,
        )
    )

    # c.(1): jobs
    new = frame[NEW].to_numpy(dtype=np.int64)
    retained = frame[RETAINED].to_numpy(dtype=np.int64)
    job_class = pd.Series(np.where(frame[TARGETED].to_numpy(dtype=bool), "Targeted Industry", "Other"), idx)
    min_new_base, new_cite = lookup(rules["minimum_new_jobs"], job_class)
    growth = rules["small_business_job_growth"]
    workforce = frame[WORKFORCE].fillna(0).to_numpy(dtype=np.int64)
    min_new = Q(min_new_base.to_numpy(dtype=np.int64)).where(~small, Q(workforce) * growth.value)
    new_cite = pd.Series(np.where(small, growth.cite, new_cite), idx)
    meets_new = Q(new) >= min_new
    meets_b_or_c = meets_new & ~small
    with_new, _ = lookup(rules["retained_with_new"], frame[LOCATION].where(frame[LOCATION].isin(list(rules["retained_with_new"])), "Other"))
    rule_d = meets_b_or_c & (retained >= with_new.to_numpy(dtype=np.int64))
    rule_e = (
        ~meets_b_or_c
        & ~rule_d
        & frame[LOCATION].isin(rules["retained_only_areas"].value).to_numpy()
        & (retained >= rules["retained_only_minimum"].value)
    )
    rule_f = ~meets_b_or_c & ~rule_d & ~rule_e & (retained >= rules["retained_anywhere_minimum"].value)
    jobs_short = ~meets_new & ~rule_e & ~rule_f
    findings.append(
        emit(
            "JOBS_BELOW_MINIMUM",
            idx[jobs_short],
            new=frame[NEW],
            minimum=pd.Series(min_new.float(), idx),
            retained=frame[RETAINED],
            citation=new_cite,
        )
    )

    # a.(5): net benefit, the lowest required ratio that applies
    tiers = rules["net_benefit_ratio"]
    which = first_tier(tiers, frame, area_column=LOCATION)
    required = pick(tiers, which, "value", None)
    required_q = Q.from_fractions(required)
    ratio_q = Q(frame[NET_BENEFIT]) / Q(frame[REQUESTED])
    nb_short = ratio_q < required_q
    findings.append(
        emit(
            "NET_BENEFIT_BELOW_THRESHOLD",
            idx[nb_short],
            net_benefit=frame[NET_BENEFIT],
            requested=frame[REQUESTED],
            ratio=pd.Series(np.floor(ratio_q.float() * HUNDREDTHS) / HUNDREDTHS, idx).map("{:.2f}".format),
            required=pd.Series(required_q.float(), idx).map("{:.2f}".format),
            citation=pd.Series(pick(tiers, which, "cite", ""), idx),
        )
    )

    # d.: withholdings subject to the New Jersey gross income tax
    minimum_share = rules["minimum_withholdings_share"]
    wh_short = Q.percent(frame[WITHHOLDINGS]) < Q.of(minimum_share.value, n)
    findings.append(
        emit(
            "WITHHOLDINGS_BELOW_80PCT",
            idx[wh_short],
            share=frame[WITHHOLDINGS],
            minimum=float(minimum_share.value),
            citation=minimum_share.cite,
        )
    )

    # a.(4), (6), (7), (8), d.: certifications; N is an error, blank a warning
    cert_no = np.zeros(n, dtype=bool)
    for t in rules["certifications"]:
        value = frame[t.label]
        no = (value == False).fillna(False).to_numpy(dtype=bool)  # noqa: E712 - nullable boolean
        blank = value.isna().to_numpy()
        cert_no |= no
        findings.append(emit("CERTIFICATION_MISSING", idx[no], column=t.label, requirement=t.value, citation=t.cite))
        findings.append(
            emit(
                "CERTIFICATION_MISSING",
                idx[blank],
                variant="blank",
                severity="warning",
                column=t.label,
                requirement=t.value,
                citation=t.cite,
            )
        )

    ineligible = early | late | outside | jobs_short | nb_short | wh_short | cert_no
    computed = pd.DataFrame(
        {
            "Minimum Capital Investment ($)": pd.array(min_capex.cents(), dtype="Int64"),
            "Infrastructure Fund Donation ($)": pd.array(donation.cents(), dtype="Int64"),
            "Minimum New Jobs": min_new.float(),
            "Retained Jobs Eligible": np.where(rule_d | rule_e | rule_f, "Y", "N"),
            "Required Net Benefit Ratio": required_q.float(),
            "Net Benefit Ratio": ratio_q.float(),
            "Eligible": np.where(ineligible, "N", "Y"),
        },
        index=idx,
    )
    return Calculation(computed, findings, ineligible=pd.Series(ineligible, index=idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Eligible and ineligible projects by Location, with the reasons."""
    rows = frame[status != "Invalid"]
    by_location = (
        rows.assign(_y=rows["Eligible"].eq("Y"), _n=rows["Eligible"].eq("N"))
        .groupby(LOCATION)
        .agg(
            **{
                "Projects": (ID, "size"),
                "Eligible": ("_y", "sum"),
                "Ineligible": ("_n", "sum"),
                "Requested Tax Credit ($)": (REQUESTED, "sum"),
            }
        )
        .reset_index()
    )
    reasons = codes.drop_duplicates(["row", "Code"]).merge(frame[[LOCATION]], left_on="row", right_index=True)
    by_reason = codes_by(reasons, LOCATION)
    return [
        SummaryTable("Projects by Location", by_location, {"Requested Tax Credit ($)": "money"}),
        SummaryTable("Projects by finding code and Location (the reasons, the most frequent first)", by_reason),
    ]
