"""Figures for the managers' suggestions page: acceptance per kind and the A/B split."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Avg, Count, F, Q, QuerySet

from annotation.models import EvidenceRound, Suggestion, Task
from annotation.phases import review_reads
from annotation.vocabulary import Phase, SuggestionKind


@dataclass(frozen=True)
class KindRate:
    kind: str
    label: str
    shown: int
    accepted: int
    edited: int
    ignored: int

    @property
    def acceptance(self) -> float:
        return self.accepted / self.shown if self.shown else 0.0


def acceptance_rates(suggestions=None) -> list[KindRate]:
    """Per kind: shown, accepted (edited ones included), edited, ignored."""
    suggestions = suggestions if suggestions is not None else Suggestion.objects.all()
    counts = {
        row["kind"]: row
        for row in suggestions.values("kind").annotate(
            shown=Count("id"),
            accepted=Count("id", filter=Q(accepted_at__isnull=False)),
            edited=Count("id", filter=Q(edited_at__isnull=False)),
            ignored=Count("id", filter=Q(outcome=Suggestion.Outcome.IGNORED)),
        )
    }
    return [
        KindRate(
            kind,
            label,
            counts.get(kind, {}).get("shown", 0),
            counts.get(kind, {}).get("accepted", 0),
            counts.get(kind, {}).get("edited", 0),
            counts.get(kind, {}).get("ignored", 0),
        )
        for kind, label in SuggestionKind.choices
    ]


@dataclass(frozen=True)
class ArmReport:
    arm: str
    tasks: int
    mean_minutes: float | None
    checked: int  # evidence rounds that got a quality check
    agreeing: int  # ... whose check reached the same verdict

    @property
    def agreement(self) -> float | None:
        return self.agreeing / self.checked if self.checked else None


def ab_tasks() -> QuerySet[Task]:
    """Handed-in P2/P4 tasks that were drawn into an arm of an A/B split, split on or off."""
    return Task.objects.filter(
        phase__in=(Phase.QUESTIONS, Phase.DISPUTE),
        status=Task.Status.SUBMITTED,
        suggestion_arm__in=(Task.SuggestionArm.WITH, Task.SuggestionArm.WITHOUT),
    ).exclude(opened_at=None)


def ab_report(tasks: QuerySet[Task] | None = None) -> list[ArmReport]:
    """Time per submitted P2/P4 task and P3 agreement, per arm recorded on the tasks."""
    tasks = tasks if tasks is not None else ab_tasks()
    reports = []
    for arm in (Task.SuggestionArm.WITH, Task.SuggestionArm.WITHOUT):
        chosen = tasks.filter(suggestion_arm=arm)
        duration = chosen.aggregate(mean=Avg(F("submitted_at") - F("opened_at")))["mean"]
        rounds = EvidenceRound.objects.filter(task__in=chosen)
        checked = review_reads().checked_rounds(rounds)  # checks are review's
        agreeing = review_reads().agreeing_rounds(checked)
        reports.append(
            ArmReport(
                str(arm.label),
                chosen.count(),
                duration / timedelta(minutes=1) if duration is not None else None,
                checked.count(),
                agreeing.count(),
            )
        )
    return reports
