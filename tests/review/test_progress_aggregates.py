"""The aggregated progress figures equal the per-row computation they replaced.

The oracle below is the dashboard's former code (every task row fetched and counted in
Python), kept here only as the reference; a random workflow spread over more than 60 days,
with pooled, held, lapsed and handed-in tasks, quotas and unqualified accounts, must give the
same figures from both, with and without filters.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter, defaultdict
from datetime import datetime, time, timedelta

import pytest
from django.conf import settings
from django.db.models import Count, QuerySet
from django.urls import reverse
from django.utils import timezone

from annotation.models import (
    Article,
    Batch,
    EvidenceRound,
    PhaseQuota,
    Task,
    User,
)
from annotation.phases import PHASES
from annotation.vocabulary import Phase
from review import progress
from review.agreement import ReportFilter, verdict_ratings
from review.models import ProblemFlag, QualityCheck
from tests.review.random_workflow import ENDED, HELD, random_workflow

# --- The oracle: the former per-row computation ---------------------------------------------


def _tasks(report_filter):
    tasks = Task.objects.all()
    if report_filter.batch_id:
        tasks = tasks.filter(article__batch_id=report_filter.batch_id)
    return tasks


def _submitted(report_filter) -> QuerySet[Task]:
    tasks = _tasks(report_filter).filter(status=Task.Status.SUBMITTED)
    if report_filter.start:
        tasks = tasks.filter(submitted_at__date__gte=report_filter.start)
    if report_filter.end:
        tasks = tasks.filter(submitted_at__date__lte=report_filter.end)
    return tasks


def _median(values):
    return statistics.median(values) if values else None


def _minutes(seconds):
    return None if seconds is None else round(seconds / 60, 2)


def _rate(part, whole):
    return part / whole if whole else None


def old_daily_figures(report_filter):
    rows = list(
        _tasks(report_filter)
        .exclude(status__in=(Task.Status.EXPIRED, Task.Status.RELEASED, Task.Status.CANCELLED))
        .values_list("phase", "created_at", "submitted_at")
    )
    first = min((timezone.localdate(c) for _, c, _ in rows), default=None)
    days = progress._days(report_filter, first)
    done = Counter((timezone.localdate(s), p) for p, _, s in rows if s is not None)
    out = []
    for day in days:
        end = timezone.make_aware(datetime.combine(day + timedelta(days=1), time.min))
        queue = Counter(p for p, c, s in rows if c < end and (s is None or s >= end))
        out.append(
            {
                "day": day.isoformat(),
                **{f"done_p{p}": done[(day, p)] for p in PHASES},
                **{f"queue_p{p}": queue[p] for p in PHASES},
            }
        )
    return out


def old_phase_figures(report_filter):
    times, counts = defaultdict(list), Counter()
    for phase, opened, submitted in _submitted(report_filter).values_list(
        "phase", "opened_at", "submitted_at"
    ):
        counts[phase] += 1
        if opened and submitted:
            times[phase].append((submitted - opened).total_seconds())
    trap = settings.SPEED_TRAP_SECONDS
    return [
        {
            "phase": phase,
            "done": counts[phase],
            "median_minutes": _minutes(_median(times[phase])),
            "speed_traps": sum(1 for s in times[phase] if s < trap),
        }
        for phase in PHASES
    ]


def old_annotator_figures(report_filter):
    trap = settings.SPEED_TRAP_SECONDS
    rows, times, users = {}, defaultdict(list), {}
    for pk, name, phase, opened, submitted, loaded, article_state in _submitted(
        report_filter
    ).values_list(
        "annotator_id",
        "annotator__username",
        "phase",
        "opened_at",
        "submitted_at",
        "article_loaded_at",
        "article__state",
    ):
        if pk is None:
            continue
        users[pk] = name
        row = rows.setdefault(
            pk, {"done": Counter(), "speed_traps": 0, "skips": 0, "skips_before_article": 0}
        )
        row["done"][phase] += 1
        if opened and submitted:
            seconds = (submitted - opened).total_seconds()
            times[pk].append(seconds)
            row["speed_traps"] += seconds < trap
        if phase == Phase.NORMALISATION and article_state == Article.State.SKIPPED:
            row["skips"] += 1
            row["skips_before_article"] += loaded is None
    claims = report_filter.claims()
    agreeing, compared = Counter(), Counter()
    for comparison in ("first_round", "p4_p5"):
        by_item = defaultdict(list)
        for rating in verdict_ratings(comparison, claims):
            by_item[rating.item].append(rating)
        for ratings in by_item.values():
            for mine in ratings:
                for other in ratings:
                    if other is not mine:
                        compared[mine.annotator] += 1
                        agreeing[mine.annotator] += mine.label == other.label
    confirmed, p2_checked = Counter(), Counter()
    for author, unreadable, verdict, shown in QualityCheck.objects.filter(
        claim__in=claims, phase=Phase.QUALITY_CHECK, submitted_at__isnull=False
    ).values_list(
        "evidence_round__task__annotator_id", "unreadable", "verdict", "evidence_round__verdict"
    ):
        if author is not None:
            p2_checked[author] += 1
            confirmed[author] += (not unreadable) and verdict == shown
    flags = Counter(
        dict(
            ProblemFlag.objects.filter(quality_check__claim__in=claims)
            .values_list("quality_check__evidence_round__task__annotator")
            .annotate(n=Count("id"))
        )
    )
    questions = defaultdict(list)
    for round_annotator, n in (
        EvidenceRound.objects.filter(claim__in=claims, submitted_at__isnull=False)
        .annotate(n=Count("questions"))
        .values_list("task__annotator", "n")
    ):
        questions[round_annotator].append(n)
    out = []
    for pk, row in rows.items():
        name = users[pk]
        out.append(
            {
                "annotator": name,
                "tasks_done": sum(row["done"].values()),
                **{f"done_p{p}": row["done"][p] for p in PHASES},
                "median_minutes": _minutes(_median(times[pk])),
                "agreement_with_others": _rate(agreeing[name], compared[name]),
                "p2_confirmed_in_p3": _rate(confirmed[pk], p2_checked[pk]),
                "flags_received": flags.get(pk, 0),
                "speed_traps": row["speed_traps"],
                "skips": row["skips"],
                "skips_before_article": row["skips_before_article"],
                "questions_per_claim": (
                    round(statistics.mean(questions[pk]), 2) if questions[pk] else None
                ),
            }
        )
    return sorted(out, key=lambda r: r["annotator"])


def old_stuck_tasks(report_filter):
    pooled = list(
        _tasks(report_filter)
        .filter(status=Task.Status.POOLED)
        .select_related("claim", "article")
        .order_by("phase", "created_at", "id")
    )
    if not pooled:
        return []
    active = list(User.objects.filter(is_active=True).order_by("username"))
    touched = defaultdict(set)
    for article_id, annotator_id in Task.objects.filter(
        article_id__in={t.article_id for t in pooled}, annotator__isnull=False
    ).values_list("article_id", "annotator_id"):
        touched[article_id].add(annotator_id)
    limits = {(q.annotator_id, q.phase): q.limit for q in PhaseQuota.objects.all()}
    used = Counter(
        {
            (a, p): n
            for a, p, n in Task.objects.filter(
                status__in=(Task.Status.ASSIGNED, Task.Status.IN_PROGRESS, Task.Status.SUBMITTED)
            )
            .values_list("annotator_id", "phase")
            .annotate(n=Count("id"))
        }
    )

    def at_quota(user, phase):
        limit = limits.get((user.pk, phase))
        return limit is not None and used[(user.pk, phase)] >= limit

    out = []
    for task in pooled:
        qualified = [u for u in active if u.is_qualified_for(task.phase)]
        fresh = [u for u in qualified if u.pk not in touched[task.article_id]]
        if any(not at_quota(u, task.phase) for u in fresh):
            continue
        reason = (
            progress.NOBODY_QUALIFIED
            if not qualified
            else progress.ALL_SEEN_ARTICLE
            if not fresh
            else progress.ALL_AT_QUOTA
        )
        could_qualify = [
            u.username
            for u in active
            if not u.is_qualified_for(task.phase)
            and u.pk not in touched[task.article_id]
            and not at_quota(u, task.phase)
            and not u.is_manager
        ][:3]
        out.append(
            {
                "task": task.pk,
                "phase": task.phase,
                "claim": task.claim_id,
                "article": task.article_id,
                "what": str(task.claim or task.article)[:100],
                "waiting_since": task.created_at.isoformat(),
                "reason": reason,
                "could_qualify": could_qualify,
            }
        )
    return out


def old_stuck_summary(stuck):
    counts = Counter((row["phase"], row["reason"]) for row in stuck)
    return [
        {"phase": phase, "reason": reason, "tasks": n}
        for (phase, reason), n in sorted(counts.items())
    ]


def _filters(batches: list[Batch]) -> list[ReportFilter]:
    today = timezone.localdate()
    return [
        ReportFilter(),
        ReportFilter(batch_id=batches[0].pk),
        ReportFilter(start=today - timedelta(days=30), end=today - timedelta(days=3)),
        ReportFilter(batch_id=batches[1].pk, start=today - timedelta(days=75)),
        ReportFilter(end=today - timedelta(days=40)),
        # The API takes a start after the end (the form refuses it): no day, no figure.
        ReportFilter(start=today - timedelta(days=2), end=today - timedelta(days=9)),
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_aggregated_figures_equal_the_per_row_computation(db, seed):
    batches = random_workflow(random.Random(seed), 90)

    for report_filter in _filters(batches):
        assert progress.daily_figures(report_filter) == old_daily_figures(report_filter)
        assert progress.phase_figures(report_filter) == old_phase_figures(report_filter)
        assert progress.annotator_figures(report_filter) == old_annotator_figures(report_filter)
        stuck = old_stuck_tasks(report_filter)
        assert progress.stuck_tasks(report_filter) == stuck
        assert progress.stuck_summary(report_filter) == old_stuck_summary(stuck)


def test_the_random_workflow_has_what_the_comparison_needs(db):
    """A guard on the oracle test: its data must hold stuck work, traps and days to compare."""
    random_workflow(random.Random(1), 90)

    reasons = {row["reason"] for row in progress.stuck_tasks()}
    assert reasons == {progress.NOBODY_QUALIFIED, progress.ALL_SEEN_ARTICLE, progress.ALL_AT_QUOTA}
    assert any(row["could_qualify"] for row in progress.stuck_tasks())
    assert any(p["speed_traps"] for p in progress.phase_figures(ReportFilter()))
    assert Task.objects.dates("created_at", "day").count() > 40
    assert Task.objects.filter(status__in=HELD).exists()
    assert Task.objects.filter(status__in=ENDED).exists()


@pytest.mark.parametrize("size", [1, 3, 7])
def test_pages_of_stuck_work_put_together_are_the_whole_list(db, size):
    random_workflow(random.Random(4), 60)
    whole = progress.stuck_tasks()

    pages = [progress.stuck_tasks(offset=start, limit=size) for start in range(0, len(whole), size)]

    assert [row for page in pages for row in page] == whole
    assert all(len(page) == size for page in pages[:-1])


def test_the_dashboard_pages_stuck_work_and_the_csv_keeps_every_row(client, db, settings):
    settings.STUCK_PAGE_SIZE = 2
    random_workflow(random.Random(5), 40)
    total = len(progress.stuck_tasks())
    assert total > 4
    client.force_login(User.objects.create(username="boss", role=User.Role.MANAGER))

    page = client.get(reverse("review:dashboard"), {"stuck_page": 2})
    csv = client.get(reverse("review:dashboard-csv", args=["stuck"]))

    assert page.context["progress"]["stuck"] == progress.stuck_tasks(offset=2, limit=2)
    assert page.context["progress"]["stuck_total"] == total
    assert "stuck_page=3" in page.content.decode() and "stuck_page=1" in page.content.decode()
    assert len(csv.content.decode().strip().splitlines()) == total + 1
