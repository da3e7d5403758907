"""An extractive answer selected in the page viewer keeps where it came from: the page's
stored snapshot and the character offsets of the passage; exports carry them only when
asked."""

from __future__ import annotations

import dataclasses
import json

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation import workflow
from annotation.models import Answer
from annotation.vocabulary import Phase
from search_proxy.fetch import fetch_page
from search_proxy.models import FetchedPage
from tests import steps
from tests.search_proxy.conftest import WebServer

PAGE = "https://council.example.gov/budget-2019/0"
SENTENCES = [
    "Budget 2019.",
    "The council spent 2.1 million pounds on parks in 2019.",
    "Maintenance cost a further 400,000 pounds.",
]


@pytest.fixture
def snapshot(db) -> FetchedPage:
    return FetchedPage.objects.create(
        normalized_url=PAGE, url=PAGE, final_url=PAGE, title="Budget", sentences=SENTENCES
    )


@pytest.fixture
def page_server(settings):
    """A web site on 127.0.0.1 that the page fetcher may reach (for this test only)."""
    server = WebServer()
    server.thread.start()
    settings.PAGE_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.PAGE_FETCH_TIMEOUT = 3.0
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()
    server.thread.join(timeout=5)


def budget_page(*paragraphs: str) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        "<html><head><title>Council budget 2019</title></head><body><article>"
        f"<h1>Council budget 2019</h1>{body}</article></body></html>"
    )


FIRST_VERSION = budget_page(
    "The council published its budget for the year in March 2019.",
    "The 2019 budget allocated 2.1 million pounds to parks and open spaces.",
)
# A correction: a paragraph added above the passage, and the passage itself rewritten.
SECOND_VERSION = budget_page(
    "Correction: an earlier version of this page gave the wrong figure for parks.",
    "The council published its budget for the year in March 2019.",
    "The 2019 budget allocated 2.4 million pounds to parks and open spaces.",
)


def serve_budget(server, html: str) -> str:
    return server.serve("/budget", html, headers={"Content-Type": "text/html; charset=utf-8"})


def submit_with_answer(annotator, second_annotator, text: str, source_url: str | None = None):
    steps.new_article()
    steps.normalise(annotator)
    data = steps.evidence(questions=1)
    answer = dataclasses.replace(data.questions[0].answers[0], text=text)
    if source_url is not None:
        answer = dataclasses.replace(answer, source_url=source_url)
    question = dataclasses.replace(data.questions[0], answers=[answer])
    data = dataclasses.replace(data, questions=[question])
    workflow.submit_evidence(steps.take(second_annotator, Phase.QUESTIONS), data)
    return Answer.objects.get()


def test_a_selection_across_two_sentences_records_offsets_that_point_at_it(
    annotator, second_annotator, snapshot
):
    selected = "spent 2.1 million pounds on parks in 2019.\n\nMaintenance cost"
    answer = submit_with_answer(annotator, second_annotator, selected)
    assert answer.passage_snapshot == snapshot
    text = snapshot.text
    assert text[answer.passage_start : answer.passage_end] == (
        "spent 2.1 million pounds on parks in 2019.\nMaintenance cost"
    )


def test_an_answer_not_found_in_the_snapshot_records_no_offsets(
    annotator, second_annotator, snapshot
):
    answer = submit_with_answer(annotator, second_annotator, "Something the page never said.")
    assert answer.passage_snapshot is None and answer.passage_start is None


def test_offsets_are_exported_only_when_asked(annotator, second_annotator, snapshot, tmp_path):
    answer = submit_with_answer(annotator, second_annotator, "2.1 million pounds")
    claim = answer.question.evidence_round.claim
    claim.state, claim.label, claim.accepted_at = "accepted", "Refuted", timezone.now()
    claim.justification = "The budget says so."
    claim.save()
    plain, extended = tmp_path / "plain.json", tmp_path / "extended.json"
    call_command("export_dataset", "--out", str(plain), verbosity=0)
    call_command("export_dataset", "--out", str(extended), "--with-passages", verbosity=0)
    [plain_answer] = json.loads(plain.read_text())[0]["questions"][0]["answers"]
    [extended_answer] = json.loads(extended.read_text())[0]["questions"][0]["answers"]
    assert "extractive_passage" not in plain_answer
    passage = extended_answer["extractive_passage"]
    assert snapshot.text[passage["start"] : passage["end"]] == "2.1 million pounds"
    assert passage["snapshot_url"] == PAGE


def test_an_answer_keeps_its_snapshot_and_offsets_after_the_page_changed(
    annotator, second_annotator, page_server
):
    url = serve_budget(page_server, FIRST_VERSION)
    fetch_page(url)  # what opening it in the viewer does
    selected = "2.1 million pounds to parks"
    answer = submit_with_answer(annotator, second_annotator, selected, source_url=url)
    made_from, start, end = answer.passage_snapshot, answer.passage_start, answer.passage_end
    assert made_from is not None and made_from.text[start:end] == selected

    serve_budget(page_server, SECOND_VERSION)
    fetch_page(url, refresh=True)

    answer.refresh_from_db()
    assert FetchedPage.objects.count() == 2
    assert (answer.passage_snapshot_id, answer.passage_start, answer.passage_end) == (
        made_from.pk,
        start,
        end,
    )
    assert answer.passage_snapshot.text[start:end] == selected


def test_a_passage_read_before_the_page_changed_points_at_the_snapshot_it_was_read_from(
    annotator, second_annotator, page_server
):
    url = serve_budget(page_server, FIRST_VERSION)
    fetch_page(url)
    serve_budget(page_server, SECOND_VERSION)
    fetch_page(url, refresh=True)  # someone else opened it after it changed
    selected = "2.1 million pounds to parks"
    answer = submit_with_answer(annotator, second_annotator, selected, source_url=url)
    first = FetchedPage.objects.order_by("fetched_at").first()
    assert answer.passage_snapshot == first
    assert first.text[answer.passage_start : answer.passage_end] == selected


def test_a_passage_found_in_two_snapshots_points_at_the_newest(
    annotator, second_annotator, page_server
):
    url = serve_budget(page_server, FIRST_VERSION)
    fetch_page(url)
    serve_budget(page_server, SECOND_VERSION)
    fetch_page(url, refresh=True)
    selected = "published its budget for the year"
    answer = submit_with_answer(annotator, second_annotator, selected, source_url=url)
    newest = FetchedPage.objects.order_by("fetched_at").last()
    assert answer.passage_snapshot == newest
    assert newest.text[answer.passage_start : answer.passage_end] == selected
