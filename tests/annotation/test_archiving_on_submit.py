"""Submitting P1, P2 and P4 records one pending source per cited page in the submit's
transaction (the outbox); the beat, never the submit, hands them to the workers."""

from __future__ import annotations

import dataclasses

import pytest
from celery import Celery
from django.db import transaction
from kombu.exceptions import OperationalError

from annotation import workflow
from annotation.vocabulary import AnswerType, Phase, SourceMedium
from search_proxy import archiving
from search_proxy.models import Source
from tests import steps


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    ids: list[int] = []
    monkeypatch.setattr(archiving, "send_jobs", lambda new, countdown=0: ids.extend(new))
    return ids


@pytest.fixture
def article(db):
    return steps.new_article()


def with_metadata_answer(data: workflow.EvidenceData) -> workflow.EvidenceData:
    extra = workflow.QuestionData(
        text="Who made the claim?",
        answers=[
            workflow.AnswerData(
                text="A council member.",
                answer_type=AnswerType.EXTRACTIVE,
                source_url="metadata",
                source_medium=SourceMedium.METADATA,
            )
        ],
    )
    return dataclasses.replace(data, questions=[*data.questions, extra])


def test_p1_records_the_original_claim_and_media_urls_for_the_beat_to_send(
    article, annotator, sent, django_capture_on_commit_callbacks
):
    claim = steps.normalised_claim(
        original_claim_url="https://social.example.com/post/1",
        media_url="https://img.example.com/1.jpg",
    )
    with django_capture_on_commit_callbacks(execute=True):
        steps.normalise(annotator, [claim])
    assert sent == []  # the submit sends nothing
    archiving.queue_due_jobs()
    queued = Source.objects.filter(pk__in=sent)
    assert sorted(s.url for s in queued) == [
        "https://img.example.com/1.jpg",
        "https://social.example.com/post/1",
    ]


def test_p2_and_p4_record_each_distinct_page_once_and_never_metadata(
    article, annotator, second_annotator, sent, django_capture_on_commit_callbacks
):
    steps.normalise(annotator)
    task = steps.take(second_annotator, Phase.QUESTIONS)
    with django_capture_on_commit_callbacks(execute=True):
        workflow.submit_evidence(task, with_metadata_answer(steps.evidence(questions=2)))
    assert sent == []
    archiving.queue_due_jobs()
    assert len(sent) == 2 and len(set(sent)) == 2
    assert not Source.objects.filter(url="metadata").exists()
    # The same pages once archived are not archived again.
    Source.objects.update(archive_status=Source.ArchiveStatus.ARCHIVED)
    assert (
        archiving.queue_archiving(
            [
                "https://council.example.gov/budget-2019/0",
                "https://council.example.gov/budget-2019/1/",
            ]
        )
        == []
    )


def test_a_rolled_back_submit_records_nothing(
    article, annotator, sent, django_capture_on_commit_callbacks
):
    claim = steps.normalised_claim(original_claim_url="https://x.example/1")
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        steps.normalise(annotator, [claim])
        raise RuntimeError("the request fails after the submit")
    assert not Source.objects.exists()
    assert archiving.queue_due_jobs() == [] and sent == []


def test_a_submit_with_the_broker_down_never_waits_on_it(
    article, annotator, second_annotator, monkeypatch, django_capture_on_commit_callbacks
):
    """With the broker unreachable the submit makes no attempt to reach it for archiving
    (each attempt cost about 0.6 s per page), so it takes what it takes with archiving off;
    the pages wait as pending sources until the beat can send them."""
    tried: list[str] = []

    def broker_down(app, name, *args, **kwargs):
        tried.append(name)
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(Celery, "send_task", broker_down)
    steps.normalise(annotator)
    task = steps.take(second_annotator, Phase.QUESTIONS)
    with django_capture_on_commit_callbacks(execute=True):
        workflow.submit_evidence(task, steps.evidence(questions=10))
    assert archiving.ARCHIVE_TASK not in tried
    waiting = Source.objects.filter(archive_status=Source.ArchiveStatus.PENDING)
    assert waiting.count() == 10
    # The beat, with the broker still down: nothing is lost, the sources stay waiting...
    assert sorted(archiving.queue_due_jobs()) == sorted(waiting.values_list("pk", flat=True))
    assert tried.count(archiving.ARCHIVE_TASK) == 10 and waiting.count() == 10
