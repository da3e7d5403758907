"""The references' prepared text is kept by file content and NLTK code: a rerun prepares only
the predictions' new strings and gives the same floats; anything else reads nothing stale."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from benchmarks.scoring import shifted_predictions
from pipeline import meteor_engine, reference_cache, scoring
from pipeline.meteor_engine import Meteor, SynonymTable, fast_path_verified

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared/data/averitec"

pytestmark = pytest.mark.skipif(not fast_path_verified(), reason="the cache serves the fast path")


class CountingMeteor(Meteor):
    """A fresh engine that records every string it tokenises."""

    def __init__(self, table):
        super().__init__(table)
        self.tokenised: list[str] = []

    def tokens(self, text):
        self.tokenised.append(text)
        return super().tokens(text)


@pytest.fixture(scope="module")
def table() -> SynonymTable:
    return SynonymTable.load_or_build()


@pytest.fixture(scope="module")
def files():
    path = Path(os.environ.get("AVERITEC_DATA_DIR") or SHARED_DATA) / "dev.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (set AVERITEC_DATA_DIR)")
    dev = json.loads(path.read_text(encoding="utf-8"))
    references = dev[:60]
    predictions = shifted_predictions(dev)[:60]
    for i, record in enumerate(predictions):  # a system's own strings, none in the references
        for question in record["questions"]:
            question["question"] = f"System question {i}: " + question["question"]
    return predictions, references, json.dumps(references).encode()


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch, table) -> Path:
    monkeypatch.setenv("SCORING_CACHE_DIR", str(tmp_path))
    return tmp_path


def run(table, files, key=None):
    predictions, references, _ = files
    meteor = CountingMeteor(table)
    result = scoring.score(
        copy.deepcopy(predictions),
        copy.deepcopy(references),
        meteor=meteor,
        processes=1,
        reference_key=key,
    )
    return result, meteor


def reference_strings(references: list[dict]) -> set[str]:
    out = set()
    for record in references:
        out.update(q["question"] for q in record["questions"])
        out.update(scoring.evidence_strings(record))
        out.add(record["justification"])
    return out


def test_a_rerun_tokenises_only_the_predictions_and_gives_the_same_floats(table, files):
    key = reference_cache.content_key(files[2])

    uncached, _ = run(table, files)
    first, first_engine = run(table, files, key)
    second, second_engine = run(table, files, key)

    references = reference_strings(files[1])
    assert references <= set(first_engine.tokenised)
    assert not references & set(second_engine.tokenised)
    assert second_engine.tokenised  # the predictions' strings still are
    assert len(second_engine.tokenised) < len(first_engine.tokenised) / 2
    for result in (first, second):
        assert {**result.metrics, "seconds": 0} == {**uncached.metrics, "seconds": 0}


def test_another_file_or_another_nltk_reads_nothing_saved(table, files, monkeypatch):
    key = reference_cache.content_key(files[2])
    run(table, files, key)
    references = reference_strings(files[1])

    _, other_file = run(table, files, reference_cache.content_key(files[2] + b" "))
    monkeypatch.setattr(meteor_engine, "nltk_source_digest", lambda: "another nltk")
    monkeypatch.setattr(reference_cache, "nltk_source_digest", lambda: "another nltk")
    _, other_nltk = run(table, files, key)

    assert references <= set(other_file.tokenised)
    assert references <= set(other_nltk.tokenised)


def test_a_damaged_entry_is_ignored(table, files, cache_dir):
    key = reference_cache.content_key(files[2])
    plain, _ = run(table, files)
    run(table, files, key)
    (entry,) = cache_dir.glob("references-*.marshal")
    entry.write_bytes(entry.read_bytes()[:100])

    again, engine = run(table, files, key)

    assert reference_strings(files[1]) <= set(engine.tokenised)
    assert {**again.metrics, "seconds": 0} == {**plain.metrics, "seconds": 0}
