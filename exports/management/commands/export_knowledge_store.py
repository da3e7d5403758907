from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.models import Batch
from exports.dataset import claims_for_export
from exports.knowledge_store import write_knowledge_store
from exports.management.commands.export_dataset import _day
from exports.shared_task import ORDER_NOTE
from exports.splits import SPLITS, Selection, SplitBoundaries


class Command(BaseCommand):
    help = (
        "Write the knowledge store of the accepted claims, as the AVeriTeC shared tasks ship "
        "it: a folder with one <claim_id>.json per claim (JSON lines: url, url2text as a "
        "list of sentences, the query that found the page, and whether it was searched, "
        "opened or cited), from the stored page snapshots only (nothing is fetched again), "
        "pages dated before the claim date or of unknown date (marked). Claim ids are the "
        "positions in export_dataset's file of the same selection. Prints the counts per "
        "claim, also written to report.json."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", type=Path, required=True, help="output folder")
        parser.add_argument("--split", choices=SPLITS, help="only claims of this split")
        parser.add_argument("--batch", help="only claims of the articles of this batch")
        parser.add_argument("--since", type=_day, help="first claim date (YYYY-MM-DD)")
        parser.add_argument("--until", type=_day, help="last claim date (YYYY-MM-DD)")

    def handle(self, *args, out: Path, **options):
        batch = None
        if options["batch"]:
            batch = Batch.objects.filter(name=options["batch"]).first()
            if batch is None:
                raise CommandError(f"no batch named {options['batch']!r}")
        selection = Selection(
            split=options["split"] or "",
            batch=batch,
            since=options["since"],
            until=options["until"],
        )
        if out.exists() and not out.is_dir():
            raise CommandError(f"{out}: exists and is not a folder")
        claims = claims_for_export(selection.claims(SplitBoundaries.from_settings()))
        quiet = options["verbosity"] == 0
        with tqdm(total=claims.count(), desc="Knowledge store", unit="claim", disable=quiet) as bar:
            report = write_knowledge_store(out, claims.iterator(chunk_size=200), bar.update)
        totals = report.totals()
        self.stdout.write(
            self.style.SUCCESS(
                f"Wrote the knowledge store of {len(report.claims)} claims to {out} "
                f"({selection.describe()}): {totals['pages']} pages ({totals['cited']} cited, "
                f"{totals['opened']} opened, {totals['searched']} searched; "
                f"{totals['date_unknown']} of unknown date); left out "
                f"{totals['left_out_after_claim_date']} dated on or after their claim date and "
                f"{totals['left_out_not_stored']} never stored"
            )
        )
        self.stdout.write(ORDER_NOTE)
        self.stdout.write("claim_id  pages  cited  opened  searched  date unknown  left out")
        for c in report.claims:
            left = c.left_out_after_claim_date + c.left_out_not_stored
            self.stdout.write(
                f"{c.claim_id:>8}  {c.pages:>5}  {c.cited:>5}  {c.opened:>6}  {c.searched:>8}  "
                f"{c.date_unknown:>12}  {left:>8}"
            )
