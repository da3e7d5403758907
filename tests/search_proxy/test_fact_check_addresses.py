"""The one fact-check test, on the canonical address: every wrapper form an annotator can
paste (archive copies, caches, AMP, translators, redirectors, shorteners), fact-check sections
of news sites and fact-checkers' own social accounts, against the rules the migration seeds.

Each row: the address as written, the canonical address expected (None: the address itself),
and whether it reveals (True), is clear (False), or is possibly revealing ("possibly").
"""

import io
from urllib.parse import quote

import pytest
from django.core.management import call_command

from search_proxy.flags import fact_check_finding, source_problem
from search_proxy.models import FactCheckingDomain, FetchedPage, Source
from search_proxy.webaddress import MAX_UNWRAP, canonical_address

pytestmark = pytest.mark.django_db

FC = "https://www.factcheck.org/2020/10/secret-claim/"
PF = "https://www.politifact.com/factchecks/2020/oct/01/someone/secret/"
SN = "https://www.snopes.com/fact-check/secret-rumour/"
RT = "https://www.reuters.com/article/uk-factcheck-secret-idUSKBN27"
NEWS = "https://www.bbc.co.uk/news/world-europe-54000000"

TABLE = [
    # plain fact-checkers and their language sites
    (FC, None, True),
    (PF, None, True),
    (SN, None, True),
    ("http://factcheck.org/2020/10/secret-claim", None, True),
    ("https://FULLFACT.org/online/secret/", None, True),
    ("https://factcheck.afp.com/secret", None, True),
    ("https://factuel.afp.com/doc.afp.com.9XY", None, True),
    ("https://checamos.afp.com/doc.afp.com.9XY", None, True),
    ("https://factual.afp.com/doc.afp.com.9XY", None, True),
    ("https://faktencheck.afp.com/doc.afp.com.9XY", None, True),
    ("https://periksafakta.afp.com/doc.afp.com.9XY", None, True),
    ("https://www.afp.com/en/news/secret", None, False),
    ("https://leadstories.com/hoax-alert/2020/10/secret.html", None, True),
    ("https://maldita.es/malditobulo/2020/secret", None, True),
    ("https://correctiv.org/faktencheck/2020/10/01/secret", None, True),
    ("https://correctiv.org/aktuelles/2020/10/01/recherche", None, False),
    # fact-check sections of news sites: the section reveals, the rest of the site is clear
    ("https://www.reuters.com/fact-check/secret-claim-2023-01-01/", None, True),
    (RT, None, True),
    ("https://www.reuters.com/world/europe/ordinary-news-2020-10-01/", None, False),
    ("https://apnews.com/article/fact-check-secret-claim-123abc", None, True),
    ("https://apnews.com/article/ap-fact-check-trump-123abc", None, True),
    ("https://apnews.com/hub/ap-fact-check", None, True),
    ("https://apnews.com/article/election-2020-ordinary-123abc", None, False),
    ("https://www.washingtonpost.com/politics/2020/10/01/fact-checker-secret/", None, True),
    ("https://www.washingtonpost.com/news/fact-checker/wp/2017/01/01/secret/", None, True),
    ("https://www.washingtonpost.com/politics/2020/10/01/ordinary-story/", None, False),
    ("https://eu.usatoday.com/story/news/factcheck/2020/10/01/secret/1234/", None, True),
    ("https://www.usatoday.com/story/news/politics/2020/10/01/ordinary/1234/", None, False),
    ("https://www.poynter.org/ifcn/", None, True),
    ("https://www.poynter.org/ifcn/2020/secret-signatories/", None, True),
    ("https://www.poynter.org/reporting-editing/2020/ordinary/", None, False),
    # fact-checkers' own accounts; other accounts on the same sites are clear
    ("https://www.facebook.com/politifact/posts/123", None, True),
    ("https://m.facebook.com/snopes/posts/123", None, True),
    ("https://www.facebook.com/someone.else/posts/123", None, False),
    ("https://twitter.com/PolitiFact/status/123", None, True),
    ("https://x.com/snopes/status/123", None, True),
    ("https://mobile.twitter.com/AFPFactCheck/status/123", None, True),
    ("https://x.com/someone/status/123", None, False),
    ("https://www.youtube.com/@politifact/videos", None, True),
    ("https://www.youtube.com/@someone/videos", None, False),
    ("https://www.instagram.com/snopes/p/abc/", None, True),
    # archive copies
    (f"https://web.archive.org/web/20201001000000/{FC}", FC, True),
    (f"https://web.archive.org/web/20201001000000id_/{PF}", PF, True),
    (f"http://web.archive.org/web/*/{SN}", SN, True),
    (f"https://web.archive.org/web/20201001000000/{NEWS}", NEWS, False),
    (f"https://archive.ph/{FC}", FC, True),
    (f"https://archive.today/2020.10.01-120000/{PF}", PF, True),
    (f"https://archive.is/newest/{SN}", SN, True),
    (f"https://archive.md/o/AbCd1/{FC}", FC, True),
    (f"https://archive.li/{NEWS}", NEWS, False),
    (f"https://archive.vn/2020.10.01-120000/{NEWS}", NEWS, False),
    ("https://archive.ph/wXyZ9", None, "possibly"),
    (f"https://web.archive.org/web/2021/https://archive.ph/{FC}", FC, True),
    # caches
    (f"https://webcache.googleusercontent.com/search?q=cache:Hjo4Ekd8A2sJ:{FC}+&cd=1", FC, True),
    (f"https://webcache.googleusercontent.com/search?q=cache:{PF}", PF, True),
    (f"https://webcache.googleusercontent.com/search?q=cache:{NEWS}", NEWS, False),
    (
        "https://www-politifact-com.cdn.ampproject.org/c/s/www.politifact.com/factchecks/x/",
        "https://www.politifact.com/factchecks/x/",
        True,
    ),
    (
        "https://www-snopes-com.cdn.ampproject.org/v/s/www.snopes.com/fact-check/x/?amp_js_v=0.1",
        "https://www.snopes.com/fact-check/x/",
        True,
    ),
    (
        "https://www.google.com/amp/s/www.factcheck.org/2020/10/x/amp/",
        "https://www.factcheck.org/2020/10/x/amp/",
        True,
    ),
    (
        "https://www.google.co.uk/amp/s/www.reuters.com/article/uk-factcheck-x-id1",
        "https://www.reuters.com/article/uk-factcheck-x-id1",
        True,
    ),
    (
        "https://www.google.com/amp/s/www.bbc.co.uk/news/amp/world-1",
        "https://www.bbc.co.uk/news/amp/world-1",
        False,
    ),
    # translators
    (
        "https://www-factcheck-org.translate.goog/2020/10/x/?_x_tr_sl=en&_x_tr_tl=de",
        "https://www.factcheck.org/2020/10/x/",
        True,
    ),
    (
        "https://fact--check-example-org.translate.goog/a?_x_tr_sl=en",
        "https://fact-check.example.org/a",
        False,
    ),
    (f"https://translate.google.com/translate?sl=en&tl=fr&u={quote(SN, safe='')}", SN, True),
    # redirectors
    (f"https://www.google.com/url?q={quote(FC, safe='')}&sa=D&ust=1", FC, True),
    (f"https://www.google.de/url?sa=t&url={quote(PF, safe='')}", PF, True),
    (f"https://www.google.com/url?q={quote(NEWS, safe='')}", NEWS, False),
    (f"https://l.facebook.com/l.php?u={quote(SN, safe='')}&h=AT0x", SN, True),
    (f"https://lm.facebook.com/l.php?u={quote(FC, safe='')}", FC, True),
    (f"https://www.youtube.com/redirect?q={quote(PF, safe='')}&v=abc", PF, True),
    (f"https://out.reddit.com/t3_abc?url={quote(SN, safe='')}", SN, True),
    (
        "https://l.facebook.com/l.php?u="
        + quote(f"https://web.archive.org/web/2020/{FC}", safe=""),
        FC,
        True,
    ),
    # shorteners: unknown targets are possibly revealing
    ("https://bit.ly/3xYzAbc", None, "possibly"),
    ("https://t.co/AbCdEf123", None, "possibly"),
    ("https://tinyurl.com/secret12", None, "possibly"),
    ("https://wapo.st/3abcdef", None, "possibly"),
    ("https://reut.rs/3abcdef", None, "possibly"),
    ("https://youtu.be/dQw4w9WgXcQ", "https://www.youtube.com/watch?v=dQw4w9WgXcQ", False),
    # ordinary pages stay clear
    (NEWS, None, False),
    ("https://www.cdc.gov/flu/weekly/index.htm", None, False),
    ("https://en.wikipedia.org/wiki/Fact-checking", None, False),
    ("https://www.factory-outlet.com/checkout", None, False),
    ("https://bit.ly", None, False),
]


