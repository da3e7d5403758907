from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The landing page: says who you are and sends you to the right panel."""
    panel_url, panel_name = request.user.panel
    return render(request, "home.html", {"panel_url": panel_url, "panel_name": panel_name})


@login_required
def signed_in(request: HttpRequest) -> HttpResponse:
    """Where signing in lands: straight on the panel of one's role, not a welcome page."""
    return redirect(request.user.panel[0])


def health(request: HttpRequest) -> JsonResponse:
    """For load balancers and the demo script: the app answers and the database is reachable."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
