"""Grow NJ's `Calculation` column: one line a reviewer can check by hand, built from the results
of the steps (`steps.py`), one explain function per step, part by part in the statute's order; no
step builds text, and every statute number in it is read from the rules."""

from __future__ import annotations

import numpy as np

from batch.programs._kit.findings import short_cite
from batch.programs._kit.joined import concat, flat, money_pieces
from batch.programs._kit.steps import pick
from batch.programs._kit.text import (
    cents_of,
    dollars,
    each,
    join,
    pct,
    per_distinct,
    short_cites,
    tier_cites,
    when,
)
from batch.programs.grow_nj.steps import NET_BENEFIT, REASONS, Project, Sheet

# -- the Calculation column ---------------------------------------------------------------------
#
# One explain function per step writes that step's part of the text as pieces: a text, a column of
# texts, or a list of those. `explain` joins the pieces of every part in one pass (`concat`).
# Each distinct value is formatted once: money from tables of the groups of three digits (each of
# the 1,000 groups written once), whole numbers and citations once per distinct value, and a part
# that reads only tiers, flags and per-job amounts once per distinct combination of them
# (`per_distinct`). No row is formatted on its own.


def explain_mega_project_243(s: Project) -> list:
    """The mega project honoured, or why Mega Project = Y was computed as an ordinary project."""
    common = s.common
    late = f"; mega project application late: computed as ordinary [{short_cite(common['mega_project_deadline'].cite)}]"
    tiers = common["mega_project_definition"]
    met = np.array([f"; mega project {t.label} [{short_cite(t.cite)}]" for t in tiers] + [""], dtype=object)
    not_met = "; mega project definition NOT met: computed as ordinary"
    return [np.select([s.mega_late, s.mega_not_met, s.mega], [late, not_met, met[s.mega_which]], "")]


def explain_eligibility_244(s: Project) -> list:
    """The minimum capital investment and minimum jobs, each with whether it is met."""
    rate_cite, jobs_cite = s.rate_cite.to_numpy(dtype=object), s.jobs_cite.to_numpy(dtype=object)

    def rest(r):
        return [
            [" [", short_cites(rate_cite[r]), "] ", np.where(s.capex_ok[r], "met", "NOT met")],
            ["; min jobs ", each(s.min_new[r], "{:g}"), " new or ", each(s.min_ret[r], "{:g}"), " total"],
            [" [", short_cites(jobs_cite[r]), "] ", np.where(s.jobs_ok[r], "met", "NOT met")],
        ]

    distinct = per_distinct(rest, rate_cite, s.capex_ok, s.min_new, s.min_ret, jobs_cite, s.jobs_ok)
    return ["; min capex ", money_pieces(s.min_capex.cents()), distinct]


def _terms(terms: list[tuple], sep: str) -> list[np.ndarray]:
    """The terms (present, keys, build) joined by `sep` where present: each term's text, `build(rows)`,
    is built once per distinct combination of its keys and of whether a term stands before it."""
    pieces, before = [], np.zeros(len(terms[0][0]) if terms else 0, dtype=bool)
    for present, keys, build in terms:

        def text(r, present=present, after=before, build=build):
            return [np.where(present[r], np.where(after[r], sep, "") + build(r), "")]

        pieces.append(per_distinct(text, present, before, *keys))
        before = before | present
    return pieces


def _fixed(text: str):
    """A term's build that is the same text on every row."""
    return lambda r: np.full(len(r), text, dtype=object)


def explain_base_246b(s: Project) -> list[tuple]:
    """The base amount per job: the first term of the sum (absent where no tier applies)."""
    tiers = s.p["base_amount"]

    def base(r):
        which = s.base_which[r]
        return pick(tiers, which, "label", "").astype(object) + " " + dollars(s.base[r]) + " [" + tier_cites(tiers)[which] + "]"

    return [(s.base_which >= 0, (s.base_which, s.base), base)]


