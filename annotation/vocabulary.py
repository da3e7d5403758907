"""The fixed vocabulary of the AVeriTeC guidelines, shared by every app.

Values are the exact strings of the released dataset, so the export writes them unchanged.
"""

from django.db import models


class Phase(models.IntegerChoices):
    NORMALISATION = 1, "P1 · claim normalisation"
    QUESTIONS = 2, "P2 · questions and answers"
    QUALITY_CHECK = 3, "P3 · quality check"
    DISPUTE = 4, "P4 · dispute resolution"
    POST_CONTROL = 5, "P5 · post-control"


# The phases that must not see the article, the fact-checker's label or earlier verdicts.
BLIND_PHASES = frozenset({Phase.QUALITY_CHECK, Phase.POST_CONTROL})


class Verdict(models.TextChoices):
    SUPPORTED = "Supported"
    REFUTED = "Refuted"
    NOT_ENOUGH_EVIDENCE = "Not Enough Evidence"
    CONFLICTING = "Conflicting Evidence/Cherrypicking", "Conflicting evidence / cherry-picking"


# Only the post-control phase (P5) may call a claim too vague; it then leaves the dataset.
CLAIM_TOO_VAGUE = "Claim too vague"


class ClaimType(models.TextChoices):
    EVENT_PROPERTY = "Event/Property Claim", "Event/Property Claim"
    NUMERICAL = "Numerical Claim", "Numerical Claim"
    QUOTE = "Quote Verification", "Quote Verification"
    CAUSAL = "Causal Claim", "Causal Claim"
    POSITION = "Position Statement", "Position Statement"
    SPECULATIVE = "Speculative Claim", "Speculative Claim"
    OPINION = "Opinion Claim", "Opinion Claim"
    MEDIA_PUBLISHING = "Media Publishing Claim", "Media Publishing Claim"
    MEDIA_ANALYSIS = "Media Analysis Claim", "Media Analysis Claim"


class Strategy(models.TextChoices):
    WRITTEN_EVIDENCE = "Written Evidence", "Written Evidence"
    NUMERICAL_COMPARISON = "Numerical Comparison", "Numerical Comparison"
    CONSULTATION = "Consultation", "Consultation"
    SATIRICAL_SOURCE = "Satirical Source Identification", "Satirical Source Identification"
    MEDIA_SOURCE_DISCOVERY = "Media Source Discovery", "Media Source Discovery"
    IMAGE_ANALYSIS = "Image Analysis", "Image Analysis"
    VIDEO_ANALYSIS = "Video Analysis", "Video Analysis"
    AUDIO_ANALYSIS = "Audio Analysis", "Audio Analysis"
    GEOLOCATION = "Geolocation", "Geolocation"
    FACT_CHECKER_REFERENCE = "Fact-checker Reference", "Fact-checker Reference"


# Claims of these kinds stop after P1 (DESIGN.md section 2): the dataset is text-only and
# about verifiable facts.
EXCLUDED_CLAIM_TYPES = frozenset(
    {
        ClaimType.SPECULATIVE,
        ClaimType.OPINION,
        ClaimType.MEDIA_PUBLISHING,
        ClaimType.MEDIA_ANALYSIS,
    }
)
NON_TEXT_STRATEGIES = frozenset(
    {
        Strategy.MEDIA_SOURCE_DISCOVERY,
        Strategy.IMAGE_ANALYSIS,
        Strategy.VIDEO_ANALYSIS,
        Strategy.AUDIO_ANALYSIS,
        Strategy.GEOLOCATION,
    }
)


class AnswerType(models.TextChoices):
    EXTRACTIVE = "Extractive", "Extractive"
    ABSTRACTIVE = "Abstractive", "Abstractive"
    BOOLEAN = "Boolean", "Boolean"
    UNANSWERABLE = "Unanswerable", "Unanswerable"


# The text an unanswerable answer carries in the dataset and in the official scorer.
NO_ANSWER_TEXT = "No answer could be found."


class SourceMedium(models.TextChoices):
    WEB_TEXT = "Web text", "Web text"
    PDF = "PDF", "PDF"
    METADATA = "Metadata", "Metadata"
    WEB_TABLE = "Web table", "Web table"
    IMAGE = "Image/graphic", "Image/graphic"
    VIDEO = "Video", "Video"
    AUDIO = "Audio", "Audio"
    OTHER = "Other", "Other"
    NONE = "", "None (unanswerable)"


def _folded(choices: type[models.TextChoices]) -> dict[str, str]:
    return {value.casefold(): value for value in choices.values}


_CLAIM_TYPES = _folded(ClaimType)
_STRATEGIES = _folded(Strategy)


def canonical_claim_type(value: str) -> str | None:
    """The vocabulary value for a claim type written in any letter case, or None."""
    return _CLAIM_TYPES.get(value.casefold())


def canonical_strategy(value: str) -> str | None:
    """The vocabulary value for a strategy written in any letter case, or None."""
    return _STRATEGIES.get(value.casefold())


def exclusion_reason(claim_types: list[str], strategies: list[str]) -> str:
    """Why a claim with these types and strategies stops after P1, or "" if it goes on."""
    types = {canonical_claim_type(t) for t in claim_types}
    found = sorted(t for t in types if t in EXCLUDED_CLAIM_TYPES)
    if found:
        return f"claim type not kept in the dataset: {', '.join(found)}"
    kinds = {canonical_strategy(s) for s in strategies}
    media = sorted(s for s in kinds if s in NON_TEXT_STRATEGIES)
    if media:
        return f"needs evidence beyond text: {', '.join(media)}"
    if kinds == {Strategy.FACT_CHECKER_REFERENCE}:
        return "only strategy is a reference to another fact-check"
    return ""


class SuggestionKind(models.TextChoices):
    """What the embedded model pipeline can pre-suggest (annotation/suggestions/)."""

    DUPLICATES = "duplicates", "likely duplicates (P1)"
    CLAIM_LABELS = "claim_labels", "claim types and strategies (P1)"
    QUESTIONS = "questions", "question templates (P2/P4)"
    SEARCH_QUERY = "search_query", "search query (P2/P4)"
    SENTENCES = "sentences", "evidence sentences (P2/P4)"
