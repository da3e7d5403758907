"""Who may take real tasks: managers and blind phases, qualification from training."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import assignment
from annotation.models import Task
from annotation.vocabulary import Phase, Verdict
from tests import steps
from tests.factories import AnnotatorFactory


def test_a_manager_takes_no_blind_task_by_default_whatever_their_phases(manager, annotator):
    steps.new_article()
    steps.normalise(annotator)

    assert manager.qualified_phases == [1, 2, 3, 4, 5]
    assert manager.is_qualified_for(Phase.QUESTIONS)
    assert not manager.is_qualified_for(Phase.QUALITY_CHECK)
    assert not manager.is_qualified_for(Phase.POST_CONTROL)
    with pytest.raises(assignment.NoTaskAvailable, match="not qualified for phase 3"):
        assignment.next_task(manager, Phase.QUALITY_CHECK)


def test_a_setting_lets_managers_take_blind_tasks(manager, settings):
    settings.MANAGERS_TAKE_BLIND_TASKS = True

    assert manager.is_qualified_for(Phase.QUALITY_CHECK)


def _waiting_blind_task(phase: int) -> Task:
    """A claim brought to a P3 (or, through a dispute, a P5) task waiting in the pool."""
    crew = [AnnotatorFactory(username=f"crew{i}") for i in range(4)]
    steps.new_article()
    steps.normalise(crew[0])
    steps.answer(crew[1], Verdict.REFUTED)
    if phase == Phase.POST_CONTROL:
        steps.check(crew[2], Verdict.SUPPORTED)
        steps.resolve(crew[3], Verdict.REFUTED)
    return Task.objects.get(phase=phase, status=Task.Status.POOLED)


def _try_every_way_in(manager, phase: int) -> dict[str, bool]:
    """Whether Start next, the API's next and a hand-out each gave the manager the task."""
    web = Client()
    web.force_login(manager)
    web.post(reverse("annotation:start-next", args=[phase]))
    by_screen = Task.objects.filter(annotator=manager, phase=phase).exists()
    Task.objects.filter(annotator=manager).update(annotator=None, status=Task.Status.POOLED)

    api = APIClient()
    api.force_authenticate(manager)
    by_api = api.post("/api/v1/tasks/next/", {"phase": phase}, format="json").status_code == 200
    Task.objects.filter(annotator=manager).update(annotator=None, status=Task.Status.POOLED)

    handed = assignment.assign_tasks(manager, phase, [manager], 1)
    return {"start next": by_screen, "api": by_api, "hand-out": bool(handed[manager])}


@pytest.mark.parametrize("phase", [Phase.QUALITY_CHECK, Phase.POST_CONTROL])
def test_start_next_the_api_and_hand_outs_all_refuse_a_manager_a_blind_task(manager, phase):
    task = _waiting_blind_task(phase)

    assert _try_every_way_in(manager, phase) == {
        "start next": False,
        "api": False,
        "hand-out": False,
    }
    task.refresh_from_db()
    assert task.annotator is None


@pytest.mark.parametrize("phase", [Phase.QUALITY_CHECK, Phase.POST_CONTROL])
def test_with_the_setting_on_a_manager_takes_blind_tasks_but_is_still_never_handed_them(
    manager, settings, phase
):
    settings.MANAGERS_TAKE_BLIND_TASKS = True
    _waiting_blind_task(phase)

    # Hand-outs go to annotator accounts only, whatever the setting says.
    assert _try_every_way_in(manager, phase) == {"start next": True, "api": True, "hand-out": False}
