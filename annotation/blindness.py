"""What a blind phase (P3, P5) may see of a claim, defined once.

The check page, the task page, the htmx fragments, the error pages and the task API all
take the claim through `blind_claim`, never the Claim model, so a template or serializer
cannot reach the article, the fact-checker's label or earlier verdicts by accident. A
claim's own addresses can point at the fact-check itself (imported data has such claims):
those are replaced by HIDDEN_ADDRESS. tests/review/test_blindness.py holds every surface
to this.
"""

from __future__ import annotations

from typing import Any

from annotation.models import Claim
from annotation.vocabulary import BLIND_PHASES, Phase
from search_proxy.flags import fact_check_finding, fact_check_findings

# The phases that work on a claim with its article at hand, and so may search the web.
EVIDENCE_PHASES = frozenset({Phase.QUESTIONS, Phase.DISPUTE})
# The fact-checking strategies stay out: they describe how the article checked the claim.
BLIND_CLAIM_FIELDS = (
    "text",
    "claim_date",
    "speaker",
    "reporting_source",
    "location_iso_code",
    "original_claim_url",
    "media_url",
    "image_transcription",
    "claim_types",
)
ADDRESS_FIELDS = ("original_claim_url", "media_url")
HIDDEN_ADDRESS = "fact-checking site, hidden"


def is_blind(phase: int) -> bool:
    return phase in BLIND_PHASES


def reveals_fact_check(url: str, article_url: str | None = None) -> bool:
    """Whether `url` is (or may be) a fact-check or the claim's own article, however it is
    wrapped: search_proxy.flags.fact_check_finding on its canonical address."""
    return fact_check_finding(url, article_url).reveals


def shown_address(url: str | None, article_url: str | None) -> str | None:
    """An address as a blind phase may see it: HIDDEN_ADDRESS when it may reveal."""
    return shown_addresses([url], article_url)[0]


def shown_addresses(urls: list[str | None], article_url: str | None) -> list[str | None]:
    """shown_address for many addresses, with one rule query for all of them."""
    given = [u for u in urls if u]
    reveals = (
        {f.address for f in fact_check_findings(given, article_url) if f.reveals}
        if given
        else set()
    )
    return [HIDDEN_ADDRESS if u and u in reveals else u for u in urls]


def blind_claim(claim: Claim) -> dict[str, Any]:
    """The claim as a blind phase may know it: its words and metadata, nothing else."""
    view = {name: getattr(claim, name) for name in BLIND_CLAIM_FIELDS}
    shown = shown_addresses([view[name] for name in ADDRESS_FIELDS], claim.article.url)
    view.update(zip(ADDRESS_FIELDS, shown, strict=True))
    return view
