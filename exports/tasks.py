"""Background jobs of the exports app: export files, scoring runs, webhook deliveries.

Each job task takes an ID and claims its row with a conditional UPDATE (queued -> running),
so a redelivered message finds nothing to do.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction

from exports import scoring, webhooks
from exports.models import ExportJob, ScoringJob
from exports.shared_task import detect_and_read

# The webhook tasks live beside the deliveries they send (exports/webhooks.py) under their
# old names; importing them here keeps Celery's task discovery and callers unchanged.
from exports.webhooks import deliver_webhook, requeue_pending_webhooks
from pipeline.ev2r import Ev2RError

__all__ = [
    "deliver_webhook",
    "remove_old_export_files",
    "requeue_pending_webhooks",
    "run_export_job",
    "run_scoring_job",
    "start_export_job",
]

logger = logging.getLogger(__name__)


def start_export_job(job: ExportJob, user) -> ExportJob:
    """Save a new export job for `user` and queue its run: the one way the exports page and
    the API start an export. Queued once the transaction commits, so the worker finds the row.
    """
    job.requested_by = user
    job.save()
    transaction.on_commit(lambda: run_export_job.delay(job.pk))
    return job


@shared_task(acks_late=True)
def run_export_job(job_id: int) -> str | None:
    """Write an export job's file, then tell the webhooks it is finished."""
    if not ExportJob.objects.claim(job_id):
        return None
    job = ExportJob.objects.select_related("batch").get(pk=job_id)
    try:
        job.run()
    except Exception as exc:
        logger.exception("export job %s failed", job_id)
        job.fail(f"{exc.__class__.__name__}: {exc}")
    # The new file may push an older one of its owner past the kept number.
    ExportJob.remove_old_files()
    job.refresh_from_db()
    webhooks.notify_export_finished(job)
    return job.status


@shared_task
def remove_old_export_files() -> int:
    """The beat schedule's sweep: export files past their age (EXPORT_FILE_DAYS)."""
    return ExportJob.remove_old_files()


@shared_task(acks_late=True)
def run_scoring_job(job_id: int) -> str | None:
    """Score a scoring job's predictions; bad input ends it as failed with the problems."""
    if not ScoringJob.objects.claim(job_id):
        return None
    job = ScoringJob.objects.select_related("reference_export").get(pk=job_id)
    try:
        with job.predictions.open("rb") as stream:
            predictions = detect_and_read(stream.read(), job.predictions_name or "predictions")
        references = scoring.read_any(job.references_path())
        advance = None

        def on_total(total: int) -> None:
            # METEOR pairs first, then (2025 with Ev2R configured) the LLM prompts.
            nonlocal advance
            advance = job.progress_reporter(total)

        def progress(n: int) -> None:
            if advance:
                advance(n)

        result = scoring.score_any(
            predictions,
            references,
            on_total=on_total,
            progress=progress,
            on_ev2r_total=on_total,
            ev2r_progress=progress,
        )
    except (scoring.ScoringInputError, Ev2RError) as exc:
        job.fail(str(exc))
    except Exception as exc:
        logger.exception("scoring job %s failed", job_id)
        job.fail(f"{exc.__class__.__name__}: {exc}")
    else:
        job.finish(result=result.metrics, notes=result.notes)
    return job.status
