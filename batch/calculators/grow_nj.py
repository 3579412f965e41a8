"""Grow New Jersey Assistance Program award (README, sheet `GrowNJ`; C.34:1B-243, -244, -246, -247).

Pure and vectorized: `calculate(frame, rules, context)` takes the validated rows of the `GrowNJ`
sheet (money in integer cents) and returns the computed columns, the findings and the rows the
statute bars. Each row's Statute Version picks `batch/rules/grow_nj/2014.yaml` or `2017.yaml`;
eligibility values are in `common.yaml`. Amounts stay exact fractions of cents (`batch.exact.Q`)
until the annual credit is rounded to the cent, once.

The calculation is a sequence of named steps, one per provision, in the statute's order. Each
step reads the columns earlier steps left on the `Project` and adds its own:

    mega_project_243 -> eligibility_244 -> base_246b -> increases_246c -> gross_limit_246d
    -> retained_246e -> annual_limits_246f -> mrera_alternative_246d -> award_246a
    -> net_benefit_244a3 -> prior_incentives_247e

`explain` then builds the `Calculation` text from the step results; no step builds text.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable
from batch.calculators.shared import business_key, first_tier, pick, tier_applies
from batch.exact import Q
from batch.findings import emit, money_text, short_cite
from batch.rules import Rules, lookup
from validators.grow_nj import GROW_NJ as SPEC

RULES = "grow_nj"
AWARD_COLUMN = "Total Award ($)"
MONTH_COLUMN = "Application Date"  # the Summary's by-month pivot
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = "Area"
# Each row is calculated on its own figures alone, so the pipeline may run the calculator on chunks of rows.
ROW_INDEPENDENT = True
YEAR_COLUMN = "Application Date"
# The pipeline computes the prior incentive sheets (BEIP, BRRAP) first and hands their records over.
READS_PRIOR_INCENTIVES = True

ID, VERSION, APP_DATE, COUNTY, AREA = "Project ID", "Statute Version", "Application Date", "County", "Area"
CAPEX, NEW, RETAINED, JNM = "Capital Investment ($)", "New Full-Time Jobs", "Retained Full-Time Jobs", "Jobs New to Municipality"
GLA, PREMISES, BUSINESS = "Gross Leasable Area (sq ft)", "Premises Type", "Business Type"
AVG, BENCH, MRI = "Average Salary ($)", "Benchmark Salary ($)", "Municipal Revitalization Index"
WITHHOLD, NECESSARY, NET_BENEFIT, PERIOD = (
    "Annual Withholdings ($)",
    "Amount Necessary ($)",
    "Net Benefit ($)",
    "Eligibility Period (years)",
)
MEGA, MEGA_BASIS, TARGETED, RETAIL, TOURISM = (
    "Mega Project",
    "Mega Project Basis",
    "Targeted Industry",
    "Final Point of Sale Retail",
    "Tourism District",
)
DISASTER, REPLACES = "Disaster Recovery Project", "Replaces Disaster-Damaged Facility"
AUTO_HQ, SAME_MUNI = "US HQ of Automobile Manufacturer", "Same Municipality"
NAME, SATISFIED, SEPARATE = "Business Name", "Prior Incentive Obligations Satisfied", "Separate From Prior Award"
MRERA_AREA = "Growth Zone (MRERA)"
# statuses of a prior record that do not count (running totals and limits count neither)
NOT_COUNTED = ("Invalid", "Ineligible")
# a prior-incentive finding names this many records, then says how many more there are
LISTED_PRIOR_RECORDS = 10


class Project:
    """The rows of one statute version and every column the steps have computed so far."""

    def __init__(self, f: pd.DataFrame, common: dict, p: dict, version: str, context: RunContext):
        self.f, self.common, self.p, self.version, self.context = f, common, p, version, context
        self.idx, self.n = f.index, len(f)
        self.findings: list[pd.DataFrame] = []
        self.flag = {c.header: f[c.header].to_numpy(dtype=bool) for c in SPEC.columns if c.kind == "yesno" and not c.blank_unknown}
        self.growth_zone = f[AREA].isin(common["growth_zone_areas"].value).to_numpy()
        self.south_jersey = f[COUNTY].isin(common["south_jersey_counties"].value).to_numpy()
        self.reduced = self.growth_zone | self.south_jersey
        self.capex = Q(f[CAPEX])
        self.new = f[NEW].to_numpy(dtype=np.int64)
        self.retained = f[RETAINED].to_numpy(dtype=np.int64)
        self.jobs = self.new + self.retained

    def emit(self, code: str, mask: np.ndarray, **fields) -> None:
        self.findings.append(emit(code, self.idx[mask], **fields))

    def series(self, values) -> pd.Series:
        return pd.Series(values, index=self.idx)


def _ratio_q(frac, mask: np.ndarray) -> Q:
    """The fraction where mask holds, 1 elsewhere."""
    return Q(np.where(mask, frac.numerator, 1), np.where(mask, frac.denominator, 1))


# -- the steps ----------------------------------------------------------------------------------


def mega_project_243(s: Project) -> None:
    """C.34:1B-243 "mega project", C.34:1B-247 b.(4): Mega Project = Y is honoured only when the
    definition of the paragraph named by Mega Project Basis is met (blank basis: any paragraph the
    amounts can show, with a warning) and the application came within four years of P.L.2013, c.161.
    Otherwise the row is computed as an ordinary project: `s.f` gets Mega Project = N, so every
    later rule reads the corrected value."""
    f, common = s.f, s.common
    claimed = s.flag[MEGA]
    tiers = common["mega_project_definition"]
    basis = f[MEGA_BASIS].astype(object).where(f[MEGA_BASIS].notna(), None).to_numpy()
    blank = claimed & pd.isna(basis)
    met = np.zeros(s.n, dtype=bool)
    which = np.full(s.n, -1)
    for i, t in enumerate(tiers):
        jobs = s.new if t.extra["jobs"] == "created" else s.jobs
        ok = tier_applies(t, f) & (jobs > t.extra["min_jobs_over"])
        if "min_capex_over" in t.extra:
            ok &= s.capex > Q.of(t.extra["min_capex_over"], s.n)
        if t.extra.get("south_jersey"):
            ok &= s.south_jersey
        ok &= (basis == t.extra["basis"]) | (blank & bool(t.extra.get("when_blank")))
        which = np.where(ok & (which < 0), i, which)
        met |= ok
    s.mega_defined = claimed & met
    s.mega_which = np.where(s.mega_defined, which, -1)
    s.mega_not_met = claimed & ~met
    deadline = common["mega_project_deadline"]
    s.mega_late = claimed & (f[APP_DATE] > deadline.value).to_numpy()
    s.mega = s.mega_defined & ~s.mega_late
    definition_cite = tiers[0].cite.split('"')[0].strip() + ' "mega project"'
    s.emit(
        "MEGA_PROJECT_BASIS_NOT_GIVEN",
        blank,
        capex=f[CAPEX],
        jobs=s.series(s.jobs),
        new=f[NEW],
        outcome=s.series(np.where(met, "it meets " + pick(tiers, which, "cite", ""), "it meets none")),
        citation=definition_cite,
    )
    where = np.where(
        pd.isna(basis),
        "",
        np.char.add(", Area ", f[AREA].astype(str).to_numpy().astype(str)).astype(object)
        + np.where(s.south_jersey, ", a South Jersey county", ""),
    )
    requirement = f[MEGA_BASIS].astype(object).map(_mega_requirements(tiers)).fillna(_mega_requirements(tiers)[None])
    s.emit(
        "MEGA_PROJECT_DEFINITION_NOT_MET",
        s.mega_not_met,
        basis=s.series(np.where(pd.isna(basis), "", " under basis " + basis.astype(str))),
        requirement=requirement,
        capex=f[CAPEX],
        jobs=s.series(s.jobs),
        new=f[NEW],
        where=s.series(where),
        citation=s.series(np.where(pd.isna(basis), definition_cite, definition_cite + " (" + basis.astype(str) + ")")),
    )
    s.emit("MEGA_PROJECT_APPLICATION_LATE", s.mega_late, date=f[APP_DATE], deadline=deadline.value, citation=deadline.cite)
    s.f = f.assign(**{MEGA: s.mega})
    s.flag[MEGA] = s.mega


def _mega_requirements(tiers) -> dict:
    """What each basis of the mega-project definition needs, in words, from the rules data (None: a
    blank basis, any tier tried when the basis is blank)."""

    def words(t) -> str:
        jobs = "new jobs" if t.extra["jobs"] == "created" else "jobs"
        parts = [f"Capital Investment over ${_dollars([t.extra['min_capex_over']])[0]}"] if "min_capex_over" in t.extra else []
        parts.append(f"more than {t.extra['min_jobs_over']:,} {jobs}")
        text = " with ".join(parts)
        if t.area:
            text += " in area " + " or ".join(t.area)
        if t.extra.get("south_jersey"):
            text += " in a South Jersey county"
        for flag in t.all_flags:
            text += f" and {flag} = Y"
        return text

    out: dict = {}
    for t in tiers:
        out.setdefault(t.extra["basis"], []).append(words(t))
    out[None] = [words(t) for t in tiers if t.extra.get("when_blank")]
    return {k: ", or ".join(v) for k, v in out.items()}


def eligibility_244(s: Project) -> None:
    """C.34:1B-244 b., c., e.; C.34:1B-247 b.(1): minimum capital investment per square foot, minimum
    jobs (both reduced in a Growth Zone or a South Jersey county), the application deadline, and no
    point-of-final-purchase retail outside a Growth Zone and the Tourism District."""
    f, common = s.f, s.common
    rate, s.rate_cite = lookup(common["minimum_capex_per_sq_ft"], f[PREMISES])
    capex_share = _ratio_q(common["reduced_minimum_capex_share"].value, s.reduced)
    s.min_capex = Q(rate.to_numpy(dtype=np.int64)) * Q.decimal(f[GLA]) * capex_share
    s.capex_ok = s.capex >= s.min_capex
    reduction = f"{common['reduced_minimum_capex_share'].value} (Growth Zone or South Jersey)"
    s.emit(
        "CAPEX_BELOW_MINIMUM",
        ~s.capex_ok,
        capex=f[CAPEX],
        minimum=s.series(s.min_capex.cents()),
        rate=rate,
        area=f[GLA],
        premises=f[PREMISES],
        reduction=s.series(np.where(s.reduced, " x " + reduction, "")),
        citation=s.rate_cite,
    )

    job_classes = common["job_classes"]
    job_class = s.series(np.select([tier_applies(t, f, BUSINESS) for t in job_classes], [t.label for t in job_classes], "Other"))
    min_new_base, s.jobs_cite = lookup(common["minimum_new_jobs"], job_class)
    min_ret_base, _ = lookup(common["minimum_retained_jobs"], job_class)
    jobs_share = _ratio_q(common["reduced_minimum_jobs_share"].value, s.reduced)
    min_new = Q(min_new_base.to_numpy(dtype=np.int64)) * jobs_share
    min_ret = Q(min_ret_base.to_numpy(dtype=np.int64)) * jobs_share
    s.jobs_ok = (Q(s.new) >= min_new) | (Q(s.jobs) >= min_ret)
    s.min_new, s.min_ret = min_new.float(), min_ret.float()
    s.emit(
        "JOBS_BELOW_MINIMUM",
        ~s.jobs_ok,
        new=f[NEW],
        retained=f[RETAINED],
        jobs=s.series(s.jobs),
        min_new=s.series(s.min_new),
        min_retained=s.series(s.min_ret),
        citation=s.jobs_cite,
    )

    deadline = common["application_deadline"]
    s.late = (f[APP_DATE] >= deadline.value).to_numpy()
    s.emit("APPLICATION_AFTER_DEADLINE", s.late, date=f[APP_DATE], deadline=deadline.value, citation=deadline.cite)
    retail_areas = common["retail_allowed_areas"]
    s.retail_bad = s.flag[RETAIL] & ~(f[AREA].isin(retail_areas.value).to_numpy() | s.flag[TOURISM])
    s.emit("RETAIL_NOT_ELIGIBLE", s.retail_bad, area=f[AREA], citation=retail_areas.cite)


def base_246b(s: Project) -> None:
    """C.34:1B-246 b.: the base amount per job per year, the first tier that applies."""
    tiers = s.p["base_amount"]
    s.base_which = first_tier(tiers, s.f)
    s.base = pick(tiers, s.base_which, "value", 0).astype(np.int64)
    fallback = pick(tiers, s.base_which, "finding", None) == "CREATE_ZONE_BASE_NOT_MET"
    s.emit(
        "CREATE_ZONE_BASE_NOT_MET",
        fallback,
        base=s.series(s.base),
        citation=s.series(pick(tiers, s.base_which, "cite", "")),
    )


def increases_246c(s: Project) -> None:
    """C.34:1B-246 c.: the increases per job per year, each added when its condition holds: the flag
    bonuses, (5)/(10) industrial investment, (6) salary, (7) large employment, (11) automobile
    headquarters, (12) South Jersey MRI."""
    f, p = s.f, s.p
    s.flag_hits = [tier_applies(t, f) for t in p["flag_bonuses"]]
    bonus = np.zeros(s.n, dtype=np.int64)
    for t, hit in zip(p["flag_bonuses"], s.flag_hits, strict=True):
        bonus += np.where(hit, t.value, 0)
    # (5)/(10) industrial investment: each full step of excess over the minimum
    ind_tiers = p["industrial_bonus"]
    industrial = f[PREMISES].isin(p["industrial_premises"].value).to_numpy()
    s.ind_which = np.where(industrial, first_tier(ind_tiers, f), -1)
    s.ind_cap = pick(ind_tiers, s.ind_which, "value", 0).astype(np.int64)
    excess = (s.capex - s.min_capex) / (s.min_capex * p["industrial_step"].value)
    s.ind_steps = np.clip(excess.floor(), 0, None)
    s.ind_bonus = np.where(s.ind_which >= 0, np.minimum(s.ind_steps * p["industrial_step_amount"].value, s.ind_cap), 0)
    # (6) salary: each full step above the benchmark
    avg, bench = f[AVG], f[BENCH]
    salary_ok = (avg.notna() & bench.notna() & (bench > 0)).to_numpy()
    avg_q = Q(avg.fillna(0).astype("int64"))
    bench_q = Q(bench.fillna(1).astype("int64").where(salary_ok, 1))
    steps = ((avg_q - bench_q) / (bench_q * p["salary_step"].value)).floor()
    s.sal_steps = np.where(salary_ok, np.clip(steps, 0, None), 0)
    s.sal_bonus = np.minimum(s.sal_steps * p["salary_step_amount"].value, p["salary_bonus_cap"].value)
    # (7) large employment, by New + Retained
    big = p["large_employment_bonus"]
    s.big_which = first_tier(big, f, [s.jobs >= t.extra["min_jobs"] for t in big])
    s.big_bonus = pick(big, s.big_which, "value", 0).astype(np.int64)
    omitted = pick(big, s.big_which, "finding", None) == "TEXT_OMITS_601_800_TIER"
    s.emit("TEXT_OMITS_601_800_TIER", omitted, jobs=s.series(s.jobs), citation=s.series(pick(big, s.big_which, "cite", "")))
    # (11) US headquarters of an automobile manufacturer retaining at least the minimum in the same municipality
    s.auto = s.flag[AUTO_HQ] & s.flag[SAME_MUNI] & (s.retained >= p["auto_hq_min_retained"].value)
    # (12) South Jersey county with a 2007 MRI above the threshold
    mri = f[MRI].astype("Float64").fillna(-np.inf).to_numpy(dtype=float)
    s.sj_bonus = s.south_jersey & (mri > p["south_jersey_mri_threshold"].value)
    s.bonus = (
        bonus
        + s.ind_bonus
        + s.sal_bonus
        + s.big_bonus
        + np.where(s.auto, p["auto_hq_bonus"].value, 0)
        + np.where(s.sj_bonus, p["south_jersey_mri_bonus"].value, 0)
    )


def gross_limit_246d(s: Project) -> None:
    """C.34:1B-246 d.: base + increases, limited per job per year by the first tier that applies, or by
    the disaster recovery project's limit when that is lower."""
    tiers = s.p["gross_limit"]
    which = first_tier(tiers, s.f)
    limit = pick(tiers, which, "value", 0).astype(np.int64)
    cite = pick(tiers, which, "cite", "")
    disaster = s.p["disaster_recovery_gross_limit"]
    lower = s.flag[DISASTER] & (disaster.value < limit)
    s.gross_cap = np.where(lower, disaster.value, limit)
    s.gross_cap_cite = np.where(lower, disaster.cite, cite)
    s.raw_gross = s.base + s.bonus
    s.gross = np.minimum(s.raw_gross, s.gross_cap)


