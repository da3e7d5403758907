"""Scoring of AVeriTeC predictions: the official evaluation's numbers, computed far faster.

The official evaluation (``eval.py`` of the AVeriTeC repository) compares a predictions file
with a references file record by record, in file order:

* **evidence** — each record becomes a list of strings: ``question + " " + answer`` per
  answer (``+ ". " + boolean_explanation`` for Boolean answers), ``question + " No answer
  could be found."`` for a question without answers, then any ``string_evidence`` strings.
  The first :data:`MAX_PAIRS` predicted strings are matched one-to-one to the reference
  strings with the Hungarian algorithm (SciPy's ``linear_sum_assignment``, maximising METEOR)
  and the matched METEOR sum is divided by the number of *reference* strings: extra
  predictions cost nothing, missing ones count as 0. ``q_only`` does the same with question
  texts only (the first 10 questions; ``string_evidence`` when a prediction has none);
  ``q_and_a`` with the strings above.
* **veracity** — F1 per label, macro-F1 and accuracy over the four labels.
* **justification** — mean METEOR of the predicted justification against the reference one
  (a prediction without ``justification`` is scored on its first 10 evidence strings joined
  with spaces).
* **AVeriTeC score at λ** — a claim counts as correct when its ``q_and_a`` score is strictly
  greater than λ *and* its label is right; the justification score at λ likewise keeps the
  justification METEOR only where the evidence score exceeds λ. λ ∈ :data:`LEVELS`.
* **by type at λ ∈ {0.2, 0.3}** — note the official code averages, per reference claim type,
  the claim's *evidence* score (set to 0 when not above λ); it does not look at labels.
  This is reproduced as is, under the same name.

METEOR is NLTK's ``single_meteor_score(word_tokenize(reference), word_tokenize(candidate))``,
the call of ``pipeline.text.meteor``. The official script computes every evidence pair five
times over and re-tokenises and re-queries WordNet for every pair; here each distinct
(candidate, reference) pair is computed once by :mod:`pipeline.meteor_engine` (tokenisation,
stems and WordNet synonyms cached, pairs spread over the cores), and the matching and
averaging repeat the official NumPy/SciPy operations in the official order, so the floats
are the same.

No Django here: plain data in, plain data out.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import reference_cache
from pipeline.meteor_engine import Meteor, shared_meteor

__all__ = [
    "LABELS",
    "LEVELS",
    "MAX_PAIRS",
    "Comparison",
    "Matched",
    "Scores",
    "ScoringInputError",
    "claim_scores",
    "evidence_strings",
    "hungarian_meteor",
    "match_evidence",
    "prediction_questions",
    "score",
]

LABELS = (
    "Supported",
    "Refuted",
    "Not Enough Evidence",
    "Conflicting Evidence/Cherrypicking",
)
LEVELS = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
TYPE_LEVELS = (0.2, 0.3)
# The official script scores at most this many predicted questions / evidence strings.
MAX_PAIRS = 10
NO_ANSWER = " No answer could be found."
# Enough to show what is wrong with a file without flooding the terminal. The one cap for every
# file check: the dataset reader (exports/averitec_json.py) and article intake
# (annotation/intake.py) list as many.
MAX_REPORTED_PROBLEMS = 50

Progress = Callable[[int], None]


def _no_progress(_: int) -> None:
    pass


# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------


class ScoringInputError(ValueError):
    """Predictions or references that cannot be scored; the message lists every problem.

    Also the base of exports' DatasetFormatError (a dataset file that cannot be imported),
    which differs only in the heading of its message.
    """

    heading = "with the files to score"

    def __init__(self, problems: list[str], total: int | None = None):
        self.problems = problems
        self.total = total if total is not None else len(problems)
        shown = "\n".join(f"  - {p}" for p in problems)
        more = self.total - len(problems)
        extra = f"\n  … and {more} more" if more > 0 else ""
        super().__init__(f"{self.total} problem(s) {self.heading}:\n{shown}{extra}")


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.total = 0

    def add(self, message: str) -> None:
        self.total += 1
        if len(self.items) < MAX_REPORTED_PROBLEMS:
            self.items.append(message)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    names: dict[type, str] = {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }
    return names.get(type(value), "?")


def _check_evidence(where: str, record: Any, problems: _Problems) -> bool:
    """Whether ``record`` has evidence the official code can read; records what is wrong."""
    ok = True
    questions = record.get("questions", [])
    if not isinstance(questions, list):
        problems.add(f"{where}, field 'questions': must be a list, not {_kind(questions)}")
        return False
    for q_index, question in enumerate(questions):
        at = f"{where}, questions[{q_index}]"
        if not isinstance(question, dict):
            problems.add(f"{at}: must be an object, not {_kind(question)}")
            ok = False
            continue
        if not isinstance(question.get("question"), str):
            problems.add(
                f"{at}, field 'question': must be a string, not {_kind(question.get('question'))}"
            )
            ok = False
        if "answers" not in question:
            problems.add(f"{at}, field 'answers': is missing (use [] for no answer)")
            ok = False
            continue
        answers = question["answers"]
        # The official code wraps a single answer object in a list; so do we.
        for a_index, answer in enumerate(answers if isinstance(answers, list) else [answers]):
            a_at = f"{at}, answers[{a_index}]"
            if not isinstance(answer, dict):
                problems.add(f"{a_at}: must be an object, not {_kind(answer)}")
                ok = False
                continue
            if not isinstance(answer.get("answer"), str):
                problems.add(
                    f"{a_at}, field 'answer': must be a string, not {_kind(answer.get('answer'))}"
                )
                ok = False
            if answer.get("answer_type") == "Boolean" and not isinstance(
                answer.get("boolean_explanation"), str
            ):
                problems.add(
                    f"{a_at}, field 'boolean_explanation': a Boolean answer needs its "
                    f"explanation as a string, not {_kind(answer.get('boolean_explanation'))}"
                )
                ok = False
    if "string_evidence" in record:
        strings = record["string_evidence"]
        if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
            problems.add(f"{where}, field 'string_evidence': must be a list of strings")
            ok = False
    return ok


@dataclass
class _Checked:
    with_verdicts: bool
    notes: list[str] = field(default_factory=list)


def check(predictions: Any, references: Any) -> _Checked:
    """Refuse inputs that the official script would mis-score silently or crash on.

    Where the official behaviour is well defined (more than 10 pairs, a prediction without
    evidence), it is kept and reported as a note instead. See the module docstring of
    ``exports.scoring`` for the full list.
    """
    problems = _Problems()
    for name, value in (("predictions", predictions), ("references", references)):
        if not isinstance(value, list):
            raise ScoringInputError(
                [f"the {name} must be a JSON list of records, not {_kind(value)}"]
            )
        bad = [i for i, record in enumerate(value) if not isinstance(record, dict)]
        for i in bad[:MAX_REPORTED_PROBLEMS]:
            problems.add(f"{name} record {i}: must be an object, not {_kind(value[i])}")
    if problems.total:
        raise ScoringInputError(problems.items, problems.total)
    if not references:
        raise ScoringInputError(["the references file has no records"])
    if len(predictions) != len(references):
        # The official script zips the two lists and silently drops the extra records.
        raise ScoringInputError(
            [
                f"the predictions have {len(predictions)} records but the references "
                f"{len(references)}: give one prediction per reference claim, in the order "
                "of the references file"
            ]
        )

    _check_order(predictions, references, problems)
    for i, record in enumerate(references):
        where = f"references record {i}"
        if "questions" not in record:
            problems.add(f"{where}, field 'questions': is missing")
        elif _check_evidence(where, record, problems) and not record["questions"]:
            # The official scores divide by the number of reference questions.
            problems.add(f"{where}: has no questions, so no evidence score can be computed")
    for i, record in enumerate(predictions):
        _check_evidence(f"predictions record {i}", record, problems)
    if problems.total:
        raise ScoringInputError(problems.items, problems.total)

    with_verdicts = _check_verdicts(predictions, references, problems)
    if problems.total:
        raise ScoringInputError(problems.items, problems.total)

    notes = []
    too_many = sum(
        len(evidence_strings(p)) > MAX_PAIRS or len(p.get("questions") or []) > MAX_PAIRS
        for p in predictions
    )
    if too_many:
        notes.append(
            f"{too_many} prediction(s) have more than {MAX_PAIRS} questions or evidence "
            f"strings; only the first {MAX_PAIRS} are scored, as the official script does"
        )
    empty = sum(not evidence_strings(p) for p in predictions)
    if empty:
        notes.append(f"{empty} prediction(s) have no evidence; their evidence scores are 0")
    if not with_verdicts:
        notes.append("no labels: only the evidence scores (q_only, q_and_a) are computed")
    return _Checked(with_verdicts=with_verdicts, notes=notes)


def _check_order(
    predictions: list[dict[str, Any]], references: list[dict[str, Any]], problems: _Problems
) -> None:
    """Predictions are matched to references by position, so a shuffled file is refused."""
    misplaced = []
    for i, (pred, ref) in enumerate(zip(predictions, references, strict=True)):
        # A claim_id (as in the shared task's files) is the reference's, else its position.
        claim_id, expected = pred.get("claim_id"), ref.get("claim_id", i)
        if isinstance(claim_id, int) and not isinstance(claim_id, bool) and claim_id != expected:
            misplaced.append(
                f"predictions record {i} has claim_id {claim_id}, references record {i} "
                f"is claim_id {expected}"
            )
        elif (
            isinstance(pred.get("claim"), str)
            and isinstance(ref.get("claim"), str)
            and pred["claim"] != ref["claim"]
        ):
            misplaced.append(
                f"predictions record {i} is for the claim {pred['claim'][:60]!r}, "
                f"but references record {i} is {ref['claim'][:60]!r}"
            )
    if misplaced:
        for message in misplaced[:5]:
            problems.add(message)
        more = f" ({len(misplaced)} records in all)" if len(misplaced) > 5 else ""
        problems.add(
            "predictions must follow the order of the references file: record i is scored "
            f"against reference i{more}"
        )


def _check_verdicts(
    predictions: list[dict[str, Any]], references: list[dict[str, Any]], problems: _Problems
) -> bool:
    labelled = [("label" in p) for p in predictions]
    ref_labelled = [("label" in r) for r in references]
    if not any(labelled) or not any(ref_labelled):
        return False
    for name, records, flags in (
        ("predictions", predictions, labelled),
        ("references", references, ref_labelled),
    ):
        missing = [i for i, has in enumerate(flags) if not has]
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
            problems.add(f"{name} records {shown}: no 'label', while other records have one")
        for i, record in enumerate(records):
            if "label" in record and record["label"] not in LABELS:
                problems.add(
                    f"{name} record {i}, field 'label': unknown label {record['label']!r}; "
                    f"expected one of {', '.join(map(repr, LABELS))}"
                )
    for i, record in enumerate(predictions):
        if "justification" in record and not isinstance(record["justification"], str):
            problems.add(
                f"predictions record {i}, field 'justification': must be a string, "
                f"not {_kind(record['justification'])} (leave the key out to score the evidence)"
            )
    for i, record in enumerate(references):
        if not isinstance(record.get("justification"), str):
            problems.add(
                f"references record {i}, field 'justification': must be a string, "
                f"not {_kind(record.get('justification'))}"
            )
        types = record.get("claim_types")
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            problems.add(f"references record {i}, field 'claim_types': must be a list of strings")
    return True


# --------------------------------------------------------------------------------------
# The strings compared (the official extraction)
# --------------------------------------------------------------------------------------


def evidence_strings(record: dict[str, Any]) -> list[str]:
    """The official ``extract_full_comparison_strings``: one string per question-answer pair.

    ``question + " " + answer``; Boolean answers get ``". " + boolean_explanation`` appended;
    a question without answers becomes ``question + " No answer could be found."``;
    ``string_evidence`` strings follow as they are. The record is not modified.
    """
    strings = []
    for question in record.get("questions", ()):
        answers = question["answers"]
        if not isinstance(answers, list):
            answers = [answers]
        for answer in answers:
            text = question["question"] + " " + answer["answer"]
            if answer.get("answer_type") == "Boolean":
                text += ". " + answer["boolean_explanation"]
            strings.append(text)
        if len(answers) == 0:
            strings.append(question["question"] + NO_ANSWER)
    strings.extend(record.get("string_evidence", ()))
    return strings


def prediction_questions(record: dict[str, Any]) -> list[str]:
    """The predicted strings of the question-only score: the first 10 questions.

    As in the official code, a prediction without a ``questions`` key falls back to its
    first 10 evidence strings (its ``string_evidence``).
    """
    if "questions" not in record:
        return evidence_strings(record)[:MAX_PAIRS]
    return [qa["question"] for qa in record["questions"][:MAX_PAIRS]]


def _prediction_justification(record: dict[str, Any]) -> str:
    if "justification" not in record:
        return " ".join(evidence_strings(record)[:MAX_PAIRS])
    justification: str = record["justification"]
    return justification


# --------------------------------------------------------------------------------------
# Scores
# --------------------------------------------------------------------------------------


@cache
def _linear_sum_assignment() -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    """SciPy's ``linear_sum_assignment``, without importing all of ``scipy.optimize``.

    The function is the compiled ``scipy.optimize._lsap`` module's own; importing it the
    usual way first runs ``scipy.optimize``'s package (about half a second of a run), which
    scoring never uses. Loaded from its file when SciPy's package is not there yet; any
    surprise falls back to the ordinary import.
    """
    if "scipy.optimize" not in sys.modules:
        try:
            spec = importlib.util.find_spec("scipy")
            # A missing spec or location raises here and is caught below.
            folder = Path(next(iter(spec.submodule_search_locations))) / "optimize"  # type: ignore[union-attr, arg-type]
            (binary,) = [p for p in folder.glob("_lsap.*") if p.suffix in (".so", ".pyd")]
            module_spec = importlib.util.spec_from_file_location("scipy.optimize._lsap", binary)
            module = importlib.util.module_from_spec(module_spec)  # type: ignore[arg-type]
            module_spec.loader.exec_module(module)  # type: ignore[union-attr]
            compiled: Callable[..., tuple[np.ndarray, np.ndarray]] = module.linear_sum_assignment
            return compiled
        except (ImportError, AttributeError, OSError, StopIteration, ValueError, TypeError):
            pass
    from scipy.optimize import linear_sum_assignment

    imported: Callable[..., tuple[np.ndarray, np.ndarray]] = linear_sum_assignment
    return imported


def hungarian_meteor(matrix: np.ndarray, n_references: int) -> np.float64:
    """The official utility: best one-to-one matching, divided by the reference count.

    The operations are the official ones, in the same order, so the float is the same.
    """
    rows, cols = _linear_sum_assignment()(matrix, maximize=True)
    utility: np.float64 = matrix[rows, cols].sum()
    utility *= 1 / float(n_references)
    return utility


@dataclass
class Scores:
    """The scores (``metrics``, keyed as the ``score --json`` output) and notes on the inputs."""

    metrics: dict[str, Any]
    notes: list[str]
    claims: int
    pairs: int
    distinct_pairs: int
    evidence: list[float]


class _PairTable:
    """Distinct (candidate, reference) pairs, so that each is computed once."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str], int] = {}
        self.requested = 0

    def add(self, candidate: str, reference: str) -> int:
        self.requested += 1
        return self.index.setdefault((candidate, reference), len(self.index))

    def matrix(self, candidates: list[str], references: list[str]) -> list[list[int]]:
        return [[self.add(c, r) for r in references] for c in candidates]


