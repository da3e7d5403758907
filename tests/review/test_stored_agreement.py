"""Stored agreement ratings: kept current by every stored verdict, equal to the raw rows."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import Claim, User
from annotation.vocabulary import Verdict
from review import stored
from review.agreement import ReportFilter, agreement_report, verdict_ratings
from review.models import AgreementRating, StoredReport
from tests import steps
from tests.review.random_workflow import random_workflow


def _filters(batches) -> list[ReportFilter]:
    today = timezone.localdate()
    return [
        ReportFilter(),
        ReportFilter(batch_id=batches[0].pk),
        ReportFilter(start=today - timedelta(days=30), end=today - timedelta(days=3)),
    ]


@pytest.mark.parametrize("seed", [11, 12])
def test_stored_figures_equal_the_on_request_computation_on_a_random_workflow(db, seed):
    batches = random_workflow(random.Random(seed), 220, handed_in=0.7)
    assert Claim.objects.count() >= 200  # a campaign of at least 200 claims (issue 27)

    for report_filter in _filters(batches):
        stored_report = agreement_report(report_filter, evidence=False)
        computed = agreement_report(report_filter, evidence=False, ratings=verdict_ratings)
        assert stored_report == computed
    assert stored.rebuild(fix=False) == []
    assert agreement_report(evidence=False)["verdicts"]["first_round"]["items"] > 50


def test_a_hand_in_updates_the_stored_ratings_in_its_transaction(agreement_claims):
    before = AgreementRating.objects.count()
    steps.new_article()
    crew = list(User.objects.filter(username__startswith="crew").order_by("username"))
    [claim] = steps.normalise(crew[0])
    steps.answer(crew[1], Verdict.REFUTED)

    assert AgreementRating.objects.filter(claim=claim, comparison="first_round").count() == 1
    assert AgreementRating.objects.count() == before + 1
    assert stored.rebuild(fix=False) == []


def test_the_rebuild_finds_and_repairs_a_drifted_figure(agreement_claims):
    AgreementRating.objects.filter(comparison="p2_p3").order_by("id").first().delete()
    AgreementRating.objects.filter(comparison="first_round").update(label="Refuted")

    with pytest.raises(CommandError, match="differ"):
        call_command("rebuild_agreement", "--check", verbosity=0)
    differences = stored.rebuild()

    assert differences and all(d.missing or d.extra for d in differences)
    assert stored.rebuild(fix=False) == []
    call_command("rebuild_figures", verbosity=0)  # the evidence scores of the fixture too
    call_command("rebuild_agreement", "--check", verbosity=0)


def test_the_dashboard_csv_and_api_read_the_stored_ratings(client, agreement_claims):
    client.force_login(User.objects.create(username="boss", role=User.Role.MANAGER))
    csv_before = client.get(reverse("review:dashboard-csv", args=["agreement"])).content
    # Drift the stored rows on purpose: every surface must show it (and the rebuild undo it).
    # Rows rewritten in place keep the version stamp, so the stored report goes too.
    AgreementRating.objects.filter(comparison="parallel_p2").update(label="Refuted")
    StoredReport.objects.all().delete()

    csv_after = client.get(reverse("review:dashboard-csv", args=["agreement"])).content
    call_command("rebuild_figures", verbosity=0)  # the ratings, then the stored reports

    assert csv_after != csv_before
    assert client.get(reverse("review:dashboard-csv", args=["agreement"])).content == csv_before
