"""The Phase 2 / Phase 4 question-answer editor through the test client."""

import datetime
import re

import pytest
from django.urls import reverse

from annotation import assignment
from annotation.evidence import evidence_problems
from annotation.models import Claim, Task
from annotation.submissions import TEXT_LIMITS
from annotation.vocabulary import NO_ANSWER_TEXT, Phase
from search_proxy import service
from search_proxy.backends import SearchResult
from search_proxy.models import FactCheckingDomain, MisinformationDomain
from tests import steps
from tests.factories import AnnotatorFactory


@pytest.fixture
def claim(db):
    writer = AnnotatorFactory(username="p1-writer")
    steps.new_article(url="https://fullfact.org/online/parks-spending/")
    (claim,) = steps.normalise(
        writer,
        [
            steps.normalised_claim("The council spent 4 million pounds on parks in 2019."),
            steps.normalised_claim("The council closed two libraries in 2019."),
        ],
    )[:1]
    return claim


@pytest.fixture
def p2_task(claim, annotator):
    return assignment.next_task(annotator, Phase.QUESTIONS)


@pytest.fixture
def logged_in(client, annotator):
    client.force_login(annotator)
    return client


def answer(qi, ai, **fields):
    values = {
        "answer_type": "Extractive",
        "text": "The 2019 budget lists 2.1 million pounds for parks.",
        "boolean": "",
        "boolean_explanation": "",
        "source_url": "https://council.example.gov/budget-2019",
        "source_medium": "Web text",
    }
    values.update(fields)
    return {f"q-{qi}-a-{ai}-{k}": v for k, v in values.items()}


def post_data(*questions, verdict="Refuted", version=0, correction=""):
    data = {"draft_version": str(version), "verdict": verdict, "claim_correction": correction}
    for qi, (text, answers) in enumerate(questions):
        data[f"q-{qi}-text"] = text
        for ai, fields in enumerate(answers):
            data.update(answer(qi, ai, **fields))
    return data


GOOD = post_data(
    ("How much did the council budget for parks in 2019?", [{}]),
    (
        "Did the council announce new parks spending in 2019?",
        [{"answer_type": "Boolean", "boolean": "No", "boolean_explanation": "No announcement."}],
    ),
    ("What did the mayor say about parks?", [{"answer_type": "Unanswerable"}]),
)


def test_the_editor_shows_the_claim_its_siblings_and_the_search_panel(logged_in, p2_task):
    body = logged_in.get(reverse("annotation:task", args=[p2_task.pk])).content.decode()
    assert "The council spent 4 million pounds on parks in 2019." in body
    assert "Other claims from the same article" in body
    assert "The council closed two libraries in 2019." in body
    assert "Search pages from before 31 Oct 2020" in body
    assert "Refuted</label>" not in body.split('id="verdict"')[0]  # no P1 label shown


def test_valid_pairs_lead_to_the_confirmation_screen_then_to_p3(logged_in, p2_task, claim):
    review = logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), GOOD)
    assert review.status_code == 200
    assert b"Do these questions and answers alone lead to your verdict?" in review.content
    p2_task.refresh_from_db()
    assert p2_task.status == Task.Status.IN_PROGRESS and p2_task.draft_version == 1
    confirm = logged_in.post(
        reverse("annotation:confirm-evidence", args=[p2_task.pk]), {"draft_version": "1"}
    )
    assert confirm.status_code == 302
    claim.refresh_from_db()
    assert claim.state == Claim.State.QUALITY_CHECK
    evidence = claim.evidence_rounds.get()
    assert evidence.pairs_support_verdict is True
    answers = [q.answers.get() for q in evidence.questions.order_by("position")]
    assert (answers[1].text, answers[1].boolean_explanation) == ("No", "No announcement.")
    assert (answers[2].text, answers[2].source_url, answers[2].source_medium) == (
        NO_ANSWER_TEXT,
        "",
        "",
    )
    assert answers[0].source.normalized_url == "https://council.example.gov/budget-2019"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"source_url": "ftp://files.example.org/report"}, "must be a web address"),
        ({"source_url": ""}, "Give the address of the source"),
        ({"text": ""}, "Write the answer"),
        ({"answer_type": "Boolean", "boolean": "Yes"}, "Explain the Yes or No"),
        ({"answer_type": "Boolean", "boolean_explanation": "x"}, "Answer Yes or No"),
        ({"source_medium": ""}, "Choose the kind of source"),
        (
            {"source_url": "https://fullfact.org/online/parks-spending/"},
            "own fact-checking article",
        ),
        (
            {
                "source_url": "https://web.archive.org/web/2021/https://fullfact.org/online/parks-spending"
            },
            "own fact-checking article",
        ),
        ({"source_url": "https://www.snopes.com/fact-check/parks/"}, "fact-checking site"),
    ],
)
def test_a_broken_answer_is_refused_with_a_message_beside_it(logged_in, p2_task, fields, message):
    FactCheckingDomain.objects.get_or_create(domain="snopes.com")
    data = post_data(
        ("How much did the council budget for parks in 2019?", [fields]),
        ("Who approved the 2019 parks budget?", [{}]),
    )
    response = logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), data)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert not Claim.objects.get(pk=p2_task.claim_id).evidence_rounds.exists()


