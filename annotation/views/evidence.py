"""Phase 2 (questions and answers) and Phase 4 (dispute resolution): one editor for both."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import workflow
from annotation.evidence import blocking, evidence_problems
from annotation.forms.evidence import (
    blank_answer,
    blank_question,
    draft_from_evidence,
    draft_from_post,
    editor_rows,
    evidence_from_draft,
    where,
)
from annotation.guidelines import (
    ANSWER_TYPE_HELP,
    P2_GUIDE,
    P4_GUIDE,
    SOURCE_MEDIUM_HELP,
    TOURS,
    VERDICT_HELP,
)
from annotation.models import Claim, StaleDraft, Task
from annotation.views.editing import next_task_or_panel, own_task_or_404
from annotation.views.phase1 import article_links
from annotation.vocabulary import AnswerType, Phase, SourceMedium, Verdict

TEMPLATE = "annotation/evidence.html"
EDITOR_PHASES = (Phase.QUESTIONS, Phase.DISPUTE)
SUBMITTERS = {
    Phase.QUESTIONS: workflow.submit_evidence,
    Phase.DISPUTE: workflow.submit_dispute_resolution,
}


def _dispute_context(task: Task) -> dict:
    """What P4 sees as the reason for the dispute: both verdicts and the checker's notes."""
    if task.phase != Phase.DISPUTE:
        return {}
    from review.models import QualityCheck

    evidence = task.evidence_shown()
    check = (
        QualityCheck.objects.filter(claim=task.claim_id, is_agreement_sample=False)
        .exclude(submitted_at=None)
        .prefetch_related("flags__question", "flags__answer__question")
        .order_by("-submitted_at")
        .first()
    )
    return {"disputed_evidence": evidence, "last_check": check}


def _context(request: HttpRequest, task: Task, draft: dict, problems, **extra) -> dict:
    claim = task.claim
    rows, overall = editor_rows(draft, problems)
    siblings = (
        Claim.objects.filter(article_id=claim.article_id)
        .exclude(pk=claim.pk)
        .exclude(state=Claim.State.EXCLUDED)
        .order_by("position")
    )
    return {
        "task": task,
        "claim": claim,
        "siblings": siblings,
        "links": article_links(claim.article.url),
        "rows": rows,
        "overall": overall,
        "hints": [(where(p.path), p.message) for p in problems if not p.blocking],
        "draft": draft,
        "verdicts": Verdict.choices,
        "verdict_help": VERDICT_HELP,
        "answer_types": AnswerType.choices,
        "answer_type_help": ANSWER_TYPE_HELP,
        "media": [(v, label) for v, label in SourceMedium.choices if v],
        "medium_help": SOURCE_MEDIUM_HELP,
        "guide": P4_GUIDE if task.phase == Phase.DISPUTE else P2_GUIDE,
        "tour": f"p{task.phase}",
        "show_tour": f"p{task.phase}" not in request.user.completed_tours,
        "tour_steps": TOURS[f"p{task.phase}"],
        "blank_question": blank_question(),
        "blank_answer": blank_answer(),
        "report_reasons": workflow.REPORT_REASONS,
        **_dispute_context(task),
        **extra,
    }


def _hints(task: Task, draft: dict):
    if not draft.get("questions"):
        return []
    evidence = evidence_from_draft(draft)
    return [p for p in evidence_problems(evidence, task.claim, phase=task.phase) if not p.blocking]


def evidence_page(request: HttpRequest, task: Task) -> HttpResponse:
    """The editor with the saved draft restored; P4 starts from the pairs in dispute."""
    draft = task.draft if task.draft.get("questions") is not None else None
    if draft is None:
        draft = (
            draft_from_evidence(task.evidence_shown())
            if task.phase == Phase.DISPUTE
            else {"questions": [], "verdict": "", "claim_correction": ""}
        )
    return render(request, TEMPLATE, _context(request, task, draft, _hints(task, draft)))


def _editor_task(request: HttpRequest, pk: int) -> Task:
    task = own_task_or_404(request.user, pk)
    if task.phase not in EDITOR_PHASES:
        from django.http import Http404

        raise Http404("not a question-answer task")
    return task


