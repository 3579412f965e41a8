"""Emerge program eligibility (README, sheet `Emerge`; C.34:1B-339).

Pure and vectorized; every number comes from `batch/programs/emerge/parameters.yaml`.

The calculation is a sequence of named steps, one per provision. Each step reads the columns
earlier steps left on the `Application` and adds its own findings and columns; the steps run in
the order their findings are reported (the bars on the application itself, then b. to d., then
the certifications):

    application_window_339af -> qualified_area_339a3 -> minimum_capex_339b -> jobs_339c1
    -> net_benefit_339a5 -> withholdings_339d -> certifications_339a
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable, codes_by, totals_by, with_column
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.exact import HUNDREDTHS, Q
from batch.programs._kit.rules import Rules, lookup
from batch.programs._kit.steps import first_tier, pick
from batch.programs.emerge.sheet import EMERGE

SPEC = EMERGE

ID, DATE, LOCATION, SMALL, TARGETED = "Project ID", "Application Date", "Location", "Small Business", "Targeted Industry"
PREMISES, GLA, CAPEX = "Premises Type", "Gross Leasable Area (sq ft)", "Capital Investment ($)"
NEW, RETAINED, WORKFORCE = "New Full-Time Jobs", "Retained Full-Time Jobs", "Current Workforce"
REQUESTED, NET_BENEFIT, WITHHOLDINGS = "Requested Tax Credit ($)", "Net Benefit ($)", "Withholdings Subject to NJ Income Tax"


class Application(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far."""

    def __init__(self, f: pd.DataFrame, rules: Rules):
        super().__init__(f, rules)
        self.small = f[SMALL].to_numpy(dtype=bool)
        self.ineligible = np.zeros(self.n, dtype=bool)  # every bar a step finds


# -- the steps ----------------------------------------------------------------------------------


def application_window_339af(s: Application) -> None:
    """C.34:1B-339 a., f.: an application may be submitted on or after the effective date of
    P.L.2020, c.156 and must be submitted before the deadline; one outside that window is barred."""
    f = s.f
    start = s.rules["program_start"]
    early = (f[DATE] < start.value).to_numpy(dtype=bool)
    s.emit("APPLICATION_BEFORE_PROGRAM", early, date=f[DATE], start=start.value, citation=start.cite)
    deadline = s.rules["application_deadline"]
    late = (f[DATE] >= deadline.value).to_numpy(dtype=bool)
    s.emit("APPLICATION_AFTER_DEADLINE", late, date=f[DATE], deadline=deadline.value, citation=deadline.cite)
    s.ineligible |= early | late


def qualified_area_339a3(s: Application) -> None:
    """C.34:1B-339 a.(3): the facility must be located in a qualified incentive area."""
    areas = s.rules["qualified_locations"]
    outside = ~s.f[LOCATION].isin(areas.value).to_numpy()
    s.emit("NOT_IN_QUALIFIED_INCENTIVE_AREA", outside, citation=areas.cite)
    s.ineligible |= outside


def minimum_capex_339b(s: Application) -> None:
    """C.34:1B-339 b.: the minimum capital investment per square foot by premises type (none for a
    small business); a project below it stays eligible when the uninvested balance is donated to
    the infrastructure fund."""
    f, rules = s.f, s.rules
    rate, _ = lookup(rules["minimum_capex_per_sq_ft"], f[PREMISES])
    s.min_capex = (Q(rate.to_numpy(dtype=np.int64)) * Q.decimal(f[GLA])).where(~s.small, rules["small_business_minimum_capex"].value)
    capex = Q(f[CAPEX])
    short = capex < s.min_capex
    s.donation = (s.min_capex - capex).where(short, 0)
    s.emit(
        "CAPEX_BELOW_MINIMUM_DONATION_DUE",
        short,
        capex=f[CAPEX],
        minimum=s.series(s.min_capex.cents()),
        donation=s.series(s.donation.cents()),
        citation=rules["donation"].cite,
    )


def jobs_339c1(s: Application) -> None:
    """C.34:1B-339 c.(1): the minimum new jobs ((a) a small business's share of its workforce,
    (b) a targeted industry, (c) any other), or the retained jobs of (d) with new jobs, (e) in the
    listed areas or (f) anywhere; a project meeting none is barred."""
    f, rules = s.f, s.rules
    new = f[NEW].to_numpy(dtype=np.int64)
    retained = f[RETAINED].to_numpy(dtype=np.int64)
    job_class = s.series(np.where(f[TARGETED].to_numpy(dtype=bool), "Targeted Industry", "Other"))
    min_new_base, new_cite = lookup(rules["minimum_new_jobs"], job_class)
    growth = rules["small_business_job_growth"]
    workforce = f[WORKFORCE].fillna(0).to_numpy(dtype=np.int64)
    s.min_new = Q(min_new_base.to_numpy(dtype=np.int64)).where(~s.small, Q(workforce) * growth.value)
    new_cite = s.series(np.where(s.small, growth.cite, new_cite))
    meets_new = Q(new) >= s.min_new
    meets_b_or_c = meets_new & ~s.small
    with_new_cases = rules["retained_with_new"]
    with_new, _ = lookup(with_new_cases, f[LOCATION].where(f[LOCATION].isin(list(with_new_cases)), "Other"))
    rule_d = meets_b_or_c & (retained >= with_new.to_numpy(dtype=np.int64))
    rule_e = (
        ~meets_b_or_c
        & ~rule_d
        & f[LOCATION].isin(rules["retained_only_areas"].value).to_numpy()
        & (retained >= rules["retained_only_minimum"].value)
    )
    rule_f = ~meets_b_or_c & ~rule_d & ~rule_e & (retained >= rules["retained_anywhere_minimum"].value)
    s.retained_eligible = rule_d | rule_e | rule_f
    jobs_short = ~meets_new & ~rule_e & ~rule_f
    s.emit(
        "JOBS_BELOW_MINIMUM",
        jobs_short,
        new=f[NEW],
        minimum=s.series(s.min_new.float()),
        retained=f[RETAINED],
        citation=new_cite,
    )
    s.ineligible |= jobs_short