def test_metadata_answers_get_metadata_as_their_source(logged_in, p2_task, claim):
    data = post_data(
        ("When was the claim made?", [{"source_medium": "Metadata", "source_url": ""}]),
        ("How much did the council budget for parks in 2019?", [{}]),
    )
    logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), data)
    logged_in.post(
        reverse("annotation:confirm-evidence", args=[p2_task.pk]), {"draft_version": "1"}
    )
    first = claim.evidence_rounds.get().questions.get(position=0).answers.get()
    assert first.source_url == "metadata" and first.source is None


def test_misinformation_sources_are_allowed_but_marked(logged_in, p2_task):
    MisinformationDomain.objects.get_or_create(domain="theonion.com")
    data = post_data(
        ("Where did the claim first appear?", [{"source_url": "https://www.theonion.com/parks"}]),
        ("How much did the council budget for parks in 2019?", [{}]),
    )
    # The autosave that brings the address in shows the hint beside the pairs.
    draft = logged_in.post(
        reverse("annotation:save-draft", args=[p2_task.pk]), {**data, "draft_version": "0"}
    )
    assert "known for misinformation or satire" in draft.content.decode()
    response = logged_in.post(
        reverse("annotation:check-evidence", args=[p2_task.pk]), {**data, "draft_version": "1"}
    )
    assert response.status_code == 200  # confirmation screen: a hint, not an error
    # The editor opened again shows it too.
    page = logged_in.get(reverse("annotation:task", args=[p2_task.pk])).content.decode()
    assert "known for misinformation or satire" in page


def test_question_wording_hints_do_not_block(p2_task, claim):
    from django.http import QueryDict

    from annotation.forms.evidence import draft_from_post, evidence_from_draft

    query = QueryDict(mutable=True)
    for key, value in post_data(
        ("Is it true that the council spent 4 million on parks?", [{}]),
    ).items():
        query[key] = value
    problems = evidence_problems(evidence_from_draft(draft_from_post(query)), claim)
    messages = [(p.message, p.blocking) for p in problems]
    assert (
        "Ask about a fact the claim depends on, not whether the claim is true.",
        False,
    ) in messages
    assert ("Most claims need two or more questions to be settled.", False) in messages
    assert not [m for m, blocking in messages if blocking]


def test_restating_the_whole_claim_as_a_question_gets_a_hint(claim):
    from annotation.evidence import restates_claim

    assert restates_claim("Did the council spend 4 million pounds on parks in 2019?", claim.text)
    assert not restates_claim("How much did the council spend on parks?", claim.text)


def test_all_unanswerable_needs_five_questions(logged_in, p2_task):
    four = post_data(*[(f"Question {n}?", [{"answer_type": "Unanswerable"}]) for n in range(4)])
    response = logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), four)
    assert response.status_code == 422
    assert "Ask at least 5 questions" in response.content.decode()
    five = post_data(
        *[(f"Question {n}?", [{"answer_type": "Unanswerable"}]) for n in range(5)], version=1
    )
    assert (
        logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), five).status_code
        == 200
    )


def test_more_than_three_answers_to_a_question_are_refused(logged_in, p2_task):
    data = post_data(("How much was spent?", [{}, {}, {}, {}]), ("Who approved it?", [{}]))
    response = logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), data)
    assert response.status_code == 422
    assert "At most 3 answers" in response.content.decode()


def test_a_verdict_is_needed(logged_in, p2_task):
    response = logged_in.post(
        reverse("annotation:check-evidence", args=[p2_task.pk]), {**GOOD, "verdict": ""}
    )
    assert response.status_code == 422
    assert "Choose a verdict" in response.content.decode()


def test_the_claim_correction_is_kept_beside_the_original(logged_in, p2_task, claim):
    data = {**GOOD, "claim_correction": "The council spent 4 million pounds on parks in 2018."}
    logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), data)
    logged_in.post(
        reverse("annotation:confirm-evidence", args=[p2_task.pk]), {"draft_version": "1"}
    )
    claim.refresh_from_db()
    evidence = claim.evidence_rounds.get()
    assert claim.text == "The council spent 4 million pounds on parks in 2019."
    assert evidence.claim_correction.endswith("in 2018.")
    assert evidence.task.annotator.username == "alice"