def test_the_table_is_long_enough_and_covers_every_wrapper():
    assert len(TABLE) >= 60
    written = " ".join(row[0] for row in TABLE)
    for form in (
        "web.archive.org", "archive.ph", "archive.today", "archive.is", "archive.md",
        "webcache.googleusercontent", "cdn.ampproject.org", "google.com/amp", "translate.goog",
        "google.com/url", "l.facebook.com", "t.co/", "bit.ly/", "facebook.com/politifact",
        "x.com/snopes", "youtube.com/@politifact", "factuel.afp.com", "checamos.afp.com",
        "reuters.com/fact-check", "ap-fact-check", "fact-checker", "poynter.org/ifcn",
    ):  # fmt: skip
        assert form in written, form


@pytest.mark.parametrize(("address", "canonical", "expected"), TABLE, ids=[r[0] for r in TABLE])
def test_each_address_is_judged_on_its_canonical_form(address, canonical, expected):
    finding = fact_check_finding(address)
    assert finding.canonical == (canonical or address)
    assert finding.reveals is bool(expected), finding
    assert finding.possibly is (expected == "possibly")


def test_a_short_link_whose_target_is_stored_is_judged_on_that_target():
    short, archived = "https://bit.ly/3known", "https://archive.ph/kNoWn"
    assert fact_check_finding(short).possibly and fact_check_finding(archived).possibly
    FetchedPage.objects.create(
        normalized_url="https://bit.ly/3known", url=short, final_url=NEWS, title="t"
    )
    Source.objects.create(
        url=SN, normalized_url="https://snopes.com/fact-check/x", archived_url=archived
    )
    assert fact_check_finding(short).canonical == NEWS
    assert not fact_check_finding(short).reveals
    assert fact_check_finding(archived).canonical == SN
    assert fact_check_finding(archived).reveals and not fact_check_finding(archived).possibly


