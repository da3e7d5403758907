"""Google Programmable Search (Custom Search JSON API), the search the AVeriTeC annotators had.

Request: GET {GOOGLE_SEARCH_URL}?key=&cx=&q=&num=10&start=&sort=date:r:19000101:YYYYMMDD&gl=
- `sort=date:r:FROM:TO` restricts results to pages Google dates within FROM..TO, both days
  included. Pages must be published strictly before the claim date, so TO is the day
  before it (a page dated on the claim date is too late). The service drops any result
  still dated on or after the claim date.
- `gl` (lower-case country code) boosts results from that country; the service passes the
  claim's location when the annotator chose none.
- `start` is 1-based: page 2 starts at 11. Google serves at most 100 results.

The API key travels as a query parameter (the documented way), so no error message here
ever includes a request URL or an exception text that could carry it.
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


class GoogleUnavailable(SearchUnavailable):
    """Google search cannot answer: no key, quota, an error answer, a timeout."""


# Meta tags Google copies into pagemap.metatags that carry a publication date, best first.
_DATE_TAGS = (
    "article:published_time",
    "og:article:published_time",
    "datepublished",
    "publishdate",
    "pubdate",
    "dc.date.issued",
    "dc.date",
    "date",
    "parsely-pub-date",
    "sailthru.date",
)
# "Mar 3, 2020 ... text": Google puts the page's date in front of the snippet.
_SNIPPET_DATE_SEPARATOR = " ... "


class GoogleBackend(ConfiguredBackend):
    name = "google"
    uses_country = True

    def __init__(
        self,
        api_key: str | None = None,
        engine_id: str | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ):
        self.api_key = settings.GOOGLE_SEARCH_API_KEY if api_key is None else api_key
        self.engine_id = settings.GOOGLE_SEARCH_ENGINE_ID if engine_id is None else engine_id
        self.url = url or settings.GOOGLE_SEARCH_URL
        self.timeout = timeout or settings.SEARCH_HTTP_TIMEOUT

    def unavailable_reason(self) -> str:
        if not self.api_key:
            return "Google search is not configured (GOOGLE_SEARCH_API_KEY is empty)."
        if not self.engine_id:
            return "Google search is not configured (GOOGLE_SEARCH_ENGINE_ID is empty)."
        return ""

    def request_params(
        self, query: str, *, before: date, country: str | None, page: int
    ) -> dict[str, str]:
        last_day = before - timedelta(days=1)
        params = {
            "key": self.api_key,
            "cx": self.engine_id,
            "q": query,
            "num": str(RESULTS_PER_PAGE),
            "start": str(first_rank(page)),
            "sort": f"date:r:19000101:{last_day:%Y%m%d}",
        }
        if country:
            params["gl"] = country.lower()
        return params

    def search(
        self, query: str, *, before: date, country: str | None, page: int
    ) -> list[SearchResult]:
        if reason := self.unavailable_reason():
            raise GoogleUnavailable(reason)
        params = self.request_params(query, before=before, country=country, page=page)
        data = get_json(
            self.url,
            params=params,
            headers={"Accept": "application/json"},
            timeout=self.timeout,
            service="Google search",
            unavailable=GoogleUnavailable,
            error_message=_error_message,
        )
        return parse_response(data, first=int(params["start"]))


def _error_message(status: int, data: Any) -> str:
    message = ""
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        message = plain_text(data["error"].get("message"))
    if status == 429:
        return "Google search quota is used up for now; try again later."
    return f"Google search failed (HTTP {status}){': ' + message if message else ''}."


def parse_response(data: dict, *, first: int) -> list[SearchResult]:
    """Results of one Custom Search answer; `first` is the rank of its first item."""
    results = []
    for offset, item in enumerate(data.get("items") or []):
        if not isinstance(item, dict) or not isinstance(item.get("link"), str):
            continue
        snippet = plain_text(item.get("snippet"))
        published = _metatag_date(item)
        if published is None and _SNIPPET_DATE_SEPARATOR in snippet[:40]:
            head, rest = snippet.split(_SNIPPET_DATE_SEPARATOR, 1)
            published = parse_date(head)
            if published is not None:
                snippet = rest
        results.append(
            SearchResult(
                title=plain_text(item.get("title")) or item["link"],
                url=item["link"],
                snippet=snippet,
                published=published,
                date_source=DateSource.SEARCH_ENGINE if published else DateSource.UNKNOWN,
                rank=first + offset,
            )
        )
    return results


def _metatag_date(item: dict) -> date | None:
    pagemap = item.get("pagemap")
    if not isinstance(pagemap, dict):
        return None
    for tags in pagemap.get("metatags") or []:
        if not isinstance(tags, dict):
            continue
        lowered = {str(k).lower(): v for k, v in tags.items()}
        for name in _DATE_TAGS:
            value = lowered.get(name)
            if isinstance(value, str) and (found := parse_date(value)):
                return found
    for kind in ("newsarticle", "article", "blogposting"):
        for entry in pagemap.get(kind) or []:
            value = entry.get("datepublished") if isinstance(entry, dict) else None
            if isinstance(value, str) and (found := parse_date(value)):
                return found
    return None