def retained_246e(s: Project) -> None:
    """C.34:1B-246 e.: each new job earns the gross amount; each retained job the lesser of 50% of it and
    Capital Investment / (10 x jobs), or all of it when the project replaces a disaster-damaged facility
    or is a mega project of an automobile manufacturer's US headquarters in a Priority area or Growth Zone.
    The result is the ordinary annual credit "as calculated pursuant to subsections a. through e."."""
    p = s.p
    gross_q = Q(s.gross)
    s.full = s.flag[REPLACES] | (s.flag[MEGA] & s.flag[AUTO_HQ] & s.f[AREA].isin(p["full_retained_areas"].value).to_numpy())
    half = gross_q * p["retained_share"].value
    per_job_capex = (s.capex * p["retained_capex_share"].value) / Q(np.maximum(s.jobs, 1))
    s.capex_binds = (s.jobs > 0) & (per_job_capex < half)
    s.per_retained = half.where(~s.capex_binds, per_job_capex).where(~s.full, gross_q * p["full_retained_share"].value)
    s.ordinary_ae = gross_q * Q(s.new) + s.per_retained * Q(s.retained)


def annual_limits_246f(s: Project) -> None:
    """C.34:1B-246 f.: the annual maximum (the first tier that applies), 90% of withholdings under f.(5)
    and f.(6), and, for an application whose a.-e. amount is in excess of $4,000,000, the authority's
    amount necessary. Tourism District counts for f.(1) only in a Growth Zone."""
    f, p, common = s.f, s.p, s.common
    tourism_areas = common["tourism_district_areas"]
    s.emit(
        "TOURISM_DISTRICT_OUTSIDE_GROWTH_ZONE",
        s.flag[TOURISM] & ~f[AREA].isin(tourism_areas.value).to_numpy(),
        area=f[AREA],
        citation=tourism_areas.cite,
    )
    tiers = p["annual_limit"]
    which = first_tier(tiers, f)
    s.cap = Q(pick(tiers, which, "value", 0).astype(np.int64))
    s.cap_cite = pick(tiers, which, "cite", "")
    s.capped = s.ordinary_ae > s.cap
    annual = s.ordinary_ae.minimum(s.cap)
    # 90% of withholdings (f.(5), f.(6); lifted under 2014 in a redevelopment or rehabilitation area)
    exempt = p["withholdings_exempt_flag"].value
    s.wh_applies = pick(tiers, which, "withholdings", False).astype(bool)
    if exempt:
        s.wh_applies &= ~s.flag[exempt]
    s.wh_given = f[WITHHOLD].notna().to_numpy()
    s.wh_limit = Q(f[WITHHOLD].fillna(0).astype("int64")) * p["withholdings_share"].value
    s.before_wh = annual
    s.wh_cut = s.wh_applies & s.wh_given & (annual > s.wh_limit)
    annual = annual.where(~s.wh_cut, s.wh_limit)
    # the amount necessary, tested on the amount calculated under a. to e.
    necessity = p["necessity_threshold"]
    s.needs = s.ordinary_ae > Q.of(necessity.value, s.n)
    s.an_given = f[NECESSARY].notna().to_numpy()
    s.an = Q(f[NECESSARY].fillna(0).astype("int64"))
    s.before_an = annual
    s.an_cut = s.needs & s.an_given & (annual > s.an)
    s.ordinary = annual.where(~s.an_cut, s.an)


