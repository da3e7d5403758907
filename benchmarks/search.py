"""How fast the local search index answers date-restricted queries on PostgreSQL.

Builds the `local` backend's index (search_proxy_document with its generated tsvector and
GIN index, exactly as the migrations create it) over synthetic documents, then times 1-4
word queries restricted to pages published before a random claim date:

- the app's own call (LocalBackend.search: ranked query + headlines), p50/p95 per query
  length and overall;
- the ranked query with the date filter inside it (what the app does) against the same
  query ranking every match first and filtering by date afterwards, side by side on the
  same queries, as a ratio.

With --bm25 it also saves the BM25 search index of the documents (search_proxy.search_index,
as index_documents does) and times the backend with LOCAL_SEARCH_RANKING=bm25 end to end
(ranking every match + reading the page's rows + snippets) on the same queries, counts how
many of its top 10 the capped database ranking misses, and measures the memory of a second
process that maps the same saved index (its private memory against the shared page cache).

Run from the project root (about 20 minutes for a million documents on two cores):

    .venv/bin/python benchmarks/search.py [--docs 1000000] [--queries 100] [--reuse] [--bm25]

Documents: about 300 words each (the --words option), drawn from a vocabulary of 50,000
words with a Zipf distribution (rank r has probability proportional to 1/r, like word
frequencies in English): the 100 commonest are English stop words, the rest made up.
Publication dates are spread evenly over ten years (2015-2024).
Queries: one-word queries draw their word log-uniformly from ranks 100-50,000 (past the stop
words; every decade of frequency is equally likely, from words in a quarter of all
documents to words in a few dozen); 2-4 word queries take
distinct words of one random document, so they match at least one page. Claim dates are
uniform over the same ten years.

It works in its own database (averitec_search_bench by default, created when missing) and
refuses any database whose name does not say "bench": it empties the document table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import queue
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import (
    database_name,
    ensure_database,
    refuse_unsafe_database,
    setup_django,
)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_search_bench"
TABLE = "search_proxy_document"

FIRST_DAY = date(2015, 1, 1)
DAYS = 3653  # ten years, 2015-01-01 .. 2024-12-31
STOP_WORD_RANKS = 100
COPY_BATCH = 2_000
COPY_STREAMS = 2
COPY_JOIN_TIMEOUT_S = 3600.0
WARM_UP_QUERIES = 40
TARGET_P95_MS = 150.0

# The same query as search_proxy.backends.local.POSTGRESQL_RANKED, but every match is ranked
# first (MATERIALIZED stops PostgreSQL from pushing the date filter into it) and the date
# filter comes after: what a search engine that cannot filter while ranking has to do.
RANKED_THEN_FILTERED = """
    WITH ranked AS MATERIALIZED (
        SELECT d.id, d.published, d.date_source, d.search_vector @@ f.query AS full_match,
            ts_rank(d.search_vector, q.query) AS score
        FROM search_proxy_document d,
            websearch_to_tsquery('english', %(any_query)s) AS q(query),
            websearch_to_tsquery('english', %(excluded)s) AS x(query),
            websearch_to_tsquery('english', %(query)s) AS f(query)
        WHERE d.search_vector @@ q.query AND NOT (d.search_vector @@ x.query)
    )
    SELECT id, score FROM ranked
    WHERE published < %(before)s OR published IS NULL
        OR date_source IN ('unknown', 'archive_timestamp')
    ORDER BY full_match DESC, score DESC, id
    LIMIT %(limit)s OFFSET %(offset)s
