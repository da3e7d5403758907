"""Progress and quality signals for managers, and the work nobody can currently take.

The one home of the dashboard's numbers (the page, its CSV downloads, the API and the
`agreement_report` command call these functions). Times are tasks' submitted_at minus
opened_at; a task without opened_at (a manager's hand-in or an import) has no time.

Every figure is an aggregate the database computes (counts per day and phase, conditional
counts, medians by ``percentile_cont``): a page reads a few hundred grouped rows, not one
row per task, whatever the size of the campaign (benchmarks/reporting.py).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import (
    Aggregate,
    Case,
    CharField,
    Count,
    F,
    FloatField,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
    Window,
)
from django.db.models.functions import Coalesce, Greatest, TruncDate
from django.utils import timezone

from annotation.assignment import touches
from annotation.models import Article, Claim, EvidenceRound, PhaseQuota, Task, User
from annotation.phases import PHASES
from annotation.vocabulary import Phase
from review.agreement import ReportFilter
from review.models import AgreementRating, ProblemFlag, QualityCheck

# The chart of queue sizes shows at most this many days, the latest ones.
MAX_DAYS = 60


def _tasks(report_filter: ReportFilter) -> QuerySet[Task]:
    tasks = Task.objects.all()
    if report_filter.batch_id:
        tasks = tasks.filter(article__batch_id=report_filter.batch_id)
    return tasks.order_by()


def _midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def _submitted(report_filter: ReportFilter) -> QuerySet[Task]:
    tasks = _tasks(report_filter).filter(status=Task.Status.SUBMITTED)
    # Bounds on the column itself (not on its date) let the task_submitted index serve them.
    if report_filter.start:
        tasks = tasks.filter(submitted_at__gte=_midnight(report_filter.start))
    if report_filter.end:
        tasks = tasks.filter(submitted_at__lt=_midnight(report_filter.end + timedelta(days=1)))
    return tasks


# --- Aggregates ---------------------------------------------------------------------------


class Seconds(Func):
    """A task's time from opening to hand-in, in seconds (NULL without an opening time)."""

    template = "EXTRACT(EPOCH FROM (%(expressions)s))::double precision"
    arg_joiner = " - "
    output_field = FloatField()

    def __init__(self) -> None:
        super().__init__(F("submitted_at"), F("opened_at"))


class Median(Aggregate):
    """PostgreSQL's continuous median: the mean of the two middle values, as statistics.median."""

    function = "PERCENTILE_CONT"
    name = "Median"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def _median_seconds(tasks: QuerySet[Task], key: str) -> dict:
    """Median time per value of `key`, computed by the database where it can."""
    if connection.vendor == "postgresql":
        return {
            k: m
            for k, m in tasks.values(key).annotate(m=Median(Seconds())).values_list(key, "m")
            if m is not None
        }
    # SQLite (the embedded default) has no percentile_cont: the timed rows come back.
    times: dict = defaultdict(list)
    for k, opened, submitted in tasks.filter(opened_at__isnull=False).values_list(
        key, "opened_at", "submitted_at"
    ):
        if submitted is not None:
            times[k].append((submitted - opened).total_seconds())
    return {k: statistics.median(v) for k, v in times.items()}


def _speed_trap() -> Q:
    return Q(opened_at__isnull=False, submitted_at__lt=F("opened_at") + _trap())


def _trap() -> timedelta:
    return timedelta(seconds=settings.SPEED_TRAP_SECONDS)


def _days(report_filter: ReportFilter, first: date | None) -> list[date]:
    end = report_filter.end or timezone.localdate()
    start = report_filter.start or first or end
    start = max(start, end - timedelta(days=MAX_DAYS - 1))
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


def _per_day(tasks: QuerySet[Task], moment) -> dict[tuple[date, int], int]:
    return {
        (day, phase): n
        for day, phase, n in tasks.annotate(day=TruncDate(moment))
        .values("day", "phase")
        .annotate(n=Count("id"))
        .values_list("day", "phase", "n")
    }