def mrera_alternative_246d(s: Project) -> None:
    """C.34:1B-246 d., last paragraph: in a Growth Zone qualifying under MRERA with enough jobs new to the
    municipality, the greater of the ordinary annual credit (after every limit of f.) and Capital
    Investment / 10 within the highest tier met and the f.(1) limit; not subject to the amount
    necessary. A tie keeps the ordinary amount. Findings follow the amount awarded."""
    f, p = s.f, s.p
    tiers = p["mrera_tiers"]
    jnm = f[JNM].fillna(f[NEW]).to_numpy(dtype=np.int64)
    mrera = (f[AREA] == MRERA_AREA).to_numpy() & (jnm >= p["mrera_min_jobs_new_to_municipality"].value)
    met = [(jnm >= t.extra["min_jobs"]) & (s.capex >= Q.of(t.extra["min_capex"], s.n)) for t in tiers]
    s.m_which = np.where(mrera, first_tier(tiers, f, met), -1)
    tier_limit = pick(tiers, s.m_which, "value", None)
    has_limit = ~pd.isna(tier_limit)
    s.alt_raw = s.capex * p["mrera_capex_share"].value
    alt = s.alt_raw.where(~has_limit, s.alt_raw.minimum(Q(np.where(has_limit, tier_limit, 0).astype(np.int64))))
    s.alt_cut = (s.m_which >= 0) & (alt > s.cap)  # the f.(1) limit (the row's annual maximum)
    s.alt = alt.minimum(s.cap)
    s.use_alt = (s.m_which >= 0) & (s.alt > s.ordinary)
    s.emit(
        "MRERA_ALTERNATIVE_APPLIED",
        s.use_alt,
        alternative=s.series(s.alt.cents()),
        ordinary=s.series(s.ordinary.cents()),
        tier=s.series(pick(tiers, s.m_which, "label", "")),
        citation=s.series(pick(tiers, s.m_which, "cite", "")),
    )
    # the limit findings of the amount awarded
    ordinary = ~s.use_alt
    s.emit(
        "ANNUAL_CAP_APPLIED",
        np.where(s.use_alt, s.alt_cut, s.capped),
        credit=s.series(np.where(s.use_alt, alt.cents(), s.ordinary_ae.cents())),
        cap=s.series(s.cap.cents()),
        citation=s.series(s.cap_cite),
    )
    s.emit("WITHHOLDINGS_NOT_PROVIDED", ordinary & s.wh_applies & ~s.wh_given, citation=p["withholdings_share"].cite)
    s.emit(
        "WITHHOLDINGS_CAP_APPLIED",
        ordinary & s.wh_cut,
        credit=s.series(s.before_wh.cents()),
        withholdings=f[WITHHOLD],
        limit=s.series(s.wh_limit.cents()),
        citation=p["withholdings_share"].cite,
    )
    necessity = p["necessity_threshold"]
    s.emit(
        "NECESSITY_DETERMINATION_REQUIRED",
        ordinary & s.needs & ~s.an_given,
        column=s.series(NECESSARY),
        credit=s.series(s.ordinary_ae.cents()),
        threshold=necessity.value,
        citation=necessity.cite,
    )


