"""Faults during a load run, then the same database checks as tests/load/run.py:

    python -m tests.load.faults --users 20 --duration 90 \
        --database-url postgres://postgres@127.0.0.1:5432/averitec_faults_bench \
        --broker redis://127.0.0.1:6379/7

While N annotators work (PostgreSQL, Redis, gunicorn, a Celery worker with beat):
- the stub Internet Archive answers 503, 429 with Retry-After, malformed bodies and
  answers slower than the client's timeout, throughout;
- at 15 s a gunicorn worker is killed (SIGKILL) mid-request; the master starts another;
- at 30 s every database connection of the app is dropped (pg_terminate_backend; the shared
  PostgreSQL server itself is not restarted: other work runs on it);
- at 45 s the Celery worker and its pool are killed (SIGKILL) with archive jobs in flight,
  and a new worker is started at 55 s.
Then: every acknowledged hand-in stored once, every acknowledged draft still there, nobody
given an article twice, no claim without its open task, every archive job finished.
A request cut off by a fault is an error the client sees (the browser's editor says "not
saved" and retries; tests/e2e/test_no_lost_work_in_the_browser.py); it is reported, not hidden.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections import Counter

import psycopg
from psycopg.conninfo import make_conninfo

from benchmarks.bench_db import database_name
from tests.load.run import agreement_rebuild_check, check_database, report, run
from tests.load.stack import Stack, source_urls

# Django is set up by Stack.prepare(), so the functions below import models when they run.


def kill_a_web_worker(stack: Stack) -> str:
    pids = stack.web_worker_pids()
    os.kill(pids[0], signal.SIGKILL)
    return f"killed gunicorn worker {pids[0]} (of {len(pids)})"


def drop_database_connections(stack: Stack) -> str:
    name = database_name(stack.database_url)
    with psycopg.connect(make_conninfo(stack.database_url), autocommit=True) as conn:
        dropped = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchone()[0]
    # The harness's own Django connection was among them: it reconnects for the checks.
    from django.db import connection

    connection.close()
    return f"terminated {dropped} database connections of the app"


def kill_the_worker(stack: Stack) -> str:
    from search_proxy.models import Source

    running = Source.objects.filter(archive_status=Source.ArchiveStatus.RUNNING).count()
    stack.kill_worker()
    return f"killed the Celery worker and its pool ({running} archive jobs running)"


def restart_the_worker(stack: Stack) -> str:
    stack.start_worker(beat=True)
    return "started a new Celery worker (with beat)"


def archive_faults(stack: Stack) -> None:
    from tests.search_proxy.archive_stub import Fault

    slow = Fault(delay=7.0)  # longer than ARCHIVE_HTTP_TIMEOUT=5
    for _ in range(40):
        stack.archive.fail_next(
            "available",
            Fault(status=503),
            Fault(status=429, headers={"Retry-After": "1"}),
            Fault(status=200, body=b"{not json"),
            slow,
            Fault(delay=2.0),  # in time but empty: keeps jobs in flight for the kill
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--duration", type=float, default=90)
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/averitec_faults_bench"
    )
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/7")
    parser.add_argument("--ramp", type=float, default=10.0, help="seconds over which people arrive")
    parser.add_argument("--api", action="store_true", help="autosave and hand in through the API")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    stack = Stack(
        users=args.users,
        database_url=args.database_url,
        broker_url=args.broker,
        # Many distinct pages, so archive jobs keep arriving during the whole run.
        source_urls=source_urls(300),
        extra_env={
            # A killed worker's unacknowledged jobs go to the next worker after 20 s, and a
            # source left "running" by it is sent again after 30 s (both an hour by default).
            "CELERY_VISIBILITY_TIMEOUT": "20",
            "CELERY_UNACKED_RESTORE_INTERVAL": "5",
            "ARCHIVE_JOB_LEASE": "30",
            "ARCHIVE_MAX_ATTEMPTS": "12",
        },
    )
    print(f"work folder {stack.workdir}; preparing the database and demo data…")
    stack.prepare()
    archive_faults(stack)
    events = {
        15: lambda: kill_a_web_worker(stack),
        30: lambda: drop_database_connections(stack),
        45: lambda: kill_the_worker(stack),
        55: lambda: restart_the_worker(stack),
    }
    problems, keep = [], True
    try:
        stack.start(beat=True)
        record = run(stack, args.duration, args.think, events, ramp=args.ramp, api=args.api)
        report(record, args.duration, users=args.users, ramp=args.ramp, think=args.think)
        problems = check_database(record, stack, settle=240)
        problems += agreement_rebuild_check(stack)
        answered = Counter(hit.status for hit in stack.archive.hits)
        print(f"archive stub answers by status: {dict(answered)}")
        # The faults cause client errors on purpose; the logs say which, so keep them.
        keep = args.keep or bool(problems or record.errors)
    finally:
        stack.stop()
        stack.clean_up(keep=keep)
        if keep:
            print(f"\nlogs kept in {stack.workdir / 'log'}: {stack.log_guide()}")
    print("\ndatabase checks: " + ("all passed" if not problems else f"{len(problems)} problems"))
    for problem in problems[:50]:
        print(f"  - {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
