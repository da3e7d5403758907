"""Role changes are safe (issue 23): a changed role gives back the blind tasks held (drafts
kept on the released tasks) and keeps only the phases the new role may hold; researchers take
no annotation tasks unless a manager gives them phases explicitly, with a warning."""

from __future__ import annotations

import random
import re

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import accounts, visibility
from annotation.models import Task, User
from annotation.vocabulary import BLIND_PHASES, Phase, Verdict
from tests import steps
from tests.factories import AnnotatorFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def crew(db):
    return [AnnotatorFactory(username=f"crew{n}") for n in range(3)]


def p3_held_by(crew, checker) -> Task:
    steps.new_article()
    steps.normalise(crew[0])
    steps.answer(crew[1], Verdict.SUPPORTED)
    return steps.take(checker, Phase.QUALITY_CHECK)


def change(client, manager, person, **fields) -> list[str]:
    client.force_login(manager)
    data = {"role": person.role, "active": "on", **fields}
    response = client.post(reverse("annotation:person", args=[person.pk]), data)
    assert response.status_code == 302, response.content.decode()[:500]
    person.refresh_from_db()
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_a_researcher_made_from_a_default_annotator_cannot_take_a_p3_task(client, manager, crew):
    """Reported: a researcher with the default phases took P3 (200) and read its claim.
    Accounts now start in training, so the old default is given here by waiver."""
    created = accounts.create_annotators(
        ["rita"], manager, phases=[1, 2, 3], waiver_reason="experienced annotator from the pilot"
    )
    (rita,) = [User.objects.get(username=name) for name, _ in created]
    assert rita.qualified_phases == [1, 2, 3]
    rita.chose_own_password()
    change(client, manager, rita, role="researcher", phases=["1", "2", "3"])
    assert rita.qualified_phases == []
    p3_held_by(crew, crew[2])  # some P3 work is waiting
    steps.new_article()
    steps.normalise(crew[0])
    steps.answer(crew[1])
    api = APIClient()
    api.force_login(rita)
    response = api.post("/api/v1/tasks/next/", {"phase": 3}, format="json")
    assert response.status_code == 409
    assert not Task.objects.filter(annotator=rita).exists()


def test_a_researcher_takes_tasks_only_when_a_manager_says_so_with_a_warning(client, manager, crew):
    rita = AnnotatorFactory(username="rita", role=User.Role.RESEARCHER, qualified_phases=[])
    change(client, manager, rita, phases=["3"])
    assert rita.qualified_phases == []
    notes = change(
        client,
        manager,
        rita,
        phases=["3"],
        researcher_annotates="on",
        waiver_reason="checked blind work on the pilot",
    )
    assert rita.qualified_phases == [3]
    assert any("researcher who may now take annotation tasks (P3)" in n for n in notes)
    # The form shows the choice as made, so saving again keeps it.
    page = client.get(reverse("annotation:person", args=[rita.pk])).content.decode()
    assert re.search(r"<input[^>]*name=\"researcher_annotates\"[^>]*checked", page)


def test_an_annotator_promoted_mid_check_loses_the_task_keeps_the_draft_and_cannot_submit(
    client, manager, crew
):
    """Reported: promoted to manager while holding P3, read the P2 verdict on the claim's
    history page, then submitted the P3 check (200)."""
    checker = AnnotatorFactory(username="checker")
    task = p3_held_by(crew, checker)
    client.force_login(checker)
    client.post(
        reverse("annotation:save-draft", args=[task.pk]),
        {"draft_version": "0", "justification": "my words so far"},
    )
    notes = change(client, manager, checker, role="manager", phases=["1", "2", "3", "4", "5"])
    task.refresh_from_db()
    assert task.status == Task.Status.RELEASED
    assert task.draft["justification"] == "my words so far"
    assert task.replaced_by.status == Task.Status.POOLED
    assert any("went back to the pool" in n for n in notes)
    assert checker.qualified_phases == [1, 2, 4]  # no blind phase for managers by default
    client.force_login(checker)
    assert client.get(reverse("review:claim-history", args=[task.claim_id])).status_code == 404
    client.post(
        reverse("review:submit-check", args=[task.pk]),
        {"draft_version": str(task.draft_version), "verdict": "Supported", "justification": "x"},
    )
    task.refresh_from_db()
    assert task.status == Task.Status.RELEASED
    assert not hasattr(task, "quality_check")


