"""The apps are layers: pipeline <- search_proxy <- annotation <- review <- exports.

An app imports only from apps below it and no module imports itself through others, with
imports inside functions counted too (moving an import into a function hides a cycle, it
does not remove it). Read from the source with `ast`, so nothing needs to be imported.

The schema keeps the same order, which imports cannot show: no relation field (foreign key,
one-to-one, many-to-many, "app.Model" strings included) points at a higher app's model (read
from the model registry), no migration depends on a higher app's (read from the migration
loader), and no lower app reads a higher app's table through a reverse relation
(`claim.quality_checks`, `filter(quality_checks__...)`: the accessor names of the relations
higher apps define, looked for in lower apps' source and templates).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.db import models
from django.db.migrations.loader import MigrationLoader
from django.test.utils import isolate_apps

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


# --- The schema ----------------------------------------------------------------------------


def _rank(app_label: str) -> int | None:
    return RANK.get(app_label)


def upward_relations(model_list: Iterable[type[models.Model]]) -> set[tuple[str, str]]:
    """(app.Model.field, target app.Model) for every relation field pointing up the layers.

    The user model is swappable (AUTH_USER_MODEL): lower apps point at "the user model" the
    way Django's contrib apps do, whichever app happens to define it (annotation here)."""
    found = set()
    for model in model_list:
        source = _rank(model._meta.app_label)
        for field in model._meta.get_fields():
            if not (field.is_relation and field.concrete) or field.related_model is None:
                continue
            target = field.related_model
            if isinstance(target, str):  # never resolved: read the "app.Model" string
                target_app, target_label = target.split(".")[0], target
            else:
                target_app, target_label = target._meta.app_label, target._meta.label
            if target_label.lower() == settings.AUTH_USER_MODEL.lower():
                continue
            target_rank = _rank(target_app)
            if source is not None and target_rank is not None and target_rank > source:
                found.add((f"{model._meta.label}.{field.name}", target_label))
    return found


def upward_migration_dependencies(loader: MigrationLoader) -> set[tuple[str, str]]:
    """(migration, migration it depends on) for every dependency on a higher app's migration,
    `run_before` counted the other way round. A dependency on AUTH_USER_MODEL (Django's
    swappable_dependency) is on the user model, not on the app that holds it."""
    found = set()
    for (app_label, name), migration in loader.graph.nodes.items():
        edges = [
            ((app_label, name), tuple(dep))
            for dep in migration.dependencies
            if getattr(dep, "setting", None) != settings.AUTH_USER_MODEL
        ]
        edges += [(tuple(later), (app_label, name)) for later in migration.run_before]
        for (src_app, src_name), (dst_app, dst_name) in edges:
            src, dst = _rank(src_app), _rank(dst_app)
            if src is not None and dst is not None and dst > src:
                found.add((f"{src_app}.{src_name}", f"{dst_app}.{dst_name}"))
    return found


# Kept for history, not for the schema: 0002 created the search logs with foreign keys to
# annotation.Task and annotation.Claim and has run on real databases; 0009 turned them into
# plain ids, but 0002 still needs annotation's first migration to build its own state.
# (A squash would not remove the edge: the logs' user foreign key needs annotation's first
# migration through AUTH_USER_MODEL, the same node, and that one needs search_proxy's.)
HISTORIC_MIGRATION_DEPENDENCIES = {
    ("search_proxy.0002_search_index_domains_logs", "annotation.0001_initial"),
}


def reverse_accessors(model_list: Iterable[type[models.Model]]) -> dict[str, set[str]]:
    """app -> the names through which lower apps could reach its tables: the reverse
    accessor and query name of each of its relation fields pointing at a lower app."""
    names: dict[str, set[str]] = defaultdict(set)
    for model in model_list:
        owner = _rank(model._meta.app_label)
        for field in model._meta.get_fields():
            if not (field.is_relation and field.concrete) or field.remote_field.hidden:
                continue
            target = _rank(field.related_model._meta.app_label)
            if owner is not None and target is not None and target < owner:
                names[model._meta.app_label].add(field.remote_field.get_accessor_name())
                names[model._meta.app_label].add(field.related_query_name())
    return names


def _reverse_reads_in(tree: ast.AST, names: set[str]) -> set[str]:
    """The names of `names` the code reads: `obj.name`, getattr(obj, "name"), a lookup
    `name__...` as keyword or string, or the bare "name" given to a call (prefetch, Count)."""
    found = set()

    def lookup(text: str) -> str | None:
        head = text.split("__")[0]
        return head if head in names and (text == head or "__" in text) else None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in names:
            found.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg and "__" in node.arg:
            found.update(filter(None, [lookup(node.arg)]))
        elif isinstance(node, ast.Call):
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.update(filter(None, [lookup(arg.value)]))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "__" in node.value:
            found.update(filter(None, [lookup(node.value)]))
    return found


