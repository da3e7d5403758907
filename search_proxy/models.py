"""Evidence sources, the local search index, domain lists, search logs and fetched pages.

Rules spanning these models live in plain modules of this app: flags.py (misinformation and
fact-checking domains, what may be evidence), service.py (searching with date restriction,
cache, rate limit and logging) and fetch.py (the page viewer).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from search_proxy.dates import DateSource
from search_proxy.webaddress import (
    archive_timestamp,
    host_suffixes,
    is_archive_link,
    normalize_url,
    unwrap_archive_url,
    unwrap_double_archive,
)

# archive.today and its mirrors: the Wayback Machine's index knows nothing of these links.
_ARCHIVE_TODAY_REGEX = r"^https?://(www\.)?archive\.(today|md|ph|is|li|vn|fo)/"


class SourceQuerySet(models.QuerySet):
    def waiting_for_archive(self) -> SourceQuerySet:
        return self.filter(archive_status=Source.ArchiveStatus.PENDING)

    def due_for_archive(self, *, stale_before) -> SourceQuerySet:
        """Sources an archive job may take now: pending ones whose wait is over, and jobs
        whose worker died (running since before `stale_before`)."""
        pending = Q(archive_status=Source.ArchiveStatus.PENDING)
        return self.filter(
            (pending & (Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=timezone.now())))
            | Q(archive_status=Source.ArchiveStatus.RUNNING, claimed_at__lt=stale_before)
        )

    def to_dispatch(self, *, now, lost_before) -> SourceQuerySet:
        """Due sources with no job on its way: never sent, or sent for a time before
        `lost_before` and still not taken (the message was lost, e.g. the broker was down)."""
        return self.due_for_archive(stale_before=lost_before).filter(
            Q(queued_at__isnull=True) | Q(queued_at__lt=lost_before)
        )

    def missing_earliest_capture(self, *, asked_before) -> SourceQuerySet:
        """Archived pages whose first capture is still unknown (a look-up failed or the index
        lagged), not asked since `asked_before`. archive.today links have none to ask for."""
        return self.filter(
            Q(claimed_at__isnull=True) | Q(claimed_at__lt=asked_before),
            archive_status=Source.ArchiveStatus.ARCHIVED,
            earliest_capture_at__isnull=True,
        ).exclude(url__iregex=_ARCHIVE_TODAY_REGEX)


class Source(models.Model):
    """A web page used as evidence, with its Internet Archive copy.

    One row per normalised URL, shared by every answer that cites the page, so each page is
    archived once. The archive job (search_proxy/archiving.py) moves it pending -> running ->
    archived, or back to pending with a later `next_attempt_at`, or to failed (the dead letter:
    a manager or the `retry_failed_archives` command sends it again).
    """

    class ArchiveStatus(models.TextChoices):
        PENDING = "pending", "not archived yet"
        RUNNING = "running", "being archived"
        ARCHIVED = "archived", "archived"
        FAILED = "failed", "archive failed"

    url = models.TextField(help_text="The address as first cited.")
    normalized_url = models.CharField(max_length=2048, unique=True)
    archive_status = models.CharField(
        max_length=20, choices=ArchiveStatus.choices, default=ArchiveStatus.PENDING
    )
    archived_url = models.TextField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    archive_attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Save requests sent for this page since it was last queued."
    )
    lookup_failures = models.PositiveSmallIntegerField(
        default=0, help_text="Failed tries that sent no save (availability and CDX look-ups)."
    )
    last_archive_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(
        null=True, blank=True, help_text="A retry waits until then (backoff, Retry-After)."
    )
    queued_at = models.DateTimeField(
        null=True, blank=True, help_text="When the job last sent is due to run (the outbox mark)."
    )
    claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the last archive job started."
    )
    looked_up_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the look-ups found no recent capture: the job goes straight to saving.",
    )
    archive_had_captures = models.BooleanField(
        null=True,
        blank=True,
        help_text="Whether the archive held any capture before our save (None: not asked).",
    )
    earliest_capture_at = models.DateTimeField(
        null=True, blank=True, help_text="The archive's first capture of the page (CDX)."
    )
    published = models.DateField(
        null=True, blank=True, help_text="The page's publication date, when known."
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = SourceQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["archive_status"], name="source_archive_status")]

    def __str__(self) -> str:
        return self.url

    @classmethod
    def for_url(cls, url: str, *, archived_copy: str | None = None) -> Source:
        """The source row for this address, created on first use.

        A link that already is an archived copy needs no archiving; a Wayback capture of an
        archive.today page stands for the archive.today copy. `archived_copy` is a known
        archive link of the page (an imported dataset's cached_source_url).
        """
        url = unwrap_double_archive(url)
        copy = unwrap_double_archive(archived_copy or "")
        if is_archive_link(url):
            copy = url
        defaults: dict = {"url": url}
        if copy and is_archive_link(copy):
            defaults.update(
                archive_status=cls.ArchiveStatus.ARCHIVED,
                archived_url=copy,
                archived_at=archive_timestamp(copy),
            )
        source, _ = cls.objects.get_or_create(normalized_url=normalize_url(url), defaults=defaults)
        return source

    @classmethod
    def for_urls(cls, urls: list[str]) -> dict[str, Source]:
        """for_url of each address, with a few queries for all of them (a hand-in cites
        many pages): address -> its source row."""
        keys: dict[str, str] = {}
        defaults: dict[str, dict] = {}
        for written in urls:
            url = unwrap_double_archive(written)
            key = keys[written] = normalize_url(url)
            if key in defaults:
                continue
            values: dict = {"url": url}
            if is_archive_link(url):
                values.update(
                    archive_status=cls.ArchiveStatus.ARCHIVED,
                    archived_url=url,
                    archived_at=archive_timestamp(url),
                )
            defaults[key] = values
        if not keys:
            return {}
        found = {s.normalized_url: s for s in cls.objects.filter(normalized_url__in=defaults)}
        missing = [key for key in defaults if key not in found]
        if missing:
            # Another hand-in may create the same page at the same moment: keep its row.
            cls.objects.bulk_create(
                [cls(normalized_url=key, **defaults[key]) for key in missing],
                ignore_conflicts=True,
            )
            found.update(
                (s.normalized_url, s) for s in cls.objects.filter(normalized_url__in=missing)
            )
        return {written: found[key] for written, key in keys.items()}

    @classmethod
    def archived_copy_of(cls, url: str | None) -> str | None:
        """The archive link of the page at `url`, once it has one."""
        if not url or not url.strip().lower().startswith(("http://", "https://")):
            return None
        return (
            cls.objects.filter(
                normalized_url=normalize_url(unwrap_double_archive(url)),
                archive_status=cls.ArchiveStatus.ARCHIVED,
            )
            .values_list("archived_url", flat=True)
            .first()
        )

    def first_seen(self, cited_url: str | None = None) -> datetime | None:
        """When the page as cited is known to have existed: a cited Wayback copy by its own
        capture time (the annotator read that version, whatever came before), otherwise the
        archive's first capture of the page."""
        return (archive_timestamp(cited_url) if cited_url else None) or self.earliest_capture_at

    def possible_temporal_leak(self, claim_date: date, cited_url: str | None = None) -> bool:
        seen = self.first_seen(cited_url)
        return possible_temporal_leak(
            earliest_capture=seen.date() if seen else None,
            published=self.published,
            claim_date=claim_date,
        )


def possible_temporal_leak(
    *, earliest_capture: date | None, published: date | None, claim_date: date
) -> bool:
    """Whether a page may postdate the claim: the archive first saw it (or captured the cited
    copy) after the claim date and no publication date before the claim date is known. A
    first capture on the claim day itself is not flagged: the page existed that day."""
    if published is not None and published < claim_date:
        return False
    return earliest_capture is not None and earliest_capture > claim_date


class ArchiveGate(models.Model):
    """The one line to the Internet Archive, shared by every worker (a single row).

    - At most one request is in flight at a time (`busy_until` is the holder's lease, so a
      worker that dies mid-request blocks the line no longer than one request may last):
      a 429 is then seen before any other request leaves, and nothing is sent inside it.
    - `paused_until`: a 429, or a 503 with Retry-After, is about the client, not the page:
      every save and look-up of every worker waits until then.
    - `unreachable_until`: the archive's name did not resolve or it refused the connection;
      jobs fail at once with that reason instead of each trying again.
    """

    busy_until = models.DateTimeField(null=True, blank=True)
    holder = models.CharField(max_length=64, blank=True)
    paused_until = models.DateTimeField(null=True, blank=True)
    pause_reason = models.CharField(max_length=300, blank=True)
    unreachable_until = models.DateTimeField(null=True, blank=True)
    unreachable_reason = models.CharField(max_length=300, blank=True)

    def __str__(self) -> str:
        return f"archive gate (paused until {self.paused_until or '-'})"

    @classmethod
    def row(cls) -> QuerySet[ArchiveGate]:
        """The gate's one row, made on first use (a flushed test database has none)."""
        if not cls.objects.filter(pk=1).exists():
            try:
                with transaction.atomic():
                    cls.objects.create(pk=1)
            except IntegrityError:
                pass  # another process made it first
        return cls.objects.filter(pk=1)

    @classmethod
    def enter(cls, holder: str, *, lease: float) -> bool:
        """Take the line if it is free and not paused; False if someone holds it."""
        now = timezone.now()
        return bool(
            cls.row()
            .filter(Q(busy_until__isnull=True) | Q(busy_until__lt=now))
            .filter(Q(paused_until__isnull=True) | Q(paused_until__lte=now))
            .filter(Q(unreachable_until__isnull=True) | Q(unreachable_until__lte=now))
            .update(busy_until=now + timedelta(seconds=lease), holder=holder)
        )

    @classmethod
    def leave(cls, holder: str) -> None:
        cls.objects.filter(pk=1, holder=holder).update(busy_until=None, holder="")

    @classmethod
    def pause(cls, until: datetime, reason: str) -> None:
        """Pause every request until `until` (a later pause already set is kept)."""
        cls.row().filter(Q(paused_until__isnull=True) | Q(paused_until__lt=until)).update(
            paused_until=until, pause_reason=reason[:300]
        )

    @classmethod
    def mark_unreachable(cls, until: datetime, reason: str) -> None:
        cls.row().update(unreachable_until=until, unreachable_reason=reason[:300])

    @classmethod
    def state(cls) -> ArchiveGate:
        return cls.row().get()


class ArchiveSave(models.Model):
    """One save slot: the timetable of the global save-rate limit, shared by every worker
    through the database, and a log of the saves sent. A slot not `sent` yet is reserved for
    its source at `sent_at` (see archiving.take_save_slot)."""

    source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="saves"
    )
    sent_at = models.DateTimeField(default=timezone.now, db_index=True)
    sent = models.BooleanField(default=True)

    class Meta:
        ordering = ["-sent_at"]

    def __str__(self) -> str:
        return f"{self.sent_at:%Y-%m-%d %H:%M:%S} {self.source_id}"


