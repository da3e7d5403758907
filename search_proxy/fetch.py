"""The page viewer: fetch a result's page on the server and return its readable sentences.

Annotators in Phase 2 select sentences of a page as an extractive answer. The server
fetches the page for them, so the fetch is guarded against server-side request forgery:

- only http and https, no user:password@ in the address, only the usual web ports;
- the host name is resolved once and EVERY address it resolves to must be public: loopback,
  private, link-local, multicast, reserved and unspecified addresses are refused, also when
  wrapped in IPv6 (IPv4-mapped, 6to4, Teredo, NAT64);
- the connection goes to the address that was checked (the host name is only sent in the
  Host header and for TLS), so a DNS answer that changes between check and connect
  ("DNS rebinding") cannot redirect it;
- redirects are followed by hand, each hop checked the same way, at most
  PAGE_FETCH_MAX_REDIRECTS;
- the whole fetch has a time limit (PAGE_FETCH_TIMEOUT) and the body a size limit
  (PAGE_FETCH_MAX_BYTES, counted after decompression);
- the page is parsed, never rendered: no script runs.

PAGE_FETCH_ALLOWED_NETWORKS lists networks exempt from the address check. It is empty in
every real configuration; the tests set it to 127.0.0.1/32 to fetch from their own local
HTTP server, the only way to run the real code end to end without the network.

The text is extracted with trafilatura, dated with htmldate, split into sentences with NLTK's
Punkt model (provisioned offline by scripts.nltk_data), and stored as a FetchedPage snapshot,
deduplicated by normalised address and content. A page that cannot be fetched again is still
read from its newest snapshot; one never stored is offered from the local search index.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import urljoin, urlsplit

import certifi
import urllib3
from celery import current_app
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from search_proxy.dates import DateSource, parse_date
from search_proxy.models import Document, FetchedPage
from search_proxy.webaddress import is_web_address, normalize_url

logger = logging.getLogger(__name__)

ALLOWED_SCHEMES = ("http", "https")
ALLOWED_PORTS = (80, 443, 8080, 8443)
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
PAGE_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
CHUNK_BYTES = 64 * 1024
# Addresses tried per hop when a host has several: enough for IPv6 + IPv4 fallbacks.
MAX_ADDRESSES_TRIED = 4
# A bound on the stored versions of one page looked through for an answer's passage.
MAX_SNAPSHOTS_SEARCHED = 50
USER_AGENT = "averitec-annotation-platform/0.1 (page viewer for fact-checking annotators)"

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class FetchRefused(Exception):
    """The platform will not fetch this address or page (unsafe address, too large, not a
    web page). The message is fit to show to the annotator."""


class FactCheckRefused(FetchRefused):
    """The address is (or may be) a fact-check: the viewer shows nothing of it, not even the
    local index's copy."""


class PageUnavailable(Exception):
    """The page could not be fetched: a timeout, a connection error, an HTTP error status."""


@dataclass(frozen=True)
class PageText:
    url: str
    final_url: str
    title: str
    sentences: list[str]
    published: date | None
    date_source: str
    fetched_at: datetime
    from_cache: bool = False
    snapshot_id: int | None = None
    http_status: int | None = None
    last_seen_at: datetime | None = None
    # Why a due refetch failed, when this is an older snapshot shown instead.
    refetch_problem: str = ""


@dataclass(frozen=True)
class Download:
    final_url: str
    content_type: str
    body: bytes
    status: int = 200


@dataclass(frozen=True)
class IndexedCopy:
    """The local search index's text of a page, for when the page itself cannot be read."""

    title: str
    sentences: tuple[str, ...]


def indexed_copy(url: str) -> IndexedCopy | None:
    document = Document.objects.filter(normalized_url=normalize_url(url)).first()
    if document is None:
        return None
    lines = tuple(line for line in document.text.splitlines() if line.strip())
    return IndexedCopy(title=document.title, sentences=lines) if lines else None


# --- Public entry point ------------------------------------------------------------------


