"""The whole platform on 127.0.0.1 for the load and fault runs: its own database (PostgreSQL
named *bench*, or a SQLite file), gunicorn, a real Celery worker (Redis broker, or the embedded
filesystem broker with SQLite), the stub Internet Archive of the tests, demo data and N
annotator accounts. Not a test module: pytest collects only tests/load/test_browser_form.py,
which checks the load run's posts against the real pages."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from benchmarks.bench_db import PROJECT_ROOT, database_name, refuse_unsafe_database

PASSWORD = "load-test-password"


def source_urls(n: int) -> list[str]:
    """Evidence pages the answers cite; the stub archive holds a recent capture of each."""
    return [f"https://council{i}.example.gov/budget-2019" for i in range(n)]


BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recreate_postgres_database(url: str) -> None:
    """A fresh database each run, so the checks see only this run's work."""
    name = database_name(url)
    refuse_unsafe_database(name)
    with psycopg.connect(make_conninfo(url, dbname="postgres"), autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        )
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


@dataclass
class Stack:
    users: int
    database_url: str | None  # None: SQLite, as `make demo` runs by default
    broker_url: str | None  # None: the embedded filesystem broker
    web_workers: int = 2
    web_threads: int = 8
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="averitec-load-")))
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    archive: object | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    # Few pages shared by every answer: each is archived once, early in the run.
    source_urls: list[str] = field(default_factory=lambda: source_urls(8))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def usernames(self) -> list[str]:
        return [f"load{i:03d}" for i in range(self.users)]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            DATABASE_URL=self.database_url or f"sqlite:///{self.workdir / 'db.sqlite3'}",
            CELERY_BROKER_URL=self.broker_url or "filesystem://",
            VAR_DIR=str(self.workdir),
            # The word lists METEOR reads stay where the project keeps them.
            NLTK_DATA=os.environ.get("NLTK_DATA", str(PROJECT_ROOT / "var" / "nltk_data")),
            MEDIA_ROOT=str(self.workdir / "media"),
            DEBUG="false",
            SECRET_KEY="load-test-only-key-" + "x" * 40,
            ARCHIVE_BASE_URL=self.archive.base_url,
            ARCHIVE_AVAILABILITY_URL=self.archive.base_url + "/wayback/available",
            ARCHIVE_HTTP_TIMEOUT="5",
            ARCHIVE_RETRY_BACKOFF="1",
            ARCHIVE_RETRY_BACKOFF_MAX="5",
            ARCHIVE_DISPATCH_SECONDS="2",
            ARCHIVE_SAVE_RATE_LIMIT="600",  # the stub sets no limit of its own here
            WEBHOOKS_ENABLED="false",
            PYTHONPATH=str(PROJECT_ROOT),
        )
        env.update(self.extra_env)
        return env

    # --- set-up ------------------------------------------------------------------------

    def prepare(self) -> None:
        """Database, demo data, accounts and work for every account (in this process)."""
        from tests.search_proxy.archive_stub import ArchiveStub

        self.archive = ArchiveStub().start()
        if self.database_url:
            recreate_postgres_database(self.database_url)
        os.environ.update(self.environment())
        if str(PROJECT_ROOT) not in sys.path:
            sys.path.insert(0, str(PROJECT_ROOT))
        import django

        django.setup()
        from django.core.management import call_command
        from django.utils import timezone

        call_command("migrate", interactive=False, verbosity=0)
        call_command("seed_demo", accounts_file=self.workdir / "accounts.txt", verbosity=0)
        self._accounts_and_articles()
        for url in self.source_urls:
            self.archive.add_capture(url, timezone.now() - timedelta(days=1))

    def _accounts_and_articles(self) -> None:
        from django.contrib.auth.hashers import make_password
        from django.db import transaction

        from annotation.models import Article, Batch, User
        from annotation.workflow import open_article_for_normalisation

        # One hash for all: hashing 200 passwords one by one would take minutes.
        hashed = make_password(PASSWORD)
        User.objects.bulk_create(
            User(
                username=name,
                password=hashed,
                role=User.Role.ANNOTATOR,
                qualified_phases=[1, 2, 3, 4, 5],
                completed_tours=["p1", "p2", "p3", "p4", "p5"],
            )
            for name in self.usernames
        )
        # Enough Phase 1 work that nobody runs dry: each article is one P1 task.
        with transaction.atomic():
            batch = Batch.objects.create(name="load: articles", kind=Batch.Kind.INTAKE)
            for i in range(max(200, 3 * self.users)):
                url = f"https://factcheck.example/load/{i}"
                article = Article.objects.create(
                    url=url, normalized_url=url, publisher="factcheck.example", batch=batch
                )
                open_article_for_normalisation(article)

    def start(self, beat: bool = False) -> None:
        self.start_worker(beat)
        env = self.environment()
        logs = self.workdir / "log"
        # Keep-alive longer than an annotator's pause between requests: with gunicorn's 2 s a
        # reused connection can close just as a request is sent (a proxy in front sets its own).
        self.processes["web"] = subprocess.Popen(
            [
                *(BIN / "gunicorn", "--bind", f"127.0.0.1:{self.port}"),
                *("--workers", str(self.web_workers), "--threads", str(self.web_threads)),
                *("--timeout", "60", "--graceful-timeout", "5", "--keep-alive", "10"),
                # Every request with its status and time taken (%(M)s ms) on the server side.
                *("--access-logfile", str(logs / "access.log")),
                *("--access-logformat", '%(t)s "%(r)s" %(s)s %(b)s %(M)sms'),
                "config.wsgi",
            ],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=(logs / "web.log").open("w"),
            stderr=subprocess.STDOUT,
        )
        self.wait_until_up()

    def start_worker(self, beat: bool = False) -> None:
        logs = self.workdir / "log"
        logs.mkdir(exist_ok=True)
        self.processes["worker"] = subprocess.Popen(
            [
                *(BIN / "celery", "-A", "config", "worker", "--concurrency=2"),
                *("--loglevel=INFO", "--without-gossip", "--without-mingle"),
                *(("--beat", "--schedule", str(self.workdir / "beat-schedule")) if beat else ()),
            ],
            cwd=PROJECT_ROOT,
            env=self.environment(),
            stdout=(logs / "worker.log").open("a"),
            stderr=subprocess.STDOUT,
            # Its own process group, so a fault can kill the worker and its pool children.
            start_new_session=True,
        )

    def kill_worker(self) -> None:
        """SIGKILL the Celery worker and its pool processes, as a crashed machine would."""
        process = self.processes.pop("worker")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def wait_until_up(self, timeout: float = 60) -> None:
        import requests

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(self.base_url + "/healthz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"gunicorn did not answer within {timeout} s; see {self.workdir}/log")

    def web_worker_pids(self) -> list[int]:
        master = self.processes["web"].pid
        out = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True)
        return [int(pid) for pid in out.stdout.split()]

    def stop(self) -> None:
        for name in ("web", "worker"):
            process = self.processes.pop(name, None)
            if process is None:
                continue
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if self.archive is not None:
            self.archive.stop()

    def log_guide(self) -> str:
        return (
            "web.log (gunicorn and Django errors), access.log (every request, server time), "
            "worker.log (Celery), harness-errors.log (each error: request, status, answer)"
        )

    def clean_up(self, keep: bool = False) -> None:
        if not keep:
            shutil.rmtree(self.workdir, ignore_errors=True)