def award_246a(s: Project) -> None:
    """C.34:1B-246 a.: the annual credit, rounded half up to the cent once, is credited each year of the
    eligibility period; the Total Award is that rounded amount times the years."""
    s.annual = s.ordinary.where(~s.use_alt, s.alt).cents()
    s.period = s.f[PERIOD].fillna(s.common["default_eligibility_period"].value).to_numpy(dtype=np.int64)
    s.total = s.annual * s.period


def net_benefit_244a3(s: Project) -> None:
    """C.34:1B-244 a.(3): the net benefit to the State must be at least 110% of the Total Award (100% in a
    Growth Zone qualifying under MRERA)."""
    f, common = s.f, s.common
    s.nb_given = f[NET_BENEFIT].notna().to_numpy()
    nb = Q(f[NET_BENEFIT].fillna(0).astype("int64"))
    share, s.nb_cite = lookup(common["net_benefit_minimum_ratio"], f[AREA].where(f[AREA] == MRERA_AREA, "Other"))
    s.nb_share = share.map(lambda v: f"{float(v):.0%}").to_numpy(dtype=object)
    total = Q(s.total)
    s.nb_bad = s.nb_given & (nb < total * Q.from_fractions(share))
    s.nb_ratio = np.where(s.nb_given & (s.total != 0), (nb / total.where(s.total != 0, 1)).float(), np.nan)
    s.emit(
        "NET_BENEFIT_BELOW_THRESHOLD",
        s.nb_bad,
        net_benefit=f[NET_BENEFIT],
        total=s.series(s.total),
        share=s.series(s.nb_share),
        ratio=s.series(s.nb_ratio),
        citation=s.nb_cite,
    )
    s.emit("NET_BENEFIT_NOT_PROVIDED", ~s.nb_given, citation=s.nb_cite)