# --- The local search index ------------------------------------------------------------


class Document(models.Model):
    """A web page's text in the local full-text index (the `local` search backend).

    The full-text index itself is not a Django field, because it differs per database
    (migration 0003): on PostgreSQL a stored generated `search_vector` tsvector column with
    a GIN index, on SQLite an FTS5 table `search_proxy_document_fts` kept in sync by
    triggers. On SQLite, a later migration that alters this table makes Django rebuild it,
    which drops those triggers: such a migration must create them again.
    """

    url = models.TextField(help_text="The address as found in the corpus.")
    normalized_url = models.CharField(max_length=2048, unique=True)
    title = models.TextField(blank=True)
    text = models.TextField(help_text="The page's sentences, one per line.")
    published = models.DateField(
        null=True,
        blank=True,
        help_text="Publication date, or the capture day when it comes from the web archive.",
    )
    date_source = models.CharField(
        max_length=20, choices=DateSource.choices, default=DateSource.UNKNOWN
    )
    corpus = models.CharField(
        max_length=200, blank=True, help_text="Where the document was indexed from."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["published"], name="document_published"),
            models.Index(fields=["corpus"], name="document_corpus"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(Q(published__isnull=True) & Q(date_source=DateSource.UNKNOWN))
                | (Q(published__isnull=False) & ~Q(date_source=DateSource.UNKNOWN)),
                name="document_date_source_matches_date",
                violation_error_message="A document has a date source exactly when it has a date.",
            )
        ]

    def __str__(self) -> str:
        return self.title or self.url

    def clean(self) -> None:
        # Admin edits: the address decides the normalised one, which must stay unique.
        self.normalized_url = normalize_url(self.url)
        if Document.objects.filter(normalized_url=self.normalized_url).exclude(pk=self.pk):
            raise ValidationError(
                {"url": "This page is already in the index."}, code="duplicate_document"
            )


