"""An annotator normalises an article in a real browser."""

import pytest

from annotation.models import Claim, Task
from annotation.vocabulary import Phase
from tests import steps
from tests.e2e.conftest import DESKTOP, PHONE, screenshot, sign_in, wait_until_saved

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def article(annotator):
    # The tour is covered elsewhere; here it would sit over the form.
    annotator.completed_tours = ["p1"]
    annotator.save()
    return steps.new_article(
        url="https://fullfact.org/online/parks-spending/",
        title="Did the council really spend £4m on parks?",
        claimreview_claim="Says the council spent 4 million on parks and closed two libraries.",
    )


def fill_claim(page, index: int, text: str, label: str) -> None:
    card = page.locator("[data-claim-card]").nth(index)
    card.locator("textarea[name$='-text']").fill(text)
    card.get_by_label(label, exact=True).check()
    card.locator("input[name$='-date_as_written']").fill("February 2017")
    card.locator("input[name$='-date_as_written']").press("Tab")
    card.get_by_role("button", name="Use 2017-02-01").click()
    card.locator("input[name$='-speaker']").fill("Councillor Jane Doe")
    card.locator("input[name$='-reporting_source']").fill("Facebook")
    card.locator("input[name$='-original_claim_url']").fill("https://facebook.com/janedoe/posts/1")
    card.locator("input[name$='-media_url']").fill("https://facebook.com/janedoe/photos/2")
    card.locator("textarea[name$='-image_transcription']").fill("4 MILLION ON PARKS")
    card.locator("select[name$='-location_iso_code']").select_option("GB")
    card.get_by_label("Numerical Claim").check()
    card.get_by_label("Written Evidence").check()


def test_an_annotator_splits_an_article_survives_a_reload_and_submits(new_page, article, tmp_path):
    page = new_page(DESKTOP)
    sign_in(page, "alice")
    page.goto("/annotate/")
    page.get_by_role("button", name="Start next").first.click()
    page.wait_for_url("**/annotate/tasks/*/")
    assert "Says the council spent" in page.locator("textarea").first.input_value()
    assert page.locator(".warning", has_text="Says").count() == 1

    fill_claim(page, 0, "The council spent 4 million pounds on parks in 2016.", "Refuted")
    page.get_by_role("button", name="+ Add a claim (split)").click()
    fill_claim(page, 1, "The council closed two libraries in 2016.", "Supported")
    wait_until_saved(page)
    screenshot(page, "phase1-desktop", tmp_path)

    page.reload()
    cards = page.locator("[data-claim-card]")
    assert cards.count() == 2
    assert (
        cards.nth(1)
        .locator("textarea[name$='-text']")
        .input_value()
        .startswith("The council closed")
    )
    assert cards.nth(0).locator("input[name$='-claim_date']").input_value() == "2017-02-01"
    assert cards.nth(1).get_by_label("Supported", exact=True).is_checked()
    assert page.locator("#save-status", has_text="Draft restored").count() == 1

    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert page.locator(".messages", has_text="Saved 2 claim(s)").count() == 1
    claims = list(Claim.objects.order_by("position"))
    assert [c.text for c in claims] == [
        "The council spent 4 million pounds on parks in 2016.",
        "The council closed two libraries in 2016.",
    ]
    assert claims[1].fact_checker_label == "Supported"
    assert str(claims[0].claim_date) == "2017-02-01"
    assert claims[0].location_iso_code == "GB"
    assert claims[0].image_transcription == "4 MILLION ON PARKS"
    assert Task.objects.filter(phase=Phase.QUESTIONS, status=Task.Status.POOLED).count() == 2


def test_the_screen_fits_a_phone(new_page, article, tmp_path):
    page = new_page(PHONE)
    sign_in(page, "alice")
    page.goto("/annotate/")
    page.get_by_role("button", name="Start next").first.click()
    page.wait_for_url("**/annotate/tasks/*/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the page scrolls sideways on a phone"
    screenshot(page, "phase1-phone", tmp_path)


def test_a_second_tab_shows_a_conflict_instead_of_overwriting(new_page, article, annotator):
    first = new_page(DESKTOP)
    sign_in(first, "alice")
    first.goto("/annotate/")
    first.get_by_role("button", name="Start next").first.click()
    first.wait_for_url("**/annotate/tasks/*/")
    task_url = first.url

    second = first.context.new_page()
    second.goto(task_url)

    first.locator("textarea[name='claims-0-text']").fill("Written in the first tab.")
    first.locator("input[name='claims-0-speaker']").click()  # leave the field: autosave
    wait_until_saved(first)

    second.locator("textarea[name='claims-0-text']").fill("Written in the stale second tab.")
    second.locator("input[name='claims-0-speaker']").click()
    second.locator("#conflict-screen").wait_for(timeout=15000)
    assert "another tab" in second.locator("#save-status").inner_text()

    task = Task.objects.get(annotator=annotator)
    assert task.draft["claims"][0]["text"] == "Written in the first tab."
    second.get_by_role("link", name="Use the saved version").click()
    second.wait_for_load_state()
    assert (
        second.locator("textarea[name='claims-0-text']").input_value()
        == "Written in the first tab."
    )


def test_moving_a_claim_keeps_every_choice_of_both_claims(new_page, article, annotator):
    page = new_page(DESKTOP)
    sign_in(page, "alice")
    page.goto("/annotate/")
    page.get_by_role("button", name="Start next").first.click()
    page.wait_for_url("**/annotate/tasks/*/")
    cards = page.locator("[data-claim-card]")
    cards.nth(0).locator("textarea[name$='-text']").fill("First claim.")
    cards.nth(0).get_by_label("Refuted", exact=True).check()
    page.get_by_role("button", name="+ Add a claim (split)").click()
    cards.nth(1).locator("textarea[name$='-text']").fill("Second claim.")
    cards.nth(1).get_by_label("Supported", exact=True).check()
    cards.nth(1).locator("[data-move='up']").click()
    assert cards.nth(0).get_by_label("Supported", exact=True).is_checked()
    assert cards.nth(1).get_by_label("Refuted", exact=True).is_checked()
    cards.nth(1).locator("input[name$='-speaker']").click()
    wait_until_saved(page)
    task = Task.objects.get(annotator=annotator)
    assert [(c["text"], c["fact_checker_label"]) for c in task.draft["claims"]] == [
        ("Second claim.", "Supported"),
        ("First claim.", "Refuted"),
    ]