@dataclass
class Comparison:
    """What one claim's two evidence scores compare, as the scorer of its form builds them.

    Each shared task's script builds these lists its own way (see ``pipeline.shared_tasks``);
    the matching that follows is the same in all of them.
    """

    pred_questions: list[str]
    ref_questions: list[str]
    pred_strings: list[str]  # already cut to the first MAX_PAIRS
    ref_strings: list[str]


@dataclass
class Matched:
    """Hungarian METEOR per claim, and the METEOR of each extra pair (justifications)."""

    q_only: list[np.float64]
    evidence: list[np.float64]
    extra: list[np.float64]
    pairs: int
    distinct_pairs: int


def _table_for(
    comparisons: Sequence[Comparison], extra_pairs: Sequence[tuple[str, str]]
) -> tuple[_PairTable, list[Any], list[Any], list[int]]:
    table = _PairTable()
    question_cells, evidence_cells = [], []
    for c in comparisons:
        # Claim by claim: consecutive pairs share strings, which keeps workers' caches warm.
        question_cells.append(table.matrix(c.pred_questions, c.ref_questions))
        evidence_cells.append(table.matrix(c.pred_strings, c.ref_strings))
    extra_cells = [table.add(candidate, reference) for candidate, reference in extra_pairs]
    return table, question_cells, evidence_cells, extra_cells


