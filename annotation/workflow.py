"""The five-phase workflow: how articles and claims move when an annotator submits.

    article ─P1─▶ claims, or skipped (claims of excluded kinds stop here)
    claim ─P2─▶ evidence ─P3─▶ verdicts agree ─▶ accepted
                               └ disagree ─P4─▶ revised evidence ─P5─▶ agree ─▶ accepted
                                                                        └ disagree ─▶ discarded

Every submit function locks its task, does nothing if the task was already submitted (a
retried request or redelivered job is harmless), records each state change as a Transition,
and creates the pooled task of the next phase. Screens, the API and commands call these
functions and nothing else changes workflow state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

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
    Transition,
    User,
)
from annotation.normalisation import normalisation_problems
from annotation.phases import parts_of
from annotation.signals import claim_accepted
from annotation.submissions import (
    AnswerData,
    EvidenceData,
    FlagData,
    NormalisedClaim,
    Problem,
    QualityVerdict,
    QuestionData,
)
from annotation.suggestions import ignore_the_rest
from annotation.vocabulary import AnswerType, Phase
from search_proxy.archiving import queue_archiving
from search_proxy.fetch import locate_passage
from search_proxy.models import FetchedPage, Source
from search_proxy.webaddress import is_web_address

DISPUTE_PRIORITY = 1
# What annotators hand in; kept importable from here for the workflow's callers.
__all__ = [
    "AnswerData",
    "EvidenceData",
    "FlagData",
    "NormalisedClaim",
    "QualityVerdict",
    "QuestionData",
]


class WorkflowError(Exception):
    """An action the workflow does not allow in the current state (says which and why)."""


class EvidenceRejected(WorkflowError):
    """Question-answer pairs that break a rule of annotation/evidence.py."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))


# --- Helpers ---------------------------------------------------------------------------


def _record(
    subject: Article | Claim,
    to_state: str,
    *,
    from_state: str = "",
    task: Task | None = None,
    actor: User | None = None,
    reason: str = "",
) -> None:
    kwargs: dict[str, Article | Claim] = (
        {"article": subject} if isinstance(subject, Article) else {"claim": subject}
    )
    Transition.objects.create(
        **kwargs, from_state=from_state, to_state=to_state, task=task, actor=actor, reason=reason
    )


def _move(
    claim: Claim,
    to_state: str,
    *,
    task: Task | None = None,
    actor: User | None = None,
    reason: str = "",
) -> None:
    from_state = claim.state
    claim.state = to_state
    claim.save()
    _record(claim, to_state, from_state=from_state, task=task, actor=actor, reason=reason)


def _move_article(article: Article, to_state: str, task: Task, reason: str) -> None:
    from_state = article.state
    article.state = to_state
    article.save()
    _record(
        article, to_state, from_state=from_state, task=task, actor=task.annotator, reason=reason
    )


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
    if locked.status != Task.Status.IN_PROGRESS:
        raise WorkflowError(
            f"task {task.pk} is {locked.get_status_display()}; only a task in progress "
            "can be submitted"
        )
    return locked


def _already_submitted(task: Task, result: str) -> Any:
    """What a repeated submit returns: the first submission's result. A task closed another
    way (a report) has none, and says so."""
    found = getattr(Task.objects.get(pk=task.pk), result, None)
    if found is None:
        raise WorkflowError(f"task {task.pk} was closed without this kind of submission")
    return found


def _locked_claim(task: Task) -> Claim:
    """The claim of a task after P1, locked for the hand-in."""
    assert task.claim_id is not None  # every task after P1 is of a claim
    return Claim.objects.select_for_update().get(pk=task.claim_id)


