"""Issue 11 in a real browser: stale tabs stay in conflict, closed pages lose no typing."""

import pytest

from annotation.models import Task
from annotation.vocabulary import Phase
from review.models import QualityCheck
from tests import steps
from tests.e2e.conftest import DESKTOP, PHONE, screenshot, sign_in, wait_until_saved
from tests.factories import AnnotatorFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def p3_task(annotator):
    annotator.completed_tours = ["p2", "p3", "p4", "p5"]
    annotator.save()
    steps.new_article()
    steps.normalise(AnnotatorFactory(username="writer"))
    steps.answer(AnnotatorFactory(username="answerer"))
    return steps.take(annotator, Phase.QUALITY_CHECK)


@pytest.fixture
def p2_task(annotator):
    annotator.completed_tours = ["p2", "p3", "p4", "p5"]
    annotator.save()
    steps.new_article()
    steps.normalise(AnnotatorFactory(username="writer"))
    return steps.take(annotator, Phase.QUESTIONS)


def _two_tabs(new_page, task):
    first = new_page()
    sign_in(first, "alice")
    second = first.context.new_page()
    for tab in (first, second):
        tab.goto(f"/annotate/tasks/{task.pk}/")
    return first, second


def _wait_saved(tab):
    # Leaving the field saves at once (no need to wait for the periodic autosave).
    tab.locator("h1, nav.crumbs").first.click()
    wait_until_saved(tab)


def test_a_stale_check_tab_stays_in_conflict_until_the_annotator_chooses(
    new_page, p3_task, tmp_path
):
    a, b = _two_tabs(new_page, p3_task)
    a.fill("#justification", "A: the budget shows 2.1 million.")
    a.get_by_label("claim lacks context").check()
    _wait_saved(a)

    b.locator("#verdict").get_by_label("Supported", exact=True).check()
    b.fill("#justification", "B: stale words")
    with b.expect_navigation():
        b.get_by_role("button", name="Submit check").click()
    assert b.get_by_text("Two versions of this task").count() == 1
    # The refused tab still builds on its own, older version: a second submit is refused too.
    with b.expect_navigation():
        b.get_by_role("button", name="Submit check").click()
    assert b.get_by_text("Two versions of this task").count() == 1
    screen = b.locator("#conflict-screen")
    assert "B: stale words" in screen.inner_text()
    assert "A: the budget shows 2.1 million." in screen.inner_text()
    screen.scroll_into_view_if_needed()
    screenshot(b, "conflict-desktop", tmp_path)
    b.set_viewport_size(PHONE)
    screen.scroll_into_view_if_needed()
    screenshot(b, "conflict-phone", tmp_path)
    assert b.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    b.set_viewport_size(DESKTOP)

    p3_task.refresh_from_db()
    assert p3_task.status == Task.Status.IN_PROGRESS
    assert p3_task.draft["justification"] == "A: the budget shows 2.1 million."
    assert p3_task.draft["flags"]["claim"] == ["claim_lacks_context"]

    # The annotator copies A's justification into B, keeps B's version, and submits it.
    screen.get_by_role("button", name="Copy into this tab").first.click()
    assert b.input_value("#justification") == "A: the budget shows 2.1 million."
    b.get_by_role("button", name="Keep this tab's version").click()
    b.locator("#save-status", has_text="Draft saved").wait_for()
    b.locator("#verdict").get_by_label("Refuted", exact=True).check()
    with b.expect_navigation():
        b.get_by_role("button", name="Submit check").click()
    check = QualityCheck.objects.get(task=p3_task)
    assert check.justification == "A: the budget shows 2.1 million."
    assert check.verdict == "Refuted"


def test_three_tabs_never_overwrite_what_another_saved(new_page, p3_task):
    a, b = _two_tabs(new_page, p3_task)
    c = a.context.new_page()
    c.goto(f"/annotate/tasks/{p3_task.pk}/")
    a.fill("#justification", "first tab")
    _wait_saved(a)
    b.fill("#justification", "second tab")
    b.locator("nav.crumbs").click()
    b.locator("#conflict-screen").wait_for()
    c.fill("#justification", "third tab")
    c.locator("nav.crumbs").click()
    c.locator("#conflict-screen").wait_for()
    p3_task.refresh_from_db()
    assert p3_task.draft["justification"] == "first tab"


def test_a_refused_evidence_tab_never_saves_its_stale_draft_over_newer_work(new_page, p2_task):
    a, b = _two_tabs(new_page, p2_task)
    a.locator("textarea[data-question-text]").first.fill("What did the council spend?")
    _wait_saved(a)

    b.locator("textarea[data-question-text]").first.fill("Stale question")
    b.locator("#verdict").get_by_label("Refuted", exact=True).check()
    with b.expect_navigation():
        b.get_by_role("button", name="Check and submit").click()
    assert b.get_by_text("Two versions of this task").count() == 1
    b.locator("textarea[data-question-text]").first.fill("Stale question, typed again")
    b.locator("nav.crumbs").click()
    b.wait_for_timeout(6000)  # past the periodic autosave

    a.reload()
    assert a.locator("textarea[data-question-text]").first.input_value() == (
        "What did the council spend?"
    )
    p2_task.refresh_from_db()
    assert p2_task.draft["questions"][0]["text"] == "What did the council spend?"


