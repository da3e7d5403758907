"""The local full-text index: ranking, query syntax and the claim-date restriction, on
whichever database the suite runs (PostgreSQL full-text search or SQLite FTS5)."""

import datetime

import pytest

from search_proxy.backends.local import LocalBackend, fts5_query
from search_proxy.dates import DateSource, Placement, parse_date, placement
from tests.search_proxy.conftest import CLAIM_DATE, document

pytestmark = pytest.mark.django_db

DAY = datetime.timedelta(days=1)


def urls(query: str, before=CLAIM_DATE, page: int = 1) -> list[str]:
    return [r.url for r in LocalBackend().search(query, before=before, page=page)]


# --- The date boundary ---------------------------------------------------------------------


def test_a_page_from_the_day_before_the_claim_is_found_but_not_one_from_the_claim_date():
    document("https://a.example/day-before", "parks budget figures", CLAIM_DATE - DAY)
    document("https://a.example/claim-day", "parks budget figures", CLAIM_DATE)
    document("https://a.example/day-after", "parks budget figures", CLAIM_DATE + DAY)
    assert urls("parks budget") == ["https://a.example/day-before"]


def test_a_page_without_a_date_is_found_and_marked_unknown():
    document("https://a.example/undated", "parks budget figures")
    (result,) = LocalBackend().search("parks budget", before=CLAIM_DATE)
    assert result.published is None
    assert result.date_source == DateSource.UNKNOWN


def test_an_archive_capture_after_the_claim_date_proves_nothing_so_the_page_stays():
    # Captured after the claim date: published on or before then, perhaps long before.
    document(
        "https://a.example/captured-late",
        "parks budget figures",
        CLAIM_DATE + 30 * DAY,
        DateSource.ARCHIVE_TIMESTAMP,
    )
    (result,) = LocalBackend().search("parks budget", before=CLAIM_DATE)
    assert placement(result.published, result.date_source, CLAIM_DATE) is Placement.UNKNOWN


@pytest.mark.parametrize(
    ("published", "source", "expected"),
    [
        (CLAIM_DATE - DAY, DateSource.GIVEN, Placement.BEFORE),
        (CLAIM_DATE, DateSource.GIVEN, Placement.AFTER),
        (CLAIM_DATE, DateSource.SEARCH_ENGINE, Placement.AFTER),
        (CLAIM_DATE, DateSource.ESTIMATED, Placement.AFTER),
        (CLAIM_DATE - DAY, DateSource.ARCHIVE_TIMESTAMP, Placement.BEFORE),
        (CLAIM_DATE, DateSource.ARCHIVE_TIMESTAMP, Placement.UNKNOWN),
        (None, DateSource.UNKNOWN, Placement.UNKNOWN),
    ],
)
def test_placement_against_the_claim_date(published, source, expected):
    assert placement(published, source, CLAIM_DATE) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-10-31", datetime.date(2020, 10, 31)),
        ("2020-10-31T23:59:00+05:00", datetime.date(2020, 10, 31)),
        ("31-10-2020", datetime.date(2020, 10, 31)),
        ("1-9-2020", datetime.date(2020, 9, 1)),
        ("20201031", datetime.date(2020, 10, 31)),
        ("Oct 31, 2020", datetime.date(2020, 10, 31)),
        ("31 October 2020", datetime.date(2020, 10, 31)),
        ("3 days ago", None),
        ("2020-02-30", None),
        ("", None),
    ],
)
def test_dates_are_read_in_the_forms_corpora_and_apis_use(text, expected):
    assert parse_date(text) == expected


# --- Ranking and query syntax -------------------------------------------------------------


def test_better_matches_rank_first_and_titles_count_more():
    document("https://a.example/once", "the council met and parks were mentioned once")
    document(
        "https://a.example/title",
        "a report on spending",
        title="Parks budget of the council",
    )
    found = urls("council parks")
    assert found[0] == "https://a.example/title"
    assert set(found) == {"https://a.example/once", "https://a.example/title"}


def test_any_word_is_enough_and_pages_with_every_word_rank_first():
    document("https://a.example/parks", "parks parks parks")
    document("https://a.example/budget", "budget only")
    document("https://a.example/both", "the parks budget was discussed at great length today")
    found = urls("parks budget")
    assert found[0] == "https://a.example/both"
    assert set(found) == {
        "https://a.example/parks",
        "https://a.example/budget",
        "https://a.example/both",
    }
    assert set(urls("parks or budget")) == set(found)
    assert urls("library hours") == []


def test_quoted_words_are_a_phrase_and_a_minus_excludes():
    document("https://a.example/phrase", "the parks budget rose")
    document("https://a.example/apart", "the budget for parks rose, said the treasurer")
    assert urls('"parks budget"') == ["https://a.example/phrase"]
    assert urls("parks budget -treasurer") == ["https://a.example/phrase"]
    assert urls("parks -treasurer") == ["https://a.example/phrase"]


def test_stemming_finds_other_forms_of_a_word():
    document("https://a.example/stem", "The councils were spending on playgrounds")
    assert urls("council spend playground") == ["https://a.example/stem"]


@pytest.mark.parametrize("query", ["!!!", '"', "-parks", "*", "parks:budget NEAR(", "()"])
def test_odd_queries_never_break_the_search(query):
    document("https://a.example/parks", "parks budget")
    LocalBackend().search(query, before=CLAIM_DATE)  # no exception


def test_results_come_ten_to_a_page_with_ranks_across_pages():
    for n in range(12):
        document(f"https://a.example/{n:02}", "parks budget", CLAIM_DATE - (n + 1) * DAY)
    first = LocalBackend().search("parks", before=CLAIM_DATE, page=1)
    second = LocalBackend().search("parks", before=CLAIM_DATE, page=2)
    assert len(first) == 10 and len(second) == 2
    assert [r.rank for r in second] == [11, 12]
    assert not {r.url for r in first} & {r.url for r in second}


def test_an_untitled_document_is_shown_with_its_first_sentence_and_a_snippet():
    document(
        "https://a.example/untitled",
        "The council spent 2.1 million on parks.\nMore text about budgets follows here.",
    )
    (result,) = LocalBackend().search("budgets", before=CLAIM_DATE)
    assert result.title == "The council spent 2.1 million on parks."
    assert "budgets" in result.snippet


def test_the_index_follows_edits_and_deletions():
    doc = document("https://a.example/edit", "parks budget")
    doc.text = "library opening hours"
    doc.save()
    assert urls("parks") == []
    assert urls("library") == ["https://a.example/edit"]
    doc.delete()
    assert urls("library") == []


def test_fts5_queries_quote_every_term():
    assert fts5_query('"quick fox" or dog -cat covid-19') == (
        '("quick fox" OR "dog") AND "covid 19" NOT "cat"'
    )
    assert fts5_query('"quick fox" or dog -cat covid-19', any_group=True) == (
        '("quick fox" OR "dog" OR "covid 19") NOT "cat"'
    )
    assert fts5_query("-only -exclusions") == ""
    assert fts5_query("-only -exclusions", any_group=True) == ""
    assert fts5_query('title:x NEAR(a b) "unclosed') == (
        '"title x" AND "NEAR a" AND "b" AND "unclosed"'
    )
