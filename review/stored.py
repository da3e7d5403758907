"""Stored reporting figures kept current as work arrives, and their rebuild from the raw rows.

Three kinds of derived rows, each with one definition elsewhere and a rebuild here:

- agreement ratings (`AgreementRating`), rewritten in the hand-in's transaction;
- evidence scores (`EvidenceScore`): one Hungarian METEOR per double-annotated claim,
  computed once by a Celery job queued when the claim's second P2 round is stored;
- stored reports (`StoredReport`): the verdict figures (kappas, bootstrap intervals, pairs)
  and the progress figures per filter, each stamped with the version of what they were
  computed from. A visit reads the row; a stale row is shown (with its time) while one
  Celery job per (filter, version) computes the next, so no visit waits for the bootstrap.

The ratings:

Which verdicts are ratings of which comparison is defined once, in
review/agreement.py's `verdict_ratings`; this module stores its answer per claim (the
AgreementRating rows) so that a report reads one indexed table instead of joining rounds,
checks, tasks and accounts for every claim on every visit. A stored verdict (an evidence
round or a check, whatever path stored it) rewrites its claim's rows in the same
transaction (the post_save hook below, connected in review/apps.py); `rebuild` recomputes
every claim's rows and reports any that differed. Rounds and checks are never deleted but
with their claim, whose ratings go with it (CASCADE).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import numpy as np
from celery import current_app
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet, Sum
from django.utils import timezone

from annotation.models import Claim, EvidenceRound
from annotation.vocabulary import Phase
from pipeline import scoring
from review.agreement import (
    COMPARISONS,
    ReportFilter,
    assemble_report,
    confusion_matrices,
    double_annotated_pairs,
    qa_record,
    verdict_figures,
    verdict_ratings,
)
from review.models import AgreementRating, EvidenceScore, StoredReport
from review.progress import progress_report

logger = logging.getLogger(__name__)


def _computed(claims: QuerySet[Claim]) -> dict[int, Counter[tuple[Any, ...]]]:
    """Per claim, its ratings in every comparison as computed from the raw rows.

    A multiset: two checks of one round repeat its author's rating, and the figures count
    both, so the stored rows must too.
    """
    out: dict[int, Counter[tuple[Any, ...]]] = {}
    for comparison in COMPARISONS:
        for r in verdict_ratings(comparison, claims):
            out.setdefault(int(r.cluster), Counter())[
                (comparison, r.item, r.annotator, r.label)
            ] += 1
    return out


def _rows(claim_id: int, ratings: Counter[tuple[Any, ...]]) -> list[AgreementRating]:
    return [
        AgreementRating(
            comparison=comparison, claim_id=claim_id, item=item, annotator=who, label=label
        )
        for comparison, item, who, label in sorted(ratings.elements())
    ]


def refresh_claims(claim_ids: Iterable[int]) -> None:
    """Rewrite these claims' stored ratings from the raw rows (a few queries, any count)."""
    claim_ids = set(claim_ids)
    if not claim_ids:
        return
    computed = _computed(Claim.objects.filter(pk__in=claim_ids))
    with transaction.atomic():
        AgreementRating.objects.filter(claim_id__in=claim_ids).delete()
        AgreementRating.objects.bulk_create(
            row for claim_id, ratings in computed.items() for row in _rows(claim_id, ratings)
        )


@dataclass(frozen=True)
class Difference:
    claim: int
    missing: tuple[Any, ...]  # computed from the raw rows, not stored
    extra: tuple[Any, ...]  # stored, not in the raw rows

    def __str__(self) -> str:
        parts = [f"claim {self.claim}:"]
        parts += [f"missing {' / '.join(map(str, row))}" for row in sorted(self.missing)]
        parts += [f"stale {' / '.join(map(str, row))}" for row in sorted(self.extra)]
        return " ".join(parts)


def rebuild(
    *, chunk: int = 1000, fix: bool = True, advance: Callable[[int], object] = lambda n: None
) -> list[Difference]:
    """Compare every claim's stored ratings with the raw rows, chunk by chunk; return the
    claims that differed, and (with `fix`) store the raw rows' answer for them."""
    differences = []
    ids = list(Claim.objects.order_by("pk").values_list("pk", flat=True))
    stored_claims = set(AgreementRating.objects.values_list("claim_id", flat=True).distinct())
    # Ratings of a claim that no longer exists go with it (CASCADE), so only claims are walked.
    for start in range(0, len(ids), chunk):
        part = ids[start : start + chunk]
        computed = _computed(Claim.objects.filter(pk__in=part))
        stored: dict[int, Counter[tuple[Any, ...]]] = {}
        for comparison, item, who, label, claim_id in AgreementRating.objects.filter(
            claim_id__in=[pk for pk in part if pk in stored_claims]
        ).values_list("comparison", "item", "annotator", "label", "claim_id"):
            stored.setdefault(claim_id, Counter())[(comparison, item, who, label)] += 1
        changed = []
        for claim_id in part:
            want, have = computed.get(claim_id, Counter()), stored.get(claim_id, Counter())
            if want != have:
                differences.append(
                    Difference(
                        claim_id,
                        tuple(sorted((want - have).elements())),
                        tuple(sorted((have - want).elements())),
                    )
                )
                changed.append(claim_id)
        if fix and changed:
            refresh_claims(changed)
        advance(len(part))
    return differences


