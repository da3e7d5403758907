"""Pre-suggestions in a real browser: asked for in P2, one template taken and reworded; offline,
a suggested query that finds pages and sentences of a page that cannot be fetched."""

import datetime
import time

import pytest

from annotation.models import Suggestion
from annotation.suggestions.pool import build_pool
from annotation.vocabulary import Phase, SuggestionKind
from search_proxy import fetch
from search_proxy.dates import DateSource
from search_proxy.indexing import DocumentRecord, index_records
from search_proxy.search_index import save_search_index
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
        evidence_round__claim__claim_date=datetime.date(2020, 9, 1),
    )
    build_pool()
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


def test_offline_suggest_gives_a_query_with_results_and_sentences_of_an_unfetchable_page(
    new_page, p2_with_pool, monkeypatch
):
    """No network: the suggested query (several words, not all on any one page) finds the
    indexed page; the page itself cannot be fetched, the viewer shows its indexed text, and
    the sentence suggestions rank that text."""
    url = "https://www.nature.com/articles/council-parks-money"
    index_records(
        [
            DocumentRecord(
                url=url,
                title="Where the parks money went",
                text=(
                    "The council met in March.\n"
                    "Parks received 2.1 million pounds in the 2019 budget.\n"
                    "Libraries were not discussed."
                ),
                published=datetime.date(2020, 3, 1),
                date_source=DateSource.GIVEN,
            )
        ],
        corpus="test",
    )
    save_search_index()

    def offline(address):
        raise fetch.PageUnavailable("The host name www.nature.com could not be resolved.")

    monkeypatch.setattr(fetch, "download_page", offline)
    page = new_page(DESKTOP)
    sign_in(page, "alice")
    flows.start_next(page, Phase.QUESTIONS)
    page.locator("#suggestions-box summary").click()
    page.get_by_role("link", name="Suggest", exact=True).click()
    query = page.locator("#suggestions-panel [data-suggestion]", has=page.locator("code"))
    query.wait_for()
    suggested = query.locator("code").inner_text()
    assert len(suggested.split()) > 3  # more words than any one page holds
    query.get_by_role("button", name="Put in the search box").click()
    assert page.locator(".search-form input[name=q]").input_value() == suggested
    page.get_by_role("button", name="Search", exact=True).click()
    result = page.locator("#search-results .result", has_text="Where the parks money went")
    result.wait_for()

    page.locator("[data-question]").first.locator("textarea[data-question-text]").fill(
        "How much money did the parks get in 2019?"
    )
    result.get_by_role("button", name="Open").click()
    page.get_by_text("could not be resolved").wait_for()
    page.locator("#opened-page .sentences p").first.wait_for()
    page.locator("[data-question]").first.locator("textarea[data-question-text]").focus()
    page.get_by_role("button", name="Suggest sentences of the opened page").click()
    best = page.locator("#sentence-suggestions [data-suggestion]").first
    best.wait_for()
    assert "2.1 million pounds" in best.inner_text()
    best.get_by_role("button", name="Select it on the page").click()
    assert "2.1 million pounds" in page.evaluate("() => window.getSelection().toString()")
