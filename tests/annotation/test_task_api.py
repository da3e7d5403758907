"""The task API under /api/v1/: token auth, own tasks only, next, draft, submit per phase."""

import dataclasses
import datetime
import json

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation import assignment, workflow
from annotation.models import Article, Claim, DraftRevision, EvidenceRound, Task
from annotation.vocabulary import CLAIM_TOO_VAGUE, Phase, Verdict
from review.models import QualityCheck
from tests import steps
from tests.factories import AnnotatorFactory

NEXT = reverse("api:task-next")
TASKS = reverse("api:task-list")


def detail(task) -> str:
    return reverse("api:task-detail", args=[task.pk])


def draft(task) -> str:
    return reverse("api:task-draft", args=[task.pk])


def submit(task) -> str:
    return reverse("api:task-submit", args=[task.pk])


def signed_in(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def api(annotator) -> APIClient:
    return signed_in(annotator)


@pytest.fixture
def claim_in_p2(second_annotator) -> Claim:
    steps.new_article()
    (claim,) = steps.normalise(second_annotator)
    return claim


def evidence_payload(verdict=Verdict.REFUTED, **answer_overrides) -> dict:
    answer = {
        "text": "The 2019 budget lists 2.1 million for parks.",
        "answer_type": "Extractive",
        "source_url": "https://council.example.gov/budget-2019",
        "source_medium": "Web text",
        **answer_overrides,
    }
    return {
        "questions": [{"text": "How much did the council spend on parks?", "answers": [answer]}],
        "verdict": verdict,
        "pairs_support_verdict": True,
    }


def claim_payload(text="The council spent 4 million on parks in 2019.", **overrides) -> dict:
    return {
        "text": text,
        "fact_checker_label": "Refuted",
        "claim_date": "2020-10-31",
        "claim_types": ["Numerical Claim"],
        "fact_checking_strategies": ["Written Evidence"],
        "speaker": "A council member",
        "location_iso_code": "GB",
        **overrides,
    }


def error_at(response, path: list) -> list:
    """The messages at a field path such as ["questions", 0, "answers"] of a 400 answer."""
    assert response.status_code == 400, response.content
    errors = response.json()
    for key in path:
        errors = errors[str(key)]  # nested lists report their errors keyed by position
    return errors


def start(client: APIClient, phase: int) -> Task:
    response = client.post(NEXT, {"phase": phase}, format="json")
    assert response.status_code == 200, response.content
    return Task.objects.get(pk=response.json()["id"])


# --- Signing in -------------------------------------------------------------------------


def test_a_token_from_username_and_password_opens_the_api(annotator):
    client = APIClient()
    response = client.post(
        reverse("api:token"),
        {"username": "alice", "password": "correct horse battery"},
        format="json",
    )
    assert response.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    response = client.get(TASKS)
    assert response.status_code == 200
    assert response.json()["results"] == []


def test_a_wrong_password_gets_no_token(annotator):
    response = APIClient().post(
        reverse("api:token"), {"username": "alice", "password": "wrong"}, format="json"
    )
    assert response.status_code == 400
    assert "token" not in response.json()


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", TASKS),
        ("post", NEXT),
        ("get", "/api/v1/tasks/1/"),
        ("post", "/api/v1/tasks/1/submit/"),
    ],
)
def test_without_credentials_the_api_answers_401(db, method, url):
    response = getattr(APIClient(), method)(url, {}, format="json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")


def test_an_unknown_token_is_refused(db):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get(TASKS).status_code == 401


# --- Own tasks only ---------------------------------------------------------------------


@pytest.mark.parametrize("caller", ["second_annotator", "manager"])
def test_someone_elses_task_is_not_found_even_by_a_manager(request, annotator, caller):
    steps.new_article()
    task = steps.take(annotator, Phase.NORMALISATION)
    client = signed_in(request.getfixturevalue(caller))
    assert client.get(detail(task)).status_code == 404
    response = client.put(draft(task), {"draft": {"x": 1}, "version": 0}, format="json")
    assert response.status_code == 404
    skip = {"skip": {"reason": "paywall", "note": ""}}
    assert client.post(submit(task), skip, format="json").status_code == 404
    assert client.get(TASKS).json()["results"] == []
    task.refresh_from_db()
    assert task.status == Task.Status.IN_PROGRESS and task.draft == {}


