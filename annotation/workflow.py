"""The five-phase workflow: how articles and claims move when an annotator submits.

    article ─P1─▶ claims, or skipped (claims of excluded kinds stop here)
    claim ─P2─▶ evidence ─P3─▶ verdicts agree ─▶ accepted
                               └ disagree ─P4─▶ revised evidence ─P5─▶ agree ─▶ accepted
                                                                        └ disagree ─▶ discarded
    P2 or P4 "report & skip" ─▶ excluded;  a manager re-opens discarded ─▶ P4 again

The moves themselves are declared on the models, as tables checked by the one method that
makes them and records the Transition: `Article.move_to`, `Claim.move_to` (each move with
the phase whose hand-in makes it), and `Task.hand_over/start/close/release/expire`. Every
submit function locks its task, does nothing if the task was already submitted (a retried
request or redelivered job is harmless), moves what its phase moves, and creates the pooled
task of the next phase. Screens, the API and commands call these functions and nothing else
changes workflow state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.blindness import EVIDENCE_PHASES
from annotation.evidence import blocking, evidence_problems, normalise_answers
from annotation.models import (
    AgreementSampling,
    Answer,
    Article,
    AuditEntry,
    Claim,
    EvidenceRound,
    Question,
    Task,
    User,
    WorkflowError,
)
from annotation.normalisation import normalisation_problems, skip_problems
from annotation.phases import parts_of
from annotation.submissions import (
    AnswerData,
    EvidenceData,
    FlagData,
    NormalisedClaim,
    Problem,
    QualityVerdict,
    QuestionData,
)
from annotation.suggestions.log import ignore_the_rest
from annotation.vocabulary import AnswerType, Phase
from search_proxy.archiving import queue_archiving
from search_proxy.fetch import locate_passages
from search_proxy.models import FetchedPage, Source
from search_proxy.webaddress import is_web_address

DISPUTE_PRIORITY = 1
# What annotators hand in, and the workflow's error (raised by the models' moves too);
# kept importable from here for the workflow's callers.
__all__ = [
    "AnswerData",
    "EvidenceData",
    "FlagData",
    "NormalisedClaim",
    "QualityVerdict",
    "QuestionData",
    "WorkflowError",
]


class EvidenceRejected(WorkflowError):
    """Question-answer pairs that break a rule of annotation/evidence.py."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))


# --- Helpers ---------------------------------------------------------------------------
# The submit functions' shared steps stay here rather than on Task or Claim: each is a step
# of one hand-in (lock the task, then its claim; pool the next phase's task; close the task
# and log its unused suggestions as ignored), spanning the task, its claim and the
# suggestion log. The single-object moves they make are the models' (Task.check_move and
# close, Claim.move_to, check_turn and accept).


def _pool(phase: int, claim: Claim, *, priority: int = 0, agreement: bool = False) -> Task:
    return Task.objects.create(
        phase=phase,
        article_id=claim.article_id,
        claim=claim,
        priority=priority,
        is_agreement_sample=agreement,
    )


def _lock_open_task(task: Task, phase: int) -> Task | None:
    """The task row locked for submission, or None when it was already submitted."""
    locked = Task.objects.select_for_update().get(pk=task.pk)
    if locked.phase != phase:
        raise WorkflowError(f"task {task.pk} belongs to P{locked.phase}, not P{phase}")
    if locked.status == Task.Status.SUBMITTED:
        return None
    locked.check_move(Task.Status.SUBMITTED)
    return locked


def _already_submitted(task: Task) -> Any:
    """What a repeated submit returns: the first submission's result (each phase names it
    in annotation/phases.py). A task closed another way (a report) has none, and says so."""
    found = parts_of(task.phase).produced(Task.objects.get(pk=task.pk))
    if found is None:
        raise WorkflowError(f"task {task.pk} was closed without this kind of submission")
    return found


def _locked_claim(task: Task) -> Claim:
    """The claim of a task after P1, locked for the hand-in."""
    assert task.claim_id is not None  # every task after P1 is of a claim
    return Claim.objects.select_for_update().get(pk=task.claim_id)


