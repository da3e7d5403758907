"""Agreement statistics over categorical ratings: multirater kappas, Cohen's kappa, bootstrap.

Plain data in, plain data out (no Django): review/agreement.py gathers the verdicts from the
database and the `agreement_report --ratings` command reads them from a CSV file; both end
here, so the figures of the dashboard, the API and the command are the same computation.

Items with differing numbers of raters: an item rated once holds no pair and is left out
(counted as ``left_out``, so every surface can say how many).
For the others, item i with n_i raters, n_ij of whom chose label j, contributes its share of
agreeing rater pairs P_i = sum_j n_ij (n_ij - 1) / (n_i (n_i - 1)); the observed agreement
is the mean of P_i over items (each item weighs the same, whatever its rater count), and the
label shares p_j pool every rating. Fleiss' chance agreement is sum_j p_j², Randolph's
free-marginal one 1/k for k available labels. With the same number of raters everywhere this
is exactly Fleiss (1971) and Randolph (2005), and statsmodels' ``fleiss_kappa`` gives the
same numbers (tests/review/test_kappa.py checks both).

``k`` is the number of labels the comparison's raters could choose from; every result carries
it, so every surface prints it beside the kappa.

Bootstrap intervals resample *clusters* (claims): when one claim gives several items (the P2
vs P3 comparison has a track per P2 round), a resample takes all of a drawn claim's items
together, as the claims are the independent units. Items and clusters are put in one
canonical order before the seeded resampling, so the interval does not depend on the order
the ratings came in (the dashboard and a CSV of the same ratings print the same interval).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

# Fixed so that the dashboard, the API and the command print the same interval twice.
BOOTSTRAP_SEED = 14
BOOTSTRAP_RESAMPLES = 1000


@dataclass(frozen=True)
class Rating:
    """One annotator's label for one item (a claim, or one track of a claim).

    `cluster` is the independent unit the item belongs to (its claim), which the bootstrap
    resamples; empty means the item is its own cluster.
    """

    item: str
    annotator: str
    label: str
    cluster: str = ""


_DIGIT_RUNS = re.compile(r"(\d+)")


def canonical_order(name: str) -> list[Any]:
    """Sort key: digit runs compare as numbers ("2" before "10"), the rest as text."""
    if name.isascii() and name.isdigit():
        # Most items are claim ids: the split below would give exactly this.
        return ["", int(name), ""]
    return [int(part) if n % 2 else part for n, part in enumerate(_DIGIT_RUNS.split(name))]


class RatingsFileError(ValueError):
    """A ratings table that cannot be read; the message names each bad line."""


@dataclass
class CountTable:
    """How many raters gave each label to each item (items rated at least twice)."""

    items: list[str]
    labels: list[str]
    counts: np.ndarray  # items x labels
    clusters: list[str] = field(default_factory=list)  # per item, its cluster
    left_out: int = 0  # items rated once: no rater pair, so not in the figures

    @property
    def raters_per_item(self) -> np.ndarray:
        raters: np.ndarray = self.counts.sum(axis=1)
        return raters


def count_table(ratings: Iterable[Rating], labels: Sequence[str] | None = None) -> CountTable:
    """Tabulate ratings; the label columns are `labels` (in that order) or those seen, sorted."""
    by_item: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    cluster_of: dict[str, str] = {}
    seen: set[str] = set()
    for rating in ratings:
        by_item[rating.item][rating.label] += 1
        cluster_of[rating.item] = rating.cluster or rating.item
        seen.add(rating.label)
    columns = list(labels) if labels is not None else sorted(seen)
    unknown = seen - set(columns)
    if unknown:
        raise ValueError(f"labels outside the label set: {', '.join(sorted(unknown))}")
    # One canonical order, whatever order the ratings came in.
    items = sorted(
        (item for item, row in by_item.items() if sum(row.values()) >= 2), key=canonical_order
    )
    counts = np.array(
        [[by_item[item].get(label, 0) for label in columns] for item in items], dtype=np.float64
    ).reshape(len(items), len(columns))
    return CountTable(
        items=items,
        labels=columns,
        counts=counts,
        clusters=[cluster_of[item] for item in items],
        left_out=len(by_item) - len(items),
    )


def _item_agreement(counts: np.ndarray) -> np.ndarray:
    """P_i: the share of agreeing rater pairs on each item."""
    n = counts.sum(axis=1)
    agreement: np.ndarray = (counts * (counts - 1)).sum(axis=1) / (n * (n - 1))
    return agreement


def _kappas(item_agreement: np.ndarray, label_totals: np.ndarray, k: int) -> tuple[float, ...]:
    observed = float(item_agreement.mean())
    shares = label_totals / label_totals.sum()
    fleiss_chance = float((shares**2).sum())
    fleiss = (observed - fleiss_chance) / (1 - fleiss_chance) if fleiss_chance < 1 else math.nan
    randolph = (observed - 1 / k) / (1 - 1 / k)
    return observed, fleiss, randolph


def multirater_agreement(table: CountTable, k: int | None = None) -> dict[str, Any]:
    """Percent agreement, Fleiss' and Randolph's kappa and per-label agreement of a table.

    `k` is the number of labels raters could choose from (Randolph's chance is 1/k); by
    default the table's label columns. Fleiss' kappa is NaN when every rating is one label.
    """
    k = k or len(table.labels)
    if k < 2:
        raise ValueError("agreement needs at least two labels to choose from")
    if not table.items:
        return {
            "k": k,
            "items": 0,
            "left_out": table.left_out,
            "ratings": 0,
            "percent_agreement": None,
            "fleiss_kappa": None,
            "randolph_kappa": None,
            "per_label": {},
        }
    counts = table.counts
    observed, fleiss, randolph = _kappas(_item_agreement(counts), counts.sum(axis=0), k)
    n = counts.sum(axis=1, keepdims=True)
    # Specific agreement per label: of the rater pairs with this label on one side, the share
    # that has it on both.
    agreeing = (counts * (counts - 1)).sum(axis=0)
    involved = (counts * (n - 1)).sum(axis=0)
    per_label = {
        label: (float(agreeing[j] / involved[j]) if involved[j] else None)
        for j, label in enumerate(table.labels)
    }
    return {
        "k": k,
        "items": len(table.items),
        "left_out": table.left_out,
        "ratings": int(counts.sum()),
        "percent_agreement": observed,
        "fleiss_kappa": None if math.isnan(fleiss) else fleiss,
        "randolph_kappa": randolph,
        "per_label": per_label,
    }


def bootstrap_intervals(
    table: CountTable,
    k: int | None = None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of the three figures, resampling clusters (claims) with
    replacement; a drawn cluster brings all its items.

    Seeded, and over the canonical order of the clusters, so the same ratings always get the
    same interval whatever order they came in.
    """
    k = k or len(table.labels)
    names = ("percent_agreement", "fleiss_kappa", "randolph_kappa")
    clusters = sorted(set(table.clusters or table.items), key=canonical_order)
    if len(clusters) < 2:
        return dict.fromkeys(names)
    rng = np.random.default_rng(seed)
    agreement = _item_agreement(table.counts)
    position = {cluster: n for n, cluster in enumerate(clusters)}
    # Each item's cluster, as an index: an item is drawn as often as its cluster. (A dense
    # items x clusters matrix gives the same weights at a cost that grows with the square.)
    member = np.array([position[c] for c in table.clusters or table.items], dtype=np.intp)
    n_clusters = len(clusters)
    draws = np.empty((resamples, 3))
    # Resamples in blocks, each block one draw of (block x clusters) from the generator: the
    # same numbers, in the same order, as one draw per resample, at array speed.
    block = max(1, min(resamples, 2_000_000 // max(1, len(member) + n_clusters)))
    for first in range(0, resamples, block):
        rows = min(block, resamples - first)
        picks = rng.integers(0, n_clusters, (rows, n_clusters))
        # How often each cluster was drawn, hence each item: the resample's sums are
        # weighted sums.
        offsets = (np.arange(rows) * n_clusters)[:, None]
        drawn = np.bincount((picks + offsets).ravel(), minlength=rows * n_clusters)
        weights = drawn.reshape(rows, n_clusters)[:, member].astype(np.float64)
        observed = (weights @ agreement) / weights.sum(axis=1)
        totals = weights @ table.counts
        shares = totals / totals.sum(axis=1, keepdims=True)
        chance = (shares**2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            fleiss = np.where(chance < 1, (observed - chance) / (1 - chance), math.nan)
        draws[first : first + rows] = np.column_stack(
            (observed, fleiss, (observed - 1 / k) / (1 - 1 / k))
        )
    tail = (1 - level) / 2 * 100
    out: dict[str, tuple[float, float] | None] = {}
    for column, name in enumerate(names):
        values = draws[:, column][~np.isnan(draws[:, column])]
        if values.size == 0:
            out[name] = None
        else:
            low, high = np.percentile(values, [tail, 100 - tail])
            out[name] = (float(low), float(high))
    return out


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items; None when chance agreement is 1."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first: defaultdict[str, int] = defaultdict(int)
    second: defaultdict[str, int] = defaultdict(int)
    for a, b in pairs:
        first[a] += 1
        second[b] += 1
    chance = sum(first[label] * second.get(label, 0) for label in first) / (n * n)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)


def pairwise_cohen(ratings: Iterable[Rating], min_overlap: int) -> list[dict[str, Any]]:
    """Cohen's kappa for every annotator pair that rated at least `min_overlap` common items."""
    by_annotator: dict[str, dict[str, str]] = defaultdict(dict)
    for rating in ratings:
        by_annotator[rating.annotator][rating.item] = rating.label
    # The pairs that share an item, read item by item (a handful of raters each) rather than
    # comparing every two of a few hundred annotators.
    by_item: dict[str, dict[str, str]] = defaultdict(dict)
    for annotator, labels in by_annotator.items():
        for item, label in labels.items():
            by_item[item][annotator] = label
    shared: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for raters in by_item.values():
        for a, b in combinations(sorted(raters), 2):
            shared[(a, b)].append((raters[a], raters[b]))
    rows = []
    for a, b in sorted(shared):
        pairs = shared[(a, b)]
        if len(pairs) < max(1, min_overlap):
            continue
        rows.append(
            {
                "first": a,
                "second": b,
                "items": len(pairs),
                "percent_agreement": sum(x == y for x, y in pairs) / len(pairs),
                "cohen_kappa": cohen_kappa(pairs),
            }
        )
    return rows


def confusion_matrix(pairs: Iterable[tuple[str, str]], labels: Sequence[str]) -> list[list[int]]:
    """Rows: the first side's label; columns: the second side's; labels outside are dropped."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for a, b in pairs:
        if a in index and b in index:
            matrix[index[a]][index[b]] += 1
    return matrix


def verdict_agreement(
    ratings: Sequence[Rating],
    labels: Sequence[str] | None = None,
    *,
    min_pair_overlap: int = 10,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, Any]:
    """Every verdict-agreement figure of one set of ratings, as plain JSON-ready data."""
    table = count_table(ratings, labels)
    figures = multirater_agreement(table)
    clustered = any(r.cluster for r in ratings)
    raters = table.raters_per_item
    figures["raters_per_item"] = {
        str(n): int((raters == n).sum()) for n in sorted({int(r) for r in raters})
    }
    figures["labels"] = table.labels
    figures["intervals"] = {
        name: (list(interval) if interval else None)
        for name, interval in bootstrap_intervals(table, resamples=resamples).items()
    }
    figures["bootstrap"] = {
        "resamples": resamples,
        "seed": BOOTSTRAP_SEED,
        "level": 0.95,
        # What one draw takes: a claim with all its items, or one item.
        "unit": "claim" if clustered else "item",
        "units": len(set(table.clusters)),
    }
    figures["annotator_pairs"] = pairwise_cohen(ratings, min_pair_overlap)
    return figures


# --- Ratings from a CSV table ------------------------------------------------------------

RATINGS_HEADER = ("item", "annotator", "label")
# Optional fourth column: the claim an item belongs to, when a claim gives several items.
CLUSTER_COLUMN = "claim"


def read_ratings_csv(text: str) -> list[Rating]:
    """Ratings from `item,annotator,label[,claim]` rows under that header line.

    Raises RatingsFileError listing each bad line by number; nothing is returned half-read.
    """
    rows = list(csv.reader(io.StringIO(text)))
    header = [c.strip().lower() for c in rows[0]] if rows else []
    if header not in (list(RATINGS_HEADER), [*RATINGS_HEADER, CLUSTER_COLUMN]):
        found = ",".join(rows[0]) if rows else "an empty file"
        raise RatingsFileError(
            f"line 1: expected the header 'item,annotator,label' (and optionally ',claim'), "
            f"found {found!r}"
        )
    width = len(header)
    problems: list[str] = []
    ratings: list[Rating] = []
    first_seen: dict[tuple[str, str], int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != width:
            problems.append(f"line {number}: expected {width} columns, found {len(row)}")
            continue
        item, annotator, label, *cluster = (cell.strip() for cell in row)
        empty = [
            name
            for name, value in zip(header, (item, annotator, label, *cluster), strict=True)
            if not value
        ]
        if empty:
            problems.append(f"line {number}: empty {', '.join(empty)}")
            continue
        key = (item, annotator)
        if key in first_seen:
            problems.append(
                f"line {number}: annotator {annotator!r} already rated item {item!r} "
                f"on line {first_seen[key]}"
            )
            continue
        first_seen[key] = number
        ratings.append(Rating(item, annotator, label, cluster[0] if cluster else ""))
    if problems:
        raise RatingsFileError("; ".join(problems[:50]) + (" …" if len(problems) > 50 else ""))
    if not ratings:
        raise RatingsFileError("no ratings below the header line")
    return ratings