def test_a_rule_a_manager_adds_takes_effect_through_every_wrapper():
    page = "https://www.example-news.com/verify/2020/secret/"
    wrapped = f"https://archive.ph/{page}"
    assert not fact_check_finding(wrapped).reveals
    FactCheckingDomain.objects.create(domain="example-news.com", path_prefix="verify")
    assert fact_check_finding(wrapped).reveals
    assert not fact_check_finding("https://example-news.com/sport/x").reveals


def test_the_claims_own_article_is_found_behind_any_wrapper():
    own = "https://www.example-news.com/2020/10/own-article/"
    wrapped = f"https://www.google.com/url?q={quote(own, safe='')}"
    finding = fact_check_finding(wrapped, own_article=own)
    assert finding.reveals and finding.own_article
    assert "own fact-checking article" in source_problem(wrapped, own)


def test_unwrapping_is_bounded():
    address = FC
    for _ in range(MAX_UNWRAP + 3):
        address = f"https://www.google.com/url?q={quote(address, safe='')}"
    result = canonical_address(address)
    assert len(result.wrappers) == MAX_UNWRAP


def test_the_messages_say_what_is_wrong():
    assert "shortened or archived link" in source_problem("https://bit.ly/3xYzAbc")
    message = source_problem(f"https://archive.ph/{FC}")
    assert "factcheck.org" in message and "archive.today" in message
    assert source_problem(NEWS) is None


def test_the_command_prints_address_canonical_and_verdict(monkeypatch):
    out = io.StringIO()
    call_command("fact_check_address", f"https://archive.ph/{FC}", NEWS, stdout=out)
    assert out.getvalue().splitlines() == [
        f"https://archive.ph/{FC}\t{FC}\treveals",
        f"{NEWS}\t{NEWS}\tclear",
    ]
    monkeypatch.setattr("sys.stdin", io.StringIO(f"https://bit.ly/3x\n\n{NEWS}\n"))
    out = io.StringIO()
    call_command("fact_check_address", "-", stdout=out)
    assert out.getvalue().splitlines() == [
        "https://bit.ly/3x\thttps://bit.ly/3x\treveals",
        f"{NEWS}\t{NEWS}\tclear",
    ]
