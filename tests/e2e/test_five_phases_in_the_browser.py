"""Claims travel through all five phases in a real browser, five annotators each."""

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Claim
from tests import steps
from tests.e2e import flows
from tests.factories import AnnotatorFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def crew(db):
    people = AnnotatorFactory.create_batch(5)
    for person in people:
        person.completed_tours = ["p1", "p2", "p3", "p4", "p5"]
        person.save()
    return people


def _export(tmp_path) -> dict:
    out = tmp_path / "dataset.json"
    call_command("export_dataset", "--out", out, stdout=io.StringIO())
    return {record["claim"]: record for record in json.loads(out.read_text())}


def _through_dispute(new_page, crew, p5_verdict: str) -> Claim:
    pages = [flows.open_as(new_page, person.username) for person in crew]
    flows.normalise(pages[0], "The council spent 4 million pounds on parks in 2019.", "Refuted")
    flows.answer_questions(pages[1], "Supported")
    flows.check(pages[2], 3, "Refuted")  # disagrees with P2: dispute
    claim = Claim.objects.get()
    assert claim.state == Claim.State.DISPUTE
    flows.answer_questions(pages[3], "Refuted", extra_question=True)
    flows.check(pages[4], 5, p5_verdict)
    claim.refresh_from_db()
    return claim


def test_a_disputed_claim_is_accepted_after_reannotation(new_page, crew, tmp_path):
    steps.new_article(url="https://fullfact.org/online/parks/")
    claim = _through_dispute(new_page, crew, "Refuted")
    assert claim.state == Claim.State.ACCEPTED
    record = _export(tmp_path)[claim.text]
    assert record["required_reannotation"] is True
    assert record["label"] == "Refuted"
    assert [q["question"] for q in record["questions"]] == [
        "How much did the council budget for parks in 2019?",
        "Did the council announce extra parks money in 2019?",
        "Did the council publish a correction about parks spending?",
    ]
    boolean = record["questions"][2]["answers"][0]
    assert (boolean["answer"], boolean["answer_type"]) == ("No", "Boolean")
    assert boolean["boolean_explanation"] == "Its news page lists no correction."
    assert record["justification"] == "The answers point to Refuted."
    people = set(claim.article.tasks.values_list("annotator", flat=True))
    assert len(people) == 5


def test_a_claim_whose_post_control_disagrees_is_discarded(new_page, crew, tmp_path):
    steps.new_article(url="https://fullfact.org/online/libraries/")
    claim = _through_dispute(new_page, crew, "Supported")
    assert claim.state == Claim.State.DISCARDED
    assert claim.text not in _export(tmp_path)
