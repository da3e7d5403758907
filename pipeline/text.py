"""Tokenisation and METEOR exactly as the official AVeriTeC evaluation computes them.

The AVeriTeC scorer compares two texts with::

    nltk.translate.meteor_score.single_meteor_score(word_tokenize(reference),
                                                    word_tokenize(candidate))

:func:`meteor` returns that very number, so the platform's agreement figures can be
compared with the paper's. Importing this module puts the project's NLTK data folder
first on ``nltk.data.path`` (see :mod:`pipeline.nltk_data`); it does not need the data
until a function is called.
"""

from __future__ import annotations

from functools import lru_cache

from nltk.tokenize import word_tokenize
from nltk.translate.meteor_score import single_meteor_score

from pipeline.nltk_data import configure

__all__ = ["meteor", "tokenize"]

# Before the first NLTK lookup: WordNet and Punkt are loaded lazily from nltk.data.path.
configure()

_MISSING_DATA_HINT = "NLTK data is missing; provision it with `python -m scripts.nltk_data`."


@lru_cache(maxsize=65_536)
def _tokens(text: str) -> tuple[str, ...]:
    # Scoring compares every question/answer with many others, so the same string is
    # tokenised over and over; Punkt + Treebank is the expensive part. A tuple is cached
    # because it is immutable: no caller can alter what later callers get.
    try:
        return tuple(word_tokenize(text))
    except LookupError as exc:
        # NLTK's own message says nltk.download(), which cannot work here.
        raise LookupError(f"{_MISSING_DATA_HINT}\n{exc}") from exc


def tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)`` (English): Punkt sentences, then Treebank words.

    Returns a fresh list on every call; the cached tokens are never exposed.
    """
    return list(_tokens(text))


def meteor(candidate: str, reference: str) -> float:
    """METEOR of ``candidate`` against ``reference``, as the AVeriTeC scorer computes it.

    Equal to ``single_meteor_score(word_tokenize(reference), word_tokenize(candidate))``
    with NLTK's defaults (lower-casing, Porter stemmer, WordNet 3.0 synonyms,
    alpha=0.9, beta=3, gamma=0.5). Not symmetric: recall is measured on the reference.
    """
    # single_meteor_score only iterates over its arguments, so the cached tuples can be
    # passed as they are; the result is the same as with the lists word_tokenize returns.
    try:
        score: float = single_meteor_score(_tokens(reference), _tokens(candidate))
        return score
    except LookupError as exc:
        raise LookupError(f"{_MISSING_DATA_HINT}\n{exc}") from exc
