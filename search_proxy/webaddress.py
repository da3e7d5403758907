"""Normalising web addresses, so the same page is recognised however it was written.

Used for de-duplicating articles and sources, and for matching domains against the
fact-checker and misinformation lists.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
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
    port: int | str | None
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


# --- The canonical address: the page behind archive copies, caches and redirects ---------
#
# A fact-check must be recognised however its address was written: as an archive copy, a
# cached or translated copy, behind a redirector or a shortener. canonical_address() peels
# those wrappers off, offline; flags.fact_check_finding() matches what is left against the
# fact-checking rules. A wrapper whose target cannot be known offline (a shortened link, an
# archive.today short id) is reported as unresolved, and callers treat it as possibly
# revealing.

# The most wrappers peeled off one address: more than any real link has, and a bound.
MAX_UNWRAP = 8

_ANY_WAYBACK = re.compile(
    r"^https?://(?:www\.)?(?:web\.|wayback\.)?archive\.org/web/(?:\d{1,14}|\*)(?:[a-z]{2}_)?/"
    r"(?P<url>.+)$",
    re.IGNORECASE,
)
_ARCHIVE_TODAY_HOST = re.compile(r"^(?:www\.)?archive\.(?:today|ph|is|md|li|vn|fo)$", re.IGNORECASE)
# archive.ph/2020.10.01-123456/https://..., archive.ph/newest/..., archive.ph/o/AbCd1/...
_ARCHIVE_TODAY_WRAPPED = re.compile(
    r"^/(?:(?:[\d.\-]{4,20}|newest|oldest|o/[\w]+)/)?(?P<url>(?:https?:/?/?)?[^/\s]+\.[^/\s]+.*)$",
    re.IGNORECASE,
)
_ARCHIVE_TODAY_ID = re.compile(r"^/[A-Za-z0-9]{4,10}(?:/.*)?$")

# Link shorteners: their target is only known by asking them, which a check never does.
SHORTENERS = frozenset(
    {
        "apne.ws", "amzn.to", "bit.do", "bit.ly", "bitly.com", "buff.ly", "cutt.ly", "dlvr.it",
        "fb.me", "goo.gl", "ift.tt", "is.gd", "j.mp", "lnkd.in", "nyti.ms", "ow.ly",
        "politi.co", "rb.gy", "rebrand.ly", "reut.rs", "s.id", "shorturl.at", "snip.ly",
        "t.co", "t.ly", "tiny.cc", "tinyurl.com", "trib.al", "v.gd", "wapo.st", "wp.me",
        "chng.it", "po.st", "shar.es", "cnn.it", "bbc.in", "abcn.ws", "n.pr", "on.wsj.com",
        "ti.me", "usat.ly", "youtu.be", "aje.io", "fxn.ws", "hill.cm", "nbcnews.to", "pst.cr",
    }
)  # fmt: skip

# Redirectors that carry their target in a query parameter: host (or registered-domain name
# for Google's many countries), path, parameter names.
_REDIRECTORS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("l.facebook.com", "/l.php", ("u",)),
    ("lm.facebook.com", "/l.php", ("u",)),
    ("m.facebook.com", "/l.php", ("u",)),
    ("facebook.com", "/l.php", ("u",)),
    ("l.messenger.com", "/l.php", ("u",)),
    ("l.instagram.com", "/", ("u",)),
    ("out.reddit.com", "", ("url",)),
    ("youtube.com", "/redirect", ("q",)),
    ("m.youtube.com", "/redirect", ("q",)),
    ("t.umblr.com", "/redirect", ("z",)),
    ("vk.com", "/away.php", ("to",)),
    ("linkedin.com", "/redir/redirect", ("url",)),
    ("duckduckgo.com", "/l/", ("uddg",)),
    ("slack-redir.net", "/link", ("url",)),
    ("translate.google.com", "/translate", ("u",)),
    ("translate.google.com", "/website", ("u",)),
)
_TRANSLATE_PARAM = re.compile(r"^_x_tr_", re.IGNORECASE)


@dataclass(frozen=True)
class CanonicalAddress:
    """The page an address stands for. `wrappers` names what was peeled off, outermost first;
    `unresolved` names a shortener or archive id whose target is unknown ("" when known)."""

    written: str
    address: str
    wrappers: tuple[str, ...] = ()
    unresolved: str = ""


def canonical_address(
    url: str, known_target: Callable[[str], str | None] | None = None
) -> CanonicalAddress:
    """The live page behind `url`: archive copies (Wayback Machine, archive.today wrapped or
    by id), Google's cache, AMP caches, Google Translate's proxy, redirectors and shorteners
    peeled off, at most MAX_UNWRAP deep.

    known_target(address) -> address | None tells the target of a short link (a shortener,
    an archive.today id) when something stored knows it; nothing is ever fetched.
    """
    written = (url or "").strip()
    current = written
    wrappers: list[str] = []
    for _step in range(MAX_UNWRAP):
        peeled = _peel(current)
        if peeled is None:
            break
        kind, inner = peeled
        if inner is None:  # a short link: only stored knowledge can say where it goes
            target = known_target(current) if known_target else None
            if not target or target.strip() == current:
                return CanonicalAddress(written, current, tuple(wrappers), unresolved=kind)
            inner = target.strip()
        wrappers.append(kind)
        current = inner
    return CanonicalAddress(written, current, tuple(wrappers))


def _with_scheme(text: str, secure: bool = True) -> str:
    text = re.sub(r"^(https?):/(?!/)", r"\1://", text.strip(), flags=re.IGNORECASE)
    if re.match(r"^https?://", text, re.IGNORECASE):
        return text
    return ("https://" if secure else "http://") + text.lstrip("/")


def _peel(url: str) -> tuple[str, str | None] | None:
    """(wrapper kind, the wrapped address or None for a short link), or None: not wrapped."""
    if not url:
        return None
    if match := _ANY_WAYBACK.match(url):
        return "web.archive.org", _with_scheme(match.group("url"), secure=False)
    try:
        parts = urlsplit(url if "://" in url else "http://" + url)
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError:
        return None
    bare = host[4:] if host.startswith("www.") else host
    query = parse_qsl(parts.query, keep_blank_values=True)
    if _ARCHIVE_TODAY_HOST.match(host):
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        if match := _ARCHIVE_TODAY_WRAPPED.match(path):
            return "archive.today", _with_scheme(match.group("url"), secure=False)
        if _ARCHIVE_TODAY_ID.fullmatch(parts.path):
            return "archive.today id", None
        return None
    if bare == "webcache.googleusercontent.com":
        for key, value in query:
            if key == "q" and value.startswith("cache:"):
                inner = value[len("cache:") :].split(" ", 1)[0]
                # cache:<id>:<address> or cache:<address>
                if not re.match(r"^https?:", inner, re.IGNORECASE) and ":" in inner:
                    head, rest = inner.split(":", 1)
                    if re.fullmatch(r"[\w-]{6,20}", head):
                        inner = rest
                return "Google cache", _with_scheme(inner)
        return None
    if bare.endswith(".cdn.ampproject.org") or bare == "cdn.ampproject.org":
        match = re.match(r"^/(?:c|v|i|r|wp)/(?P<s>s/)?(?P<rest>[^/]+\.[^/]+.*)$", parts.path)
        if match:
            rest = match.group("rest")
            kept = [(k, v) for k, v in query if k not in ("amp_js_v", "usqp", "amp_gsa")]
            if kept:
                rest += "?" + urlencode(kept)
            return "AMP cache", ("https://" if match.group("s") else "http://") + rest
        return None
    if _is_google(bare) and parts.path.startswith("/amp/"):
        rest = parts.path[len("/amp/") :]
        secure = rest.startswith("s/")
        rest = rest[2:] if secure else rest
        if "." in rest.split("/", 1)[0]:
            return "Google AMP", ("https://" if secure else "http://") + rest
        return None
    if bare.endswith(".translate.goog"):
        encoded = bare[: -len(".translate.goog")]
        # Google writes "-" in a host as "--" and "." as "-".
        real = ".".join(p.replace("\x00", "-") for p in encoded.replace("--", "\x00").split("-"))
        kept = [(k, v) for k, v in query if not _TRANSLATE_PARAM.match(k)]
        rebuilt = urlunsplit(("https", real, parts.path or "/", urlencode(kept), ""))
        return "Google Translate", rebuilt
    if _is_google(bare) and parts.path in ("/url", "/url/"):
        for key, value in query:
            if key in ("q", "url") and re.match(r"^https?://", value, re.IGNORECASE):
                return "Google redirect", value
        return None
    for redirector, path, names in _REDIRECTORS:
        if bare == redirector and (not path or parts.path.rstrip("/") == path.rstrip("/")):
            for key, value in query:
                if key in names and re.match(r"^(https?:)?//|^[^/\s]+\.[^/\s]+", value):
                    return redirector, _with_scheme(value)
            return None
    if bare == "href.li" and parts.query:
        return "href.li", _with_scheme(parts.query)
    if bare in SHORTENERS:
        if bare == "youtu.be" and re.fullmatch(r"/[\w-]{6,20}", parts.path):
            return "youtu.be", f"https://www.youtube.com/watch?v={parts.path[1:]}"
        if len(parts.path.strip("/")) > 0:
            return bare, None
    return None


def _is_google(host: str) -> bool:
    """google.com, google.co.uk, google.de...: Google's own hosts (not "google.example.org")."""
    subdomain, domain, suffix = split_host(host)
    return domain == "google" and bool(suffix) and subdomain in ("", "www")
