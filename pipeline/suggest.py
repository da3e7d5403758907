"""Pre-suggestions learnt from the claims already annotated: plain data in, plain data out.

A :class:`ClaimPool` is built from :class:`PoolClaim` records (imported datasets count) and
answers for one :class:`ClaimContext` (the claim being worked on), each in a few
milliseconds:

* :meth:`ClaimPool.duplicates` - the most similar earlier claims with their verdicts (P1);
* :meth:`ClaimPool.claim_labels` - likely claim types and fact-checking strategies (P1);
* :meth:`ClaimPool.candidate_questions` - questions of the ten most similar claims (P2/P4);
* :meth:`ClaimPool.search_query` - a search query for the claim's evidence (P2/P4);
* :func:`rank_sentences` - sentences of an opened page for the current question (P2/P4).

**Only the past**: every answer for a context uses only pool claims dated strictly before
its claim date and never a claim of its own article (:meth:`ClaimPool.allowed`, one mask
that every kind goes through; the classifiers are checkpoints trained on earlier claims,
see :class:`pipeline.classify.DatedClassifiers`). The benchmark calls these same methods.

Nothing here decides what an annotator may see; the caller applies the phase rules. The
P2/P4 answers carry no verdict: only :meth:`ClaimPool.duplicates` does, and it is for P1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from pipeline.classify import DatedClassifiers
from pipeline.retrieval import NO_DATE, STOPWORDS, BM25Index, analyse, fast_analyse

__all__ = [
    "ClaimContext",
    "ClaimPool",
    "DuplicateHit",
    "PoolClaim",
    "QuestionCandidate",
    "label_features",
    "rank_sentences",
    "search_query",
]


@dataclass(frozen=True)
class ClaimContext:
    """The claim a suggestion is for: what the annotator's screen knows of it."""

    text: str
    claim_date: date
    # Its fact-checking article, as a key: claims of the same article are never used.
    article: str = ""
    speaker: str = ""
    reporting_source: str = ""
    # The fact-checking article's address (P1 and P2 read the article).
    article_url: str = ""


@dataclass(frozen=True)
class PoolClaim:
    """One annotated claim as the pipeline needs it."""

    id: int
    text: str
    claim_date: date | None = None
    speaker: str = ""
    label: str = ""
    claim_types: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    # What the fact-checker wrote about it (title, ClaimReview text, justification):
    # the strongest single signal for "was this already fact-checked?".
    fact_check_text: str = ""
    article: str = ""
    reporting_source: str = ""
    article_url: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["claim_date"] = self.claim_date.isoformat() if self.claim_date else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PoolClaim:
        return cls(
            id=int(data["id"]),
            text=data["text"],
            claim_date=date.fromisoformat(data["claim_date"]) if data.get("claim_date") else None,
            speaker=data.get("speaker") or "",
            label=data.get("label") or "",
            claim_types=tuple(data.get("claim_types") or ()),
            strategies=tuple(data.get("strategies") or ()),
            questions=tuple(data.get("questions") or ()),
            fact_check_text=data.get("fact_check_text") or "",
            article=data.get("article") or "",
            reporting_source=data.get("reporting_source") or "",
            article_url=data.get("article_url") or "",
        )

    def features(self) -> list[str]:
        return label_features(self.text, self.speaker, self.reporting_source, self.article_url)


@dataclass(frozen=True)
class DuplicateHit:
    claim_id: int
    text: str
    label: str
    claim_date: date | None
    score: float


@dataclass(frozen=True)
class QuestionCandidate:
    text: str
    from_claim_id: int
    score: float


