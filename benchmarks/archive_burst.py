"""A burst of cited pages to archive at the default limits: is every page archived or failed,
none lost, each saved once, the archive's limits kept, and no request sent inside a 429?

Records N source URLs in one transaction (as one big submit would: the outbox), then lets
the beat hand them to the real archive jobs (search_proxy.archiving.run_archive_job: claim,
first-capture and availability look-ups, the save-slot timetable, the one line to the
archive, backoff) on several worker threads with their own database connections
(tests/search_proxy/archive_workers.py), against the stub Internet Archive of the tests
(tests/search_proxy/archive_stub.py) on 127.0.0.1 through the real waybackpy client.

Every archive setting keeps its default, except the archive's keys (set unless
--anonymous, which makes the default save rate 12 a minute instead of 4). The stub holds the
client to Save Page Now's own limits (12 captures a minute authenticated, 4 anonymous,
answering 429 with Retry-After beyond them) and injects 429s with Retry-After, 503s,
connection resets, malformed answers and answers trickling in past the deadline. Every
figure about requests comes from the stub's own log. Celery is replaced by an in-process
queue that honours each job's countdown; the broker side is covered by
tests/search_proxy/test_archive_worker.py. Run:

    .venv/bin/python benchmarks/archive_burst.py [--urls 120] [--workers 4] [--anonymous]

It works in its own database (averitec_bench_archive by default, created when missing) and
empties the archive tables, so it refuses any database whose name does not say "bench".
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from statistics import mean

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import (
    database_name,
    ensure_database,
    refuse_unsafe_database,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_bench_archive"
MAX_RUN_SECONDS = 3 * 3600  # every run ends: a job still waiting then counts as lost


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=120)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--anonymous", action="store_true", help="no archive keys: 4 a minute")
    parser.add_argument("--retry-after", type=int, default=20, help="of the injected 429s")
    parser.add_argument(
        "--recent-share", type=float, default=0.4, help="share of pages with a recent capture"
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    name = database_name(args.database_url)
    refuse_unsafe_database(name)
    ensure_database(args.database_url, name)
    for setting in [k for k in os.environ if k.startswith("ARCHIVE_")]:
        del os.environ[setting]  # the defaults, as a deployment without overrides has them
    if not args.anonymous:
        os.environ["ARCHIVE_ACCESS_KEY"], os.environ["ARCHIVE_SECRET_KEY"] = "bench", "bench"
    setup_django(args.database_url)

    from django.conf import settings
    from django.db import connection, transaction
    from django.utils import timezone

    from search_proxy import archiving
    from search_proxy.models import ArchiveGate, ArchiveSave, Source
    from tests.search_proxy.archive_stub import ArchiveStub, Fault
    from tests.search_proxy.archive_workers import ArchiveWorkers

    refuse_unsafe_database(connection.settings_dict["NAME"])
    logging.getLogger("search_proxy").setLevel(logging.ERROR)  # faults are expected here
    rng = random.Random(args.seed)
    stub = ArchiveStub(save_limits={"authenticated": 12, "anonymous": 4}).start()
    settings.ARCHIVE_BASE_URL = stub.base_url
    settings.ARCHIVE_AVAILABILITY_URL = stub.base_url + "/wayback/available"
    ArchiveSave.objects.all().delete()
    ArchiveGate.objects.all().delete()
    Source.objects.filter(answers__isnull=True).delete()

    urls = [f"https://burst{n % 50}.example.org/story/{n}" for n in range(args.urls)]
    for url in urls:
        if rng.random() < args.recent_share:
            stub.add_capture(url, timezone.now() - timedelta(days=rng.randint(0, 6)))
    too_many = Fault(429, {"Retry-After": str(args.retry_after)}, b"Too Many Requests")
    faults = (
        [(api, too_many) for api in ("save", "save", "available", "cdx")]
        + [("save", Fault(503, body=b"Service Unavailable"))] * 4
        + [(api, Fault(reset=True)) for api in ("save", "available", "cdx")]
        + [("available", Fault(body=b"<html>maintenance</html>"))] * 3
        + [("cdx", Fault(body=b"<html>maintenance</html>"))] * 3
        + [("cdx", Fault(trickle=3.0, trickle_lines=10))]  # past the 20 s deadline
    )
    rng.shuffle(faults)
    for api, fault in faults:
        stub.fail_next(api, fault)

    started = time.monotonic()
    with transaction.atomic():
        queued = archiving.queue_archiving(urls)  # the submit: records, sends nothing
    workers = ArchiveWorkers(args.workers, beat_seconds=settings.ARCHIVE_DISPATCH_SECONDS)
    with (
        workers,
        tqdm(total=len(queued), unit="page", desc="archived or failed", mininterval=5) as bar,
    ):
        workers.wait_until_settled(
            queued, MAX_RUN_SECONDS, progress=lambda done: bar.update(done - bar.n)
        )
    elapsed = time.monotonic() - started
    stub.stop()
    if workers.errors:
        raise workers.errors[0]

    sources = Source.objects.filter(pk__in=queued)
    states = Counter(sources.values_list("archive_status", flat=True))
    made = Counter(stub.saves_made())
    look_ups = [h for h in stub.received if h.api in ("available", "cdx")]
    save_requests = [h for h in stub.received if h.api == "save"]
    gaps = stub.gaps_after_429()
    shortest = min(gaps, default=None)
    injected_429 = sum(1 for h in stub.hits if h.status == 429 and h.fault)
    per_url = Counter(h.url for h in look_ups)
    print()
    print(f"default save rate                  {settings.ARCHIVE_SAVE_RATE_LIMIT} a minute")
    print(f"URLs recorded in one submit        {len(queued)}")
    print(
        f"archived / failed / lost           {states['archived']} / {states['failed']} / "
        f"{states['pending'] + states['running']}"
    )
    print(f"save requests the archive received {len(save_requests)}")
    print(f"captures made by saves             {sum(made.values())}")
    print(
        f"saves per saved URL                max {max(made.values(), default=0)}, "
        f"mean {mean(made.values()) if made else 0:.2f}"
    )
    print(
        f"look-ups (availability + CDX)      {len(look_ups)}: "
        f"{len(look_ups) / max(sum(made.values()), 1):.2f} per save, "
        f"{len(look_ups) / len(queued):.2f} per URL, most for one URL {max(per_url.values())}"
    )
    print(
        f"most saves in any 60 s             {stub.max_saves_in_any_minute()} "
        f"(limit {settings.ARCHIVE_SAVE_RATE_LIMIT})"
    )
    print(f"429s injected / from the limit     {injected_429} / {stub.limit_refusals}")
    if shortest is not None:
        print(
            f"shortest gap after a 429           {shortest[0]:.2f} s "
            f"(its Retry-After {shortest[1]:g} s; {len(gaps)} 429s followed by a request)"
        )
    failed = sources.filter(archive_status=Source.ArchiveStatus.FAILED)
    for reason, n in Counter(failed.values_list("last_archive_error", flat=True)).items():
        print(f"failed because                     {reason} ({n})")
    print(f"job runs                           {dict(workers.runs)}")
    print(f"wall time                          {elapsed:.1f} s with {args.workers} threads")


if __name__ == "__main__":
    main()
