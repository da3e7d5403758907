"""Archive jobs with real Celery workers on a real Redis broker, the real waybackpy client
against the stub: a job whose worker is killed mid-save is done after a restart; the beat
hands what a submit recorded to the workers, a 429 pauses every worker, and a worker's
embedded beat does not outlive the worker."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection

from search_proxy import archiving
from search_proxy.models import Source
from tests.search_proxy.archive_stub import Fault
from tests.workers import database_url, redis_url

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60  # seconds; every wait below is bounded by this


def _wait_for(condition, what: str, worker: subprocess.Popen) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if condition():
            return
        if worker.poll() is not None:
            break
        time.sleep(0.2)
    exited = worker.poll() is not None
    output = worker.communicate(timeout=10)[0].decode(errors="replace") if exited else ""
    raise AssertionError(f"{what} did not happen within {WAIT} s\n{output[-3000:]}")


@pytest.mark.real_worker
@pytest.mark.django_db(transaction=True)
def test_a_job_interrupted_by_killing_its_worker_is_completed_after_a_restart(
    archive_stub, tmp_path
):
    if connection.vendor != "postgresql":
        pytest.skip("a worker in another process needs a shared database server")
    broker = redis_url(flush=True)
    if broker is None:
        pytest.skip("Redis is not reachable")
    page = "https://news.example.org/killed-worker"
    source = Source.for_url(page)
    archive_stub.fail_next("save", Fault(504, delay=8.0))  # the first save hangs: time to kill
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "CELERY_BROKER_URL": broker,
        "CELERY_VISIBILITY_TIMEOUT": "3",
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
        "VAR_DIR": str(tmp_path / "var"),
        "ARCHIVE_BASE_URL": archive_stub.base_url,
        "ARCHIVE_AVAILABILITY_URL": archive_stub.base_url + "/wayback/available",
        # Longer than the hanging save (so it is killed, not timed out), short enough that
        # the dead worker's turn on the line (timeout + 5 s) ends well within WAIT.
        "ARCHIVE_HTTP_TIMEOUT": "10",
        "ARCHIVE_JOB_LEASE": "2",
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo"]
    command += ["-l", "WARNING", "--without-heartbeat", "--without-mingle", "--without-gossip"]

    def start() -> subprocess.Popen:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )

    first = start()
    try:
        Celery(broker=broker).send_task(archiving.ARCHIVE_TASK, args=[source.pk])
        _wait_for(
            lambda: archive_stub.received and any(h.api == "save" for h in archive_stub.received),
            "the first save request",
            first,
        )
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
    source.refresh_from_db()
    assert source.archive_status == Source.ArchiveStatus.RUNNING  # left behind by the dead worker

    second = start()
    try:
        _wait_for(
            lambda: (
                Source.objects.get(pk=source.pk).archive_status == Source.ArchiveStatus.ARCHIVED
            ),
            "archiving after the restart",
            second,
        )
    finally:
        second.terminate()
        second.communicate(timeout=30)
    source.refresh_from_db()
    assert source.archived_url.endswith(page)
    # The killed worker's save never made a capture; the restarted one made exactly one.
    assert len(archive_stub.captures[page]) == 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # not a zombie


@pytest.mark.real_worker
@pytest.mark.django_db(transaction=True)
def test_the_beat_hands_recorded_pages_to_workers_that_all_keep_a_429_pause(archive_stub, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("a worker in another process needs a shared database server")
    broker = redis_url(flush=True)
    if broker is None:
        pytest.skip("Redis is not reachable")
    pages = [f"https://news.example.org/beat/{n}" for n in range(4)]
    ids = archiving.queue_archiving(pages)  # what a submit records; nothing is sent
    archive_stub.fail_next("save", Fault(429, {"Retry-After": "2"}, b"Too Many Requests"))
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "CELERY_BROKER_URL": broker,
        "VAR_DIR": str(tmp_path / "var"),
        "ARCHIVE_BASE_URL": archive_stub.base_url,
        "ARCHIVE_AVAILABILITY_URL": archive_stub.base_url + "/wayback/available",
        "ARCHIVE_HTTP_TIMEOUT": "5",
        "ARCHIVE_SAVE_RATE_LIMIT": "100",
        "ARCHIVE_DISPATCH_SECONDS": "1",
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--concurrency=2"]
    command += ["--beat", "--schedule", str(tmp_path / "beat-schedule"), "-l", "WARNING"]
    command += ["--without-heartbeat", "--without-mingle", "--without-gossip"]
    worker = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        _wait_for(
            lambda: (
                Source.objects.filter(pk__in=ids, archive_status="archived").count() == len(ids)
            ),
            "archiving of the recorded pages",
            worker,
        )
        children = [
            int(pid)
            for pid in subprocess.run(
                ["pgrep", "-P", str(worker.pid)], capture_output=True, text=True
            ).stdout.split()
        ]
        worker.send_signal(signal.SIGKILL)  # the main process only: its beat is a child
        worker.wait(timeout=10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(pid) for pid in children):
            time.sleep(0.5)
        assert children and not any(_alive(pid) for pid in children), "a child outlived it"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.communicate(timeout=10)
    assert any(h.status == 429 for h in archive_stub.hits)
    for gap, retry_after in archive_stub.gaps_after_429():
        assert gap >= retry_after
    assert sorted(archive_stub.saves_made()) == sorted(pages)  # each page saved once
