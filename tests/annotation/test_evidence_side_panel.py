"""The P2/P4 editor's side panel (search and page viewer) with and without JavaScript, and the
rules the editor's scripts read from the page rather than keep copies of.

With htmx a search or an opened page answers with its fragment; a plain form or link (no
JavaScript) gets the whole editor with the panel filled in, as django-htmx's example does.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation.evidence import MAX_ANSWERS_PER_QUESTION, METADATA_URL
from annotation.submissions import TEXT_LIMITS
from annotation.vocabulary import Phase, SourceMedium
from search_proxy import service
from search_proxy.backends import SearchResult
from search_proxy.models import FetchedPage
from search_proxy.webaddress import normalize_url
from tests import steps
from tests.factories import AnnotatorFactory

pytestmark = pytest.mark.django_db

STATIC_JS = Path(__file__).resolve().parents[2] / "static" / "js"
PAGE = "https://council.example.gov/budget-2019"
HTMX = {"HTTP_HX_REQUEST": "true"}


class _OneResultEngine:
    name = "one-result"
    uses_country = False

    def search(self, query, *, before, country, page):
        return [
            SearchResult(
                title="Council budget 2019",
                url=PAGE,
                snippet="Parks: 2.1 million pounds.",
                published=datetime.date(2019, 3, 1),
                date_source="metadata",
                rank=1,
            )
        ]


@pytest.fixture
def p2_task(monkeypatch):
    monkeypatch.setattr(service, "get_backend", lambda name=None: _OneResultEngine())
    writer, answerer = AnnotatorFactory.create_batch(2)
    steps.new_article()
    steps.normalise(writer)
    return steps.take(answerer, Phase.QUESTIONS)


@pytest.fixture
def stored_page(db):
    # A fresh snapshot: the viewer shows it without fetching anything.
    return FetchedPage.objects.create(
        normalized_url=normalize_url(PAGE),
        url=PAGE,
        final_url=PAGE,
        title="Budget 2019",
        sentences=["The council met in March.", "Parks received 2.1 million pounds."],
    )


def _search(client, task, **headers):
    url = reverse("annotation:search-panel", args=[task.pk])
    return client.get(url, {"q": "parks budget"}, **headers)


def _open_form(body: str) -> str:
    """The opening tag of the first result's "Open" form."""
    before = body[: body.index("data-open-result")]
    return before[before.rindex("<form") :].split(">", 1)[0]


def test_a_search_with_htmx_answers_with_the_results_fragment(client, p2_task):
    client.force_login(p2_task.annotator)
    body = _search(client, p2_task, **HTMX).content.decode()
    assert body.lstrip().startswith('<div id="search-results"')
    assert "Council budget 2019" in body
    assert 'id="qa-form"' not in body and "<html" not in body


def test_a_search_without_javascript_answers_with_the_whole_editor(client, p2_task):
    client.force_login(p2_task.annotator)
    response = _search(client, p2_task)
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" in body and 'id="qa-form"' in body
    results = body[body.index('<div id="search-results"') :]
    assert "Council budget 2019" in results
    assert body.count('id="search-results"') == 1


def test_a_search_without_javascript_keeps_the_query_in_the_search_box(client, p2_task):
    client.force_login(p2_task.annotator)
    body = _search(client, p2_task).content.decode()
    box = body[body.index('<input type="search" name="q"') :].split(">", 1)[0]
    assert 'value="parks budget"' in box


def test_a_refused_search_without_javascript_says_why_once(client, p2_task):
    client.force_login(p2_task.annotator)
    url = reverse("annotation:search-panel", args=[p2_task.pk])
    body = client.get(url, {"q": "x" * 401}).content.decode()
    assert 'id="qa-form"' in body
    assert body.count("at most 400 characters") == 1


def test_the_open_form_posts_with_its_token_when_there_is_no_javascript(p2_task, stored_page):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(p2_task.annotator)
    body = _search(browser, p2_task).content.decode()
    form = _open_form(body)
    action = re.search(r'action="([^"]+)"', form).group(1)
    assert 'method="post"' in form
    assert action.split("#")[0] == reverse("annotation:open-result", args=[p2_task.pk])
    assert 'hx-post="' + action.split("#")[0] + '"' in form
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
    response = browser.post(action.split("#")[0], {"csrfmiddlewaretoken": token, "url": PAGE})
    assert response.status_code == 200
    opened = response.content.decode()
    # The whole editor, with the opened page's tab shown rather than hidden.
    assert 'id="qa-form"' in opened
    assert '<div class="tab-body" id="page-tab">' in opened
    assert "<p>Parks received 2.1 million pounds.</p>" in opened


def test_opening_a_page_with_htmx_answers_with_the_viewer_fragment(client, p2_task, stored_page):
    client.force_login(p2_task.annotator)
    url = reverse("annotation:open-result", args=[p2_task.pk])
    body = client.post(url, {"url": PAGE}, **HTMX).content.decode()
    assert body.lstrip().startswith('<div id="opened-page"')
    assert "<p>Parks received 2.1 million pounds.</p>" in body
    assert 'id="qa-form"' not in body


def test_the_side_panel_is_404_for_someone_else_and_405_for_the_wrong_method(
    client, p2_task, outsider
):
    search = reverse("annotation:search-panel", args=[p2_task.pk])
    viewer = reverse("annotation:open-result", args=[p2_task.pk])
    client.force_login(outsider)
    assert client.get(search, {"q": "parks"}).status_code == 404
    assert client.post(viewer, {"url": PAGE}).status_code == 404
    client.force_login(p2_task.annotator)
    assert client.post(search, {"q": "parks"}).status_code == 405
    assert client.get(viewer).status_code == 405


def test_the_editor_page_carries_the_rules_its_script_applies(client, p2_task):
    client.force_login(p2_task.annotator)
    body = client.get(reverse("annotation:task", args=[p2_task.pk])).content.decode()
    form = body[body.index('<form id="qa-form"') :].split(">", 1)[0]
    assert f'data-max-answers="{MAX_ANSWERS_PER_QUESTION}"' in form
    assert f'data-metadata-url="{METADATA_URL}"' in form
    assert f'data-metadata-medium="{SourceMedium.METADATA}"' in form
    # The cards the script adds come from the page's templates, with the same text limits.
    templates = body[body.index('<template id="question-template">') :]
    for name, limit in [
        ("q-__q__-text", "question"),
        ("q-__q__-a-__a__-text", "answer"),
        ("q-__q__-a-__a__-boolean_explanation", "boolean_explanation"),
        ("q-__q__-a-__a__-source_url", "web_address"),
    ]:
        assert re.search(rf'name="{name}"[^>]*maxlength="{TEXT_LIMITS[limit]}"', templates), name
    assert re.search(
        rf'name="claim_correction"[^>]*maxlength="{TEXT_LIMITS["claim_correction"]}"', body
    )


def test_the_scripts_keep_no_copy_of_the_servers_rules():
    editor = (STATIC_JS / "qa_editor.js").read_text()
    assert not re.search(r"MAX_ANSWERS\s*=\s*\d", editor)
    assert '"metadata"' not in editor and '"Metadata"' not in editor


def test_only_one_script_reads_the_csrf_token():
    readers = sorted(
        path.name
        for path in STATIC_JS.glob("*.js")
        if re.search(r"csrfmiddlewaretoken\]|hx-headers|csrftoken=", path.read_text())
    )
    assert readers == ["csrf.js"]
