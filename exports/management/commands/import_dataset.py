from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.models import Batch
from exports.averitec_json import DatasetFormatError, load_dataset
from exports.dataset import import_claims


class Command(BaseCommand):
    help = (
        "Import a file in the AVeriTeC JSON format (like dev.json) as accepted claims. "
        "The whole file is validated first; any problem aborts the import with nothing stored."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="AVeriTeC JSON file to import")
        parser.add_argument(
            "--dry-run", action="store_true", help="only validate the file, store nothing"
        )
        parser.add_argument("--batch", help="name of the import batch (default: file name + time)")
        parser.add_argument(
            "--first",
            type=int,
            metavar="N",
            help="import only the first N records by claim date (ties keep file order)",
        )

    def handle(
        self, *args, path: Path, dry_run: bool, batch: str | None, first: int | None, **options
    ):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            with path.open(encoding="utf-8") as stream:
                records = load_dataset(stream)
        except DatasetFormatError as exc:
            raise CommandError(f"{path}: {exc}\nNothing was imported.") from exc
        if first is not None:
            records = sorted(records, key=lambda r: r.claim_date)[:first]
            records.sort(key=lambda r: r.index)
        if dry_run:
            self.stdout.write(f"{path}: {len(records)} valid records. Dry run: nothing stored.")
            return
        name = batch or Batch.default_name(path.name)
        if taken := Batch.name_taken(name):
            raise CommandError(f"{taken} Choose another --batch.")
        with tqdm(
            total=len(records),
            desc="Importing claims",
            unit="claim",
            disable=options["verbosity"] == 0,
        ) as bar:
            report = import_claims(
                records, batch_name=name, source_file=str(path), progress=bar.update
            )
        for line in report.skipped_duplicates:
            self.stdout.write(self.style.WARNING(f"skipped duplicate {line}"))
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {report.claims} claims ({report.questions} questions, "
                f"{report.answers} answers) into batch {name!r}; "
                f"{report.articles_created} new articles; "
                f"{len(report.skipped_duplicates)} duplicates skipped."
            )
        )
