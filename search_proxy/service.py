"""Searching for evidence: the one entry point the Phase 2 screen and the API call.

`search()` picks the backend, serves repeated searches from the cache, restricts results to
pages published before the claim date, hides the claim's own fact-checking article, marks
misinformation sources, fact-checkers and unknown dates, enforces the per-user rate limit
and writes the SearchLog. `open_page()` is the page viewer's counterpart: it logs the click
and returns the page's sentences with the same marks.

What they know of the claim being checked comes as a SearchScope (annotation builds it with
`Claim.search_scope()`): search_proxy sits below annotation and never imports its models.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import caches
from django.utils import timezone

from search_proxy import fetch, flags
from search_proxy.backends import (
    MAX_PAGE,
    RESULTS_PER_PAGE,
    SearchResult,
    SearchUnavailable,
    get_backend,
)
from search_proxy.dates import DateSource, Placement, placement
from search_proxy.models import Document, FetchedPage, SearchClick, SearchLog, Source
from search_proxy.webaddress import archive_timestamp, normalize_url

MAX_QUERY_LENGTH = 400  # Brave's limit; Google's is higher
RATE_WINDOW = timedelta(minutes=1)
_COUNTRY = re.compile(r"^[A-Z]{2}$")


class SearchError(Exception):
    """A search that cannot run as asked; the message is fit to show to the annotator."""


class InvalidSearch(SearchError):
    pass


class RateLimited(SearchError):
    def __init__(self, what: str, limit: int, retry_after: int):
        self.limit, self.retry_after = limit, retry_after
        super().__init__(
            f"Too many {what}: at most {limit} a minute. Please wait {retry_after} s and try again."
        )


# Date sources that state when a page was published (see dates.py for the others).
PUBLICATION_DATE_SOURCES = frozenset(
    {DateSource.GIVEN, DateSource.SEARCH_ENGINE, DateSource.ESTIMATED}
)


@dataclass(frozen=True)
class SearchScope:
    """What a search for evidence knows of the claim it is for, and where to log it."""

    claim_date: date
    # The claim's location: the default country of a search.
    country: str | None
    # The claim's fact-checking article, as stored and normalised: it is never evidence.
    article_url: str
    article_normalized_url: str
    claim_id: int | None = None
    task_id: int | None = None


@dataclass(frozen=True)
class FlaggedResult:
    """A result as shown to an annotator, with what they need to know about the page."""

    title: str
    url: str
    snippet: str
    published: date | None
    date_source: str
    rank: int
    date_unknown: bool
    misinformation: bool
    fact_checker: bool

    @property
    def allowed_as_evidence(self) -> bool:
        return not self.fact_checker

    @property
    def publication_date(self) -> date | None:
        """The date to show as "published": only a real publication date, never the day an
        archive captured the page (that only bounds it from above) nor a crawl date."""
        if self.date_unknown or self.date_source not in PUBLICATION_DATE_SOURCES:
            return None
        return self.published

    @property
    def archived_by(self) -> date | None:
        """The Wayback Machine held the page on this day, so it existed by then."""
        return self.published if self.date_source == DateSource.ARCHIVE_TIMESTAMP else None


@dataclass
class SearchPage:
    query: str
    before: date
    country: str | None
    page: int
    backend: str
    results: list[FlaggedResult] = field(default_factory=list)
    from_cache: bool = False
    hidden: int = 0  # the claim's own article
    dropped: int = 0  # dated on or after the claim date
    log: SearchLog | None = None
    # A short page is the engine's last one: no "next" that leads nowhere.
    has_next: bool = False

    @property
    def dated(self) -> int:
        """Results shown with a publication date before the claim date."""
        return sum(1 for r in self.results if r.publication_date is not None)

    @property
    def undated(self) -> int:
        """Results shown as "date unknown" (including pages only known to be archived early)."""
        return len(self.results) - self.dated


def search(
    query: str,
    before: date | None = None,
    country: str | None = None,
    page: int = 1,
    *,
    user: AbstractBaseUser | None = None,
    scope: SearchScope | None = None,
    backend: str | None = None,
) -> SearchPage:
    """One page of results for `query` among pages published before `before`.

    With the scope of a claim, `before` defaults to the claim date and can never be later
    than it, `country` defaults to the claim's location, and the claim's own article is
    hidden. With a user the search is rate limited and logged.

    Raises InvalidSearch, RateLimited, or the backend's SearchUnavailable (logged too).
    """
    started = time.monotonic()
    query = " ".join((query or "").split())
    if not query:
        raise InvalidSearch("Type something to search for.")
    if len(query) > MAX_QUERY_LENGTH:
        raise InvalidSearch(f"A search can be at most {MAX_QUERY_LENGTH} characters long.")
    if scope is not None:
        before = min(before, scope.claim_date) if before else scope.claim_date
        if country is None:
            country = scope.country or None
    if before is None:
        raise InvalidSearch("Say before which date the pages must have been published.")
    country = (country or "").strip().upper() or None
    if country is not None and not _COUNTRY.match(country):
        raise InvalidSearch("The country must be a two-letter code such as GB or US.")
    if not 1 <= page <= MAX_PAGE:
        raise InvalidSearch(f"Pages go from 1 to {MAX_PAGE}.")
    engine = get_backend(backend)
    if user is not None:
        check_rate_limit(user)

    cache = caches[settings.SEARCH_CACHE_ALIAS]
    key = cache_key(engine.name, query, before, country, page)
    raw: list[SearchResult] | None = cache.get(key)
    result = SearchPage(query, before, country, page, engine.name, from_cache=raw is not None)
    if raw is None:
        try:
            raw = engine.search(query, before=before, country=country, page=page)
        except SearchUnavailable as exc:
            if user is not None:
                _log(result, user=user, scope=scope, started=started, error=str(exc))
            raise
        cache.set(key, raw, settings.SEARCH_CACHE_SECONDS)

    result.has_next = len(raw) >= RESULTS_PER_PAGE and page < MAX_PAGE
    own_article = scope.article_normalized_url if scope is not None else None
    result.results, result.hidden, result.dropped = restrict_and_flag(
        raw, before=before, own_article=own_article
    )
    if user is not None:
        result.log = _log(result, user=user, scope=scope, started=started)
    return result


def uses_country(backend: str | None = None) -> bool:
    """Whether the configured engine pays any attention to a country code."""
    return bool(getattr(get_backend(backend), "uses_country", False))


def cache_key(backend: str, query: str, before: date, country: str | None, page: int) -> str:
    """Search engines ignore case and spacing, so the key does too."""
    identity = json.dumps(
        [backend, " ".join(query.casefold().split()), before.isoformat(), country or "", page]
    )
    return "search:" + hashlib.sha256(identity.encode()).hexdigest()


def restrict_and_flag(
    raw: list[SearchResult], *, before: date, own_article: str | None = None
) -> tuple[list[FlaggedResult], int, int]:
    """(results to show, how many were hidden as the claim's own article or as a (possibly)
    fact-checking page, how many were dropped as published on or after `before`).

    Fact-checks are hidden for everyone, like the page viewer refuses them: their titles and
    snippets carry verdicts, and a searcher may also hold a blind check (issue 23)."""
    normalized = {r.url: normalize_url(r.url) for r in raw}
    undated = [
        normalized[r.url]
        for r in raw
        if placement(r.published, r.date_source, before) is Placement.UNKNOWN
    ]
    # A page opened in the viewer before has an estimated date: it settles unknown ones.
    estimates = FetchedPage.objects.newest_dates(undated) if undated else {}
    marks = flags.flags_for([r.url for r in raw])
    shown: list[FlaggedResult] = []
    hidden = dropped = 0
    for r in raw:
        if (own_article is not None and normalized[r.url] == own_article) or (
            r.url in marks.fact_checkers
        ):
            hidden += 1
            continue
        published, date_source = r.published, r.date_source
        where = placement(published, date_source, before)
        if where is Placement.UNKNOWN and normalized[r.url] in estimates:
            published, date_source = estimates[normalized[r.url]], DateSource.ESTIMATED
            where = placement(published, date_source, before)
        if where is Placement.AFTER:
            dropped += 1
            continue
        shown.append(
            FlaggedResult(
                title=r.title,
                url=r.url,
                snippet=r.snippet,
                published=published,
                date_source=date_source,
                rank=r.rank,
                date_unknown=where is Placement.UNKNOWN,
                misinformation=r.url in marks.misinformation,
                fact_checker=r.url in marks.fact_checkers,
            )
        )
    return shown, hidden, dropped


def check_rate_limit(user: AbstractBaseUser) -> None:
    """Raise RateLimited when `user` searched SEARCH_RATE_LIMIT times in the last minute.

    Counted from SearchLog, so the limit holds across web processes and machines; two
    requests racing at the limit may both pass, which is fine for a courtesy limit.
    """
    _check_window(
        SearchLog.objects.filter(user=user),  # type: ignore[misc]  # AUTH_USER_MODEL, typed as its base: search_proxy does not import annotation
        settings.SEARCH_RATE_LIMIT,
        "searches",
    )


def _check_window(rows, limit: int, what: str) -> None:
    if limit <= 0:
        return
    now = timezone.now()
    recent = list(
        rows.filter(created_at__gt=now - RATE_WINDOW)
        .order_by("created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(recent) >= limit:
        wait = (recent[0] + RATE_WINDOW - now).total_seconds()
        raise RateLimited(what, limit, max(1, math.ceil(wait)))


def _log(
    result: SearchPage,
    *,
    user: AbstractBaseUser,
    scope: SearchScope | None,
    started: float,
    error: str = "",
) -> SearchLog:
    return SearchLog.objects.create(
        user=user,  # type: ignore[misc]  # AUTH_USER_MODEL, typed as its base: search_proxy does not import annotation
        task_id=scope.task_id if scope is not None else None,
        claim_id=scope.claim_id if scope is not None else None,
        query=result.query,
        before=result.before,
        country=result.country or "",
        page=result.page,
        backend=result.backend,
        result_urls=[r.url for r in result.results],
        hidden_count=result.hidden,
        dropped_count=result.dropped,
        from_cache=result.from_cache,
        error=error,
        duration_ms=round((time.monotonic() - started) * 1000),
    )


# --- The page viewer ---------------------------------------------------------------------


@dataclass(frozen=True)
class OpenedPage:
    page: fetch.PageText
    date_unknown: bool
    published_on_or_after_claim_date: bool
    misinformation: bool
    fact_checker: bool

    @property
    def publication_date(self) -> date | None:
        """As for results: a publication date or nothing, never an archive capture date."""
        if self.page.date_source not in PUBLICATION_DATE_SOURCES:
            return None
        return self.page.published

    problem: str | None  # why it cannot be evidence for the claim, if it cannot
    click: SearchClick | None


def open_page(
    url: str,
    *,
    user: AbstractBaseUser | None = None,
    scope: SearchScope | None = None,
    search_log: SearchLog | None = None,
) -> OpenedPage:
    """Fetch `url` for the page viewer, log the click, and say what the page is.

    Raises fetch.FetchRefused, fetch.PageUnavailable or RateLimited; the click is logged
    with its outcome either way.
    """
    # Refused for everyone before anything is fetched or logged: someone who also holds a
    # blind check must not read a fact-check here, whatever its address looks like.
    finding = flags.fact_check_finding(url, scope.article_url if scope is not None else None)
    if finding.reveals:
        raise fetch.FactCheckRefused(finding.message)
    if user is not None:
        _check_window(
            SearchClick.objects.filter(user=user),  # type: ignore[misc]  # AUTH_USER_MODEL, typed as its base: search_proxy does not import annotation
            settings.PAGE_FETCH_RATE_LIMIT,
            "opened pages",
        )
    click = None
    if user is not None:
        click = SearchClick.objects.create(
            user=user,  # type: ignore[misc]  # AUTH_USER_MODEL, typed as its base: search_proxy does not import annotation
            task_id=scope.task_id if scope is not None else None,
            search=search_log,
            url=url,
        )
    try:
        page = fetch.fetch_page(url)
    except (fetch.FetchRefused, fetch.PageUnavailable) as exc:
        if click is not None:
            click.outcome = (
                SearchClick.Outcome.REFUSED
                if isinstance(exc, fetch.FetchRefused)
                else SearchClick.Outcome.FAILED
            )
            click.error = str(exc)
            click.save(update_fields=["outcome", "error"])
        raise
    where = (
        placement(page.published, page.date_source, scope.claim_date)
        if scope is not None
        else (Placement.UNKNOWN if page.published is None else Placement.BEFORE)
    )
    return OpenedPage(
        page=page,
        date_unknown=page.published is None,
        published_on_or_after_claim_date=where is Placement.AFTER,
        misinformation=flags.is_misinformation(url),
        fact_checker=flags.is_fact_checker(url),
        problem=flags.source_problem(url, scope.article_url if scope is not None else None),
        click=click,
    )


def source_date_problem(url: str, claim_date: date) -> str | None:
    """The search results' date rule for an address typed by hand: what is known of the
    page's date (local index, the viewer's snapshot, the archive's first capture) says it
    may postdate the claim. None when nothing known says so. Never fetches anything."""
    return source_date_problems([url], claim_date).get(url)


def source_date_problems(urls: list[str], claim_date: date) -> dict[str, str]:
    """source_date_problem for every cited address at once, with one query per table
    (index, snapshots, sources) whatever their number: address -> problem, for those
    with one."""
    keys = {url: normalize_url(url) for url in urls}
    wanted = set(keys.values())
    if not wanted:
        return {}
    indexed = {
        key: (day, source)
        for key, day, source in Document.objects.filter(
            normalized_url__in=wanted, published__isnull=False
        ).values_list("normalized_url", "published", "date_source")
        if day is not None  # never, by published__isnull=False; it tells mypy so
    }
    snapshots = {
        key: (day, source)
        # Later rows win: the newest seen dated snapshot of each page, as of_url() orders.
        for key, day, source in FetchedPage.objects.filter(
            normalized_url__in=wanted, published__isnull=False
        )
        .order_by("last_seen_at", "pk")
        .values_list("normalized_url", "published", "date_source")
        if day is not None  # as above
    }
    sources = {s.normalized_url: s for s in Source.objects.filter(normalized_url__in=wanted)}
    problems = {}
    for url, key in keys.items():
        known = [found for found in (indexed.get(key), snapshots.get(key)) if found is not None]
        problem = _date_problem(url, claim_date, known, sources.get(key))
        if problem:
            problems[url] = problem
    return problems


def _date_problem(
    url: str, claim_date: date, known: list[tuple[date, str]], source: Source | None
) -> str | None:
    if any(placement(day, kind, claim_date) is Placement.BEFORE for day, kind in known):
        return None
    after = [day for day, kind in known if placement(day, kind, claim_date) is Placement.AFTER]
    if after:
        return (
            f"This page is dated {min(after):%Y-%m-%d}, on or after the claim date "
            f"({claim_date:%Y-%m-%d}): evidence must predate the claim."
        )
    # An archived copy is judged by its own capture time, even before any job knows the page.
    source = source or Source(url=url)
    if source.possible_temporal_leak(claim_date, cited_url=url):
        seen = source.first_seen(cited_url=url)
        if archive_timestamp(url):
            return (
                f"This archived copy was captured on {seen:%Y-%m-%d}, after the claim date, "
                "and no earlier publication date is known: cite a copy from before the claim."
            )
        return (
            f"The web archive first saw this page on {seen:%Y-%m-%d}, "
            "after the claim date, and no earlier publication date is known: check that it "
            "existed before the claim."
        )
    return None
