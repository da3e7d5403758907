"""The rules for Phase 1 claims, for the screen, the API and the workflow alike.

`normalisation_problems` lists what is wrong with the claims split from one article, each
at a path such as "claims.2.original_claim_url" (the shape of annotation/evidence.py).
Forms and serializers only turn input into NormalisedClaim values (dates as written,
aliases of claim types); what is allowed is decided here.
"""

from __future__ import annotations

from django_countries import countries

from annotation.models import Article
from annotation.submissions import NormalisedClaim, Problem, too_long
from annotation.vocabulary import ClaimType, Strategy, Verdict
from search_proxy.flags import fact_check_finding
from search_proxy.webaddress import is_web_address

# One article rarely holds more than a handful of claims; the cap stops runaway input.
MAX_CLAIMS_PER_ARTICLE = 50
COUNTRY_CODES = frozenset(code for code, _ in countries)


def normalisation_problems(claims: list[NormalisedClaim], article_url: str) -> list[Problem]:
    problems: list[Problem] = []
    if not claims:
        problems.append(Problem("claims", "Add at least one claim, or report the article."))
    elif len(claims) > MAX_CLAIMS_PER_ARTICLE:
        problems.append(
            Problem("claims", f"At most {MAX_CLAIMS_PER_ARTICLE} claims come from one article.")
        )
    for index, claim in enumerate(claims):
        problems.extend(_claim_problems(claim, f"claims.{index}", article_url))
    return problems


def skip_problems(reason: str, note: str | None) -> list[Problem]:
    """What is wrong with a report that the article is unusable ("report & skip"): a reason
    the list does not name says nothing, so 'other' needs a note saying what is wrong.
    The one home of this rule: the screen's form, the API and the workflow all ask here."""
    if reason == Article.SkipReason.OTHER and not (note or "").strip():
        return [Problem("note", "Say what is wrong with the article when the reason is 'other'.")]
    return []


def _claim_problems(claim: NormalisedClaim, where: str, article_url: str) -> list[Problem]:
    problems = []

    def refuse(field: str, message: str) -> None:
        problems.append(Problem(f"{where}.{field}", message))

    if not (claim.text or "").strip():
        refuse("text", "Write the claim.")
    if claim.fact_checker_label not in Verdict.values:
        refuse("fact_checker_label", "Choose the fact-checker's verdict.")
    if claim.claim_date is None:
        refuse("claim_date", "Give the date the claim was made.")
    if not claim.claim_types:
        refuse("claim_types", "Choose at least one claim type.")
    elif unknown := [t for t in claim.claim_types if t not in ClaimType.values]:
        refuse("claim_types", f"Not a claim type: {', '.join(map(repr, unknown))}.")
    if not claim.fact_checking_strategies:
        refuse("fact_checking_strategies", "Choose at least one strategy.")
    elif unknown := [s for s in claim.fact_checking_strategies if s not in Strategy.values]:
        refuse("fact_checking_strategies", f"Not a strategy: {', '.join(map(repr, unknown))}.")
    url = claim.original_claim_url
    if url and not is_web_address(url):
        refuse("original_claim_url", "Give a web address starting with http:// or https://.")
    elif url and (found := fact_check_finding(url, article_url)).reveals:
        if found.possibly:
            refuse(
                "original_claim_url",
                f"This {found.unresolved} link cannot be checked here and may lead to a "
                "fact-check; give the full address of the page where the claim appeared, or "
                "leave the field empty.",
            )
        else:
            refuse(
                "original_claim_url",
                "This is a fact-check (or this article), not where the claim was made; give "
                "the page where the claim itself appeared, or leave the field empty.",
            )
    if claim.media_url and not is_web_address(claim.media_url):
        refuse("media_url", "Give a web address starting with http:// or https://.")
    code = claim.location_iso_code
    if code and code not in COUNTRY_CODES:
        refuse("location_iso_code", f"{code!r} is not a country code; pick one from the list.")
    for field, limit in LIMITED_FIELDS:
        problems.extend(too_long(f"{where}.{field}", limit, getattr(claim, field)))
    return problems


# Claim fields and their entries in TEXT_LIMITS.
LIMITED_FIELDS = [
    ("text", "claim"),
    ("speaker", "speaker"),
    ("reporting_source", "reporting_source"),
    ("original_claim_url", "web_address"),
    ("media_url", "web_address"),
    ("image_transcription", "image_transcription"),
]