def test_typing_in_a_closed_page_is_back_on_the_next_open(new_page, p3_task):
    page = new_page()
    sign_in(page, "alice")
    context = page.context
    # A crash runs no unload handlers: nothing is sent on the way out.
    page.add_init_script("navigator.sendBeacon = () => false;")
    page.goto(f"/annotate/tasks/{p3_task.pk}/")
    # The connection drops: no save reaches the server, then the tab is closed at once.
    context.set_offline(True)
    page.fill("#justification", "typed just before the crash")
    page.close()
    context.set_offline(False)

    again = context.new_page()
    again.goto(f"/annotate/tasks/{p3_task.pk}/")
    again.get_by_role("button", name="Put it back").click()
    again.wait_for_load_state()
    again.locator("#justification").wait_for()
    again.wait_for_function(
        "() => document.querySelector('#justification').value === 'typed just before the crash'"
    )
    p3_task.refresh_from_db()
    assert p3_task.draft["justification"] == "typed just before the crash"


def test_closing_a_page_mid_typing_keeps_the_text(new_page, p3_task):
    page = new_page()
    sign_in(page, "alice")
    context = page.context
    page.goto(f"/annotate/tasks/{p3_task.pk}/")
    page.fill("#justification", "closed without waiting")
    page.close()  # no beforeunload, no wait for the autosave

    again = context.new_page()
    again.goto(f"/annotate/tasks/{p3_task.pk}/")
    if again.locator("#local-draft").is_visible():
        again.get_by_role("button", name="Put it back").click()
    again.wait_for_function(
        "() => document.querySelector('#justification').value === 'closed without waiting'"
    )


def test_leaving_with_unsaved_typing_asks_first(new_page, p3_task):
    page = new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{p3_task.pk}/")
    page.context.set_offline(True)
    page.fill("#justification", "not saved yet")
    dialogs = []

    def answer(dialog):
        dialogs.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", answer)
    page.close(run_before_unload=True)
    page.wait_for_timeout(500)
    assert dialogs == ["beforeunload"]


def test_a_verdict_and_unreadable_are_one_choice(new_page, p3_task):
    page = new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{p3_task.pk}/")
    verdict = page.locator("#verdict")
    verdict.get_by_label("Supported", exact=True).check()
    verdict.get_by_label("I cannot make sense of this claim (unreadable)").check()
    assert not verdict.get_by_label("Supported", exact=True).is_checked()
    with page.expect_navigation():
        page.get_by_role("button", name="Submit check").click()
    check = QualityCheck.objects.get(task=p3_task)
    assert check.unreadable and check.verdict is None


@pytest.fixture
def p5_task(annotator):
    annotator.completed_tours = ["p2", "p3", "p4", "p5"]
    annotator.save()
    steps.new_article()
    steps.normalise(AnnotatorFactory(username="writer"))
    steps.answer(AnnotatorFactory(username="answerer"), "Supported")
    steps.check(AnnotatorFactory(username="checker"), "Refuted")
    steps.resolve(AnnotatorFactory(username="resolver"), "Refuted")
    return steps.take(annotator, Phase.POST_CONTROL)


