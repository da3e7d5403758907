"""The search API: /api/v1/search/ and /api/v1/search/open/, through the client."""

import datetime

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Task
from search_proxy import service
from search_proxy.backends import SearchResult
from search_proxy.dates import DateSource
from search_proxy.models import Document, MisinformationDomain, SearchClick, SearchLog
from search_proxy.webaddress import normalize_url
from tests.factories import PooledTaskFactory
from tests.search_proxy.conftest import CLAIM_DATE, recorded

pytestmark = pytest.mark.django_db

SEARCH = reverse("search:search")
OPEN = reverse("search:open")
DAY = datetime.timedelta(days=1)


def signed_in(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def api(annotator) -> APIClient:
    return signed_in(annotator)


@pytest.fixture
def researcher_api(db) -> APIClient:
    """Researchers and managers may search without a task; annotators search from one."""
    from tests.factories import AnnotatorFactory

    return signed_in(AnnotatorFactory(username="rhea", role="researcher"))


@pytest.fixture
def index(db):
    def add(url, text, published=None):
        Document.objects.create(
            url=url,
            normalized_url=url,
            text=text,
            published=published,
            date_source=DateSource.GIVEN if published else DateSource.UNKNOWN,
        )

    add("https://news.example.com/before", "parks budget 2019", CLAIM_DATE - DAY)
    add("https://news.example.com/on-the-day", "parks budget 2019", CLAIM_DATE)
    add("https://satire.example.net/parks", "parks budget satire")
    add("https://www.snopes.com/fact-check/parks/", "parks budget fact check", CLAIM_DATE - DAY)
    MisinformationDomain.objects.create(domain="satire.example.net")


# --- Search --------------------------------------------------------------------------------


def test_a_task_search_is_restricted_to_the_claim_date_and_marked(api, p2_task, index):
    response = api.get(SEARCH, {"q": "parks budget", "task": p2_task.pk})
    assert response.status_code == 200
    body = response.json()
    assert body["before"] == "2020-10-31"
    assert body["country"] == "GB"
    assert body["backend"] == "local"
    by_url = {r["url"]: r for r in body["results"]}
    # The fact-check is hidden (issue 23), like the claim's own article.
    assert set(by_url) == {
        "https://news.example.com/before",
        "https://satire.example.net/parks",
    }
    assert by_url["https://satire.example.net/parks"]["misinformation"] is True
    assert by_url["https://satire.example.net/parks"]["date_unknown"] is True
    before = by_url["https://news.example.com/before"]
    assert before["published"] == "2020-10-30" and before["date_unknown"] is False
    assert before["publication_date"] == before["published"]
    assert by_url["https://satire.example.net/parks"]["publication_date"] is None
    assert set(before) == {
        "rank",
        "title",
        "url",
        "snippet",
        "published",
        "publication_date",
        "date_source",
        "date_unknown",
        "misinformation",
        "fact_checker_refused",
    }
    log = SearchLog.objects.get()
    assert body["search_id"] == log.pk and log.task_id == p2_task.pk


def test_a_date_later_than_the_claim_date_is_not_honoured(api, p2_task, index):
    response = api.get(SEARCH, {"q": "parks", "task": p2_task.pk, "before": "2021-01-01"})
    assert response.json()["before"] == "2020-10-31"


def test_without_a_task_the_date_defaults_to_today(researcher_api, index):
    response = researcher_api.get(SEARCH, {"q": "parks"})
    assert response.status_code == 200
    assert response.json()["before"] == timezone.localdate().isoformat()
    response = researcher_api.get(SEARCH, {"q": "parks", "before": "2020-11-01"})
    assert response.status_code == 200
    assert len(response.json()["results"]) == 3  # the fact-check is hidden (issue 23)


@pytest.mark.parametrize(
    "params",
    [
        {"before": "2020-11-01"},
        {"q": "parks", "before": "31-10-2020"},
        {"q": "parks", "before": "2020-11-01", "page": "11"},
        {"q": "parks", "before": "2020-11-01", "country": "GBR"},
    ],
)
def test_malformed_searches_are_400(api, params):
    assert api.get(SEARCH, params).status_code == 400


def test_someone_elses_task_is_404(api, claim, second_annotator, index):
    theirs = PooledTaskFactory(
        claim=claim, annotator=second_annotator, status=Task.Status.IN_PROGRESS
    )
    assert api.get(SEARCH, {"q": "parks", "task": theirs.pk}).status_code == 404
    assert api.get(SEARCH, {"q": "parks", "task": 987654}).status_code == 404
    assert not SearchLog.objects.exists()


def test_blind_quality_check_tasks_cannot_search(api, claim, annotator):
    check = PooledTaskFactory(
        claim=claim, annotator=annotator, status=Task.Status.IN_PROGRESS, phase=3
    )
    response = api.get(SEARCH, {"q": "parks", "task": check.pk})
    assert response.status_code == 403
    assert "P2 and P4" in response.json()["detail"]


def test_signing_in_is_required():
    assert APIClient().get(SEARCH, {"q": "parks", "before": "2020-11-01"}).status_code in (401, 403)
    assert APIClient().post(OPEN, {"url": "https://example.com/"}).status_code in (401, 403)


def test_token_authentication_works(manager, index):
    from knox.models import AuthToken

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {AuthToken.objects.create(manager)[1]}")
    assert client.get(SEARCH, {"q": "parks", "before": "2020-11-01"}).status_code == 200


def test_wrong_methods_are_405(api):
    assert api.post(SEARCH, {"q": "parks"}).status_code == 405
    assert api.get(OPEN).status_code == 405


def test_the_rate_limit_answers_429_with_a_clear_message(researcher_api, settings, index):
    settings.SEARCH_RATE_LIMIT = 2
    for _ in range(2):
        assert researcher_api.get(SEARCH, {"q": "parks", "before": "2020-11-01"}).status_code == 200
    response = researcher_api.get(SEARCH, {"q": "parks", "before": "2020-11-01"})
    assert response.status_code == 429
    assert "Too many searches: at most 2 a minute" in response.json()["detail"]
    assert 1 <= int(response["Retry-After"]) <= 60


def test_an_unconfigured_backend_answers_503(researcher_api, settings):
    settings.SEARCH_BACKEND = "google"
    settings.GOOGLE_SEARCH_API_KEY = ""
    response = researcher_api.get(SEARCH, {"q": "parks", "before": "2020-11-01"})
    assert response.status_code == 503
    assert "not configured" in response.json()["detail"]


# --- Opening a page ------------------------------------------------------------------------


def test_opening_a_page_returns_its_sentences_and_logs_the_click(api, p2_task, local_pages):
    url = local_pages.serve(
        "/article",
        recorded("page_article.html"),
        headers={"Content-Type": "text/html; charset=utf-8"},
    )
    search = SearchLog.objects.create(
        user=p2_task.annotator, query="parks", before=CLAIM_DATE, backend="local"
    )
    response = api.post(OPEN, {"url": url, "task": p2_task.pk, "search": search.pk})
    assert response.status_code == 200
    body = response.json()
    assert body["title"] == "Council publishes its 2019 parks budget"
    assert any("2.1 million pounds" in s for s in body["sentences"])
    assert body["published"] == "2020-03-03"
    assert body["date_unknown"] is False
    assert body["published_on_or_after_claim_date"] is False
    assert body["problem"] is None
    click = SearchClick.objects.get()
    assert (click.url, click.search, click.outcome) == (url, search, "shown")
    assert click.task_id == p2_task.pk


def test_opening_an_internal_address_is_refused_and_logged(api, p2_task):
    response = api.post(OPEN, {"url": "http://169.254.169.254/latest/", "task": p2_task.pk})
    assert response.status_code == 422
    assert "link-local" in response.json()["detail"]
    click = SearchClick.objects.get()
    assert click.outcome == "refused" and "link-local" in click.error


def test_a_page_that_cannot_be_fetched_is_502(api, p2_task, local_pages):
    url = local_pages.serve("/gone", "<p>gone</p>", status=410)
    response = api.post(OPEN, {"url": url, "task": p2_task.pk})
    assert response.status_code == 502
    assert SearchClick.objects.get().outcome == "failed"


def test_a_page_that_cannot_be_fetched_comes_with_its_indexed_text(api, p2_task, local_pages):
    url = local_pages.serve("/gone", "<p>gone</p>", status=410)
    Document.objects.create(
        url=url,
        normalized_url=normalize_url(url),
        title="Parks budget",
        text="The council spent 2.1 million pounds on parks.\nMaintenance cost more.",
    )
    response = api.post(OPEN, {"url": url, "task": p2_task.pk})
    assert response.status_code == 502
    body = response.json()
    assert "HTTP 410" in body["detail"]
    assert body["indexed"] == {
        "title": "Parks budget",
        "sentences": ["The council spent 2.1 million pounds on parks.", "Maintenance cost more."],
    }


def test_opening_someone_elses_search_or_task_is_404(researcher_api, p2_task, second_annotator):
    theirs = SearchLog.objects.create(
        user=second_annotator, query="x", before=CLAIM_DATE, backend="local"
    )
    response = researcher_api.post(OPEN, {"url": "https://example.com/", "search": theirs.pk})
    assert response.status_code == 404
    response = researcher_api.post(OPEN, {"url": "https://example.com/", "task": 987654})
    assert response.status_code == 404


def test_opening_pages_is_rate_limited(researcher_api, settings):
    settings.PAGE_FETCH_RATE_LIMIT = 1
    researcher_api.post(OPEN, {"url": "http://10.0.0.1/"})
    response = researcher_api.post(OPEN, {"url": "http://10.0.0.1/"})
    assert response.status_code == 429
    assert "opened pages" in response.json()["detail"]


def test_a_fact_checkers_page_is_refused_with_the_reason_and_never_fetched(
    api, p2_task, local_pages, resolve_as
):
    # Issue 23: the viewer refuses fact-checks for everyone (someone also holding a blind
    # check must not read one here), before anything is fetched.
    resolve_as({"www.snopes.com": ["127.0.0.1"]})
    url = f"http://www.snopes.com:{local_pages.port}/fact-check/parks/"
    local_pages.serve(
        "/fact-check/parks/",
        "<html><body><p>Rating: false.</p></body></html>",
        headers={"Content-Type": "text/html"},
    )
    response = api.post(OPEN, {"url": url, "task": p2_task.pk})
    assert response.status_code == 422
    assert "fact-checking site" in response.json()["detail"]
    assert "Rating" not in response.content.decode()
    assert not local_pages.requests


# --- The results partial -------------------------------------------------------------------


def test_the_results_partial_shows_the_marks(claim, monkeypatch):
    results = [
        SearchResult("Satire", "https://satire.example.net/x", "snip", None, "unknown", 1),
        SearchResult("Check", "https://www.snopes.com/x", "snip", CLAIM_DATE - DAY, "given", 2),
        SearchResult("News", "https://news.example.com/x", "snip", CLAIM_DATE - DAY, "given", 3),
    ]

    class Fixed:
        name = "fixed"

        def search(self, query, *, before, country, page):
            return results

    monkeypatch.setattr(service, "get_backend", lambda name=None: Fixed())
    MisinformationDomain.objects.create(domain="satire.example.net")
    page = service.search("x", scope=claim.search_scope())
    html = render_to_string("search_proxy/results.html", {"page": page})
    assert "date unknown" in html
    assert "misinformation / satire source" in html
    # Fact-checks are hidden, not marked (issue 23).
    assert "snopes.com" not in html and "fact-checker: not allowed" not in html
    assert 'rel="noopener noreferrer nofollow"' in html
    assert "30 Oct 2020" in html


def test_an_annotator_searches_only_from_one_of_their_tasks(api, index):
    response = api.get(SEARCH, {"q": "parks", "before": "2020-11-01"})
    assert response.status_code == 403
    assert "P2 or P4 tasks" in response.json()["detail"]
    assert api.post(OPEN, {"url": "https://example.com/"}).status_code == 403
