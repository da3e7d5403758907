"""The pool behind the suggestions: accepted claims as the pipeline's records, built by a
job into ``settings.SUGGESTION_POOL_DIR`` and loaded by each process once per build."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from annotation.models import Claim, EvidenceRound, SuggestionPoolBuild
from annotation.suggestions.kinds import SuggestionsUnavailable
from pipeline.suggest import ClaimPool, PoolClaim


def pool_folder() -> Path:
    return Path(settings.SUGGESTION_POOL_DIR)


_loaded: dict[str, tuple[float, ClaimPool]] = {}
_lock = threading.Lock()


def current_pool() -> ClaimPool:
    """The built pool, loaded once per process and again only after a newer build."""
    marker = pool_folder() / "pool.json"
    try:
        stamp = marker.stat().st_mtime
    except FileNotFoundError as exc:
        raise SuggestionsUnavailable(
            "suggestions are not ready yet: a manager has to build them first"
        ) from exc
    key = str(marker)
    with _lock:
        cached = _loaded.get(key)
        if cached is None or cached[0] != stamp:
            _loaded[key] = (stamp, ClaimPool.load(pool_folder()))
        return _loaded[key][1]


def _questions(claim: Claim) -> tuple[str, ...]:
    evidence: EvidenceRound | None = claim.dataset_evidence()
    if evidence is None:
        return ()
    return tuple(q.text for q in evidence.questions.order_by("position"))


def pool_claim(claim: Claim) -> PoolClaim:
    article = claim.article
    return PoolClaim(
        id=claim.pk,
        text=claim.text,
        claim_date=claim.claim_date,
        speaker=claim.speaker or "",
        label=claim.label or "",
        claim_types=tuple(claim.claim_types or ()),
        strategies=tuple(claim.fact_checking_strategies or ()),
        questions=_questions(claim),
        fact_check_text=" ".join(
            part
            for part in (
                article.title,
                article.claimreview_claim,
                _url_words(article.url),
                claim.justification or "",
            )
            if part
        ),
        article=article.normalized_url,
        reporting_source=claim.reporting_source or "",
        article_url=article.url,
    )


def _url_words(url: str) -> str:
    # Fact-checkers put the story in the address ("fact-check-sean-connery-letter-...").
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return tail.replace("-", " ").replace("_", " ").rsplit(".", 1)[0]


def build_pool(progress: Callable[[int, int], None] | None = None) -> int:
    """Build the pool from every accepted claim and write it; returns the claim count."""
    claims = Claim.objects.accepted().select_related("article").order_by("id")
    total = claims.count()
    records: list[PoolClaim] = []
    for claim in claims.iterator(chunk_size=500):
        records.append(pool_claim(claim))
        if progress and len(records) % 100 == 0:
            progress(len(records), total)
    pool = ClaimPool.build(records)
    pool.save(pool_folder())
    if progress:
        progress(total, total)
    return total


def run_build(build_id: int) -> None:
    """The Celery job's body: claim the build row, build, record the outcome."""
    # Claim first: a redelivered message finds the row no longer pending and does nothing.
    if not SuggestionPoolBuild.objects.filter(
        pk=build_id, status=SuggestionPoolBuild.Status.PENDING
    ).update(status=SuggestionPoolBuild.Status.RUNNING):
        return

    def progress(done: int, total: int) -> None:
        SuggestionPoolBuild.objects.filter(pk=build_id).update(claims_done=done, claims_total=total)

    try:
        build_pool(progress)
    except Exception as exc:
        SuggestionPoolBuild.objects.filter(pk=build_id).update(
            status=SuggestionPoolBuild.Status.FAILED, error=str(exc), finished_at=timezone.now()
        )
        raise
    SuggestionPoolBuild.objects.filter(pk=build_id).update(
        status=SuggestionPoolBuild.Status.DONE, finished_at=timezone.now()
    )
