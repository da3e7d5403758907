"""Pre-suggestions through the client: who sees them, the log, and the managers' switches."""

from __future__ import annotations

import datetime
import os
import re

import pytest
from django.urls import reverse

from annotation import workflow
from annotation.models import (
    Batch,
    Suggestion,
    SuggestionPoolBuild,
    SuggestionSettings,
    Task,
)
from annotation.suggestions.kinds import PHASE_KINDS, kinds_for
from annotation.suggestions.pool import build_pool, current_pool, pool_folder, run_build
from annotation.suggestions.reports import ab_report, acceptance_rates
from annotation.vocabulary import Phase, SuggestionKind, Verdict
from search_proxy.models import FetchedPage
from search_proxy.webaddress import normalize_url
from tests import steps
from tests.factories import AnnotatorFactory, QuestionFactory

EARLIER = datetime.date(2020, 9, 1)  # the pool's claims: before the tasks' claims (Oct 31)


@pytest.fixture
def pool(db, settings, tmp_path):
    """A built pool of two accepted claims with their questions."""
    settings.SUGGESTION_POOL_DIR = tmp_path / "suggestions"
    first = QuestionFactory(
        text="How much did the council spend on parks in 2019?",
        evidence_round__claim__text="The council spent 9 million pounds on parks in 2019.",
        evidence_round__claim__label=Verdict.SUPPORTED,
        evidence_round__claim__claim_date=EARLIER,
    )
    QuestionFactory(
        text="What did the budget report say about park spending?",
        evidence_round=first.evidence_round,
    )
    QuestionFactory(
        text="When did the hurricane reach Florida?",
        evidence_round__claim__text="A hurricane destroyed half of Miami in 2017.",
        evidence_round__claim__claim_date=EARLIER,
    )
    assert build_pool() == 2
    return first.evidence_round.claim


@pytest.fixture
def p2_task(pool, annotator):
    writer = AnnotatorFactory(username="p1-writer")
    steps.new_article(url="https://fullfact.org/online/parks-money/")
    steps.normalise(writer, [steps.normalised_claim("The council spent 4 million on parks.")])
    return steps.take(annotator, Phase.QUESTIONS)


def suggest(client, task, **params):
    return client.get(
        reverse("annotation:suggestions", args=[task.pk]), params, HTTP_HX_REQUEST="true"
    )


def outcome(client, suggestion, value, text=""):
    url = reverse("annotation:suggestion-outcome", args=[suggestion.task_id, suggestion.pk])
    return client.post(url, {"outcome": value, "final_text": text})


def test_the_editor_offers_suggestions_only_on_request(client, p2_task, annotator):
    client.force_login(annotator)
    page = client.get(reverse("annotation:task", args=[p2_task.pk]))
    assert b'id="suggest"' in page.content
    assert b"How much did the council spend" not in page.content
    assert not Suggestion.objects.exists()


def test_asking_shows_question_templates_and_a_query_and_logs_them_as_shown(
    client, p2_task, annotator
):
    client.force_login(annotator)
    response = suggest(client, p2_task)
    assert response.status_code == 200
    assert b"How much did the council spend on parks in 2019?" in response.content
    kinds = set(Suggestion.objects.filter(task=p2_task).values_list("kind", flat=True))
    assert kinds == {SuggestionKind.QUESTIONS, SuggestionKind.SEARCH_QUERY}
    assert all(s.outcome == "shown" for s in Suggestion.objects.all())


def test_p2_suggestions_never_carry_a_verdict(client, p2_task, annotator, pool):
    client.force_login(annotator)
    content = suggest(client, p2_task).content.decode()
    for label in Verdict.values:
        assert label not in content
    assert all("verdict" not in s.details for s in Suggestion.objects.all())


def test_accepting_then_editing_a_template_is_logged(client, p2_task, annotator):
    client.force_login(annotator)
    suggest(client, p2_task)
    template = Suggestion.objects.filter(kind=SuggestionKind.QUESTIONS).first()
    assert outcome(client, template, "accepted", template.text).status_code == 204
    edited = "How much did the council spend on parks in 2020?"
    assert outcome(client, template, "edited", edited).status_code == 204
    template.refresh_from_db()
    assert template.outcome == "edited"
    assert template.accepted_at and template.edited_at
    assert template.final_text == edited
    # An edited suggestion cannot go back to "ignored".
    outcome(client, template, "ignored")
    template.refresh_from_db()
    assert template.outcome == "edited"


