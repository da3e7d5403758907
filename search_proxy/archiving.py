"""Archive jobs: every cited page gets an Internet Archive copy, once, without blocking anyone.

- `queue_archiving(urls)` is what the annotation workflow calls on submit: one Source per
  distinct normalised URL (not "metadata", not an empty answer), left pending. That row is
  the whole hand-over (a transactional outbox): the submit never talks to the broker, so it
  takes the same time whether the broker is up, down or archiving is off.
- `queue_due_jobs()` (the beat, every ARCHIVE_DISPATCH_SECONDS) sends the jobs of pending
  sources, of jobs whose worker died, of old failures, and of archived pages whose first
  capture is still unknown; nothing while the archive has paused the client.
- `run_archive_job(source_id)` (the Celery task's body) claims the source with a conditional
  UPDATE, so a redelivered or duplicate message does nothing. Its look-ups run once per
  round: the first capture (CDX) for the temporal check, then a capture younger than
  ARCHIVE_RECENT_DAYS to reuse (availability, then CDX); only otherwise it asks Save Page
  Now, in the slot the global timetable gives it (ARCHIVE_SAVE_RATE_LIMIT a minute shared by
  all workers through ArchiveSave rows). A job waiting for its slot keeps its look-ups.
- Every request goes through the client's one line to the archive (archive.turn): a 429
  pauses every job of every worker until its Retry-After, which costs no attempt.
- Timeouts, resets and 5xx are retried with exponential backoff and full jitter; look-ups
  and saves count their failures apart (a failing look-up spends no save attempt); after
  ARCHIVE_MAX_ATTEMPTS of either the source is "failed" with the reason (the dead letter),
  which a manager or `retry_failed_archives` queues again.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable
from datetime import datetime, timedelta
from enum import Enum
from typing import Any, TypeGuard

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from search_proxy import archive
from search_proxy.archive import ArchiveError, ArchiveWait
from search_proxy.models import ArchiveGate, ArchiveSave, FetchedPage, Source
from search_proxy.webaddress import normalize_url, unwrap_archive_url

logger = logging.getLogger(__name__)

ARCHIVE_TASK = "search_proxy.tasks.archive_source"
# Any fixed number: the key of the PostgreSQL advisory lock that serialises save slots.
_SAVE_SLOT_LOCK = 0x41524348  # "ARCH"
# Reserved save times are spaced so that no SAVE_WINDOW holds more than the limit, and a
# save goes out at most SAVE_LATENESS after its reserved time: then no 60 s of actual sends
# (what the archive counts) holds more than the limit either.
SAVE_LATENESS = timedelta(seconds=2)
SAVE_WINDOW = timedelta(seconds=60) + SAVE_LATENESS
EARLIEST_CHECKS_PER_RUN = 100  # first-capture look-ups the beat sends at a time


def is_web_address(url: str | None) -> TypeGuard[str]:
    return url is not None and url.strip().lower().startswith(("http://", "https://"))


def queue_archiving(urls: Iterable[str | None]) -> list[int]:
    """Sources for these addresses, each left pending for the beat to send once it needs
    archiving. Call inside the submit's transaction: a rolled back submit leaves nothing.
    Returns the IDs of the sources waiting."""
    wanted: dict[str, str] = {}
    for url in urls:
        if is_web_address(url):
            wanted.setdefault(normalize_url(url.strip()), url.strip())
    sources = Source.for_urls(list(wanted.values()))
    waiting = []
    for url in wanted.values():
        source = sources[url]
        if source.archive_status == Source.ArchiveStatus.PENDING and source.pk not in waiting:
            waiting.append(source.pk)
    return waiting


def send_jobs(source_ids: Iterable[int], *, countdown: float = 0) -> None:
    """Put archive jobs on the broker (from the beat and the workers, never from a request).
    A broker that is down loses nothing: the sources stay due and the beat sends them again
    once their mark is older than ARCHIVE_JOB_LEASE."""
    # By name: the task module imports this one.
    for source_id in source_ids:
        try:
            current_app.signature(ARCHIVE_TASK, args=(source_id,)).apply_async(
                countdown=countdown or None, retry=False
            )
        except Exception:
            logger.exception("could not queue the archive job of source %s", source_id)


def queue_due_jobs(limit: int = 1000) -> list[int]:
    """The beat: send jobs for what waits. Pending sources whose wait is over and whose job
    is not on its way, jobs whose worker died, failed sources older than
    ARCHIVE_RETRY_FAILED_HOURS (an offline machine catches up), and archived pages whose
    first capture is still unknown. Nothing when archiving is off or the archive has paused
    the client (the jobs could only wait)."""
    if not settings.ARCHIVE_ENABLED:
        return []
    now = timezone.now()
    gate = ArchiveGate.state()
    if gate.paused_until and gate.paused_until > now:
        return []
    lease = timedelta(seconds=settings.ARCHIVE_JOB_LEASE)
    if settings.ARCHIVE_RETRY_FAILED_HOURS:
        old_failures = Source.objects.filter(
            archive_status=Source.ArchiveStatus.FAILED,
            claimed_at__lt=now - timedelta(hours=settings.ARCHIVE_RETRY_FAILED_HOURS),
        )
        retry_failed(old_failures.values_list("pk", flat=True)[:limit])
    ids = list(
        Source.objects.to_dispatch(now=now, lost_before=now - lease)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    asked_before = now - timedelta(seconds=settings.ARCHIVE_RETRY_BACKOFF_MAX)
    checks = list(
        Source.objects.missing_earliest_capture(asked_before=asked_before)
        .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=now - lease))
        .order_by("pk")
        .values_list("pk", flat=True)[:EARLIEST_CHECKS_PER_RUN]
    )
    Source.objects.filter(pk__in=ids + checks).update(queued_at=now)
    send_jobs(ids + checks)
    return ids + checks


def retry_failed(source_ids: Iterable[int] | None = None) -> list[int]:
    """Make failed sources (all, or these) pending again with fresh counts and look-ups; the
    beat sends them within ARCHIVE_DISPATCH_SECONDS."""
    failed = Source.objects.filter(archive_status=Source.ArchiveStatus.FAILED)
    if source_ids is not None:
        failed = failed.filter(pk__in=list(source_ids))
    ids = list(failed.values_list("pk", flat=True))
    Source.objects.filter(pk__in=ids, archive_status=Source.ArchiveStatus.FAILED).update(
        archive_status=Source.ArchiveStatus.PENDING,
        archive_attempts=0,
        lookup_failures=0,
        next_attempt_at=None,
        queued_at=None,
        looked_up_at=None,
    )
    return ids


# --- The job -------------------------------------------------------------------------------


class Step(Enum):
    LOOKUP = "look-ups"  # and everything before the save request: failures count apart
    SAVE = "save"  # the save request went out: a failure spends a save attempt


class _Round:
    """How far one run of a job got, for counting its failure."""

    step = Step.LOOKUP


class _SaveDeferred(Exception):
    def __init__(self, wait: float) -> None:
        self.wait = wait


def claim(source_id: int) -> bool:
    """Take the source for one run: exactly one worker wins, redeliveries find nothing."""
    now = timezone.now()
    due = Source.objects.due_for_archive(
        stale_before=now - timedelta(seconds=settings.ARCHIVE_JOB_LEASE)
    )
    return bool(
        due.filter(pk=source_id).update(archive_status=Source.ArchiveStatus.RUNNING, claimed_at=now)
    )


def run_archive_job(source_id: int) -> str | None:
    """One run of a source's archive job. Returns its new status, or None when another
    worker has it, nothing is left to do, or archiving is off. Schedules its own next run
    when one is due."""
    if not settings.ARCHIVE_ENABLED:
        return None
    if claim(source_id):
        return _archive_run(Source.objects.get(pk=source_id))
    if _claim_earliest_check(source_id):
        return _check_earliest_capture(Source.objects.get(pk=source_id))
    return None


def _archive_run(source: Source) -> str:
    run = _Round()
    try:
        capture = _look_up(source) if source.looked_up_at is None else None
        if capture is None:
            capture = _save(source, run)
    except _SaveDeferred as exc:
        return _wait(source, exc.wait)
    except ArchiveWait as exc:
        return _wait(source, exc.retry_after or 0.0, reason=exc.reason)
    except ArchiveError as exc:
        return _failed_attempt(source, run.step, exc)
    except SoftTimeLimitExceeded:
        limit = settings.ARCHIVE_JOB_SOFT_TIME_LIMIT
        return _failed_attempt(source, run.step, ArchiveError(f"the job ran past {limit:g} s"))
    except Exception as exc:  # a bug must not leave the source "running" for good
        logger.exception("archive job of source %s crashed", source.pk)
        return _failed_attempt(source, run.step, ArchiveError(f"{type(exc).__name__}: {exc}"))
    fields = {
        "archive_status": Source.ArchiveStatus.ARCHIVED,
        "archived_url": capture.url,
        "archived_at": capture.taken_at,
        "last_archive_error": "",
        "next_attempt_at": None,
    }
    source.refresh_from_db(fields=["earliest_capture_at", "archive_had_captures"])
    if source.earliest_capture_at is None and source.archive_had_captures is False:
        # The archive had no capture before ours: ours is its first (the temporal check).
        fields["earliest_capture_at"] = capture.taken_at
    _running(source).update(**fields)
    return Source.ArchiveStatus.ARCHIVED


def _running(source: Source) -> QuerySet[Source]:
    return Source.objects.filter(pk=source.pk, archive_status=Source.ArchiveStatus.RUNNING)


def _look_up(source: Source) -> archive.Capture | None:
    """This round's look-ups, each result kept on the source: the first capture, then a
    recent one to reuse. None when a save is needed (and `looked_up_at` says so)."""
    now = timezone.now()
    recent_age = timedelta(days=settings.ARCHIVE_RECENT_DAYS)
    never_captured = False
    if source.earliest_capture_at is None:
        first = archive.earliest_capture(source.url)
        if first is not None:
            Source.objects.filter(pk=source.pk).update(
                earliest_capture_at=first.taken_at, archive_had_captures=True
            )
            if archive.is_recent(first, now=now, max_age=recent_age):
                return first  # every capture is at least this recent
        never_captured = first is None
    _note_publication_date(source)
    # When the CDX index just said it has nothing, only the availability API is left to ask.
    recent = archive.newest_capture(source.url, ask_cdx=not never_captured)
    if recent and archive.is_recent(recent, now=now, max_age=recent_age):
        return recent
    had_captures = recent is not None or not never_captured
    Source.objects.filter(pk=source.pk).update(
        looked_up_at=timezone.now(), archive_had_captures=had_captures
    )
    return None


def _note_publication_date(source: Source) -> None:
    if source.published is None:
        published = (
            FetchedPage.objects.of_url(source.normalized_url)
            .filter(published__isnull=False)
            .values_list("published", flat=True)
            .first()
        )
        if published:
            Source.objects.filter(pk=source.pk).update(published=published)


def _save(source: Source, run: _Round) -> archive.Capture:
    # The slot is checked and the save sent in one turn on the line, so the save leaves
    # within SAVE_LATENESS of its reserved time whatever other jobs do.
    with archive.turn():
        wait = take_save_slot(source.pk)
        if wait:
            raise _SaveDeferred(wait)
        saves = Source.objects.filter(pk=source.pk)
        saves.update(archive_attempts=F("archive_attempts") + 1)
        run.step = Step.SAVE
        try:
            return archive.save(source.url)
        except ArchiveWait:
            # A 429 answers the client's pace, not this page: the attempt is given back.
            saves.update(archive_attempts=F("archive_attempts") - 1)
            raise


def take_save_slot(source_id: int, *, now: datetime | None = None) -> float:
    """The source's save slot in the global timetable: 0 when it may save now (the slot is
    marked sent), else the seconds until its reserved slot.

    Slots are handed out first come, first served, each at least SAVE_WINDOW after the slot
    ARCHIVE_SAVE_RATE_LIMIT places before it, so no SAVE_WINDOW holds more than the limit. A
    waiting job comes back at its slot, once, instead of all waiting jobs at every free one.
    A job that comes back later than SAVE_LATENESS lets its slot go and queues again.
    """
    now = now or timezone.now()
    limit = settings.ARCHIVE_SAVE_RATE_LIMIT
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_SAVE_SLOT_LOCK])
        mine = ArchiveSave.objects.filter(source_id=source_id, sent=False).first()
        if mine is not None:
            if mine.sent_at > now:
                return (mine.sent_at - now).total_seconds()
            if now - mine.sent_at <= SAVE_LATENESS:
                ArchiveSave.objects.filter(pk=mine.pk).update(sent=True)
                return 0.0
            mine.delete()  # missed: never sent, so it counts for nothing
        latest = list(
            ArchiveSave.objects.order_by("-sent_at").values_list("sent_at", flat=True)[:limit]
        )
        at = max([now, *latest[:1]])  # after every slot already given out
        if len(latest) == limit:
            at = max(at, latest[-1] + SAVE_WINDOW)
        if at <= now:
            ArchiveSave.objects.create(source_id=source_id, sent_at=now, sent=True)
            return 0.0
        ArchiveSave.objects.create(source_id=source_id, sent_at=at, sent=False)
        return (at - now).total_seconds()


def backoff_ceiling(attempt: int) -> float:
    """The longest wait after the `attempt`-th failure: doubling up to the ceiling."""
    ceiling: float = min(
        settings.ARCHIVE_RETRY_BACKOFF * 2 ** max(attempt - 1, 0),
        settings.ARCHIVE_RETRY_BACKOFF_MAX,
    )
    return ceiling


def backoff_seconds(attempt: int, retry_after: float | None = None) -> float:
    """Exponential backoff with full jitter, never shorter than the server's Retry-After."""
    ceiling = backoff_ceiling(attempt)
    delay = random.uniform(ceiling / 2, ceiling)
    return max(delay, retry_after or 0.0)


