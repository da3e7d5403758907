"""Misinformation and fact-checking domains: matching, loading, and refusing evidence."""

import io
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotation.models import Article
from search_proxy.flags import (
    fact_checking_rule_for_article,
    is_fact_checker,
    is_misinformation,
    load_misinformation_domains,
    source_problem,
    sync_fact_checking_domains,
)
from search_proxy.models import FactCheckingDomain, MisinformationDomain, parse_domain_entry
from search_proxy.webaddress import host_suffixes, registered_domain
from tests.factories import ArticleFactory
from tests.search_proxy.conftest import OWN_ARTICLE_URL

pytestmark = pytest.mark.django_db


# --- Matching ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://americasfreedomfighters.com/story",
        "https://www.americasfreedomfighters.com/story",
        "http://WWW.AmericasFreedomFighters.COM/Story",
        "https://news.americasfreedomfighters.com/2019/x",
        "americasfreedomfighters.com/no-scheme",
        "https://web.archive.org/web/20200101000000/https://americasfreedomfighters.com/story",
    ],
)
def test_a_misinformation_domain_matches_www_subdomains_mixed_case_and_archive_copies(url):
    MisinformationDomain.objects.create(domain="americasfreedomfighters.com")
    assert is_misinformation(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://notamericasfreedomfighters.com/story",
        "https://americasfreedomfighters.com.example.org/story",
        "https://example.org/americasfreedomfighters.com",
        "https://example.org/?ref=americasfreedomfighters.com",
        "not a url at all",
        "",
    ],
)
def test_a_misinformation_domain_does_not_match_lookalikes(url):
    MisinformationDomain.objects.create(domain="americasfreedomfighters.com")
    assert not is_misinformation(url)


def test_a_site_section_matches_only_pages_under_it():
    MisinformationDomain.objects.create(domain="newyorker.com", path_prefix="humor")
    assert is_misinformation("https://www.newyorker.com/humor/borowitz-report/x")
    assert is_misinformation("https://www.newyorker.com/Humor")
    assert not is_misinformation("https://www.newyorker.com/news/x")
    assert not is_misinformation("https://www.newyorker.com/humorous-story")


def test_a_blog_on_a_shared_host_does_not_mark_the_whole_host():
    MisinformationDomain.objects.create(domain="americankabuki.blogspot.com")
    assert is_misinformation("https://AmericanKabuki.blogspot.com/2019/01/post.html")
    assert not is_misinformation("https://someoneelse.blogspot.com/2019/01/post.html")


def test_an_ip_address_entry_matches_that_address_only():
    MisinformationDomain.objects.create(domain="82.221.129.208")
    assert is_misinformation("http://82.221.129.208/page")
    assert not is_misinformation("http://82.221.129.209/page")


def test_domain_helpers_never_stop_at_a_public_suffix():
    assert registered_domain("https://www.news.bbc.co.uk/x") == "bbc.co.uk"
    assert host_suffixes("https://a.b.example.co.uk/x") == [
        "a.b.example.co.uk",
        "b.example.co.uk",
        "example.co.uk",
    ]


@pytest.mark.parametrize(
    ("entry", "parsed"),
    [
        ("Americasfreedomfighters.com", ("americasfreedomfighters.com", "")),
        ("www.Example.com/", ("example.com", "")),
        ("Silver-Coin-Investor. com", ("silver-coin-investor.com", "")),
        ("cato.org/blog", ("cato.org", "blog")),
        ("centerforsecuritypolicy.org/#articles", ("centerforsecuritypolicy.org", "")),
        ("82.221.129.208", ("82.221.129.208", "")),
    ],
)
def test_list_entries_are_read_as_domain_and_section(entry, parsed):
    assert parse_domain_entry(entry) == parsed


@pytest.mark.parametrize("entry", ["", "   ", "no-dot", "under score!.com", "http://"])
def test_entries_that_are_not_domains_are_rejected(entry):
    with pytest.raises(ValueError):
        parse_domain_entry(entry)


def test_a_rule_edited_in_the_admin_is_normalised_and_checked():
    rule = MisinformationDomain(domain="WWW.Example.COM", path_prefix="/Blog/")
    rule.full_clean()
    assert (rule.domain, rule.path_prefix) == ("example.com", "blog")
    with pytest.raises(ValidationError):
        MisinformationDomain(domain="not a domain").full_clean()


# --- Loading the misinformation list ------------------------------------------------------


def test_the_list_loads_once_and_keeps_admin_entries(tmp_path: Path):
    listing = tmp_path / "misinfo.txt"
    listing.write_text(
        "Americasfreedomfighters.com\nwww.americasfreedomfighters.com\n\nnewyorker.com/humor\n"
        "not a domain\nTheamericanews.co\n",
        encoding="utf-8",
    )
    MisinformationDomain.objects.create(domain="added-by-hand.example", origin="admin")
    out, err = io.StringIO(), io.StringIO()
    call_command("load_misinformation_domains", str(listing), stdout=out, stderr=err)
    assert "3 new misinformation domains" in out.getvalue()
    assert "1 duplicate lines" in out.getvalue()
    assert "line 5" in err.getvalue()
    listing.write_text("Theamericanews.co\n", encoding="utf-8")
    call_command("load_misinformation_domains", str(listing), "--prune", stdout=out, stderr=err)
    assert set(MisinformationDomain.objects.values_list("domain", flat=True)) == {
        "theamericanews.co",
        "added-by-hand.example",
    }


