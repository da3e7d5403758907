from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The landing page: says who you are and sends you to the right panel."""
    if request.user.is_manager:
        panel_url, panel_name = "annotation:manager-panel", "manager panel"
    elif request.user.is_researcher:
        panel_url, panel_name = "exports:export-list", "dataset exports"
    else:
        panel_url, panel_name = "annotation:control-panel", "annotation panel"
    return render(request, "home.html", {"panel_url": panel_url, "panel_name": panel_name})


def health(request: HttpRequest) -> JsonResponse:
    """For load balancers and the demo script: the app answers and the database is reachable."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
