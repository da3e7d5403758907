"""GET /api/v1/claims/: claims as AVeriTeC records, filtered and paged, for researchers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from annotation.models import Claim
from tests.factories import (
    AnswerFactory,
    ClaimWaitingForQuestionsFactory,
    QuestionFactory,
    SubmittedEvidenceRoundFactory,
)


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {AuthToken.objects.create(researcher)[1]}")
    return client


@pytest.fixture
def claims(db):
    """Three accepted claims changed an hour apart, and one still waiting for P2."""
    now = timezone.now()
    accepted = []
    for n in range(3):
        evidence = SubmittedEvidenceRoundFactory(claim__text=f"Accepted claim {n}.")
        AnswerFactory(question=QuestionFactory(evidence_round=evidence))
        Claim.objects.filter(pk=evidence.claim_id).update(updated_at=now - timedelta(hours=3 - n))
        accepted.append(evidence.claim)
    waiting = ClaimWaitingForQuestionsFactory(text="Still waiting.")
    return accepted, waiting


def test_accepted_claims_changed_since_a_time(api, claims):
    accepted, _ = claims
    since = (timezone.now() - timedelta(hours=2, minutes=30)).isoformat()

    response = api.get("/api/v1/claims/", {"state": "accepted", "updated_since": since})

    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["id"] for r in results] == [accepted[1].pk, accepted[2].pk]
    record = results[0]["record"]
    assert record["claim"] == "Accepted claim 1."
    assert record["label"] == "Refuted"
    assert record["claim_date"] == "31-10-2020"
    assert record["questions"][0]["answers"][0]["answer"] == "2.1 million pounds"
    assert results[0]["split"] == "dev"


def test_claims_of_any_state_and_their_records(api, claims):
    results = api.get("/api/v1/claims/").json()["results"]
    assert len(results) == 4
    waiting = next(r for r in results if r["state"] == "questions")
    assert waiting["record"]["questions"] == []
    assert waiting["record"]["label"] is None


def test_claims_come_in_stable_pages(api, claims):
    accepted, waiting = claims
    first = api.get("/api/v1/claims/", {"page_size": 2}).json()
    second = api.get(first["next"]).json()

    ids = [r["id"] for r in first["results"] + second["results"]]
    assert ids == [c.pk for c in accepted] + [waiting.pk]  # by updated_at, oldest first
    assert second["next"] is None


def test_a_bad_filter_is_a_400(api, claims):
    response = api.get("/api/v1/claims/", {"state": "finished", "updated_since": "yesterday"})
    assert response.status_code == 400
    assert set(response.json()) == {"state", "updated_since"}


def test_one_claim(api, claims):
    accepted, _ = claims
    response = api.get(f"/api/v1/claims/{accepted[0].pk}/")
    assert response.json()["record"]["claim"] == "Accepted claim 0."


def test_the_claims_api_is_for_researchers_and_managers(annotator, manager, claims):
    client = APIClient()
    client.force_authenticate(annotator)
    assert client.get("/api/v1/claims/").status_code == 403
    client.force_authenticate(manager)
    assert client.get("/api/v1/claims/").status_code == 200
    assert APIClient().get("/api/v1/claims/").status_code == 401


def test_the_claims_api_is_read_only(api, claims):
    accepted, _ = claims
    assert api.post("/api/v1/claims/", {}, format="json").status_code == 405
    assert api.delete(f"/api/v1/claims/{accepted[0].pk}/").status_code == 405


def test_the_schema_describes_the_researchers_api(api):
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/json").content.decode()
    assert "/api/v1/claims/" in schema
    assert "updated_since" in schema
    assert "/api/v1/export-jobs/{id}/download/" in schema


@pytest.mark.parametrize(
    "position", ["not-a-time", "2020-13-45 25:00:00", "x\x00y", "2020-10-31'; DROP TABLE x;--"]
)
def test_a_crafted_cursor_is_a_404_not_a_server_error(api, claims, position):
    from base64 import b64encode
    from urllib.parse import urlencode

    cursor = b64encode(urlencode({"p": position}).encode()).decode()

    response = api.get("/api/v1/claims/", {"cursor": cursor})

    assert response.status_code == 404
    assert response.json() == {"detail": "Invalid cursor"}


def test_a_real_cursor_still_pages(api, claims):
    first = api.get("/api/v1/claims/", {"page_size": 1}).json()
    assert api.get(first["next"]).status_code == 200


def test_the_filters_are_documented_on_the_list_only(api):
    schema = api.get("/api/v1/schema/", {"format": "json"}).json()
    listed = {p["name"] for p in schema["paths"]["/api/v1/claims/"]["get"]["parameters"]}
    one = {p["name"] for p in schema["paths"]["/api/v1/claims/{id}/"]["get"]["parameters"]}
    assert {"state", "updated_since", "cursor"} <= listed
    assert one == {"id"}