def test_an_unknown_outcome_is_refused(client, p2_task, annotator):
    client.force_login(annotator)
    suggest(client, p2_task)
    template = Suggestion.objects.first()
    assert outcome(client, template, "loved").status_code == 400
    template.refresh_from_db()
    assert template.outcome == "shown"


def test_nobody_else_can_log_an_annotators_suggestion(client, p2_task, annotator, outsider):
    client.force_login(annotator)
    suggest(client, p2_task)
    template = Suggestion.objects.first()
    client.force_login(outsider)
    assert outcome(client, template, "accepted").status_code == 404
    assert client.get(reverse("annotation:suggestions", args=[p2_task.pk])).status_code == 404


def test_the_log_refuses_get_and_suggest_refuses_post(client, p2_task, annotator):
    client.force_login(annotator)
    suggest(client, p2_task)
    template = Suggestion.objects.first()
    url = reverse("annotation:suggestion-outcome", args=[p2_task.pk, template.pk])
    assert client.get(url).status_code == 405
    assert client.post(reverse("annotation:suggestions", args=[p2_task.pk])).status_code == 405


def test_handing_in_marks_suggestions_never_used_as_ignored(client, p2_task, annotator):
    client.force_login(annotator)
    suggest(client, p2_task)
    used = Suggestion.objects.filter(kind=SuggestionKind.QUESTIONS).first()
    outcome(client, used, "accepted", used.text)
    workflow.submit_evidence(p2_task, steps.evidence())
    outcomes = dict(Suggestion.objects.values_list("pk", "outcome"))
    assert outcomes.pop(used.pk) == "accepted"
    assert set(outcomes.values()) == {"ignored"}


def test_the_blind_phases_never_get_suggestions(client, pool, annotator):
    writer, answerer = AnnotatorFactory(username="w"), AnnotatorFactory(username="a")
    steps.new_article(url="https://fullfact.org/online/parks-blind/")
    steps.normalise(writer, [steps.normalised_claim("The council spent 4 million on parks.")])
    steps.answer(answerer)
    check = steps.take(annotator, Phase.QUALITY_CHECK)
    assert kinds_for(check) == ()
    client.force_login(annotator)
    assert suggest(client, check).status_code == 404
    page = client.get(reverse("annotation:task", args=[check.pk]))
    assert b"suggestion" not in page.content.lower()
    assert not Suggestion.objects.exists()
    # P5 is blind too, whatever a batch switch says.
    assert Phase.POST_CONTROL not in PHASE_KINDS
    assert Phase.QUALITY_CHECK not in PHASE_KINDS


def test_p1_gets_likely_duplicates_with_their_verdicts(client, pool, annotator):
    steps.new_article(url="https://fullfact.org/online/parks-again/")
    task = steps.take(annotator, Phase.NORMALISATION)
    client.force_login(annotator)
    page = client.get(reverse("annotation:task", args=[task.pk]))
    assert b'id="suggest"' in page.content
    response = suggest(
        client, task, text="Council spent 9 million on parks in 2019", claim_date="2020-10-31"
    )
    assert response.status_code == 200
    duplicates = Suggestion.objects.filter(kind=SuggestionKind.DUPLICATES)
    assert duplicates[0].details["claim"] == pool.pk
    assert duplicates[0].details["verdict"] == Verdict.SUPPORTED
    assert b"Supported" in response.content
    # Two earlier claims are too few to learn claim types from: none are guessed.
    assert not Suggestion.objects.filter(kind=SuggestionKind.CLAIM_LABELS).exists()


def test_p1_without_any_claim_date_asks_for_one(client, pool, annotator):
    steps.new_article(url="https://fullfact.org/online/parks-undated/", claimreview_date=None)
    task = steps.take(annotator, Phase.NORMALISATION)
    client.force_login(annotator)
    response = suggest(client, task, text="Council spent 9 million on parks in 2019")
    assert b"type the claim date first" in response.content.lower()
    assert not Suggestion.objects.exists()
    assert suggest(client, task, text="x", claim_date="31/31/2020").status_code == 422


