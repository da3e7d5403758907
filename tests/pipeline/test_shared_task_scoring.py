"""The 2024 and 2025 shared-task scorers give the official scripts' numbers (no database).

The expected values are computed here the slow way the official scripts compute them, written
out independently: every pair through NLTK's ``single_meteor_score`` on ``word_tokenize``d
text, a fresh matrix per claim, SciPy's assignment, the score divided by the reference count,
F1 from its definition. The input is the benchmark's "shifted" one (claim i predicted with
claim i+1's evidence and claim i+7's label), cut to its first claims so the slow path stays
quick; ``benchmarks/scoring.py --forms`` runs the official scripts themselves on all 500.
"""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nltk.tokenize import word_tokenize
from nltk.translate.meteor_score import single_meteor_score
from scipy.optimize import linear_sum_assignment

from benchmarks.scoring import shifted_predictions
from exports.shared_task import records_as_2024, rows_2025
from pipeline.scoring import LABELS, ScoringInputError
from pipeline.shared_tasks import (
    _check_2024,
    _items_2024,
    _questions_2024,
    aligned_2025,
    comparison_2025,
    score_2024,
    score_2025,
)

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared/data/averitec"
CLAIMS = 80
TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def dev() -> list[dict]:
    path = Path(os.environ.get("AVERITEC_DATA_DIR") or SHARED_DATA) / "dev.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (set AVERITEC_DATA_DIR)")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def references(dev) -> list[dict]:
    return dev[:CLAIMS]


@pytest.fixture(scope="module")
def shifted(dev) -> list[dict]:
    """The benchmark's shifted predictions (over all of dev.json), first CLAIMS claims; every
    fifth claim is predicted with its own gold evidence and label, so that the AVeriTeC
    scores are neither 0 nor 1."""
    predictions = shifted_predictions(dev)[:CLAIMS]
    for i, record in enumerate(predictions):
        record["claim"] = dev[i]["claim"]
        if i % 5 == 0:
            record.update(questions=copy.deepcopy(dev[i]["questions"]), label=dev[i]["label"])
    return predictions


# --- The official computations, the slow way --------------------------------------------


def meteor(candidate: str, reference: str) -> float:
    return single_meteor_score(word_tokenize(reference), word_tokenize(candidate))


def hungarian(candidates: list[str], references: list[str]) -> float:
    matrix = np.empty((len(candidates), len(references)))
    for i, candidate in enumerate(candidates):
        for j, reference in enumerate(references):
            matrix[i][j] = meteor(candidate, reference)
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    utility = matrix[rows, cols].sum()
    utility *= 1 / float(len(references))
    return utility


def reference_strings(record: dict) -> list[str]:
    strings = []
    for question in record["questions"]:
        for answer in question["answers"]:
            text = question["question"] + " " + answer["answer"]
            if answer.get("answer_type") == "Boolean":
                text += ". " + answer["boolean_explanation"]
            strings.append(text)
        if not question["answers"]:
            strings.append(question["question"] + " No answer could be found.")
    return strings


def f1(gold: list[str], predicted: list[str], label: str) -> float:
    tp = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
    predicted_n, gold_n = predicted.count(label), gold.count(label)
    return 2 * tp / (predicted_n + gold_n) if predicted_n + gold_n else 0.0


