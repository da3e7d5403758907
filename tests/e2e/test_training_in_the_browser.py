"""A training item in a real browser: the answer and the reference side by side."""

import pytest

from annotation.models import QualificationThresholds
from annotation.vocabulary import ClaimType, Strategy
from tests.e2e.conftest import screenshot, sign_in
from tests.factories import AnnotatorFactory, GoldClaimFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_training_item_shows_the_side_by_side_feedback(new_page, tmp_path):
    # A small protocol: one practice claim, one judged; six claims fill every pool.
    QualificationThresholds.objects.create(practice_items=1, items_per_phase=1)
    for _ in range(6):
        GoldClaimFactory()
    AnnotatorFactory(username="trainee", qualified_phases=[], completed_tours=["p1"])
    page = new_page()
    sign_in(page, "trainee")

    page.goto("/annotate/")
    page.get_by_role("link", name="train on reference claims").first.click()
    page.get_by_label(ClaimType.QUOTE.label).check()
    page.get_by_label(Strategy.WRITTEN_EVIDENCE.label).check()
    page.get_by_role("button", name="Compare with the reference").click()

    table = page.locator("#training-feedback")
    table.wait_for()
    differing = table.locator("tr.differs")
    assert differing.count() == 1
    assert "Quote Verification" in differing.inner_text()
    assert "Numerical Claim" in differing.inner_text()
    assert table.locator("tr.same").count() == 1
    screenshot(page, "training-feedback", tmp_path)
