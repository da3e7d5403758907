"""Rebuild every stored reporting figure from the raw rows and report any difference."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.models import Claim
from review import stored


class Command(BaseCommand):
    help = (
        "Recompute every stored reporting figure from the raw rows: the agreement ratings, "
        "the evidence METEOR scores and the stored reports (kappas, intervals, progress), "
        "store the recomputed ones where they differ, and list the differences (exit status "
        "1 with --check when there is any)."
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
        quiet = options["verbosity"] < 1
        claims = Claim.objects.count()
        with tqdm(total=claims, unit="claim", desc="ratings", disable=quiet) as bar:
            ratings = stored.rebuild(chunk=chunk, fix=not check, advance=bar.update)
        with tqdm(total=claims, unit="claim", desc="METEOR scores", disable=quiet) as bar:
            scores = stored.rebuild_evidence(chunk=chunk, fix=not check, advance=bar.update)
        # After the ratings: a stored report is compared with what the ratings give now.
        reports = stored.rebuild_reports(fix=not check)
        for difference in [*map(str, ratings), *scores, *reports]:
            self.stdout.write(difference)
        verb = "differ" if check else "differed and were rebuilt"
        self.stdout.write(
            f"{len(ratings)} claims' stored ratings, {len(scores)} evidence scores and "
            f"{len(reports)} stored reports {verb}."
        )
        total = len(ratings) + len(scores) + len(reports)
        if check and total:
            raise CommandError(f"{total} stored figures differ from the rows")