@dataclass
class ClaimPool:
    """Indexes and classifiers over a set of annotated claims; built once, then read-only."""

    claims: list[PoolClaim]
    claim_index: BM25Index
    fact_check_index: BM25Index
    types_model: DatedClassifiers | None = None
    strategies_model: DatedClassifiers | None = None
    # The classifiers' input: label_features() counted over this vocabulary.
    feature_vocabulary: dict[str, int] = field(default_factory=dict)
    _by_id: dict[int, PoolClaim] = field(default_factory=dict, repr=False)
    _days: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32), repr=False)
    _articles: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    _article_codes: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {c.id: c for c in self.claims}
        self._rows_changed()

    def _rows_changed(self) -> None:
        self._days = np.asarray(
            [c.claim_date.toordinal() if c.claim_date else NO_DATE for c in self.claims],
            dtype=np.int32,
        )
        self._article_codes = {}
        self._articles = np.asarray(
            [
                self._article_codes.setdefault(c.article, len(self._article_codes))
                for c in self.claims
            ],
            dtype=np.int64,
        )

    # -- building ----------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        claims: Iterable[PoolClaim],
        *,
        analyser: Callable[[str], list[str]] = analyse,
        progress: Callable[[int], None] | None = None,
    ) -> ClaimPool:
        claims = list(claims)
        claim_index = BM25Index(analyser=analyser)
        fact_check_index = BM25Index(analyser=analyser)
        pool = cls([], claim_index, fact_check_index)
        pool.claims = claims
        pool._by_id = {c.id: c for c in claims}
        pool._index(claims, progress)
        pool._rows_changed()
        pool.train_classifiers()
        return pool

    def _index(self, claims: list[PoolClaim], progress: Callable[[int], None] | None) -> None:
        step = 1000
        for start in range(0, len(claims), step):
            chunk = claims[start : start + step]
            ids = [c.id for c in chunk]
            dates = [c.claim_date for c in chunk]
            self.claim_index.add([_claim_text(c) for c in chunk], ids, dates)
            self.fact_check_index.add(
                [f"{_claim_text(c)} {c.fact_check_text}" for c in chunk], ids, dates
            )
            if progress:
                progress(len(chunk))

    def add(self, claims: Iterable[PoolClaim]) -> None:
        """Add newly accepted claims without re-reading the old ones (classifiers retrained)."""
        new = [c for c in claims if c.id not in self._by_id]
        if not new:
            return
        self.claims.extend(new)
        self._by_id.update((c.id, c) for c in new)
        self._index(new, None)
        self._rows_changed()
        self.train_classifiers()

    def train_classifiers(self) -> None:
        self.feature_vocabulary = {}
        rows = self._feature_rows([c.features() for c in self.claims], grow=True)
        self.types_model = DatedClassifiers.fit(
            rows, [c.claim_types for c in self.claims], self._days
        )
        self.strategies_model = DatedClassifiers.fit(
            rows, [c.strategies for c in self.claims], self._days
        )

    def _feature_rows(self, documents: list[list[str]], *, grow: bool = False) -> sparse.csr_matrix:
        rows: list[int] = []
        cols: list[int] = []
        for row, features in enumerate(documents):
            for feature in features:
                col = self.feature_vocabulary.get(feature)
                if col is None:
                    if not grow:
                        continue
                    col = self.feature_vocabulary[feature] = len(self.feature_vocabulary)
                rows.append(row)
                cols.append(col)
        matrix = sparse.csr_matrix(
            (np.ones(len(rows), dtype=np.float32), (rows, cols)),
            shape=(len(documents), max(1, len(self.feature_vocabulary))),
        )
        matrix.sum_duplicates()
        return matrix

    def __len__(self) -> int:
        return len(self.claims)

    def claim(self, claim_id: int) -> PoolClaim | None:
        return self._by_id.get(claim_id)

    # -- only the past -----------------------------------------------------------------

    def allowed(self, context: ClaimContext) -> np.ndarray:
        """Rows a suggestion for `context` may use: dated before its claim, other articles."""
        keep = (self._days != NO_DATE) & (self._days < context.claim_date.toordinal())
        code = self._article_codes.get(context.article) if context.article else None
        if code is not None:
            keep &= self._articles != code
        allowed: np.ndarray = keep
        return allowed

    def _own_article_from(self, context: ClaimContext) -> int | None:
        """The earliest day of a pool claim of the context's article, if it has any."""
        code = self._article_codes.get(context.article) if context.article else None
        if code is None:
            return None
        days = self._days[(self._articles == code) & (self._days != NO_DATE)]
        return int(days.min()) if len(days) else None

    # -- suggestions -------------------------------------------------------------------

    def duplicates(self, context: ClaimContext, *, k: int = 5) -> list[DuplicateHit]:
        """Earlier claims most like this one over claim and fact-check text, with verdicts."""
        hits = self.fact_check_index.search(
            _context_text(context), k, allowed=self.allowed(context)
        )
        return [
            DuplicateHit(h.key, c.text, c.label, c.claim_date, h.score)
            for h in hits
            if (c := self._by_id.get(h.key))
        ]

    def claim_labels(self, context: ClaimContext) -> dict[str, list[tuple[str, float]]]:
        """Likely claim types and strategies, each ``(label, probability)``, likeliest first:
        the likeliest label set of a model that learnt only claims before this one."""
        row = self._feature_rows([context_features(context)])
        result: dict[str, list[tuple[str, float]]] = {"claim_types": [], "strategies": []}
        day, avoid = context.claim_date.toordinal(), self._own_article_from(context)
        for key, dated in (
            ("claim_types", self.types_model),
            ("strategies", self.strategies_model),
        ):
            model = dated.model_for(day, avoid) if dated else None
            if model is not None:
                result[key] = model.suggest(row)
        return result

    def candidate_questions(
        self,
        context: ClaimContext,
        *,
        similar: int = 10,
        limit: int = 10,
    ) -> list[QuestionCandidate]:
        """Questions asked about the ``similar`` earlier claims most like this one, as templates.

        The other claim's speaker is swapped for this claim's speaker, so a template such
        as "When did <speaker> say ...?" reads right; near-identical questions appear once.
        """
        speaker = context.speaker
        query = _context_text(context)
        hits = self.claim_index.search(query, similar, allowed=self.allowed(context))
        candidates: list[QuestionCandidate] = []
        seen: set[tuple[str, ...]] = set()
        for hit in hits:
            source = self._by_id.get(hit.key)
            if source is None:
                continue
            for question in source.questions:
                adapted = _swap_speaker(question, source.speaker, speaker)
                signature = tuple(sorted(set(self.claim_index.analyser(adapted))))
                if not signature or signature in seen:
                    continue
                seen.add(signature)
                candidates.append(QuestionCandidate(adapted, source.id, hit.score))
        # Within the ranked claims, prefer questions that share words with this claim.
        claim_terms = set(self.claim_index.analyser(query))
        analyser = self.claim_index.analyser
        candidates.sort(key=lambda c: -c.score * (1 + _overlap(analyser(c.text), claim_terms)))
        return candidates[:limit]

    def search_query(self, context: ClaimContext) -> str:
        """A search query for this claim's evidence (see :func:`search_query`)."""
        return search_query(context.text, context.speaker)

    # -- persistence -------------------------------------------------------------------

    def save(self, folder: Path) -> None:
        """Write the pool to ``folder`` (two indexes, the claims as JSON, the classifiers)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.claim_index.save(folder / "claims.npz")
        self.fact_check_index.save(folder / "fact_checks.npz")
        for name, model in (("types", self.types_model), ("strategies", self.strategies_model)):
            if model:
                model.save(folder / f"{name}.npz")
        vocabulary = sorted(self.feature_vocabulary, key=self.feature_vocabulary.__getitem__)
        (folder / "features.json").write_text(json.dumps(vocabulary))
        tmp = folder / "pool.json.tmp"
        tmp.write_text(json.dumps([c.to_json() for c in self.claims]))
        # Written last: a reader that finds pool.json finds everything it needs.
        tmp.replace(folder / "pool.json")

    @classmethod
    def load(cls, folder: Path, *, analyser: Callable[[str], list[str]] = analyse) -> ClaimPool:
        folder = Path(folder)
        claims = [PoolClaim.from_json(d) for d in json.loads((folder / "pool.json").read_text())]
        pool = cls(
            claims,
            BM25Index.load(folder / "claims.npz", analyser=analyser),
            BM25Index.load(folder / "fact_checks.npz", analyser=analyser),
        )
        if (folder / "types.npz").exists():
            pool.types_model = DatedClassifiers.load(folder / "types.npz")
        if (folder / "strategies.npz").exists():
            pool.strategies_model = DatedClassifiers.load(folder / "strategies.npz")
        if (folder / "features.json").exists():
            terms = json.loads((folder / "features.json").read_text())
            pool.feature_vocabulary = {t: i for i, t in enumerate(terms)}
        return pool


def _claim_text(claim: PoolClaim) -> str:
    return f"{claim.text} {claim.speaker}".strip()


def _context_text(context: ClaimContext) -> str:
    return f"{context.text} {context.speaker}".strip()


def _overlap(terms: Sequence[str], reference: set[str]) -> float:
    if not terms:
        return 0.0
    return len(set(terms) & reference) / len(set(terms))


def _swap_speaker(question: str, old: str, new: str) -> str:
    if not old or not new or old.lower() == new.lower():
        return question
    return re.sub(re.escape(old), new, question, flags=re.IGNORECASE)


# -- the classifiers' features ---------------------------------------------------------------

_ARCHIVED = re.compile(r"^https?://web\.archive\.org/web/[0-9a-z_*]+/", re.IGNORECASE)
_MONEY = re.compile(r"[$\u00a3\u20ac\u20a6\u20b9]|\b(?:million|billion|trillion)\b", re.I)
_HOST = re.compile(r"^[a-z][a-z0-9+.-]*://([^/?#:]+)", re.IGNORECASE)


def label_features(text: str, speaker: str, reporting_source: str, article_url: str) -> list[str]:
    """What the claim-type and strategy classifiers read: the claim's words, who said it and
    where it was reported, which fact-checker checked it and the words of its address, and
    the claim's shape (numbers, quotes, money)."""
    features = analyse(text)
    features += [f"speaker:{t}" for t in fast_analyse(speaker)]
    features += [f"source:{t}" for t in fast_analyse(reporting_source)]
    address = _ARCHIVED.sub("", article_url.strip())
    if host := _HOST.match(address):
        name = host.group(1).lower()
        features.append(f"checker:{name.removeprefix('www.')}")
        slug = address[host.end() :]
        features += [f"article:{t}" for t in fast_analyse(slug) if not t.isdigit()]
    if re.search(r"\d", text):
        features.append("shape:number")
    if re.search(r"%|\bper ?cent", text, re.IGNORECASE):
        features.append("shape:percent")
    if re.search(r"[\"\u201c\u201d]", text):
        features.append("shape:quote")
    if re.search(
        r"[$\u00a3\u20ac\u20a6\u20b9]|\b(?:million|billion|trillion)\b", text, re.IGNORECASE
    ):
        features.append("shape:money")
    return features


