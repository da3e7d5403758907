"""BM25 retrieval on a sparse term matrix: claims, questions and page sentences.

One :class:`BM25Index` holds the raw term counts of its documents (a SciPy CSR matrix),
a date per document and the BM25 weights derived from them. Adding documents appends rows
and re-derives the weights in one vectorised step, so the expensive part (tokenising) is
done once per document; the web process loads a saved index and never rebuilds it.

Ranking scores *every* document (a sparse column slice times the query's term counts),
then applies the date restriction as a mask before picking the top k, so a restriction
never hides a better document behind an arbitrary candidate cut-off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
from nltk.stem.porter import PorterStemmer
from scipy import sparse

from pipeline.text import tokenize

__all__ = ["STOPWORDS", "BM25Index", "Hit", "analyse", "fast_analyse"]

# Function words carry no topic; BM25's idf would down-weight them anyway, but dropping
# them keeps the matrix small and the query vectors short.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves 's n't 'll 're 've 'd 'm""".split()  # noqa: SIM905 - a word list reads better as prose
)

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?", re.UNICODE)
_stemmer = PorterStemmer()
_stem_cache: dict[str, str] = {}


def _stem(word: str) -> str:
    stem = _stem_cache.get(word)
    if stem is None:
        if len(_stem_cache) > 500_000:
            _stem_cache.clear()
        stem = _stem_cache[word] = _stemmer.stem(word)
    return stem


def analyse(text: str) -> list[str]:
    """Index terms of ``text``: the evaluation's word tokens, lower-cased, stemmed, no stopwords.

    Uses :func:`pipeline.text.tokenize` (NLTK's ``word_tokenize``) so that retrieval and
    METEOR split words the same way; it needs the Punkt data (``python -m scripts.nltk_data``).
    """
    return [
        _stem(token)
        for token in (t.lower() for t in tokenize(text))
        if token not in STOPWORDS and any(c.isalnum() for c in token)
    ]


def fast_analyse(text: str) -> list[str]:
    """A regex stand-in for :func:`analyse`, for corpora of millions of documents.

    Same lower-casing, stemming and stopwords; words are split on non-letters instead of
    by Punkt + Treebank, which is about ten times faster and differs only around punctuation.
    """
    return [
        _stem(word) for word in (w.lower() for w in _WORD.findall(text)) if word not in STOPWORDS
    ]


@dataclass(frozen=True)
class Hit:
    position: int  # row of the document in the index
    key: int  # the caller's id for the document (claim id, sentence number ...)
    score: float


NO_DATE = -1  # a document whose date is unknown


def _day(value: date | None) -> int:
    return NO_DATE if value is None else value.toordinal()


