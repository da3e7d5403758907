"""The P2/P4 page viewer when a page cannot be opened: it says why in plain words and offers
the text the platform's own search index holds for that address, selectable as an answer."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.vocabulary import Phase
from search_proxy.dates import DateSource
from search_proxy.models import Document, SearchClick
from search_proxy.webaddress import normalize_url
from tests import steps

pytestmark = pytest.mark.django_db

UNREACHABLE = "https://budget.invalid/2019/parks/"


@pytest.fixture
def p2_task(annotator, second_annotator):
    steps.new_article()
    steps.normalise(annotator)
    return steps.take(second_annotator, Phase.QUESTIONS)


def open_in_viewer(client, task, url: str) -> str:
    client.force_login(task.annotator)
    response = client.post(reverse("annotation:open-result", args=[task.pk]), {"url": url})
    assert response.status_code == 200
    return response.content.decode()


def test_an_unreachable_page_says_why_and_offers_its_indexed_text(client, p2_task):
    Document.objects.create(
        url=UNREACHABLE,
        normalized_url=normalize_url(UNREACHABLE),
        title="Parks in the 2019 budget",
        text="The council spent 2.1 million pounds on parks.\nMaintenance cost 400,000 pounds.",
        date_source=DateSource.UNKNOWN,
    )
    body = open_in_viewer(client, p2_task, UNREACHABLE)
    assert "This page could not be fetched" in body
    assert "The host name budget.invalid could not be resolved." in body
    assert "platform's own index" in body
    assert "Parks in the 2019 budget" in body
    assert "<p>The council spent 2.1 million pounds on parks.</p>" in body
    # The indexed text can be used like a fetched page: its address fills the answer.
    assert f'data-opened-url="{UNREACHABLE}"' in body
    assert "Use selection as answer" in body
    assert SearchClick.objects.get().outcome == SearchClick.Outcome.FAILED


def test_an_unreachable_page_without_indexed_text_says_what_to_do(client, p2_task):
    body = open_in_viewer(client, p2_task, UNREACHABLE)
    assert "This page could not be fetched" in body
    assert "budget.invalid could not be resolved" in body
    assert "No copy of its text is stored here" in body
    assert f'href="{UNREACHABLE}"' in body  # the live page, to try in a new tab
    assert "Use selection as answer" not in body


def test_a_refused_address_says_the_platform_will_not_open_it(client, p2_task):
    body = open_in_viewer(client, p2_task, "http://10.0.0.1/admin")
    assert "The platform will not open this page" in body
    assert "10.0.0.1 is a private address" in body
    assert "Use selection as answer" not in body


def test_the_viewer_of_someone_elses_task_is_404_and_get_is_405(client, p2_task, outsider):
    url = reverse("annotation:open-result", args=[p2_task.pk])
    client.force_login(outsider)
    assert client.post(url, {"url": UNREACHABLE}).status_code == 404
    client.force_login(p2_task.annotator)
    assert client.get(url).status_code == 405