def test_a_manager_can_switch_a_kind_off_for_a_batch(client, p2_task, annotator, manager):
    batch = Batch.objects.create(name="intake 1", kind=Batch.Kind.INTAKE)
    p2_task.article.batch = batch
    p2_task.article.save()
    client.force_login(manager)
    url = reverse("annotation:batch-suggestions", args=[batch.pk])
    response = client.post(url, {f"batch-{batch.pk}-kinds_off": [SuggestionKind.QUESTIONS]})
    assert response.status_code == 302
    client.force_login(annotator)
    suggest(client, p2_task)
    assert set(Suggestion.objects.values_list("kind", flat=True)) == {SuggestionKind.SEARCH_QUERY}


def test_asking_again_shows_the_same_suggestions_and_logs_them_once(client, p2_task, annotator):
    client.force_login(annotator)
    first = suggest(client, p2_task).content
    template = Suggestion.objects.filter(kind=SuggestionKind.QUESTIONS).first()
    outcome(client, template, "accepted", template.text)
    shown = Suggestion.objects.count()
    for _ in range(3):
        assert suggest(client, p2_task).content.count(b"data-suggestion ") == first.count(
            b"data-suggestion "
        )
    assert Suggestion.objects.count() == shown
    rates = {r.kind: r for r in acceptance_rates()}
    assert rates[SuggestionKind.QUESTIONS].shown == len(
        Suggestion.objects.filter(kind=SuggestionKind.QUESTIONS)
    )
    assert rates[SuggestionKind.QUESTIONS].accepted == 1
    template.refresh_from_db()
    assert template.outcome == "accepted"  # asking again does not reset what was done


def test_a_task_draws_its_arm_once_when_created_and_keeps_it(monkeypatch, db):
    batch = Batch.objects.create(name="intake ab", kind=Batch.Kind.INTAKE)
    SuggestionSettings.objects.create(batch=batch, ab_split=True)
    draws = iter([0, 1, 0, 1])
    monkeypatch.setattr("annotation.models.secrets.randbelow", lambda n: next(draws))
    tasks = [
        steps.new_article(url=f"https://fullfact.org/online/ab-arm-{n}/", batch=batch).tasks.get()
        for n in range(4)
    ]
    arms = [t.suggestion_arm for t in tasks]
    assert arms == ["without", "with", "without", "with"]
    assert [bool(kinds_for(t)) for t in tasks] == [False, True, False, True]
    # Switching the split off changes no recorded arm: the control tasks stay without.
    SuggestionSettings.objects.filter(batch=batch).update(ab_split=False)
    for task in tasks:
        task.refresh_from_db()
        task.save()
    assert [t.suggestion_arm for t in tasks] == arms
    assert kinds_for(tasks[0]) == ()
    # A task created while the split is off is in no arm and gets suggestions.
    later = steps.new_article(url="https://fullfact.org/online/ab-after/", batch=batch).tasks.get()
    assert later.suggestion_arm == ""
    assert kinds_for(later)


def test_a_control_task_gets_no_suggestions(client, pool, annotator):
    batch = Batch.objects.create(name="intake control", kind=Batch.Kind.INTAKE)
    writer = AnnotatorFactory(username="p1-writer")
    steps.new_article(url="https://fullfact.org/online/parks-control/", batch=batch)
    steps.normalise(writer, [steps.normalised_claim("The council spent 4 million on parks.")])
    task = steps.take(annotator, Phase.QUESTIONS)
    Task.objects.filter(pk=task.pk).update(suggestion_arm=Task.SuggestionArm.WITHOUT)
    task.refresh_from_db()
    client.force_login(annotator)
    assert suggest(client, task).status_code == 404
    page = client.get(reverse("annotation:task", args=[task.pk]))
    assert b'id="suggest"' not in page.content


