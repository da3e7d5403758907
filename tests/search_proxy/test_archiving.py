"""Archive jobs against a stand-in Internet Archive on 127.0.0.1, through the real waybackpy
client (its endpoints pointed at the stub, see archive_stub.py)."""

from __future__ import annotations

import heapq
import random
import time
from datetime import UTC, date, datetime, timedelta

import pytest
from django.utils import timezone

from search_proxy import archive, archiving
from search_proxy.archive import ArchiveError
from search_proxy.models import ArchiveGate, ArchiveSave, Source
from search_proxy.service import source_date_problem
from search_proxy.webaddress import normalize_url
from tests.factories import AnswerFactory
from tests.search_proxy.archive_stub import Fault

PAGE = "https://news.example.org/2020/10/council-parks"


def archived(url: str = PAGE) -> Source:
    source = Source.for_url(url)
    archiving.run_archive_job(source.pk)
    source.refresh_from_db()
    return source


@pytest.mark.django_db
class TestExistingCaptures:
    def test_a_capture_younger_than_the_recency_window_is_reused_without_saving(
        self, archive_stub, sent_jobs
    ):
        archive_stub.add_capture(PAGE, timezone.now() - timedelta(days=2))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED
        assert source.archived_url.startswith("https://web.archive.org/web/")
        assert source.archived_url.endswith(PAGE)
        assert archive_stub.hits_to("save") == []

    def test_a_capture_older_than_the_recency_window_leads_to_a_new_save(
        self, archive_stub, sent_jobs, settings
    ):
        settings.ARCHIVE_RECENT_DAYS = 7
        archive_stub.add_capture(PAGE, timezone.now() - timedelta(days=8))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED
        assert len(archive_stub.hits_to("save", 200)) == 1
        assert timezone.now() - source.archived_at < timedelta(minutes=1)

    def test_a_capture_only_the_cdx_index_knows_is_found(self, archive_stub, sent_jobs):
        archive_stub.add_capture(PAGE, timezone.now() - timedelta(days=1))
        archive_stub.fail_next("available", Fault(body=b'{"url": "x", "archived_snapshots": {}}'))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED
        assert archive_stub.hits_to("save") == []


