"""Fixtures for the dataset import and export: copies of dev.json, as they are or damaged."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

Records = list[dict[str, Any]]


@pytest.fixture
def dev_records(dev_json: Path) -> Records:
    """A fresh decoded copy of dev.json that a test may change at will."""
    return json.loads(dev_json.read_text(encoding="utf-8"))


@pytest.fixture
def write_dataset(tmp_path: Path) -> Callable[[Any], Path]:
    """Writes a JSON value to a file in tmp_path (formatted like the release) and returns it."""
    written = 0

    def write(value: Any, name: str | None = None) -> Path:
        nonlocal written
        written += 1
        path = tmp_path / (name or f"dataset-{written}.json")
        path.write_text(json.dumps(value, indent=4) + "\n", encoding="utf-8")
        return path

    return write


@pytest.fixture
def run_import(db) -> Callable[..., str]:
    """Runs the import_dataset command on a file and returns what it printed."""

    def run(path: Path, *args: str) -> str:
        out = io.StringIO()
        call_command("import_dataset", str(path), *args, stdout=out, stderr=io.StringIO())
        return out.getvalue()

    return run


@pytest.fixture
def run_export(db) -> Callable[..., str]:
    """Runs the export_dataset command into a file and returns what it printed."""

    def run(path: Path, *args: str) -> str:
        out = io.StringIO()
        call_command("export_dataset", "--out", str(path), *args, stdout=out, stderr=io.StringIO())
        return out.getvalue()

    return run


# --- Researchers' features: people, background jobs, files -------------------------------


@pytest.fixture
def researcher(db):
    from annotation.models import User
    from tests.factories import AnnotatorFactory

    return AnnotatorFactory(username="rita", role=User.Role.RESEARCHER, qualified_phases=[])


@pytest.fixture
def eager_tasks():
    """Celery tasks run in the test process when queued (retries too, without waiting).

    Errors are not propagated: an eager retry is raised as an error when they are, instead
    of being run. Tests look at the rows the tasks leave behind.
    """
    from config.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, False
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def _references_cache_in_tmp(tmp_path_factory, monkeypatch):
    """Scoring keeps the references' prepared text (pipeline.reference_cache): in a test's
    own folder, never in the installation's shared cache."""
    from pipeline import reference_cache

    folder = tmp_path_factory.mktemp("scoring-cache")
    monkeypatch.setattr(reference_cache, "default_cache_dir", lambda: folder)
