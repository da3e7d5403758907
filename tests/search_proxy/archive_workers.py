"""Archive workers in threads, for the multi-worker tests and benchmarks/archive_burst.py.

Runs the real archive jobs (search_proxy.archiving.run_archive_job) on several threads, each
with its own database connection, with an in-process queue standing in for the broker (it
honours each job's countdown) and a beat thread calling queue_due_jobs, which is what hands
the sources recorded by a submit to the workers. The broker and worker-crash side is covered
by tests/search_proxy/test_archive_worker.py with real Celery workers.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import Counter
from collections.abc import Iterable

from django.db import connection

from search_proxy import archiving
from search_proxy.models import Source


class DelayedQueue:
    """Stands in for the broker: jobs become available after their countdown."""

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, int]] = []
        self.lock = threading.Lock()
        self.sent = 0

    def send(self, ids: Iterable[int], countdown: float = 0) -> None:
        with self.lock:
            for source_id in ids:
                self.sent += 1
                heapq.heappush(
                    self.heap, (time.monotonic() + (countdown or 0), self.sent, source_id)
                )

    def take(self) -> int | None:
        with self.lock:
            if self.heap and self.heap[0][0] <= time.monotonic():
                return heapq.heappop(self.heap)[2]
        return None


class ArchiveWorkers:
    """`with ArchiveWorkers(4) as workers: workers.wait_until_settled(ids, 60)`."""

    def __init__(self, workers: int = 4, *, beat_seconds: float = 1.0) -> None:
        self.queue = DelayedQueue()
        self.count = workers
        self.beat_seconds = beat_seconds
        self.runs: Counter[str] = Counter()
        self.errors: list[BaseException] = []
        self.done = threading.Event()
        self.threads: list[threading.Thread] = []
        self._real_send = archiving.send_jobs

    def __enter__(self) -> ArchiveWorkers:
        archiving.send_jobs = self.queue.send  # the jobs' own retries land here too
        self.threads = [threading.Thread(target=self._work, daemon=True) for _ in range(self.count)]
        self.threads.append(threading.Thread(target=self._beat, daemon=True))
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(timeout=30)
        archiving.send_jobs = self._real_send

    def _work(self) -> None:
        try:
            while not self.done.is_set():
                source_id = self.queue.take()
                if source_id is None:
                    time.sleep(0.02)
                    continue
                self.runs[str(archiving.run_archive_job(source_id) or "nothing to do")] += 1
        except BaseException as exc:  # reported by the caller, not lost in a thread
            self.errors.append(exc)
        finally:
            connection.close()

    def _beat(self) -> None:
        try:
            while not self.done.wait(self.beat_seconds):
                archiving.queue_due_jobs()
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            connection.close()

    def unsettled(self, source_ids: list[int]) -> int:
        waiting = (Source.ArchiveStatus.PENDING, Source.ArchiveStatus.RUNNING)
        return Source.objects.filter(pk__in=source_ids, archive_status__in=waiting).count()

    def wait_until_settled(self, source_ids: list[int], timeout: float, progress=None) -> bool:
        """Whether every source ended archived or failed within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.errors:
            left = self.unsettled(source_ids)
            if progress is not None:
                progress(len(source_ids) - left)
            if not left:
                return True
            time.sleep(0.25)
        return False