def _close(task: Task) -> None:
    now = timezone.now()
    task.status = Task.Status.SUBMITTED
    task.submitted_at = now
    task.last_activity_at = now
    task.lease_expires_at = None
    task.save()
    # Whatever was suggested and neither taken nor dismissed by now was ignored.
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
    if article.state != Article.State.AWAITING_NORMALISATION:
        raise WorkflowError(f"article {article.pk} is {article.get_state_display()}")
    start = (
        article.claims.order_by("-position").values_list("position", flat=True).first() or -1
    ) + 1
    sampling_rate = AgreementSampling.current_rate()
    created = []
    for offset, data in enumerate(claims):
        claim = Claim.objects.create(
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
            state=Claim.State.QUESTIONS,
        )
        reason = claim.exclusion_reason_for_choices()
        if reason:
            claim.state = Claim.State.EXCLUDED
            claim.exclusion_reason = reason
            claim.save()
            _record(claim, claim.state, task=locked, actor=locked.annotator, reason=reason)
        else:
            claim.is_agreement_sample = random.random() < sampling_rate
            claim.save()
            _record(claim, claim.state, task=locked, actor=locked.annotator, reason="normalised")
            _pool(Phase.QUESTIONS, claim)
            if claim.is_agreement_sample:
                _pool(Phase.QUESTIONS, claim, agreement=True)
        created.append(claim)
    queue_archiving(u for c in created for u in (c.original_claim_url, c.media_url))
    _move_article(article, Article.State.NORMALISED, locked, f"split into {len(created)} claim(s)")
    _close(locked)
    return created


@transaction.atomic
def skip_article(task: Task, reason: str, note: str = "") -> Article:
    """Report an unusable article (paywall, 404, does not load, other): it leaves the work."""
    if reason not in Article.SkipReason.values:
        raise WorkflowError(f"unknown skip reason {reason!r}")
    if reason == Article.SkipReason.OTHER and not note.strip():
        raise WorkflowError("say what is wrong with the article when the reason is 'other'")
    locked = _lock_open_task(task, Phase.NORMALISATION)
    article = Article.objects.select_for_update().get(pk=task.article_id)
    if locked is None:
        return article
    article.skip_reason = reason
    article.skip_note = note.strip()
    why = f"{article.get_skip_reason_display()}{': ' + article.skip_note if note else ''}"
    _move_article(article, Article.State.SKIPPED, locked, why)
    _close(locked)
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
    store_pairs(evidence, data.questions, passage_for=_passage_of)
    queue_archiving(a.source_url for q in data.questions for a in q.answers)
    return evidence


def _source_for(url: str) -> Source | None:
    return Source.for_url(url) if is_web_address(url) else None


Passage = tuple[FetchedPage | None, int | None, int | None]


def _no_passage(answer: AnswerData) -> Passage:
    return None, None, None


def _passage_of(answer: AnswerData) -> Passage:
    """Where an extractive answer stands in its page's stored snapshot (viewer selections)."""
    if answer.answer_type == AnswerType.EXTRACTIVE and is_web_address(answer.source_url):
        return locate_passage(answer.source_url, answer.text) or _no_passage(answer)
    return _no_passage(answer)


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
    claim = Claim.objects.create(
        article=article,
        state=Claim.State.ACCEPTED,
        origin=Claim.Origin.IMPORTED,
        label=label,
        accepted_at=now,
        **claim_fields,
    )
    evidence = EvidenceRound.objects.create(
        claim=claim, phase=Phase.QUESTIONS, verdict=label, submitted_at=now
    )
    store_pairs(evidence, questions, source_for)
    _record(claim, claim.state, actor=actor, reason=reason)
    return claim


@transaction.atomic
def submit_evidence(task: Task, data: EvidenceData) -> EvidenceRound:
    """P2: store the question-answer pairs and verdict; the claim goes to the quality check."""
    locked = _lock_open_task(task, Phase.QUESTIONS)
    if locked is None:
        first: EvidenceRound = _already_submitted(task, "evidence_round")
        return first
    claim = _locked_claim(locked)
    if not locked.is_agreement_sample and claim.state != Claim.State.QUESTIONS:
        raise WorkflowError(f"claim {claim.pk} is {claim.get_state_display()}, not waiting for P2")
    if claim.state == Claim.State.EXCLUDED:
        raise WorkflowError(f"claim {claim.pk} was excluded: {claim.exclusion_reason}")
    evidence = _store_evidence(locked, claim, data)
    _close(locked)
    if locked.is_agreement_sample:
        # The extra round only feeds agreement figures: its own blind check, no state change.
        _pool(Phase.QUALITY_CHECK, claim, agreement=True)
    else:
        _move(claim, Claim.State.QUALITY_CHECK, task=locked, actor=locked.annotator)
        _pool(Phase.QUALITY_CHECK, claim)
    return evidence