# --- Domain lists ----------------------------------------------------------------------

_HOST = re.compile(r"^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_-]+)+$")


def parse_domain_entry(entry: str) -> tuple[str, str]:
    """(domain, path prefix) of a list entry such as "www.Example.com/Blog/" -> ("example.com",
    "blog"). The domain is lower case without "www."; the prefix is "" for the whole site.

    Raises ValueError for an entry that is not a host name or IP address.
    """
    text = re.sub(r"\s+", "", entry)  # the list has "Silver-Coin-Investor. com"
    if not text:
        raise ValueError("empty entry")
    try:
        parts = urlsplit(text if "://" in text else "http://" + text)
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError as exc:
        raise ValueError(f"{entry!r} is not a domain") from exc
    if host.startswith("www."):
        host = host[4:]
    if not _HOST.match(host):
        raise ValueError(f"{entry!r} is not a domain")
    return host, parts.path.strip("/").lower()


def path_is_under(url: str, prefix: str) -> bool:
    """Whether the live page behind `url` lies under the path `prefix` ("" = everywhere)."""
    if not prefix:
        return True
    live = unwrap_archive_url(url)
    try:
        path = urlsplit(live if "://" in live else "http://" + live).path
    except ValueError:
        return False
    path = path.lower().rstrip("/")
    wanted = "/" + prefix.strip("/").lower()
    if "*" in wanted:
        # A pattern: "article/*fact-check*" covers apnews.com/article/fact-check-x-123;
        # "*" matches across "/" too, so "politics/*fact-checker*" covers any date folders.
        return fnmatch.fnmatchcase(path, wanted) or fnmatch.fnmatchcase(path, wanted + "/*")
    return path == wanted or path.startswith(wanted + "/")


