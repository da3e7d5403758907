"""Scoring as the 2024 (FEVER-7) and 2025 (FEVER-8) AVeriTeC shared tasks score.

Both scripts keep the 2023 Hungarian METEOR (``pipeline.scoring``) and change what they
compare and report:

* **2024**, ``evaluate_veracity.py``: a prediction is ``{claim_id, claim, pred_label,
  evidence: [{question, answer, url, scraped_text}]}`` (``string_evidence`` still read), the
  references are the 2023 JSON (dev.json). Predicted strings are ``question + " " + answer``
  per evidence item (no Boolean explanation is added: the item's answer is whatever the
  system wrote), the question-only score reads the first 10 items' questions (the
  ``string_evidence`` when a prediction has no ``evidence`` key); references are read as in
  2023. Reported: both evidence scores, veracity F1, macro-F1 and accuracy, the AVeriTeC score
  at the six levels (0.25 is the headline) and, per reference claim type, the mean evidence
  score set to 0 where not above 0.25. No justification.
* **2025**, ``averitec_evaluate.py``: both files are CSV with columns ``id, claim, evi, label,
  split``; ``evi`` holds every question-answer pair as ``question\\t\\t\\nanswer\\t\\t\\n\\n``.
  Rows of the reference file whose ``split`` is ``gold`` are scored; both files are matched
  by ``id`` (each sorted by it). Predicted questions are those of every pair (a question
  with two answers counts twice), the first 10; reference questions are counted once each.
  Strings are ``question + " " + answer``, the first 10 predicted. Reported with METEOR:
  both evidence scores and the "old AVeriTeC score" at 0.25; Ev2R recall is the other half
  (``pipeline.ev2r``).

The matching and averaging are ``pipeline.scoring``'s, which equal the official NumPy/SciPy
operations; inputs the official scripts would crash on or mis-score are refused with every
problem named, as for 2023. No Django here.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pipeline import reference_cache
from pipeline.meteor_engine import Meteor
from pipeline.scoring import (
    LABELS,
    LEVELS,
    MAX_PAIRS,
    Comparison,
    Scores,
    ScoringInputError,
    _check_evidence,
    _check_order,
    _f1_per_label,
    _kind,
    _level_key,
    _no_progress,
    _Problems,
    evidence_strings,
    match_evidence,
)

__all__ = [
    "CSV_COLUMNS",
    "HEADLINE_LEVEL",
    "PAIR_END",
    "QUESTION_END",
    "parse_evi",
    "read_csv_rows",
    "score_2024",
    "score_2025",
]

Progress = Callable[[int], None]

# The 2024 script reports the AVeriTeC score at 0.25 as its headline, and claim types at 0.25.
HEADLINE_LEVEL = 0.25
# The 2025 CSV: a question ends with QUESTION_END, its answer with PAIR_END.
QUESTION_END = "\t\t\n"
PAIR_END = "\t\t\n\n"
CSV_COLUMNS = ("id", "claim", "evi", "label", "split")
GOLD_SPLIT = "gold"


# --------------------------------------------------------------------------------------
# 2024
# --------------------------------------------------------------------------------------


def _items_2024(record: dict[str, Any]) -> list[str]:
    """The official ``extract_full_comparison_strings(prediction, is_target=False)``."""
    strings = [e["question"] + " " + e["answer"] for e in record.get("evidence", ())]
    strings.extend(record.get("string_evidence", ()))
    return strings


def _questions_2024(record: dict[str, Any]) -> list[str]:
    if "evidence" not in record:
        return _items_2024(record)[:MAX_PAIRS]
    return [e["question"] for e in record["evidence"][:MAX_PAIRS]]


def _check_2024(predictions: Any, references: Any) -> list[str]:
    problems = _Problems()
    for name, value in (("predictions", predictions), ("references", references)):
        if not isinstance(value, list):
            raise ScoringInputError(
                [f"the {name} must be a JSON list of records, not {_kind(value)}"]
            )
        for i, record in enumerate(value):
            if not isinstance(record, dict):
                problems.add(f"{name} record {i}: must be an object, not {_kind(record)}")
    if problems.total:
        raise ScoringInputError(problems.items, problems.total)
    if not references:
        raise ScoringInputError(["the references file has no records"])
    if len(predictions) != len(references):
        raise ScoringInputError(
            [
                f"the predictions have {len(predictions)} records but the references "
                f"{len(references)}: give one prediction per reference claim, in the order "
                "of the references file"
            ]
        )
    _check_order(predictions, references, problems)
    for i, record in enumerate(predictions):
        where = f"predictions record {i}"
        evidence = record.get("evidence", [])
        if not isinstance(evidence, list):
            problems.add(f"{where}, field 'evidence': must be a list, not {_kind(evidence)}")
            evidence = []
        for k, item in enumerate(evidence):
            at = f"{where}, evidence[{k}]"
            if not isinstance(item, dict):
                problems.add(f"{at}: must be an object, not {_kind(item)}")
                continue
            for key in ("question", "answer"):
                if not isinstance(item.get(key), str):
                    problems.add(
                        f"{at}, field '{key}': must be a string, not {_kind(item.get(key))}"
                    )
        if "string_evidence" in record:
            strings = record["string_evidence"]
            if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
                problems.add(f"{where}, field 'string_evidence': must be a list of strings")
        label = record.get("pred_label")
        if label not in LABELS:
            problems.add(
                f"{where}, field 'pred_label': "
                + (f"unknown label {label!r}" if "pred_label" in record else "is missing")
                + f"; expected one of {', '.join(map(repr, LABELS))}"
            )
    for i, record in enumerate(references):
        where = f"references record {i}"
        if "questions" not in record:
            problems.add(f"{where}, field 'questions': is missing")
        elif _check_evidence(where, record, problems) and not record["questions"]:
            problems.add(f"{where}: has no questions, so no evidence score can be computed")
        if record.get("label") not in LABELS:
            problems.add(
                f"{where}, field 'label': unknown label {record.get('label')!r}; "
                f"expected one of {', '.join(map(repr, LABELS))}"
            )
        types = record.get("claim_types")
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            problems.add(f"{where}, field 'claim_types': must be a list of strings")
    if problems.total:
        raise ScoringInputError(problems.items, problems.total)

    notes = []
    too_many = sum(len(_items_2024(p)) > MAX_PAIRS for p in predictions)
    if too_many:
        notes.append(
            f"{too_many} prediction(s) have more than {MAX_PAIRS} evidence items; only the "
            f"first {MAX_PAIRS} are scored, as the official script does"
        )
    empty = sum(not _items_2024(p) for p in predictions)
    if empty:
        notes.append(f"{empty} prediction(s) have no evidence; their evidence scores are 0")
    return notes


def score_2024(
    predictions: list[dict[str, Any]],
    references: list[dict[str, Any]],
    *,
    processes: int | None = None,
    progress: Progress = _no_progress,
    meteor: Meteor | None = None,
    on_total: Callable[[int], None] | None = None,
    reference_key: str | None = None,
) -> Scores:
    """Score 2024 predictions against 2023-form references as ``evaluate_veracity.py``."""
    started = time.perf_counter()
    notes = _check_2024(predictions, references)
    comparisons = [
        Comparison(
            pred_questions=_questions_2024(pred),
            ref_questions=[qa["question"] for qa in ref["questions"]],
            pred_strings=_items_2024(pred)[:MAX_PAIRS],
            ref_strings=evidence_strings(ref),
        )
        for pred, ref in zip(predictions, references, strict=True)
    ]
    matched = match_evidence(
        comparisons,
        processes=processes,
        progress=progress,
        meteor=meteor,
        on_total=on_total,
        reference_key=reference_key,
    )
    predicted = [p["pred_label"] for p in predictions]
    gold = [r["label"] for r in references]
    veracity: dict[str, float] = dict(zip(LABELS, _f1_per_label(gold, predicted), strict=True))
    veracity["macro"] = float(np.mean([veracity[label] for label in LABELS]))
    veracity["acc"] = float(np.mean([s == t for s, t in zip(predicted, gold, strict=True)]))
    rows = [
        [(p == g) if ev > level else 0.0 for level in LEVELS]
        for ev, p, g in zip(matched.evidence, predicted, gold, strict=True)
    ]
    averitec = np.mean(np.array(rows), axis=0)
    by_type: dict[str, list[Any]] = {}
    for ev, ref in zip(matched.evidence, references, strict=True):
        value = ev if ev > HEADLINE_LEVEL else 0
        for claim_type in ref["claim_types"]:
            by_type.setdefault(claim_type, []).append(value)
    levels = {_level_key(lv): float(v) for lv, v in zip(LEVELS, averitec, strict=True)}
    metrics: dict[str, Any] = {
        "q_only": float(np.mean(matched.q_only)),
        "q_and_a": float(np.mean(matched.evidence)),
        "averitec_score": levels[_level_key(HEADLINE_LEVEL)],
        "veracity": veracity,
        "averitec": levels,
        f"by_type_{_level_key(HEADLINE_LEVEL)}": {t: float(np.mean(v)) for t, v in by_type.items()},
        "seconds": round(time.perf_counter() - started, 3),
    }
    return Scores(
        metrics=metrics,
        notes=notes,
        claims=len(references),
        pairs=matched.pairs,
        distinct_pairs=matched.distinct_pairs,
        evidence=[float(e) for e in matched.evidence],
    )


# --------------------------------------------------------------------------------------
# 2025
# --------------------------------------------------------------------------------------


def parse_evi(evi: str) -> list[tuple[str, str]]:
    """The (question, answer) pairs of an ``evi`` cell, read as the official script reads it.

    ValueError when a pair does not split into exactly a question and an answer (the
    official script stops there with "too many / not enough values to unpack").
    """
    pairs = []
    for number, chunk in enumerate(evi.split(PAIR_END), start=1):
        if chunk == "":
            continue
        parts = chunk.split(QUESTION_END)
        if len(parts) != 2:
            raise ValueError(
                f"pair {number} has {len(parts) - 1} question end(s) (tab, tab, line feed) "
                "where it needs exactly one between its question and its answer"
            )
        pairs.append((parts[0], parts[1]))
    return pairs


def read_csv_rows(text: str, name: str) -> list[dict[str, Any]]:
    """The rows of a 2025 CSV file with ``id`` as an integer; ScoringInputError otherwise.

    Reading only: the official script reads with pandas, which needs the same columns.
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise ScoringInputError([f"{name}: the file is empty"]) from None
    except csv.Error as exc:
        raise ScoringInputError([f"{name}: not a CSV file ({exc})"]) from exc
    missing = [c for c in ("id", "claim", "evi", "label") if c not in header]
    if missing:
        wanted = ", ".join(CSV_COLUMNS)
        raise ScoringInputError(
            [f"{name}: no column {', '.join(map(repr, missing))}; expected {wanted}"]
        )
    problems = _Problems()
    rows: list[dict[str, Any]] = []
    try:
        for line, cells in enumerate(reader, start=2):
            if not cells:
                continue
            if len(cells) != len(header):
                problems.add(
                    f"{name}: row {line - 1} has {len(cells)} cells, the header {len(header)}"
                )
                continue
            row: dict[str, Any] = dict(zip(header, cells, strict=True))
            try:
                row["id"] = int(row["id"])
            except ValueError:
                problems.add(
                    f"{name}: row {line - 1}, column 'id': {row['id'][:40]!r} is not a whole number"
                )
            rows.append(row)
    except csv.Error as exc:
        raise ScoringInputError([f"{name}: not a CSV file ({exc})"]) from exc
    if problems.total:
        raise ScoringInputError(problems.items, problems.total)
    return rows