def distinct_pair_count(
    comparisons: Sequence[Comparison], extra_pairs: Sequence[tuple[str, str]] = ()
) -> int:
    return len(_table_for(comparisons, extra_pairs)[0].index)


def match_evidence(
    comparisons: Sequence[Comparison],
    extra_pairs: Sequence[tuple[str, str]] = (),
    *,
    processes: int | None = None,
    progress: Progress = _no_progress,
    meteor: Meteor | None = None,
    on_total: Callable[[int], None] | None = None,
    reference_key: str | None = None,
) -> Matched:
    """The official matching: per claim, the best one-to-one assignment of predicted to
    reference strings by METEOR, divided by the number of reference strings; each distinct
    pair computed once. ``on_total`` learns the number of distinct pairs before any is done.

    ``reference_key`` (``reference_cache.content_key`` of the reference file) reuses the
    references' prepared text from an earlier run, and saves it on the first.
    """
    meteor = meteor if meteor is not None else shared_meteor()
    table, question_cells, evidence_cells, extra_cells = _table_for(comparisons, extra_pairs)
    if on_total is not None:
        on_total(len(table.index))
    cached = reference_cache.load_into(meteor, reference_key) if reference_key else 0
    values = np.array(
        meteor.score_pairs(list(table.index), processes=processes, progress=progress),
        dtype=np.float64,
    )
    if reference_key and not cached:
        references = [s for c in comparisons for s in (*c.ref_questions, *c.ref_strings)]
        reference_cache.save_from(
            meteor, reference_key, [*references, *(r for _, r in extra_pairs)]
        )

    def utilities(cells: list[list[list[int]]], counts: list[int]) -> list[np.float64]:
        out = []
        for matrix_cells, n_refs in zip(cells, counts, strict=True):
            matrix = values[np.array(matrix_cells, dtype=np.intp).reshape(-1, n_refs)]
            out.append(hungarian_meteor(matrix, n_refs))
        return out

    return Matched(
        q_only=utilities(question_cells, [len(c.ref_questions) for c in comparisons]),
        evidence=utilities(evidence_cells, [len(c.ref_strings) for c in comparisons]),
        extra=[values[i] for i in extra_cells],
        pairs=table.requested,
        distinct_pairs=len(table.index),
    )


