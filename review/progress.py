"""Progress and quality signals for managers, and the work nobody can currently take.

The one home of the dashboard's numbers (the page, its CSV downloads, the API and the
`agreement_report` command call these functions). Times are tasks' submitted_at minus
opened_at; a task without opened_at (a manager's hand-in or an import) has no time.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db.models import Count, QuerySet
from django.utils import timezone

from annotation.models import Article, Claim, EvidenceRound, PhaseQuota, Task, User
from annotation.vocabulary import Phase
from review.agreement import ReportFilter, verdict_ratings
from review.models import ProblemFlag, QualityCheck

# The chart of queue sizes shows at most this many days, the latest ones.
MAX_DAYS = 60


def _tasks(report_filter: ReportFilter) -> QuerySet[Task]:
    tasks = Task.objects.all()
    if report_filter.batch_id:
        tasks = tasks.filter(article__batch_id=report_filter.batch_id)
    return tasks


def _submitted(report_filter: ReportFilter) -> QuerySet[Task]:
    tasks = _tasks(report_filter).filter(status=Task.Status.SUBMITTED)
    if report_filter.start:
        tasks = tasks.filter(submitted_at__date__gte=report_filter.start)
    if report_filter.end:
        tasks = tasks.filter(submitted_at__date__lte=report_filter.end)
    return tasks


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _days(report_filter: ReportFilter, first: date | None) -> list[date]:
    end = report_filter.end or timezone.localdate()
    start = report_filter.start or first or end
    start = max(start, end - timedelta(days=MAX_DAYS - 1))
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


def daily_figures(report_filter: ReportFilter) -> list[dict]:
    """Per day: tasks handed in per phase, and the queue (waiting or held) at the day's end.

    A task that ended without a submission (lapsed, released, cancelled) left no time of
    leaving, so the queue counts only tasks still open or handed in.
    """
    rows = list(
        _tasks(report_filter)
        .exclude(status__in=(Task.Status.EXPIRED, Task.Status.RELEASED, Task.Status.CANCELLED))
        .values_list("phase", "created_at", "submitted_at")
    )
    first = min((timezone.localdate(c) for _, c, _ in rows), default=None)
    days = _days(report_filter, first)
    done: Counter[tuple[date, int]] = Counter(
        (timezone.localdate(s), p) for p, _, s in rows if s is not None
    )
    out = []
    for day in days:
        end = timezone.make_aware(datetime.combine(day + timedelta(days=1), time.min))
        queue = Counter(p for p, c, s in rows if c < end and (s is None or s >= end))
        out.append(
            {
                "day": day.isoformat(),
                **{f"done_p{p}": done[(day, p)] for p in range(1, 6)},
                **{f"queue_p{p}": queue[p] for p in range(1, 6)},
            }
        )
    return out


def phase_figures(report_filter: ReportFilter) -> list[dict]:
    """Per phase: tasks handed in, median and mean minutes per task, speed traps."""
    times: dict[int, list[float]] = defaultdict(list)
    counts: Counter[int] = Counter()
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
        for phase in range(1, 6)
    ]


def _minutes(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds / 60, 2)


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def outcome_rates(report_filter: ReportFilter) -> dict:
    """Skips (with reasons), disputes, discards and re-annotations, as counts and shares."""
    p1 = _submitted(report_filter).filter(phase=Phase.NORMALISATION)
    skipped = p1.filter(article__state=Article.State.SKIPPED)
    skip_reasons = Counter(
        dict(skipped.values_list("article__skip_reason").annotate(n=Count("id")))
    )
    labels = dict(Article.SkipReason.choices)
    claims = report_filter.claims()
    checked = claims.filter(
        quality_checks__phase=Phase.QUALITY_CHECK, quality_checks__is_agreement_sample=False
    ).distinct()
    disputed = claims.filter(tasks__phase=Phase.DISPUTE).distinct().count()
    decided = claims.filter(state__in=(Claim.State.ACCEPTED, Claim.State.DISCARDED))
    discarded = decided.filter(state=Claim.State.DISCARDED).count()
    accepted = claims.filter(state=Claim.State.ACCEPTED)
    reported = claims.filter(exclusion_reason__startswith="reported in P").count()
    return {
        "p1_done": p1.count(),
        "skipped": skipped.count(),
        "skip_rate": _rate(skipped.count(), p1.count()),
        "skip_reasons": {labels[k]: v for k, v in skip_reasons.items() if k in labels},
        "claims_reported_in_p2_p4": reported,
        "checked_in_p3": checked.count(),
        "disputed": disputed,
        "dispute_rate": _rate(disputed, checked.count()),
        "decided": decided.count(),
        "discarded": discarded,
        "discard_rate": _rate(discarded, decided.count()),
        "accepted": accepted.count(),
        "reannotated": accepted.filter(required_reannotation=True).count(),
        "reannotation_rate": _rate(
            accepted.filter(required_reannotation=True).count(), accepted.count()
        ),
    }


def annotator_figures(report_filter: ReportFilter) -> list[dict]:
    """One row per annotator who handed in work: output, speed and quality signals."""
    trap = settings.SPEED_TRAP_SECONDS
    rows: dict[int, dict] = {}
    times: dict[int, list[float]] = defaultdict(list)
    users = {}
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
            # Reported before the article had even been shown: a guess, not a judgement.
            row["skips_before_article"] += loaded is None

    claims = report_filter.claims()
    # Agreement with others: of the other verdicts on the same claims, the share that agree.
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
                **{f"done_p{p}": row["done"][p] for p in range(1, 6)},
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


# --- Stuck work --------------------------------------------------------------------------

NOBODY_QUALIFIED = "nobody active is qualified for this phase"
ALL_SEEN_ARTICLE = "every qualified annotator has already worked on this article"
ALL_AT_QUOTA = "every qualified annotator who may take it has reached their quota"


def stuck_tasks(report_filter: ReportFilter | None = None) -> list[dict]:
    """Waiting tasks that no active account may take now, each with the reason and a fix.

    The fix names up to three active accounts that have not touched the article and only
    lack the qualification; otherwise a new account is the way out.
    """
    report_filter = report_filter or ReportFilter()
    pooled = list(
        _tasks(report_filter)
        .filter(status=Task.Status.POOLED)
        .select_related("claim", "article")
        .order_by("phase", "created_at", "id")
    )
    if not pooled:
        return []
    active = list(User.objects.filter(is_active=True).order_by("username"))
    touched: dict[int, set[int]] = defaultdict(set)
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

    def at_quota(user: User, phase: int) -> bool:
        limit = limits.get((user.pk, phase))
        return limit is not None and used[(user.pk, phase)] >= limit

    out = []
    for task in pooled:
        qualified = [u for u in active if u.is_qualified_for(task.phase)]
        fresh = [u for u in qualified if u.pk not in touched[task.article_id]]
        if any(not at_quota(u, task.phase) for u in fresh):
            continue
        reason = (
            NOBODY_QUALIFIED if not qualified else ALL_SEEN_ARTICLE if not fresh else ALL_AT_QUOTA
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


def stuck_summary(stuck: list[dict]) -> list[dict]:
    """Stuck tasks counted by phase and reason."""
    counts = Counter((row["phase"], row["reason"]) for row in stuck)
    return [
        {"phase": phase, "reason": reason, "tasks": n}
        for (phase, reason), n in sorted(counts.items())
    ]


def progress_report(report_filter: ReportFilter | None = None) -> dict:
    report_filter = report_filter or ReportFilter()
    stuck = stuck_tasks(report_filter)
    return {
        "filter": report_filter.as_dict(),
        "phases": phase_figures(report_filter),
        "days": daily_figures(report_filter),
        "outcomes": outcome_rates(report_filter),
        "annotators": annotator_figures(report_filter),
        "stuck": stuck,
        "stuck_summary": stuck_summary(stuck),
        "speed_trap_seconds": settings.SPEED_TRAP_SECONDS,
    }
