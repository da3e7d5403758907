"""The page viewer's fetcher: refusals that keep the server from being used against internal
addresses (SSRF), size and time limits, and the text it extracts.

Refusals happen before any connection, so these tests reach nothing. The positive tests
fetch from the suite's own HTTP server on 127.0.0.1, which the guard rightly refuses; they
alone set PAGE_FETCH_ALLOWED_NETWORKS to 127.0.0.1/32 (the `local_pages` fixture), the one
way to run the real fetch end to end without the network.
"""

import datetime
import gzip

import pytest

from search_proxy import service
from search_proxy.backends import SearchResult
from search_proxy.dates import DateSource
from search_proxy.fetch import FetchRefused, PageUnavailable, download_page, fetch_page
from search_proxy.models import Document, FetchedPage
from search_proxy.webaddress import normalize_url
from tests.search_proxy.conftest import recorded

pytestmark = pytest.mark.django_db


def html(body: str) -> dict:
    return {"body": body, "headers": {"Content-Type": "text/html; charset=utf-8"}}


# --- Refused addresses ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://127.8.9.10:8080/admin", "loopback"),
        ("http://10.0.0.1/", "private"),
        ("http://10.255.1.2/internal", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://172.16.0.5/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::1]/", "loopback"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fd00::1]/", "private"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://[64:ff9b::a00:1]/", "private"),  # NAT64 form of 10.0.0.1
        ("http://224.0.0.1/", "multicast"),
        ("http://0.0.0.0/", "private"),
        ("http://100.64.0.1/", "reserved"),  # carrier-grade NAT
    ],
)
def test_internal_addresses_are_refused(url, reason):
    with pytest.raises(FetchRefused, match=reason):
        download_page(url)


@pytest.mark.parametrize(
    ("addresses", "reason"),
    [
        (["127.0.0.1"], "loopback"),
        (["10.1.2.3"], "private"),
        (["169.254.169.254"], "link-local"),
        (["::1"], "loopback"),
        # One internal address among public ones is enough to refuse.
        (["93.184.216.34", "10.0.0.7"], "private"),
    ],
)
def test_a_host_name_resolving_to_an_internal_address_is_refused(resolve_as, addresses, reason):
    looked_up = resolve_as({"intranet.example.com": addresses})
    with pytest.raises(FetchRefused, match=f"intranet.example.com .*{reason}"):
        download_page("https://intranet.example.com/secret")
    assert looked_up == ["intranet.example.com"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "Only http"),
        ("ftp://ftp.example.com/file", "Only http"),
        ("gopher://example.com/", "Only http"),
        ("javascript:alert(1)", "Only http"),
        ("http://user:secret@example.com/", "user name or password"),
        ("http:///no-host", "no host"),
        ("http://example.com:99999/", "not a valid web address"),
    ],
)
def test_addresses_that_are_not_plain_web_pages_are_refused(url, message):
    with pytest.raises(FetchRefused, match=message):
        download_page(url)


def test_unusual_ports_on_public_hosts_are_refused(resolve_as):
    resolve_as({"www.example.com": ["93.184.216.34"]})
    with pytest.raises(FetchRefused, match="Port 22"):
        download_page("http://www.example.com:22/")


def test_a_redirect_to_an_internal_address_is_refused(local_pages):
    local_pages.serve("/hop", status=302, headers={"Location": "http://10.0.0.1/admin"})
    with pytest.raises(FetchRefused, match=r"10\.0\.0\.1 is a private address"):
        download_page(local_pages.url("/hop"))


def test_a_redirect_to_a_name_resolving_internally_is_refused(local_pages, resolve_as):
    resolve_as({"metadata.example.com": ["169.254.169.254"]})
    local_pages.serve("/hop", status=301, headers={"Location": "http://metadata.example.com/"})
    with pytest.raises(FetchRefused, match="link-local"):
        download_page(local_pages.url("/hop"))


def test_redirects_are_followed_a_bounded_number_of_times(local_pages, settings):
    settings.PAGE_FETCH_MAX_REDIRECTS = 3
    local_pages.serve("/loop", status=302, headers={"Location": "/loop"})
    with pytest.raises(FetchRefused, match="more than 3 times"):
        download_page(local_pages.url("/loop"))
    assert len(local_pages.requests_to("/loop")) == 4


def test_the_checked_address_is_the_one_connected_to(local_pages, resolve_as):
    # A name looked up once per hop, then the connection goes to that checked address with
    # the name only in the Host header: a second, different DNS answer is never asked for.
    looked_up = resolve_as({"news.example.com": ["127.0.0.1"]})
    local_pages.serve("/article", **html("<html><body><p>Hello.</p></body></html>"))
    download_page(f"http://news.example.com:{local_pages.port}/article")
    assert looked_up == ["news.example.com"]
    (request,) = local_pages.requests_to("/article")
    assert request.headers["Host"] == f"news.example.com:{local_pages.port}"


