import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from exports import scoring
from pipeline.meteor_engine import SynonymTable, fast_path_verified, shared_meteor


class Command(BaseCommand):
    help = (
        "Score system predictions against an AVeriTeC reference file (an export, dev.json...) "
        "exactly as the official AVeriTeC evaluation does: Hungarian METEOR of questions and "
        "of question-answer pairs, veracity F1 and accuracy, justification METEOR, and the "
        "AVeriTeC score at 0.1-0.5. Files without labels get the evidence scores only."
    )

    def add_arguments(self, parser):
        parser.add_argument("--predictions", type=Path, required=True, help="predictions file")
        parser.add_argument("--references", type=Path, required=True, help="reference file")
        parser.add_argument(
            "--json", action="store_true", help="print one JSON object instead of the report"
        )
        parser.add_argument(
            "--processes",
            type=int,
            default=None,
            help="worker processes for METEOR (default: SCORING_PROCESSES, else every core)",
        )

    def handle(self, *args, predictions: Path, references: Path, **options):
        started = time.perf_counter()
        quiet = options["verbosity"] == 0
        if options["processes"] is not None and options["processes"] < 1:
            raise CommandError("--processes must be at least 1")
        try:
            predicted = scoring.read_file(predictions)
            reference = scoring.read_file(references)
            if fast_path_verified() and not SynonymTable.cache_path().is_file():
                # Once per installation (and after NLTK or WordNet change): about 20 s.
                with tqdm(
                    desc="Building the WordNet synonym table", unit="lemma", disable=quiet
                ) as bar:
                    shared_meteor(progress=bar.update)
            with tqdm(desc="Scoring (METEOR pairs)", unit="pair", disable=quiet) as bar:

                def on_total(total: int) -> None:
                    bar.total = total
                    bar.refresh()

                result = scoring.score_files(
                    predicted,
                    reference,
                    progress=bar.update,
                    on_total=on_total,
                    workers=options["processes"],
                )
        except scoring.ScoringInputError as exc:
            raise CommandError(str(exc)) from exc
        metrics = dict(result.metrics)
        # Wall-clock time of the whole command: reading, preparing and scoring.
        metrics["seconds"] = round(time.perf_counter() - started, 3)
        for note in result.notes:
            self.stderr.write(f"note: {note}")
        if options["json"]:
            self.stdout.write(json.dumps(metrics, indent=2))
        else:
            self.stdout.write(scoring.format_report(metrics))
