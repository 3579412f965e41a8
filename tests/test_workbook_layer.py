"""The workbook layer (batch/workbook): its modules import each other without a circle, the
tool's sheets are drawn by one module both writers use, and a workbook is opened once on its way
through reading."""

from __future__ import annotations

import ast
import zipfile
from pathlib import Path

import hostile
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


# -- a workbook opened once ---------------------------------------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "sample_inputs"


def _sample(name: str):
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes((SAMPLES / name).read_bytes())
        return path

    return make


@pytest.mark.parametrize(
    "make, calamine_opens",
    [
        # an .xlsx: opened once by the tool, once by python-calamine (which reads a package by its path)
        (_sample("transfers-2026-11.xlsx"), 1),
        (_sample("beip-brrap-erg-2026-11.xlsx"), 1),
        (_sample("emerge-gsgz-compliance-2026-11.xlsx"), 1),
        (_sample("grow-nj-2026-11.xlsx"), 1),
        (hostile.macro_workbook, 1),
        (hostile.legacy_xls, 1),
        # a CSV: read from the bytes of the one open
        (hostile.csv_named_after_sheet, 0),
        # encrypted with Excel's default password: the file is opened once (hashed, checked and
        # decrypted from the one handle); its decrypted copy is read in its place, opened once too
        (hostile.default_password, 0),
    ],
)
def test_a_workbook_is_opened_once_on_its_way_through_reading_and_writing(tmp_path, monkeypatch, make, calamine_opens):
    import builtins
    import io
    import os

    import python_calamine

    from batch.pipeline import process
    from batch.workbook.writing import write

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    path = make(inbox).resolve()
    opens: list[tuple[Path, str]] = []

    def counted(real):
        def open_counted(file, mode="r", *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and Path(file).resolve().is_relative_to(tmp_path.resolve()):
                opens.append((Path(file).resolve(), mode))
            return real(file, mode, *args, **kwargs)

        return open_counted

    # every open of a file by name: `open`, and `io.open`, which zipfile.ZipFile(path) and Path.read_bytes use
    monkeypatch.setattr(builtins, "open", counted(builtins.open))
    monkeypatch.setattr(io, "open", counted(io.open))
    by_calamine: list[Path] = []
    from_path = python_calamine.CalamineWorkbook.from_path

    def calamine_counted(name, *args, **kwargs):
        by_calamine.append(Path(name).resolve())
        return from_path(name, *args, **kwargs)

    monkeypatch.setattr(python_calamine.CalamineWorkbook, "from_path", calamine_counted)
    result = process(path, scratch=tmp_path / "out.partial.xlsx")
    try:
        write(result, tmp_path / "out.xlsx")  # the in-place writer copies the package from the same zip
        reads = [p for p, mode in opens if "w" not in mode and "a" not in mode and "x" not in mode]
        assert reads.count(path) == 1
        assert by_calamine.count(path) == calamine_opens
        assert (result.source is not None) == (make is hostile.default_password)
        if result.source is not None:  # the decrypted copy: opened once too, by the tool and by python-calamine
            assert reads.count(result.source.resolve()) == 1
            assert by_calamine.count(result.source.resolve()) == 1
        assert len(result.findings) and result.sha256
    finally:
        result.discard()
    assert result.opened.closed


def test_a_result_discarded_before_it_is_written_opens_the_file_again(tmp_path):
    from batch.pipeline import process
    from batch.workbook.writing import write

    path = _sample("transfers-2026-11.xlsx")(tmp_path)
    first = process(path)
    write(first, tmp_path / "first.xlsx")
    first.discard()
    assert first.opened.closed
    write(first, tmp_path / "again.xlsx")  # opened anew by the writer
    with zipfile.ZipFile(tmp_path / "first.xlsx") as a, zipfile.ZipFile(tmp_path / "again.xlsx") as b:
        assert a.namelist() == b.namelist()
        assert all(a.read(n) == b.read(n) for n in a.namelist())


@pytest.mark.parametrize(
    "make",
    [_sample("transfers-2026-11.xlsx"), _sample("beip-brrap-erg-2026-11.xlsx"), hostile.macro_workbook],
)
def test_the_small_parts_of_a_workbook_are_parsed_once_on_its_way_through_reading(tmp_path, monkeypatch, make):
    from collections import Counter

    from batch.pipeline import process
    from batch.workbook import xmlparts

    parsed: Counter = Counter()
    parse = xmlparts.parse

    def parse_counted(data, part):
        parsed[part] += 1
        return parse(data, part)

    monkeypatch.setattr(xmlparts, "parse", parse_counted)
    process(make(tmp_path))
    # the workbook part, its relationships, the package's and the content types: each once, for every stage
    assert {"xl/workbook.xml", "xl/_rels/workbook.xml.rels", "[Content_Types].xml"} <= set(parsed)
    assert max(parsed.values()) == 1, parsed
