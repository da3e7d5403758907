"""Agreement between annotators: verdicts (kappas, confusion matrices) and evidence (METEOR).

The one home of the agreement figures: the dashboard, /api/v1/agreement/ and the
`agreement_report` command all call :func:`agreement_report`. The statistics themselves are
in review/kappa.py (plain data); here is which verdicts count as independent ratings of a
claim, read from the database.

Comparisons (each item is one claim; every verdict is by a different annotator, which the
same-article rule guarantees):

- ``parallel_p2``: the two independent P2 verdicts of claims in the agreement sample (the
  paper's 0.619 Randolph / 0.503 Fleiss are this figure);
- ``p2_p3``: each P2 verdict against the blind P3 verdict on its QA pairs (the agreement
  sample's track is its own item);
- ``p4_p5``: the dispute verdict against the blind post-control verdict;
- ``first_round``: every P2 and P3 verdict of a claim together, two to four raters.

An "unreadable" check has no verdict and is left out of the verdict figures. Every
comparison's k (labels its raters could choose: 4, or 5 for P4 vs P5 where P5 may also call a
claim too vague) is part of its figures; the bootstrap resamples claims; claims with a single
rating are counted as left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.conf import settings
from django.db.models import Count, QuerySet

from annotation.models import Claim, ClaimQuerySet, EvidenceRound
from annotation.vocabulary import BLIND_PHASES, CLAIM_TOO_VAGUE, Phase, Verdict
from pipeline import scoring
from review.kappa import Rating, confusion_matrix, verdict_agreement
from review.models import AgreementRating, QualityCheck

VERDICTS = [v.value for v in Verdict]
POST_CONTROL_VERDICTS = [*VERDICTS, CLAIM_TOO_VAGUE]

# Names short enough for a chart's axis.
SHORT_NAMES = {
    "parallel_p2": "P2 and sample P2",
    "p2_p3": "P2 vs P3",
    "p4_p5": "P4 vs P5",
    "first_round": "All P2 and P3",
}
COMPARISONS = {
    "parallel_p2": "Independent P2 verdicts (agreement sample)",
    "p2_p3": "P2 verdict vs blind P3 verdict",
    "p4_p5": "P4 verdict vs blind P5 verdict",
    "first_round": "All P2 and P3 verdicts of a claim",
}


@dataclass(frozen=True)
class ReportFilter:
    """Which claims a report covers: one batch and/or a range of creation dates."""

    batch_id: int | None = None
    start: date | None = None
    end: date | None = None

    def claims(self) -> ClaimQuerySet[Claim]:
        claims = Claim.objects.filter(origin=Claim.Origin.ANNOTATED)
        if self.batch_id:
            claims = claims.filter(article__batch_id=self.batch_id)
        if self.start:
            claims = claims.filter(created_at__date__gte=self.start)
        if self.end:
            claims = claims.filter(created_at__date__lte=self.end)
        return claims

    def as_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch_id,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
        }


# Plain rows, not model instances: building thousands of models costs far more than the
# arithmetic (benchmarks/reporting.py).
def _rounds(claims: QuerySet[Claim], phase: int) -> QuerySet[EvidenceRound, tuple[Any, ...]]:
    """(claim, is sample, annotator, verdict) of each handed-in round with a verdict."""
    return EvidenceRound.objects.filter(
        claim__in=claims, phase=phase, submitted_at__isnull=False, verdict__isnull=False
    ).values_list("claim_id", "is_agreement_sample", "task__annotator__username", "verdict")


def _checks(claims: QuerySet[Claim], phase: int) -> QuerySet[QualityCheck, tuple[Any, ...]]:
    """(claim, is sample, checker, verdict, author of the checked round, its verdict)."""
    return QualityCheck.objects.filter(
        claim__in=claims, phase=phase, submitted_at__isnull=False, verdict__isnull=False
    ).values_list(
        "claim_id",
        "is_agreement_sample",
        "task__annotator__username",
        "verdict",
        "evidence_round__task__annotator__username",
        "evidence_round__verdict",
    )


def _who(username: str | None) -> str:
    # Imported rounds have no task; they still count as one (unnamed) rater per round.
    return username or "?"


def verdict_ratings(comparison: str, claims: QuerySet[Claim]) -> list[Rating]:
    """The ratings of one comparison (see the module docstring) over these claims."""
    if comparison == "parallel_p2":
        rounds = list(_rounds(claims, Phase.QUESTIONS))
        tracks: dict[int, set[bool]] = {}
        for claim_id, sample, _, _ in rounds:
            tracks.setdefault(claim_id, set()).add(sample)
        # Claims of the agreement sample; one whose second P2 round is missing is rated
        # once, and counted as left out.
        return [
            Rating(str(claim_id), _who(who), verdict, str(claim_id))
            for claim_id, _, who, verdict in rounds
            if True in tracks[claim_id]
        ]
    if comparison in ("p2_p3", "p4_p5"):
        phase = Phase.QUALITY_CHECK if comparison == "p2_p3" else Phase.POST_CONTROL
        ratings = []
        for claim_id, sample, checker, verdict, author, shown in _checks(claims, phase):
            item = f"{claim_id}{'-sample' if sample else ''}"
            if shown:
                # A claim of the agreement sample gives two items (one per P2 track); the
                # bootstrap resamples the claim with both.
                ratings.append(Rating(item, _who(author), shown, str(claim_id)))
                ratings.append(Rating(item, _who(checker), verdict, str(claim_id)))
        return ratings
    if comparison == "first_round":
        ratings = [
            Rating(str(claim_id), _who(who), verdict, str(claim_id))
            for claim_id, _, who, verdict in _rounds(claims, Phase.QUESTIONS)
        ]
        ratings += [
            Rating(str(row[0]), _who(row[2]), row[3], str(row[0]))
            for row in _checks(claims, Phase.QUALITY_CHECK)
        ]
        return ratings
    raise ValueError(f"unknown comparison {comparison!r}; choose from {', '.join(COMPARISONS)}")


def stored_ratings(comparison: str, claims: QuerySet[Claim]) -> list[Rating]:
    """The ratings of one comparison as stored when the verdicts arrived (review/stored.py):
    the same ratings `verdict_ratings` computes, read from one indexed table."""
    if comparison not in COMPARISONS:
        raise ValueError(f"unknown comparison {comparison!r}; choose from {', '.join(COMPARISONS)}")
    return [
        Rating(item, who, label, str(claim_id))
        for item, who, label, claim_id in AgreementRating.objects.filter(
            comparison=comparison, claim__in=claims
        )
        .order_by("id")
        .values_list("item", "annotator", "label", "claim_id")
    ]


def _counted(rows: QuerySet[Any], first: str, second: str) -> list[tuple[str, str]]:
    """The (first, second) pairs of these rows, counted by the database (one row per pair
    of labels) and expanded for `confusion_matrix`."""
    return [
        (a, b)
        for a, b, n in rows.values_list(first, second).annotate(n=Count("id")).order_by()
        for _ in range(n)
    ]


def confusion_matrices(claims: QuerySet[Claim]) -> list[dict[str, Any]]:
    """P1 fact-checker label vs P2, P2 vs P3 and P4 vs P5, as count tables."""
    p1_p2 = _counted(
        EvidenceRound.objects.filter(
            claim__in=claims,
            phase=Phase.QUESTIONS,
            is_agreement_sample=False,
            submitted_at__isnull=False,
            verdict__isnull=False,
            claim__fact_checker_label__isnull=False,
        ),
        "claim__fact_checker_label",
        "verdict",
    )
    p2_p3, p4_p5 = (
        _counted(
            QualityCheck.objects.filter(
                claim__in=claims, phase=phase, submitted_at__isnull=False, verdict__isnull=False
            ),
            "evidence_round__verdict",
            "verdict",
        )
        for phase in sorted(BLIND_PHASES)  # P3, then P5
    )
    specs = [
        ("p1_p2", "P1 fact-checker label", "P2 verdict", p1_p2, VERDICTS, VERDICTS),
        ("p2_p3", "P2 verdict", "P3 verdict", p2_p3, VERDICTS, VERDICTS),
        ("p4_p5", "P4 verdict", "P5 verdict", p4_p5, VERDICTS, POST_CONTROL_VERDICTS),
    ]
    out = []
    for key, rows_are, columns_are, pairs, row_labels, column_labels in specs:
        # One label list for both sides keeps the matrix square; P4 never says "too vague".
        labels = column_labels if len(column_labels) > len(row_labels) else row_labels
        matrix = confusion_matrix(pairs, labels)
        out.append(
            {
                "key": key,
                "rows": rows_are,
                "columns": columns_are,
                "labels": labels,
                "matrix": matrix,
                "total": sum(map(sum, matrix)),
                "peak": max(map(max, matrix)),
                "agreeing": sum(matrix[i][i] for i in range(len(labels))),
            }
        )
    return out


# --- Evidence agreement ------------------------------------------------------------------


def qa_record(evidence: EvidenceRound) -> dict[str, Any]:
    """A QA set in the AVeriTeC JSON shape the scorer reads (questions, answers, types)."""
    return {
        "questions": [
            {
                "question": q.text,
                "answers": [
                    {
                        "answer": a.text,
                        "answer_type": a.answer_type,
                        **(
                            {"boolean_explanation": a.boolean_explanation or ""}
                            if a.answer_type == "Boolean"
                            else {}
                        ),
                    }
                    for a in q.answers.all()
                ],
            }
            for q in evidence.questions.all()
        ]
    }


def evidence_agreement_of_records(
    first: Sequence[dict[str, Any]],
    second: Sequence[dict[str, Any]],
    progress: scoring.Progress | None = None,
) -> dict[str, Any]:
    """Hungarian METEOR between two annotators' QA sets of the same claims, in order.

    `second` plays the reference, as the official evaluation's --references file: it is the
    scorer of pipeline/scoring.py, so the figures are the official ones.
    """
    if not first:
        return {"claims": 0, "q_only": None, "q_and_a": None}
    result = scoring.score(
        list(first), list(second), processes=1, progress=progress or (lambda _: None)
    )
    return {
        "claims": result.claims,
        "q_only": result.metrics["q_only"],
        "q_and_a": result.metrics["q_and_a"],
    }


def double_annotated_pairs(claims: QuerySet[Claim]) -> list[tuple[EvidenceRound, EvidenceRound]]:
    """(agreement-sample round, own round) of each claim annotated twice in P2."""
    rounds = (
        EvidenceRound.objects.filter(
            claim__in=claims, phase=Phase.QUESTIONS, submitted_at__isnull=False
        )
        .prefetch_related("questions__answers")
        .order_by("claim_id", "submitted_at")
    )
    by_claim: dict[int, dict[bool, EvidenceRound]] = {}
    for r in rounds:
        by_claim.setdefault(r.claim_id, {})[r.is_agreement_sample] = r
    return [
        (pair[True], pair[False])
        for pair in by_claim.values()
        if True in pair and False in pair and pair[False].questions.all()
    ]


def evidence_agreement(
    claims: QuerySet[Claim], progress: scoring.Progress | None = None
) -> dict[str, Any]:
    pairs = double_annotated_pairs(claims)
    return evidence_agreement_of_records(
        [qa_record(sample) for sample, _ in pairs], [qa_record(own) for _, own in pairs], progress
    )


# --- The report --------------------------------------------------------------------------


def verdict_figures(
    claims: QuerySet[Claim],
    ratings: Callable[[str, QuerySet[Claim]], list[Rating]] | None = None,
) -> dict[str, Any]:
    """Every comparison's verdict figures (kappas with bootstrap intervals, per label, per
    annotator pair) over these claims, from the stored ratings or `ratings`."""
    ratings = ratings or stored_ratings
    min_overlap = settings.AGREEMENT_MIN_PAIR_OVERLAP
    verdicts = {}
    for key, title in COMPARISONS.items():
        labels = POST_CONTROL_VERDICTS if key == "p4_p5" else VERDICTS
        figures = verdict_agreement(ratings(key, claims), labels, min_pair_overlap=min_overlap)
        verdicts[key] = {"title": title, "short": SHORT_NAMES[key], **figures}
    return verdicts


def assemble_report(
    report_filter: ReportFilter,
    verdicts: dict[str, Any],
    confusion: list[dict[str, Any]],
    evidence: dict[str, Any] | None,
    **more: Any,
) -> dict[str, Any]:
    """The report's one shape, whichever way its parts were obtained."""
    return {
        "filter": report_filter.as_dict(),
        **{
            # The headline figures, named as the ratings-file report names them.
            name: verdicts["parallel_p2"][name]
            for name in ("randolph_kappa", "fleiss_kappa", "percent_agreement", "items")
        },
        "verdicts": verdicts,
        "confusion": confusion,
        "evidence": evidence,
        **more,
    }


def agreement_report(
    report_filter: ReportFilter | None = None,
    *,
    evidence: bool = True,
    progress: scoring.Progress | None = None,
    ratings: Callable[[str, QuerySet[Claim]], list[Rating]] | None = None,
) -> dict[str, Any]:
    """Every agreement figure for the claims the filter selects, computed now.

    The surfaces read the stored figures instead (review/stored.py's `agreement_report`);
    this is their definition and the rebuild's reference. The verdict figures aggregate the
    stored ratings (`stored_ratings`); `ratings` may name another source of the same ratings
    (`verdict_ratings` computes them from the raw rows). `progress` is called with the
    number of METEOR pairs done for the evidence agreement.
    """
    report_filter = report_filter or ReportFilter()
    claims = report_filter.claims()
    return assemble_report(
        report_filter,
        verdict_figures(claims, ratings),
        confusion_matrices(claims),
        evidence_agreement(claims, progress) if evidence else None,
    )
