"""The moves of articles, claims and tasks are declared tables on the models, checked by the
one method that makes each move and records it."""

import pytest
from django.core.exceptions import ValidationError

from annotation import assignment, workflow
from annotation.models import (
    AgreementSampling,
    Article,
    Claim,
    InvalidTransition,
    Task,
    Transition,
)
from annotation.vocabulary import Phase, Verdict
from tests import steps
from tests.factories import AnnotatorFactory


@pytest.fixture
def crew(db):
    return [AnnotatorFactory(username=f"p{n}") for n in range(1, 6)]


@pytest.fixture
def claim_in_p2(crew):
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    return claim


def _moves_made_by(claims) -> set[tuple[str, str, int | None]]:
    return {
        (t.from_state, t.to_state, t.task.phase if t.task_id else None)
        for t in Transition.objects.filter(claim__in=claims).select_related("task")
    }


def test_every_recorded_claim_move_of_both_paths_is_declared_with_the_phase_that_made_it(
    crew, manager
):
    steps.new_article()
    steps.new_article()
    claims = steps.normalise(crew[0]) + steps.normalise(crew[0])
    for agreeing in (Verdict.REFUTED, Verdict.SUPPORTED):
        steps.answer(crew[1])
        steps.check(crew[2], agreeing)
    steps.resolve(crew[3])
    steps.post_control(crew[4], Verdict.SUPPORTED)
    (reopened,) = Claim.objects.filter(state=Claim.State.DISCARDED)
    workflow.reopen_discarded_claim(reopened, manager)
    declared = {(f, t, phase) for (f, t), phase in Claim.TRANSITIONS.items()}
    made = _moves_made_by(claims)
    assert made <= declared
    # Both paths and the manager's re-opening were walked, so the check above means something.
    assert ("", Claim.State.QUESTIONS, Phase.NORMALISATION) in made
    assert (Claim.State.DISCARDED, Claim.State.DISPUTE, None) in made


def test_a_claim_refuses_a_move_its_table_does_not_declare_and_records_nothing(claim_in_p2):
    with pytest.raises(InvalidTransition, match="cannot move it to accepted"):
        claim_in_p2.move_to(Claim.State.ACCEPTED)
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.QUESTIONS
    assert claim_in_p2.transitions.count() == 1


def test_a_move_counts_only_when_made_by_the_phase_the_table_names(crew, claim_in_p2, manager):
    steps.answer(crew[1])
    # Waiting for P3: a manager's re-opening is a move from discarded only.
    with pytest.raises(workflow.WorkflowError, match="a manager cannot move it"):
        workflow.reopen_discarded_claim(claim_in_p2, manager)
    p3 = steps.take(crew[2], Phase.QUALITY_CHECK)
    claim_in_p2.refresh_from_db()
    with pytest.raises(InvalidTransition, match="P3 · quality check hand-in cannot"):
        claim_in_p2.move_to(Claim.State.POST_CONTROL, task=p3)
    claim_in_p2.check_turn(p3)  # P3 may move it on from here


def test_a_hand_in_of_a_phase_that_does_not_move_the_claim_from_its_state_is_refused(
    crew, claim_in_p2
):
    steps.answer(crew[1])
    p3 = steps.take(crew[2], Phase.QUALITY_CHECK)
    Claim.objects.filter(pk=claim_in_p2.pk).update(state=Claim.State.DISCARDED)
    with pytest.raises(InvalidTransition, match="does not move it"):
        workflow.submit_quality_check(p3, steps.verdict())
    p3.refresh_from_db()
    assert p3.status == Task.Status.IN_PROGRESS


def test_an_article_is_normalised_once(crew):
    article = steps.new_article()
    steps.normalise(crew[0])
    article.refresh_from_db()
    with pytest.raises(InvalidTransition, match="cannot become"):
        article.move_to(
            Article.State.SKIPPED, task=article.tasks.get(phase=Phase.NORMALISATION), reason="late"
        )


def test_a_task_moves_only_along_its_table(crew, manager):
    steps.new_article()
    pooled = Task.objects.get(phase=Phase.NORMALISATION)
    with pytest.raises(InvalidTransition):
        pooled.close()
    with pytest.raises(workflow.WorkflowError, match="cannot become released"):
        assignment.release_task(pooled, manager)
    held = steps.take(crew[0], Phase.NORMALISATION)
    replacement = assignment.release_task(held, manager)
    held.refresh_from_db()
    assert (held.status, replacement.status) == (Task.Status.RELEASED, Task.Status.POOLED)
    assert replacement.replaces == held
    with pytest.raises(InvalidTransition):
        held.hand_over(crew[1], Task.Status.ASSIGNED)


def test_the_sampling_share_has_one_rule_the_models_constraint(manager):
    with pytest.raises(ValidationError):
        workflow.set_agreement_sampling(1.5, manager)
    assert not AgreementSampling.objects.exists()
    assert workflow.set_agreement_sampling(0.25, manager).rate == 0.25
