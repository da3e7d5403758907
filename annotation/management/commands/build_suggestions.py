from django.core.management.base import BaseCommand
from tqdm import tqdm

from annotation.suggestions.pool import build_pool, pool_folder


class Command(BaseCommand):
    help = "Build the pre-suggestion pool (BM25 indexes, classifiers) from the accepted claims."

    def handle(self, *args, **options):
        bar = tqdm(unit="claim", disable=options["verbosity"] == 0)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        count = build_pool(progress)
        bar.close()
        self.stdout.write(f"Suggestion pool of {count} claim(s) written to {pool_folder()}.")