"""


# --- Set-up --------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="documents (default 1M)")
    parser.add_argument("--words", type=int, default=300, help="words a document (default 300)")
    parser.add_argument("--vocabulary", type=int, default=50_000, help="distinct words")
    parser.add_argument(
        "--queries", type=int, default=100, help="timed queries per query length (default 100)"
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep an index already built with the same --docs instead of rebuilding it",
    )
    parser.add_argument(
        "--max-ranked",
        type=int,
        default=5_000,
        help="SEARCH_LOCAL_MAX_RANKED for the app search (default 5000, the setting's default)",
    )
    parser.add_argument(
        "--bm25", action="store_true", help="also save and time the BM25 ranking (see above)"
    )
    parser.add_argument(
        "--index-dir",
        type=Path,
        default=PROJECT_ROOT / "var" / "bench-search-index",
        help="where --bm25 saves the search index",
    )
    parser.add_argument("--rss-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=2023)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args(argv)
    if args.docs < 1000 or args.words < 10 or args.vocabulary <= STOP_WORD_RANKS * 2:
        parser.error("use at least 1000 documents, 10 words and 200 vocabulary words")
    return args


# --- Synthetic corpus ----------------------------------------------------------------------

# The 100 most common words of running text are English stop words, as in real text:
# PostgreSQL's english configuration leaves them out of the index, as it would there.
STOP_WORDS = [
    "the", "of", "and", "to", "a", "in", "is", "that", "it", "was", "for", "on", "are", "as",
    "with", "his", "they", "at", "be", "this", "have", "from", "or", "by", "not", "but",
    "what", "all", "were", "we", "when", "your", "can", "there", "an", "which", "their", "if",
    "do", "will", "each", "about", "how", "up", "out", "them", "then", "she", "some", "so",
    "these", "into", "has", "her", "him", "more", "than", "its", "now", "my", "who", "did",
    "over", "down", "only", "very", "after", "just", "where", "most", "through", "because",
    "does", "here", "why", "such", "again", "off", "under", "own", "same", "few", "those",
    "both", "being", "while", "once", "until", "i", "me", "you", "he", "our", "been", "had",
    "any", "no", "other", "should", "between",
]  # fmt: skip

_ONSETS = [
    "b", "br", "c", "ch", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p",
    "pl", "qu", "r", "s", "sh", "sk", "st", "t", "th", "tr", "v", "w", "z",
]  # fmt: skip
_NUCLEI = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"]
_CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "rk", "x"]


def make_vocabulary(size: int, rng: np.random.Generator) -> np.ndarray:
    """STOP_WORDS, then made-up pronounceable words: `size` in all, rank 1 first.

    English stemming merges a few of them, as it merges real words.
    """
    words: list[str] = list(STOP_WORDS)
    seen: set[str] = set(STOP_WORDS)
    for _attempt in range(size * 100):
        if len(words) == size:
            break
        rank = len(words) + 1
        # Frequent words are short: one syllable up to rank 300, two up to rank 5,000, two
        # or three after that; about 5 characters a word in running text, as in English.
        syllables = 1 if rank < 300 else 2 if rank < 5000 else 2 + int(rng.integers(0, 2))
        word = "".join(
            _ONSETS[rng.integers(len(_ONSETS))]
            + _NUCLEI[rng.integers(len(_NUCLEI))]
            + _CODAS[rng.integers(len(_CODAS))]
            for _ in range(syllables)
        )
        if word not in seen:
            seen.add(word)
            words.append(word)
    if len(words) < size:
        raise RuntimeError(f"could not make {size} distinct words")
    return np.array(words, dtype=object)


def zipf_cdf(size: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1)
    return np.cumsum(weights / weights.sum())


def copy_lines(
    count: int, words: int, vocabulary: np.ndarray, rng: np.random.Generator
) -> Iterator[bytes]:
    """COPY text-format lines of synthetic documents, COPY_BATCH at a time.

    The made-up words hold no tab, newline or backslash, so no escaping is needed.
    """
    cdf = zipf_cdf(len(vocabulary))
    created = "2025-01-01 00:00:00+00"
    for start in range(0, count, COPY_BATCH):
        n = min(COPY_BATCH, count - start)
        picks = np.searchsorted(cdf, rng.random((n, words + 8)))
        np.minimum(picks, len(vocabulary) - 1, out=picks)
        days = rng.integers(0, DAYS, n)
        lines = []
        for i in range(n):
            doc = start + i
            tokens = vocabulary[picks[i]].tolist()
            url = f"https://site{doc % 5000}.example.com/article/{doc}"
            published = FIRST_DAY + timedelta(days=int(days[i]))
            lines.append(
                f"{url}\t{url}\t{' '.join(tokens[:8])}\t{' '.join(tokens[8:])}\t"
                f"{published.isoformat()}\tgiven\tbenchmark\t{created}\n"
            )
        yield "".join(lines).encode()


# --- Building the index --------------------------------------------------------------------


@dataclass
class BuildReport:
    docs: int
    copy_s: float
    index_s: dict[str, float]
    analyze_s: float
    table_mb: float
    index_mb: dict[str, float]

    @property
    def total_s(self) -> float:
        return self.copy_s + sum(self.index_s.values()) + self.analyze_s


def build(conn: psycopg.Connection, args: argparse.Namespace) -> BuildReport:
    """Empty the table, load the documents with COPY, then build its indexes.

    The indexes (the GIN full-text index among them) are dropped first and re-created from
    their own definitions after the load: one sort-based build is much faster than
    millions of index insertions, and the result is the same index.
    """
    conn.execute(sql.SQL("TRUNCATE {} RESTART IDENTITY").format(sql.Identifier(TABLE)))
    definitions = conn.execute(
        """
        SELECT i.indexname, i.indexdef, c.conname
        FROM pg_indexes i
        LEFT JOIN pg_constraint c ON c.conname = i.indexname
        WHERE i.tablename = %s AND i.indexname NOT LIKE '%%_pkey'
        """,
        (TABLE,),
    ).fetchall()
    for index_name, _definition, constraint in definitions:
        if constraint:
            conn.execute(
                sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                    sql.Identifier(TABLE), sql.Identifier(constraint)
                )
            )
        else:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index_name)))
    conn.commit()

    rng = np.random.default_rng(args.seed)
    vocabulary = make_vocabulary(args.vocabulary, rng)
    started = time.perf_counter()
    parallel_copy(args.database_url, copy_lines(args.docs, args.words, vocabulary, rng), args.docs)
    copy_s = time.perf_counter() - started

    index_s: dict[str, float] = {}
    # Session settings only: a bigger sort area for index builds, both cores for btrees.
    conn.execute("SET maintenance_work_mem = '1GB'")
    conn.execute("SET max_parallel_maintenance_workers = 1")
    for index_name, definition, constraint in definitions:
        started = time.perf_counter()
        print(f"  building {index_name} ...", flush=True)
        if constraint:
            column = definition[definition.index("(") + 1 : definition.rindex(")")]
            conn.execute(
                sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} UNIQUE ({})").format(
                    sql.Identifier(TABLE), sql.Identifier(constraint), sql.SQL(column)
                )
            )
        else:
            conn.execute(definition)
        conn.commit()
        index_s[index_name] = time.perf_counter() - started
    started = time.perf_counter()
    conn.autocommit = True  # VACUUM cannot run in a transaction
    conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(TABLE)))
    conn.autocommit = False
    analyze_s = time.perf_counter() - started
    return BuildReport(args.docs, copy_s, index_s, analyze_s, *sizes(conn))


COLUMNS = "url, normalized_url, title, text, published, date_source, corpus, created_at"


def parallel_copy(url: str, chunks: Iterator[bytes], total: int) -> None:
    """COPY the chunks through COPY_STREAMS connections at once.

    Computing the tsvector column is the slow part of loading, and each PostgreSQL backend
    uses one core: two streams keep both cores busy while this process makes the text.
    """
    work: queue.Queue[bytes | None] = queue.Queue(maxsize=2 * COPY_STREAMS)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with psycopg.connect(make_conninfo(url)) as stream, stream.cursor() as cursor:
                with cursor.copy(f"COPY {TABLE} ({COLUMNS}) FROM STDIN") as copy:
                    while (chunk := work.get()) is not None:
                        copy.write(chunk)
                stream.commit()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            while work.get() is not None:  # drain, so the producer never blocks forever
                pass

    threads = [threading.Thread(target=writer, daemon=True) for _ in range(COPY_STREAMS)]
    for thread in threads:
        thread.start()
    with tqdm(total=total, desc="COPY documents", unit=" docs", unit_scale=True) as bar:
        for chunk in chunks:
            work.put(chunk)
            bar.update(min(COPY_BATCH, total - bar.n))
    for _ in threads:
        work.put(None)
    for thread in threads:
        thread.join(timeout=COPY_JOIN_TIMEOUT_S)
    if errors:
        raise errors[0]


def sizes(conn: psycopg.Connection) -> tuple[float, dict[str, float]]:
    mb = 1024 * 1024
    table = conn.execute("SELECT pg_table_size(%s)", (TABLE,)).fetchone()[0] / mb
    indexes = {
        name: size / mb
        for name, size in conn.execute(
            "SELECT indexname, pg_relation_size(indexname::regclass) FROM pg_indexes "
            "WHERE tablename = %s",
            (TABLE,),
        ).fetchall()
    }
    return table, indexes


# --- Measuring -----------------------------------------------------------------------------


def prewarm(conn: psycopg.Connection) -> None:
    """Read the table, its TOAST and its GIN index into the operating system's cache first.

    A search server's index stays in memory in steady state (here 24 GB of RAM for a few GB
    of index); without this, the first queries would time the disk, or whatever other work
    on the machine evicted since the build.
    """
    started = time.perf_counter()
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    toast = conn.execute(
        "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = %s::regclass", (TABLE,)
    ).fetchone()[0]
    for relation in (TABLE, "search_proxy_document_search", toast):
        conn.execute("SELECT pg_prewarm(%s::regclass, 'prefetch')", (relation,))
    # Let the read-ahead finish: a full pass over the rows that ranking reads.
    conn.execute(f"SELECT sum(length(search_vector)) FROM {TABLE}")
    print(f"prewarmed table, TOAST and GIN index in {time.perf_counter() - started:.0f} s")


@dataclass(frozen=True)
class Query:
    text: str
    words: int
    before: date


def make_queries(
    conn: psycopg.Connection,
    per_length: int,
    vocabulary: np.ndarray,
    rng: np.random.Generator,
    docs: int,
) -> list[Query]:
    """One-word queries take a word log-uniformly from ranks 100-50,000. Longer queries take
    distinct words (rank 100 or later) of one random document, as words that belong together
    do, so each of them matches at least that document."""
    rank_of = {word: rank for rank, word in enumerate(vocabulary.tolist(), start=1)}
    low, high = math.log(STOP_WORD_RANKS + 1), math.log(len(vocabulary))
    queries = []
    for length in (1, 2, 3, 4):
        for _ in range(per_length):
            if length == 1:
                rank = min(int(math.exp(rng.uniform(low, high))), len(vocabulary))
                words = [vocabulary[rank - 1]]
            else:
                text = conn.execute(
                    f"SELECT text FROM {TABLE} WHERE id = %s", (int(rng.integers(1, docs + 1)),)
                ).fetchone()[0]
                choices = sorted({w for w in text.split() if rank_of[w] > STOP_WORD_RANKS})
                picked = rng.choice(len(choices), size=min(length, len(choices)), replace=False)
                words = [choices[i] for i in picked]
            before = FIRST_DAY + timedelta(days=int(rng.integers(1, DAYS)))
            queries.append(Query(" ".join(words), length, before))
    rng.shuffle(queries)
    return queries


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def time_app_search(queries: list[Query], max_ranked: int) -> list[tuple[Query, float, int]]:
    """LocalBackend.search, the call the search service makes: (query, ms, results)."""
    from django.conf import settings

    from search_proxy.backends.local import LocalBackend

    settings.SEARCH_LOCAL_MAX_RANKED = max_ranked
    backend = LocalBackend(ranking="database", max_ranked=max_ranked)
    timings = []
    label = f"app search, ranking {'all' if not max_ranked else f'<= {max_ranked}'}"
    for query in tqdm(queries, desc=label, unit=" queries"):
        started = time.perf_counter()
        results = backend.search(query.text, before=query.before)
        timings.append((query, (time.perf_counter() - started) * 1000, len(results)))
    return timings


def time_filter_placement(
    conn: psycopg.Connection, queries: list[Query]
) -> tuple[list[float], list[float], list[int]]:
    """The ranked query with the date filter inside vs after ranking, alternating which
    goes first so neither always finds the other's pages in the cache."""
    from search_proxy.backends.local import POSTGRESQL_RANKED, database_params

    inside, after, matches = [], [], []
    for n, query in enumerate(tqdm(queries, desc="inside vs after", unit=" queries")):
        params = {
            **(database_params(query.text) or {"query": "", "any_query": "", "excluded": ""}),
            "before": query.before,
            "limit": 10,
            "offset": 0,
            "max_ranked": None,  # both rank every candidate: only the filter's place differs
        }
        pair = [(POSTGRESQL_RANKED, inside), (RANKED_THEN_FILTERED, after)]
        for statement, sink in pair if n % 2 == 0 else reversed(pair):
            started = time.perf_counter()
            conn.execute(statement, params).fetchall()
            sink.append((time.perf_counter() - started) * 1000)
        matches.append(
            conn.execute(
                "SELECT count(*) FROM search_proxy_document d, "
                "websearch_to_tsquery('english', %(any_query)s) q(query) "
                "WHERE d.search_vector @@ q.query",
                params,
            ).fetchone()[0]
        )
    return inside, after, matches