def test_a_stale_confirmation_is_refused_with_the_conflict_screen(logged_in, p2_task, claim):
    logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), GOOD)
    response = logged_in.post(
        reverse("annotation:confirm-evidence", args=[p2_task.pk]), {"draft_version": "0"}
    )
    assert response.status_code == 409
    assert "Two versions of this task" in response.content.decode()
    claim.refresh_from_db()
    assert claim.state == Claim.State.QUESTIONS


@pytest.mark.parametrize("reason", ["article_unusable", "media_claim"])
def test_reporting_the_claim_keeps_the_reason_for_managers(logged_in, p2_task, claim, reason):
    response = logged_in.post(
        reverse("annotation:report-claim", args=[p2_task.pk]),
        {"reason": reason, "note": "video only"},
    )
    assert response.status_code == 302
    claim.refresh_from_db()
    assert claim.state == Claim.State.EXCLUDED
    assert "reported in P2" in claim.exclusion_reason and "video only" in claim.exclusion_reason


def test_the_draft_is_restored_when_coming_back(logged_in, p2_task):
    logged_in.post(reverse("annotation:save-draft", args=[p2_task.pk]), GOOD)
    body = logged_in.get(reverse("annotation:task", args=[p2_task.pk])).content.decode()
    assert "Did the council announce new parks spending in 2019?" in body
    assert 'value="No" checked' in body


def test_phase_4_opens_on_the_disputed_pairs_with_the_reason(db, client):
    crew = AnnotatorFactory.create_batch(4)
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    steps.answer(crew[1], "Supported")
    steps.check(crew[2], "Refuted", justification="The budget shows less.")
    task = steps.take(crew[3], Phase.DISPUTE)
    client.force_login(crew[3])
    body = client.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert "Why this claim is in dispute" in body
    assert "The budget shows less." in body
    assert "What did the council&#x27;s 2019 budget say? (1)" in body
    data = post_data(
        ("What did the council's 2019 budget say? (1)", [{}]),
        ("What did the council's 2019 budget say? (2)", [{}]),
        ("Was any other parks money spent in 2019?", [{"answer_type": "Unanswerable"}]),
        verdict="Not Enough Evidence",
    )
    draft = client.post(reverse("annotation:save-draft", args=[task.pk]), data)
    assert "try to add the missing evidence" in draft.content.decode()
    client.post(
        reverse("annotation:check-evidence", args=[task.pk]), {**data, "draft_version": "1"}
    )
    client.post(reverse("annotation:confirm-evidence", args=[task.pk]), {"draft_version": "2"})
    claim.refresh_from_db()
    assert claim.state == Claim.State.POST_CONTROL
    revised = claim.evidence_rounds.get(phase=Phase.DISPUTE)
    assert revised.questions.count() == 3 and revised.based_on.phase == Phase.QUESTIONS


def test_an_answer_without_a_kind_is_refused_not_dropped(logged_in, p2_task):
    data = post_data(("How much was spent?", [{}]), ("Who approved it?", [{}]))
    del data["q-1-a-0-answer_type"]
    response = logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), data)
    assert response.status_code == 422
    assert "Choose the kind of answer" in response.content.decode()
    p2_task.refresh_from_db()
    kept = p2_task.draft["questions"][1]["answers"][0]
    assert kept["text"] == "The 2019 budget lists 2.1 million pounds for parks."


def test_a_refused_submit_lists_every_problem_at_the_top_linking_to_its_field(logged_in, p2_task):
    data = post_data(
        ("How much did the council budget for parks in 2019?", [{"source_url": ""}]),
        ("", [{}]),
        verdict="",
    )
    response = logged_in.post(reverse("annotation:check-evidence", args=[p2_task.pk]), data)
    body = response.content.decode()
    assert response.status_code == 422
    summary = body[
        body.index('id="error-summary"') : body.index("</div>", body.index('id="error-summary"'))
    ]
    assert 'href="#q-0-a-0-source_url"' in summary and "Give the address of the source." in summary
    assert 'href="#q-1-text"' in summary and "Write the question." in summary
    assert 'href="#verdict"' in summary
    assert body.index('id="error-summary"') < body.index('id="questions"')


