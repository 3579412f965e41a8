"""The workbook layer (batch/workbook): its modules import each other without a circle, the
tool's sheets are drawn by one module both writers use, and a workbook is opened once on its way
through reading."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import batch.workbook

LAYER = Path(batch.workbook.__file__).parent
PACKAGE = "batch.workbook"


def _imported(tree: ast.Module, module: str, names: set[str]) -> set[str]:
    """The modules of the layer that `module` imports anywhere in its text (at the top, inside a
    function or under a condition), in every spelling: `import batch.workbook.x`, `from
    batch.workbook import x`, `from batch.workbook.x import y`, and relative imports."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name.split(".")[2])
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x, from .x import y
                base = (node.module or "").split(".")[0]
                found |= {base} if base else {a.name for a in node.names}
            elif node.module == PACKAGE:
                found |= {a.name for a in node.names}
            elif node.module and node.module.startswith(PACKAGE + "."):
                found.add(node.module.split(".")[2])
    return (found & names) - {module}


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the layer it imports (module-level and function-level imports)."""
    files = {p.stem: p for p in LAYER.glob("*.py") if p.stem != "__init__"}
    return {m: _imported(ast.parse(p.read_text(encoding="utf-8")), m, set(files)) for m, p in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle of imports found by a depth-first walk (each as the path that closes it)."""
    found, state, path = [], {}, []

    def walk(m: str) -> None:
        state[m] = "open"
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                found.append([*path[path.index(n) :], n])
            elif n not in state:
                walk(n)
        path.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            walk(m)
    return found


def test_the_graph_reader_sees_every_spelling_of_an_import():
    text = """
import batch.workbook.cells
from batch.workbook import opc, xmlparts
from batch.workbook.safety import Refused
from . import sheetxml
from .stylesxml import Styles

def later():
    from batch.workbook.reading import read_workbook
    import os
"""
    names = {"cells", "opc", "xmlparts", "safety", "sheetxml", "stylesxml", "reading", "writing"}
    assert _imported(ast.parse(text), "writing", names) == names - {"writing"}


def test_the_cycle_finder_finds_a_circle_through_three_modules():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_workbook_layer_imports_without_a_circle():
    graph = import_graph()
    assert {"inplace", "writing", "rulebook", "toolsheets", "safety", "xmlparts"} <= set(graph)
    assert cycles(graph) == []


@pytest.mark.parametrize(
    "module, imports, imports_not",
    [
        # the tool's sheets are drawn by one module, which both writers use
        ("inplace", {"toolsheets", "toolcolumns", "looks"}, {"writing"}),
        ("writing", {"toolsheets", "toolcolumns", "looks", "inplace"}, set()),
        # the Rules sheet is drawn into the tool's sheets without importing a writer
        ("rulebook", {"looks"}, {"writing", "inplace", "toolsheets"}),
        ("toolsheets", {"rulebook", "looks", "toolcolumns"}, {"writing", "inplace"}),
        ("toolcolumns", {"looks"}, {"writing", "inplace", "toolsheets"}),
        # the XML helpers and the checks before any reader raise `Refused` from a module of its own
        ("xmlparts", {"refused"}, {"safety"}),
        ("safety", {"xmlparts", "refused"}, set()),
    ],
)
def test_who_imports_whom(module, imports, imports_not):
    graph = import_graph()
    assert imports <= graph[module]
    assert not imports_not & graph[module]
