"""The one hand-in protocol: every save and submit of every phase (P1-P5) and every surface
(the editors' forms, htmx autosave, the save sent as a page closes, the task API) goes here.

A hand-in is what a browser tab or an API client sends for a task. Each one, in one
transaction:

1. locks the task row, so the hand-ins of two tabs are decided one after the other;
2. is checked once against the task: it must be in progress, and the sender must have seen
   its latest draft version (the check Task.save_draft makes in its conditional UPDATE);
3. is stored as a DraftRevision whatever the answer, so a refused hand-in leaves its
   content on the server: a conflict is a branch of the log, never an overwrite;
4. if accepted, becomes the task's draft; a submit is then handed to the phase (`finish`),
   whose errors keep the content as the draft, with the revision saying why.

Outcomes are DraftRevision.Outcome, plus DUPLICATE: exactly the content that was handed
in, sent again (a double click, a retried request, a tab's journal sent after the hand-in),
which answers as the hand-in did and adds no row. A submit with other content arriving
after the task closed is REFUSED_CLOSED and shown as a conflict with the real reason, never
dropped.

Screens show a refused hand-in as the conflict screen with both versions; the API answers
409 with the latest version, its content and the id of the stored revision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.formats import time_format

from annotation.models import DraftRevision, StaleDraft, Task, User
from annotation.workflow import WorkflowError

Outcome = DraftRevision.Outcome
Kind = DraftRevision.Kind
DUPLICATE = "duplicate"

# What `finish` returns when the phase asks the annotator something before handing in (P1's
# "these claims stop here", P2's confirmation screen): the content is saved, not submitted.
NOT_YET = object()
# Kinds whose identical repeats from one tab only count (a tab left open saves nothing new).
_REPEATABLE = (Kind.SAVE, Kind.CLOSE)


class Invalid(Exception):
    """`finish` refuses the content for errors the sender must fix (carried in `errors`)."""

    def __init__(self, errors: Any = None):
        self.errors = errors
        super().__init__(str(errors))


@dataclass
class HandIn:
    """What became of one hand-in."""

    outcome: str
    task: Task  # as it stands after the hand-in
    revision: DraftRevision
    result: Any = None  # what `finish` returned
    errors: Any = None  # from Invalid
    refusal: str = ""  # a WorkflowError's message

    @property
    def refused(self) -> bool:
        """Not taken: another tab saved newer work, or the task had closed."""
        return self.outcome in DraftRevision.REFUSED

    @property
    def reason(self) -> str:
        if self.task.status != Task.Status.IN_PROGRESS:
            return closed_reason(self.task)
        if self.outcome == Outcome.REFUSED_STALE:
            return (
                f"another tab or window saved newer work (version {self.task.draft_version}) "
                f"after this one was loaded (it built on version {self.revision.base_version})"
            )
        return ""


def closed_reason(task: Task) -> str:
    """Why a task no longer takes hand-ins, in the annotator's words: the real reason."""
    at = task.submitted_at or task.last_activity_at
    when = f" at {time_format(timezone.localtime(at), 'H:i')}" if at else ""
    if task.status == Task.Status.SUBMITTED:
        return f"this task was handed in from another tab or window{when}"
    if task.status == Task.Status.EXPIRED:
        minutes = int(settings.TASK_LEASE.total_seconds() // 60)
        return (
            f"its lease expired after {minutes} minutes without activity and the task "
            "went back to the pool"
        )
    if task.status == Task.Status.RELEASED:
        successor = getattr(task, "replaced_by", None)
        if successor is not None and successor.annotator_id not in (None, task.annotator_id):
            return "a manager reassigned it to another annotator"
        return "a manager released it"
    if task.status == Task.Status.CANCELLED:
        return "it is no longer needed: its claim left the work"
    return f"it is {task.get_status_display()}; only a task in progress can be submitted or saved"


def save(
    task: Task,
    content: dict[str, Any],
    *,
    version: int | None,
    author: User | None,
    tab: str = "",
    kind: str = Kind.SAVE,
    via_api: bool = False,
) -> HandIn:
    """An autosave, a close-time save, a kept or restored version: stored, never submitted."""
    return hand_in(
        task, content, version=version, author=author, tab=tab, kind=kind, via_api=via_api
    )


def hand_in(
    task: Task,
    content: dict[str, Any],
    *,
    version: int | None,
    author: User | None,
    tab: str = "",
    kind: str = Kind.SUBMIT,
    via_api: bool = False,
    finish: Callable[[Task], Any] | None = None,
    keep_as_draft: bool = True,
    locked: bool = False,
) -> HandIn:
    """Decide one hand-in and store it as a revision (see the module's docstring).

    `version` is the draft version the content builds on; None means the sender keeps no
    versions (an API client that only submits), which only a submit may do. `keep_as_draft`
    is False where the content is not in the editors' draft shape (the API's submission
    payload): it is then kept in the revision only.

    `locked` says the caller read `task` with its row lock (`lock_for_hand_in`) in the
    transaction it is still in, with its claim and article, so the hand-in is decided in
    that transaction under that lock: autosave finds the annotator's task and locks it in
    one query instead of two.
    """
    if locked and not transaction.get_connection().in_atomic_block:
        raise ValueError("a locked task must be handed in inside the transaction holding the lock")
    # No savepoint of its own under the caller's lock: it would cost two statements and
    # the caller's transaction ends with the hand-in anyway.
    with transaction.atomic(savepoint=not locked):
        return _decide(
            task if locked else lock_for_hand_in(Task.objects.filter(pk=task.pk)),
            content,
            version=version,
            author=author,
            tab=tab,
            kind=kind,
            via_api=via_api,
            finish=finish,
            keep_as_draft=keep_as_draft,
        )


def lock_for_hand_in(tasks: QuerySet[Task]) -> Task:
    """The one task of `tasks` with its row lock, and its claim and article (not locked): the
    phase's checks after the hand-in read them, and autosave runs every few seconds. Raises
    Task.DoesNotExist when there is none."""
    task: Task = (
        tasks.select_for_update(of=("self",))
        .select_related("claim", "article", "claim__article")
        .get()
    )
    return task


def _decide(
    locked: Task,
    content: dict[str, Any],
    *,
    version: int | None,
    author: User | None,
    tab: str,
    kind: str,
    via_api: bool,
    finish: Callable[[Task], Any] | None,
    keep_as_draft: bool,
) -> HandIn:
    digest = DraftRevision.pack(content)[1]
    now = timezone.now()
    # What was handed in, sent again (a double click, a retry, a journal sent after the
    # hand-in): nothing new to keep, and it answers as the hand-in did.
    if locked.status == Task.Status.SUBMITTED:
        handed = locked.revisions.filter(outcome=Outcome.SUBMITTED).first()
        if handed is not None and handed.digest == digest:
            DraftRevision.objects.filter(pk=handed.pk).update(
                repeats=handed.repeats + 1, last_at=now
            )
            return HandIn(DUPLICATE, locked, handed)
    new_version = None
    if locked.status != Task.Status.IN_PROGRESS:
        outcome = Outcome.REFUSED_CLOSED
    elif version is None and finish is None:
        outcome = Outcome.REFUSED_STALE  # a save must say what it builds on
    elif version is not None and version != locked.draft_version:
        outcome = Outcome.REFUSED_STALE
    else:
        outcome = Outcome.CURRENT
        if keep_as_draft:
            try:
                new_version = locked.save_draft(content, version=locked.draft_version)
            except StaleDraft:  # pragma: no cover - the row is locked; kept as a safeguard
                outcome = Outcome.REFUSED_STALE
        else:
            locked.touch()
    revision = _record(
        locked,
        outcome,
        kind=kind,
        author=author,
        tab=tab,
        via_api=via_api,
        base_version=version,
        version=new_version,
        content=content,
        digest=digest,
        now=now,
    )
    result = errors = None
    refusal = ""
    if outcome == Outcome.CURRENT and finish is not None:
        try:
            with transaction.atomic():
                result = finish(locked)
        except Invalid as exc:
            outcome, errors = Outcome.REFUSED_INVALID, exc.errors
        except WorkflowError as exc:
            outcome, refusal = Outcome.REFUSED_INVALID, str(exc)
        else:
            if result is not NOT_YET:
                outcome = Outcome.SUBMITTED
        if outcome != Outcome.CURRENT:
            revision.outcome = outcome
            revision.save(update_fields=["outcome"])
        locked.refresh_from_db()
    return HandIn(outcome, locked, revision, result=result, errors=errors, refusal=refusal)


def _record(
    task: Task,
    outcome: str,
    *,
    kind: str,
    author: User | None,
    tab: str,
    via_api: bool,
    base_version: int | None,
    version: int | None,
    content: dict[str, Any],
    digest: str,
    now: datetime,
) -> DraftRevision:
    tab = (tab or "")[:64]
    # With its keyframe: in the usual case (the same tab saving again) the last revision is
    # also the one the new one is stored against, so one query finds both.
    last = task.revisions.select_related("delta_of").first()
    if (
        kind in _REPEATABLE
        and last is not None
        and (last.tab, last.digest, last.kind, last.outcome) == (tab, digest, kind, outcome)
        and last.discarded_at is None
    ):
        # The same text again from the same tab: count it, keep one row.
        last.repeats += 1
        last.last_at = now
        last.version = version if version is not None else last.version
        last.save(update_fields=["repeats", "last_at", "version"])
        return last
    # Stored against the tab's last keyframe (its whole content), until the next keyframe.
    base = None
    if not tab:
        previous = None
    elif last is not None and last.tab == tab:
        previous = last
    else:
        # "task" too: the related manager sets it on each row it reads.
        previous = task.revisions.filter(tab=tab).only("pk", "task", "delta_of", "depth").first()
    if previous is not None and previous.depth + 1 < DraftRevision.KEYFRAME_EVERY:
        if previous is last:
            base = last.delta_of or last
        else:
            base = DraftRevision.objects.get(pk=previous.delta_of_id or previous.pk)
    data, _, size = DraftRevision.pack(content, base=base)
    return DraftRevision.objects.create(
        task=task,
        author=author,
        tab=tab,
        via_api=via_api,
        kind=kind,
        outcome=outcome,
        # A version no task ever had (the column's range is far beyond any) says nothing.
        base_version=base_version
        if base_version is not None and abs(base_version) < 2**31
        else None,
        version=version,
        task_status=task.status if outcome == Outcome.REFUSED_CLOSED else "",
        data=data,
        delta_of=base,
        depth=previous.depth + 1 if base is not None and previous is not None else 0,
        digest=digest,
        size=size,
        created_at=now,
        last_at=now,
    )


def unsaved_branches(task: Task, limit: int = 5) -> list[DraftRevision]:
    """Hand-ins refused since the task's draft was last saved, newest first: text from a tab
    that fell behind, kept beside the draft (not discarded by the annotator)."""
    last_saved = (
        task.revisions.filter(outcome__in=(Outcome.CURRENT, Outcome.REFUSED_INVALID))
        .values_list("last_at", flat=True)
        .first()
    )
    branches = task.revisions.kept_for_annotator().filter(outcome__in=DraftRevision.REFUSED)
    if last_saved is not None:
        branches = branches.filter(created_at__gt=last_saved)
    return list(branches[:limit])


def restore(revision: DraftRevision, *, by: User) -> HandIn:
    """Make an earlier revision the task's draft again: an explicit choice, so it builds on
    the latest version; refused only if the task is no longer in progress."""
    task = Task.objects.get(pk=revision.task_id)
    return save(task, revision.content, version=task.draft_version, author=by, kind=Kind.RESTORE)


def discard(revision: DraftRevision, *, by: User) -> None:
    """Hide a revision from its annotator's list; managers still see it."""
    DraftRevision.objects.filter(pk=revision.pk, discarded_at__isnull=True).update(
        discarded_at=timezone.now(), discarded_by=by
    )
