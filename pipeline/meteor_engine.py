"""Many METEOR scores at once, equal to ``pipeline.text.meteor`` and far faster.

``pipeline.text.meteor(candidate, reference)`` is NLTK's ``single_meteor_score`` on
``word_tokenize``d text, the official AVeriTeC call. Scoring a file calls it ten thousand
times, and NLTK then re-tokenises every string, re-stems every word and asks WordNet for the
synonyms of every word again and again; WordNet alone takes several seconds to load. Here:

* each string is tokenised once, and ``word_tokenize`` is memoised per *sentence* (it is
  Punkt sentence splitting followed by the Treebank word tokenizer on each sentence; the
  same question recurs as a sentence of many question-answer strings);
* each word is stemmed and looked up once;
* the synonyms METEOR reads come from a :class:`SynonymTable` built once from NLTK's
  WordNet and saved in a cache folder (it loads in a tenth of a second);
* the alignment is a port of NLTK's (exact words, then stems, then WordNet synonyms *of the
  stems*, as NLTK does) on words prepared once per string; the first two stages, where
  words do not compete, are done word by word instead of token by token;
* pairs are spread over worker processes (``fork`` shares the loaded table for free).

Exactness is guarded, not assumed: the port is used only when the NLTK functions it mirrors
are byte-for-byte those it was verified against (:data:`VERIFIED_NLTK_SOURCE`, checked at
start). With any other NLTK, :class:`Meteor` calls NLTK's own ``single_meteor_score`` (with
caching stemmer and WordNet wrappers), slower but exact by construction. The tests compare
both paths with the official call on thousands of real and of adversarial pairs.

No Django here.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import marshal
import multiprocessing
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pipeline import _nltk_lean  # noqa: F401  (before NLTK: see its docstring)

# isort: split
import nltk
import nltk.data
from nltk.corpus.reader.wordnet import POS_LIST, WordNetCorpusReader
from nltk.stem.porter import PorterStemmer
from nltk.tokenize import _treebank_word_tokenizer, sent_tokenize, word_tokenize
from nltk.translate import meteor_score as nltk_meteor

from pipeline import nltk_data
from pipeline.text import tokenize

__all__ = ["Meteor", "SynonymTable", "default_cache_dir", "fast_path_verified", "shared_meteor"]

Progress = Callable[[int], None]

# NLTK's METEOR defaults, which the AVeriTeC scorer uses.
ALPHA, BETA, GAMMA = 0.9, 3.0, 0.5

# sha256 over the NLTK code the fast path mirrors (see _nltk_source_digest), as in
# NLTK 3.10.4. Another NLTK version falls back to calling NLTK itself; to re-enable the fast
# path, run tests/pipeline/test_scoring.py (it compares both with NLTK) and update this.
VERIFIED_NLTK_SOURCE = "7a0c4c28fc85eba7da7208636e16269bbbeb4f04a828c614a29254020ff66596"


def _no_progress(_: int) -> None:
    pass


def _nltk_source_digest() -> str:
    digest = hashlib.sha256()
    for part in (
        inspect.getsource(nltk_meteor),
        inspect.getsource(WordNetCorpusReader._morphy),
        inspect.getsource(WordNetCorpusReader.synsets),
        repr(WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS),
        repr(POS_LIST),
        inspect.getsource(word_tokenize),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


@cache
def nltk_source_digest() -> str | None:
    """The digest of the NLTK code the fast path mirrors, or None without its source."""
    try:
        return _nltk_source_digest()
    except (OSError, TypeError):
        return None


@cache
def fast_path_verified() -> bool:
    """Whether the installed NLTK is the one the fast path was verified against."""
    # No source available (a frozen build): None, never verified.
    return nltk_source_digest() == VERIFIED_NLTK_SOURCE


def default_cache_dir() -> Path:
    """``$SCORING_CACHE_DIR``, else a ``cache`` folder in the project's NLTK data folder."""
    env = os.environ.get("SCORING_CACHE_DIR", "").strip()
    return Path(env).expanduser() if env else nltk_data.default_target() / "cache"


# --------------------------------------------------------------------------------------
# WordNet synonyms as METEOR reads them
# --------------------------------------------------------------------------------------