# --- Hooks: every stored verdict updates its claim, in the transaction that stores it --------


def on_verdict_saved(sender: object, instance: Any, **kwargs: object) -> None:
    if instance.submitted_at is not None:
        refresh_claims([instance.claim_id])


# --- Evidence scores: one METEOR per double-annotated claim ---------------------------------


def _signature(first: dict[str, Any], second: dict[str, Any]) -> str:
    text = json.dumps([first, second], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _score_pairs(pairs: list[tuple[EvidenceRound, EvidenceRound]]) -> list[EvidenceScore]:
    """The scores of these (sample, own) pairs from their QA sets, as the scorer computes
    them (the sample round is the prediction, the own round the reference)."""
    if not pairs:
        return []
    firsts = [qa_record(sample) for sample, _ in pairs]
    seconds = [qa_record(own) for _, own in pairs]
    matched = scoring.claim_scores(firsts, seconds)
    return [
        EvidenceScore(
            claim_id=own.claim_id,
            sample_round=sample,
            own_round=own,
            signature=_signature(first, second),
            q_only=float(q_only),
            q_and_a=float(q_and_a),
            scored_at=timezone.now(),
        )
        for (sample, own), first, second, q_only, q_and_a in zip(
            pairs, firsts, seconds, matched.q_only, matched.evidence, strict=True
        )
    ]


def score_evidence(claim_id: int) -> bool:
    """Store the claim's evidence score if its pair is new or changed (the Celery job's
    body); True when it stored or removed a score. A redelivered message finds the same
    signature and does nothing."""
    pairs = double_annotated_pairs(Claim.objects.filter(pk=claim_id))
    if not pairs:
        return bool(EvidenceScore.objects.filter(claim_id=claim_id).delete()[0])
    sample, own = pairs[0]
    signature = _signature(qa_record(sample), qa_record(own))
    if EvidenceScore.objects.filter(
        claim_id=claim_id,
        signature=signature,
        sample_round=sample,
        own_round=own,
        q_only__isnull=False,
    ).exists():
        return False
    [score] = _score_pairs(pairs)
    try:
        with transaction.atomic():
            EvidenceScore.objects.update_or_create(
                claim_id=claim_id,
                defaults={
                    "sample_round": sample,
                    "own_round": own,
                    "signature": score.signature,
                    "q_only": score.q_only,
                    "q_and_a": score.q_and_a,
                    "scored_at": timezone.now(),
                },
            )
    except IntegrityError:  # a second delivery of the message stored it meanwhile
        return False
    return True


def score_pending(limit: int) -> int:
    """Score up to `limit` pairs still waiting for their score, oldest claims first; how
    many were stored. A pair scored meanwhile by its own job is skipped (same signature)."""
    waiting = EvidenceScore.objects.filter(q_only__isnull=True).order_by("claim_id")
    return sum(
        score_evidence(claim_id) for claim_id in waiting.values_list("claim_id", flat=True)[:limit]
    )


def evidence_figures(claims: QuerySet[Claim]) -> dict[str, Any]:
    """The evidence agreement of these claims from the stored scores (one indexed read):
    the same means the scorer gives over the same pairs (in claim order, as it takes them),
    and how many pairs wait for their score."""
    rows = list(
        EvidenceScore.objects.filter(claim__in=claims)
        .order_by("claim_id")
        .values_list("q_only", "q_and_a")
    )
    scores = [row for row in rows if row[0] is not None]
    pending = len(rows) - len(scores)
    if not scores:
        return {"claims": 0, "q_only": None, "q_and_a": None, "pending": pending}
    values = np.array(scores, dtype=np.float64)
    return {
        "claims": len(scores),
        "q_only": float(np.mean(values[:, 0])),
        "q_and_a": float(np.mean(values[:, 1])),
        "pending": pending,
    }


def _after_commit(task_name: str, *args: object) -> None:
    """Queue a job once the caller's transaction commits. A broker that is down costs only
    the head start, never the hand-in: the row stays pending (or stale) until the next
    change queues a job again or `rebuild_figures` fills it."""

    def send() -> None:
        try:
            current_app.signature(task_name, args=args).apply_async()
        except Exception:
            logger.exception("could not queue %s%r", task_name, args)

    transaction.on_commit(send)


def queue_evidence_score(claim_id: int) -> None:
    _after_commit("review.tasks.score_evidence", claim_id)


def on_evidence_round_saved(sender: object, instance: Any, **kwargs: object) -> None:
    """A handed-in P2 round whose claim has the other track too: (re)score the pair once the
    transaction commits (its questions and answers are stored by then)."""
    if instance.phase != Phase.QUESTIONS or instance.submitted_at is None:
        return
    if EvidenceRound.objects.filter(
        claim_id=instance.claim_id,
        phase=Phase.QUESTIONS,
        submitted_at__isnull=False,
        is_agreement_sample=not instance.is_agreement_sample,
    ).exists():
        # Pending until the job has scored it (a score already there stays until replaced).
        EvidenceScore.objects.bulk_create(
            [EvidenceScore(claim_id=instance.claim_id)], ignore_conflicts=True
        )
        queue_evidence_score(instance.claim_id)


def rebuild_evidence(
    *, chunk: int = 500, fix: bool = True, advance: Callable[[int], object] = lambda n: None
) -> list[str]:
    """Score every pair again from its QA sets and compare with the stored scores."""
    differences = []
    ids = list(Claim.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), chunk):
        part = ids[start : start + chunk]
        pairs = double_annotated_pairs(Claim.objects.filter(pk__in=part))
        want = {s.claim_id: s for s in _score_pairs(pairs)}
        have = {s.claim_id: s for s in EvidenceScore.objects.filter(claim_id__in=part)}
        changed = []
        for claim_id in sorted(set(want) | set(have)):
            w, h = want.get(claim_id), have.get(claim_id)
            fields = ("sample_round_id", "own_round_id", "signature", "q_only", "q_and_a")
            if w is None:
                differences.append(f"claim {claim_id}: stale evidence score (no pair)")
            elif h is None or h.q_only is None:
                differences.append(f"claim {claim_id}: evidence score missing")
            elif any(getattr(w, f) != getattr(h, f) for f in fields):
                differences.append(
                    f"claim {claim_id}: evidence score {h.q_only!r}/{h.q_and_a!r} stored, "
                    f"{w.q_only!r}/{w.q_and_a!r} from the QA sets"
                )
            else:
                continue
            changed.append(claim_id)
        if fix and changed:
            with transaction.atomic():
                EvidenceScore.objects.filter(claim_id__in=changed).delete()
                EvidenceScore.objects.bulk_create(want[c] for c in changed if c in want)
        advance(len(part))
    return differences


