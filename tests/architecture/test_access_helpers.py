"""The access helpers have one home, annotation/access.py, and every caller imports them from
there: a copy or a re-export elsewhere is a second place to change when a rule changes."""

from __future__ import annotations

import ast

from annotation import access
from tests.architecture.test_layers import _modules

HELPERS = {
    name
    for name, value in vars(access).items()
    if callable(value) and getattr(value, "__module__", "") == access.__name__
}


def _helper_imports_and_definitions() -> tuple[set, set]:
    imported, defined = set(), set()
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if alias.name in HELPERS and node.module != access.__name__:
                        imported.add((module, node.module, alias.name))
            elif (
                isinstance(node, ast.FunctionDef)
                and node.name in HELPERS
                and module != access.__name__
            ):
                defined.add((module, node.name))
    return imported, defined


def test_access_helpers_are_defined_once_and_imported_from_their_home():
    imported, defined = _helper_imports_and_definitions()
    assert defined == set()
    assert imported == set()


def test_the_helpers_are_the_ones_the_views_use():
    assert {"manager_required", "own_task_or_404", "editor_task", "own_search_task"} <= HELPERS