def test_the_admin_applies_the_same_rules(admin_client, crew):
    checker = AnnotatorFactory(username="checker")
    task = p3_held_by(crew, checker)
    url = reverse("admin:annotation_user_change", args=[checker.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "password"}
    data.update(
        role="researcher",
        qualified_phases="[1, 2, 3]",
        completed_tours="[]",
        date_joined_0="2026-01-01",
        date_joined_1="00:00:00",
        is_active="on",
    )
    data.pop("last_login", None)
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    checker.refresh_from_db()
    task.refresh_from_db()
    assert checker.role == "researcher" and checker.qualified_phases == []
    assert task.status == Task.Status.RELEASED


def test_random_role_changes_never_leave_blind_work_with_someone_who_may_not_hold_it(
    manager, crew, settings
):
    """A seeded random walk of role and phase changes among people holding P3 work: after
    each change, nobody holds an open task of a phase they may not take, no blind task
    survives a role change, and researchers hold phases only when explicitly given."""
    rng = random.Random(23)
    people = [AnnotatorFactory(username=f"p{n}") for n in range(4)]
    releases = role_changes = 0
    for _round in range(12):
        for person in people:
            person.refresh_from_db()
            if person.is_qualified_for(Phase.QUALITY_CHECK) and rng.random() < 0.6:
                p3_held_by(crew, person)
        person = rng.choice(people)
        settings.MANAGERS_TAKE_BLIND_TASKS = rng.random() < 0.3
        before_role = person.role
        held_blind = set(
            Task.objects.filter(
                annotator=person, phase__in=BLIND_PHASES, status__in=Task.OPEN_STATUSES
            ).values_list("pk", flat=True)
        )
        role = rng.choice(list(User.Role.values))
        explicit = rng.random() < 0.5
        warnings = accounts.update_account(
            person,
            manager,
            role=role,
            phases=rng.sample([1, 2, 3, 4, 5], rng.randint(0, 5)),
            quotas={},
            active=True,
            researcher_annotates=explicit,
            waiver_reason="the walk waives training to reach every role and phase",
        )
        person.refresh_from_db()
        releases += any("went back to the pool" in w for w in warnings)
        role_changes += role != before_role
        open_tasks = Task.objects.filter(
            annotator__in=people, status__in=(Task.Status.ASSIGNED, Task.Status.IN_PROGRESS)
        ).select_related("annotator")
        for task in open_tasks:
            assert task.annotator.is_qualified_for(task.phase), task
        if role != before_role:
            still = Task.objects.filter(pk__in=held_blind, status__in=Task.OPEN_STATUSES)
            assert not still.exists()
        if role == User.Role.RESEARCHER and not explicit:
            assert person.qualified_phases == []
        if role == User.Role.MANAGER and not settings.MANAGERS_TAKE_BLIND_TASKS:
            assert not set(person.qualified_phases) & set(BLIND_PHASES)
        # Whatever changed, a claim they held blind work on stays blind to them.
        for claim_id in Task.objects.filter(annotator=person, phase__in=BLIND_PHASES).values_list(
            "claim_id", flat=True
        ):
            claim = Task.objects.get(annotator=person, claim_id=claim_id).claim
            assert not visibility.sees_in_full(person, claim)
    # The walk did what it is for: roles changed and held work was given back.
    assert role_changes >= 3 and releases >= 2, (role_changes, releases)
