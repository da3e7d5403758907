"""Archive jobs: every cited page gets an Internet Archive copy, once, without blocking anyone.

- `queue_archiving(urls)` is what the annotation workflow calls on submit: one Source per
  distinct normalised URL (not "metadata", not an empty answer), and one job for each that
  still needs archiving, sent after the transaction commits.
- `run_archive_job(source_id)` (the Celery task's body) claims the source with a conditional
  UPDATE, so a redelivered or duplicate message does nothing. It reuses a capture younger
  than ARCHIVE_RECENT_DAYS (availability, then CDX) and only otherwise asks Save Page Now,
  within the global ARCHIVE_SAVE_RATE_LIMIT shared by all workers through ArchiveSave rows.
  It records the earliest capture (CDX) for the temporal check.
- Timeouts, 429 and 5xx are retried with exponential backoff and full jitter, never sooner
  than the server's Retry-After; after ARCHIVE_MAX_ATTEMPTS the source is "failed" with the
  reason (the dead letter), which a manager or `retry_failed_archives` sends again.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from search_proxy import archive
from search_proxy.archive import ArchiveError
from search_proxy.models import ArchiveSave, FetchedPage, Source
from search_proxy.webaddress import normalize_url

logger = logging.getLogger(__name__)

ARCHIVE_TASK = "search_proxy.tasks.archive_source"
# Any fixed number: the key of the PostgreSQL advisory lock that serialises save slots.
_SAVE_SLOT_LOCK = 0x41524348  # "ARCH"


def is_web_address(url: str | None) -> bool:
    return bool(url) and url.strip().lower().startswith(("http://", "https://"))


def queue_archiving(urls: Iterable[str | None]) -> list[int]:
    """Sources for these addresses, each queued for archiving once it needs it.

    Call inside the submit's transaction: the jobs are sent when it commits, so a rolled
    back submit queues nothing. Returns the IDs of the sources queued.
    """
    wanted: dict[str, str] = {}
    for url in urls:
        if is_web_address(url):
            wanted.setdefault(normalize_url(url.strip()), url.strip())
    queued = []
    for url in wanted.values():
        source = Source.for_url(url)
        if source.archive_status == Source.ArchiveStatus.PENDING:
            queued.append(source.pk)
    if queued and settings.ARCHIVE_ENABLED:
        transaction.on_commit(lambda: send_jobs(queued))
    return queued


def send_jobs(source_ids: Iterable[int], *, countdown: float = 0) -> None:
    """Put archive jobs on the broker. A broker that is down loses nothing: the sources stay
    pending and the beat schedule (queue_due_archive_jobs) sends them later."""
    # By name: the task module imports this one.
    for source_id in source_ids:
        try:
            current_app.signature(ARCHIVE_TASK, args=(source_id,)).apply_async(
                countdown=countdown or None
            )
        except Exception:
            logger.exception("could not queue the archive job of source %s", source_id)


def queue_due_jobs(limit: int = 1000) -> list[int]:
    """Send jobs for what waits: pending sources whose wait is over, jobs whose worker died,
    and failed sources older than ARCHIVE_RETRY_FAILED_HOURS (an offline machine catches up)."""
    now = timezone.now()
    if settings.ARCHIVE_RETRY_FAILED_HOURS:
        old_failures = Source.objects.filter(
            archive_status=Source.ArchiveStatus.FAILED,
            claimed_at__lt=now - timedelta(hours=settings.ARCHIVE_RETRY_FAILED_HOURS),
        )
        retry_failed(old_failures.values_list("pk", flat=True)[:limit], send=False)
    ids = list(
        Source.objects.due_for_archive(
            stale_before=now - timedelta(seconds=settings.ARCHIVE_JOB_LEASE)
        )
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    send_jobs(ids)
    return ids


def retry_failed(source_ids: Iterable[int] | None = None, *, send: bool = True) -> list[int]:
    """Send failed sources (all, or these) again with a fresh count of attempts."""
    failed = Source.objects.filter(archive_status=Source.ArchiveStatus.FAILED)
    if source_ids is not None:
        failed = failed.filter(pk__in=list(source_ids))
    ids = list(failed.values_list("pk", flat=True))
    Source.objects.filter(pk__in=ids, archive_status=Source.ArchiveStatus.FAILED).update(
        archive_status=Source.ArchiveStatus.PENDING, archive_attempts=0, next_attempt_at=None
    )
    if send and ids:
        transaction.on_commit(lambda: send_jobs(ids))
    return ids


# --- The job -------------------------------------------------------------------------------


def claim(source_id: int) -> bool:
    """Take the source for one attempt: exactly one worker wins, redeliveries find nothing."""
    now = timezone.now()
    due = Source.objects.due_for_archive(
        stale_before=now - timedelta(seconds=settings.ARCHIVE_JOB_LEASE)
    )
    return bool(
        due.filter(pk=source_id).update(
            archive_status=Source.ArchiveStatus.RUNNING,
            claimed_at=now,
            archive_attempts=F("archive_attempts") + 1,
        )
    )


def run_archive_job(source_id: int) -> str | None:
    """One attempt at archiving a source. Returns its new status, or None when another
    worker has it (or nothing is left to do). Schedules its own retry when one is due."""
    if not claim(source_id):
        return None
    source = Source.objects.get(pk=source_id)
    try:
        capture = _archive(source)
    except (ArchiveError, _SaveDeferred) as exc:
        return _failed_attempt(source, exc)
    except Exception as exc:  # a bug must not leave the source "running" for good
        logger.exception("archive job of source %s crashed", source_id)
        return _failed_attempt(source, ArchiveError(f"{type(exc).__name__}: {exc}"))
    Source.objects.filter(pk=source_id, archive_status=Source.ArchiveStatus.RUNNING).update(
        archive_status=Source.ArchiveStatus.ARCHIVED,
        archived_url=capture.url,
        archived_at=capture.taken_at,
        last_archive_error="",
        next_attempt_at=None,
    )
    return Source.ArchiveStatus.ARCHIVED


class _SaveDeferred(Exception):
    def __init__(self, wait: float) -> None:
        self.wait = wait


def _archive(source: Source) -> archive.Capture:
    now = timezone.now()
    if source.earliest_capture_at is None:
        first = archive.earliest_capture(source.url)
        if first is not None:
            Source.objects.filter(pk=source.pk).update(earliest_capture_at=first.taken_at)
    if source.published is None:
        published = (
            FetchedPage.objects.of_url(source.normalized_url)
            .filter(published__isnull=False)
            .values_list("published", flat=True)
            .first()
        )
        if published:
            Source.objects.filter(pk=source.pk).update(published=published)
    recent = archive.newest_capture(source.url)
    if recent and archive.is_recent(
        recent, now=now, max_age=timedelta(days=settings.ARCHIVE_RECENT_DAYS)
    ):
        return recent
    wait = take_save_slot(source.pk)
    if wait:
        raise _SaveDeferred(wait)
    return archive.save(source.url)


def take_save_slot(source_id: int | None) -> float:
    """Reserve one save within the global rate limit: 0 when granted, else the seconds until
    a slot frees. All workers share the count through the database."""
    # A second more than the minute: a request's time on the wire must not let the archive
    # see one save too many in its own minute.
    window = timedelta(seconds=61)
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_SAVE_SLOT_LOCK])
        now = timezone.now()
        recent = list(
            ArchiveSave.objects.filter(sent_at__gt=now - window)
            .order_by("sent_at")
            .values_list("sent_at", flat=True)[: settings.ARCHIVE_SAVE_RATE_LIMIT]
        )
        if len(recent) < settings.ARCHIVE_SAVE_RATE_LIMIT:
            ArchiveSave.objects.create(source_id=source_id, sent_at=now)
            return 0.0
        return max((recent[0] + window - now).total_seconds(), 0.05)


def backoff_seconds(attempt: int, retry_after: float | None = None) -> float:
    """Exponential backoff with full jitter, never shorter than the server's Retry-After."""
    ceiling = min(
        settings.ARCHIVE_RETRY_BACKOFF * 2 ** max(attempt - 1, 0),
        settings.ARCHIVE_RETRY_BACKOFF_MAX,
    )
    delay = random.uniform(ceiling / 2, ceiling)
    return max(delay, retry_after or 0.0)


