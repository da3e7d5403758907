"""Stored page snapshots are deduplicated by normalised address and readable content: a
refetch that finds the same title and text reuses the snapshot, a changed page gets a new
one and the old one stays as it was. Each snapshot keeps the HTTP status and fetch time."""

from __future__ import annotations

import pytest
from django.utils import timezone

from search_proxy.fetch import fetch_page, read_page
from search_proxy.models import FetchedPage
from tests.search_proxy.conftest import recorded

pytestmark = pytest.mark.django_db

ARTICLE = recorded("page_article.html").decode()
HTML = {"Content-Type": "text/html; charset=utf-8"}


def serve(server, text: str, path: str = "/article", status: int = 200) -> str:
    return server.serve(path, text, status=status, headers=HTML)


def test_a_refetch_of_an_unchanged_page_reuses_its_snapshot(local_pages):
    url = serve(local_pages, ARTICLE)
    first = fetch_page(url)
    seen_before = FetchedPage.objects.get().last_seen_at
    again = fetch_page(url, refresh=True)
    snapshot = FetchedPage.objects.get()
    assert len(local_pages.requests_to("/article")) == 2
    assert again.snapshot_id == first.snapshot_id == snapshot.pk
    assert snapshot.fetched_at == first.fetched_at
    assert snapshot.last_seen_at > seen_before


def test_a_change_outside_the_readable_text_reuses_the_snapshot(local_pages):
    url = serve(local_pages, ARTICLE)
    fetch_page(url)
    serve(
        local_pages,
        ARTICLE.replace('<a href="/sport">Sport</a>', '<a href="/weather">Weather</a>')
        .replace("Copyright Example News 2020", "Copyright Example News 2021")
        .replace('document.title = "SCRIPT RAN"', 'document.title = "ANOTHER SCRIPT"'),
    )
    fetch_page(url, refresh=True)
    assert FetchedPage.objects.count() == 1


def test_a_page_whose_text_changed_gets_a_new_snapshot_and_the_old_one_stays(local_pages):
    url = serve(local_pages, ARTICLE)
    first = fetch_page(url)
    serve(local_pages, ARTICLE.replace("2.1 million pounds", "2.4 million pounds"))
    changed = fetch_page(url, refresh=True)
    assert changed.snapshot_id != first.snapshot_id
    old, new = FetchedPage.objects.order_by("fetched_at")
    assert any("2.1 million pounds" in s for s in old.sentences)
    assert not any("2.4 million pounds" in s for s in old.sentences)
    assert any("2.4 million pounds" in s for s in new.sentences)
    assert old.content_hash != new.content_hash
    # Readers are given the newest snapshot.
    assert fetch_page(url).snapshot_id == new.pk


def test_a_changed_title_alone_makes_a_new_snapshot(local_pages):
    url = serve(local_pages, ARTICLE)
    fetch_page(url)
    serve(
        local_pages,
        ARTICLE.replace(
            'content="Council publishes its 2019 parks budget"',
            'content="Council publishes its 2019 parks budget (corrected)"',
        ).replace("budget | Example News", "budget (corrected) | Example News"),
    )
    assert fetch_page(url, refresh=True).title.endswith("(corrected)")
    assert FetchedPage.objects.count() == 2


def test_going_back_to_earlier_text_reuses_the_earlier_snapshot(local_pages):
    url = serve(local_pages, ARTICLE)
    first = fetch_page(url)
    serve(local_pages, ARTICLE.replace("2.1 million pounds", "2.4 million pounds"))
    fetch_page(url, refresh=True)
    serve(local_pages, ARTICLE)
    assert fetch_page(url, refresh=True).snapshot_id == first.snapshot_id
    assert FetchedPage.objects.count() == 2
    assert fetch_page(url).snapshot_id == first.snapshot_id  # now the newest seen


def test_each_snapshot_records_the_http_status_and_the_fetch_time(local_pages):
    url = serve(local_pages, ARTICLE, status=203)
    before = timezone.now()
    page = fetch_page(url)
    snapshot = FetchedPage.objects.get()
    assert snapshot.http_status == page.http_status == 203
    assert before <= snapshot.fetched_at <= timezone.now()
    assert snapshot.last_seen_at == snapshot.fetched_at


def test_addresses_that_normalise_alike_share_a_snapshot(local_pages):
    url = serve(local_pages, ARTICLE)
    fetch_page(url)
    fetch_page(url + "?utm_source=newsletter", refresh=True)
    assert FetchedPage.objects.count() == 1


def test_the_same_text_at_two_addresses_is_one_snapshot_for_each(local_pages):
    fetch_page(serve(local_pages, ARTICLE, path="/one"))
    fetch_page(serve(local_pages, ARTICLE, path="/two"))
    one, two = FetchedPage.objects.order_by("pk")
    assert one.content_hash == two.content_hash
    assert one.normalized_url != two.normalized_url


def test_a_snapshot_created_directly_gets_its_content_hash(db):
    page = FetchedPage.objects.create(
        normalized_url="https://example.com/a", url="https://example.com/a", sentences=["One."]
    )
    assert page.content_hash == FetchedPage.hash_content("", ["One."])
    assert len(page.content_hash) == 64


def test_a_stale_snapshot_that_cannot_be_refetched_is_shown_with_the_reason(local_pages, settings):
    url = serve(local_pages, ARTICLE)
    fetch_page(url)
    settings.PAGE_FETCH_CACHE_DAYS = 0  # every snapshot is due for a refetch
    local_pages.serve("/article", "down for maintenance", status=503)
    reading = read_page(url)
    assert reading.page is not None
    assert any("2.1 million pounds" in s for s in reading.page.sentences)
    assert "HTTP 503" in reading.page.refetch_problem
    assert FetchedPage.objects.count() == 1
