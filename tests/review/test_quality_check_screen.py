"""The blind quality-check screens (P3, P5) and the managers' claim history."""

import pytest
from django.urls import reverse

from annotation.models import Claim, Task
from annotation.vocabulary import CLAIM_TOO_VAGUE, Phase
from review.models import ProblemFlag
from tests import steps
from tests.factories import AnnotatorFactory


@pytest.fixture
def crew(db):
    return AnnotatorFactory.create_batch(5)


@pytest.fixture
def p3_task(crew):
    steps.new_article()
    steps.normalise(crew[0])
    steps.answer(crew[1], "Supported")
    return steps.take(crew[2], Phase.QUALITY_CHECK)


@pytest.fixture
def checker(client, crew):
    client.force_login(crew[2])
    return client


def submit(client, task, **fields):
    data = {"draft_version": str(Task.objects.get(pk=task.pk).draft_version), **fields}
    return client.post(reverse("review:submit-check", args=[task.pk]), data)


def test_the_check_page_shows_the_claim_pairs_and_flag_boxes(checker, p3_task):
    body = checker.get(reverse("annotation:task", args=[p3_task.pk])).content.decode()
    assert "The council spent 4 million on parks in 2019." in body
    assert "What did the council&#x27;s 2019 budget say? (2)" in body
    assert 'name="flag-q-1-a-0"' in body and 'name="flag-claim"' in body
    assert "common-sense knowledge" in body
    assert CLAIM_TOO_VAGUE not in body  # only P5 offers it


def test_an_agreeing_check_with_flags_accepts_the_claim(checker, p3_task):
    response = submit(
        checker,
        p3_task,
        verdict="Supported",
        justification="The budget line matches the claim.",
        **{"flag-claim": "claim_ambiguous", "flag-q-1": "question_unrelated"},
        **{"flag-q-0-a-0": ["source_may_be_biased", "answer_unrelated"]},
    )
    assert response.status_code == 302
    claim = Claim.objects.get(pk=p3_task.claim_id)
    assert claim.state == Claim.State.ACCEPTED
    codes = sorted(ProblemFlag.objects.values_list("code", flat=True))
    assert codes == [
        "answer_unrelated",
        "claim_ambiguous",
        "question_unrelated",
        "source_may_be_biased",
    ]


def test_a_disagreeing_check_opens_a_dispute(checker, p3_task):
    submit(checker, p3_task, verdict="Refuted", justification="The budget says 2.1 million.")
    assert Claim.objects.get(pk=p3_task.claim_id).state == Claim.State.DISPUTE


def test_unreadable_needs_no_verdict_or_justification(checker, p3_task):
    assert submit(checker, p3_task, unreadable="on").status_code == 302
    check = Claim.objects.get(pk=p3_task.claim_id).quality_checks.get()
    assert check.unreadable and check.verdict is None


def test_unreadable_is_one_of_the_verdict_choices(checker, p3_task):
    assert submit(checker, p3_task, verdict="unreadable").status_code == 302
    check = Claim.objects.get(pk=p3_task.claim_id).quality_checks.get()
    assert check.unreadable and check.verdict is None


def test_a_verdict_and_unreadable_together_are_refused_not_guessed(checker, p3_task):
    response = submit(
        checker, p3_task, verdict="Supported", unreadable="on", justification="It matches."
    )
    assert response.status_code == 422
    assert "not both" in response.content.decode()
    assert not Claim.objects.get(pk=p3_task.claim_id).quality_checks.exists()


def test_a_second_submit_from_a_stale_tab_is_refused_again(checker, p3_task):
    draft = reverse("annotation:save-draft", args=[p3_task.pk])
    saved = checker.post(draft, {"draft_version": "0", "justification": "tab A words"})
    assert saved.status_code == 200
    fields = {"draft_version": "0", "verdict": "Refuted", "justification": "tab B words"}
    url = reverse("review:submit-check", args=[p3_task.pk])
    first = checker.post(url, fields)
    assert first.status_code == 409
    # The refused page keeps the tab on the version it was built on...
    assert 'name="draft_version" id="draft-version" value="0"' in first.content.decode()
    assert "tab A words" in first.content.decode() and "tab B words" in first.content.decode()
    # ...so sending it again is refused again, and tab A's words stay.
    assert checker.post(url, fields).status_code == 409
    p3_task.refresh_from_db()
    assert p3_task.status == Task.Status.IN_PROGRESS
    assert p3_task.draft["justification"] == "tab A words"
    # Keeping this tab's version is an explicit choice naming the version it replaces.
    assert checker.post(url, {**fields, "keep_version": "1"}).status_code == 302
    assert Claim.objects.get(pk=p3_task.claim_id).quality_checks.get().justification == (
        "tab B words"
    )


