"""A stand-in for the Internet Archive on 127.0.0.1, answering in the shapes the real
availability, CDX and Save Page Now APIs use (recorded from web.archive.org):

- GET /wayback/available?url=U&timestamp=T -> {"url": U, "archived_snapshots": {"closest":
  {"status": "200", "available": true, "url": "http://web.archive.org/web/T/U",
  "timestamp": T}}} or {"url": U, "archived_snapshots": {}};
- GET /cdx/search/cdx?url=U&closest=T&sort=closest&limit=1 -> lines of
  "urlkey timestamp original mimetype statuscode digest length";
- GET /save/U -> 200 with a memento Link header (a new capture), or 429 with Retry-After when
  saves come too fast. Like the real Save Page Now it can hold each client to a number of
  captures a minute (`save_limits`: authenticated clients, who send "Authorization: LOW
  key:secret", and anonymous ones), answering 429 with Retry-After beyond it.

Faults are queued per API ("save", "available", "cdx"): an HTTP status with headers, a
delay longer than the client's timeout, a malformed body, a connection reset, or an answer
trickled out one header line at a time (each line within any per-read timeout). Every request
is logged with its monotonic time on arrival, so tests and the benchmark check the save rate
and the pauses after a 429 from the server's side.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

DIGEST = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


@dataclass
class Fault:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0
    reset: bool = False  # close the connection with a TCP reset instead of answering
    trickle: float = 0.0  # seconds between header lines (then between body bytes)
    trickle_lines: int = 10


@dataclass
class Hit:
    at: float
    api: str
    url: str
    status: int
    authorization: str = ""
    retry_after: float | None = None  # of a 429/503 answer
    fault: bool = False  # answered by a queued fault (a save answered so made no capture)


def wayback_ts(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%d%H%M%S")


def saved_headers(url: str, moment: datetime) -> dict[str, str]:
    """The headers Save Page Now answers a finished capture with: a memento Link header."""
    # Header values are Latin-1 on the wire: the archive sends an address with other
    # letters (the demo's non-Latin pages) percent-encoded.
    url = quote(url, safe=":/?#[]@!$&'()*+,;=%~")
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
    def __init__(
        self, *, save_limits: dict[str, int] | None = None, limit_retry_after: int = 60
    ) -> None:
        self.captures: dict[str, list[str]] = defaultdict(list)  # original URL -> timestamps
        self.faults: dict[str, deque[Fault]] = defaultdict(deque)
        self.hits: list[Hit] = []  # answered requests
        self.received: list[Hit] = []  # every request, logged on arrival
        # Captures a minute per kind of client ("authenticated", "anonymous"); None: no limit.
        self.save_limits = save_limits
        self.limit_retry_after = limit_retry_after
        self.limit_refusals = 0  # 429s the stub's own limit answered
        self.captures_made: list[tuple[float, bool]] = []  # (when, by an authenticated client)
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

    def saves_made(self) -> list[str]:
        """The URL of every capture a save request made (faulted answers make none)."""
        return [h.url for h in self.hits_to("save", 200) if not h.fault]

    def gaps_after_429(self) -> list[tuple[float, float]]:
        """(seconds from each 429 to the next request of any kind, its Retry-After)."""
        with self.lock:
            arrivals = sorted(h.at for h in self.received)
            refusals = [h for h in self.hits if h.status == 429]
        gaps = []
        for refusal in refusals:
            later = [at for at in arrivals if at > refusal.at]
            if later:
                gaps.append((later[0] - refusal.at, refusal.retry_after or 0.0))
        return gaps

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
        authorization = request.headers.get("Authorization", "")
        with self.lock:
            arrived = time.monotonic()
            self.received.append(Hit(arrived, api, url, 0, authorization))
            fault = self.faults[api].popleft() if self.faults[api] else None
            over_limit = fault is None and api == "save" and self._over_limit(authorization)
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.reset:
                self._reset(request, api, url)
            elif fault.trickle:
                self._trickle(request, api, url, fault)
            else:
                self._send(request, api, url, fault.status, fault.body, fault.headers, fault=True)
            return
        if over_limit:
            self.limit_refusals += 1
            retry = {"Retry-After": str(self.limit_retry_after)}
            self._send(request, api, url, 429, b"Too Many Requests", retry)
            return
        if api == "save":
            moment = datetime.now(UTC)
            self.add_capture(url, moment)
            with self.lock:
                self.captures_made.append((time.monotonic(), authorization.startswith("LOW ")))
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

    def _over_limit(self, authorization: str) -> bool:
        """Whether one more capture now would pass the client's captures a minute (called
        with the lock held)."""
        if self.save_limits is None:
            return False
        authenticated = authorization.startswith("LOW ")
        now = time.monotonic()
        recent = [at for at, by in self.captures_made if by == authenticated and now - at < 60.0]
        return len(recent) >= self.save_limits["authenticated" if authenticated else "anonymous"]

    def _log_answer(
        self, api: str, url: str, status: int, headers: dict[str, str], fault: bool = False
    ) -> None:
        retry_after = headers.get("Retry-After", "")
        with self.lock:
            self.hits.append(
                Hit(
                    time.monotonic(),
                    api,
                    url,
                    status,
                    retry_after=float(retry_after) if retry_after.isdigit() else None,
                    fault=fault,
                )
            )

    def _reset(self, request: BaseHTTPRequestHandler, api: str, url: str) -> None:
        """Close with a TCP reset (SO_LINGER 0), as a dropped connection looks to the client."""
        self._log_answer(api, url, 0, {}, fault=True)
        request.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        request.close_connection = True
        request.connection.close()

    def _trickle(self, request: BaseHTTPRequestHandler, api: str, url: str, fault: Fault) -> None:
        """A 200 whose header lines, then body bytes, come `fault.trickle` seconds apart."""
        self._log_answer(api, url, fault.status, fault.headers, fault=True)
        body = fault.body or b'{"archived_snapshots": {}}'
        try:
            request.wfile.write(f"HTTP/1.1 {fault.status} OK\r\n".encode())
            for n in range(fault.trickle_lines):
                request.wfile.write(f"X-Slow-{n}: x\r\n".encode())
                request.wfile.flush()
                time.sleep(fault.trickle)
            request.wfile.write(f"Content-Length: {len(body)}\r\n\r\n".encode())
            for byte in body:
                request.wfile.write(bytes([byte]))
                request.wfile.flush()
                time.sleep(fault.trickle)
        except (BrokenPipeError, ConnectionResetError):
            pass
        request.close_connection = True

    def _send(
        self,
        request: BaseHTTPRequestHandler,
        api: str,
        url: str,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        fault: bool = False,
    ) -> None:
        self._log_answer(api, url, status, headers or {}, fault)
        try:
            request.send_response(status)
            for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                request.send_header(name, value)
            request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)