def test_a_post_control_choice_that_discards_the_claim_asks_first(new_page, p5_task):
    page = new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{p5_task.pk}/")
    page.locator("#verdict").get_by_label("Claim too vague", exact=True).check()
    page.fill("#justification", "Which parks? Which year?")
    asked = []

    def decline(dialog):
        asked.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", decline)
    page.get_by_role("button", name="Submit check").click()
    page.wait_for_timeout(500)
    assert asked and "out of the dataset" in asked[0]
    assert not QualityCheck.objects.filter(task=p5_task).exists()

    page.remove_listener("dialog", decline)
    page.on("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.get_by_role("button", name="Submit check").click()
    assert QualityCheck.objects.get(task=p5_task).verdict == "Claim too vague"


def test_error_pages_keep_the_site_header_and_a_way_back(new_page, p3_task, second_annotator):
    page = new_page()
    sign_in(page, "bob")
    response = page.goto(f"/annotate/tasks/{p3_task.pk}/")
    assert response.status == 404
    assert page.locator("header.topbar").count() == 1
    assert page.get_by_role("link", name="Back to your tasks").count() == 1
    response = page.goto(f"/review/tasks/{p3_task.pk}/check/")
    assert response.status == 405
    assert page.locator("header.topbar").count() == 1
    assert page.get_by_role("link", name="Back to your tasks").count() == 1


def test_search_results_never_show_an_archive_capture_as_a_publication_date(new_page, p2_task):
    import datetime

    from search_proxy.dates import DateSource
    from search_proxy.indexing import DocumentRecord, index_records

    index_records(
        [
            DocumentRecord(
                url="https://news.example.org/parks-2020",
                title="Parks spending in 2020",
                text="The council parks spending rose in 2020.",
                published=datetime.date(2020, 3, 1),
                date_source=DateSource.GIVEN,
            ),
            DocumentRecord(
                url="https://blog.example.org/parks",
                title="A blog about parks spending",
                text="Notes on council parks spending.",
                published=datetime.date(2023, 3, 24),  # when the archive captured it
                date_source=DateSource.ARCHIVE_TIMESTAMP,
            ),
        ],
        corpus="test",
    )
    page = new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{p2_task.pk}/")
    page.locator(".search-form input[name=q]").fill("parks spending")
    page.get_by_role("button", name="Search", exact=True).click()
    results = page.locator("#search-results .result")
    results.first.wait_for()
    assert results.count() == 2
    assert "2023" not in page.locator("#search-results").inner_text()
    blog = results.filter(has_text="A blog about parks")
    assert blog.locator(".badge.unknown", has_text="date unknown").count() == 1
    dated = results.filter(has_text="Parks spending in 2020")
    assert "published" in dated.locator(".badge").first.inner_text()
    counts = page.locator("#result-counts").inner_text()
    assert "1 published before" in counts and "1 with date unknown" in counts


def test_a_lease_that_lapses_while_typing_never_takes_the_task_away(new_page, p2_task):
    from annotation import assignment

    page = new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{p2_task.pk}/")
    question = page.locator("textarea[data-question-text]").first
    question.fill("What did the council spend?")
    _wait_saved(page)
    Task.objects.filter(pk=p2_task.pk).update(lease_expires_at=p2_task.opened_at)
    assert assignment.expire_lapsed_leases() == 1

    question.fill("What did the council spend on parks in 2019?")
    with page.expect_response(lambda r: r.url.endswith("/draft/")) as saved:
        page.locator("nav.crumbs").click()
    assert saved.value.status == 200
    p2_task.refresh_from_db()
    assert p2_task.status == Task.Status.IN_PROGRESS
    assert p2_task.draft["questions"][0]["text"] == "What did the council spend on parks in 2019?"


def test_a_failed_evidence_submit_shows_a_summary_and_sources_are_checked_on_entry(
    new_page, p2_task, tmp_path
):
    from search_proxy.models import FactCheckingDomain

    FactCheckingDomain.objects.get_or_create(domain="snopes.com")
    page = new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{p2_task.pk}/")
    card = page.locator("[data-question]").first
    card.locator("textarea[data-question-text]").fill("How much did the council spend?")
    answer = card.locator("[data-answer]").first
    answer.locator("textarea[name$='-text']").fill("2.1 million pounds.")
    answer.locator("input[name$='-source_url']").fill("https://www.snopes.com/fact-check/parks/")
    # Refused as soon as it is entered, long before any submit.
    answer.locator(".source-check .errors", has_text="fact-checking site").wait_for()

    with page.expect_navigation():
        page.get_by_role("button", name="Check and submit").click()
    summary = page.locator("#error-summary")
    assert summary.is_visible()
    box = summary.bounding_box()
    assert 0 <= box["y"] < 768  # in view, not somewhere below the fold
    assert summary.get_by_role("link", name="fact-checking site").count() == 1
    screenshot(page, "error-summary-desktop", tmp_path)
    summary.get_by_role("link", name="Choose a verdict.").click()
    assert page.evaluate("location.hash") == "#verdict"

    phone = new_page(PHONE)
    sign_in(phone, "alice")
    phone.goto(f"/annotate/tasks/{p2_task.pk}/")
    with phone.expect_navigation():
        phone.get_by_role("button", name="Check and submit").click()
    phone.locator("#error-summary").wait_for()
    screenshot(phone, "error-summary-phone", tmp_path)


def test_a_submit_is_not_overtaken_by_an_autosave_queued_behind_a_slow_one(new_page, p3_task):
    page = new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{p3_task.pk}/")
    held, drafts = [], []
    page.on("request", lambda r: drafts.append(r) if r.url.endswith("/draft/") else None)
    # The first autosave hangs until released; any later one goes straight through.
    page.route("**/draft/", lambda route: held.append(route) if not held else route.continue_())

    page.fill("#justification", "The budget shows 2.1 million.")
    page.locator("h1, nav.crumbs").first.click()
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(100)
    assert len(held) == 1
    page.locator("#verdict").get_by_label("Refuted", exact=True).check()
    page.locator("h1, nav.crumbs").first.click()
    page.wait_for_timeout(800)  # the second autosave is now queued behind the first
    page.get_by_role("button", name="Submit check").click()  # waits for the save in flight
    with page.expect_navigation():
        held[0].continue_()
    check = QualityCheck.objects.get(task=p3_task)
    assert check.verdict == "Refuted"
    assert check.justification == "The budget shows 2.1 million."
    assert len(drafts) == 1  # the queued autosave never went out after the submit
