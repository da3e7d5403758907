"""pipeline.text must give exactly NLTK's numbers, computed the way the AVeriTeC scorer does.

These tests need the project's NLTK data (``python -m scripts.nltk_data``) but no
database and no Django.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import nltk
import pytest
from nltk.tokenize import word_tokenize
from nltk.translate.meteor_score import single_meteor_score

# Importing pipeline.text puts the project's NLTK data folder first on nltk.data.path;
# NLTK loads WordNet and Punkt lazily, so the official calls below read the same data.
from pipeline.nltk_data import default_target
from pipeline.text import meteor, tokenize

SHARED_DEV_JSON = Path(__file__).resolve().parents[2].parent / "shared/data/averitec/dev.json"


def _dev_json() -> Path:
    data_dir = os.environ.get("AVERITEC_DATA_DIR")
    path = Path(data_dir) / "dev.json" if data_dir else SHARED_DEV_JSON
    if not path.is_file():
        pytest.skip(f"AVeriTeC dev.json not found at {path} (set AVERITEC_DATA_DIR)")
    return path


def _official_meteor(candidate: str, reference: str) -> float:
    """The AVeriTeC evaluation script's call, verbatim."""
    return single_meteor_score(word_tokenize(reference), word_tokenize(candidate))


def _dev_pairs() -> list[tuple[str, str]]:
    """(candidate, reference) pairs from real annotations.

    Question vs. its first answer gives mostly low scores, consecutive questions of the
    same claim give middling ones; together they exercise exact, stem and WordNet matches.
    """
    claims = json.loads(_dev_json().read_text(encoding="utf-8"))
    questions = [q for claim in claims for q in claim["questions"]]
    pairs = [(q["answers"][0]["answer"], q["question"]) for q in questions if q["answers"]]
    pairs += [(a["question"], b["question"]) for a, b in itertools.pairwise(questions)]
    # Every 4th pair (~640 of ~2,570) spans the whole file and keeps the test at ~2 s.
    return pairs[::4]


def test_meteor_equals_nltks_official_call_on_real_dev_pairs() -> None:
    pairs = _dev_pairs()
    assert len(pairs) >= 200

    ours = [meteor(candidate, reference) for candidate, reference in pairs]
    official = [_official_meteor(candidate, reference) for candidate, reference in pairs]

    mismatches = [(p, a, b) for p, a, b in zip(pairs, ours, official, strict=True) if a != b]
    assert mismatches == []
    # Guard against a vacuous pass (e.g. everything scoring 0 because data is missing).
    assert sum(0.0 < score < 1.0 for score in ours) > len(ours) // 2
    assert any(score == 0.0 for score in ours)


def test_meteor_arguments_are_candidate_then_reference() -> None:
    # METEOR weighs recall on the reference 9:1 over precision, so order matters.
    candidate, reference = "the minister said the claim was false", "the claim was false"
    assert meteor(candidate, reference) == _official_meteor(candidate, reference)
    assert meteor(candidate, reference) > meteor(reference, candidate)


def test_tokenize_equals_word_tokenize_on_sample_strings() -> None:
    samples = [
        "Dr. Smith went to Washington. He said so.",
        "Mr. and Mrs. Jones arrived at 5 p.m. on Jan. 3. They left early.",
        "The U.S. GDP grew 2.5% in 2020... didn't it?",
        '"Is it true?" she asked. (It was not.)',
        "Joe Biden's claim: 'Trump cut $1.2bn'!",
        "",
        "   ",
        "\u00dcn\u00efc\u00f6d\u00e9 caf\u00e9 \u2013 na\u00efve r\u00e9sum\u00e9.",
    ]
    for text in samples:
        assert tokenize(text) == word_tokenize(text), text


def test_tokenize_splits_sentences_with_punkt_and_keeps_abbreviations() -> None:
    # Without the Punkt model "Washington." would stay one token (Treebank only splits
    # the final period of a string); with it "Dr." survives as an abbreviation.
    assert tokenize("Dr. Smith went to Washington. He said so.") == [
        "Dr.", "Smith", "went", "to", "Washington", ".", "He", "said", "so", ".",
    ]  # fmt: skip


def test_tokenize_returns_a_fresh_list_each_call() -> None:
    first = tokenize("The cache must not leak.")
    first.append("mutated")
    first[0] = "changed"
    assert tokenize("The cache must not leak.") == ["The", "cache", "must", "not", "leak", "."]


def test_meteor_matches_wordnet_synonyms_as_nltk_does() -> None:
    identical = meteor("the child slept", "the child slept")
    # "kid" and "child" share the WordNet 3.0 synset kid.n.01: a full match.
    assert meteor("the kid slept", "the child slept") == identical
    # A Porter-stem match counts the same as an exact one.
    assert meteor("the cats slept", "the cat slept") == identical
    # The synonym stage looks up the *candidate* word (morphy maps "children" to
    # child.n.01), so the irregular plural matches in one direction only.
    assert meteor("the children slept", "the child slept") == identical
    assert meteor("the child slept", "the children slept") < identical
    # WordNet 3.0 has no synset with both "feline" and "cat": only 'the' and 'slept' align,
    # in two chunks, so the score is the same as for an unrelated word.
    assert meteor("the feline slept", "the cat slept") == meteor("the dog slept", "the cat slept")
    # NLTK runs the WordNet stage on Porter stems: "automobile" becomes "automobil",
    # which has no synsets, so it does not match "car" although "auto" does.
    assert meteor("the auto stopped", "the car stopped") == pytest.approx(identical)
    assert meteor("the automobile stopped", "the car stopped") < identical


def test_meteor_without_a_match_or_with_empty_text_is_zero() -> None:
    assert meteor("completely different words", "nothing shared here") == 0.0
    assert meteor("", "some reference") == 0.0
    assert meteor("some candidate", "") == 0.0


def test_nltk_reads_wordnet_and_punkt_from_the_project_data_folder() -> None:
    meteor("warm up", "the lazy WordNet loader")
    target = default_target().resolve()
    assert Path(nltk.data.path[0]).resolve() == target
    assert Path(str(nltk.corpus.wordnet.root)).resolve() == target / "corpora/wordnet"
    punkt = Path(str(nltk.data.find("tokenizers/punkt_tab/english/"))).resolve()
    assert punkt == target / "tokenizers/punkt_tab/english"
    assert nltk.corpus.wordnet.get_version() == "3.0"