def fetch_page(url: str, *, refresh: bool = False) -> PageText:
    """The readable sentences of the page at `url`: its newest snapshot while that was seen
    within PAGE_FETCH_CACHE_DAYS, else fetched safely now and stored as a snapshot.

    When a due refetch fails but an older snapshot exists, that snapshot is returned with
    the reason in `refetch_problem`. Raises FetchRefused (not allowed) or PageUnavailable
    (could not be fetched) when there is nothing stored to fall back on.
    """
    stored = FetchedPage.objects.newest_of(url)
    fresh_after = timezone.now() - timedelta(days=settings.PAGE_FETCH_CACHE_DAYS)
    if stored is not None and stored.last_seen_at >= fresh_after and not refresh:
        return _page_text(stored, from_cache=True)
    try:
        download = download_page(url)
    except PageUnavailable as exc:
        if stored is None:
            raise
        return _page_text(stored, from_cache=True, refetch_problem=str(exc))
    title, sentences, published = extract_text(download)
    with transaction.atomic():
        page = FetchedPage.objects.remember(
            url=url,
            final_url=download.final_url,
            title=title,
            sentences=sentences,
            published=published,
            content_type=download.content_type,
            http_status=download.status,
        )
        if published is not None:
            # The local index learns the date too, where it had none.
            Document.objects.filter(
                normalized_url=page.normalized_url, published__isnull=True
            ).update(published=published, date_source=DateSource.ESTIMATED)
    return _page_text(page, from_cache=False)


@dataclass(frozen=True)
class ReadablePage:
    """What a reader can be shown of a page: its stored snapshot, or else the locally indexed
    text, with `problem` saying why the page itself could not be fetched."""

    page: PageText | None
    url: str = ""
    indexed: IndexedCopy | None = None
    problem: str = ""
    refused: bool = False
    fact_check: bool = False

    @property
    def live_link(self) -> str:
        """The address to try in the reader's own browser; "" when it must not be a link
        (not a web page, or a fact-check the viewer refused)."""
        if self.fact_check:
            return ""
        return self.url if is_web_address(self.url) else ""

    @property
    def indexed_title(self) -> str:
        return self.indexed.title if self.indexed else ""

    @property
    def indexed_sentences(self) -> tuple[str, ...]:
        return self.indexed.sentences if self.indexed else ()


def read_page(url: str) -> ReadablePage:
    """The page's snapshot (fetched once, then kept), or the local index's text of it.

    Never raises for an unreachable or refused page: the reason is in `problem`.
    """
    try:
        return ReadablePage(page=fetch_page(url), url=url)
    except (FetchRefused, PageUnavailable) as exc:
        return unreadable(url, exc)


def unreadable(url: str, error: FetchRefused | PageUnavailable) -> ReadablePage:
    """What a reader is offered when fetching `url` failed with `error`."""
    return ReadablePage(
        page=None,
        url=url,
        indexed=None if isinstance(error, FactCheckRefused) else indexed_copy(url),
        problem=str(error),
        refused=isinstance(error, FetchRefused),
        fact_check=isinstance(error, FactCheckRefused),
    )


def stored_sentences(url: str) -> tuple[str, ...]:
    """The sentences the page viewer shows of `url`, read without fetching anything: its
    newest snapshot (the one the viewer showed, fetched or fallen back on), else the locally
    indexed text it showed instead; () when neither is stored."""
    stored = FetchedPage.objects.newest_of(url)
    if stored is not None:
        return tuple(stored.sentences)
    indexed = indexed_copy(url)
    return indexed.sentences if indexed is not None else ()


def locate_passage(url: str, passage: str) -> tuple[FetchedPage, int, int] | None:
    """Where an extractive answer's text stands in the stored snapshots of its page: the
    newest snapshot that holds it, which is the one the annotator read even when the page
    changed (and was fetched again by someone else) in between."""
    return locate_passages([(url, passage)])[0]


