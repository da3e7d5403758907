"""The rules for a blind quality check (P3) and post-control (P5).

One function, `check_problems`, lists every problem of a check with where it is (a path such
as "flags.2.question_position") in the shape of `annotation/evidence.py`. The check screen,
its autosave, the task API and the workflow all ask it, so they refuse the same things.
`store_check` is the one place a check that passes them becomes rows; the workflow reaches it
through annotation/phases.py (registered in review/apps.py) when a P3/P5 task is handed in.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.db.models import F, QuerySet
from django.utils import timezone

from annotation.models import Claim, EvidenceRound, Question, Task
from annotation.submissions import FlagData, Problem, QualityVerdict, too_long
from annotation.vocabulary import CLAIM_TOO_VAGUE, AnswerType, Phase, Verdict
from annotation.workflow import WorkflowError
from review.models import CLAIM_FLAG_CODES, QUESTION_FLAG_CODES, ProblemFlag, QualityCheck

ANSWER_FLAG_CODES = tuple(
    code for code in ProblemFlag.Code.values if code not in CLAIM_FLAG_CODES + QUESTION_FLAG_CODES
)
# Flags that judge an answer against its source; an Unanswerable answer has no source.
SOURCE_FLAG_CODES = (
    ProblemFlag.Code.ANSWER_WRONG_BUT_SUPPORTED,
    ProblemFlag.Code.ANSWER_WRONG_UNSUPPORTED,
    ProblemFlag.Code.SOURCE_MAY_BE_BIASED,
)


def answer_flag_codes(answer_type: str) -> tuple[str, ...]:
    """The flags a checker may put on an answer of this type."""
    if answer_type == AnswerType.UNANSWERABLE:
        return tuple(code for code in ANSWER_FLAG_CODES if code not in SOURCE_FLAG_CODES)
    return ANSWER_FLAG_CODES


# Positions of the pairs shown: question position -> its answers' positions.
Shown = Mapping[int, Collection[int]]


def verdict_choices(phase: int) -> list[tuple[str, str]]:
    """The verdicts a checker of this phase may give; only P5 may call a claim too vague."""
    choices = list(Verdict.choices)
    if phase == Phase.POST_CONTROL:
        choices.append((CLAIM_TOO_VAGUE, CLAIM_TOO_VAGUE))
    return choices


def flag_target(code: str) -> str:
    """What a flag code is about: "claim", "question" or "answer"."""
    if code in CLAIM_FLAG_CODES:
        return "claim"
    if code in QUESTION_FLAG_CODES:
        return "question"
    return "answer"


def flag_fits(flag: FlagData) -> bool:
    """Whether a flag names the kind of target its code is about."""
    return flag.code in ProblemFlag.Code.values and flag_target(flag.code) == _named(flag)


def shown_positions(evidence: EvidenceRound | None) -> dict[int, dict[int, str]]:
    """The question and answer positions of the evidence round a checker was shown, with
    each answer's type (some flags do not fit some types)."""
    if evidence is None:
        return {}
    return {
        q.position: {a.position: a.answer_type for a in q.answers.all()}
        for q in evidence.questions.prefetch_related("answers")
    }


def check_problems(data: QualityVerdict, phase: int, shown: Shown | None = None) -> list[Problem]:
    """Everything that keeps a check from being handed in; `shown` (when known) are the
    positions of the pairs the checker saw, which flags must point at."""
    problems: list[Problem] = []
    if data.unreadable and data.verdict:
        # Unreadable means no verdict; taking one of the two silently would lose the other.
        problems.append(Problem("verdict", "Choose either a verdict or 'unreadable', not both."))
    elif not data.unreadable:
        if not data.verdict:
            problems.append(Problem("verdict", "Choose a verdict, or mark the claim unreadable."))
        elif data.verdict == CLAIM_TOO_VAGUE and phase != Phase.POST_CONTROL:
            problems.append(
                Problem(
                    "verdict",
                    "Choose a verdict of this phase: 'Claim too vague' is only a post-control "
                    "(P5) verdict.",
                )
            )
        elif data.verdict not in dict(verdict_choices(phase)):
            problems.append(Problem("verdict", "Choose a verdict from the list."))
        if not (data.justification or "").strip():
            problems.append(
                Problem("justification", "Explain how the answers lead to your verdict.")
            )
    problems.extend(too_long("justification", "justification", data.justification))
    seen: set[tuple[Any, ...]] = set()
    for index, flag in enumerate(data.flags):
        problem = _flag_problem(flag, shown)
        key = (flag.code, flag.question_position, flag.answer_position)
        if problem is None and key in seen:
            problem = ("code", "This flag is already given for the same target.")
        seen.add(key)
        if problem is not None:
            field, message = problem
            problems.append(Problem(f"flags.{index}.{field}", message))
    return problems


