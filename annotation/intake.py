"""Article intake: fact-checking articles arriving for Phase 1, from JSON lines or CSV.

Each row has a url and optionally title, publisher, publication_date and the ClaimReview
fields claim_text, claimant, claim_date and rating. Rows are validated first; any bad row
aborts the whole file. Rows whose page is already known (same normalised URL) are skipped
and reported, so the same file can be loaded twice safely.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from django.db import transaction

from annotation.boundary import MAX_TEXT_LENGTH, InputRefused, read_json, text_refusal
from annotation.models import Article, Batch, Transition
from annotation.submissions import TEXT_LIMITS
from annotation.workflow import open_article_for_normalisation
from pipeline.scoring import MAX_REPORTED_PROBLEMS
from search_proxy.fetch import queue_snapshots
from search_proxy.webaddress import is_web_address, normalize_url

COLUMNS = (
    "url",
    "title",
    "publisher",
    "publication_date",
    "claim_text",
    "claimant",
    "claim_date",
    "rating",
)
# The article field each text column fills: its max_length is the column's limit.
_STORED_AS = {
    "url": "normalized_url",
    "publisher": "publisher",
    "claimant": "claimreview_claimant",
    "rating": "claimreview_rating",
}


def column_limit(column: str) -> int:
    """The most characters a column may hold: what its article field stores."""
    if column == "url":
        return TEXT_LIMITS["web_address"]
    if column in _STORED_AS:
        # _STORED_AS names text columns, which all have a max_length (the stub allows a relation)
        return Article._meta.get_field(_STORED_AS[column]).max_length  # type: ignore[union-attr, return-value]
    return MAX_TEXT_LENGTH


class IntakeError(ValueError):
    """An intake file with problems; nothing was stored."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        listed = "\n".join(f"  - {p}" for p in problems[:MAX_REPORTED_PROBLEMS])
        more = len(problems) - MAX_REPORTED_PROBLEMS
        extra = f"\n  … and {more} more" if more > 0 else ""
        super().__init__(f"{len(problems)} problem(s) in the intake file:\n{listed}{extra}")


@dataclass
class IntakeRow:
    line: int
    url: str
    title: str = ""
    publisher: str = ""
    publication_date: date | None = None
    claim_text: str = ""
    claimant: str = ""
    claim_date: date | None = None
    rating: str = ""


@dataclass
class IntakeReport:
    batch: Batch | None
    created: int = 0
    duplicates: list[str] = field(default_factory=list)


def parse_intake_date(text: str) -> date:
    """ISO dates (2020-10-31) or the dataset's day-month-year (31-10-2020)."""
    text = text.strip()
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    parts = text.split("-")
    if len(parts) == 3 and len(parts[2]) == 4 and all(p.isdigit() for p in parts):
        return date(int(parts[2]), int(parts[1]), int(parts[0]))
    raise ValueError(f"expected a date like 2020-10-31, got {text!r}")


def read_rows(path: Path) -> list[IntakeRow]:
    """Parse and validate an intake file (.jsonl/.json lines or .csv) into rows."""
    with path.open(encoding="utf-8", newline="") as stream:
        return read_stream(stream, path.name)


def read_stream(stream: Iterable[str], name: str) -> list[IntakeRow]:
    """Parse and validate intake lines; the file name's suffix says CSV or JSON lines."""
    problems: list[str] = []
    suffix = Path(name).suffix.lower()
    if suffix == ".csv":
        raw_rows = _csv_rows(stream, problems)
    elif suffix in (".jsonl", ".ndjson", ".json"):
        raw_rows = _json_rows(stream, problems)
    else:
        raise IntakeError([f"{name}: unknown file type; use .jsonl or .csv"])
    rows = [row for line, raw in raw_rows if (row := _validate(line, raw, problems))]
    if problems:
        raise IntakeError(problems)
    return rows


