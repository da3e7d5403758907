"""Brave Search API (web search).

Request: GET {BRAVE_SEARCH_URL}?q=&count=10&offset=&freshness=1900-01-01toYYYY-MM-DD&country=
with the key in the `X-Subscription-Token` header.
- `freshness=FROMtoTO` keeps pages Brave dates within FROM..TO, both days included, so TO is
  the day before the claim date; the service drops anything still dated on or after it.
- `offset` counts pages, not results (0-based, at most 9).
- `country` is an upper-case two-letter code.
- `text_decorations=0` asks for snippets without <strong> markup (stripped anyway).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.conf import settings

from search_proxy.backends.base import (
    RESULTS_PER_PAGE,
    ConfiguredBackend,
    SearchResult,
    SearchUnavailable,
    first_rank,
    get_json,
    plain_text,
)
from search_proxy.dates import DateSource, parse_date


class BraveUnavailable(SearchUnavailable):
    """Brave search cannot answer: no key, quota, an error answer, a timeout."""


class BraveBackend(ConfiguredBackend):
    name = "brave"
    uses_country = True

    def __init__(
        self, api_key: str | None = None, url: str | None = None, timeout: float | None = None
    ):
        self.api_key = settings.BRAVE_SEARCH_API_KEY if api_key is None else api_key
        self.url = url or settings.BRAVE_SEARCH_URL
        self.timeout = timeout or settings.SEARCH_HTTP_TIMEOUT

    def unavailable_reason(self) -> str:
        if not self.api_key:
            return "Brave search is not configured (BRAVE_SEARCH_API_KEY is empty)."
        return ""

    def request_params(
        self, query: str, *, before: date, country: str | None, page: int
    ) -> dict[str, str]:
        last_day = before - timedelta(days=1)
        params = {
            "q": query,
            "count": str(RESULTS_PER_PAGE),
            "offset": str(page - 1),
            "freshness": f"1900-01-01to{last_day:%Y-%m-%d}",
            "text_decorations": "0",
            "result_filter": "web",
        }
        if country:
            params["country"] = country.upper()
        return params

    def request_headers(self) -> dict[str, str]:
        return {"Accept": "application/json", "X-Subscription-Token": self.api_key}

    def search(
        self, query: str, *, before: date, country: str | None, page: int
    ) -> list[SearchResult]:
        if reason := self.unavailable_reason():
            raise BraveUnavailable(reason)
        data = get_json(
            self.url,
            params=self.request_params(query, before=before, country=country, page=page),
            headers=self.request_headers(),
            timeout=self.timeout,
            service="Brave search",
            unavailable=BraveUnavailable,
            error_message=_error_message,
        )
        return parse_response(data, first=first_rank(page))


def _error_message(status: int, data: Any) -> str:
    if status == 429:
        return "Brave search rate limit or quota reached; try again later."
    detail = ""
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        detail = plain_text(data["error"].get("detail"))
    return f"Brave search failed (HTTP {status}){': ' + detail if detail else ''}."


def parse_response(data: dict, *, first: int) -> list[SearchResult]:
    """Web results of one Brave answer; `first` is the rank of its first item."""
    web = data.get("web")
    items = web.get("results") if isinstance(web, dict) else None
    results = []
    for offset, item in enumerate(items or []):
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            continue
        # page_age is an ISO timestamp; age is text such as "March 3, 2020" or "2 days ago".
        published = parse_date(item.get("page_age")) or parse_date(item.get("age"))
        results.append(
            SearchResult(
                title=plain_text(item.get("title")) or item["url"],
                url=item["url"],
                snippet=plain_text(item.get("description")),
                published=published,
                date_source=DateSource.SEARCH_ENGINE if published else DateSource.UNKNOWN,
                rank=first + offset,
            )
        )
    return results
