"""Every citation of the rules data names a provision its statute text has, and every value or
date the cited text does not write is flagged (`not_in_text`) and explained (`interpretation:`).

The provisions are the rules data's own list, `batch/programs/_kit/sections.yaml`; each rules file names the
texts it cites (`texts:`). A file of a statute version is checked as its rows use it: its own
entries and those it takes from its base, against its own text (C.34:1B-246 of P.L.2017, c.221 has
a c.(7)(c); the 2014 text does not)."""

from __future__ import annotations

import pandas as pd
import pytest

import batch.programs._kit.rules as rules_mod
from batch.programs import PROGRAMS
from batch.workbook import rulebook as rb

FOLDERS = sorted({p.rules for p in PROGRAMS})


def _files(folder: str) -> list:
    return [p for p in sorted((rules_mod.RULES_DIR / folder).glob("*.yaml")) if p.name != "findings.yaml"]


def _entries(params: dict):
    """(where, cite, not_in_text, interpretations) of every parameter, case and tier as written."""
    for name, spec in params.items():
        if spec.get("tiers") is not None:
            for i, tier in enumerate(spec["tiers"], start=1):
                flags = tier.get("not_in_text") or spec.get("not_in_text", [])
                yield f"{name} tier {i}", tier["cite"], flags, (spec.get("interpretation", ""), tier.get("interpretation", ""))
        elif spec.get("cases") is not None:
            for case, sub in spec["cases"].items():
                merged = {**spec, **sub}
                yield f"{name} case {case}", merged["cite"], merged.get("not_in_text", []), (merged.get("interpretation", ""),)
        else:
            yield name, spec["cite"], spec.get("not_in_text", []), (spec.get("interpretation", ""),)


def _checked_entries(folder: str):
    """(file, texts, entries): each shared file with its own parameters, each statute version with
    the parameters its rows use (its own and its base's)."""
    docs = {p.name: rules_mod._load_yaml(p) for p in _files(folder)}
    versions = {str(d["statute_version"]): d for d in docs.values() if d.get("statute_version") is not None}
    resolved = rules_mod._with_base(versions) if versions else {}
    for name, doc in docs.items():
        version = doc.get("statute_version")
        params = resolved[str(version)] if version is not None else doc["parameters"]
        yield name, doc.get("texts", []), list(_entries(params))


CHECKED = [(folder, name, texts, entries) for folder in FOLDERS for name, texts, entries in _checked_entries(folder)]
IDS = [f"{folder}/{name}" for folder, name, _t, _e in CHECKED]


@pytest.mark.parametrize("folder, name, texts, entries", CHECKED, ids=IDS)
def test_every_rules_file_names_the_texts_it_cites(folder, name, texts, entries):
    assert texts, f"{folder}/{name} names no statute text (texts:)"
    unknown = sorted(set(texts) - set(rules_mod.sections()))
    assert unknown == [], f"{folder}/{name}: {unknown} not in sections.yaml"


@pytest.mark.parametrize("folder, name, texts, entries", CHECKED, ids=IDS)
def test_every_citation_names_a_provision_its_text_has(folder, name, texts, entries):
    known = rules_mod.sections()
    wrong = []
    for where, cite, _flags, _interp in entries:
        for section, paragraph in rules_mod.citations(cite):
            holders = [known[t][section] for t in texts if section in known.get(t, {})]
            if paragraph is None or not holders:
                wrong.append((where, cite, f"no section {section!r} in {texts}"))
            elif paragraph and not any(paragraph in paragraphs for paragraphs in holders):
                wrong.append((where, cite, f"{section} has no paragraph {paragraph!r} in {texts}"))
    assert wrong == []


@pytest.mark.parametrize("folder, name, texts, entries", CHECKED, ids=IDS)
def test_a_value_not_in_the_cited_text_is_explained(folder, name, texts, entries):
    # the schema refuses the flag without an interpretation; this is the same rule over the files as
    # shipped, entry by entry (a case or tier may take its table's interpretation)
    unexplained = [(where, flags) for where, _c, flags, interps in entries if flags and not any(i.strip() for i in interps)]
    assert unexplained == []