def _comparison(pred: dict[str, Any], ref: dict[str, Any]) -> Comparison:
    """The 2023 ``eval.py`` lists of one claim."""
    return Comparison(
        pred_questions=prediction_questions(pred),
        ref_questions=[qa["question"] for qa in ref["questions"]],
        pred_strings=evidence_strings(pred)[:MAX_PAIRS],
        ref_strings=evidence_strings(ref),
    )


def score(
    predictions: list[dict[str, Any]],
    references: list[dict[str, Any]],
    *,
    processes: int | None = None,
    progress: Progress = _no_progress,
    meteor: Meteor | None = None,
    on_total: Callable[[int], None] | None = None,
    reference_key: str | None = None,
) -> Scores:
    """Score ``predictions`` against ``references`` as the official evaluation does.

    Raises :class:`ScoringInputError` for inputs it cannot score. ``progress`` is called
    with the number of METEOR pairs finished, out of :func:`count_pairs` in all.
    """
    started = time.perf_counter()
    checked = check(predictions, references)
    comparisons = [_comparison(p, r) for p, r in zip(predictions, references, strict=True)]
    justifications = (
        [
            (_prediction_justification(p), r["justification"])
            for p, r in zip(predictions, references, strict=True)
        ]
        if checked.with_verdicts
        else []
    )
    matched = match_evidence(
        comparisons,
        justifications,
        processes=processes,
        progress=progress,
        meteor=meteor,
        on_total=on_total,
        reference_key=reference_key,
    )
    metrics: dict[str, Any] = {
        "q_only": float(np.mean(matched.q_only)),
        "q_and_a": float(np.mean(matched.evidence)),
    }
    if checked.with_verdicts:
        metrics.update(_verdict_metrics(predictions, references, matched.evidence, matched.extra))
    metrics["seconds"] = round(time.perf_counter() - started, 3)
    return Scores(
        metrics=metrics,
        notes=checked.notes,
        claims=len(references),
        pairs=matched.pairs,
        distinct_pairs=matched.distinct_pairs,
        evidence=[float(e) for e in matched.evidence],
    )