def official_2024(predictions: list[dict], references: list[dict]) -> dict:
    q_scores, e_scores = [], []
    for pred, ref in zip(predictions, references, strict=True):
        items = [e["question"] + " " + e["answer"] for e in pred.get("evidence", [])]
        items += pred.get("string_evidence", [])
        if "evidence" in pred:
            questions = [e["question"] for e in pred["evidence"][:10]]
        else:
            questions = items[:10]
        q_scores.append(hungarian(questions, [q["question"] for q in ref["questions"]]))
        e_scores.append(hungarian(items[:10], reference_strings(ref)))
    predicted = [p["pred_label"] for p in predictions]
    gold = [r["label"] for r in references]
    levels = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
    averitec = np.mean(
        np.array(
            [
                [(p == g) if e > level else 0.0 for level in levels]
                for e, p, g in zip(e_scores, predicted, gold, strict=True)
            ]
        ),
        axis=0,
    )
    by_type: dict[str, list] = {}
    for e, ref in zip(e_scores, references, strict=True):
        for claim_type in ref["claim_types"]:
            by_type.setdefault(claim_type, []).append(0 if e <= 0.25 else e)
    per_label = {label: f1(gold, predicted, label) for label in LABELS}
    return {
        "q_only": np.mean(q_scores),
        "q_and_a": np.mean(e_scores),
        "averitec_score": averitec[2],
        "veracity": {
            **per_label,
            "macro": np.mean(list(per_label.values())),
            "acc": np.mean([p == g for p, g in zip(predicted, gold, strict=True)]),
        },
        "averitec": {str(level): v for level, v in zip(levels, averitec, strict=True)},
        "by_type_0.25": {t: np.mean(v) for t, v in by_type.items()},
    }


def split_evi(evi: str) -> list[tuple[str, str]]:
    out = []
    for chunk in evi.split("\t\t\n\n"):
        if chunk != "":
            question, answer = chunk.split("\t\t\n")
            out.append((question, answer))
    return out


def official_2025(predictions: list[dict], references: list[dict]) -> dict:
    gold = sorted((r for r in references if r["split"] == "gold"), key=lambda r: r["id"])
    ids = {r["id"] for r in gold}
    pred = sorted((r for r in predictions if r["id"] in ids), key=lambda r: r["id"])
    q_scores, e_scores, hits = [], [], []
    for p, g in zip(pred, gold, strict=True):
        p_pairs, g_pairs = split_evi(p["evi"]), split_evi(g["evi"])
        g_questions: list[str] = []
        for question, _ in g_pairs:
            if question not in g_questions:
                g_questions.append(question)
        q_scores.append(hungarian([q for q, _ in p_pairs][:10], g_questions))
        e = hungarian([q + " " + a for q, a in p_pairs][:10], [q + " " + a for q, a in g_pairs])
        e_scores.append(e)
        hits.append([(1.0 if p["label"] == g["label"] else 0.0) if e > 0.25 else 0.0])
    return {
        "q_only": np.mean(q_scores),
        "q_and_a": np.mean(e_scores),
        "old_averitec_score": np.mean(np.array(hits), axis=0)[0],
    }


def assert_equal_figures(ours: dict, official: dict, prefix: str = "") -> int:
    compared = 0
    for key, value in official.items():
        if isinstance(value, dict):
            assert set(ours[key]) == set(value), f"{prefix}{key}"
            compared += assert_equal_figures(ours[key], value, f"{prefix}{key}.")
        else:
            assert abs(ours[key] - float(value)) <= TOLERANCE, (f"{prefix}{key}", ours[key], value)
            compared += 1
    return compared


# --- 2024 ------------------------------------------------------------------------------


def test_the_2024_scorer_equals_the_official_path_on_the_shifted_input(shifted, references):
    predictions = list(records_as_2024(shifted))
    # The official script's other ways in: string evidence only, and both kinds at once.
    predictions[3] = {
        "claim_id": 3,
        "claim": predictions[3]["claim"],
        "pred_label": predictions[3]["pred_label"],
        "string_evidence": [e["question"] + " " + e["answer"] for e in predictions[3]["evidence"]],
    }
    predictions[4]["string_evidence"] = ["A sentence the system kept whole."]
    expected = official_2024(copy.deepcopy(predictions), references)

    result = score_2024(predictions, copy.deepcopy(references))

    assert assert_equal_figures(result.metrics, expected) >= 16
    assert list(result.metrics)[:3] == ["q_only", "q_and_a", "averitec_score"]
    # A real mix: the comparison is not of zeros and ones.
    assert 0.1 < result.metrics["averitec_score"] < 0.5


