"""API tokens: they expire, are stored only as hashes, and end on sign-out and password change."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

TASKS = "/api/v1/tasks/"
PASSWORD = "correct horse battery"


@pytest.fixture
def token(annotator) -> str:
    response = APIClient().post(
        reverse("api:token"), {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["expiry"]
    return response.json()["token"]


def _api(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_a_token_is_stored_only_as_a_hash(token):
    [stored] = AuthToken.objects.all()

    assert token not in stored.digest
    assert stored.token_key == token[: len(stored.token_key)]
    assert _api(token).get(TASKS).status_code == 200


def test_a_token_expires(token, settings):
    AuthToken.objects.update(expiry=timezone.now() - timedelta(seconds=1))

    assert _api(token).get(TASKS).status_code == 401


def test_a_token_ends_when_its_owner_changes_their_password(token, annotator):
    annotator.set_password("a brand new passphrase")
    annotator.save()

    assert _api(token).get(TASKS).status_code == 401


def test_a_token_survives_other_changes_to_the_account(token, annotator):
    annotator.first_name = "Alice"
    annotator.save()

    assert _api(token).get(TASKS).status_code == 200


def test_a_token_ends_with_an_api_sign_out(token):
    client = _api(token)

    assert client.post(reverse("api:logout")).status_code == 204
    assert client.get(TASKS).status_code == 401


def test_signing_out_everywhere_ends_every_token_of_the_account(token):
    other = APIClient().post(
        reverse("api:token"), {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert _api(token).post(reverse("api:logout-all")).status_code == 204

    assert _api(other.json()["token"]).get(TASKS).status_code == 401


def test_signing_out_of_the_site_ends_the_accounts_tokens(client, token, annotator):
    client.force_login(annotator)

    client.post(reverse("logout"))

    assert _api(token).get(TASKS).status_code == 401
