"""Grow New Jersey Assistance Program award (README, sheet `GrowNJ`).

Pure and vectorized: `calculate(frame, rules)` takes the validated rows of the `GrowNJ` sheet
(money in integer cents) and returns the computed columns, the findings and the rows the
statute bars. Each row's Statute Version picks `batch/rules/grow_nj/2014.yaml` or `2017.yaml`;
eligibility values are in `common.yaml`. Amounts stay exact fractions of cents (`batch.exact.Q`)
until they are rounded to whole cents at the end.

Order of operations (C.34:1B-246): eligibility (244 b., c., e.; 247 b.) -> base (b.) ->
increases (c.) -> gross limit (d.) -> new and retained credit (e.) -> MRERA alternative
(d., last paragraph) -> annual limit, 90% of withholdings, amount necessary (f.) -> total award
-> net benefit test (244 a.(3)).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable
from batch.calculators.shared import first_tier, pick, tier_applies
from batch.exact import HUNDREDTHS, Q
from batch.findings import emit, money_text, short_cite
from batch.rules import Rules, lookup
from validators.grow_nj import GROW_NJ as SPEC

RULES = "grow_nj"
AWARD_COLUMN = "Total Award ($)"
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = "Area"
# Each row is calculated on its own figures alone, so the pipeline may run the calculator on chunks of rows.
ROW_INDEPENDENT = True
YEAR_COLUMN = "Application Date"

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
MEGA, TARGETED, RETAIL, TOURISM = "Mega Project", "Targeted Industry", "Final Point of Sale Retail", "Tourism District"
DISASTER, REPLACES = "Disaster Recovery Project", "Replaces Disaster-Damaged Facility"
AUTO_HQ, SAME_MUNI = "US HQ of Automobile Manufacturer", "Same Municipality"
MRERA_AREA = "Growth Zone (MRERA)"


def _ratio_q(frac, mask: np.ndarray) -> Q:
    """The fraction where mask holds, 1 elsewhere."""
    return Q(np.where(mask, frac.numerator, 1), np.where(mask, frac.denominator, 1))


def _join(parts: list[np.ndarray], sep: str) -> np.ndarray:
    """Join text columns, skipping empty pieces (vectorized)."""
    out = np.full(len(parts[0]) if parts else 0, "", dtype=object)
    for p in parts:
        p = np.asarray(p, dtype=object)
        out = np.where(p == "", out, np.where(out == "", p, out + sep + p))
    return out


def _calculate(f: pd.DataFrame, common: dict, p: dict, version: str) -> tuple[pd.DataFrame, list, np.ndarray]:
    n = len(f)
    idx = f.index
    area = f[AREA]
    flag = {c.header: f[c.header].to_numpy(dtype=bool) for c in SPEC.columns if c.kind == "yesno"}
    growth_zone = area.isin(common["growth_zone_areas"].value).to_numpy()
    south_jersey = f[COUNTY].isin(common["south_jersey_counties"].value).to_numpy()
    reduced = growth_zone | south_jersey
    capex = Q(f[CAPEX])
    new = f[NEW].to_numpy(dtype=np.int64)
    retained = f[RETAINED].to_numpy(dtype=np.int64)
    jobs = new + retained
    findings = []

    # -- eligibility: minimum capital investment (244 b.)
    rate, rate_cite = lookup(common["minimum_capex_per_sq_ft"], f[PREMISES])
    area_h = np.round(f[GLA].to_numpy(dtype=float) * HUNDREDTHS).astype(np.int64)  # square feet, to the hundredth
    capex_share = _ratio_q(common["reduced_minimum_capex_share"].value, reduced)
    min_capex = Q(rate.to_numpy(dtype=np.int64) * area_h, HUNDREDTHS) * capex_share
    capex_ok = capex >= min_capex
    min_capex_text = money_text(min_capex.cents())
    findings.append(
        emit(
            "CAPEX_BELOW_MINIMUM",
            idx[~capex_ok],
            capex=f[CAPEX],
            minimum=pd.Series(min_capex.cents(), idx),
            rate=rate,
            area=f[GLA],
            premises=f[PREMISES],
            reduction=pd.Series(np.where(reduced, " x 2/3 (Growth Zone or South Jersey)", ""), idx),
            citation=rate_cite,
        )
    )

    # -- eligibility: minimum jobs (244 c.)
    tech = f[BUSINESS].isin(["Technology Startup", "Manufacturing"]).to_numpy()
    job_class = pd.Series(np.select([tech, flag[TARGETED]], ["Technology Startup or Manufacturing", "Targeted Industry"], "Other"), idx)
    min_new_base, jobs_cite = lookup(common["minimum_new_jobs"], job_class)
    min_ret_base, _ = lookup(common["minimum_retained_jobs"], job_class)
    jobs_share = _ratio_q(common["reduced_minimum_jobs_share"].value, reduced)
    min_new = Q(min_new_base.to_numpy(dtype=np.int64)) * jobs_share
    min_ret = Q(min_ret_base.to_numpy(dtype=np.int64)) * jobs_share
    jobs_ok = (Q(new) >= min_new) | (Q(jobs) >= min_ret)
    min_new_f, min_ret_f = min_new.float(), min_ret.float()
    findings.append(
        emit(
            "JOBS_BELOW_MINIMUM",
            idx[~jobs_ok],
            new=f[NEW],
            retained=f[RETAINED],
            jobs=pd.Series(jobs, idx),
            min_new=pd.Series(min_new_f, idx),
            min_retained=pd.Series(min_ret_f, idx),
            citation=jobs_cite,
        )
    )

    # -- eligibility: application deadlines (247 b.(1), b.(4)) and retail (244 e.)
    deadline, mega_deadline = common["application_deadline"], common["mega_project_deadline"]
    late = (f[APP_DATE] >= deadline.value).to_numpy()
    findings.append(emit("APPLICATION_AFTER_DEADLINE", idx[late], date=f[APP_DATE], deadline=deadline.value, citation=deadline.cite))
    mega_late = flag[MEGA] & (f[APP_DATE] > mega_deadline.value).to_numpy()
    findings.append(
        emit("MEGA_PROJECT_APPLICATION_LATE", idx[mega_late], date=f[APP_DATE], deadline=mega_deadline.value, citation=mega_deadline.cite)
    )
    retail_areas = common["retail_allowed_areas"]
    retail_bad = flag[RETAIL] & ~(area.isin(retail_areas.value).to_numpy() | flag[TOURISM])
    findings.append(emit("RETAIL_NOT_ELIGIBLE", idx[retail_bad], area=area, citation=retail_areas.cite))

    # -- base amount (246 b.)
    base_tiers = p["base_amount"]
    which = first_tier(base_tiers, f)
    base = pick(base_tiers, which, "value", 0).astype(np.int64)
    base_cite = pick(base_tiers, which, "cite", "")
    base_finding = pick(base_tiers, which, "finding", None)
    create_fallback = base_finding == "CREATE_ZONE_BASE_NOT_MET"
    findings.append(emit("CREATE_ZONE_BASE_NOT_MET", idx[create_fallback], base=pd.Series(base, idx), citation=pd.Series(base_cite, idx)))
    pieces = [
        np.where(
            which >= 0, pick(base_tiers, which, "label", "") + " " + money_text(base, cents=False) + " [" + _short(base_cite) + "]", ""
        )
    ]

    # -- increases (246 c.)
    bonus = np.zeros(n, dtype=np.int64)
    for tier in p["flag_bonuses"]:
        hit = tier_applies(tier, f)
        bonus += np.where(hit, tier.value, 0)
        pieces.append(np.where(hit, f"{tier.label} {_dollars(tier.value)} [{short_cite(tier.cite)}]", ""))
    # (5)/(10) industrial investment: each full 20% of excess over the minimum
    ind_tiers = p["industrial_bonus"]
    industrial = f[PREMISES].isin(p["industrial_premises"].value).to_numpy()
    ind_which = np.where(industrial, first_tier(ind_tiers, f), -1)
    ind_cap = pick(ind_tiers, ind_which, "value", 0).astype(np.int64)
    step = p["industrial_step"].value
    steps = np.clip(((capex - min_capex) / (min_capex * step)).floor(), 0, None)
    ind_bonus = np.where(ind_which >= 0, np.minimum(steps * p["industrial_step_amount"].value, ind_cap), 0)
    bonus += ind_bonus
    pieces.append(
        np.where(
            ind_bonus > 0,
            "industrial investment "
            + money_text(ind_bonus, cents=False)
            + " ("
            + steps.astype(str)
            + f" x {_pct(step)} over minimum, cap "
            + money_text(ind_cap, cents=False)
            + ") ["
            + _short(pick(ind_tiers, ind_which, "cite", ""))
            + "]",
            "",
        )
    )
    # (6) salary: each full 35% above the benchmark
    avg, bench = f[AVG], f[BENCH]
    salary_ok = (avg.notna() & bench.notna() & (bench > 0)).to_numpy()
    avg_q = Q(avg.fillna(0).astype("int64"))
    bench_q = Q(bench.fillna(1).astype("int64").where(salary_ok, 1))
    sal_steps = np.where(salary_ok, np.clip(((avg_q - bench_q) / (bench_q * p["salary_step"].value)).floor(), 0, None), 0)
    sal_bonus = np.minimum(sal_steps * p["salary_step_amount"].value, p["salary_bonus_cap"].value)
    bonus += sal_bonus
    pieces.append(
        np.where(
            sal_bonus > 0,
            "salary "
            + money_text(sal_bonus, cents=False)
            + " ("
            + sal_steps.astype(str)
            + f" x {_pct(p['salary_step'].value)} over benchmark) ["
            + short_cite(p["salary_step"].cite)
            + "]",
            "",
        )
    )
    # (7) large employment, by New + Retained
    big_tiers = p["large_employment_bonus"]
    big_which = first_tier(big_tiers, f, [jobs >= t.extra["min_jobs"] for t in big_tiers])
    big_bonus = pick(big_tiers, big_which, "value", 0).astype(np.int64)
    bonus += big_bonus
    pieces.append(
        np.where(
            big_which >= 0,
            pick(big_tiers, big_which, "label", "")
            + " "
            + money_text(big_bonus, cents=False)
            + " ["
            + _short(pick(big_tiers, big_which, "cite", ""))
            + "]",
            "",
        )
    )
    omitted = pick(big_tiers, big_which, "finding", None) == "TEXT_OMITS_601_800_TIER"
    findings.append(
        emit(
            "TEXT_OMITS_601_800_TIER",
            idx[omitted],
            jobs=pd.Series(jobs, idx),
            citation=pd.Series(pick(big_tiers, big_which, "cite", ""), idx),
        )
    )
    # (11) US headquarters of an automobile manufacturer retaining at least 400 jobs
    auto = flag[AUTO_HQ] & flag[SAME_MUNI] & (retained >= p["auto_hq_min_retained"].value)
    bonus += np.where(auto, p["auto_hq_bonus"].value, 0)
    pieces.append(np.where(auto, f"auto HQ {_dollars(p['auto_hq_bonus'].value)} [{short_cite(p['auto_hq_bonus'].cite)}]", ""))
    # (12) South Jersey county with a 2007 MRI above the threshold
    mri = f[MRI].astype("Float64").fillna(-np.inf).to_numpy(dtype=float)
    sj_bonus = south_jersey & (mri > p["south_jersey_mri_threshold"].value)
    bonus += np.where(sj_bonus, p["south_jersey_mri_bonus"].value, 0)
    pieces.append(
        np.where(
            sj_bonus, f"South Jersey MRI {_dollars(p['south_jersey_mri_bonus'].value)} [{short_cite(p['south_jersey_mri_bonus'].cite)}]", ""
        )
    )

    # -- gross limit (246 d.): the first tier that applies; a disaster recovery project's limit if lower
    gross_tiers = p["gross_limit"]
    gwhich = first_tier(gross_tiers, f)
    limit = pick(gross_tiers, gwhich, "value", 0).astype(np.int64)
    limit_cite = pick(gross_tiers, gwhich, "cite", "")
    disaster_limit = p["disaster_recovery_gross_limit"]
    lower = flag[DISASTER] & (disaster_limit.value < limit)
    limit = np.where(lower, disaster_limit.value, limit)
    limit_cite = np.where(lower, disaster_limit.cite, limit_cite)
    raw_gross = base + bonus
    gross = np.minimum(raw_gross, limit)
    sum_text = _join(pieces, " + ") + " = " + money_text(raw_gross, cents=False)
    cap_text = (
        "; cap "
        + money_text(limit, cents=False)
        + " ["
        + _short(limit_cite)
        + "]"
        + np.where(raw_gross > limit, " applied: gross " + money_text(gross, cents=False), " not reached")
    )

    # -- new and retained credit (246 e.)
    gross_q = Q(gross)
    full = flag[REPLACES] | (flag[MEGA] & flag[AUTO_HQ] & area.isin(p["full_retained_areas"].value).to_numpy())
    half = gross_q * p["retained_share"].value
    per_job_capex = (capex * p["retained_capex_share"].value) / Q(np.maximum(jobs, 1))
    capex_binds = (jobs > 0) & (per_job_capex < half)
    per_retained = half.where(~capex_binds, per_job_capex).where(~full, gross_q * p["full_retained_share"].value)
    retained_text = np.select(
        [full, capex_binds],
        [
            f"{_pct(p['full_retained_share'].value)} of gross [{short_cite(p['full_retained_share'].cite)}]",
            f"capex x {p['retained_capex_share'].value} / "
            + jobs.astype(str)
            + f" jobs, below {_pct(p['retained_share'].value)} of gross [{short_cite(p['retained_capex_share'].cite)}]",
        ],
        f"{_pct(p['retained_share'].value)} of gross [{short_cite(p['retained_share'].cite)}]",
    )
    ordinary = gross_q * Q(new) + per_retained * Q(retained)

    # -- MRERA alternative (246 d., last paragraph)
    jnm = f[JNM].fillna(f[NEW]).to_numpy(dtype=np.int64)
    m_tiers = p["mrera_tiers"]
    mrera = (area == MRERA_AREA).to_numpy() & (jnm >= p["mrera_min_jobs_new_to_municipality"].value)
    m_which = np.where(
        mrera, first_tier(m_tiers, f, [(jnm >= t.extra["min_jobs"]) & (capex >= Q.of(t.extra["min_capex"], n)) for t in m_tiers]), -1
    )
    m_limit = pick(m_tiers, m_which, "value", None)
    alt = capex * p["mrera_capex_share"].value
    has_limit = ~pd.isna(m_limit)
    alt = alt.where(~has_limit, alt.minimum(Q(np.where(has_limit, m_limit, 0).astype(np.int64))))
    use_alt = (m_which >= 0) & (alt > ordinary)
    annual = ordinary.where(~use_alt, alt)
    findings.append(
        emit(
            "MRERA_ALTERNATIVE_APPLIED",
            idx[use_alt],
            alternative=pd.Series(alt.cents(), idx),
            ordinary=pd.Series(ordinary.cents(), idx),
            tier=pd.Series(pick(m_tiers, m_which, "label", ""), idx),
            citation=pd.Series(pick(m_tiers, m_which, "cite", ""), idx),
        )
    )

    # -- annual limit (246 f.), then 90% of withholdings, then the amount necessary
    a_tiers = p["annual_limit"]
    awhich = first_tier(a_tiers, f)
    cap = Q(pick(a_tiers, awhich, "value", 0).astype(np.int64))
    cap_cite = pick(a_tiers, awhich, "cite", "")
    capped = annual > cap
    findings.append(
        emit(
            "ANNUAL_CAP_APPLIED",
            idx[capped],
            credit=pd.Series(annual.cents(), idx),
            cap=pd.Series(cap.cents(), idx),
            citation=pd.Series(cap_cite, idx),
        )
    )
    before_cap = annual
    annual = annual.minimum(cap)
    exempt_flag = p["withholdings_exempt_flag"].value
    wh_applies = pick(a_tiers, awhich, "withholdings", False).astype(bool)
    if exempt_flag:
        wh_applies &= ~flag[exempt_flag]
    wh_given = f[WITHHOLD].notna().to_numpy()
    findings.append(emit("WITHHOLDINGS_NOT_PROVIDED", idx[wh_applies & ~wh_given], citation=p["withholdings_share"].cite))
    wh_limit = Q(f[WITHHOLD].fillna(0).astype("int64")) * p["withholdings_share"].value
    wh_cut = wh_applies & wh_given & (annual > wh_limit)
    findings.append(
        emit(
            "WITHHOLDINGS_CAP_APPLIED",
            idx[wh_cut],
            credit=pd.Series(annual.cents(), idx),
            withholdings=f[WITHHOLD],
            limit=pd.Series(wh_limit.cents(), idx),
            citation=p["withholdings_share"].cite,
        )
    )
    before_wh = annual
    annual = annual.where(~wh_cut, wh_limit)
    necessity = p["necessity_threshold"]
    needs = ~use_alt & (annual > Q.of(necessity.value, n))
    an_given = f[NECESSARY].notna().to_numpy()
    findings.append(
        emit(
            "NECESSITY_DETERMINATION_REQUIRED",
            idx[needs & ~an_given],
            credit=pd.Series(annual.cents(), idx),
            threshold=necessity.value,
            citation=necessity.cite,
        )
    )
    an_q = Q(f[NECESSARY].fillna(0).astype("int64"))
    an_cut = needs & an_given & (annual > an_q)
    before_an = annual
    annual = annual.where(~an_cut, an_q)

    # -- total award, net benefit test (244 a.(3))
    period = f[PERIOD].fillna(common["default_eligibility_period"].value).to_numpy(dtype=np.int64)
    total = annual * Q(period)
    nb_given = f[NET_BENEFIT].notna().to_numpy()
    nb = Q(f[NET_BENEFIT].fillna(0).astype("int64"))
    nb_share, nb_cite = lookup(common["net_benefit_minimum_ratio"], area.where(area == MRERA_AREA, "Other"))
    share_q = Q.from_fractions(nb_share)
    nb_bad = nb_given & (nb < total * share_q)
    ratio = np.where(nb_given & (total.num != 0), (nb / total.where(total.num != 0, 1)).float(), np.nan)
    findings.append(
        emit(
            "NET_BENEFIT_BELOW_THRESHOLD",
            idx[nb_bad],
            net_benefit=f[NET_BENEFIT],
            total=pd.Series(total.cents(), idx),
            share=pd.Series(nb_share.map(lambda s: f"{float(s):.0%}").to_numpy(), idx),
            ratio=pd.Series(ratio, idx),
            citation=nb_cite,
        )
    )
    findings.append(emit("NET_BENEFIT_NOT_PROVIDED", idx[~nb_given], citation=nb_cite))

    ineligible = ~capex_ok | ~jobs_ok | late | mega_late | retail_bad | nb_bad
    annual_cents = np.where(ineligible, 0, annual.cents())
    total_cents = np.where(ineligible, 0, total.cents())

    # -- the Calculation column: one line a reviewer can check by hand
    limits = _join(
        [
            np.where(
                use_alt,
                "MRERA alternative "
                + money_text(alt.cents())
                + f" (capex x {p['mrera_capex_share'].value}, "
                + pick(m_tiers, m_which, "label", "")
                + ") ["
                + _short(pick(m_tiers, m_which, "cite", ""))
                + "] > ordinary",
                "",
            ),
            np.where(
                capped,
                "annual cap " + money_text(cap.cents()) + " [" + _short(cap_cite) + "] applied to " + money_text(before_cap.cents()),
                "annual cap " + money_text(cap.cents()) + " [" + _short(cap_cite) + "] not reached",
            ),
            np.where(
                wh_cut,
                "90% of withholdings "
                + money_text(wh_limit.cents())
                + " ["
                + short_cite(p["withholdings_share"].cite)
                + "] applied to "
                + money_text(before_wh.cents()),
                "",
            ),
            np.where(
                an_cut,
                "amount necessary "
                + money_text(an_q.cents())
                + " ["
                + short_cite(necessity.cite)
                + "] applied to "
                + money_text(before_an.cents()),
                "",
            ),
        ],
        "; ",
    )
    verdict = _join(
        [
            np.where(~capex_ok, "capex below minimum", ""),
            np.where(~jobs_ok, "jobs below minimum", ""),
            np.where(late, "application after deadline", ""),
            np.where(mega_late, "mega project application late", ""),
            np.where(retail_bad, "retail", ""),
            np.where(nb_bad, "net benefit below threshold", ""),
        ],
        ", ",
    )
    nb_text = np.where(
        nb_given,
        "; net benefit "
        + money_text(f[NET_BENEFIT].fillna(0).to_numpy(dtype=np.int64))
        + " vs "
        + nb_share.map(lambda s: f"{float(s):.0%}").to_numpy(dtype=object)
        + " of award ["
        + _short(nb_cite.to_numpy(dtype=object))
        + "]"
        + np.where(nb_bad, " not met", " met"),
        "; net benefit not given",
    )
    calc = (
        version
        + " text; min capex "
        + min_capex_text
        + " ["
        + _short(rate_cite.to_numpy(dtype=object))
        + "] "
        + np.where(capex_ok, "met", "NOT met")
        + "; min jobs "
        + pd.Series(min_new_f).map("{:g}".format).to_numpy(dtype=object)
        + " new or "
        + pd.Series(min_ret_f).map("{:g}".format).to_numpy(dtype=object)
        + " total ["
        + _short(jobs_cite.to_numpy(dtype=object))
        + "] "
        + np.where(jobs_ok, "met", "NOT met")
        + "; "
        + sum_text
        + cap_text
        + "; retained/job "
        + money_text(per_retained.cents())
        + " = "
        + retained_text
        + "; annual "
        + new.astype(str)
        + " new x "
        + money_text(gross, cents=False)
        + " + "
        + retained.astype(str)
        + " retained x "
        + money_text(per_retained.cents())
        + " = "
        + money_text(ordinary.cents())
        + "; "
        + limits
        + "; total "
        + money_text(annual.cents())
        + " x "
        + period.astype(str)
        + " years = "
        + money_text(total.cents())
        + nb_text
        + np.where(ineligible, "; NOT ELIGIBLE (" + verdict + "): award 0", "; eligible")
    )

    computed = pd.DataFrame(
        {
            "Minimum Capital Investment ($)": pd.array(min_capex.cents(), dtype="Int64"),
            "Minimum New Jobs": min_new_f,
            "Minimum Retained Jobs": min_ret_f,
            "Eligible": np.where(ineligible, "N", "Y"),
            "Base Credit per Job ($)": pd.array(base, dtype="Int64"),
            "Bonus per Job ($)": pd.array(bonus, dtype="Int64"),
            "Gross Credit per Job ($)": pd.array(gross, dtype="Int64"),
            "Retained Credit per Job ($)": pd.array(per_retained.cents(), dtype="Int64"),
            "Annual Credit ($)": pd.array(annual_cents, dtype="Int64"),
            "Total Award ($)": pd.array(total_cents, dtype="Int64"),
            "Commitment Period (years)": (Q(period) * common["commitment_period_share"].value).float(),
            "Net Benefit Ratio": ratio,
            "Calculation": calc,
        },
        index=idx,
    )
    return computed, findings, ineligible


def _dollars(cents: int) -> str:
    return money_text([cents], cents=False)[0]


def _pct(fraction) -> str:
    return f"{float(fraction):.0%}"


def _short(cites) -> np.ndarray:
    return np.asarray(pd.Series(np.asarray(cites, dtype=object)).map(short_cite), dtype=object)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    computed, findings, ineligible = [], [], []
    for version, params in rules.versions.items():
        rows = frame[(frame[VERSION] == version).to_numpy()]
        if len(rows):
            c, fnd, inel = _calculate(rows, rules.parameters, params, version)
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
    money = {"Annual Credit ($)": "money", "Total Award ($)": "money"}
    return [
        SummaryTable("Projects and awards by Area and Statute Version", pivot, money),
        SummaryTable("Projects and awards by year of application", by_year, money),
        SummaryTable("Projects by finding code", by_code),
    ]
