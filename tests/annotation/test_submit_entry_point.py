"""workflow.submit(task, data) hands in a task of any phase."""

import pytest

from annotation import workflow
from annotation.models import Claim
from annotation.vocabulary import Phase, Verdict
from tests import steps
from tests.factories import AnnotatorFactory


@pytest.fixture
def crew(db):
    return AnnotatorFactory.create_batch(5)


def test_one_entry_point_takes_a_claim_through_all_five_phases(crew):
    steps.new_article()
    (claim,) = workflow.submit(steps.take(crew[0], Phase.NORMALISATION), [steps.normalised_claim()])
    workflow.submit(steps.take(crew[1], Phase.QUESTIONS), steps.evidence(Verdict.SUPPORTED))
    workflow.submit(steps.take(crew[2], Phase.QUALITY_CHECK), steps.verdict(Verdict.REFUTED))
    claim.refresh_from_db()
    assert claim.state == Claim.State.DISPUTE
    workflow.submit(steps.take(crew[3], Phase.DISPUTE), steps.evidence(Verdict.REFUTED, 3))
    workflow.submit(steps.take(crew[4], Phase.POST_CONTROL), steps.verdict(Verdict.REFUTED))
    claim.refresh_from_db()
    assert claim.state == Claim.State.ACCEPTED
    assert claim.required_reannotation is True