def daily_figures(report_filter: ReportFilter) -> list[dict]:
    """Per day: tasks handed in per phase, and the queue (waiting or held) at the day's end.

    A task that ended without a submission (lapsed, released, cancelled) left no time of
    leaving, so the queue counts only tasks still open or handed in. The queue at a day's end
    is the tasks created by then minus those that had left by then (handed in, and created).
    """
    tasks = _tasks(report_filter).exclude(
        status__in=(Task.Status.EXPIRED, Task.Status.RELEASED, Task.Status.CANCELLED)
    )
    created = _per_day(tasks, "created_at")
    handed_in = tasks.filter(submitted_at__isnull=False)
    done = _per_day(handed_in, "submitted_at")
    left = _per_day(handed_in, Greatest("created_at", "submitted_at"))
    days = _days(report_filter, min((day for day, _ in created), default=None))
    if not days:  # a start after the end: no day to show
        return []
    # Whatever arrived or left before the first day shown is already in its queue.
    queue: Counter[int] = Counter()
    for (day, phase), n in created.items():
        queue[phase] += n if day < days[0] else 0
    for (day, phase), n in left.items():
        queue[phase] -= n if day < days[0] else 0
    out = []
    for day in days:
        for phase in PHASES:
            queue[phase] += created.get((day, phase), 0) - left.get((day, phase), 0)
        out.append(
            {
                "day": day.isoformat(),
                **{f"done_p{p}": done.get((day, p), 0) for p in PHASES},
                **{f"queue_p{p}": queue[p] for p in PHASES},
            }
        )
    return out