def test_the_averitec_list_loads_and_flags_its_domains(averitec_dir):
    lines = (averitec_dir / "misinfo_list.txt").read_text(encoding="utf-8").splitlines()
    report = load_misinformation_domains(lines)
    assert report.created > 1000
    assert report.duplicates > 0
    assert is_misinformation("https://www.americasfreedomfighters.com/2019/some-story/")
    assert not is_misinformation("https://www.bbc.co.uk/news/world")


def test_a_missing_list_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("load_misinformation_domains", str(tmp_path / "missing.txt"))


# --- Fact-checkers and the claim's own article --------------------------------------------


def test_well_known_fact_checkers_are_there_from_the_start():
    assert is_fact_checker("https://www.politifact.com/factchecks/2020/oct/12/x/")
    assert is_fact_checker("https://factcheck.afp.com/some-check")
    assert not is_fact_checker("https://www.afp.com/en/news")


def test_fact_checker_sources_are_refused_with_a_reason():
    problem = source_problem("https://www.Snopes.com/fact-check/council-parks/")
    assert problem is not None
    assert "snopes.com is a fact-checking site" in problem


def test_fact_checker_archive_copies_are_refused_too():
    assert source_problem(
        "https://web.archive.org/web/20201001000000/https://www.politifact.com/x/"
    )


def test_ordinary_news_pages_are_allowed():
    assert source_problem("https://www.bbc.co.uk/news/uk-54633147") is None
    assert source_problem("https://apnews.com/article/parks-budget") is None


def test_the_claims_own_article_is_refused_as_its_evidence_in_every_form(claim):
    # checkyourfact.com is a fact-checker anyway; the own-article message comes first.
    for url in (
        OWN_ARTICLE_URL,
        "http://www.checkyourfact.com/2020/11/03/fact-check-council-parks?utm_source=x",
        f"https://web.archive.org/web/20210101000000/{OWN_ARTICLE_URL}",
    ):
        assert "own fact-checking article" in source_problem(url, claim.article.url)


def test_a_news_sites_own_fact_check_is_refused_but_its_other_pages_are_not(claim):
    article = ArticleFactory(
        url="https://web.archive.org/web/20201230000000/https://www.bbc.co.uk/news/54633147",
        normalized_url="https://bbc.co.uk/news/54633147",
        publisher="bbc.co.uk",
    )
    claim.article = article
    assert "own fact-checking article" in source_problem(
        "https://www.bbc.co.uk/news/54633147", claim.article.url
    )
    assert source_problem("https://www.bbc.co.uk/news/54633148", claim.article.url) is None


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("https://www.politifact.com/factchecks/2020/x/", None),  # maintained list
        ("https://factcheck.thedispatch.com/p/ballots", None),
        ("https://ghanafact.com/2020/09/true-americans/", None),
        ("https://www.covid19facts.ca/en/fact-checked/x", ("covid19facts.ca", "")),
        ("https://fit.thequint.com/fit-webqoof/x", ("fit.thequint.com", "fit-webqoof/x")),
        (
            "https://www.usatoday.com/story/news/factcheck/2020/12/29/fact-check-x/4/",
            ("usatoday.com", "story/news/factcheck"),
        ),
        ("https://www.indiatoday.in/fact-check/story/x", ("indiatoday.in", "fact-check")),
        ("https://www.bbc.co.uk/news/54633147", ("bbc.co.uk", "news/54633147")),
        ("https://www.bbc.co.uk/", None),
    ],
)
def test_imported_articles_give_their_fact_check_sections(url, rule):
    assert fact_checking_rule_for_article(url) == rule


def test_syncing_adds_the_sections_of_imported_articles_once():
    # A news site the seeded rules do not know (usatoday.com's section is seeded now).
    ArticleFactory(
        url="https://web.archive.org/web/20201230/https://www.example-times.com/story/news/"
        "factcheck/2020/12/29/fact-check-x/1/",
        normalized_url="https://example-times.com/story/news/factcheck/2020/12/29/fact-check-x/1",
        publisher="example-times.com",
    )
    ArticleFactory(url="https://www.covid19facts.ca/en/fact-checked/x", publisher="COVID-19 Facts")
    call_command("sync_fact_checking_domains", stdout=io.StringIO())
    assert FactCheckingDomain.objects.filter(origin="articles").count() == 2
    articles = Article.objects.values_list("url", "publisher")
    assert sync_fact_checking_domains(articles).created == 0
    assert is_fact_checker("https://www.example-times.com/story/news/factcheck/2021/01/05/other/")
    assert not is_fact_checker("https://www.example-times.com/story/news/politics/2021/01/05/x/")
    assert is_fact_checker("https://covid19facts.ca/anything")
    assert FactCheckingDomain.objects.filter(origin="articles").count() == 2
