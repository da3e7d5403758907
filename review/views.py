"""The blind quality checks (P3, P5) and the managers' history of one claim.

Blindness: the check pages get a claim "view" holding only what the phase may see, never the
Claim model, so a template cannot reach the article, the fact-checker's label or earlier
verdicts by accident. tests/review/test_blindness.py holds every response to that.
"""

from __future__ import annotations

import contextlib

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import workflow
from annotation.guidelines import (
    CHECK_GUIDE,
    JUSTIFICATION_HELP,
    POST_CONTROL_EXTRA,
    TOURS,
    VERDICT_HELP,
)
from annotation.models import Claim, StaleDraft, Task
from annotation.views.editing import next_task_or_panel, own_task_or_404
from annotation.views.manage import manager_required
from annotation.vocabulary import Phase
from review.forms import (
    ANSWER_FLAG_CODES,
    check_errors,
    draft_from_post,
    verdict_choices,
    verdict_from_draft,
)
from review.models import CLAIM_FLAG_CODES, QUESTION_FLAG_CODES, ProblemFlag

TEMPLATE = "review/check.html"
CHECK_PHASES = (Phase.QUALITY_CHECK, Phase.POST_CONTROL)
SUBMITTERS = {
    Phase.QUALITY_CHECK: workflow.submit_quality_check,
    Phase.POST_CONTROL: workflow.submit_post_control,
}
BLIND_CLAIM_FIELDS = (
    "text",
    "claim_date",
    "speaker",
    "reporting_source",
    "location_iso_code",
    "original_claim_url",
    "media_url",
    "image_transcription",
    "claim_types",
    "fact_checking_strategies",
)


def blind_claim(claim: Claim) -> dict:
    """The claim as a blind phase may know it: its words and metadata, nothing else."""
    return {name: getattr(claim, name) for name in BLIND_CLAIM_FIELDS}


def blind_pairs(task: Task, flags: dict | None = None) -> list[dict]:
    """The pairs to check, each with the flags the checker has ticked so far."""
    evidence = task.evidence_shown()
    if evidence is None:
        return []
    flags = flags or {}
    return [
        {
            "text": q.text,
            "flags": flags.get(f"q-{qi}", []),
            "answers": [
                {
                    "flags": flags.get(f"q-{qi}-a-{ai}", []),
                    "text": a.text,
                    "answer_type": a.answer_type,
                    "boolean_explanation": a.boolean_explanation,
                    "source_url": a.source_url,
                    "source_medium": a.source_medium,
                    "is_link": a.source_url.lower().startswith(("http://", "https://")),
                }
                for ai, a in enumerate(q.answers.all())
            ],
        }
        for qi, q in enumerate(evidence.questions.prefetch_related("answers"))
    ]


def _flag_choices(codes) -> list[tuple[str, str]]:
    labels = dict(ProblemFlag.Code.choices)
    return [(code, labels[code]) for code in codes]


def _context(request: HttpRequest, task: Task, draft: dict, errors: dict, **extra) -> dict:
    tour = f"p{task.phase}"
    draft = {"verdict": "", "unreadable": False, "justification": "", "flags": {}, **draft}
    return {
        "task_pk": task.pk,
        # Only what the save-status fragment needs; the Task itself stays out of the page.
        "task_view": {"pk": task.pk, "draft_version": task.draft_version},
        "task_status": task.status,
        "draft_version": task.draft_version,
        "phase": task.phase,
        "phase_label": Phase(task.phase).label,
        "post_control": task.phase == Phase.POST_CONTROL,
        "opened_at": task.opened_at,
        "claim": blind_claim(task.claim),
        "pairs": blind_pairs(task, draft["flags"]),
        "draft": draft,
        "errors": errors,
        "verdicts": verdict_choices(task.phase),
        "verdict_help": VERDICT_HELP,
        "guide": CHECK_GUIDE + ([POST_CONTROL_EXTRA] if task.phase == Phase.POST_CONTROL else []),
        "justification_help": JUSTIFICATION_HELP,
        "claim_flags": _flag_choices(CLAIM_FLAG_CODES),
        "question_flags": _flag_choices(QUESTION_FLAG_CODES),
        "answer_flags": _flag_choices(ANSWER_FLAG_CODES),
        "tour": tour,
        "tour_steps": TOURS[tour],
        "show_tour": tour not in request.user.completed_tours,
        **extra,
    }


def check_page(request: HttpRequest, task: Task) -> HttpResponse:
    return render(request, TEMPLATE, _context(request, task, task.draft or {}, {}))


def _check_task(request: HttpRequest, pk: int) -> Task:
    task = own_task_or_404(request.user, pk)
    if task.phase not in CHECK_PHASES:
        raise Http404("not a quality-check task")
    return task


@require_POST
@login_required
def submit_check(request: HttpRequest, pk: int) -> HttpResponse:
    task = _check_task(request, pk)
    if task.status == Task.Status.SUBMITTED:
        return redirect("annotation:task", pk=task.pk)
    draft = draft_from_post(request.POST)
    if request.POST.get("draft_version") != str(task.draft_version):
        context = _context(request, task, draft, {}, stale=True)
        return render(request, TEMPLATE, context, status=409)
    errors = check_errors(draft, task.phase)
    if errors:
        # Keep what was typed, so a reload after the error shows it again.
        with contextlib.suppress(StaleDraft):
            task.save_draft(draft, version=task.draft_version)
        return render(request, TEMPLATE, _context(request, task, draft, errors), status=422)
    try:
        SUBMITTERS[task.phase](task, verdict_from_draft(draft))
    except workflow.WorkflowError as exc:
        return render(
            request, TEMPLATE, _context(request, task, draft, {"form": str(exc)}), status=422
        )
    messages.success(request, "Thank you, your check is handed in.")
    return next_task_or_panel(request, task.phase)


# --- Managers ----------------------------------------------------------------------------


@manager_required
def claim_history(request: HttpRequest, pk: int) -> HttpResponse:
    """Every round of one claim side by side, with who, when, verdicts, flags and the decision."""
    claim = get_object_or_404(Claim.objects.select_related("article"), pk=pk)
    rounds = list(
        claim.evidence_rounds.select_related("task__annotator", "based_on").prefetch_related(
            "questions__answers"
        )
    )
    checks = list(
        claim.quality_checks.select_related("task__annotator").prefetch_related(
            "flags__question", "flags__answer__question"
        )
    )
    p1 = claim.article.tasks.filter(phase=Phase.NORMALISATION).select_related("annotator").first()
    diffs = {r.pk: evidence_diff(r.based_on, r) for r in rounds if r.based_on_id}
    return render(
        request,
        "review/claim_history.html",
        {
            "claim": claim,
            "p1_task": p1,
            "rounds": rounds,
            "checks": checks,
            "diffs": diffs,
            "transitions": claim.transitions.select_related("actor"),
        },
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
