"""The embedded suggestion pipeline on small fixed data: no database, no Django."""

from __future__ import annotations

import random
from datetime import date, timedelta

import numpy as np
import pytest

from pipeline.classify import DatedClassifiers, MultiLabelClassifier, checkpoint_days, macro_f1
from pipeline.retrieval import BM25Index, fast_analyse
from pipeline.suggest import ClaimContext, ClaimPool, PoolClaim, rank_sentences, search_query

LATER = date(2020, 12, 1)


def about(text: str, speaker: str = "", day: date = LATER, article: str = "") -> ClaimContext:
    return ClaimContext(text=text, claim_date=day, speaker=speaker, article=article)


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
        article="biden-article",
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
    hits = pool.duplicates(about("Nigeria saw oil prices drop 40%"))
    assert hits[0].claim_id == 3
    assert hits[0].label == "Supported"


def test_it_suggests_questions_of_similar_claims_with_this_claims_speaker(pool):
    candidates = pool.candidate_questions(about("Biden promised a fracking ban", "Mike Pence"))
    texts = [c.text for c in candidates]
    assert "Where did Mike Pence say this?" in texts
    # Claim 4 has no date: it cannot be shown to be earlier, so it is never used.
    assert {c.from_claim_id for c in candidates} == {1}


def test_it_never_suggests_questions_of_a_claim_of_the_same_article(pool):
    candidates = pool.candidate_questions(about("Biden fracking ban", article="biden-article"))
    assert all(c.from_claim_id != 1 for c in candidates)


def test_it_keeps_content_words_and_numbers_in_the_search_query():
    query = search_query("Nigeria's oil price fell by 40% in 2020, it is claimed", "Bola Tinubu")
    for word in ("Nigeria's", "oil", "price", "fell", "40%", "2020"):
        assert word in query.split()
    assert "is" not in query.split() and "claimed" not in query.split()
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
    # Only label sets seen in training are suggested.
    assert all(tuple(p) in {("Quote",), ("Numerical",)} for p in predicted)


