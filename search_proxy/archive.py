"""The Internet Archive client: every call to the Wayback Machine goes through here.

It drives waybackpy (availability, CDX and Save Page Now APIs) with three corrections:

- waybackpy sends its requests without a timeout (requests.get / Session.get with none), so
  a silent server would hang a worker forever. Its modules' `requests` name is replaced by a
  shim whose sessions always carry ARCHIVE_HTTP_TIMEOUT;
- it retries inside its own HTTPAdapter and sleeps between save tries and API calls. Our
  job (archiving.py) owns retries, backoff and the global save rate, so the shim mounts no
  retrying adapter and the sleeps are turned off;
- its endpoints are hard-coded; they are set from ARCHIVE_BASE_URL and
  ARCHIVE_AVAILABILITY_URL, which the tests point at a local stub.

Every failure comes out as ArchiveError, with whether to retry and the server's Retry-After.
"""

from __future__ import annotations

import logging
import types
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import requests
import waybackpy.availability_api
import waybackpy.cdx_api
import waybackpy.cdx_utils
import waybackpy.exceptions
import waybackpy.save_api
from django.conf import settings

logger = logging.getLogger(__name__)

RETRY_STATUSES = (429, 500, 502, 503, 504, 509)


class ArchiveError(Exception):
    """The archive could not answer. `reason` is short and fit for a manager's list."""

    def __init__(
        self, reason: str, *, retryable: bool = True, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True)
class Capture:
    url: str  # the archived copy
    taken_at: datetime


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    if value.isdigit():
        return float(value)
    return None


class _BoundedSession(requests.Session):
    """A session whose every request has a timeout and whose answers are checked once."""

    def __init__(self) -> None:
        super().__init__()  # mounts requests' plain, non-retrying adapters
        self._adapters_fixed = True

    def mount(self, prefix, adapter) -> None:
        # waybackpy mounts an adapter that retries with sleeps: retries are the job's.
        if not getattr(self, "_adapters_fixed", False):
            super().mount(prefix, adapter)

    def request(self, method, url, *args, **kwargs):
        kwargs["timeout"] = settings.ARCHIVE_HTTP_TIMEOUT
        try:
            response = super().request(method, url, *args, **kwargs)
        except requests.Timeout:
            raise ArchiveError(f"timed out after {settings.ARCHIVE_HTTP_TIMEOUT:g} s") from None
        except requests.ConnectionError:
            # Offline: fail at once (the beat schedule tries again later) rather than back
            # off for an hour while nothing can succeed.
            raise ArchiveError("network unreachable", retryable=False) from None
        except requests.RequestException as exc:
            raise ArchiveError(f"request failed ({type(exc).__name__})") from None
        if response.status_code in RETRY_STATUSES:
            raise ArchiveError(
                f"the archive answered HTTP {response.status_code}",
                retry_after=_retry_after(response),
            )
        if response.status_code >= 400 and response.status_code != 404:
            raise ArchiveError(
                f"the archive refused the request (HTTP {response.status_code})", retryable=False
            )
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
    _module.requests = _SHIM


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


def newest_capture(url: str) -> Capture | None:
    """The newest capture the availability API knows of, else the CDX index's; None if none."""
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
    return _cdx_capture(url, newest=True)


def earliest_capture(url: str) -> Capture | None:
    """The archive's first capture of the page (CDX), or None when it has none."""
    return _cdx_capture(url, newest=False)


def _cdx_capture(url: str, *, newest: bool) -> Capture | None:
    api = waybackpy.cdx_api.WaybackMachineCDXServerAPI(url, user_agent=_agent(), max_tries=1)
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
