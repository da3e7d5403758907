"""What the apps above annotation bring to a phase, looked up by phase.

annotation hands out tasks of all five phases and dispatches them by phase (task page,
autosave, workflow, task API), but the blind checks (P3, P5) are review's: their screen,
how their draft is read, how a check is stored and the API's shapes for them. review builds
on annotation, so annotation must not import it; instead review registers its parts here
when Django starts (review/apps.py), and annotation asks `parts_of(phase)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured

from annotation.vocabulary import Phase

if TYPE_CHECKING:
    from django.http import HttpResponse, QueryDict
    from rest_framework.serializers import Serializer

    from annotation.http import AuthenticatedHttpRequest
    from annotation.models import Claim, EvidenceRound, Task
    from annotation.submissions import QualityVerdict


@dataclass(frozen=True)
class PhaseParts:
    """Everything annotation needs of a phase another app owns."""

    # The editor of a task in progress (GET /annotate/tasks/<id>/).
    screen: Callable[[AuthenticatedHttpRequest, Task], HttpResponse]
    # An autosave post as the draft stored on the task.
    draft_from_post: Callable[[QueryDict], dict]
    # Check the hand-in against the phase's rules and store it; raises WorkflowError.
    store: Callable[[Task, Claim, EvidenceRound, QualityVerdict], Any]
    # The task API's payload for a hand-in, and the shape of what it produced.
    submit_serializer: type[Serializer]
    result_serializer: type[Serializer]


_registered: dict[int, PhaseParts] = {}


def register(phase: int, parts: PhaseParts) -> None:
    """Called once per phase from the owning app's AppConfig.ready()."""
    _registered[Phase(phase)] = parts


def parts_of(phase: int) -> PhaseParts:
    try:
        return _registered[Phase(phase)]
    except KeyError:
        raise ImproperlyConfigured(
            f"nothing registered for {Phase(phase).label}: is the app that owns it "
            "(review for P3 and P5) in INSTALLED_APPS?"
        ) from None


def registered() -> dict[int, PhaseParts]:
    """Every phase registered so far, in phase order."""
    return dict(sorted(_registered.items()))
