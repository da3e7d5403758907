"""Every transition of the five-phase workflow (DESIGN.md section 2)."""

import pytest

from annotation import workflow
from annotation.models import Article, Claim, Task, Transition
from annotation.vocabulary import CLAIM_TOO_VAGUE, ClaimType, Phase, Strategy, Verdict
from review.models import ProblemFlag
from tests import steps
from tests.factories import AnnotatorFactory


@pytest.fixture
def crew(db):
    """Five annotators, one per phase, as the guidelines require."""
    return [AnnotatorFactory(username=f"p{n}") for n in range(1, 6)]


@pytest.fixture
def claim_in_p2(crew):
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    return claim


def test_an_article_becomes_claims_each_waiting_for_questions(crew):
    article = steps.new_article()
    claims = steps.normalise(
        crew[0], [steps.normalised_claim("First part."), steps.normalised_claim("Second part.")]
    )
    article.refresh_from_db()
    assert article.state == Article.State.NORMALISED
    assert [c.text for c in claims] == ["First part.", "Second part."]
    assert [c.position for c in claims] == [0, 1]
    assert all(c.state == Claim.State.QUESTIONS for c in claims)
    assert Task.objects.filter(phase=Phase.QUESTIONS, status=Task.Status.POOLED).count() == 2
    p1 = Task.objects.get(phase=Phase.NORMALISATION)
    assert p1.status == Task.Status.SUBMITTED and p1.submitted_at is not None


@pytest.mark.parametrize(
    ("types", "strategies", "reason"),
    [
        ([ClaimType.OPINION], [Strategy.WRITTEN_EVIDENCE], "Opinion Claim"),
        ([ClaimType.SPECULATIVE, ClaimType.NUMERICAL], [Strategy.WRITTEN_EVIDENCE], "Speculative"),
        ([ClaimType.MEDIA_PUBLISHING], [Strategy.WRITTEN_EVIDENCE], "Media Publishing"),
        ([ClaimType.MEDIA_ANALYSIS], [Strategy.WRITTEN_EVIDENCE], "Media Analysis"),
        ([ClaimType.EVENT_PROPERTY], [Strategy.GEOLOCATION], "Geolocation"),
        ([ClaimType.EVENT_PROPERTY], [Strategy.IMAGE_ANALYSIS, Strategy.WRITTEN_EVIDENCE], "Image"),
        ([ClaimType.EVENT_PROPERTY], [Strategy.FACT_CHECKER_REFERENCE], "another fact-check"),
    ],
)
def test_claims_of_excluded_kinds_stop_after_p1_with_a_visible_reason(
    crew, types, strategies, reason
):
    steps.new_article()
    (claim,) = steps.normalise(
        crew[0], [steps.normalised_claim(claim_types=types, fact_checking_strategies=strategies)]
    )
    assert claim.state == Claim.State.EXCLUDED
    assert reason in claim.exclusion_reason
    assert not Task.objects.filter(claim=claim).exists()
    assert Transition.objects.get(claim=claim).reason == claim.exclusion_reason


def test_fact_checker_reference_alongside_another_strategy_is_kept(crew):
    steps.new_article()
    strategies = [Strategy.FACT_CHECKER_REFERENCE, Strategy.WRITTEN_EVIDENCE]
    (claim,) = steps.normalise(
        crew[0], [steps.normalised_claim(fact_checking_strategies=strategies)]
    )
    assert claim.state == Claim.State.QUESTIONS


def test_a_skipped_article_keeps_its_reason_and_makes_no_claims(crew):
    article = steps.new_article()
    task = steps.take(crew[0], Phase.NORMALISATION)
    workflow.skip_article(task, Article.SkipReason.PAYWALL)
    article.refresh_from_db()
    assert article.state == Article.State.SKIPPED
    assert article.get_skip_reason_display() == "behind a paywall"
    assert not article.claims.exists()


def test_skipping_for_another_reason_needs_a_note(crew):
    steps.new_article()
    task = steps.take(crew[0], Phase.NORMALISATION)
    with pytest.raises(workflow.WorkflowError, match="Say what is wrong"):
        workflow.skip_article(task, Article.SkipReason.OTHER, "  ")


def test_p2_evidence_sends_the_claim_to_the_quality_check(crew, claim_in_p2):
    evidence = steps.answer(crew[1])
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.QUALITY_CHECK
    assert [q.position for q in evidence.questions.all()] == [0, 1]
    assert Task.objects.filter(phase=Phase.QUALITY_CHECK, status=Task.Status.POOLED).count() == 1


