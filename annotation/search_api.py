"""The search API under /api/v1/search/: what the Phase 2 search bar and page viewer do.

It lives in annotation because it starts from the caller's task; the searching itself is
search_proxy's (service.search and service.open_page, given the task's SearchScope).

- GET  /api/v1/search/?q=&before=&country=&page=&task=  one page of marked results;
- POST /api/v1/search/open/ {url, task?, search?}       a page's sentences, the click logged.

A task id must be one of the caller's own tasks (404 otherwise, so others' tasks do not
leak) and a question-answering task (P2 or P4; 403 for the blind phases, whose annotators
must not search). Status codes beyond 400/401/404/405: 429 with Retry-After when the rate
limit is reached, 503 when the search backend is unavailable, 422 when the page viewer
refuses an address or page, 502 when the page cannot be fetched.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import api_view
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response

from annotation.access import own_search_task
from annotation.http import AuthenticatedRequest
from annotation.models import Task
from search_proxy import fetch, service
from search_proxy.backends import SearchUnavailable
from search_proxy.models import SearchLog
from search_proxy.serializers import (
    OpenedPageSerializer,
    OpenPageSerializer,
    SearchPageSerializer,
    SearchQuerySerializer,
)


def _task_for(request: AuthenticatedRequest, data: dict) -> Task | None:
    """The caller's P2/P4 task the search is for. Annotators always search from one, so a
    quality checker (P3, P5) cannot search at all; managers and researchers may search freely."""
    if "task" in data:
        return own_search_task(request.user, data["task"])
    if request.user.is_manager or request.user.is_researcher:
        return None
    raise PermissionDenied("Search from one of your P2 or P4 tasks (give its id as task).")


def _error(exc: Exception, code: int, **headers: str) -> Response:
    return Response({"detail": str(exc)}, status=code, headers=headers or None)


@extend_schema(
    parameters=[SearchQuerySerializer],
    responses={
        200: SearchPageSerializer,
        403: OpenApiResponse(description="The task is not a question-answering task."),
        404: OpenApiResponse(description="No such task of yours."),
        429: OpenApiResponse(description="Too many searches; see Retry-After."),
        503: OpenApiResponse(description="The search backend is unavailable."),
    },
)
# The stub's api_view takes views of a plain Request only; IsAuthenticated (the default
# permission class) makes this one an AuthenticatedRequest.
@api_view(["GET"])  # type: ignore[arg-type]
def search(request: AuthenticatedRequest) -> Response:
    form = SearchQuerySerializer(data=request.query_params)
    form.is_valid(raise_exception=True)
    data = form.validated_data
    task = _task_for(request, data)
    try:
        page = service.search(
            data["q"],
            before=data.get("before"),
            country=data.get("country"),
            page=data["page"],
            user=request.user,
            scope=task.search_scope() if task is not None else None,
        )
    except service.InvalidSearch as exc:
        return _error(exc, status.HTTP_400_BAD_REQUEST)
    except service.RateLimited as exc:
        return _error(
            exc, status.HTTP_429_TOO_MANY_REQUESTS, **{"Retry-After": str(exc.retry_after)}
        )
    except SearchUnavailable as exc:
        return _error(exc, status.HTTP_503_SERVICE_UNAVAILABLE)
    return Response(SearchPageSerializer(page).data)


@extend_schema(
    request=OpenPageSerializer,
    responses={
        200: OpenedPageSerializer,
        403: OpenApiResponse(description="The task is not a question-answering task."),
        404: OpenApiResponse(description="No such task or search of yours."),
        422: OpenApiResponse(
            description="The address or page is refused (private address, too large...)."
        ),
        429: OpenApiResponse(description="Too many pages opened; see Retry-After."),
        502: OpenApiResponse(
            description='The page could not be fetched; "indexed" holds the local search '
            "index's title and sentences of it, or null."
        ),
    },
)
# The stub's api_view takes views of a plain Request only; IsAuthenticated (the default
# permission class) makes this one too an AuthenticatedRequest.
@api_view(["POST"])  # type: ignore[arg-type]
def open_page(request: AuthenticatedRequest) -> Response:
    form = OpenPageSerializer(data=request.data)
    form.is_valid(raise_exception=True)
    data = form.validated_data
    task = _task_for(request, data)
    search_log = None
    if "search" in data:
        search_log = SearchLog.objects.filter(pk=data["search"], user=request.user).first()
        if search_log is None:
            raise NotFound("No such search of yours.")
    try:
        opened = service.open_page(
            data["url"],
            user=request.user,
            scope=task.search_scope() if task is not None else None,
            search_log=search_log,
        )
    except service.RateLimited as exc:
        return _error(
            exc, status.HTTP_429_TOO_MANY_REQUESTS, **{"Retry-After": str(exc.retry_after)}
        )
    except fetch.FetchRefused as exc:
        return _error(exc, status.HTTP_422_UNPROCESSABLE_ENTITY)
    except fetch.PageUnavailable as exc:
        # As the viewer does: the local index's text of the page, when it has one.
        indexed = fetch.indexed_copy(data["url"])
        body: dict[str, Any] = {"detail": str(exc), "indexed": None}
        if indexed is not None:
            body["indexed"] = {"title": indexed.title, "sentences": list(indexed.sentences)}
        return Response(body, status=status.HTTP_502_BAD_GATEWAY)
    return Response(OpenedPageSerializer(opened).data)
