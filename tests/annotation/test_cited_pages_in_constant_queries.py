"""Annotators' requests read every cited page with one query per table, however many there are.

Autosave runs every few seconds for every annotator who types; the checks of a cited page
(fact-checker and misinformation rules, the page's known dates, its Source row) used to cost
about five queries per address. These tests count the queries of the same request with 1
and with 20 cited answers and fail when the counts differ; a planted per-address query
proves they can fail.
"""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import assignment
from annotation.evidence import MISINFORMATION_WARNING, evidence_problems
from annotation.forms.evidence import evidence_from_draft
from annotation.models import EvidenceRound
from annotation.submissions import Problem
from annotation.vocabulary import Phase
from search_proxy import flags, service
from search_proxy.models import (
    Document,
    FactCheckingDomain,
    FetchedPage,
    MisinformationDomain,
    Source,
)
from search_proxy.webaddress import is_web_address, normalize_url
from tests import steps
from tests.factories import AnnotatorFactory

TASK_PAGE_CEILING = 20


def cited(n: int) -> list[str]:
    """n distinct addresses on n distinct domains."""
    return [f"https://site{i}.example.org/report/{i}" for i in range(n)]


@pytest.fixture
def known_pages(db):
    """What is stored about the cited pages: dates in the index and the viewer's snapshots,
    archived Sources, and site rules, for some of them, so every look-up finds something."""
    MisinformationDomain.objects.create(domain="site3.example.org")
    FactCheckingDomain.objects.create(domain="factcheck-not-cited.example.net")
    for i, url in enumerate(cited(20)):
        if i % 4 == 0:
            Document.objects.create(
                url=url,
                normalized_url=normalize_url(url),
                text="A page.",
                published=datetime.date(2019, 5, 1),
                date_source="given",
            )
        if i % 4 == 1:
            FetchedPage.objects.remember(
                url=url,
                final_url=url,
                title="A page",
                sentences=["A page."],
                published=datetime.date(2019, 6, 1),
                content_type="text/html",
                http_status=200,
            )
        if i % 4 == 2:
            Source.for_url(url)


@pytest.fixture
def p2_task(db, annotator, known_pages):
    steps.new_article(url="https://news.example.com/fact-check/parks-spending/")
    steps.normalise(AnnotatorFactory(username="p1-writer"))
    return assignment.next_task(annotator, Phase.QUESTIONS)


def post_data(urls: list[str], version: int, *, note: str = "") -> dict:
    """The editor's form with one extractive answer per address, three to a question."""
    data = {"draft_version": str(version), "verdict": "Refuted", "claim_correction": note}
    for n, url in enumerate(urls):
        qi, ai = divmod(n, 3)
        data[f"q-{qi}-text"] = f"What does source {qi} say about the parks budget?"
        prefix = f"q-{qi}-a-{ai}-"
        data.update(
            {
                prefix + "answer_type": "Extractive",
                prefix + "text": f"The budget lists {n} million pounds for parks.",
                prefix + "boolean": "",
                prefix + "boolean_explanation": "",
                prefix + "source_url": url,
                prefix + "source_medium": "Web text",
            }
        )
    return data


def api_draft(urls: list[str]) -> dict:
    from django.http import QueryDict

    from annotation.forms.evidence import draft_from_post

    query = QueryDict(mutable=True)
    query.update(post_data(urls, 0))
    return draft_from_post(query)


def count(do) -> int:
    with CaptureQueriesContext(connection) as queries:
        do()
    return len(queries)


def screen_autosave(client, task, urls: list[str], version: int) -> int:
    url = reverse("annotation:save-draft", args=[task.pk])
    # A different claim correction each time: every save is new content.
    data = {**post_data(urls, version, note=f"save {version}"), "tab_id": "tab-a"}
    queries = count(lambda: client.post(url, data, HTTP_HX_REQUEST="true"))
    task.refresh_from_db()
    assert task.draft_version == version + 1
    return queries


def test_an_autosave_from_the_editor_costs_the_same_queries_with_1_and_with_20_cited_pages(
    client, annotator, p2_task
):
    """Both saves bring new addresses in, so both look the cited pages up."""
    client.force_login(annotator)
    screen_autosave(client, p2_task, [], 0)  # the tab's first revision is a keyframe
    one = screen_autosave(client, p2_task, cited(1), 1)
    twenty = screen_autosave(client, p2_task, cited(20), 2)
    assert one == twenty


