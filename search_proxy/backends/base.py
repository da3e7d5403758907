"""What every search backend shares: the result type, paging limits, the base exception."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from html import unescape
from typing import Protocol

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