def test_the_ab_report_reads_the_recorded_arms_even_after_the_split_is_off(client, pool, manager):
    batch = Batch.objects.create(name="intake report", kind=Batch.Kind.INTAKE)
    SuggestionSettings.objects.create(batch=batch, ab_split=True)
    for n in range(3):
        # Fresh people per article: nobody may see claims of the same article twice.
        writer, answerer, checker = (AnnotatorFactory(username=f"p{n}{i}") for i in range(3))
        steps.new_article(url=f"https://fullfact.org/online/ab-{n}/", batch=batch)
        steps.normalise(writer, [steps.normalised_claim(f"Claim number {n} about parks.")])
        task = Task.objects.get(phase=Phase.QUESTIONS, status=Task.Status.POOLED)
        # The arms of the P2 tasks: with, without, without, whatever their ids' parity.
        task.suggestion_arm = "with" if n == 0 else "without"
        task.save(update_fields=["suggestion_arm"])
        steps.answer(answerer)
        # The P2 verdict is Refuted: the first check agrees, the others do not.
        steps.check(checker, Verdict.REFUTED if n == 0 else Verdict.SUPPORTED)
    SuggestionSettings.objects.filter(batch=batch).update(ab_split=False)
    by_arm = {r.arm: r for r in ab_report()}
    assert (by_arm["with suggestions"].tasks, by_arm["without suggestions"].tasks) == (1, 2)
    assert (by_arm["with suggestions"].agreeing, by_arm["without suggestions"].agreeing) == (1, 0)
    assert all(r.mean_minutes is not None for r in by_arm.values())
    client.force_login(manager)
    page = client.get(reverse("annotation:manage-suggestions"))
    assert b"without suggestions" in page.content


def test_the_manager_page_shows_acceptance_rates(client, p2_task, annotator, manager):
    client.force_login(annotator)
    suggest(client, p2_task)
    template = Suggestion.objects.filter(kind=SuggestionKind.QUESTIONS).first()
    outcome(client, template, "accepted", template.text)
    rates = {r.kind: r for r in acceptance_rates()}
    assert rates[SuggestionKind.QUESTIONS].accepted == 1
    client.force_login(manager)
    page = client.get(reverse("annotation:manage-suggestions"))
    assert page.status_code == 200
    assert b"<svg" in page.content and b"question templates" in page.content


def test_only_managers_open_the_suggestion_page(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("annotation:manage-suggestions")).status_code == 403
    assert client.post(reverse("annotation:build-suggestions")).status_code == 403


def test_a_rebuild_runs_once_even_if_its_message_is_delivered_twice(pool, manager):
    build = SuggestionPoolBuild.objects.create(requested_by=manager)
    run_build(build.pk)
    build.refresh_from_db()
    assert build.status == "done" and build.claims_done == build.claims_total == 2
    finished = build.finished_at
    run_build(build.pk)
    build.refresh_from_db()
    assert build.finished_at == finished


def test_the_web_process_reloads_the_pool_only_after_a_new_build(pool):
    first = current_pool()
    assert current_pool() is first
    QuestionFactory(evidence_round__claim__text="A third claim about trains.")
    build_pool()
    marker = pool_folder() / "pool.json"
    os.utime(marker, (marker.stat().st_atime, marker.stat().st_mtime + 5))
    assert len(current_pool()) == 3


def test_without_a_built_pool_the_panel_says_so(client, settings, tmp_path, annotator):
    settings.SUGGESTION_POOL_DIR = tmp_path / "never-built"
    writer = AnnotatorFactory(username="p1-writer")
    steps.new_article(url="https://fullfact.org/online/parks-nopool/")
    steps.normalise(writer, [steps.normalised_claim()])
    task = steps.take(annotator, Phase.QUESTIONS)
    client.force_login(annotator)
    response = suggest(client, task)
    assert response.status_code == 200
    assert b"not ready yet" in response.content
    assert not Suggestion.objects.exists()