def context_features(context: ClaimContext) -> list[str]:
    return label_features(
        context.text, context.speaker, context.reporting_source, context.article_url
    )


# -- search query -------------------------------------------------------------------------

# Words that are neither verbs, nouns, adjectives nor numbers. NLTK's POS tagger model is
# not provisioned offline (scripts.nltk_data ships WordNet and Punkt only), so the
# baseline's "keep verbs, nouns, adjectives and numbers" is approximated by dropping the
# closed word classes (articles, pronouns, prepositions, conjunctions, auxiliaries) and
# common adverbs and hedges, which keeps what the tagger would have kept.
_NOT_CONTENT = STOPWORDS | frozenset(
    """also always already almost actually allegedly apparently claim claimed claims
    currently even ever every however just many may might much must never often perhaps
    quite rather really reportedly said say says shall since still though thus upon us
    whether within without yet""".split()  # noqa: SIM905
)
_QUERY_WORD = re.compile(r"\d[\d,.%]*|[^\W\d_][\w'\u2019.-]*", re.UNICODE)


def search_query(claim: str, speaker: str = "", *, max_words: int = 32) -> str:
    """A web search query for the claim: its content words and numbers, in order.

    Measured on dev.json's evidence pages (docs/benchmarks.md), the speaker's name hurts
    more than it helps (it is found on many pages about other claims), and cutting the
    query short loses distinctive words; 32 words is the longest query Google takes.
    ``speaker`` is accepted for callers that know one and ignored for that reason.
    """
    words: list[str] = []
    seen: set[str] = set()
    for word in _QUERY_WORD.findall(claim):
        word = word.strip(".,\u2019'-")
        lowered = word.lower()
        if not word or lowered in _NOT_CONTENT or lowered in seen:
            continue
        if len(word) == 1 and not word.isdigit():
            continue
        seen.add(lowered)
        words.append(word)
    return " ".join(words[:max_words])


# -- evidence sentences -------------------------------------------------------------------


def rank_sentences(
    question: str,
    sentences: Sequence[str],
    *,
    claim: str = "",
    k: int = 5,
    analyser: Callable[[str], list[str]] = analyse,
) -> list[int]:
    """Positions of the ``k`` sentences likeliest to answer ``question``, best first.

    BM25 over the page's own sentences (its idf says what is distinctive on this page);
    the claim's words count half as much as the question's, since the answer is about the
    question but usually also names what the claim is about.
    """
    if not sentences:
        return []
    index = BM25Index(analyser=analyser)
    index.add(sentences)
    scores = index.scores(question)
    if claim:
        scores = scores + 0.5 * index.scores(claim)
    order = np.lexsort((np.arange(len(scores)), -scores))
    return [int(i) for i in order[:k] if scores[i] > 0]