@transaction.atomic
def submit_dispute_resolution(task: Task, data: EvidenceData) -> EvidenceRound:
    """P4: store the revised pairs and verdict; the claim goes to post-control."""
    locked = _lock_open_task(task, Phase.DISPUTE)
    if locked is None:
        first: EvidenceRound = _already_submitted(task, "evidence_round")
        return first
    claim = _locked_claim(locked)
    if claim.state != Claim.State.DISPUTE:
        raise WorkflowError(f"claim {claim.pk} is {claim.get_state_display()}, not in dispute")
    # A re-opened claim builds on its last dispute round, a first dispute on the P2 pairs.
    evidence = _store_evidence(locked, claim, data, based_on=locked.evidence_shown())
    _close(locked)
    _move(claim, Claim.State.POST_CONTROL, task=locked, actor=locked.annotator)
    _pool(Phase.POST_CONTROL, claim, priority=DISPUTE_PRIORITY)
    return evidence


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
    if locked.phase not in (Phase.QUESTIONS, Phase.DISPUTE):
        raise WorkflowError("only question-answer tasks (P2, P4) report a claim this way")
    claim = _locked_claim(locked)
    if locked.status == Task.Status.SUBMITTED:
        return claim
    if locked.status != Task.Status.IN_PROGRESS:
        raise WorkflowError(f"task {task.pk} is {locked.get_status_display()}")
    _close(locked)
    if locked.is_agreement_sample:
        return claim
    # Nobody should spend their one turn at this article on a claim that left the work.
    claim.tasks.filter(status__in=Task.OPEN_STATUSES).exclude(pk=locked.pk).update(
        status=Task.Status.CANCELLED
    )
    claim.exclusion_reason = f"reported in P{locked.phase}: {REPORT_REASONS[reason]}" + (
        f" ({note.strip()})" if note.strip() else ""
    )
    _move(
        claim,
        Claim.State.EXCLUDED,
        task=locked,
        actor=locked.annotator,
        reason=claim.exclusion_reason,
    )
    return claim


# --- P3 and P5 -------------------------------------------------------------------------


def _store_check(
    task: Task, claim: Claim, evidence: EvidenceRound, data: QualityVerdict
) -> Any:  # review's QualityCheck, which annotation does not import
    # How a check is judged and stored is review's (review/checks.py), which builds on this
    # module; the claim's moves stay here.
    return parts_of(task.phase).store(task, claim, evidence, data)


@transaction.atomic
def submit_quality_check(task: Task, data: QualityVerdict) -> Any:
    """P3: a blind verdict. Agreement with P2 accepts the claim; anything else is a dispute."""
    locked = _lock_open_task(task, Phase.QUALITY_CHECK)
    if locked is None:
        return _already_submitted(task, "quality_check")
    claim = _locked_claim(locked)
    evidence = locked.evidence_shown()
    if evidence is None:
        raise WorkflowError(f"claim {claim.pk} has no evidence to check")
    if not locked.is_agreement_sample and claim.state != Claim.State.QUALITY_CHECK:
        raise WorkflowError(f"claim {claim.pk} is {claim.get_state_display()}, not in P3")
    check = _store_check(locked, claim, evidence, data)
    _close(locked)
    if locked.is_agreement_sample:
        return check
    if not check.unreadable and check.verdict == evidence.verdict:
        _accept(claim, check, task=locked, reannotated=False)
    else:
        why = "unreadable" if check.unreadable else f"P2 {evidence.verdict} vs P3 {check.verdict}"
        _move(claim, Claim.State.DISPUTE, task=locked, actor=locked.annotator, reason=why)
        _pool(Phase.DISPUTE, claim, priority=DISPUTE_PRIORITY)
    return check


