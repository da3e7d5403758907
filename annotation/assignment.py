"""Who gets which task: "Start next", manager hand-outs, leases, releases and quotas.

The rules (DESIGN.md section 2): an annotator only receives phases they are qualified for,
never a claim of an article they have touched in any phase, and the oldest waiting work of
the phase, disputes first. Claiming locks the chosen row with SKIP LOCKED, so concurrent
"Start next" calls never receive the same task, and the database's one-task-per-article
constraint settles the rare race of one annotator's two simultaneous requests.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from annotation.models import PhaseQuota, Task, User
from annotation.vocabulary import Phase
from annotation.workflow import WorkflowError, audit

# A claim attempt only fails when the same annotator races themselves for two claims of one
# article, or when every eligible task is locked by another claim still in flight (which may
# fail and give it back); a few short tries settle both.
MAX_CLAIM_ATTEMPTS = 8
CLAIM_RETRY_PAUSE_SECONDS = 0.01


class NoTaskAvailable(Exception):
    """Why "Start next" has nothing to give; the message is shown to the annotator."""


# --- The same-article rule, defined once ----------------------------------------------
# An annotator has touched an article when any task of it names them, in any status (a
# lapsed or released turn counts: they have seen it). Every form the rule takes is built
# from `touches()`: the pool's ORM filter, the one-statement claim's SQL, the check of one
# hand-out, and review's stuck-work figures.


def touches() -> QuerySet[Task]:
    """The tasks that mark an article as touched by their annotator."""
    return Task.objects.filter(annotator__isnull=False).order_by()


def touched_articles(annotator: User | int) -> QuerySet[Task, Any]:
    """The ids of the articles `annotator` has touched (a subquery)."""
    return touches().filter(annotator=annotator).values("article_id")


def has_touched(annotator: User, article_id: int) -> bool:
    return touches().filter(annotator=annotator, article_id=article_id).exists()


@functools.cache
def _touched_articles_sql() -> str:
    """touched_articles() as SQL taking %(annotator)s, compiled once from the ORM form."""
    sql, params = touched_articles(0).query.sql_with_params()
    if params != (0,) or sql.count("%s") != 1 or "%(" in sql:
        raise ImproperlyConfigured(f"unexpected SQL for the same-article rule: {sql}")
    return sql.replace("%s", "%(annotator)s")


def counted_tasks(annotator: User, phase: int) -> QuerySet[Task]:
    """The tasks that count against a quota: held now or handed in."""
    return Task.objects.filter(annotator=annotator, phase=phase).counted_for_quota()


def quota_left(annotator: User, phase: int) -> int | None:
    """How many more tasks of the phase the annotator may take; None when unlimited."""
    quota = PhaseQuota.objects.filter(annotator=annotator, phase=phase).first()
    if quota is None:
        return None
    return max(0, quota.limit - counted_tasks(annotator, phase).count())


def claimable_pool(annotator: User, phase: int) -> QuerySet[Task]:
    """Waiting tasks of the phase this annotator may receive, in hand-out order."""
    return (
        Task.objects.filter(phase=phase, status=Task.Status.POOLED)
        .exclude(article_id__in=touched_articles(annotator))
        .order_by("-priority", "created_at", "id")
    )


def current_task(annotator: User, phase: int) -> Task | None:
    """The task of this phase the annotator is on, or the next one a manager assigned them."""
    return (
        Task.objects.filter(annotator=annotator, phase=phase)
        .held()
        .order_by("-status", "assigned_at", "id")  # in_progress sorts before assigned
        .first()
    )


def phase_standings(annotator: User) -> dict[int, dict[str, Any]]:
    """Per phase, where the annotator stands, for the control panel: tasks handed in and
    held, the pk of the task current_task() would name, the pk of the last hand-in and what
    quota_left() would say. One statement for all phases: the panel is the page every
    annotator opens between tasks, and three ORM querysets' compile cost more than the
    database's work."""
    sql = _STANDINGS_SQL[connection.vendor == "postgresql"]
    with connection.cursor() as cursor:
        cursor.execute(sql, {"annotator": annotator.pk})
        rows = {row[0]: row[1:] for row in cursor.fetchall()}
    standings = {}
    for phase in Phase.values:
        done, held, current_pk, last_pk, limit = rows.get(phase, (0, 0, None, None, None))
        standings[phase] = {
            "done": done,
            "held": held,
            "current_pk": current_pk,
            "last_submitted_pk": last_pk,
            # Quotas count what is held and what was handed in, as counted_tasks() does.
            "quota_left": None if limit is None else max(0, limit - done - held),
        }
    return standings


