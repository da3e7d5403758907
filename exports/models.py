"""Background jobs of researchers (exports, scoring runs) and webhook subscriptions.

A job row is the contract between a page (or API client) and a Celery task: the page creates
it and polls it; the task claims it with a conditional UPDATE (queued -> running, so a
redelivered message does nothing), reports progress on it, and finishes it.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from annotation.boundary import shown
from annotation.models import Batch
from exports.splits import SPLIT_CHOICES, Selection

EXPORT_FOLDER = "exports"
SCORING_FOLDER = "scoring"
# Progress is written at most this often, so a fast job does not hammer the database.
PROGRESS_INTERVAL = timedelta(seconds=0.5)


# A job unfinished this long lost its worker: it no longer counts against its owner's quota.
QUOTA_FORGETS_AFTER = timedelta(hours=24)


class JobQuerySet(models.QuerySet):
    def unfinished(self) -> JobQuerySet:
        return self.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING])

    def claim(self, pk: int) -> bool:
        """Move a queued job to running; False if another delivery already took it."""
        return bool(
            self.filter(pk=pk, status=Job.Status.QUEUED).update(
                status=Job.Status.RUNNING, started_at=timezone.now()
            )
        )


class Job(models.Model):
    """What every background job shows: its state, its progress and what went wrong."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = JobQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @classmethod
    def quota_problem(cls, user) -> str | None:
        """Why `user` may not start another job of this kind now (JOBS_RUNNING_PER_USER
        waiting or running at once), or None."""
        limit = settings.JOBS_RUNNING_PER_USER
        since = timezone.now() - QUOTA_FORGETS_AFTER
        running = cls.objects.unfinished().filter(requested_by=user, created_at__gte=since)
        if running.count() < limit:
            return None
        kind = cls._meta.verbose_name_plural
        return f"You have {limit} {kind} waiting or running, the most at once; wait for one."

    @property
    def percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        if not self.progress_total:
            return 0
        return min(100, int(100 * self.progress_done / self.progress_total))

    def progress_reporter(self, total: int):
        """A callback adding to the done count, writing it at most every PROGRESS_INTERVAL."""
        type(self).objects.filter(pk=self.pk).update(progress_total=total, progress_done=0)
        self.progress_total, self.progress_done = total, 0
        state: dict[str, Any] = {"pending": 0, "written": timezone.now()}

        def advance(n: int) -> None:
            state["pending"] += n
            now = timezone.now()
            if now - state["written"] >= PROGRESS_INTERVAL:
                type(self).objects.filter(pk=self.pk).update(
                    progress_done=F("progress_done") + state["pending"]
                )
                self.progress_done += state["pending"]
                state["pending"], state["written"] = 0, now

        return advance

    def finish(self, **fields) -> None:
        fields = {"status": self.Status.DONE, "finished_at": timezone.now(), **fields}
        if fields["status"] == self.Status.DONE:
            fields["progress_done"] = F("progress_total")
        type(self).objects.filter(pk=self.pk).update(**fields)
        self.refresh_from_db()

    def fail(self, error: str) -> None:
        # The message may quote the bad input: escaped, so that it can be stored and shown.
        self.finish(status=self.Status.FAILED, error=shown(error, 10_000))


