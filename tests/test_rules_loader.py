"""The rules loader (batch/programs/_kit/rules.py): the strict schema of the YAML files, statute
versions stated as changes over their base, dated steps, and the unit conversions."""

from __future__ import annotations

import textwrap
from fractions import Fraction

import pandas as pd
import pytest

import batch.programs._kit.rules as rules_mod
from batch.programs import folders
from batch.programs._kit.rules import RULES_DIR, UNITS, RulesError, load

PROGRAMS = folders()


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A rules folder `demo` in a temporary RULES_DIR (the shared findings table stays the kit's)."""
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "findings.yaml").write_text("{}\n")
    monkeypatch.setattr(rules_mod, "RULES_DIR", tmp_path)
    load.cache_clear()
    rules_mod.common_findings.cache_clear()
    yield tmp_path / "demo"
    load.cache_clear()
    rules_mod.common_findings.cache_clear()


def write(folder, name: str, text: str) -> None:
    (folder / name).write_text(textwrap.dedent(text))


GOOD_PARAMETER = """\
    version: "demo 1"
    parameters:
      minimum:
        description: The smallest amount.
        unit: USD
        cite: C.1:1-1 a.
        value: 25000
    """


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_shipped_rules_folder_loads(program):
    rules = load(program)
    assert rules.parameters or rules.versions


@pytest.mark.parametrize(
    "text,named",
    [
        # a misspelt key is refused, never read as "not set"
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c, value: 1, sumary: s}\n", "sumary"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, value: 1}\n", "cite is required"),
        ("version: v\nparameters:\n  m: {description: d, unit: dollars, cite: c, value: 1}\n", "unit 'dollars'"),
        ("version: v\nparameters:\n  m: {description: d, cite: c, value: 1}\n", "unit"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c, value: 1, values: []}\n", "exactly one of"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c}\n", "exactly one of"),
        ("version: v\nstatute: x\nparameters: {}\n", "statute"),
        ("parameters: {}\n", "version"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, tiers: [{label: a, value: 1}]}\n", "tier 1 (a) has no cite"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, tiers: [{label: a, cite: c, value: 1, min_job: 3}]}\n", "min_job"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, by: P, cases: {A: {value: 1}}}\n", "case 'A' has no cite"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c, cases: {A: {value: 1}}}\n", "cases need `by`"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c, values: [{since: soon, value: 1}]}\n", "since"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c, values: [{since: 2014-13-01, value: 1}]}\n", "month"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c, values: [{value: 1}]}\n", "since"),
        # a value or date the cited text does not write must say where it comes from
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c, value: 1, not_in_text: [value]}\n", "needs an interpretation"),
        ("version: v\nparameters:\n  m: {description: d, unit: USD, cite: c, value: 1, not_in_text: [amount]}\n", "not_in_text"),
        (
            "version: v\nparameters:\n  m: {description: d, unit: USD, by: P, cases: {A: {cite: c, value: 1, not_in_text: [date]}}}\n",
            "case 'A': not_in_text ['date'] needs an interpretation",
        ),
        (
            "version: v\nparameters:\n  m: {description: d, unit: USD, tiers: [{label: a, cite: c, value: 1, not_in_text: [value]}]}\n",
            "tier 1 (a): not_in_text ['value'] needs an interpretation",
        ),
        # an unquoted summary holding ", " in a flow mapping splits into keys
        (
            "version: v\nparameters:\n"
            "  m: {description: d, unit: USD, by: P, cases: {A: {cite: c, summary: Up to $40,000 a year., value: 1}}}\n",
            "000 a year",
        ),
    ],
)
def test_a_file_off_the_schema_is_refused_with_the_key_named(folder, text, named):
    write(folder, "parameters.yaml", text)
    with pytest.raises(RulesError) as err:
        load("demo")
    assert "demo/parameters.yaml" in str(err.value) and named in str(err.value)


