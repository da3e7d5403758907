"""service.search(): defaults from the claim, the result cache, the rate limit and the log."""

import datetime

import pytest
from django.utils import timezone

from search_proxy import service
from search_proxy.backends import SearchResult
from search_proxy.dates import DateSource
from search_proxy.models import Document, MisinformationDomain, SearchLog
from tests.factories import AnnotatorFactory
from tests.search_proxy.conftest import CLAIM_DATE, OWN_ARTICLE_URL

pytestmark = pytest.mark.django_db

DAY = datetime.timedelta(days=1)


class CountingBackend:
    """Answers every search with the same results and counts the calls."""

    name = "counting"

    def __init__(self, results=()):
        self.results = list(results)
        self.calls: list[dict] = []

    def search(self, query, *, before, country, page):
        self.calls.append({"query": query, "before": before, "country": country, "page": page})
        return self.results


@pytest.fixture
def backend(monkeypatch) -> CountingBackend:
    fake = CountingBackend(
        [
            SearchResult("Budget", "https://news.example.com/b", "s", CLAIM_DATE - DAY, "given", 1),
            SearchResult("Undated", "https://blog.example.org/u", "s", None, "unknown", 2),
        ]
    )
    monkeypatch.setattr(service, "get_backend", lambda name=None: fake)
    return fake


# --- Defaults from the claim ---------------------------------------------------------------


def test_a_claim_gives_the_date_and_country(backend, claim):
    page = service.search("parks budget", scope=claim.search_scope())
    assert backend.calls == [
        {"query": "parks budget", "before": CLAIM_DATE, "country": "GB", "page": 1}
    ]
    assert (page.before, page.country) == (CLAIM_DATE, "GB")


def test_a_later_date_than_the_claim_date_is_never_searched(backend, claim):
    service.search("parks", before=CLAIM_DATE + 100 * DAY, scope=claim.search_scope())
    service.search("parks", before=CLAIM_DATE - 100 * DAY, scope=claim.search_scope())
    assert [c["before"] for c in backend.calls] == [CLAIM_DATE, CLAIM_DATE - 100 * DAY]


def test_the_annotator_may_choose_another_country(backend, claim):
    service.search("parks", country="us", scope=claim.search_scope())
    assert backend.calls[0]["country"] == "US"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"query": "   "}, "Type something"),
        ({"query": "x" * 401}, "at most 400"),
        ({"query": "parks", "country": "GBR"}, "two-letter"),
        ({"query": "parks", "page": 11}, "from 1 to 10"),
        ({"query": "parks", "page": 0}, "from 1 to 10"),
    ],
)
def test_searches_that_cannot_run_say_why(backend, kwargs, message):
    with pytest.raises(service.InvalidSearch, match=message):
        service.search(before=CLAIM_DATE, **kwargs)
    assert backend.calls == []


def test_a_search_without_a_claim_needs_a_date(backend):
    with pytest.raises(service.InvalidSearch, match="before which date"):
        service.search("parks")


# --- Marks ---------------------------------------------------------------------------------


def test_results_are_marked_and_the_claims_own_article_hidden(monkeypatch, claim):
    fake = CountingBackend(
        [
            SearchResult(
                "Own",
                f"https://web.archive.org/web/2020/{OWN_ARTICLE_URL}",
                "",
                None,
                DateSource.UNKNOWN,
                1,
            ),
            SearchResult(
                "Satire",
                "https://www.TheOnion.com/x",
                "",
                CLAIM_DATE - DAY,
                DateSource.SEARCH_ENGINE,
                2,
            ),
            SearchResult(
                "Check", "https://www.factcheck.org/2020/x/", "", None, DateSource.UNKNOWN, 3
            ),
            SearchResult(
                "Late", "https://news.example.com/late", "", CLAIM_DATE, DateSource.SEARCH_ENGINE, 4
            ),
        ]
    )
    monkeypatch.setattr(service, "get_backend", lambda name=None: fake)
    MisinformationDomain.objects.create(domain="theonion.com")
    page = service.search("parks", scope=claim.search_scope())
    # The fact-check is hidden with the claim's own article (issue 23).
    assert (page.hidden, page.dropped) == (2, 1)
    (satire,) = page.results
    assert satire.misinformation and not satire.fact_checker and not satire.date_unknown
    assert satire.allowed_as_evidence  # marked, never refused


# --- Cache ---------------------------------------------------------------------------------


def test_a_repeated_search_is_served_from_the_cache(backend, claim):
    first = service.search("Parks  Budget", scope=claim.search_scope())
    second = service.search("parks budget", scope=claim.search_scope())
    assert len(backend.calls) == 1
    assert (first.from_cache, second.from_cache) == (False, True)
    assert second.results == first.results


