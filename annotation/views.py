from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from annotation.models import Article, Claim, Task
from annotation.vocabulary import Phase


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The landing page: says who you are and sends you to the right panel."""
    user = request.user
    if user.is_manager:
        panel_url, panel_name = "annotation:manager-panel", "manager panel"
    else:
        panel_url, panel_name = "annotation:control-panel", "annotation panel"
    return render(request, "home.html", {"panel_url": panel_url, "panel_name": panel_name})


@login_required
def control_panel(request: HttpRequest) -> HttpResponse:
    """An annotator's tasks per phase (the workflow issue fills in Start next and resume)."""
    user = request.user
    done = dict(
        Task.objects.held_by(user)
        .filter(status=Task.Status.SUBMITTED)
        .values_list("phase")
        .annotate(n=Count("id"))
    )
    held = dict(Task.objects.held_by(user).values_list("phase").annotate(n=Count("id")))
    phases = [
        {
            "phase": phase,
            "qualified": user.is_qualified_for(phase.value),
            "done": done.get(phase.value, 0),
            "assigned": held.get(phase.value, 0),
        }
        for phase in Phase
    ]
    return render(request, "annotation/control_panel.html", {"phases": phases})


@login_required
def manager_panel(request: HttpRequest) -> HttpResponse:
    """Counts of articles and claims per state (later issues add queues and agreement)."""
    if not request.user.is_manager:
        raise PermissionDenied("Only project managers can open the manager panel.")
    articles = dict(Article.objects.values_list("state").annotate(n=Count("id")))
    claims = dict(Claim.objects.values_list("state").annotate(n=Count("id")))
    context = {
        "article_states": [(s.label, articles.get(s.value, 0)) for s in Article.State],
        "claim_states": [(s.label, claims.get(s.value, 0)) for s in Claim.State],
    }
    return render(request, "annotation/manager_panel.html", context)


def health(request: HttpRequest) -> JsonResponse:
    """For load balancers and the demo script: the app answers and the database is reachable."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