def explain_increases_246c(s: Project) -> list[tuple]:
    """Each increase per job: the further terms of the sum, each present where it applies."""
    p = s.p
    flags = [
        (f"{t.label} {dollars([t.value])[0]} [{short_cite(t.cite)}]", hit) for t, hit in zip(p["flag_bonuses"], s.flag_hits, strict=True)
    ]
    any_flag = np.zeros(s.n, dtype=bool)
    for hit in s.flag_hits:
        any_flag |= hit

    def flag_bonuses(r):
        return join([np.where(hit[r], text, "") for text, hit in flags], " + ")

    def industrial(r):
        return (
            "industrial investment " + dollars(s.ind_bonus[r]) + " (" + each(s.ind_steps[r])
            + f" x {pct(p['industrial_step'].value)} over minimum, cap " + dollars(s.ind_cap[r])
            + ") [" + tier_cites(p["industrial_bonus"])[s.ind_which[r]] + "]"
        )  # fmt: skip

    def salary(r):
        return (
            "salary " + dollars(s.sal_bonus[r]) + " (" + each(s.sal_steps[r])
            + f" x {pct(p['salary_step'].value)} over benchmark) [{short_cite(p['salary_step'].cite)}]"
        )  # fmt: skip

    def large(r):
        big, which = p["large_employment_bonus"], s.big_which[r]
        return pick(big, which, "label", "").astype(object) + " " + dollars(s.big_bonus[r]) + " [" + tier_cites(big)[which] + "]"

    auto, sj = p["auto_hq_bonus"], p["south_jersey_mri_bonus"]
    return [
        (any_flag, tuple(s.flag_hits), flag_bonuses),
        (s.ind_bonus > 0, (s.ind_bonus, s.ind_steps, s.ind_cap, s.ind_which), industrial),
        (s.sal_bonus > 0, (s.sal_bonus, s.sal_steps), salary),
        (s.big_which >= 0, (s.big_which, s.big_bonus), large),
        (s.auto, (), _fixed(f"auto HQ {dollars([auto.value])[0]} [{short_cite(auto.cite)}]")),
        (s.sj_bonus, (), _fixed(f"South Jersey MRI {dollars([sj.value])[0]} [{short_cite(sj.cite)}]")),
    ]


def explain_gross_limit_246d(s: Project) -> list:
    """Base + increases = the sum per job, and the gross limit per job, applied or not reached."""

    def limit(r):
        over = s.raw_gross[r] > s.gross_cap[r]
        return [
            [" = ", dollars(s.raw_gross[r]), "; cap ", dollars(s.gross_cap[r]), " [", short_cites(s.gross_cap_cite[r]), "]"],
            np.where(over, " applied: gross " + dollars(s.gross[r]), " not reached"),
        ]

    terms = _terms(explain_base_246b(s) + explain_increases_246c(s), " + ")
    return ["; ", terms, per_distinct(limit, s.raw_gross, s.gross_cap, s.gross_cap_cite, s.gross)]


def explain_retained_246e(s: Project) -> list:
    """The credit per retained job and the amount under a. through e."""
    p = s.p
    full, half, capex = p["full_retained_share"], p["retained_share"], p["retained_capex_share"]

    def rule(r):
        binds = f"capex x {capex.value} / " + each(s.jobs[r]) + f" jobs, below {pct(half.value)} of gross [{short_cite(capex.cite)}]"
        return [
            np.select(
                [s.full[r], s.capex_binds[r]],
                [f"{pct(full.value)} of gross [{short_cite(full.cite)}]", binds],
                f"{pct(half.value)} of gross [{short_cite(half.cite)}]",
            )
        ]

    per_job = concat(money_pieces(s.per_retained.cents()), s.n)  # written once, shown twice
    return [
        ["; retained/job ", per_job, " = ", per_distinct(rule, s.full, s.capex_binds, np.where(s.capex_binds, s.jobs, -1))],
        ["; a.-e. ", each(s.new), " new x ", dollars(s.gross), " + ", each(s.retained), " retained x ", per_job],
        [" = ", money_pieces(s.ordinary_ae.cents())],
    ]


def explain_annual_limits_246f(s: Project) -> list:
    """The annual maximum, and where they bind or are needed the share of withholdings and the amount necessary."""
    p = s.p
    wh, necessity = p["withholdings_share"], p["necessity_threshold"]
    cap = s.cap.cents()

    def annual_cap(r):
        return [
            "; annual cap ",
            money_pieces(cap[r]),
            " [",
            short_cites(s.cap_cite[r]),
            "]",
            np.where(s.capped[r], " applied", " not reached"),
        ]

    withholdings = when(
        s.wh_cut,
        lambda r: [
            f"; {pct(wh.value)} of withholdings [{short_cite(wh.cite)}] ",
            money_pieces(cents_of(s.wh_limit, r)),
            " applied to ",
            money_pieces(cents_of(s.before_wh, r)),
        ],
    )
    given = s.needs & s.an_given
    amount = when(given, lambda r: [money_pieces(cents_of(s.an, r))])
    applied = when(given & s.an_cut, lambda r: [" applied to ", money_pieces(cents_of(s.before_an, r))], " not reached")
    prefix = f"; a.-e. over {dollars([necessity.value])[0]}: amount necessary [{short_cite(necessity.cite)}] "
    necessary = when(s.needs, lambda r: [prefix, np.where(s.an_given[r], amount[r], "not given"), np.where(s.an_given[r], applied[r], "")])
    return [per_distinct(annual_cap, cap, s.cap_cite, s.capped), withholdings, necessary]