@pytest.mark.parametrize(
    "change",
    [{"page": 2}, {"country": "US"}, {"before": CLAIM_DATE - DAY}, {"query": "parks other"}],
)
def test_a_different_page_country_date_or_query_is_a_new_search(backend, claim, change):
    service.search("parks", scope=claim.search_scope())
    service.search(**{"query": "parks", "scope": claim.search_scope(), **change})
    assert len(backend.calls) == 2


def test_the_cache_forgets_after_its_time(backend, claim, settings):
    settings.SEARCH_CACHE_SECONDS = 0  # expire at once
    service.search("parks", scope=claim.search_scope())
    service.search("parks", scope=claim.search_scope())
    assert len(backend.calls) == 2


def test_cached_results_are_still_checked_against_the_current_domain_lists(backend, claim):
    assert not service.search("parks", scope=claim.search_scope()).results[0].misinformation
    MisinformationDomain.objects.create(domain="news.example.com")
    assert service.search("parks", scope=claim.search_scope()).results[0].misinformation


def test_the_local_index_is_cached_like_the_others(claim, django_assert_max_num_queries):
    Document.objects.create(
        url="https://a.example/p",
        normalized_url="https://a.example/p",
        text="parks",
        published=CLAIM_DATE - DAY,
        date_source=DateSource.GIVEN,
    )
    service.search("parks", scope=claim.search_scope())
    # The two domain lists and the cache read (the shared cache is a table), no full-text query.
    with django_assert_max_num_queries(3):
        again = service.search("parks", scope=claim.search_scope())
    assert again.from_cache and len(again.results) == 1


# --- Rate limit ----------------------------------------------------------------------------


def test_the_rate_limit_stops_the_31st_search_in_a_minute(backend, annotator, settings):
    settings.SEARCH_RATE_LIMIT = 30
    for n in range(30):
        service.search(f"parks {n}", before=CLAIM_DATE, user=annotator)
    with pytest.raises(service.RateLimited) as caught:
        service.search("one more", before=CLAIM_DATE, user=annotator)
    assert "at most 30 a minute" in str(caught.value)
    assert 1 <= caught.value.retry_after <= 60
    assert len(backend.calls) == 30
    # Someone else is not held back.
    service.search("parks", before=CLAIM_DATE, user=AnnotatorFactory(username="carol"))


def test_cached_searches_count_towards_the_rate_limit(backend, annotator, settings):
    settings.SEARCH_RATE_LIMIT = 3
    for _ in range(3):
        service.search("parks", before=CLAIM_DATE, user=annotator)
    with pytest.raises(service.RateLimited):
        service.search("parks", before=CLAIM_DATE, user=annotator)


def test_the_rate_limit_lifts_after_a_minute(backend, annotator, settings):
    settings.SEARCH_RATE_LIMIT = 2
    service.search("a", before=CLAIM_DATE, user=annotator)
    service.search("b", before=CLAIM_DATE, user=annotator)
    SearchLog.objects.update(created_at=timezone.now() - datetime.timedelta(seconds=61))
    service.search("c", before=CLAIM_DATE, user=annotator)


def test_a_limit_of_zero_means_no_limit(backend, annotator, settings):
    settings.SEARCH_RATE_LIMIT = 0
    for n in range(5):
        service.search(f"q{n}", before=CLAIM_DATE, user=annotator)


# --- Log -----------------------------------------------------------------------------------


def test_each_search_by_a_person_is_logged_with_what_it_showed(backend, p2_task, annotator):
    page = service.search("parks budget", user=annotator, scope=p2_task.search_scope())
    log = SearchLog.objects.get()
    assert page.log == log
    assert (log.user, log.task_id, log.claim_id) == (annotator, p2_task.pk, p2_task.claim_id)
    assert (log.query, log.before, log.country, log.page) == ("parks budget", CLAIM_DATE, "GB", 1)
    assert log.backend == "counting"
    assert log.result_urls == ["https://news.example.com/b", "https://blog.example.org/u"]
    assert log.from_cache is False and log.error == ""
    assert log.duration_ms >= 0


def test_searches_without_a_person_are_not_logged(backend):
    service.search("parks", before=CLAIM_DATE)
    assert not SearchLog.objects.exists()


def test_an_unavailable_backend_is_logged_with_its_reason(settings, annotator):
    settings.SEARCH_BACKEND = "brave"
    settings.BRAVE_SEARCH_API_KEY = ""
    with pytest.raises(service.SearchUnavailable, match="BRAVE_SEARCH_API_KEY"):
        service.search("parks", before=CLAIM_DATE, user=annotator)
    assert "BRAVE_SEARCH_API_KEY" in SearchLog.objects.get().error
