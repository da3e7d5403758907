"""At most three answers to a question, in P2 and in P4 alike, refused by the server on the
screen and in the API (annotation/evidence.py), not only by the editor's script.

The guidelines' dispute resolution keeps the P2 instructions (up to three answers); the few
questions with four answers in released files come in by import, which this rule never sees.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.evidence import MAX_ANSWERS_PER_QUESTION
from annotation.models import Claim, EvidenceRound
from annotation.vocabulary import Phase, Verdict
from tests import steps
from tests.factories import AnnotatorFactory

pytestmark = pytest.mark.django_db

ANSWER = {
    "text": "The 2019 budget lists 2.1 million for parks.",
    "answer_type": "Extractive",
    "source_url": "https://council.example.gov/budget-2019",
    "source_medium": "Web text",
}


@pytest.fixture
def p4_task():
    crew = AnnotatorFactory.create_batch(4)
    steps.new_article()
    steps.normalise(crew[0])
    steps.answer(crew[1], Verdict.SUPPORTED)
    steps.check(crew[2], Verdict.REFUTED)
    return steps.take(crew[3], Phase.DISPUTE)


def _payload(answers: int) -> dict:
    return {
        "questions": [
            {"text": "How much did the council spend on parks?", "answers": [ANSWER] * answers},
            {"text": "Who approved the parks budget?", "answers": [ANSWER]},
        ],
        "verdict": Verdict.REFUTED,
        "pairs_support_verdict": True,
    }


def _form(answers: int, version: int = 0) -> dict:
    data = {"draft_version": str(version), "verdict": Verdict.REFUTED, "claim_correction": ""}
    for qi, (text, count) in enumerate(
        [("How much did the council spend on parks?", answers), ("Who approved it?", 1)]
    ):
        data[f"q-{qi}-text"] = text
        for ai in range(count):
            data.update({f"q-{qi}-a-{ai}-{k}": v for k, v in ANSWER.items()})
    return data


def test_the_p4_screen_refuses_a_fourth_answer(client, p4_task):
    client.force_login(p4_task.annotator)
    url = reverse("annotation:check-evidence", args=[p4_task.pk])
    response = client.post(url, _form(MAX_ANSWERS_PER_QUESTION + 1))
    assert response.status_code == 422
    assert f"At most {MAX_ANSWERS_PER_QUESTION} answers" in response.content.decode()
    # The refused attempt is kept as a revision, so the next one builds on version 1.
    assert client.post(url, _form(MAX_ANSWERS_PER_QUESTION, version=1)).status_code == 200


def test_the_api_refuses_a_fourth_answer_in_p4_at_the_questions_answers(p4_task):
    api = APIClient()
    api.force_authenticate(p4_task.annotator)
    url = reverse("api:task-submit", args=[p4_task.pk])
    response = api.post(url, _payload(MAX_ANSWERS_PER_QUESTION + 1), format="json")
    assert response.status_code == 400
    assert response.json()["questions"]["0"]["answers"] == [
        f"At most {MAX_ANSWERS_PER_QUESTION} answers."
    ]
    assert not EvidenceRound.objects.filter(phase=Phase.DISPUTE).exists()
    assert api.post(url, _payload(MAX_ANSWERS_PER_QUESTION), format="json").status_code == 200
    assert Claim.objects.get(pk=p4_task.claim_id).state == Claim.State.POST_CONTROL
