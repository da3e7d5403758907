"""Importing AVeriTeC records as accepted claims, and exporting accepted claims as records."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import F, Max, Prefetch
from django.utils import timezone

from annotation import workflow
from annotation.models import (
    Answer,
    Article,
    Batch,
    Claim,
    EvidenceRound,
    Question,
)
from exports.averitec_json import (
    ANSWER_KEYS,
    CLAIM_KEYS,
    QUESTION_KEYS,
    ParsedClaim,
    format_claim_date,
    ordered,
    write_json_array,
    write_json_lines,
)
from exports.shared_task import write_form
from search_proxy.models import Source
from search_proxy.webaddress import is_web_address, normalize_url, unwrap_archive_url

Progress = Callable[[int], None]


def _no_progress(_: int) -> None:
    pass


@dataclass
class ImportReport:
    batch: Batch | None
    claims: int = 0
    articles_created: int = 0
    questions: int = 0
    answers: int = 0
    skipped_duplicates: list[str] = field(default_factory=list)


@transaction.atomic
def import_claims(
    records: list[ParsedClaim],
    *,
    batch_name: str,
    source_file: str = "",
    user=None,
    progress: Progress = _no_progress,
) -> ImportReport:
    """Store validated records as accepted claims, all or nothing.

    Claims are grouped into articles by their fact-checking article. A record whose article
    already held a claim with the same text before this import is a duplicate and is skipped
    (and reported); repeats inside one file are kept, as the release itself has some.
    """
    batch = Batch.objects.create(
        name=batch_name, kind=Batch.Kind.DATASET, source_file=source_file, created_by=user
    )
    report = ImportReport(batch=batch)
    now = timezone.now()

    articles = _articles_for(records, batch, report)
    sources = _sources_for(records)
    existing_texts = {
        (article_id, text)
        for article_id, text in Claim.objects.filter(
            article__in=list(articles.values())
        ).values_list("article_id", "text")
    }
    next_position = dict(
        Claim.objects.filter(article__in=list(articles.values()))
        .values_list("article_id")
        .annotate(top=Max("position"))
    )
    first_dataset_position = (Claim.objects.aggregate(top=Max("dataset_position"))["top"] or -1) + 1

    for record in records:
        article = articles[normalize_url(record.fact_checking_article)]
        if (article.id, record.text) in existing_texts:
            report.skipped_duplicates.append(
                f"record {record.index}: already imported ({record.text[:60]!r})"
            )
            progress(1)
            continue
        position = next_position.get(article.id, -1) + 1
        next_position[article.id] = position
        workflow.accept_imported_claim(
            article,
            # ParsedQuestion has QuestionData's fields, and only they are read.
            record.questions,  # type: ignore[arg-type]
            label=record.label,
            actor=user,
            reason=f"imported from {source_file or 'a dataset file'} (record {record.index})",
            source_for=lambda url: (
                sources.get(normalize_url(url)) if _is_source_address(url) else None
            ),
            position=position,
            text=record.text,
            claim_date=record.claim_date,
            speaker=record.speaker,
            reporting_source=record.reporting_source,
            original_claim_url=record.original_claim_url,
            cached_original_claim_url=record.cached_original_claim_url,
            location_iso_code=record.location_iso_code,
            claim_types=record.claim_types,
            fact_checking_strategies=record.fact_checking_strategies,
            justification=record.justification,
            required_reannotation=record.required_reannotation,
            dataset_position=first_dataset_position + record.index,
            json_keys=record.keys,
            json_extra=record.extra or None,
            created_at=now,
        )
        report.claims += 1
        report.questions += len(record.questions)
        report.answers += sum(len(q.answers) for q in record.questions)
        progress(1)
    return report


def _articles_for(
    records: list[ParsedClaim], batch: Batch, report: ImportReport
) -> dict[str, Article]:
    """The article of every record, keyed by normalised URL, created where missing."""
    wanted: dict[str, str] = {}
    for record in records:
        wanted.setdefault(normalize_url(record.fact_checking_article), record.fact_checking_article)
    found = {a.normalized_url: a for a in Article.objects.filter(normalized_url__in=wanted)}
    missing = [
        Article(
            url=url,
            normalized_url=key,
            publisher=_publisher(url),
            state=Article.State.IMPORTED,
            batch=batch,
        )
        for key, url in wanted.items()
        if key not in found
    ]
    Article.objects.bulk_create(missing)
    report.articles_created = len(missing)
    # Re-read: not every database returns primary keys from bulk_create.
    return {a.normalized_url: a for a in Article.objects.filter(normalized_url__in=wanted)}


def _publisher(url: str) -> str:
    host = normalize_url(unwrap_archive_url(url)).split("/")[2]
    return host.split(":")[0]


def _sources_for(records: list[ParsedClaim]) -> dict[str, Source]:
    """One Source per cited web page, shared with sources already known."""
    urls: dict[str, str] = {}
    copies: dict[str, str | None] = {}
    for record in records:
        for question in record.questions:
            for answer in question.answers:
                if _is_source_address(answer.source_url):
                    key = normalize_url(answer.source_url)
                    urls.setdefault(key, answer.source_url)
                    copies[key] = copies.get(key) or answer.cached_source_url
    for key, url in urls.items():
        # get-or-create per page keeps the archive bookkeeping in one place (Source.for_url);
        # the release's own archive link means the page needs no archive job.
        if not Source.objects.filter(normalized_url=key).exists():
            Source.for_url(url, archived_copy=copies.get(key))
    return {s.normalized_url: s for s in Source.objects.filter(normalized_url__in=urls)}


# --- Export ----------------------------------------------------------------------------


def claims_for_export(queryset=None):
    """Accepted claims in dataset order, with everything the records need prefetched."""
    claims = (queryset if queryset is not None else Claim.objects.all()).accepted()
    return with_records_prefetched(claims).order_by(
        F("dataset_position").asc(nulls_last=True), "accepted_at", "id"
    )


def with_records_prefetched(claims):
    """Claims with what claim_record() reads prefetched (the dataset's evidence round)."""
    answers = Answer.objects.select_related("source", "passage_snapshot").order_by("position")
    questions = Question.objects.order_by("position").prefetch_related(
        Prefetch("answers", queryset=answers)
    )
    rounds = (
        EvidenceRound.objects.filter(is_agreement_sample=False, submitted_at__isnull=False)
        .order_by("-phase", "-submitted_at")
        .prefetch_related(Prefetch("questions", queryset=questions))
    )
    return claims.select_related("article").prefetch_related(
        Prefetch("evidence_rounds", queryset=rounds, to_attr="rounds")
    )


def export_records(
    claims: Iterable[Claim], chunk_size: int = 200, *, with_passages: bool = False
) -> Iterator[dict]:
    """AVeriTeC records for claims from claims_for_export(), one at a time.

    `with_passages` adds "extractive_passage" to answers selected from a stored snapshot: off
    by default, so the official format stays exact.
    """
    if hasattr(claims, "iterator"):
        claims = claims.iterator(chunk_size=chunk_size)
    for claim in claims:
        yield claim_record(claim, with_passages=with_passages)
        _forget_prefetched(claim)


def _forget_prefetched(claim: Claim) -> None:
    """Drop the claim's prefetched evidence once written.

    Prefetched children keep a reference to their parent, so a chunk of claims is a web of
    reference cycles that only the cyclic garbage collector frees, late; memory would then
    grow with the export. Cutting the parent -> children links lets each chunk go at once.
    """
    for evidence in getattr(claim, "rounds", None) or ():
        for question in evidence.questions.all():
            question._prefetched_objects_cache = {}
        evidence._prefetched_objects_cache = {}
    claim.rounds = []  # type: ignore[attr-defined]  # claims_for_export()'s prefetch attribute


def claim_record(claim: Claim, *, with_passages: bool = False) -> dict:
    rounds = getattr(claim, "rounds", None)
    # Claims still in P2 (listed by the API) have no submitted round yet.
    evidence = claim.dataset_evidence() if rounds is None else next(iter(rounds), None)
    values = {
        "claim": claim.text,
        "required_reannotation": claim.required_reannotation,
        "label": claim.label,
        "justification": claim.justification,
        "claim_date": format_claim_date(claim.claim_date),
        "speaker": claim.speaker,
        "original_claim_url": claim.original_claim_url,
        "fact_checking_article": claim.article.url,
        "reporting_source": claim.reporting_source,
        "location_ISO_code": claim.location_iso_code,
        "claim_types": claim.claim_types,
        "fact_checking_strategies": claim.fact_checking_strategies,
        "questions": [_question_record(q, with_passages) for q in evidence.questions.all()]
        if evidence
        else [],
        "cached_original_claim_url": _cached_original_claim_url(claim),
        **(claim.json_extra or {}),
    }
    return ordered(values, claim.json_keys, (*CLAIM_KEYS, *(claim.json_extra or {})))


def _cached_original_claim_url(claim: Claim) -> str | None:
    # Imported claims keep the release's value (round trip); platform claims take the
    # archive copy their P1 submit's archive job made.
    if claim.origin != Claim.Origin.ANNOTATED or claim.cached_original_claim_url is not None:
        return claim.cached_original_claim_url
    return Source.archived_copy_of(claim.original_claim_url)


def _question_record(question: Question, with_passages: bool = False) -> dict:
    values = {
        "question": question.text,
        "answers": [_answer_record(a, with_passages) for a in question.answers.all()],
    }
    return ordered(values, question.json_keys, QUESTION_KEYS)


def _answer_record(answer: Answer, with_passages: bool = False) -> dict:
    record = _official_answer_record(answer)
    if with_passages and answer.passage_snapshot is not None:
        snapshot = answer.passage_snapshot
        record["extractive_passage"] = {
            "snapshot_url": snapshot.final_url,
            "fetched_at": snapshot.fetched_at.isoformat(),
            "start": answer.passage_start,
            "end": answer.passage_end,
        }
    return record


def _official_answer_record(answer: Answer) -> dict:
    values = {
        "answer": answer.text,
        "answer_type": answer.answer_type,
        "source_url": answer.source_url,
        "source_medium": answer.source_medium,
        "boolean_explanation": answer.boolean_explanation,
        "cached_source_url": answer.cached_source_url,
    }
    if answer.json_keys is not None:
        return ordered(values, answer.json_keys, ANSWER_KEYS)
    # Platform-made answers: the explanation belongs to Boolean answers only, and the cached
    # copy comes from the archive once the source has one.
    keys = ["answer", "answer_type", "source_url", "source_medium"]
    if answer.answer_type == "Boolean":
        keys.append("boolean_explanation")
    if answer.source_id and answer.source is not None:
        values["cached_source_url"] = answer.source.archived_url
        keys.append("cached_source_url")
    return ordered(values, keys, ANSWER_KEYS)


def write_export(
    path: Path,
    *,
    fmt: str = "json",
    queryset=None,
    progress: Progress = _no_progress,
    with_passages: bool = False,
) -> int:
    """Write accepted claims to a file; returns how many.

    ``fmt`` is "json" (the 2023 form), "jsonl", or a shared task's form
    (``exports.shared_task.FORMS``). The file appears complete or not at all: it is written
    beside the target and renamed.
    """
    partial = path.with_name(path.name + ".partial")
    try:
        # The CSV module writes its own line ends; the JSON writers write "\n" only.
        with partial.open("w", encoding="utf-8", newline="") as stream:
            records = export_records(claims_for_export(queryset), with_passages=with_passages)
            count = write_records(fmt, _counting(records, progress), stream)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return count


def write_records(fmt: str, records: Iterable[dict], stream) -> int:
    """2023 records (in dataset order) to ``stream`` in ``fmt``; see write_export."""
    if fmt == "json":
        return write_json_array(records, stream)
    if fmt == "jsonl":
        return write_json_lines(records, stream)
    return write_form(fmt, records, stream)


def _counting(records: Iterator[dict], progress: Progress) -> Iterator[dict]:
    for record in records:
        yield record
        progress(1)


def _is_source_address(url: str) -> bool:
    """Evidence "URLs" include "Metadata" and ""; only real addresses become sources."""
    return is_web_address(url, scheme_optional=True)
