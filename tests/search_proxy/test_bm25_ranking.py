"""The local backend's BM25 ranking over the saved search index: every match ranked, the
claim-date restriction as a mask, the database's ranking while no saved index covers the
documents, and a newer saved index picked up without restarting."""

import datetime
import logging
import random

import numpy as np
import pytest
from django.db import connection

from pipeline.retrieval import BM25Index, fast_analyse
from search_proxy import service
from search_proxy.backends.local import LocalBackend
from search_proxy.dates import DateSource
from search_proxy.models import Document, MisinformationDomain
from search_proxy.search_index import current_index, indexed_text, save_search_index
from tests.search_proxy.conftest import CLAIM_DATE, OWN_ARTICLE_URL, document

pytestmark = pytest.mark.django_db

DAY = datetime.timedelta(days=1)


def bm25_urls(query: str, before=CLAIM_DATE, page: int = 1) -> list[str]:
    return [r.url for r in LocalBackend(ranking="bm25").search(query, before=before, page=page)]


def database_urls(query: str, before=CLAIM_DATE, max_ranked: int = 0) -> list[str]:
    backend = LocalBackend(ranking="database", max_ranked=max_ranked)
    return [r.url for r in backend.search(query, before=before)]


def exact_bm25_urls(query: str, before: datetime.date) -> list[str]:
    """BM25 over every document, straight from pipeline.retrieval, then the date rule."""
    documents = list(Document.objects.order_by("pk"))
    index = BM25Index(analyser=fast_analyse)
    index.add(indexed_text(d.title, d.text) for d in documents)
    scores = index.scores(query)
    shown = [
        (float(-scores[n]), d.pk, d.url)
        for n, d in enumerate(documents)
        if scores[n] > 0
        and (
            d.published is None
            or d.date_source == DateSource.ARCHIVE_TIMESTAMP
            or d.published < before
        )
    ]
    return [url for _score, _pk, url in sorted(shown)]


@pytest.fixture
def broad_corpus():
    """Twenty-four pages that mention parks once among other words, then the best match:
    short, about parks throughout, stored last. Scores differ page to page."""
    for n in range(24):
        filler = " ".join(f"word{m}" for m in range(n + 3))
        document(f"https://a.example/{n:02}", f"parks {filler}", CLAIM_DATE - (n + 1) * DAY)
    document("https://a.example/best", "parks parks parks budget", CLAIM_DATE - 40 * DAY)


# --- Ranking every candidate ---------------------------------------------------------------


def test_the_saved_index_ranks_every_match_as_an_exact_bm25_would(broad_corpus):
    save_search_index()
    expected = exact_bm25_urls("parks", CLAIM_DATE)
    assert bm25_urls("parks") == expected[:10]
    assert bm25_urls("parks", page=2) == expected[10:20]
    assert bm25_urls("parks", page=3) == expected[20:]
    assert expected[0] == "https://a.example/best"


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="only PostgreSQL caps the ranked candidates"
)
def test_a_capped_database_ranking_misses_the_best_match_the_saved_index_finds(broad_corpus):
    save_search_index()
    capped = database_urls("parks", max_ranked=5)
    assert "https://a.example/best" not in capped  # the cap cut it
    assert bm25_urls("parks")[0] == "https://a.example/best"


def test_results_keep_the_shape_of_the_database_ranking():
    document(
        "https://a.example/untitled",
        "The council spent 2.1 million on parks.\nMore text about budgets follows here.",
        CLAIM_DATE - DAY,
    )
    save_search_index()
    (result,) = LocalBackend(ranking="bm25").search("budgets", before=CLAIM_DATE, page=1)
    assert result.title == "The council spent 2.1 million on parks."
    assert result.snippet == "More text about budgets follows here."
    assert (result.published, result.date_source, result.rank) == (
        CLAIM_DATE - DAY,
        DateSource.GIVEN,
        1,
    )


def test_any_word_matches_pages_with_every_word_come_first_and_a_minus_excludes():
    # The partial matches are short pages about one word: BM25 alone would put them first.
    document("https://a.example/parks", "parks parks parks")
    document("https://a.example/budget", "budget budget")
    document("https://a.example/both", "parks and budget, said the treasurer at length today")
    document("https://a.example/neither", "library opening hours")
    save_search_index()
    found = bm25_urls("parks budget")
    assert found[0] == "https://a.example/both"
    assert set(found) == {
        "https://a.example/parks",
        "https://a.example/budget",
        "https://a.example/both",
    }
    assert set(bm25_urls("parks or budget")) == set(found)
    assert set(bm25_urls("parks -treasurer")) == {"https://a.example/parks"}
    assert bm25_urls("the of") == []
    assert database_urls("parks budget")[0] == "https://a.example/both"
    assert set(database_urls("parks budget")) == set(found)


