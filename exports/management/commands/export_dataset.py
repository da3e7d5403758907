import sys
from datetime import date
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.models import Batch
from exports.dataset import claims_for_export, export_records, write_export, write_records
from exports.shared_task import FORMS, ORDER_NOTE
from exports.splits import SPLITS, Selection, SplitBoundaries


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise CommandError(f"expected a date like 2020-10-31, got {text!r}") from exc


class Command(BaseCommand):
    help = (
        "Write the accepted claims as an AVeriTeC JSON file (the format of dev.json), as JSON "
        "lines, or in a shared task's form (averitec-2023: dev.json's; averitec-2024: the "
        "FEVER-7 submission JSON; averitec-2025-csv: the FEVER-8 CSV with its evi column); "
        "optionally only a temporal split, a batch or a range of claim dates. Claims are "
        "written in dataset order, which the official scorers rely on."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", type=Path, required=True, help="output file, or - for stdout")
        parser.add_argument(
            "--format",
            choices=["json", "jsonl", *FORMS],
            default="json",
            help="json (= averitec-2023), jsonl, averitec-2024 or averitec-2025-csv",
        )
        parser.add_argument(
            "--split",
            choices=SPLITS,
            help="only claims of this temporal split (by claim date; EXPORT_TRAIN_END and "
            "EXPORT_DEV_END set the boundaries)",
        )
        parser.add_argument(
            "--batch", help="only claims of the articles of this batch (name or id)"
        )
        parser.add_argument("--since", type=_day, help="first claim date, inclusive (YYYY-MM-DD)")
        parser.add_argument("--until", type=_day, help="last claim date, inclusive (YYYY-MM-DD)")
        parser.add_argument(
            "--with-passages",
            action="store_true",
            help='add "extractive_passage" (snapshot and character offsets) to answers '
            "selected in the page viewer; not part of the official format",
        )

    def handle(self, *args, out: Path, format: str, **options):
        selection = Selection(
            split=options["split"] or "",
            batch=self._batch(options["batch"]),
            since=options["since"],
            until=options["until"],
        )
        if selection.since and selection.until and selection.since > selection.until:
            raise CommandError("--since is after --until")
        claims = selection.claims(SplitBoundaries.from_settings())
        passages = options["with_passages"]
        if str(out) == "-":
            records = export_records(claims_for_export(claims), with_passages=passages)
            write_records(format, records, sys.stdout)
            return
        if not out.parent.is_dir():
            raise CommandError(f"{out.parent}: folder does not exist")
        total = claims_for_export(claims).count()
        quiet = options["verbosity"] == 0
        with tqdm(total=total, desc="Exporting claims", unit="claim", disable=quiet) as bar:
            count = write_export(
                out, fmt=format, queryset=claims, progress=bar.update, with_passages=passages
            )
        self.stdout.write(
            self.style.SUCCESS(f"Wrote {count} claims to {out} ({selection.describe()})")
        )
        self.stdout.write(ORDER_NOTE)

    def _batch(self, value: str | None) -> Batch | None:
        if not value:
            return None
        batch = Batch.objects.filter(name=value).first()
        if batch is None and value.isdigit():
            batch = Batch.objects.filter(pk=int(value)).first()
        if batch is None:
            raise CommandError(f"no batch named {value!r}")
        return batch
