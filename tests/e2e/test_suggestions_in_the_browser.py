"""Pre-suggestions in a real browser: asked for in P2, one template taken and reworded."""

import time

import pytest

from annotation import suggestions
from annotation.models import Suggestion
from annotation.vocabulary import Phase, SuggestionKind
from tests import steps
from tests.e2e import flows
from tests.e2e.conftest import DESKTOP, sign_in
from tests.factories import AnnotatorFactory, QuestionFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TEMPLATE = "How much did the council spend on parks in 2019?"


@pytest.fixture
def p2_with_pool(annotator, settings, tmp_path):
    settings.SUGGESTION_POOL_DIR = tmp_path / "suggestions"
    QuestionFactory(
        text=TEMPLATE,
        evidence_round__claim__text="The council spent 9 million pounds on parks in 2019.",
    )
    suggestions.build_pool()
    annotator.completed_tours = ["p2"]
    annotator.save()
    steps.new_article(url="https://fullfact.org/online/parks-suggested/")
    steps.normalise(
        AnnotatorFactory(username="p1-writer"),
        [steps.normalised_claim("The council spent 4 million pounds on parks.")],
    )


def _wait_for(check, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def test_an_annotator_asks_for_suggestions_takes_a_template_and_rewords_it(new_page, p2_with_pool):
    page = new_page(DESKTOP)
    sign_in(page, "alice")
    flows.start_next(page, Phase.QUESTIONS)
    # Hidden until asked for: nothing is suggested on opening the task.
    assert page.get_by_text(TEMPLATE).count() == 0
    assert not Suggestion.objects.exists()

    page.locator("#suggestions-box summary").click()
    page.get_by_role("link", name="Suggest", exact=True).click()
    item = page.locator("#suggestions-panel [data-suggestion]", has_text=TEMPLATE)
    item.wait_for()
    assert _wait_for(lambda: Suggestion.objects.filter(kind=SuggestionKind.QUESTIONS).exists())

    cards_before = page.locator("#questions [data-question]").count()
    item.get_by_role("button", name="Use as a new question").click()
    cards = page.locator("#questions [data-question]")
    assert cards.count() == cards_before + 1
    field = cards.last.locator("textarea[data-question-text]")
    assert field.input_value() == TEMPLATE

    reworded = "How much did the council spend on parks in 2020?"
    field.fill(reworded)
    field.press("Tab")  # leaving the field is when a change counts as an edit

    def logged():
        template = Suggestion.objects.get(kind=SuggestionKind.QUESTIONS, text=TEMPLATE)
        return template.outcome == "edited" and template.final_text == reworded

    assert _wait_for(logged)
    template = Suggestion.objects.get(kind=SuggestionKind.QUESTIONS, text=TEMPLATE)
    assert template.shown_at and template.accepted_at and template.edited_at
