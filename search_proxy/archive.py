"""The Internet Archive client: every call to the Wayback Machine goes through here.

It drives waybackpy (availability, CDX and Save Page Now APIs) with these corrections:

- waybackpy sends its requests without a timeout, and requests' own timeout only bounds each
  socket read, so an answer trickling in one header line at a time never ends. Its modules'
  `requests` name is replaced by a shim whose sessions give every request one overall
  deadline of ARCHIVE_HTTP_TIMEOUT, covering the connection and the whole answer;
- every request takes its turn on the one line to the archive (models.ArchiveGate, shared by
  all workers through the database): one request in flight at a time, and a 429 (or a 503
  with Retry-After) pauses every save and look-up of every worker until the time it names;
- it retries inside its own HTTPAdapter and sleeps between save tries and API calls. Our
  job (archiving.py) owns retries, backoff and the global save rate, so the shim mounts no
  retrying adapter and the sleeps are turned off;
- an answer of the CDX index that is not CDX lines is an error, never "no captures";
- its endpoints are hard-coded; they are set from ARCHIVE_BASE_URL and
  ARCHIVE_AVAILABILITY_URL, which the tests point at a local stub. Saves carry the archive's
  keys (ARCHIVE_ACCESS_KEY, ARCHIVE_SECRET_KEY) when they are set.

Every failure comes out as ArchiveError with its real reason and whether to retry; a pause
of the whole client comes out as ArchiveWait (no failure of the page).
"""

from __future__ import annotations

import http.client
import io
import logging
import random
import re
import socket
import ssl
import time
import types
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import requests
import urllib3.connection
import urllib3.connectionpool
import urllib3.exceptions
import waybackpy.availability_api
import waybackpy.cdx_api
import waybackpy.cdx_utils
import waybackpy.exceptions
import waybackpy.save_api
from django.conf import settings
from django.utils import timezone
from requests.adapters import HTTPAdapter

from search_proxy.models import ArchiveGate

logger = logging.getLogger(__name__)

RETRY_STATUSES = (500, 502, 503, 504, 509)
DEFAULT_PAUSE = 60.0  # seconds, after a 429 that names no time
LONGEST_PAUSE = 24 * 3600.0  # a Retry-After beyond a day is read as a day
UNREACHABLE_PAUSE = 60.0  # offline: jobs fail at once this long without trying again
GATE_MARGIN = 5.0  # seconds a turn on the line may outlast its request's deadline


