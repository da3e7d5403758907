"""The array forms of the bootstrap and of the pairwise Cohen's kappa equal their plain forms.

The plain forms (one resample at a time; every two annotators compared) are kept here as
the oracles, over random ratings with clusters, lone ratings, one-label tables and repeats.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from itertools import combinations

import numpy as np
import pytest

from review.kappa import (
    BOOTSTRAP_SEED,
    Rating,
    bootstrap_intervals,
    canonical_order,
    cohen_kappa,
    count_table,
    pairwise_cohen,
)

LABELS = ["Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"]


def plain_bootstrap(table, resamples=1000, seed=BOOTSTRAP_SEED, level=0.95):
    k = len(table.labels)
    clusters = sorted(set(table.clusters or table.items), key=canonical_order)
    if len(clusters) < 2:
        return dict.fromkeys(("percent_agreement", "fleiss_kappa", "randolph_kappa"))
    rng = np.random.default_rng(seed)
    n = table.counts.sum(axis=1)
    agreement = (table.counts * (table.counts - 1)).sum(axis=1) / (n * (n - 1))
    position = {c: i for i, c in enumerate(clusters)}
    member = np.zeros((len(table.items), len(clusters)))
    for i, cluster in enumerate(table.clusters or table.items):
        member[i, position[cluster]] = 1
    draws = np.empty((resamples, 3))
    for r in range(resamples):
        drawn = np.bincount(rng.integers(0, len(clusters), len(clusters)), minlength=len(clusters))
        weights = member @ drawn
        observed = float(weights @ agreement) / float(weights.sum())
        totals = weights @ table.counts
        shares = totals / totals.sum()
        chance = float((shares**2).sum())
        fleiss = (observed - chance) / (1 - chance) if chance < 1 else math.nan
        draws[r] = (observed, fleiss, (observed - 1 / k) / (1 - 1 / k))
    tail = (1 - level) / 2 * 100
    out = {}
    for column, name in enumerate(("percent_agreement", "fleiss_kappa", "randolph_kappa")):
        values = draws[:, column][~np.isnan(draws[:, column])]
        out[name] = tuple(np.percentile(values, [tail, 100 - tail])) if values.size else None
    return out


def plain_pairwise_cohen(ratings, min_overlap):
    by_annotator = defaultdict(dict)
    for rating in ratings:
        by_annotator[rating.annotator][rating.item] = rating.label
    rows = []
    for a, b in combinations(sorted(by_annotator), 2):
        common = sorted(by_annotator[a].keys() & by_annotator[b].keys())
        if len(common) < max(1, min_overlap):
            continue
        pairs = [(by_annotator[a][i], by_annotator[b][i]) for i in common]
        rows.append(
            {
                "first": a,
                "second": b,
                "items": len(common),
                "percent_agreement": sum(x == y for x, y in pairs) / len(pairs),
                "cohen_kappa": cohen_kappa(pairs),
            }
        )
    return rows


def random_ratings(rng: random.Random) -> list[Rating]:
    labels = LABELS[: rng.choice([1, 2, 4])]
    annotators = rng.choice([3, 12, 40])
    return [
        Rating(f"{claim}{track}", f"a{rng.randrange(annotators)}", rng.choice(labels), str(claim))
        for claim in range(rng.choice([1, 2, 5, 60, 400]))
        for track in ("", "-sample")[: rng.randint(1, 2)]
        for _ in range(rng.randint(1, 4))
    ]


@pytest.mark.parametrize("seed", range(25))
def test_the_blocked_bootstrap_gives_the_plain_bootstraps_intervals(seed):
    table = count_table(random_ratings(random.Random(seed)), LABELS)

    fast, plain = bootstrap_intervals(table), plain_bootstrap(table)

    assert fast.keys() == plain.keys()
    for name, interval in plain.items():
        assert (fast[name] is None) == (interval is None), name
        if interval is not None:
            # Sums taken in another order: the same numbers to the last bits.
            assert fast[name] == pytest.approx(interval, abs=1e-12), name


@pytest.mark.parametrize("seed", range(25))
def test_pairs_read_item_by_item_equal_every_two_annotators_compared(seed):
    ratings = random_ratings(random.Random(seed))

    for min_overlap in (0, 1, 3, 10):
        assert pairwise_cohen(ratings, min_overlap) == plain_pairwise_cohen(ratings, min_overlap)


def test_the_claim_id_shortcut_orders_as_the_digit_runs_do():
    rng = random.Random(3)
    names = [str(rng.randrange(10**6)) for _ in range(300)]
    names += [f"{rng.randrange(999)}-sample" for _ in range(100)]
    names += ["", "0", "007", "a10", "10a", "²", "x²1", "٣", "12٣"]

    def by_runs(name):
        import re

        return [int(p) if n % 2 else p for n, p in enumerate(re.split(r"(\d+)", name))]

    assert [canonical_order(n) for n in names] == [by_runs(n) for n in names]
