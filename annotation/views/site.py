"""Site-wide pages outside any phase: the landing page, signing in and out, the password
change, the lock-out answer (django-axes) and the health check."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render

from annotation.http import AuthenticatedHttpRequest
from annotation.middleware import LOCKED_OUT, MUST_CHANGE_PASSWORD


@login_required
def home(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The landing page: says who you are and sends you to the right panel."""
    panel_url, panel_name = request.user.panel
    return render(request, "home.html", {"panel_url": panel_url, "panel_name": panel_name})


@login_required
def signed_in(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Where signing in lands: straight on the panel of one's role, not a welcome page."""
    return redirect(request.user.panel[0])


def health(request: HttpRequest) -> JsonResponse:
    """For load balancers and the demo script: the app answers and the database is reachable."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


class PasswordChange(auth_views.PasswordChangeView):
    """Django's password change, which also ends a one-time password's restrictions."""

    success_url = "/"
    extra_context = {"must_change_password": MUST_CHANGE_PASSWORD}

    def form_valid(self, form):
        response = super().form_valid(form)
        self.request.user.chose_own_password()
        return response


class SignOut(auth_views.LogoutView):
    """Django's sign-out, which also ends the account's API tokens: signing out means
    nothing signed in as this person keeps working."""

    def post(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            request.user.revoke_api_tokens()
        return super().post(request, *args, **kwargs)


def locked_out(request: HttpRequest, original_response=None, credentials=None) -> HttpResponse:
    """What a sign-in locked out by django-axes answers: the API gets JSON, people the
    sign-in page with the reason (429 either way)."""
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": LOCKED_OUT}, status=429)
    context = {"form": AuthenticationForm(request), "locked_out": LOCKED_OUT}
    return render(request, "registration/login.html", context, status=429)
