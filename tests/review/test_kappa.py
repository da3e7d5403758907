"""Verdict-agreement statistics against hand computations and statsmodels (no database)."""

import itertools
import random

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from review.kappa import (
    CountTable,
    Rating,
    RatingsFileError,
    bootstrap_intervals,
    cohen_kappa,
    confusion_matrix,
    count_table,
    multirater_agreement,
    pairwise_cohen,
    read_ratings_csv,
    verdict_agreement,
)

# Fleiss (1971)-style textbook table (10 subjects, 14 raters, 5 categories) as worked on
# Wikipedia's "Fleiss' kappa" page: P̄ = 0.378, P̄e = 0.213, kappa = 0.210.
TEXTBOOK = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _table(rows) -> CountTable:
    counts = np.array(rows, dtype=float)
    return CountTable(
        items=[str(i) for i in range(len(rows))],
        labels=[f"c{j}" for j in range(counts.shape[1])],
        counts=counts,
    )


def test_it_reproduces_the_textbook_fleiss_example():
    figures = multirater_agreement(_table(TEXTBOOK))

    assert figures["percent_agreement"] == pytest.approx(0.378, abs=5e-4)
    assert figures["fleiss_kappa"] == pytest.approx(0.210, abs=5e-4)
    # Randolph's free-marginal kappa on the same table, by hand: (P̄ - 1/5) / (1 - 1/5),
    # with P̄ = 688 / 1820 (688 agreeing ordered rater pairs of 10 x 14 x 13).
    assert figures["randolph_kappa"] == pytest.approx((688 / 1820 - 0.2) / 0.8, abs=1e-12)


def test_items_with_differing_numbers_of_raters_weigh_the_same_and_single_ratings_drop_out():
    # Worked by hand: A has three raters who agree (P=1), B two who do not (P=0), C four
    # split two and two (4 agreeing ordered pairs of 12, P=1/3), D one rater (no pair).
    ratings = [
        Rating("A", "ann", "S"),
        Rating("A", "bob", "S"),
        Rating("A", "cy", "S"),
        Rating("B", "ann", "S"),
        Rating("B", "bob", "R"),
        Rating("C", "ann", "S"),
        Rating("C", "bob", "S"),
        Rating("C", "cy", "R"),
        Rating("C", "dee", "R"),
        Rating("D", "ann", "R"),
    ]
    table = count_table(ratings, ["S", "R", "N", "C"])

    figures = multirater_agreement(table)

    assert figures["items"] == 3 and figures["ratings"] == 9
    assert figures["percent_agreement"] == pytest.approx(4 / 9)
    # Label shares 6/9 and 3/9: chance 5/9, so Fleiss (4/9 - 5/9) / (4/9) = -1/4.
    assert figures["fleiss_kappa"] == pytest.approx(-0.25)
    # Four labels to choose from: (4/9 - 1/4) / (3/4) = 7/27.
    assert figures["randolph_kappa"] == pytest.approx(7 / 27)
    # S: 8 agreeing pairs of 13 with S on one side; R: 2 of 7; unused labels: undefined.
    assert figures["per_label"] == {
        "S": pytest.approx(8 / 13),
        "R": pytest.approx(2 / 7),
        "N": None,
        "C": None,
    }


@pytest.mark.parametrize("raters", [2, 3, 5, 8])
def test_it_matches_statsmodels_on_random_ratings(raters):
    rng = random.Random(raters)
    for _ in range(20):
        labels = ["S", "R", "N", "C"][: rng.randint(2, 4)]
        items = rng.randint(3, 40)
        ratings = [
            Rating(str(i), f"r{r}", rng.choice(labels)) for i in range(items) for r in range(raters)
        ]
        table = count_table(ratings, labels)
        raw = np.array(
            [[labels.index(x.label) for x in ratings if x.item == str(i)] for i in range(items)]
        )
        reference, _ = aggregate_raters(raw, n_cat=len(labels))

        figures = multirater_agreement(table)

        assert figures["randolph_kappa"] == pytest.approx(
            fleiss_kappa(reference, method="randolph"), abs=1e-12
        )
        expected_fleiss = fleiss_kappa(reference, method="fleiss")
        if np.isfinite(expected_fleiss):
            assert figures["fleiss_kappa"] == pytest.approx(expected_fleiss, abs=1e-12)


