"""The statute's numbers in the intake sheets' hints, code lists and column ranges come from the
rules data (batch/programs/<program>/), never from literals in the sheet declarations: each hint follows its
parameter when the parameter changes, each list and range equals what the rules say, and no hint
holds a year, a dollar amount or a percent that its program's rules do not hold. The same holds of
the explanation code of the calculators (the text of the `Calculation` column)."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import re
import sys
from fractions import Fraction

import pandas as pd
import pytest
from conftest import ROOT

import batch.programs._kit.rules as rules_mod
from batch.programs import PROGRAMS
from batch.programs._kit.rules_text import day, either, money, percent
from batch.programs.beip import sheet as beip
from batch.programs.beip_conversion import sheet as beip_conversion
from batch.programs.emerge import sheet as emerge
from batch.programs.erg_residential import sheet as erg_residential
from batch.programs.grow_nj import sheet as grow_nj
from batch.programs.grow_nj_compliance import sheet as grow_nj_compliance
from batch.programs.gsgz_property import sheet as gsgz_property
from batch.programs.transfers import sheet as transfers

load = rules_mod.load


# -- the formats of the hints -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (money(125_000_000), "$1,250,000"),
        (money(125_000_050), "$1,250,000.50"),
        (money(200_000), "$2,000"),
        (money(0), "$0"),
        (percent(Fraction(1, 10)), "10%"),
        (percent(Fraction(3, 40)), "7.5%"),
        (percent(Fraction(1)), "100%"),
        (day(pd.Timestamp("2016-07-01")), "2016-07-01"),
        (either(["A"]), "A"),
        (either(["A", "B"]), "A or B"),
        (either(["A", "B", "C"], "and"), "A, B and C"),
    ],
)
def test_formats(text, expected):
    assert text == expected


# -- each hint, list and range follows its parameter ---------------------------------------------


def _last(param: rules_mod.Parameter, value) -> rules_mod.Parameter:
    """The parameter with the value now in force replaced."""
    return dataclasses.replace(param, values=(*param.values[:-1], value))


TIER_FIELDS = {f.name for f in dataclasses.fields(rules_mod.Tier)} - {"extra"}


def _tier(tiers: tuple, i: int, **changes) -> tuple:
    """The tiers with tier i changed (its fields, or the figures of its `extra`)."""
    own = {k: v for k, v in changes.items() if k in TIER_FIELDS}
    extra = {k: v for k, v in changes.items() if k not in TIER_FIELDS}
    return tuple(dataclasses.replace(t, **own, extra={**t.extra, **extra}) if j == i else t for j, t in enumerate(tiers))


def value(key, new, case=None):
    """A change of a parameter shared by every row (of one case of it, with `case`)."""

    def change(r: rules_mod.Rules) -> rules_mod.Rules:
        old = r.parameters[key]
        return dataclasses.replace(r, parameters={**r.parameters, key: {**old, case: _last(old[case], new)} if case else _last(old, new)})

    return change


def in_every_text(key, new):
    """A change of a parameter of every statute version that states it (Grow NJ)."""

    def change(r: rules_mod.Rules) -> rules_mod.Rules:
        versions = {v: {**p, key: _last(p[key], new)} if key in p else p for v, p in r.versions.items()}
        return dataclasses.replace(r, versions=versions)

    return change


def tiers(key, i, **changes):
    """A change of tier i of a parameter shared by every row."""

    def change(r: rules_mod.Rules) -> rules_mod.Rules:
        return dataclasses.replace(r, parameters={**r.parameters, key: _tier(r.parameters[key], i, **changes)})

    return change


def another_case(key, case, like):
    """A parameter by cases with one more case (the value of case `like`)."""

    def change(r: rules_mod.Rules) -> rules_mod.Rules:
        return dataclasses.replace(r, parameters={**r.parameters, key: {**r.parameters[key], case: r.parameters[key][like]}})

    return change


def fresh(monkeypatch, module: str, program: str, change):
    """batch/programs/<module>/sheet.py run anew, with `change` made to the rules of `program`."""
    plain = rules_mod.load

    def changed(name: str) -> rules_mod.Rules:
        return change(plain(name)) if name == program else plain(name)

    monkeypatch.setattr(rules_mod, "load", changed)
    # named inside its program's package, as the module it stands for (its rules are its folder's)
    spec = importlib.util.spec_from_file_location(
        f"batch.programs.{module}._fresh_sheet", ROOT / "batch" / "programs" / module / "sheet.py"
    )
    fresh_module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, fresh_module)
    spec.loader.exec_module(fresh_module)
    return fresh_module


D = pd.Timestamp
# (validator, spec in it, rules folder, change to the rules, column, text its hint then holds)
HINTS = [
    ("beip", "BEIP", "beip", value("withholdings_percentage_max", Fraction("0.45")), "Withholdings Percentage", "(10% to 45%; 80% with"),
    ("beip", "BEIP", "beip", value("withholdings_percentage_min", Fraction("0.15")), "Withholdings Percentage", "(15% to 50%;"),
    (
        "beip",
        "BEIP",
        "beip",
        value("withholdings_percentage_max_smart_growth", Fraction("0.85")),
        "Withholdings Percentage",
        "; 85% with smart growth",
    ),
    ("beip", "BEIP", "beip", value("partner_percentage_max", Fraction("0.35")), "Partner Estimated Tax Percentage", "(10% to 35%;"),
    (
        "beip",
        "BEIP",
        "beip",
        value("partner_percentage_max_smart_growth", Fraction("0.55")),
        "Partner Estimated Tax Percentage",
        "; 55% with smart growth",
    ),
    ("beip", "BEIP", "beip", value("max_grant_term", 12), "Grant Term (years)", "the statute allows at most 12;"),
    ("beip", "BEIP", "beip", value("waiver_time_requirement", Fraction("0.7")), "Remote Work Waiver Elected", "waive the 70% time"),
    ("beip", "BEIP", "beip", value("waiver_election_deadline", D("2024-06-30")), "Waiver Election Date", "before 2024-06-30 (h.)"),
    ("beip", "BEIP", "beip", value("waiver_min_time_tax_period", 2024), "Minimum Time at Facility", "at the facility through 2024."),
    ("beip", "BEIP", "beip", value("waiver_payment_tax_period", 2021), "2022 Tax Period Credit ($)", "received for the 2021 tax period;"),
    ("beip", "BEIP", "beip", value("waiver_payment_share", Fraction("0.075")), "2022 Tax Period Credit ($)", "waiver, 7.5% of it is due"),
    (
        "beip_conversion",
        "BEIP_CONVERSION",
        "beip_conversion",
        value("approval_years", [2018, 2028]),
        "Approval Year",
        "(e.(1) only), 2018 to 2028.",
    ),
    (
        "beip_conversion",
        "BEIP_CONVERSION",
        "beip_conversion",
        tiers("schedule", 0, value=2018),
        "Approval Year",
        "2018 or earlier keeps the installments from 2018;",
    ),
    ("beip_conversion", "BEIP_CONVERSION", "beip_conversion", tiers("schedule", 0, from_year=2007), "Accrual Year", "(2007 to 2025)"),
    ("beip_conversion", "BEIP_CONVERSION", "beip_conversion", tiers("schedule", 12, to_year=2026), "Accrual Year", "(2008 to 2026)"),
    (
        "gsgz_property",
        "GSGZ_PROPERTY",
        "gsgz_property",
        value("enactment_date", D("2014-01-01")),
        "Certificate of Occupancy Date",
        "P.L.2013 c.161 (2014-01-01) and",
    ),
    (
        "gsgz_property",
        "GSGZ_PROPERTY",
        "gsgz_property",
        value("certificate_window_years", 12),
        "Certificate of Occupancy Date",
        "at most 12 years after it",
    ),
    ("brrap", "BRRAP", "brrap", value("business_annual_limit", 1_200_000_000), "Business Name", "the $12,000,000 single-business limit"),
    ("brrap", "BRRAP", "brrap", tiers("multiple", 5, min_employees=60), "Employees Relocated or Retained", "(at least 60 to be"),
    (
        "erg_residential",
        "ERG_RESIDENTIAL",
        "erg_residential",
        value("project_credit_limit", 4_500_000_000, case="Y"),
        "Deep Poverty Pocket or Distressed Municipality",
        "project limit $45,000,000 instead of $20,000,000.",
    ),
    (
        "erg_residential",
        "ERG_RESIDENTIAL",
        "erg_residential",
        value("project_credit_limit", 2_500_000_000, case="N"),
        "Deep Poverty Pocket or Distressed Municipality",
        "instead of $25,000,000.",
    ),
    ("erg_residential", "ERG_RESIDENTIAL", "erg_residential", value("pledge_share", Fraction("0.9"), case="Y"), "Growth Zone", "90% of"),
    (
        "erg_residential",
        "ERG_RESIDENTIAL",
        "erg_residential",
        value("pledge_share", Fraction("0.7"), case="N"),
        "Growth Zone",
        "pledged instead of 70%. ",
    ),
    (
        "erg_residential",
        "ERG_RESIDENTIAL",
        "erg_residential",
        value("pledge_share", Fraction("0.7"), case="N"),
        "Growth Zone",
        "a conflict and stays at 70%.",
    ),
    (
        "erg_residential",
        "ERG_RESIDENTIAL",
        "erg_residential",
        value("growth_zone_excluded_buckets", ["b", "c", "d"]),
        "Growth Zone",
        "Y with a (b), (c) or (d) category",
    ),
    (
        "erg_residential",
        "ERG_RESIDENTIAL",
        "erg_residential",
        value("growth_zone_categories", ["South Jersey Growth Zone"]),
        "Growth Zone",
        "The categories South Jersey Growth Zone are read as Y",
    ),
    (
        "erg_residential",
        "ERG_RESIDENTIAL",
        "erg_residential",
        value("application_deadline", D("2017-01-01")),
        "Application Date",
        "(before 2017-01-01).",
    ),
    (
        "erg_residential",
        "ERG_RESIDENTIAL",
        "erg_residential",
        value("tco_deadline", D("2019-07-28")),
        "Temporary Certificate of Occupancy Date",
        "(by 2019-07-28).",
    ),
    ("emerge", "EMERGE", "emerge", value("program_start", D("2021-02-01")), "Application Date", "(on or after 2021-02-01 and before 2029"),
    ("emerge", "EMERGE", "emerge", value("application_deadline", D("2030-07-01")), "Application Date", "and before 2030-07-01)."),
    (
        "emerge",
        "EMERGE",
        "emerge",
        value("minimum_withholdings_share", Fraction("0.75")),
        "Withholdings Subject to NJ Income Tax",
        "(at least 75%).",
    ),
    (
        "transfers",
        "TRANSFERS",
        "transfers",
        value("minimum_consideration_ratio", Fraction("0.8"), case="BEIP"),
        "Consideration Received ($)",
        "at least 75% (Grow NJ), 75% (Urban Transit Hub), 80% (BEIP) or 75% (ERG Residential) of the credit",
    ),
    (
        "grow_nj",
        "GROW_NJ",
        "grow_nj",
        in_every_text("disaster_recovery_gross_limit", 300_000),
        "Disaster Recovery Project",
        "(gross limit $3,000, 246 d.(6))",
    ),
    (
        "grow_nj",
        "GROW_NJ",
        "grow_nj",
        in_every_text("south_jersey_mri_edition", 2011),
        "Municipal Revitalization Index",
        "2011 Municipal Revitalization Index",
    ),
    (
        "grow_nj",
        "GROW_NJ",
        "grow_nj",
        in_every_text("solar_share_of_electric_needs", Fraction("0.6")),
        "On-Site Solar 50 Percent",
        "meets 60% of the electric needs",
    ),
    (
        "grow_nj",
        "GROW_NJ",
        "grow_nj",
        in_every_text("vacant_building_min_sq_ft", 2_000_000),
        "Vacant Million Square Foot Building",
        "of over 2,000,000 sq ft (246 c.(17), 2017 only)",
    ),
    ("grow_nj", "GROW_NJ", "grow_nj", value("default_eligibility_period", 12), "Eligibility Period (years)", "1 to 12; blank means 12."),
    (
        "grow_nj_compliance",
        "GROW_NJ_COMPLIANCE",
        "grow_nj_compliance",
        value("eligibility_period_years", 12),
        "Eligibility Period (years)",
        "1 to 12; blank means 12.",
    ),
]


@pytest.mark.parametrize(
    "module, spec, program, change, header, text",
    HINTS,
    ids=[f"{m}-{h}-{i}" for i, (m, _s, _p, _c, h, _t) in enumerate(HINTS)],
)
def test_each_hint_follows_its_parameter(monkeypatch, module, spec, program, change, header, text):
    now = getattr(sys.modules[f"batch.programs.{module}.sheet"], spec).column(header).hint
    changed = getattr(fresh(monkeypatch, module, program, change), spec).column(header).hint
    assert text in changed, changed
    assert text not in now, now  # the change shows: the text is not the hint of today's rules


def test_the_approval_years_and_credit_columns_follow_the_rules(monkeypatch):
    changed = fresh(monkeypatch, "beip_conversion", "beip_conversion", value("approval_years", [2018, 2028]))
    col = changed.BEIP_CONVERSION.column("Approval Year")
    assert (col.minimum, col.maximum) == (2018, 2028)
    # e.(1)'s five installments started in the last Approval Year end the credit columns
    credit = [h for h in changed.BEIP_CONVERSION.computed if h.startswith("Credit ")]
    assert credit[0] == "Credit 2017 ($)" and credit[-1] == "Credit 2032 ($)"


def test_the_payment_years_follow_the_schedule(monkeypatch):
    longer = [*load("gsgz_property")["development_entity_schedule"].value, 1, 1]
    changed = fresh(monkeypatch, "gsgz_property", "gsgz_property", value("development_entity_schedule", longer))
    assert changed.YEARS == range(1, 23)
    assert "Payment Year 22 ($)" in changed.GSGZ_PROPERTY.computed


@pytest.mark.parametrize(
    "module, spec, program, change, header, codes",
    [
        (
            "transfers",
            "TRANSFERS",
            "transfers",
            another_case("minimum_transfer", "Another Program", like="BEIP"),
            "Program",
            ("Grow NJ", "Urban Transit Hub", "BEIP", "ERG Residential", "Another Program"),
        ),
        (
            "emerge",
            "EMERGE",
            "emerge",
            value("qualified_locations", ["Enhanced Area", "Distressed Municipality"]),
            "Location",
            ("Enhanced Area", "Distressed Municipality", "Outside Qualified Incentive Area"),
        ),
        (
            "erg_residential",
            "ERG_RESIDENTIAL",
            "erg_residential",
            tiers("buckets", 4, categories=["Other ERG Incentive Area", "Another Area"]),
            "Category",
            (*erg_residential.CATEGORIES, "Another Area"),
        ),
        (
            "grow_nj",
            "GROW_NJ",
            "grow_nj",
            tiers("job_classes", 0, area=("Technology Startup", "Manufacturing", "Life Sciences")),
            "Business Type",
            ("Technology Startup", "Manufacturing", "Life Sciences", "Other"),
        ),
    ],
)
def test_each_code_list_follows_the_rules(monkeypatch, module, spec, program, change, header, codes):
    assert getattr(fresh(monkeypatch, module, program, change), spec).column(header).codes == codes


# -- what the sheets say today equals what the rules say ------------------------------------------


def _codes(spec, header):
    return spec.column(header).codes


def test_ranges_and_lists_equal_the_rules():
    conversion, grow = load("beip_conversion"), load("grow_nj")
    first, last = conversion["approval_years"].value
    approval = beip_conversion.BEIP_CONVERSION.column("Approval Year")
    assert (approval.minimum, approval.maximum) == (first, last)
    assert beip_conversion.APPROVAL_YEARS == range(first, last + 1)
    schedule = conversion["schedule"]
    assert beip_conversion.CREDIT_YEARS[0] == min(t.value for t in schedule)
    # GSGZ: one payment column per year of the schedule; the other owner's schedule is as long
    gsgz = load("gsgz_property")
    years = len(gsgz["development_entity_schedule"].value)
    assert years == len(gsgz["other_owner_schedule"].value) == len(gsgz_property.YEARS)
    assert [h for h in gsgz_property.GSGZ_PROPERTY.computed if h.startswith("Payment Year")] == [
        f"Payment Year {y} ($)" for y in range(1, years + 1)
    ]
    # Grow NJ
    assert grow_nj.GROW_NJ.column("Eligibility Period (years)").maximum == grow["default_eligibility_period"].value
    # Grow NJ compliance: the term of C.34:1B-243 "eligibility period"
    term = grow_nj_compliance.GROW_NJ_COMPLIANCE.column("Eligibility Period (years)")
    assert (term.minimum, term.maximum) == (1, load("grow_nj_compliance")["eligibility_period_years"].value)
    assert _codes(grow_nj.GROW_NJ, "Statute Version") == tuple(sorted(grow.versions))
    # a blank Statute Version is not read as a text: the calculator computes it under the latest the rules
    # hold, with a warning (STATUTE_VERSION_NOT_GIVEN), and the hint names that text
    assert grow_nj.GROW_NJ.column("Statute Version").default is None
    assert f"blank: computed under {sorted(grow.versions)[-1]}," in grow_nj.GROW_NJ.column("Statute Version").hint
    assert (
        _codes(grow_nj.GROW_NJ, "Premises Type")
        == tuple(grow["minimum_capex_per_sq_ft"])
        == tuple(load("emerge")["minimum_capex_per_sq_ft"])
    )
    assert _codes(emerge.EMERGE, "Premises Type") == grow_nj.PREMISES
    areas = {a for p in grow.versions.values() for t in p["base_amount"] for a in t.area}
    assert set(_codes(grow_nj.GROW_NJ, "Area")) == areas
    assert set(grow["south_jersey_counties"].value) <= set(_codes(grow_nj.GROW_NJ, "County"))
    assert set(_codes(grow_nj.GROW_NJ, "Mega Project Basis")) == {t.extra["basis"] for t in grow["mega_project_definition"]}
    # Emerge: the locations of a.(3) and one for outside them; one Y/N column per certification
    assert _codes(emerge.EMERGE, "Location") == (*load("emerge")["qualified_locations"].value, emerge.OUTSIDE)
    certified = [c.header for c in emerge.EMERGE.columns if c.header in emerge.CERTIFICATIONS]
    assert certified == [t.label for t in load("emerge")["certifications"]] == list(emerge.CERTIFICATIONS)
    # ERG: every category of a bucket, once
    assert _codes(erg_residential.ERG_RESIDENTIAL, "Category") == tuple(
        c for t in load("erg_residential")["buckets"] for c in t.extra["categories"]
    )
    assert _codes(transfers.TRANSFERS, "Program") == tuple(load("transfers")["minimum_transfer"])
    # the BEIP column of the credit the waiver payment is a share of names the tax period h.(2) names
    assert str(load("beip")["waiver_payment_tax_period"].value) in beip.CREDIT_2022


def test_the_2014_text_refuses_the_areas_it_does_not_name():
    grow = load("grow_nj")
    (check,) = grow_nj.GROW_NJ.row_checks
    frame = pd.DataFrame({"Statute Version": ["2014", "2017", "2014"], "Area": ["Create Zone", "Create Zone", "Priority"]})
    assert check.bad(frame).tolist() == [True, False, False]
    assert "Create Zone" not in {a for t in grow.versions["2014"]["base_amount"] for a in t.area}


# -- no year, dollar amount or percent in a hint that its program's rules do not hold -------------

DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
YEAR = re.compile(r"(?<!P\.L\.)(?<![\d,.$])\b(?:1[89]|2\d)\d{2}\b(?![\d,])")
MONEY = re.compile(r"\$\d+(?:,\d{3})*(?:\.\d\d)?")
PERCENT = re.compile(r"\b\d+(?:\.\d+)?%")
# a floor that is no statute's number: an amount must be more than $0
FLOORS = {"$0"}


def _texts(value, unit: str) -> set[str]:
    """Every way a hint may write a rules value."""
    if isinstance(value, list | tuple):
        return set().union(*(_texts(v, unit) for v in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(_texts(v, unit) for v in value.values())) if value else set()
    if isinstance(value, pd.Timestamp):
        return {day(value), str(value.year)}
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, Fraction):
        return {percent(value)}
    if isinstance(value, int):
        return {money(value)} if unit == "USD" else {str(value), f"{value:,}"}
    if isinstance(value, float):
        return {percent(Fraction(str(value)))}
    return {str(value)}


def _parameter_texts(p) -> set[str]:
    if isinstance(p, rules_mod.Parameter):
        return set().union(*(_texts(v, p.unit) for v in p.values))
    if isinstance(p, dict):
        return set().union(*(_parameter_texts(c) for c in p.values()))
    out = set()  # tiers: their unit is not kept, so a whole number may be cents or a count
    for t in p:
        for v in (t.value, *t.extra.values()):
            out |= _texts(v, "USD") | _texts(v, "")
    return out


def _rules_texts(program: str) -> set[str]:
    r = load(program)
    out = set(r.versions) | set().union(*(_parameter_texts(p) for p in r.parameters.values()))
    for params in r.versions.values():
        out |= set().union(*(_parameter_texts(p) for p in params.values()))
    return out


def _literals(text: str) -> list[str]:
    found = DATE.findall(text)
    rest = DATE.sub(" ", text)
    return found + YEAR.findall(rest) + MONEY.findall(rest) + PERCENT.findall(rest)


SHEETS = [(m.name, m.rules, m.schema) for m in PROGRAMS]


@pytest.mark.parametrize("sheet, program, spec", SHEETS, ids=[s for s, _p, _ in SHEETS])
def test_every_number_in_a_hint_is_in_the_programs_rules(sheet, program, spec):
    texts = _rules_texts(program)
    hints = [(c.header, c.hint) for c in spec.columns] + [(r.column, r.expected) for r in spec.row_checks]
    stray = [(header, literal) for header, hint in hints for literal in _literals(hint) if literal not in texts | FLOORS]
    assert stray == [], stray


@pytest.mark.parametrize(
    "text, found",
    [
        ("before 2023-12-31 (h.)", ["2023-12-31"]),
        ("2014 (P.L.2014 c.63) or 2017 (P.L.2017 c.221)", ["2014", "2017"]),
        ("limit $40,000,000 instead of $20,000,000.", ["$40,000,000", "$20,000,000"]),
        ("(gross limit $2,000, 246 d.(6)), $1,250,000.50.", ["$2,000", "$1,250,000.50"]),
        ("85% of incremental revenue, 7.5% of it", ["85%", "7.5%"]),
        ("over 1,000,000 sq ft, over 1,000 is not read", []),
        ("(246 c.(17)) C.52:27D-489f", []),
    ],
)
def test_the_scan_finds_years_amounts_and_percents(text, found):
    assert _literals(text) == found


# Where a hint is written in the source: `hint=` and the hint argument of the sheets' helpers, and
# the text of a RowCheck. The statute's numbers are formatted into them, never written in them.
HINT_ARGUMENTS = {"_flag": 1, "_certification": 1, "RowCheck": 2}
VALIDATORS = sorted((ROOT / "batch" / "programs").glob("*/sheet.py"))


def _hint_expressions(tree: ast.Module):
    assigned = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else None
        exprs = [k.value for k in node.keywords if k.arg in ("hint", "expected")]
        if name in HINT_ARGUMENTS and len(node.args) > HINT_ARGUMENTS[name]:
            exprs.append(node.args[HINT_ARGUMENTS[name]])
        for expr in exprs:
            yield assigned.get(expr.id, expr) if isinstance(expr, ast.Name) else expr


@pytest.mark.parametrize("path", VALIDATORS, ids=lambda p: p.parent.name)
def test_no_hint_in_the_source_writes_a_statutory_number(path):
    tree = ast.parse(path.read_text())
    stray = []
    for expr in _hint_expressions(tree):
        for node in ast.walk(expr):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                stray += [(node.lineno, literal) for literal in _literals(node.value) if literal not in FLOORS]
    assert stray == [], f"{path.parent.name}/{path.name}: write these from the rules: {stray}"


# Where the `Calculation` text is written in the source: the explain functions of every calculator
# (`explain`, `explain_*`, `_explain*`, and the functions nested in them). Their string constants are
# the words around the numbers; the numbers are formatted in from the rules, never written in them.
# A docstring is no text the tool writes, and a format spec (`:.0%`) is no number.
CALCULATORS = sorted([*(ROOT / "batch" / "programs").glob("*/steps.py"), *(ROOT / "batch" / "programs").glob("*/explain.py")])


def _explanation_literals(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, literal) of every year, date, dollar amount or percent in a string constant of an explain function."""
    stray, seen = [], set()
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name.lstrip("_").startswith("explain")):
            continue
        skip = {id(n) for f in ast.walk(fn) if isinstance(f, ast.FormattedValue) and f.format_spec for n in ast.walk(f.format_spec)}
        for inner in ast.walk(fn):  # the docstrings of the function and of the functions nested in it
            if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef) and ast.get_docstring(inner, clean=False) is not None:
                skip.add(id(inner.body[0].value))
        for node in ast.walk(fn):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip | seen:
                seen.add(id(node))  # a nested function is walked with its outer one and alone
                stray += [(node.lineno, literal) for literal in _literals(node.value) if literal not in FLOORS]
    return sorted(stray, key=lambda s: s[0])


