"""A search box query, and how the saved BM25 index ranks the documents it matches.

The syntax is that of a web search box (PostgreSQL's websearch_to_tsquery): "quoted words"
form a phrase, `or` between two terms accepts either, a leading `-` excludes a term.

Any word is enough to match: a document holding at least one of the query's terms is a
result, ranked by BM25 over all the query's terms; the documents holding every term come
first (as in a web search engine, a page with all the words beats one with some). So a long
query, such as a suggested one, still finds pages that share only some of its words, and a
short precise query keeps the behaviour annotators expect. Pure Python; the local search
backend and the suggestion benchmark both rank through :func:`rank_matches`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

import numpy as np

from pipeline.retrieval import fast_analyse
from pipeline.saved_index import SavedIndex

__all__ = ["ParsedQuery", "parse_query", "rank_matches"]

_TERM = re.compile(r'(-?)"([^"]*)"?|(-?)(\S+)')
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ParsedQuery:
    """A web search box query: groups of alternative phrases, and excluded phrases.

    A document matches a group when it holds every word of one of the group's phrases; it
    matches the query when it matches any group and no excluded phrase, and it matches the
    query fully when it matches every group.
    """

    required: list[list[tuple[str, ...]]]  # phrases as word tuples
    excluded: list[tuple[str, ...]]
    has_phrase: bool  # a quoted phrase of several words


def parse_query(text: str) -> ParsedQuery:
    """The terms of `text` as websearch_to_tsquery reads them: `or` between two terms puts
    them in one group, "quoted words" form a phrase, a leading `-` excludes a term. A term
    of several words once punctuation is gone (covid-19) is a phrase too."""
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


def rank_matches(
    index: SavedIndex,
    parsed: ParsedQuery,
    *,
    before: date,
    first: int,
    count: int,
    analyser: Callable[[str], list[str]] = fast_analyse,
) -> tuple[set[str], list[int]]:
    """(the query's index terms, the keys of the documents ranked first+1 .. first+count).

    Every document that matches some group, no excluded phrase, and may be shown before
    `before` is scored. Full matches come first, then BM25 decides; ties go to the lower
    key, as in the database ranking.
    """
    n_docs = len(index)
    keep = index.allowed_before(before)
    every_group = np.ones(n_docs, dtype=bool)
    some_group = np.zeros(n_docs, dtype=bool)
    scored: list[str] = []
    for group in parsed.required:
        in_group = np.zeros(n_docs, dtype=bool)
        any_terms = False
        for words in group:
            terms = analyser(" ".join(words))
            if not terms:
                continue  # only stop words: the database ignores them too
            any_terms = True
            scored.extend(terms)
            in_group |= _holding_all(index, terms)
        if any_terms:
            every_group &= in_group
            some_group |= in_group
    if not scored:
        return set(), []
    keep &= some_group
    for words in parsed.excluded:
        if terms := analyser(" ".join(words)):
            keep &= ~_holding_all(index, terms)
    scores = index.scores(scored).astype(np.float64)
    candidates = np.flatnonzero(keep & (scores > 0))
    if not len(candidates):
        return set(scored), []
    # One sort key: a full match outranks any partial one whatever their BM25 scores.
    chosen = scores[candidates] + every_group[candidates] * (scores[candidates].max() + 1.0)
    wanted = first + count
    if len(candidates) > wanted:
        # Partition first: at a million rows a full sort is most of the query time. Ties
        # at the cut are kept whole so the lower key wins them below.
        cut = np.partition(-chosen, wanted - 1)[wanted - 1]
        inside = -chosen <= cut
        candidates, chosen = candidates[inside], chosen[inside]
    keys = np.asarray(index.keys[candidates])
    order = np.lexsort((keys, -chosen))
    return set(scored), [int(k) for k in keys[order][first:wanted]]


def _holding_all(index: SavedIndex, terms: list[str]) -> np.ndarray:
    holding = np.zeros(len(index), dtype=bool)
    holding[index.column(terms[0])] = True
    for term in terms[1:]:
        also = np.zeros(len(index), dtype=bool)
        also[index.column(term)] = True
        holding &= also
    return holding
