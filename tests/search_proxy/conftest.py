"""Fixtures for the search proxy: a local HTTP server with recorded answers, claims, tasks.

No test reaches the network. The search APIs' base URLs (GOOGLE_SEARCH_URL,
BRAVE_SEARCH_URL) point at `web_server`, a real HTTP server on 127.0.0.1 in a thread, so
the real client code builds and sends its requests and parses real HTTP answers.
"""

from __future__ import annotations

import datetime
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache

from annotation.models import Article, Task
from search_proxy import archiving
from search_proxy.dates import DateSource
from search_proxy.models import Document
from tests.factories import ArticleFactory, ClaimWaitingForQuestionsFactory, PooledTaskFactory
from tests.search_proxy.archive_stub import ArchiveStub

RESPONSES = Path(__file__).parent / "responses"
CLAIM_DATE = datetime.date(2020, 10, 31)
OWN_ARTICLE_URL = "https://checkyourfact.com/2020/11/03/fact-check-council-parks/"


def document(url: str, text: str, published=None, date_source=None, title="") -> Document:
    """A page of the local search index; its date counts as given when it has one."""
    return Document.objects.create(
        url=url,
        normalized_url=url,
        title=title,
        text=text,
        published=published,
        date_source=date_source or (DateSource.GIVEN if published else DateSource.UNKNOWN),
    )


def recorded(name: str) -> bytes:
    return (RESPONSES / name).read_bytes()


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering, for time-limit tests


@dataclass
class SeenRequest:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


class WebServer:
    """Serves `routes` (path -> Route) and remembers every request it got."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[SeenRequest] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                server.requests.append(
                    SeenRequest(parts.path, parse_qs(parts.query), dict(self.headers.items()))
                )
                route = server.routes.get(parts.path, Route(404, b'{"error": "not found"}'))
                if route.delay:
                    time.sleep(route.delay)
                try:
                    self.send_response(route.status)
                    headers = {"Content-Type": "application/json", **route.headers}
                    for name, value in headers.items():
                        self.send_header(name, value)
                    if "Content-Length" not in headers:
                        self.send_header("Content-Length", str(len(route.body)))
                    self.end_headers()
                    self.wfile.write(route.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a time-limit test)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        # A short poll interval: shutdown() waits up to one interval, after every test.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve(self, path: str, body: bytes | str = b"", status: int = 200, **kwargs) -> str:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Route(status, data, **kwargs)
        return self.url(path)

    def requests_to(self, path: str) -> list[SeenRequest]:
        return [r for r in self.requests if r.path == path]


@pytest.fixture
def web_server() -> Iterator[WebServer]:
    server = WebServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        server.thread.join(timeout=5)


@pytest.fixture
def local_pages(settings, web_server):
    """The suite's server on 127.0.0.1, exempted from the page fetcher's address check for
    this test only: the one way to run the real fetch end to end without the network."""
    settings.PAGE_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.PAGE_FETCH_TIMEOUT = 3.0
    return web_server


@pytest.fixture(autouse=True)
def _empty_search_cache(request):
    # The shared cache is a database table by default: a test without the database cannot
    # reach it, so there is nothing to clear.
    database = next((f for f in ("transactional_db", "db") if f in request.fixturenames), None)
    if database is None and request.node.get_closest_marker("django_db"):
        database = "db"
    if database is None and isinstance(caches["default"], DatabaseCache):
        yield
        return
    if database is not None:
        request.getfixturevalue(database)
    caches["default"].clear()
    yield
    caches["default"].clear()


@pytest.fixture
def google(settings, web_server):
    """Google configured with a key, its API served by the local server."""
    settings.GOOGLE_SEARCH_API_KEY = "test-google-key"
    settings.GOOGLE_SEARCH_ENGINE_ID = "0123456789abcdef0"
    settings.GOOGLE_SEARCH_URL = web_server.url("/customsearch/v1")
    settings.SEARCH_HTTP_TIMEOUT = 2.0
    return web_server


@pytest.fixture
def brave(settings, web_server):
    settings.BRAVE_SEARCH_API_KEY = "test-brave-key"
    settings.BRAVE_SEARCH_URL = web_server.url("/res/v1/web/search")
    settings.SEARCH_HTTP_TIMEOUT = 2.0
    return web_server


@pytest.fixture
def claim(db):
    """A claim of 31 October 2020 from Great Britain, waiting for questions, whose
    fact-checking article is on checkyourfact.com."""
    article = ArticleFactory(
        url=f"https://web.archive.org/web/20201130144023/{OWN_ARTICLE_URL}",
        normalized_url="https://checkyourfact.com/2020/11/03/fact-check-council-parks",
        publisher="checkyourfact.com",
        state=Article.State.NORMALISED,
    )
    return ClaimWaitingForQuestionsFactory(
        article=article, claim_date=CLAIM_DATE, location_iso_code="GB"
    )


@pytest.fixture
def p2_task(claim, annotator) -> Task:
    return PooledTaskFactory(
        claim=claim, annotator=annotator, status=Task.Status.IN_PROGRESS, phase=2
    )


@pytest.fixture
def resolve_as(monkeypatch) -> Callable[[dict[str, list[str]]], list[str]]:
    """Make host names resolve to chosen addresses (socket.getaddrinfo), IP literals as
    themselves; returns the list of names looked up."""
    looked_up: list[str] = []
    real = socket.getaddrinfo

    def install(table: dict[str, list[str]]) -> list[str]:
        def fake(host, port, *args, **kwargs):
            if host in table:
                looked_up.append(host)
                return [
                    (
                        socket.AF_INET6 if ":" in a else socket.AF_INET,
                        socket.SOCK_STREAM,
                        6,
                        "",
                        (a, port or 0, 0, 0) if ":" in a else (a, port or 0),
                    )
                    for a in table[host]
                ]
            return real(host, port, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", fake)
        return looked_up

    return install


def json_body(name: str) -> bytes:
    # Validate the recorded answers are JSON while loading them.
    return json.dumps(json.loads(recorded(name))).encode()


@pytest.fixture
def archive_stub(settings):
    """The Internet Archive's APIs served on 127.0.0.1, with the real waybackpy client."""
    stub = ArchiveStub().start()
    settings.ARCHIVE_BASE_URL = stub.base_url
    settings.ARCHIVE_AVAILABILITY_URL = stub.base_url + "/wayback/available"
    settings.ARCHIVE_HTTP_TIMEOUT = 1.0
    settings.ARCHIVE_RETRY_BACKOFF = 30.0
    try:
        yield stub
    finally:
        stub.stop()


@pytest.fixture
def sent_jobs(monkeypatch) -> list[tuple[int, float]]:
    """Archive jobs put on the broker, recorded instead of sent: (source id, countdown)."""
    sent: list[tuple[int, float]] = []
    monkeypatch.setattr(
        archiving,
        "send_jobs",
        lambda ids, countdown=0: sent.extend((i, countdown) for i in ids),
    )
    return sent