def test_wrong_methods_are_refused_with_405(api):
    steps.new_article()
    task = start(api, Phase.NORMALISATION)
    assert api.get(NEXT).status_code == 405
    assert api.post(TASKS, {}, format="json").status_code == 405
    assert api.delete(detail(task)).status_code == 405
    assert api.patch(detail(task), {}, format="json").status_code == 405
    assert api.post(draft(task), {}, format="json").status_code == 405
    assert api.get(submit(task)).status_code == 405


def test_my_tasks_can_be_filtered_by_phase_and_status(api, annotator, claim_in_p2):
    steps.new_article()
    p1 = start(api, Phase.NORMALISATION)
    p2 = start(api, Phase.QUESTIONS)
    api.post(submit(p2), evidence_payload(), format="json")
    assert [t["id"] for t in api.get(TASKS).json()["results"]] == [p2.pk, p1.pk]
    by_phase = api.get(TASKS, {"phase": 1}).json()["results"]
    assert [t["id"] for t in by_phase] == [p1.pk]
    submitted = api.get(TASKS, {"status": "submitted"}).json()["results"]
    assert [(t["id"], t["phase"]) for t in submitted] == [(p2.pk, 2)]
    response = api.get(TASKS, {"status": "finished"})
    assert response.status_code == 400 and "status" in response.json()


# --- Start next -------------------------------------------------------------------------


def test_next_resumes_the_task_in_progress_before_taking_another(api):
    steps.new_article()
    steps.new_article()
    first = start(api, Phase.NORMALISATION)
    assert start(api, Phase.NORMALISATION) == first


def test_next_answers_409_with_the_reason_when_there_is_no_work(api):
    response = api.post(NEXT, {"phase": 2}, format="json")
    assert response.status_code == 409
    assert response.json() == {"detail": "No phase 2 work is waiting for you right now."}


def test_next_tells_an_unqualified_annotator_to_ask_a_manager(outsider):
    response = signed_in(outsider).post(NEXT, {"phase": 1}, format="json")
    assert response.status_code == 409
    assert "not qualified for phase 1" in response.json()["detail"]


def test_next_needs_a_real_phase(api):
    response = api.post(NEXT, {"phase": 6}, format="json")
    assert response.status_code == 400 and "phase" in response.json()


