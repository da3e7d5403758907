"""Managers see archive coverage per batch, the failures with reasons, retry them, and the
possible temporal leaks in a claim's history; blind annotators never see those leaks."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import Batch
from annotation.vocabulary import Phase
from search_proxy import archiving
from search_proxy.models import ArchiveGate, Source
from tests import steps
from tests.factories import AnnotatorFactory, AnswerFactory, QuestionFactory


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    ids: list[int] = []
    monkeypatch.setattr(archiving, "send_jobs", lambda new, countdown=0: ids.extend(new))
    return ids


def cite(batch: Batch | None, url: str, status: str, error: str = "") -> Source:
    source = Source.objects.create(
        url=url, normalized_url=url, archive_status=status, last_archive_error=error
    )
    answer = AnswerFactory(source_url=url, source=source)
    article = answer.question.evidence_round.claim.article
    article.batch = batch
    article.save()
    return source


@pytest.fixture
def cited(db):
    first = Batch.objects.create(name="intake-2020-11", kind=Batch.Kind.INTAKE)
    second = Batch.objects.create(name="intake-2020-12", kind=Batch.Kind.INTAKE)
    cite(first, "https://a.example/1", Source.ArchiveStatus.ARCHIVED)
    cite(first, "https://a.example/2", Source.ArchiveStatus.PENDING)
    cite(first, "https://a.example/3", Source.ArchiveStatus.FAILED, "the archive answered HTTP 503")
    cite(second, "https://b.example/1", Source.ArchiveStatus.FAILED, "network unreachable")
    return first, second


def test_the_archive_page_shows_coverage_per_batch_as_chart_and_table(client, manager, cited):
    client.force_login(manager)
    page = client.get(reverse("annotation:archives"))
    assert page.status_code == 200
    body = page.content.decode()
    assert "<svg" in body and "1 archived" in body
    rows = {r["c"].batch: r["c"] for r in page.context["rows"]}
    assert (rows["intake-2020-11"].archived, rows["intake-2020-11"].pending) == (1, 1)
    assert (rows["intake-2020-11"].failed, rows["intake-2020-12"].failed) == (1, 1)
    assert "archive failed: network unreachable" in body
    assert "archive failed: the archive answered HTTP 503" in body


def test_the_archive_page_says_while_the_archive_has_paused_every_job(client, manager, cited):
    client.force_login(manager)
    assert "asked us to slow down" not in client.get(reverse("annotation:archives")).text
    until = timezone.now() + timedelta(minutes=2)
    ArchiveGate.pause(until, "the archive answered HTTP 429 (Retry-After 120 s)")
    body = client.get(reverse("annotation:archives")).text
    assert "asked us to slow down (the archive answered HTTP 429 (Retry-After 120 s))" in body


def test_the_retry_button_sends_one_failed_job_again(
    client, manager, cited, sent, django_capture_on_commit_callbacks
):
    client.force_login(manager)
    failed = Source.objects.get(url="https://b.example/1")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("annotation:retry-archives"), {"source": failed.pk})
    assert response.status_code == 302
    failed.refresh_from_db()
    assert failed.archive_status == Source.ArchiveStatus.PENDING
    assert failed.pk in archiving.queue_due_jobs() and failed.pk in sent  # the beat sends it
    assert Source.objects.filter(archive_status=Source.ArchiveStatus.FAILED).count() == 1


def test_the_retry_button_refuses_a_source_that_is_not_a_number(client, manager, cited, sent):
    client.force_login(manager)
    response = client.post(reverse("annotation:retry-archives"), {"source": "x"}, follow=True)
    assert "is not a source number" in response.content.decode()
    assert sent == []


def test_annotators_get_403_and_get_on_retry_is_405(client, annotator, manager, db):
    client.force_login(annotator)
    assert client.get(reverse("annotation:archives")).status_code == 403
    assert client.post(reverse("annotation:retry-archives")).status_code == 403
    client.force_login(manager)
    assert client.get(reverse("annotation:retry-archives")).status_code == 405


def test_the_command_lists_and_retries_every_failed_job(
    cited, sent, capsys, django_capture_on_commit_callbacks
):
    call_command("retry_failed_archives", "--list")
    listed = capsys.readouterr().out
    assert "archive failed: network unreachable" in listed
    with django_capture_on_commit_callbacks(execute=True):
        call_command("retry_failed_archives")
    assert "2 failed archive job(s) queued again" in capsys.readouterr().out
    retried = Source.objects.filter(url__in=["https://a.example/3", "https://b.example/1"])
    assert set(retried.values_list("pk", flat=True)) <= set(archiving.queue_due_jobs())
    assert not Source.objects.filter(archive_status=Source.ArchiveStatus.FAILED).exists()


def leaky_source(url: str) -> Source:
    return Source.objects.create(
        url=url,
        normalized_url=url,
        archive_status=Source.ArchiveStatus.ARCHIVED,
        archived_url=f"https://web.archive.org/web/20201105000000/{url}",
        earliest_capture_at=datetime(2020, 11, 5, tzinfo=UTC),
    )


def test_the_claim_history_marks_a_possible_temporal_leak_for_managers(client, manager, db):
    question = QuestionFactory(evidence_round__claim__claim_date=date(2020, 10, 31))
    AnswerFactory(question=question, source=leaky_source("https://late.example/page"))
    AnswerFactory(question=question, source_url="metadata")
    client.force_login(manager)
    claim = question.evidence_round.claim
    body = client.get(reverse("review:claim-history", args=[claim.pk])).content.decode()
    assert body.count("possible temporal leak") == 1


def test_the_blind_quality_check_never_mentions_a_temporal_leak(client, db, sent):
    people = [AnnotatorFactory(username=f"p{n}") for n in range(3)]
    steps.new_article()
    steps.normalise(people[0])
    round_ = steps.answer(people[1])
    Source.objects.update(earliest_capture_at=datetime(2021, 1, 1, tzinfo=UTC))
    answer = round_.questions.first().answers.first()
    assert answer.possible_temporal_leak
    task = steps.take(people[2], Phase.QUALITY_CHECK)
    client.force_login(people[2])
    body = client.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert "temporal" not in body.lower()
