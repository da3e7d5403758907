"""Pre-suggestions learnt from the claims already annotated: plain data in, plain data out.

A :class:`ClaimPool` is built from :class:`PoolClaim` records (imported datasets count)
and answers, each in a few milliseconds:

* :meth:`ClaimPool.duplicates` - the most similar earlier claims with their verdicts (P1);
* :meth:`ClaimPool.classify` - likely claim types and fact-checking strategies (P1);
* :meth:`ClaimPool.candidate_questions` - questions of the ten most similar claims (P2/P4);
* :func:`search_query` - a search query from the claim and speaker (P2/P4);
* :func:`rank_sentences` - sentences of an opened page for the current question (P2/P4).

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

import numpy as np
from scipy import sparse

from pipeline.classify import MultiLabelClassifier
from pipeline.retrieval import STOPWORDS, BM25Index, analyse

__all__ = [
    "ClaimPool",
    "DuplicateHit",
    "PoolClaim",
    "QuestionCandidate",
    "rank_sentences",
    "search_query",
]


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

    def to_json(self) -> dict:
        data = asdict(self)
        data["claim_date"] = self.claim_date.isoformat() if self.claim_date else None
        return data

    @classmethod
    def from_json(cls, data: dict) -> PoolClaim:
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
        )


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
    """Indexes and classifier over a set of annotated claims; built once, then read-only."""

    claims: list[PoolClaim]
    claim_index: BM25Index
    fact_check_index: BM25Index
    types_model: MultiLabelClassifier | None = None
    strategies_model: MultiLabelClassifier | None = None
    _by_id: dict[int, PoolClaim] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {c.id: c for c in self.claims}

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
        pool = cls(claims, claim_index, fact_check_index)
        pool._index(claims, progress)
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
        self.train_classifiers()

    def train_classifiers(self) -> None:
        # The classifiers read the claim index's term counts: no second tokenisation.
        rows = self.claim_index.counts
        self.types_model = MultiLabelClassifier.fit(rows, [c.claim_types for c in self.claims])
        self.strategies_model = MultiLabelClassifier.fit(rows, [c.strategies for c in self.claims])

    def __len__(self) -> int:
        return len(self.claims)

    def claim(self, claim_id: int) -> PoolClaim | None:
        return self._by_id.get(claim_id)

    # -- suggestions -------------------------------------------------------------------

    def duplicates(
        self, text: str, *, k: int = 5, exclude: Iterable[int] = ()
    ) -> list[DuplicateHit]:
        """Claims most like ``text`` over claim and fact-check text, with their verdicts."""
        hits = self.fact_check_index.search(text, k, exclude_keys=exclude)
        return [
            DuplicateHit(h.key, c.text, c.label, c.claim_date, h.score)
            for h in hits
            if (c := self._by_id.get(h.key))
        ]

    def classify(self, text: str) -> dict[str, list[tuple[str, float]]]:
        """Likely claim types and strategies, each ``(label, probability)``, likeliest first."""
        row = self.row(text)
        result: dict[str, list[tuple[str, float]]] = {"claim_types": [], "strategies": []}
        if self.types_model:
            result["claim_types"] = self.types_model.suggest(row)
        if self.strategies_model:
            result["strategies"] = self.strategies_model.suggest(row)
        return result

    def row(self, text: str) -> sparse.csr_matrix:
        """Term counts of ``text`` in the claim index's vocabulary (the classifiers' input)."""
        columns = [
            self.claim_index.vocabulary[t]
            for t in self.claim_index.analyser(text)
            if t in self.claim_index.vocabulary
        ]
        return sparse.csr_matrix(
            (np.ones(len(columns), dtype=np.float32), ([0] * len(columns), columns)),
            shape=(1, len(self.claim_index.vocabulary)),
        )

    def candidate_questions(
        self,
        text: str,
        speaker: str = "",
        *,
        similar: int = 10,
        limit: int = 10,
        exclude: Iterable[int] = (),
        before: date | None = None,
    ) -> list[QuestionCandidate]:
        """Questions asked about the ``similar`` claims most like this one, as templates.

        The other claim's speaker is swapped for this claim's speaker, so a template such
        as "When did <speaker> say ...?" reads right; near-identical questions appear once.
        """
        query = f"{text} {speaker}".strip()
        hits = self.claim_index.search(query, similar, exclude_keys=exclude, before=before)
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
            pool.types_model = MultiLabelClassifier.load(folder / "types.npz")
        if (folder / "strategies.npz").exists():
            pool.strategies_model = MultiLabelClassifier.load(folder / "strategies.npz")
        return pool


def _claim_text(claim: PoolClaim) -> str:
    return f"{claim.text} {claim.speaker}".strip()


def _overlap(terms: Sequence[str], reference: set[str]) -> float:
    if not terms:
        return 0.0
    return len(set(terms) & reference) / len(set(terms))


def _swap_speaker(question: str, old: str, new: str) -> str:
    if not old or not new or old.lower() == new.lower():
        return question
    return re.sub(re.escape(old), new, question, flags=re.IGNORECASE)


# -- search query -------------------------------------------------------------------------

# Words that are neither verbs, nouns, adjectives nor numbers. NLTK's POS tagger model is
# not provisioned offline (pipeline.nltk_data ships WordNet and Punkt only), so the
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


def search_query(claim: str, speaker: str = "", *, max_words: int = 12) -> str:
    """A web search query for the claim: the speaker, then its content words and numbers."""
    words: list[str] = []
    seen: set[str] = set()
    for word in _QUERY_WORD.findall(f"{speaker} {claim}" if speaker else claim):
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