def _failed_attempt(source: Source, exc: ArchiveError | _SaveDeferred) -> str:
    running = Source.objects.filter(pk=source.pk, archive_status=Source.ArchiveStatus.RUNNING)
    if isinstance(exc, _SaveDeferred):
        # Waiting for the rate limit is not a failed attempt.
        wait = exc.wait + random.uniform(0, 1)
        running.update(
            archive_status=Source.ArchiveStatus.PENDING,
            archive_attempts=F("archive_attempts") - 1,
            next_attempt_at=timezone.now() + timedelta(seconds=wait),
        )
        send_jobs([source.pk], countdown=wait)
        return Source.ArchiveStatus.PENDING
    attempts = source.archive_attempts  # read after the claim counted this attempt
    if not exc.retryable or attempts >= settings.ARCHIVE_MAX_ATTEMPTS:
        running.update(
            archive_status=Source.ArchiveStatus.FAILED,
            last_archive_error=exc.reason,
            next_attempt_at=None,
        )
        return Source.ArchiveStatus.FAILED
    wait = backoff_seconds(attempts, exc.retry_after)
    running.update(
        archive_status=Source.ArchiveStatus.PENDING,
        last_archive_error=exc.reason,
        next_attempt_at=timezone.now() + timedelta(seconds=wait),
    )
    send_jobs([source.pk], countdown=wait)
    return Source.ArchiveStatus.PENDING
