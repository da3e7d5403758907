"""What managers see of the archiving of cited pages: coverage per batch and the failures.

The archiving itself lives in search_proxy/archiving.py; this module only ties sources to
the batches of the claims that cite them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count
from django.utils import timezone

from search_proxy.models import ArchiveGate, Source

NO_BATCH = "(no batch)"


@dataclass
class BatchCoverage:
    batch: str
    archived: int = 0
    pending: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.archived + self.pending + self.failed

    @property
    def percent_archived(self) -> int:
        return round(100 * self.archived / self.total) if self.total else 0


def coverage_per_batch() -> list[BatchCoverage]:
    """Per batch, its cited pages by archive state ("pending" counts running jobs too).

    A page cited by claims of two batches counts in both.
    """
    batch_name = "answers__question__evidence_round__claim__article__batch__name"
    rows = (
        Source.objects.filter(answers__isnull=False)
        .values(batch_name, "archive_status")
        .annotate(n=Count("id", distinct=True))
    )
    found: dict[str, BatchCoverage] = {}
    for row in rows:
        name = row[batch_name] or NO_BATCH
        entry = found.setdefault(name, BatchCoverage(name))
        status = row["archive_status"]
        if status == Source.ArchiveStatus.ARCHIVED:
            entry.archived += row["n"]
        elif status == Source.ArchiveStatus.FAILED:
            entry.failed += row["n"]
        else:
            entry.pending += row["n"]
    return sorted(found.values(), key=lambda c: c.batch)


def failures(limit: int = 200):
    return Source.objects.filter(archive_status=Source.ArchiveStatus.FAILED).order_by(
        "-claimed_at", "-pk"
    )[:limit]


@dataclass
class ArchivePause:
    until: datetime
    reason: str


def current_pause() -> ArchivePause | None:
    """The pause the archive imposed on every job (a 429), while it lasts."""
    gate = ArchiveGate.state()
    if gate.paused_until and gate.paused_until > timezone.now():
        return ArchivePause(gate.paused_until, gate.pause_reason)
    return None