def explain_mrera_alternative_246d(s: Project) -> list:
    """In an MRERA Growth Zone tier: the alternative amount against the ordinary one, and which is used."""
    p = s.p
    # per tier, without and with the annual cap applied to the alternative
    tier = np.array(
        [f"{t.label}{cut}) [{short_cite(t.cite)}] vs ordinary " for t in p["mrera_tiers"] for cut in ("", ", annual cap applied")],
        dtype=object,
    )
    share = p["mrera_capex_share"].value

    def text(r):
        return [
            ["; MRERA alternative ", money_pieces(cents_of(s.alt, r)), f" (capex x {share}, ", tier[2 * s.m_which[r] + s.alt_cut[r]]],
            [money_pieces(cents_of(s.ordinary, r)), np.where(s.use_alt[r], ": alternative used", ": ordinary kept")],
        ]

    return [when(s.m_which >= 0, text)]


def explain_award_246a(s: Project) -> list:
    """The annual credit to the cent times the years of the eligibility period."""
    return ["; annual ", money_pieces(s.annual), each(s.period, " (to the cent) x {} years = "), money_pieces(s.total)]


def explain_net_benefit_244a3(s: Project) -> list:
    """The net benefit against its minimum share of the award, or that it was not given."""
    cite = s.nb_cite.to_numpy(dtype=object)

    def test(r):
        return [" vs ", s.nb_share[r], " of award [", short_cites(cite[r]), "]", np.where(s.nb_bad[r], " not met", " met")]

    verdict = per_distinct(test, s.nb_share, cite, s.nb_bad)
    net = s.f[NET_BENEFIT].fillna(0).to_numpy(dtype=np.int64)
    return [when(s.nb_given, lambda r: ["; net benefit ", money_pieces(net[r]), verdict[r]], "; net benefit not given")]


def explain_prior_incentives_247e(s: Sheet) -> list:
    """The prior records of the business (BEIP, BRRAP and Grow NJ), where there are any (their text
    as `prior_incentives_247e` wrote it, not copied)."""
    cite = short_cite(s.common["prior_incentive_bar"].cite)
    return [np.where(s.prior_text != "", f"; prior incentives [{cite}]: ", ""), s.prior_text]


def explain_eligible(s: Sheet) -> list:
    """Eligible, or NOT ELIGIBLE with every reason."""
    reasons = [(getattr(s, attr), why) for attr, why in REASONS.items()] + [(s.prior_bars, "prior incentive bars agreement")]

    def text(r):
        because = join([np.where(mask[r], why, "") for mask, why in reasons], ", ")
        return [np.where(s.ineligible[r], "; NOT ELIGIBLE (" + because + "): award 0", "; eligible")]

    return [per_distinct(text, s.ineligible, *(mask for mask, _ in reasons))]


# The parts of the text, in the statute's order: those of the steps each row's own figures decide,
# then those of the steps across rows (written once every row's own result is known).
EXPLAIN = (
    explain_mega_project_243,
    explain_eligibility_244,
    explain_gross_limit_246d,  # its terms from explain_base_246b and explain_increases_246c
    explain_retained_246e,
    explain_annual_limits_246f,
    explain_mrera_alternative_246d,
    explain_award_246a,
    explain_net_benefit_244a3,
)
EXPLAIN_ACROSS = (
    explain_prior_incentives_247e,
    explain_eligible,
)


def explain(s: Project) -> np.ndarray:
    """The `Calculation` column up to the steps across rows: one line a reviewer can check by hand,
    each component with its citation, built from the step results, part by part in the statute's
    order (`explain_tails` writes the rest)."""
    return concat([s.version + " text", *(part(s) for part in EXPLAIN)], s.n)


def explain_tails(s: Sheet) -> list[np.ndarray]:
    """The parts of the `Calculation` column the steps across rows write, in order, each over every
    row: a row's text is what `explain` wrote of it followed by each of these (`append_tails`)."""
    return list(flat([part(s) for part in EXPLAIN_ACROSS]))
