"""A burst of cited pages to archive: are they all archived or failed, none lost, and is the
global save-rate limit kept?

Queues N source URLs at once (as one big submit would), then runs the real archive jobs
(search_proxy.archiving.run_archive_job: claim, availability/CDX lookup, save-rate slot,
backoff) on several worker threads, each with its own database connection, against the stub
Internet Archive of the tests (tests/search_proxy/archive_stub.py) on 127.0.0.1 through the
real waybackpy client. The stub injects 503s, 429s with Retry-After, malformed answers and
time-outs. The save rate is measured from the stub's own log of arrived save requests.
Celery is replaced by an in-process queue that honours each job's countdown; the broker and
worker-crash side is covered by tests/search_proxy/test_archive_worker.py. Run:

    .venv/bin/python benchmarks/archive_burst.py [--urls 1000] [--rate-limit 300] [--workers 4]

It works in its own database (averitec_bench_archive by default, created when missing) and
empties the archive tables, so it refuses any database whose name does not say "bench".
"""

from __future__ import annotations

import argparse
import heapq
import logging
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import (
    database_name,
    ensure_database,
    refuse_unsafe_database,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_bench_archive"
MAX_RUN_SECONDS = 3600  # every run ends: a job still waiting then counts as lost


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1000)
    parser.add_argument("--rate-limit", type=int, default=300, help="saves a minute")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument(
        "--recent-share", type=float, default=0.4, help="share of pages with a recent capture"
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    return parser.parse_args(argv)


class DelayedQueue:
    """Stands in for the broker: jobs become available after their countdown."""

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, int]] = []
        self.lock = threading.Lock()
        self.sent = 0

    def send(self, ids, countdown: float = 0) -> None:
        with self.lock:
            for source_id in ids:
                self.sent += 1
                heapq.heappush(
                    self.heap, (time.monotonic() + (countdown or 0), self.sent, source_id)
                )

    def take(self) -> int | None:
        with self.lock:
            if self.heap and self.heap[0][0] <= time.monotonic():
                return heapq.heappop(self.heap)[2]
        return None


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    name = database_name(args.database_url)
    refuse_unsafe_database(name)
    ensure_database(args.database_url, name)
    setup_django(args.database_url)

    from django.conf import settings
    from django.db import connection, transaction
    from django.utils import timezone

    from search_proxy import archiving
    from search_proxy.models import ArchiveSave, Source
    from tests.search_proxy.archive_stub import ArchiveStub, Fault

    refuse_unsafe_database(connection.settings_dict["NAME"])
    logging.getLogger("search_proxy").setLevel(logging.WARNING)  # faults are expected here
    rng = random.Random(args.seed)
    stub = ArchiveStub().start()
    settings.ARCHIVE_BASE_URL = stub.base_url
    settings.ARCHIVE_AVAILABILITY_URL = stub.base_url + "/wayback/available"
    settings.ARCHIVE_HTTP_TIMEOUT = 2.0
    settings.ARCHIVE_SAVE_RATE_LIMIT = args.rate_limit
    settings.ARCHIVE_RETRY_BACKOFF, settings.ARCHIVE_RETRY_BACKOFF_MAX = 1.0, 8.0
    settings.ARCHIVE_MAX_ATTEMPTS = 6
    settings.ARCHIVE_ENABLED = True
    ArchiveSave.objects.all().delete()
    Source.objects.filter(answers__isnull=True).delete()

    urls = [f"https://burst{n % 50}.example.org/story/{n}" for n in range(args.urls)]
    for url in urls:
        if rng.random() < args.recent_share:
            stub.add_capture(url, timezone.now() - timedelta(days=rng.randint(0, 6)))
    faults = (
        [("save", Fault(503, body=b"Service Unavailable"))] * 20
        + [("save", Fault(429, {"Retry-After": "3"}, b"Too Many Requests"))] * 10
        + [("available", Fault(body=b"<html>maintenance</html>"))] * 10
        + [("cdx", Fault(delay=3.0))] * 5
    )
    rng.shuffle(faults)
    for api, fault in faults:
        stub.fail_next(api, fault)

    queue = DelayedQueue()
    archiving.send_jobs = queue.send  # the jobs' own retries land here too
    started = time.monotonic()
    with transaction.atomic():
        queued = archiving.queue_archiving(urls)
    done = threading.Event()
    runs = Counter()

    def worker() -> None:
        try:
            while not done.is_set():
                source_id = queue.take()
                if source_id is None:
                    time.sleep(0.02)
                    continue
                runs[str(archiving.run_archive_job(source_id) or "skipped")] += 1
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.workers)]
    for thread in threads:
        thread.start()
    unsettled = Source.objects.filter(
        pk__in=queued,
        archive_status__in=[Source.ArchiveStatus.PENDING, Source.ArchiveStatus.RUNNING],
    )
    with tqdm(total=len(queued), unit="page", desc="archived or failed", mininterval=5) as bar:
        while time.monotonic() - started < MAX_RUN_SECONDS:
            left = unsettled.count()
            bar.update(len(queued) - left - bar.n)
            if not left:
                break
            time.sleep(1.0)
    done.set()
    for thread in threads:
        thread.join(timeout=30)
    elapsed = time.monotonic() - started
    stub.stop()

    states = Counter(Source.objects.filter(pk__in=queued).values_list("archive_status", flat=True))
    saves_per_url = Counter(h.url for h in stub.hits_to("save", 200))
    print()
    print(f"URLs queued in one burst      {len(queued)}")
    print(
        f"archived / failed / lost      {states['archived']} / {states['failed']} / "
        f"{states['pending'] + states['running']}"
    )
    print(f"save requests sent            {sum(1 for h in stub.received if h.api == 'save')}")
    print(f"captures made (200 saves)     {sum(saves_per_url.values())}")
    print(f"most saves of one URL         {max(saves_per_url.values(), default=0)}")
    print(
        f"most saves in any 60 s        {stub.max_saves_in_any_minute()} (limit {args.rate_limit})"
    )
    print(f"job runs                      {dict(runs)}")
    print(f"wall time                     {elapsed:.1f} s with {args.workers} worker threads")


if __name__ == "__main__":
    main()
