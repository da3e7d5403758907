"""How long the managers' dashboard takes to compute as the project grows.

The dashboard, its CSV downloads and /api/v1/agreement/ compute every figure on request
(review/agreement.py, review/progress.py). This builds N double-annotated claims (two P2
rounds with two QA pairs each, two P3 checks, five annotators per claim out of 20) and
times each part of the report at each size, side by side in one run. Run from the project
root:

    .venv/bin/python benchmarks/reporting.py [--claims 1000 5000] [--repeat 3]

It works in its own database (averitec_bench_wt14 by default, created when missing) and
empties its tables before each size, so it refuses any database whose name lacks "bench".
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import (
    database_name,
    ensure_database,
    refuse_unsafe_database,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_bench_wt14"
ANNOTATORS = 20
LABELS = ["Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"]


def build(n_claims: int, rng: random.Random) -> None:
    """N accepted claims, each with two independent P2 rounds and two blind P3 checks."""
    from django.db import connection
    from django.utils import timezone

    from annotation.models import (
        Answer,
        Article,
        Claim,
        EvidenceRound,
        Question,
        Task,
        User,
    )
    from review.models import QualityCheck

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE review_problemflag, review_qualitycheck, annotation_answer, "
            "annotation_question, annotation_evidenceround, annotation_transition, "
            "annotation_task, annotation_claim, annotation_article, annotation_user CASCADE"
        )
    users = User.objects.bulk_create(
        User(username=f"bench{i}", qualified_phases=[1, 2, 3, 4, 5]) for i in range(ANNOTATORS)
    )
    now = timezone.now()
    articles = Article.objects.bulk_create(
        Article(
            url=f"https://factcheck.example.org/{i}",
            normalized_url=f"factcheck.example.org/{i}",
            state=Article.State.NORMALISED,
        )
        for i in range(n_claims)
    )
    claims = Claim.objects.bulk_create(
        Claim(
            article=article,
            text=f"Claim number {i} about council spending.",
            fact_checker_label=rng.choice(LABELS),
            claim_date=now.date(),
            state=Claim.State.ACCEPTED,
            label=rng.choice(LABELS),
            is_agreement_sample=True,
            accepted_at=now,
        )
        for i, article in enumerate(articles)
    )

    def task(i: int, k: int, phase: int, sample: bool = False) -> Task:
        opened = now - timezone.timedelta(minutes=rng.randint(1, 90), days=rng.randint(0, 20))
        return Task(
            phase=phase,
            article_id=claims[i].article_id,
            claim=claims[i] if phase > 1 else None,
            annotator=users[(i + k) % ANNOTATORS],
            status=Task.Status.SUBMITTED,
            is_agreement_sample=sample,
            opened_at=opened,
            submitted_at=opened + timezone.timedelta(seconds=rng.randint(10, 1800)),
        )

    tasks = Task.objects.bulk_create(
        t
        for i in range(n_claims)
        for t in (
            task(i, 0, 1),
            task(i, 1, 2),
            task(i, 2, 2, True),
            task(i, 3, 3),
            task(i, 4, 3, True),
        )
    )
    rounds = EvidenceRound.objects.bulk_create(
        EvidenceRound(
            claim=claims[i],
            task=tasks[5 * i + 1 + sample],
            phase=2,
            verdict=rng.choice(LABELS),
            is_agreement_sample=bool(sample),
            submitted_at=now,
        )
        for i in range(n_claims)
        for sample in (0, 1)
    )
    questions = Question.objects.bulk_create(
        Question(
            evidence_round=r,
            position=q,
            text=rng.choice(
                [
                    "How much did the council spend on parks?",
                    "What did the budget report say about parks in 2019?",
                    "Who announced the spending?",
                    "When was the park money approved?",
                ]
            ),
        )
        for r in rounds
        for q in range(2)
    )
    Answer.objects.bulk_create(
        Answer(
            question=q,
            position=0,
            text=rng.choice(["2.1 million pounds.", "The mayor did.", "In March 2019."]),
            answer_type="Abstractive",
        )
        for q in questions
    )
    QualityCheck.objects.bulk_create(
        QualityCheck(
            claim=claims[i],
            task=tasks[5 * i + 3 + sample],
            phase=3,
            evidence_round=rounds[2 * i + sample],
            verdict=rng.choice(LABELS),
            justification="Checked.",
            is_agreement_sample=bool(sample),
            submitted_at=now,
        )
        for i in range(n_claims)
        for sample in (0, 1)
    )


def timed(function: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args()
    name = database_name(args.database_url)
    refuse_unsafe_database(name)
    ensure_database(args.database_url, name)
    setup_django(args.database_url)
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    from review.agreement import ReportFilter, agreement_report, evidence_agreement
    from review.dashboard import tables
    from review.progress import progress_report

    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, median of {args.repeat}"
    )
    print(
        "| claims | verdict agreement (4 comparisons, 1000 bootstrap resamples each) "
        "| evidence METEOR (own request) | progress + stuck work | dashboard page "
        "| page, s per 1000 claims |"
    )
    print("|---|---|---|---|---|---|")
    report_filter = ReportFilter()  # everything: the dashboard's unfiltered view
    for n in args.claims:
        build(n, random.Random(n))
        verdicts = timed(lambda: agreement_report(report_filter, evidence=False), args.repeat)
        evidence = timed(lambda: evidence_agreement(report_filter.claims()), 1)
        progress = timed(lambda: progress_report(report_filter), args.repeat)
        # The page itself; its evidence section arrives in a second request (htmx).
        whole = timed(
            lambda: tables(
                agreement_report(report_filter, evidence=False), progress_report(report_filter)
            ),
            args.repeat,
        )
        print(
            f"| {n:,} | {verdicts:.2f} s | {evidence:.2f} s | {progress:.2f} s | {whole:.2f} s "
            f"| {whole / n * 1000:.2f} |"
        )


if __name__ == "__main__":
    main()