def evidence_round_of(task: Task) -> EvidenceRound | None:
    """What a P2 or P4 task handed in."""
    return getattr(task, "evidence_round", None)


def _finish(task: Task) -> None:
    """The task is handed in (Task.close); whatever was suggested for it and neither taken
    nor dismissed by now was ignored."""
    task.close()
    ignore_the_rest(task)


# --- P1 --------------------------------------------------------------------------------


def open_article_for_normalisation(article: Article) -> Task:
    """The pooled P1 task of a new article (created once)."""
    task = Task.objects.filter(
        article=article, phase=Phase.NORMALISATION, status__in=Task.OPEN_STATUSES
    ).first()
    return task or Task.objects.create(phase=Phase.NORMALISATION, article=article)


@transaction.atomic
def submit_normalisation(task: Task, claims: list[NormalisedClaim]) -> list[Claim]:
    """Turn an article into claims; claims of excluded kinds stop here with the reason."""
    locked = _lock_open_task(task, Phase.NORMALISATION)
    if locked is None:
        return list(Claim.objects.filter(article_id=task.article_id))
    article = Article.objects.select_for_update().get(pk=locked.article_id)
    problems = normalisation_problems(claims, article.url)
    if problems:
        raise WorkflowError("; ".join(f"{p.path}: {p.message}" for p in problems))
    article.check_move(Article.State.NORMALISED)
    start = (
        article.claims.order_by("-position").values_list("position", flat=True).first() or -1
    ) + 1
    sampling_rate = AgreementSampling.current_rate()
    created = []
    for offset, data in enumerate(claims):
        claim = Claim(
            article=article,
            position=start + offset,
            text=data.text,
            fact_checker_label=data.fact_checker_label,
            claim_date=data.claim_date,
            speaker=data.speaker,
            reporting_source=data.reporting_source,
            original_claim_url=data.original_claim_url,
            media_url=data.media_url,
            image_transcription=data.image_transcription,
            location_iso_code=data.location_iso_code,
            claim_types=data.claim_types,
            fact_checking_strategies=data.fact_checking_strategies,
        )
        reason = claim.exclusion_reason_for_choices()
        if reason:
            claim.exclusion_reason = reason
            claim.move_to(Claim.State.EXCLUDED, task=locked, actor=locked.annotator, reason=reason)
        else:
            claim.is_agreement_sample = random.random() < sampling_rate
            claim.move_to(
                Claim.State.QUESTIONS, task=locked, actor=locked.annotator, reason="normalised"
            )
            _pool(Phase.QUESTIONS, claim)
            if claim.is_agreement_sample:
                _pool(Phase.QUESTIONS, claim, agreement=True)
        created.append(claim)
    queue_archiving(u for c in created for u in (c.original_claim_url, c.media_url))
    article.move_to(
        Article.State.NORMALISED, task=locked, reason=f"split into {len(created)} claim(s)"
    )
    _finish(locked)
    return created


@transaction.atomic
def skip_article(task: Task, reason: str, note: str = "") -> Article:
    """Report an unusable article (paywall, 404, does not load, other): it leaves the work."""
    if reason not in Article.SkipReason.values:
        raise WorkflowError(f"unknown skip reason {reason!r}")
    if problems := skip_problems(reason, note):
        raise WorkflowError(problems[0].message)
    locked = _lock_open_task(task, Phase.NORMALISATION)
    article = Article.objects.select_for_update().get(pk=task.article_id)
    if locked is None:
        return article
    article.skip_reason = reason
    article.skip_note = note.strip()
    why = f"{article.get_skip_reason_display()}{': ' + article.skip_note if note else ''}"
    article.move_to(Article.State.SKIPPED, task=locked, reason=why)
    _finish(locked)
    return article


# --- P2 and P4 -------------------------------------------------------------------------


