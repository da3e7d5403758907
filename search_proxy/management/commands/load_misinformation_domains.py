from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from search_proxy.flags import load_misinformation_domains


class Command(BaseCommand):
    help = (
        "Load misinformation and satire domains (one a line, as in AVeriTeC's misinfo_list.txt) "
        "into the database, where managers can edit them in the admin. Entries already there "
        "are kept; lines that are not domains are reported and skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "path",
            nargs="?",
            type=Path,
            help="list file (default: misinfo_list.txt in AVERITEC_DATA_DIR)",
        )
        parser.add_argument(
            "--prune",
            action="store_true",
            help="also remove entries loaded from a list earlier that this list no longer has "
            "(entries added in the admin are never removed)",
        )

    def handle(self, *args, path, prune, **options):
        path = path or Path(settings.AVERITEC_DATA_DIR) / "misinfo_list.txt"
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: not UTF-8 text ({exc.reason})") from exc
        report = load_misinformation_domains(lines, prune=prune)
        for number, problem in report.bad_lines or []:
            self.stderr.write(self.style.WARNING(f"{path}, line {number}: {problem}; skipped"))
        self.stdout.write(
            self.style.SUCCESS(
                f"{path}: {report.created} new misinformation domains, "
                f"{report.already_known} already known, {report.duplicates} duplicate lines"
                + (f", {report.removed} removed" if prune else "")
                + "."
            )
        )
