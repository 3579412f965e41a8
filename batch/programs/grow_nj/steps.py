"""Grow New Jersey Assistance Program award (README, sheet `GrowNJ`; C.34:1B-243, -244, -246, -247).

Pure and vectorized: `calculate(frame, rules, context)` takes the validated rows of the `GrowNJ`
sheet (money in integer cents) and returns the computed columns, the findings and the rows the
statute bars. Each row's Statute Version picks `batch/programs/grow_nj/2014.yaml` or `2017.yaml`;
eligibility values are in `common.yaml`. Amounts stay exact fractions of cents (`batch.programs._kit.exact.Q`)
until the annual credit is rounded to the cent, once.

The calculation is a sequence of named steps, one per provision, in the statute's order. Each
step reads the columns earlier steps left on the `Project` and adds its own:

    mega_project_243 -> eligibility_244 -> base_246b -> increases_246c -> gross_limit_246d
    -> retained_246e -> annual_limits_246f -> mrera_alternative_246d -> award_246a
    -> net_benefit_244a3 -> prior_incentives_247e

Every step but the last reads only the row's own figures (ROW_STEPS, `calculate_rows`: the
pipeline may run them on chunks of the sheet). The last reads other rows too: the sheet's own
rows are prior Grow NJ awards of each other, by their own results, so it runs once on every valid
row of the sheet, both statute versions together (ACROSS_STEPS, `across_rows`, on the `Sheet`).
`calculate` is the two in turn.

The `Calculation` text is built afterwards from the step results, in `explain.py`: one explain
function per step (`explain_mega_project_243`, ...) that `explain` and `explain_tails` assemble;
no step builds text, and every statute number in it is read from the rules. A step's findings take their fields
on the rows that have the finding only (`emit`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit import rules_text
from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable, append_tails, totals_by
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.exact import Q
from batch.programs._kit.findings import emit
from batch.programs._kit.rules import Rules, lookup
from batch.programs._kit.steps import LISTED_RECORDS as LISTED_PRIOR_RECORDS
from batch.programs._kit.steps import business_key, first_tier, pick, tier_applies
from batch.programs._kit.text import cents_of, dollars, each
from batch.programs.grow_nj.sheet import GROW_NJ as SPEC
from batch.programs.grow_nj.sheet import LAWS

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


class _Rows(Steps):
    """Rows the steps read, and the findings they give."""

    def __init__(self, f: pd.DataFrame, common: dict, context: RunContext):
        super().__init__(f, common)
        self.common, self.context = common, context

    def emit(self, code: str, mask: np.ndarray, **fields) -> None:
        """A finding on the rows where mask holds. A field is a scalar, a column of the frame, an
        array or a `Q` over every row (a Q rounded to the cent), or a function of row positions;
        arrays, Q and functions are taken on the finding's rows only; nothing where it holds nowhere."""
        rows = np.flatnonzero(mask)
        if not len(rows):
            return
        for name, value in fields.items():
            if isinstance(value, Q):
                fields[name] = cents_of(value, rows)
            elif isinstance(value, np.ndarray):
                fields[name] = value[rows]
            elif callable(value):
                fields[name] = value(rows)
        self.findings.append(emit(code, self.idx[rows], **fields))


class Project(_Rows):
    """The rows of one statute version and every column the steps have computed so far."""

    def __init__(self, f: pd.DataFrame, common: dict, p: dict, version: str, context: RunContext):
        super().__init__(f, common, context)
        self.p, self.version = p, version
        self.flag = {c.header: f[c.header].to_numpy(dtype=bool) for c in SPEC.columns if c.kind == "yesno" and not c.blank_unknown}
        self.growth_zone = f[AREA].isin(common["growth_zone_areas"].value).to_numpy()
        self.south_jersey = f[COUNTY].isin(common["south_jersey_counties"].value).to_numpy()
        self.reduced = self.growth_zone | self.south_jersey
        self.capex = Q(f[CAPEX])
        self.new = f[NEW].to_numpy(dtype=np.int64)
        self.retained = f[RETAINED].to_numpy(dtype=np.int64)
        self.jobs = self.new + self.retained


