"""What every search backend shares: the result type, paging limits, the base exception."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from html import unescape
from typing import Any, Protocol

import requests

# Ten results a page, ten pages: the most Google's API serves (start + num <= 100) and the
# most Brave's (offset <= 9).
RESULTS_PER_PAGE = 10
MAX_PAGE = 10


@dataclass(frozen=True)
class SearchResult:
    """One result as a backend ranked it, before the service restricts and flags it."""

    title: str
    url: str
    snippet: str
    published: date | None
    date_source: str  # a search_proxy.dates.DateSource value
    rank: int  # the backend's own rank, 1-based across pages


class SearchUnavailable(Exception):
    """A backend cannot answer now: no key, the outside service failed, timed out or
    answered something unreadable. The message is fit to show to an annotator."""


class Backend(Protocol):
    name: str
    # Whether the engine narrows or ranks results by a country code; screens hide the
    # country box when it would be ignored.
    uses_country: bool

    def available(self) -> bool: ...

    def unavailable_reason(self) -> str: ...

    def search(
        self, query: str, *, before: date, country: str | None, page: int
    ) -> list[SearchResult]:
        """Results published before `before` as far as the backend knows, page `page`
        (1-based, RESULTS_PER_PAGE each). Raises the module's SearchUnavailable subclass."""
        ...


_TAGS = re.compile(r"<[^>]+>")


def plain_text(value: object) -> str:
    """Text without HTML tags or entities (API snippets carry <b>, &amp;...)."""
    if not isinstance(value, str):
        return ""
    return " ".join(unescape(_TAGS.sub("", value)).split())


def first_rank(page: int) -> int:
    return (page - 1) * RESULTS_PER_PAGE + 1


class ConfiguredBackend:
    """Shared by the backends: available exactly when nothing is missing."""

    def unavailable_reason(self) -> str:
        raise NotImplementedError

    def available(self) -> bool:
        return not self.unavailable_reason()


def get_json(
    url: str,
    *,
    params: dict,
    headers: dict[str, str],
    timeout: float,
    service: str,
    unavailable: type[SearchUnavailable],
    error_message: Callable[[int, Any], str],
) -> dict:
    """One GET to a search API, its failures turned into `unavailable` with a message for
    the annotator. Never puts the request URL or the exception text in a message: both
    can carry the API key."""
    try:
        response = requests.get(
            url, params=params, headers=headers, timeout=(min(5.0, timeout), timeout)
        )
    except requests.Timeout:
        raise unavailable(f"{service} did not answer in time.") from None
    except requests.RequestException as exc:
        raise unavailable(f"{service} could not be reached ({type(exc).__name__}).") from None
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.status_code != 200:
        raise unavailable(error_message(response.status_code, data))
    if not isinstance(data, dict):
        raise unavailable(f"{service} answered something that is not JSON.")
    return data