# Where an annotator stands in a phase, in one round trip: the task they hold (the one in
# progress first) and their quota. The same rules as current_task() and quota_left().
def _sql_statuses(*statuses: str) -> str:
    """Task statuses as SQL literals: written into a statement, not passed as parameters,
    so the planner can match the partial pool index (a generic plan for a parameter can't)."""
    if not all(re.fullmatch("[a-z_]+", status) for status in statuses):
        raise ImproperlyConfigured(f"a task status that is not a plain word: {statuses}")
    return ", ".join(f"'{status}'" for status in statuses)


_STANDING_SQL = f"""
SELECT (SELECT held.id FROM annotation_task AS held
         WHERE held.annotator_id = %(annotator)s AND held.phase = %(phase)s
           AND held.status IN ({_sql_statuses(*Task.HELD_STATUSES)})
         ORDER BY held.status DESC, held.assigned_at, held.id LIMIT 1),
       (SELECT quota."limit" FROM annotation_phasequota AS quota
         WHERE quota.annotator_id = %(annotator)s AND quota.phase = %(phase)s)
"""


# The panel's standings, every phase in one statement (this one for SQLite, the next for
# PostgreSQL): the counts, the task current_task() names (in progress before assigned, then
# the oldest), the last hand-in (the latest submitted_at, the highest id among equals) and
# the quota.
def _task_of_phase(condition: str) -> str:
    return (
        "FROM annotation_task AS t WHERE t.annotator_id = %(annotator)s"
        f" AND t.phase = phases.phase AND {condition}"
    )


_HELD = f"t.status IN ({_sql_statuses(*Task.HELD_STATUSES)})"
_SUBMITTED = f"t.status = {_sql_statuses(Task.Status.SUBMITTED)}"
_STANDINGS_PORTABLE_SQL = f"""
SELECT phases.phase,
       (SELECT COUNT(*) {_task_of_phase(_SUBMITTED)}),
       (SELECT COUNT(*) {_task_of_phase(_HELD)}),
       (SELECT t.id {_task_of_phase(_HELD)} ORDER BY t.status DESC, t.assigned_at, t.id LIMIT 1),
       (SELECT t.id {_task_of_phase(_SUBMITTED + " AND t.submitted_at IS NOT NULL")}
         ORDER BY t.submitted_at DESC, t.id DESC LIMIT 1),
       (SELECT quota."limit" FROM annotation_phasequota AS quota
         WHERE quota.annotator_id = %(annotator)s AND quota.phase = phases.phase)
FROM ({" UNION ALL ".join(f"SELECT {int(phase)} AS phase" for phase in Phase.values)}) AS phases
"""
# On PostgreSQL, one pass over the annotator's tasks instead of five subqueries per phase:
# the same answers (a test compares both), planned in half the time. Phases with neither
# task nor quota have no row.
_STANDINGS_POSTGRESQL_SQL = f"""
SELECT COALESCE(mine.phase, quota.phase), COALESCE(mine.done, 0), COALESCE(mine.held, 0),
       mine.current_id, mine.last_id, quota."limit"
FROM (SELECT t.phase,
             COUNT(*) FILTER (WHERE {_SUBMITTED}) AS done,
             COUNT(*) FILTER (WHERE {_HELD}) AS held,
             (ARRAY_AGG(t.id ORDER BY t.status DESC, t.assigned_at, t.id)
               FILTER (WHERE {_HELD}))[1] AS current_id,
             (ARRAY_AGG(t.id ORDER BY t.submitted_at DESC, t.id DESC)
               FILTER (WHERE {_SUBMITTED} AND t.submitted_at IS NOT NULL))[1] AS last_id
      FROM annotation_task AS t WHERE t.annotator_id = %(annotator)s GROUP BY t.phase) AS mine
FULL JOIN (SELECT phase, "limit" FROM annotation_phasequota
           WHERE annotator_id = %(annotator)s) AS quota ON quota.phase = mine.phase
"""
# Indexed by "is this PostgreSQL?".
_STANDINGS_SQL = (_STANDINGS_PORTABLE_SQL, _STANDINGS_POSTGRESQL_SQL)


