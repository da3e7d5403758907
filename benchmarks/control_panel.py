"""The annotator's control panel: where one annotator stands in each of the five phases,
read per phase (the first implementation) and for all phases at once
(`assignment.phase_standings`), side by side in one run. Run from the project root:

    .venv/bin/python benchmarks/control_panel.py [--tasks 100 1000] [--repeat 300]

It works in its own database (averitec_panel_bench by default, created when missing) and
empties the task tables before each size, so it refuses any database whose name lacks "bench".
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import database_name, ensure_database, refuse_unsafe_database, setup_django

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_panel_bench"


def build(n_tasks: int):
    """One annotator with a quota in every phase, n_tasks handed in spread over the phases
    and one task in progress in P2, among 20 other annotators' work of the same size."""
    from datetime import date

    from django.db import connection
    from django.utils import timezone

    from annotation.models import Article, Claim, PhaseQuota, Task, User
    from annotation.phases import PHASES

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE annotation_task, annotation_claim, annotation_article, "
            "annotation_phasequota, annotation_user CASCADE"
        )
    people = User.objects.bulk_create(
        User(username=f"a{i}", qualified_phases=[1, 2, 3, 4, 5]) for i in range(21)
    )
    articles = Article.objects.bulk_create(
        Article(url=f"https://f.example/{i}", normalized_url=f"https://f.example/{i}")
        for i in range(n_tasks + 1)
    )
    claims = Claim.objects.bulk_create(
        Claim(
            article=article,
            position=0,
            text="A claim.",
            fact_checker_label="Refuted",
            claim_date=date(2020, 10, 30),
        )
        for article in articles
    )
    now = timezone.now()
    Task.objects.bulk_create(
        Task(
            phase=1 + i % 5,
            article=article,
            claim=None if i % 5 == 0 else claims[i],
            annotator=person,
            status=Task.Status.SUBMITTED,
            submitted_at=now - timezone.timedelta(minutes=i),
        )
        for person in people
        for i, article in enumerate(articles[:-1])
    )
    me = people[0]
    Task.objects.create(
        phase=2,
        article=articles[-1],
        claim=claims[-1],
        annotator=me,
        status=Task.Status.IN_PROGRESS,
    )
    PhaseQuota.objects.bulk_create(
        PhaseQuota(annotator=me, phase=p, limit=10 * n_tasks) for p in PHASES
    )
    return me


def per_phase(user) -> list[dict]:
    """The first implementation of the panel's rows (three to four queries per phase)."""
    from annotation import assignment
    from annotation.models import Task
    from annotation.phases import PHASES

    return [
        {
            "current_pk": getattr(assignment.current_task(user, phase), "pk", None),
            "quota_left": assignment.quota_left(user, phase),
            "last_submitted": Task.objects.filter(
                annotator=user, phase=phase, status=Task.Status.SUBMITTED
            )
            .order_by("-submitted_at")
            .first(),
        }
        for phase in PHASES
    ]


def all_at_once(user) -> list[dict]:
    from annotation import assignment

    return list(assignment.phase_standings(user).values())


def measure(fn, user, repeat: int) -> tuple[float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        fn(user)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn(user)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args()
    refuse_unsafe_database(database_name(args.database_url))
    ensure_database(args.database_url, database_name(args.database_url))
    setup_django(args.database_url)
    print(
        f"{'tasks':>6} {'per phase ms':>13} {'queries':>8} {'at once ms':>11} {'queries':>8}",
        f"{'ratio':>6}",
    )
    for n in args.tasks:
        user = build(n)
        old = [r["quota_left"] for r in per_phase(user)]
        new = [r["quota_left"] for r in all_at_once(user)]
        assert old == new, (old, new)
        # Alternate the two so that the machine's other load hits both alike.
        old_ms, new_ms, old_q, new_q = [], [], 0, 0
        for _ in range(3):
            ms, old_q = measure(per_phase, user, args.repeat // 3)
            old_ms.append(ms)
            ms, new_q = measure(all_at_once, user, args.repeat // 3)
            new_ms.append(ms)
        o, w = statistics.median(old_ms), statistics.median(new_ms)
        print(f"{n:6} {o:13.2f} {old_q:8} {w:11.2f} {new_q:8} {o / w:6.1f}")


if __name__ == "__main__":
    main()
