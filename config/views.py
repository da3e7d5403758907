"""Site-wide error answers that belong to no single app."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults

from config.parsers import too_large_message


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 400, except that a body over DATA_UPLOAD_MAX_MEMORY_SIZE says so (413):
    JSON for the API, the site's error page for people."""
    if isinstance(exception, RequestDataTooBig):
        if request.path_info.startswith("/api/"):
            return JsonResponse({"detail": too_large_message()}, status=413)
        context = {"message": too_large_message()}
        return render(request, "413.html", context, status=413)
    # Django always passes the exception; None is only this signature's default.
    return defaults.bad_request(request, exception)  # type: ignore[arg-type]
