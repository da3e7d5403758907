"""Site-wide response handling that belongs to no single app."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string


class MethodNotAllowedPage:
    """Give a bare 405 (from @require_POST and friends) the site's error page.

    Django answers a GET on a POST-only screen address with an empty body, which reads as a
    broken site; API answers already carry their own JSON and are left alone.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == 405 and not response.content and request.method != "HEAD":
            response.content = render_to_string("405.html", request=request)
            response["Content-Type"] = "text/html; charset=utf-8"
        return response
