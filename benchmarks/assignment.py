"""How fast "Start next" hands out P2 work when many claims are waiting.

Measures `annotation.assignment.next_task(annotator, Phase.QUESTIONS)` against PostgreSQL at
several pool sizes, one claimer at a time and with many claimers at once, and checks that the
concurrent runs never hand one task out twice. Run from the project root:

    .venv/bin/python benchmarks/assignment.py [--claims 10000 100000] [--requests 500]

It works in its own database (averitec_bench by default, created when missing) and empties
its tables before each pool size, so it refuses any database whose name does not say "bench".
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from psycopg import sql
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import (
    database_name,
    ensure_database,
    refuse_unsafe_database,
    setup_django,
)

if TYPE_CHECKING:
    from annotation.models import User

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_bench"

# Each article yields two claims, so an annotator who takes one claim must be passed over
# for the other: the same-article rule is exercised on every second request.
CLAIMS_PER_ARTICLE = 2
# Every benchmark annotator already did P1 on this many articles. Half of them lie in the
# oldest part of the pool, the part the benchmark hands out, so the claim query really has
# to step over excluded rows instead of never meeting them.
HISTORY_ARTICLES = 20
HEAD_ARTICLES = 1_000

SINGLE_ANNOTATORS = 5
WARM_UP_REQUESTS = 20
BARRIER_TIMEOUT_S = 60.0
WAIT_SAMPLE_INTERVAL_S = 0.005
THREAD_JOIN_TIMEOUT_S = 600.0

TARGET_SINGLE_P95_MS = 20.0
TARGET_CONCURRENT_P95_MS = 100.0
# Timing on a shared two-core machine is noisy; a p95 ratio inside this band counts as flat.
FLAT_BAND = (1 / 1.5, 1.5)


# --- Set-up: database and Django ---------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--claims",
        type=int,
        nargs="+",
        default=[10_000, 100_000],
        help="pool sizes: claims waiting in P2 (default: 10000 100000)",
    )
    parser.add_argument(
        "--requests",
        type=int,
        default=500,
        help="timed requests of the single-claimer scenario (default: 500)",
    )
    parser.add_argument("--threads", type=int, default=20, help="concurrent claimers (default: 20)")
    parser.add_argument(
        "--rounds", type=int, default=50, help="timed requests per concurrent claimer (default: 50)"
    )
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args(argv)
    if min(args.claims) < 2 * (args.requests + args.threads * args.rounds + WARM_UP_REQUESTS):
        parser.error("each pool size must hold at least twice the claims the scenarios take")
    return args


# --- Loading a pool ----------------------------------------------------------------------
# Django models are imported inside functions: they only exist after setup_django().


def _copy_rows(table: str, rows: Iterator[dict], total: int) -> None:
    """Stream rows into a table with COPY, several times faster than bulk_create.

    Each row is a dict of the table's NOT NULL columns; the nullable rest stay NULL.
    """
    from django.db import connection

    progress = iter(tqdm(rows, total=total, desc=f"  {table}", unit=" rows", leave=False))
    first = next(progress)
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, first))
    )
    with connection.cursor() as cursor, cursor.copy(statement) as copy:
        copy.write_row(tuple(first.values()))
        for row in progress:
            copy.write_row(tuple(row.values()))


def _reset_sequence(table: str, last_id: int) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [table, last_id])


def empty_tables() -> None:
    from django.db import connection

    from annotation.models import Article, Claim, Task, User

    with connection.cursor() as cursor:
        # A last check on the live connection before anything is deleted.
        cursor.execute("SELECT current_database()")
        refuse_unsafe_database(cursor.fetchone()[0])
        models = (Task, Claim, Article, User)
        tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models)
        cursor.execute(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")


def load_pool(n_claims: int) -> None:
    """N claims waiting in P2, each with its pooled task, hand-out order = claim order."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Article, Claim, Task
    from annotation.vocabulary import Phase

    n_articles = -(-n_claims // CLAIMS_PER_ARTICLE)
    # One second apart, oldest first: created_at alone fixes the hand-out order.
    start = timezone.now() - timedelta(seconds=n_claims + 3600)

    def articles() -> Iterator[dict]:
        for pk in range(1, n_articles + 1):
            url = f"https://factcheck.example.org/bench/{pk}"
            created = start + timedelta(seconds=(pk - 1) * CLAIMS_PER_ARTICLE)
            yield {
                "id": pk,
                "url": url,
                "normalized_url": url,
                "title": f"Article {pk}",
                "publisher": "Example",
                "claimreview_claim": "",
                "claimreview_claimant": "",
                "claimreview_rating": "",
                "state": Article.State.NORMALISED.value,
                "skip_reason": "",
                "skip_note": "",
                "created_at": created,
                "updated_at": created,
            }

    def claims() -> Iterator[dict]:
        for index in range(n_claims):
            created = start + timedelta(seconds=index)
            yield {
                "id": index + 1,
                "article_id": index // CLAIMS_PER_ARTICLE + 1,
                "position": index % CLAIMS_PER_ARTICLE,
                "text": f"Claim {index + 1}",
                "claim_date": date(2024, 1, 1),
                "media_url": "",
                "image_transcription": "",
                "claim_types": "[]",
                "fact_checking_strategies": "[]",
                "state": Claim.State.QUESTIONS.value,
                "exclusion_reason": "",
                "origin": Claim.Origin.ANNOTATED.value,
                "is_agreement_sample": False,
                "required_reannotation": False,
                "created_at": created,
                "updated_at": created,
            }

    def tasks() -> Iterator[dict]:
        for index in range(n_claims):
            yield {
                "id": index + 1,
                "phase": Phase.QUESTIONS.value,
                "article_id": index // CLAIMS_PER_ARTICLE + 1,
                "claim_id": index + 1,
                "status": Task.Status.POOLED.value,
                "is_agreement_sample": False,
                "priority": 0,
                "draft": "{}",
                "draft_version": 0,
                "created_at": start + timedelta(seconds=index),
            }

    started = time.perf_counter()
    empty_tables()
    # One transaction: the deferred foreign-key checks run once, at commit.
    with transaction.atomic():
        _copy_rows(Article._meta.db_table, articles(), n_articles)
        _copy_rows(Claim._meta.db_table, claims(), n_claims)
        _copy_rows(Task._meta.db_table, tasks(), n_claims)
        for model, last_id in ((Article, n_articles), (Claim, n_claims), (Task, n_claims)):
            _reset_sequence(model._meta.db_table, last_id)
    elapsed = time.perf_counter() - started
    print(f"  loaded {n_claims:,} claims on {n_articles:,} articles in {elapsed:.1f} s")


def create_annotators(prefix: str, count: int, n_articles: int, seed: int) -> list[User]:
    """Qualified annotators who each normalised HISTORY_ARTICLES articles in P1."""
    import random

    from django.utils import timezone

    from annotation.models import Task, User
    from annotation.vocabulary import Phase

    annotators = User.objects.bulk_create(
        User(username=f"{prefix}-{n}", password="!", qualified_phases=[1, 2, 3, 4, 5])
        for n in range(1, count + 1)
    )
    rng = random.Random(seed)
    head = range(1, min(HEAD_ARTICLES, n_articles) + 1)
    done = timezone.now() - timedelta(days=1)
    history = []
    for annotator in annotators:
        touched = set(rng.sample(head, HISTORY_ARTICLES // 2))
        while len(touched) < HISTORY_ARTICLES:
            touched.add(rng.randint(1, n_articles))
        history += [
            Task(
                phase=Phase.NORMALISATION,
                article_id=article_id,
                annotator=annotator,
                status=Task.Status.SUBMITTED,
                created_at=done,
                assigned_at=done,
                submitted_at=done,
            )
            for article_id in sorted(touched)
        ]
    Task.objects.bulk_create(history, batch_size=5_000)
    return annotators


def vacuum_analyze() -> None:
    """Fresh statistics and visibility map, as autovacuum would leave a settled database."""
    from django.db import connection

    from annotation.models import Article, Claim, Task, User

    with connection.cursor() as cursor:
        for model in (Task, Claim, Article, User):
            cursor.execute(f"VACUUM (ANALYZE) {connection.ops.quote_name(model._meta.db_table)}")


# --- Measuring ---------------------------------------------------------------------------


@dataclass
class Run:
    """The timed requests of one scenario at one pool size."""

    scenario: str
    pool: int
    latencies_ms: list[float]
    wall_s: float
    # Task ids each annotator received, to check nothing was handed out twice.
    claimed: dict[int, list[int]] = field(default_factory=dict)
    # CPU seconds of this Python process (all threads) and the machine's busy share during
    # the run: they tell a slow database from a saturated machine.
    client_cpu_s: float = 0.0
    machine_busy: float | None = None

    def percentile(self, p: int) -> float:
        return statistics.quantiles(self.latencies_ms, n=100, method="inclusive")[p - 1]

    @property
    def throughput(self) -> float:
        return len(self.latencies_ms) / self.wall_s

    @property
    def client_cpu_ms_per_claim(self) -> float:
        return self.client_cpu_s * 1000 / len(self.latencies_ms)


class Stopwatch:
    """Wall time, this process's CPU time and the machine's busy share over a block."""

    def __enter__(self) -> Stopwatch:
        self._cpu, self._machine = time.process_time(), _machine_ticks()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.wall_s = time.perf_counter() - self._wall
        self.cpu_s = time.process_time() - self._cpu
        end = _machine_ticks()
        self.machine_busy = None
        if self._machine and end and end[1] > self._machine[1]:
            self.machine_busy = (end[0] - self._machine[0]) / (end[1] - self._machine[1])


def _machine_ticks() -> tuple[int, int] | None:
    """(busy, total) CPU ticks of the whole machine since boot; None off Linux."""
    try:
        with open("/proc/stat") as stat:
            ticks = [int(n) for n in stat.readline().split()[1:]]
    except OSError:
        return None
    idle = ticks[3] + ticks[4]  # idle and iowait
    return sum(ticks) - idle, sum(ticks)


def background_load(seconds: float = 3.0) -> float | None:
    """The machine's busy share while this benchmark does nothing: other people's work."""
    with Stopwatch() as watch:
        time.sleep(seconds)
    return watch.machine_busy


def claim_and_submit(annotator: User) -> tuple[float, int]:
    """One timed "Start next", then a cheap hand-in so the annotator can ask again."""
    from django.utils import timezone

    from annotation.assignment import next_task
    from annotation.models import Task
    from annotation.vocabulary import Phase

    started = time.perf_counter()
    task = next_task(annotator, Phase.QUESTIONS)
    elapsed_ms = (time.perf_counter() - started) * 1000
    # Straight to submitted: the benchmark measures claiming, not the P2 workflow.
    Task.objects.filter(pk=task.pk).update(
        status=Task.Status.SUBMITTED, submitted_at=timezone.now(), lease_expires_at=None
    )
    return elapsed_ms, task.pk


def run_single(pool: int, annotators: Sequence[User], requests: int) -> Run:
    """Requests one after another, taking turns among the annotators."""
    latencies: list[float] = []
    claimed: dict[int, list[int]] = {a.pk: [] for a in annotators}
    with Stopwatch() as watch:
        for n in range(requests):
            annotator = annotators[n % len(annotators)]
            elapsed_ms, task_id = claim_and_submit(annotator)
            latencies.append(elapsed_ms)
            claimed[annotator.pk].append(task_id)
    return Run("single", pool, latencies, watch.wall_s, claimed, watch.cpu_s, watch.machine_busy)


def run_concurrent(pool: int, annotators: Sequence[User], rounds: int) -> Run:
    """One thread and one connection per annotator, all released at the same moment."""
    from django.db import connection

    barrier = threading.Barrier(len(annotators) + 1)
    latencies: dict[int, list[float]] = {a.pk: [] for a in annotators}
    claimed: dict[int, list[int]] = {a.pk: [] for a in annotators}
    errors: list[BaseException] = []

    def claimer(annotator: User) -> None:
        try:
            # Connect before the barrier so the first timed request does not pay for it.
            connection.ensure_connection()
            barrier.wait(timeout=BARRIER_TIMEOUT_S)
            for _ in range(rounds):
                elapsed_ms, task_id = claim_and_submit(annotator)
                latencies[annotator.pk].append(elapsed_ms)
                claimed[annotator.pk].append(task_id)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=claimer, args=(a,), daemon=True) for a in annotators]
    for thread in threads:
        thread.start()
    barrier.wait(timeout=BARRIER_TIMEOUT_S)
    with Stopwatch() as watch:
        deadline = time.perf_counter() + THREAD_JOIN_TIMEOUT_S
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.perf_counter()))
    if any(thread.is_alive() for thread in threads):
        raise RuntimeError(f"claimers still running after {THREAD_JOIN_TIMEOUT_S:.0f} s")
    if errors:
        raise RuntimeError(f"{len(errors)} claimer(s) failed; first: {errors[0]!r}") from errors[0]
    every = [ms for per_annotator in latencies.values() for ms in per_annotator]
    scenario = f"{len(annotators)} concurrent"
    return Run(scenario, pool, every, watch.wall_s, claimed, watch.cpu_s, watch.machine_busy)