# Why a row is not eligible, each by the step that decides it (the Calculation text names them);
# the steps across rows add the prior-incentive bar.
REASONS = {
    "capex_below": "capex below minimum",
    "jobs_below": "jobs below minimum",
    "late": "application after deadline",
    "retail_bad": "retail",
    "nb_bad": "net benefit below threshold",
}


class Sheet(_Rows):
    """Every valid row of the sheet, of both statute versions and every chunk, for the steps that
    read other rows (C.34:1B-247 e.): what the other steps found of each row (`carry`) and what
    these steps add."""

    def __init__(self, f: pd.DataFrame, common: dict, context: RunContext, carry: pd.DataFrame):
        super().__init__(f, common, context)
        for attr in REASONS:
            setattr(self, attr, carry[attr].to_numpy(dtype=bool))
        # not eligible by the row's own figures, before any step across rows
        self.own_ineligible = np.logical_or.reduce([getattr(self, attr) for attr in REASONS])


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
        jobs=s.jobs,
        new=f[NEW],
        outcome=lambda r: np.where(met[r], "it meets " + pick(tiers, which[r], "cite", ""), "it meets none"),
        citation=definition_cite,
    )
    requirements = _mega_requirements(tiers)

    def where(r):
        area = np.char.add(", Area ", f[AREA].iloc[r].astype(str).to_numpy().astype(str)).astype(object)
        return np.where(pd.isna(basis[r]), "", area + np.where(s.south_jersey[r], ", a South Jersey county", ""))

    s.emit(
        "MEGA_PROJECT_DEFINITION_NOT_MET",
        s.mega_not_met,
        basis=lambda r: np.where(pd.isna(basis[r]), "", " under basis " + basis[r].astype(str)),
        requirement=lambda r: f[MEGA_BASIS].iloc[r].astype(object).map(requirements).fillna(requirements[None]).to_numpy(),
        capex=f[CAPEX],
        jobs=s.jobs,
        new=f[NEW],
        where=where,
        citation=lambda r: np.where(pd.isna(basis[r]), definition_cite, definition_cite + " (" + basis[r].astype(str) + ")"),
    )
    s.emit("MEGA_PROJECT_APPLICATION_LATE", s.mega_late, date=f[APP_DATE], deadline=deadline.value, citation=deadline.cite)
    s.f = f.assign(**{MEGA: s.mega})
    s.flag[MEGA] = s.mega


def _mega_requirements(tiers) -> dict:
    """What each basis of the mega-project definition needs, in words, from the rules data (None: a
    blank basis, any tier tried when the basis is blank)."""

    def words(t) -> str:
        jobs = "new jobs" if t.extra["jobs"] == "created" else "jobs"
        parts = [f"Capital Investment over ${dollars([t.extra['min_capex_over']])[0]}"] if "min_capex_over" in t.extra else []
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
    """C.34:1B-244 b., c., e.; C.34:1B-243 "qualified business facility"; C.34:1B-247 b.(1): minimum
    capital investment per square foot, minimum jobs (both reduced in a Growth Zone or a South Jersey
    county), the application deadline, and no point-of-final-purchase retail outside a Growth Zone
    and the Tourism District (each exception with its own provision)."""
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
        minimum=s.min_capex,
        rate=rate,
        area=f[GLA],
        premises=f[PREMISES],
        reduction=lambda r: np.where(s.reduced[r], " x " + reduction, ""),
        citation=s.rate_cite,
    )

    job_classes = common["job_classes"]
    job_class = pd.Series(
        np.select([tier_applies(t, f, BUSINESS) for t in job_classes], [t.label for t in job_classes], "Other"), index=s.idx
    )
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
        jobs=s.jobs,
        min_new=s.min_new,
        min_retained=s.min_ret,
        citation=s.jobs_cite,
    )

    deadline = common["application_deadline"]
    s.late = (f[APP_DATE] >= deadline.value).to_numpy()
    s.emit("APPLICATION_AFTER_DEADLINE", s.late, date=f[APP_DATE], deadline=deadline.value, citation=deadline.cite)
    # retail: the first tier that applies says whether it may be eligible, and by which provision
    retail = common["retail_allowed_areas"]
    retail_which = first_tier(retail, f)
    s.retail_bad = s.flag[RETAIL] & ~pick(retail, retail_which, "value", False).astype(bool)
    s.emit("RETAIL_NOT_ELIGIBLE", s.retail_bad, area=f[AREA], citation=lambda r: pick(retail, retail_which[r], "cite", ""))


