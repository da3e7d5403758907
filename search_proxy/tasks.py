"""Background jobs of the search proxy: archiving cited pages (see archiving.py)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from search_proxy import archiving, fetch


# Each request ends by its own deadline; the time limits bound a job as a whole (the soft
# one records the failure and frees the line, the hard one ends a process stuck anyway),
# and both end before ARCHIVE_JOB_LEASE hands a "running" source to another worker.
@shared_task(
    name=archiving.ARCHIVE_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.ARCHIVE_JOB_SOFT_TIME_LIMIT,
    time_limit=settings.ARCHIVE_JOB_TIME_LIMIT,
)
def archive_source(source_id: int) -> str | None:
    """One run of a source's archive job; claims it first, so redelivery is harmless."""
    return archiving.run_archive_job(source_id)


@shared_task(acks_late=True, soft_time_limit=60, time_limit=90)
def queue_due_archive_jobs() -> int:
    """Beat: send the jobs of sources that wait (new, retries due, lost workers, old
    failures, unknown first captures)."""
    return len(archiving.queue_due_jobs())


@shared_task(name=fetch.SNAPSHOT_TASK, acks_late=True)
def snapshot_pages(urls: list[str]) -> dict[str, str]:
    """Store the readable snapshot of new fact-checking articles (a refetch is harmless)."""
    return fetch.snapshot_pages(urls)
