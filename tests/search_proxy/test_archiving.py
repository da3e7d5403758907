"""Archive jobs against a stand-in Internet Archive on 127.0.0.1, through the real waybackpy
client (its endpoints pointed at the stub, see archive_stub.py)."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta

import pytest
from django.utils import timezone

from search_proxy import archive, archiving
from search_proxy.archive import ArchiveError
from search_proxy.models import ArchiveSave, Source
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
        assert len(ids) == 1 and [i for i, _ in sent_jobs] == ids
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
        assert sent_jobs[-1][0] == source.pk and sent_jobs[-1][1] >= 120

    def test_a_503_backs_off_and_the_next_attempt_succeeds(self, archive_stub, sent_jobs):
        archive_stub.fail_next("available", Fault(503, body=b"Service Unavailable"))
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.PENDING
        assert source.next_attempt_at > timezone.now()
        Source.objects.filter(pk=source.pk).update(next_attempt_at=timezone.now())
        source = archived()
        assert source.archive_status == Source.ArchiveStatus.ARCHIVED
        assert source.archive_attempts == 2

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
        assert source.last_archive_error == "network unreachable"
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
        assert 55 <= (waiting.next_attempt_at - timezone.now()).total_seconds() <= 63
        assert ArchiveSave.objects.count() == 2

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
