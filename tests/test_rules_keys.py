"""The rules data and the calculators agree: every key a calculator names exists in its rules
folder, and every key of every rules file is read when the bundled samples run (a key nobody
reads is a statute value that silently does nothing)."""

from __future__ import annotations

import ast
import datetime as dt
import functools
import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import ROOT

import batch.programs._kit.rules as rules_mod
from batch import pipeline
from batch.programs import PROGRAMS

# names under which a calculator holds its rules: the Rules object, the parameters shared by every
# statute version, and one version's parameters (also as attributes of a step's state object)
HOLDERS = {"rules": "any", "common": "shared", "p": "version", "params": "version"}


def _named_keys(path: Path) -> set[tuple[str, str]]:
    """(holder kind, key) of every `holder["key"]` in the module's source."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            target = node.value
            name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
            if name in HOLDERS:
                found.add((HOLDERS[name], node.slice.value))
    return found


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_every_key_a_calculator_names_exists(program):
    module = sys.modules[program.calculate.__module__]
    rules = rules_mod.load(program.rules)
    shared = set(rules.parameters)
    versions = [set(p) for p in rules.versions.values()]
    for kind, key in _named_keys(Path(module.__file__)):
        in_shared = key in shared
        in_every_version = bool(versions) and all(key in v for v in versions)
        ok = {"shared": in_shared, "version": in_every_version, "any": in_shared or in_every_version}[kind]
        assert ok, f"{module.__name__} reads {key!r}, which batch/programs/{program.rules}/ does not define ({kind})"


def test_every_key_of_the_rules_is_read_by_the_samples(monkeypatch):
    read: set[tuple[str, str]] = set()

    class Tracked(dict):
        def __init__(self, owner: str, items: dict):
            super().__init__(items)
            self.owner = owner

        def __getitem__(self, key):
            read.add((self.owner, key))
            return super().__getitem__(key)

        def get(self, key, default=None):
            read.add((self.owner, key))
            return super().get(key, default)

    plain = rules_mod.load.__wrapped__

    @functools.cache
    def tracked(program: str) -> rules_mod.Rules:
        r = plain(program)
        versions = {v: Tracked(f"{program} {v}", p) for v, p in r.versions.items()}
        return rules_mod.Rules(r.program, r.version, r.digest, Tracked(program, r.parameters), versions, r.findings)

    monkeypatch.setattr(pipeline.rules_mod, "load", tracked)
    # the sheet declarations read the rules when imported (hints, code lists, column ranges): run
    # each once more under the tracked loader, as a module of its own that nothing else uses
    for path in sorted((ROOT / "batch" / "programs").glob("*/sheet.py")):
        spec = importlib.util.spec_from_file_location(f"batch.programs.{path.parent.name}._rules_keys_sheet", path)
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, spec.name, module)
        spec.loader.exec_module(module)
    for path in sorted((ROOT / "sample_inputs").glob("*.xlsx")):
        pipeline.process(path, as_of=dt.date(2026, 11, 30))
    defined = set()
    for program in PROGRAMS:
        r = plain(program.rules)
        defined |= {(program.rules, k) for k in r.parameters}
        defined |= {(f"{program.rules} {v}", k) for v, p in r.versions.items() for k in p}
    assert sorted(defined - read) == []


def test_no_finding_message_writes_a_statutory_amount_or_share_itself():
    """Amounts and shares in messages come from the rules through `{placeholders}`: a `$` amount or
    a percent written into a message template would not follow the rules when they change. (100%,
    the whole of the taxes of GSGZ's "the schedule is 100% of taxes", is no parameter.)"""
    import re

    literal = re.compile(r"\$\d|(?<!\d)(?!100%)\d+(?:\.\d+)?%")
    found = []
    for path in sorted(rules_mod.RULES_DIR.glob("**/findings.yaml")):
        for code, entry in rules_mod._load_yaml(path, rules_mod.FindingEntry).items():
            messages = entry["message"] if isinstance(entry["message"], dict) else {"": entry["message"]}
            found += [(path.parent.name, code) for text in messages.values() if literal.search(text)]
    assert found == []
