"""What a suggestion knows of the claim it is for: only its text, date, article and people,
so that the pipeline can keep to claims made before it and outside its article."""

from __future__ import annotations

from datetime import date

from annotation.models import Claim, Task
from annotation.suggestions.kinds import SuggestionsUnavailable
from pipeline.suggest import ClaimContext


def claim_context(claim: Claim) -> ClaimContext:
    """What the suggestions for a P2/P4 claim know of it (the benchmark's context_of())."""
    return ClaimContext(
        text=claim.text,
        claim_date=claim.claim_date,
        article=claim.article.normalized_url,
        speaker=claim.speaker or "",
        reporting_source=claim.reporting_source or "",
        article_url=claim.article.url,
    )


class ClaimDateMissing(SuggestionsUnavailable):
    """P1 suggestions need the claim's date: they may only use claims made before it."""


def draft_claim_context(
    task: Task,
    text: str,
    *,
    claim_date: date | None = None,
    speaker: str = "",
    reporting_source: str = "",
) -> ClaimContext:
    """What the suggestions for a claim being written in P1 know of it. Its date is the one
    typed on its card, else the ClaimReview's claim date, else the fact-check's publication
    date (a claim is older than its fact-check); without any, nothing can be suggested."""
    article = task.article
    day = claim_date or article.claimreview_date or article.published_on
    if day is None:
        raise ClaimDateMissing(
            "type the claim date first: suggestions only use claims made before it"
        )
    return ClaimContext(
        text=text,
        claim_date=day,
        article=article.normalized_url,
        speaker=speaker or article.claimreview_claimant,
        reporting_source=reporting_source,
        article_url=article.url,
    )