def test_agreeing_p2_and_p3_verdicts_accept_the_claim_with_p3s_justification(crew, claim_in_p2):
    steps.answer(crew[1], Verdict.SUPPORTED)
    steps.check(crew[2], Verdict.SUPPORTED, justification="Both sources agree.")
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.ACCEPTED
    assert claim_in_p2.label == Verdict.SUPPORTED
    assert claim_in_p2.justification == "Both sources agree."
    assert claim_in_p2.required_reannotation is False


def test_disagreeing_verdicts_open_a_dispute_first_in_line(crew, claim_in_p2):
    steps.answer(crew[1], Verdict.SUPPORTED)
    steps.check(crew[2], Verdict.REFUTED)
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.DISPUTE
    dispute = Task.objects.get(phase=Phase.DISPUTE)
    assert dispute.priority > 0
    assert "P2 Supported vs P3 Refuted" in claim_in_p2.transitions.last().reason


def test_an_unreadable_claim_in_p3_goes_to_dispute(crew, claim_in_p2):
    steps.answer(crew[1])
    steps.check(crew[2], None, unreadable=True, justification="")
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.DISPUTE


def test_the_full_dispute_path_ends_accepted_and_marked_reannotated(crew, claim_in_p2):
    steps.answer(crew[1], Verdict.SUPPORTED)
    steps.check(crew[2], Verdict.REFUTED)
    revised = steps.resolve(crew[3], Verdict.REFUTED)
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.POST_CONTROL
    assert revised.based_on == claim_in_p2.evidence_rounds.get(phase=Phase.QUESTIONS)
    steps.post_control(crew[4], Verdict.REFUTED, justification="P4's sources refute it.")
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.ACCEPTED
    assert claim_in_p2.required_reannotation is True
    assert claim_in_p2.justification == "P4's sources refute it."
    assert claim_in_p2.dataset_evidence() == revised
    assert list(claim_in_p2.transitions.values_list("to_state", flat=True)) == [
        "questions",
        "quality_check",
        "dispute",
        "post_control",
        "accepted",
    ]


@pytest.mark.parametrize("p5_verdict", [Verdict.SUPPORTED, CLAIM_TOO_VAGUE])
def test_a_post_control_that_disagrees_or_finds_the_claim_too_vague_discards_it(
    crew, claim_in_p2, p5_verdict
):
    steps.answer(crew[1], Verdict.SUPPORTED)
    steps.check(crew[2], Verdict.REFUTED)
    steps.resolve(crew[3], Verdict.REFUTED)
    steps.post_control(crew[4], p5_verdict)
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.DISCARDED
    assert claim_in_p2.label is None


def test_claim_too_vague_is_refused_in_p3(crew, claim_in_p2):
    steps.answer(crew[1])
    with pytest.raises(workflow.WorkflowError, match="only a post-control"):
        steps.check(crew[2], CLAIM_TOO_VAGUE)
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.QUALITY_CHECK


def test_a_verdict_without_justification_is_refused(crew, claim_in_p2):
    steps.answer(crew[1])
    with pytest.raises(workflow.WorkflowError, match="justification"):
        steps.check(crew[2], Verdict.REFUTED, justification=" ")


def test_flags_land_on_the_claim_question_and_answer_they_name(crew, claim_in_p2):
    steps.answer(crew[1])
    flags = [
        workflow.FlagData("claim_ambiguous"),
        workflow.FlagData("question_unrelated", question_position=1),
        workflow.FlagData("source_may_be_biased", question_position=0, answer_position=0),
    ]
    check = steps.check(crew[2], flags=flags)
    stored = {f.code: f for f in ProblemFlag.objects.filter(quality_check=check)}
    assert stored["claim_ambiguous"].question is None and stored["claim_ambiguous"].answer is None
    assert stored["question_unrelated"].question.position == 1
    assert stored["source_may_be_biased"].answer.position == 0


def test_submitting_twice_is_harmless(crew, claim_in_p2):
    task = steps.take(crew[1], Phase.QUESTIONS)
    first = workflow.submit_evidence(task, steps.evidence())
    again = workflow.submit_evidence(task, steps.evidence(Verdict.SUPPORTED))
    assert again == first
    assert claim_in_p2.evidence_rounds.count() == 1
    assert Task.objects.filter(phase=Phase.QUALITY_CHECK).count() == 1
    assert claim_in_p2.transitions.filter(to_state="quality_check").count() == 1


