import json
from argparse import ArgumentTypeError
from datetime import date
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch
from review.agreement import POST_CONTROL_VERDICTS, VERDICTS, ReportFilter
from review.kappa import RatingsFileError, read_ratings_csv, verdict_agreement
from review.stored import agreement_report, stored_progress_report


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from exc


class Command(BaseCommand):
    help = (
        "Print the agreement and progress figures of the managers' dashboard (Randolph's and "
        "Fleiss' kappa, per-label and per-pair agreement, confusion matrices, evidence "
        "METEOR, progress and per-annotator signals). With --ratings FILE.csv, compute the "
        "verdict-agreement figures of an outside table of item,annotator,label rows instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--ratings",
            type=Path,
            help="CSV with the header item,annotator,label (optionally ,claim: items of one "
            "claim are resampled together)",
        )
        parser.add_argument(
            "--categories",
            type=int,
            help="k, the labels raters could choose from, for Randolph's 1/k (--ratings; "
            "default: the platform's 4 verdicts, or 5 with 'Claim too vague', when the file's "
            "labels are among them; else the labels found in the file)",
        )
        parser.add_argument("--batch", help="only claims of this batch (name or id)")
        parser.add_argument("--start", type=_date, help="only claims created on or after")
        parser.add_argument("--end", type=_date, help="only claims created on or before")
        parser.add_argument(
            "--no-evidence", action="store_true", help="leave out the evidence METEOR"
        )

    def handle(self, *args, **options):
        if options["ratings"]:
            report = self._ratings(options["ratings"], options["categories"])
        else:
            report = self._platform(options)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(_text(report))

    def _ratings(self, path: Path, categories: int | None) -> dict:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path} is not UTF-8 text") from exc
        try:
            ratings = read_ratings_csv(text)
        except RatingsFileError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        found = sorted({r.label for r in ratings})
        # k: the labels raters could choose. Ratings in the platform's labels get the
        # platform's k (4 verdicts, or 5 with P5's "too vague"), as on the dashboard, so the
        # same ratings give the same kappa here and there.
        if set(found) <= set(VERDICTS):
            labels = list(VERDICTS)
        elif set(found) <= set(POST_CONTROL_VERDICTS):
            labels = list(POST_CONTROL_VERDICTS)
        else:
            labels = found
        if categories is not None:
            if categories < len(found):
                raise CommandError(
                    f"--categories {categories} is fewer than the {len(found)} labels in {path}"
                )
            # Labels nobody chose still count as choices for Randolph's chance agreement.
            labels = found + [f"(unused {n})" for n in range(categories - len(found))]
        if len(labels) < 2:
            raise CommandError(f"{path}: agreement needs at least two labels; give --categories")
        figures = verdict_agreement(ratings, labels, min_pair_overlap=1)
        return {"source": str(path), **figures}

    def _platform(self, options) -> dict:
        batch_id = None
        if options["batch"]:
            batch = Batch.objects.filter(name=options["batch"]).first()
            if batch is None and options["batch"].isdigit():
                batch = Batch.objects.filter(pk=int(options["batch"])).first()
            if batch is None:
                raise CommandError(f"no batch called {options['batch']!r}")
            batch_id = batch.pk
        if options["start"] and options["end"] and options["start"] > options["end"]:
            raise CommandError("--start is after --end")
        report_filter = ReportFilter(batch_id, options["start"], options["end"])
        # The stored figures, brought up to date first: the command's reader wants them now.
        agreement = agreement_report(report_filter, evidence=not options["no_evidence"], fresh=True)
        progress = stored_progress_report(report_filter, fresh=True)
        return {**agreement, "progress": progress}


def _figure(value) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _text(report: dict) -> str:
    lines = []
    if "verdicts" not in report:
        lines.append(f"Ratings from {report['source']}")
        sections = {"ratings": {"title": "Verdict agreement", **report}}
    else:
        sections = report["verdicts"]
    for figures in sections.values():
        lines.append(f"{figures['title']}:")
        lines.append(
            f"  items {figures['items']}, ratings {figures['ratings']}, "
            f"left out (rated once) {figures['left_out']}, k = {figures['k']} labels"
        )
        unit = figures["bootstrap"]["unit"]
        for name in ("percent_agreement", "randolph_kappa", "fleiss_kappa"):
            interval = figures["intervals"].get(name)
            ci = (
                f"  (95% {_figure(interval[0])} to {_figure(interval[1])}, {unit}s resampled)"
                if interval
                else ""
            )
            k = f" (k={figures['k']})" if name == "randolph_kappa" else ""
            lines.append(f"  {name.replace('_', ' ') + k:<20} {_figure(figures[name])}{ci}")
        for pair in figures["annotator_pairs"]:
            lines.append(
                f"  Cohen {pair['first']} / {pair['second']}: {_figure(pair['cohen_kappa'])}"
                f" on {pair['items']} items"
            )
    if report.get("evidence"):
        ev = report["evidence"]
        lines.append(
            f"Evidence agreement on {ev['claims']} claims: questions {_figure(ev['q_only'])}, "
            f"questions and answers {_figure(ev['q_and_a'])}"
            + (f" ({ev['pending']} pairs not scored yet)" if ev.get("pending") else "")
        )
    if "progress" in report:
        progress = report["progress"]
        for phase in progress["phases"]:
            lines.append(
                f"P{phase['phase']}: {phase['done']} done, median "
                f"{_figure(phase['median_minutes'])} min, {phase['speed_traps']} speed traps"
            )
        for key, value in progress["outcomes"].items():
            if key != "skip_reasons":
                lines.append(f"{key.replace('_', ' ')}: {_figure(value)}")
        lines.append(f"stuck tasks: {len(progress['stuck'])}")
        for row in progress["stuck_summary"]:
            lines.append(f"  P{row['phase']}: {row['tasks']} — {row['reason']}")
    return "\n".join(lines)
