"""Exactly one beat sends the periodic jobs, however many are started, and the archive
settings that decide what the beat sends."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from django.conf import settings

from config import beat
from config.beat import SingleBeatScheduler
from config.celery import app
from search_proxy.tasks import archive_source


@pytest.fixture
def start_beat(tmp_path, db):
    """Beats with their own schedule files and one job due every 50 ms; each records what it
    sends instead of sending it."""
    started: list[SingleBeatScheduler] = []

    def start(name: str) -> tuple[SingleBeatScheduler, list[str]]:
        scheduler = SingleBeatScheduler(app=app, schedule_filename=str(tmp_path / name))
        scheduler.update_from_dict({"ping": {"task": "ping", "schedule": 0.05}})
        sent: list[str] = []
        scheduler.apply_entry = lambda entry, producer=None: sent.append(entry.name)
        started.append(scheduler)
        return scheduler, sent

    yield start
    for scheduler in started:
        scheduler.close()


def tick_for(seconds: float, *schedulers: SingleBeatScheduler) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for scheduler in schedulers:
            scheduler.tick()
        time.sleep(0.06)


def test_a_second_beat_sends_nothing_while_the_first_holds_the_lease(start_beat):
    first, sent_first = start_beat("first")
    second, sent_second = start_beat("second")
    tick_for(0.5, first, second)
    assert sent_first and "ping" in sent_first
    assert sent_second == []


def test_a_beat_takes_over_once_the_silent_one_s_lease_runs_out(start_beat, monkeypatch):
    # A lease of a few seconds, not one: the database cache cuts expiry times to the second,
    # so a one-second lease could run out between two ticks of a live first beat.
    monkeypatch.setattr(beat, "LEASE_SECONDS", 3.0)
    first, _sent_first = start_beat("first")
    second, sent_second = start_beat("second")
    tick_for(0.3, first, second)
    first.tick()  # the first beat's last renewal; then it is killed and renews nothing
    last_renewal = time.monotonic()
    assert sent_second == []
    deadline = last_renewal + 20  # bounded: a lease that never runs out fails the test
    while "ping" not in sent_second and time.monotonic() < deadline:
        second.tick()
        time.sleep(0.06)
    assert "ping" in sent_second
    # Not before the lease ran out; Django's database cache stores expiry times in whole
    # seconds (microseconds dropped), so a lease may end up to a second early.
    assert time.monotonic() - last_renewal >= 3.0 - 1.0


def test_an_embedded_beat_ends_once_its_worker_is_gone(start_beat, monkeypatch):
    scheduler, sent = start_beat("orphan")
    monkeypatch.setattr(beat, "_embedding_worker", os.getppid() + 100_000)  # not our parent
    with pytest.raises(SystemExit):
        scheduler.tick()
    assert sent == []


def test_archive_jobs_have_soft_and_hard_time_limits_within_the_job_lease():
    assert archive_source.soft_time_limit == settings.ARCHIVE_JOB_SOFT_TIME_LIMIT
    assert archive_source.time_limit == settings.ARCHIVE_JOB_TIME_LIMIT
    assert archive_source.soft_time_limit < archive_source.time_limit
    assert archive_source.time_limit < settings.ARCHIVE_JOB_LEASE


SHOW = """
import importlib, os
import config.settings as s
keys = {"ARCHIVE_ACCESS_KEY": "a", "ARCHIVE_SECRET_KEY": "b"}
for env in ({}, keys, {"ARCHIVE_ENABLED": "false"}):
    for name in ("ARCHIVE_ACCESS_KEY", "ARCHIVE_SECRET_KEY", "ARCHIVE_ENABLED"):
        os.environ.pop(name, None)
    os.environ.update(env)
    importlib.reload(s)
    print(s.ARCHIVE_SAVE_RATE_LIMIT, "queue-due-archive-jobs" in s.CELERY_BEAT_SCHEDULE)
"""


def test_the_default_save_rate_follows_the_keys_and_archiving_off_leaves_the_beat_alone(
    tmp_path,
):
    left_out = ("ARCHIVE_SAVE_RATE_LIMIT", "DJANGO_ALLOW_ASYNC_UNSAFE")
    environment = {k: v for k, v in os.environ.items() if k not in left_out}
    environment["VAR_DIR"] = str(tmp_path)
    shown = subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    anonymous, authenticated, switched_off = shown.stdout.split("\n")[:3]
    assert anonymous == "4 True"  # Save Page Now's anonymous limit
    assert authenticated == "12 True"  # and an authenticated client's
    assert switched_off.endswith("False")  # the beat sends no archive job at all
