"""The local full-text index over Document rows: PostgreSQL full-text search or SQLite FTS5.

The query syntax is the same on both, that of a web search box (PostgreSQL's
websearch_to_tsquery; parsed by pipeline/web_query.py): "quoted words" form a phrase, `or`
between words accepts either, a leading `-` excludes a word. Any of the words is enough to
match, and pages holding all of them rank first: a long query (a suggested one, a pasted
claim) still finds the pages that share some of its words.

The date restriction is part of the ranked query itself, so the database only ranks
documents that can be shown, and every page has its full ten results. On PostgreSQL a very
broad query ranks at most SEARCH_LOCAL_MAX_RANKED candidates of each kind, full and partial
matches (see POSTGRESQL_RANKED). Documents dated by a web-archive capture on or after the
claim date stay in (their date is only an upper bound; the service marks them "date
unknown"). `country` is ignored: documents carry no location.

Ranking (LOCAL_SEARCH_RANKING): `bm25` ranks every matching document with the saved BM25
index (search_proxy/search_index.py), the date restriction applied as a mask inside the
ranking, and reads only the page's ten rows from the database; `database` ranks in the
database as described above. The BM25 ranking falls back to the database's, with a
logged reason, when no saved index covers the documents; it also leaves quoted phrases of
several words to the database, whose index knows word positions.
"""

from __future__ import annotations

import logging
from datetime import date
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from pipeline.retrieval import fast_analyse
from pipeline.web_query import parse_query, rank_matches
from search_proxy.backends.base import (
    RESULTS_PER_PAGE,
    ConfiguredBackend,
    SearchResult,
    SearchUnavailable,
    first_rank,
)
from search_proxy.dates import DateSource
from search_proxy.models import Document
from search_proxy.search_index import current_index

logger = logging.getLogger(__name__)

SNIPPET_WORDS = 40
TITLE_FALLBACK_CHARS = 120

_DATE_OK = (
    "(d.published < %(before)s OR d.published IS NULL"
    f" OR d.date_source IN ('{DateSource.UNKNOWN.value}',"
    f" '{DateSource.ARCHIVE_TIMESTAMP.value}'))"
)
# The ranked part alone, shared with benchmarks/search.py so it measures this very query.
# Its parameters come from database_params(). Ranking reads every candidate's tsvector from
# its row, one page read per candidate when they are spread out; a word found in a fifth of
# a million pages would take seconds. So at most %(max_ranked)s full matches and as many
# partial ones are ranked (SEARCH_LOCAL_MAX_RANKED; NULL = all): the first ones PostgreSQL
# finds, in storage order. Only very broad queries reach that many, and their annotators
# refine them anyway; every narrower query is ranked in full. Full matches come first.
POSTGRESQL_RANKED = f"""
    SELECT d.id, d.search_vector @@ f.query AS full_match,
        ts_rank(d.search_vector, q.query) AS score
    FROM (
        (SELECT d.id
         FROM search_proxy_document d, websearch_to_tsquery('english', %(query)s) AS q(query)
         WHERE d.search_vector @@ q.query AND {_DATE_OK}
         LIMIT %(max_ranked)s)
        UNION
        (SELECT d.id
         FROM search_proxy_document d,
             websearch_to_tsquery('english', %(any_query)s) AS q(query),
             websearch_to_tsquery('english', %(excluded)s) AS x(query)
         WHERE d.search_vector @@ q.query AND NOT (d.search_vector @@ x.query) AND {_DATE_OK}
         LIMIT %(max_ranked)s)
    ) AS c
    JOIN search_proxy_document d ON d.id = c.id,
        websearch_to_tsquery('english', %(any_query)s) AS q(query),
        websearch_to_tsquery('english', %(query)s) AS f(query)
    ORDER BY full_match DESC, score DESC, d.id
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
        websearch_to_tsquery('english', %(any_query)s) AS q(query)
    ORDER BY hits.full_match DESC, hits.score DESC, d.id
"""

# bm25() is smaller for better matches; the title counts five times as much as the text.
# Full matches (every word) come first.
SQLITE_SEARCH = f"""
    SELECT d.id, d.url, d.title, substr(d.text, 1, {TITLE_FALLBACK_CHARS}),
        snippet(search_proxy_document_fts, 1, '', '', ' … ', 24),
        d.published, d.date_source
    FROM search_proxy_document_fts f
    JOIN search_proxy_document d ON d.id = f.rowid
    WHERE search_proxy_document_fts MATCH %(match_any)s AND {_DATE_OK}
    ORDER BY d.id IN (
            SELECT rowid FROM search_proxy_document_fts
            WHERE search_proxy_document_fts MATCH %(match)s
        ) DESC,
        bm25(search_proxy_document_fts, 5.0, 1.0), d.id
    LIMIT %(limit)s OFFSET %(offset)s
"""


class LocalUnavailable(SearchUnavailable):
    """The local index cannot answer (an unsupported database, a database error)."""


