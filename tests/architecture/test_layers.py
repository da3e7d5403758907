"""The apps are layers: pipeline <- search_proxy <- annotation <- review <- exports.

An app imports only from apps below it and no module imports itself through others, with
imports inside functions counted too (moving an import into a function hides a cycle, it
does not remove it). Read from the source with `ast`, so nothing needs to be imported.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("pipeline", "search_proxy", "annotation", "review", "exports")
RANK = {app: rank for rank, app in enumerate(LAYERS)}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module(path): path
        for app in LAYERS
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
    }


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The nodes under `if TYPE_CHECKING:`: imports for annotations only, never run, so they
    make no cycle (annotation/phases.py names the models it is typed with that way). Only
    for cycles: an upward import is upward even there."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
        for stmt in node.body
        for inner in ast.walk(stmt)
    }


def import_graph(*, typing_imports: bool = True) -> dict[str, set[str]]:
    """module -> the project modules it imports, wherever in the file the import is (those
    under `if TYPE_CHECKING:` left out when not `typing_imports`)."""
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        typing_only = set() if typing_imports else _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                # "from review import forms" imports the module review.forms
                targets = [
                    f"{node.module}.{a.name}"
                    if f"{node.module}.{a.name}" in modules
                    else node.module
                    for a in node.names
                ]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    def app(module: str) -> str:
        return module.split(".")[0]

    return {
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if RANK[app(target)] > RANK[app(source)]
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def test_no_app_imports_an_app_above_it():
    upward = upward_imports(import_graph())
    assert not upward, f"imports against the layers {LAYERS}: {sorted(upward)}"


def test_no_modules_import_each_other():
    assert cycles(import_graph(typing_imports=False)) == []


@pytest.mark.parametrize(
    ("graph", "upward", "cyclic"),
    [
        ({"annotation.a": {"review.b"}}, {("annotation.a", "review.b")}, []),
        ({"review.b": {"annotation.a"}}, set(), []),
        (
            {"exports.a": {"exports.b"}, "exports.b": {"exports.c"}, "exports.c": {"exports.a"}},
            set(),
            [["exports.a", "exports.b", "exports.c"]],
        ),
    ],
)
def test_the_checks_see_an_upward_import_and_a_cycle(graph, upward, cyclic):
    assert upward_imports(graph) == upward
    assert cycles(graph) == cyclic


def test_an_import_inside_a_function_counts(tmp_path, monkeypatch):
    app = tmp_path / "pipeline"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "low.py").write_text("def f():\n    from exports import high\n")
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "__init__.py").write_text("")
    (exports / "high.py").write_text("")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.LAYERS", ("pipeline", "exports"))
    monkeypatch.setattr(f"{__name__}.RANK", {"pipeline": 0, "exports": 1})
    assert upward_imports(import_graph()) == {("pipeline.low", "exports.high")}


ROWS_BUILT_BY_THE_WORKFLOW = {"Claim", "EvidenceRound", "Question", "Answer"}


def test_only_the_workflow_builds_claim_question_and_answer_rows():
    """Screens, the API, commands and the dataset import all go through
    annotation/workflow.py (store_pairs, accept_imported_claim, the submit functions)."""
    builders = []
    for name, path in _modules().items():
        if name == "annotation.workflow":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"create", "bulk_create", "get_or_create"}
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "objects"
                and isinstance(node.func.value.value, ast.Name)
                and node.func.value.value.id in ROWS_BUILT_BY_THE_WORKFLOW
            ):
                builders.append(f"{name}:{node.lineno}")
    assert builders == []
