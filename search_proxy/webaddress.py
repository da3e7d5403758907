"""Normalising web addresses, so the same page is recognised however it was written.

Used for de-duplicating articles and sources, and (later) for matching domains against the
fact-checker and misinformation lists.
"""

import re
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# web.archive.org/web/<timestamp>[<flags>_]/<original URL>
_WAYBACK = re.compile(
    r"^https?://(?:www\.)?web\.archive\.org/web/(?P<ts>\d{1,14})(?:[a-z]{2}_)?/(?P<url>.+)$",
    re.IGNORECASE,
)
_TRACKING_PARAMS = re.compile(r"^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid)$", re.IGNORECASE)


def unwrap_archive_url(url: str) -> str:
    """The live URL behind a Wayback Machine capture link; other URLs come back unchanged."""
    match = _WAYBACK.match(url.strip())
    if not match:
        return url.strip()
    inner = match.group("url")
    # Captures sometimes lose one slash of the scheme ("https:/example.org").
    inner = re.sub(r"^(https?):/(?!/)", r"\1://", inner, flags=re.IGNORECASE)
    if not re.match(r"^https?://", inner, re.IGNORECASE):
        inner = "http://" + inner
    return inner


def archive_timestamp(url: str) -> datetime | None:
    """When a Wayback Machine capture was taken, from its link; None for other URLs."""
    match = _WAYBACK.match(url.strip())
    if not match:
        return None
    digits = match.group("ts").ljust(14, "0")
    try:
        return datetime.strptime(digits, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def normalize_url(url: str) -> str:
    """A canonical form of a page's address: the live URL, lower-case host without "www.",
    no default port, fragment or tracking parameters, sorted query, no trailing slash."""
    live = unwrap_archive_url(url)
    parts = urlsplit(live if "://" in live else "http://" + live)
    scheme = parts.scheme.lower() if parts.scheme.lower() in ("http", "https") else "http"
    host = (parts.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: keep what was written
        port = parts.netloc.rsplit(":", 1)[-1].lower()
    netloc = host if port in (None, 80, 443) else f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/")
    query = urlencode(
        sorted(
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if not _TRACKING_PARAMS.match(k)
        )
    )
    # http and https of the same page are one page.
    return urlunsplit(("https" if scheme in ("http", "https") else scheme, netloc, path, query, ""))
