"""Rebuild the stored agreement ratings from the raw rows and report any difference."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.models import Claim
from review import stored


class Command(BaseCommand):
    help = (
        "Recompute every claim's stored agreement ratings from its rounds and checks, store "
        "the recomputed ones where they differ, and list the differences (exit status 1 with "
        "--check when there is any)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check",
            action="store_true",
            help="Only compare: change nothing, fail when a stored figure differs.",
        )
        parser.add_argument("--chunk", type=int, default=1000, help="Claims read per query.")

    def handle(self, *args, check: bool, chunk: int, **options):
        if chunk < 1:
            raise CommandError("--chunk must be at least 1")
        with tqdm(
            total=Claim.objects.count(), unit="claim", disable=options["verbosity"] < 1
        ) as bar:
            differences = stored.rebuild(chunk=chunk, fix=not check, advance=bar.update)
        for difference in differences:
            self.stdout.write(str(difference))
        verb = "differ" if check else "differed and were rebuilt"
        self.stdout.write(f"{len(differences)} claims' stored ratings {verb}.")
        if check and differences:
            raise CommandError(f"{len(differences)} claims' stored ratings differ from the rows")