class ArchiveError(Exception):
    """The archive could not answer. `reason` is short and fit for a manager's list."""

    def __init__(
        self, reason: str, *, retryable: bool = True, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


class ArchiveWait(ArchiveError):
    """Nothing may be sent to the archive before `until`: the whole client is paused (a 429)
    or the line stayed busy. Not a failure of the page at hand."""

    def __init__(self, reason: str, *, until: datetime) -> None:
        super().__init__(reason, retry_after=max((until - timezone.now()).total_seconds(), 0))
        self.until = until


@dataclass(frozen=True)
class Capture:
    url: str  # the archived copy
    taken_at: datetime


# --- One overall deadline per request ------------------------------------------------------

# The monotonic time by which the request under way must be over (per thread and task).
_deadline: ContextVar[float | None] = ContextVar("archive_deadline", default=None)


class _DeadlineSocket:
    """A connected socket whose every read and write ends by the request's deadline: each
    call gets only the time that is left, so a trickle of bytes cannot stretch a request."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def _time_left(self) -> None:
        # The deadline of the request under way (a kept-alive connection serves several).
        left = (_deadline.get() or self._deadline) - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request's deadline passed")
        self._sock.settimeout(left)

    def recv_into(self, buffer, nbytes: int = 0, flags: int = 0) -> int:
        self._time_left()
        return self._sock.recv_into(buffer, nbytes, flags)

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self._time_left()
        return self._sock.recv(bufsize, flags)

    def sendall(self, data, flags: int = 0) -> None:
        self._time_left()
        self._sock.sendall(data, flags)

    def settimeout(self, value: float | None) -> None:
        pass  # the deadline decides; urllib3 would set the per-read timeout here

    def makefile(self, mode: str = "rb", buffering: int | None = None, **_kwargs) -> io.IOBase:
        # http.client reads the answer through this file: its reads must come back here.
        # The real socket counts open files so that closing the connection waits for them.
        self._sock._io_refs += 1  # type: ignore[attr-defined]
        return io.BufferedReader(socket.SocketIO(self, "rb"))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:
        self._sock._decref_socketios()  # type: ignore[attr-defined]

    def __getattr__(self, name: str):
        return getattr(self._sock, name)


class _DeadlineMixin:
    sock: object

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        deadline = _deadline.get()
        if deadline is not None:
            self.sock = _DeadlineSocket(self.sock, deadline)  # type: ignore[arg-type]


class _HTTPConnection(_DeadlineMixin, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_DeadlineMixin, urllib3.connection.HTTPSConnection):
    pass


class _HTTPPool(urllib3.connectionpool.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class _DeadlineAdapter(HTTPAdapter):
    """requests' plain adapter (no retries) whose connections keep the deadline."""

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


# --- The one line to the archive -----------------------------------------------------------

_turn: ContextVar[str | None] = ContextVar("archive_turn", default=None)


@contextmanager
def turn() -> Iterator[None]:
    """Hold the one line to the archive: no other request of any worker leaves meanwhile.

    Raises ArchiveWait while the client is paused (or the line stays busy longer than one
    request may last), ArchiveError while the archive is unreachable. Nested use holds the
    same turn, so a job can check its save slot and send the save in one turn.
    """
    if _turn.get() is not None:
        yield
        return
    holder = uuid.uuid4().hex
    _wait_for_turn(holder)
    token = _turn.set(holder)
    try:
        yield
    finally:
        _turn.reset(token)
        ArchiveGate.leave(holder)


def _wait_for_turn(holder: str) -> None:
    lease = settings.ARCHIVE_HTTP_TIMEOUT + GATE_MARGIN
    give_up = time.monotonic() + lease + 1.0  # the holder's lease is over by then
    pause = 0.02
    while True:
        if ArchiveGate.enter(holder, lease=lease):
            return
        gate = ArchiveGate.state()
        now = timezone.now()
        if gate.unreachable_until and gate.unreachable_until > now:
            raise ArchiveError(gate.unreachable_reason, retryable=False)
        if gate.paused_until and gate.paused_until > now:
            raise ArchiveWait(gate.pause_reason, until=gate.paused_until)
        if time.monotonic() >= give_up:
            # Many jobs queue for the line: come back shortly rather than hold a worker.
            raise ArchiveWait("", until=now + timedelta(seconds=random.uniform(1, 5)))
        time.sleep(pause)
        pause = min(pause * 1.5, 0.25)


# --- Requests --------------------------------------------------------------------------------


def _retry_after(response: requests.Response) -> float | None:
    """Seconds the server asks us to wait: Retry-After as seconds or as an HTTP date."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            seconds = (parsedate_to_datetime(value) - timezone.now()).total_seconds()
        except (TypeError, ValueError, IndexError):
            return None
    return min(max(seconds, 0.0), LONGEST_PAUSE)


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and what it wraps (causes, contexts, urllib3's reasons), outermost first."""
    found: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo and len(found) < 20:
        current = todo.pop(0)
        if any(current is seen for seen in found):
            continue
        found.append(current)
        inner = [current.__cause__, current.__context__, getattr(current, "reason", None)]
        inner += [a for a in current.args if isinstance(a, BaseException)]
        todo += [e for e in inner if isinstance(e, BaseException)]
    return found


def _failure(exc: requests.RequestException, url: str) -> ArchiveError:
    """The real reason a request failed, and whether trying again later can help. Only a name
    that does not resolve or a refused connection mean the archive is out of reach."""
    chain = _causes(exc)

    def seen(*kinds: type) -> BaseException | None:
        return next((e for e in chain if isinstance(e, kinds)), None)

    host = urlsplit(url).hostname or url
    if seen(urllib3.exceptions.NameResolutionError, socket.gaierror):
        return _unreachable(f"network unreachable: the name {host} does not resolve")
    if seen(ConnectionRefusedError):
        return _unreachable(f"network unreachable: {host} refused the connection")
    # urllib3's NewConnectionError is a ConnectTimeoutError too, whatever stopped the connection.
    timeouts = (TimeoutError, urllib3.exceptions.TimeoutError, requests.Timeout)
    if any(
        isinstance(e, timeouts) and not isinstance(e, urllib3.exceptions.NewConnectionError)
        for e in chain
    ):
        return ArchiveError(f"timed out after {settings.ARCHIVE_HTTP_TIMEOUT:g} s")
    if seen(http.client.RemoteDisconnected):
        return ArchiveError("the archive closed the connection without answering")
    if seen(ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
        return ArchiveError("the connection was reset by the archive")
    if seen(http.client.IncompleteRead, urllib3.exceptions.IncompleteRead):
        return ArchiveError("the archive's answer was cut off")
    unreadable = (http.client.HTTPException, urllib3.exceptions.DecodeError)
    if found := seen(*unreadable, urllib3.exceptions.HeaderParsingError):
        return ArchiveError(f"the archive's answer could not be read ({type(found).__name__})")
    if found := seen(ssl.SSLError):
        return ArchiveError(f"the secure connection failed ({type(found).__name__})")
    # Otherwise the system's own words: the first plain OSError under the library's wrappers.
    wrappers = (requests.RequestException, urllib3.exceptions.HTTPError)
    plain = [e for e in chain if isinstance(e, OSError) and not isinstance(e, wrappers)]
    cause = (plain or chain)[-1 if not plain else 0]
    return ArchiveError(f"request failed ({type(cause).__name__}: {str(cause)[:120]})")


def _unreachable(reason: str) -> ArchiveError:
    # Offline: fail at once (the beat schedule tries failed jobs again later), and let the
    # other jobs fail without trying for a while rather than each wait on the network.
    ArchiveGate.mark_unreachable(timezone.now() + timedelta(seconds=UNREACHABLE_PAUSE), reason)
    return ArchiveError(reason, retryable=False)


def _check_status(response: requests.Response) -> None:
    status = response.status_code
    wait = _retry_after(response)
    if status == 429 or (status == 503 and wait is not None):
        wait = DEFAULT_PAUSE if wait is None else wait
        reason = f"the archive answered HTTP {status} (Retry-After {wait:g} s)"
        until = timezone.now() + timedelta(seconds=wait)
        # Recorded before the turn ends: no request of any worker leaves inside the pause.
        ArchiveGate.pause(until, reason)
        logger.warning("archive paused until %s: %s", until, reason)
        raise ArchiveWait(reason, until=until)
    if status in RETRY_STATUSES:
        raise ArchiveError(f"the archive answered HTTP {status}", retry_after=wait)
    if status >= 400 and status != 404:
        raise ArchiveError(f"the archive refused the request (HTTP {status})", retryable=False)


class _BoundedSession(requests.Session):
    """A session whose every request takes its turn on the line, ends by one deadline, and
    whose answers are checked once."""

    def __init__(self) -> None:
        super().__init__()
        super().mount("https://", _DeadlineAdapter())
        super().mount("http://", _DeadlineAdapter())

    def mount(self, prefix, adapter) -> None:
        pass  # waybackpy mounts an adapter that retries with sleeps: retries are the job's.

    def request(self, method, url, *args, **kwargs):
        limit = settings.ARCHIVE_HTTP_TIMEOUT
        kwargs["timeout"] = (limit, limit)
        with turn():
            deadline = _deadline.set(time.monotonic() + limit)
            try:
                response = super().request(method, url, *args, **kwargs)
            except requests.RequestException as exc:
                raise _failure(exc, url) from None
            finally:
                _deadline.reset(deadline)
            _check_status(response)
        return response


def _bounded_get(url, **kwargs):
    with _BoundedSession() as session:
        return session.get(url, **kwargs)


_SHIM = types.SimpleNamespace(
    get=_bounded_get,
    Session=_BoundedSession,
    Response=requests.Response,
    RequestException=requests.RequestException,
)
# The only place waybackpy's network access is changed; see the module docstring.
for _module in (waybackpy.availability_api, waybackpy.save_api, waybackpy.cdx_utils):
    # waybackpy's modules bind `requests` by import; mypy does not see it as an attribute.
    _module.requests = _SHIM  # type: ignore[attr-defined]


# --- The three APIs --------------------------------------------------------------------------


def _agent() -> str:
    return settings.WAYBACK_USER_AGENT


def _parse_timestamp(text: str) -> datetime:
    try:
        return datetime.strptime(text.ljust(14, "0")[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        raise ArchiveError(f"malformed capture time {text[:40]!r}") from None


def _malformed(api: str, exc: Exception) -> ArchiveError:
    logger.info("malformed %s answer: %s", api, exc)
    return ArchiveError(f"malformed answer from the {api} API")


def newest_capture(url: str, *, ask_cdx: bool = True) -> Capture | None:
    """The newest capture the availability API knows of, else the CDX index's (unless
    `ask_cdx` is False: the caller just heard from it); None if none."""
    api = waybackpy.availability_api.WaybackMachineAvailabilityAPI(
        url, user_agent=_agent(), max_tries=1
    )
    api.endpoint = settings.ARCHIVE_AVAILABILITY_URL
    api.api_call_time_gap = 0  # waybackpy would otherwise sleep 5 s before the first call
    try:
        api.newest()
        closest = ((api.json or {}).get("archived_snapshots") or {}).get("closest")
        if closest and closest.get("available", True) and closest.get("url"):
            return Capture(
                url=closest["url"].replace("http://web.archive.org/", "https://web.archive.org/"),
                taken_at=_parse_timestamp(str(closest["timestamp"])),
            )
    except (waybackpy.exceptions.WaybackError, ValueError, KeyError, TypeError) as exc:
        raise _malformed("availability", exc) from None
    # The availability API lags behind new captures; the CDX index may have one.
    return _cdx_capture(url, newest=True) if ask_cdx else None


def earliest_capture(url: str) -> Capture | None:
    """The archive's first capture of the page (CDX), or None when it has none."""
    return _cdx_capture(url, newest=False)


# One CDX line: urlkey, 14-digit timestamp, original, mimetype, status, digest, length.
_CDX_LINE = re.compile(r"^\S+ \d{14} \S+ \S+ \S+ \S+ \S+$")


class _CheckedCDX(waybackpy.cdx_api.WaybackMachineCDXServerAPI):
    """waybackpy skips lines it cannot read, so a maintenance page would read as "no
    captures": here any non-empty answer that is not CDX lines is an error."""

    def cdx_api_manager(self, payload, headers):
        for text in super().cdx_api_manager(payload, headers):
            for line in text.splitlines():
                if line.strip() and not _CDX_LINE.match(line.strip()):
                    raise _malformed("CDX", ValueError(line[:80]))
            yield text


def _cdx_capture(url: str, *, newest: bool) -> Capture | None:
    api = _CheckedCDX(url, user_agent=_agent(), max_tries=1)
    api.endpoint = f"{settings.ARCHIVE_BASE_URL}/cdx/search/cdx"
    try:
        snapshot = api.newest() if newest else api.oldest()
    except waybackpy.exceptions.NoCDXRecordFound:
        return None
    except (waybackpy.exceptions.WaybackError, ValueError, IndexError) as exc:
        raise _malformed("CDX", exc) from None
    return Capture(url=snapshot.archive_url, taken_at=_parse_timestamp(snapshot.timestamp))


def save(url: str) -> Capture:
    """Ask Save Page Now for a capture of `url` (one request; the job decides on retries)."""
    api = waybackpy.save_api.WaybackMachineSaveAPI(url, user_agent=_agent(), max_tries=1)
    api.request_url = f"{settings.ARCHIVE_BASE_URL}/save/{api.url}"
    if settings.ARCHIVE_ACCESS_KEY:
        # The archive's S3-style keys: an authenticated client may save more a minute.
        key = f"{settings.ARCHIVE_ACCESS_KEY}:{settings.ARCHIVE_SECRET_KEY}"
        api.request_headers["Authorization"] = f"LOW {key}"
    try:
        archived = api.save()
    except waybackpy.exceptions.TooManyRequestsError:
        raise ArchiveError("the archive answered HTTP 429") from None
    except waybackpy.exceptions.MaximumSaveRetriesExceeded:
        raise ArchiveError("the archive did not return a capture") from None
    except (waybackpy.exceptions.WaybackError, ValueError) as exc:
        raise _malformed("save", exc) from None
    archived = archived.replace("http://web.archive.org/", "https://web.archive.org/")
    return Capture(url=archived, taken_at=_parse_timestamp(archived.split("/web/", 1)[1][:14]))


def is_recent(capture: Capture, *, now: datetime, max_age: timedelta) -> bool:
    return now - capture.taken_at <= max_age