class SynonymTable:
    """Per part of speech, each WordNet lemma with the names of its synsets; the exceptions.

    This is the part of WordNet that METEOR reads: for a word, NLTK's ``synsets(word)``
    runs ``_morphy`` (exception lists, then suffix rules, keeping forms that are lemmas of
    that part of speech) and METEOR takes the lemma names without "_" of every synset found.
    :meth:`synonyms` does exactly that on these tables. Names with "_" are left out when the
    table is built, since METEOR drops them.

    Stored with ``marshal`` (plain data, no code) as newline-joined strings, which load
    in well under a second, under a name that changes with the WordNet files, NLTK and
    Python (:meth:`fingerprint`).
    """

    FORMAT = 1

    def __init__(
        self, lemmas: dict[str, dict[str, str]], exceptions: dict[str, dict[str, list[Any]]]
    ):
        self._lemmas = lemmas  # pos -> lemma -> space-separated synonym names
        self._exceptions = exceptions  # pos -> inflected form -> base forms
        self._substitutions = WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS

    def _morphy(self, form: str, pos: str) -> list[str]:
        # NLTK's WordNetCorpusReader._morphy, on these tables.
        lemmas = self._lemmas[pos]
        exceptions = self._exceptions[pos]
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [
                form[: -len(old)] + new
                for old, new in self._substitutions[pos]
                if form.endswith(old)
            ]
        return [f for f in dict.fromkeys([form, *forms]) if f in lemmas]

    def names(self, word: str) -> set[str]:
        """The lemma names without "_" of all synsets NLTK's ``wordnet.synsets(word)`` finds."""
        word = word.lower()  # as synsets() does
        found: set[str] = set()
        for pos in POS_LIST:
            lemmas = self._lemmas[pos]
            for form in self._morphy(word, pos):
                found.update(lemmas[form].split())
        return found

    # --- building and caching -----------------------------------------------------------

    @classmethod
    def build(cls, progress: Progress = _no_progress) -> SynonymTable:
        """Read NLTK's WordNet (several seconds to load, then ~15 s to read every synset)."""
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        names_of: dict[tuple[str, int], tuple[str, ...]] = {}
        lemmas: dict[str, dict[str, str]] = {pos: {} for pos in POS_LIST}
        for form, by_pos in wordnet._lemma_pos_offset_map.items():
            for pos in POS_LIST:
                if pos not in by_pos:
                    continue
                names: set[str] = set()
                for offset in by_pos[pos]:
                    key = (pos, offset)
                    if key not in names_of:
                        synset = wordnet.synset_from_pos_and_offset(pos, offset)
                        names_of[key] = tuple(
                            n for n in (x.name() for x in synset.lemmas()) if "_" not in n
                        )
                    names.update(names_of[key])
                lemmas[pos][form] = " ".join(sorted(names))
            progress(1)
        exceptions = {pos: dict(wordnet._exception_map[pos]) for pos in POS_LIST}
        return cls(lemmas, exceptions)

    def _dumps(self) -> bytes:
        lemmas = {pos: ("\n".join(t), "\n".join(t.values())) for pos, t in self._lemmas.items()}
        exceptions = {
            pos: "\n".join(" ".join([form, *bases]) for form, bases in table.items())
            for pos, table in self._exceptions.items()
        }
        for text in [*(s for pair in lemmas.values() for s in pair), *exceptions.values()]:
            # WordNet lemmas and names never hold spaces or line breaks (they use "_").
            if "\r" in text:
                raise ValueError("unexpected carriage return in WordNet data")
        return marshal.dumps((self.FORMAT, lemmas, exceptions))

    @classmethod
    def _loads(cls, data: bytes) -> SynonymTable:
        fmt, lemma_blobs, exception_blobs = marshal.loads(data)
        if fmt != cls.FORMAT:
            raise ValueError(f"synonym table format {fmt}, expected {cls.FORMAT}")
        lemmas = {
            pos: dict(zip(forms.split("\n"), names.split("\n"), strict=True))
            for pos, (forms, names) in lemma_blobs.items()
        }
        exceptions: dict[str, dict[str, list[Any]]] = {}
        for pos, blob in exception_blobs.items():
            table = exceptions[pos] = {}
            for line in blob.split("\n") if blob else ():
                form, *bases = line.split(" ")
                table[form] = bases
        return cls(lemmas, exceptions)

    @classmethod
    def load_or_build(
        cls, cache_dir: Path | None = None, progress: Progress = _no_progress
    ) -> SynonymTable:
        """The table from the cache folder; built from WordNet (and saved) when missing."""
        path = cls.cache_path(cache_dir)
        try:
            return cls._loads(path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            pass
        table = cls.build(progress)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Written beside and renamed, so a concurrent reader never sees half a file.
            fd, partial = tempfile.mkstemp(dir=path.parent, prefix=".synonyms-", suffix=".tmp")
            with os.fdopen(fd, "wb") as stream:
                stream.write(table._dumps())
            os.replace(partial, path)
        except OSError:
            pass  # a read-only folder: the table still works, it is only rebuilt next time
        return table

    @classmethod
    def cache_path(cls, cache_dir: Path | None = None) -> Path:
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        return folder / f"meteor-synonyms-{cls.fingerprint()}.marshal"

    @classmethod
    def fingerprint(cls) -> str:
        """Changes with the WordNet files NLTK reads, NLTK's version and Python's."""
        try:
            found = Path(str(nltk.data.find("corpora/wordnet")))
        except LookupError as exc:
            raise LookupError(
                f"NLTK data is missing; provision it with `python -m scripts.nltk_data`.\n{exc}"
            ) from exc
        files = sorted(found.iterdir()) if found.is_dir() else [found]
        digest = hashlib.sha256()
        digest.update(f"{cls.FORMAT}|{nltk.__version__}|{sys.version_info[:2]}".encode())
        for file in files:
            stat = file.stat()
            digest.update(f"|{file.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        return digest.hexdigest()[:16]


# --------------------------------------------------------------------------------------
# The NLTK path: NLTK's own function, handed caching helpers
# --------------------------------------------------------------------------------------


class _Lemma:
    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def name(self) -> str:
        return self._name


class _MergedSynset:
    """All synsets of a word as one: METEOR only takes the union of their lemma names."""

    __slots__ = ("_lemmas",)

    def __init__(self, names: Iterable[str]):
        self._lemmas = [_Lemma(n) for n in sorted(names)]

    def lemmas(self) -> list[_Lemma]:
        return self._lemmas


class _CachingWordNet:
    """``synsets(word)`` for NLTK's METEOR, asked of WordNet once per word."""

    def __init__(self) -> None:
        self._cache: dict[str, list[_MergedSynset]] = {}

    def synsets(self, word: str) -> list[_MergedSynset]:
        found = self._cache.get(word)
        if found is None:
            from nltk.corpus import wordnet

            names = {lemma.name() for s in wordnet.synsets(word) for lemma in s.lemmas()}
            found = self._cache[word] = [_MergedSynset(names)] if names else []
        return found


class _CachingStemmer:
    def __init__(self) -> None:
        self._stem = PorterStemmer().stem
        self._cache: dict[str, str] = {}

    def stem(self, word: str) -> str:
        found = self._cache.get(word)
        if found is None:
            found = self._cache[word] = self._stem(word)
        return found


# --------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------


class _Text:
    """A string as METEOR sees it: lower-cased tokens, their stems, where each occurs."""

    __slots__ = ("n", "stem_positions", "stems", "word_positions", "words")

    def __init__(self, words: tuple[str, ...], stems: tuple[str, ...]):
        self.n = len(words)
        self.words, self.stems = words, stems
        self.word_positions = _positions(words)
        self.stem_positions = _positions(stems)


def _positions(items: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    found: dict[str, list[int]] = {}
    for position, item in enumerate(items):
        found.setdefault(item, []).append(position)
    return {item: tuple(at) for item, at in found.items()}


class Meteor:
    """``meteor(candidate, reference)``, equal to ``pipeline.text.meteor``, with caches.

    ``synonyms`` is the :class:`SynonymTable` for the fast path; None (or an NLTK other
    than the verified one) means NLTK's own function with caching helpers.
    """

    # Past this many cached strings the caches are dropped, so a long-lived worker stays small.
    MAX_CACHED = 500_000

    def __init__(self, synonyms: SynonymTable | None = None):
        self.fast = synonyms is not None and fast_path_verified()
        self._synonyms_table = synonyms
        self._sentences: dict[str, tuple[str, ...]] = {}
        self._texts: dict[str, _Text] = {}
        self._stems: dict[str, str] = {}
        self._synonyms: dict[str, frozenset[str]] = {}
        self._porter = PorterStemmer().stem
        self._nltk_stemmer = _CachingStemmer()
        self._nltk_wordnet = _CachingWordNet()

    # --- preparation --------------------------------------------------------------------

    def tokens(self, text: str) -> tuple[str, ...]:
        """``word_tokenize(text)``: Punkt sentences, then Treebank words per sentence."""
        if not self.fast:
            return tuple(tokenize(text))
        sentences = self._sentences
        out: list[str] = []
        for sentence in sent_tokenize(text):
            words = sentences.get(sentence)
            if words is None:
                words = sentences[sentence] = tuple(_treebank_word_tokenizer.tokenize(sentence))
            out.extend(words)
        return tuple(out)

    def _text(self, text: str) -> _Text:
        found = self._texts.get(text)
        if found is None:
            if len(self._texts) >= self.MAX_CACHED:
                self._texts.clear()
                self._sentences.clear()
            words = tuple(w.lower() for w in self.tokens(text))  # METEOR's preprocess
            found = self._texts[text] = _Text(words, tuple(map(self._stem, words)))
        return found

    def prepared(self, text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The lower-cased tokens of ``text`` and their stems, as the fast path uses them."""
        found = self._text(text)
        return found.words, found.stems

    def prime(self, prepared: Iterable[tuple[str, tuple[str, ...], tuple[str, ...]]]) -> None:
        """Take (text, words, stems) prepared earlier (``pipeline.reference_cache``)."""
        texts = self._texts
        for text, words, stems in prepared:
            if text not in texts:
                texts[text] = _Text(tuple(words), tuple(stems))

    def _stem(self, word: str) -> str:
        found = self._stems.get(word)
        if found is None:
            found = self._stems[word] = self._porter(word)
        return found

    def _synonyms_of(self, word: str) -> frozenset[str]:
        found = self._synonyms.get(word)
        if found is None:
            assert self._synonyms_table is not None
            names = self._synonyms_table.names(word)
            names.add(word)
            found = self._synonyms[word] = frozenset(names)
        return found

    # --- scoring ------------------------------------------------------------------------

    def __call__(self, candidate: str, reference: str) -> float:
        if not self.fast:
            score: float = nltk_meteor.single_meteor_score(
                tuple(tokenize(reference)),
                tuple(tokenize(candidate)),
                stemmer=self._nltk_stemmer,
                wordnet=self._nltk_wordnet,
            )
            return score
        return self._aligned_score(self._text(candidate), self._text(reference))

    def _aligned_score(self, hyp: _Text, ref: _Text) -> float:
        """NLTK 3.10.4's single_meteor_score, on prepared texts.

        NLTK aligns in three stages, each on what the previous left: exact words, Porter
        stems, WordNet synonyms of the stems. In the first two, it walks the hypothesis from
        its last word and gives each word the last unused reference position with the same
        word (stem). For one word that pairs the last k occurrences in the hypothesis with
        the last k in the reference, in order (k the smaller count), whatever the other
        words do; so those stages are done here word by word. The third stage lets words
        compete for a reference position and is done as NLTK does it.
        """
        n_hyp, n_ref = hyp.n, ref.n
        if not n_hyp or not n_ref:
            return 0.0
        matches: list[tuple[int, int]] = []
        matched_hyp: set[int] = set()
        matched_ref: set[int] = set()

        # 1. Exact matches (NLTK's _match_enums).
        in_hyp: Sequence[int]
        in_ref: Sequence[int]
        hyp_at, ref_at = hyp.word_positions, ref.word_positions
        for word in hyp_at.keys() & ref_at.keys():
            in_hyp, in_ref = hyp_at[word], ref_at[word]
            k = min(len(in_hyp), len(in_ref))
            for i, j in zip(in_hyp[-k:], in_ref[-k:], strict=True):
                matches.append((i, j))
                matched_hyp.add(i)
                matched_ref.add(j)

        if len(matches) < n_hyp and len(matches) < n_ref:
            # 2. The same on the stems of the words left (_enum_stem_match). Positions of
            #    one stem hold no other stem, so stems do not interact.
            hyp_at, ref_at = hyp.stem_positions, ref.stem_positions
            for stem in hyp_at.keys() & ref_at.keys():
                in_hyp = [i for i in hyp_at[stem] if i not in matched_hyp]
                if not in_hyp:
                    continue
                in_ref = [j for j in ref_at[stem] if j not in matched_ref]
                k = min(len(in_hyp), len(in_ref))
                if k:
                    for i, j in zip(in_hyp[-k:], in_ref[-k:], strict=True):
                        matches.append((i, j))
                        matched_hyp.add(i)
                        matched_ref.add(j)

            if len(matches) < n_hyp and len(matches) < n_ref:
                # 3. WordNet (_enum_wordnetsyn_match). NLTK passes the *stemmed* lists on,
                #    so the synonyms are those of each stem, matched against stems. Each
                #    hypothesis word, from the last, takes the synonym whose last unused
                #    reference position is the latest.
                positions: dict[str, list[int]] = {}
                ref_stems = ref.stems
                for j in range(n_ref):
                    if j not in matched_ref:
                        positions.setdefault(ref_stems[j], []).append(j)
                hyp_stems = hyp.stems
                for i in range(n_hyp - 1, -1, -1):
                    if i in matched_hyp:
                        continue
                    best_j, best_word = -1, None
                    for syn in self._synonyms_of(hyp_stems[i]) & positions.keys():
                        found = positions[syn]
                        if found and found[-1] > best_j:
                            best_j, best_word = found[-1], syn
                    if best_word is not None:
                        positions[best_word].pop()
                        matches.append((i, best_j))

        matches_count = len(matches)
        if not matches_count:
            return 0.0  # NLTK: ZeroDivisionError caught, 0.0
        matches.sort()
        chunks = 1
        for (h0, r0), (h1, r1) in itertools.pairwise(matches):
            if not (h1 == h0 + 1 and r1 == r0 + 1):
                chunks += 1
        # The same float operations, in the same order, as NLTK.
        precision = float(matches_count) / n_hyp
        recall = float(matches_count) / n_ref
        fmean = (precision * recall) / (ALPHA * precision + (1 - ALPHA) * recall)
        frag_frac = float(chunks) / matches_count
        penalty = GAMMA * frag_frac**BETA
        score: float = (1 - penalty) * fmean
        return score

    def score_pairs(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        processes: int | None = None,
        progress: Progress = _no_progress,
    ) -> list[float]:
        """METEOR of every (candidate, reference) pair, in order, over ``processes`` workers.

        ``processes`` defaults to the usable cores. The numbers do not depend on it: each
        pair is computed by the same code wherever it runs.
        """
        processes = _usable_processes(processes, len(pairs))
        if processes <= 1:
            results: list[float] = []
            for start in range(0, len(pairs), CHUNK):
                chunk = pairs[start : start + CHUNK]
                results.extend(self(c, r) for c, r in chunk)
                progress(len(chunk))
            return results
        return _score_in_pool(self, pairs, processes, progress)


# --------------------------------------------------------------------------------------
# Worker processes
# --------------------------------------------------------------------------------------

# Below this many pairs, starting workers costs more than it saves.
MIN_PAIRS_FOR_POOL = 1000
CHUNK = 200


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _usable_processes(requested: int | None, n_pairs: int) -> int:
    if n_pairs < MIN_PAIRS_FOR_POOL:
        return 1
    # A daemon process (a Celery prefork child) may not start processes of its own.
    if multiprocessing.current_process().daemon:
        return 1
    return max(1, requested if requested is not None else usable_cores())


_worker: Meteor | None = None


def _init_worker(inherited: Meteor | None, nltk_path: list[str], cache_dir: str | None) -> None:
    """Runs once per worker. With ``fork`` the parent's engine arrives loaded."""
    global _worker
    nltk.data.path[:] = nltk_path  # read the same NLTK data as the parent
    if inherited is not None:
        _worker = inherited
    else:
        _worker = Meteor(SynonymTable.load_or_build(Path(cache_dir) if cache_dir else None))


def _score_chunk(chunk: list[tuple[str, str]]) -> list[float]:
    assert _worker is not None
    return [_worker(c, r) for c, r in chunk]


def _score_in_pool(
    meteor: Meteor, pairs: Sequence[tuple[str, str]], processes: int, progress: Progress
) -> list[float]:
    fork = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if fork else "spawn")
    # Consecutive pairs come from the same claim and share its strings, so chunks keep them
    # together for each worker's caches; several chunks per worker balance the load.
    size = max(CHUNK // 4, min(CHUNK * 4, len(pairs) // (processes * 8) or 1))
    chunks = [list(pairs[i : i + size]) for i in range(0, len(pairs), size)]
    cache_dir = str(_shared_cache_dir) if _shared_cache_dir is not None else None
    results: list[float] = []
    with context.Pool(
        processes,
        initializer=_init_worker,
        initargs=(meteor if fork else None, list(nltk.data.path), cache_dir),
    ) as pool:
        for chunk, scores in zip(chunks, pool.imap(_score_chunk, chunks), strict=True):
            results.extend(scores)
            progress(len(chunk))
    return results


_shared: Meteor | None = None
_shared_cache_dir: Path | None = None


def shared_meteor(cache_dir: Path | None = None, progress: Progress = _no_progress) -> Meteor:
    """This process's engine, kept between calls with its caches.

    The first call loads the synonym table, building it from WordNet if there is none yet
    (``progress`` then counts WordNet lemmas, about 147,000).
    """
    global _shared, _shared_cache_dir
    if _shared is None or (cache_dir is not None and cache_dir != _shared_cache_dir):
        _shared_cache_dir = cache_dir
        table = SynonymTable.load_or_build(cache_dir, progress) if fast_path_verified() else None
        _shared = Meteor(table)
    return _shared
