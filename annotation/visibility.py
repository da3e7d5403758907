"""What a person may see of a claim, from their relation to it: the one viewer policy.

A claim is BLIND to a person while they could be, or have been, its blind checker (P3, P5):
- they hold or have held a blind task on it (any status: submitted, lapsed, released);
- or the claim can still get blind work (it has not left the workflow, or an agreement
  sample's check is open) and they may receive it: they may do blind work at all (qualified
  for P3 or P5, or an annotator, who may train and qualify), and the same-article rule does
  not already keep them away (they have no task on its article: P1 and P2 annotators of a
  claim saw its article, so they can never check it blind).
Role and page do not matter: a manager or researcher who holds, or may receive, blind work on
a claim sees it blind like anyone else, on every page and API answer that asks here.

A claim's VERDICT (the P1 label, P2/P4 verdicts, the accepted label) is shown to a person
only for claims they can never be asked to judge blind: claims that left the workflow, with
no open blind task (agreement samples included), that are not blind to them, and that are
not gold claims their training may still test them on.

Blind pages never get a Task, Claim or EvidenceRound: `blind_task_context` builds their
context from plain values, the claim as annotation/blindness.py defines it for a blind
phase. docs/blindness.md explains the policy for managers.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from annotation.blindness import blind_claim, shown_addresses
from annotation.models import Claim, Task, TrainingAnswer, User
from annotation.phases import parts_of
from annotation.vocabulary import BLIND_PHASES, Phase
from search_proxy.webaddress import is_web_address

# Claims in these states can still be handed to a blind checker.
OPEN_CLAIM_STATES = (
    Claim.State.QUESTIONS,
    Claim.State.QUALITY_CHECK,
    Claim.State.DISPUTE,
    Claim.State.POST_CONTROL,
)
# The phases training tests on (annotation/training.py TRAINING_PHASES, which imports
# workflow; kept here as data so the policy stays import-light).
TRAINING_PHASES = (Phase.NORMALISATION, Phase.QUESTIONS, Phase.QUALITY_CHECK)


def may_do_blind_work(user: User) -> bool:
    """Whether `user` may ever be handed a blind task: qualified for P3 or P5 now, or an
    annotator (who may train and qualify). Managers and researchers only when a manager
    gave them a blind phase."""
    if not user.is_active or not user.is_authenticated:
        return False
    if any(user.is_qualified_for(p) for p in BLIND_PHASES):
        return True
    return user.role == User.Role.ANNOTATOR and not user.is_superuser


def blind_claims_filter(user: User) -> Q:
    """A filter on Claim: the claims `user` must see blind."""
    if not user.is_authenticated:
        return Q(pk__isnull=False)  # nobody signed in sees any claim
    blind_tasks = Task.objects.filter(phase__in=BLIND_PHASES)
    own = Exists(blind_tasks.filter(claim=OuterRef("pk"), annotator=user))
    if not may_do_blind_work(user):
        return Q(own)
    open_check = Q(state__in=OPEN_CLAIM_STATES) | Exists(
        blind_tasks.filter(claim=OuterRef("pk"), status__in=Task.OPEN_STATUSES)
    )
    saw_article = Exists(Task.objects.filter(article=OuterRef("article"), annotator=user))
    return Q(own) | (open_check & ~Q(saw_article))


def claims_seen_in_full(user: User, claims: QuerySet[Claim] | None = None) -> QuerySet[Claim]:
    """`claims` (default: all) without those `user` must see blind."""
    claims = Claim.objects.all() if claims is None else claims
    return claims.exclude(blind_claims_filter(user))


def sees_in_full(user: User, claim: Claim) -> bool:
    return claims_seen_in_full(user, Claim.objects.filter(pk=claim.pk)).exists()


def _testable_gold(user: User) -> Q:
    """Gold claims (imported, accepted) that `user`'s training may still show them: not yet
    answered in a training phase they have not qualified for."""
    unqualified = [p for p in TRAINING_PHASES if not user.is_qualified_for(p)]
    if not unqualified:
        return Q(pk__in=[])
    answered_in_all = Q()
    for phase in unqualified:
        answered_in_all &= Q(
            Exists(TrainingAnswer.objects.filter(annotator=user, phase=phase, claim=OuterRef("pk")))
        )
    return Q(origin=Claim.Origin.IMPORTED, state=Claim.State.ACCEPTED) & ~answered_in_all


def claims_with_visible_verdict(
    user: User, claims: QuerySet[Claim] | None = None
) -> QuerySet[Claim]:
    """The claims whose verdict `user` may see: ones they can never be asked to judge blind."""
    claims = Claim.objects.all() if claims is None else claims
    open_blind = Exists(
        Task.objects.filter(
            claim=OuterRef("pk"), phase__in=BLIND_PHASES, status__in=Task.OPEN_STATUSES
        )
    )
    return (
        claims.exclude(state__in=OPEN_CLAIM_STATES)
        .exclude(open_blind)
        .exclude(blind_claims_filter(user))
        .exclude(_testable_gold(user))
    )


def verdict_visible(user: User, claim: Claim) -> bool:
    return claims_with_visible_verdict(user, Claim.objects.filter(pk=claim.pk)).exists()


# --- The context of blind pages ------------------------------------------------------------


def blind_pairs(task: Task) -> list[dict[str, Any]]:
    """The QA pairs a blind task checks, as plain values; sources that may reveal the
    fact-check (canonical test) are hidden."""
    evidence = task.evidence_shown()
    if evidence is None:
        return []
    questions = list(evidence.questions.prefetch_related("answers"))
    answers = [a for q in questions for a in q.answers.all()]
    sources = iter(shown_addresses([a.source_url for a in answers], task.article.url))
    pairs = []
    for question in questions:
        shown = []
        for answer in question.answers.all():
            source = next(sources) or ""
            shown.append(
                {
                    "text": answer.text,
                    "answer_type": answer.answer_type,
                    "boolean_explanation": answer.boolean_explanation,
                    "source_url": source,
                    "source_medium": answer.source_medium,
                    "is_link": is_web_address(source),
                }
            )
        pairs.append({"text": question.text, "answers": shown})
    return pairs


def blind_task_context(task: Task) -> dict[str, Any]:
    """Everything a blind task's page, fragment or error page may show, as plain values:
    never the Task, its Claim, its article or the EvidenceRound, and nobody's name."""
    if task.phase not in BLIND_PHASES:
        raise ValueError(f"task {task.pk} is not a blind task")
    assert task.claim is not None  # blind tasks are always of a claim
    # The check handed in is review's: read through what review registered.
    own = parts_of(task.phase).handed_in(task) if task.status == Task.Status.SUBMITTED else {}
    return {
        "task_view": {
            "pk": task.pk,
            "phase": task.phase,
            "phase_label": Phase(task.phase).label,
            "status": task.status,
            "status_label": task.get_status_display(),
            "draft_version": task.draft_version,
            "opened_at": task.opened_at,
        },
        "claim": blind_claim(task.claim),
        "pairs": blind_pairs(task),
        "own_check": own.get("own_check"),
    }