def test_the_2024_scorer_refuses_what_the_official_script_would_misread(references):
    predictions = list(records_as_2024(copy.deepcopy(references[:3])))
    predictions[0]["pred_label"] = "True"
    predictions[1]["evidence"][0]["answer"] = None
    del predictions[2]["pred_label"]

    with pytest.raises(ScoringInputError) as caught:
        score_2024(predictions, copy.deepcopy(references[:3]))

    message = str(caught.value)
    assert "predictions record 0, field 'pred_label': unknown label 'True'" in message
    assert "predictions record 1, evidence[0], field 'answer': must be a string" in message
    assert "predictions record 2, field 'pred_label': is missing" in message


def test_2024_predictions_out_of_order_are_refused(references):
    predictions = list(records_as_2024(copy.deepcopy(references[:3])))[::-1]
    with pytest.raises(ScoringInputError, match="must follow the order of the references"):
        score_2024(predictions, copy.deepcopy(references[:3]))


# --- 2025 ------------------------------------------------------------------------------


def test_the_2025_meteor_scorer_equals_the_official_path_on_the_shifted_input(shifted, references):
    predictions = list(rows_2025(shifted, "pred"))
    gold = list(rows_2025(references))
    # The official script matches by id after sorting: shuffle, and add a row it ignores.
    random.Random(28).shuffle(predictions)
    predictions.append({**predictions[0], "id": 10_000})
    expected = official_2025(predictions, gold)

    result = score_2025(predictions, gold)

    assert assert_equal_figures(result.metrics, expected) == 3
    assert 0.1 < result.metrics["old_averitec_score"] < 0.5
    assert any("not in the references" in note for note in result.notes)


def test_2025_rows_the_official_script_would_crash_on_are_refused(references):
    gold = list(rows_2025(copy.deepcopy(references[:4])))
    predictions = [dict(row, split="pred") for row in gold]
    predictions[0]["evi"] = "A question without its answer end\t\t\n\n"
    predictions[1]["label"] = "False"
    predictions[3]["id"] = predictions[2]["id"]

    with pytest.raises(ScoringInputError) as caught:
        score_2025(predictions, gold)

    message = str(caught.value)
    assert "predictions id 0, column 'evi': pair 1 has 0 question end(s)" in message
    assert "predictions id 1, column 'label': unknown label 'False'" in message
    assert "predictions id 2: appears more than once" in message


def test_a_missing_2025_prediction_is_named(references):
    gold = list(rows_2025(copy.deepcopy(references[:4])))
    with pytest.raises(ScoringInputError, match=r"no row for 1 reference id\(s\): 2"):
        score_2025([row for row in gold if row["id"] != 2], gold)


# --- Any input: scored, or refused with a ScoringInputError ------------------------------

