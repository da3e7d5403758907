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
from search_proxy.models import FetchedPage
from tests import steps

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


def submit_with_answer(annotator, second_annotator, text: str):
    steps.new_article()
    steps.normalise(annotator)
    data = steps.evidence(questions=1)
    answer = dataclasses.replace(data.questions[0].answers[0], text=text)
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
