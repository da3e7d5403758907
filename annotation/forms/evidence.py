"""Reading the question-answer editor (Phase 2 and Phase 4) from a form post.

The editor's fields are named by position, "q-0-text", "q-0-a-1-source_url", and renumbered
in the browser whenever cards move, so the order on screen is the order stored. Nested
formsets would fight that; a small parser and the rules of annotation/evidence.py do not.
"""

from __future__ import annotations

import re
from collections import defaultdict

from django.http import QueryDict

from annotation.models import EvidenceRound
from annotation.submissions import AnswerData, EvidenceData, Problem, QuestionData
from annotation.vocabulary import AnswerType

ANSWER_FIELDS = (
    "answer_type",
    "text",
    "boolean",
    "boolean_explanation",
    "source_url",
    "source_medium",
)
MAX_QUESTIONS = 60
_QUESTION = re.compile(r"^q-(\d+)-text$")
# An answer is known by any of its fields, so one whose kind is unset still arrives (and is
# refused with a message) instead of vanishing.
_ANSWER = re.compile(r"^q-(\d+)-a-(\d+)-[a-z_]+$")


def draft_from_post(post: QueryDict) -> dict:
    """The editor's content as typed, in screen order; unvalidated (this is what autosave keeps)."""
    question_ids = sorted({int(m[1]) for key in post if (m := _QUESTION.match(key))})[
        :MAX_QUESTIONS
    ]
    answers = defaultdict(set)
    for key in post:
        if m := _ANSWER.match(key):
            answers[int(m[1])].add(int(m[2]))
    questions = []
    for qi in question_ids:
        rows = []
        for ai in sorted(answers[qi])[:10]:
            prefix = f"q-{qi}-a-{ai}-"
            row = {name: post.get(prefix + name, "").strip() for name in ANSWER_FIELDS}
            if row["answer_type"] == AnswerType.BOOLEAN:
                row["text"] = row["boolean"]
            rows.append(row)
        questions.append({"text": post.get(f"q-{qi}-text", "").strip(), "answers": rows})
    return {
        "questions": questions,
        "verdict": post.get("verdict", ""),
        "claim_correction": post.get("claim_correction", "").strip(),
    }


def draft_summary(draft: dict) -> list[tuple[str, str, str]]:
    """A P2/P4 draft as (label, value, form field) rows, for the conflict screen."""
    rows: list[tuple[str, str, str]] = []
    for qi, question in enumerate(draft.get("questions", [])):
        rows.append((f"Question {qi + 1}", question.get("text", ""), f"q-{qi}-text"))
        for ai, answer in enumerate(question.get("answers", [])):
            text = answer.get("text", "") or answer.get("answer_type", "")
            field = f"q-{qi}-a-{ai}-text" if answer.get("answer_type") != "Boolean" else ""
            rows.append((f"Q{qi + 1} answer {ai + 1}", text, field))
            if answer.get("source_url"):
                rows.append((f"Q{qi + 1} answer {ai + 1} source", answer["source_url"], ""))
    rows.append(("Claim correction", draft.get("claim_correction", ""), "claim_correction"))
    rows.append(("Verdict", draft.get("verdict", ""), ""))
    return rows


def evidence_from_draft(draft: dict) -> EvidenceData:
    return EvidenceData(
        questions=[
            QuestionData(
                text=q.get("text", ""),
                answers=[
                    AnswerData(
                        text=a.get("text", ""),
                        answer_type=a.get("answer_type", ""),
                        source_url=a.get("source_url", ""),
                        source_medium=a.get("source_medium", ""),
                        boolean_explanation=a.get("boolean_explanation") or None,
                    )
                    for a in q.get("answers", [])
                ],
            )
            for q in draft.get("questions", [])
        ],
        verdict=draft.get("verdict", ""),
        claim_correction=draft.get("claim_correction", ""),
        pairs_support_verdict=True,
    )


def draft_from_evidence(evidence: EvidenceRound | None) -> dict:
    """An editor draft holding existing pairs (Phase 4 starts from the pairs in dispute)."""
    if evidence is None:
        return {"questions": [], "verdict": "", "claim_correction": ""}
    questions = []
    for question in evidence.questions.prefetch_related("answers"):
        questions.append(
            {
                "text": question.text,
                "answers": [
                    {
                        "answer_type": a.answer_type,
                        "text": a.text,
                        "boolean": a.text if a.answer_type == AnswerType.BOOLEAN else "",
                        "boolean_explanation": a.boolean_explanation or "",
                        "source_url": a.source_url,
                        "source_medium": a.source_medium,
                    }
                    for a in question.answers.all()
                ],
            }
        )
    return {"questions": questions, "verdict": "", "claim_correction": ""}


def blank_question() -> dict:
    return {"text": "", "answers": [blank_answer()]}


def blank_answer() -> dict:
    return {name: "" for name in ANSWER_FIELDS} | {"answer_type": AnswerType.EXTRACTIVE}


def editor_rows(draft: dict, problems: list[Problem]) -> tuple[list[dict], dict[str, list]]:
    """Questions ready for the template, each field with its messages; plus overall ones.

    Messages are (text, blocking) pairs keyed by the field they are about.
    """
    by_path: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for problem in problems:
        by_path[problem.path].append((problem.message, problem.blocking))
    rows = []
    for qi, question in enumerate(draft.get("questions") or [blank_question()]):
        answers = []
        for ai, answer in enumerate(question.get("answers") or [blank_answer()]):
            path = f"questions.{qi}.answers.{ai}"
            answers.append(
                {
                    **blank_answer(),
                    **answer,
                    "messages": {
                        name: by_path.get(f"{path}.{name}", [])
                        for name in (*ANSWER_FIELDS, "answer_type")
                    },
                }
            )
        rows.append(
            {
                "text": question.get("text", ""),
                "answers": answers,
                "messages": by_path.get(f"questions.{qi}.text", [])
                + by_path.get(f"questions.{qi}.answers", []),
            }
        )
    overall = {
        "questions": by_path.get("questions", []),
        "verdict": by_path.get("verdict", []),
    }
    return rows, overall


def where(path: str) -> str:
    """A problem's place in words: "questions.1.answers.0.source_url" → "Question 2, answer 1"."""
    parts = path.split(".")
    words = []
    if len(parts) >= 2 and parts[0] == "questions" and parts[1].isdigit():
        words.append(f"Question {int(parts[1]) + 1}")
        if len(parts) >= 4 and parts[2] == "answers" and parts[3].isdigit():
            words.append(f"answer {int(parts[3]) + 1}")
    return ", ".join(words)