def test_opening_a_task_in_progress_extends_its_lease_unless_it_has_lapsed(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    soon = timezone.now() + datetime.timedelta(minutes=1)
    Task.objects.filter(pk=task.pk).update(lease_expires_at=soon)
    api.get(detail(task))
    task.refresh_from_db()
    assert task.lease_expires_at > soon + datetime.timedelta(minutes=30)
    lapsed = timezone.now() - datetime.timedelta(minutes=1)
    Task.objects.filter(pk=task.pk).update(lease_expires_at=lapsed)
    api.get(detail(task))
    task.refresh_from_db()
    assert task.lease_expires_at == lapsed  # left for the sweeper to return to the pool


# --- P2: next, draft, submit ------------------------------------------------------------


def test_an_annotator_takes_saves_and_submits_evidence_and_the_claim_moves_to_p3(api, claim_in_p2):
    response = api.post(NEXT, {"phase": 2}, format="json")
    assert response.status_code == 200
    page = response.json()
    assert page["phase"] == 2 and page["status"] == "in_progress"
    assert page["claim"]["text"] == claim_in_p2.text
    assert page["article"] == {"url": claim_in_p2.article.url}
    assert "fact_checker_label" not in page["claim"]
    task_url = detail(Task.objects.get(pk=page["id"]))

    saved = api.put(
        f"{task_url}draft/", {"draft": {"questions": ["How much?"]}, "version": 0}, format="json"
    )
    assert saved.status_code == 200 and saved.json()["draft_version"] == 1
    assert DraftRevision.objects.get(pk=saved.json()["revision"]).content == {
        "questions": ["How much?"]
    }
    reopened = api.get(task_url).json()
    assert reopened["draft"] == {"questions": ["How much?"]} and reopened["draft_version"] == 1

    response = api.post(f"{task_url}submit/", evidence_payload(), format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "submitted" and body["result"]["verdict"] == "Refuted"
    assert body["result"]["questions"][0]["answers"][0]["source_medium"] == "Web text"
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.QUALITY_CHECK
    assert Task.objects.filter(
        claim=claim_in_p2, phase=Phase.QUALITY_CHECK, status=Task.Status.POOLED
    ).exists()


def test_a_stale_draft_is_refused_with_the_current_version(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    first = api.put(draft(task), {"draft": {"v": "tab one"}, "version": 0}, format="json")
    assert first.status_code == 200
    response = api.put(draft(task), {"draft": {"v": "tab two"}, "version": 0}, format="json")
    assert response.status_code == 409
    assert response.json()["draft_version"] == 1
    assert "saved elsewhere" in response.json()["detail"]
    assert response.json()["draft"] == {"v": "tab one"}  # what to show beside the tab's own
    assert response.json()["saved_at"]
    task.refresh_from_db()
    assert task.draft == {"v": "tab one"}


def test_a_submission_naming_a_stale_version_is_refused_with_the_latest(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    api.put(draft(task), {"draft": {"v": "tab one"}, "version": 0}, format="json")
    response = api.post(submit(task), {**evidence_payload(), "draft_version": 0}, format="json")
    assert response.status_code == 409
    assert response.json()["draft"] == {"v": "tab one"}
    assert response.json()["draft_version"] == 1
    task.refresh_from_db()
    assert task.status == Task.Status.IN_PROGRESS
    fresh = api.post(submit(task), {**evidence_payload(), "draft_version": 1}, format="json")
    assert fresh.status_code == 200


def test_the_draft_of_a_submitted_task_cannot_change(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    api.post(submit(task), evidence_payload(), format="json")
    response = api.put(draft(task), {"draft": {}, "version": 0}, format="json")
    assert response.status_code == 409
    assert response.json()["status"] == "submitted"
    assert "handed in from another tab or window" in response.json()["detail"]
    kept = DraftRevision.objects.get(pk=response.json()["revision"])
    assert kept.outcome == DraftRevision.Outcome.REFUSED_CLOSED


def test_a_draft_must_be_an_object_with_a_version(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    response = api.put(draft(task), {"draft": ["not", "an", "object"]}, format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"draft", "version"}


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        (evidence_payload(answer_type="Boolean"), ["questions", 0, "answers", 0]),
        (evidence_payload(source_medium="Papyrus"), ["questions", 0, "answers", 0]),
        (evidence_payload(source_url=""), ["questions", 0, "answers", 0]),
        ({**evidence_payload(), "verdict": CLAIM_TOO_VAGUE}, ["verdict"]),
        ({**evidence_payload(), "questions": []}, ["questions"]),
        (
            {**evidence_payload(), "questions": [{"text": "Why?", "answers": []}]},
            ["questions", 0, "answers"],
        ),
        (evidence_payload(text="a" * 5_001), ["questions", 0, "answers", 0, "text"]),
        (
            {
                **evidence_payload(),
                "questions": [
                    {**evidence_payload()["questions"][0], "text": "Why was that? " * 100}
                ],
            },
            ["questions", 0, "text"],
        ),
        ({**evidence_payload(), "claim_correction": "b" * 1_001}, ["claim_correction"]),
    ],
)
def test_invalid_evidence_is_refused_naming_the_field(api, claim_in_p2, payload, path):
    task = start(api, Phase.QUESTIONS)
    assert error_at(api.post(submit(task), payload, format="json"), path)
    task.refresh_from_db()
    assert task.status == Task.Status.IN_PROGRESS
    assert not EvidenceRound.objects.exists()


def test_a_boolean_answer_needs_its_explanation(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    response = api.post(submit(task), evidence_payload(answer_type="Boolean"), format="json")
    assert error_at(response, ["questions", 0, "answers", 0, "boolean_explanation"])
    payload = evidence_payload(
        answer_type="Boolean", text="No", boolean_explanation="The budget says no."
    )
    assert api.post(submit(task), payload, format="json").status_code == 200


def test_the_evidence_rules_of_the_screen_apply_to_the_api(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    payload = evidence_payload(source_url=claim_in_p2.article.url)
    response = api.post(submit(task), payload, format="json")
    assert response.status_code == 400
    message = error_at(response, ["questions", 0, "answers", 0, "source_url"])[0]
    assert "own fact-checking article" in message


def test_an_unanswerable_answer_gets_the_dataset_text(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    payload = evidence_payload(answer_type="Unanswerable", text="", source_url="", source_medium="")
    # With no answer at all, at least five questions must have been tried.
    payload["questions"] = payload["questions"] * 5
    response = api.post(submit(task), payload, format="json")
    assert response.status_code == 200
    answer = response.json()["result"]["questions"][0]["answers"][0]
    assert answer["text"] == "No answer could be found."


def test_submitting_the_same_work_again_is_harmless(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    first = api.post(submit(task), evidence_payload(Verdict.REFUTED), format="json")
    again = api.post(submit(task), evidence_payload(Verdict.REFUTED), format="json")
    assert first.status_code == again.status_code == 200
    assert again.json()["result"] == first.json()["result"]
    assert claim_in_p2.evidence_rounds.count() == 1
    assert Task.objects.filter(claim=claim_in_p2, phase=Phase.QUALITY_CHECK).count() == 1


def test_other_work_arriving_after_the_hand_in_is_kept_and_refused_with_409(api, claim_in_p2):
    task = start(api, Phase.QUESTIONS)
    first = api.post(submit(task), evidence_payload(Verdict.REFUTED), format="json")
    late = api.post(submit(task), evidence_payload(Verdict.SUPPORTED), format="json")
    assert first.status_code == 200
    assert late.status_code == 409
    body = late.json()
    assert "handed in from another tab or window" in body["detail"]
    assert body["status"] == Task.Status.SUBMITTED
    kept = DraftRevision.objects.get(pk=body["revision"])
    assert kept.outcome == DraftRevision.Outcome.REFUSED_CLOSED
    assert kept.content["verdict"] == Verdict.SUPPORTED
    assert claim_in_p2.evidence_rounds.get().verdict == Verdict.REFUTED


def test_a_task_assigned_but_not_opened_cannot_be_submitted(api, annotator, manager, claim_in_p2):
    (task,) = assignment.assign_tasks(manager, Phase.QUESTIONS, [annotator], 1)[annotator]
    response = api.post(submit(task), evidence_payload(), format="json")
    assert response.status_code == 409
    assert "only a task in progress can be submitted" in response.json()["detail"]
    assert start(api, Phase.QUESTIONS) == task  # opening it through next makes it submittable
    assert api.post(submit(task), evidence_payload(), format="json").status_code == 200


# --- P1 ---------------------------------------------------------------------------------


def test_p1_shows_the_article_and_its_claimreview_metadata(api):
    article = steps.new_article(claimreview_claim="Parks got 4 million", claimreview_rating="False")
    page = api.post(NEXT, {"phase": 1}, format="json").json()
    assert page["article"]["url"] == article.url
    assert page["article"]["claimreview_claim"] == "Parks got 4 million"
    assert page["article"]["claimreview_rating"] == "False"


def test_p1_splits_an_article_into_two_claims(api):
    article = steps.new_article()
    task = start(api, Phase.NORMALISATION)
    payload = {
        "claims": [
            claim_payload("The council spent 4 million on parks in 2019."),
            claim_payload(
                "The mayor said parks are the best use of money.",
                claim_types=["opinion claim"],
                location_iso_code="gb",
                speaker=None,
            ),
        ]
    }
    response = api.post(submit(task), payload, format="json")
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    assert result["article_state"] == "normalised"
    assert [c["state"] for c in result["claims"]] == ["questions", "excluded"]
    assert "Opinion Claim" in result["claims"][1]["exclusion_reason"]
    article.refresh_from_db()
    assert article.state == Article.State.NORMALISED
    first, second = article.claims.all()
    assert first.fact_checker_label == Verdict.REFUTED and str(first.claim_date) == "2020-10-31"
    assert second.claim_types == ["Opinion Claim"]
    assert second.location_iso_code == "GB" and second.speaker is None


def test_p1_skips_an_article_behind_a_paywall(api):
    article = steps.new_article()
    task = start(api, Phase.NORMALISATION)
    payload = {"skip": {"reason": "paywall", "note": ""}}
    response = api.post(submit(task), payload, format="json")
    assert response.status_code == 200
    assert response.json()["result"] == {
        "article_state": "skipped",
        "skip_reason": "paywall",
        "claims": [],
    }
    article.refresh_from_db()
    assert article.state == Article.State.SKIPPED and not article.claims.exists()


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"claims": [claim_payload(claim_types=["Rumour"])]}, ["claims", 0, "claim_types"]),
        ({"claims": [claim_payload(claim_types=[])]}, ["claims", 0, "claim_types"]),
        (
            {"claims": [claim_payload(fact_checking_strategies=[])]},
            ["claims", 0, "fact_checking_strategies"],
        ),
        ({"claims": [claim_payload(claim_date="31/10/2020")]}, ["claims", 0, "claim_date"]),
        ({"claims": [claim_payload(claim_date="2020-10-31T10:00")]}, ["claims", 0, "claim_date"]),
        ({"claims": [claim_payload(location_iso_code="GBR")]}, ["claims", 0, "location_iso_code"]),
        (
            {"claims": [claim_payload(fact_checker_label="False")]},
            ["claims", 0, "fact_checker_label"],
        ),
        ({"claims": [claim_payload(), claim_payload(text="")]}, ["claims", 1, "text"]),
        ({"claims": []}, ["claims"]),
        ({"skip": {"reason": "other", "note": " "}}, ["skip", "note"]),
        ({"skip": {"reason": "boring"}}, ["skip", "reason"]),
        ({"claims": [claim_payload()], "skip": {"reason": "paywall"}}, ["non_field_errors"]),
        ({}, ["non_field_errors"]),
    ],
)
def test_invalid_normalisation_is_refused_naming_the_field(api, payload, path):
    article = steps.new_article()
    task = start(api, Phase.NORMALISATION)
    assert error_at(api.post(submit(task), payload, format="json"), path)
    article.refresh_from_db()
    assert article.state == Article.State.AWAITING_NORMALISATION


# --- P3 to P5 ---------------------------------------------------------------------------

ARTICLE = {
    "url": "https://factcheck.example.org/2020/the-secret-article",
    "title": "Did the council really spend 4 million?",
    "publisher": "Example Fact Checks",
}


def claim_waiting_for_p3(second_annotator, manager) -> tuple[Claim, list[str]]:
    """A claim between P2 and P3, and what a blind checker must never see of it."""
    steps.new_article(**ARTICLE)
    (claim,) = steps.normalise(
        second_annotator, [steps.normalised_claim(fact_checker_label=Verdict.CONFLICTING)]
    )
    evidence = dataclasses.replace(
        steps.evidence(Verdict.NOT_ENOUGH_EVIDENCE), claim_correction="Name the council."
    )
    workflow.submit_evidence(steps.take(manager, Phase.QUESTIONS), evidence)
    secrets = [
        *ARTICLE.values(),
        "fact_checker_label",
        Verdict.CONFLICTING,
        Verdict.NOT_ENOUGH_EVIDENCE,
        "Name the council.",
        second_annotator.username,
        manager.username,
    ]
    return claim, secrets


def claim_waiting_for_p5(second_annotator, manager) -> tuple[Claim, list[str]]:
    """A claim between P4 and P5, and what a blind post-controller must never see of it."""
    carol, dave = AnnotatorFactory(username="carol"), AnnotatorFactory(username="dave")
    steps.new_article(**ARTICLE)
    (claim,) = steps.normalise(
        second_annotator, [steps.normalised_claim(fact_checker_label=Verdict.CONFLICTING)]
    )
    steps.answer(manager, Verdict.SUPPORTED)
    steps.check(carol, Verdict.REFUTED, justification="The council minutes disagree.")
    steps.resolve(dave, Verdict.NOT_ENOUGH_EVIDENCE)
    secrets = [
        *ARTICLE.values(),
        "fact_checker_label",
        Verdict.CONFLICTING,
        Verdict.SUPPORTED,
        Verdict.REFUTED,
        Verdict.NOT_ENOUGH_EVIDENCE,
        "The council minutes disagree.",
        "justification",
        *(user.username for user in (second_annotator, manager, carol, dave)),
    ]
    return claim, secrets


@pytest.mark.parametrize(
    ("phase", "build"),
    [(Phase.QUALITY_CHECK, claim_waiting_for_p3), (Phase.POST_CONTROL, claim_waiting_for_p5)],
)
def test_the_blind_phases_see_only_the_claim_its_metadata_and_the_pairs(
    api, second_annotator, manager, phase, build
):
    claim, secrets = build(second_annotator, manager)
    response = api.post(NEXT, {"phase": phase}, format="json")
    assert response.status_code == 200
    task = Task.objects.get(pk=response.json()["id"])
    for body in (response.json(), api.get(detail(task)).json()):
        text = json.dumps(body)
        for secret in [*secrets, "verdict", "article", "pairs_support_verdict", "claim_correction"]:
            assert secret not in text
        assert body["claim"]["text"] == claim.text
        assert body["claim"]["speaker"] == "A council member"
        assert body["claim"]["location_iso_code"] == "GB"
        assert body["questions"][0]["answers"][0]["source_url"].startswith("https://council.")
    expected = claim.evidence_rounds.order_by("-submitted_at").first().questions.count()
    assert len(body["questions"]) == expected


def test_a_p3_verdict_that_agrees_accepts_the_claim_and_says_nothing_of_p2(
    api, claim_in_p2, manager
):
    steps.answer(manager, Verdict.REFUTED)
    task = start(api, Phase.QUALITY_CHECK)
    payload = {
        "verdict": "Refuted",
        "justification": "The budget shows 2.1 million.",
        "flags": [
            {"code": "claim_ambiguous"},
            {"code": "question_unrelated", "question_position": 1},
            {"code": "source_may_be_biased", "question_position": 0, "answer_position": 0},
        ],
    }
    response = api.post(submit(task), payload, format="json")
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    assert result["verdict"] == "Refuted"
    assert {(f["code"], f["question_position"], f["answer_position"]) for f in result["flags"]} == {
        ("claim_ambiguous", None, None),
        ("question_unrelated", 1, None),
        ("source_may_be_biased", 0, 0),
    }
    assert "accepted" not in json.dumps(response.json())
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.ACCEPTED


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"verdict": CLAIM_TOO_VAGUE, "justification": "Too vague."}, ["verdict"]),
        ({"verdict": "Refuted", "justification": " "}, ["justification"]),
        ({"justification": "No verdict given."}, ["verdict"]),
        (
            {"unreadable": True, "flags": [{"code": "question_unrelated", "question_position": 9}]},
            ["flags", 0, "question_position"],
        ),
        (
            {"unreadable": True, "flags": [{"code": "question_unrelated"}]},
            ["flags", 0, "question_position"],
        ),
        (
            {
                "unreadable": True,
                "flags": [
                    {"code": "answer_unrelated", "question_position": 0, "answer_position": 3}
                ],
            },
            ["flags", 0, "answer_position"],
        ),
        (
            {
                "unreadable": True,
                "flags": [{"code": "claim_ambiguous"}, {"code": "claim_ambiguous"}],
            },
            ["flags", 1, "code"],
        ),
        ({"unreadable": True, "flags": [{"code": "claim_is_silly"}]}, ["flags", 0, "code"]),
        ({"unreadable": True, "verdict": "Refuted", "justification": "Both."}, ["verdict"]),
    ],
)
def test_invalid_quality_checks_are_refused_naming_the_field(
    api, claim_in_p2, manager, payload, path
):
    steps.answer(manager)
    task = start(api, Phase.QUALITY_CHECK)
    assert error_at(api.post(submit(task), payload, format="json"), path)
    assert not QualityCheck.objects.exists()


