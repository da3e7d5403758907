"""The blind quality checks (P3, P5) and the managers' history of one claim.

Blindness: the check pages get the claim as annotation/blindness.py defines it for a blind
phase, never the Claim model. tests/review/test_blindness.py holds every response to that.
"""

from __future__ import annotations

import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from annotation import handin, workflow
from annotation.access import editor_task, manager_required
from annotation.guidelines import (
    CHECK_GUIDE,
    JUSTIFICATION_HELP,
    POST_CONTROL_EXTRA,
    TOURS,
    VERDICT_HELP,
)
from annotation.http import AuthenticatedHttpRequest
from annotation.models import Claim, EvidenceRound, Task
from annotation.views.editing import (
    conflict_context,
    hand_in_post,
    journal_context,
    next_task_or_panel,
)
from annotation.visibility import blind_task_context, claims_seen_in_full
from annotation.vocabulary import BLIND_PHASES, CLAIM_TOO_VAGUE, Phase
from review.checks import ANSWER_FLAG_CODES, answer_flag_codes, verdict_choices
from review.forms import check_errors, draft_from_post, verdict_from_draft
from review.models import CLAIM_FLAG_CODES, QUESTION_FLAG_CODES, ProblemFlag, QualityCheck

TEMPLATE = "review/check.html"
# In P5 these choices end the claim's road to the dataset, so the screen asks first.
DISCARD_WARNING = "This choice leaves the claim out of the dataset. Submit anyway?"


def blind_pairs(task: Task, flags: dict | None = None) -> list[dict]:
    """The pairs to check (annotation/visibility.py's plain view of them), each with the
    flags the checker has ticked so far and the flags an answer may take."""
    flags = flags or {}
    pairs = blind_task_context(task)["pairs"]
    for qi, question in enumerate(pairs):
        question["flags"] = flags.get(f"q-{qi}", [])
        for ai, answer in enumerate(question["answers"]):
            answer["flags"] = flags.get(f"q-{qi}-a-{ai}", [])
            answer["flag_choices"] = _flag_choices(answer_flag_codes(answer["answer_type"]))
    return pairs


# What differs between the two blind checks' screens.
SCREENS: dict[int, dict[str, object]] = {
    Phase.QUALITY_CHECK: {"post_control": False, "guide": CHECK_GUIDE},
    Phase.POST_CONTROL: {"post_control": True, "guide": [*CHECK_GUIDE, POST_CONTROL_EXTRA]},
}


def _flag_choices(codes) -> list[tuple[str, str]]:
    labels = dict(ProblemFlag.Code.choices)
    return [(code, labels[code]) for code in codes]


def _context(
    request: AuthenticatedHttpRequest, task: Task, draft: dict, errors: dict, **extra
) -> dict:
    tour = f"p{task.phase}"
    draft = {"verdict": "", "unreadable": False, "justification": "", "flags": {}, **draft}
    # The one blind context (annotation/visibility.py): the Task stays out of the page.
    blind = blind_task_context(task)
    return {
        **blind,
        "task_pk": task.pk,
        "task_status": task.status,
        "draft_version": task.draft_version,
        "phase": task.phase,
        "phase_label": Phase(task.phase).label,
        **SCREENS[task.phase],
        "too_vague": CLAIM_TOO_VAGUE,
        "discard_warning": DISCARD_WARNING,
        "opened_at": task.opened_at,
        "pairs": blind_pairs(task, draft["flags"]),
        "draft": draft,
        "errors": errors,
        "summary": [
            {"anchor": field, "where": field.capitalize(), "message": errors[field]}
            for field in ("verdict", "justification")
            if field in errors
        ],
        "verdicts": verdict_choices(task.phase),
        "verdict_help": VERDICT_HELP,
        "justification_help": JUSTIFICATION_HELP,
        "claim_flags": _flag_choices(CLAIM_FLAG_CODES),
        "question_flags": _flag_choices(QUESTION_FLAG_CODES),
        "answer_flags": _flag_choices(ANSWER_FLAG_CODES),
        "tour": tour,
        "tour_steps": TOURS[tour],
        "show_tour": tour not in request.user.completed_tours,
        **journal_context(task),
        **extra,
    }


def check_page(request: AuthenticatedHttpRequest, task: Task) -> HttpResponse:
    return render(request, TEMPLATE, _context(request, task, task.draft or {}, {}))


