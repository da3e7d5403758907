"""The annotator's control panel: progress per phase, Start next, resume, browse own work."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotation import assignment, handin
from annotation.access import own_task_or_404
from annotation.blindness import is_blind
from annotation.http import AuthenticatedHttpRequest
from annotation.models import Task
from annotation.phases import parts_of
from annotation.visibility import blind_task_context
from annotation.vocabulary import Phase


def _phase_rows(user) -> list[dict]:
    standings = assignment.phase_standings(user)
    # Each address reversed once and filled in per phase: reversing every link of every
    # phase was a good part of the panel's time.
    start_next, training, task = (
        _per_pk(name)
        for name in ("annotation:start-next", "annotation:training", "annotation:task")
    )
    rows = []
    for phase in Phase:
        standing = standings[phase.value]
        last_pk = standing["last_submitted_pk"]
        rows.append(
            {
                **standing,
                "phase": phase,
                "qualified": user.is_qualified_for(phase.value),
                "assigned": standing["done"] + standing["held"],
                "open": standing["held"],
                "start_next_url": start_next(phase.value),
                "training_url": training(phase.value)
                if phase.value <= Phase.QUALITY_CHECK
                else None,
                "last_submitted_url": task(last_pk) if last_pk is not None else None,
            }
        )
    return rows


def _per_pk(name: str):
    """The address of a view taking one integer, reversed once, for any integer."""
    head, _, tail = reverse(name, args=[0]).rpartition("/0/")
    return lambda pk: f"{head}/{int(pk)}/{tail}"


@login_required
def control_panel(request: AuthenticatedHttpRequest) -> HttpResponse:
    template = "annotation/control_panel.html"
    if request.htmx:
        template += "#phase-table"
    return render(request, template, {"phases": _phase_rows(request.user)})


@require_POST
@login_required
def start_next(request: AuthenticatedHttpRequest, phase: int) -> HttpResponse:
    if phase not in Phase.values:
        raise Http404("no such phase")
    try:
        task = assignment.next_task(request.user, phase)
    except assignment.NoTaskAvailable as reason:
        if request.htmx:
            return render(
                request,
                "annotation/control_panel.html#phase-table",
                {"phases": _phase_rows(request.user), "notice": str(reason)},
            )
        messages.info(request, str(reason))
        return redirect("annotation:control-panel")
    if request.htmx:
        return HttpResponseClientRedirect(task_url(task))
    # An address already: redirect() would first try it as a view name to reverse.
    return HttpResponseRedirect(task_url(task))


def task_url(task: Task) -> str:
    return reverse("annotation:task", args=[task.pk])


@login_required
def task_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """One of the annotator's own tasks, with what its phase may show and neighbours.

    The phase screens (P1, P2, P3-P5) take over the editing; this page is where Start next
    and the browse links land, and shows submitted work read-only.
    """
    task = own_task_or_404(request.user, pk)
    if task.status == Task.Status.ASSIGNED:
        task.start()  # a manager's hand-out starts when first opened
    if task.status == Task.Status.IN_PROGRESS:
        task.touch()
        # Each phase's editor (the blind checks' is review's): annotation/phases.py.
        return parts_of(task.phase).screen(request, task)
    own = Task.objects.filter(
        annotator=request.user, phase=task.phase, status=Task.Status.SUBMITTED
    ).order_by("submitted_at", "id")
    previous = next_one = None
    if task.status == Task.Status.SUBMITTED:
        previous = own.filter(
            Q(submitted_at__lt=task.submitted_at)
            | Q(submitted_at=task.submitted_at, id__lt=task.id)
        ).last()
        next_one = own.filter(
            Q(submitted_at__gt=task.submitted_at)
            | Q(submitted_at=task.submitted_at, id__gt=task.id)
        ).first()
    else:
        previous = own.last()
    if is_blind(task.phase):
        # Blind work gets the one blind context (annotation/visibility.py), never models.
        context = blind_task_context(task) | {
            "previous_pk": previous.pk if previous else None,
            "next_pk": next_one.pk if next_one else None,
            "closed_reason": handin.closed_reason(task),
        }
        return render(request, "annotation/blind_task.html", context)
    context = {
        "task": task,
        "closed_reason": handin.closed_reason(task),
        "blind": False,
        "claim": task.claim,
        "previous": previous,
        "next": next_one,
        "evidence": task.evidence_shown(),
        # What this annotator handed in, so browsing back shows their own work.
        **(parts_of(task.phase).handed_in(task) if task.status == Task.Status.SUBMITTED else {}),
    }
    return render(request, "annotation/task.html", context)
