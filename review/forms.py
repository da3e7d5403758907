"""Reading the quality-check screen (P3 and P5) from a form post."""

from __future__ import annotations

import re

from django.http import QueryDict

from annotation.vocabulary import CLAIM_TOO_VAGUE, Phase, Verdict
from annotation.workflow import FlagData, QualityVerdict
from review.models import CLAIM_FLAG_CODES, QUESTION_FLAG_CODES, ProblemFlag

ANSWER_FLAG_CODES = tuple(
    code for code in ProblemFlag.Code.values if code not in CLAIM_FLAG_CODES + QUESTION_FLAG_CODES
)
_TARGET = re.compile(r"^flag-(claim|q-(\d+)(?:-a-(\d+))?)$")


def verdict_choices(phase: int) -> list[tuple[str, str]]:
    choices = list(Verdict.choices)
    if phase == Phase.POST_CONTROL:
        choices.append((CLAIM_TOO_VAGUE, CLAIM_TOO_VAGUE))
    return choices


def draft_from_post(post: QueryDict) -> dict:
    flags = {}
    for key in post:
        if _TARGET.match(key):
            flags[key.removeprefix("flag-")] = sorted(set(post.getlist(key)))
    return {
        "verdict": post.get("verdict", ""),
        "unreadable": post.get("unreadable") == "on",
        "justification": post.get("justification", "").strip(),
        "flags": flags,
    }


def check_errors(draft: dict, phase: int) -> dict[str, str]:
    """What blocks submission, by field."""
    errors = {}
    if not draft["unreadable"]:
        if draft["verdict"] not in dict(verdict_choices(phase)):
            errors["verdict"] = "Choose a verdict, or mark the claim unreadable."
        if not draft["justification"]:
            errors["justification"] = "Explain how the answers lead to your verdict."
    return errors


def verdict_from_draft(draft: dict) -> QualityVerdict:
    flags = []
    for target, codes in draft.get("flags", {}).items():
        match = _TARGET.match(f"flag-{target}")
        if not match:
            continue
        question = int(match[2]) if match[2] is not None else None
        answer = int(match[3]) if match[3] is not None else None
        allowed = (
            CLAIM_FLAG_CODES
            if question is None
            else QUESTION_FLAG_CODES
            if answer is None
            else ANSWER_FLAG_CODES
        )
        flags.extend(FlagData(code, question, answer) for code in codes if code in allowed)
    return QualityVerdict(
        verdict=None if draft["unreadable"] else draft["verdict"],
        justification=draft["justification"],
        unreadable=draft["unreadable"],
        flags=flags,
    )