def prior_incentives_247e(s: Project) -> None:
    """C.34:1B-247 e.: a business that previously received BEIP or BRRAP incentives may get an agreement
    only when e.(1) (obligations satisfied) or e.(2) (investment and jobs separate) holds. A prior
    record counts when it is neither Invalid nor Ineligible, is the same business, and was received
    before the Application Date (BEIP: Agreement Date before it; BRRAP: First Tax Period not after its
    year). Blank in either column means not stated."""
    f = s.f
    bar = s.common["prior_incentive_bar"]
    s.prior_bars = np.zeros(s.n, dtype=bool)
    s.prior_text = np.full(s.n, "", dtype=object)
    count, text = _prior_matches(f, s.context.prior)
    has = count > 0
    if not has.any():
        return
    s.prior_text = text
    satisfied = f[SATISFIED].astype("boolean").to_numpy(dtype=object, na_value=None)
    separate = f[SEPARATE].astype("boolean").to_numpy(dtype=object, na_value=None)
    either_yes = (satisfied == True) | (separate == True)  # noqa: E712 - nullable booleans: True, False or None
    both_no = (satisfied == False) & (separate == False)  # noqa: E712
    s.prior_bars = has & both_no
    records = s.series(s.prior_text)
    business = f[NAME]
    date = f[APP_DATE]
    because = np.select(
        [satisfied == True, separate == True],  # noqa: E712
        [f"{SATISFIED} = Y (e.(1))", f"{SEPARATE} = Y (e.(2))"],
        "",
    )
    blank = np.where(
        pd.isna(satisfied) & pd.isna(separate),
        f"{SATISFIED} and {SEPARATE} are",
        np.where(pd.isna(satisfied), f"{SATISFIED} is", f"{SEPARATE} is"),
    )
    s.emit(
        "PRIOR_INCENTIVE_RECEIVED",
        has & either_yes,
        business=business,
        date=date,
        records=records,
        because=s.series(because),
        citation=bar.cite,
    )
    s.emit(
        "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN",
        has & ~either_yes & ~both_no,
        business=business,
        date=date,
        records=records,
        blank=s.series(blank),
        citation=bar.cite,
    )
    s.emit("PRIOR_INCENTIVE_BARS_AGREEMENT", s.prior_bars, business=business, date=date, records=records, citation=bar.cite)


