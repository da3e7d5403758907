"""Fixtures shared by the whole suite: a small cast of people and the AVeriTeC data."""

from pathlib import Path

import pytest
from django.conf import settings

from tests.factories import AnnotatorFactory, ManagerFactory


@pytest.fixture
def annotator(db):
    return AnnotatorFactory(username="alice")


@pytest.fixture
def second_annotator(db):
    return AnnotatorFactory(username="bob")


@pytest.fixture
def manager(db):
    return ManagerFactory(username="morgan")


@pytest.fixture
def outsider(db):
    """An account with no role in the project's work: not qualified for any phase."""
    return AnnotatorFactory(username="olivia", qualified_phases=[])


@pytest.fixture(scope="session")
def averitec_dir() -> Path:
    folder = Path(settings.AVERITEC_DATA_DIR)
    if not (folder / "dev.json").is_file():
        pytest.skip(f"AVeriTeC data not found in {folder} (set AVERITEC_DATA_DIR)")
    return folder


@pytest.fixture(scope="session")
def dev_json(averitec_dir) -> Path:
    return averitec_dir / "dev.json"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Real hashing is deliberately slow; tests create many accounts.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
