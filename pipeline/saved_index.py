"""A BM25 index saved as plain arrays and read through memory maps, one copy for all processes.

A saved index is a folder of ``.npy`` arrays: the raw term counts in CSC order (one column
per term, so a query reads only its own terms' columns), each document's length, key and
day, plus ``vocabulary.json`` and ``meta.json``. Loading maps the arrays read-only
(``mmap_mode="r"``): the operating system keeps one copy in its page cache, whatever the
number of web and worker processes reading it, and a process touches only the columns
its queries need. The BM25 weights are computed per query from those columns, with the
same formula and float32 arithmetic as :class:`pipeline.retrieval.BM25Index`.

Saving is atomic: the arrays are written into a temporary folder, renamed to their
generation's folder, then the ``CURRENT`` file (one line, the generation's folder name)
is replaced. Readers follow ``CURRENT``; a reader still mapping an older generation keeps
its files until it lets go (Linux frees unlinked files only then).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from pipeline.retrieval import NO_DATE, BM25Index, analyse

__all__ = ["CURRENT", "SavedIndex", "current_generation", "save_index"]

CURRENT = "CURRENT"
_ARRAYS = ("data", "indices", "indptr", "lengths", "keys", "days")
_KEEP_GENERATIONS = 2  # the current one and the one before, for readers not yet reloaded


def save_index(index: BM25Index, folder: Path, meta: dict[str, Any] | None = None) -> str:
    """Save ``index`` as a new generation in ``folder``; returns the generation's name.

    ``meta`` (JSON-serialisable) is stored with it, e.g. what the index covers.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    generation = f"{time.time_ns():020d}"
    tmp = folder / f".tmp-{generation}-{os.getpid()}"
    tmp.mkdir()
    try:
        counts = index.counts.tocsc()
        counts.sort_indices()
        arrays = {
            "data": counts.data.astype(np.float32, copy=False),
            "indices": counts.indices.astype(np.int32, copy=False),
            "indptr": counts.indptr.astype(np.int64, copy=False),
            # Row sums in the index's own order of work, so the lengths equal BM25Index's.
            "lengths": np.asarray(index.counts.tocsr().sum(axis=1)).ravel(),
            "keys": index.keys.astype(np.int64, copy=False),
            "days": index.days.astype(np.int32, copy=False),
        }
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", array)
        vocabulary = sorted(index.vocabulary, key=index.vocabulary.__getitem__)
        (tmp / "vocabulary.json").write_text(json.dumps(vocabulary), encoding="utf-8")
        saved_meta = {
            **(meta or {}),
            "k1": index.k1,
            "b": index.b,
            "documents": len(index),
            "generation": generation,
        }
        (tmp / "meta.json").write_text(json.dumps(saved_meta), encoding="utf-8")
        tmp.rename(folder / generation)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    pointer = folder / f".{CURRENT}.{os.getpid()}"
    pointer.write_text(generation + "\n", encoding="utf-8")
    pointer.replace(folder / CURRENT)
    _remove_old_generations(folder, keep=generation)
    return generation


def _remove_old_generations(folder: Path, *, keep: str) -> None:
    generations = sorted(p for p in folder.iterdir() if p.is_dir() and p.name.isdigit())
    older = [p for p in generations if p.name < keep]
    for path in older[: max(0, len(older) - (_KEEP_GENERATIONS - 1))]:
        shutil.rmtree(path, ignore_errors=True)


def current_generation(folder: Path) -> str | None:
    """The generation ``CURRENT`` names, None when nothing was saved in ``folder``."""
    try:
        name = (Path(folder) / CURRENT).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return name or None


class SavedIndex:
    """A saved generation, mapped read-only; ranks like BM25Index, including its ties."""

    def __init__(self, path: Path, *, analyser: Callable[[str], list[str]] = analyse) -> None:
        self.path = Path(path)
        self.analyser = analyser
        self.meta: dict[str, Any] = json.loads(
            (self.path / "meta.json").read_text(encoding="utf-8")
        )
        self.generation: str = self.meta["generation"]
        self.k1 = float(self.meta["k1"])
        self.b = float(self.meta["b"])
        arrays = {name: np.load(self.path / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
        self.data = arrays["data"]
        self.indices = arrays["indices"]
        self.indptr = arrays["indptr"]
        self.lengths = arrays["lengths"]
        self.keys = arrays["keys"]
        self.days = arrays["days"]
        terms = json.loads((self.path / "vocabulary.json").read_text(encoding="utf-8"))
        self.vocabulary: dict[str, int] = {term: i for i, term in enumerate(terms)}
        n_docs = len(self.lengths)
        self.average = self.lengths.mean() if n_docs and self.lengths.mean() > 0 else 1.0

    @classmethod
    def load(
        cls, folder: Path, *, analyser: Callable[[str], list[str]] = analyse
    ) -> SavedIndex | None:
        """The current generation in ``folder``, None when there is none."""
        generation = current_generation(folder)
        if generation is None:
            return None
        return cls(Path(folder) / generation, analyser=analyser)

    def __len__(self) -> int:
        return len(self.lengths)

    def column(self, term: str) -> np.ndarray:
        """Rows of the documents holding ``term`` (ascending), empty when none does."""
        col = self.vocabulary.get(term)
        if col is None:
            return np.zeros(0, dtype=np.int32)
        rows: np.ndarray = self.indices[self.indptr[col] : self.indptr[col + 1]]
        return rows

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the analysed ``terms``, as BM25Index.scores."""
        scores = np.zeros(len(self), dtype=np.float32)
        columns = [self.vocabulary[t] for t in terms if t in self.vocabulary]
        if not columns or not len(self):
            return scores
        unique, repeats = np.unique(columns, return_counts=True)
        n_docs = len(self)
        for col, repeat in zip(unique.tolist(), repeats.tolist(), strict=True):
            start, end = int(self.indptr[col]), int(self.indptr[col + 1])
            rows = self.indices[start:end]
            tf = self.data[start:end]
            idf = np.float32(np.log1p((n_docs - (end - start) + 0.5) / ((end - start) + 0.5)))
            norm = (self.k1 * (1 - self.b + self.b * self.lengths[rows] / self.average)).astype(
                np.float32
            )
            weight = idf * tf * np.float32(self.k1 + 1) / (tf + norm)
            scores[rows] += weight * np.float32(repeat)
        return scores

    def allowed_before(self, before: date) -> np.ndarray:
        """Documents whose day is strictly before ``before``, or that have no day."""
        allowed: np.ndarray = (self.days == NO_DATE) | (self.days < before.toordinal())
        return allowed

    def to_index(self) -> BM25Index:
        """An in-memory BM25Index with these documents, to add more and save again."""
        index = BM25Index(k1=self.k1, b=self.b, analyser=self.analyser)
        index.vocabulary = dict(self.vocabulary)
        shape = (len(self), len(self.vocabulary))
        index.counts = sparse.csc_matrix(
            (np.array(self.data), np.array(self.indices), np.array(self.indptr)), shape=shape
        ).tocsr()
        index.keys = np.array(self.keys)
        index.days = np.array(self.days)
        return index
