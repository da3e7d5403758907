"""The managers' reporting, side by side: figures computed on request against the stored ones.

Builds N double-annotated claims (two P2 rounds with two QA pairs each, two P3 checks, five
annotators per claim out of 200) with their work spread over 70 days, plus waiting tasks
(P1 articles and P5 claims, some of them stuck: the accounts qualified for P5 are few and
some are at quota), with bulk_create (a progress bar per table), then ANALYZE; rebuilds the
stored ratings and scores every METEOR pair. Then times, at each size, in one run, median
and p95:

- the functions: verdict agreement from the raw rows (as before issue 27) and as stored;
  progress by the former per-row code (the oracle of tests/review/test_progress_aggregates.py)
  and as stored;
- the real views through Django's test client (dashboard page, evidence panel, CSVs,
  /api/v1/agreement/ and /api/v1/progress/, a date filter), once with the former computation
  patched in and once as shipped; the page just after a hand-in (stale figures shown, one
  job queued); a filter's first visit; the Celery job that computes a stale report;
- the cost a hand-in pays to keep the figures current (review/stored.py's post_save hooks of
  a stored P2 round inside its transaction), and its queries.

Run from the project root:

    .venv/bin/python benchmarks/reporting.py [--claims 1000 10000 50000] [--repeat 20]
        [--old-repeat 3] [--old-up-to 10000]

It works in its own database (averitec_bench_wt27 by default, created when missing) and
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
from tqdm import tqdm

from benchmarks.bench_db import (
    database_name,
    ensure_database,
    refuse_unsafe_database,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_bench_wt27"
ANNOTATORS = 200
DAYS = 70
# Only these accounts may take P5, and all are at their quota (0): waiting P5 work is stuck.
P5_QUALIFIED = 3
LABELS = ["Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"]


def build(n_claims: int, rng: random.Random) -> None:
    """N accepted claims, each with two independent P2 rounds and two blind P3 checks, over
    DAYS days; a waiting P5 task on every tenth claim and a waiting P1 task per 20 claims."""
    from django.db import connection
    from django.utils import timezone

    from annotation.models import (
        Answer,
        Article,
        Claim,
        EvidenceRound,
        PhaseQuota,
        Question,
        Task,
        User,
    )
    from review.models import QualityCheck

    bar = tqdm(total=9, desc=f"building {n_claims:,} claims", unit="table", leave=False)
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE review_agreementrating, review_evidencescore, review_storedreport, "
            "annotation_phasequota, "
            "review_problemflag, review_qualitycheck, annotation_answer, "
            "annotation_question, annotation_evidenceround, annotation_transition, "
            "annotation_task, annotation_claim, annotation_article, annotation_user CASCADE"
        )
    users = User.objects.bulk_create(
        User(username=f"bench{i}", qualified_phases=[1, 2, 3, 4, 5][: 5 if i < P5_QUALIFIED else 4])
        for i in range(ANNOTATORS)
    )
    bar.update()
    PhaseQuota.objects.bulk_create(
        PhaseQuota(annotator=user, phase=5, limit=0) for user in users[:P5_QUALIFIED]
    )
    bar.update()
    now = timezone.now()
    day = timezone.timedelta(days=1)
    # When each claim's work began: anywhere in the DAYS days, leaving a week for its phases.
    starts = [now - DAYS * day + rng.random() * (DAYS - 8) * day for _ in range(n_claims)]
    articles = Article.objects.bulk_create(
        Article(
            url=f"https://factcheck.example.org/{i}",
            normalized_url=f"factcheck.example.org/{i}",
            state=Article.State.NORMALISED,
        )
        for i in range(n_claims)
    )
    bar.update()
    claims = Claim.objects.bulk_create(
        Claim(
            article=article,
            text=f"Claim number {i} about council spending.",
            fact_checker_label=rng.choice(LABELS),
            claim_date=now.date(),
            state=Claim.State.ACCEPTED,
            created_at=starts[i],
            label=rng.choice(LABELS),
            is_agreement_sample=True,
            accepted_at=now,
        )
        for i, article in enumerate(articles)
    )

    bar.update()

    def task(i: int, k: int, phase: int, sample: bool = False) -> Task:
        created = starts[i] + phase * timezone.timedelta(hours=rng.randint(1, 30))
        opened = created + timezone.timedelta(minutes=rng.randint(1, 600))
        return Task(
            phase=phase,
            article_id=claims[i].article_id,
            claim=claims[i] if phase > 1 else None,
            annotator=users[(i * 7 + k) % ANNOTATORS],
            status=Task.Status.SUBMITTED,
            is_agreement_sample=sample,
            created_at=created,
            opened_at=opened,
            article_loaded_at=opened,
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
    bar.update()
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
    bar.update()
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
    bar.update()
    Answer.objects.bulk_create(
        Answer(
            question=q,
            position=0,
            text=rng.choice(["2.1 million pounds.", "The mayor did.", "In March 2019."]),
            answer_type="Abstractive",
        )
        for q in questions
    )
    bar.update()
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
    bar.update()
    # Waiting work: P5 on every tenth claim (stuck where the one free P5 account touched the
    # article), and fresh articles waiting for P1.
    Task.objects.bulk_create(
        Task(
            phase=5,
            article_id=claims[i].article_id,
            claim=claims[i],
            created_at=now - rng.random() * 5 * day,
        )
        for i in range(0, n_claims, 10)
    )
    waiting = Article.objects.bulk_create(
        Article(
            url=f"https://factcheck.example.org/w{i}", normalized_url=f"factcheck.example.org/w{i}"
        )
        for i in range(n_claims // 20)
    )
    Task.objects.bulk_create(
        Task(phase=1, article=a, created_at=now - rng.random() * DAYS * day) for a in waiting
    )
    bar.close()
    with connection.cursor() as cursor:
        # A live database has its statistics; without them a filter by date gets a plan
        # a hundred times slower than it should.
        cursor.execute("ANALYZE")


def timed(function: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median and p95 (nearest rank; the worst of fewer than 20 runs) seconds of `function`."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


def old_progress_report(report_filter) -> dict:
    """The progress report as computed before issue 27: every task row read in Python."""
    from review import progress
    from tests.review import test_progress_aggregates as before

    stuck = before.old_stuck_tasks(report_filter)
    return {
        "filter": report_filter.as_dict(),
        "phases": before.old_phase_figures(report_filter),
        "days": before.old_daily_figures(report_filter),
        "outcomes": progress.outcome_rates(report_filter),
        "annotators": before.old_annotator_figures(report_filter),
        "stuck": stuck,
        "stuck_summary": before.old_stuck_summary(stuck),
        "stuck_total": len(stuck),
        "stuck_pages": {"page": 1, "pages": 1, "size": len(stuck)},
        "speed_trap_seconds": 24,
    }


def on_request():
    """Patch the former computation into the views: verdicts from the raw rows, METEOR of
    every pair, progress row by row, every stuck task on the page."""
    from contextlib import ExitStack
    from unittest import mock

    from django.utils import timezone

    from review import agreement

    def now() -> dict:
        return {"computed_at": timezone.now().isoformat(), "current": True}

    def old_agreement(report_filter=None, *, evidence=True, **kwargs):
        report = agreement.agreement_report(
            report_filter, ratings=agreement.verdict_ratings, evidence=evidence
        )
        return {**report, "stored": now()}

    def old_progress(report_filter=None, **kwargs):
        return {**old_progress_report(report_filter), "stored": now()}

    stack = ExitStack()
    for target, value in (
        ("review.dashboard.agreement_report", old_agreement),
        ("review.dashboard.evidence_figures", agreement.evidence_agreement),
        ("review.dashboard.progress_report", old_progress),
        ("review.api.agreement_report", old_agreement),
        ("review.api.progress_report", old_progress),
    ):
        stack.enter_context(mock.patch(target, value))
    return stack


def hand_in_cost(claim_ids: list[int], repeat: int) -> tuple[float, float, float]:
    """Median and p95 ms of what a hand-in pays to keep the figures current, in a
    transaction as on the hand-in path: the post_save hooks of a stored P2 round (its claim's
    ratings rewritten, its METEOR job queued on commit) ; and its queries."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from annotation.models import EvidenceRound
    from review import stored

    rounds = {
        r.claim_id: r
        for r in EvidenceRound.objects.filter(claim_id__in=claim_ids, is_agreement_sample=True)
    }

    def hooks(claim_id: int) -> None:
        evidence = rounds[claim_id]
        stored.on_verdict_saved(EvidenceRound, evidence)
        stored.on_evidence_round_saved(EvidenceRound, evidence)

    times = []
    for claim_id in claim_ids[:repeat]:
        with transaction.atomic():
            started = time.perf_counter()
            hooks(claim_id)
            times.append((time.perf_counter() - started) * 1000)
            transaction.set_rollback(True)  # no job queued: the work stays as built
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        hooks(claim_ids[0])
        transaction.set_rollback(True)
    times.sort()
    return (
        statistics.median(times),
        times[min(len(times) - 1, int(0.95 * len(times)))],
        len(queries),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=20, help="runs of each stored measure")
    parser.add_argument("--old-repeat", type=int, default=3, help="runs of each on-request measure")
    parser.add_argument(
        "--old-up-to",
        type=int,
        default=10000,
        help="Time the former on-request computation only up to this many claims.",
    )
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args()
    name = database_name(args.database_url)
    refuse_unsafe_database(name)
    ensure_database(args.database_url, name)
    setup_django(args.database_url)
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    from unittest import mock

    from django.conf import settings
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Claim, User
    from review import stored
    from review.agreement import ReportFilter, agreement_report, verdict_ratings
    from review.models import AgreementRating, StoredReport

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    # No worker here: jobs the views queue are counted, not sent (each is timed on its own).
    mock.patch("review.stored.queue_evidence_score").start()
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; median / p95 of {args.repeat} runs "
        f"(on request: of {args.old_repeat})"
    )
    report_filter = ReportFilter()  # everything: the dashboard's unfiltered view
    for n in args.claims:
        build(n, random.Random(n))
        started = time.perf_counter()
        stored.rebuild()
        rebuild_s = time.perf_counter() - started
        with tqdm(total=n, desc="METEOR per pair", unit="claim", leave=False) as bar:
            started = time.perf_counter()
            stored.rebuild_evidence(advance=bar.update)
            meteor_s = time.perf_counter() - started
        manager = User.objects.create(username="bench-manager", role=User.Role.MANAGER)
        client = Client()
        client.force_login(manager)

        def get(url: str, client: Client = client) -> None:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)

        # The first visit of a filter computes and stores its figures.
        started = time.perf_counter()
        get(reverse("review:dashboard"))
        first_visit = time.perf_counter() - started
        batch = f"?start={(Claim.objects.order_by('created_at').first().created_at.date())}"
        pages = {
            "dashboard page": reverse("review:dashboard"),
            "evidence panel": reverse("review:dashboard-evidence"),
            "agreement CSV": reverse("review:dashboard-csv", args=["agreement"]),
            "annotators CSV": reverse("review:dashboard-csv", args=["annotators"]),
            "/api/v1/agreement/": reverse("review_api:agreement"),
            "/api/v1/progress/": reverse("review_api:progress"),
            "dashboard page, filtered by date": reverse("review:dashboard") + batch,
        }
        get(pages["dashboard page, filtered by date"])  # its first visit
        measures = {
            "verdict agreement (function)": (
                lambda: agreement_report(report_filter, evidence=False, ratings=verdict_ratings),
                lambda: stored.agreement_report(report_filter, evidence=False),
            ),
            "progress + stuck work (function)": (
                lambda: old_progress_report(report_filter),
                lambda: stored.stored_progress_report(report_filter, stuck_page=1),
            ),
        }
        for title, url in pages.items():
            measures[title] = (lambda url=url: get(url), lambda url=url: get(url))
        queue_report = mock.patch("review.stored.queue_report").start()
        rows = []
        for title, (old, new) in tqdm(measures.items(), desc="timing", leave=False):
            before = None
            if n <= args.old_up_to:
                with on_request():
                    before = timed(old, args.old_repeat)
            rows.append((title, before, timed(new, args.repeat)))

        # A visit right after a hand-in: the stored report is stale; the page shows it and
        # queues one job (not run here), whose cost is timed on its own.
        AgreementRating.objects.filter(
            pk=AgreementRating.objects.order_by("id").first().pk
        ).delete()
        with mock.patch("review.stored.queue_report") as queued:
            stale = timed(lambda url=pages["dashboard page"]: get(url), args.repeat)
        queue_report.reset_mock()
        verdict_jobs = [c for c in queued.call_args_list if c.args[0] == stored.VERDICT_FIGURES]
        assert len(verdict_jobs) == 1, queued.call_args_list  # one job, however many visits
        rows.append(("dashboard page, just after a hand-in (stale, job queued)", None, stale))
        started = time.perf_counter()
        stored.refresh_report(stored.VERDICT_FIGURES, report_filter)
        job_s = time.perf_counter() - started

        claim_ids = list(Claim.objects.order_by("?").values_list("pk", flat=True)[:50])
        cost = hand_in_cost(claim_ids, 50)
        print(f"\n## {n:,} claims\n")
        print("| measure | on request (median / p95) | stored (median / p95) | ratio |")
        print("|---|---|---|---|")
        for title, before, after in rows:
            old_text = f"{before[0]:.3f} / {before[1]:.3f} s" if before else "-"
            ratio = f"{before[0] / after[0]:.0f}x" if before else ""
            print(f"| {title} | {old_text} | {after[0]:.3f} / {after[1]:.3f} s | {ratio} |")
        print(
            f"| keeping figures current, per hand-in (hooks in its transaction) | - | "
            f"{cost[0]:.1f} / {cost[1]:.1f} ms ({cost[2]} queries) | |"
        )
        print(f"| first visit of a filter (computes and stores) | - | {first_visit:.3f} s | |")
        print(f"| the Celery job computing a stale verdict report | - | {job_s:.3f} s | |")
        print(f"| ratings rebuilt, every claim | - | {rebuild_s:.1f} s | |")
        print(
            f"| METEOR scored, every pair (rebuild; else a job per pair) | - | {meteor_s:.1f} s | |"
        )
        print(f"stored reports: {StoredReport.objects.count()}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
