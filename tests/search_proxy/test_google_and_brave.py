"""Google and Brave: the requests they send and how they read recorded answers.

The APIs are served by a local HTTP server (tests/search_proxy/conftest.py) with answers
written from the APIs' documented formats (tests/search_proxy/responses/).
"""

import datetime

import pytest

from search_proxy import service
from search_proxy.backends import get_backend
from search_proxy.backends.brave import BraveBackend, BraveUnavailable
from search_proxy.backends.google import GoogleBackend, GoogleUnavailable
from search_proxy.dates import DateSource
from search_proxy.models import MisinformationDomain
from tests.search_proxy.conftest import CLAIM_DATE, json_body

GOOGLE_PATH = "/customsearch/v1"
BRAVE_PATH = "/res/v1/web/search"


# --- Google ------------------------------------------------------------------------------


def test_google_asks_for_pages_dated_up_to_the_day_before_the_claim(google):
    google.serve(GOOGLE_PATH, json_body("google_results.json"))
    GoogleBackend().search("council parks", before=CLAIM_DATE, country="GB", page=1)
    (request,) = google.requests_to(GOOGLE_PATH)
    assert request.query["sort"] == ["date:r:19000101:20201030"]
    assert request.query["q"] == ["council parks"]
    assert request.query["gl"] == ["gb"]
    assert request.query["num"] == ["10"]
    assert request.query["start"] == ["1"]
    assert request.query["key"] == ["test-google-key"]
    assert request.query["cx"] == ["0123456789abcdef0"]


def test_google_paging_is_one_based_in_steps_of_ten(google):
    google.serve(GOOGLE_PATH, json_body("google_results.json"))
    results = GoogleBackend().search("council parks", before=CLAIM_DATE, country=None, page=3)
    (request,) = google.requests_to(GOOGLE_PATH)
    assert request.query["start"] == ["21"]
    assert "gl" not in request.query
    assert [r.rank for r in results] == list(range(21, 28))


def test_google_answers_are_read_with_titles_snippets_and_dates(google):
    google.serve(GOOGLE_PATH, json_body("google_results.json"))
    results = GoogleBackend().search("council parks", before=CLAIM_DATE, country="GB", page=1)
    first, politifact, misinformation, _archived, claim_day, day_before, relative = results
    assert first.title == 'Council budget 2019: "2.1m" for parks | Example News'
    assert first.url == "https://news.example.com/2020/03/council-budget-parks"
    assert first.snippet.startswith("The council spent 2.1 million pounds")
    assert first.published == datetime.date(2020, 3, 3)  # article:published_time
    assert first.date_source == DateSource.SEARCH_ENGINE
    # The date Google puts in front of a snippet is read and taken off it.
    assert politifact.published == datetime.date(2020, 10, 12)
    assert politifact.snippet.startswith("The claim that the council")
    assert claim_day.published == CLAIM_DATE  # pagemap.newsarticle.datepublished
    assert day_before.published == datetime.date(2020, 10, 30)
    # No date, or only a relative one: unknown rather than guessed.
    assert misinformation.published is None
    assert misinformation.date_source == DateSource.UNKNOWN
    assert relative.published is None


def test_google_without_results_gives_an_empty_list(google):
    google.serve(GOOGLE_PATH, json_body("google_no_results.json"))
    assert GoogleBackend().search("zxqv council", before=CLAIM_DATE, country=None, page=1) == []


def test_google_errors_are_reported_without_the_key(google):
    google.serve(GOOGLE_PATH, json_body("google_error_403.json"), status=403)
    with pytest.raises(GoogleUnavailable) as caught:
        GoogleBackend().search("council", before=CLAIM_DATE, country=None, page=1)
    assert "HTTP 403" in str(caught.value)
    assert "has not been used in project" in str(caught.value)
    assert "test-google-key" not in str(caught.value)


def test_google_quota_exhaustion_says_to_try_later(google):
    google.serve(GOOGLE_PATH, json_body("google_error_429.json"), status=429)
    with pytest.raises(GoogleUnavailable, match="quota"):
        GoogleBackend().search("council", before=CLAIM_DATE, country=None, page=1)


def test_google_that_does_not_answer_in_time_is_unavailable(google, settings):
    settings.SEARCH_HTTP_TIMEOUT = 0.2
    google.serve(GOOGLE_PATH, json_body("google_results.json"), delay=1.0)
    with pytest.raises(GoogleUnavailable, match="in time"):
        GoogleBackend().search("council", before=CLAIM_DATE, country=None, page=1)


def test_google_that_cannot_be_reached_is_unavailable_without_leaking_the_key(settings):
    with socket_closed() as url:
        settings.GOOGLE_SEARCH_URL = url
        settings.GOOGLE_SEARCH_API_KEY = "secret-key"
        settings.GOOGLE_SEARCH_ENGINE_ID = "cx"
        with pytest.raises(GoogleUnavailable) as caught:
            GoogleBackend().search("council", before=CLAIM_DATE, country=None, page=1)
    assert "secret-key" not in str(caught.value)


def test_google_without_a_key_is_unavailable_and_says_why(settings):
    settings.GOOGLE_SEARCH_API_KEY = ""
    settings.GOOGLE_SEARCH_ENGINE_ID = "cx"
    backend = get_backend("google")
    assert backend.available() is False
    assert "GOOGLE_SEARCH_API_KEY" in backend.unavailable_reason()
    with pytest.raises(GoogleUnavailable, match="not configured"):
        backend.search("council", before=CLAIM_DATE, country=None, page=1)


def test_google_without_an_engine_id_is_unavailable(settings):
    settings.GOOGLE_SEARCH_API_KEY = "key"
    settings.GOOGLE_SEARCH_ENGINE_ID = ""
    assert "GOOGLE_SEARCH_ENGINE_ID" in GoogleBackend().unavailable_reason()


