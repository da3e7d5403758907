from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.intake import COLUMNS, IntakeError, import_articles, read_rows
from annotation.models import Batch


class Command(BaseCommand):
    help = (
        "Load fact-checking articles to annotate from JSON lines (.jsonl) or CSV (.csv) with "
        f"the columns {', '.join(COLUMNS)} (only url is required). Pages already known are "
        "reported and skipped; any invalid row aborts the whole file."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--batch", help="name of the intake batch (default: file name + time)")
        parser.add_argument("--dry-run", action="store_true", help="only validate the file")

    def handle(self, *args, path: Path, batch: str | None, dry_run: bool, **options):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            rows = read_rows(path)
        except IntakeError as exc:
            raise CommandError(f"{path}: {exc}\nNothing was imported.") from exc
        if dry_run:
            self.stdout.write(f"{path}: {len(rows)} valid rows. Dry run: nothing stored.")
            return
        name = batch or Batch.default_name(path.name)
        if taken := Batch.name_taken(name):
            raise CommandError(f"{taken} Choose another --batch.")
        with tqdm(
            total=len(rows),
            desc="Importing articles",
            unit="article",
            disable=options["verbosity"] == 0,
        ) as bar:
            report = import_articles(
                rows, batch_name=name, source_file=str(path), progress=bar.update
            )
        for line in report.duplicates:
            self.stdout.write(self.style.WARNING(f"skipped duplicate {line}"))
        self.stdout.write(
            self.style.SUCCESS(
                f"Added {report.created} articles to batch {name!r}; "
                f"{len(report.duplicates)} duplicates skipped."
            )
        )
