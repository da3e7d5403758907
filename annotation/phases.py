"""Each phase is one row: the parts of it that annotation dispatches, looked up by phase.

annotation hands out tasks of all five phases and dispatches them by phase (task page,
autosave, conflict screen, workflow, task API). Each phase registers its parts here when
Django starts: P1, P2 and P4 from annotation's AppConfig (annotation/apps.py), the blind
checks P3 and P5 from review's (review/apps.py), since review builds on annotation and
annotation must not import it. Every dispatch site asks `parts_of(task.phase)`; adding a
phase is adding a row. tests/architecture/test_phase_dispatch.py keeps phase-number
dispatch out of the rest of the code.

review also registers what annotation needs to read of review's checks (`ReviewReads`),
so annotation never touches review's models or their reverse relations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured

from annotation.vocabulary import Phase

if TYPE_CHECKING:
    from django.db.models import QuerySet
    from django.http import HttpResponse, QueryDict
    from rest_framework.serializers import Serializer

    from annotation.http import AuthenticatedHttpRequest
    from annotation.models import Claim, EvidenceRound, Task
    from annotation.submissions import QualityVerdict


def _nothing(task: Task, *args: Any) -> dict[str, Any]:
    return {}


def _nothing_produced(task: Task) -> None:
    return None


def no_evidence(task: Task) -> EvidenceRound | None:
    return None


@dataclass(frozen=True)
class PhaseParts:
    """Everything annotation needs to know of one phase."""

    # The editor of a task in progress (GET /annotate/tasks/<id>/).
    screen: Callable[[AuthenticatedHttpRequest, Task], HttpResponse]
    # An autosave post as the draft stored on the task.
    draft_from_post: Callable[[QueryDict], dict[str, Any]]
    # A draft as (label, value, form field) rows, for the side-by-side conflict screen.
    draft_summary: Callable[[dict[str, Any]], list[tuple[str, str, str]]]
    # The workflow's hand-in of the phase (annotation/workflow.py); locks, checks, stores.
    submit: Callable[[Task, Any], Any]
    # The task API: the task page, the payload of a hand-in, the shape of what it produced.
    task_serializer: type[Serializer[Any]]
    submit_serializer: type[Serializer[Any]]
    result_serializer: type[Serializer[Any]]
    # The task API's hand-in, when the phase takes more than one kind of payload (P1 also
    # takes a report); by default the payload goes to `submit` and the result is shaped.
    api_submit: Callable[[Task, Serializer[Any]], dict[str, Any]] | None = None
    # The QA pairs a task of the phase checks or revises (Task.evidence_shown).
    evidence_shown: Callable[[Task], EvidenceRound | None] = no_evidence
    # Hints refreshed beside the editor after an autosave (context for `save_status_part`),
    # and the template part (out-of-band swaps) of annotation/_save_status.html that shows them.
    draft_warnings: Callable[[Task, dict[str, Any]], dict[str, Any]] = _nothing
    save_status_part: str = ""
    # Whether the unsent draft of a lapsed or released task goes to its replacement. Not for
    # the blind checks: a verdict must be the checker's own, so the next checker starts
    # blank and the lapsed draft stays on the old task for managers to see.
    draft_travels: bool = True
    # What a submitted task produced (what a repeated hand-in returns), or None.
    produced: Callable[[Task], Any] = _nothing_produced
    # What the read-only page of a submitted task shows of the annotator's own work.
    handed_in: Callable[[Task], dict[str, Any]] = _nothing
    # The blind checks: judge and store a check (review/checks.py); the claim's moves stay
    # in annotation/workflow.py.
    store: Callable[[Task, Claim, EvidenceRound, QualityVerdict], Any] | None = None


@dataclass(frozen=True)
class ReviewReads:
    """What annotation reads of review's checks, registered by review."""

    # The latest submitted dataset check (P3 or P5) of a claim, with its flags, or None.
    latest_check: Callable[[Claim], Any]
    # Evidence rounds of `rounds` that a check has judged, and those whose check agreed.
    checked_rounds: Callable[[QuerySet[EvidenceRound]], QuerySet[EvidenceRound]]
    agreeing_rounds: Callable[[QuerySet[EvidenceRound]], QuerySet[EvidenceRound]]


_registered: dict[int, PhaseParts] = {}
_review_reads: list[ReviewReads] = []


def register(phase: int, parts: PhaseParts) -> None:
    """Called once per phase from the owning app's AppConfig.ready()."""
    _registered[Phase(phase)] = parts


def parts_of(phase: int) -> PhaseParts:
    try:
        return _registered[Phase(phase)]
    except KeyError:
        raise ImproperlyConfigured(
            f"nothing registered for {Phase(phase).label}: is the app that owns it "
            "(annotation for P1, P2 and P4, review for P3 and P5) in INSTALLED_APPS?"
        ) from None


def registered() -> dict[int, PhaseParts]:
    """Every phase registered so far, in phase order."""
    return dict(sorted(_registered.items()))


def register_review_reads(reads: ReviewReads) -> None:
    _review_reads[:] = [reads]


def review_reads() -> ReviewReads:
    if not _review_reads:
        raise ImproperlyConfigured("review registers what annotation reads of its checks")
    return _review_reads[0]


# Every phase number in order, for code outside annotation that loops over the phases
# (reporting, charts, demo data, benchmarks) instead of writing range(1, 6) again.
PHASES: tuple[int, ...] = tuple(Phase.values)