class DomainRuleQuerySet(models.QuerySet["DomainRule"]):
    def matching(self, url: str) -> list[DomainRule]:
        """The rules that cover `url`: its host or a parent domain, and the path prefix."""
        return self.matching_each([url]).get(url, [])

    def matching_each(self, urls: list[str]) -> dict[str, list[DomainRule]]:
        """For each URL the rules that cover it, with one query for all of them."""
        candidates = {url: host_suffixes(url) for url in urls}
        wanted = {name for names in candidates.values() for name in names}
        if not wanted:
            return {}
        by_domain: dict[str, list[DomainRule]] = {}
        for rule in self.filter(domain__in=wanted):
            by_domain.setdefault(rule.domain, []).append(rule)
        found: dict[str, list[DomainRule]] = {}
        for url, names in candidates.items():
            rules = [r for name in names for r in by_domain.get(name, []) if r.covers(url)]
            if rules:
                found[url] = rules
        return found


class DomainRule(models.Model):
    """A site (domain with its subdomains, "www." included) or a section of one."""

    domain = models.CharField(
        max_length=253, help_text='Lower case, without "www."; subdomains are covered too.'
    )
    path_prefix = models.CharField(
        max_length=300,
        blank=True,
        help_text='Only pages under this path, e.g. "blog" for example.com/blog/...; '
        '"*" matches any text, e.g. "article/*fact-check*"; empty for the whole site.',
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = DomainRuleQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["domain", "path_prefix"]

    def __str__(self) -> str:
        return f"{self.domain}/{self.path_prefix}" if self.path_prefix else self.domain

    def clean(self) -> None:
        try:
            domain, prefix = parse_domain_entry(f"{self.domain}/{self.path_prefix}")
        except ValueError as exc:
            raise ValidationError({"domain": str(exc)}, code="invalid_domain") from exc
        self.domain, self.path_prefix = domain, prefix

    def covers(self, url: str) -> bool:
        return self.domain in host_suffixes(url) and path_is_under(url, self.path_prefix)


class MisinformationDomain(DomainRule):
    """A known source of misinformation or satire: its pages are marked, never hidden.

    The AVeriTeC guidelines let annotators use such pages but ask them to avoid them where
    they can and to corroborate with another source.
    """

    class Origin(models.TextChoices):
        LIST = "list", "loaded from the misinformation list"
        ADMIN = "admin", "added by a manager"

    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.ADMIN)

    class Meta(DomainRule.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["domain", "path_prefix"], name="one_misinformation_rule_per_site"
            )
        ]