def test_google_results_are_restricted_and_marked_by_the_service(google, settings, claim):
    settings.SEARCH_BACKEND = "google"
    MisinformationDomain.objects.create(domain="americasfreedomfighters.com")
    google.serve(GOOGLE_PATH, json_body("google_results.json"))
    page = service.search("council parks", scope=claim.search_scope())
    (request,) = google.requests_to(GOOGLE_PATH)
    assert request.query["gl"] == ["gb"]  # the claim's location
    by_url = {r.url: r for r in page.results}
    # Dated on the claim date: dropped. The claim's own article (archived copy): hidden.
    assert "https://news.example.com/2020/10/31/parks-budget-row" not in by_url
    assert page.dropped == 1
    # ... and the fact-checks (issue 23): the claim's own article and PolitiFact's page.
    assert page.hidden == 2
    assert not any("checkyourfact.com" in url for url in by_url)
    assert by_url["https://news.example.com/2020/10/30/parks-budget-debate"].date_unknown is False
    assert by_url["https://parks-friends.example.net/newsletter"].date_unknown is True
    assert "https://www.PolitiFact.com/factchecks/2020/oct/12/council-parks/" not in by_url
    misinformation = by_url["https://news.Americasfreedomfighters.com/2019/council-parks-scandal"]
    assert misinformation.misinformation and misinformation.date_unknown
    assert len(page.results) == 4


# --- Brave -------------------------------------------------------------------------------


def test_brave_asks_for_a_date_range_ending_the_day_before_the_claim(brave):
    brave.serve(BRAVE_PATH, json_body("brave_results.json"))
    BraveBackend().search("council parks", before=CLAIM_DATE, country="gb", page=1)
    (request,) = brave.requests_to(BRAVE_PATH)
    assert request.query["freshness"] == ["1900-01-01to2020-10-30"]
    assert request.query["country"] == ["GB"]
    assert request.query["q"] == ["council parks"]
    assert request.query["count"] == ["10"]
    assert request.query["offset"] == ["0"]
    assert request.headers["X-Subscription-Token"] == "test-brave-key"
    assert "test-brave-key" not in str(request.query)


def test_brave_paging_counts_pages_from_zero(brave):
    brave.serve(BRAVE_PATH, json_body("brave_results.json"))
    results = BraveBackend().search("council parks", before=CLAIM_DATE, country=None, page=2)
    (request,) = brave.requests_to(BRAVE_PATH)
    assert request.query["offset"] == ["1"]
    assert "country" not in request.query
    assert [r.rank for r in results] == [11, 12, 13, 14, 15]


def test_brave_answers_are_read_without_markup_and_with_dates(brave):
    brave.serve(BRAVE_PATH, json_body("brave_results.json"))
    first, snopes, claim_day, day_before, relative = BraveBackend().search(
        "council parks", before=CLAIM_DATE, country=None, page=1
    )
    assert first.snippet == (
        "The council spent 2.1 million pounds on parks in 2019, the budget published on "
        "Tuesday shows."
    )
    assert first.published == datetime.date(2020, 3, 3)  # page_age
    assert claim_day.published == CLAIM_DATE
    assert day_before.published == datetime.date(2020, 10, 30)  # "age" text only
    assert relative.published is None  # "3 days ago"
    assert snopes.url == "https://Snopes.com/fact-check/council-parks-spending/"


def test_brave_errors_are_reported(brave):
    brave.serve(BRAVE_PATH, json_body("brave_error_422.json"), status=422)
    with pytest.raises(BraveUnavailable, match=r"HTTP 422.*Unable to validate"):
        BraveBackend().search("council", before=CLAIM_DATE, country="XX", page=1)


def test_brave_rate_limit_says_to_try_later(brave):
    brave.serve(BRAVE_PATH, json_body("brave_error_429.json"), status=429)
    with pytest.raises(BraveUnavailable, match="try again later"):
        BraveBackend().search("council", before=CLAIM_DATE, country=None, page=1)


def test_brave_that_answers_garbage_is_unavailable(brave):
    brave.serve(BRAVE_PATH, "<html>maintenance</html>", headers={"Content-Type": "text/html"})
    with pytest.raises(BraveUnavailable, match="not JSON"):
        BraveBackend().search("council", before=CLAIM_DATE, country=None, page=1)


def test_brave_without_a_key_is_unavailable_and_says_why(settings):
    settings.BRAVE_SEARCH_API_KEY = ""
    backend = get_backend("brave")
    assert backend.available() is False
    assert "BRAVE_SEARCH_API_KEY" in backend.unavailable_reason()
    with pytest.raises(BraveUnavailable):
        backend.search("council", before=CLAIM_DATE, country=None, page=1)


def test_brave_results_are_restricted_and_marked_by_the_service(brave, settings, claim):
    settings.SEARCH_BACKEND = "brave"
    brave.serve(BRAVE_PATH, json_body("brave_results.json"))
    page = service.search("council parks", scope=claim.search_scope())
    assert brave.requests_to(BRAVE_PATH)[0].query["country"] == ["GB"]
    urls = [r.url for r in page.results]
    assert "https://news.example.com/2020/10/31/parks-budget-row" not in urls
    assert page.dropped == 1
    # Fact-checks are hidden from results (issue 23).
    assert not any("snopes" in url.lower() for url in urls)
    assert page.hidden >= 1


# --- helpers -----------------------------------------------------------------------------


class socket_closed:
    """A URL on 127.0.0.1 where nothing listens (the port is bound, then released)."""

    def __enter__(self) -> str:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        return f"http://127.0.0.1:{port}/customsearch/v1"

    def __exit__(self, *exc) -> None:
        return None