@require_POST
@login_required
def review(request: HttpRequest, pk: int) -> HttpResponse:
    """Check the pairs; when nothing blocks, save them and show the confirmation screen."""
    task = _editor_task(request, pk)
    if task.status == Task.Status.SUBMITTED:
        return redirect("annotation:task", pk=task.pk)
    draft = draft_from_post(request.POST)
    evidence = evidence_from_draft(draft)
    problems = evidence_problems(evidence, task.claim, phase=task.phase)
    try:
        version = int(request.POST.get("draft_version", ""))
        task.save_draft(draft, version=version)
    except (ValueError, StaleDraft):
        context = _context(request, task, draft, problems, stale=True)
        return render(request, TEMPLATE, context, status=409)
    if blocking(problems):
        return render(request, TEMPLATE, _context(request, task, draft, problems), status=422)
    return render(
        request,
        "annotation/evidence_confirm.html",
        {"task": task, "claim": task.claim, "evidence": evidence, "draft": draft},
    )


@require_POST
@login_required
def confirm(request: HttpRequest, pk: int) -> HttpResponse:
    """Hand in the pairs exactly as saved and confirmed."""
    task = _editor_task(request, pk)
    if task.status == Task.Status.SUBMITTED:
        return redirect("annotation:task", pk=task.pk)
    if request.POST.get("draft_version") != str(task.draft_version):
        messages.error(
            request, "The task changed in another tab; check it again before submitting."
        )
        return redirect("annotation:task", pk=task.pk)
    try:
        SUBMITTERS[task.phase](task, evidence_from_draft(task.draft))
    except workflow.WorkflowError as exc:
        messages.error(request, str(exc))
        return redirect("annotation:task", pk=task.pk)
    messages.success(request, "Thank you, your questions and answers are handed in.")
    return next_task_or_panel(request, task.phase)


@require_POST
@login_required
def report(request: HttpRequest, pk: int) -> HttpResponse:
    task = _editor_task(request, pk)
    reason = request.POST.get("reason", "")
    if reason not in workflow.REPORT_REASONS:
        messages.error(request, "Choose why the claim cannot be worked on.")
        return redirect("annotation:task", pk=task.pk)
    try:
        workflow.report_claim(task, reason, request.POST.get("note", ""))
    except workflow.WorkflowError as exc:
        messages.error(request, str(exc))
        return redirect("annotation:task", pk=task.pk)
    messages.success(request, "Thanks, the claim is reported to the managers.")
    return next_task_or_panel(request, task.phase)


@require_GET
@login_required
def search_panel(request: HttpRequest, pk: int) -> HttpResponse:
    """Search results for the panel beside the editor, restricted to before the claim date."""
    from search_proxy import service
    from search_proxy.backends import SearchUnavailable

    task = _editor_task(request, pk)
    query = request.GET.get("q", "").strip()
    context = {"task": task, "query": query}
    if query:
        try:
            page = max(1, int(request.GET.get("page", "1")))
        except ValueError:
            page = 1
        country = request.GET.get("country") or task.claim.location_iso_code
        try:
            context["results"] = service.search(
                query,
                before=task.claim.claim_date,
                country=country or None,
                page=page,
                user=request.user,
                claim=task.claim,
                task=task,
            )
        except (service.SearchError, SearchUnavailable) as exc:
            context["error"] = str(exc)
    return render(request, "annotation/evidence.html#search-results", context)


@require_POST
@login_required
def open_result(request: HttpRequest, pk: int) -> HttpResponse:
    """A result's readable text, sentence by sentence, to select answers from."""
    from search_proxy import fetch, service

    task = _editor_task(request, pk)
    url = request.POST.get("url", "")
    context = {"task": task, "url": url}
    try:
        context["opened"] = service.open_page(url, user=request.user, task=task)
    except (fetch.FetchRefused, fetch.PageUnavailable, service.SearchError) as exc:
        context["error"] = str(exc)
    return render(request, "annotation/evidence.html#opened-page", context)
