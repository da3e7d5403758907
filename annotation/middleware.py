"""Sign-in rules that apply to every page: a one-time password must be replaced first, and a
session idle for SESSION_IDLE_TIMEOUT ends."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

# The session key holding the time (Unix seconds) of the session's latest request.
LAST_SEEN = "last_seen"

# Where an account with a one-time password may still go.
OPEN_WHILE_PASSWORD_MUST_CHANGE = {"password_change", "logout", "health"}
LOCKED_OUT = (
    "Too many failed sign-ins for this account from here, or from this address. "
    "Try again later or ask a manager to unlock it."
)
MUST_CHANGE_PASSWORD = (
    "Choose your own password before you go on: the one you were given works once."
)


class PasswordChangeRequired:
    """Sends an account with a one-time password to the password-change page until it is
    changed (see User.must_change_password); the API answers 403 with the reason."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view, args, kwargs) -> HttpResponse | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated or not user.must_change_password:
            return None
        assert request.resolver_match is not None  # resolved before any process_view
        if request.resolver_match.url_name in OPEN_WHILE_PASSWORD_MUST_CHANGE:
            return None
        if request.path_info.startswith("/api/"):
            return JsonResponse({"detail": MUST_CHANGE_PASSWORD}, status=403)
        if getattr(request, "htmx", False):
            return HttpResponseClientRedirect(reverse("password_change"))
        return redirect("password_change")


def client_address(request: HttpRequest) -> str | None:
    """The client's IP address as DRF's throttles see it (NUM_PROXIES): the connection's
    address, or the one the last trusted proxy added to X-Forwarded-For."""
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if settings.NUM_PROXIES == 0 or not forwarded:
        return request.META.get("REMOTE_ADDR")
    addresses = [a.strip() for a in forwarded.split(",")]
    return addresses[-min(settings.NUM_PROXIES, len(addresses))]


class SessionIdleTimeout:
    """A signed-in session ends after SESSION_IDLE_TIMEOUT of no requests (8 hours by
    default): the session is saved at most once a minute with its expiry pushed back
    (SESSION_COOKIE_AGE is the same time), and one that has been idle longer is ended here
    even if its cookie came back."""

    TOUCH_EVERY = 60  # seconds: a busy page does not write its session on every request

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            now = int(time.time())
            last = request.session.get(LAST_SEEN, now)
            if now - last > settings.SESSION_IDLE_TIMEOUT.total_seconds():
                logout(request)
                if request.headers.get("HX-Request") == "true":
                    return HttpResponseClientRedirect(
                        f"{reverse('login')}?{urlencode({'next': request.get_full_path()})}"
                    )
            elif now - last >= self.TOUCH_EVERY or LAST_SEEN not in request.session:
                request.session[LAST_SEEN] = now
        return self.get_response(request)


def remember_sign_in(sender, request, user, **kwargs) -> None:
    """Signing in is activity: the session starts with its time (user_logged_in receiver)."""
    if request is not None and hasattr(request, "session"):
        request.session[LAST_SEEN] = int(time.time())