def _store_evidence(
    task: Task, claim: Claim, data: EvidenceData, *, based_on: EvidenceRound | None = None
) -> EvidenceRound:
    if not data.questions:
        raise WorkflowError("evidence needs at least one question")

    data = normalise_answers(data)
    problems = blocking(evidence_problems(data, claim, phase=task.phase))
    if problems:
        raise EvidenceRejected(problems)
    now = timezone.now()
    evidence = EvidenceRound.objects.create(
        claim=claim,
        task=task,
        phase=task.phase,
        based_on=based_on,
        verdict=data.verdict,
        claim_correction=data.claim_correction.strip(),
        pairs_support_verdict=data.pairs_support_verdict,
        is_agreement_sample=task.is_agreement_sample,
        submitted_at=now,
    )
    answers = [a for q in data.questions for a in q.answers]
    # Every cited page's source row and snapshot at once: a hand-in may cite twenty.
    cited = [a.source_url for a in answers if is_web_address(a.source_url)]
    sources = Source.for_urls(cited)
    extractive = [a for a in answers if _extractive_on_the_web(a)]
    passages = dict(
        zip(
            map(id, extractive),
            locate_passages([(a.source_url, a.text) for a in extractive]),
            strict=True,
        )
    )
    store_pairs(
        evidence,
        data.questions,
        source_for=sources.get,
        passage_for=lambda answer: passages.get(id(answer)) or _no_passage(answer),
    )
    queue_archiving(a.source_url for a in answers)
    return evidence


def _extractive_on_the_web(answer: AnswerData) -> bool:
    return answer.answer_type == AnswerType.EXTRACTIVE and is_web_address(answer.source_url)


def _source_for(url: str) -> Source | None:
    return Source.for_url(url) if is_web_address(url) else None


Passage = tuple[FetchedPage | None, int | None, int | None]


def _no_passage(answer: AnswerData) -> Passage:
    return None, None, None


def store_pairs(
    evidence: EvidenceRound,
    questions: Sequence[QuestionData],
    source_for: Callable[[str], Source | None] = _source_for,
    passage_for: Callable[[AnswerData], Passage] = _no_passage,
) -> None:
    """The one builder of question and answer rows, for annotated rounds and imported
    claims alike; `source_for` finds the Source of a cited page, `passage_for` the
    snapshot and offsets of an extractive answer."""
    rows = Question.objects.bulk_create(
        Question(evidence_round=evidence, position=i, text=q.text, json_keys=q.keys)
        for i, q in enumerate(questions)
    )
    answers = []
    for row, q in zip(rows, questions, strict=True):
        for j, a in enumerate(q.answers):
            snapshot, start, end = passage_for(a)
            answers.append(
                Answer(
                    question=row,
                    position=j,
                    text=a.text,
                    answer_type=a.answer_type,
                    boolean_explanation=a.boolean_explanation,
                    source_url=a.source_url,
                    source_medium=a.source_medium,
                    source=source_for(a.source_url),
                    cached_source_url=a.cached_source_url,
                    json_keys=a.keys,
                    passage_snapshot=snapshot,
                    passage_start=start,
                    passage_end=end,
                )
            )
    Answer.objects.bulk_create(answers)


def accept_imported_claim(
    article: Article,
    questions: Sequence[QuestionData],
    *,
    label: str,
    actor: User | None,
    reason: str,
    source_for: Callable[[str], Source | None] = _source_for,
    **claim_fields: Any,
) -> Claim:
    """A claim of a released dataset file: accepted as it stands, with its pairs as the
    P2 round, and the transition that says where it came from."""
    now = claim_fields.setdefault("created_at", timezone.now())
    claim = Claim(
        article=article,
        origin=Claim.Origin.IMPORTED,
        label=label,
        accepted_at=now,
        **claim_fields,
    )
    claim.move_to(Claim.State.ACCEPTED, actor=actor, reason=reason)
    evidence = EvidenceRound.objects.create(
        claim=claim, phase=Phase.QUESTIONS, verdict=label, submitted_at=now
    )
    store_pairs(evidence, questions, source_for)
    return claim