@pytest.mark.parametrize("seed", range(3))
def test_both_rankings_return_every_page_sharing_a_word_full_matches_first(seed):
    """Random pages and queries: the saved index and the database return exactly the pages
    holding some query word (before the claim date), every full match before any partial
    one; the saved index orders each tier as an exact BM25 does."""
    rng = random.Random(seed)
    words = [f"w{n}" for n in range(12)]
    for n in range(30):
        text = " ".join(rng.choices(words, k=rng.randint(1, 8)))
        published = CLAIM_DATE + rng.choice([-3, -1, 0, 2]) * DAY if rng.random() < 0.7 else None
        document(f"https://a.example/{n:02}", text, published)
    save_search_index()
    documents = {d.url: d for d in Document.objects.all()}
    for _ in range(15):
        query_words = rng.sample(words, rng.randint(1, 4))
        query = " ".join(query_words)
        shown = {
            url
            for url, d in documents.items()
            if (d.published is None or d.published < CLAIM_DATE)
            and set(query_words) & set(d.text.split())
        }
        full = {url for url in shown if set(query_words) <= set(documents[url].text.split())}
        exact = exact_bm25_urls(query, CLAIM_DATE)
        expected = [u for u in exact if u in full] + [u for u in exact if u not in full]
        pages = [bm25_urls(query, page=p) for p in (1, 2, 3, 4)]
        assert [u for page in pages for u in page] == expected
        assert set(expected) == shown
        by_database = [
            r.url
            for p in (1, 2, 3, 4)
            for r in LocalBackend(ranking="database", max_ranked=0).search(
                query, before=CLAIM_DATE, page=p
            )
        ]
        assert set(by_database) == shown
        assert set(by_database[: len(full)]) == full


def test_a_quoted_phrase_is_left_to_the_database_which_knows_word_order():
    document("https://a.example/phrase", "the parks budget rose")
    document("https://a.example/apart", "the budget for parks rose")
    save_search_index()
    assert bm25_urls('"parks budget"') == ["https://a.example/phrase"]


# --- The date restriction ------------------------------------------------------------------


def test_the_claim_date_itself_is_too_late_and_undated_or_archive_dated_pages_stay():
    document("https://a.example/day-before", "parks budget", CLAIM_DATE - DAY)
    document("https://a.example/claim-day", "parks budget", CLAIM_DATE)
    document("https://a.example/day-after", "parks budget", CLAIM_DATE + DAY)
    document("https://a.example/undated", "parks budget")
    document(
        "https://a.example/captured-late",
        "parks budget",
        CLAIM_DATE + 30 * DAY,
        DateSource.ARCHIVE_TIMESTAMP,
    )
    save_search_index()
    found = bm25_urls("parks budget")
    assert set(found) == {
        "https://a.example/day-before",
        "https://a.example/undated",
        "https://a.example/captured-late",
    }
    assert set(found) == set(database_urls("parks budget"))
    assert "https://a.example/claim-day" in bm25_urls("parks budget", before=CLAIM_DATE + DAY)


def test_the_service_still_flags_results_and_hides_the_claims_own_article(claim):
    document("https://news.example.com/parks", "council parks budget", CLAIM_DATE - DAY)
    document(OWN_ARTICLE_URL, "council parks budget fact check", CLAIM_DATE - DAY)
    MisinformationDomain.objects.create(domain="news.example.com")
    save_search_index()
    found = service.search("parks budget", scope=claim.search_scope())
    assert [r.url for r in found.results] == ["https://news.example.com/parks"]
    assert found.results[0].misinformation
    assert found.hidden == 1


# --- Falling back, and following a rebuild --------------------------------------------------


def test_without_a_saved_index_the_database_ranks_and_the_log_says_why(broad_corpus, caplog):
    with caplog.at_level(logging.WARNING, logger="search_proxy.search_index"):
        assert bm25_urls("parks") == database_urls("parks")
    assert "no saved search index" in caplog.text


def test_documents_added_after_the_save_send_searches_to_the_database(caplog):
    document("https://a.example/old", "parks budget", CLAIM_DATE - DAY)
    save_search_index()
    document("https://a.example/new", "library budget", CLAIM_DATE - DAY)
    with caplog.at_level(logging.WARNING, logger="search_proxy.search_index"):
        assert bm25_urls("library") == ["https://a.example/new"]
        assert current_index()[0] is None
    assert "covers documents up to id" in caplog.text


def test_a_newer_saved_index_is_picked_up_by_a_running_process():
    document("https://a.example/old", "parks budget", CLAIM_DATE - DAY)
    save_search_index()
    first, _ = current_index()
    assert bm25_urls("parks") == ["https://a.example/old"]
    assert current_index()[0] is first  # mapped once, not per search

    document("https://a.example/new", "parks library", CLAIM_DATE - DAY)
    saved = save_search_index()
    assert (saved.documents, saved.tokenised, saved.started_over) == (2, 1, False)
    second, _ = current_index()
    assert second is not None and second.generation != first.generation
    assert bm25_urls("parks library") == ["https://a.example/new", "https://a.example/old"]


def test_a_deleted_document_makes_the_next_save_start_over_and_searches_skip_it_meanwhile():
    gone = document("https://a.example/gone", "parks parks", CLAIM_DATE - DAY)
    document("https://a.example/kept", "parks budget", CLAIM_DATE - DAY)
    save_search_index()
    gone.delete()
    # The saved index still names the deleted page: the database ranks this search.
    assert bm25_urls("parks") == ["https://a.example/kept"]
    saved = save_search_index()
    assert (saved.documents, saved.started_over) == (1, True)
    index, _ = current_index()
    assert list(np.asarray(index.keys)) == [Document.objects.get().pk]