def base_246b(s: Project) -> None:
    """C.34:1B-246 b.: the base amount per job per year, the first tier that applies."""
    tiers = s.p["base_amount"]
    s.base_which = first_tier(tiers, s.f)
    s.base = pick(tiers, s.base_which, "value", 0).astype(np.int64)
    fallback = pick(tiers, s.base_which, "finding", None) == "CREATE_ZONE_BASE_NOT_MET"
    if fallback.any():
        # the tier the fallback stands in for: its area's tier that asks for columns to be Y
        instead = next(t for t in tiers if t.extra.get("finding") == "CREATE_ZONE_BASE_NOT_MET")
        wanted = next(t for t in tiers if t.area == instead.area and t.all_flags)
        s.emit(
            "CREATE_ZONE_BASE_NOT_MET",
            fallback,
            base=s.base,
            zone_base=rules_text.money(wanted.value),
            needs=" and ".join(f"{column} = Y" for column in wanted.all_flags),
            citation=lambda r: pick(tiers, s.base_which[r], "cite", ""),
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
    # never a zero divisor: Gross Leasable Area is more than 0 (validated) and every rate per square foot is positive
    excess = (s.capex - s.min_capex) / (s.min_capex * p["industrial_step"].value)
    s.ind_steps = np.clip(excess.floor(), 0, None)
    s.ind_bonus = np.where(s.ind_which >= 0, np.minimum(s.ind_steps * p["industrial_step_amount"].value, s.ind_cap), 0)
    # (6) salary: each full step above the benchmark
    avg, bench = f[AVG], f[BENCH]
    salary_ok = (avg.notna() & bench.notna() & (bench > 0)).to_numpy()
    avg_q = Q(avg.fillna(0).astype("int64"))
    bench_q = Q(bench.fillna(1).astype("int64").where(salary_ok, 1))
    steps = ((avg_q - bench_q) / (bench_q * p["salary_step"].value)).floor()  # bench_q is 1 where no benchmark is given
    s.sal_steps = np.where(salary_ok, np.clip(steps, 0, None), 0)
    s.sal_bonus = np.minimum(s.sal_steps * p["salary_step_amount"].value, p["salary_bonus_cap"].value)
    # (7) large employment, by New + Retained
    big = p["large_employment_bonus"]
    s.big_which = first_tier(big, f, [s.jobs >= t.extra["min_jobs"] for t in big])
    s.big_bonus = pick(big, s.big_which, "value", 0).astype(np.int64)
    omitted = pick(big, s.big_which, "finding", None) == "TEXT_OMITS_601_800_TIER"
    if omitted.any():
        i = next(i for i, t in enumerate(big) if t.extra.get("finding") == "TEXT_OMITS_601_800_TIER")
        above = [t.extra["min_jobs"] for t in big if t.extra["min_jobs"] > big[i].extra["min_jobs"]]
        s.emit(
            "TEXT_OMITS_601_800_TIER",
            omitted,
            jobs=s.jobs,
            tier=f"{big[i].extra['min_jobs']:,}-{min(above) - 1:,}" if above else f"{big[i].extra['min_jobs']:,}+",
            increase=rules_text.money(big[i].value),
            citation=lambda r: pick(big, s.big_which[r], "cite", ""),
        )
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
    """C.34:1B-246 f.: the annual maximum (the first tier that applies), the share of withholdings
    under f.(5) and f.(6) (`withholdings_share`), and, for an application whose a.-e. amount is in
    excess of `necessity_threshold`, the authority's amount necessary. Tourism District counts for f.(1) only in a Growth Zone."""
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
    # the share of withholdings (f.(5), f.(6); lifted under 2014 in a redevelopment or rehabilitation area)
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
        alternative=s.alt,
        ordinary=s.ordinary,
        tier=lambda r: pick(tiers, s.m_which[r], "label", ""),
        citation=lambda r: pick(tiers, s.m_which[r], "cite", ""),
    )
    # the limit findings of the amount awarded
    ordinary = ~s.use_alt
    s.emit(
        "ANNUAL_CAP_APPLIED",
        np.where(s.use_alt, s.alt_cut, s.capped),
        credit=alt.where(s.use_alt, s.ordinary_ae),
        cap=s.cap,
        citation=s.cap_cite,
    )
    share = rules_text.percent(p["withholdings_share"].value)
    s.emit("WITHHOLDINGS_NOT_PROVIDED", ordinary & s.wh_applies & ~s.wh_given, share=share, citation=p["withholdings_share"].cite)
    s.emit(
        "WITHHOLDINGS_CAP_APPLIED",
        ordinary & s.wh_cut,
        credit=s.before_wh,
        withholdings=f[WITHHOLD],
        limit=s.wh_limit,
        share=share,
        citation=p["withholdings_share"].cite,
    )
    necessity = p["necessity_threshold"]
    s.emit(
        "NECESSITY_DETERMINATION_REQUIRED",
        ordinary & s.needs & ~s.an_given,
        column=NECESSARY,
        credit=s.ordinary_ae,
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
    # the share and its text once per distinct case (MRERA Growth Zone or Other), spread to the rows
    case, cases = pd.factorize(f[AREA].where(f[AREA] == MRERA_AREA, "Other"), use_na_sentinel=False)
    shares, cites = lookup(common["net_benefit_minimum_ratio"], pd.Series(cases))
    s.nb_cite = pd.Series(cites.to_numpy(dtype=object)[case], index=s.idx, dtype=object)
    s.nb_share = np.array([f"{float(v):.0%}" for v in shares], dtype=object)[case]
    share = Q.from_fractions(shares)
    total = Q(s.total)
    s.nb_bad = s.nb_given & (nb < total * Q(share.num[case], share.den[case]))
    s.nb_ratio = np.where(s.nb_given & (s.total != 0), (nb / total.where(s.total != 0, 1)).float(), np.nan)
    s.emit(
        "NET_BENEFIT_BELOW_THRESHOLD",
        s.nb_bad,
        net_benefit=f[NET_BENEFIT],
        total=s.total,
        share=s.nb_share,
        ratio=s.nb_ratio,
        citation=s.nb_cite,
    )
    s.emit("NET_BENEFIT_NOT_PROVIDED", ~s.nb_given, citation=s.nb_cite)


def prior_incentives_247e(s: Sheet) -> None:
    """C.34:1B-247 e.: a business that "has previously received" BEIP, BRRAP or other incentives of the
    authority (Grow NJ among them) may get an agreement only when e.(1) (obligations satisfied) or e.(2)
    (investment and jobs separate) holds. A prior record counts when it is neither Invalid nor
    Ineligible, is the same business, and was received before the Application Date (BEIP: Agreement
    Date before it; BRRAP: First Tax Period not after its year; Grow NJ: another Project ID whose
    Application Date is before it). The sheet's own rows are prior records of each other, by their own
    results: a row barred here is Ineligible and so is not named as a prior record of a later row.
    Blank in either column means not stated."""
    f = s.f
    bar = s.common["prior_incentive_bar"]
    keys = business_key(f[NAME])
    outside = s.context.prior
    # a record of an earlier run of this team with the Project ID of a row of this sheet is an earlier
    # version of that row (the sheet's row counts instead), not another project; another team's
    # record of that ID is another record (a record is known by its team, sheet and record ID)
    if len(outside):
        ours = outside["same_team"].to_numpy(dtype=bool) if "same_team" in outside else True
        outside = _counted(outside[~((outside["sheet"] == SPEC.name) & outside["record_id"].isin(f[ID].astype(str)) & ours)])
    satisfied = f[SATISFIED].astype("boolean").to_numpy(dtype=object, na_value=None)
    separate = f[SEPARATE].astype("boolean").to_numpy(dtype=object, na_value=None)
    either_yes = (satisfied == True) | (separate == True)  # noqa: E712 - nullable booleans: True, False or None
    both_no = (satisfied == False) & (separate == False)  # noqa: E712
    # the sheet's rows that count by their own figures; a row barred below is left out of the records
    # named. It always has a counted record of its own that is earlier than any later row, so whether
    # a later row has prior records never changes: the bar is decided once, in one pass.
    counted = ~s.own_ineligible
    s.prior_bars = np.zeros(s.n, dtype=bool)
    if not len(outside) and not keys.dropna().duplicated().any():
        # no record from elsewhere, and each business on one row: a row's only record is its own,
        # which counts from the day after its own date, so no row has a prior record
        s.prior_text = np.full(s.n, "", dtype=object)
        return
    if both_no.any():
        count, _ = _prior_matches(keys, f[APP_DATE], _records(outside, _sheet_records(s, keys, counted)), listed=False)
        s.prior_bars = (count > 0) & both_no
        counted &= ~s.prior_bars
    count, s.prior_text = _prior_matches(keys, f[APP_DATE], _records(outside, _sheet_records(s, keys, counted)))
    has = count > 0
    records = s.prior_text
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
        because=because,
        citation=bar.cite,
    )
    s.emit(
        "PRIOR_INCENTIVE_CONDITIONS_NOT_SHOWN",
        has & ~either_yes & ~both_no,
        business=business,
        date=date,
        records=records,
        blank=blank,
        citation=bar.cite,
    )
    s.emit("PRIOR_INCENTIVE_BARS_AGREEMENT", s.prior_bars, business=business, date=date, records=records, citation=bar.cite)