def test_an_unreadable_claim_needs_no_verdict_and_goes_to_dispute(api, claim_in_p2, manager):
    steps.answer(manager)
    task = start(api, Phase.QUALITY_CHECK)
    response = api.post(submit(task), {"unreadable": True}, format="json")
    assert response.status_code == 200
    assert response.json()["result"]["unreadable"] is True
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.DISPUTE


def test_p4_sees_the_existing_pairs_and_its_revision_goes_to_p5(api, claim_in_p2, manager):
    steps.answer(manager, Verdict.SUPPORTED)
    steps.check(AnnotatorFactory(username="carol"), Verdict.REFUTED)
    response = api.post(NEXT, {"phase": 4}, format="json")
    page = response.json()
    assert page["article"] == {"url": claim_in_p2.article.url}
    assert [q["position"] for q in page["questions"]] == [0, 1]
    assert "verdict" not in json.dumps(page) and "carol" not in json.dumps(page)
    task = Task.objects.get(pk=page["id"])
    response = api.post(submit(task), evidence_payload(Verdict.REFUTED), format="json")
    assert response.status_code == 200
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.POST_CONTROL
    assert api.get(detail(task)).json()["questions"] == page["questions"]


def test_claim_too_vague_is_a_post_control_verdict(api, second_annotator, manager):
    claim, _ = claim_waiting_for_p5(second_annotator, manager)
    task = start(api, Phase.POST_CONTROL)
    payload = {"verdict": CLAIM_TOO_VAGUE, "justification": "Which council?"}
    response = api.post(submit(task), payload, format="json")
    assert response.status_code == 200
    claim.refresh_from_db()
    assert claim.state == Claim.State.DISCARDED