def test_each_checkpoint_model_learns_only_claims_before_its_day():
    days = [730000 + n // 3 for n in range(90)]  # three claims a day
    cutoffs = checkpoint_days(days)
    assert cutoffs[-1] == max(days) + 1
    assert all(sum(d < c for d in days) >= 10 for c in cutoffs)
    index = BM25Index(analyser=fast_analyse)
    index.add(["number percent" if n % 2 else "quote said" for n in range(90)])
    labels = [("Numerical",) if n % 2 else ("Quote",) for n in range(90)]
    dated = DatedClassifiers.fit(index.counts, labels, np.asarray(days))
    for day in (730000, 730005, 730015, 730030):
        model = dated.model_for(day)
        cutoff = max((c for c, m in dated.checkpoints if m is model), default=None)
        assert model is None or cutoff <= day
    assert dated.model_for(730000) is None  # nothing earlier to learn from
    assert dated.model_for(730030, avoid_from=730010) is not dated.model_for(730030)


def test_macro_f1_counts_every_label_the_same():
    gold = [["A"], ["A"], ["A"], ["B"]]
    assert macro_f1(gold, [["A"], ["A"], ["A"], ["A"]]) == pytest.approx((6 / 7 + 0) / 2)


def test_a_pool_survives_saving_and_loading(pool, tmp_path):
    pool.save(tmp_path / "pool")
    loaded = ClaimPool.load(tmp_path / "pool")
    assert [h.claim_id for h in loaded.duplicates(about("fracking Biden"))] == [
        h.claim_id for h in pool.duplicates(about("fracking Biden"))
    ]
    context = about("oil price fell 40 percent")
    assert loaded.claim_labels(context) == pool.claim_labels(context)


def test_adding_claims_to_a_pool_makes_them_findable(pool, tmp_path):
    grown = ClaimPool.build(CLAIMS[:2])
    assert not grown.duplicates(about("Nigeria oil price"))
    grown.add(CLAIMS[2:])
    assert grown.duplicates(about("Nigeria oil price"))[0].claim_id == 3


# --- Only the past, for every kind ----------------------------------------------------------

TOPICS = ["oil price Nigeria", "fracking ban Biden", "masks pneumonia Fauci", "parks budget"]
TYPES = ["Numerical Claim", "Event/Property Claim", "Quote Verification"]


def random_claims(rng: random.Random, start_id: int, n: int, first: date, days: int):
    claims = []
    for i in range(start_id, start_id + n):
        topic = rng.choice(TOPICS)
        claims.append(
            PoolClaim(
                i,
                f"{topic} {rng.choice(['rose', 'fell', 'said', 'claimed'])} {rng.randint(1, 99)}",
                first + timedelta(days=rng.randrange(days)),
                speaker=rng.choice(["", "Donald Trump", "Joe Biden"]),
                label=rng.choice(["Supported", "Refuted"]),
                claim_types=(rng.choice(TYPES),),
                strategies=("Written Evidence",)
                + (("Consultation",) if rng.random() < 0.3 else ()),
                questions=(f"What about {topic} in {rng.randint(2000, 2020)}?",),
                article=f"article-{rng.randrange(n)}",
                article_url=f"https://checker{rng.randrange(3)}.example/{topic.replace(' ', '-')}",
            )
        )
    return claims


def everything_suggested(pool: ClaimPool, context: ClaimContext) -> dict:
    return {
        "duplicates": [(h.claim_id, h.label) for h in pool.duplicates(context)],
        "labels": pool.claim_labels(context),
        "questions": [(c.text, c.from_claim_id) for c in pool.candidate_questions(context)],
        "query": pool.search_query(context),
        "sentences": rank_sentences(
            "price of oil", [context.text, "nothing here"], claim=context.text
        ),
    }


@pytest.mark.parametrize("seed", range(3))
def test_no_kind_of_suggestion_depends_on_later_claims_or_claims_of_the_same_article(seed):
    """A random pool, a random claim: adding claims dated on or after it, or claims of its own
    article (earlier ones too), changes nothing any kind suggests, and every claim a
    suggestion names is earlier and of another article. The classifiers are checkpoints:
    with the article's claims in the pool, the model used is one trained before them."""
    rng = random.Random(seed)
    past = random_claims(rng, 1, 40, date(2020, 1, 1), 60)
    context = ClaimContext(
        text=f"{rng.choice(TOPICS)} fell 40", claim_date=date(2020, 3, 1), article="article-3"
    )
    allowed = [
        c for c in past if c.claim_date < context.claim_date and c.article != context.article
    ]
    later = random_claims(rng, 100, 30, context.claim_date, 60)
    own_article = [
        PoolClaim(
            200 + n,
            f"{TOPICS[n % 4]} fell 40",
            date(2020, 2, 1) + timedelta(days=n),
            article=context.article,
            claim_types=("Causal Claim",),
            strategies=("Satire",),
            label="Supported",
            questions=(f"Own article question {n}?",),
        )
        for n in range(10)
    ]
    only_past = everything_suggested(ClaimPool.build(allowed), context)
    assert only_past["labels"]["claim_types"]  # enough earlier claims to learn from
    with_leaks = ClaimPool.build(allowed + later + own_article)
    suggested = everything_suggested(with_leaks, context)

    def retrieved(found: dict) -> dict:
        return {k: v for k, v in found.items() if k != "labels"}

    assert retrieved(suggested) == retrieved(only_past)
    later_only = everything_suggested(ClaimPool.build(allowed + later), context)
    assert retrieved(later_only) == retrieved(only_past)
    # The classifiers: a checkpoint before the claim and before its article's first claim.
    for dated in (with_leaks.types_model, with_leaks.strategies_model):
        used = dated.model_for(context.claim_date.toordinal(), date(2020, 2, 1).toordinal())
        assert used is not None
        (cutoff,) = [c for c, m in dated.checkpoints if m is used]
        assert cutoff <= date(2020, 2, 1).toordinal()
    learnt = {label for label, _p in suggested["labels"]["claim_types"]}
    assert "Causal Claim" not in learnt and "Satire" not in {
        label for label, _p in suggested["labels"]["strategies"]
    }
    named = {claim_id for claim_id, _ in only_past["duplicates"]} | {
        claim_id for _, claim_id in only_past["questions"]
    }
    assert named <= {c.id for c in allowed}