@require_POST
@login_required
def submit_check(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    task = editor_task(request, pk, BLIND_PHASES)
    draft = draft_from_post(request.POST)

    def finish(locked: Task):
        errors = check_errors(draft, locked.phase)
        if errors:
            raise handin.Invalid(errors)
        return workflow.submit(locked, verdict_from_draft(draft))

    handed = hand_in_post(request, task, draft, kind=handin.Kind.SUBMIT, finish=finish)
    if handed.outcome == handin.DUPLICATE:
        return redirect("annotation:task", pk=task.pk)
    task = handed.task
    if handed.refused:
        # The tab stays behind (its own version) until the annotator chooses a version.
        context = _context(request, task, draft, {}, **conflict_context(handed, draft))
        return render(request, TEMPLATE, context, status=409)
    if handed.errors is not None:
        # What was typed is the draft now, so a reload after the error shows it again.
        return render(request, TEMPLATE, _context(request, task, draft, handed.errors), status=422)
    if handed.refusal:
        context = _context(request, task, draft, {"form": handed.refusal})
        return render(request, TEMPLATE, context, status=422)
    messages.success(request, "Thank you, your check is handed in.")
    return next_task_or_panel(request, task.phase)


# --- Managers ----------------------------------------------------------------------------


@manager_required
def claim_history(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Every round of one claim side by side, with who, when, verdicts, flags and the decision."""
    # A manager who holds or may receive a blind check of this claim does not see its
    # history (annotation/visibility.py): "not found", as for anyone else's task.
    claim = get_object_or_404(
        claims_seen_in_full(request.user, Claim.objects.select_related("article")), pk=pk
    )
    rounds = list(
        claim.evidence_rounds.select_related("task__annotator", "based_on").prefetch_related(
            "questions__answers__source", "questions__evidence_round__claim"
        )
    )
    checks = list(
        claim.quality_checks.select_related("task__annotator").prefetch_related(
            "flags__question", "flags__answer__question"
        )
    )
    p1 = claim.article.tasks.filter(phase=Phase.NORMALISATION).select_related("annotator").first()
    # What the page shows beside each round or check, set on the instances: not fields.
    for r in rounds:
        r.diff = evidence_diff(r.based_on, r) if r.based_on_id else None  # type: ignore[attr-defined]
        r.is_round = True  # type: ignore[attr-defined]
    cards: list[EvidenceRound | QualityCheck] = [*rounds, *checks]
    for card in cards:
        card.title = CARD_TITLES[card.phase]  # type: ignore[union-attr]
    return render(
        request,
        "review/claim_history.html",
        {
            "claim": claim,
            "p1_task": p1,
            "cards": in_round_order(rounds, checks),
            "transitions": claim.transitions.select_related("actor"),
            # Each task's revision log (annotation/handin.py), the P1 task's included.
            "draft_tasks": Task.objects.filter(Q(claim=claim) | Q(pk=getattr(p1, "pk", None)))
            .exclude(annotator=None)
            .select_related("annotator")
            .annotate(revision_count=Count("revisions"))
            .order_by("phase", "created_at"),
        },
    )


# How the claim history names each phase's round or check.
CARD_TITLES: dict[int, str] = {
    Phase.QUESTIONS: "P2 questions and answers",
    Phase.QUALITY_CHECK: "P3 quality check",
    Phase.DISPUTE: "P4 dispute resolution",
    Phase.POST_CONTROL: "P5 post-control",
}


def in_round_order(rounds: list, checks: list) -> list:
    """Evidence rounds and checks as they happened: P2, P3, then P4, P5 (again if re-opened).

    Unsubmitted work goes last; within the same moment the lower phase comes first.
    """
    far_future = timezone.now() + datetime.timedelta(days=36500)
    return sorted(
        [*rounds, *checks],
        key=lambda card: (card.submitted_at or far_future, card.phase, card.created_at),
    )


def evidence_diff(before, after) -> list[dict]:
    """Question by question: kept, changed, added or removed between two QA sets."""

    def flat(evidence) -> list[tuple[str, list[str]]]:
        return [
            (q.text, [a.text for a in q.answers.all()])
            for q in evidence.questions.prefetch_related("answers")
        ]

    old, new = flat(before), flat(after)
    old_by_text = dict(old)
    rows = []
    for position, (text, answers) in enumerate(new):
        if text in old_by_text:
            status = "kept" if old_by_text[text] == answers else "answers changed"
        elif position < len(old):
            status = "changed"
        else:
            status = "added"
        rows.append({"status": status, "text": text, "answers": answers})
    new_texts = {t for t, _ in new}
    for position, (text, answers) in enumerate(old):
        if text not in new_texts and position >= len(new):
            rows.append({"status": "removed", "text": text, "answers": answers})
    return rows