def _sheet_records(s: Sheet, keys: pd.Series, counted: np.ndarray) -> pd.DataFrame:
    """The sheet's own rows as prior records (PRIOR_COLUMNS and `key`): those `counted` whose
    business has a name, named by this workbook and run."""
    keep = counted & keys.notna().to_numpy()
    f = s.f[keep]
    day = f[APP_DATE].dt.strftime("%Y-%m-%d")
    return pd.DataFrame(
        {
            "sheet": SPEC.name,
            "record_id": f[ID].astype(str),
            "business_name": f[NAME],
            "status": None,
            "date": day,
            "year": f[APP_DATE].dt.year,
            "received": APP_DATE + " " + day,
            "workbook": s.context.workbook,
            "run_date": s.context.run_day,
            "key": keys[keep],
        }
    )


def _counted(outside: pd.DataFrame) -> pd.DataFrame:
    """The records of other sheets and earlier runs that count (neither Invalid nor Ineligible, with
    a business name), with their business `key`."""
    outside = outside[~outside["status"].isin(NOT_COUNTED)]
    return outside.assign(key=business_key(outside["business_name"])).dropna(subset=["key"])


def _records(outside: pd.DataFrame, sheet: pd.DataFrame) -> pd.DataFrame:
    """The prior records a row may have: those of other sheets and earlier runs, and the sheet's own."""
    if not len(sheet):
        return outside
    return pd.concat([outside, sheet], ignore_index=True) if len(outside) else sheet


