"""Multi-label classifier for claim types and fact-checking strategies, and its date checkpoints.

One-vs-rest logistic regression on TF-IDF rows, every label fitted at once by SciPy's L-BFGS
(one optimisation, matrix products instead of a Python loop per label): small,
deterministic, no extra dependency. Class weights are the balanced ones raised to
``weight_power`` (0 = none, 1 = fully balanced), a compromise between rare labels (which
macro-F1 rewards) and the exact set (which the frequent sets dominate).

A prediction is a label *set*: the set, among those seen in training, that the per-label
probabilities make likeliest (maximum a posteriori under independent labels). Only real
combinations are suggested, and a label is ticked when the evidence for its set beats the
common sets, not when it passes a fixed threshold alone.

:class:`DatedClassifiers` keeps models trained at date checkpoints, so a claim is classified
by a model that saw only claims dated before it (and none of its own article's claims).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from scipy import optimize, sparse

__all__ = ["DatedClassifiers", "MultiLabelClassifier", "exact_set_accuracy", "macro_f1"]

# Chosen by article-grouped 5-fold cross-validation on the fixed split's pool (dev.json's 400
# earliest claims), never on held-out claims: balanced weights gave the best macro-F1 for
# both fields and the best exact-set accuracy for claim types (docs/benchmarks.md).
L2 = 1.0
WEIGHT_POWER = 1.0


def _tfidf(counts: sparse.spmatrix, idf: np.ndarray) -> sparse.csr_matrix:
    counts = sparse.csr_matrix(counts, dtype=np.float32)
    if counts.shape[1] > len(idf):
        counts = counts[:, : len(idf)]  # words the model never saw carry no weight
    elif counts.shape[1] < len(idf):
        counts = sparse.csr_matrix(counts, shape=(counts.shape[0], len(idf)))
    rows = counts.copy()
    rows.data = np.log1p(rows.data)
    rows = rows.multiply(idf).tocsr()
    norms = np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.diags(1.0 / norms) @ rows


class MultiLabelClassifier:
    def __init__(
        self,
        labels: list[str],
        idf: np.ndarray,
        coef: np.ndarray,
        bias: np.ndarray,
        label_sets: list[tuple[str, ...]] | None = None,
    ):
        self.labels = labels
        self.idf = idf
        self.coef = coef  # labels x features
        self.bias = bias
        # The label combinations seen in training, most frequent first.
        self.label_sets = label_sets or [(label,) for label in labels]
        self._set_matrix = np.array(
            [[label in s for label in labels] for s in self.label_sets], dtype=bool
        )

    @classmethod
    def fit(
        cls,
        counts: sparse.spmatrix,
        targets: Sequence[Sequence[str]],
        *,
        l2: float = L2,
        weight_power: float = WEIGHT_POWER,
        warm: MultiLabelClassifier | None = None,
    ) -> MultiLabelClassifier | None:
        """Train on term-count rows and their label sets; None when nothing can be learnt.

        ``warm``, a model trained on a subset of these rows (an earlier checkpoint), is the
        optimiser's starting point: the same optimum, reached in far fewer steps."""
        labels = sorted({label for row in targets for label in row})
        if not labels or counts.shape[0] < 2:
            return None
        counts = sparse.csr_matrix(counts)
        n_docs = counts.shape[0]
        doc_freq = np.bincount(counts.indices, minlength=counts.shape[1])
        idf = (np.log((1 + n_docs) / (1 + doc_freq)) + 1).astype(np.float32)
        x = _tfidf(counts, idf).astype(np.float64)
        y = np.array([[label in row for label in labels] for row in targets], dtype=np.float64)
        positives = y.sum(axis=0)
        learnable = (positives > 0) & (positives < n_docs)
        with np.errstate(divide="ignore"):
            pos_weight = (n_docs / (2 * positives)) ** weight_power
            neg_weight = (n_docs / (2 * (n_docs - positives))) ** weight_power
        weight = np.where(y == 1, pos_weight, neg_weight) * learnable
        start = None
        if warm is not None and warm.coef.shape[1] <= x.shape[1]:
            start_coef = np.zeros((len(labels), x.shape[1]))
            start_bias = np.zeros(len(labels))
            for i, label in enumerate(labels):
                if label in warm.labels:
                    j = warm.labels.index(label)
                    start_coef[i, : warm.coef.shape[1]] = warm.coef[j]
                    start_bias[i] = warm.bias[j]
            start = np.concatenate([start_coef.T.ravel(), start_bias])
        coef, bias = _fit_all(x, y, np.nan_to_num(weight), l2, start)
        # A label always (never) present needs no model: a fixed, decisive bias.
        bias = np.where(learnable, bias, np.where(positives > 0, 10.0, -10.0))
        sets = Counter(tuple(sorted(row)) for row in targets if row)
        label_sets = [s for s, _ in sorted(sets.items(), key=lambda item: (-item[1], item[0]))]
        return cls(labels, idf, coef.astype(np.float32), bias.astype(np.float32), label_sets)

    def probabilities(self, counts: sparse.spmatrix) -> np.ndarray:
        x = _tfidf(counts, self.idf)
        logits = np.asarray(x @ self.coef.T) + self.bias
        probabilities: np.ndarray = 1.0 / (1.0 + np.exp(-logits))
        return probabilities

    def predict(self, counts: sparse.spmatrix) -> list[list[str]]:
        """The likeliest seen label set of each row."""
        return [self._likeliest_set(row) for row in self.probabilities(counts)]

    def _likeliest_set(self, row: np.ndarray) -> list[str]:
        p = np.clip(row, 1e-6, 1 - 1e-6)
        log_in, log_out = np.log(p), np.log1p(-p)
        scores = np.where(self._set_matrix, log_in, log_out).sum(axis=1)
        # Ties go to the more frequent set (the list's order).
        return list(self.label_sets[int(np.argmax(scores))])

    def suggest(self, counts: sparse.spmatrix) -> list[tuple[str, float]]:
        """The likeliest label set of one row, ``(label, probability)``, likeliest first."""
        row = self.probabilities(counts)[0]
        chosen = set(self._likeliest_set(row))
        order = np.argsort(-row, kind="stable")
        return [(self.labels[j], float(row[j])) for j in order if self.labels[j] in chosen]

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "idf": self.idf,
            "coef": self.coef,
            "bias": self.bias,
            "labels": np.frombuffer(json.dumps(self.labels).encode(), dtype=np.uint8),
            "label_sets": np.frombuffer(
                json.dumps([list(s) for s in self.label_sets]).encode(), dtype=np.uint8
            ),
        }

    @classmethod
    def from_arrays(cls, saved: Mapping[str, np.ndarray]) -> MultiLabelClassifier:
        labels = json.loads(saved["labels"].tobytes().decode())
        sets = [tuple(s) for s in json.loads(saved["label_sets"].tobytes().decode())]
        return cls(labels, saved["idf"], saved["coef"], saved["bias"], sets)