def locate_passages(cited: list[tuple[str, str]]) -> list[tuple[FetchedPage, int, int] | None]:
    """locate_passage for each (address, passage) of a hand-in, with one query for all the
    pages' snapshots."""
    keys = [normalize_url(url) for url, _ in cited]
    if not keys:
        return []
    newest = Window(
        RowNumber(),
        partition_by=F("normalized_url"),
        order_by=[F("last_seen_at").desc(), F("pk").desc()],
    )
    snapshots: dict[str, list[FetchedPage]] = {}
    for page in (
        FetchedPage.objects.filter(normalized_url__in=set(keys))
        .annotate(newest=newest)
        .filter(newest__lte=MAX_SNAPSHOTS_SEARCHED)
        .order_by("normalized_url", "newest")
    ):
        snapshots.setdefault(page.normalized_url, []).append(page)
    found: list[tuple[FetchedPage, int, int] | None] = []
    for key, (_, passage) in zip(keys, cited, strict=True):
        spans = ((page, page.locate(passage)) for page in snapshots.get(key, []))
        found.append(next(((page, *span) for page, span in spans if span), None))
    return found


SNAPSHOT_TASK = "search_proxy.tasks.snapshot_pages"


def queue_snapshots(urls: list[str]) -> None:
    """After the caller's transaction commits, snapshot these pages in the background (the
    intake of fact-checking articles): never blocks, and a broker that is down loses only the
    head start, as the reader fetches a missing snapshot on first open."""
    if not urls:
        return

    def send() -> None:
        try:
            # By name: the task module imports this one.
            current_app.signature(SNAPSHOT_TASK, args=(list(urls),)).apply_async()
        except Exception:
            logger.exception("could not queue the snapshots of %d pages", len(urls))

    transaction.on_commit(send)


def snapshot_pages(urls: list[str]) -> dict[str, str]:
    """Fetch and store each page's snapshot now (article intake); url -> "" or the problem."""
    outcome = {}
    for url in urls:
        try:
            fetch_page(url)
            outcome[url] = ""
        except (FetchRefused, PageUnavailable) as exc:
            outcome[url] = str(exc)
    return outcome


def _page_text(page: FetchedPage, *, from_cache: bool, refetch_problem: str = "") -> PageText:
    return PageText(
        url=page.url,
        final_url=page.final_url,
        title=page.title,
        sentences=list(page.sentences),
        published=page.published,
        date_source=page.date_source,
        fetched_at=page.fetched_at,
        from_cache=from_cache,
        snapshot_id=page.pk,
        http_status=page.http_status,
        last_seen_at=page.last_seen_at,
        refetch_problem=refetch_problem,
    )


# --- The address check -------------------------------------------------------------------


def _allowed_networks(
    setting: str = "PAGE_FETCH_ALLOWED_NETWORKS",
) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    try:
        return [ipaddress.ip_network(n, strict=False) for n in getattr(settings, setting)]
    except ValueError as exc:
        raise ImproperlyConfigured(f"{setting}: {exc}") from exc


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_problem(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
    allowed_setting: str = "PAGE_FETCH_ALLOWED_NETWORKS",
) -> str | None:
    """Why the server must not connect to `address`, or None when it is a public address.

    `allowed_setting` names the setting listing networks let through anyway (tests only).
    """
    if any(address in network for network in _allowed_networks(allowed_setting)):
        return None
    candidates = [address]
    if isinstance(address, ipaddress.IPv6Address) and (inner := _embedded_ipv4(address)):
        candidates.insert(0, inner)  # the IPv4 address it reaches says more
    for candidate in candidates:
        if candidate.is_loopback:
            return f"{address} is a loopback address"
        if candidate.is_link_local:
            return f"{address} is a link-local address"
        if candidate.is_multicast:
            return f"{address} is a multicast address"
        if candidate.is_private:
            return f"{address} is a private address"
        if candidate.is_reserved or candidate.is_unspecified or not candidate.is_global:
            return f"{address} is a reserved address"
    return None


