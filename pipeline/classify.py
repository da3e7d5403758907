"""Multi-label classifier for claim types and fact-checking strategies.

One-vs-rest logistic regression on TF-IDF rows, trained with SciPy's L-BFGS: small,
deterministic, no extra dependency. Rare labels get balanced class weights so that the
macro-F1 (every label counts the same) is not left to the two frequent ones.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy import optimize, sparse

__all__ = ["MultiLabelClassifier", "macro_f1"]


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
    def __init__(self, labels: list[str], idf: np.ndarray, coef: np.ndarray, bias: np.ndarray):
        self.labels = labels
        self.idf = idf
        self.coef = coef  # labels x features
        self.bias = bias

    @classmethod
    def fit(
        cls,
        counts: sparse.spmatrix,
        targets: Sequence[Sequence[str]],
        *,
        l2: float = 1.0,
    ) -> MultiLabelClassifier | None:
        """Train on term-count rows and their label sets; None when nothing can be learnt."""
        labels = sorted({label for row in targets for label in row})
        if not labels or counts.shape[0] < 2:
            return None
        counts = sparse.csr_matrix(counts)
        n_docs = counts.shape[0]
        doc_freq = np.bincount(counts.indices, minlength=counts.shape[1])
        idf = (np.log((1 + n_docs) / (1 + doc_freq)) + 1).astype(np.float32)
        x = _tfidf(counts, idf)
        coef = np.zeros((len(labels), x.shape[1]), dtype=np.float32)
        bias = np.zeros(len(labels), dtype=np.float32)
        for i, label in enumerate(labels):
            y = np.asarray([label in row for row in targets], dtype=np.float64)
            positives = y.sum()
            if positives in (0, n_docs):
                bias[i] = 10.0 if positives else -10.0
                continue
            # Balanced weights: both classes weigh as much in total.
            weight = np.where(y == 1, n_docs / (2 * positives), n_docs / (2 * (n_docs - positives)))
            coef[i], bias[i] = _fit_one(x, y, weight, l2)
        return cls(labels, idf, coef, bias)

    def probabilities(self, counts: sparse.spmatrix) -> np.ndarray:
        x = _tfidf(counts, self.idf)
        logits = np.asarray(x @ self.coef.T) + self.bias
        return 1.0 / (1.0 + np.exp(-logits))

    def predict(self, counts: sparse.spmatrix, threshold: float = 0.5) -> list[list[str]]:
        """Labels per row: every label at or above ``threshold``, at least the likeliest."""
        result = []
        for row in self.probabilities(counts):
            chosen = [self.labels[j] for j in np.flatnonzero(row >= threshold)]
            result.append(chosen or [self.labels[int(np.argmax(row))]])
        return result

    def suggest(self, counts: sparse.spmatrix, *, at_least: float = 0.5) -> list[tuple[str, float]]:
        """Labels of one row worth suggesting, ``(label, probability)``, likeliest first."""
        row = self.probabilities(counts)[0]
        order = np.argsort(-row, kind="stable")
        chosen = [(self.labels[j], float(row[j])) for j in order if row[j] >= at_least]
        return chosen or [(self.labels[int(order[0])], float(row[order[0]]))]

    def save(self, path: Path) -> None:
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(
            tmp,
            idf=self.idf,
            coef=self.coef,
            bias=self.bias,
            labels=np.frombuffer(json.dumps(self.labels).encode(), dtype=np.uint8),
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> MultiLabelClassifier:
        with np.load(Path(path), allow_pickle=False) as saved:
            labels = json.loads(saved["labels"].tobytes().decode())
            return cls(labels, saved["idf"], saved["coef"], saved["bias"])


def _fit_one(
    x: sparse.csr_matrix, y: np.ndarray, weight: np.ndarray, l2: float
) -> tuple[np.ndarray, float]:
    n_features = x.shape[1]

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = params[:n_features], params[n_features]
        z = x @ w + b
        # log(1 + e^z) - y z, written to stay finite for large |z|.
        value = np.sum(weight * (np.logaddexp(0, z) - y * z)) + 0.5 * l2 * w @ w
        p = 0.5 * (1 + np.tanh(0.5 * z))
        residual = weight * (p - y)
        grad = np.empty_like(params)
        grad[:n_features] = x.T @ residual + l2 * w
        grad[n_features] = residual.sum()
        return value, grad

    start = np.zeros(n_features + 1)
    result = optimize.minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 200})
    return result.x[:n_features].astype(np.float32), float(result.x[n_features])


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