class BM25Index:
    """Okapi BM25 (k1, b) over documents with integer keys and optional dates."""

    def __init__(
        self,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        analyser: Callable[[str], list[str]] = analyse,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.analyser = analyser
        self.vocabulary: dict[str, int] = {}
        self.keys = np.zeros(0, dtype=np.int64)
        self.days = np.zeros(0, dtype=np.int32)
        self.counts = sparse.csr_matrix((0, 0), dtype=np.float32)
        self._weights: sparse.csc_matrix | None = None
        self._by_column: sparse.csc_matrix | None = None
        self._lengths = np.zeros(0, dtype=np.float32)

    def __len__(self) -> int:
        rows: int = self.counts.shape[0]
        return rows

    # -- building ----------------------------------------------------------------------

    def add(
        self,
        texts: Iterable[str],
        keys: Iterable[int] | None = None,
        dates: Iterable[date | None] | None = None,
    ) -> None:
        """Append documents; earlier documents are not tokenised again."""
        self.add_batches([(texts, keys, dates)])

    def add_batches(
        self,
        batches: Iterable[tuple[Iterable[str], Iterable[int] | None, Iterable[date | None] | None]],
    ) -> None:
        """Append (texts, keys, dates) batches with one copy of the matrix at the end.

        For corpora read in chunks: calling :meth:`add` per chunk would copy the whole
        matrix each time.
        """
        pieces: list[sparse.csr_matrix] = []
        new_keys: list[np.ndarray] = []
        new_days: list[np.ndarray] = []
        start = len(self)
        for texts, keys, dates in batches:
            texts = list(texts)
            keys = list(keys) if keys is not None else list(range(start, start + len(texts)))
            dates = list(dates) if dates is not None else [None] * len(texts)
            if not (len(keys) == len(texts) == len(dates)):
                raise ValueError(
                    f"BM25Index.add: {len(texts)} texts, {len(keys)} keys and {len(dates)} dates"
                )
            pieces.append(self._term_counts(texts))
            new_keys.append(np.asarray(keys, dtype=np.int64))
            new_days.append(np.asarray([_day(d) for d in dates], dtype=np.int32))
            start += len(texts)
        width = len(self.vocabulary)
        for piece in pieces:
            piece.resize((piece.shape[0], width))
        old = self.counts
        old.resize((old.shape[0], width))
        self.counts = sparse.vstack([old, *pieces], format="csr")
        self.keys = np.concatenate([self.keys, *new_keys])
        self.days = np.concatenate([self.days, *new_days])
        self._weights = None
        self._by_column = None

    def _term_counts(self, texts: list[str]) -> sparse.csr_matrix:
        """Term counts of ``texts``, one row each; new terms join the vocabulary."""
        rows: list[int] = []
        cols: list[int] = []
        for row, text in enumerate(texts):
            for term in self.analyser(text or ""):
                col = self.vocabulary.get(term)
                if col is None:
                    col = self.vocabulary[term] = len(self.vocabulary)
                rows.append(row)
                cols.append(col)
        counts = sparse.csr_matrix(
            (np.ones(len(rows), dtype=np.float32), (rows, cols)),
            shape=(len(texts), len(self.vocabulary)),
        )
        counts.sum_duplicates()
        return counts

    @property
    def weights(self) -> sparse.csc_matrix:
        """BM25 term weights per document (CSC: a query reads a few whole columns)."""
        if self._weights is None:
            counts = self.counts.tocsr()
            n_docs = counts.shape[0]
            lengths = np.asarray(counts.sum(axis=1)).ravel()
            average = lengths.mean() if n_docs and lengths.mean() > 0 else 1.0
            doc_freq = np.bincount(counts.indices, minlength=counts.shape[1])
            # The "plus one" idf of Lucene/bm25s: never negative for very common terms.
            idf = np.log1p((n_docs - doc_freq + 0.5) / (doc_freq + 0.5)).astype(np.float32)
            norm = (self.k1 * (1 - self.b + self.b * lengths / average)).astype(np.float32)
            tf = counts.data
            row_of = np.repeat(np.arange(n_docs), np.diff(counts.indptr))
            data = idf[counts.indices] * tf * (self.k1 + 1) / (tf + norm[row_of])
            self._weights = sparse.csr_matrix(
                (data.astype(np.float32), counts.indices, counts.indptr), shape=counts.shape
            ).tocsc()
        return self._weights

    # -- ranking -----------------------------------------------------------------------

    def scores(self, query: str | Sequence[str], *, within: np.ndarray | None = None) -> np.ndarray:
        """BM25 score of every document for ``query`` (text, or already analysed terms).

        With ``within`` (a boolean mask over the rows), only those documents exist: the
        idf and the average length are theirs, and every other document scores 0. So a
        search restricted to earlier claims learns nothing, not even word frequencies,
        from later ones.
        """
        terms = self.analyser(query) if isinstance(query, str) else list(query)
        columns = [self.vocabulary[t] for t in terms if t in self.vocabulary]
        if not columns or not len(self):
            return np.zeros(len(self), dtype=np.float32)
        unique, counts = np.unique(columns, return_counts=True)
        if within is not None:
            return self._scores_within(unique, counts, within)
        # Repeated query terms count once each time, as in the classic formula.
        return np.asarray(self.weights[:, unique] @ counts.astype(np.float32)).ravel()

    def _scores_within(
        self, columns: np.ndarray, repeats: np.ndarray, within: np.ndarray
    ) -> np.ndarray:
        if self._by_column is None:
            self._by_column = self.counts.tocsc()
            self._lengths = np.asarray(self.counts.sum(axis=1)).ravel()
        by_column, lengths = self._by_column, self._lengths
        scores = np.zeros(len(self), dtype=np.float32)
        n_docs = int(within.sum())
        if not n_docs:
            return scores
        average = lengths[within].mean()
        average = average if average > 0 else 1.0
        for col, repeat in zip(columns.tolist(), repeats.tolist(), strict=True):
            start, end = by_column.indptr[col], by_column.indptr[col + 1]
            rows, tf = by_column.indices[start:end], by_column.data[start:end]
            inside = within[rows]
            rows, tf = rows[inside], tf[inside]
            if not len(rows):
                continue
            idf = np.float32(np.log1p((n_docs - len(rows) + 0.5) / (len(rows) + 0.5)))
            norm = (self.k1 * (1 - self.b + self.b * lengths[rows] / average)).astype(np.float32)
            scores[rows] += np.float32(repeat) * idf * tf * np.float32(self.k1 + 1) / (tf + norm)
        return scores

    def search(
        self,
        query: str | Sequence[str],
        k: int = 10,
        *,
        before: date | None = None,
        include_undated: bool = True,
        exclude_keys: Iterable[int] = (),
        allowed: np.ndarray | None = None,
    ) -> list[Hit]:
        """The ``k`` best documents with a positive score, best first.

        ``before`` keeps documents dated strictly earlier (undated ones only when
        ``include_undated``); ``allowed`` is an extra boolean mask over the rows, and the
        only documents whose statistics count (see :meth:`scores`).
        """
        scores = self.scores(query, within=allowed)
        keep = scores > 0
        if before is not None:
            dated_ok = (self.days >= 0) & (self.days < before.toordinal())
            keep &= dated_ok | ((self.days == NO_DATE) if include_undated else False)
        if allowed is not None:
            keep &= allowed
        excluded = list(exclude_keys)
        if excluded:
            keep &= ~np.isin(self.keys, excluded)
        candidates = np.flatnonzero(keep)
        if not len(candidates):
            return []
        chosen = scores[candidates]
        if len(candidates) > k:
            # Partition first: at a million rows a full sort is most of the query time.
            cut = np.argpartition(-chosen, k - 1)[:k]
            candidates, chosen = candidates[cut], chosen[cut]
        # Ties go to the earlier document so that results are reproducible.
        top = candidates[np.lexsort((candidates, -chosen))]
        return [Hit(int(p), int(self.keys[p]), float(scores[p])) for p in top]

    # -- persistence -------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (one ``.npz``), atomically: readers never see half."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        counts = self.counts.tocsr()
        vocabulary = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(
            tmp,
            data=counts.data,
            indices=counts.indices,
            indptr=counts.indptr,
            shape=np.asarray(counts.shape),
            keys=self.keys,
            days=self.days,
            params=np.asarray([self.k1, self.b]),
            vocabulary=np.frombuffer(json.dumps(vocabulary).encode(), dtype=np.uint8),
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, *, analyser: Callable[[str], list[str]] = analyse) -> BM25Index:
        with np.load(Path(path), allow_pickle=False) as saved:
            k1, b = (float(x) for x in saved["params"])
            index = cls(k1=k1, b=b, analyser=analyser)
            vocabulary = json.loads(saved["vocabulary"].tobytes().decode())
            index.vocabulary = {term: i for i, term in enumerate(vocabulary)}
            index.counts = sparse.csr_matrix(
                (saved["data"], saved["indices"], saved["indptr"]),
                shape=tuple(int(x) for x in saved["shape"]),
            )
            index.keys = saved["keys"]
            index.days = saved["days"]
        return index