@transaction.atomic
def submit_post_control(task: Task, data: QualityVerdict) -> Any:
    """P5: a blind verdict on P4's evidence. Agreement accepts; anything else discards."""
    locked = _lock_open_task(task, Phase.POST_CONTROL)
    if locked is None:
        return _already_submitted(task, "quality_check")
    claim = _locked_claim(locked)
    if claim.state != Claim.State.POST_CONTROL:
        raise WorkflowError(f"claim {claim.pk} is {claim.get_state_display()}, not in P5")
    evidence = locked.evidence_shown()
    if evidence is None:
        raise WorkflowError(f"claim {claim.pk} has no P4 evidence to check")
    check = _store_check(locked, claim, evidence, data)
    _close(locked)
    if not check.unreadable and check.verdict == evidence.verdict:
        _accept(claim, check, task=locked, reannotated=True)
    else:
        why = "unreadable" if check.unreadable else f"P4 {evidence.verdict} vs P5 {check.verdict}"
        _move(claim, Claim.State.DISCARDED, task=locked, actor=locked.annotator, reason=why)
    return check


def submit(task: Task, data: list[NormalisedClaim] | EvidenceData | QualityVerdict) -> Any:
    """Hand in a task of any phase: the one entry point screens, the API and commands call.
    `data` is what the phase hands in (P1 a list of claims, P2/P4 evidence, P3/P5 a check)."""
    submitters: dict[Phase, Callable[[Task, Any], Any]] = {
        Phase.NORMALISATION: submit_normalisation,
        Phase.QUESTIONS: submit_evidence,
        Phase.QUALITY_CHECK: submit_quality_check,
        Phase.DISPUTE: submit_dispute_resolution,
        Phase.POST_CONTROL: submit_post_control,
    }
    return submitters[Phase(task.phase)](task, data)


def _accept(claim: Claim, check: Any, *, task: Task, reannotated: bool) -> None:
    claim.label = check.verdict
    claim.justification = check.justification
    claim.required_reannotation = reannotated
    claim.accepted_at = timezone.now()
    _move(claim, Claim.State.ACCEPTED, task=task, actor=task.annotator, reason="verdicts agree")
    claim_accepted.send(sender=Claim, claim=claim)


# --- Manager actions -------------------------------------------------------------------


def audit(actor: User | None, action: str, summary: str, **details: Any) -> AuditEntry:
    return AuditEntry.objects.create(actor=actor, action=action, summary=summary, details=details)


def set_agreement_sampling(rate: float, manager: User) -> AgreementSampling:
    """Change the share of new claims sampled for agreement figures (not existing ones)."""
    if not 0 <= rate <= 1:
        raise WorkflowError("the sampling rate is a share between 0 and 1")
    audit(manager, "sampling", f"set agreement sampling to {rate:.0%} of new claims", rate=rate)
    return AgreementSampling.objects.create(rate=rate, changed_by=manager)


@transaction.atomic
def reopen_discarded_claim(claim: Claim, manager: User, reason: str = "") -> Task:
    """Give a discarded claim another dispute round (P4, then P5)."""
    claim = Claim.objects.select_for_update().get(pk=claim.pk)
    if claim.state != Claim.State.DISCARDED:
        raise WorkflowError(f"only discarded claims can be re-opened; this one is {claim.state}")
    _move(claim, Claim.State.DISPUTE, actor=manager, reason=reason or "re-opened by a manager")
    task = _pool(Phase.DISPUTE, claim, priority=DISPUTE_PRIORITY)
    audit(manager, "reopen", f"re-opened claim {claim.pk} into P4", claim=claim.pk, reason=reason)
    return task
