"""`index_documents`: corpora and the evidence pages of imported claims into the local index.

The command is annotation's because --from-dataset reads its claims; the indexing itself is
search_proxy's (search_proxy/indexing.py), which is handed the answers to read.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.models import Answer
from search_proxy.indexing import (
    CorpusFormatError,
    IndexReport,
    check_corpus,
    corpus_files,
    dataset_evidence,
    index_records,
    read_corpus,
)
from search_proxy.models import Document
from search_proxy.search_index import save_search_index


class Command(BaseCommand):
    help = (
        "Add web pages to the local search index: JSON lines in the AVeriTeC knowledge-store "
        'layout ({"url", "url2text": [sentences], "date"?} a line; a file or a folder of '
        ".json/.jsonl files), or with --from-dataset the evidence pages of imported claims. "
        "Files are checked first; any bad line aborts with its line number and nothing stored. "
        "Pages already indexed (same normalised URL) are skipped. Then the saved BM25 "
        "search index (SEARCH_INDEX_DIR) is brought up to date."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="*", type=Path, help="corpus files or folders")
        parser.add_argument(
            "--from-dataset",
            action="store_true",
            help="index the evidence (answer texts per source URL) of imported claims",
        )
        parser.add_argument("--corpus", help="name stored with the documents (default: file name)")
        parser.add_argument("--batch-size", type=int, default=1000, help="rows per INSERT")

    def handle(self, *args, paths, from_dataset, corpus, batch_size, **options):
        if not paths and not from_dataset:
            raise CommandError("give corpus files or folders, or --from-dataset")
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        quiet = options["verbosity"] == 0
        for path in paths:
            if not path.exists():
                raise CommandError(f"{path}: no such file or folder")
            files = corpus_files(path)
            if not files:
                raise CommandError(f"{path}: no .json or .jsonl files in this folder")
            try:
                count = check_corpus(files)
            except CorpusFormatError as exc:
                raise CommandError(f"{exc}\nNothing was indexed from {path}.") from exc
            with tqdm(total=count, desc=f"Indexing {path.name}", unit="doc", disable=quiet) as bar:
                report = index_records(
                    read_corpus(files),
                    corpus=corpus or path.name,
                    batch_size=batch_size,
                    progress=bar.update,
                )
            self._report(str(path), report)
        if from_dataset:
            with tqdm(desc="Indexing dataset evidence", unit="doc", disable=quiet) as bar:
                report = index_records(
                    dataset_evidence(
                        Answer.objects.cited_by_imported_claims().iterator(chunk_size=2000)
                    ),
                    corpus=corpus or "dataset evidence",
                    batch_size=batch_size,
                    progress=bar.update,
                )
            self._report("dataset evidence", report)
        self._save_search_index(quiet)

    def _save_search_index(self, quiet: bool) -> None:
        with tqdm(
            total=Document.objects.count(),
            desc="Saving the search index",
            unit="doc",
            disable=quiet,
        ) as bar:
            saved = save_search_index(progress=bar.update)
            if not saved.started_over:
                bar.update(bar.total - saved.tokenised)
        how = "rebuilt" if saved.started_over else f"{saved.tokenised} documents added"
        self.stdout.write(
            self.style.SUCCESS(f"Search index saved: {saved.documents} documents ({how}).")
        )

    def _report(self, what: str, report: IndexReport) -> None:
        skipped = []
        if report.already_indexed:
            skipped.append(f"{report.already_indexed} already indexed")
        if report.empty:
            skipped.append(f"{report.empty} without text")
        if report.url_too_long:
            skipped.append(f"{report.url_too_long} with overlong URLs")
        self.stdout.write(
            self.style.SUCCESS(
                f"{what}: indexed {report.created} documents"
                + (f"; skipped {', '.join(skipped)}" if skipped else "")
                + "."
            )
        )
