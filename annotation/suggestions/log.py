"""The anchoring log: each suggestion shown is one row per task, stamped with what the
annotator did with it."""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone

from annotation.models import Suggestion, Task


def show(task: Task, kind: str, items: Iterable[tuple[str, dict]]) -> list[Suggestion]:
    """The suggestion rows of these items, in order: made the first time the task is shown
    each one, the same rows (with what became of them) every later time."""
    items = list(items)
    rows = [
        Suggestion(
            task=task,
            annotator=task.annotator,
            kind=kind,
            position=position,
            text=text,
            fingerprint=Suggestion.fingerprint_of(text),
            details=details,
        )
        for position, (text, details) in enumerate(items)
    ]
    # The unique constraint makes a repeat (or a second request racing this one) a no-op.
    Suggestion.objects.bulk_create(rows, ignore_conflicts=True)
    stored = {
        s.fingerprint: s
        for s in Suggestion.objects.filter(
            task=task, kind=kind, fingerprint__in=[r.fingerprint for r in rows]
        )
    }
    unique = {r.fingerprint: None for r in rows if r.fingerprint in stored}
    return [stored[fingerprint] for fingerprint in unique]


# Keyed by the stored values (str): outcomes arrive as text from the screen and the API.
_STAMPS: dict[str, str] = {
    Suggestion.Outcome.ACCEPTED: "accepted_at",
    Suggestion.Outcome.EDITED: "edited_at",
    Suggestion.Outcome.IGNORED: "ignored_at",
}
# An outcome never goes back: edited implies accepted; an accepted one is not "ignored".
_RANK: dict[str, int] = {
    Suggestion.Outcome.SHOWN: 0,
    Suggestion.Outcome.IGNORED: 1,
    Suggestion.Outcome.ACCEPTED: 2,
    Suggestion.Outcome.EDITED: 3,
}


def record_outcome(suggestion: Suggestion, outcome: str, final_text: str = "") -> Suggestion:
    """Stamp what the annotator did with a suggestion; repeats and step-backs change nothing."""
    if outcome not in _STAMPS:
        raise ValueError(f"unknown suggestion outcome {outcome!r}")
    now = timezone.now()
    fields: list[str] = []
    stamp = _STAMPS[outcome]
    if getattr(suggestion, stamp) is None:
        setattr(suggestion, stamp, now)
        fields.append(stamp)
    if outcome == Suggestion.Outcome.EDITED and suggestion.accepted_at is None:
        suggestion.accepted_at = now
        fields.append("accepted_at")
    if _RANK[outcome] > _RANK[suggestion.outcome]:
        suggestion.outcome = outcome
        fields.append("outcome")
    if final_text and outcome in (Suggestion.Outcome.ACCEPTED, Suggestion.Outcome.EDITED):
        suggestion.final_text = final_text
        fields.append("final_text")
    if fields:
        suggestion.save(update_fields=fields)
    return suggestion


def ignore_the_rest(task: Task) -> int:
    """When a task is handed in, every suggestion still merely shown was ignored."""
    return Suggestion.objects.filter(task=task, outcome=Suggestion.Outcome.SHOWN).update(
        outcome=Suggestion.Outcome.IGNORED, ignored_at=timezone.now()
    )