@transaction.atomic
def submit_evidence(task: Task, data: EvidenceData) -> EvidenceRound:
    """P2: store the question-answer pairs and verdict; the claim goes to the quality check."""
    locked = _lock_open_task(task, Phase.QUESTIONS)
    if locked is None:
        first: EvidenceRound = _already_submitted(task)
        return first
    claim = _locked_claim(locked)
    if not locked.is_agreement_sample:
        claim.check_turn(locked)
    # The extra round of the agreement sample moves nothing, but is no work on a claim
    # that left it.
    if claim.state == Claim.State.EXCLUDED:
        raise WorkflowError(f"claim {claim.pk} was excluded: {claim.exclusion_reason}")
    evidence = _store_evidence(locked, claim, data)
    _finish(locked)
    if locked.is_agreement_sample:
        # The extra round only feeds agreement figures: its own blind check, no state change.
        _pool(Phase.QUALITY_CHECK, claim, agreement=True)
    else:
        claim.move_to(Claim.State.QUALITY_CHECK, task=locked, actor=locked.annotator)
        _pool(Phase.QUALITY_CHECK, claim)
    return evidence


@transaction.atomic
def submit_dispute_resolution(task: Task, data: EvidenceData) -> EvidenceRound:
    """P4: store the revised pairs and verdict; the claim goes to post-control."""
    locked = _lock_open_task(task, Phase.DISPUTE)
    if locked is None:
        first: EvidenceRound = _already_submitted(task)
        return first
    claim = _locked_claim(locked)
    claim.check_turn(locked)
    # A re-opened claim builds on its last dispute round, a first dispute on the P2 pairs.
    evidence = _store_evidence(locked, claim, data, based_on=locked.evidence_shown())
    _finish(locked)
    claim.move_to(Claim.State.POST_CONTROL, task=locked, actor=locked.annotator)
    _pool(Phase.POST_CONTROL, claim, priority=DISPUTE_PRIORITY)
    return evidence


def evidence_in_dispute(task: Task) -> EvidenceRound | None:
    """The pairs a P4 task revises: the claim's latest dataset pairs (a re-opened claim's
    last dispute round, else P2's); once submitted, the ones it actually started from."""
    revised = evidence_round_of(task) if task.pk else None
    if revised is not None:
        return revised.based_on
    assert task.claim is not None  # P4 tasks are always of a claim
    return task.claim.dataset_evidence()


REPORT_REASONS = {
    "article_unusable": "the fact-checking article cannot be used",
    "media_claim": "the claim needs evidence beyond text",
}


@transaction.atomic
def report_claim(task: Task, reason: str, note: str = "") -> Claim:
    """P2/P4 "report & skip": the claim leaves the work, with the reason kept for managers.

    An extra agreement-sample round only closes its task: the claim's own path is untouched.
    """
    if reason not in REPORT_REASONS:
        raise WorkflowError(f"unknown report reason {reason!r}")
    locked = Task.objects.select_for_update().get(pk=task.pk)
    if locked.phase not in EVIDENCE_PHASES:
        raise WorkflowError("only question-answer tasks (P2, P4) report a claim this way")
    claim = _locked_claim(locked)
    if locked.status == Task.Status.SUBMITTED:
        return claim
    locked.check_move(Task.Status.SUBMITTED)
    if not locked.is_agreement_sample:
        claim.check_turn(locked)
    _finish(locked)
    if locked.is_agreement_sample:
        return claim
    # Nobody should spend their one turn at this article on a claim that left the work.
    claim.tasks.filter(status__in=Task.OPEN_STATUSES).exclude(pk=locked.pk).update(
        status=Task.Status.CANCELLED
    )
    # Wording for people; Claim.objects.reported() finds these claims by the transition below.
    claim.exclusion_reason = f"reported in P{locked.phase}: {REPORT_REASONS[reason]}" + (
        f" ({note.strip()})" if note.strip() else ""
    )
    claim.move_to(
        Claim.State.EXCLUDED, task=locked, actor=locked.annotator, reason=claim.exclusion_reason
    )
    return claim


# --- P3 and P5 -------------------------------------------------------------------------


def _store_check(
    task: Task, claim: Claim, evidence: EvidenceRound, data: QualityVerdict
) -> Any:  # review's QualityCheck, which annotation does not import
    # How a check is judged and stored is review's (review/checks.py), which builds on this
    # module; the claim's moves stay here.
    store = parts_of(task.phase).store
    if store is None:
        raise WorkflowError(f"{Phase(task.phase).label} stores no check")
    return store(task, claim, evidence, data)


