"""Search backends: each turns (query, before date, country, page) into ranked results.

`get_backend(name)` gives the backend chosen by SEARCH_BACKEND (or by name). Each backend
module has one exception type for outside failures, a subclass of SearchUnavailable, and a
backend without its key reports `available() -> False` with `unavailable_reason()`.
Date restriction, flags, caching and logging are the service's job (search_proxy.service).
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from search_proxy.backends.base import (
    MAX_PAGE,
    RESULTS_PER_PAGE,
    Backend,
    SearchResult,
    SearchUnavailable,
)

__all__ = [
    "BACKEND_NAMES",
    "MAX_PAGE",
    "RESULTS_PER_PAGE",
    "Backend",
    "SearchResult",
    "SearchUnavailable",
    "get_backend",
]

BACKEND_NAMES = ("local", "google", "brave")


def get_backend(name: str | None = None) -> Backend:
    """The backend called `name`, or the one SEARCH_BACKEND names."""
    chosen = name or settings.SEARCH_BACKEND
    if chosen == "local":
        from search_proxy.backends.local import LocalBackend

        return LocalBackend()
    if chosen == "google":
        from search_proxy.backends.google import GoogleBackend

        return GoogleBackend()
    if chosen == "brave":
        from search_proxy.backends.brave import BraveBackend

        return BraveBackend()
    raise ImproperlyConfigured(
        f"unknown search backend {chosen!r}; choose one of {', '.join(BACKEND_NAMES)}"
    )
