"""Request types for views' signatures: what the middleware and the sign-in decorators promise.

They are never instantiated; they tell mypy what a view may rely on. HtmxMiddleware runs on
every request (config/settings.py), so every request has `htmx` (django-htmx's documented
pattern); behind `login_required`, a permission class or an access helper the user is one of
ours, never AnonymousUser (django-stubs' pattern).
"""

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails
from rest_framework.request import Request

from annotation.models import User


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


class AuthenticatedHttpRequest(HtmxHttpRequest):
    user: User


class AuthenticatedRequest(Request):
    """A DRF request behind IsAuthenticated (the API's default permission class)."""

    user: User