class LocalBackend(ConfiguredBackend):
    name = "local"
    uses_country = False  # the index holds no country per page

    def __init__(self, *, ranking: str | None = None, max_ranked: int | None = None) -> None:
        # Both default to the settings; benchmarks and tests pass them to compare rankings.
        self.ranking = ranking or settings.LOCAL_SEARCH_RANKING
        self.max_ranked = settings.SEARCH_LOCAL_MAX_RANKED if max_ranked is None else max_ranked

    def unavailable_reason(self) -> str:
        if connection.vendor not in ("postgresql", "sqlite"):
            return f"The local index needs PostgreSQL or SQLite, not {connection.vendor}."
        return ""

    def search(
        self, query: str, *, before: date, country: str | None = None, page: int = 1
    ) -> list[SearchResult]:
        if reason := self.unavailable_reason():
            raise LocalUnavailable(reason)
        if self.ranking == "bm25":
            try:
                results = self._bm25_search(query, before=before, page=page)
            except DatabaseError as exc:
                raise LocalUnavailable("The local search index could not answer.") from exc
            if results is not None:
                return results
        return self._database_search(query, before=before, page=page)

    def _bm25_search(self, query: str, *, before: date, page: int) -> list[SearchResult] | None:
        """The page ranked by the saved BM25 index; None when the database must rank it."""
        parsed = parse_query(query)
        if parsed.has_phrase:
            return None
        index, _reason = current_index()
        if index is None:
            return None
        terms, ids = rank_matches(
            index, parsed, before=before, first=first_rank(page) - 1, count=RESULTS_PER_PAGE
        )
        rows = {
            row[0]: row
            for row in Document.objects.filter(pk__in=ids).values_list(
                "pk", "url", "title", "text", "published", "date_source"
            )
        }
        if len(rows) != len(ids):
            logger.warning(
                "Local search ranks in the database: %d ranked documents are gone since the "
                "search index was saved.",
                len(ids) - len(rows),
            )
            return None
        offset = first_rank(page) - 1
        results = []
        for position, pk in enumerate(ids, start=1):
            _pk, url, title, text, published, date_source = rows[pk]
            row = (pk, url, title, text[:TITLE_FALLBACK_CHARS], snippet(text, terms))
            results.append(_result((*row, published, date_source), rank=offset + position))
        return results

    def _database_search(self, query: str, *, before: date, page: int) -> list[SearchResult]:
        texts = database_params(query)
        if texts is None:
            return []  # nothing to look for: only exclusions or punctuation
        params: dict[str, Any] = {
            **texts,
            "before": before.isoformat(),
            "limit": RESULTS_PER_PAGE,
            "offset": first_rank(page) - 1,
            "max_ranked": self.max_ranked or None,
        }
        if connection.vendor == "sqlite":
            params["match"] = fts5_query(query)
            params["match_any"] = fts5_query(query, any_group=True)
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


SNIPPET_SCAN_CHARS = 20_000  # as the database's headline, only the start of long pages


def snippet(text: str, terms: set[str]) -> str:
    """Up to SNIPPET_WORDS words from the one or two lines holding most query terms."""
    lines = [line for line in text[:SNIPPET_SCAN_CHARS].split("\n") if line.strip()]
    if not lines:
        return ""
    hits = [(len(terms.intersection(fast_analyse(line))), n) for n, line in enumerate(lines)]
    best = sorted(n for found, n in sorted(hits, key=lambda h: (-h[0], h[1]))[:2] if found)
    chosen = best or [0]
    per_line = SNIPPET_WORDS // len(chosen)
    return " … ".join(_window(lines[n], terms, per_line) for n in chosen)


def _window(line: str, terms: set[str], words: int) -> str:
    """`words` words of `line`, starting a little before its first query term."""
    tokens = line.split()
    first = next(
        (i for i, token in enumerate(tokens) if terms.intersection(fast_analyse(token))), 0
    )
    start = max(0, min(first - words // 4, len(tokens) - words))
    return " ".join(tokens[start : start + words])


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


def database_params(text: str) -> dict[str, str] | None:
    """The websearch_to_tsquery texts of POSTGRESQL_RANKED for the query `text`: the query
    itself (full matches), any of its terms, and its excluded terms. None when nothing
    searchable is left (only exclusions, only punctuation)."""
    parsed = parse_query(text)
    if not parsed.required:
        return None
    return {
        "query": text,
        "any_query": " or ".join(_quoted(p) for group in parsed.required for p in group),
        "excluded": " or ".join(_quoted(p) for p in parsed.excluded),
    }


def _quoted(words: tuple[str, ...]) -> str:
    return '"' + " ".join(words) + '"'


def fts5_query(text: str, *, any_group: bool = False) -> str:
    """An FTS5 MATCH expression with the meaning websearch_to_tsquery gives `text`, or with
    `any_group`, the expression any of its terms matches (exclusions still apply).

    Every term becomes a quoted FTS5 string of plain words, so no input can be an FTS5
    syntax error or reach a column filter. "" when nothing searchable is left (only
    exclusions, only punctuation).
    """
    parsed = parse_query(text)
    if not parsed.required:
        return ""
    quoted = _quoted
    if any_group:
        phrases = [quoted(p) for group in parsed.required for p in group]
        either = phrases[0] if len(phrases) == 1 else "(" + " OR ".join(phrases) + ")"
        return either + "".join(f" NOT {quoted(words)}" for words in parsed.excluded)

    required = " AND ".join(
        quoted(group[0]) if len(group) == 1 else "(" + " OR ".join(map(quoted, group)) + ")"
        for group in parsed.required
    )
    return required + "".join(f" NOT {quoted(words)}" for words in parsed.excluded)