# --- Report --------------------------------------------------------------------------------


def latency_table(title: str, app: list[tuple[Query, float, int]], matches: list[int]) -> None:
    print(title)
    print(f"  {'words':>5} {'n':>5} {'p50':>8} {'p95':>8} {'max':>8} {'median matches':>15}")
    by_words: dict[int, list[float]] = {}
    matches_by_words: dict[int, list[int]] = {}
    for (query, ms, _), found in zip(app, matches, strict=True):
        by_words.setdefault(query.words, []).append(ms)
        matches_by_words.setdefault(query.words, []).append(found)
    for words in sorted(by_words):
        values = by_words[words]
        print(
            f"  {words:>5} {len(values):>5} {percentile(values, 0.5):8.1f} "
            f"{percentile(values, 0.95):8.1f} {max(values):8.1f} "
            f"{statistics.median(matches_by_words[words]):>15,.0f}"
        )
    everything = [ms for _, ms, _ in app]
    p95 = percentile(everything, 0.95)
    print(
        f"  {'all':>5} {len(everything):>5} {percentile(everything, 0.5):8.1f} {p95:8.1f} "
        f"{max(everything):8.1f}   target p95 < {TARGET_P95_MS:.0f} ms: "
        f"{'met' if p95 < TARGET_P95_MS else 'NOT met'}"
    )