def claim_scores(
    predictions: list[dict[str, Any]],
    references: list[dict[str, Any]],
    *,
    processes: int | None = 1,
    progress: Progress = _no_progress,
) -> Matched:
    """The per-claim Hungarian METEOR that :func:`score` averages: its ``q_only`` and
    ``q_and_a`` are the means of ``Matched.q_only`` and ``Matched.evidence`` (the reports
    store one claim's scores and average them; review/stored.py)."""
    check(predictions, references)
    comparisons = [_comparison(p, r) for p, r in zip(predictions, references, strict=True)]
    return match_evidence(comparisons, processes=processes, progress=progress)


def count_pairs(predictions: list[dict[str, Any]], references: list[dict[str, Any]]) -> int:
    """How many distinct METEOR pairs :func:`score` computes (for a progress bar's total)."""
    table = _PairTable()
    for pred, ref in zip(predictions, references, strict=False):
        table.matrix(prediction_questions(pred), [qa["question"] for qa in ref["questions"]])
        table.matrix(evidence_strings(pred)[:MAX_PAIRS], evidence_strings(ref))
        if "label" in pred and isinstance(ref.get("justification"), str):
            table.add(_prediction_justification(pred), ref["justification"])
    return len(table.index)


def _verdict_metrics(
    predictions: list[dict[str, Any]],
    references: list[dict[str, Any]],
    evidence: list[np.float64],
    justification: list[np.float64],
) -> dict[str, Any]:
    pred_labels = [p["label"] for p in predictions]
    ref_labels = [r["label"] for r in references]
    veracity: dict[str, float] = dict(
        zip(LABELS, _f1_per_label(ref_labels, pred_labels), strict=True)
    )
    veracity["macro"] = float(np.mean([veracity[label] for label in LABELS]))
    veracity["acc"] = float(np.mean([s == t for s, t in zip(pred_labels, ref_labels, strict=True)]))

    # As the official evaluate_averitec_score: one row per claim, one column per level.
    rows, j_rows = [], []
    for ev, j, pred, ref in zip(evidence, justification, pred_labels, ref_labels, strict=True):
        rows.append([(pred == ref) if ev > level else 0.0 for level in LEVELS])
        j_rows.append([j if ev > level else 0.0 for level in LEVELS])
    averitec = np.mean(np.array(rows), axis=0)
    averitec_j = np.mean(np.array(j_rows), axis=0)

    metrics: dict[str, Any] = {
        "veracity": veracity,
        "justification": float(np.mean(justification)),
        "averitec": {_level_key(lv): float(v) for lv, v in zip(LEVELS, averitec, strict=True)},
        "averitec_justification": {
            _level_key(lv): float(v) for lv, v in zip(LEVELS, averitec_j, strict=True)
        },
    }
    for threshold in TYPE_LEVELS:
        by_type: dict[str, list[Any]] = {}
        for ev, ref in zip(evidence, references, strict=True):
            value = ev if ev > threshold else 0
            for claim_type in ref["claim_types"]:
                by_type.setdefault(claim_type, []).append(value)
        metrics[f"by_type_{_level_key(threshold)}"] = {
            t: float(np.mean(v)) for t, v in by_type.items()
        }
    return metrics


