"""Which suggestion kinds a task may see: by phase, the batch's switches and its A/B arm."""

from __future__ import annotations

from annotation.models import SuggestionSettings, Task
from annotation.vocabulary import Phase, SuggestionKind

PHASE_KINDS: dict[int, tuple[str, ...]] = {
    Phase.NORMALISATION: (SuggestionKind.DUPLICATES, SuggestionKind.CLAIM_LABELS),
    Phase.QUESTIONS: (
        SuggestionKind.QUESTIONS,
        SuggestionKind.SEARCH_QUERY,
        SuggestionKind.SENTENCES,
    ),
    Phase.DISPUTE: (
        SuggestionKind.QUESTIONS,
        SuggestionKind.SEARCH_QUERY,
        SuggestionKind.SENTENCES,
    ),
    # P3 and P5 are blind: no entry, so no suggestion of any kind.
}


class SuggestionsUnavailable(Exception):
    """The pool has not been built yet, or the kind is off for this task."""


def batch_settings(task: Task) -> SuggestionSettings | None:
    batch_id = task.article.batch_id
    if batch_id is None:
        return None
    return SuggestionSettings.objects.filter(batch_id=batch_id).first()


def kinds_for(task: Task) -> tuple[str, ...]:
    """The suggestion kinds this task may be shown; empty for blind phases and for tasks
    drawn into the A/B split's arm without suggestions."""
    kinds = PHASE_KINDS.get(task.phase, ())
    if not kinds or task.suggestion_arm == Task.SuggestionArm.WITHOUT:
        return ()
    switches = batch_settings(task)
    off = set(switches.kinds_off) if switches else set()
    return tuple(k for k in kinds if k not in off)


def require_kind(task: Task, kind: str) -> None:
    if kind not in kinds_for(task):
        raise SuggestionsUnavailable(f"no {kind} suggestions for this task")
