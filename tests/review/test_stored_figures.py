"""Stored reporting figures: verdict reports per filter, METEOR scores per pair, and their
rebuild; every one equal to the figures computed on request from the raw rows."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from unittest import mock

import pytest
from celery import current_app
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import Claim, EvidenceRound, User
from annotation.vocabulary import Phase
from review import stored, tasks
from review.agreement import ReportFilter, agreement_report, verdict_ratings
from review.models import AgreementRating, EvidenceScore, StoredReport
from review.progress import progress_report
from tests.review.random_workflow import random_workflow


@pytest.fixture
def eager_jobs():
    saved = current_app.conf.task_always_eager, current_app.conf.task_eager_propagates
    current_app.conf.task_always_eager = current_app.conf.task_eager_propagates = True
    yield
    current_app.conf.task_always_eager, current_app.conf.task_eager_propagates = saved


def _filters(batches) -> list[ReportFilter]:
    today = timezone.localdate()
    return [
        ReportFilter(),
        ReportFilter(batch_id=batches[0].pk),
        ReportFilter(batch_id=batches[1].pk, start=today - timedelta(days=40)),
        ReportFilter(start=today - timedelta(days=30), end=today - timedelta(days=3)),
    ]


def _as_stored(report: dict) -> dict:
    return json.loads(json.dumps(report))


@pytest.mark.parametrize("seed", [21, 22])
def test_every_stored_figure_equals_the_on_request_computation_on_a_random_workflow(
    db, seed, eager_jobs, django_capture_on_commit_callbacks
):
    # The METEOR jobs run as the hand-ins commit, as a worker would run them.
    with django_capture_on_commit_callbacks(execute=True) as queued:
        batches = random_workflow(random.Random(seed), 220, handed_in=0.7)
    assert queued  # the second P2 rounds queued their scores
    assert Claim.objects.count() >= 200  # a campaign of at least 200 claims (issue 27)

    for report_filter in _filters(batches):
        shown = stored.agreement_report(report_filter)
        assert shown.pop("stored")["current"]
        assert shown["evidence"].pop("pending") == 0
        computed = agreement_report(report_filter, ratings=verdict_ratings)
        assert shown == _as_stored(computed)
        # A second visit reads the stored report, with the same intervals (same seed).
        again = stored.agreement_report(report_filter)
        again.pop("stored")
        again["evidence"].pop("pending")
        assert again == shown
        progress = stored.stored_progress_report(report_filter)
        progress.pop("stored")
        assert progress == _as_stored(progress_report(report_filter))
    assert StoredReport.objects.filter(kind=stored.VERDICT_FIGURES).count() == 4
    whole = stored.agreement_report()
    assert whole["evidence"]["claims"] > 5
    assert whole["verdicts"]["first_round"]["items"] > 50
    assert stored.rebuild(fix=False) == []
    assert stored.rebuild_evidence(fix=False) == []
    assert stored.rebuild_reports(fix=False) == []


def test_a_stale_report_is_shown_while_one_job_computes_the_next(
    agreement_claims, django_capture_on_commit_callbacks
):
    first = stored.agreement_report(evidence=False)
    AgreementRating.objects.filter(comparison="first_round").order_by("id").first().delete()

    with django_capture_on_commit_callbacks() as queued:
        stale = stored.agreement_report(evidence=False)
        again = stored.agreement_report(evidence=False)

    assert not stale["stored"]["current"] and not again["stored"]["current"]
    assert stale["verdicts"] == first["verdicts"]
    assert len(queued) == 1  # one job for this version, however many visits
    with mock.patch("review.stored.current_app.signature") as signature:
        queued[0]()
    signature.assert_called_once_with(
        "review.tasks.refresh_report", args=(stored.VERDICT_FIGURES, "||")
    )
    assert tasks.refresh_report(stored.VERDICT_FIGURES, "||") is True
    assert tasks.refresh_report(stored.VERDICT_FIGURES, "||") is False
    fresh = stored.agreement_report(evidence=False)
    assert fresh["stored"]["current"]
    # The new figures are those of the ratings as they now are.
    assert fresh["verdicts"] == _as_stored(agreement_report(evidence=False))["verdicts"]
    assert fresh["verdicts"] != first["verdicts"]


def test_the_second_p2_round_queues_its_meteor_score_and_a_redelivery_does_nothing(
    agreement_claims, django_capture_on_commit_callbacks, eager_jobs
):
    claim = agreement_claims[0]
    sample = EvidenceRound.objects.get(claim=claim, phase=Phase.QUESTIONS, is_agreement_sample=True)
    EvidenceScore.objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True) as queued:
        sample.save()
    assert len(queued) == 1
    score = EvidenceScore.objects.get(claim=claim)

    with mock.patch("review.stored.scoring.claim_scores") as scorer:
        assert tasks.score_evidence(claim.pk) is False  # the same message, delivered again
        assert tasks.score_evidence.delay(claim.pk).get() is False
    scorer.assert_not_called()
    assert EvidenceScore.objects.get(claim=claim).scored_at == score.scored_at
    assert EvidenceScore.objects.count() == 1

    # A changed QA set is scored again.
    question = sample.questions.first()
    question.text = "Who paid for the new bridge, and when?"
    question.save()
    assert tasks.score_evidence(claim.pk) is True
    assert EvidenceScore.objects.get(claim=claim).signature != score.signature


def test_the_evidence_panel_counts_unscored_pairs_as_pending(client, agreement_claims):
    # The hand-ins stored each pair as pending; no worker has scored them yet.
    assert EvidenceScore.objects.filter(q_only__isnull=True).count() == 3
    client.force_login(User.objects.create(username="boss", role=User.Role.MANAGER))

    response = client.get(reverse("review:dashboard-evidence"))

    assert response.status_code == 200
    assert b"<strong>3</strong> pending" in response.content
    call_command("rebuild_figures", verbosity=0)
    assert (
        b"pending"
        not in client.get(reverse("review:dashboard-evidence")).content.split(b'<p class="hint">')[
            0
        ]
    )


@pytest.mark.parametrize("drift", ["rating", "score", "report"])
def test_a_planted_drift_in_any_stored_figure_is_found_by_the_check(agreement_claims, drift):
    call_command("rebuild_figures", verbosity=0)
    stored.agreement_report(evidence=False)  # a stored report for the whole campaign
    call_command("rebuild_figures", "--check", verbosity=0)

    if drift == "rating":
        AgreementRating.objects.filter(comparison="p2_p3").update(label="Refuted")
    elif drift == "score":
        EvidenceScore.objects.filter(claim=agreement_claims[1]).update(q_only=0.5)
    else:
        row = StoredReport.objects.get(kind=stored.VERDICT_FIGURES)
        figures = json.loads(row.figures)
        figures["p2_p3"]["fleiss_kappa"] = 0.99
        StoredReport.objects.filter(pk=row.pk).update(figures=json.dumps(figures))

    with pytest.raises(CommandError, match="differ"):
        call_command("rebuild_figures", "--check", verbosity=0)
    call_command("rebuild_figures", verbosity=0)
    call_command("rebuild_figures", "--check", verbosity=0)
    call_command("rebuild_agreement", "--check", verbosity=0)  # the former name


def test_a_broker_that_is_down_does_not_fail_the_hand_in_and_the_pair_stays_pending(
    agreement_claims, django_capture_on_commit_callbacks
):
    claim = agreement_claims[0]
    sample = EvidenceRound.objects.get(claim=claim, phase=Phase.QUESTIONS, is_agreement_sample=True)
    EvidenceScore.objects.all().delete()

    down = mock.patch("review.stored.current_app.signature", side_effect=OSError("no broker"))
    with down, django_capture_on_commit_callbacks(execute=True) as queued:
        sample.save()

    assert len(queued) == 1
    assert EvidenceScore.objects.get(claim=claim).q_only is None
    assert stored.evidence_figures(Claim.objects.filter(pk=claim.pk))["pending"] == 1


def test_the_beat_s_sweep_scores_the_pairs_a_broker_outage_left_pending(
    agreement_claims, django_capture_on_commit_callbacks
):
    EvidenceScore.objects.all().delete()
    down = mock.patch("review.stored.current_app.signature", side_effect=OSError("no broker"))
    with down, django_capture_on_commit_callbacks(execute=True):
        for claim in agreement_claims:
            EvidenceRound.objects.get(
                claim=claim, phase=Phase.QUESTIONS, is_agreement_sample=True
            ).save()
    assert EvidenceScore.objects.filter(q_only__isnull=True).count() == 3

    assert tasks.score_pending_evidence(limit=2) == 2  # bounded: the next run takes the rest
    assert tasks.score_pending_evidence() == 1
    assert tasks.score_pending_evidence() == 0
    assert not EvidenceScore.objects.filter(q_only__isnull=True).exists()
    call_command("rebuild_figures", "--check", verbosity=0)  # the sweep's scores are right