def _standing(annotator: User, phase: int) -> tuple[int | None, int | None]:
    with connection.cursor() as cursor:
        cursor.execute(_STANDING_SQL, {"annotator": annotator.pk, "phase": phase})
        current_id, limit = cursor.fetchone()
    return current_id, limit


def next_task(annotator: User, phase: int) -> Task:
    """The task the annotator should work on now in this phase ("Start next").

    Resumes the one in progress or assigned to them; otherwise claims the oldest waiting
    task they may receive. Raises NoTaskAvailable with a reason to show.
    """
    if not annotator.is_qualified_for(phase):
        raise NoTaskAvailable(f"You are not qualified for phase {phase}; ask a manager.")
    if connection.vendor == "postgresql":
        # The usual Start next: back to the task already held, in one statement.
        resumed = _resume_in_one_statement(annotator, phase)
        if resumed is not None:
            return resumed
    current_id, limit = _standing(annotator, phase)
    if current_id is not None:
        current = Task.objects.get(pk=current_id).start()
        if current.status == Task.Status.IN_PROGRESS:
            return current
    # Work whose lease lapsed and that nobody took since comes back first, with its draft.
    lapsed = (
        Task.objects.filter(annotator=annotator, phase=phase, status=Task.Status.EXPIRED)
        .filter(replaced_by__status=Task.Status.POOLED, replaced_by__annotator__isnull=True)
        .order_by("-lease_expires_at")
        .first()
    )
    if lapsed is not None and reclaim_lapsed(lapsed):
        return lapsed
    if limit is not None and counted_tasks(annotator, phase).count() >= limit:
        raise NoTaskAvailable(f"You have reached your quota for phase {phase}. Thank you!")
    claim = _claim_in_one_statement if connection.vendor == "postgresql" else _claim_with_orm
    for attempt in range(1, MAX_CLAIM_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                task = claim(annotator, phase)
        except IntegrityError:
            continue
        if task is not None:
            return task
        # SKIP LOCKED passes over tasks that other claims hold at this instant; only an
        # empty pool (locked rows included) means there is really nothing for this person.
        if not claimable_pool(annotator, phase).exists():
            raise NoTaskAvailable(f"No phase {phase} work is waiting for you right now.")
        time.sleep(CLAIM_RETRY_PAUSE_SECONDS * attempt)
    raise NoTaskAvailable("Too many people asked at once; please try again.")


# Resuming the task held in a phase on PostgreSQL, written out once as the claim is: the
# task current_task() names (the one in progress first), opened as start() opens it, found
# and updated in one round trip instead of three. The outer condition is checked again
# under the row lock, so a task released or expired a moment ago is not revived.
_RESUME_SQL = f"""
UPDATE annotation_task
   SET status = {_sql_statuses(Task.Status.IN_PROGRESS)},
       opened_at = COALESCE(opened_at, %(now)s),
       last_activity_at = %(now)s, lease_expires_at = %(lease)s
 WHERE id = (
       SELECT held.id FROM annotation_task AS held
        WHERE held.annotator_id = %(annotator)s AND held.phase = %(phase)s
          AND held.status IN ({_sql_statuses(*Task.HELD_STATUSES)})
        ORDER BY held.status DESC, held.assigned_at, held.id
        LIMIT 1)
   AND status IN ({_sql_statuses(*Task.HELD_STATUSES)})
RETURNING {", ".join(str(field.column) for field in Task._meta.concrete_fields)}
"""


def _resume_in_one_statement(annotator: User, phase: int) -> Task | None:
    now = timezone.now()
    params: dict[str, Any] = {
        "annotator": annotator.pk,
        "phase": phase,
        "now": now,
        "lease": now + settings.TASK_LEASE,
    }
    with connection.cursor() as cursor:
        cursor.execute(_RESUME_SQL, params)
        row = cursor.fetchone()
    return None if row is None else _task_from_row(row)


def _task_from_row(row: Sequence[Any]) -> Task:
    """The Task of a row of all its columns in field order, as the ORM would build it: a
    RawQuerySet's column mapping cost twice the statement itself on every Start next."""
    fields = Task._meta.concrete_fields
    values = [
        functools.reduce(
            lambda value, convert: convert(value, field, connection),
            field.get_db_converters(connection),
            value,
        )
        for field, value in zip(fields, row, strict=True)
    ]
    return Task.from_db(connection.alias, [field.attname for field in fields], values)


def _claim_with_orm(annotator: User, phase: int) -> Task | None:
    task = (
        claimable_pool(annotator, phase).select_for_update(skip_locked=True, of=("self",)).first()
    )
    if task is not None:
        task.hand_over(annotator, Task.Status.IN_PROGRESS)
    return task


# The claim of "Start next" on PostgreSQL, written out once: the hottest statement of the
# platform, and compiling the equivalent ORM query costs more than running it. It picks
# exactly what claimable_pool() picks (tests/annotation/test_assignment.py runs both paths):
# the same-article rule is touched_articles() compiled, the statuses are Task's.
_CLAIM_SQL = f"""
UPDATE annotation_task
   SET annotator_id = %(annotator)s, status = {_sql_statuses(Task.Status.IN_PROGRESS)},
       assigned_at = %(now)s,
       opened_at = %(now)s, last_activity_at = %(now)s, lease_expires_at = %(lease)s
 WHERE id = (
       SELECT pool.id FROM annotation_task AS pool
        WHERE pool.phase = %(phase)s AND pool.status = {_sql_statuses(Task.Status.POOLED)}
          AND pool.article_id NOT IN ({{touched}})
        ORDER BY pool.priority DESC, pool.created_at, pool.id
        LIMIT 1
          FOR UPDATE SKIP LOCKED)
RETURNING *
"""


@functools.cache
def _claim_sql() -> str:
    return _CLAIM_SQL.format(touched=_touched_articles_sql())


def _claim_in_one_statement(annotator: User, phase: int) -> Task | None:
    """Pick, lock and hand over the oldest eligible task in one UPDATE.

    The row lock lives only as long as the statement, not across Python code, so many
    concurrent claimers do not wait on one another (benchmarks/assignment.py measures it).
    """
    now = timezone.now()
    params = {
        "annotator": annotator.pk,
        "phase": phase,
        "now": now,
        "lease": now + settings.TASK_LEASE,
    }
    return next(iter(Task.objects.raw(_claim_sql(), params)), None)


def expire_lapsed_leases(now: datetime | None = None) -> int:
    """Return tasks idle past their lease to the pool; the lapsed task keeps its draft.

    Runs every minute on Celery beat (annotation.tasks.expire_leases), not inside "Start
    next", which stays as cheap as possible.
    """
    now = now or timezone.now()
    expired = 0
    with transaction.atomic():
        lapsed = Task.objects.filter(
            status=Task.Status.IN_PROGRESS, lease_expires_at__lt=now
        ).select_for_update(skip_locked=True)
        for task in lapsed:
            task.expire()
            expired += 1
    return expired


def reclaim_lapsed(task: Task) -> bool:
    """Give a task whose lease lapsed back to its annotator, draft and version intact, if
    nobody has taken its replacement yet. True when it is theirs again.

    Called when they show they are still at it (an autosave from their open tab, or "Start
    next"), so a lapse never costs work to someone who was only slow. A manager's release is
    a decision and is never undone here.
    """
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=task.pk)
        if task.status != Task.Status.EXPIRED:
            return task.status == Task.Status.IN_PROGRESS
        waiting = (
            Task.objects.select_for_update()
            .filter(replaces=task, status=Task.Status.POOLED, annotator__isnull=True)
            .first()
        )
        if waiting is None:
            return False
        # Nobody ever held the replacement: removing it leaves no trace to keep.
        waiting.delete()
        task.reclaim()
    return True


