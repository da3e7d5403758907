"""Background jobs of the search proxy: archiving cited pages (see archiving.py)."""

from __future__ import annotations

from celery import shared_task

from search_proxy import archiving, fetch


@shared_task(name=archiving.ARCHIVE_TASK, acks_late=True, reject_on_worker_lost=True)
def archive_source(source_id: int) -> str | None:
    """One archive attempt for a source; claims it first, so redelivery is harmless."""
    return archiving.run_archive_job(source_id)


@shared_task(acks_late=True)
def queue_due_archive_jobs() -> int:
    """Beat: send the jobs of sources that wait (retries due, lost workers, old failures)."""
    return len(archiving.queue_due_jobs())


@shared_task(name=fetch.SNAPSHOT_TASK, acks_late=True)
def snapshot_pages(urls: list[str]) -> dict[str, str]:
    """Store the readable snapshot of new fact-checking articles (a refetch is harmless)."""
    return fetch.snapshot_pages(urls)
