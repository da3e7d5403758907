"""P1 reads the fact-checking article as text from its stored snapshot: taken at intake,
still shown when the site is down, and when there is none, the reason and the locally
indexed text instead of a blank frame."""

from __future__ import annotations

import pytest
from celery import current_app
from django.urls import reverse

import search_proxy.tasks  # noqa: F401 - registers the snapshot task, so eager mode runs it
from annotation import assignment
from annotation.intake import IntakeRow, import_articles
from annotation.models import Task
from annotation.vocabulary import Phase
from search_proxy.dates import DateSource
from search_proxy.models import Document, FetchedPage
from tests import steps
from tests.search_proxy.conftest import recorded


@pytest.fixture
def eager_tasks():
    saved = current_app.conf.task_always_eager, current_app.conf.task_eager_propagates
    current_app.conf.task_always_eager = current_app.conf.task_eager_propagates = True
    yield
    current_app.conf.task_always_eager, current_app.conf.task_eager_propagates = saved


def article_text(client, annotator, url: str) -> str:
    steps.new_article(url=url)
    task = assignment.next_task(annotator, Phase.NORMALISATION)
    client.force_login(annotator)
    page = client.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert reverse("annotation:article-text", args=[task.pk]) in page  # loaded by the pane
    response = client.get(reverse("annotation:article-text", args=[task.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_intake_snapshots_the_article_and_p1_still_shows_it_when_the_site_is_down(
    local_pages, client, annotator, django_capture_on_commit_callbacks, eager_tasks
):
    url = local_pages.serve(
        "/story", recorded("page_article.html"), headers={"Content-Type": "text/html"}
    )
    row = IntakeRow(line=2, url=url)
    with django_capture_on_commit_callbacks(execute=True):
        import_articles([row], batch_name="intake-snapshot")  # the snapshot job runs eagerly
    assert FetchedPage.objects.filter(url=url).exists()
    local_pages.serve("/story", b"down for maintenance", status=503)
    task = assignment.next_task(annotator, Phase.NORMALISATION)
    client.force_login(annotator)
    body = client.get(reverse("annotation:article-text", args=[task.pk])).content.decode()
    assert "The council spent 2.1 million pounds on parks in 2019" in body
    assert "SCRIPT RAN" not in body and "could not be fetched" not in body


def test_an_unreachable_article_says_why_and_offers_the_indexed_text(client, annotator, db):
    url = "https://factcheck.invalid/2020/parks/"
    Document.objects.create(
        url=url,
        normalized_url="https://factcheck.invalid/2020/parks",
        title="Parks spending checked",
        text="The council spent 2.1 million on parks.\nA councillor said 4 million.",
        date_source=DateSource.UNKNOWN,
    )
    body = article_text(client, annotator, url)
    assert "could not be fetched: The host name factcheck.invalid could not be resolved" in body
    assert "own index instead" in body
    assert "The council spent 2.1 million on parks." in body


def test_an_unreachable_article_without_indexed_text_points_to_the_links(client, annotator, db):
    body = article_text(client, annotator, "https://nowhere.invalid/story")
    assert "could not be fetched" in body
    assert "No copy of its text is stored here" in body
    task = Task.objects.get(phase=Phase.NORMALISATION)
    page = client.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert 'href="https://nowhere.invalid/story"' in page  # the live page stays one click away


def test_someone_elses_article_text_is_404(client, annotator, second_annotator, db):
    steps.new_article(url="https://nowhere.invalid/story")
    task = assignment.next_task(annotator, Phase.NORMALISATION)
    client.force_login(second_annotator)
    assert client.get(reverse("annotation:article-text", args=[task.pk])).status_code == 404
    assert client.post(reverse("annotation:article-text", args=[task.pk])).status_code == 405
