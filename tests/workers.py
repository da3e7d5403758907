"""For tests that start a real Celery worker in another process: where it finds the test
database and the Redis broker."""

from __future__ import annotations

import os

import redis
from django.db import connection


def database_url() -> str:
    """The test database, as a worker process started now must be told it."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def redis_url(*, flush: bool = False) -> str | None:
    """The tests' own Redis database, or None when Redis is not reachable; `flush` empties
    it first so no job is left from an earlier run."""
    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        client.ping()
    except Exception:
        return None
    if flush:
        client.flushdb()
    return url