# --- Stored reports: the figures per filter, stamped with a version -------------------------

VERDICT_FIGURES = "verdicts"
PROGRESS_FIGURES = "progress"
KINDS = (VERDICT_FIGURES, PROGRESS_FIGURES)


def filter_key(report_filter: ReportFilter) -> str:
    f = report_filter
    return f"{f.batch_id or ''}|{f.start or ''}|{f.end or ''}"


def filter_of(key: str) -> ReportFilter:
    batch, start, end = key.split("|")
    return ReportFilter(
        int(batch) if batch else None,
        date.fromisoformat(start) if start else None,
        date.fromisoformat(end) if end else None,
    )


def ratings_version() -> str:
    """A stamp of the stored ratings that changes with any change of them: ratings are only
    ever replaced by new rows (new, higher ids), so a changed set changes the count or the
    sum of the ids. Transactional, and no row every hand-in must lock."""
    figures = AgreementRating.objects.aggregate(n=Count("id"), ids=Sum("id"))
    return f"{figures['n']}-{figures['ids'] or 0}"


def progress_version() -> str:
    """Progress changes with every task and with the clock: its figures are current for
    REPORT_PROGRESS_MAX_AGE seconds."""
    return str(int(time.time() // settings.REPORT_PROGRESS_MAX_AGE))


def _version(kind: str) -> str:
    return ratings_version() if kind == VERDICT_FIGURES else progress_version()


def compute(kind: str, report_filter: ReportFilter) -> dict[str, Any]:
    """A report's figures computed now (from the stored ratings; every stuck task)."""
    if kind == VERDICT_FIGURES:
        return verdict_figures(report_filter.claims())
    return progress_report(report_filter)


def _as_json(figures: dict[str, Any]) -> str:
    return json.dumps(figures, cls=DjangoJSONEncoder)


def refresh_report(kind: str, report_filter: ReportFilter) -> dict[str, Any]:
    """Compute and store a report's figures (the Celery job's body, and a filter's first
    visit). The version is read first: rows arriving meanwhile make the result stale, never
    a stale result current."""
    version = _version(kind)
    figures: dict[str, Any] = json.loads(_as_json(compute(kind, report_filter)))
    StoredReport.objects.update_or_create(
        kind=kind,
        key=filter_key(report_filter),
        defaults={
            "version": version,
            "queued_version": "",
            "figures": _as_json(figures),
            "computed_at": timezone.now(),
        },
    )
    return figures


def queue_report(kind: str, report_filter: ReportFilter) -> None:
    _after_commit("review.tasks.refresh_report", kind, filter_key(report_filter))


@dataclass
class Stored:
    figures: dict[str, Any]
    computed_at: datetime
    current: bool

    def about(self) -> dict[str, Any]:
        return {"computed_at": self.computed_at.isoformat(), "current": self.current}


def read_current(kind: str, report_filter: ReportFilter) -> bool:
    """Whether the stored report of this filter is at the current version."""
    return StoredReport.objects.filter(
        kind=kind, key=filter_key(report_filter), version=_version(kind)
    ).exists()


def read_report(kind: str, report_filter: ReportFilter, *, fresh: bool = False) -> Stored:
    """A report's stored figures. Current ones are read as stored; stale ones are shown and
    one job per version is queued to compute the next; a filter seen for the first time
    (or `fresh`, for the command) is computed now."""
    if kind == PROGRESS_FIGURES and not settings.REPORT_PROGRESS_MAX_AGE:
        return Stored(json.loads(_as_json(compute(kind, report_filter))), timezone.now(), True)
    version = _version(kind)
    row = StoredReport.objects.filter(kind=kind, key=filter_key(report_filter)).first()
    if row is not None and row.version == version:
        return Stored(json.loads(row.figures), row.computed_at, True)
    if row is None or fresh:
        figures = refresh_report(kind, report_filter)
        return Stored(figures, timezone.now(), not fresh or _version(kind) == version)
    if (
        StoredReport.objects.filter(pk=row.pk)
        .exclude(queued_version=version)
        .update(queued_version=version)
    ):
        queue_report(kind, report_filter)
    return Stored(json.loads(row.figures), row.computed_at, False)


def agreement_report(
    report_filter: ReportFilter | None = None, *, evidence: bool = True, fresh: bool = False
) -> dict[str, Any]:
    """review/agreement.py's `agreement_report` from the stored figures: the verdict figures
    as stored for the filter, the confusion matrices counted by the database, the evidence
    agreement from the stored scores. `stored` says when the verdict figures were computed."""
    report_filter = report_filter or ReportFilter()
    claims = report_filter.claims()
    verdicts = read_report(VERDICT_FIGURES, report_filter, fresh=fresh)
    return assemble_report(
        report_filter,
        verdicts.figures,
        confusion_matrices(claims),
        evidence_figures(claims) if evidence else None,
        stored=verdicts.about(),
    )


def stored_progress_report(
    report_filter: ReportFilter | None = None,
    *,
    stuck_page: int | None = None,
    fresh: bool = False,
) -> dict[str, Any]:
    """review/progress.py's `progress_report` from the stored figures (all stuck rows are
    stored; `stuck_page` cuts one page out of them)."""
    report_filter = report_filter or ReportFilter()
    progress = read_report(PROGRESS_FIGURES, report_filter, fresh=fresh)
    figures = {**progress.figures, "stored": progress.about()}
    if stuck_page is not None:
        size = settings.STUCK_PAGE_SIZE
        pages = max(1, -(-figures["stuck_total"] // size))
        page = min(max(1, stuck_page), pages)
        figures["stuck"] = figures["stuck"][(page - 1) * size : page * size]
        figures["stuck_pages"] = {"page": page, "pages": pages, "size": size}
    return figures


def rebuild_reports(*, fix: bool = True) -> list[str]:
    """Compare every current stored verdict report with the figures computed from the raw
    rows; with `fix`, store them again (stale and progress reports are computed again too)."""
    differences = []
    for row in StoredReport.objects.order_by("kind", "key"):
        report_filter = filter_of(row.key)
        if row.kind == VERDICT_FIGURES and row.version == ratings_version():
            computed = json.loads(
                _as_json(verdict_figures(report_filter.claims(), verdict_ratings))
            )
            if computed != json.loads(row.figures):
                differences.append(f"stored {row.kind} figures [{row.key}] differ")
        if fix:
            refresh_report(row.kind, report_filter)
    return differences
