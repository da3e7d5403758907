"""Every hand-in goes through annotation/handin.py (issue 22): no screen, API endpoint or
other module stores a draft or submits a task's work around it, so the revision log sees
every save and submit attempt that reaches the server."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotation", "review", "exports", "search_proxy", "config")
# The request handlers: what reaches the server from a browser tab or an API client.
SURFACES = ("annotation/views", "annotation/api.py", "review/views.py", "review/api.py")


def _modules():
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" not in path.parts:
                yield path


def _calls(path: Path, name: str) -> list[int]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
    ]


def test_only_the_hand_in_protocol_stores_a_draft():
    found = {
        str(path.relative_to(ROOT)): lines
        for path in _modules()
        if (lines := _calls(path, "save_draft"))
    }
    assert set(found) == {"annotation/handin.py"}, found


def test_every_surface_that_submits_does_so_inside_a_hand_in():
    """A handler module that calls the workflow's submit also hands in through handin (its
    submit runs as the `finish` of a hand-in, under the same lock and revision)."""
    for surface in SURFACES:
        paths = [ROOT / surface] if surface.endswith(".py") else (ROOT / surface).glob("*.py")
        for path in paths:
            if not path.exists():
                continue
            source = path.read_text()
            if "workflow.submit(" in source:
                assert "hand_in" in source, f"{path.relative_to(ROOT)} submits around handin"


def test_the_check_can_fail(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def view(task):\n    task.save_draft({}, version=0)\n")
    assert _calls(planted, "save_draft") == [2]