class WaitSampler:
    """What the benchmark's database sessions are doing, sampled from pg_stat_activity.

    Runs on its own connection in a background thread. Many samples of 'ClientRead' mean
    the database is waiting for Python; 'Lock' or 'LWLock' would mean it waits on itself.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.samples: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> WaitSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _sample(self) -> None:
        query = (
            "SELECT state, coalesce(wait_event_type || ':' || wait_event, 'on CPU') "
            "FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self._stop.wait(WAIT_SAMPLE_INTERVAL_S):
                for state, wait in conn.execute(query):
                    self.samples[f"{state} / {wait}"] += 1

    def shares(self, top: int = 6) -> list[tuple[float, str]]:
        total = sum(self.samples.values()) or 1
        return [(count / total, what) for what, count in self.samples.most_common(top)]


def check_handouts(run: Run) -> list[str]:
    """What went wrong in the hand-outs of a run; an empty list when nothing did."""
    from django.db.models import Count

    from annotation.models import Task

    problems = []
    handed = [pk for ids in run.claimed.values() for pk in ids]
    if len(handed) != len(set(handed)):
        problems.append(f"{len(handed) - len(set(handed))} task(s) handed out twice")
    holders = dict(Task.objects.filter(pk__in=handed).values_list("pk", "annotator_id"))
    moved = sum(holders.get(pk) != a for a, ids in run.claimed.items() for pk in ids)
    if moved:
        problems.append(f"{moved} task(s) now held by someone other than who received them")
    same_article = (
        Task.objects.filter(annotator__isnull=False)
        .values("annotator", "article")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    if same_article:
        problems.append(f"{same_article} annotator/article pair(s) with more than one task")
    return problems


def explain_claim_query(annotator: User) -> tuple[str, str]:
    """The SQL of the claim step of next_task and its EXPLAIN ANALYZE (rolled back)."""
    from django.db import transaction

    from annotation.assignment import claimable_pool
    from annotation.vocabulary import Phase

    # The same queryset next_task runs; first() is [:1] on an ordered queryset.
    query = claimable_pool(annotator, Phase.QUESTIONS).select_for_update(
        skip_locked=True, of=("self",)
    )[:1]
    with transaction.atomic():
        statement = str(query.query)
        plan = query.explain(analyze=True, buffers=True)
        transaction.set_rollback(True)
    return statement, plan


def query_breakdown(annotator: User) -> tuple[float, list[tuple[float, str]]]:
    """One "Start next": its total time and each statement it sends, in ms.

    BEGIN and COMMIT do not pass through execute wrappers, so the statements add up to
    less than the total; the rest is commits and Python.
    """
    from django.db import connection

    timed: list[tuple[float, str]] = []

    # Django's own query log rounds to whole milliseconds; these statements take less.
    def timer(execute, statement, params, many, context):
        started = time.perf_counter()
        try:
            return execute(statement, params, many, context)
        finally:
            timed.append(((time.perf_counter() - started) * 1000, statement))

    with connection.execute_wrapper(timer):
        total_ms, _ = claim_and_submit(annotator)
    # The last statement is the benchmark's own hand-in, not part of next_task.
    return total_ms, timed[:-1]


# --- Reporting ---------------------------------------------------------------------------


def print_machine() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]
    load = ", ".join(f"{n:.2f}" for n in os.getloadavg())
    busy = background_load()
    print(
        f"machine: {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}, PostgreSQL {version}; load average {load}; "
        f"CPU busy with other work: {_percent(busy)}"
    )


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


def print_results(runs: Sequence[Run]) -> None:
    columns = (
        *("waiting claims", "scenario", "requests", "p50 ms", "p95 ms", "p99 ms", "max ms"),
        *("claims/s", "client CPU ms/claim", "machine CPU busy"),
    )
    print("\n| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for run in runs:
        cells = (
            f"{run.pool:,}",
            run.scenario,
            str(len(run.latencies_ms)),
            *(f"{run.percentile(p):.1f}" for p in (50, 95, 99)),
            f"{max(run.latencies_ms):.1f}",
            f"{run.throughput:.0f}",
            f"{run.client_cpu_ms_per_claim:.1f}",
            _percent(run.machine_busy),
        )
        print("| " + " | ".join(cells) + " |")


def print_verdict(runs: Sequence[Run]) -> None:
    smallest, largest = min(r.pool for r in runs), max(r.pool for r in runs)
    targets = {"single": TARGET_SINGLE_P95_MS}
    print()
    for scenario in dict.fromkeys(r.scenario for r in runs):
        by_pool = {r.pool: r for r in runs if r.scenario == scenario}
        target = targets.get(scenario, TARGET_CONCURRENT_P95_MS)
        worst = max(r.percentile(95) for r in by_pool.values())
        met = "met" if worst < target else "NOT met"
        line = f"{scenario}: worst p95 {worst:.1f} ms, target < {target:.0f} ms: {met}"
        if smallest != largest:
            ratio = by_pool[largest].percentile(95) / by_pool[smallest].percentile(95)
            flat = "flat" if FLAT_BAND[0] <= ratio <= FLAT_BAND[1] else "NOT flat"
            line += f"; p95({largest:,})/p95({smallest:,}) = {ratio:.2f} ({flat})"
        print(line)


# --- Main --------------------------------------------------------------------------------


def benchmark_pool(n_claims: int, args: argparse.Namespace, explain: bool) -> list[Run]:
    """Load a pool of n_claims, run both scenarios on it and check their hand-outs."""
    print(f"\n== {n_claims:,} claims waiting in P2")
    load_pool(n_claims)
    n_articles = -(-n_claims // CLAIMS_PER_ARTICLE)
    warm_up = create_annotators("bench-warm-up", 1, n_articles, seed=1)
    single = create_annotators("bench-single", SINGLE_ANNOTATORS, n_articles, seed=2)
    concurrent = create_annotators("bench-concurrent", args.threads, n_articles, seed=3)
    vacuum_analyze()

    # Untimed: fills caches and Django's per-connection state before anything is measured.
    for _ in range(WARM_UP_REQUESTS):
        claim_and_submit(warm_up[0])
    runs = [run_single(n_claims, single, args.requests)]
    with WaitSampler(args.database_url) as waits:
        runs.append(run_concurrent(n_claims, concurrent, args.rounds))
    for run in runs:
        problems = check_handouts(run)
        verdict = "; ".join(problems) or (
            "no task handed out twice, no annotator with two tasks on one article"
        )
        print(f"  {run.scenario}: {len(run.latencies_ms)} hand-outs checked: {verdict}")
    print("  database sessions during the concurrent run (state / wait), share of samples:")
    for share, what in waits.shares():
        print(f"    {share:6.1%}  {what}")

    if explain:
        statement, plan = explain_claim_query(single[0])
        # str(query) shows parameters unquoted (status = pooled); the plan has the real SQL.
        print(f"\nClaim query at {n_claims:,} waiting claims:\n{statement}\n\n{plan}")
        total_ms, statements = query_breakdown(single[0])
        print(f"\nOne 'Start next' took {total_ms:.2f} ms; its statements (round trip, ms):")
        for ms, text in statements:
            print(f"  {ms:6.2f}  {text[:100]}")
        print(f"  {sum(ms for ms, _ in statements):6.2f}  total, without BEGIN/COMMIT")
    return runs


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    name = database_name(args.database_url)
    refuse_unsafe_database(name)
    ensure_database(args.database_url, name)
    setup_django(args.database_url)
    print(f"started {datetime.now():%Y-%m-%d %H:%M}, database {name}")
    print_machine()

    sizes = sorted(set(args.claims))
    runs: list[Run] = []
    for n_claims in sizes:
        runs += benchmark_pool(n_claims, args, explain=n_claims == sizes[-1])
    print_machine()
    print_results(runs)
    print_verdict(runs)


if __name__ == "__main__":
    main()
