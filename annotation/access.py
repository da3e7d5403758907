"""Who may open what: the access checks every annotation view and API module starts with,
and review's screens too (STYLE.md: fetch the object through an access helper first).

Someone else's task is "not found", never "forbidden": ids reveal nothing. A page of the
wrong kind for a task one holds is "not found" on screens and "forbidden" in the search
API (the caller named their own task, so saying why helps them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import wraps
from typing import Any, TypeVar, cast

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseBase
from django.shortcuts import get_object_or_404
from rest_framework import exceptions as api_exceptions

from annotation.blindness import EVIDENCE_PHASES
from annotation.http import AuthenticatedHttpRequest
from annotation.models import DraftRevision, Task, User
from annotation.suggestions.kinds import kinds_for
from annotation.vocabulary import Phase

_View = TypeVar("_View", bound=Callable[..., HttpResponseBase])


def manager_required(view: _View) -> _View:
    @login_required
    @wraps(view)
    def wrapper(request: AuthenticatedHttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_manager:
            raise PermissionDenied("Only project managers can open this page.")
        return view(request, *args, **kwargs)

    # The wrapper takes what the view takes (functools.wraps keeps its name and signature).
    return cast(_View, wrapper)


def own_task_or_404(user: User, pk: int) -> Task:
    # Someone else's task is "not found", not "forbidden": ids reveal nothing.
    return get_object_or_404(
        # The claim's article too: the evidence rules read its address (the claim's own
        # fact-check is never evidence).
        Task.objects.select_related("claim", "article", "claim__article"),
        pk=pk,
        annotator=user,
    )


def editor_task(request: AuthenticatedHttpRequest, pk: int, phases: Collection[int]) -> Task:
    """The start every editor view shares: the annotator's own task, of one of `phases`."""
    task = own_task_or_404(request.user, pk)
    if task.phase not in phases:
        raise Http404(f"not a task of {', '.join(Phase(p).label for p in sorted(phases))}")
    return task


def own_revision_or_404(user: User, pk: int, revision_pk: int) -> tuple[Task, DraftRevision]:
    """A revision of the annotator's own task `pk` they have not discarded."""
    task = own_task_or_404(user, pk)
    revision = get_object_or_404(task.revisions.kept_for_annotator(), pk=revision_pk)
    return task, revision


def suggesting_task_or_404(user: User, pk: int) -> Task:
    """The annotator's own open task, in a phase (and batch arm) that gets suggestions."""
    task = own_task_or_404(user, pk)
    # Blind phases, control tasks and handed-in tasks have no suggestions: "not found".
    if not task.is_open or not kinds_for(task):
        raise Http404("no suggestions for this task")
    return task


def own_search_task(user: User, pk: int) -> Task:
    """The caller's own P2/P4 task `pk`: 404 for anyone else's, 403 for other phases."""
    task = Task.objects.select_related("claim__article").filter(pk=pk, annotator=user).first()
    if task is None:
        raise api_exceptions.NotFound("No such task of yours.")
    if task.phase not in EVIDENCE_PHASES or task.claim is None:
        raise api_exceptions.PermissionDenied(
            "Search is only available in the question-answering phases (P2 and P4)."
        )
    return task