# Dates the rules data records that no cited text writes: the days the acts were enacted or took
# effect. A value or step dated by one of them is flagged, so its interpretation says the date is
# the modeller's record of the enactment or effective date, not a date in the quoted text.
MODELLER_DATES = {
    "2013-09-18": "P.L.2013, c.161 enacted",
    "2014-10-24": "P.L.2014, c.63 in effect",
    "2017-09-18": "four years after P.L.2013, c.161",
    "2021-01-07": "P.L.2020, c.156 in effect",
}


def _dated(folder: str):
    """(parameter, what, date) of every value or dated step of the folder's loaded rules that is a
    modeller's date."""
    rules = rules_mod.load(folder)
    groups = [rules.parameters, *rules.versions.values()]
    for params in groups:
        for name, param in params.items():
            found = param.values() if isinstance(param, dict) else [param] if isinstance(param, rules_mod.Parameter) else []
            for p in found:
                for since, value in zip(p.since, p.values, strict=True):
                    if since is not None and since.strftime("%Y-%m-%d") in MODELLER_DATES:
                        yield name, p, "date"
                    if isinstance(value, pd.Timestamp) and value.strftime("%Y-%m-%d") in MODELLER_DATES:
                        yield name, p, "value"


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_modellers_date_is_flagged_and_explained(folder):
    missing = [(name, what) for name, p, what in _dated(folder) if what not in p.not_in_text or not p.interpretation.strip()]
    assert missing == []


@pytest.mark.parametrize(
    "cite, pairs",
    [
        ("C.34:1B-246 c.(7)(a)", [("C.34:1B-246", "c.(7)(a)")]),
        ('C.34:1B-243 "mega project" b.(1)', [("C.34:1B-243", '"mega project" b.(1)')]),
        ('C.34:1B-243 "eligibility period"', [("C.34:1B-243", '"eligibility period"')]),
        ("C.34:1B-209.1", [("C.34:1B-209.1", "")]),
        ("C.52:27D-489f b.(3); C.52:27D-489f b.(2)(e)", [("C.52:27D-489f", "b.(3)"), ("C.52:27D-489f", "b.(2)(e)")]),
        ("C.34:1B-339 a., f.", [("C.34:1B-339", "a."), ("C.34:1B-339", "f.")]),
        ("P.L.2004 c.65 s.7 b.(2)", [("P.L.2004 c.65 s.7", "b.(2)")]),
        ("C.34:1B-246 d. last paragraph (a)", [("C.34:1B-246", "d. last paragraph (a)")]),
        ("Intake contract", [("Intake contract", None)]),  # names no section
    ],
)
def test_a_citation_is_read_into_its_sections_and_paragraphs(cite, pairs):
    assert rules_mod.citations(cite) == pairs


def test_the_2014_and_2017_texts_differ_where_the_print_does():
    # the 2014 text of C.34:1B-246 c.(7) goes from (b) to (d); the 2017 text has (c)
    texts = rules_mod.sections()
    assert "c.(7)(c)" not in texts["P.L.2014, c.63"]["C.34:1B-246"]
    assert "c.(7)(c)" in texts["P.L.2017, c.221"]["C.34:1B-246"]


@pytest.mark.parametrize(
    "flags, lead",
    [
        (["value"], "The value is not written in the cited text."),
        (["date"], "The date in force is not written in the cited text."),
        (["value", "date"], "Neither the value nor the date in force is written in the cited text."),
    ],
)
def test_the_rulebook_says_first_what_the_text_does_not_write(monkeypatch, flags, lead):
    param = rules_mod.Parameter("x", "A value.", "USD", "C.1 a.", "", "", (None,), (100,), "The page's reading.", tuple(flags))
    assert rb._joined(rb._not_in_text(param.not_in_text), param.interpretation) == f"{lead}\nThe page's reading."


def test_every_flagged_row_of_the_rulebook_says_so():
    book = rb.rulebook(PROGRAMS)
    flagged = book[book["Interpretation"].str.contains("not written in the cited text|is written in the cited text")]
    # each flagged row goes on with the interpretation that says where the value or date comes from
    assert (flagged["Interpretation"].str.split("\n").str.len() >= 2).all()
