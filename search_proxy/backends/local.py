"""The local full-text index over Document rows: PostgreSQL full-text search or SQLite FTS5.

The query syntax is the same on both, that of a web search box (PostgreSQL's
websearch_to_tsquery): words are all required, "quoted words" form a phrase, `or` between
words accepts either, a leading `-` excludes a word.

The date restriction is part of the ranked query itself, so the database only ranks
documents that can be shown, and every page has its full ten results. On PostgreSQL a very
broad query ranks at most SEARCH_LOCAL_MAX_RANKED candidates (see POSTGRESQL_RANKED).
Documents dated by a web-archive capture on or after the claim date stay in (their date is
only an upper bound; the service marks them "date unknown"). `country` is ignored:
documents carry no location.
"""

from __future__ import annotations

import re
from datetime import date

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from search_proxy.backends.base import (
    RESULTS_PER_PAGE,
    ConfiguredBackend,
    SearchResult,
    SearchUnavailable,
    first_rank,
)
from search_proxy.dates import DateSource

SNIPPET_WORDS = 40
TITLE_FALLBACK_CHARS = 120

_DATE_OK = (
    "(d.published < %(before)s OR d.published IS NULL"
    f" OR d.date_source IN ('{DateSource.UNKNOWN.value}',"
    f" '{DateSource.ARCHIVE_TIMESTAMP.value}'))"
)
# The ranked part alone, shared with benchmarks/search.py so it measures this very query.
# Ranking reads every candidate's tsvector from its row, one page read per candidate when
# they are spread out; a word found in a fifth of a million pages would take seconds. So at
# most %(max_ranked)s candidates are ranked (SEARCH_LOCAL_MAX_RANKED; NULL = all): the
# first ones PostgreSQL finds, in storage order. Only very broad queries reach that many,
# and their annotators refine them anyway; every narrower query is ranked in full.
POSTGRESQL_RANKED = f"""
    SELECT c.id, ts_rank(c.search_vector, q.query) AS score
    FROM (
        SELECT d.id, d.search_vector
        FROM search_proxy_document d, websearch_to_tsquery('english', %(query)s) AS q(query)
        WHERE d.search_vector @@ q.query AND {_DATE_OK}
        LIMIT %(max_ranked)s
    ) AS c, websearch_to_tsquery('english', %(query)s) AS q(query)
    ORDER BY score DESC, c.id
    LIMIT %(limit)s OFFSET %(offset)s
"""

# A broad query's candidates fill a bitmap of one entry per page; past work_mem (4 MB by
# default, about 80,000 pages) PostgreSQL keeps whole pages instead and re-checks every row
# on them, several times slower. 64 MB holds an exact bitmap for millions of pages, and is
# only reserved by the queries that need it, for this one transaction.
POSTGRESQL_WORK_MEM = "64MB"

# Headlines are costly, so they are made for the page's ten documents only.
POSTGRESQL_SEARCH = f"""
    WITH hits AS ({POSTGRESQL_RANKED})
    SELECT d.id, d.url, d.title, left(d.text, {TITLE_FALLBACK_CHARS}),
        ts_headline('english', left(d.text, 20000), q.query,
            'StartSel="", StopSel="", MaxWords={SNIPPET_WORDS}, MinWords=15,
             MaxFragments=2, FragmentDelimiter=" … "'),
        d.published, d.date_source
    FROM hits
    JOIN search_proxy_document d ON d.id = hits.id,
        websearch_to_tsquery('english', %(query)s) AS q(query)
    ORDER BY hits.score DESC, d.id
"""

# bm25() is smaller for better matches; the title counts five times as much as the text.
SQLITE_SEARCH = f"""
    SELECT d.id, d.url, d.title, substr(d.text, 1, {TITLE_FALLBACK_CHARS}),
        snippet(search_proxy_document_fts, 1, '', '', ' … ', 24),
        d.published, d.date_source
    FROM search_proxy_document_fts f
    JOIN search_proxy_document d ON d.id = f.rowid
    WHERE search_proxy_document_fts MATCH %(match)s AND {_DATE_OK}
    ORDER BY bm25(search_proxy_document_fts, 5.0, 1.0), d.id
    LIMIT %(limit)s OFFSET %(offset)s
"""


