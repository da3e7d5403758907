"""annotation/visibility.py: what a person may see of a claim follows from their relation to
it (blind tasks held, submitted or possible; training items), not from their role or page.
Also the issue-23 reports: wrapped fact-check addresses reaching blind checkers, the page
viewer opening a fact-check, and blind pages built from models."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.db.models import Model, QuerySet
from django.test.signals import template_rendered
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import visibility, workflow
from annotation.blindness import HIDDEN_ADDRESS
from annotation.evidence import source_site_problems
from annotation.models import Answer, Claim, Task, User
from annotation.vocabulary import Phase, Verdict
from search_proxy.dates import DateSource
from search_proxy.models import Document
from search_proxy.webaddress import normalize_url
from tests import steps
from tests.factories import AnnotatorFactory, GoldClaimFactory

pytestmark = pytest.mark.django_db

FACT_CHECK = "https://www.factcheck.org/2020/10/canary-parks-claim/"
WRAPPED = [
    f"https://archive.ph/{FACT_CHECK}",
    f"https://web.archive.org/web/20201001000000/{FACT_CHECK}",
    f"https://www.google.com/url?q={quote(FACT_CHECK, safe='')}",
    f"https://l.facebook.com/l.php?u={quote(FACT_CHECK, safe='')}",
    "https://www-factcheck-org.translate.goog/2020/10/canary-parks-claim/?_x_tr_sl=en",
    f"https://webcache.googleusercontent.com/search?q=cache:{FACT_CHECK}",
    "https://www-factcheck-org.cdn.ampproject.org/c/s/www.factcheck.org/2020/10/canary-parks-claim/",
    "https://bit.ly/3canary",
    "https://x.com/PolitiFact/status/1234567",
]


@pytest.fixture
def crew(db):
    return [AnnotatorFactory(username=f"crew{n}") for n in range(5)]


def claim_at_p3(crew) -> tuple[Claim, Task]:
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    steps.answer(crew[1], Verdict.SUPPORTED)
    return claim, steps.take(crew[2], Phase.QUALITY_CHECK)


# --- The policy ------------------------------------------------------------------------


def test_a_claim_is_blind_to_whoever_may_still_check_it_and_open_to_its_earlier_annotators(
    crew, manager
):
    claim, _p3 = claim_at_p3(crew)
    bystander = AnnotatorFactory(username="bystander")
    researcher = AnnotatorFactory(username="rita", role=User.Role.RESEARCHER, qualified_phases=[])
    seen = {person.username: visibility.sees_in_full(person, claim) for person in crew[:3]}
    assert seen == {"crew0": True, "crew1": True, "crew2": False}
    # Anyone who may still be handed its P5 sees it blind; staff without blind phases do not.
    assert not visibility.sees_in_full(bystander, claim)
    assert visibility.sees_in_full(manager, claim)
    assert visibility.sees_in_full(researcher, claim)


def test_staff_who_hold_or_may_receive_blind_work_see_the_claim_blind(crew, manager, settings):
    claim, p3 = claim_at_p3(crew)
    # An annotator promoted to manager while holding the P3 task.
    promoted = p3.annotator
    User.objects.filter(pk=promoted.pk).update(role=User.Role.MANAGER)
    promoted.refresh_from_db()
    assert not visibility.sees_in_full(promoted, claim)
    # A manager who may take blind tasks and is qualified for them.
    settings.MANAGERS_TAKE_BLIND_TASKS = True
    assert not visibility.sees_in_full(manager, claim)
    # A researcher given P3 by a manager.
    researcher = AnnotatorFactory(role=User.Role.RESEARCHER, qualified_phases=[3])
    assert not visibility.sees_in_full(researcher, claim)


def test_a_checker_keeps_seeing_the_claim_blind_after_handing_in(crew):
    claim, p3 = claim_at_p3(crew)
    workflow.submit_quality_check(p3, steps.verdict(Verdict.SUPPORTED))
    claim.refresh_from_db()
    assert claim.state == Claim.State.ACCEPTED
    assert not visibility.sees_in_full(crew[2], claim)
    # Accepted and with no blind work left: everyone else may read it.
    assert visibility.sees_in_full(AnnotatorFactory(), claim)


def test_verdicts_show_only_for_claims_the_viewer_can_never_judge_blind(crew):
    claim, p3 = claim_at_p3(crew)
    viewer = AnnotatorFactory(username="viewer", qualified_phases=[1, 2, 3, 4, 5])
    assert not visibility.verdict_visible(viewer, claim)  # still in the workflow
    workflow.submit_quality_check(p3, steps.verdict(Verdict.SUPPORTED))
    assert visibility.verdict_visible(viewer, claim)
    # An open blind task (an agreement sample's second check) hides it again.
    Task.objects.create(
        phase=Phase.QUALITY_CHECK, article=claim.article, claim=claim, is_agreement_sample=True
    )
    assert not visibility.verdict_visible(viewer, claim)


def test_gold_verdicts_are_hidden_from_whoever_training_may_still_test_on_them(db):
    gold = GoldClaimFactory()
    trainee = AnnotatorFactory(qualified_phases=[1])
    qualified = AnnotatorFactory(qualified_phases=[1, 2, 3, 4, 5])
    assert not visibility.verdict_visible(trainee, gold)
    assert visibility.verdict_visible(qualified, gold)


# --- Issue 23, report 1: wrapped fact-check addresses -----------------------------------


@pytest.mark.parametrize("address", WRAPPED)
def test_p2_and_p4_refuse_every_wrapped_fact_check_as_a_source(crew, address):
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    problems = source_site_problems("questions.0.answers.0.source_url", address, claim)
    assert problems and problems[0].blocking, address


@pytest.mark.parametrize("phase", [Phase.QUALITY_CHECK, Phase.POST_CONTROL])
def test_a_wrapped_fact_check_on_the_claim_or_a_source_is_hidden_in_the_blind_phases(crew, phase):
    claim, task = claim_at_p3(crew)
    # Imported data or a rule added later: the addresses got in before they were refused.
    Claim.objects.filter(pk=claim.pk).update(original_claim_url=WRAPPED[0], media_url=WRAPPED[7])
    Answer.objects.filter(question__evidence_round__claim=claim).update(source_url=WRAPPED[2])
    viewer = crew[2]
    if phase == Phase.POST_CONTROL:
        workflow.submit_quality_check(task, steps.verdict(Verdict.REFUTED))
        steps.resolve(crew[3], Verdict.REFUTED)
        Answer.objects.filter(question__evidence_round__claim=claim).update(source_url=WRAPPED[4])
        task, viewer = steps.take(crew[4], Phase.POST_CONTROL), crew[4]
    api = APIClient()
    api.force_login(viewer)
    page = api.get(reverse("annotation:task", args=[task.pk])).content.decode()
    detail = api.get(f"/api/v1/tasks/{task.pk}/")
    body = page + detail.content.decode()
    for secret in ("canary-parks-claim", "bit.ly", "factcheck.org"):
        assert secret not in body, secret
    assert HIDDEN_ADDRESS in page
    data = detail.json()
    assert data["claim"]["original_claim_url"] == HIDDEN_ADDRESS
    assert {a["source_url"] for q in data["questions"] for a in q["answers"]} == {HIDDEN_ADDRESS}


# --- Issue 23, report 5: the page viewer ------------------------------------------------


def test_the_page_viewer_refuses_a_fact_check_for_everyone_and_shows_no_copy(client, crew, manager):
    steps.new_article()
    steps.normalise(crew[0])
    p2 = steps.take(crew[1], Phase.QUESTIONS)
    Document.objects.create(
        url=FACT_CHECK,
        normalized_url=normalize_url(FACT_CHECK),
        title="Canary verdict page",
        text="Our canary rating: false.",
        date_source=DateSource.UNKNOWN,
    )
    client.force_login(crew[1])
    for address in [FACT_CHECK, *WRAPPED]:
        response = client.post(reverse("annotation:open-result", args=[p2.pk]), {"url": address})
        body = response.content.decode()
        assert "will not open this page" in body, address
        assert "Canary" not in body and f'href="{address}"' not in body
    api = APIClient()
    api.force_login(manager)
    for address in WRAPPED:
        response = api.post("/api/v1/search/open/", {"url": address}, format="json")
        assert response.status_code == 422, address
        assert "Canary" not in response.content.decode()


# --- Issue 23, report 4: blind pages get no model ---------------------------------------


def models_in(value, seen=None, depth=0) -> list[str]:
    """The models and querysets reachable in a template context value (plain containers)."""
    if depth > 6:
        return []
    if isinstance(value, Model | QuerySet):
        return [type(value).__name__]
    if isinstance(value, dict):
        return [m for v in value.values() for m in models_in(v, seen, depth + 1)]
    if isinstance(value, list | tuple | set | frozenset):
        return [m for v in value for m in models_in(v, seen, depth + 1)]
    return []


# What Django's own context processors add: the signed-in user and their request.
FRAMEWORK_KEYS = {"user", "request", "perms", "messages", "DEFAULT_MESSAGE_LEVELS", "csrf_token"}


def models_given_to_templates(contexts) -> list[str]:
    found = []
    for name, context in contexts:
        flat = context.flatten()
        for key, value in flat.items():
            if key in FRAMEWORK_KEYS:
                continue
            found += [f"{name}: {key} holds a {m}" for m in models_in(value)]
    return found


@pytest.fixture
def rendered():
    contexts = []

    def record(sender, template, context, **kwargs):
        contexts.append((template.name, context))

    template_rendered.connect(record)
    yield contexts
    template_rendered.disconnect(record)


def test_no_blind_page_fragment_or_error_page_is_given_a_model(client, crew, rendered):
    _claim, task = claim_at_p3(crew)
    client.force_login(crew[2])
    client.get(reverse("annotation:task", args=[task.pk]))
    client.post(
        reverse("annotation:save-draft", args=[task.pk]),
        {"draft_version": "0", "justification": "typing"},
    )
    client.post(reverse("annotation:save-draft", args=[task.pk]), {"draft_version": "0"})
    client.post(reverse("review:submit-check", args=[task.pk]), {"draft_version": "1"})
    client.post(reverse("review:submit-check", args=[task.pk]), {"draft_version": "99"})
    workflow.submit_quality_check(task, steps.verdict(Verdict.SUPPORTED))
    client.get(reverse("annotation:task", args=[task.pk]))
    assert len(rendered) >= 6
    assert models_given_to_templates(rendered) == []


def test_the_model_check_finds_a_planted_model(crew, rendered):
    from django.template import Context

    claim, task = claim_at_p3(crew)
    planted = [("leaky.html", Context({"pairs": [{"round": task}], "claim": {"c": claim}}))]
    assert models_given_to_templates(planted) == [
        "leaky.html: pairs holds a Task",
        "leaky.html: claim holds a Claim",
    ]


# --- Staff pages and the researchers' API ask the policy too -----------------------------


def test_a_manager_promoted_while_holding_a_check_cannot_read_that_claims_history(
    client, crew, manager
):
    claim, _task = claim_at_p3(crew)
    other = APIClient()
    other.force_login(manager)  # a manager with no blind work reads it
    assert [c["id"] for c in other.get("/api/v1/claims/").json()["results"]] == [claim.pk]
    promoted = crew[2]
    promoted.role = User.Role.MANAGER
    promoted.save()
    client.force_login(promoted)
    assert client.get(reverse("review:claim-history", args=[claim.pk])).status_code == 404
    api = APIClient()
    api.force_login(promoted)
    listed = api.get("/api/v1/claims/", {"state": "quality_check"}).json()
    assert listed["results"] == []
    assert api.get(f"/api/v1/claims/{claim.pk}/").status_code == 404


# --- The policy and assignment agree ----------------------------------------------------


class _Undo(Exception):
    pass


def _would_receive(person: User, phase: int) -> Task | None:
    """The task Start next would hand `person` now, without keeping it."""
    from django.db import transaction

    from annotation import assignment

    got = None
    try:
        with transaction.atomic():
            try:
                got = assignment.next_task(person, phase)
            except assignment.NoTaskAvailable:
                got = None
            raise _Undo
    except _Undo:
        pass
    return got


@pytest.mark.parametrize("seed", range(4))
def test_whoever_start_next_would_give_a_blind_task_already_sees_that_claim_blind(
    db, settings, seed
):
    """Random worlds of claims at every stage and people of every role and qualification:
    whenever assignment would hand someone a P3/P5 task, the policy already had that claim
    blind for them (so nothing they could read before was the answer)."""
    import random

    rng = random.Random(seed)
    settings.MANAGERS_TAKE_BLIND_TASKS = rng.random() < 0.5
    crew = [AnnotatorFactory(username=f"w{seed}-{n}") for n in range(4)]
    # Later stages first: each step takes the oldest waiting task of its phase.
    stages = sorted((rng.randint(1, 3) for _ in range(5)), reverse=True)
    for n, stage in enumerate(stages):
        steps.new_article(url=f"https://fullfact.org/online/world-{seed}-{n}/")
        steps.normalise(crew[0], [steps.normalised_claim(f"Claim {n} of world {seed}.")])
        if stage == 2:
            steps.answer(crew[1], rng.choice([Verdict.REFUTED, Verdict.SUPPORTED]))
        if stage >= 3:  # P2 and P3 disagree: on to P4, then P5 waits
            steps.answer(crew[1], Verdict.REFUTED)
            steps.check(crew[2], Verdict.SUPPORTED)
            steps.resolve(crew[3], Verdict.REFUTED)
    people = [
        AnnotatorFactory(
            username=f"v{seed}-{n}",
            role=rng.choice(list(User.Role.values)),
            qualified_phases=rng.sample([1, 2, 3, 4, 5], rng.randint(0, 5)),
        )
        for n in range(6)
    ]
    handed = 0
    for person in [*people, *crew]:
        for phase in (Phase.QUALITY_CHECK, Phase.POST_CONTROL):
            blind_before = set(
                Claim.objects.filter(visibility.blind_claims_filter(person)).values_list(
                    "pk", flat=True
                )
            )
            task = _would_receive(person, phase)
            if task is not None:
                handed += 1
                assert task.claim_id in blind_before, (person.role, person.qualified_phases)
    assert handed >= 1