def _prior_matches(keys: pd.Series, app: pd.Series, prior: pd.DataFrame, listed: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """For each row (its business `keys` and Application Date `app`), how many prior records count
    and, with `listed`, the text naming them (the earliest LISTED_PRIOR_RECORDS, then "and N more").
    A record counts from the day after its Agreement Date (BEIP) or Application Date (Grow NJ), or
    from 1 January of its First Tax Period (BRRAP), so a row's records are the first ones of its
    business in that order: one sorted pass (merge_asof), never every row against every record."""
    n = len(keys)
    count, text = np.zeros(n, dtype=np.int64), np.full(n, "", dtype=object)
    if prior.empty:
        return count, text
    date = pd.to_datetime(prior["date"], errors="coerce")
    year_start = pd.to_datetime(pd.to_numeric(prior["year"], errors="coerce").astype("Int64").astype(str) + "-01-01", errors="coerce")
    prior = prior.assign(counts_from=date.add(pd.Timedelta(days=1)).fillna(year_start)).dropna(subset=["counts_from"])
    prior = prior.sort_values(["key", "counts_from", "sheet", "record_id"], kind="stable")
    prior = prior.assign(rank=prior.groupby("key").cumcount() + 1)
    rows = pd.DataFrame({"pos": np.arange(n), "key": keys.to_numpy(), "app": app.astype("datetime64[s]").to_numpy()})
    rows = rows.dropna(subset=["key", "app"]).astype({"key": object}).sort_values("app", kind="stable")
    right = (
        prior[["key", "counts_from", "rank"]]
        .astype({"key": object, "counts_from": "datetime64[s]"})
        .sort_values(["counts_from", "rank"], kind="stable")
    )
    hit = pd.merge_asof(rows, right, left_on="app", right_on="counts_from", by="key", direction="backward").dropna(subset=["rank"])
    if hit.empty:
        return count, text
    count[hit["pos"].to_numpy()] = hit["rank"].to_numpy(dtype=np.int64)
    if not listed:
        return count, text
    listed_records = prior[prior["rank"] <= LISTED_PRIOR_RECORDS]
    label = (
        listed_records["sheet"] + " " + listed_records["record_id"].astype(str) + " (" + listed_records["received"].astype(str) + "; "
        + listed_records["workbook"].astype(str) + ", run " + listed_records["run_date"].astype(str) + ")"
    ).to_numpy(dtype=object)  # fmt: skip
    # the text of each business's first 1, 2, ... LISTED_PRIOR_RECORDS records: rank by rank (a
    # business's records are consecutive, in rank order), never business by business
    text_of = label.copy()
    rank = listed_records["rank"].to_numpy()
    for r in range(2, LISTED_PRIOR_RECORDS + 1):
        at = np.flatnonzero(rank == r)
        text_of[at] = text_of[at - 1] + "; " + label[at]
    prefixes = listed_records[["key", "rank"]].assign(text=text_of).astype({"key": object}).rename(columns={"rank": "shown"})
    hit = hit.assign(shown=np.minimum(hit["rank"].astype(np.int64), LISTED_PRIOR_RECORDS)).merge(prefixes, on=["key", "shown"], how="left")
    m = hit["rank"].to_numpy(dtype=np.int64)
    listing = hit["text"].to_numpy(dtype=object)  # each business's text of its first records, shared by its rows
    over = m > LISTED_PRIOR_RECORDS
    listing[over] = listing[over] + each(m[over] - LISTED_PRIOR_RECORDS, "; and {:,} more")
    text[hit["pos"].to_numpy()] = listing
    return count, text


# The steps each row's own figures decide, in the statute's order; then the step that reads other
# rows of the sheet (their own results), run once on every row (`across_rows`).
ROW_STEPS = (
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
)
ACROSS_STEPS = (prior_incentives_247e,)
STEPS = ROW_STEPS + ACROSS_STEPS


def _calculate(
    f: pd.DataFrame, common: dict, p: dict, version: str, context: RunContext
) -> tuple[pd.DataFrame, np.ndarray, list, np.ndarray, pd.DataFrame]:
    """The computed columns of the rows of one statute version, their Calculation text (kept apart,
    as plain objects, until `calculate_rows` has every version's), the findings, the rows not
    eligible by their own figures, and why (REASONS, carried to the steps across rows)."""
    from batch.programs.grow_nj.explain import explain  # the explanation reads these steps' results

    s = run(Project(f, common, p, version, context), ROW_STEPS)
    s.capex_below, s.jobs_below = ~s.capex_ok, ~s.jobs_ok
    carry = pd.DataFrame({attr: getattr(s, attr) for attr in REASONS}, index=s.idx)
    s.ineligible = np.logical_or.reduce([carry[attr].to_numpy() for attr in REASONS])
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
        },
        index=s.idx,
    )
    return computed, explain(s), s.findings, s.ineligible, carry


