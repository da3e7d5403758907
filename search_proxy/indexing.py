"""Filling the local search index (Document) from corpora and from imported datasets.

Corpora come as JSON lines in the AVeriTeC knowledge-store layout, one page a line:
``{"url": "...", "url2text": ["sentence", ...], "date": "2020-10-31"?, "title": "..."?}``
(other keys, such as the knowledge store's claim_id, type and query, are ignored).

Dates: a `date` given with the page is its publication date. Without one, a web.archive.org
address gives the capture day, which is only an upper bound (date source
archive_timestamp); anything else is "unknown".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Protocol

from django.db import transaction

from search_proxy.dates import DateSource, day_of, parse_date
from search_proxy.models import Document, Source
from search_proxy.webaddress import archive_timestamp, is_web_address, normalize_url

MAX_URL_LENGTH = 2048
MAX_REPORTED_ERRORS = 20


class CorpusFormatError(ValueError):
    """A corpus file has lines that are not documents; the message lists them by number."""


@dataclass(frozen=True)
class DocumentRecord:
    url: str
    text: str
    title: str = ""
    published: date | None = None
    date_source: str = DateSource.UNKNOWN

    @property
    def normalized_url(self) -> str:
        return normalize_url(self.url)


@dataclass
class IndexReport:
    created: int = 0
    already_indexed: int = 0
    empty: int = 0
    url_too_long: int = 0
    files: list[str] = field(default_factory=list)


def dated(url: str, given: date | None) -> tuple[date | None, str]:
    """(published, date source) of a page: the given date, else the archive capture day."""
    if given is not None:
        return given, DateSource.GIVEN
    captured = day_of(archive_timestamp(url))
    if captured is not None:
        return captured, DateSource.ARCHIVE_TIMESTAMP
    return None, DateSource.UNKNOWN


def parse_line(line: str) -> DocumentRecord | None:
    """The document on one corpus line, None for a blank line; ValueError says what is wrong."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object with url and url2text")
    url = value.get("url")
    if not isinstance(url, str) or not url.strip():
        raise ValueError("'url' must be a non-empty string")
    url = url.strip()
    if not is_web_address(url):
        raise ValueError(f"'url' must be an http(s) address, not {url[:80]!r}")
    sentences = value.get("url2text")
    if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
        raise ValueError("'url2text' must be a list of strings")
    raw_date = value.get("date")
    given = None
    if raw_date is not None:
        given = parse_date(raw_date) if isinstance(raw_date, str) else None
        if given is None:
            raise ValueError(f"'date' must be a date such as 2020-10-31, not {raw_date!r}")
    title = value.get("title") or ""
    if not isinstance(title, str):
        raise ValueError("'title' must be a string")
    published, date_source = dated(url, given)
    # PostgreSQL text cannot hold NUL; scraped pages sometimes do.
    text = "\n".join(s.replace("\x00", "").strip() for s in sentences if s.strip())
    return DocumentRecord(
        url=url,
        text=text,
        title=" ".join(title.replace("\x00", "").split()),
        published=published,
        date_source=date_source,
    )


def corpus_files(path: Path) -> list[Path]:
    """The file itself, or the .json/.jsonl files of a folder (the knowledge store ships one
    file per claim), in name order."""
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
    return [path]


def check_corpus(paths: list[Path]) -> int:
    """The number of lines holding documents; CorpusFormatError lists the bad lines."""
    errors: list[str] = []
    good = 0
    for path in paths:
        number = 0
        with path.open(encoding="utf-8") as stream:
            try:
                for number, line in enumerate(stream, start=1):
                    try:
                        if parse_line(line) is not None:
                            good += 1
                    except ValueError as exc:
                        errors.append(f"{path}, line {number}: {exc}")
                        if len(errors) > MAX_REPORTED_ERRORS:
                            errors[-1] = "... (more bad lines not shown)"
                            raise CorpusFormatError("\n".join(errors)) from None
            except UnicodeDecodeError as exc:
                errors.append(f"{path}, after line {number}: not UTF-8 text ({exc.reason})")
    if errors:
        raise CorpusFormatError("\n".join(errors))
    return good


def read_corpus(paths: list[Path]) -> Iterator[DocumentRecord]:
    for path in paths:
        with path.open(encoding="utf-8") as stream:
            for line in stream:
                record = parse_line(line)
                if record is not None:
                    yield record


@transaction.atomic
def index_records(
    records: Iterable[DocumentRecord],
    *,
    corpus: str,
    batch_size: int = 1000,
    progress: Callable[[int], object] | None = None,
) -> IndexReport:
    """Store the records not yet indexed (by normalised URL), `batch_size` rows an INSERT.
    All or nothing: an error leaves the index as it was."""
    report = IndexReport()
    seen: set[str] = set()
    batch: list[Document] = []

    def flush() -> None:
        keys = [d.normalized_url for d in batch]
        known = set(
            Document.objects.filter(normalized_url__in=keys).values_list(
                "normalized_url", flat=True
            )
        )
        new = [d for d in batch if d.normalized_url not in known]
        report.already_indexed += len(batch) - len(new)
        # ignore_conflicts: another import running at the same time may add the same page.
        Document.objects.bulk_create(new, ignore_conflicts=True)
        report.created += len(new)
        batch.clear()

    for record in records:
        if progress is not None:
            progress(1)
        if not record.text:
            report.empty += 1
            continue
        key = record.normalized_url
        if len(key) > MAX_URL_LENGTH or len(record.url) > 100_000:
            report.url_too_long += 1
            continue
        if key in seen:
            report.already_indexed += 1
            continue
        seen.add(key)
        batch.append(
            Document(
                url=record.url,
                normalized_url=key,
                title=record.title,
                text=record.text,
                published=record.published,
                date_source=record.date_source,
                corpus=corpus[:200],
            )
        )
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return report


class CitedAnswer(Protocol):
    """An answer given from a web page, as dataset_evidence() reads it (annotation's Answer
    rows are these; search_proxy does not import them)."""

    source_id: int
    source: Source
    source_url: str
    cached_source_url: str | None
    text: str
    boolean_explanation: str | None


def dataset_evidence(answers: Iterable[CitedAnswer]) -> Iterator[DocumentRecord]:
    """One document per web page cited by `answers` (given in order of their Source): the
    answers given from it (with Boolean explanations) as its text, the earliest web-archive
    capture of it as the upper bound of its publication date."""
    current: Source | None = None
    texts: list[str] = []
    captures: list[date] = []

    def record(source: Source) -> DocumentRecord:
        earliest = min(captures) if captures else None
        return DocumentRecord(
            url=source.url,
            text="\n".join(dict.fromkeys(texts)),
            published=earliest,
            date_source=DateSource.ARCHIVE_TIMESTAMP if earliest else DateSource.UNKNOWN,
        )

    for answer in answers:
        if current is not None and answer.source_id != current.pk:
            yield record(current)
            texts, captures = [], []
        current = answer.source
        for text in (answer.text, answer.boolean_explanation or ""):
            if text.strip():
                texts.append(" ".join(text.split()))
        for address in (answer.source_url, answer.cached_source_url or "", current.archived_url):
            if captured := day_of(archive_timestamp(address or "")):
                captures.append(captured)
        if current.archived_at is not None:
            captures.append(current.archived_at.date())
    if current is not None:
        yield record(current)