BOUNDED = settings(
    max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), database=None
)
PIECES = st.sampled_from(["\t\t\n", "\t\t\n\n", "\t", "\n", "Q?", "answer", "", "\x00", "é"])
WORDS = st.text(st.sampled_from("ab é?."), max_size=6)
PAIRS = st.lists(st.tuples(WORDS, WORDS), min_size=1, max_size=12)
# Mostly well-formed evi cells (questions repeated, tabs inside), some of any shape.
EVI = PAIRS.map(lambda pairs: "".join(f"{q}\t\t\n{a}\t\t\n\n" for q, a in pairs)) | st.lists(
    PIECES, max_size=8
).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
ROW = st.fixed_dictionaries(
    {
        "id": st.integers(0, 3) | st.just(-1) | st.text(max_size=1),
        "claim": st.text(max_size=5) | st.none(),
        "evi": EVI | st.none(),
        "label": st.sampled_from([*LABELS, *LABELS, "False"]),
    },
    optional={"split": st.sampled_from(["gold", "gold", "pred"])},
)
VALID_EVI = PAIRS.map(lambda pairs: "".join(f"{q}\t\t\n{a}\t\t\n\n" for q, a in pairs))
VALID_ROW = st.fixed_dictionaries(
    {
        "id": st.integers(0, 6),
        "claim": st.text(max_size=5),
        "evi": VALID_EVI,
        "label": st.sampled_from(LABELS),
        "split": st.sampled_from(["gold", "gold", "gold", "pred"]),
    }
)
VALID_ROWS = st.lists(VALID_ROW, min_size=1, max_size=5, unique_by=lambda row: row["id"])
# Mostly rows the official script reads, a fifth of any shape.
ROWS = st.integers(0, 4).flatmap(
    lambda n: VALID_ROWS if n else st.lists(ROW, max_size=5, unique_by=lambda row: row["id"])
)
EVIDENCE_ITEM = st.fixed_dictionaries({"question": WORDS, "answer": WORDS})
ODD_ITEM = st.fixed_dictionaries(
    {"question": st.text(max_size=5) | st.none(), "answer": st.text(max_size=5) | JSON_VALUES}
)
# Mostly predictions the official script reads (with or without evidence and string
# evidence, more than 10 items at times), some with any value anywhere.
VALID_2024 = st.fixed_dictionaries(
    {"claim_id": st.just(None), "pred_label": st.sampled_from(LABELS)},
    optional={
        "evidence": st.lists(EVIDENCE_ITEM, max_size=12),
        "string_evidence": st.lists(WORDS, max_size=3),
    },
)
ODD_2024 = st.fixed_dictionaries(
    {},
    optional={
        "pred_label": st.sampled_from([*LABELS, "True"]) | JSON_VALUES,
        "evidence": st.lists(ODD_ITEM | JSON_VALUES, max_size=3) | JSON_VALUES,
        "string_evidence": st.lists(st.text(max_size=5), max_size=2) | JSON_VALUES,
    },
)
PREDICTION_2024 = st.integers(0, 3).flatmap(lambda n: VALID_2024 if n else ODD_2024)


@BOUNDED
@given(references=ROWS, data=st.data())
def test_any_2025_rows_are_lined_up_as_the_official_script_does_or_refused(references, data):
    # Predictions mostly for the references' ids, in any order, some rows of any shape.
    predictions = [
        {**row, "evi": data.draw(VALID_EVI | EVI), "label": data.draw(st.sampled_from(LABELS))}
        for row in references
        if data.draw(st.integers(0, 9))
    ]
    if not data.draw(st.integers(0, 4)):
        predictions += data.draw(st.lists(ROW, max_size=2))
    predictions = data.draw(st.permutations(predictions))
    try:
        pred, ref, _ = aligned_2025(predictions, references)
    except ScoringInputError as exc:
        assert str(exc)
        return
    assert [r["id"] for r in pred] == [r["id"] for r in ref] == sorted(r["id"] for r in ref)
    for p, r in zip(pred, ref, strict=True):
        comparison = comparison_2025(p["evi"], r["evi"])
        assert len(comparison.pred_strings) <= 10 and comparison.ref_strings


@BOUNDED
@given(predictions=st.lists(PREDICTION_2024, min_size=2, max_size=2) | JSON_VALUES)
def test_any_2024_predictions_are_checked_or_refused_clearly(references, predictions):
    if isinstance(predictions, list):
        for position, record in enumerate(predictions):
            if isinstance(record, dict) and record.get("claim_id", 0) is None:
                record["claim_id"] = position
    try:
        _check_2024(predictions, copy.deepcopy(references[:2]))
    except ScoringInputError as exc:
        assert str(exc)
        return
    for record in predictions:  # what passed the check is read without an error
        assert len(_questions_2024(record)) <= 10
        assert all(isinstance(s, str) for s in _items_2024(record))
