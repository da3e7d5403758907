import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from exports import scoring
from exports.dataset import claims_for_export, export_records
from exports.statistics import TABLE_TITLES, TABLES, compute_statistics


class Command(BaseCommand):
    help = (
        "Descriptive statistics of a dataset (the paper's Table 2 and appendix tables), for "
        "the whole dataset and per temporal split: of an AVeriTeC JSON/JSON-lines file, or of "
        "the accepted claims when no file is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", type=Path, help="dataset file (default: database)")
        output = parser.add_mutually_exclusive_group()
        output.add_argument("--json", action="store_true", help="print one JSON object")
        output.add_argument("--csv", action="store_true", help="print CSV (split,table,value,...)")

    def handle(self, *args, path: Path | None, **options):
        quiet = options["verbosity"] == 0 or options["json"] or options["csv"]
        if path is not None:
            try:
                records: Iterable[Any] = scoring.read_file(path)
            except scoring.ScoringInputError as exc:
                raise CommandError(str(exc)) from exc
            if not isinstance(records, list):
                raise CommandError(f"{path}: expected a JSON list of claim records")
            total = len(records)
        else:
            claims = claims_for_export()
            total = claims.count()
            records = export_records(claims)
        with tqdm(
            total=total, desc="Reading claims", unit="claim", disable=quiet, file=sys.stderr
        ) as bar:
            statistics = compute_statistics(_counting(records, bar.update))
        if options["json"]:
            self.stdout.write(json.dumps(statistics.as_dict(), indent=2))
        elif options["csv"]:
            self.stdout.write(statistics.to_csv(), ending="")
        else:
            self.stdout.write(self._report(statistics))

    def _report(self, statistics) -> str:
        lines = []
        for name, stats in statistics.ordered():
            overview = stats.overview()
            lines.append(f"== {name} ==")
            for key, value in overview.items():
                lines.append(f"  {key.replace('_', ' '):28} {value}")
            for table in TABLES:
                lines.append(f"  {TABLE_TITLES[table]} ({TABLES[table][0]}):")
                for row in stats.table(table):
                    if row["count"]:
                        lines.append(
                            f"    {row['label']:38} {row['count']:6}  {row['percent']:5.1f}%"
                        )
        return "\n".join(lines)


def _counting(records, advance):
    for record in records:
        yield record
        advance(1)
