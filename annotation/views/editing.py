"""What every phase's editor shares: hand-ins through annotation/handin.py, the conflict
screen, timing, guided tours."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from annotation import assignment, handin
from annotation.access import own_task_or_404
from annotation.http import AuthenticatedHttpRequest
from annotation.models import Task
from annotation.phases import parts_of

# Tours a user can dismiss; the name is stored on the account once dismissed.
TOURS = {"p1", "p2", "p3", "p4", "p5"}


def next_task_or_panel(request: AuthenticatedHttpRequest, phase: int) -> HttpResponse:
    """After a hand-in: straight on to the next task of the phase, or back to the panel
    saying why there is none."""
    try:
        task = assignment.next_task(request.user, phase)
    except assignment.NoTaskAvailable as reason:
        messages.info(request, str(reason))
        return redirect("annotation:control-panel")
    return redirect("annotation:task", pk=task.pk)


def sent_version(post) -> int | None:
    """The saved version a tab's content builds on.

    "Keep this tab's version" on the conflict screen sends the newest version the tab was
    shown (`keep_version`): the annotator chose, so that one counts. Otherwise the tab's own
    `draft_version`, which never moves forward on a conflict.
    """
    for key in ("keep_version", "draft_version"):
        try:
            return int(post[key])
        except (KeyError, ValueError):
            continue
    return None


def tab_of(post) -> str:
    """The browser tab a post comes from (a fresh id per page load, set by editor.js)."""
    return str(post.get("tab_id", ""))[:64]


def kind_of(post, default: str) -> str:
    """What kind of hand-in a post is: a choice on the conflict screen, the save sent as the
    page closed, or `default` (an autosave, a submit)."""
    if "keep_version" in post:
        return handin.Kind.KEEP
    if post.get("closing"):
        return handin.Kind.CLOSE
    return default


def hand_in_post(
    request: AuthenticatedHttpRequest,
    task: Task,
    draft: dict,
    *,
    kind: str,
    finish=None,
    locked=False,
) -> handin.HandIn:
    """A form post handed to the one protocol: the version it builds on, its tab, its kind.
    A post without a version builds on nothing the server knows, so it is refused as stale
    (and kept). `locked` as in handin.hand_in."""
    version = sent_version(request.POST)
    return handin.hand_in(
        task,
        draft,
        version=-1 if version is None else version,
        author=request.user,
        tab=tab_of(request.POST),
        kind=kind_of(request.POST, kind),
        finish=finish,
        locked=locked,
    )


def draft_summary(phase: int, draft: dict) -> list[tuple[str, str, str]]:
    """A draft as (label, value, form field) rows, for the side-by-side conflict screen."""
    return parts_of(phase).draft_summary(draft or {})


def conflict_context(handed: handin.HandIn, mine: dict) -> dict:
    """What a tab whose hand-in was refused shows until the annotator chooses: both versions,
    the real reason, and where its own text is kept on the server (the stored revision).

    The tab keeps the version it was built on, so every later save or submit from it is
    refused (and kept) too; only "keep this tab's version" (which names `version`) or
    reloading the saved one ends the conflict.
    """
    task = handed.task
    revision = handed.revision
    return {
        "conflict": {
            "sent_version": "" if revision.base_version in (None, -1) else revision.base_version,
            "version": task.draft_version,
            "saved_at": task.submitted_at or task.last_activity_at,
            "closed": task.status != Task.Status.IN_PROGRESS,
            "submitted": task.status == Task.Status.SUBMITTED,
            "status": task.get_status_display(),
            "reason": handed.reason,
            "revision": revision.pk,
            "revisions_url": reverse("annotation:revisions", args=[task.pk]),
            "reload_url": reverse("annotation:task", args=[task.pk]),
            "rows": list(
                _side_by_side(
                    draft_summary(task.phase, mine), draft_summary(task.phase, task.draft)
                )
            ),
        }
    }


def journal_context(task: Task) -> dict:
    """What every editor shows beside its browser journal: hand-ins refused since the draft
    was last saved (another tab's text, not saved over it but kept, and where), and the
    link to all revisions. Plain data: the blind phases' pages hold no model."""
    return {
        "branches": _branches(task),
        "revisions_url": reverse("annotation:revisions", args=[task.pk]),
    }


def _branches(task: Task) -> list[dict]:
    return [
        {
            "pk": r.pk,
            "task_id": r.task_id,
            "created_at": r.created_at,
            "kind": r.get_kind_display(),
            "outcome": r.get_outcome_display(),
        }
        for r in handin.unsaved_branches(task)
    ]


def _side_by_side(mine, theirs):
    mine_by_label = {label: (value, field) for label, value, field in mine}
    theirs_by_label = {label: (value, field) for label, value, field in theirs}
    labels = list(dict.fromkeys([row[0] for row in theirs] + [row[0] for row in mine]))
    for label in labels:
        my_value, my_field = mine_by_label.get(label, ("", ""))
        their_value, their_field = theirs_by_label.get(label, ("", ""))
        yield {
            "label": label,
            "mine": my_value,
            "theirs": their_value,
            "field": my_field or their_field,
            "differs": my_value != their_value,
        }


def _task_view(task: Task) -> dict:
    return {"pk": task.pk, "draft_version": task.draft_version}


@require_POST
@login_required
def save_draft(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Autosave (and the save sent as a page closes): one hand-in of annotation/handin.py,
    kept as a revision whether or not it becomes the draft."""
    with transaction.atomic():
        # The annotator's own task, found and locked for the hand-in in one query (someone
        # else's task is "not found", as annotation/access.py answers).
        try:
            task = handin.lock_for_hand_in(Task.objects.filter(pk=pk, annotator=request.user))
        except Task.DoesNotExist:
            raise Http404("no such task") from None
        parts = parts_of(task.phase)
        draft = parts.draft_from_post(request.POST)
        if sent_version(request.POST) is None:
            return HttpResponse("draft_version is missing", status=400)
        # Still typing after the lease lapsed: the task comes back if nobody took it. (Not
        # for a journal sent from the read-only page: that keeps text, it does not resume.)
        resuming = not request.POST.get("from_journal")
        if resuming and task.status == Task.Status.EXPIRED and assignment.reclaim_lapsed(task):
            task.refresh_from_db()
        handed = hand_in_post(request, task, draft, kind=handin.Kind.SAVE, locked=True)
    # The save-status fragment needs only the task's number and version; blind work never
    # gets the Task itself (annotation/visibility.py).
    context = {"task": _task_view(handed.task), "autosave": True, "revision": handed.revision.pk}
    if handed.refused or handed.outcome == handin.DUPLICATE:
        # Another tab saved newer work, or the task is no longer open: the text is kept.
        context.update(conflict_context(handed, draft))
        response = render(request, "annotation/_save_status.html", context, status=409)
    else:
        context["saved_at"] = timezone.localtime()
        # The phase's hints beside the editor, refreshed out of band (annotation/phases.py).
        context.update(parts.draft_warnings(handed.task, draft))
        context["warnings_part"] = parts.save_status_part
        response = render(request, "annotation/_save_status.html", context)
    # Where the server keeps what was sent: the tab's journal can let go of it.
    response["X-Revision"] = str(handed.revision.pk)
    if handed.outcome == handin.DUPLICATE:
        response["X-Handed-In"] = "same"
    return response


@require_POST
@login_required
def article_loaded(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The article frame finished loading: a quality signal for managers (first time only)."""
    task = own_task_or_404(request.user, pk)
    Task.objects.filter(pk=task.pk, article_loaded_at__isnull=True).update(
        article_loaded_at=timezone.now()
    )
    return HttpResponse(status=204)


@require_POST
@login_required
def tour_done(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    if name not in TOURS:
        return JsonResponse({"detail": "unknown tour"}, status=404)
    user = request.user
    if name not in user.completed_tours:
        user.completed_tours = [*user.completed_tours, name]
        user.save(update_fields=["completed_tours"])
    return HttpResponse(status=204)
