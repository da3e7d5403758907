"""Send the failed archive jobs (the dead letter) again, or only list them."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from search_proxy import archiving
from search_proxy.models import Source


class Command(BaseCommand):
    help = "Queue failed archive jobs again (all, or --source ID ...); --list only shows them."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--source", type=int, nargs="+", help="only these source IDs")
        parser.add_argument("--list", action="store_true", help="show them, queue nothing")

    def handle(self, *args, source: list[int] | None = None, list: bool = False, **options):
        failed = Source.objects.filter(archive_status=Source.ArchiveStatus.FAILED)
        if source:
            failed = failed.filter(pk__in=source)
        if list:
            for row in failed.order_by("pk"):
                self.stdout.write(f"{row.pk}\t{row.url}\tarchive failed: {row.last_archive_error}")
            return
        ids = archiving.retry_failed(failed.values_list("pk", flat=True))
        self.stdout.write(f"{len(ids)} failed archive job(s) queued again.")
