"""Phase 2 in a real browser: search before the claim date, read a page, answer, confirm."""

import datetime
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annotation.models import Claim
from annotation.vocabulary import Phase
from exports.dataset import claim_record
from search_proxy.dates import DateSource
from search_proxy.indexing import DocumentRecord, index_records
from search_proxy.models import MisinformationDomain, SearchClick, SearchLog
from tests import steps
from tests.e2e import flows
from tests.e2e.conftest import DESKTOP, PHONE, screenshot, sign_in, wait_until_saved

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BUDGET_SENTENCE = "The 2019 budget allocated 2.1 million pounds to parks and open spaces."
BUDGET_PAGE = b"""<html><head><title>Council budget 2019</title></head><body><article>
<h1>Council budget 2019</h1>
<p>The council published its budget for the year in March 2019.</p>
<p>The 2019 budget allocated 2.1 million pounds to parks and open spaces.</p>
<p>Libraries received 1.4 million pounds in the same budget.</p>
</article></body></html>"""


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(BUDGET_PAGE)

    def log_message(self, *args):
        pass


@pytest.fixture
def source_site(settings):
    """A stand-in for the web on 127.0.0.1; the page fetcher may reach it in this test only."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.PAGE_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def p2_claim(annotator, source_site):
    annotator.completed_tours = ["p2"]
    annotator.save()
    article = steps.new_article(url="https://fullfact.org/online/parks-spending/")
    (claim,) = steps.normalise(
        steps_annotator(), [steps.normalised_claim("The council spent 4 million pounds on parks.")]
    )
    MisinformationDomain.objects.get_or_create(domain="theonion.com")
    index_records(
        [
            DocumentRecord(
                url=f"{source_site}/budget-2019",
                title="Council budget 2019",
                text="The 2019 budget allocated 2.1 million pounds to parks and open spaces.",
                published=datetime.date(2020, 3, 1),
                date_source=DateSource.GIVEN,
            ),
            DocumentRecord(
                url="https://www.theonion.com/council-parks-budget",
                title="Council spends 4 million pounds on parks budget, insists it is fine",
                text="Satire about the council parks budget.",
                published=datetime.date(2020, 5, 1),
                date_source=DateSource.GIVEN,
            ),
            DocumentRecord(
                url="https://parks.example.org/budget-review-2021",
                title="Parks budget review 2021",
                text="A later review of the parks budget.",
                published=datetime.date(2021, 1, 5),
                date_source=DateSource.GIVEN,
            ),
        ],
        corpus="test",
    )
    return claim, article


def steps_annotator():
    from tests.factories import AnnotatorFactory

    return AnnotatorFactory(username="p1-writer")


def _select_sentence(page, words: str) -> None:
    page.evaluate(
        """(words) => {
            const p = [...document.querySelectorAll('#opened-page .sentences p')]
                .find((node) => node.textContent.includes(words));
            const range = document.createRange();
            range.selectNodeContents(p);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
            document.dispatchEvent(new Event('selectionchange'));
        }""",
        words,
    )


def test_an_annotator_answers_from_search_results_and_the_claim_reaches_p3(
    new_page, p2_claim, source_site, tmp_path
):
    claim, article = p2_claim
    page = new_page(DESKTOP)
    sign_in(page, "alice")
    flows.start_next(page, Phase.QUESTIONS)

    page.locator(".search-form input[name=q]").fill("parks budget")
    page.get_by_role("button", name="Search", exact=True).click()
    results = page.locator("#search-results .result")
    results.first.wait_for()
    assert results.count() == 2  # the 2021 review is newer than the claim and left out
    onion = results.filter(has_text="insists it is fine")
    assert onion.locator(".badge.misinfo").count() == 1

    page.locator("[data-question]").first.locator("textarea[data-question-text]").fill(
        "How much did the council budget for parks in 2019?"
    )
    first_answer = page.locator("[data-answer]").first
    first_answer.locator("textarea[data-answer-text]").click()
    results.filter(has_text="Council budget 2019").get_by_role("button", name="Open").click()
    page.locator("#opened-page .sentences p").first.wait_for()
    _select_sentence(page, "allocated 2.1 million")
    page.get_by_role("button", name="Use selection as answer").click()
    assert (
        "allocated 2.1 million" in first_answer.locator("textarea[data-answer-text]").input_value()
    )
    assert (
        first_answer.locator("input[data-source-url]").input_value() == f"{source_site}/budget-2019"
    )
    screenshot(page, "phase2-desktop", tmp_path)

    flows.write_question(
        page,
        1,
        "Did the council announce extra parks money in 2019?",
        kind="Boolean",
        text="No",
        url=article.url,  # the fact-checking article itself: refused
        explanation="No announcement appears in its news archive.",
    )
    flows.write_question(page, 2, "What did the mayor say about parks?", kind="Unanswerable")
    page.locator("#verdict").get_by_label("Refuted", exact=True).check()
    with page.expect_navigation():
        page.get_by_role("button", name="Check and submit").click()
    assert page.locator(".errors", has_text="own fact-checking article").count() == 1

    second = page.locator("[data-question]").nth(1).locator("[data-answer]").first
    second.locator("input[data-source-url]").fill("https://council.example.gov/news")
    flows.choose_verdict_and_confirm(page, "Refuted")

    claim.refresh_from_db()
    assert claim.state == Claim.State.QUALITY_CHECK
    record = claim_record(claim)
    assert record["questions"] == [
        {
            "question": "How much did the council budget for parks in 2019?",
            "answers": [
                {
                    "answer": (
                        "The 2019 budget allocated 2.1 million pounds to parks and open spaces."
                    ),
                    "answer_type": "Extractive",
                    "source_url": f"{source_site}/budget-2019",
                    "source_medium": "Web text",
                    "cached_source_url": None,
                }
            ],
        },
        {
            "question": "Did the council announce extra parks money in 2019?",
            "answers": [
                {
                    "answer": "No",
                    "answer_type": "Boolean",
                    "source_url": "https://council.example.gov/news",
                    "source_medium": "Web text",
                    "boolean_explanation": "No announcement appears in its news archive.",
                    "cached_source_url": None,
                }
            ],
        },
        {
            "question": "What did the mayor say about parks?",
            "answers": [
                {
                    "answer": "No answer could be found.",
                    "answer_type": "Unanswerable",
                    "source_url": "",
                    "source_medium": "",
                }
            ],
        },
    ]
    assert claim.evidence_rounds.get().verdict == "Refuted"
    task = claim.tasks.get(phase=Phase.QUESTIONS)
    assert [log.query for log in SearchLog.objects.filter(task_id=task.pk)] == ["parks budget"]
    assert [click.url for click in SearchClick.objects.filter(task_id=task.pk)] == [
        f"{source_site}/budget-2019"
    ]


def test_the_phase_2_screen_fits_a_phone(new_page, p2_claim, tmp_path):
    page = new_page(PHONE)
    sign_in(page, "alice")
    flows.start_next(page, Phase.QUESTIONS)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "phase2-phone", tmp_path)


def test_moving_a_question_keeps_every_answer_kind(new_page, p2_claim, annotator):
    page = new_page(DESKTOP)
    sign_in(page, "alice")
    flows.start_next(page, Phase.QUESTIONS)
    flows.write_question(
        page,
        0,
        "Was it announced?",
        kind="Boolean",
        text="Yes",
        url="https://a.example/1",
        explanation="It was announced.",
    )
    flows.write_question(page, 1, "How much?", text="2.1 million", url="https://a.example/2")
    page.locator("[data-question]").nth(1).locator("[data-move-question='up']").click()
    page.locator("#id_claim_correction").click()
    wait_until_saved(page)
    task = claim_task(annotator)
    assert [
        (q["text"], q["answers"][0]["answer_type"], q["answers"][0]["text"])
        for q in task.draft["questions"]
    ] == [("How much?", "Extractive", "2.1 million"), ("Was it announced?", "Boolean", "Yes")]


def claim_task(annotator):
    from annotation.models import Task

    return Task.objects.get(annotator=annotator, phase=Phase.QUESTIONS)