def net_benefit_339a5(s: Application) -> None:
    """C.34:1B-339 a.(5): the net benefit to the State must be at least the required multiple of the
    requested tax credit, the lowest multiple that applies to the project."""
    f = s.f
    tiers = s.rules["net_benefit_ratio"]
    which = first_tier(tiers, f, area_column=LOCATION)
    s.required = Q.from_fractions(pick(tiers, which, "value", None))
    s.ratio = Q(f[NET_BENEFIT]) / Q(f[REQUESTED])  # Requested Tax Credit is more than $0 (validated)
    nb_short = s.ratio < s.required
    s.emit(
        "NET_BENEFIT_BELOW_THRESHOLD",
        nb_short,
        net_benefit=f[NET_BENEFIT],
        requested=f[REQUESTED],
        ratio=s.series(np.char.mod("%.2f", np.floor(s.ratio.float() * HUNDREDTHS) / HUNDREDTHS).astype(object)),
        required=s.series(np.char.mod("%.2f", s.required.float()).astype(object)),
        citation=s.series(pick(tiers, which, "cite", "")),
    )
    s.ineligible |= nb_short


def withholdings_339d(s: Application) -> None:
    """C.34:1B-339 d.: at least the minimum share of the withholdings of the new and retained jobs
    must be subject to the New Jersey gross income tax."""
    minimum_share = s.rules["minimum_withholdings_share"]
    wh_short = Q.percent(s.f[WITHHOLDINGS]) < Q.of(minimum_share.value, s.n)
    s.emit(
        "WITHHOLDINGS_BELOW_80PCT",
        wh_short,
        share=s.f[WITHHOLDINGS],
        minimum=float(minimum_share.value),
        citation=minimum_share.cite,
    )
    s.ineligible |= wh_short


def certifications_339a(s: Application) -> None:
    """C.34:1B-339 a.(4), (6), (7), (8), d.: the business must certify each requirement the rules
    list (material factor, environmental standards, affirmative action, prevailing wage, housing the
    majority of employees); N bars the project, a blank is a warning to check before approval."""
    for t in s.rules["certifications"]:
        value = s.f[t.label]
        no = (value == False).fillna(False).to_numpy(dtype=bool)  # noqa: E712 - nullable boolean
        blank = value.isna().to_numpy()
        fields = dict(column=t.label, requirement=t.value, citation=t.cite)
        s.emit("CERTIFICATION_MISSING", no, **fields)
        s.emit("CERTIFICATION_MISSING", blank, variant="blank", severity="warning", **fields)
        s.ineligible |= no


STEPS = (
    application_window_339af,
    qualified_area_339a3,
    minimum_capex_339b,
    jobs_339c1,
    net_benefit_339a5,
    withholdings_339d,
    certifications_339a,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Application(frame, rules), STEPS)
    computed = pd.DataFrame(
        {
            "Minimum Capital Investment ($)": pd.array(s.min_capex.cents(), dtype="Int64"),
            "Infrastructure Fund Donation ($)": pd.array(s.donation.cents(), dtype="Int64"),
            "Minimum New Jobs": s.min_new.float(),
            "Retained Jobs Eligible": np.where(s.retained_eligible, "Y", "N"),
            "Required Net Benefit Ratio": s.required.float(),
            "Net Benefit Ratio": s.ratio.float(),
            "Eligible": np.where(s.ineligible, "N", "Y"),
        },
        index=s.idx,
    )
    return Calculation(computed, s.findings, ineligible=pd.Series(s.ineligible, index=s.idx))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Eligible and ineligible projects by Location, with the reasons."""
    rows = frame[status != "Invalid"]
    by_location = totals_by(
        rows.assign(_y=rows["Eligible"].eq("Y"), _n=rows["Eligible"].eq("N")),
        [LOCATION],
        **{
            "Projects": (ID, "size"),
            "Eligible": ("_y", "sum"),
            "Ineligible": ("_n", "sum"),
            "Requested Tax Credit ($)": (REQUESTED, "sum"),
        },
    )
    reasons = with_column(codes.drop_duplicates(["row", "Code"]), frame, LOCATION)
    by_reason = codes_by(reasons, LOCATION)
    return [
        SummaryTable("Projects by Location", by_location, {"Requested Tax Credit ($)": "money"}),
        SummaryTable("Projects by finding code and Location (the reasons, the most frequent first)", by_reason),
    ]