def resolve(
    host: str, port: int, allowed_setting: str = "PAGE_FETCH_ALLOWED_NETWORKS"
) -> list[str]:
    """Every address `host` resolves to, each checked; refuses the host if any is not public.

    Refusing when ANY address is bad (not just the first) closes the trick of a name with
    one public and one internal address.
    """
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise PageUnavailable(f"The host name {host} could not be resolved.") from exc
        addresses = list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))
    if not addresses:
        raise PageUnavailable(f"The host name {host} has no address.")
    for text in addresses:
        try:
            problem = address_problem(ipaddress.ip_address(text), allowed_setting)
        except ValueError:
            problem = f"{text} is not an IP address"
        if problem:
            where = host if literal is not None else f"{host} (it resolves to {text})"
            raise FetchRefused(
                f"Refused to fetch {where}: {problem}; only public web pages can be opened."
            )
    return addresses


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # IDNA-encoded, lower case, no brackets
    port: int
    path: str  # path and query, as sent

    @property
    def host_header(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return shown if self.port == default else f"{shown}:{self.port}"


def parse_target(url: str) -> Target:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise FetchRefused(f"{url!r} is not a valid web address.") from exc
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise FetchRefused("Only http:// and https:// pages can be opened.")
    if parts.username is not None or parts.password is not None:
        raise FetchRefused("Addresses with a user name or password cannot be opened.")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise FetchRefused(f"{url!r} has no host name.")
    try:
        host = host.encode("idna").decode("ascii").lower() if not _is_ip(host) else host
    except UnicodeError as exc:
        raise FetchRefused(f"{host!r} is not a valid host name.") from exc
    port = port or (443 if scheme == "https" else 80)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(scheme, host, port, path)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# --- Downloading -------------------------------------------------------------------------


def download_page(url: str) -> Download:
    """The body of the page at `url` after at most PAGE_FETCH_MAX_REDIRECTS redirects."""
    deadline = time.monotonic() + settings.PAGE_FETCH_TIMEOUT
    current = url
    for _hop in range(settings.PAGE_FETCH_MAX_REDIRECTS + 1):
        target = parse_target(current)
        addresses = resolve(target.host, target.port)
        allowed_anywhere = all(
            any(ipaddress.ip_address(a) in n for n in _allowed_networks()) for a in addresses
        )
        if target.port not in ALLOWED_PORTS and not allowed_anywhere:
            raise FetchRefused(f"Port {target.port} is not a web port; it cannot be opened.")
        pool, response = _request(target, addresses, deadline)
        try:
            if response.status in REDIRECT_STATUSES:
                location = response.headers.get("Location")
                if not location:
                    raise PageUnavailable(f"The site redirected (HTTP {response.status}) nowhere.")
                current = urljoin(current, location.strip())
                continue
            if response.status >= 400:
                raise PageUnavailable(f"The site answered HTTP {response.status}.")
            content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if content_type and content_type not in PAGE_TYPES:
                raise FetchRefused(f"This is not a web page ({content_type}); open it directly.")
            body = _read_limited(response, deadline)
            return Download(
                final_url=current, content_type=content_type, body=body, status=response.status
            )
        finally:
            response.release_conn()
            pool.close()
    raise FetchRefused(
        f"The page redirects more than {settings.PAGE_FETCH_MAX_REDIRECTS} times; it was not "
        "followed further."
    )


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise PageUnavailable(f"The page took longer than {settings.PAGE_FETCH_TIMEOUT:g} s.")
    return left


def pinned_pool(
    scheme: str, host: str, port: int, address: str, timeout: urllib3.Timeout
) -> urllib3.HTTPConnectionPool:
    """A connection pool to `address`, an address of `host` that passed the public check.

    Connecting to the checked address (TLS still verified against `host`) rather than the
    name means a second DNS answer can never send the request elsewhere (DNS rebinding).
    """
    common: dict[str, Any] = {"port": port, "timeout": timeout, "retries": False, "maxsize": 1}
    if scheme == "https":
        return urllib3.HTTPSConnectionPool(
            address,
            server_hostname=host,
            assert_hostname=host,
            cert_reqs="CERT_REQUIRED",
            ca_certs=certifi.where(),
            **common,
        )
    return urllib3.HTTPConnectionPool(address, **common)


def _request(
    target: Target, addresses: list[str], deadline: float
) -> tuple[urllib3.HTTPConnectionPool, urllib3.BaseHTTPResponse]:
    """GET the target from the first checked address that accepts a connection."""
    last_error: Exception | None = None
    for address in addresses[:MAX_ADDRESSES_TRIED]:
        left = _remaining(deadline)
        timeout = urllib3.Timeout(connect=min(left, 5.0), read=left)
        pool = pinned_pool(target.scheme, target.host, target.port, address, timeout)
        try:
            return pool, pool.urlopen(
                "GET",
                target.path,
                headers={
                    "Host": target.host_header,
                    "User-Agent": USER_AGENT,
                    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
                    "Accept-Encoding": "gzip, deflate",
                },
                redirect=False,
                retries=False,
                preload_content=False,
                decode_content=True,
                assert_same_host=False,
            )
        except urllib3.exceptions.HTTPError as exc:
            pool.close()
            if isinstance(exc, urllib3.exceptions.NewConnectionError):
                last_error = exc  # try the host's next checked address
                continue
            if isinstance(exc, urllib3.exceptions.TimeoutError):
                raise PageUnavailable(
                    f"The page took longer than {settings.PAGE_FETCH_TIMEOUT:g} s."
                ) from None
            if isinstance(exc, urllib3.exceptions.SSLError):
                raise PageUnavailable("The site's secure connection (TLS) is not valid.") from None
            raise PageUnavailable(f"The page could not be fetched ({type(exc).__name__}).") from exc
    raise PageUnavailable("The site could not be reached.") from last_error


def _read_limited(response: urllib3.BaseHTTPResponse, deadline: float) -> bytes:
    limit = settings.PAGE_FETCH_MAX_BYTES
    too_large = FetchRefused(f"The page is larger than {limit / 2**20:.3g} MB; it was not read.")
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks, total = [], 0
    try:
        for chunk in response.stream(CHUNK_BYTES, decode_content=True):
            total += len(chunk)
            if total > limit:
                raise too_large
            chunks.append(chunk)
            _remaining(deadline)
    except urllib3.exceptions.TimeoutError:
        raise PageUnavailable(
            f"The page took longer than {settings.PAGE_FETCH_TIMEOUT:g} s."
        ) from None
    except urllib3.exceptions.HTTPError as exc:
        raise PageUnavailable(f"The page could not be read ({type(exc).__name__}).") from exc
    return b"".join(chunks)


# --- Extracting --------------------------------------------------------------------------


def extract_text(download: Download) -> tuple[str, list[str], date | None]:
    """(title, sentences, estimated publication date) of a downloaded page."""
    # Imported here: trafilatura and htmldate take a moment to load and only this needs them.
    import htmldate
    import trafilatura
    from trafilatura.utils import load_html

    if download.content_type == "text/plain":
        plain = download.body.decode("utf-8", errors="replace")
        return "", split_sentences(plain), None
    # Parsed trees, never strings: htmldate treats a string that looks like a URL as an
    # address to download, and the fetch must stay the guarded one above.
    tree = load_html(download.body)
    if tree is None:
        return "", [], None
    metadata = trafilatura.extract_metadata(load_html(download.body), default_url=None)
    title = (metadata.title or "").strip() if metadata is not None else ""
    found = htmldate.find_date(
        load_html(download.body),
        url=download.final_url,
        original_date=True,
        outputformat="%Y-%m-%d",
    )
    text = trafilatura.extract(
        tree,
        url=download.final_url,
        include_comments=False,
        include_tables=True,
        include_images=False,
    )
    return title, split_sentences(text or ""), parse_date(found)


def split_sentences(text: str) -> list[str]:
    """Sentences of extracted text: Punkt within each paragraph, paragraphs kept apart."""
    from nltk.tokenize import sent_tokenize

    from pipeline.nltk_data import configure

    configure()
    sentences: list[str] = []
    for paragraph in text.splitlines():
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        try:
            sentences.extend(sent_tokenize(paragraph, language="english"))
        except LookupError:
            # No Punkt model provisioned: a paragraph is still a usable unit to select.
            logger.warning("Punkt model missing; run `python -m scripts.nltk_data`")
            sentences.append(paragraph)
    return sentences
