"""Rules the database itself enforces, whatever code writes to it."""

import pytest
from django.db import IntegrityError, transaction

from annotation.models import Article, Claim, Task
from annotation.vocabulary import Phase
from tests.factories import ArticleFactory, ClaimWaitingForQuestionsFactory, PooledTaskFactory


def _take(task: Task, annotator) -> None:
    task.annotator = annotator
    task.status = Task.Status.IN_PROGRESS
    task.save()


def test_an_annotator_can_never_hold_two_tasks_on_claims_of_the_same_article(annotator):
    first = ClaimWaitingForQuestionsFactory()
    sibling = ClaimWaitingForQuestionsFactory(article=first.article)
    _take(PooledTaskFactory(claim=first), annotator)
    with pytest.raises(IntegrityError), transaction.atomic():
        _take(PooledTaskFactory(claim=sibling), annotator)


def test_the_p1_annotator_of_an_article_can_never_hold_a_later_task_on_its_claims(annotator):
    claim = ClaimWaitingForQuestionsFactory()
    Task.objects.create(
        phase=Phase.NORMALISATION,
        article=claim.article,
        annotator=annotator,
        status=Task.Status.SUBMITTED,
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        _take(PooledTaskFactory(claim=claim, phase=Phase.QUALITY_CHECK), annotator)


def test_two_annotators_can_work_on_the_same_article(annotator, second_annotator):
    first = ClaimWaitingForQuestionsFactory()
    sibling = ClaimWaitingForQuestionsFactory(article=first.article)
    _take(PooledTaskFactory(claim=first), annotator)
    _take(PooledTaskFactory(claim=sibling), second_annotator)
    assert Task.objects.filter(article=first.article).count() == 2


def test_many_pooled_tasks_of_one_article_wait_without_an_annotator(db):
    claim = ClaimWaitingForQuestionsFactory()
    PooledTaskFactory(claim=claim)
    PooledTaskFactory(claim=claim, phase=Phase.QUALITY_CHECK)
    assert Task.objects.filter(annotator__isnull=True).count() == 2


def test_a_task_of_a_claim_phase_needs_its_claim(db):
    article = ArticleFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.create(phase=Phase.QUESTIONS, article=article)


def test_a_task_in_progress_needs_an_annotator(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        PooledTaskFactory(status=Task.Status.IN_PROGRESS)


def test_an_accepted_claim_needs_a_label(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        ClaimWaitingForQuestionsFactory(state=Claim.State.ACCEPTED, label=None)


def test_a_skipped_article_needs_a_reason(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        ArticleFactory(state=Article.State.SKIPPED)
    skipped = ArticleFactory(state=Article.State.SKIPPED, skip_reason=Article.SkipReason.PAYWALL)
    assert skipped.pk


def test_two_articles_with_the_same_normalised_address_cannot_exist(db):
    ArticleFactory(normalized_url="https://example.org/a")
    with pytest.raises(IntegrityError), transaction.atomic():
        ArticleFactory(normalized_url="https://example.org/a")