@pytest.mark.parametrize(
    "entry,named",
    [
        ("X: {severity: fatal, message: m, citation: c}\n", "severity"),
        ("X: {severity: error, message: m}\n", "citation"),
        ("X: {severity: error, message: m, citation: c, colour: red}\n", "colour"),
    ],
)
def test_a_findings_table_off_the_schema_is_refused(folder, entry, named):
    write(folder, "parameters.yaml", GOOD_PARAMETER)
    (folder / "findings.yaml").write_text(entry)
    with pytest.raises(RulesError, match=named):
        load("demo")


def test_units_are_a_fixed_list():
    assert {"USD", "ratio", "date"} <= UNITS and "dollars" not in UNITS


BASE = """\
    version: "text of 2014"
    statute_version: "2014"
    parameters:
      base_amount:
        description: Base credit per job.
        unit: USD
        tiers:
          - {label: base, cite: C.1 b.(1), area: [A], value: 5000}
          - {label: base, cite: C.1 b.(2), area: [B], value: 4000}
      share:
        description: A share.
        unit: ratio
        cite: C.1 c.
        value: 0.9
    """
LATER = """\
    version: "text of 2017"
    statute_version: "2017"
    base: "2014"
    parameters:
      base_amount:
        description: Base credit per job.
        unit: USD
        tiers:
          - {label: base, cite: C.1 b.(1)(a), area: [A], value: 5000}
    """


def test_a_later_version_states_only_what_it_changes(folder):
    write(folder, "2014.yaml", BASE)
    write(folder, "2017.yaml", LATER)
    rules = load("demo")
    early, late = rules.versions["2014"], rules.versions["2017"]
    assert late["share"] == early["share"] and late["share"].value == Fraction(9, 10)  # taken from the base
    # a tier list is replaced whole: the 2017 list has one tier, not the base's two with one changed
    assert [t.cite for t in early["base_amount"]] == ["C.1 b.(1)", "C.1 b.(2)"]
    assert [t.cite for t in late["base_amount"]] == ["C.1 b.(1)(a)"]
    assert rules.version == "text of 2014; text of 2017"


@pytest.mark.parametrize(
    "later,message",
    [
        (LATER.replace('base: "2014"', 'base: "2013"'), "names base 2013"),
        (LATER.replace('base: "2014"', 'base: "2017"'), "its own base"),
    ],
)
def test_a_base_that_is_not_there_or_a_cycle_is_refused(folder, later, message):
    write(folder, "2014.yaml", BASE)
    write(folder, "2017.yaml", later)
    with pytest.raises(RulesError, match=message):
        load("demo")


def test_every_grow_nj_2017_key_is_a_change_over_2014():
    import yaml

    base = yaml.safe_load((RULES_DIR / "grow_nj" / "2014.yaml").read_text())["parameters"]
    later = yaml.safe_load((RULES_DIR / "grow_nj" / "2017.yaml").read_text())["parameters"]
    assert later and all(later[k] != base.get(k) for k in later)  # nothing restated unchanged
    assert set(load("grow_nj").versions["2017"]) == set(load("grow_nj").versions["2014"])


STEPS = """\
    version: v
    parameters:
      minimum:
        description: The smallest transfer.
        unit: USD
        cite: C.1 a.
        values:
          - {since: null, value: 100000}
          - {since: 2014-10-24, value: 25000.50}
    """


@pytest.mark.parametrize(
    "date,cents",
    [
        ("2014-10-23", 10_000_000),  # the day before the change: $100,000
        ("2014-10-24", 2_500_050),  # the day it takes effect: $25,000.50
        ("2014-10-25", 2_500_050),
        ("1900-01-01", 10_000_000),  # `since: null`: in force for every earlier date
        ("9999-12-31", 2_500_050),
    ],
)
def test_dated_steps_pick_the_value_in_force(folder, date, cents):
    write(folder, "parameters.yaml", STEPS)
    parameter = load("demo")["minimum"]
    assert parameter.at(pd.Series([pd.Timestamp(date)]))[0] == cents


