"""Fixtures shared by the whole suite: a small cast of people and the AVeriTeC data."""

from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import AgreementSampling
from annotation.vocabulary import Verdict
from tests import steps
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


@pytest.fixture(autouse=True)
def _own_search_index_dir(settings, tmp_path_factory):
    # Commands save the BM25 search index; never into the developer's var/ folder.
    settings.SEARCH_INDEX_DIR = tmp_path_factory.mktemp("search-index")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Everything under tests/e2e drives a browser; `make test-fast` leaves those out.
    for item in items:
        if "e2e" in item.path.parts:
            item.add_marker(pytest.mark.browser)


# --- Claims with independent rounds, for the agreement and progress reports --------------

S, R, N = Verdict.SUPPORTED, Verdict.REFUTED, Verdict.NOT_ENOUGH_EVIDENCE

# Per article: P2, agreement-sample P2, P3, agreement-sample P3, then P4 and P5 if disputed.
SCENARIO = [
    (R, R, R, R, None, None),
    (S, R, S, N, None, None),
    (R, S, S, S, R, R),
]


@pytest.fixture
def agreement_crew(db):
    return [AnnotatorFactory(username=f"crew{i}") for i in range(7)]


@pytest.fixture
def agreement_claims(agreement_crew):
    """Three claims driven through every phase with an independent P2 and P3 each.

    Every article passes the crew in the same order, so who does what is fixed: crew0 P1,
    crew1 the P2 of record, crew2 the sample P2, crew3 and crew4 the P3s, crew5 P4, crew6 P5.
    """
    AgreementSampling.objects.create(rate=1.0)
    claims = []
    for p2, p2_sample, p3, p3_sample, p4, p5 in SCENARIO:
        steps.new_article()
        [claim] = steps.normalise(agreement_crew[0])
        steps.answer(agreement_crew[1], p2)
        steps.answer(agreement_crew[2], p2_sample)
        steps.check(agreement_crew[3], p3)
        steps.check(agreement_crew[4], p3_sample)
        if p4:
            steps.resolve(agreement_crew[5], p4)
            steps.post_control(agreement_crew[6], p5)
        claim.refresh_from_db()
        claims.append(claim)
    return claims