def test_the_conflict_screen_is_405_for_get(checker, p3_task):
    assert checker.get(reverse("review:submit-check", args=[p3_task.pk])).status_code == 405


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"justification": "Because."}, "Choose a verdict"),
        ({"verdict": "Supported"}, "Explain how the answers lead"),
        ({"verdict": CLAIM_TOO_VAGUE, "justification": "Vague."}, "Choose a verdict"),
    ],
)
def test_an_incomplete_check_is_refused_and_its_draft_kept(checker, p3_task, fields, message):
    response = submit(checker, p3_task, **fields)
    assert response.status_code == 422
    assert message in response.content.decode()
    p3_task.refresh_from_db()
    assert p3_task.status == Task.Status.IN_PROGRESS
    assert p3_task.draft["justification"] == fields.get("justification", "")


def test_a_stale_tab_cannot_submit_a_check(checker, p3_task):
    checker.post(
        reverse("annotation:save-draft", args=[p3_task.pk]),
        {"draft_version": "0", "justification": "first tab"},
    )
    response = checker.post(
        reverse("review:submit-check", args=[p3_task.pk]),
        {"draft_version": "0", "verdict": "Supported", "justification": "second tab"},
    )
    assert response.status_code == 409
    assert Claim.objects.get(pk=p3_task.claim_id).state == Claim.State.QUALITY_CHECK


def test_post_control_offers_claim_too_vague_which_discards(client, crew):
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    steps.answer(crew[1], "Supported")
    steps.check(crew[2], "Refuted")
    steps.resolve(crew[3], "Refuted")
    task = steps.take(crew[4], Phase.POST_CONTROL)
    client.force_login(crew[4])
    body = client.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert CLAIM_TOO_VAGUE in body
    assert "(3)" in body  # P4's three revised questions are the ones shown
    submit(client, task, verdict=CLAIM_TOO_VAGUE, justification="Best for whom?")
    claim.refresh_from_db()
    assert claim.state == Claim.State.DISCARDED


def test_the_check_endpoint_is_only_for_the_tasks_own_checker(client, crew, p3_task):
    client.force_login(crew[1])
    assert submit(client, p3_task, unreadable="on").status_code == 404
    client.force_login(crew[2])
    assert client.get(reverse("review:submit-check", args=[p3_task.pk])).status_code == 405


def test_the_claim_history_shows_every_round_side_by_side(client, crew, manager):
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    steps.answer(crew[1], "Supported")
    steps.check(crew[2], "Refuted", justification="P3 reasons.")
    steps.resolve(crew[3], "Refuted")
    steps.post_control(crew[4], "Refuted", justification="P5 reasons.")
    client.force_login(manager)
    response = client.get(reverse("review:claim-history", args=[claim.pk]))
    body = response.content.decode()
    for person in crew:
        assert person.username in body
    assert "P3 reasons." in body and "P5 reasons." in body
    assert "added" in body  # P4 added a third question
    assert "after re-annotation" in body
    diff = next(card.diff for card in response.context["cards"] if getattr(card, "diff", None))
    assert [row["status"] for row in diff] == ["kept", "kept", "added"]


def test_the_claim_history_is_for_managers_only(client, annotator, db):
    client.force_login(annotator)
    assert client.get(reverse("review:claim-history", args=[1])).status_code == 403


def test_an_unanswerable_answer_offers_no_source_flags(checker, p3_task):
    from annotation.models import Answer

    answer = Answer.objects.get(question__position=1, question__evidence_round__phase=2)
    answer.answer_type, answer.text, answer.source_url = (
        "Unanswerable",
        "No answer could be found.",
        "",
    )
    answer.save()
    body = checker.get(reverse("annotation:task", args=[p3_task.pk])).content.decode()
    first = body[body.index('name="flag-q-0-a-0"') : body.index('name="flag-q-1"')]
    unanswerable = body[body.index('name="flag-q-1-a-0"') : body.index('id="verdict"')]
    assert "source may be biased" in first
    assert "source may be biased" not in unanswerable
    assert "the source does not support it" not in unanswerable
    assert "answer not understandable" in unanswerable


def test_a_refused_check_lists_what_to_fix_with_links_to_the_fields(checker, p3_task):
    response = submit(checker, p3_task)
    assert response.status_code == 422
    page = response.content.decode()
    summary = page[page.index('id="error-summary"') :]
    summary = summary[: summary.index("</div>")]
    assert "2 things to fix before submitting" in summary
    assert 'href="#verdict">Verdict: Choose a verdict' in summary
    assert 'href="#justification">Justification: Explain' in summary