def store_check(
    task: Task, claim: Claim, evidence: EvidenceRound, data: QualityVerdict
) -> QualityCheck:
    """Store a blind check of `evidence` that passes every rule above, with its flags;
    raises WorkflowError with the problems otherwise."""
    problems = check_problems(data, task.phase, shown_positions(evidence))
    if problems:
        raise WorkflowError("; ".join(f"{p.path}: {p.message}" for p in problems))
    verdict = None if data.unreadable else data.verdict
    check = QualityCheck.objects.create(
        claim=claim,
        task=task,
        phase=task.phase,
        evidence_round=evidence,
        verdict=verdict,
        unreadable=data.unreadable,
        justification=data.justification.strip(),
        is_agreement_sample=task.is_agreement_sample,
        submitted_at=timezone.now(),
    )
    # Keyed as flags name them; a position of None finds nothing, like a missing one.
    questions: dict[int | None, Question] = {
        q.position: q for q in evidence.questions.prefetch_related("answers")
    }
    for flag in data.flags:
        # check_problems made sure every position names a pair that was shown.
        question = answer = None
        if flag.answer_position is not None:
            answer = next(
                a
                for a in questions[flag.question_position].answers.all()
                if a.position == flag.answer_position
            )
        elif flag.question_position is not None:
            question = questions[flag.question_position]
        ProblemFlag.objects.create(
            quality_check=check, question=question, answer=answer, code=flag.code
        )
    return check


def _named(flag: FlagData) -> str:
    if flag.question_position is None:
        return "claim"
    return "question" if flag.answer_position is None else "answer"


def _a(kind: str) -> str:
    return f"an {kind}" if kind == "answer" else f"a {kind}"


def _flag_problem(flag: FlagData, shown: Shown | None) -> tuple[str, str] | None:
    code, question, answer = flag.code, flag.question_position, flag.answer_position
    if code not in ProblemFlag.Code.values:
        return ("code", f"There is no flag {code!r}.")
    if question is None and answer is not None:
        return ("question_position", f"{code!r}: an answer position needs its question.")
    wants, has = flag_target(code), _named(flag)
    if wants != has:
        message = f"{code!r} is about {_a(wants)}, not {_a(has)}."
        if wants == "claim":
            return ("code", message)
        if wants == "question":
            return ("question_position" if has == "claim" else "answer_position", message)
        return ("question_position" if question is None else "answer_position", message)
    if shown is not None and question is not None:
        if question not in shown:
            return ("question_position", f"There is no question {question}.")
        answers = shown[question]
        if answer is not None and answer not in answers:
            return ("answer_position", f"There is no answer {answer} to question {question}.")
        if (
            answer is not None
            and isinstance(answers, Mapping)
            and code in answer_flag_codes(AnswerType.EXTRACTIVE)
            and code not in answer_flag_codes(answers[answer])
        ):
            return ("code", f"{code!r} judges an answer by its source; this answer has none.")
    return None


# --- What annotation reads of checks (registered in review/apps.py) -------------------


def _checked_round(task: Task) -> EvidenceRound | None:
    # Once submitted, a blind task's pairs are the ones its check was stored against.
    check = check_of(task) if task.pk else None
    return check.evidence_round if check is not None else None


def _latest(rounds: QuerySet[EvidenceRound]) -> EvidenceRound | None:
    return rounds.exclude(submitted_at=None).order_by("-submitted_at").first()


def evidence_for_quality_check(task: Task) -> EvidenceRound | None:
    """P3 checks the P2 pairs of its own track (the agreement sample has its own)."""
    assert task.claim is not None  # blind tasks are always of a claim
    return _checked_round(task) or _latest(
        task.claim.evidence_rounds.filter(
            phase=Phase.QUESTIONS, is_agreement_sample=task.is_agreement_sample
        )
    )


def evidence_for_post_control(task: Task) -> EvidenceRound | None:
    """P5 checks the pairs of the latest dispute resolution (P4)."""
    assert task.claim is not None  # blind tasks are always of a claim
    return _checked_round(task) or _latest(task.claim.evidence_rounds.filter(phase=Phase.DISPUTE))


def check_of(task: Task) -> QualityCheck | None:
    """What a P3 or P5 task handed in."""
    return getattr(task, "quality_check", None)


def own_check(task: Task) -> dict[str, Any]:
    """A submitted blind task's own check as plain values (its read-only page is blind)."""
    check = check_of(task)
    if check is None:
        return {"own_check": None}
    return {
        "own_check": {
            "verdict": check.verdict,
            "unreadable": check.unreadable,
            "justification": check.justification,
        }
    }


def latest_check(claim: Claim) -> QualityCheck | None:
    """The claim's latest submitted dataset check (P3 or P5), flags at hand: why P4 is here."""
    return (
        QualityCheck.objects.filter(claim=claim, is_agreement_sample=False)
        .exclude(submitted_at=None)
        .prefetch_related("flags__question", "flags__answer__question")
        .order_by("-submitted_at")
        .first()
    )


def checked_rounds(rounds: QuerySet[EvidenceRound]) -> QuerySet[EvidenceRound]:
    """The evidence rounds among `rounds` that a submitted check judged."""
    return rounds.filter(quality_checks__submitted_at__isnull=False).distinct()


def agreeing_rounds(rounds: QuerySet[EvidenceRound]) -> QuerySet[EvidenceRound]:
    """The evidence rounds among `rounds` with a check that reached the same verdict."""
    return rounds.filter(quality_checks__verdict=F("verdict")).distinct()
