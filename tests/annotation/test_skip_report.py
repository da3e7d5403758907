"""P1 "report & skip": one rule for the note the reason 'other' needs, with one message on
the screen, in the API and in the workflow (annotation/normalisation.py skip_problems)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import workflow
from annotation.models import Article
from annotation.normalisation import skip_problems
from annotation.vocabulary import Phase
from tests import steps

pytestmark = pytest.mark.django_db

MESSAGE = skip_problems("other", "")[0].message


@pytest.fixture
def p1_task(annotator):
    steps.new_article()
    return steps.take(annotator, Phase.NORMALISATION)


def test_the_reason_other_needs_a_note_and_the_listed_reasons_do_not():
    assert [p.path for p in skip_problems("other", "  ")] == ["note"]
    assert skip_problems("other", "The page is a login form.") == []
    assert skip_problems("paywall", "") == []


def test_the_screen_refuses_other_without_a_note_with_the_rules_message(client, p1_task):
    client.force_login(p1_task.annotator)
    url = reverse("annotation:skip-article", args=[p1_task.pk])
    response = client.post(url, {"reason": "other", "note": " "})
    assert response.status_code == 422
    assert MESSAGE.replace("'", "&#x27;") in response.content.decode()
    p1_task.article.refresh_from_db()
    assert p1_task.article.state == Article.State.AWAITING_NORMALISATION


def test_the_api_refuses_other_without_a_note_with_the_rules_message(p1_task):
    api = APIClient()
    api.force_authenticate(p1_task.annotator)
    response = api.post(
        reverse("api:task-submit", args=[p1_task.pk]),
        {"skip": {"reason": "other", "note": ""}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["skip"]["note"] == [MESSAGE]


def test_the_workflow_refuses_other_without_a_note_with_the_rules_message(p1_task):
    with pytest.raises(workflow.WorkflowError, match=MESSAGE):
        workflow.skip_article(p1_task, "other", "")
    workflow.skip_article(p1_task, "other", "The page is a login form.")
    p1_task.article.refresh_from_db()
    assert p1_task.article.state == Article.State.SKIPPED
