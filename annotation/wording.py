"""Wording hints for normalised claims (P1): they help, and never block a submission.

The guidelines ask for claims that stand on their own: statements rather than questions,
no "Says …" prefix, no pronouns that only the article resolves, and quotes with a speaker.
"""

from __future__ import annotations

import re

_QUESTION_START = re.compile(
    r"^(did|does|do|is|are|was|were|has|have|had|can|could|will|would|should|shall|may|"
    r"might|why|what|how|when|where|who|which)\b",
    re.IGNORECASE,
)
_PRONOUN_START = re.compile(r"^(we|they|he|she|it)\b", re.IGNORECASE)
_QUOTE = re.compile(r"[\"“”«»]|(^|\s)'[^']+'")


def wording_warnings(text: str, speaker: str | None = None) -> list[str]:
    """Plain-language hints about a claim's wording (empty when it reads well)."""
    claim = text.strip()
    if not claim:
        return []
    hints = []
    if claim.endswith("?") or _QUESTION_START.match(claim):
        hints.append(
            "This reads like a question. Rewrite it as the statement being checked "
            '("Did X happen?" becomes "X happened.").'
        )
    if re.match(r"^says\b", claim, re.IGNORECASE):
        hints.append(
            'Drop the leading "Says": write the claim itself, and put who said it in '
            "the speaker field (keep the speaker only if the question is whether they said it)."
        )
    if match := _PRONOUN_START.match(claim):
        hints.append(
            f'The claim starts with "{match.group(1)}". Replace it with who or what it '
            "means, so a reader who has not seen the article understands it."
        )
    if _QUOTE.search(claim) and not (speaker or "").strip():
        hints.append("The claim contains a quote but no speaker is given. Who said it?")
    return hints