@transaction.atomic
def submit_quality_check(task: Task, data: QualityVerdict) -> Any:
    """P3: a blind verdict. Agreement with P2 accepts the claim; anything else is a dispute."""
    locked = _lock_open_task(task, Phase.QUALITY_CHECK)
    if locked is None:
        return _already_submitted(task)
    claim = _locked_claim(locked)
    evidence = locked.evidence_shown()
    if evidence is None:
        raise WorkflowError(f"claim {claim.pk} has no evidence to check")
    if not locked.is_agreement_sample:
        claim.check_turn(locked)
    check = _store_check(locked, claim, evidence, data)
    _finish(locked)
    if locked.is_agreement_sample:
        return check
    if not check.unreadable and check.verdict == evidence.verdict:
        claim.accept(check.verdict, check.justification, task=locked, reannotated=False)
    else:
        why = "unreadable" if check.unreadable else f"P2 {evidence.verdict} vs P3 {check.verdict}"
        claim.move_to(Claim.State.DISPUTE, task=locked, actor=locked.annotator, reason=why)
        _pool(Phase.DISPUTE, claim, priority=DISPUTE_PRIORITY)
    return check


@transaction.atomic
def submit_post_control(task: Task, data: QualityVerdict) -> Any:
    """P5: a blind verdict on P4's evidence. Agreement accepts; anything else discards."""
    locked = _lock_open_task(task, Phase.POST_CONTROL)
    if locked is None:
        return _already_submitted(task)
    claim = _locked_claim(locked)
    claim.check_turn(locked)
    evidence = locked.evidence_shown()
    if evidence is None:
        raise WorkflowError(f"claim {claim.pk} has no P4 evidence to check")
    check = _store_check(locked, claim, evidence, data)
    _finish(locked)
    if not check.unreadable and check.verdict == evidence.verdict:
        claim.accept(check.verdict, check.justification, task=locked, reannotated=True)
    else:
        why = "unreadable" if check.unreadable else f"P4 {evidence.verdict} vs P5 {check.verdict}"
        claim.move_to(Claim.State.DISCARDED, task=locked, actor=locked.annotator, reason=why)
    return check


def submit(task: Task, data: list[NormalisedClaim] | EvidenceData | QualityVerdict) -> Any:
    """Hand in a task of any phase: the one entry point screens, the API and commands call.
    `data` is what the phase hands in (P1 a list of claims, P2/P4 evidence, P3/P5 a check);
    each phase names its submit function in annotation/phases.py."""
    return parts_of(task.phase).submit(task, data)


# --- Manager actions -------------------------------------------------------------------


def audit(actor: User | None, action: str, summary: str, **details: Any) -> AuditEntry:
    return AuditEntry.objects.create(actor=actor, action=action, summary=summary, details=details)


def set_agreement_sampling(rate: float, manager: User) -> AgreementSampling:
    """Change the share of new claims sampled for agreement figures (not existing ones)."""
    setting = AgreementSampling(rate=rate, changed_by=manager)
    # The model's constraint is the one rule (a share between 0 and 1): full_clean checks it
    # before anything is written, and raises ValidationError.
    setting.full_clean()
    audit(manager, "sampling", f"set agreement sampling to {rate:.0%} of new claims", rate=rate)
    setting.save()
    return setting


@transaction.atomic
def reopen_discarded_claim(claim: Claim, manager: User, reason: str = "") -> Task:
    """Give a discarded claim another dispute round (P4, then P5)."""
    claim = Claim.objects.select_for_update().get(pk=claim.pk)
    # Claim.TRANSITIONS: a manager moves a claim to P4 only from discarded.
    claim.move_to(Claim.State.DISPUTE, actor=manager, reason=reason or "re-opened by a manager")
    task = _pool(Phase.DISPUTE, claim, priority=DISPUTE_PRIORITY)
    audit(manager, "reopen", f"re-opened claim {claim.pk} into P4", claim=claim.pk, reason=reason)
    return task
