import secrets
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from tqdm import tqdm

from annotation.intake import IntakeRow, import_articles
from annotation.models import Batch, User
from annotation.phases import PHASES
from exports.averitec_json import load_dataset, parse_dataset
from exports.dataset import import_claims
from exports.sample import sample_records

ACCOUNTS = [("manager", User.Role.MANAGER)] + [
    (f"annotator{n}", User.Role.ANNOTATOR) for n in range(1, 7)
]


class Command(BaseCommand):
    help = (
        "Fill an empty database with demo data: the earliest claims of dev.json as accepted "
        "claims, the articles of the rest as work for Phase 1, and demo accounts. "
        "Safe to run again: existing data and accounts are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dataset",
            type=Path,
            default=Path(settings.AVERITEC_DATA_DIR) / "dev.json",
            help="AVeriTeC JSON file (default: the shared dev.json)",
        )
        parser.add_argument(
            "--accepted", type=int, default=400, help="how many of the earliest claims to accept"
        )
        parser.add_argument(
            "--accounts-file",
            type=Path,
            default=Path(settings.VAR_DIR) / "demo-accounts.txt",
            help="where the demo passwords are kept so they can be shown again",
        )

    def handle(self, *args, dataset: Path, accepted: int, accounts_file: Path, **options):
        if Batch.objects.filter(name__startswith="demo:").exists():
            self.stdout.write("Demo data already loaded.")
        else:
            self._load_data(dataset, accepted)
        self._ensure_accounts(accounts_file)

    @transaction.atomic
    def _load_data(self, dataset: Path, accepted: int) -> None:
        if dataset.is_file():
            with dataset.open(encoding="utf-8") as stream:
                records = load_dataset(stream)
            origin = str(dataset)
        else:
            self.stdout.write(f"{dataset} not found: using the built-in sample instead.")
            records = parse_dataset(sample_records())
            origin = "built-in sample"
            accepted = len(records) * 2 // 3
        by_date = sorted(records, key=lambda r: r.claim_date)
        done, waiting = by_date[:accepted], by_date[accepted:]
        done.sort(key=lambda r: r.index)
        with tqdm(total=len(done), desc="Accepted claims", unit="claim") as bar:
            report = import_claims(
                done, batch_name="demo: accepted claims", source_file=origin, progress=bar.update
            )
        rows = [
            IntakeRow(
                line=r.index + 1,
                url=r.fact_checking_article,
                claim_text=r.text,
                claimant=r.speaker or "",
                claim_date=r.claim_date,
                rating=r.label,
            )
            for r in waiting
        ]
        intake = import_articles(rows, batch_name="demo: articles for Phase 1", source_file=origin)
        # The search index gets the evidence pages of the accepted claims only (index_documents
        # --from-dataset, run by scripts/demo.sh): the claims waiting for annotation must not
        # find their own gold answers among the results.
        self.stdout.write(
            self.style.SUCCESS(
                f"{report.claims} accepted claims; {intake.created} articles waiting for Phase 1 "
                f"({len(intake.duplicates)} of the remaining claims share their article with "
                "another claim, so it was added once)."
            )
        )

    def _ensure_accounts(self, accounts_file: Path) -> None:
        known = {}
        if accounts_file.is_file():
            for line in accounts_file.read_text().splitlines():
                name, _, written = line.partition(" ")
                known[name] = written
        lines = []
        for username, role in ACCOUNTS:
            user = User.objects.filter(username=username).first()
            password = known.get(username)
            if user is None or not password or not user.check_password(password):
                password = secrets.token_urlsafe(9)
                user = user or User(username=username)
                user.role = role
                user.qualified_phases = list(PHASES)
                user.is_staff = role == User.Role.MANAGER
                user.is_superuser = role == User.Role.MANAGER
                user.set_password(password)
                user.save()
            lines.append(f"{username} {password}")
        accounts_file.parent.mkdir(parents=True, exist_ok=True)
        accounts_file.write_text("\n".join(lines) + "\n")
        accounts_file.chmod(0o600)
        self.stdout.write("\nDemo accounts (username password):")
        for line in lines:
            self.stdout.write(f"  {line}")