# --- Manager actions -------------------------------------------------------------------


@transaction.atomic
def release_task(task: Task, manager: User) -> Task:
    """Take an open task away from its annotator; a fresh copy waits in the pool."""
    task = Task.objects.select_for_update().get(pk=task.pk)
    holder = task.annotator
    replacement = task.release()
    audit(manager, "release", f"released task {task.pk} from {holder}", task=task.pk)
    return replacement


@transaction.atomic
def reassign_task(task: Task, annotator: User, manager: User) -> Task:
    """Move an open or waiting task to a named annotator."""
    task = Task.objects.select_for_update().get(pk=task.pk)
    if task.is_held:
        task = release_task(task, manager)
    task.check_move(Task.Status.ASSIGNED)
    _check_can_receive(annotator, task)
    try:
        with transaction.atomic():
            task.hand_over(annotator, Task.Status.ASSIGNED)
    except IntegrityError as exc:
        raise WorkflowError(
            f"{annotator} has already worked on this article and cannot take task {task.pk}"
        ) from exc
    audit(manager, "assign", f"assigned task {task.pk} to {annotator}", task=task.pk)
    return task


def assignable_annotators() -> QuerySet[User]:
    """Accounts a manager may hand work to: active annotators, never managers or researchers."""
    return User.objects.filter(
        is_active=True, role=User.Role.ANNOTATOR, is_superuser=False
    ).order_by("username")