def _f1_per_label(true: list[str], predicted: list[str]) -> list[float]:
    """scikit-learn's ``f1_score(true, predicted, labels=LABELS, average=None)``.

    F1 = 2·TP / (2·TP + FP + FN), and 0.0 for a label that appears in neither list
    (scikit-learn's ``zero_division`` default).
    """
    out = []
    for label in LABELS:
        tp = sum(t == label and p == label for t, p in zip(true, predicted, strict=True))
        fp = sum(t != label and p == label for t, p in zip(true, predicted, strict=True))
        fn = sum(t == label and p != label for t, p in zip(true, predicted, strict=True))
        denominator = 2 * tp + fp + fn
        out.append(float(2 * tp) / float(denominator) if denominator else 0.0)
    return out


def _level_key(level: float) -> str:
    return str(level)  # "0.1", "0.25": the official script prints str(level) too


# --------------------------------------------------------------------------------------
# Command line (no Django): python -m pipeline.scoring --predictions P --references R
# --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m pipeline.scoring",
        description="Score AVeriTeC predictions as the official evaluation does (JSON out). "
        "The Django command `manage.py score` does the same with a progress bar and report.",
    )
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--references", required=True)
    parser.add_argument("--processes", type=int, default=None)
    parser.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the references' cache"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        with open(args.predictions, "rb") as stream:
            predictions = json.loads(stream.read())
        with open(args.references, "rb") as stream:
            data = stream.read()
        references = json.loads(data)
        result = score(
            predictions,
            references,
            processes=args.processes,
            reference_key=None if args.no_cache else reference_cache.content_key(data),
        )
    except (OSError, ValueError) as exc:  # ScoringInputError and JSON errors are ValueErrors
        print(f"error: {exc}", file=sys.stderr)
        return 2
    metrics = {**result.metrics, "seconds": round(time.perf_counter() - started, 3)}
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    print(json.dumps(metrics, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
