"""The embedded suggestion pipeline on small fixed data: no database, no Django."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from pipeline.classify import MultiLabelClassifier, macro_f1
from pipeline.retrieval import BM25Index, fast_analyse
from pipeline.suggest import ClaimPool, PoolClaim, rank_sentences, search_query

CLAIMS = [
    PoolClaim(
        1,
        "Joe Biden said he would ban fracking in Pennsylvania",
        date(2020, 10, 1),
        speaker="Donald Trump",
        label="Refuted",
        claim_types=("Quote Verification",),
        strategies=("Written Evidence",),
        questions=("Did Joe Biden say he would ban fracking?", "Where did Donald Trump say this?"),
        fact_check_text="fracking ban claim about Biden is false",
    ),
    PoolClaim(
        2,
        "Masks cause bacterial pneumonia according to Anthony Fauci",
        date(2020, 9, 1),
        label="Refuted",
        claim_types=("Causal Claim",),
        strategies=("Expert Consultation",),
        questions=("What did Fauci's 2008 paper say about pneumonia?",),
    ),
    PoolClaim(
        3,
        "Nigeria's oil price fell by 40 percent",
        date(2020, 8, 1),
        label="Supported",
        claim_types=("Numerical Claim",),
        strategies=("Numerical Comparison",),
        questions=("What was the price of oil in Nigeria in 2020?",),
    ),
    PoolClaim(
        4,
        "Biden will ban fracking on federal land",
        None,
        label="Supported",
        claim_types=("Position Statement",),
        strategies=("Written Evidence",),
        questions=("What is Biden's energy plan for federal land?",),
    ),
]


@pytest.fixture(scope="module")
def pool() -> ClaimPool:
    return ClaimPool.build(CLAIMS)


def test_it_ranks_the_document_sharing_the_rare_words_first():
    index = BM25Index(analyser=fast_analyse)
    index.add(["the cat sat on the mat", "a dog chased the cat", "oil prices in Nigeria"])
    hits = index.search("Nigeria oil", 3)
    assert [h.key for h in hits] == [2]
    assert index.search("cat", 3)[0].key in (0, 1)


def test_it_applies_the_date_restriction_inside_the_ranking_not_after_a_cut():
    index = BM25Index(analyser=fast_analyse)
    # The best match is too recent; the restriction must still find the older, weaker one.
    index.add(
        ["fracking ban fracking ban", "fracking"],
        keys=[10, 11],
        dates=[date(2021, 1, 1), date(2019, 1, 1)],
    )
    assert [h.key for h in index.search("fracking ban", 1, before=date(2020, 1, 1))] == [11]
    assert [h.key for h in index.search("fracking ban", 1)] == [10]


def test_it_keeps_undated_documents_only_when_asked():
    index = BM25Index(analyser=fast_analyse)
    index.add(["fracking"], dates=[None])
    assert index.search("fracking", before=date(2020, 1, 1))
    assert not index.search("fracking", before=date(2020, 1, 1), include_undated=False)


def test_it_adds_documents_incrementally_with_the_same_scores_as_a_full_build():
    texts = ["oil price Nigeria", "fracking ban Biden", "masks pneumonia Fauci", "oil fracking"]
    whole = BM25Index(analyser=fast_analyse)
    whole.add(texts)
    grown = BM25Index(analyser=fast_analyse)
    grown.add(texts[:2])
    grown.scores("oil")  # weights derived once before growing: must be re-derived
    grown.add(texts[2:])
    np.testing.assert_allclose(grown.scores("oil fracking"), whole.scores("oil fracking"))


def test_it_saves_and_loads_an_index_that_ranks_the_same(tmp_path):
    index = BM25Index(analyser=fast_analyse)
    index.add(["oil price Nigeria", "fracking ban"], keys=[7, 8], dates=[date(2020, 1, 1), None])
    index.save(tmp_path / "index.npz")
    loaded = BM25Index.load(tmp_path / "index.npz", analyser=fast_analyse)
    assert loaded.search("fracking") == index.search("fracking")
    assert list(loaded.days) == list(index.days)


def test_it_refuses_texts_and_keys_of_different_lengths():
    with pytest.raises(ValueError, match="2 texts, 1 keys"):
        BM25Index(analyser=fast_analyse).add(["a", "b"], keys=[1])


def test_it_finds_the_original_of_a_reworded_claim_with_its_verdict(pool):
    hits = pool.duplicates("Nigeria saw oil prices drop 40%")
    assert hits[0].claim_id == 3
    assert hits[0].label == "Supported"


def test_it_suggests_questions_of_similar_claims_with_this_claims_speaker(pool):
    candidates = pool.candidate_questions("Biden promised a fracking ban", "Mike Pence")
    texts = [c.text for c in candidates]
    assert "Where did Mike Pence say this?" in texts
    assert {c.from_claim_id for c in candidates} <= {1, 4}


def test_it_never_suggests_questions_of_the_claim_itself(pool):
    candidates = pool.candidate_questions("Biden fracking ban", exclude=[1, 4])
    assert all(c.from_claim_id not in (1, 4) for c in candidates)


def test_it_keeps_content_words_and_numbers_in_the_search_query():
    query = search_query("Nigeria's oil price fell by 40% in 2020, it is claimed", "Bola Tinubu")
    assert query.startswith("Bola Tinubu")
    for word in ("oil", "price", "fell", "40%", "2020"):
        assert word in query.split()
    for word in ("by", "in", "it", "is", "claimed"):
        assert word not in query.split()


def test_it_ranks_the_sentence_that_answers_the_question_first():
    sentences = [
        "The weather was fine.",
        "Oil in Nigeria cost 40 dollars a barrel in 2020.",
        "Football results follow.",
    ]
    assert rank_sentences("What was the price of oil in Nigeria?", sentences, k=2)[0] == 1
    assert rank_sentences("anything", []) == []


def test_the_classifier_learns_labels_from_a_small_fixed_set():
    index = BM25Index(analyser=fast_analyse)
    texts = [
        "said quote interview",
        "quote said speech",
        "percent number rate",
        "number percent million",
    ] * 3
    labels = [("Quote",), ("Quote",), ("Numerical",), ("Numerical",)] * 3
    index.add(texts)
    model = MultiLabelClassifier.fit(index.counts, labels)
    assert model is not None
    predicted = model.predict(index.counts)
    assert macro_f1(labels, predicted) == 1.0
    assert model.suggest(index.counts[2])[0][0] == "Numerical"


def test_macro_f1_counts_every_label_the_same():
    gold = [["A"], ["A"], ["A"], ["B"]]
    assert macro_f1(gold, [["A"], ["A"], ["A"], ["A"]]) == pytest.approx((6 / 7 + 0) / 2)


def test_a_pool_survives_saving_and_loading(pool, tmp_path):
    pool.save(tmp_path / "pool")
    loaded = ClaimPool.load(tmp_path / "pool")
    assert [h.claim_id for h in loaded.duplicates("fracking Biden")] == [
        h.claim_id for h in pool.duplicates("fracking Biden")
    ]
    text = "oil price fell 40 percent"
    assert loaded.classify(text) == pool.classify(text)


def test_adding_claims_to_a_pool_makes_them_findable(pool, tmp_path):
    grown = ClaimPool.build(CLAIMS[:2])
    assert not grown.duplicates("Nigeria oil price")
    grown.add(CLAIMS[2:])
    assert grown.duplicates("Nigeria oil price")[0].claim_id == 3
