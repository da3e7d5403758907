import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from exports.averitec_json import write_json_array, write_json_lines
from exports.dataset import claims_for_export, export_records, write_export


class Command(BaseCommand):
    help = "Write the accepted claims as an AVeriTeC JSON file (the format of dev.json)."

    def add_arguments(self, parser):
        parser.add_argument("--out", type=Path, required=True, help="output file, or - for stdout")
        parser.add_argument(
            "--format", choices=["json", "jsonl"], default="json", help="JSON array or JSON lines"
        )

    def handle(self, *args, out: Path, format: str, **options):
        if str(out) == "-":
            write = write_json_array if format == "json" else write_json_lines
            write(export_records(claims_for_export()), sys.stdout)
            return
        if not out.parent.is_dir():
            raise CommandError(f"{out.parent}: folder does not exist")
        total = claims_for_export().count()
        quiet = options["verbosity"] == 0
        with tqdm(total=total, desc="Exporting claims", unit="claim", disable=quiet) as bar:
            count = write_export(out, fmt=format, progress=bar.update)
        self.stdout.write(self.style.SUCCESS(f"Wrote {count} claims to {out}"))