def _wait(source: Source, wait: float, *, reason: str = "") -> str:
    """Come back in `wait` seconds: waiting (for a slot, a pause, the line) is no failure."""
    fields = {"last_archive_error": reason} if reason else {}
    return _reschedule(source, max(wait, 0.0) + random.uniform(0, 1), **fields)


def _reschedule(source: Source, wait: float, **fields: Any) -> str:
    at = timezone.now() + timedelta(seconds=wait)
    _running(source).update(
        archive_status=Source.ArchiveStatus.PENDING, next_attempt_at=at, queued_at=at, **fields
    )
    send_jobs([source.pk], countdown=wait)
    return Source.ArchiveStatus.PENDING


def _failed_attempt(source: Source, step: Step, exc: ArchiveError) -> str:
    source.refresh_from_db(fields=["archive_attempts", "lookup_failures"])
    if step is Step.SAVE:
        failures = source.archive_attempts  # counted when the save was sent
    else:
        failures = source.lookup_failures + 1
        _running(source).update(lookup_failures=failures)
    if not exc.retryable or failures >= settings.ARCHIVE_MAX_ATTEMPTS:
        _running(source).update(
            archive_status=Source.ArchiveStatus.FAILED,
            last_archive_error=exc.reason,
            next_attempt_at=None,
        )
        return Source.ArchiveStatus.FAILED
    wait = backoff_seconds(failures, exc.retry_after)
    return _reschedule(source, wait, last_archive_error=exc.reason)


# --- Earliest captures still unknown -------------------------------------------------------


def _claim_earliest_check(source_id: int) -> bool:
    now = timezone.now()
    asked_before = now - timedelta(seconds=settings.ARCHIVE_RETRY_BACKOFF_MAX)
    return bool(
        Source.objects.missing_earliest_capture(asked_before=asked_before)
        .filter(pk=source_id)
        .update(claimed_at=now)
    )


def _check_earliest_capture(source: Source) -> str:
    """Ask the CDX index for the first capture of an archived page again: until it is known,
    the temporal check cannot judge the page. A failure waits for the next round."""
    try:
        first = archive.earliest_capture(unwrap_archive_url(source.url))
    except ArchiveError as exc:
        logger.info("first capture of source %s still unknown: %s", source.pk, exc.reason)
        return Source.ArchiveStatus.ARCHIVED
    if first is not None:
        Source.objects.filter(pk=source.pk, earliest_capture_at__isnull=True).update(
            earliest_capture_at=first.taken_at
        )
    return Source.ArchiveStatus.ARCHIVED