def _check_can_receive(annotator: User, task: Task) -> None:
    """A manager's hand-out refused unless the account may take it. Assignment's rule, not
    Task's: it reads the account, the article's other tasks and the phase quota."""
    if not annotator.takes_handed_out_work:
        raise WorkflowError(
            f"{annotator} is not an annotator account; only annotators receive work"
        )
    if not annotator.is_qualified_for(task.phase):
        raise WorkflowError(f"{annotator} is not qualified for phase {task.phase}")
    if has_touched(annotator, task.article_id):
        raise WorkflowError(f"{annotator} has already worked on this article")
    if quota_left(annotator, task.phase) == 0:
        raise WorkflowError(f"{annotator} has reached their phase {task.phase} quota")


def assign_tasks(
    manager: User,
    phase: int,
    annotators: Sequence[User],
    count: int,
    *,
    fill_evenly: bool = True,
) -> dict[User, list[Task]]:
    """Pre-assign up to `count` waiting tasks of a phase among the annotators.

    With fill_evenly, each task goes to whoever holds the fewest open tasks of the phase, so
    the selected annotators end up level; otherwise they take turns in the order given.
    Annotators who are unqualified, at quota or have no eligible task left are passed over.
    """
    open_counts = dict(
        Task.objects.filter(annotator__in=annotators, phase=phase, status__in=Task.OPEN_STATUSES)
        .values_list("annotator")
        .annotate(n=Count("id"))
    )
    load = {
        a: open_counts.get(a.pk, 0)
        for a in annotators
        if a.takes_handed_out_work and a.is_qualified_for(phase)
    }
    handed: dict[User, list[Task]] = {a: [] for a in annotators}
    turn = 0
    while count > 0 and load:
        if fill_evenly:
            annotator = min(load, key=lambda a: (load[a], list(load).index(a)))
        else:
            annotator = list(load)[turn % len(load)]
            turn += 1
        left = quota_left(annotator, phase)
        task = None
        if left is None or left > 0:
            with transaction.atomic():
                task = (
                    claimable_pool(annotator, phase)
                    .select_for_update(skip_locked=True, of=("self",))
                    .first()
                )
                if task is not None:
                    task.hand_over(annotator, Task.Status.ASSIGNED)
        if task is None:
            del load[annotator]
            continue
        handed[annotator].append(task)
        load[annotator] += 1
        count -= 1
    given = {a.username: len(t) for a, t in handed.items() if t}
    audit(
        manager,
        "assign",
        f"assigned {sum(given.values())} phase {phase} task(s): "
        + (", ".join(f"{n} to {name}" for name, n in given.items()) or "none available"),
        phase=phase,
        assigned=given,
        fill_evenly=fill_evenly,
    )
    return handed


def queue_overview() -> list[dict[str, Any]]:
    """Per phase: waiting, assigned, in progress and done today (for the manager page)."""
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    rows = Task.objects.values("phase").annotate(
        waiting=Count("id", filter=Q(status=Task.Status.POOLED)),
        assigned=Count("id", filter=Q(status=Task.Status.ASSIGNED)),
        in_progress=Count("id", filter=Q(status=Task.Status.IN_PROGRESS)),
        done_today=Count("id", filter=Q(status=Task.Status.SUBMITTED, submitted_at__gte=today)),
    )
    by_phase: dict[int, dict[str, Any]] = {row["phase"]: dict(row) for row in rows}
    return [
        by_phase.get(
            phase, {"phase": phase, "waiting": 0, "assigned": 0, "in_progress": 0, "done_today": 0}
        )
        for phase in Phase.values
    ]
