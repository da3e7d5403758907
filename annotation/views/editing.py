"""What every phase's editor shares: autosave with version checks, timing, guided tours."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from annotation.models import StaleDraft, Task
from annotation.vocabulary import Phase

# Tours a user can dismiss; the name is stored on the account once dismissed.
TOURS = {"p1", "p2", "p3", "p4", "p5"}


def own_task_or_404(user, pk: int) -> Task:
    # Someone else's task is "not found", not "forbidden": ids reveal nothing.
    return get_object_or_404(Task.objects.select_related("claim", "article"), pk=pk, annotator=user)


def next_task_or_panel(request: HttpRequest, phase: int) -> HttpResponse:
    """After a hand-in: straight on to the next task of the phase, or back to the panel
    saying why there is none."""
    from django.contrib import messages
    from django.shortcuts import redirect

    from annotation import assignment

    try:
        task = assignment.next_task(request.user, phase)
    except assignment.NoTaskAvailable as reason:
        messages.info(request, str(reason))
        return redirect("annotation:control-panel")
    return redirect("annotation:task", pk=task.pk)


def draft_parsers():
    from annotation.forms import evidence, phase1
    from review import forms as check

    return {
        Phase.NORMALISATION: phase1.draft_from_post,
        Phase.QUESTIONS: evidence.draft_from_post,
        Phase.QUALITY_CHECK: check.draft_from_post,
        Phase.DISPUTE: evidence.draft_from_post,
        Phase.POST_CONTROL: check.draft_from_post,
    }


def draft_warnings(task: Task, draft: dict) -> dict:
    """Hints to refresh beside the editor after an autosave."""
    if task.phase == Phase.NORMALISATION:
        from annotation.checks import wording_warnings

        return {
            "claims": {
                i: wording_warnings(c.get("text", ""), c.get("speaker"))
                for i, c in enumerate(draft.get("claims", []))
            }
        }
    if task.phase in (Phase.QUESTIONS, Phase.DISPUTE):
        from annotation.evidence import evidence_problems
        from annotation.forms.evidence import evidence_from_draft, where

        problems = evidence_problems(evidence_from_draft(draft), task.claim, phase=task.phase)
        return {"hints": [(where(p.path), p.message) for p in problems if not p.blocking]}
    return {}


@require_POST
@login_required
def save_draft(request: HttpRequest, pk: int) -> HttpResponse:
    """Autosave: keep what the annotator typed, unless another tab saved newer work."""
    task = own_task_or_404(request.user, pk)
    parse = draft_parsers().get(task.phase)
    if parse is None:
        return HttpResponse(status=404)
    draft = parse(request.POST)
    try:
        version = int(request.POST.get("draft_version", ""))
    except ValueError:
        return HttpResponse("draft_version is missing", status=400)
    context = {"task": task}
    try:
        task.save_draft(draft, version=version)
    except StaleDraft:
        # Either another tab saved newer work, or the task is no longer this annotator's.
        context["conflict"] = True
        context["closed"] = task.status != Task.Status.IN_PROGRESS
        return render(request, "annotation/_save_status.html", context, status=409)
    context["saved_at"] = timezone.localtime()
    context.update(draft_warnings(task, draft))
    return render(request, "annotation/_save_status.html", context)


@require_POST
@login_required
def article_loaded(request: HttpRequest, pk: int) -> HttpResponse:
    """The article frame finished loading: a quality signal for managers (first time only)."""
    task = own_task_or_404(request.user, pk)
    Task.objects.filter(pk=task.pk, article_loaded_at__isnull=True).update(
        article_loaded_at=timezone.now()
    )
    return HttpResponse(status=204)


@require_POST
@login_required
def tour_done(request: HttpRequest, name: str) -> HttpResponse:
    if name not in TOURS:
        return JsonResponse({"detail": "unknown tour"}, status=404)
    user = request.user
    if name not in user.completed_tours:
        user.completed_tours = [*user.completed_tours, name]
        user.save(update_fields=["completed_tours"])
    return HttpResponse(status=204)
