import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from exports import scoring
from exports.shared_task import FORMS
from pipeline.ev2r import Ev2RError
from pipeline.meteor_engine import SynonymTable, fast_path_verified, shared_meteor


class Command(BaseCommand):
    help = (
        "Score system predictions against an AVeriTeC reference file (an export, dev.json...) "
        "exactly as the official AVeriTeC evaluation does: Hungarian METEOR of questions and "
        "of question-answer pairs, veracity F1 and accuracy, justification METEOR, and the "
        "AVeriTeC score at 0.1-0.5. Files without labels get the evidence scores only. "
        "The form of each file is recognised: 2023 JSON (dev.json), 2024 shared-task JSON "
        "(scored as evaluate_veracity.py: AVeriTeC score at 0.25) or 2025 shared-task CSV "
        "(scored as averitec_evaluate.py: the old AVeriTeC score, and Ev2R when configured)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--predictions", type=Path, required=True, help="predictions file")
        parser.add_argument("--references", type=Path, required=True, help="reference file")
        parser.add_argument(
            "--json", action="store_true", help="print one JSON object instead of the report"
        )
        parser.add_argument(
            "--scorer",
            choices=FORMS,
            help="score with this form's official rules (default: 2025 when either file is "
            "a CSV, else the form of the predictions)",
        )
        parser.add_argument(
            "--no-ev2r",
            action="store_true",
            help="2025 form: leave out Ev2R even when EV2R_BASE_URL is set",
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
            predicted = scoring.read_any(predictions)
            reference = scoring.read_any(references)
            if fast_path_verified() and not SynonymTable.cache_path().is_file():
                # Once per installation (and after NLTK or WordNet change): about 20 s.
                with tqdm(
                    desc="Building the WordNet synonym table", unit="lemma", disable=quiet
                ) as bar:
                    shared_meteor(progress=bar.update)
            llm: list[tqdm] = []  # the Ev2R bar, opened once the METEOR part is done
            with tqdm(desc="Scoring (METEOR pairs)", unit="pair", disable=quiet) as bar:

                def on_total(total: int) -> None:
                    bar.total = total
                    bar.refresh()

                def on_ev2r_total(total: int) -> None:
                    bar.close()
                    llm.append(
                        tqdm(total=total, desc="Ev2R (LLM prompts)", unit="prompt", disable=quiet)
                    )

                try:
                    result = scoring.score_any(
                        predicted,
                        reference,
                        scorer=options["scorer"],
                        progress=bar.update,
                        on_total=on_total,
                        workers=options["processes"],
                        ev2r=False if options["no_ev2r"] else None,
                        ev2r_progress=lambda n: llm[0].update(n),
                        on_ev2r_total=on_ev2r_total,
                    )
                finally:
                    for opened in llm:
                        opened.close()
        except (scoring.ScoringInputError, Ev2RError) as exc:
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