def test_the_sentences_of_an_opened_page_are_ranked_for_the_question(client, p2_task, annotator):
    url = "https://council.example.gov/budget-2019"
    FetchedPage.objects.create(
        normalized_url=normalize_url(url),
        url=url,
        final_url=url,
        title="Budget 2019",
        sentences=[
            "The council met in March.",
            "Parks received 2.1 million pounds in the 2019 budget.",
            "Libraries were not discussed.",
        ],
    )
    client.force_login(annotator)
    response = client.get(
        reverse("annotation:suggested-sentences", args=[p2_task.pk]),
        {"url": url, "question": "How much money did parks get in 2019?"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    ranked = list(Suggestion.objects.filter(kind=SuggestionKind.SENTENCES))
    assert ranked[0].details["sentence"] == 1
    assert b'data-sentence="1"' in response.content
    # Without a question there is nothing to rank for: a clear error, nothing logged.
    missing = client.get(
        reverse("annotation:suggested-sentences", args=[p2_task.pk]),
        {"url": url},
        HTTP_HX_REQUEST="true",
    )
    assert missing.status_code == 422
    assert Suggestion.objects.filter(kind=SuggestionKind.SENTENCES).count() == len(ranked)


def test_offline_the_sentences_come_from_the_indexed_text_the_viewer_shows(
    client, p2_task, annotator, monkeypatch
):
    """The page cannot be fetched (offline) and was never stored: the viewer shows the local
    index's text of it, and the sentence suggestions rank that same text, by position."""
    from search_proxy import fetch
    from tests.search_proxy.conftest import document

    url = "https://www.nature.com/articles/parks-budget"
    page = document(
        url,
        "The council met in March.\nParks received 2.1 million pounds in 2019.\nNo libraries.",
    )
    page.normalized_url = normalize_url(url)
    page.save()
    attempts = []

    def offline(address):
        attempts.append(address)
        raise fetch.PageUnavailable("The host name www.nature.com could not be resolved.")

    monkeypatch.setattr(fetch, "download_page", offline)
    client.force_login(annotator)
    viewer = client.post(
        reverse("annotation:open-result", args=[p2_task.pk]), {"url": url}, HTTP_HX_REQUEST="true"
    )
    assert b"could not be resolved" in viewer.content
    shown = re.findall(rb"<p>([^<]*)</p>", viewer.content.split(b"data-sentences")[1])
    assert shown[1] == b"Parks received 2.1 million pounds in 2019."
    fetches = len(attempts)
    response = client.get(
        reverse("annotation:suggested-sentences", args=[p2_task.pk]),
        {"url": url, "question": "How much money did the parks get in 2019?"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert len(attempts) == fetches  # no fetch of its own
    best = Suggestion.objects.filter(kind=SuggestionKind.SENTENCES).order_by("position")[0]
    assert best.details["sentence"] == 1
    assert best.text == shown[1].decode()
    # A page the viewer never showed any text of: a clear message, nothing logged.
    missing = client.get(
        reverse("annotation:suggested-sentences", args=[p2_task.pk]),
        {"url": "https://elsewhere.example/never-opened", "question": "How much?"},
        HTTP_HX_REQUEST="true",
    )
    assert missing.status_code == 422
    assert b"Open the page in the viewer first" in missing.content


# --- Issue 23: a verdict only for claims the viewer can never judge blind -----------------


def _p1_duplicates(client, annotator, slug: str):
    steps.new_article(url=f"https://fullfact.org/online/{slug}/")
    task = steps.take(annotator, Phase.NORMALISATION)
    client.force_login(annotator)
    response = suggest(
        client, task, text="Council spent 9 million on parks in 2019", claim_date="2020-10-31"
    )
    assert response.status_code == 200
    shown = Suggestion.objects.filter(task=task, kind=SuggestionKind.DUPLICATES)
    return response.content.decode(), {s.details["claim"]: s.details["verdict"] for s in shown}


def test_a_checker_of_an_agreement_sample_sees_its_duplicate_without_a_verdict(
    client, pool, annotator
):
    """Reported: holding the blind agreement-sample P3 task of a claim, an annotator typed
    its text in P1 and the duplicates showed its verdict."""
    from annotation.models import Claim

    Claim.objects.filter(pk=pool.pk).update(is_agreement_sample=True)
    Task.objects.create(
        phase=Phase.QUALITY_CHECK,
        article=pool.article,
        claim=pool,
        annotator=annotator,
        status=Task.Status.IN_PROGRESS,
        is_agreement_sample=True,
    )
    body, verdicts = _p1_duplicates(client, annotator, "parks-sample")
    assert verdicts[pool.pk] == ""
    assert Verdict.SUPPORTED not in body


def test_a_trainee_sees_gold_duplicates_without_their_verdicts_until_trained(
    client, pool, annotator
):
    """Reported: a trainee qualified for P1 read the gold verdicts of training claims."""
    from annotation.models import Claim

    Claim.objects.filter(pk=pool.pk).update(origin=Claim.Origin.IMPORTED)
    annotator.qualified_phases = [1]
    annotator.save()
    body, verdicts = _p1_duplicates(client, annotator, "parks-trainee")
    assert verdicts[pool.pk] == ""
    assert Verdict.SUPPORTED not in body
    # Someone qualified in every phase training tests: nothing left to be tested on.
    trained = AnnotatorFactory(username="trained", qualified_phases=[1, 2, 3, 4, 5])
    _body, verdicts = _p1_duplicates(client, trained, "parks-trained")
    assert verdicts[pool.pk] == Verdict.SUPPORTED
