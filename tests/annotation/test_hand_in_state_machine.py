"""No lost work, as a property of the task API (issue 22): a hypothesis state machine.

Three clients ("tabs") of one annotator save drafts and submit one P2 task in any order,
with stale versions, without versions, again after the task was handed in, and discard
revisions on the revision page. Whatever the order, every text any of them sent is in the
handed-in work, in a revision the annotator can open, or in a revision they discarded; the
task's draft is always the content of its newest accepted revision; and the task is handed
in at most once.
"""

from __future__ import annotations

import itertools

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from rest_framework.test import APIClient

from annotation.models import DraftRevision, EvidenceRound, Task
from annotation.vocabulary import Phase
from tests import steps
from tests.annotation.handing_in import discarded_texts, handed_in_texts, restorable_texts
from tests.factories import AnnotatorFactory

pytestmark = pytest.mark.django_db

TABS = ("A", "B", "C")
_numbers = itertools.count()


def _payload(question: str) -> dict:
    return {
        "questions": [
            {
                "text": question,
                "answers": [
                    {
                        "text": "The 2019 budget lists 2.1 million for parks.",
                        "answer_type": "Extractive",
                        "source_url": "https://council.example.gov/budget-2019",
                        "source_medium": "Web text",
                    }
                ],
            }
        ],
        "verdict": "Refuted",
        "pairs_support_verdict": True,
    }


class HandIns(RuleBasedStateMachine):
    @initialize()
    def a_task_in_progress(self):
        crew = AnnotatorFactory.create_batch(2)
        steps.new_article()
        steps.normalise(crew[0])
        self.task = steps.take(crew[1], Phase.QUESTIONS)
        self.api = APIClient()
        self.api.force_authenticate(crew[1])
        self.site = APIClient()
        self.site.force_login(crew[1])
        # The version each tab last saw, and every text sent (each one unique).
        self.seen = dict.fromkeys(TABS, 0)
        self.sent: set[str] = set()
        self.last_submit: dict | None = None
        self.submits_accepted = 0

    def _text(self, kind: str) -> str:
        text = f"How much did {kind} {next(_numbers)} cost?"
        self.sent.add(text)
        return text

    @rule(tab=st.sampled_from(TABS), behind=st.integers(0, 2))
    def save_a_draft(self, tab, behind):
        version = max(0, self.seen[tab] - behind)
        body = {"draft": {"questions": [{"text": self._text("draft")}]}, "version": version}
        response = self.api.put(
            f"/api/v1/tasks/{self.task.pk}/draft/", {**body, "tab": tab}, format="json"
        )
        assert response.status_code in (200, 409), response.content
        if response.status_code == 200:
            self.seen[tab] = response.json()["draft_version"]
        else:
            assert DraftRevision.objects.filter(pk=response.json()["revision"]).exists()

    @rule(tab=st.sampled_from(TABS))
    def reload(self, tab):
        self.seen[tab] = Task.objects.get(pk=self.task.pk).draft_version

    @rule(tab=st.sampled_from(TABS), send_version=st.booleans())
    def submit(self, tab, send_version):
        payload = _payload(self._text("submit"))
        if send_version:
            payload["draft_version"] = self.seen[tab]
        response = self.api.post(
            f"/api/v1/tasks/{self.task.pk}/submit/", {**payload, "tab": tab}, format="json"
        )
        assert response.status_code in (200, 409), response.content
        if response.status_code == 200:
            self.submits_accepted += 1
            self.last_submit = payload
        else:
            assert "revision" in response.json()

    @precondition(lambda self: self.last_submit is not None)
    @rule()
    def submit_the_same_again(self):
        response = self.api.post(
            f"/api/v1/tasks/{self.task.pk}/submit/", self.last_submit, format="json"
        )
        assert response.status_code == 200, response.content

    @rule(data=st.data())
    def discard_a_revision(self, data):
        kept = list(DraftRevision.objects.filter(task=self.task).kept_for_annotator())
        if not kept:
            return
        revision = data.draw(st.sampled_from(kept))
        url = reverse("annotation:discard-revision", args=[self.task.pk, revision.pk])
        assert self.site.post(url).status_code == 302

    @invariant()
    def every_text_sent_is_somewhere(self):
        task = Task.objects.get(pk=self.task.pk)
        found = handed_in_texts(task) | restorable_texts(task) | discarded_texts(task)
        assert self.sent <= found, self.sent - found

    @invariant()
    def the_draft_is_the_newest_accepted_revision(self):
        task = Task.objects.get(pk=self.task.pk)
        newest = (
            task.revisions.filter(outcome=DraftRevision.Outcome.CURRENT)
            .order_by("-version")
            .first()
        )
        if newest is not None:
            assert newest.version == task.draft_version
            assert newest.content == task.draft

    @invariant()
    def the_task_is_handed_in_at_most_once(self):
        assert EvidenceRound.objects.filter(task=self.task).count() <= 1
        assert self.submits_accepted <= 1


def test_no_sequence_of_saves_and_submits_loses_a_text(db):
    run_state_machine_as_test(
        HandIns,
        settings=settings(
            max_examples=25,
            stateful_step_count=30,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )


def test_the_property_can_fail(db):
    """A planted loss: a save whose revision is deleted must break the invariant."""
    machine = HandIns()
    machine.a_task_in_progress()
    machine.save_a_draft("A", 0)
    DraftRevision.objects.filter(task=machine.task).delete()
    Task.objects.filter(pk=machine.task.pk).update(draft={})
    with pytest.raises(AssertionError):
        machine.every_text_sent_is_somewhere()
