"""Several archive workers at once against a stub archive throwing seeded random faults: no
request of any worker ever reaches the archive inside a 429's Retry-After, every page is
saved at most once, and every page ends archived with no failure left behind."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from search_proxy import archiving
from search_proxy.models import Source
from tests.search_proxy.archive_stub import Fault
from tests.search_proxy.archive_workers import ArchiveWorkers

RETRY_AFTER = 1  # seconds: short, so the test stays quick


def random_faults(rng: random.Random) -> list[tuple[str, Fault]]:
    slow = Fault(trickle=0.3, trickle_lines=10)  # longer than the 1 s deadline
    kinds = [
        Fault(429, {"Retry-After": str(RETRY_AFTER)}, b"Too Many Requests"),
        Fault(503, body=b"Service Unavailable"),
        Fault(503, {"Retry-After": str(RETRY_AFTER)}, b"Service Unavailable"),
        Fault(reset=True),
        Fault(body=b"<html>maintenance</html>"),
        slow,
    ]
    return [(rng.choice(["save", "available", "cdx"]), rng.choice(kinds)) for _ in range(18)]


@pytest.mark.race
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("seed", [7, 23])
def test_no_worker_sends_anything_inside_a_retry_after_and_no_page_is_saved_twice(
    archive_stub, settings, seed
):
    if connection.vendor != "postgresql":
        pytest.skip("workers in threads need a database server")
    rng = random.Random(seed)
    settings.ARCHIVE_HTTP_TIMEOUT = 1.0
    settings.ARCHIVE_SAVE_RATE_LIMIT = 1000  # the timetable has its own test
    settings.ARCHIVE_RETRY_BACKOFF, settings.ARCHIVE_RETRY_BACKOFF_MAX = 0.2, 1.0
    settings.ARCHIVE_MAX_ATTEMPTS = 12
    urls = [f"https://race{n % 7}.example.org/page/{n}" for n in range(30)]
    for url in urls:
        if rng.random() < 0.3:
            archive_stub.add_capture(url, timezone.now() - timedelta(days=1))
    for api, fault in random_faults(rng):
        archive_stub.fail_next(api, fault)
    with transaction.atomic():  # one submit
        ids = archiving.queue_archiving(urls)

    with ArchiveWorkers(4, beat_seconds=0.3) as workers:
        settled = workers.wait_until_settled(ids, timeout=90)
    assert not workers.errors
    assert settled, workers.runs

    assert any(h.status == 429 for h in archive_stub.hits), "the seed injected no 429"
    for gap, retry_after in archive_stub.gaps_after_429():
        assert gap >= retry_after, f"a request {gap:.3f} s after a 429 (Retry-After {retry_after})"
    saves = archive_stub.saves_made()
    assert len(saves) == len(set(saves))
    sources = Source.objects.filter(pk__in=ids)
    assert {s.archive_status for s in sources} == {Source.ArchiveStatus.ARCHIVED}
    assert all(s.earliest_capture_at is not None for s in sources)
