"""The Ev2R client: official request bodies, official reading of the replies, retries, time
limits and the cache, against a stub chat-completions API on 127.0.0.1 (no model needed).

Set EV2R_OFFICIAL_PROPERTIES to a copy of the organisers' properties.py (Raldir/FEVER-8-
Shared-Task) to compare with their prompt texts as well.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from exports.shared_task import rows_2025
from pipeline.ev2r import (
    ChatClient,
    Ev2RError,
    ResponseCache,
    check_base_url,
    ev2r_scores,
    first_json_object,
    load_prompts,
    question_evidence,
)
from pipeline.shared_tasks import aligned_2025
from tests.pipeline.ev2r_stub import STAND_IN_PROPERTIES, StubLLM, facts

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared/data/averitec"


@pytest.fixture(scope="module")
def dev() -> list[dict]:
    path = Path(os.environ.get("AVERITEC_DATA_DIR") or SHARED_DATA) / "dev.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (set AVERITEC_DATA_DIR)")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def prompts(tmp_path):
    path = tmp_path / "properties.py"
    path.write_text(STAND_IN_PROPERTIES, encoding="utf-8")
    return load_prompts(path)


@pytest.fixture
def stub():
    with StubLLM(slow_seconds=1.0) as server:
        yield server


def client_for(stub: StubLLM, **options) -> ChatClient:
    options = {"timeout": 5.0, "retries": 2, "sleep": lambda _: None, **options}
    return ChatClient(stub.base_url, "stub-model", "secret-key", **options)


def rows(dev: list[dict], n: int) -> tuple[list[dict], list[dict]]:
    """Gold rows of the first n claims and predictions that share part of their evidence."""
    gold = list(rows_2025(dev[:n]))
    predicted = copy.deepcopy(dev[:n])
    for i, record in enumerate(predicted):
        if i % 2:  # every second claim loses its last question and gets another label
            record["questions"] = record["questions"][:-1] or record["questions"]
            record["label"] = "Supported" if record["label"] != "Supported" else "Refuted"
        if i % 3 == 0:  # every third claim keeps only its first question
            record["questions"] = record["questions"][:1]
    pred, ref, _ = aligned_2025(list(rows_2025(predicted, "pred")), gold)
    return pred, ref


def expected_recall(reference: str, predicted: str) -> float:
    ref_facts = facts(reference)
    return sum(f in predicted for f in ref_facts) / len(ref_facts)


# --- The request -----------------------------------------------------------------------


def test_the_request_body_is_the_official_one_for_a_fixed_pair(dev, prompts, stub):
    pred, ref = rows(dev, 1)

    ev2r_scores(pred, ref, client_for(stub), prompts, workers=1)

    by_prompt = {r["messages"][0]["content"]: r for r in stub.requests}
    question_prompt = prompts.question.format(
        ref[0]["claim"], question_evidence(ref[0]["evi"]), question_evidence(pred[0]["evi"])
    )
    evidence_prompt = prompts.qa_pair.format(ref[0]["claim"], ref[0]["evi"], pred[0]["evi"])
    for prompt in (question_prompt, evidence_prompt):
        assert by_prompt[prompt] == {
            "messages": [{"role": "user", "content": prompt}],
            "model": "stub-model",
            "temperature": 0,
            "max_tokens": 3000,
        }
    assert len(stub.requests) == 2
    assert {h["Authorization"] for h in stub.headers} == {"Bearer secret-key"}
    # The official prepare_dataset joins the questions of every pair with spaces.
    assert question_evidence(ref[0]["evi"]) == " ".join(
        q["question"] for q in dev[0]["questions"] for _ in q["answers"]
    )


@pytest.mark.skipif(
    not os.environ.get("EV2R_OFFICIAL_PROPERTIES"),
    reason="set EV2R_OFFICIAL_PROPERTIES to the organisers' properties.py",
)
def test_the_official_prompts_are_read_and_recognised():
    official = load_prompts(os.environ["EV2R_OFFICIAL_PROPERTIES"])

    assert official.pinned
    assert "Reference questions: {}\nPredicted questions: {}\nOutput:" in official.question
    assert "Reference evidence: {}\nPredicted evidence: {}\nOutput:" in official.qa_pair


def test_stand_in_prompts_are_read_without_running_the_file_and_not_taken_as_official(prompts):
    # The stand-in imports torch at its top: reading it never runs that line.
    assert not prompts.pinned
    assert prompts.question.startswith("Compare the questions")


def test_a_prompts_file_without_the_templates_is_refused(tmp_path):
    path = tmp_path / "properties.py"
    path.write_text("ATOMIC_REFERENCE_PROMPT_PREC_RECALL = 'only {} and {}'\n")
    with pytest.raises(Ev2RError, match="no ATOMIC_QUESTION_REFERENCE_PROMPT_PREC_RECALL"):
        load_prompts(path)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://example.org/v1", "must be an http(s) address"),
        ("https://user:pw@example.org/v1", "must not hold a user name"),
        ("https://example.org/v1?key=1", "must not have a query"),
        ("http://example.org/v1", "must use https unless the server is on this machine"),
    ],
)
def test_a_base_url_is_checked_before_any_request(url, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        check_base_url(url)
    assert check_base_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    assert check_base_url("https://llm.example.org/v1") == "https://llm.example.org/v1"


# --- The scores ----------------------------------------------------------------------------


def test_the_stubs_answers_give_the_expected_recall(dev, prompts, stub):
    pred, ref = rows(dev, 12)

    result = ev2r_scores(pred, ref, client_for(stub), prompts)

    q_recall = [
        expected_recall(question_evidence(r["evi"]), question_evidence(p["evi"]))
        for p, r in zip(pred, ref, strict=True)
    ]
    qa_recall = [expected_recall(r["evi"], p["evi"]) for p, r in zip(pred, ref, strict=True)]
    hits = [
        recall > 0.5 and p["label"] == r["label"]
        for recall, p, r in zip(qa_recall, pred, ref, strict=True)
    ]
    assert result.question_recall == pytest.approx(q_recall)
    assert result.evidence_recall == pytest.approx(qa_recall)
    assert result.metrics["ev2r_qa_recall"] == pytest.approx(sum(qa_recall) / 12)
    assert result.metrics["new_averitec_score"] == pytest.approx(sum(hits) / 12)
    # A mix: some claims count, some do not.
    assert 0 < sum(hits) < 12 and min(qa_recall) < 1.0


def test_a_rerun_asks_the_model_nothing(dev, prompts, stub, tmp_path):
    pred, ref = rows(dev, 4)
    cache = tmp_path / "ev2r.sqlite3"

    first = ev2r_scores(pred, ref, client_for(stub, cache=ResponseCache(cache)), prompts)
    sent = len(stub.requests)
    again = client_for(stub, cache=ResponseCache(cache))
    second = ev2r_scores(pred, ref, again, prompts)

    assert sent == 8
    assert len(stub.requests) == sent
    assert again.stats.cached == 8 and again.stats.sent == 0
    assert second.metrics == first.metrics


def test_a_busy_server_is_asked_again_and_a_reply_without_json_counts_zero(dev, prompts, stub):
    pred, ref = rows(dev, 3)
    ref[0] = {**ref[0], "claim": "FLAKY " + ref[0]["claim"]}
    ref[1] = {**ref[1], "claim": "GARBLED " + ref[1]["claim"]}
    client = client_for(stub)

    result = ev2r_scores(pred, ref, client, prompts, workers=1)

    assert client.stats.retried == 2  # both prompts of the flaky claim, once each
    assert client.stats.failed == 0
    assert result.question_recall[1] == result.evidence_recall[1] == 0.0
    assert result.evidence_recall[0] > 0
    assert any("could not be read" in note for note in result.notes)
    assert first_json_object("no braces at all") == ""


def test_every_request_is_bounded_in_time_and_in_tries(dev, prompts, stub):
    pred, ref = rows(dev, 1)
    ref[0] = {**ref[0], "claim": "SLOW " + ref[0]["claim"]}
    client = client_for(stub, timeout=0.2, retries=1)

    result = ev2r_scores(pred, ref, client, prompts, workers=1)

    assert client.stats.failed == 2 and client.stats.sent == 4
    assert result.metrics["new_averitec_score"] == 0.0
    assert any("got no answer after retries" in note for note in result.notes)