class ExportJob(Job):
    """An export of accepted claims to a file in MEDIA_ROOT/exports/, downloaded through a view."""

    class Format(models.TextChoices):
        JSON = "json", "JSON (like dev.json)"
        JSONL = "jsonl", "JSON lines"
        # The shared tasks' forms (exports/shared_task.py); "averitec-2023" is "json".
        AVERITEC_2023 = "averitec-2023", "AVeriTeC 2023 JSON (like dev.json)"
        AVERITEC_2024 = "averitec-2024", "AVeriTeC 2024 shared task JSON (claim_id, evidence)"
        AVERITEC_2025_CSV = "averitec-2025-csv", "AVeriTeC 2025 shared task CSV (id, claim, evi)"

    # What readers of an export file (statistics, scoring as references) take as dev.json.
    DATASET_FORMATS = ("json", "jsonl", "averitec-2023")

    split = models.CharField(max_length=10, choices=SPLIT_CHOICES, blank=True)
    batch = models.ForeignKey(
        Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="export_jobs"
    )
    since = models.DateField(null=True, blank=True, help_text="First claim date (inclusive).")
    until = models.DateField(null=True, blank=True, help_text="Last claim date (inclusive).")
    fmt = models.CharField("format", max_length=20, choices=Format.choices, default=Format.JSON)
    file_name = models.CharField(max_length=200, blank=True)
    claims = models.PositiveIntegerField(null=True, blank=True)

    class Meta(Job.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(since__isnull=True) | Q(until__isnull=True) | Q(since__lte=F("until")),
                name="export_date_range_in_order",
            )
        ]

    def __str__(self) -> str:
        return f"Export {self.pk} ({self.selection().describe()})"

    def selection(self) -> Selection:
        return Selection(split=self.split, batch=self.batch, since=self.since, until=self.until)

    @property
    def path(self) -> Path | None:
        if not self.file_name:
            return None
        return Path(settings.MEDIA_ROOT) / EXPORT_FOLDER / self.file_name

    @property
    def extension(self) -> str:
        return {"jsonl": "jsonl", "averitec-2025-csv": "csv"}.get(self.fmt, "json")

    @property
    def content_type(self) -> str:
        return {"jsonl": "application/jsonl", "averitec-2025-csv": "text/csv; charset=utf-8"}.get(
            self.fmt, "application/json"
        )

    @property
    def download_name(self) -> str:
        form = "" if self.fmt in ("json", "jsonl") else f"-{self.fmt}"
        return f"{self.selection().file_stem()}-export-{self.pk}{form}.{self.extension}"

    def run(self) -> None:
        """Write the file (streamed, flat memory), reporting progress on this row."""
        from annotation.visibility import claims_seen_in_full
        from exports.dataset import claims_for_export, write_export

        claims = self.selection().claims()
        if self.requested_by is not None:
            # Claims the requester may still check blind stay out of their file
            # (annotation/visibility.py), whatever their role.
            claims = claims_seen_in_full(self.requested_by, claims)
        advance = self.progress_reporter(claims_for_export(claims).count())
        file_name = f"export-{self.pk}.{self.extension}"
        folder = Path(settings.MEDIA_ROOT) / EXPORT_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        count = write_export(folder / file_name, fmt=self.fmt, queryset=claims, progress=advance)
        self.finish(file_name=file_name, claims=count)

    def remove_file(self) -> None:
        """Delete the file; the job stays listed, its download is gone."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        ExportJob.objects.filter(pk=self.pk).update(file_name="")
        self.file_name = ""

    @classmethod
    def remove_old_files(cls, now=None) -> int:
        """Keep each account's newest EXPORT_FILES_PER_USER files, none older than
        EXPORT_FILE_DAYS (0: no age limit); delete the others. Returns how many went."""
        now = now or timezone.now()
        with_files = cls.objects.exclude(file_name="").order_by("-created_at", "-id")
        doomed: dict[int, ExportJob] = {}
        if settings.EXPORT_FILE_DAYS:
            cutoff = now - timedelta(days=settings.EXPORT_FILE_DAYS)
            doomed.update((job.pk, job) for job in with_files.filter(finished_at__lt=cutoff))
        owners = with_files.order_by().values_list("requested_by", flat=True).distinct()
        for owner in owners:
            extra = with_files.filter(requested_by=owner)[settings.EXPORT_FILES_PER_USER :]
            doomed.update((job.pk, job) for job in extra)
        for job in doomed.values():
            job.remove_file()
        return len(doomed)


class ScoringJob(Job):
    """Scoring of an uploaded predictions file against an uploaded file or a finished export."""

    predictions = models.FileField(upload_to=f"{SCORING_FOLDER}/")
    predictions_name = models.CharField(max_length=255, blank=True)
    references = models.FileField(upload_to=f"{SCORING_FOLDER}/", blank=True)
    references_name = models.CharField(max_length=255, blank=True)
    reference_export = models.ForeignKey(
        ExportJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="scoring_jobs"
    )
    result = models.JSONField(null=True, blank=True)
    notes = models.JSONField(default=list, blank=True)

    class Meta(Job.Meta):
        pass

    def __str__(self) -> str:
        return f"Scoring {self.pk} of {self.predictions_name or self.predictions.name}"

    @property
    def references_label(self) -> str | None:
        if self.reference_export_id:
            return f"export {self.reference_export_id}"
        return self.references_name or self.references.name

    def references_path(self) -> Path:
        if self.reference_export_id and self.reference_export is not None:
            path = self.reference_export.path
            if path is None or not path.is_file():
                raise FileNotFoundError(f"the file of export {self.reference_export_id} is gone")
            return path
        return Path(self.references.path)


def _new_secret() -> str:
    return secrets.token_hex(32)


class Webhook(models.Model):
    """An address that receives signed POSTs when claims are accepted or exports finish."""

    class Event(models.TextChoices):
        CLAIM_ACCEPTED = "claim.accepted", "claim accepted"
        EXPORT_FINISHED = "export.finished", "export finished"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=2000)
    # Shared with the receiver, which recomputes the HMAC-SHA256 signature of every request.
    secret = models.CharField(max_length=128, default=_new_secret)
    events = models.JSONField(default=list, help_text="Event names, e.g. ['claim.accepted'].")
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.url} ({', '.join(self.events)})"


class WebhookDeliveryQuerySet(models.QuerySet):
    def pending(self) -> WebhookDeliveryQuerySet:
        return self.filter(status=WebhookDelivery.Status.PENDING)


class WebhookDelivery(models.Model):
    """One event for one webhook; retried until delivered or out of attempts."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40, choices=Webhook.Event.choices)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)

    objects = WebhookDeliveryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"{self.event} → {self.webhook.url} ({self.status})"