def test_a_task_of_another_phase_cannot_be_submitted_as_this_one(crew, claim_in_p2):
    task = steps.take(crew[1], Phase.QUESTIONS)
    with pytest.raises(workflow.WorkflowError, match="belongs to P2"):
        workflow.submit_quality_check(task, steps.verdict())


def test_a_discarded_claim_can_be_reopened_into_p4_by_a_manager(crew, claim_in_p2, manager):
    steps.answer(crew[1], Verdict.SUPPORTED)
    steps.check(crew[2], Verdict.REFUTED)
    steps.resolve(crew[3], Verdict.REFUTED)
    steps.post_control(crew[4], Verdict.SUPPORTED)
    task = workflow.reopen_discarded_claim(claim_in_p2, manager, "second opinion")
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.DISPUTE
    assert task.phase == Phase.DISPUTE and task.status == Task.Status.POOLED
    with pytest.raises(workflow.WorkflowError):
        workflow.reopen_discarded_claim(claim_in_p2, manager)


def test_agreement_sampled_claims_get_an_extra_independent_p2_and_p3(crew, settings):
    settings.AGREEMENT_SAMPLE_RATE = 1.0
    extra = AnnotatorFactory.create_batch(2)
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    assert claim.is_agreement_sample
    assert Task.objects.filter(phase=Phase.QUESTIONS).count() == 2
    steps.answer(crew[1], Verdict.SUPPORTED)
    steps.answer(extra[0], Verdict.REFUTED)
    steps.check(crew[2], Verdict.SUPPORTED)
    claim.refresh_from_db()
    assert claim.state == Claim.State.ACCEPTED  # the extra round never changes the path
    steps.check(extra[1], Verdict.REFUTED)
    claim.refresh_from_db()
    assert claim.state == Claim.State.ACCEPTED and claim.label == Verdict.SUPPORTED
    extra_check = claim.quality_checks.get(is_agreement_sample=True)
    assert extra_check.evidence_round.is_agreement_sample
    assert extra_check.evidence_round.verdict == Verdict.REFUTED


def test_no_agreement_sampling_by_default(crew):
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    assert not claim.is_agreement_sample
    assert Task.objects.filter(phase=Phase.QUESTIONS).count() == 1


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (workflow.FlagData("source_may_be_biased"), "about an answer, not a claim"),
        (
            workflow.FlagData("claim_ambiguous", question_position=0),
            "about a claim, not a question",
        ),
        (workflow.FlagData("answer_unrelated", answer_position=0), "needs its question"),
        (workflow.FlagData("question_unrelated", question_position=7), "no question 7"),
    ],
)
def test_a_flag_must_name_the_kind_of_target_its_code_is_about(crew, claim_in_p2, flag, message):
    steps.answer(crew[1])
    with pytest.raises(workflow.WorkflowError, match=message):
        steps.check(crew[2], flags=[flag])
    claim_in_p2.refresh_from_db()
    assert claim_in_p2.state == Claim.State.QUALITY_CHECK


def test_the_fact_checking_article_itself_is_refused_as_a_source(crew, claim_in_p2):
    data = steps.evidence()
    data.questions[0].answers[0].source_url = (
        "https://web.archive.org/web/20201101000000/" + claim_in_p2.article.url
    )
    task = steps.take(crew[1], Phase.QUESTIONS)
    with pytest.raises(workflow.EvidenceRejected, match="own fact-checking article"):
        workflow.submit_evidence(task, data)
    assert not claim_in_p2.evidence_rounds.exists()


def test_reporting_a_claim_cancels_its_other_waiting_tasks(crew, settings):
    settings.AGREEMENT_SAMPLE_RATE = 1.0
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    task = steps.take(crew[1], Phase.QUESTIONS)
    workflow.report_claim(task, "media_claim", "needs the video")
    claim.refresh_from_db()
    assert claim.state == Claim.State.EXCLUDED
    extra = Task.objects.get(claim=claim, is_agreement_sample=True)
    assert extra.status == Task.Status.CANCELLED
    with pytest.raises(workflow.WorkflowError, match="closed without"):
        workflow.submit_evidence(task, steps.evidence())


def test_a_released_task_is_not_revived_by_opening_it(crew, manager):
    from annotation import assignment

    steps.new_article()
    steps.normalise(crew[0])
    task = steps.take(crew[1], Phase.QUESTIONS)
    stale_copy = Task.objects.get(pk=task.pk)
    assignment.release_task(task, manager)
    stale_copy.start()
    stale_copy.refresh_from_db()
    assert stale_copy.status == Task.Status.RELEASED