@pytest.mark.parametrize(
    "date,cents",
    [
        ("2014-10-23", 10_000_000),  # before the first law's effective date: its value, as `since: null` gives
        ("2014-10-24", 10_000_000),
        ("2016-01-01", 2_500_000),
    ],
)
def test_a_first_value_dated_by_its_law_applies_to_earlier_dates_too(folder, date, cents):
    write(
        folder,
        "parameters.yaml",
        STEPS.replace("since: null", "since: 2014-10-24").replace("since: 2014-10-24, value: 25000.50", "since: 2016-01-01, value: 25000"),
    )
    parameter = load("demo")["minimum"]
    assert parameter.at(pd.Series([pd.Timestamp(date)]))[0] == cents


@pytest.mark.parametrize(
    "unit,written,loaded",
    [
        ("USD", "0.1", 10),  # cents, exactly (no binary float in between)
        ("USD", "25000", 2_500_000),
        ("ratio", "0.75", Fraction(3, 4)),
        ("ratio", "0.1", Fraction(1, 10)),
        ("date", "2014-10-24", pd.Timestamp("2014-10-24")),
        ("years", "7", 7),
    ],
)
def test_values_are_converted_exactly(folder, unit, written, loaded):
    write(folder, "parameters.yaml", f"version: v\nparameters:\n  p: {{description: d, unit: {unit}, cite: c, value: {written}}}\n")
    assert load("demo")["p"].value == loaded


def _param(cite: str, values: tuple, since: tuple = (None,)) -> rules_mod.Parameter:
    return rules_mod.Parameter("p", "", "USD", cite, "", "", tuple(None if s is None else pd.Timestamp(s) for s in since), values)


LOOKUP_TABLE = {
    "Grow NJ": _param("C.34:1B-248", (2_500_000,)),
    # $1,000,000 until 2020-01-01, then $500,000: a row dated the day before takes the first, the day itself the second
    "UTHub": _param("C.34:1B-209.1", (100_000_000, 50_000_000), (None, "2020-01-01")),
}
LOOKUPS = {
    # key, date -> value, citation (NaN: no case for the key)
    "a case": ("Grow NJ", "2026-11-30", 2_500_000, "C.34:1B-248"),
    "the day before a step": ("UTHub", "2019-12-31", 100_000_000, "C.34:1B-209.1"),
    "the day of a step": ("UTHub", "2020-01-01", 50_000_000, "C.34:1B-209.1"),
    "no case": ("BEIP", "2026-11-30", None, None),
    "a blank key": (None, "2026-11-30", None, None),
    # no date: the first step, as for a date before every step
    "a missing date": ("UTHub", None, 100_000_000, "C.34:1B-209.1"),
}


@pytest.mark.parametrize("dated", [None, "series", "array"])  # no dates, dates as a Series, dates as an array
def test_lookup_gives_each_row_its_cases_value_and_citation(dated):
    keys = pd.Series([k for k, *_ in LOOKUPS.values()], index=[10 * i for i in range(len(LOOKUPS))], dtype=object)
    dates = pd.Series(pd.to_datetime([d for _, d, *_ in LOOKUPS.values()]), index=keys.index)
    given = {None: None, "series": dates, "array": dates.to_numpy()}[dated]
    values, cites = rules_mod.lookup(LOOKUP_TABLE, keys, given)
    assert values.index.equals(keys.index) and cites.index.equals(keys.index)
    for (case, (key, _date, value, cite)), got, got_cite in zip(LOOKUPS.items(), values, cites, strict=True):
        if value is None:  # no case: missing (NaN, as pandas fills an empty object column)
            assert pd.isna(got) and pd.isna(got_cite), case
            continue
        if key == "UTHub" and dated is None:  # without dates: the value now in force
            value = 50_000_000
        assert got == value and got_cite == cite, case