def upward_reverse_reads(names_by_app: dict[str, set[str]]) -> set[tuple[str, str, str]]:
    """(lower module or template, higher app, name) for each read of a higher app's table
    through a reverse relation."""
    found = set()
    for owner, names in names_by_app.items():
        lower_apps = [app for app in LAYERS if RANK[app] < RANK[owner]]
        for name, path in _modules().items():
            if name.split(".")[0] in lower_apps:
                tree = ast.parse(path.read_text(), str(path))
                found.update((name, owner, used) for used in _reverse_reads_in(tree, names))
        pattern = re.compile(r"\.(" + "|".join(map(re.escape, sorted(names))) + r")\b")
        for app in lower_apps:
            for path in sorted((ROOT / "templates" / app).rglob("*.html")):
                label = str(path.relative_to(ROOT))
                found.update((label, owner, m) for m in pattern.findall(path.read_text()))
    return found


def test_no_relation_field_points_at_a_higher_app():
    upward = upward_relations(apps.get_models(include_auto_created=True))
    assert not upward, f"foreign keys against the layers {LAYERS}: {sorted(upward)}"


def test_no_migration_depends_on_a_higher_app():
    upward = upward_migration_dependencies(MigrationLoader(None, ignore_no_migrations=True))
    assert upward - HISTORIC_MIGRATION_DEPENDENCIES == set(), f"against the layers {LAYERS}"
    # Once squashed away, an allowed edge must leave the list too.
    assert HISTORIC_MIGRATION_DEPENDENCIES - upward == set(), "gone: remove from the list"


def test_no_lower_app_reads_a_higher_apps_table_through_a_reverse_relation():
    reads = upward_reverse_reads(reverse_accessors(apps.get_models(include_auto_created=True)))
    # What annotation needs of review's checks goes through annotation/phases.py's registry.
    assert reads == set(), "reverse relations read against the layers"


@isolate_apps("search_proxy")
def test_a_planted_upward_foreign_key_fails_the_check():
    from annotation.models import Task

    class PlantedLog(models.Model):
        task = models.ForeignKey(Task, null=True, on_delete=models.SET_NULL)
        checker = models.ForeignKey("review.QualityCheck", null=True, on_delete=models.SET_NULL)
        user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)

        class Meta:
            app_label = "search_proxy"

        def __str__(self) -> str:
            return "planted"

    assert upward_relations([PlantedLog]) == {
        ("search_proxy.PlantedLog.task", "annotation.Task"),
        ("search_proxy.PlantedLog.checker", "review.QualityCheck"),
    }


class _Migration:
    def __init__(self, dependencies, run_before=()):
        self.dependencies, self.run_before = list(dependencies), list(run_before)


class _Loader:
    def __init__(self, nodes):
        self.graph = type("Graph", (), {"nodes": nodes})()


def test_a_planted_upward_migration_dependency_fails_the_check():
    from django.db.migrations import swappable_dependency

    loader = _Loader(
        {
            ("search_proxy", "0100_up"): _Migration([("review", "0001_initial")]),
            ("search_proxy", "0101_user"): _Migration([swappable_dependency("annotation.User")]),
            ("annotation", "0100_down"): _Migration([("search_proxy", "0001_initial")]),
            ("exports", "0100_down"): _Migration([("annotation", "0001_initial")]),
            # "run before" search_proxy's first: that migration then depends on this one.
            ("exports", "0101_early"): _Migration(
                [], run_before=[("search_proxy", "0001_initial")]
            ),
        }
    )
    assert upward_migration_dependencies(loader) == {
        ("search_proxy.0100_up", "review.0001_initial"),
        ("search_proxy.0001_initial", "exports.0101_early"),
    }


def test_a_planted_reverse_relation_read_fails_the_check(tmp_path, monkeypatch):
    app = tmp_path / "annotation"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "reads.py").write_text(
        "def f(claim, tasks):\n"
        "    claim.quality_checks.all()\n"
        "    getattr(tasks[0], 'quality_check', None)\n"
        "    tasks.filter(quality_checks__verdict='x')\n"
        "    claim.tasks.all()\n"
    )
    (tmp_path / "templates" / "annotation").mkdir(parents=True)
    (tmp_path / "templates" / "annotation" / "page.html").write_text(
        "{{ claim.agreement_ratings.count }} {{ claim.status }}"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    names = {"review": {"quality_checks", "quality_check", "agreement_ratings"}}
    assert upward_reverse_reads(names) == {
        ("annotation.reads", "review", "quality_checks"),
        ("annotation.reads", "review", "quality_check"),
        ("templates/annotation/page.html", "review", "agreement_ratings"),
    }
