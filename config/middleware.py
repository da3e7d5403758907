"""Site-wide response handling that belongs to no single app."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.cache import add_never_cache_headers

from annotation.boundary import Refusal, shown, text_refusal


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


class InputBoundary:
    """Refuse a request whose query string, form fields or upload names hold text the
    platform does not take (annotation/boundary.py), before any view, rule or database
    sees it: 400 naming the field, in JSON for the API; for htmx requests 422 with the
    message shown in the page's alert area, so an editor keeps its unsaved work.

    JSON bodies are the API parser's (config/parsers.py), file contents the importers'.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refused = first_refused_field(request)
        if refused is not None:
            return refused_response(request, *refused)
        return self.get_response(request)


def first_refused_field(request: HttpRequest) -> tuple[str, Refusal] | None:
    """(field name, refusal) of the first refused parameter, form field or upload name."""
    sources = [request.GET]
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        sources.append(request.POST)  # empty unless the body is a form (JSON is the API's)
    for source in sources:
        for name, values in source.lists():
            if refusal := text_refusal(name, limit=1_000):
                return shown(name), refusal
            for value in values:
                if refusal := text_refusal(value):
                    return name, refusal
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        for name, uploads in request.FILES.lists():
            for upload in uploads:
                if refusal := text_refusal(upload.name or "", limit=255):
                    return name, Refusal("", f"has a file name that {refusal.message}", "name")
    return None


def refused_response(request: HttpRequest, name: str, refusal: Refusal) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        return JsonResponse({name: [f"{refusal.message}."]}, status=400)
    message = f"The field '{name}' {refusal.message}. Nothing was saved; correct it and send again."
    if request.headers.get("HX-Request") == "true":
        response = HttpResponse(
            render_to_string("_input_refused.html", {"message": message}, request=request),
            status=422,
        )
        response["HX-Retarget"] = "#input-refused"
        response["HX-Reswap"] = "innerHTML"
        return response
    context = {
        "error_code": 400,
        "error_title": "This could not be accepted",
        "error_text": message,
    }
    return HttpResponse(render_to_string("_error.html", context, request=request), status=400)


class NoStore:
    """No cache, shared or the browser's own, keeps a page or API answer of ours: they are
    someone's tasks, claims, one-time passwords or API tokens. Static files are served before
    this (whitenoise) and keep their long cache; an answer that set its own Cache-Control
    keeps it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not response.has_header("Cache-Control"):
            add_never_cache_headers(response)
        return response
