"""Agreement ratings kept current as verdicts arrive, and their rebuild from the raw rows.

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

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet

from annotation.models import Claim
from review.agreement import COMPARISONS, verdict_ratings
from review.models import AgreementRating


def _computed(claims: QuerySet[Claim]) -> dict[int, Counter[tuple]]:
    """Per claim, its ratings in every comparison as computed from the raw rows.

    A multiset: two checks of one round repeat its author's rating, and the figures count
    both, so the stored rows must too.
    """
    out: dict[int, Counter[tuple]] = {}
    for comparison in COMPARISONS:
        for r in verdict_ratings(comparison, claims):
            out.setdefault(int(r.cluster), Counter())[
                (comparison, r.item, r.annotator, r.label)
            ] += 1
    return out


def _rows(claim_id: int, ratings: Counter[tuple]) -> list[AgreementRating]:
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
    missing: tuple  # computed from the raw rows, not stored
    extra: tuple  # stored, not in the raw rows

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
        stored: dict[int, Counter[tuple]] = {}
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


def on_verdict_saved(sender, instance, **kwargs) -> None:
    if instance.submitted_at is not None:
        refresh_claims([instance.claim_id])