def _semi(a: str, b: str) -> str:
    return a + "; " + b


def _prior_matches(f: pd.DataFrame, prior: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """For each row, how many prior records count and the text naming them (the earliest
    LISTED_PRIOR_RECORDS, then "and N more"). A record counts from the day after its Agreement Date
    (BEIP), or from 1 January of its First Tax Period (BRRAP), so a row's records are the first ones of
    its business in that order: one sorted pass (merge_asof), never every row against every record."""
    n = len(f)
    count, text = np.zeros(n, dtype=np.int64), np.full(n, "", dtype=object)
    prior = prior[~prior["status"].isin(NOT_COUNTED)].assign(key=business_key(prior["business_name"])).dropna(subset=["key"])
    if prior.empty:
        return count, text
    date = pd.to_datetime(prior["date"], errors="coerce")
    year_start = pd.to_datetime(pd.to_numeric(prior["year"], errors="coerce").astype("Int64").astype(str) + "-01-01", errors="coerce")
    prior = prior.assign(counts_from=date.add(pd.Timedelta(days=1)).fillna(year_start)).dropna(subset=["counts_from"])
    prior = prior.sort_values(["key", "counts_from", "sheet", "record_id"], kind="stable")
    prior = prior.assign(rank=prior.groupby("key").cumcount() + 1)
    prior["label"] = (
        prior["sheet"] + " " + prior["record_id"].astype(str) + " (" + prior["received"].astype(str) + "; "
        + prior["workbook"].astype(str) + ", run " + prior["run_date"].astype(str) + ")"
    )  # fmt: skip
    listed = prior[prior["rank"] <= LISTED_PRIOR_RECORDS]
    # the text of each business's first 1, 2, ... LISTED_PRIOR_RECORDS records
    prefixes = listed.assign(text=listed.groupby("key")["label"].transform(lambda labels: list(itertools.accumulate(labels, _semi))))
    rows = pd.DataFrame(
        {"pos": np.arange(n), "key": business_key(f[NAME]).to_numpy(), "app": f[APP_DATE].astype("datetime64[s]").to_numpy()}
    )
    rows = rows.dropna(subset=["key", "app"]).astype({"key": object}).sort_values("app", kind="stable")
    right = (
        prior[["key", "counts_from", "rank"]]
        .astype({"key": object, "counts_from": "datetime64[s]"})
        .sort_values(["counts_from", "rank"], kind="stable")
    )
    hit = pd.merge_asof(rows, right, left_on="app", right_on="counts_from", by="key", direction="backward").dropna(subset=["rank"])
    if hit.empty:
        return count, text
    hit = hit.assign(rank=hit["rank"].astype(np.int64))
    hit = hit.assign(shown=np.minimum(hit["rank"], LISTED_PRIOR_RECORDS)).merge(
        prefixes[["key", "rank", "text"]].astype({"key": object}).rename(columns={"rank": "shown"}), on=["key", "shown"], how="left"
    )
    m = hit["rank"].to_numpy()
    more = np.where(m > LISTED_PRIOR_RECORDS, "; and " + pd.Series(m - LISTED_PRIOR_RECORDS).map("{:,}".format).to_numpy() + " more", "")
    pos = hit["pos"].to_numpy()
    count[pos] = m
    text[pos] = hit["text"].to_numpy(dtype=object) + more
    return count, text


STEPS = (
    mega_project_243,
    eligibility_244,
    base_246b,
    increases_246c,
    gross_limit_246d,
    retained_246e,
    annual_limits_246f,
    mrera_alternative_246d,
    award_246a,
    net_benefit_244a3,
    prior_incentives_247e,
)


# -- the Calculation column ---------------------------------------------------------------------


def _join(parts: list[np.ndarray], sep: str) -> np.ndarray:
    """Join text columns, skipping empty pieces (vectorized)."""
    out = np.full(len(parts[0]) if parts else 0, "", dtype=object)
    for p in parts:
        p = np.asarray(p, dtype=object)
        out = np.where(p == "", out, np.where(out == "", p, out + sep + p))
    return out


def _short(cites) -> np.ndarray:
    """Each distinct citation shortened once: 'C.34:1B-246 c.(4)' -> '246c(4)'."""
    cites = pd.Series(np.asarray(cites, dtype=object))
    codes, uniques = pd.factorize(cites, use_na_sentinel=False)
    return np.array([short_cite(u) for u in uniques], dtype=object)[codes] if len(cites) else np.array([], dtype=object)


def _dollars(values) -> np.ndarray:
    return money_text(values, cents=False)


def _pct(fraction) -> str:
    return f"{float(fraction):.0%}"


def _cite(text: np.ndarray | str, cites) -> np.ndarray:
    return text + " [" + _short(cites) + "]"


def _count(values: np.ndarray) -> np.ndarray:
    return pd.Series(values).map("{:g}".format).to_numpy(dtype=object)


def explain(s: Project) -> np.ndarray:
    """The `Calculation` column: one line a reviewer can check by hand, each component with its
    citation, built from the step results."""
    p, common = s.p, s.common
    n = s.n
    mega_tiers = common["mega_project_definition"]
    mega = np.select(
        [s.mega_late & s.mega_defined, s.mega_late, s.mega_not_met, s.mega],
        [
            _cite("mega project application late: computed as ordinary", np.full(n, common["mega_project_deadline"].cite)),
            _cite("mega project application late: computed as ordinary", np.full(n, common["mega_project_deadline"].cite)),
            "mega project definition NOT met: computed as ordinary",
            _cite("mega project " + pick(mega_tiers, s.mega_which, "label", "").astype(object), pick(mega_tiers, s.mega_which, "cite", "")),
        ],
        "",
    )
    eligibility = (
        "min capex "
        + money_text(s.min_capex.cents())
        + " ["
        + _short(s.rate_cite.to_numpy(dtype=object))
        + "] "
        + np.where(s.capex_ok, "met", "NOT met")
        + "; min jobs "
        + _count(s.min_new)
        + " new or "
        + _count(s.min_ret)
        + " total ["
        + _short(s.jobs_cite.to_numpy(dtype=object))
        + "] "
        + np.where(s.jobs_ok, "met", "NOT met")
    )
    base_tiers = p["base_amount"]
    pieces = [
        np.where(
            s.base_which >= 0,
            _cite(pick(base_tiers, s.base_which, "label", "") + " " + _dollars(s.base), pick(base_tiers, s.base_which, "cite", "")),
            "",
        )
    ]
    for t, hit in zip(p["flag_bonuses"], s.flag_hits, strict=True):
        pieces.append(np.where(hit, f"{t.label} {_dollars([t.value])[0]} [{short_cite(t.cite)}]", ""))
    ind_tiers = p["industrial_bonus"]
    pieces.append(
        np.where(
            s.ind_bonus > 0,
            _cite(
                "industrial investment "
                + _dollars(s.ind_bonus)
                + " ("
                + s.ind_steps.astype(str)
                + f" x {_pct(p['industrial_step'].value)} over minimum, cap "
                + _dollars(s.ind_cap)
                + ")",
                pick(ind_tiers, s.ind_which, "cite", ""),
            ),
            "",
        )
    )
    pieces.append(
        np.where(
            s.sal_bonus > 0,
            "salary "
            + _dollars(s.sal_bonus)
            + " ("
            + s.sal_steps.astype(str)
            + f" x {_pct(p['salary_step'].value)} over benchmark) [{short_cite(p['salary_step'].cite)}]",
            "",
        )
    )
    big = p["large_employment_bonus"]
    pieces.append(
        np.where(
            s.big_which >= 0,
            _cite(pick(big, s.big_which, "label", "") + " " + _dollars(s.big_bonus), pick(big, s.big_which, "cite", "")),
            "",
        )
    )
    auto, sj = p["auto_hq_bonus"], p["south_jersey_mri_bonus"]
    pieces.append(np.where(s.auto, f"auto HQ {_dollars([auto.value])[0]} [{short_cite(auto.cite)}]", ""))
    pieces.append(np.where(s.sj_bonus, f"South Jersey MRI {_dollars([sj.value])[0]} [{short_cite(sj.cite)}]", ""))
    gross = (
        _join(pieces, " + ")
        + " = "
        + _dollars(s.raw_gross)
        + "; "
        + _cite("cap " + _dollars(s.gross_cap), s.gross_cap_cite)
        + np.where(s.raw_gross > s.gross_cap, " applied: gross " + _dollars(s.gross), " not reached")
    )
    retained = np.select(
        [s.full, s.capex_binds],
        [
            f"{_pct(p['full_retained_share'].value)} of gross [{short_cite(p['full_retained_share'].cite)}]",
            f"capex x {p['retained_capex_share'].value} / "
            + s.jobs.astype(str)
            + f" jobs, below {_pct(p['retained_share'].value)} of gross [{short_cite(p['retained_capex_share'].cite)}]",
        ],
        f"{_pct(p['retained_share'].value)} of gross [{short_cite(p['retained_share'].cite)}]",
    )
    ordinary = (
        "retained/job "
        + money_text(s.per_retained.cents())
        + " = "
        + retained
        + "; a.-e. "
        + s.new.astype(str)
        + " new x "
        + _dollars(s.gross)
        + " + "
        + s.retained.astype(str)
        + " retained x "
        + money_text(s.per_retained.cents())
        + " = "
        + money_text(s.ordinary_ae.cents())
    )
    necessity = p["necessity_threshold"]
    wh = p["withholdings_share"]
    limits = _join(
        [
            _cite("annual cap " + money_text(s.cap.cents()), s.cap_cite) + np.where(s.capped, " applied", " not reached"),
            np.where(
                s.wh_cut,
                f"90% of withholdings [{short_cite(wh.cite)}] "
                + money_text(s.wh_limit.cents())
                + " applied to "
                + money_text(s.before_wh.cents()),
                "",
            ),
            np.where(
                s.needs,
                f"a.-e. over {_dollars([necessity.value])[0]}: amount necessary [{short_cite(necessity.cite)}] "
                + np.where(
                    s.an_given,
                    money_text(s.an.cents()) + np.where(s.an_cut, " applied to " + money_text(s.before_an.cents()), " not reached"),
                    "not given",
                ),
                "",
            ),
        ],
        "; ",
    )
    m_tiers = p["mrera_tiers"]
    mrera = np.where(
        s.m_which >= 0,
        "; MRERA alternative "
        + money_text(s.alt.cents())
        + f" (capex x {p['mrera_capex_share'].value}, "
        + pick(m_tiers, s.m_which, "label", "").astype(object)
        + np.where(s.alt_cut, ", annual cap applied", "")
        + ") ["
        + _short(pick(m_tiers, s.m_which, "cite", ""))
        + "] vs ordinary "
        + money_text(s.ordinary.cents())
        + np.where(s.use_alt, ": alternative used", ": ordinary kept"),
        "",
    )
    ineligible = s.ineligible
    verdict = _join(
        [
            np.where(~s.capex_ok, "capex below minimum", ""),
            np.where(~s.jobs_ok, "jobs below minimum", ""),
            np.where(s.late, "application after deadline", ""),
            np.where(s.retail_bad, "retail", ""),
            np.where(s.nb_bad, "net benefit below threshold", ""),
            np.where(s.prior_bars, "prior incentive bars agreement", ""),
        ],
        ", ",
    )
    nb = np.where(
        s.nb_given,
        "; net benefit "
        + money_text(s.f[NET_BENEFIT].fillna(0).to_numpy(dtype=np.int64))
        + " vs "
        + s.nb_share
        + " of award ["
        + _short(s.nb_cite.to_numpy(dtype=object))
        + "]"
        + np.where(s.nb_bad, " not met", " met"),
        "; net benefit not given",
    )
    prior = np.where(s.prior_text != "", "; prior incentives [" + short_cite(common["prior_incentive_bar"].cite) + "]: " + s.prior_text, "")
    head = _join([np.full(n, s.version + " text"), mega, eligibility], "; ")
    return (
        head
        + "; "
        + gross
        + "; "
        + ordinary
        + "; "
        + limits
        + mrera
        + "; annual "
        + money_text(s.annual)
        + " (to the cent) x "
        + s.period.astype(str)
        + " years = "
        + money_text(s.total)
        + nb
        + prior
        + np.where(ineligible, "; NOT ELIGIBLE (" + verdict + "): award 0", "; eligible")
    )


def _calculate(f: pd.DataFrame, common: dict, p: dict, version: str, context: RunContext) -> tuple[pd.DataFrame, list, np.ndarray]:
    s = Project(f, common, p, version, context)
    for step in STEPS:
        step(s)
    s.ineligible = ~s.capex_ok | ~s.jobs_ok | s.late | s.retail_bad | s.nb_bad | s.prior_bars
    computed = pd.DataFrame(
        {
            "Minimum Capital Investment ($)": pd.array(s.min_capex.cents(), dtype="Int64"),
            "Minimum New Jobs": s.min_new,
            "Minimum Retained Jobs": s.min_ret,
            "Eligible": np.where(s.ineligible, "N", "Y"),
            "Base Credit per Job ($)": pd.array(s.base, dtype="Int64"),
            "Bonus per Job ($)": pd.array(s.bonus, dtype="Int64"),
            "Gross Credit per Job ($)": pd.array(s.gross, dtype="Int64"),
            "Retained Credit per Job ($)": pd.array(s.per_retained.cents(), dtype="Int64"),
            "Annual Credit ($)": pd.array(np.where(s.ineligible, 0, s.annual), dtype="Int64"),
            "Total Award ($)": pd.array(np.where(s.ineligible, 0, s.total), dtype="Int64"),
            "Commitment Period (years)": (Q(s.period) * common["commitment_period_share"].value).float(),
            "Net Benefit Ratio": s.nb_ratio,
            "Calculation": explain(s),
        },
        index=s.idx,
    )
    return computed, s.findings, s.ineligible


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    context = context or RunContext.today()
    computed, findings, ineligible = [], [], []
    for version, params in rules.versions.items():
        rows = frame[(frame[VERSION] == version).to_numpy()]
        if len(rows):
            c, fnd, inel = _calculate(rows, rules.parameters, params, version, context)
            computed.append(c)
            findings.extend(fnd)
            ineligible.append(pd.Series(inel, index=rows.index))
    if not computed:
        empty = pd.DataFrame({h: pd.Series(dtype=object) for h in SPEC.computed}, index=frame.index)
        return Calculation(empty, [], pd.Series(False, index=frame.index))
    out = pd.concat(computed).reindex(frame.index)
    return Calculation(out, findings, pd.concat(ineligible).reindex(frame.index, fill_value=False))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Projects, eligible, annual credit and total award by Area and Statute Version; rows by code."""
    rows = frame.assign(_eligible=frame["Eligible"].eq("Y"))
    pivot = (
        rows.groupby([AREA, VERSION], sort=True, dropna=False)
        .agg(
            **{
                "Projects": (ID, "size"),
                "Eligible": ("_eligible", "sum"),
                "Annual Credit ($)": ("Annual Credit ($)", "sum"),
                "Total Award ($)": ("Total Award ($)", "sum"),
            }
        )
        .reset_index()
    )
    pivot[AREA] = pivot[AREA].astype(object).fillna("(invalid)")
    pivot[VERSION] = pivot[VERSION].astype(object).fillna("(invalid)")
    by_year = (
        rows.assign(Year=rows[APP_DATE].dt.year.astype("Int64").astype(str))
        .groupby("Year")
        .agg(**{"Projects": (ID, "size"), "Eligible": ("_eligible", "sum"), "Total Award ($)": ("Total Award ($)", "sum")})
        .reset_index()
    )
    by_code = codes.drop_duplicates(["row", "Code"]).groupby("Code").size().rename("Projects").reset_index()
    by_code = by_code.sort_values(["Projects", "Code"], ascending=[False, True], ignore_index=True)  # the most frequent first
    money = {"Annual Credit ($)": "money", "Total Award ($)": "money"}
    return [
        SummaryTable("Projects and awards by Area and Statute Version", pivot, money),
        SummaryTable("Projects and awards by year of application", by_year, money),
        SummaryTable("Projects by finding code", by_code),
    ]