def _csv_rows(stream, problems: list[str]) -> Iterator[tuple[int, dict]]:
    reader = csv.DictReader(stream)
    if not reader.fieldnames or "url" not in reader.fieldnames:
        problems.append("line 1: the CSV header must include a 'url' column")
        return
    unknown = [name for name in reader.fieldnames if name not in COLUMNS]
    if unknown:
        problems.append(
            f"line 1: unknown column(s) {', '.join(unknown)}; known: {', '.join(COLUMNS)}"
        )
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        problems.append(f"line {reader.line_num + 1}: not valid CSV ({exc})")


def _json_rows(stream, problems: list[str]) -> Iterator[tuple[int, dict]]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            # Nesting is judged here, each text by its field below.
            value = read_json(line, f"line {number}", check=False)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not valid JSON ({exc.msg})")
            continue
        except InputRefused as exc:
            problems.append(str(exc))
            continue
        if not isinstance(value, dict):
            problems.append(f"line {number}: must be a JSON object")
            continue
        yield number, value


def _validate(line: int, raw: dict, problems: list[str]) -> IntakeRow | None:
    before = len(problems)

    def text(key: str) -> str:
        value = raw.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            problems.append(f"line {line}, field '{key}': must be text")
            return ""
        # The input boundary: nothing the database or the screens cannot take.
        if refusal := text_refusal(value.strip(), limit=column_limit(key)):
            problems.append(f"line {line}, field '{key}': {refusal.message}")
            return ""
        return value.strip()

    for key in raw:
        if key not in COLUMNS and (refusal := text_refusal(str(key), limit=100)):
            problems.append(f"line {line}: a field name {refusal.message}")
    url = text("url")
    if not url:
        if len(problems) == before:
            problems.append(f"line {line}, field 'url': is missing")
    elif not is_web_address(url):
        problems.append(f"line {line}, field 'url': must start with http:// or https://")
    elif len(normalize_url(url)) > column_limit("url"):
        problems.append(
            f"line {line}, field 'url': is too long once written in its standard form "
            f"(at most {column_limit('url'):,} characters)"
        )
    dates: dict[str, date | None] = {}
    for key in ("publication_date", "claim_date"):
        value = text(key)
        dates[key] = None
        if value:
            try:
                dates[key] = parse_intake_date(value)
            except ValueError as exc:
                problems.append(f"line {line}, field '{key}': {exc}")
    if len(problems) > before:
        return None
    return IntakeRow(
        line=line,
        url=url,
        title=text("title"),
        publisher=text("publisher"),
        publication_date=dates["publication_date"],
        claim_text=text("claim_text"),
        claimant=text("claimant"),
        claim_date=dates["claim_date"],
        rating=text("rating"),
    )


@transaction.atomic
def import_articles(
    rows: Iterable[IntakeRow],
    *,
    batch_name: str,
    source_file: str = "",
    user=None,
    progress: Callable[[int], None] = lambda _: None,
) -> IntakeReport:
    """Store the rows as articles waiting for Phase 1, skipping pages already known."""
    rows = list(rows)
    keys = {normalize_url(row.url) for row in rows}
    known = set(
        Article.objects.filter(normalized_url__in=keys).values_list("normalized_url", flat=True)
    )
    batch = Batch.objects.create(
        name=batch_name, kind=Batch.Kind.INTAKE, source_file=source_file, created_by=user
    )
    report = IntakeReport(batch=batch)
    new_urls: list[str] = []
    for row in rows:
        key = normalize_url(row.url)
        if key in known:
            report.duplicates.append(f"line {row.line}: {row.url} is already known")
            progress(1)
            continue
        known.add(key)
        article = Article.objects.create(
            url=row.url,
            normalized_url=key,
            title=row.title,
            publisher=(row.publisher or key.split("/")[2])[: column_limit("publisher")],
            published_on=row.publication_date,
            claimreview_claim=row.claim_text,
            claimreview_claimant=row.claimant,
            claimreview_date=row.claim_date,
            claimreview_rating=row.rating,
            batch=batch,
        )
        Transition.objects.create(
            article=article,
            to_state=article.state,
            actor=user,
            reason=f"intake from {source_file or 'a file'} (line {row.line})",
        )
        open_article_for_normalisation(article)
        report.created += 1
        new_urls.append(article.url)
        progress(1)
    queue_snapshots(new_urls)
    return report