class LocalUnavailable(SearchUnavailable):
    """The local index cannot answer (an unsupported database, a database error)."""


class LocalBackend(ConfiguredBackend):
    name = "local"
    uses_country = False  # the index holds no country per page

    def unavailable_reason(self) -> str:
        if connection.vendor not in ("postgresql", "sqlite"):
            return f"The local index needs PostgreSQL or SQLite, not {connection.vendor}."
        return ""

    def search(
        self, query: str, *, before: date, country: str | None = None, page: int = 1
    ) -> list[SearchResult]:
        if reason := self.unavailable_reason():
            raise LocalUnavailable(reason)
        params = {
            "query": query,
            "before": before.isoformat(),
            "limit": RESULTS_PER_PAGE,
            "offset": first_rank(page) - 1,
            "max_ranked": settings.SEARCH_LOCAL_MAX_RANKED or None,
        }
        if connection.vendor == "sqlite":
            params["match"] = fts5_query(query)
            if not params["match"]:
                return []
            sql = SQLITE_SEARCH
        else:
            sql = POSTGRESQL_SEARCH
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                if connection.vendor == "postgresql":
                    previous = _set_work_mem(cursor, POSTGRESQL_WORK_MEM)
                cursor.execute(sql, params)
                rows = cursor.fetchall()
                if connection.vendor == "postgresql":
                    _set_work_mem(cursor, previous)
        except DatabaseError as exc:
            raise LocalUnavailable("The local search index could not answer.") from exc
        return [
            _result(row, rank=params["offset"] + position)
            for position, row in enumerate(rows, start=1)
        ]


def _set_work_mem(cursor, value: str) -> str:
    """Set work_mem for the rest of this transaction only; returns the value it had."""
    cursor.execute("SELECT current_setting('work_mem'), set_config('work_mem', %s, true)", [value])
    return cursor.fetchone()[0]


def _result(row: tuple, *, rank: int) -> SearchResult:
    _id, url, title, lead, snippet, published, date_source = row
    if isinstance(published, str):  # SQLite hands dates back as text in raw queries
        published = date.fromisoformat(published)
    return SearchResult(
        title=title or _first_line(lead) or url,
        url=url,
        snippet=" ".join((snippet or "").split()),
        published=published,
        date_source=date_source,
        rank=rank,
    )


def _first_line(lead: str) -> str:
    """A title for an untitled document: its first sentence, shortened at a word."""
    line = " ".join(lead.split("\n", 1)[0].split())
    if len(lead) >= TITLE_FALLBACK_CHARS and "\n" not in lead:
        line = line.rsplit(" ", 1)[0] + " …"
    return line


_TERM = re.compile(r'(-?)"([^"]*)"?|(-?)(\S+)')
_WORD = re.compile(r"\w+")


def fts5_query(text: str) -> str:
    """An FTS5 MATCH expression with the meaning websearch_to_tsquery gives `text`.

    Every term becomes a quoted FTS5 string of plain words, so no input can be an FTS5
    syntax error or reach a column filter. "" when nothing searchable is left (only
    exclusions, only punctuation).
    """
    groups: list[list[str]] = []  # AND of ORs
    excluded: list[str] = []
    join_with_previous = False
    for match in _TERM.finditer(text):
        if match.group(2) is not None:
            negative, words = match.group(1), _WORD.findall(match.group(2))
        else:
            negative, raw = match.group(3), match.group(4)
            if raw.lower() == "or" and not negative:
                join_with_previous = bool(groups)
                continue
            words = _WORD.findall(raw)
        if not words:
            continue
        phrase = '"' + " ".join(words) + '"'
        if negative:
            excluded.append(phrase)
        elif join_with_previous:
            groups[-1].append(phrase)
        else:
            groups.append([phrase])
        join_with_previous = False
    if not groups:
        return ""
    required = " AND ".join(
        group[0] if len(group) == 1 else "(" + " OR ".join(group) + ")" for group in groups
    )
    return required + "".join(f" NOT {phrase}" for phrase in excluded)
