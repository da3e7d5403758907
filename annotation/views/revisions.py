"""The revision log of a task (annotation/handin.py): every save and submit attempt that
reached the server, refused ones included. The annotator lists, reads, restores and
discards the revisions of their own tasks; managers read all of them, discarded ones too."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import handin
from annotation.access import manager_required, own_revision_or_404, own_task_or_404
from annotation.http import AuthenticatedHttpRequest
from annotation.models import DraftRevision, Task
from annotation.views.editing import draft_summary

LIST_TEMPLATE = "annotation/revisions.html"
DETAIL_TEMPLATE = "annotation/revision.html"


def texts_of(content, path: str = "") -> list[tuple[str, str]]:
    """Every non-empty text in a revision's content, with where it sits: nothing typed is
    hidden from the page, whatever the phase's draft holds."""
    if isinstance(content, dict):
        return [t for key, value in content.items() for t in texts_of(value, _join(path, key))]
    if isinstance(content, list):
        return [t for i, value in enumerate(content) for t in texts_of(value, _join(path, i))]
    if isinstance(content, str) and content.strip():
        return [(path, content)]
    return []


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _preview(content: dict) -> str:
    words = " · ".join(text for _, text in texts_of(content))
    return words[:140] + ("…" if len(words) > 140 else "")


def _listing(request: HttpRequest, task: Task, revisions, *, manager: bool) -> HttpResponse:
    revisions = list(revisions)
    contents = DraftRevision.contents(revisions)
    rows = [{"revision": r, "preview": _preview(contents[r.pk])} for r in revisions]
    context = {"task": task, "rows": rows, "manager": manager}
    return render(request, LIST_TEMPLATE, context)


def _detail(request: HttpRequest, task: Task, revision: DraftRevision, *, manager: bool):
    content = revision.content
    context = {
        "task": task,
        "revision": revision,
        "manager": manager,
        "summary": draft_summary(task.phase, content) if not revision.via_api else [],
        "texts": texts_of(content),
        "can_restore": not manager and task.status == Task.Status.IN_PROGRESS,
        "closed_reason": handin.closed_reason(task)
        if task.status != Task.Status.IN_PROGRESS
        else "",
    }
    return render(request, DETAIL_TEMPLATE, context)


@login_required
def revisions(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The annotator's own task: every revision they have not discarded, newest first."""
    task = own_task_or_404(request.user, pk)
    return _listing(request, task, task.revisions.kept_for_annotator(), manager=False)


@login_required
def revision(request: AuthenticatedHttpRequest, pk: int, revision_pk: int) -> HttpResponse:
    task, found = own_revision_or_404(request.user, pk, revision_pk)
    return _detail(request, task, found, manager=False)


@require_POST
@login_required
def restore(request: AuthenticatedHttpRequest, pk: int, revision_pk: int) -> HttpResponse:
    """Make this revision the task's draft again (a new revision records the choice)."""
    task, found = own_revision_or_404(request.user, pk, revision_pk)
    handed = handin.restore(found, by=request.user)
    if handed.refused:
        messages.error(
            request,
            f"Nothing was restored: {handed.reason}. The text stays here to copy.",
        )
        return redirect("annotation:revision", pk=task.pk, revision_pk=found.pk)
    messages.success(
        request,
        f"Revision {found.pk} from {found.created_at:%H:%M:%S} is your draft again; the draft "
        "it replaced stays in the list of revisions.",
    )
    return redirect("annotation:task", pk=task.pk)


@require_POST
@login_required
def discard(request: AuthenticatedHttpRequest, pk: int, revision_pk: int) -> HttpResponse:
    """The one way a text leaves the annotator's sight: their explicit choice (managers
    still see it)."""
    task, found = own_revision_or_404(request.user, pk, revision_pk)
    handin.discard(found, by=request.user)
    messages.success(request, f"Revision {found.pk} is discarded.")
    return redirect("annotation:revisions", pk=task.pk)


@manager_required
def manage_revisions(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Any task's revisions for managers, including those its annotator discarded."""
    task = get_object_or_404(Task.objects.select_related("annotator"), pk=pk)
    return _listing(request, task, task.revisions.all(), manager=True)


@manager_required
def manage_revision(request: AuthenticatedHttpRequest, pk: int, revision_pk: int) -> HttpResponse:
    task = get_object_or_404(Task.objects.select_related("annotator"), pk=pk)
    found = get_object_or_404(task.revisions.all(), pk=revision_pk)
    return _detail(request, task, found, manager=True)
