"""The Internet Archive client against the stub on 127.0.0.1: every failure keeps its real
reason, every request ends by one overall deadline, and a 429 pauses the whole client."""

from __future__ import annotations

import errno
import socket
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from search_proxy import archive
from search_proxy.archive import ArchiveError, ArchiveWait
from search_proxy.models import ArchiveGate
from tests.search_proxy.archive_stub import Fault

PAGE = "https://news.example.org/2020/10/council-parks"
CALLS = [("available", archive.newest_capture), ("cdx", archive.earliest_capture)]
CALLS += [("save", archive.save)]


def failure_of(call, url: str = PAGE) -> ArchiveError:
    with pytest.raises(ArchiveError) as caught:
        call(url)
    return caught.value


@pytest.mark.django_db
class TestHonestReasons:
    @pytest.mark.parametrize(("api", "call"), CALLS, ids=[api for api, _ in CALLS])
    def test_a_connection_reset_is_a_retryable_reset_not_network_unreachable(
        self, archive_stub, api, call
    ):
        archive_stub.fail_next(api, Fault(reset=True))
        error = failure_of(call)
        assert error.retryable
        assert "reset" in error.reason
        assert "unreachable" not in error.reason

    def test_an_answer_the_server_could_not_write_is_a_closed_connection(self, archive_stub):
        # The stub cannot encode this header (not Latin-1): it drops the connection unanswered.
        archive_stub.fail_next("available", Fault(headers={"X-Note": "caf\u00e9 \u2603"}))
        error = failure_of(archive.newest_capture)
        assert error.retryable
        assert "closed the connection without answering" in error.reason

    def test_a_refused_connection_to_the_archive_is_network_unreachable(self, settings):
        settings.ARCHIVE_AVAILABILITY_URL = "http://127.0.0.1:9/wayback/available"
        error = failure_of(archive.newest_capture)
        assert not error.retryable
        assert error.reason.startswith("network unreachable")
        assert "refused" in error.reason

    def test_a_host_name_that_does_not_resolve_is_network_unreachable(self, settings, monkeypatch):
        real = socket.getaddrinfo

        def no_such_name(host, *args, **kwargs):
            if host == "archive.test":
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            return real(host, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
        settings.ARCHIVE_BASE_URL = "http://archive.test"
        error = failure_of(archive.earliest_capture)
        assert not error.retryable
        assert error.reason.startswith("network unreachable")
        assert "archive.test" in error.reason

    def test_any_other_connection_failure_is_retryable_and_keeps_its_own_words(
        self, archive_stub, monkeypatch
    ):
        def no_route(sock, address):
            raise OSError(errno.ENETUNREACH, "Network is unreachable")

        monkeypatch.setattr(socket.socket, "connect", no_route)
        error = failure_of(archive.earliest_capture)
        assert error.retryable
        assert "Network is unreachable" in error.reason
        assert not error.reason.startswith(("network unreachable", "timed out"))

    def test_a_5xx_is_retryable_with_its_status(self, archive_stub):
        archive_stub.fail_next("save", Fault(502, body=b"Bad Gateway"))
        error = failure_of(archive.save)
        assert error.retryable and error.reason == "the archive answered HTTP 502"


@pytest.mark.django_db
class TestMalformedAnswers:
    @pytest.mark.parametrize(
        "body",
        [b"<html>maintenance</html>", b"<html><body>" + b"x" * 80 + b"</body></html>"],
        ids=["short", "long"],
    )
    def test_a_malformed_cdx_answer_is_an_error_not_no_captures(self, archive_stub, body):
        archive_stub.fail_next("cdx", Fault(body=body, headers={"Content-Type": "text/html"}))
        error = failure_of(archive.earliest_capture)
        assert error.retryable and "malformed answer from the CDX API" in error.reason

    def test_an_empty_cdx_answer_means_no_captures(self, archive_stub):
        assert archive.earliest_capture(PAGE) is None


@pytest.mark.django_db
class TestOverallDeadline:
    @pytest.mark.parametrize(("api", "call"), CALLS, ids=[api for api, _ in CALLS])
    def test_an_answer_trickling_in_is_cut_at_the_deadline(self, archive_stub, settings, api, call):
        settings.ARCHIVE_HTTP_TIMEOUT = 1.0
        # One header line every 0.4 s: no single read waits as long as the timeout.
        archive_stub.fail_next(api, Fault(trickle=0.4, trickle_lines=10))
        started = time.monotonic()
        error = failure_of(call)
        assert time.monotonic() - started < 2.0
        assert error.retryable and "timed out after 1 s" in error.reason

    def test_a_body_trickling_in_is_cut_at_the_deadline(self, archive_stub, settings):
        settings.ARCHIVE_HTTP_TIMEOUT = 1.0
        body = b'{"url": "x", "archived_snapshots": {}}'
        archive_stub.fail_next("available", Fault(trickle=0.2, trickle_lines=1, body=body))
        started = time.monotonic()
        error = failure_of(archive.newest_capture)
        assert time.monotonic() - started < 2.0
        assert "timed out" in error.reason


@pytest.mark.django_db
class TestClientWidePause:
    def test_a_429_pauses_every_request_of_the_client_until_its_retry_after(self, archive_stub):
        archive_stub.fail_next("save", Fault(429, {"Retry-After": "90"}, b"Too Many Requests"))
        with pytest.raises(ArchiveWait) as first:
            archive.save(PAGE)
        assert first.value.until >= timezone.now() + timedelta(seconds=89)
        assert "429" in first.value.reason
        arrived = len(archive_stub.received)
        for _api, call in CALLS:  # another page, any API: nothing is sent while paused
            with pytest.raises(ArchiveWait) as later:
                call(PAGE + "/other")
            assert later.value.until == first.value.until
        assert len(archive_stub.received) == arrived

    def test_a_503_with_retry_after_pauses_the_client_and_one_without_does_not(self, archive_stub):
        archive_stub.fail_next("available", Fault(503), Fault(503, {"Retry-After": "30"}))
        plain = failure_of(archive.newest_capture)
        assert not isinstance(plain, ArchiveWait)
        with pytest.raises(ArchiveWait):
            archive.newest_capture(PAGE)
        with pytest.raises(ArchiveWait):
            archive.earliest_capture(PAGE)

    def test_requests_go_out_again_once_the_pause_is_over(self, archive_stub):
        archive_stub.fail_next("cdx", Fault(429, {"Retry-After": "1"}))
        with pytest.raises(ArchiveWait):
            archive.earliest_capture(PAGE)
        # A fast clock: the pause was recorded; move it into the past rather than wait.
        ArchiveGate.objects.update(paused_until=timezone.now() - timedelta(seconds=1))
        assert archive.earliest_capture(PAGE) is None

    def test_a_retry_after_given_as_a_date_is_honoured(self, archive_stub):
        when = timezone.now() + timedelta(minutes=5)
        header = when.strftime("%a, %d %b %Y %H:%M:%S GMT")
        archive_stub.fail_next("save", Fault(429, {"Retry-After": header}))
        with pytest.raises(ArchiveWait) as caught:
            archive.save(PAGE)
        assert abs((caught.value.until - when).total_seconds()) < 2


@pytest.mark.django_db
class TestAuthentication:
    def test_saves_carry_the_archive_keys_when_set(self, archive_stub, settings):
        settings.ARCHIVE_ACCESS_KEY, settings.ARCHIVE_SECRET_KEY = "access", "secret"
        archive.save(PAGE)
        [arrived] = [h for h in archive_stub.received if h.api == "save"]
        assert arrived.authorization == "LOW access:secret"

    def test_without_keys_saves_are_anonymous(self, archive_stub, settings):
        settings.ARCHIVE_ACCESS_KEY = settings.ARCHIVE_SECRET_KEY = ""
        archive.save(PAGE)
        assert [h.authorization for h in archive_stub.received] == [""]
