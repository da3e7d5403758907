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

Ranking (LOCAL_SEARCH_RANKING): `bm25` ranks every matching document with the saved BM25
index (search_proxy/search_index.py), the date restriction applied as a mask inside the
ranking, and reads only the page's ten rows from the database; `database` ranks in the
database as described above. The BM25 ranking falls back to the database's, with a
logged reason, when no saved index covers the documents; it also leaves quoted phrases of
several words to the database, whose index knows word positions.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import date

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from pipeline.retrieval import fast_analyse
from pipeline.saved_index import SavedIndex
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
        terms, ids = bm25_ranking(
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
        params = {
            "query": query,
            "before": before.isoformat(),
            "limit": RESULTS_PER_PAGE,
            "offset": first_rank(page) - 1,
            "max_ranked": self.max_ranked or None,
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


def bm25_ranking(
    index: SavedIndex, parsed: ParsedQuery, *, before: date, first: int, count: int
) -> tuple[set[str], list[int]]:
    """(the query's index terms, the ids of the documents ranked first+1 .. first+count).

    Every document that matches the query and may be shown before `before` is scored;
    ties go to the lower id, as in the database ranking.
    """
    n_docs = len(index)
    keep = index.allowed_before(before)
    scored: list[str] = []
    for group in parsed.required:
        in_group = np.zeros(n_docs, dtype=bool)
        any_terms = False
        for words in group:
            terms = fast_analyse(" ".join(words))
            if not terms:
                continue  # only stop words: the database ignores them too
            any_terms = True
            scored.extend(terms)
            in_group |= _holding_all(index, terms)
        if any_terms:
            keep &= in_group
    if not scored:
        return set(), []
    for words in parsed.excluded:
        if terms := fast_analyse(" ".join(words)):
            keep &= ~_holding_all(index, terms)
    scores = index.scores(scored)
    candidates = np.flatnonzero(keep & (scores > 0))
    wanted = first + count
    if len(candidates) > wanted:
        # Partition first: at a million rows a full sort is most of the query time. Ties
        # at the cut are kept whole so the lower id wins them below.
        chosen = scores[candidates]
        cut = np.partition(-chosen, wanted - 1)[wanted - 1]
        candidates = candidates[-chosen <= cut]
    keys = np.asarray(index.keys[candidates])
    order = np.lexsort((keys, -scores[candidates]))
    return set(scored), [int(k) for k in keys[order][first:wanted]]


def _holding_all(index: SavedIndex, terms: list[str]) -> np.ndarray:
    holding = np.zeros(len(index), dtype=bool)
    rows = index.column(terms[0])
    holding[rows] = True
    for term in terms[1:]:
        also = np.zeros(len(index), dtype=bool)
        also[index.column(term)] = True
        holding &= also
    return holding


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


_TERM = re.compile(r'(-?)"([^"]*)"?|(-?)(\S+)')
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ParsedQuery:
    """A web search box query: all groups required, each group any of its phrases."""

    required: list[list[tuple[str, ...]]]  # phrases as word tuples
    excluded: list[tuple[str, ...]]
    has_phrase: bool  # a quoted phrase of several words


def parse_query(text: str) -> ParsedQuery:
    """The meaning websearch_to_tsquery gives `text`: words are all required, `or` between
    two terms accepts either, "quoted words" form a phrase, a leading `-` excludes a term.
    A term of several words once punctuation is gone (covid-19) is a phrase too."""
    groups: list[list[tuple[str, ...]]] = []
    excluded: list[tuple[str, ...]] = []
    has_phrase = False
    join_with_previous = False
    for match in _TERM.finditer(text):
        if match.group(2) is not None:
            negative, words = match.group(1), _WORD.findall(match.group(2))
            has_phrase = has_phrase or len(words) > 1
        else:
            negative, raw = match.group(3), match.group(4)
            if raw.lower() == "or" and not negative:
                join_with_previous = bool(groups)
                continue
            words = _WORD.findall(raw)
        if not words:
            continue
        if negative:
            excluded.append(tuple(words))
        elif join_with_previous:
            groups[-1].append(tuple(words))
        else:
            groups.append([tuple(words)])
        join_with_previous = False
    return ParsedQuery(groups, excluded, has_phrase)


def fts5_query(text: str) -> str:
    """An FTS5 MATCH expression with the meaning websearch_to_tsquery gives `text`.

    Every term becomes a quoted FTS5 string of plain words, so no input can be an FTS5
    syntax error or reach a column filter. "" when nothing searchable is left (only
    exclusions, only punctuation).
    """
    parsed = parse_query(text)
    if not parsed.required:
        return ""

    def quoted(words: tuple[str, ...]) -> str:
        return '"' + " ".join(words) + '"'

    required = " AND ".join(
        quoted(group[0]) if len(group) == 1 else "(" + " OR ".join(map(quoted, group)) + ")"
        for group in parsed.required
    )
    return required + "".join(f" NOT {quoted(words)}" for words in parsed.excluded)
