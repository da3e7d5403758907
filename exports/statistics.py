"""Descriptive statistics of a dataset export: the paper's Table 2 and its appendix tables.

Works on AVeriTeC records (dicts), one at a time, so it reads an export of any size in flat
memory, whether the records come from a file or straight from the database. Every figure is
given for the whole export and for each temporal split (by claim date).

Percentages follow the paper: labels and re-annotation per claim, claim types and strategies
per claim (a claim may have several, so they add up to more than 100), answer types and
source media per answer.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from annotation.csvfiles import csv_writer
from annotation.vocabulary import AnswerType, ClaimType, SourceMedium, Strategy, Verdict
from exports.averitec_json import parse_claim_date
from exports.splits import SPLITS, SplitBoundaries

ALL = "all"
UNDATED = "undated"

# Order of the rows in every table: the vocabulary's, then anything else by frequency.
TABLES = {
    "labels": ("per claim", list(Verdict.values)),
    "claim_types": ("per claim", list(ClaimType.values)),
    "strategies": ("per claim", list(Strategy.values)),
    "answer_types": ("per answer", list(AnswerType.values)),
    "source_media": ("per answer", list(SourceMedium.values)),
}
TABLE_TITLES = {
    "labels": "Labels",
    "claim_types": "Claim types",
    "strategies": "Fact-checking strategies",
    "answer_types": "Answer types",
    "source_media": "Source media (evidence modalities)",
}


def _percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def _mean(total: int, count: int) -> float:
    return round(total / count, 2) if count else 0.0


@dataclass
class SplitStatistics:
    claims: int = 0
    questions: int = 0
    answers: int = 0
    unanswered_questions: int = 0  # questions with an empty answer list
    reannotated: int = 0
    first_date: date | None = None
    last_date: date | None = None
    max_questions: int = 0
    max_answers: int = 0
    counts: dict[str, Counter] = field(default_factory=lambda: {t: Counter() for t in TABLES})

    def add(self, record: dict, claim_date: date | None) -> None:
        self.claims += 1
        if record.get("required_reannotation") is True:
            self.reannotated += 1
        if claim_date is not None:
            self.first_date = min(self.first_date or claim_date, claim_date)
            self.last_date = max(self.last_date or claim_date, claim_date)
        if record.get("label") is not None:
            self.counts["labels"][record["label"]] += 1
        self.counts["claim_types"].update(record.get("claim_types") or [])
        self.counts["strategies"].update(record.get("fact_checking_strategies") or [])
        questions = record.get("questions") or []
        self.questions += len(questions)
        self.max_questions = max(self.max_questions, len(questions))
        for question in questions:
            answers = question.get("answers") or []
            if not isinstance(answers, list):
                answers = [answers]
            self.answers += len(answers)
            self.max_answers = max(self.max_answers, len(answers))
            if not answers:
                self.unanswered_questions += 1
            for answer in answers:
                if "answer_type" in answer:
                    self.counts["answer_types"][answer["answer_type"]] += 1
                if "source_medium" in answer:
                    self.counts["source_media"][answer["source_medium"]] += 1

    def overview(self) -> dict[str, Any]:
        return {
            "claims": self.claims,
            "questions": self.questions,
            "answers": self.answers,
            "questions_per_claim": _mean(self.questions, self.claims),
            "answers_per_question": _mean(self.answers, self.questions),
            "max_questions_per_claim": self.max_questions,
            "max_answers_per_question": self.max_answers,
            "questions_without_answers": self.unanswered_questions,
            "reannotated": self.reannotated,
            "reannotated_percent": _percent(self.reannotated, self.claims),
            "first_claim_date": self.first_date.isoformat() if self.first_date else None,
            "last_claim_date": self.last_date.isoformat() if self.last_date else None,
        }

    def table(self, name: str) -> list[dict[str, Any]]:
        """Rows (value, count, percent) in vocabulary order; values never seen are kept at 0."""
        basis, order = TABLES[name]
        whole = self.claims if basis == "per claim" else self.answers
        counts = self.counts[name]
        values = [*order, *(v for v, _ in counts.most_common() if v not in order)]
        return [
            {
                "value": v,
                "label": _display(name, v),
                "count": counts[v],
                "percent": _percent(counts[v], whole),
            }
            for v in values
        ]

    def as_dict(self) -> dict[str, Any]:
        return {**self.overview(), **{name: self.table(name) for name in TABLES}}


def _display(table: str, value: str) -> str:
    if table == "source_media" and value == "":
        return "None (unanswerable)"
    return value


@dataclass
class Statistics:
    """Statistics of a whole export (``ALL``) and of each split present in it."""

    boundaries: SplitBoundaries
    splits: dict[str, SplitStatistics] = field(default_factory=dict)

    def add(self, record: dict) -> None:
        claim_date = None
        raw = record.get("claim_date")
        if isinstance(raw, str):
            try:
                claim_date = parse_claim_date(raw)
            except ValueError:
                claim_date = None
        split = self.boundaries.split_of(claim_date) if claim_date else UNDATED
        for name in (ALL, split):
            self.splits.setdefault(name, SplitStatistics()).add(record, claim_date)

    def ordered(self) -> list[tuple[str, SplitStatistics]]:
        """``all`` first, then train, dev, test and undated where present."""
        names = [ALL, *SPLITS, UNDATED]
        if ALL not in self.splits:
            self.splits[ALL] = SplitStatistics()
        return [(name, self.splits[name]) for name in names if name in self.splits]

    def as_dict(self) -> dict[str, Any]:
        return {
            "split_boundaries": {
                "train_end": self.boundaries.train_end.isoformat(),
                "dev_end": self.boundaries.dev_end.isoformat(),
            },
            "splits": {name: stats.as_dict() for name, stats in self.ordered()},
        }

    def csv_rows(self) -> list[list[Any]]:
        """One row per figure: split, table, value, count, percent (a long table)."""
        rows: list[list[Any]] = [["split", "table", "value", "count", "percent"]]
        for name, stats in self.ordered():
            for key, value in stats.overview().items():
                rows.append([name, "overview", key, value, ""])
            for table in TABLES:
                for row in stats.table(table):
                    rows.append([name, table, row["label"], row["count"], row["percent"]])
        return rows

    def to_csv(self) -> str:
        out = io.StringIO()
        csv_writer(out, lineterminator="\n").writerows(self.csv_rows())
        return out.getvalue()


def compute_statistics(
    records: Iterable[dict], boundaries: SplitBoundaries | None = None
) -> Statistics:
    statistics = Statistics(boundaries or SplitBoundaries.from_settings())
    for record in records:
        statistics.add(record)
    return statistics
