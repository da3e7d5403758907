"""Whether a trainee's question-answer pair is a real one: length, then METEOR against gold.

Training (annotation/training.py) counts a P2 pair towards the shared task's "2+ QA pairs
per claim" bar only if it is real. A pair is real when

1. its question has at least ``MIN_QUESTION_WORDS`` words and ``MIN_QUESTION_CHARS``
   characters, and its answer at least ``MIN_ANSWER_CHARS`` letters or digits ("No" and
   "2.1m" are answers; "y" is not);
2. its question does not merely repeat the claim ("Is it true that <claim>?" scores as
   high against the gold as a real pair does): METEOR of the question against the claim
   below ``ECHO_THRESHOLD``; and
3. in the best one-to-one matching of the trainee's pairs to the gold pairs (the Hungarian
   matching of the AVeriTeC evaluation, on the official ``question + " " + answer``
   strings), its METEOR against the gold pair it is matched to reaches ``METEOR_THRESHOLD``.

One-to-one matters: the same good question typed three times matches one gold pair once.
The threshold was chosen from the distribution of real and junk pairs on dev.json
(``benchmarks/training_pairs.py``; figures in docs/benchmarks.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

MIN_QUESTION_WORDS = 3
MIN_QUESTION_CHARS = 12
MIN_ANSWER_CHARS = 2
# Both chosen on dev.json: see docs/benchmarks.md, "Training: real and junk QA pairs".
METEOR_THRESHOLD = 0.15
ECHO_THRESHOLD = 0.8

_WORD = re.compile(r"[^\W_]+")
_ALNUM = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class PairJudgement:
    """One given pair: its METEOR against the gold pair it was matched to, and the verdict."""

    question: str
    answer: str
    meteor: float | None  # None when the pair failed the length rule and was not matched
    real: bool
    why: str  # what made it count or not, in words for the feedback page


def length_problem(question: str, answer: str) -> str:
    """Why a pair is too short to be a pair at all, or "" when it is long enough."""
    words = _WORD.findall(question)
    if len(words) < MIN_QUESTION_WORDS or len(question.strip()) < MIN_QUESTION_CHARS:
        return (
            f"the question needs at least {MIN_QUESTION_WORDS} words and "
            f"{MIN_QUESTION_CHARS} characters"
        )
    if len(_ALNUM.findall(answer)) < MIN_ANSWER_CHARS:
        return f"the answer needs at least {MIN_ANSWER_CHARS} letters or digits"
    return ""


def echoes_claim(question: str, claim: str, meteor: Callable[[str, str], float]) -> bool:
    return bool(claim) and meteor(question, claim) >= ECHO_THRESHOLD


def pair_string(question: str, answer: str) -> str:
    """The official comparison string of a pair (pipeline/scoring.evidence_strings)."""
    return f"{question} {answer}"


def judge_pairs(
    given: Sequence[tuple[str, str]],
    gold: Sequence[str],
    meteor: Callable[[str, str], float],
    claim: str = "",
    threshold: float = METEOR_THRESHOLD,
) -> list[PairJudgement]:
    """Judge each given (question, answer) against the gold comparison strings."""
    problems = [
        length_problem(q, a)
        or ("the question only repeats the claim" if echoes_claim(q, claim, meteor) else "")
        for q, a in given
    ]
    candidates = [i for i, problem in enumerate(problems) if not problem]
    matched: dict[int, float] = {}
    if candidates and gold:
        matrix = np.array(
            [[meteor(pair_string(*given[i]), ref) for ref in gold] for i in candidates]
        )
        rows, cols = linear_sum_assignment(matrix, maximize=True)
        matched = {candidates[r]: float(matrix[r, c]) for r, c in zip(rows, cols, strict=True)}
    judgements = []
    for i, (question, answer) in enumerate(given):
        score = matched.get(i)
        if problems[i]:
            why, real = problems[i], False
        elif score is None:
            why, real = "more pairs than the reference has; this one matched none", False
        elif score < threshold:
            why, real = f"too far from every reference pair (METEOR {score:.2f})", False
        else:
            why, real = f"close to a reference pair (METEOR {score:.2f})", True
        judgements.append(PairJudgement(question, answer, score, real, why))
    return judgements
