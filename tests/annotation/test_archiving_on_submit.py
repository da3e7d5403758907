"""Submitting P1, P2 and P4 queues one archive job per cited page, after the commit."""

from __future__ import annotations

import dataclasses

import pytest
from django.db import transaction

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


def test_p1_queues_the_original_claim_and_media_urls_only_once_committed(
    article, annotator, sent, django_capture_on_commit_callbacks
):
    claim = steps.normalised_claim(
        original_claim_url="https://social.example.com/post/1",
        media_url="https://img.example.com/1.jpg",
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        steps.normalise(annotator, [claim])
    assert sent == []  # nothing before the commit
    for callback in callbacks:
        callback()
    queued = Source.objects.filter(pk__in=sent)
    assert sorted(s.url for s in queued) == [
        "https://img.example.com/1.jpg",
        "https://social.example.com/post/1",
    ]


def test_p2_and_p4_queue_each_distinct_page_once_and_never_metadata(
    article, annotator, second_annotator, sent, django_capture_on_commit_callbacks
):
    steps.normalise(annotator)
    task = steps.take(second_annotator, Phase.QUESTIONS)
    with django_capture_on_commit_callbacks(execute=True):
        workflow.submit_evidence(task, with_metadata_answer(steps.evidence(questions=2)))
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


def test_a_rolled_back_submit_queues_nothing(
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
    assert sent == []