def _fit_all(
    x: sparse.csr_matrix,
    y: np.ndarray,
    weight: np.ndarray,
    l2: float,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    n_features, n_labels = x.shape[1], y.shape[1]
    xt = x.T.tocsr()

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        w = params[: n_labels * n_features].reshape(n_features, n_labels)
        b = params[n_labels * n_features :]
        z = np.asarray(x @ w) + b
        # log(1 + e^z) - y z, written to stay finite for large |z|.
        value = np.sum(weight * (np.logaddexp(0, z) - y * z)) + 0.5 * l2 * np.sum(w * w)
        residual = weight * (0.5 * (1 + np.tanh(0.5 * z)) - y)
        grad_w = np.asarray(xt @ residual) + l2 * w
        return float(value), np.concatenate([grad_w.ravel(), residual.sum(axis=0)])

    if start is None:
        start = np.zeros(n_features * n_labels + n_labels)
    result = optimize.minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 300})
    coef = result.x[: n_labels * n_features].reshape(n_features, n_labels).T
    return coef, result.x[n_labels * n_features :]


# -- date checkpoints -----------------------------------------------------------------------

MIN_TRAINING_CLAIMS = 10
MAX_CHECKPOINTS = 12
MIN_STEP = 20


def checkpoint_days(days: Sequence[int]) -> list[int]:
    """Cut-off days (ordinals) at which to train: each model learns the claims dated strictly
    before its day. About MAX_CHECKPOINTS of them, each at least MIN_STEP claims after the
    one before, and the last after every claim, so the newest claims are always learnt."""
    ordered = sorted(d for d in days if d >= 0)
    if len(ordered) < MIN_TRAINING_CLAIMS:
        return []
    step = max(MIN_STEP, len(ordered) // MAX_CHECKPOINTS)
    cutoffs: list[int] = []
    last = 0
    for position, day in enumerate(ordered):
        # `position` claims are dated before `day` when it is the first claim of its day.
        if (
            position
            and ordered[position - 1] < day
            and position >= max(MIN_TRAINING_CLAIMS, last + step)
        ):
            cutoffs.append(day)
            last = position
    cutoffs.append(ordered[-1] + 1)
    return cutoffs


class DatedClassifiers:
    """Classifiers trained at date checkpoints; each claim gets one that only saw the past."""

    def __init__(self, checkpoints: list[tuple[int, MultiLabelClassifier]]):
        self.checkpoints = sorted(checkpoints, key=lambda c: c[0])

    @classmethod
    def fit(
        cls,
        counts: sparse.spmatrix,
        targets: Sequence[Sequence[str]],
        days: np.ndarray,
    ) -> DatedClassifiers:
        counts = sparse.csr_matrix(counts)
        checkpoints: list[tuple[int, MultiLabelClassifier]] = []
        for cutoff in checkpoint_days(days.tolist()):
            rows = np.flatnonzero((days >= 0) & (days < cutoff))
            warm = checkpoints[-1][1] if checkpoints else None
            model = MultiLabelClassifier.fit(
                counts[rows], [targets[i] for i in rows.tolist()], warm=warm
            )
            if model is not None:
                checkpoints.append((cutoff, model))
        return cls(checkpoints)

    def model_for(self, day: int, avoid_from: int | None = None) -> MultiLabelClassifier | None:
        """The model of the latest checkpoint on or before `day` (so every claim it learnt
        is dated before `day`) and, when `avoid_from` is given (the earliest day of claims
        that must not have been learnt, such as the claim's own article), on or before it."""
        limit = day if avoid_from is None else min(day, avoid_from)
        chosen = None
        for cutoff, model in self.checkpoints:
            if cutoff <= limit:
                chosen = model
        return chosen

    def save(self, path: Path) -> None:
        path = Path(path)
        arrays: dict[str, np.ndarray] = {
            "cutoffs": np.asarray([c for c, _ in self.checkpoints], dtype=np.int64)
        }
        for n, (_cutoff, model) in enumerate(self.checkpoints):
            arrays.update({f"{n}_{key}": value for key, value in model.arrays().items()})
        tmp = path.with_name(path.name + ".tmp.npz")
        # numpy's stub types **kwds against its allow_pickle keyword too; no key here is that.
        np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> DatedClassifiers:
        with np.load(Path(path), allow_pickle=False) as saved:
            cutoffs = [int(c) for c in saved["cutoffs"]]
            checkpoints = []
            for n, cutoff in enumerate(cutoffs):
                prefix = f"{n}_"
                part = {k[len(prefix) :]: saved[k] for k in saved.files if k.startswith(prefix)}
                checkpoints.append((cutoff, MultiLabelClassifier.from_arrays(part)))
        return cls(checkpoints)


# -- measures -------------------------------------------------------------------------------


def macro_f1(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> float:
    """Mean over labels (those in gold or predictions) of each label's F1."""
    labels = sorted({x for row in gold for x in row} | {x for row in predicted for x in row})
    if not labels:
        return 0.0
    scores = []
    for label in labels:
        tp = sum(label in g and label in p for g, p in zip(gold, predicted, strict=True))
        fp = sum(label not in g and label in p for g, p in zip(gold, predicted, strict=True))
        fn = sum(label in g and label not in p for g, p in zip(gold, predicted, strict=True))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(scores))


def exact_set_accuracy(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> float:
    """Share of rows whose predicted label set is exactly the gold set."""
    if not gold:
        return 0.0
    pairs = zip(gold, predicted, strict=True)
    return float(np.mean([set(g) == set(p) for g, p in pairs]))
