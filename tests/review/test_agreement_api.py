"""/api/v1/agreement/ and /api/v1/progress/: the dashboard's figures, for managers only."""

import pytest
from knox.models import AuthToken
from rest_framework.test import APIClient

from review import stored

AGREEMENT, PROGRESS = "/api/v1/agreement/", "/api/v1/progress/"


def test_a_manager_reads_the_same_figures_as_the_dashboard(manager, agreement_claims):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {AuthToken.objects.create(manager)[1]}")

    stored.rebuild_evidence()  # the METEOR jobs a worker runs after the hand-ins
    agreement = client.get(AGREEMENT)
    progress = client.get(PROGRESS)

    assert agreement.status_code == 200
    assert agreement.json()["randolph_kappa"] == pytest.approx(1 / 9)
    assert agreement.json()["evidence"]["claims"] == 3
    assert progress.json()["outcomes"]["disputed"] == 1


def test_a_bad_date_filter_is_a_400_naming_the_field(manager):
    client = APIClient()
    client.force_authenticate(manager)

    response = client.get(AGREEMENT, {"start": "yesterday"})

    assert response.status_code == 400
    assert "start" in response.json()


def test_annotators_and_anonymous_callers_are_refused(annotator):
    client = APIClient()
    assert client.get(AGREEMENT).status_code in (401, 403)
    client.force_authenticate(annotator)
    assert client.get(AGREEMENT).status_code == 403
    assert client.get(PROGRESS).status_code == 403


def test_the_figures_are_read_only(manager):
    client = APIClient()
    client.force_authenticate(manager)

    assert client.post(AGREEMENT, {}).status_code == 405
