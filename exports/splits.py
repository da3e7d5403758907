"""Temporal splits and the other ways of choosing which accepted claims an export holds.

The release orders its splits by time so that no training claim is later than a dev or test
claim: train holds claims dated up to and including ``EXPORT_TRAIN_END``, dev those after it
up to and including ``EXPORT_DEV_END``, test everything later (the defaults are the
release's: dev.json runs from 26-8-2020 to 31-10-2020).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils.text import slugify

from annotation.models import Batch, Claim

TRAIN, DEV, TEST = "train", "dev", "test"
SPLITS = (TRAIN, DEV, TEST)
SPLIT_CHOICES = [(TRAIN, "train"), (DEV, "dev"), (TEST, "test")]


@dataclass(frozen=True)
class SplitBoundaries:
    """Inclusive end dates of train and dev; test has no end."""

    train_end: date
    dev_end: date

    @classmethod
    def from_settings(cls) -> SplitBoundaries:
        return cls(train_end=settings.EXPORT_TRAIN_END, dev_end=settings.EXPORT_DEV_END)

    def split_of(self, claim_date: date) -> str:
        if claim_date <= self.train_end:
            return TRAIN
        if claim_date <= self.dev_end:
            return DEV
        return TEST

    def date_range(self, split: str) -> tuple[date | None, date | None]:
        """(first day, last day) of a split, None where it is open."""
        from datetime import timedelta

        if split == TRAIN:
            return None, self.train_end
        if split == DEV:
            return self.train_end + timedelta(days=1), self.dev_end
        if split == TEST:
            return self.dev_end + timedelta(days=1), None
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")

    def condition(self, split: str) -> Q:
        """The split as a filter on Claim.claim_date."""
        first, last = self.date_range(split)
        condition = Q()
        if first is not None:
            condition &= Q(claim_date__gte=first)
        if last is not None:
            condition &= Q(claim_date__lte=last)
        return condition


@dataclass(frozen=True)
class Selection:
    """Which accepted claims an export holds: a split, a batch, a claim-date range."""

    split: str = ""
    batch: Batch | None = None
    since: date | None = None  # claim date, inclusive
    until: date | None = None  # claim date, inclusive

    def claims(self, boundaries: SplitBoundaries | None = None) -> QuerySet[Claim]:
        claims = Claim.objects.accepted()
        if self.split:
            claims = claims.filter(
                (boundaries or SplitBoundaries.from_settings()).condition(self.split)
            )
        if self.batch is not None:
            claims = claims.filter(article__batch=self.batch)
        if self.since is not None:
            claims = claims.filter(claim_date__gte=self.since)
        if self.until is not None:
            claims = claims.filter(claim_date__lte=self.until)
        return claims

    def describe(self) -> str:
        parts = []
        if self.split:
            parts.append(f"{self.split} split")
        if self.batch is not None:
            parts.append(f"batch {self.batch.name}")
        if self.since or self.until:
            parts.append(f"claim dates {self.since or '…'} to {self.until or '…'}")
        return ", ".join(parts) or "all accepted claims"

    def file_stem(self) -> str:
        """A file name that says what is inside, e.g. averitec-dev-2020-01-01-to-2020-12-31."""
        parts = ["averitec"]
        if self.split:
            parts.append(self.split)
        if self.batch is not None:
            parts.append(f"batch-{slugify(self.batch.name)}")
        if self.since or self.until:
            parts.append(f"{self.since or 'start'}-to-{self.until or 'end'}")
        if len(parts) == 1:
            parts.append("all")
        return "-".join(parts)
