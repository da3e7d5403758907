"""Claims reported in P2 or P4 ("report & skip") are found by the phase of the task that
moved them, not by the wording of their reason, and are counted apart from P1 exclusions."""

from __future__ import annotations

import pytest

from annotation import workflow
from annotation.models import Claim
from annotation.vocabulary import ClaimType, Phase
from review import progress
from review.agreement import ReportFilter
from tests import steps
from tests.factories import AnnotatorFactory

pytestmark = pytest.mark.django_db


def test_a_claim_reported_in_p2_counts_and_a_claim_excluded_in_p1_does_not():
    writer, reporter = AnnotatorFactory.create_batch(2)
    steps.new_article()
    steps.normalise(
        writer, [steps.normalised_claim("Claim one."), steps.normalised_claim("Claim two.")]
    )
    steps.new_article()
    (opinion,) = steps.normalise(
        writer, [steps.normalised_claim("Parks are lovely.", claim_types=[ClaimType.OPINION])]
    )
    task = steps.take(reporter, Phase.QUESTIONS)
    workflow.report_claim(task, "media_claim", "video only")
    reported = Claim.objects.get(pk=task.claim_id)
    opinion.refresh_from_db()
    assert reported.state == opinion.state == Claim.State.EXCLUDED
    assert list(Claim.objects.reported()) == [reported]
    assert progress.outcome_rates(ReportFilter())["claims_reported_in_p2_p4"] == 1


def test_a_reason_worded_like_a_report_does_not_make_a_claim_reported():
    writer = AnnotatorFactory()
    steps.new_article()
    (claim,) = steps.normalise(writer)
    Claim.objects.filter(pk=claim.pk).update(
        state=Claim.State.EXCLUDED, exclusion_reason="reported in P2: typed by hand"
    )
    assert not Claim.objects.reported().exists()