def phase_figures(report_filter: ReportFilter) -> list[dict]:
    """Per phase: tasks handed in, median and mean minutes per task, speed traps."""
    tasks = _submitted(report_filter)
    counts = {
        phase: (done, traps)
        for phase, done, traps in tasks.values("phase")
        .annotate(done=Count("id"), traps=Count("id", filter=_speed_trap()))
        .values_list("phase", "done", "traps")
    }
    medians = _median_seconds(tasks, "phase")
    return [
        {
            "phase": phase,
            "done": counts.get(phase, (0, 0))[0],
            "median_minutes": _minutes(medians.get(phase)),
            "speed_traps": counts.get(phase, (0, 0))[1],
        }
        for phase in PHASES
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
    reported = claims.reported().count()
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
    tasks = _submitted(report_filter).filter(annotator__isnull=False)
    skipped = Q(phase=Phase.NORMALISATION, article__state=Article.State.SKIPPED)
    # Mapping: the done_p1..done_p5 keys are made from PHASES, which a TypedDict cannot name.
    rows: dict[int, Mapping[str, Any]] = {
        row["annotator_id"]: row
        for row in tasks.values("annotator_id", "annotator__username").annotate(
            **{f"done_p{p}": Count("id", filter=Q(phase=p)) for p in PHASES},
            speed_traps=Count("id", filter=_speed_trap()),
            skips=Count("id", filter=skipped),
            # Reported before the article had even been shown: a guess, not a judgement.
            skips_before_article=Count("id", filter=skipped & Q(article_loaded_at__isnull=True)),
        )
    }
    medians = _median_seconds(tasks, "annotator_id")

    claims = report_filter.claims()
    # Agreement with others: of the other verdicts on the same claims, the share that agree.
    # A rating on an item with n ratings, s of them with its label, meets n - 1 others, s - 1
    # of them agreeing; the database counts n and s per rating (window functions).
    agreeing: Counter[Any] = Counter()
    compared: Counter[Any] = Counter()
    for who, n, same in (
        AgreementRating.objects.filter(comparison__in=("first_round", "p4_p5"), claim__in=claims)
        .annotate(
            n=Window(Count("id"), partition_by=[F("comparison"), F("item")]),
            same=Window(Count("id"), partition_by=[F("comparison"), F("item"), F("label")]),
        )
        .values_list("annotator", "n", "same")
    ):
        compared[who] += n - 1
        agreeing[who] += same - 1

    checks = {
        author: (checked, confirmed)
        for author, checked, confirmed in QualityCheck.objects.filter(
            claim__in=claims,
            phase=Phase.QUALITY_CHECK,
            submitted_at__isnull=False,
            evidence_round__task__annotator__isnull=False,
        )
        .values("evidence_round__task__annotator_id")
        .annotate(
            checked=Count("id"),
            confirmed=Count("id", filter=Q(unreadable=False, verdict=F("evidence_round__verdict"))),
        )
        .values_list("evidence_round__task__annotator_id", "checked", "confirmed")
    }
    flags = dict(
        ProblemFlag.objects.filter(quality_check__claim__in=claims)
        .values("quality_check__evidence_round__task__annotator")
        .annotate(n=Count("id"))
        .values_list("quality_check__evidence_round__task__annotator", "n")
    )
    # Questions per handed-in round: all questions over all rounds (rounds without any count).
    questions = {
        pk: (n_questions, n_rounds)
        for pk, n_questions, n_rounds in EvidenceRound.objects.filter(
            claim__in=claims, submitted_at__isnull=False, task__annotator__isnull=False
        )
        .values("task__annotator_id")
        .annotate(q=Count("questions"), r=Count("id", distinct=True))
        .values_list("task__annotator_id", "q", "r")
    }

    out = []
    for pk, row in rows.items():
        name = row["annotator__username"]
        checked, confirmed = checks.get(pk, (0, 0))
        n_questions, n_rounds = questions.get(pk, (0, 0))
        out.append(
            {
                "annotator": name,
                "tasks_done": sum(row[f"done_p{p}"] for p in PHASES),
                **{f"done_p{p}": row[f"done_p{p}"] for p in PHASES},
                "median_minutes": _minutes(medians.get(pk)),
                "agreement_with_others": _rate(agreeing[name], compared[name]),
                "p2_confirmed_in_p3": _rate(confirmed, checked),
                "flags_received": flags.get(pk, 0),
                "speed_traps": row["speed_traps"],
                "skips": row["skips"],
                "skips_before_article": row["skips_before_article"],
                "questions_per_claim": round(n_questions / n_rounds, 2) if n_rounds else None,
            }
        )
    return sorted(out, key=lambda r: r["annotator"])


# --- Stuck work --------------------------------------------------------------------------

NOBODY_QUALIFIED = "nobody active is qualified for this phase"
ALL_SEEN_ARTICLE = "every qualified annotator has already worked on this article"
ALL_AT_QUOTA = "every qualified annotator who may take it has reached their quota"


class _Who:
    """Who is active, qualified and under quota, per phase: a few hundred accounts at most."""

    def __init__(self) -> None:
        self.active = list(User.objects.filter(is_active=True).order_by("username"))
        limits = {(q.annotator_id, q.phase): q.limit for q in PhaseQuota.objects.all()}
        used = Counter(
            {
                (a, p): n
                for a, p, n in Task.objects.counted_for_quota()
                .values("annotator_id", "phase")
                .annotate(n=Count("id"))
                .values_list("annotator_id", "phase", "n")
            }
        )
        self.at_quota = {(a, p) for (a, p), limit in limits.items() if used[(a, p)] >= limit}
        self.qualified = {p: [u.pk for u in self.active if u.is_qualified_for(p)] for p in PHASES}
        self.available = {
            p: [pk for pk in self.qualified[p] if (pk, p) not in self.at_quota] for p in PHASES
        }

    def could_qualify(self, phase: int, touched: set[int]) -> list[str]:
        return [
            u.username
            for u in self.active
            if not u.is_qualified_for(phase)
            and u.pk not in touched
            and (u.pk, phase) not in self.at_quota
            and not u.is_manager
        ][:3]


def _touched_by(accounts: list[int]):
    """How many of these accounts hold a task (of any status) on the row's article."""
    if not accounts:
        return Value(0, output_field=IntegerField())
    return Coalesce(
        Subquery(
            touches()
            .filter(article_id=OuterRef("article_id"), annotator_id__in=accounts)
            .order_by()
            .values("article_id")
            .annotate(n=Count("id"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        0,
    )


def _stuck_in(report_filter: ReportFilter, phase: int, who: _Who) -> QuerySet[Task]:
    """Waiting tasks of one phase that every available account has already touched.

    One account holds at most one task per article (one_task_per_annotator_per_article), so
    counting the article's tasks by those accounts counts the accounts.
    """
    pooled = _tasks(report_filter).filter(status=Task.Status.POOLED, phase=phase)
    available, qualified = who.available[phase], who.qualified[phase]
    if available:
        pooled = pooled.alias(free=_touched_by(available)).filter(free__gte=len(available))
    if not qualified:
        return pooled.annotate(reason=Value(NOBODY_QUALIFIED))
    return pooled.alias(seen=_touched_by(qualified)).annotate(
        reason=Case(
            When(seen__gte=len(qualified), then=Value(ALL_SEEN_ARTICLE)),
            default=Value(ALL_AT_QUOTA),
            output_field=CharField(),
        )
    )


def stuck_tasks(
    report_filter: ReportFilter | None = None,
    *,
    offset: int = 0,
    limit: int | None = None,
    who: _Who | None = None,
) -> list[dict]:
    """Waiting tasks that no active account may take now, each with the reason and a fix.

    In phase, then waiting order; `offset` and `limit` cut one page out of that list. The fix
    names up to three active accounts that have not touched the article and only lack the
    qualification; otherwise a new account is the way out.
    """
    report_filter = report_filter or ReportFilter()
    who = who or _Who()
    page: list[Task] = []
    for phase in PHASES:
        if limit is not None and len(page) >= limit:
            break
        rows = _stuck_in(report_filter, phase, who).select_related("claim", "article")
        rows = rows.order_by("created_at", "id")
        if offset:
            skipped = rows.count()
            if skipped <= offset:
                offset -= skipped
                continue
        end = None if limit is None else offset + limit - len(page)
        page += list(rows[offset:end])
        offset = 0
    touched: dict[int, set[int]] = defaultdict(set)
    for article_id, annotator_id in (
        touches()
        .filter(article_id__in={t.article_id for t in page})
        .values_list("article_id", "annotator_id")
    ):
        touched[article_id].add(annotator_id)
    return [
        {
            "task": task.pk,
            "phase": task.phase,
            "claim": task.claim_id,
            "article": task.article_id,
            "what": str(task.claim or task.article)[:100],
            "waiting_since": task.created_at.isoformat(),
            "reason": task.reason,  # type: ignore[attr-defined]  # _stuck_in's annotation
            "could_qualify": who.could_qualify(task.phase, touched[task.article_id]),
        }
        for task in page
    ]


def stuck_summary(report_filter: ReportFilter | None = None, who: _Who | None = None):
    """Stuck tasks counted by phase and reason, by the database."""
    report_filter = report_filter or ReportFilter()
    who = who or _Who()
    out = []
    for phase in PHASES:
        for reason, n in (
            _stuck_in(report_filter, phase, who)
            .values("reason")  # type: ignore[misc]  # _stuck_in's annotation, not a field
            .annotate(n=Count("id"))
            .values_list("reason", "n")
            .order_by("reason")
        ):
            out.append({"phase": phase, "reason": reason, "tasks": n})
    return out


def progress_report(
    report_filter: ReportFilter | None = None, *, stuck_page: int | None = None
) -> dict:
    """Every progress figure. With `stuck_page` (from 1), "stuck" holds that page only
    (settings.STUCK_PAGE_SIZE rows); without it, every stuck task (CSV, API, command)."""
    report_filter = report_filter or ReportFilter()
    who = _Who()
    summary = stuck_summary(report_filter, who)
    total = sum(row["tasks"] for row in summary)
    size = settings.STUCK_PAGE_SIZE
    pages = max(1, -(-total // size))
    if stuck_page is None:
        stuck = stuck_tasks(report_filter, who=who)
    else:
        stuck_page = min(max(1, stuck_page), pages)
        stuck = stuck_tasks(report_filter, offset=(stuck_page - 1) * size, limit=size, who=who)
    return {
        "filter": report_filter.as_dict(),
        "phases": phase_figures(report_filter),
        "days": daily_figures(report_filter),
        "outcomes": outcome_rates(report_filter),
        "annotators": annotator_figures(report_filter),
        "stuck": stuck,
        "stuck_summary": summary,
        "stuck_total": total,
        "stuck_pages": {"page": stuck_page or 1, "pages": pages if stuck_page else 1, "size": size},
        "speed_trap_seconds": settings.SPEED_TRAP_SECONDS,
    }
