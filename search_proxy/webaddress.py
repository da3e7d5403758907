"""Normalising web addresses, so the same page is recognised however it was written.

Used for de-duplicating articles and sources, and for matching domains against the
fact-checker and misinformation lists.
"""

import re
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import tldextract

# web.archive.org/web/<timestamp>[<flags>_]/<original URL>
_WAYBACK = re.compile(
    r"^https?://(?:www\.)?web\.archive\.org/web/(?P<ts>\d{1,14})(?:[a-z]{2}_)?/(?P<url>.+)$",
    re.IGNORECASE,
)
_TRACKING_PARAMS = re.compile(r"^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid)$", re.IGNORECASE)


def is_web_address(url: str | None, *, scheme_optional: bool = False) -> bool:
    """Whether `url` is a page on the web (http or https with a host): the one test for
    "may this become a link or a source", so `javascript:` and friends never do.

    scheme_optional: also take "host.tld/path" written without a scheme, as the released
    dataset sometimes does.
    """
    candidate = (url or "").strip()
    if not candidate or " " in candidate:
        return False
    if scheme_optional and "://" not in candidate:
        host = candidate.split("/", 1)[0]
        return "." in host and ":" not in host  # "javascript:x.y" is no host
    try:
        parts = urlsplit(candidate)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


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


# archive.today and its mirror domains: https://archive.ph/AbCd1 or .../2020.../https://...
_ARCHIVE_TODAY = re.compile(
    r"^https?://(?:www\.)?archive\.(?:today|md|ph|is|li|vn|fo)/\S+$", re.IGNORECASE
)


def is_archive_link(url: str) -> bool:
    """Whether `url` already is an archived copy (Wayback Machine or archive.today)."""
    text = url.strip()
    return bool(_WAYBACK.match(text) or _ARCHIVE_TODAY.match(text))


def unwrap_double_archive(url: str) -> str:
    """The inner archive link of a Wayback capture of an archive.today page.

    Annotators sometimes cite web.archive.org/web/<ts>/https://archive.md/xyz: the copy that
    matters is the archive.today one, so that is what is kept. Other URLs come back unchanged.
    """
    text = url.strip()
    for _depth in range(3):  # bounded: a link wrapped more often than this is left as it is
        match = _WAYBACK.match(text)
        if not match:
            return text
        inner = re.sub(r"^(https?):/(?!/)", r"\1://", match.group("url"), flags=re.IGNORECASE)
        if not is_archive_link(inner):
            return text
        text = inner
    return text


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


# The Public Suffix List snapshot bundled with tldextract: no fetch and no cache files, so
# domain matching works offline and gives the same answer on every machine. PSL "private"
# suffixes (blogspot.com, wordpress.com...) are left out on purpose: a blog on
# foo.blogspot.com is matched through its full host name, see host_suffixes().
_DOMAINS = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def host_of(url: str) -> str:
    """The lower-case host name of the live page behind `url`, without "www." or a final dot.

    A Wayback Machine link gives the host of the page it captured. "" when there is none.
    """
    live = unwrap_archive_url(url)
    try:
        host = urlsplit(live if "://" in live else "http://" + live).hostname or ""
    except ValueError:
        return ""
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


def registered_domain(url: str) -> str:
    """The domain a registrant owns ("bbc.co.uk" for "https://www.news.bbc.co.uk/x").

    IP addresses come back as they are; a host with no known public suffix ("localhost")
    comes back whole.
    """
    host = host_of(url)
    if not host:
        return ""
    parts = _DOMAINS.extract_str(host)
    if not parts.suffix:  # an IP address, "localhost", an unknown top-level domain
        return host
    return parts.top_domain_under_public_suffix


def host_suffixes(url: str) -> list[str]:
    """The host of `url` and each parent domain down to its registered domain.

    "a.b.example.co.uk" gives ["a.b.example.co.uk", "b.example.co.uk", "example.co.uk"]: the
    names a domain list can hold for this page. Never a bare public suffix ("co.uk").
    """
    host = host_of(url)
    domain = registered_domain(url)
    if not host or not domain:
        return []
    labels = host.split(".")
    wanted = domain.count(".") + 1
    return [".".join(labels[i:]) for i in range(len(labels) - wanted + 1)] or [host]


def split_host(host: str) -> tuple[str, str, str]:
    """(subdomains, domain, public suffix): "a.b.example.co.uk" -> ("a.b", "example", "co.uk")."""
    parts = _DOMAINS.extract_str(host)
    return parts.subdomain, parts.domain, parts.suffix