def report(
    args: argparse.Namespace,
    built: BuildReport | None,
    capped: list[tuple[Query, float, int]],
    uncapped: list[tuple[Query, float, int]],
    inside: list[float],
    after: list[float],
    matches: list[int],
) -> None:
    print()
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    if built is not None:
        print(f"index build for {built.docs:,} documents of ~{args.words} words:")
        print(f"  COPY (with the generated tsvector column): {built.copy_s:8.1f} s")
        for name, seconds in built.index_s.items():
            print(f"  {name:<52} {seconds:8.1f} s {built.index_mb.get(name, 0):8.0f} MB")
        print(f"  VACUUM ANALYZE: {built.analyze_s:8.1f} s")
        print(f"  total: {built.total_s:8.1f} s; table with TOAST {built.table_mb:,.0f} MB")
    print()
    latency_table(
        f"app search (LocalBackend.search: ranked query + headlines), ranking at most "
        f"{args.max_ranked:,} candidates (SEARCH_LOCAL_MAX_RANKED), milliseconds:",
        capped,
        matches,
    )
    print()
    latency_table(
        "the same, ranking every candidate (SEARCH_LOCAL_MAX_RANKED=0):", uncapped, matches
    )
    print()
    print("ranked query, every candidate, date filter inside vs after ranking, milliseconds:")
    print(f"  inside: p50 {percentile(inside, 0.5):8.1f}  p95 {percentile(inside, 0.95):8.1f}")
    print(f"  after:  p50 {percentile(after, 0.5):8.1f}  p95 {percentile(after, 0.95):8.1f}")
    ratios = [a / i for a, i in zip(after, inside, strict=True) if i > 0]
    print(
        f"  after / inside: median per query {statistics.median(ratios):.2f}x, "
        f"p95 {percentile(after, 0.95) / percentile(inside, 0.95):.2f}x, "
        f"total time {sum(after) / sum(inside):.2f}x"
    )