@pytest.mark.parametrize(
    ("url", "message", "blocking"),
    [
        ("https://www.snopes.com/fact-check/parks/", "fact-checking site", True),
        ("https://fullfact.org/online/parks-spending/", "own fact-checking article", True),
        ("https://www.theonion.com/parks", "misinformation or satire", False),
        ("https://council.example.gov/budget-2019", "", False),
    ],
)
def test_a_source_address_is_checked_as_soon_as_it_is_entered(
    logged_in, p2_task, url, message, blocking
):
    FactCheckingDomain.objects.get_or_create(domain="snopes.com")
    MisinformationDomain.objects.get_or_create(domain="theonion.com")
    response = logged_in.get(
        reverse("annotation:source-check", args=[p2_task.pk]), {"q-3-a-1-source_url": url}
    )
    body = response.content.decode()
    assert response.status_code == 200
    if message:
        assert message in body
        assert ('class="errors"' in body) is blocking
    else:
        assert "<p" not in body


def test_the_source_check_is_405_for_post_and_404_for_someone_else(
    logged_in, p2_task, second_annotator, client
):
    url = reverse("annotation:source-check", args=[p2_task.pk])
    assert logged_in.post(url, {"source_url": "https://x.org"}).status_code == 405
    client.force_login(second_annotator)
    assert client.get(url, {"source_url": "https://x.org"}).status_code == 404


class _OneResultEngine:
    """Stands in for a search engine that found exactly one page."""

    name = "one-result"

    def __init__(self, uses_country: bool) -> None:
        self.uses_country = uses_country
        self.countries: list = []

    def search(self, query, *, before, country, page):
        self.countries.append(country)
        return [
            SearchResult(
                title="Council budget 2019",
                url="https://council.example.gov/budget-2019",
                snippet="Parks: 2.1 million pounds.",
                published=datetime.date(2019, 3, 1),
                date_source="metadata",
                rank=1,
            )
        ]


def test_the_country_box_shows_only_for_engines_that_use_it(logged_in, p2_task, monkeypatch):
    page = reverse("annotation:task", args=[p2_task.pk])
    monkeypatch.setattr(service, "get_backend", lambda name=None: _OneResultEngine(False))
    assert 'name="country"' not in logged_in.get(page).content.decode()
    engine = _OneResultEngine(True)
    monkeypatch.setattr(service, "get_backend", lambda name=None: engine)
    body = logged_in.get(page).content.decode()
    assert '<option value="GB" selected>United Kingdom</option>' in body
    # Choosing "any country" is honoured rather than replaced by the claim's location.
    logged_in.get(reverse("annotation:search-panel", args=[p2_task.pk]), {"q": "a", "country": ""})
    assert engine.countries == [None]


def test_a_search_with_one_result_offers_no_next_page(logged_in, p2_task, monkeypatch):
    monkeypatch.setattr(service, "get_backend", lambda name=None: _OneResultEngine(False))
    body = logged_in.get(
        reverse("annotation:search-panel", args=[p2_task.pk]), {"q": "parks budget"}
    ).content.decode()
    assert "Council budget 2019" in body
    assert "next →" not in body


def test_a_reopened_dispute_names_the_rounds_gives_the_reason_and_marks_flagged_questions(
    client, manager
):
    from annotation import workflow

    crew = AnnotatorFactory.create_batch(6)
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    steps.answer(crew[1], "Supported")
    steps.check(crew[2], "Refuted")
    steps.resolve(crew[3], "Refuted")
    task = steps.take(crew[4], Phase.POST_CONTROL)
    workflow.submit_post_control(
        task,
        steps.verdict(
            "Supported",
            flags=[workflow.FlagData(code="question_unrelated", question_position=1)],
        ),
    )
    claim.refresh_from_db()
    workflow.reopen_discarded_claim(claim, manager, "P5 misread the budget")
    p4 = steps.take(crew[5], Phase.DISPUTE)
    client.force_login(crew[5])
    body = client.get(reverse("annotation:task", args=[p4.pk])).content.decode()
    dispute = body[body.index('id="dispute"') : body.index('class="split"')]
    assert "P5 misread the budget" in dispute
    assert "earlier dispute resolution (P4)" in dispute and "Post-control (P5)" in dispute
    assert "First round" not in dispute
    cards = body.split("data-question>")
    assert "flagged by the checker" in cards[2] and "flagged by the checker" not in cards[1]


def test_the_evidence_screen_limits_each_text_as_the_rules_do(db, client):
    crew = AnnotatorFactory.create_batch(2)
    steps.new_article()
    steps.normalise(crew[0])
    task = steps.take(crew[1], Phase.QUESTIONS)
    client.force_login(crew[1])

    body = client.get(reverse("annotation:task", args=[task.pk])).content.decode()

    for name, limit in [("q-0-text", "question"), ("q-0-a-0-text", "answer")]:
        assert re.search(rf'name="{name}"[^>]*maxlength="{TEXT_LIMITS[limit]}"', body), name
