"""What annotators hand in, phase by phase, as plain data.

Screens, the API and commands build these; the rules modules (annotation/normalisation.py,
annotation/evidence.py, review/checks.py) judge them and the workflow stores them. They sit
below all of those, so none of them imports another to know the shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a submission: where (a dotted path such as
    "questions.0.answers.1.source_url"), what, and whether it blocks handing in."""

    path: str
    message: str
    blocking: bool = True


# The one table of text lengths (characters) for every surface: the rules modules refuse
# longer text at the field's path, and the screens put the same number in `maxlength`.
# Generous for real annotations (AVeriTeC's longest claims and answers are far shorter);
# they stop runaway or hostile input from filling the database and every export.
TEXT_LIMITS = {
    "claim": 1_000,
    "speaker": 300,
    "reporting_source": 300,
    "image_transcription": 5_000,
    "web_address": 2_048,
    "question": 1_000,
    "answer": 5_000,
    "boolean_explanation": 2_000,
    "claim_correction": 1_000,
    "justification": 5_000,
}


def too_long(path: str, limit_name: str, text: str | None) -> list[Problem]:
    """A problem at `path` when `text` is longer than TEXT_LIMITS[limit_name]."""
    limit = TEXT_LIMITS[limit_name]
    if text is None or len(text) <= limit:
        return []
    return [Problem(path, f"Keep this under {limit:,} characters (it has {len(text):,}).")]


@dataclass
class NormalisedClaim:
    text: str
    fact_checker_label: str
    claim_date: date
    claim_types: list[str]
    fact_checking_strategies: list[str]
    speaker: str | None = None
    reporting_source: str | None = None
    original_claim_url: str | None = None
    media_url: str = ""
    image_transcription: str = ""
    location_iso_code: str | None = None


@dataclass
class AnswerData:
    text: str
    answer_type: str
    source_url: str = ""
    source_medium: str = ""
    boolean_explanation: str | None = None
    # Only imported dataset records carry these: an archived copy and the JSON key order.
    cached_source_url: str | None = None
    keys: list[str] | None = None


@dataclass
class QuestionData:
    text: str
    answers: list[AnswerData]
    keys: list[str] | None = None


@dataclass
class EvidenceData:
    questions: list[QuestionData]
    verdict: str
    claim_correction: str = ""
    pairs_support_verdict: bool | None = None


@dataclass
class FlagData:
    code: str
    question_position: int | None = None
    answer_position: int | None = None


@dataclass
class QualityVerdict:
    verdict: str | None
    justification: str = ""
    unreadable: bool = False
    flags: list[FlagData] = field(default_factory=list)