def _latest_version(rules: Rules) -> str:
    """The latest text of C.34:1B-246 the rules hold: the one a blank Statute Version is computed under."""
    return sorted(rules.versions)[-1]


def statute_version(frame: pd.DataFrame, rules: Rules) -> tuple[np.ndarray, pd.DataFrame]:
    """The text of C.34:1B-246 each row is computed under: its Statute Version (as of P.L.2014, c.63, or
    as amended by P.L.2017, c.221). A blank is computed under the latest text the rules hold, with the
    warning STATUTE_VERSION_NOT_GIVEN: the reviewer confirms which text governs the application."""
    latest = _latest_version(rules)
    blank = frame[VERSION].isna().to_numpy()
    found = emit("STATUTE_VERSION_NOT_GIVEN", frame.index[blank], version=latest, law=LAWS.get(latest, ""))
    return np.where(blank, latest, frame[VERSION].astype(object).to_numpy()), found


def calculate_rows(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    """Every step but those across rows (ROW_STEPS), on the rows given: all of the sheet, or a chunk
    of it. Each row's Statute Version picks its text (`statute_version`). The result is each row's
    own: its Calculation text stops before the prior incentives, and `carry` says why a row is not
    eligible so far."""
    context = context or RunContext.today()
    version_of, blank = statute_version(frame, rules)
    computed, texts, findings, ineligible, carry = [], [], [blank], [], []
    for version, params in rules.versions.items():
        rows = frame[version_of == version]
        if len(rows):
            c, text, fnd, inel, why = _calculate(rows, rules.parameters, params, version, context)
            computed.append(c)
            texts.append(pd.Series(text, index=rows.index, dtype=object))
            findings.extend(fnd)
            ineligible.append(pd.Series(inel, index=rows.index))
            carry.append(why)
    if not computed:
        empty = pd.DataFrame({h: pd.Series(dtype=object) for h in SPEC.computed}, index=frame.index)
        return Calculation(empty, [], pd.Series(False, index=frame.index), pd.DataFrame({a: False for a in REASONS}, index=frame.index))
    out = pd.concat(computed).reindex(frame.index)
    # the long texts are put in the frame's order as plain objects, and made a text column once
    out["Calculation"] = pd.concat(texts).reindex(frame.index).to_numpy()
    carry = pd.concat(carry).reindex(frame.index, fill_value=False)
    return Calculation(out, findings, pd.concat(ineligible).reindex(frame.index, fill_value=False), carry)


def across_rows(frame: pd.DataFrame, calc: Calculation, rules: Rules, context: RunContext | None = None) -> Calculation:
    """The steps across rows (ACROSS_STEPS: C.34:1B-247 e.) once on every valid row of the sheet, both
    statute versions together, given what `calculate_rows` found of each row (`calc`, of the whole
    sheet or its chunks joined): a row the prior-incentive bar makes ineligible gets Eligible N and an
    award of 0, and every row the rest of its Calculation text."""
    if not len(frame):
        return calc
    done, tails = across_parts(frame, calc, rules, context)
    # the texts so far leave the frame, to be completed in place (their own array, not a view)
    head = done.computed.pop("Calculation").to_numpy(dtype=object, copy=True)
    done.computed["Calculation"] = append_tails(head, tails["Calculation"])
    return done


def across_parts(
    frame: pd.DataFrame, calc: Calculation, rules: Rules, context: RunContext | None = None
) -> tuple[Calculation, dict[str, list[np.ndarray]]]:
    """`across_rows` with the Calculation text left as `calc` holds it (or without it): the parts
    the steps across rows add to the end of each row's text come apart (`explain_tails`)."""
    context = context or RunContext.today()
    if not len(frame):
        return calc, {"Calculation": []}
    computed = calc.computed if calc.computed.index.equals(frame.index) else calc.computed.reindex(frame.index)
    from batch.programs.grow_nj.explain import explain_tails  # the explanation reads these steps' results

    s = run(Sheet(frame, rules.parameters, context, calc.carry.reindex(frame.index, fill_value=False)), ACROSS_STEPS)
    s.ineligible = s.own_ineligible | s.prior_bars
    barred = pd.Series(s.prior_bars, index=frame.index)
    computed = computed.assign(
        **{
            "Eligible": computed["Eligible"].mask(barred, "N"),
            "Annual Credit ($)": computed["Annual Credit ($)"].mask(barred, 0),
            "Total Award ($)": computed["Total Award ($)"].mask(barred, 0),
        }
    )
    found = Calculation(computed, [*calc.findings, *s.findings], pd.Series(s.ineligible, index=frame.index))
    return found, {"Calculation": explain_tails(s)}


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    """The sheet's valid rows: the steps each row's own figures decide, then the steps across rows."""
    context = context or RunContext.today()
    return across_rows(frame, calculate_rows(frame, rules, context), rules, context)


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Projects, eligible, annual credit and total award by Area and Statute Version (a blank one under
    the text it was computed under); rows by code."""
    computed_blank = frame[VERSION].isna() & frame["Eligible"].notna()
    rows = frame.assign(_eligible=frame["Eligible"].eq("Y"), **{VERSION: frame[VERSION].mask(computed_blank, _latest_version(rules))})
    pivot = totals_by(
        rows,
        [AREA, VERSION],
        dropna=False,
        **{
            "Projects": (ID, "size"),
            "Eligible": ("_eligible", "sum"),
            "Annual Credit ($)": ("Annual Credit ($)", "sum"),
            "Total Award ($)": ("Total Award ($)", "sum"),
        },
    )
    pivot[AREA] = pivot[AREA].astype(object).fillna("(invalid)")
    pivot[VERSION] = pivot[VERSION].astype(object).fillna("(invalid)")
    by_year = totals_by(
        rows.assign(Year=rows[APP_DATE].dt.year.astype("Int64").astype(str)),
        ["Year"],
        **{"Projects": (ID, "size"), "Eligible": ("_eligible", "sum"), "Total Award ($)": ("Total Award ($)", "sum")},
    )
    by_code = totals_by(codes.drop_duplicates(["row", "Code"]), ["Code"], Projects=("row", "size"))
    by_code = by_code.sort_values(["Projects", "Code"], ascending=[False, True], ignore_index=True)  # the most frequent first
    money = {"Annual Credit ($)": "money", "Total Award ($)": "money"}
    return [
        SummaryTable("Projects and awards by Area and Statute Version", pivot, money),
        SummaryTable("Projects and awards by year of application", by_year, money),
        SummaryTable("Projects by finding code", by_code),
    ]
