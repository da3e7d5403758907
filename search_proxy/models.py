"""Evidence sources and (later) search documents, logs and domain lists."""

from django.db import models
from django.utils import timezone

from search_proxy.webaddress import archive_timestamp, normalize_url


class SourceQuerySet(models.QuerySet):
    def waiting_for_archive(self) -> "SourceQuerySet":
        return self.filter(archive_status=Source.ArchiveStatus.PENDING)


class Source(models.Model):
    """A web page used as evidence, with its Internet Archive copy.

    One row per normalised URL, shared by every answer that cites the page, so each page is
    archived once.
    """

    class ArchiveStatus(models.TextChoices):
        PENDING = "pending", "not archived yet"
        RUNNING = "running", "being archived"
        ARCHIVED = "archived", "archived"
        FAILED = "failed", "archiving failed, will retry"

    url = models.TextField(help_text="The address as first cited.")
    normalized_url = models.CharField(max_length=2048, unique=True)
    archive_status = models.CharField(
        max_length=20, choices=ArchiveStatus.choices, default=ArchiveStatus.PENDING
    )
    archived_url = models.TextField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    archive_attempts = models.PositiveSmallIntegerField(default=0)
    last_archive_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = SourceQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["archive_status"], name="source_archive_status")]

    def __str__(self) -> str:
        return self.url

    @classmethod
    def for_url(cls, url: str) -> "Source":
        """The source row for this address, created on first use.

        A Wayback Machine link is already an archived copy, so it needs no archiving.
        """
        captured_at = archive_timestamp(url)
        defaults: dict = {"url": url}
        if captured_at:
            defaults.update(
                archive_status=cls.ArchiveStatus.ARCHIVED,
                archived_url=url,
                archived_at=captured_at,
            )
        source, _ = cls.objects.get_or_create(normalized_url=normalize_url(url), defaults=defaults)
        return source