def test_with_varying_raters_it_matches_counting_every_rater_pair():
    # An independent route for the varying case: enumerate the rater pairs of each item.
    rng = random.Random(7)
    labels = ["S", "R", "N", "C"]
    ratings = []
    for item in range(60):
        for rater in range(rng.randint(1, 6)):
            ratings.append(Rating(str(item), f"r{rater}", rng.choice(labels)))
    by_item: dict[str, list[str]] = {}
    for r in ratings:
        by_item.setdefault(r.item, []).append(r.label)
    rated = {i: ls for i, ls in by_item.items() if len(ls) >= 2}
    shares = [
        sum(a == b for a, b in itertools.permutations(ls, 2)) / (len(ls) * (len(ls) - 1))
        for ls in rated.values()
    ]
    observed = sum(shares) / len(shares)
    pooled = [label for ls in rated.values() for label in ls]
    chance = sum((pooled.count(label) / len(pooled)) ** 2 for label in labels)

    figures = multirater_agreement(count_table(ratings, labels))

    assert figures["items"] == len(rated)
    assert figures["percent_agreement"] == pytest.approx(observed, abs=1e-12)
    assert figures["fleiss_kappa"] == pytest.approx((observed - chance) / (1 - chance), abs=1e-12)
    assert figures["randolph_kappa"] == pytest.approx((observed - 0.25) / 0.75, abs=1e-12)


def test_bootstrap_intervals_are_reproducible_and_hold_the_estimate():
    table = _table(TEXTBOOK)

    first = bootstrap_intervals(table)
    second = bootstrap_intervals(table)
    other_seed = bootstrap_intervals(table, seed=99)

    assert first == second
    assert first != other_seed
    estimate = multirater_agreement(table)
    for name in ("percent_agreement", "fleiss_kappa", "randolph_kappa"):
        low, high = first[name]
        assert low <= estimate[name] <= high


def test_cohen_kappa_matches_a_hand_computed_two_rater_example():
    # 50 items: both say yes 20, both no 15, A yes/B no 5, A no/B yes 10.
    # p_o = 35/50 = 0.7; p_e = 0.5 x 0.6 + 0.5 x 0.4 = 0.5; kappa = 0.4.
    pairs = [("y", "y")] * 20 + [("n", "n")] * 15 + [("y", "n")] * 5 + [("n", "y")] * 10

    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([("y", "y")] * 3) is None


def test_only_annotator_pairs_with_enough_common_claims_get_a_cohen_kappa():
    ratings = [Rating(str(i), "ann", "S") for i in range(12)]
    ratings += [Rating(str(i), "bob", "S" if i % 3 else "R") for i in range(12)]
    ratings += [Rating(str(i), "cy", "R") for i in range(3)]

    rows = pairwise_cohen(ratings, min_overlap=10)

    assert [(r["first"], r["second"], r["items"]) for r in rows] == [("ann", "bob", 12)]


def test_confusion_matrix_counts_rows_by_the_first_side():
    matrix = confusion_matrix([("S", "S"), ("S", "R"), ("R", "R"), ("X", "S")], ["S", "R"])

    assert matrix == [[1, 1], [0, 1]]


def test_a_full_report_is_json_ready_with_intervals_and_rater_counts():
    ratings = [Rating(str(i), f"r{r}", "SR"[(i + r) % 2]) for i in range(10) for r in range(2)]
    ratings.append(Rating("0", "r9", "S"))

    figures = verdict_agreement(ratings, ["S", "R"], min_pair_overlap=5)

    assert figures["raters_per_item"] == {"2": 9, "3": 1}
    assert set(figures["intervals"]) == {"percent_agreement", "fleiss_kappa", "randolph_kappa"}
    assert figures["annotator_pairs"][0]["items"] == 10


def test_a_ratings_table_reads_item_annotator_label_rows():
    text = "item,annotator,label\nc1,ann,Supported\nc1,bob,Refuted\n\nc2,ann,Supported\n"

    assert read_ratings_csv(text) == [
        Rating("c1", "ann", "Supported"),
        Rating("c1", "bob", "Refuted"),
        Rating("c2", "ann", "Supported"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("claim,who,verdict\nc1,ann,S\n", "line 1: expected the header"),
        ("", "line 1: expected the header"),
        ("item,annotator,label\nc1,ann\n", "line 2: expected 3 columns, found 2"),
        ("item,annotator,label\nc1,ann,S\nc2,,S\n", "line 3: empty annotator"),
        ("item,annotator,label\nc1,ann,S\nc1,ann,R\n", "line 3: annotator 'ann' already rated"),
        ("item,annotator,label\n", "no ratings"),
    ],
)
def test_a_bad_ratings_table_is_refused_naming_the_line(text, message):
    with pytest.raises(RatingsFileError, match=message):
        read_ratings_csv(text)
