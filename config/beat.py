"""Exactly one Celery beat in the whole deployment, however many are started.

The beat sends the periodic jobs (lease expiry, archive dispatch, webhook retries). Two beats
double them; a beat embedded in a worker (`worker --beat`) runs in a child process that
outlives its worker when the worker's main process is killed, so a restarted worker would
start a second one. Two mechanisms keep it to one:

- a lease in the shared cache (CACHE_URL: Redis, or the database table by default): before
  each tick a beat takes or renews the lease; a beat that does not hold it sends nothing and
  asks again, so a second beat only takes over once the first has been silent for
  LEASE_SECONDS;
- an embedded beat ends itself once the worker that started it is gone.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid

from celery import signals
from celery.beat import PersistentScheduler
from django.core.cache import cache
from django.db import connections

logger = logging.getLogger(__name__)

LEASE_KEY = "celery-beat-lease"
LEASE_SECONDS = 60.0
TICK_SECONDS = 10.0  # a holder renews well within its lease

# The worker process that started this embedded beat (None for a beat of its own).
_embedding_worker: int | None = None


# Database connections this process inherited from its worker, kept referenced: closing or
# collecting them would end the worker's own sessions.
_inherited_connections: list[object] = []


@signals.beat_embedded_init.connect
def _remember_worker(**_kwargs) -> None:
    global _embedding_worker
    _embedding_worker = os.getppid()
    # The lease's cache may be the database: this process opens its own connections.
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None:
            _inherited_connections.append(conn.connection)
            conn.connection = None


def hold_lease(holder: str, seconds: float) -> bool:
    """Take or renew the beat lease for `holder`; False while another beat holds it."""
    if cache.add(LEASE_KEY, holder, timeout=seconds):
        return True
    if cache.get(LEASE_KEY) == holder:
        cache.set(LEASE_KEY, holder, timeout=seconds)
        return True
    return False


class SingleBeatScheduler(PersistentScheduler):
    """The persistent (shelve file) scheduler, ticking only while it holds the beat lease."""

    def __init__(self, *args, **kwargs) -> None:
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.holding = False
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs) -> float:
        if _embedding_worker is not None and os.getppid() != _embedding_worker:
            logger.warning("beat: the worker that started this beat is gone; stopping")
            raise SystemExit(0)
        holding = hold_lease(self.holder, LEASE_SECONDS)
        if holding != self.holding:
            logger.warning("beat %s %s the lease", self.holder, "holds" if holding else "lost")
            self.holding = holding
        if not holding:
            return TICK_SECONDS
        return min(super().tick(*args, **kwargs), TICK_SECONDS)