def test_every_calculator_with_a_calculation_column_has_its_explain_functions_scanned():
    explained = [p.parent.name for p in CALCULATORS if any(
        isinstance(n, ast.FunctionDef) and n.name.lstrip("_").startswith("explain") for n in ast.walk(ast.parse(p.read_text()))
    )]  # fmt: skip
    assert explained == sorted(m.explain.__module__.split(".")[2] for m in PROGRAMS if m.explain)


@pytest.mark.parametrize("path", CALCULATORS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_explanation_in_the_source_writes_a_statutory_number(path):
    stray = _explanation_literals(ast.parse(path.read_text()))
    assert stray == [], f"{path.parent.name}/{path.name}: write these from the rules: {stray}"


def test_the_explanation_scan_finds_a_share_written_in_the_text():
    # the line that wrote the share of withholdings before it was read from the rules, and its fix
    before = """
def explain_annual_limits_246f(s):
    \"\"\"The annual maximum, and 90% of withholdings where it binds.\"\"\"
    wh = s.p["withholdings_share"]
    withholdings = _when(s.wh_cut, lambda r: [f"; 90% of withholdings [{short_cite(wh.cite)}] ", _money(s.limit[r])])

    def nested(r):
        return [f"{float(wh.value):.0%} of $4,000,000 in 2017"]

    return [withholdings, nested]
"""
    after = before.replace('f"; 90% of withholdings', 'f"; {_pct(wh.value)} of withholdings').replace(" of $4,000,000 in 2017", "")
    assert _explanation_literals(ast.parse(before)) == [(5, "90%"), (8, "2017"), (8, "$4,000,000")]
    assert _explanation_literals(ast.parse(after)) == []