# --- BM25 ranking from the saved index ------------------------------------------------------


def memory_kb() -> dict[str, int]:
    """This process's resident memory (/proc/self/status): all, private, file-backed."""
    wanted = {"VmRSS", "RssAnon", "RssFile", "VmHWM"}
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in wanted:
            values[name] = int(rest.split()[0])
    return values


def rss_child(folder: Path, queries: int) -> None:
    """A second process: map the saved index, rank `queries` broad queries, print memory."""
    from pipeline.retrieval import fast_analyse
    from pipeline.saved_index import SavedIndex

    before = memory_kb()
    index = SavedIndex.load(folder, analyser=fast_analyse)
    loaded = memory_kb()
    terms = sorted(index.vocabulary)[: queries * 2]
    for n in range(queries):
        index.scores(terms[2 * n : 2 * n + 2])
    after = memory_kb()
    print(json.dumps({"start": before, "loaded": loaded, "after_queries": after}))


def time_bm25(
    queries: list[Query], args: argparse.Namespace
) -> tuple[float, list[tuple[Query, float, int]], list[int], dict]:
    """Save the index, then time LocalBackend.search ranking with it; compare top 10s."""
    from django.conf import settings

    from search_proxy.backends.local import LocalBackend
    from search_proxy.search_index import current_index, save_search_index

    settings.SEARCH_INDEX_DIR = args.index_dir
    started = time.perf_counter()
    with tqdm(total=args.docs, desc="save BM25 search index", unit=" docs") as bar:
        save_search_index(args.index_dir, progress=bar.update)
    save_s = time.perf_counter() - started
    index, reason = current_index()
    if index is None:
        raise SystemExit(f"the saved index is not used: {reason}")
    bm25 = LocalBackend(ranking="bm25")
    capped = LocalBackend(ranking="database", max_ranked=args.max_ranked)
    for query in queries[:WARM_UP_QUERIES]:
        bm25.search(query.text, before=query.before)
    timings, differ = [], []
    for query in tqdm(queries, desc="app search, BM25 ranking", unit=" queries"):
        started = time.perf_counter()
        results = bm25.search(query.text, before=query.before)
        timings.append((query, (time.perf_counter() - started) * 1000, len(results)))
        database = capped.search(query.text, before=query.before)
        differ.append(len({r.url for r in results} - {r.url for r in database}))
    child = subprocess.run(
        [sys.executable, __file__, "--rss-child", str(args.index_dir)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    memory = {"child": json.loads(child.stdout.strip().splitlines()[-1]), "main": memory_kb()}
    return save_s, timings, differ, memory


def bm25_report(
    args: argparse.Namespace,
    save_s: float,
    timings: list[tuple[Query, float, int]],
    differ: list[int],
    matches: list[int],
    memory: dict,
) -> None:
    print()
    size_mb = sum(f.stat().st_size for f in args.index_dir.rglob("*") if f.is_file()) / 2**20
    print(f"BM25 search index: saved in {save_s:.1f} s, {size_mb:,.0f} MB on disk")
    latency_table(
        "app search (LocalBackend.search, LOCAL_SEARCH_RANKING=bm25: every match ranked, "
        "rows + snippets of the page), milliseconds:",
        timings,
        matches,
    )
    print(
        f"  top 10 of the BM25 ranking missing from the database ranking capped at "
        f"{args.max_ranked:,}: mean {statistics.mean(differ):.2f}, "
        f"queries with any difference {sum(1 for d in differ if d)}/{len(differ)}"
    )
    child = memory["child"]
    mb = 1024
    print(
        "second process mapping the same index (MB): "
        f"RSS {child['start']['VmRSS'] / mb:.0f} at start, "
        f"{child['loaded']['VmRSS'] / mb:.0f} loaded, "
        f"{child['after_queries']['VmRSS'] / mb:.0f} after 50 queries, of which private "
        f"{child['after_queries']['RssAnon'] / mb:.0f} and shared page cache "
        f"{child['after_queries']['RssFile'] / mb:.0f}"
    )
    main = memory["main"]
    print(
        f"this process (Django, PostgreSQL client, the index mapped): RSS "
        f"{main['VmRSS'] / mb:.0f} MB, private {main['RssAnon'] / mb:.0f}, "
        f"shared {main['RssFile'] / mb:.0f}, peak {main['VmHWM'] / mb:.0f} (the save)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.rss_child:
        rss_child(args.rss_child, 50)
        return
    name = database_name(args.database_url)
    refuse_unsafe_database(name)
    ensure_database(args.database_url, name)
    setup_django(args.database_url)
    with psycopg.connect(make_conninfo(args.database_url)) as conn:
        refuse_unsafe_database(conn.execute("SELECT current_database()").fetchone()[0])
        existing = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(TABLE)))
        built = None
        if not (args.reuse and existing.fetchone()[0] == args.docs):
            built = build(conn, args)
        conn.commit()
        conn.autocommit = True
        prewarm(conn)
        rng = np.random.default_rng(args.seed + 1)
        vocabulary = make_vocabulary(args.vocabulary, np.random.default_rng(args.seed))
        warm_up = make_queries(conn, WARM_UP_QUERIES // 4, vocabulary, rng, args.docs)
        queries = make_queries(conn, args.queries, vocabulary, rng, args.docs)
        time_app_search(warm_up, args.max_ranked)
        capped = time_app_search(queries, args.max_ranked)
        uncapped = time_app_search(queries, 0)
        conn.prepare_threshold = None  # plan every query with its own values, as Django does
        # The app sets this work_mem for its search transaction; the raw queries get it too.
        from search_proxy.backends.local import POSTGRESQL_WORK_MEM

        conn.execute("SELECT set_config('work_mem', %s, false)", (POSTGRESQL_WORK_MEM,))
        inside, after, matches = time_filter_placement(conn, queries)
        bm25 = time_bm25(queries, args) if args.bm25 else None
    report(args, built, capped, uncapped, inside, after, matches)
    if bm25 is not None:
        bm25_report(args, *bm25[:3], matches, bm25[3])


if __name__ == "__main__":
    main()