@pytest.mark.django_db
class TestNoDuplicateSaves:
    def test_one_page_written_three_ways_is_one_source_and_one_save(
        self, archive_stub, sent_jobs, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            ids = archiving.queue_archiving(
                [PAGE, "http://www.news.example.org/2020/10/council-parks/?utm_source=x", PAGE]
            )
        assert len(ids) == 1 and sent_jobs == []  # the beat sends it
        assert archiving.queue_due_jobs() == ids
        assert archiving.queue_due_jobs() == []  # its job is on its way: not sent twice
        archiving.run_archive_job(ids[0])
        # A redelivered message and a second submit citing the page do nothing more.
        assert archiving.run_archive_job(ids[0]) is None
        assert archiving.queue_archiving([PAGE]) == []
        assert len(archive_stub.hits_to("save")) == 1

    def test_metadata_and_empty_sources_are_not_archived(self, archive_stub, sent_jobs):
        assert archiving.queue_archiving(["metadata", "", None, "not a url"]) == []
        assert Source.objects.count() == 0


@pytest.mark.django_db
class TestArchiveLinks:
    def test_a_wayback_link_is_already_archived_and_needs_no_job(self, sent_jobs):
        link = "https://web.archive.org/web/20201130144023/https://example.org/a"
        assert archiving.queue_archiving([link]) == []
        source = Source.objects.get()
        assert source.archived_url == link
        assert source.archived_at == datetime(2020, 11, 30, 14, 40, 23, tzinfo=UTC)

    @pytest.mark.parametrize("host", ["archive.today", "archive.md", "archive.ph"])
    def test_an_archive_today_link_is_already_archived(self, host, sent_jobs):
        assert archiving.queue_archiving([f"https://{host}/AbC12"]) == []
        assert Source.objects.get().archive_status == Source.ArchiveStatus.ARCHIVED

    def test_a_double_archived_link_is_unwrapped_to_the_inner_archive_link(self, sent_jobs):
        archiving.queue_archiving(
            ["https://web.archive.org/web/20210101000000/https://archive.md/XyZ9"]
        )
        source = Source.objects.get()
        assert source.archived_url == "https://archive.md/XyZ9"
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED


@pytest.mark.django_db
class TestFaults:
    def test_every_archive_request_gives_up_at_the_timeout(self, archive_stub, settings):
        settings.ARCHIVE_HTTP_TIMEOUT = 0.3
        for api, call in (
            ("available", archive.newest_capture),
            ("cdx", archive.earliest_capture),
            ("save", archive.save),
        ):
            archive_stub.fail_next(api, Fault(delay=3.0))
            started = time.monotonic()
            with pytest.raises(ArchiveError, match="timed out"):
                call(PAGE)
            assert time.monotonic() - started < 2.0, api

    def test_a_429_is_retried_no_sooner_than_its_retry_after(self, archive_stub, sent_jobs):
        archive_stub.fail_next("save", Fault(429, {"Retry-After": "120"}, b"Too Many Requests"))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.PENDING
        assert "429" in source.last_archive_error
        assert source.next_attempt_at >= timezone.now() + timedelta(seconds=115)
        assert sent_jobs[-1][0] == source.pk and sent_jobs[-1][1] >= 119
        assert source.archive_attempts == 0  # the client's pace, not a failure of the page

    def test_a_503_backs_off_and_the_next_attempt_succeeds(self, archive_stub, sent_jobs):
        archive_stub.fail_next("available", Fault(503, body=b"Service Unavailable"))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.PENDING
        assert source.next_attempt_at > timezone.now()
        assert (source.lookup_failures, source.archive_attempts) == (1, 0)
        Source.objects.filter(pk=source.pk).update(next_attempt_at=timezone.now())
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED
        assert (source.lookup_failures, source.archive_attempts) == (1, 1)

    def test_a_malformed_answer_is_a_retried_failure_not_a_crash(self, archive_stub, sent_jobs):
        archive_stub.fail_next("available", Fault(body=b"<html>maintenance</html>"))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.PENDING
        assert "malformed" in source.last_archive_error

    def test_after_the_last_attempt_the_source_is_dead_lettered_with_the_reason(
        self, archive_stub, sent_jobs, settings
    ):
        settings.ARCHIVE_MAX_ATTEMPTS = 2
        archive_stub.fail_next("available", Fault(503), Fault(503))
        source = archived()
        Source.objects.filter(pk=source.pk).update(next_attempt_at=None)
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.FAILED
        assert source.get_archive_status_display() == "archive failed"
        assert source.last_archive_error == "the archive answered HTTP 503"
        assert archiving.retry_failed() == [source.pk]
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED

    def test_offline_every_job_fails_at_once_as_network_unreachable(self, settings, sent_jobs):
        settings.ARCHIVE_BASE_URL = "http://127.0.0.1:9"  # discard port: nothing listens
        settings.ARCHIVE_AVAILABILITY_URL = "http://127.0.0.1:9/wayback/available"
        started = time.monotonic()
        source = archived()
        assert time.monotonic() - started < 5
        assert source.archive_status == Source.ArchiveStatus.FAILED
        assert source.last_archive_error.startswith("network unreachable")
        assert sent_jobs == []

    def test_old_failures_are_sent_again_by_the_beat_schedule(self, settings, sent_jobs):
        settings.ARCHIVE_RETRY_FAILED_HOURS = 6
        old = Source.objects.create(
            url=PAGE,
            normalized_url=PAGE,
            archive_status=Source.ArchiveStatus.FAILED,
            claimed_at=timezone.now() - timedelta(hours=7),
        )
        fresh = Source.objects.create(
            url=PAGE + "/2",
            normalized_url=PAGE + "/2",
            archive_status=Source.ArchiveStatus.FAILED,
            claimed_at=timezone.now() - timedelta(hours=1),
        )
        assert archiving.queue_due_jobs() == [old.pk]
        old.refresh_from_db()
        assert old.archive_status == Source.ArchiveStatus.PENDING
        fresh.refresh_from_db()
        assert fresh.archive_status == Source.ArchiveStatus.FAILED


@pytest.mark.django_db
class TestSaveRateLimit:
    def test_saves_beyond_the_limit_wait_for_a_free_slot(self, archive_stub, sent_jobs, settings):
        settings.ARCHIVE_SAVE_RATE_LIMIT = 2
        sources = [archived(f"{PAGE}/{n}") for n in range(3)]
        assert [s.archive_status for s in sources] == ["archived", "archived", "pending"]
        assert len(archive_stub.hits_to("save")) == 2
        waiting = sources[2]
        assert waiting.archive_attempts == 0  # waiting for a slot is no failed attempt
        assert 55 <= (waiting.next_attempt_at - timezone.now()).total_seconds() <= 64
        assert ArchiveSave.objects.filter(sent=True).count() == 2
        assert ArchiveSave.objects.get(sent=False).source_id == waiting.pk  # its slot

    def test_a_backoff_never_exceeds_its_ceiling_and_honours_retry_after(self, settings):
        settings.ARCHIVE_RETRY_BACKOFF, settings.ARCHIVE_RETRY_BACKOFF_MAX = 10.0, 60.0
        delays = [archiving.backoff_seconds(n) for n in range(1, 10) for _ in range(20)]
        assert min(delays) >= 5.0 and max(delays) <= 60.0
        assert len(set(delays)) > 50  # jittered
        assert archiving.backoff_seconds(1, retry_after=300) == 300


@pytest.mark.django_db
class TestTemporalCheck:
    CLAIM_DATE = date(2020, 10, 31)

    @pytest.mark.parametrize(
        ("first_capture", "flagged"),
        [(date(2020, 10, 30), False), (date(2020, 10, 31), False), (date(2020, 11, 1), True)],
        ids=["a day before", "same day", "a day after"],
    )
    def test_a_page_first_captured_after_the_claim_date_is_a_possible_leak(
        self, archive_stub, sent_jobs, first_capture, flagged
    ):
        moment = datetime.combine(first_capture, datetime.min.time(), tzinfo=UTC)
        archive_stub.add_capture(PAGE, moment + timedelta(hours=12))
        source = archived()
        assert source.earliest_capture_at.date() == first_capture
        assert source.possible_temporal_leak(self.CLAIM_DATE) is flagged

    def test_a_publication_date_before_the_claim_date_clears_the_flag(self):
        source = Source(
            earliest_capture_at=datetime(2020, 11, 5, tzinfo=UTC), published=date(2020, 10, 30)
        )
        assert source.possible_temporal_leak(self.CLAIM_DATE) is False
        source.published = date(2020, 10, 31)
        assert source.possible_temporal_leak(self.CLAIM_DATE) is True


# --- The archive jobs' guarantees (issue 30: each class reproduces one item first) ----------


def make_due(source: Source) -> None:
    """A fast clock: the source's wait is over and its reserved save slot has come."""
    now = timezone.now()
    Source.objects.filter(pk=source.pk).update(next_attempt_at=now)
    ArchiveSave.objects.filter(source=source, sent=False).update(sent_at=now)


def end_the_pause() -> None:
    ArchiveGate.objects.update(paused_until=timezone.now() - timedelta(seconds=1))


@pytest.mark.django_db
class TestOneBackOffForTheWholeArchive:
    def test_a_429_on_one_page_holds_back_every_page_until_its_retry_after(
        self, archive_stub, sent_jobs, settings
    ):
        settings.ARCHIVE_SAVE_RATE_LIMIT = 100
        archive_stub.fail_next("save", Fault(429, {"Retry-After": "90"}, b"Too Many Requests"))
        first = archived(f"{PAGE}/1")
        arrived = len(archive_stub.received)
        others = [archived(f"{PAGE}/{n}") for n in range(2, 6)]
        assert len(archive_stub.received) == arrived  # no save and no look-up of any page
        for source in [first, *others]:
            assert source.archive_status == Source.ArchiveStatus.PENDING
            assert source.next_attempt_at >= timezone.now() + timedelta(seconds=85)
            assert (source.archive_attempts, source.lookup_failures) == (0, 0)
            assert "429" in source.last_archive_error
        assert archiving.queue_due_jobs() == []  # the beat sends nothing inside the pause
        end_the_pause()
        for source in [first, *others]:
            make_due(source)
            assert archived(source.url).archive_status == Source.ArchiveStatus.ARCHIVED
        assert len(archive_stub.hits_to("save", 200)) == 5


@pytest.mark.django_db
class TestHonestFailures:
    def test_a_reset_save_is_retried_with_back_off_under_its_own_reason(
        self, archive_stub, sent_jobs
    ):
        archive_stub.fail_next("save", Fault(reset=True))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.PENDING
        assert source.last_archive_error == "the connection was reset by the archive"
        assert source.archive_attempts == 1
        assert source.next_attempt_at >= timezone.now() + timedelta(seconds=14)
        make_due(source)
        assert archived().archive_status == Source.ArchiveStatus.ARCHIVED
        assert len(archive_stub.captures[PAGE]) == 1


@pytest.mark.django_db
class TestFirstCaptureNeverLost:
    FIRST = datetime(2019, 5, 1, 9, 30, tzinfo=UTC)

    def test_a_malformed_cdx_answer_keeps_the_page_waiting_for_its_first_capture(
        self, archive_stub, sent_jobs
    ):
        archive_stub.add_capture(PAGE, self.FIRST)
        archive_stub.fail_next("cdx", Fault(body=b"<html>maintenance</html>"))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.PENDING
        assert source.earliest_capture_at is None
        assert "malformed answer from the CDX API" in source.last_archive_error
        make_due(source)
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED
        assert source.earliest_capture_at == self.FIRST
        assert source.possible_temporal_leak(date(2019, 1, 1))

    def test_an_archived_page_whose_first_capture_is_unknown_is_asked_again_until_known(
        self, archive_stub, sent_jobs
    ):
        # Archived before the first capture was known (an earlier release read a malformed
        # answer as "none"; a lagging index; a cited archive link).
        source = Source.objects.create(
            url=PAGE,
            normalized_url=normalize_url(PAGE),
            archive_status=Source.ArchiveStatus.ARCHIVED,
            archived_url=f"https://web.archive.org/web/20210101000000/{PAGE}",
        )
        archive_stub.fail_next("cdx", Fault(503))
        assert archiving.queue_due_jobs() == [source.pk]
        archiving.run_archive_job(source.pk)
        source.refresh_from_db()
        assert source.earliest_capture_at is None
        assert archiving.queue_due_jobs() == []  # asked within the hour: not yet again
        an_hour_ago = timezone.now() - timedelta(hours=1, minutes=1)
        Source.objects.filter(pk=source.pk).update(claimed_at=an_hour_ago, queued_at=an_hour_ago)
        archive_stub.add_capture(PAGE, self.FIRST)
        assert archiving.queue_due_jobs() == [source.pk]
        archiving.run_archive_job(source.pk)
        source.refresh_from_db()
        assert source.earliest_capture_at == self.FIRST
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED
        Source.objects.filter(pk=source.pk).update(claimed_at=an_hour_ago, queued_at=an_hour_ago)
        assert archiving.queue_due_jobs() == []  # known: never asked again

    def test_archive_today_links_are_not_asked_for_a_first_capture(self, sent_jobs):
        Source.for_url("https://archive.ph/AbC12")
        assert archiving.queue_due_jobs() == []


@pytest.mark.django_db
class TestLookUpsOnce:
    def test_a_job_waiting_for_a_save_slot_keeps_its_look_ups(
        self, archive_stub, sent_jobs, settings
    ):
        settings.ARCHIVE_SAVE_RATE_LIMIT = 1
        archived(f"{PAGE}/1")
        waiting = archived(f"{PAGE}/2")
        assert waiting.archive_status == Source.ArchiveStatus.PENDING
        assert waiting.looked_up_at is not None
        look_ups = [h for h in archive_stub.received if h.api != "save"]
        for _early in range(3):  # woken before its slot: it waits again, asking nothing
            Source.objects.filter(pk=waiting.pk).update(next_attempt_at=timezone.now())
            assert archived(waiting.url).archive_status == Source.ArchiveStatus.PENDING
        make_due(waiting)
        assert archived(waiting.url).archive_status == Source.ArchiveStatus.ARCHIVED
        assert [h for h in archive_stub.received if h.api != "save"] == look_ups
        # A page never captured costs two look-ups: the CDX index, then the availability API.
        assert len(look_ups) == 4

    def test_look_up_errors_spend_no_save_attempt_and_end_after_the_set_count(
        self, archive_stub, sent_jobs, settings
    ):
        settings.ARCHIVE_MAX_ATTEMPTS = 3
        archive_stub.fail_next("available", Fault(503), Fault(503), Fault(503))
        for failures in (1, 2):
            source = archived()
            assert source.archive_status == Source.ArchiveStatus.PENDING
            assert (source.lookup_failures, source.archive_attempts) == (failures, 0)
            make_due(source)
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.FAILED
        assert source.last_archive_error == "the archive answered HTTP 503"
        assert archive_stub.hits_to("save") == []

    def test_the_default_back_off_reaches_its_ceiling_before_a_source_fails(self, settings):
        # The defaults the README documents: 30 s doubling up to an hour, 9 failures.
        assert (settings.ARCHIVE_RETRY_BACKOFF, settings.ARCHIVE_RETRY_BACKOFF_MAX) == (30, 3600)
        ceilings = [archiving.backoff_ceiling(n) for n in range(1, settings.ARCHIVE_MAX_ATTEMPTS)]
        assert max(ceilings) == settings.ARCHIVE_RETRY_BACKOFF_MAX
        assert sum(c / 2 for c in ceilings) >= 3600  # at least an hour of retries, jitter and all


@pytest.mark.django_db
class TestTemporalCheckGaps:
    CLAIM_DATE = date(2020, 10, 31)

    @pytest.mark.parametrize(
        ("stamp", "flagged"),
        [("20201030120000", False), ("20201031235959", False), ("20201101000000", True)],
        ids=["captured before", "captured that day", "captured after"],
    )
    def test_a_cited_archive_link_is_judged_by_its_own_capture_time(self, stamp, flagged):
        link = f"https://web.archive.org/web/{stamp}/https://example.org/a"
        assert archiving.queue_archiving([link]) == []  # already a copy: no job
        source = Source.objects.get()
        # The page existed long before; the copy the annotator read did not.
        source.earliest_capture_at = datetime(2019, 1, 1, tzinfo=UTC)
        source.save()
        answer = AnswerFactory(
            source_url=link,
            source=source,
            question__evidence_round__claim__claim_date=self.CLAIM_DATE,
        )
        assert answer.possible_temporal_leak is flagged
        live = AnswerFactory(source_url="https://example.org/a", source=source)
        live.question.evidence_round.claim.claim_date = self.CLAIM_DATE
        assert live.possible_temporal_leak is False

    def test_a_typed_archive_link_after_the_claim_date_gets_the_date_hint(self):
        link = "https://web.archive.org/web/20201105000000/https://example.org/b"
        problem = source_date_problem(link, self.CLAIM_DATE)
        assert problem and "captured on 2020-11-05" in problem
        assert source_date_problem(link.replace("20201105", "20201005"), self.CLAIM_DATE) is None

    def test_a_page_first_captured_by_our_own_save_is_flagged(self, archive_stub, sent_jobs):
        source = archived()  # the archive had no capture: ours is its first
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED
        assert source.earliest_capture_at == source.archived_at
        assert source.possible_temporal_leak(self.CLAIM_DATE)

    def test_our_save_is_not_the_first_capture_when_the_archive_had_older_ones(
        self, archive_stub, sent_jobs
    ):
        older = timezone.now() - timedelta(days=30)
        archive_stub.add_capture(PAGE, older)
        source = archived()
        assert len(archive_stub.hits_to("save", 200)) == 1
        assert abs(source.earliest_capture_at - older) < timedelta(seconds=1)


@pytest.mark.django_db
class TestArchivingOff:
    def test_with_archiving_off_no_job_is_sent_and_a_delivered_one_does_nothing(
        self, archive_stub, sent_jobs, settings
    ):
        source = Source.for_url(PAGE)
        settings.ARCHIVE_ENABLED = False
        assert archiving.queue_due_jobs() == []
        assert archiving.run_archive_job(source.pk) is None  # a job sent before switching off
        assert sent_jobs == [] and archive_stub.received == []
        source.refresh_from_db()
        assert source.archive_status == Source.ArchiveStatus.PENDING  # kept for later
        settings.ARCHIVE_ENABLED = True
        assert archiving.queue_due_jobs() == [source.pk]


@pytest.mark.django_db
class TestSaveTimetable:
    @pytest.mark.parametrize("seed", [3, 11])
    def test_no_minute_ever_holds_more_saves_than_the_limit_and_each_page_saves_once(
        self, settings, seed
    ):
        """Jobs ask at random times and come back at their slot, sometimes a little late and
        sometimes too late (they then queue again): a simulated clock, no waiting."""
        rng = random.Random(seed)
        settings.ARCHIVE_SAVE_RATE_LIMIT = 4
        start = timezone.now()
        asks = []
        for n in range(30):
            url = f"{PAGE}/{n}"
            source = Source.objects.create(url=url, normalized_url=url)
            asks.append((start + timedelta(seconds=rng.uniform(0, 150)), source.pk))
        heapq.heapify(asks)
        sent: dict[int, datetime] = {}
        for _step in range(2000):
            if not asks:
                break
            now, source_id = heapq.heappop(asks)
            wait = archiving.take_save_slot(source_id, now=now)
            if wait == 0:
                assert source_id not in sent
                sent[source_id] = now
            else:
                late = rng.choice([0.0, 0.0, 0.3, 1.5, 3.0])
                heapq.heappush(asks, (now + timedelta(seconds=wait + late), source_id))
        assert len(sent) == 30
        times = sorted(sent.values())
        for i, first in enumerate(times):
            in_a_minute = [t for t in times[i:] if t - first < timedelta(seconds=60)]
            assert len(in_a_minute) <= 4
