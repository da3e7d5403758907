"""Frozen sources in a real browser: P1 reads the article from its stored snapshot while the
live site is down, and a passage selected in the page viewer becomes an extractive answer
whose stored offsets point at exactly that text."""

import datetime
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.cache import caches

from annotation.models import Answer, Claim
from annotation.vocabulary import Phase
from search_proxy.dates import DateSource
from search_proxy.fetch import snapshot_pages
from search_proxy.indexing import DocumentRecord, index_records
from tests import steps
from tests.e2e import flows
from tests.e2e.conftest import DESKTOP, sign_in
from tests.factories import AnnotatorFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ARTICLE = b"""<html><head><title>Did the council spend 4 million on parks?</title></head>
<body><article><h1>Did the council spend 4 million on parks?</h1>
<p>A post shared on Facebook says the council spent 4 million pounds on parks in 2019.</p>
<p>The council's published budget shows 2.1 million pounds for parks that year.</p>
</article></body></html>"""
BUDGET = b"""<html><head><title>Council budget 2019</title></head><body><article>
<h1>Council budget 2019</h1>
<p>The council published its budget for the year in March 2019.</p>
<p>The 2019 budget allocated 2.1 million pounds to parks and open spaces.</p>
</article></body></html>"""


class _Site(BaseHTTPRequestHandler):
    def do_GET(self):
        body = ARTICLE if self.path.startswith("/fact-check") else BUDGET
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(autouse=True)
def _no_cached_searches():
    # Search results are cached per query and claim date: keep ours from other tests.
    caches["default"].clear()
    yield
    caches["default"].clear()


@pytest.fixture
def site(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.PAGE_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    yield server
    server.shutdown()
    server.server_close()


def test_p1_reads_the_snapshot_while_the_site_is_down(new_page, annotator, site):
    annotator.completed_tours = ["p1"]
    annotator.save()
    url = f"http://127.0.0.1:{site.server_address[1]}/fact-check/parks"
    steps.new_article(url=url)
    snapshot_pages([url])  # what the intake's snapshot job does
    site.shutdown()
    site.server_close()  # the live site is gone from here on

    page = new_page(DESKTOP)
    sign_in(page, "alice")
    flows.start_next(page, Phase.NORMALISATION)
    text = page.locator("#article-text .sentences")
    text.wait_for()
    assert "2.1 million pounds for parks that year" in text.inner_text()
    assert page.get_by_role("link", name="Open live page ↗").get_attribute("href") == url


def test_a_viewer_selection_becomes_an_answer_with_offsets_to_the_selected_text(
    new_page, annotator, site
):
    annotator.completed_tours = ["p2"]
    annotator.save()
    base = f"http://127.0.0.1:{site.server_address[1]}"
    steps.new_article(url="https://fullfact.org/online/parks-spending/")
    (claim,) = steps.normalise(
        AnnotatorFactory(username="p1-writer"),
        [steps.normalised_claim("The council spent 4 million pounds on parks.")],
    )
    index_records(
        [
            DocumentRecord(
                url=f"{base}/budget-2019",
                title="Council budget 2019",
                text="The 2019 budget allocated 2.1 million pounds to parks and open spaces.",
                published=datetime.date(2020, 3, 1),
                date_source=DateSource.GIVEN,
            )
        ],
        corpus="test",
    )
    page = new_page(DESKTOP)
    sign_in(page, "alice")
    flows.start_next(page, Phase.QUESTIONS)
    page.locator(".search-form input[name=q]").fill("parks budget")
    page.get_by_role("button", name="Search", exact=True).click()
    page.locator("#search-results .result").first.wait_for()
    page.locator("[data-question]").first.locator("textarea[data-question-text]").fill(
        "How much did the 2019 budget give parks?"
    )
    page.locator("[data-answer]").first.locator("textarea[data-answer-text]").click()
    page.locator("#search-results .result").first.get_by_role("button", name="Open").click()
    page.locator("#opened-page .sentences p").first.wait_for()
    selected = page.evaluate(
        """() => {
            const p = [...document.querySelectorAll('#opened-page .sentences p')]
                .find((node) => node.textContent.includes('allocated'));
            const text = p.firstChild;
            const start = text.textContent.indexOf('2.1 million');
            const range = document.createRange();
            range.setStart(text, start);
            range.setEnd(text, start + '2.1 million pounds to parks'.length);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
            document.dispatchEvent(new Event('selectionchange'));
            return selection.toString();
        }"""
    )
    page.get_by_role("button", name="Use selection as answer").click()
    flows.choose_verdict_and_confirm(page, "Refuted")

    claim.refresh_from_db()
    assert claim.state == Claim.State.QUALITY_CHECK
    answer = Answer.objects.get(question__evidence_round__claim=claim)
    assert answer.text == selected == "2.1 million pounds to parks"
    snapshot_text = answer.passage_snapshot.text
    assert snapshot_text[answer.passage_start : answer.passage_end] == selected