class FactCheckingDomain(DomainRule):
    """A fact-checking site or section: not allowed as evidence (AVeriTeC guidelines)."""

    class Origin(models.TextChoices):
        MAINTAINED = "maintained", "maintained list of fact-checkers"
        ARTICLES = "articles", "imported fact-checking articles"
        ADMIN = "admin", "added by a manager"

    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.ADMIN)

    class Meta(DomainRule.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["domain", "path_prefix"], name="one_fact_checking_rule_per_site"
            )
        ]


# --- Search logs -----------------------------------------------------------------------


class SearchLog(models.Model):
    """One search an annotator ran, with what it showed: the record of how evidence was found.

    Also the per-user rate limit's memory (service.check_rate_limit), so it works across web
    processes without a shared cache.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="searches"
    )
    # Plain ids, not foreign keys: annotation sits above this app (it hands them over in the
    # SearchScope). The app deletes neither tasks nor claims; a log would keep the id.
    task_id = models.BigIntegerField(
        null=True, blank=True, db_index=True, help_text="The annotation task searched from."
    )
    claim_id = models.BigIntegerField(
        null=True, blank=True, db_index=True, help_text="The claim the search was for."
    )
    query = models.TextField()
    before = models.DateField(help_text="Only pages published before this day were shown.")
    country = models.CharField(max_length=2, blank=True)
    page = models.PositiveSmallIntegerField(default=1)
    backend = models.CharField(max_length=20)
    result_urls = models.JSONField(default=list, blank=True)
    hidden_count = models.PositiveSmallIntegerField(
        default=0, help_text="Results hidden: the claim's own article and fact-checks."
    )
    dropped_count = models.PositiveSmallIntegerField(
        default=0, help_text="Results dropped: published on or after the claim date."
    )
    from_cache = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "created_at"], name="search_log_user_time")]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.user}: {self.query[:60]}"


class SearchClick(models.Model):
    """A result an annotator opened in the page viewer."""

    class Outcome(models.TextChoices):
        SHOWN = "shown", "page text shown"
        REFUSED = "refused", "refused (address or size)"
        FAILED = "failed", "could not be fetched"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    task_id = models.BigIntegerField(
        null=True, blank=True, db_index=True, help_text="The annotation task it was opened from."
    )
    search = models.ForeignKey(
        SearchLog, null=True, blank=True, on_delete=models.SET_NULL, related_name="clicks"
    )
    url = models.TextField()
    outcome = models.CharField(max_length=20, choices=Outcome.choices, default=Outcome.SHOWN)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "created_at"], name="search_click_user_time")]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.user}: {self.url}"


# --- Fetched pages ---------------------------------------------------------------------


class FetchedPageQuerySet(models.QuerySet["FetchedPage"]):
    def of_url(self, url: str) -> FetchedPageQuerySet:
        """The snapshots of the page at `url` (any spelling of it), newest seen first."""
        return self.filter(normalized_url=normalize_url(url)).order_by("-last_seen_at", "-pk")

    def newest_of(self, url: str) -> FetchedPage | None:
        return self.of_url(url).first()

    def newest_dates(self, normalized_urls: list[str]) -> dict[str, date]:
        """normalised URL -> the estimated publication date of its newest dated snapshot."""
        rows = (
            self.filter(normalized_url__in=normalized_urls, published__isnull=False)
            .order_by("last_seen_at", "pk")
            .values_list("normalized_url", "published")
        )
        return dict(rows)  # later rows win: the newest

    def remember(
        self,
        *,
        url: str,
        final_url: str,
        title: str,
        sentences: list[str],
        published: date | None,
        content_type: str,
        http_status: int,
    ) -> FetchedPage:
        """Store what a fetch of `url` found: the snapshot with the same readable content
        (title and text) is reused and marked seen now, a change makes a new snapshot.

        Snapshots are never rewritten, so an answer's offsets into one stay true.
        """
        now = timezone.now()
        with transaction.atomic():
            # get_or_create: two fetches racing on the same new content store it once.
            page, created = self.get_or_create(
                normalized_url=normalize_url(url),
                content_hash=FetchedPage.hash_content(title, sentences),
                defaults={
                    "url": url,
                    "final_url": final_url,
                    "title": title,
                    "sentences": sentences,
                    "published": published,
                    "date_source": DateSource.ESTIMATED if published else DateSource.UNKNOWN,
                    "content_type": content_type,
                    "http_status": http_status,
                    "fetched_at": now,
                    "last_seen_at": now,
                },
            )
            if not created:
                self.filter(pk=page.pk).update(last_seen_at=now)
                page.last_seen_at = now
        return page


class FetchedPage(models.Model):
    """A stored snapshot of a page's readable text, as the viewer and P1 show it.

    One row per normalised address and readable content (title and text): a refetch that
    finds the same content only moves `last_seen_at`; a changed page gets a new row and the
    old one stays, because extractive answers point into it by character offsets. Readers
    get the newest seen snapshot; search results with no known date take their date from it.
    """

    normalized_url = models.CharField(max_length=2048)
    url = models.TextField(help_text="The address that was asked for.")
    final_url = models.TextField(help_text="Where the redirects ended.")
    title = models.TextField(blank=True)
    sentences = models.JSONField(default=list, blank=True)
    content_hash = models.CharField(
        max_length=64, help_text="SHA-256 of the title and text: what tells two versions apart."
    )
    published = models.DateField(null=True, blank=True)
    date_source = models.CharField(
        max_length=20, choices=DateSource.choices, default=DateSource.UNKNOWN
    )
    content_type = models.CharField(max_length=100, blank=True)
    http_status = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The status of the answer the content came in."
    )
    fetched_at = models.DateTimeField(
        default=timezone.now, help_text="When this content was first fetched."
    )
    last_seen_at = models.DateTimeField(
        default=timezone.now, help_text="When a fetch last found this same content."
    )

    objects = FetchedPageQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["normalized_url", "content_hash"], name="one_snapshot_per_page_content"
            )
        ]
        indexes = [
            models.Index(fields=["normalized_url", "last_seen_at"], name="snapshot_url_last_seen")
        ]

    def __str__(self) -> str:
        return self.title or self.url

    def save(self, *args, **kwargs) -> None:
        if not self.content_hash:
            self.content_hash = self.hash_content(self.title, self.sentences)
        super().save(*args, **kwargs)

    @staticmethod
    def hash_content(title: str, sentences: list[str]) -> str:
        # The sentences as shown, so that the hash changes exactly when what a reader sees
        # (and what offsets count in) changes.
        content = json.dumps([title, list(sentences)], ensure_ascii=False)
        return hashlib.sha256(content.encode()).hexdigest()

    @property
    def text(self) -> str:
        """The readable text the viewer shows, one sentence a line: what offsets count in."""
        return "\n".join(self.sentences)

    def locate(self, passage: str) -> tuple[int, int] | None:
        """(start, end) character offsets of `passage` in `text`, however the selection's
        white space came out (a selection across sentences joins them with line breaks)."""
        words = passage.split()
        if not words:
            return None
        match = re.search(r"\s+".join(re.escape(w) for w in words), self.text)
        return (match.start(), match.end()) if match else None
