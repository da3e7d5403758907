"""A stand-in for the Internet Archive on 127.0.0.1, answering in the shapes the real
availability, CDX and Save Page Now APIs use (recorded from web.archive.org):

- GET /wayback/available?url=U&timestamp=T -> {"url": U, "archived_snapshots": {"closest":
  {"status": "200", "available": true, "url": "http://web.archive.org/web/T/U",
  "timestamp": T}}} or {"url": U, "archived_snapshots": {}};
- GET /cdx/search/cdx?url=U&closest=T&sort=closest&limit=1 -> lines of
  "urlkey timestamp original mimetype statuscode digest length";
- GET /save/U -> 200 with "Content-Location: /web/<timestamp>/U" (a new capture), or 429 with
  Retry-After when saves come too fast.

Faults are queued per API ("save", "available", "cdx"): an HTTP status with headers, a
delay longer than the client's timeout, or a malformed body. Every request is logged with its
monotonic time, so tests and the benchmark can check the save rate from the server's side.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

DIGEST = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


@dataclass
class Fault:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0


@dataclass
class Hit:
    at: float
    api: str
    url: str
    status: int


def wayback_ts(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%d%H%M%S")


def saved_headers(url: str, moment: datetime) -> dict[str, str]:
    """The headers Save Page Now answers a finished capture with: a memento Link header."""
    ts = wayback_ts(moment)
    when = moment.strftime("%a, %d %b %Y %H:%M:%S GMT")
    link = (
        f'<{url}>; rel="original", '
        f'<https://web.archive.org/web/timemap/link/{url}>; rel="timemap"; '
        'type="application/link-format", '
        f'<https://web.archive.org/web/{url}>; rel="timegate", '
        f'<https://web.archive.org/web/{ts}/{url}>; rel="memento"; datetime="{when}", '
        f'<https://web.archive.org/web/{ts}/{url}>; rel="last memento"; datetime="{when}"'
    )
    return {"Content-Type": "text/html; charset=utf-8", "Link": link}


class ArchiveStub:
    def __init__(self) -> None:
        self.captures: dict[str, list[str]] = defaultdict(list)  # original URL -> timestamps
        self.faults: dict[str, deque[Fault]] = defaultdict(deque)
        self.hits: list[Hit] = []  # answered requests
        self.received: list[Hit] = []  # every request, logged on arrival
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                stub._handle(self)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # --- set-up and inspection -----------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ArchiveStub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def add_capture(self, url: str, moment: datetime) -> None:
        with self.lock:
            self.captures[url].append(wayback_ts(moment))
            self.captures[url].sort()

    def fail_next(self, api: str, *faults: Fault) -> None:
        self.faults[api].extend(faults)

    def hits_to(self, api: str, status: int | None = None) -> list[Hit]:
        return [h for h in self.hits if h.api == api and (status is None or h.status == status)]

    def max_saves_in_any_minute(self) -> int:
        """The most save requests that arrived within any 60 seconds."""
        times = sorted(h.at for h in self.received if h.api == "save")
        best, start = 0, 0
        for end, moment in enumerate(times):
            while moment - times[start] >= 60.0:
                start += 1
            best = max(best, end - start + 1)
        return best

    # --- answering -----------------------------------------------------------------------

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(request.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path.startswith("/save/"):
            # The saved page's own query string belongs to it, not to the save request.
            api, url = "save", unquote(request.path[len("/save/") :])
        elif parts.path == "/wayback/available":
            api, url = "available", query.get("url", "")
        elif parts.path == "/cdx/search/cdx":
            api, url = "cdx", query.get("url", "")
        else:
            api, url = "other", parts.path
        with self.lock:
            self.received.append(Hit(time.monotonic(), api, url, 0))
            fault = self.faults[api].popleft() if self.faults[api] else None
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            self._send(request, api, url, fault.status, fault.body, fault.headers)
            return
        if api == "save":
            moment = datetime.now(UTC)
            self.add_capture(url, moment)
            self._send(
                request,
                api,
                url,
                200,
                b"<html><body>Saved</body></html>",
                saved_headers(url, moment),
            )
        elif api == "available":
            with self.lock:
                stamps = list(self.captures.get(url, []))
            body: dict = {"url": url, "archived_snapshots": {}}
            if stamps:
                ts = stamps[-1]  # asked with the current time: the newest is the closest
                body["archived_snapshots"]["closest"] = {
                    "status": "200",
                    "available": True,
                    "url": f"http://web.archive.org/web/{ts}/{url}",
                    "timestamp": ts,
                }
            self._send(request, api, url, 200, json.dumps(body).encode())
        elif api == "cdx":
            with self.lock:
                stamps = list(self.captures.get(url, []))
            closest = query.get("closest", "")
            if stamps:
                ts = stamps[0] if closest < stamps[0] else stamps[-1]
                key = urlsplit(url).netloc + ")" + urlsplit(url).path
                line = f"{key} {ts} {url} text/html 200 {DIGEST} 1234\n"
                self._send(request, api, url, 200, line.encode(), {"Content-Type": "text/plain"})
            else:
                self._send(request, api, url, 200, b"", {"Content-Type": "text/plain"})
        else:
            self._send(request, api, url, 404, b"not found")

    def _send(
        self,
        request: BaseHTTPRequestHandler,
        api: str,
        url: str,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
    ) -> None:
        with self.lock:
            self.hits.append(Hit(time.monotonic(), api, url, status))
        try:
            request.send_response(status)
            for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                request.send_header(name, value)
            request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)