def screen_autosave_response(client, task, urls: list[str], version: int, note: str):
    url = reverse("annotation:save-draft", args=[task.pk])
    data = {**post_data(urls, version, note=note), "tab_id": "tab-a"}
    with CaptureQueriesContext(connection) as queries:
        response = client.post(url, data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200, response.content
    return response.content.decode(), [q["sql"] for q in queries.captured_queries]


def test_a_typing_autosave_shows_what_became_known_of_a_page_already_cited(
    client, annotator, p2_task
):
    """What is known of a page changes while its address stays (the viewer stores its date,
    the site lists grow): an autosave that keeps the addresses still checks the pages again,
    in the same constant number of queries (an attack found hints left stale otherwise)."""
    client.force_login(annotator)
    shown, _ = screen_autosave_response(client, p2_task, cited(3)[:2], 0, "first")
    assert 'id="site-hints"' in shown and MISINFORMATION_WARNING not in shown
    MisinformationDomain.objects.create(domain="site1.example.org")  # learnt after citing it
    shown, queries = screen_autosave_response(client, p2_task, cited(3)[:2], 1, "typing")
    assert 'id="site-hints"' in shown and MISINFORMATION_WARNING in shown
    assert [sql for sql in queries if "search_proxy_misinformationdomain" in sql]
    assert 'id="hints"' in shown  # the other hints (the wording of questions) too


def test_an_autosave_through_the_api_costs_the_same_queries_with_1_and_with_20_cited_pages(
    client, annotator, p2_task
):
    client.force_login(annotator)
    url = reverse("api:task-draft", args=[p2_task.pk])

    def put(urls, version):
        body = {"draft": api_draft(urls), "version": version, "tab": "api-a"}
        body["draft"]["claim_correction"] = f"save {version}"
        queries = count(lambda: client.put(url, body, content_type="application/json"))
        p2_task.refresh_from_db()
        assert p2_task.draft_version == version + 1
        return queries

    put(cited(1), 0)
    assert put(cited(1), 1) == put(cited(20), 2)


def test_the_hand_in_check_costs_the_same_queries_with_1_and_with_20_cited_pages(
    client, annotator, p2_task
):
    """The submit attempt that checks the pairs before the confirmation screen."""
    client.force_login(annotator)
    url = reverse("annotation:check-evidence", args=[p2_task.pk])

    def check(urls, version):
        data = {**post_data(urls, version, note=f"check {version}"), "tab_id": "tab-a"}
        response = None

        def post():
            nonlocal response
            response = client.post(url, data)

        queries = count(post)
        assert response.status_code == 200, response.content.decode()[:2000]
        return queries

    check(cited(1), 0)
    assert check(cited(1), 1) == check(cited(20), 2)


def test_handing_in_costs_the_same_queries_with_1_and_with_20_cited_pages(
    client, annotator, p2_task
):
    """The hand-in itself: the checks again, then a source row, a snapshot passage and an
    archive job for every cited page."""
    for n in (2, 3):  # Start next finds another claim after each hand-in
        steps.new_article(url=f"https://news.example.com/fact-check/more-{n}/")
        steps.normalise(AnnotatorFactory(username=f"p1-writer-{n}"))
    client.force_login(annotator)
    counts = []
    task = p2_task
    for urls in (cited(1), cited(20)):
        screen_autosave(client, task, urls, 0)
        confirm = reverse("annotation:confirm-evidence", args=[task.pk])
        response = None

        def post(confirm=confirm):
            nonlocal response
            response = client.post(confirm, {"draft_version": "1", "tab_id": "tab-a"})

        counts.append(count(post))
        task.refresh_from_db()
        assert task.status == task.Status.SUBMITTED
        evidence = EvidenceRound.objects.get(task=task)
        assert evidence.questions.count() == -(-len(urls) // 3)
        task = assignment.current_task(annotator, Phase.QUESTIONS)
        assert response.url == reverse("annotation:task", args=[task.pk])
    assert counts[0] == counts[1]
    assert Source.objects.filter(normalized_url__in=map(normalize_url, cited(20))).count() == 20


def test_the_workflow_checks_cost_the_same_queries_with_1_and_with_20_cited_pages(p2_task):
    claim = p2_task.claim
    claim.article  # noqa: B018 - loaded once, as the views have it

    def check(urls):
        evidence = evidence_from_draft(api_draft(urls))
        return count(lambda: evidence_problems(evidence, claim, phase=Phase.QUESTIONS))

    assert check(cited(1)) == check(cited(20))


def test_the_task_page_stays_under_its_query_ceiling_whatever_the_number_of_cited_pages(
    client, annotator, p2_task
):
    client.force_login(annotator)
    page = reverse("annotation:task", args=[p2_task.pk])
    counts = []
    for version, urls in enumerate((cited(1), cited(20))):
        screen_autosave(client, p2_task, urls, version)
        response = None

        def get():
            nonlocal response
            response = client.get(page)

        counts.append(count(get))
        assert response.status_code == 200
        assert urls[-1] in response.content.decode()
    assert counts[0] == counts[1]
    assert counts[1] <= TASK_PAGE_CEILING, counts


def test_a_planted_query_per_cited_page_makes_the_counts_differ(p2_task, monkeypatch):
    """The counting can fail: a rule that asks the database once per address is caught."""
    from annotation import evidence as rules

    claim = p2_task.claim
    claim.article  # noqa: B018
    original = rules.evidence_problems

    def leaky(data, claim, **kw):
        for q in data.questions:
            for a in q.answers:
                Source.objects.filter(url=a.source_url).exists()
        return original(data, claim, **kw)

    def check(urls):
        evidence = evidence_from_draft(api_draft(urls))
        return count(lambda: leaky(evidence, claim, phase=Phase.QUESTIONS))

    assert check(cited(1)) != check(cited(20))


WRAPPED_AND_KNOWN = [
    "https://www.snopes.com/fact-check/parks/",
    "https://web.archive.org/web/2019/https://www.snopes.com/fact-check/parks/",
    "https://news.example.com/fact-check/parks-spending/",
    "https://web.archive.org/web/20190101000000/https://news.example.com/fact-check/parks-spending/",
    "https://bit.ly/3abcDEF",
    "https://tinyurl.com/known-target",
    "https://site3.example.org/report/3",
    "https://sub.site3.example.org/other",
    "https://site0.example.org/report/0",
    "https://site1.example.org/report/1",
    "https://web.archive.org/web/20250101000000/https://late.example.com/page",
    "https://late-source.example.com/page",
    "https://undated.example.com/page",
    "https://dated-late.example.com/a",
    "https://snapshot-late.example.com/b",
    "metadata",
    "not an address",
    "",
]


def test_the_batched_checks_find_what_the_one_address_check_finds(p2_task):
    """Every kind of finding (fact-checker, own article behind an archive, unresolved and
    known short links, misinformation, dates in the index, snapshots and the archive) is
    the same whether the address is checked alone or among many."""
    FactCheckingDomain.objects.get_or_create(domain="snopes.com", path_prefix="")
    Source.objects.create(
        url="https://www.snopes.com/fact-check/other/",
        normalized_url=normalize_url("https://www.snopes.com/fact-check/other/"),
        archived_url="https://tinyurl.com/known-target",
        archive_status=Source.ArchiveStatus.ARCHIVED,
    )
    Source.objects.create(
        url="https://late-source.example.com/page",
        normalized_url=normalize_url("https://late-source.example.com/page"),
        earliest_capture_at=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
    )
    Document.objects.create(
        url="https://dated-late.example.com/a",
        normalized_url=normalize_url("https://dated-late.example.com/a"),
        text="A page.",
        published=datetime.date(2021, 1, 1),
        date_source="given",
    )
    # Two snapshots: the newest seen one (dated after the claim) is the one that counts.
    for n, day in enumerate((datetime.date(2019, 1, 1), datetime.date(2021, 2, 2))):
        FetchedPage.objects.remember(
            url="https://snapshot-late.example.com/b",
            final_url="https://snapshot-late.example.com/b",
            title=f"Version {n}",
            sentences=["A page."],
            published=day,
            content_type="text/html",
            http_status=200,
        )
    claim = p2_task.claim
    singles = [
        p
        for n, url in enumerate(WRAPPED_AND_KNOWN)
        for p in one_by_one(f"questions.{n // 3}.answers.{n % 3}.source_url", url, claim)
    ]
    evidence = evidence_from_draft(api_draft(WRAPPED_AND_KNOWN))
    batched = [
        p
        for p in evidence_problems(evidence, claim, phase=Phase.QUESTIONS)
        if p.path.endswith(".source_url") and p.message not in ANSWER_RULE_MESSAGES
    ]
    # The addresses above find problems of every kind.
    assert {p.message.split(" ")[0] for p in singles} >= {"This", "snopes.com", "The"}
    assert sum("is dated 2021" in p.message for p in singles) == 2
    assert len(singles) >= 8, singles
    assert batched == singles


def one_by_one(path: str, url: str, claim) -> list[Problem]:
    """The site checks as they were first written: each rule asked about one address."""
    url = url.strip()
    if not is_web_address(url):
        return []
    if refused := flags.source_problem(url, claim.article.url):
        return [Problem(path, refused)]
    problems = []
    if dated := service.source_date_problem(url, claim.claim_date):
        problems.append(Problem(path, dated, blocking=False))
    if flags.is_misinformation(url):
        problems.append(Problem(path, MISINFORMATION_WARNING, blocking=False))
    return problems


# What the answer rules (not the site checks) say about a source address.
ANSWER_RULE_MESSAGES = {
    "The source must be a web address (http or https).",
    "Give the address of the source.",
}