def _check_rows(
    rows: list[dict[str, Any]], name: str, problems: _Problems
) -> dict[int, list[tuple[str, str]]]:
    pairs_of: dict[int, list[tuple[str, str]]] = {}
    seen: set[int] = set()
    for row in rows:
        where = f"{name} id {row.get('id')!r}"
        if not isinstance(row.get("id"), int) or isinstance(row.get("id"), bool):
            problems.add(f"{where}: the id must be a whole number")
            continue
        if row["id"] in seen:
            problems.add(f"{where}: appears more than once; ids match predictions to references")
        seen.add(row["id"])
        for key in ("claim", "evi", "label"):
            if not isinstance(row.get(key), str):
                problems.add(f"{where}, column '{key}': must be text, not {_kind(row.get(key))}")
        if isinstance(row.get("evi"), str):
            try:
                pairs_of[row["id"]] = parse_evi(row["evi"])
            except ValueError as exc:
                problems.add(f"{where}, column 'evi': {exc}")
        if row.get("label") not in LABELS:
            problems.add(
                f"{where}, column 'label': unknown label {row.get('label')!r}; "
                f"expected one of {', '.join(map(repr, LABELS))}"
            )
    return pairs_of


def aligned_2025(
    predictions: list[dict[str, Any]], references: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The rows the official script scores, in its order (by id), and notes; or refusals.

    Reference rows of the ``gold`` split only (all rows if the file has no ``split``
    column); the predictions with those ids; each sorted by id.
    """
    for name, value in (("predictions", predictions), ("references", references)):
        if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
            raise ScoringInputError([f"the {name} must be a list of rows"])
    notes = []
    with_split = bool(references) and all("split" in r for r in references)
    gold = (
        [r for r in references if r.get("split") == GOLD_SPLIT] if with_split else list(references)
    )
    if with_split and len(gold) < len(references):
        notes.append(
            f"{len(references) - len(gold)} reference row(s) are not of the '{GOLD_SPLIT}' "
            "split and are not scored, as in the official script"
        )
    if not gold:
        raise ScoringInputError([f"the references have no rows of the '{GOLD_SPLIT}' split"])
    problems = _Problems()
    gold_pairs = _check_rows(gold, "references", problems)
    pred_pairs = _check_rows(predictions, "predictions", problems)
    for row in gold:
        if row.get("id") in gold_pairs and not gold_pairs[row["id"]]:
            problems.add(
                f"references id {row['id']!r}: has no question-answer pair, so no evidence "
                "score can be computed"
            )
    if problems.total:
        raise ScoringInputError(problems.items, problems.total)
    wanted = {r["id"] for r in gold}
    missing = sorted(wanted - {r["id"] for r in predictions})
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
        raise ScoringInputError(
            [f"the predictions have no row for {len(missing)} reference id(s): {shown}"]
        )
    extra = sum(r["id"] not in wanted for r in predictions)
    if extra:
        notes.append(
            f"{extra} prediction row(s) have ids not in the references' '{GOLD_SPLIT}' rows "
            "and are not scored, as in the official script"
        )
    pred = sorted((r for r in predictions if r["id"] in wanted), key=lambda r: r["id"])
    ref = sorted(gold, key=lambda r: r["id"])
    too_many = sum(len(pred_pairs[r["id"]]) > MAX_PAIRS for r in pred)
    if too_many:
        notes.append(
            f"{too_many} prediction(s) have more than {MAX_PAIRS} question-answer pairs; only "
            f"the first {MAX_PAIRS} are scored, as the official script does"
        )
    empty = sum(not pred_pairs[r["id"]] for r in pred)
    if empty:
        notes.append(f"{empty} prediction(s) have no evidence; their evidence scores are 0")
    return pred, ref, notes


def comparison_2025(pred_evi: str, ref_evi: str) -> Comparison:
    """The official ``evaluate_questions_only`` and ``..._and_answers`` lists of one claim."""
    pred_pairs, ref_pairs = parse_evi(pred_evi), parse_evi(ref_evi)
    ref_questions: list[str] = []
    for question, _ in ref_pairs:
        if question not in ref_questions:
            ref_questions.append(question)
    return Comparison(
        pred_questions=[q for q, _ in pred_pairs][:MAX_PAIRS],
        ref_questions=ref_questions,
        pred_strings=[q + " " + a for q, a in pred_pairs][:MAX_PAIRS],
        ref_strings=[q + " " + a for q, a in ref_pairs],
    )


def score_2025(
    predictions: list[dict[str, Any]],
    references: list[dict[str, Any]],
    *,
    processes: int | None = None,
    progress: Progress = _no_progress,
    meteor: Meteor | None = None,
    on_total: Callable[[int], None] | None = None,
    reference_key: str | None = None,
) -> Scores:
    """The METEOR half of ``averitec_evaluate.py``: Q only, Q + A and the old AVeriTeC score."""
    started = time.perf_counter()
    pred, ref, notes = aligned_2025(predictions, references)
    comparisons = [comparison_2025(p["evi"], r["evi"]) for p, r in zip(pred, ref, strict=True)]
    matched = match_evidence(
        comparisons,
        processes=processes,
        progress=progress,
        meteor=meteor,
        on_total=on_total,
        reference_key=reference_key,
    )
    rows = [
        [(1.0 if p["label"] == r["label"] else 0.0) if ev > HEADLINE_LEVEL else 0.0]
        for ev, p, r in zip(matched.evidence, pred, ref, strict=True)
    ]
    metrics: dict[str, Any] = {
        "q_only": float(np.mean(matched.q_only)),
        "q_and_a": float(np.mean(matched.evidence)),
        "old_averitec_score": float(np.mean(np.array(rows), axis=0)[0]),
        "seconds": round(time.perf_counter() - started, 3),
    }
    return Scores(
        metrics=metrics,
        notes=notes,
        claims=len(ref),
        pairs=matched.pairs,
        distinct_pairs=matched.distinct_pairs,
        evidence=[float(e) for e in matched.evidence],
    )


# --------------------------------------------------------------------------------------
# Command line (no Django), as ``python -m pipeline.scoring`` for 2023
# --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m pipeline.shared_tasks",
        description="Score 2024 (JSON) or 2025 (CSV) shared-task predictions as the official "
        "scripts do (JSON out); `manage.py score` recognises the form itself.",
    )
    parser.add_argument("--form", choices=["2024", "2025"], required=True)
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--references", required=True)
    parser.add_argument("--processes", type=int, default=None)
    parser.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the references' cache"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        with open(args.predictions, encoding="utf-8-sig", newline="") as stream:
            predicted_text = stream.read()
        with open(args.references, "rb") as stream:
            reference_bytes = stream.read()
        reference_text = reference_bytes.decode("utf-8-sig")
        key = None
        if not args.no_cache:
            key = reference_cache.content_key(f"{args.form}:".encode() + reference_bytes)
        if args.form == "2024":
            result = score_2024(
                json.loads(predicted_text),
                json.loads(reference_text),
                processes=args.processes,
                reference_key=key,
            )
        else:
            result = score_2025(
                read_csv_rows(predicted_text, args.predictions),
                read_csv_rows(reference_text, args.references),
                processes=args.processes,
                reference_key=key,
            )
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    metrics = {**result.metrics, "seconds": round(time.perf_counter() - started, 3)}
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    print(json.dumps(metrics, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
