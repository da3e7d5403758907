"""Phases are dispatched in one place: annotation/phases.py, filled by the apps' AppConfigs.

A screen, draft reader, hand-in or API shape chosen by comparing a task's phase with a phase
number (`phase == 1`, `task.phase == Phase.DISPUTE`, `phase in (2, 4)`, `{% if task.phase
== 4 %}`, `range(1, 6)`) is a second registry that adding a phase would miss. Read from the
source as text, so nothing needs to be imported.

Not dispatch, so not matched: a query for some phases (`phase__in=...`), membership in a
named set of phases with one definition (`BLIND_PHASES`), a lookup in a table keyed by
phase, and a view refusing a task of another phase (`task.phase != Phase.NORMALISATION`).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("pipeline", "search_proxy", "annotation", "review", "exports", "config")

# The registry and the modules that fill it.
REGISTRY = {"annotation/phases.py", "annotation/apps.py", "review/apps.py"}
# Where a comparison with a phase stays, and why.
STAYS = {
    # The rules modules take the phase as a rule's parameter: a P4 rule is a rule of P4
    # (one home per rule, STYLE.md), not a choice of which code handles a task.
    "annotation/evidence.py": "P2 and P4 evidence rules differ (answer cap, NEE verdict)",
    "review/checks.py": "P5 alone may call a claim too vague",
    # Training draws its own items for P1-P3, each phase's item of its own shape (an article
    # to normalise, a claim to question, QA pairs to check): the phase is what the item is,
    # not a choice of which code handles a task. A training row per phase would be the
    # registry's next step, if a fourth training phase ever comes.
    "annotation/training.py": "training items per phase",
    "annotation/forms/training.py": "training answer forms per phase",
    "annotation/views/training.py": "training pages per phase",
}

PYTHON = [
    # a phase compared with a number, either way round
    re.compile(r"\bphase\s*(==|!=)\s*\d"),
    re.compile(r"\b\d\s*(==|!=)\s*[\w.]*\bphase\b"),
    # a phase chosen by equality with a Phase member
    re.compile(r"\bphase\s*==\s*Phase\.\w+"),
    re.compile(r"\bPhase\.\w+\s*==\s*[\w.]*\bphase\b"),
    # a phase in a literal collection of phases
    re.compile(r"\bphase\s+(not\s+)?in\s*[(\[{]\s*(\d|Phase\.)"),
    # the phase numbers spelt out
    re.compile(r"\brange\(\s*1\s*,\s*6\s*\)"),
]
TEMPLATE = re.compile(r"{%\s*(el)?if\b[^%]*\bphase\s*(==|!=|in)\s*[\d(\[]")


def dispatch_lines(path: Path, text: str) -> list[str]:
    patterns = [TEMPLATE] if path.suffix == ".html" else PYTHON
    return [
        f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if any(p.search(line) for p in patterns)
    ]


def _sources() -> list[Path]:
    files = [
        path
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
    ]
    return files + sorted((ROOT / "templates").rglob("*.html"))


def test_no_phase_is_dispatched_outside_the_registry():
    found = []
    for path in _sources():
        relative = path.relative_to(ROOT).as_posix()
        if relative in REGISTRY or relative in STAYS:
            continue
        found += dispatch_lines(path, path.read_text())
    assert found == [], "dispatch through annotation/phases.py instead:\n" + "\n".join(found)


def test_every_place_allowed_to_compare_phases_still_exists():
    # An exemption outliving its file would silently cover a new one of the same name.
    assert [name for name in sorted(REGISTRY | set(STAYS)) if not (ROOT / name).exists()] == []


def test_the_check_finds_a_planted_dispatch_in_code_and_in_a_template(tmp_path):
    view = tmp_path / "planted.py"
    view.write_text(
        "def page(request, task):\n"
        "    if task.phase == Phase.DISPUTE:\n"
        "        return dispute_page(request, task)\n"
        "    if task.phase in (2, 4):\n"
        "        return evidence_page(request, task)\n"
        "    return [p for p in range(1, 6)]\n"
        "    return phase1_page(request, task) if 1 == task.phase else None\n"
    )
    template = tmp_path / "planted.html"
    template.write_text("<h2>{% if task.phase == 4 %}Dispute{% else %}Check{% endif %}</h2>\n")
    assert len(dispatch_lines(view, view.read_text())) == 4
    assert len(dispatch_lines(template, template.read_text())) == 1


def test_the_check_leaves_queries_named_sets_and_tables_alone(tmp_path):
    fine = tmp_path / "fine.py"
    fine.write_text(
        "Task.objects.filter(phase__in=(Phase.QUESTIONS, Phase.DISPUTE))\n"
        "if task.phase in BLIND_PHASES:\n"
        "    guide = GUIDES[task.phase]\n"
        "if locked.phase != phase:\n"
    )
    assert dispatch_lines(fine, fine.read_text()) == []
