"""Every editor view starts the same way: the annotator's own task, of that editor's phases;
anything else is "not found" (ids reveal nothing)."""

import pytest
from django.urls import reverse

from annotation.vocabulary import Phase
from tests import steps
from tests.factories import AnnotatorFactory

EDITOR_URLS = {
    "annotation:submit-normalisation": Phase.NORMALISATION,
    "annotation:check-evidence": Phase.QUESTIONS,
    "annotation:confirm-evidence": Phase.QUESTIONS,
    "review:submit-check": Phase.QUALITY_CHECK,
}


@pytest.fixture
def tasks(db):
    crew = AnnotatorFactory.create_batch(3)
    steps.new_article()
    p1 = steps.take(crew[0], Phase.NORMALISATION)
    steps.new_article()
    steps.normalise(crew[1])
    p2 = steps.take(crew[2], Phase.QUESTIONS)
    return {Phase.NORMALISATION: p1, Phase.QUESTIONS: p2}


@pytest.mark.parametrize("url_name", EDITOR_URLS)
def test_an_editor_refuses_a_task_of_another_phase_as_not_found(client, tasks, url_name):
    wrong = next(t for phase, t in tasks.items() if phase != EDITOR_URLS[url_name])
    client.force_login(wrong.annotator)
    response = client.post(reverse(url_name, args=[wrong.pk]), {"draft_version": "0"})
    assert response.status_code == 404


@pytest.mark.parametrize("url_name", EDITOR_URLS)
def test_an_editor_refuses_someone_elses_task_as_not_found(client, tasks, url_name):
    task = tasks.get(EDITOR_URLS[url_name], tasks[Phase.QUESTIONS])
    client.force_login(AnnotatorFactory())
    response = client.post(reverse(url_name, args=[task.pk]), {"draft_version": "0"})
    assert response.status_code == 404


@pytest.mark.parametrize("url_name", EDITOR_URLS)
def test_an_editor_takes_no_get(client, tasks, url_name):
    task = tasks.get(EDITOR_URLS[url_name], tasks[Phase.QUESTIONS])
    client.force_login(task.annotator)
    assert client.get(reverse(url_name, args=[task.pk])).status_code == 405