# --- Limits --------------------------------------------------------------------------------


def test_a_page_larger_than_the_limit_is_refused(local_pages, settings):
    settings.PAGE_FETCH_MAX_BYTES = 1000
    local_pages.serve("/big", **html("<p>" + "x" * 5000 + "</p>"))
    with pytest.raises(FetchRefused, match="larger than"):
        download_page(local_pages.url("/big"))


def test_a_page_whose_size_is_not_announced_is_still_cut_at_the_limit(local_pages, settings):
    settings.PAGE_FETCH_MAX_BYTES = 1000
    body = gzip.compress(b"<p>" + b"x" * 50_000 + b"</p>")  # small on the wire, big unpacked
    local_pages.serve(
        "/bomb",
        body,
        headers={"Content-Type": "text/html", "Content-Encoding": "gzip"},
    )
    with pytest.raises(FetchRefused, match="larger than"):
        download_page(local_pages.url("/bomb"))


def test_a_slow_page_is_given_up(local_pages, settings):
    settings.PAGE_FETCH_TIMEOUT = 0.3
    local_pages.serve("/slow", delay=1.0, **html("<p>late</p>"))
    with pytest.raises(PageUnavailable, match="longer than"):
        download_page(local_pages.url("/slow"))


def test_an_error_page_is_unavailable(local_pages):
    local_pages.serve("/gone", status=404, **html("<p>Not found</p>"))
    with pytest.raises(PageUnavailable, match="HTTP 404"):
        download_page(local_pages.url("/gone"))


def test_files_that_are_not_web_pages_are_refused(local_pages):
    local_pages.serve("/report.pdf", b"%PDF-1.4", headers={"Content-Type": "application/pdf"})
    with pytest.raises(FetchRefused, match="not a web page"):
        download_page(local_pages.url("/report.pdf"))


# --- Reading the page ----------------------------------------------------------------------


def test_a_page_is_read_as_sentences_without_running_its_scripts(local_pages):
    url = local_pages.serve("/article", **html(recorded("page_article.html").decode()))
    page = fetch_page(url)
    assert page.title == "Council publishes its 2019 parks budget"
    assert (
        "The council spent 2.1 million pounds on parks in 2019, according to the budget "
        "published on Tuesday." in page.sentences
    )
    # Punkt keeps "Mr. Smith" in one sentence.
    assert any(s.startswith("Mr. Smith, the council's treasurer, said") for s in page.sentences)
    text = " ".join(page.sentences)
    assert "SCRIPT RAN" not in text and "Injected by a script" not in text
    assert "Home Politics Sport" not in text  # navigation is not content
    assert page.published == datetime.date(2020, 3, 3)
    assert page.date_source == DateSource.ESTIMATED


def test_a_fetched_page_is_cached_and_not_fetched_again(local_pages):
    url = local_pages.serve("/article", **html(recorded("page_article.html").decode()))
    fetch_page(url)
    again = fetch_page(url)
    assert again.from_cache
    assert len(local_pages.requests_to("/article")) == 1
    assert FetchedPage.objects.get().published == datetime.date(2020, 3, 3)


def test_an_estimated_date_settles_an_undated_page_in_the_index(local_pages):
    url = local_pages.serve("/article", **html(recorded("page_article.html").decode()))
    Document.objects.create(url=url, normalized_url=normalize_url(url), text="parks budget")
    fetch_page(url)
    document = Document.objects.get()
    assert (document.published, document.date_source) == (
        datetime.date(2020, 3, 3),
        DateSource.ESTIMATED,
    )


def test_an_estimated_date_settles_an_undated_search_result(local_pages, monkeypatch):
    url = local_pages.serve("/article", **html(recorded("page_article.html").decode()))
    undated = SearchResult("Parks", url, "parks budget", None, DateSource.UNKNOWN, 1)
    monkeypatch.setattr(service, "get_backend", lambda name=None: StubBackend([undated]))
    assert service.search("parks", before=datetime.date(2020, 3, 3)).results[0].date_unknown
    fetch_page(url)
    too_late = service.search("parks budget", before=datetime.date(2020, 3, 3))
    assert too_late.results == [] and too_late.dropped == 1
    in_time = service.search("parks budget", before=datetime.date(2020, 3, 4))
    assert in_time.results[0].date_unknown is False
    assert in_time.results[0].date_source == DateSource.ESTIMATED


class StubBackend:
    name = "stub"

    def __init__(self, results):
        self.results = results

    def search(self, query, *, before, country, page):
        return self.results


def test_a_plain_text_page_is_split_into_sentences(local_pages):
    url = local_pages.serve(
        "/notes.txt",
        "First sentence here. Second one follows.\n\nA new paragraph.",
        headers={"Content-Type": "text/plain"},
    )
    page = fetch_page(url)
    assert page.sentences == ["First sentence here.", "Second one follows.", "A new paragraph."]
    assert page.published is None and page.date_source == DateSource.UNKNOWN
