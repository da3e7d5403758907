"""Hostile bodies: deep JSON nesting and bodies over the upload limit get clear 4xx answers."""

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.vocabulary import Phase
from tests import steps


@pytest.fixture
def api(annotator) -> APIClient:
    client = APIClient()
    client.force_authenticate(annotator)
    return client


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def own_draft_url(annotator) -> str:
    steps.new_article()
    return f"/api/v1/tasks/{steps.take(annotator, Phase.NORMALISATION).pk}/draft/"


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deeply_nested_json_is_a_clear_400(api, own_draft_url, depth):
    for send, url in ((api.post, "/api/v1/tasks/next/"), (api.put, own_draft_url)):
        response = send(url, _nested(depth), content_type="application/json")

        assert response.status_code == 400, url
        assert "nests deeper than 32 levels" in response.json()["detail"]


def test_json_nested_a_few_levels_is_read_as_usual(api):
    body = json.dumps({"phase": 9, "extra": [[[{"a": [1]}]]]})

    response = api.post("/api/v1/tasks/next/", body, content_type="application/json")

    assert response.status_code == 400
    assert "phase" in response.json()


def test_a_json_body_over_the_upload_limit_is_a_json_413(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    body = json.dumps({"phase": 1, "padding": "x" * 4096})

    response = api.post("/api/v1/tasks/next/", body, content_type="application/json")

    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]


def test_a_form_over_the_upload_limit_is_a_413_page(client, settings, db):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048

    response = client.post(reverse("login"), {"username": "x" * 4096, "password": "y"})

    assert response.status_code == 413
    assert "Too much sent at once" in response.content.decode()
    assert "larger than" in response.content.decode()


def test_an_api_form_body_over_the_upload_limit_is_a_json_413(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048

    response = api.post("/api/v1/tasks/next/", {"phase": "1", "padding": "x" * 4096})

    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]
