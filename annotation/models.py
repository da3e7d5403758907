"""Articles, claims, tasks and the evidence (question-answer) rounds of P2 and P4.

A claim's journey: an Article is normalised in P1 into Claims; each claim then gets tasks in
P2 (evidence round), P3 (quality check), and on disagreement P4 and P5. The rules that move
claims between phases live in annotation/workflow.py; here are single-object behaviours.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import zlib

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.phases import parts_of
from annotation.signals import claim_accepted
from annotation.usernames import by_skeleton, username_problem
from annotation.vocabulary import (
    BLIND_PHASES,
    AnswerType,
    Phase,
    SourceMedium,
    SuggestionKind,
    Verdict,
    exclusion_reason,
)
from search_proxy.service import SearchScope

# --- People ----------------------------------------------------------------------------


class WorkflowError(Exception):
    """An action the workflow does not allow in the current state (says which and why)."""

    code = "workflow"


class InvalidTransition(WorkflowError):
    """A move that the object's transition table does not declare."""

    code = "invalid_transition"


class User(AbstractUser):
    """An account on the platform; its role decides which pages it sees."""

    class Role(models.TextChoices):
        ANNOTATOR = "annotator"
        MANAGER = "manager"
        RESEARCHER = "researcher"

    role = models.CharField(max_length=20, choices=Role.choices, default=Role.ANNOTATOR)
    qualified_phases = models.JSONField(
        default=list,
        blank=True,
        help_text="Phases (1-5) this annotator may receive tasks for.",
    )
    # Guided tours already dismissed, e.g. ["p1", "p2"], so each shows only once.
    completed_tours = models.JSONField(default=list, blank=True)
    # Set for accounts made with a generated password: until the owner picks their own, the
    # site only offers the password-change page and the API gives them no token.
    must_change_password = models.BooleanField(default=False)

    class Meta:
        db_table = "annotation_user"

    def save(self, *args, **kwargs) -> None:
        # set_password() leaves the new password in _password until the save; a changed
        # password ends every API token, as Django's session hash ends other sessions.
        # _password is AbstractBaseUser's own attribute; the stub does not declare it.
        password_changed = self._password is not None and self.pk is not None  # type: ignore[attr-defined]
        super().save(*args, **kwargs)
        # A deactivated account keeps no token: one that only answered 401 while the
        # account was off would work again the moment it is reactivated.
        if password_changed or not self.is_active:
            self.revoke_api_tokens()

    def clean(self) -> None:
        # Django stores the NFKC form; a new or renamed account must also not look like
        # another one (annotation/usernames.py). Admin forms call this.
        super().clean()
        stored = User.objects.filter(pk=self.pk).values_list("username", flat=True).first()
        if self.username != stored:
            others = User.objects.exclude(pk=self.pk).values_list("username", flat=True)
            if problem := username_problem(self.username, by_skeleton(others)):
                raise ValidationError({"username": problem})

    def revoke_api_tokens(self) -> None:
        # knox's AuthToken.user reverse relation; knox has no type information.
        self.auth_token_set.all().delete()  # type: ignore[attr-defined]

    def chose_own_password(self) -> None:
        """The owner has replaced a one-time password: the account opens fully."""
        if self.must_change_password:
            self.must_change_password = False
            self.save(update_fields=["must_change_password"])

    @property
    def is_manager(self) -> bool:
        return self.role == self.Role.MANAGER or self.is_superuser

    @property
    def is_researcher(self) -> bool:
        return self.role == self.Role.RESEARCHER

    def is_qualified_for(self, phase: int) -> bool:
        """The one rule of who may receive tasks of a phase (assignment and reports ask it)."""
        if not self.is_active or int(phase) not in self.qualified_phases:
            return False
        if self.is_manager and int(phase) in BLIND_PHASES:
            return settings.MANAGERS_TAKE_BLIND_TASKS
        return True

    @property
    def panel(self) -> tuple[str, str]:
        """The URL name and title of the page this role works from; signing in lands there."""
        if self.is_manager:
            return "annotation:manager-panel", "manager panel"
        if self.is_researcher:
            return "exports:export-list", "dataset exports"
        return "annotation:control-panel", "annotation panel"

    @property
    def takes_handed_out_work(self) -> bool:
        """Only annotators receive handed-out work; a manager holding a task hides it."""
        return self.is_active and self.role == self.Role.ANNOTATOR and not self.is_superuser


class PhaseQuota(models.Model):
    """The most tasks of one phase a manager lets one annotator take."""

    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quotas"
    )
    phase = models.PositiveSmallIntegerField(choices=Phase.choices)
    limit = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "phase"], name="one_quota_per_phase")
        ]

    def __str__(self) -> str:
        return f"{self.annotator} · P{self.phase} ≤ {self.limit}"


# --- Intake ----------------------------------------------------------------------------


class Batch(models.Model):
    """A group of articles or claims that arrived together (an intake file, a dataset)."""

    class Kind(models.TextChoices):
        INTAKE = "intake", "article intake"
        DATASET = "dataset", "dataset import"

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    source_file = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "batches"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def name_taken(name: str) -> str | None:
        """Why `name` cannot name a new batch (another batch has it), or None. The one
        message for the intake page and the import commands alike."""
        if Batch.objects.filter(name=name).exists():
            return f"A batch named {name!r} exists already."
        return None

    @staticmethod
    def default_name(file_name: str) -> str:
        # Microseconds keep two quick imports of files with the same name apart.
        return f"{file_name} {timezone.now():%Y-%m-%d %H:%M:%S.%f}"


class Article(models.Model):
    """A fact-checking article: the input of P1 and the context of P2 and P4."""

    class State(models.TextChoices):
        AWAITING_NORMALISATION = "awaiting_normalisation", "waiting for P1"
        NORMALISED = "normalised", "split into claims"
        SKIPPED = "skipped", "reported and skipped"
        IMPORTED = "imported", "imported with its claims"

    class SkipReason(models.TextChoices):
        PAYWALL = "paywall", "behind a paywall"
        NOT_FOUND = "not_found", "404 or error page"
        DOES_NOT_LOAD = "does_not_load", "does not load"
        OTHER = "other", "other"

    # The URL exactly as received (often a web.archive.org capture); exports write it back.
    url = models.TextField()
    # The live page's URL, normalised: two intake rows with the same value are one article.
    normalized_url = models.CharField(max_length=2048, unique=True)
    title = models.TextField(blank=True)
    publisher = models.CharField(max_length=300, blank=True)
    published_on = models.DateField(null=True, blank=True)
    # ClaimReview metadata from the intake file, shown to the P1 annotator as a starting point.
    claimreview_claim = models.TextField(blank=True)
    claimreview_claimant = models.CharField(max_length=300, blank=True)
    claimreview_date = models.DateField(null=True, blank=True)
    claimreview_rating = models.CharField(max_length=200, blank=True)

    batch = models.ForeignKey(
        Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="articles"
    )
    state = models.CharField(
        max_length=30, choices=State.choices, default=State.AWAITING_NORMALISATION
    )
    skip_reason = models.CharField(max_length=20, choices=SkipReason.choices, blank=True)
    skip_note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["state", "created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(state="skipped") | Q(skip_reason=""),
                name="skip_reason_only_when_skipped",
            ),
            models.CheckConstraint(
                condition=~Q(state="skipped") | ~Q(skip_reason=""),
                name="skipped_article_has_reason",
            ),
        ]

    # The moves P1 makes (annotation/workflow.py); intake and dataset import create articles
    # in their first state.
    # Keyed by the stored value (str), as the field reads back.
    TRANSITIONS: dict[str, frozenset[str]] = {
        State.AWAITING_NORMALISATION: frozenset({State.NORMALISED, State.SKIPPED}),
    }

    def __str__(self) -> str:
        return self.title or self.url

    def check_move(self, state: str) -> None:
        if state not in self.TRANSITIONS.get(self.state, ()):
            raise InvalidTransition(
                f"article {self.pk} is {self.get_state_display()}; it cannot become "
                f"{Article.State(state).label}"
            )

    def move_to(self, state: str, *, task: Task, reason: str) -> Transition:
        """Move along the table above and record the move, made by `task`'s hand-in."""
        self.check_move(state)
        from_state, self.state = self.state, state
        self.save()
        return Transition.objects.create(
            article=self,
            from_state=from_state,
            to_state=state,
            task=task,
            actor=task.annotator,
            reason=reason,
        )


# --- Claims ----------------------------------------------------------------------------


class ClaimQuerySet(models.QuerySet):
    def reported(self) -> ClaimQuerySet:
        """Claims an annotator reported in P2 or P4 ("report & skip", workflow.report_claim):
        told apart from claims excluded in P1 for their kind by the phase of the task that
        moved them, as recorded on the transition, never by the wording of the reason."""
        return self.filter(
            Exists(
                Transition.objects.filter(
                    claim=OuterRef("pk"),
                    to_state=Claim.State.EXCLUDED,
                    task__phase__in=(Phase.QUESTIONS, Phase.DISPUTE),
                )
            )
        )

    def accepted(self) -> ClaimQuerySet:
        return self.filter(state=Claim.State.ACCEPTED)


class Claim(models.Model):
    """One normalised claim with its AVeriTeC metadata and where it is in the workflow."""

    class State(models.TextChoices):
        QUESTIONS = "questions", "waiting for P2"
        QUALITY_CHECK = "quality_check", "waiting for P3"
        DISPUTE = "dispute", "waiting for P4"
        POST_CONTROL = "post_control", "waiting for P5"
        ACCEPTED = "accepted", "accepted"
        DISCARDED = "discarded", "discarded"
        EXCLUDED = "excluded", "excluded after P1"

    class Origin(models.TextChoices):
        ANNOTATED = "annotated", "annotated on the platform"
        IMPORTED = "imported", "imported from a dataset file"

    article = models.ForeignKey(Article, on_delete=models.PROTECT, related_name="claims")
    position = models.PositiveSmallIntegerField(
        default=0, help_text="Order among the claims split from the same article."
    )
    text = models.TextField()
    # The fact-checker's verdict as read by the P1 annotator; never shown in blind phases.
    fact_checker_label = models.CharField(
        max_length=40, choices=Verdict.choices, null=True, blank=True
    )
    claim_date = models.DateField()
    # These are nullable text on purpose: the dataset distinguishes null from "".
    speaker = models.TextField(null=True, blank=True)
    reporting_source = models.TextField(null=True, blank=True)
    original_claim_url = models.TextField(null=True, blank=True)
    cached_original_claim_url = models.TextField(null=True, blank=True)
    media_url = models.TextField(blank=True)
    image_transcription = models.TextField(blank=True)
    location_iso_code = models.CharField(max_length=2, null=True, blank=True)
    claim_types = models.JSONField(default=list)
    fact_checking_strategies = models.JSONField(default=list)

    state = models.CharField(max_length=20, choices=State.choices, default=State.QUESTIONS)
    exclusion_reason = models.TextField(blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.ANNOTATED)
    is_agreement_sample = models.BooleanField(
        default=False, help_text="Gets an extra independent P2 and P3 for agreement figures."
    )

    # The dataset's outcome, set when the claim is accepted.
    label = models.CharField(max_length=40, choices=Verdict.choices, null=True, blank=True)
    justification = models.TextField(null=True, blank=True)
    required_reannotation = models.BooleanField(default=False)
    accepted_at = models.DateTimeField(null=True, blank=True)

    # Imported records: their position in the file, the order of their keys (a missing key
    # stays missing on export) and any extra top-level keys, so the export is exact.
    dataset_position = models.PositiveIntegerField(null=True, blank=True)
    json_keys = models.JSONField(null=True, blank=True)
    json_extra = models.JSONField(null=True, blank=True)

    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    objects = ClaimQuerySet.as_manager()

    class Meta:
        ordering = ["article_id", "position", "id"]
        indexes = [models.Index(fields=["state", "created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["article", "position"], name="one_claim_per_article_position"
            ),
            models.CheckConstraint(
                condition=~Q(state="accepted") | Q(label__isnull=False),
                name="accepted_claim_has_label",
            ),
            models.CheckConstraint(
                condition=~Q(state="excluded") | ~Q(exclusion_reason=""),
                name="excluded_claim_has_reason",
            ),
        ]

    # The state diagram of annotation/workflow.py as data: every allowed move, and the
    # phase whose hand-in makes it (None: a manager, or a dataset import). "" is a claim
    # coming into being.
    TRANSITIONS: dict[tuple[str, str], int | None] = {
        ("", State.QUESTIONS): Phase.NORMALISATION,
        ("", State.EXCLUDED): Phase.NORMALISATION,
        ("", State.ACCEPTED): None,
        (State.QUESTIONS, State.QUALITY_CHECK): Phase.QUESTIONS,
        (State.QUESTIONS, State.EXCLUDED): Phase.QUESTIONS,
        (State.QUALITY_CHECK, State.ACCEPTED): Phase.QUALITY_CHECK,
        (State.QUALITY_CHECK, State.DISPUTE): Phase.QUALITY_CHECK,
        (State.DISPUTE, State.POST_CONTROL): Phase.DISPUTE,
        (State.DISPUTE, State.EXCLUDED): Phase.DISPUTE,
        (State.POST_CONTROL, State.ACCEPTED): Phase.POST_CONTROL,
        (State.POST_CONTROL, State.DISCARDED): Phase.POST_CONTROL,
        (State.DISCARDED, State.DISPUTE): None,
    }

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def _from_state(self) -> str:
        return "" if self._state.adding else self.state

    def _refuse(self, what: str) -> InvalidTransition:
        now = "new" if self._state.adding else self.get_state_display()
        return InvalidTransition(f"claim {self.pk or '(new)'} is {now}; {what}")

    def check_turn(self, task: Task) -> None:
        """Refuse a hand-in of `task` unless its phase may move the claim on from here."""
        moves = [key for key, phase in self.TRANSITIONS.items() if phase == task.phase]
        if not any(from_state == self._from_state for from_state, _ in moves):
            raise self._refuse(f"a {Phase(task.phase).label} hand-in does not move it")

    def move_to(
        self,
        state: str,
        *,
        task: Task | None = None,
        actor: User | None = None,
        reason: str = "",
    ) -> Transition:
        """Move along TRANSITIONS, made by `task`'s hand-in (or a manager's action or an
        import when None), and record the move. A new claim is saved by its first move."""
        key = (self._from_state, state)
        phase = task.phase if task is not None else None
        if key not in self.TRANSITIONS or self.TRANSITIONS[key] != phase:
            who = f"a {Phase(phase).label} hand-in" if phase else "a manager"
            raise self._refuse(f"{who} cannot move it to {Claim.State(state).label}")
        from_state, self.state = key[0], state
        self.save()
        return Transition.objects.create(
            claim=self, from_state=from_state, to_state=state, task=task, actor=actor, reason=reason
        )

    def accept(self, verdict: str, justification: str, *, task: Task, reannotated: bool) -> None:
        """Into the dataset with the verdict both rounds agree on, as `task`'s check (P3, or
        P5 after a dispute: `reannotated`) hands it in. Receivers of claim_accepted (webhooks)
        write in the same transaction."""
        self.label = verdict
        self.justification = justification
        self.required_reannotation = reannotated
        self.accepted_at = timezone.now()
        self.move_to(Claim.State.ACCEPTED, task=task, actor=task.annotator, reason="verdicts agree")
        claim_accepted.send(sender=Claim, claim=self)

    def exclusion_reason_for_choices(self) -> str:
        """Why this claim's types/strategies keep it out of P2 and later, or ""."""
        return exclusion_reason(self.claim_types, self.fact_checking_strategies)

    def dataset_evidence(self) -> EvidenceRound | None:
        """The QA pairs that go into the dataset: P4's when the claim was disputed."""
        return (
            self.evidence_rounds.filter(is_agreement_sample=False)
            .exclude(submitted_at__isnull=True)
            .order_by("-phase", "-submitted_at")
            .first()
        )

    def search_scope(self, task: Task | None = None) -> SearchScope:
        """What a search for this claim's evidence is bounded by: pages before the claim
        date, its country first, never its own article; logged against `task`."""
        return SearchScope(
            claim_date=self.claim_date,
            country=self.location_iso_code or None,
            article_url=self.article.url,
            article_normalized_url=self.article.normalized_url,
            claim_id=self.pk,
            task_id=task.pk if task is not None else None,
        )


# --- Tasks -----------------------------------------------------------------------------


class TaskQuerySet(models.QuerySet):
    def open(self) -> TaskQuerySet:
        return self.filter(status__in=Task.OPEN_STATUSES)

    def of_annotator(self, annotator) -> TaskQuerySet:
        """Every task naming `annotator`, in any status (not only those held: see held())."""
        return self.filter(annotator=annotator)

    def held(self) -> TaskQuerySet:
        """Tasks an annotator holds now: assigned to them or in progress."""
        return self.filter(status__in=Task.HELD_STATUSES)

    def counted_for_quota(self) -> TaskQuerySet:
        return self.filter(status__in=Task.QUOTA_STATUSES)


class Task(models.Model):
    """One annotator's turn at one article (P1) or claim (P2-P5).

    A task that lapses or is reassigned keeps its annotator and draft as history and a new
    task goes back to the pool, so "who has seen this article" is simply the set of tasks.
    """

    class Status(models.TextChoices):
        POOLED = "pooled", "waiting for an annotator"
        ASSIGNED = "assigned", "assigned, not opened yet"
        IN_PROGRESS = "in_progress", "in progress"
        SUBMITTED = "submitted", "submitted"
        EXPIRED = "expired", "lease expired"
        RELEASED = "released", "released by a manager"
        CANCELLED = "cancelled", "no longer needed"

    # Held by an annotator now; open (held or waiting); counted against a phase quota (held
    # now or handed in). The one definition each: assignment's SQL is written from them too.
    HELD_STATUSES = (Status.ASSIGNED, Status.IN_PROGRESS)
    OPEN_STATUSES = (Status.POOLED, *HELD_STATUSES)
    QUOTA_STATUSES = (*HELD_STATUSES, Status.SUBMITTED)
    # The moves of a task, made by the methods below (and by report_claim's cancelling of a
    # claim's other open tasks).
    TRANSITIONS: dict[str, frozenset[str]] = {
        Status.POOLED: frozenset({Status.ASSIGNED, Status.IN_PROGRESS, Status.CANCELLED}),
        Status.ASSIGNED: frozenset({Status.IN_PROGRESS, Status.RELEASED, Status.CANCELLED}),
        Status.IN_PROGRESS: frozenset(
            {Status.SUBMITTED, Status.EXPIRED, Status.RELEASED, Status.CANCELLED}
        ),
        # Back to its annotator, while nobody took its replacement (assignment.reclaim_lapsed).
        Status.EXPIRED: frozenset({Status.IN_PROGRESS}),
    }

    phase = models.PositiveSmallIntegerField(choices=Phase.choices)
    # Always set, also for claim tasks: the same-article rule is a constraint on it.
    article = models.ForeignKey(Article, on_delete=models.PROTECT, related_name="tasks")
    claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.PROTECT, related_name="tasks"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="tasks",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.POOLED)
    is_agreement_sample = models.BooleanField(default=False)
    # Disputes and re-opened claims go before fresh work of the same phase.
    priority = models.PositiveSmallIntegerField(default=0)
    # The task this one replaces after a lapse or release: its draft is kept there.
    replaces = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaced_by"
    )

    # The annotator's unsent work; draft_version rises with each save so that a stale
    # browser tab cannot overwrite newer work.
    draft = models.JSONField(default=dict, blank=True)
    draft_version = models.PositiveIntegerField(default=0)

    class SuggestionArm(models.TextChoices):
        NONE = "", "no A/B split"
        WITH = "with", "with suggestions"
        WITHOUT = "without", "without suggestions"

    # The A/B arm, drawn once when the task is created (see save()): it decides whether the
    # task gets suggestions and is what the A/B report reads, also after the split is off.
    suggestion_arm = models.CharField(
        max_length=10, choices=SuggestionArm.choices, blank=True, default=SuggestionArm.NONE
    )

    created_at = models.DateTimeField(default=timezone.now)
    assigned_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    article_loaded_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    objects = TaskQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # The pool each "Start next" reads: only waiting tasks, in hand-out order.
            models.Index(
                fields=["phase", "-priority", "created_at", "id"],
                condition=Q(status="pooled"),
                name="task_pool",
            ),
            models.Index(fields=["annotator", "phase", "status"], name="task_by_annotator"),
            models.Index(fields=["status", "lease_expires_at"], name="task_lease"),
            # The dashboard's figures over handed-in work, filtered by hand-in date.
            models.Index(fields=["status", "submitted_at"], name="task_submitted"),
        ]
        constraints = [
            # DESIGN.md: no annotator ever sees claims of the same article twice, in any phase.
            models.UniqueConstraint(
                fields=["annotator", "article"],
                condition=Q(annotator__isnull=False),
                name="one_task_per_annotator_per_article",
            ),
            models.CheckConstraint(
                condition=(Q(phase=1) & Q(claim__isnull=True))
                | (Q(phase__gte=2) & Q(phase__lte=5) & Q(claim__isnull=False)),
                name="claim_set_exactly_for_claim_phases",
            ),
            # The statuses are spelt out here and in task_pool: Meta cannot name Task.Status
            # (the class is not built yet), and the migrations keep the same words.
            models.CheckConstraint(
                condition=Q(status__in=["pooled", "cancelled"]) | Q(annotator__isnull=False),
                name="held_task_has_annotator",
            ),
            models.CheckConstraint(
                condition=~Q(status="pooled") | Q(annotator__isnull=True),
                name="pooled_task_has_no_annotator",
            ),
        ]

    def __str__(self) -> str:
        target = f"claim {self.claim_id}" if self.claim_id else f"article {self.article_id}"
        return f"P{self.phase} · {target} · {self.get_status_display()}"

    def save(self, *args, **kwargs) -> None:
        if self._state.adding and not self.suggestion_arm:
            self.suggestion_arm = self._draw_suggestion_arm()
        super().save(*args, **kwargs)

    @property
    def is_open(self) -> bool:
        return self.status in self.OPEN_STATUSES

    @property
    def is_held(self) -> bool:
        return self.status in self.HELD_STATUSES

    def check_move(self, status: str) -> None:
        if status not in self.TRANSITIONS.get(self.status, ()):
            raise InvalidTransition(
                f"task {self.pk} is {self.get_status_display()}; it cannot become "
                f"{Task.Status(status).label}"
            )

    def start(self) -> Task:
        """Open a held task: a manager's assignment starts its lease when first opened, a
        task in progress is resumed. Conditional, so a task released or expired a moment
        ago is not revived (then the task shows its status as it is now)."""
        self.opened_at = self.opened_at or timezone.now()
        self.extend_lease()
        started = (
            Task.objects.filter(pk=self.pk)
            .held()
            .update(
                status=Task.Status.IN_PROGRESS,
                opened_at=self.opened_at,
                last_activity_at=self.last_activity_at,
                lease_expires_at=self.lease_expires_at,
            )
        )
        if started:
            self.status = Task.Status.IN_PROGRESS
        else:
            self.refresh_from_db()
        return self

    def hand_over(self, annotator: User, status: str) -> None:
        """Give a waiting task to `annotator`: assigned by a manager, or in progress at once
        ("Start next"). The caller holds the row locked."""
        self.check_move(status)
        now = timezone.now()
        self.annotator = annotator
        self.status = status
        self.assigned_at = now
        if status == Task.Status.IN_PROGRESS:
            self.opened_at = now
            self.extend_lease(now)
        # Only the hand-over fields: "Start next" is the hottest write of the platform.
        self.save(
            update_fields=[
                "annotator",
                "status",
                "assigned_at",
                "opened_at",
                "last_activity_at",
                "lease_expires_at",
            ]
        )

    def close(self) -> None:
        """Handed in: the task takes no more work (the workflow locked it first)."""
        self.check_move(Task.Status.SUBMITTED)
        now = timezone.now()
        self.status = Task.Status.SUBMITTED
        self.submitted_at = now
        self.last_activity_at = now
        self.lease_expires_at = None
        self.save()

    def release(self) -> Task:
        """Taken from its annotator by a manager; returns the fresh copy left in the pool."""
        return self._give_back(Task.Status.RELEASED)

    def expire(self) -> Task:
        """Idle past its lease; returns the fresh copy left in the pool."""
        return self._give_back(Task.Status.EXPIRED)

    def reclaim(self) -> None:
        """A lapsed task back with its annotator, draft and version intact."""
        self.check_move(Task.Status.IN_PROGRESS)
        self.status = Task.Status.IN_PROGRESS
        self.extend_lease()
        self.save(update_fields=["status", "last_activity_at", "lease_expires_at"])

    def _give_back(self, status: str) -> Task:
        # The task keeps its annotator and draft as history; the copy is new work.
        self.check_move(status)
        self.status = status
        self.save(update_fields=["status"])
        return Task.objects.create(
            phase=self.phase,
            article_id=self.article_id,
            claim_id=self.claim_id,
            priority=self.priority,
            is_agreement_sample=self.is_agreement_sample,
            replaces=self,
            draft=self.draft if parts_of(self.phase).draft_travels else {},
        )

    def _draw_suggestion_arm(self) -> str:
        """The arm of a new task: its predecessor's (the same work changing hands), else a
        fair coin while its batch runs an A/B split, else none. The blind phases never get
        suggestions, so they are in no arm."""
        if self.phase in BLIND_PHASES:
            return self.SuggestionArm.NONE
        if self.replaces_id is not None:
            return (
                Task.objects.filter(pk=self.replaces_id)
                .values_list("suggestion_arm", flat=True)
                .first()
                or ""
            )
        batch_id = Article.objects.filter(pk=self.article_id).values_list("batch_id", flat=True)
        split = SuggestionSettings.objects.filter(batch_id__in=batch_id, ab_split=True).exists()
        if not split:
            return self.SuggestionArm.NONE
        return self.SuggestionArm.WITH if secrets.randbelow(2) else self.SuggestionArm.WITHOUT

    def save_draft(self, draft: dict, *, version: int) -> int:
        """Store the annotator's unsent work if `version` is the latest one they saw.

        Returns the new version. Raises StaleDraft when another tab saved since, so newer
        work is never overwritten silently.
        """
        now = timezone.now()
        updated = Task.objects.filter(
            pk=self.pk, draft_version=version, status=Task.Status.IN_PROGRESS
        ).update(
            draft=draft,
            draft_version=models.F("draft_version") + 1,
            last_activity_at=now,
            lease_expires_at=now + settings.TASK_LEASE,
        )
        if not updated:
            self.refresh_from_db(fields=["draft", "draft_version", "status"])
            raise StaleDraft(self)
        self.draft, self.draft_version = draft, version + 1
        return self.draft_version

    def evidence_shown(self) -> EvidenceRound | None:
        """The QA pairs this task checks (P3, P5) or revises (P4); None for P1 and P2.

        P3 checks the P2 pairs of its own track (the agreement sample has its own), P5 the
        P4 pairs, and P4 starts from the claim's latest dataset pairs. Once submitted, the
        answer is what was actually shown.
        """
        if self.claim_id is None:
            return None
        # Each phase names its pairs (annotation/phases.py): the checks' are review's.
        return parts_of(self.phase).evidence_shown(self)

    def search_scope(self) -> SearchScope:
        """The scope of a search from this task (P2, P4): its claim's, logged against it."""
        assert self.claim is not None  # P2 and P4 are always of a claim
        return self.claim.search_scope(task=self)

    def extend_lease(self, now=None) -> None:
        """Mark activity now; the task stays with its annotator for another lease period."""
        now = now or timezone.now()
        self.last_activity_at, self.lease_expires_at = now, now + settings.TASK_LEASE

    def touch(self) -> None:
        """Record activity, which keeps the lease alive (saved at once)."""
        self.extend_lease()
        Task.objects.filter(pk=self.pk).update(
            last_activity_at=self.last_activity_at, lease_expires_at=self.lease_expires_at
        )


class StaleDraft(Exception):
    """A draft save from a browser tab that had not seen the latest saved version."""

    def __init__(self, task: Task):
        self.task = task
        super().__init__(
            f"task {task.pk} was saved elsewhere (now version {task.draft_version}) "
            "or is no longer open"
        )


class DraftRevisionQuerySet(models.QuerySet):
    def kept_for_annotator(self) -> DraftRevisionQuerySet:
        """What the annotator's own revision list shows: all but what they discarded."""
        return self.filter(discarded_at__isnull=True)


class DraftRevision(models.Model):
    """One hand-in that reached the server: an autosave, a save sent as a page closed, a
    submit attempt, a choice on the conflict screen or a restore. Append-only: refused
    hand-ins are kept as well as accepted ones, so a conflict is a branch, never an
    overwrite (annotation/handin.py is the only writer).

    The content is stored compressed; an autosave identical to the revision just before it
    from the same tab only counts a repeat, so a tab left open costs no rows.
    """

    class Kind(models.TextChoices):
        SAVE = "save", "autosave"
        CLOSE = "close", "saved as the page closed"
        SUBMIT = "submit", "submit attempt"
        KEEP = "keep", "kept on the conflict screen"
        RESTORE = "restore", "restored from an earlier revision"

    class Outcome(models.TextChoices):
        CURRENT = "current", "became the saved draft"
        REFUSED_STALE = "refused_stale", "not saved over newer work from another tab"
        REFUSED_CLOSED = "refused_closed", "arrived after the task closed"
        REFUSED_INVALID = "refused_invalid", "saved, but not handed in: it had errors"
        SUBMITTED = "submitted", "handed in"

    REFUSED = (Outcome.REFUSED_STALE, Outcome.REFUSED_CLOSED)

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="revisions")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The browser tab (one id per page load) or API client that sent it; empty if unknown.
    tab = models.CharField(max_length=64, blank=True, default="")
    via_api = models.BooleanField(default=False)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    # The draft version the sender had seen, and the version this revision became (if any).
    base_version = models.IntegerField(null=True, blank=True)
    version = models.PositiveIntegerField(null=True, blank=True)
    # The task's status when a hand-in was refused because the task had closed: the reason.
    task_status = models.CharField(max_length=20, blank=True, default="")
    # The content as canonical JSON, zlib-compressed. A tab's revisions are compressed
    # against its last keyframe (`delta_of`, used as a preset dictionary), so a few new
    # words cost tens of bytes; every KEYFRAME_EVERY-th revision of a tab is stored whole
    # (depth 0), and `depth` counts the revisions since it.
    data = models.BinaryField()
    delta_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    depth = models.PositiveSmallIntegerField(default=0)
    digest = models.CharField(max_length=64)
    size = models.PositiveIntegerField(help_text="bytes of the content before compression")
    created_at = models.DateTimeField(default=timezone.now)
    last_at = models.DateTimeField(default=timezone.now)
    repeats = models.PositiveIntegerField(default=0)
    # "Discard" hides a revision from its annotator; managers still see it.
    discarded_at = models.DateTimeField(null=True, blank=True)
    discarded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = DraftRevisionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["task", "-created_at"], name="revision_by_task")]

    def __str__(self) -> str:
        return f"revision {self.pk} of task {self.task_id} ({self.get_outcome_display()})"

    KEYFRAME_EVERY = 16

    @staticmethod
    def canonical(content: dict) -> bytes:
        return json.dumps(
            content, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()

    @classmethod
    def pack(cls, content: dict, base: DraftRevision | None = None) -> tuple[bytes, str, int]:
        """The stored form of a content (compressed, against `base` when given), its digest
        and its size before compression."""
        raw = cls.canonical(content)
        if base is None:
            packed = zlib.compress(raw, 6)
        else:
            compressor = zlib.compressobj(6, zdict=base.raw())
            packed = compressor.compress(raw) + compressor.flush()
        return packed, hashlib.sha256(raw).hexdigest(), len(raw)

    def raw(self, keyframe: bytes | None = None) -> bytes:
        """The canonical JSON of the content; `keyframe` is its keyframe's, when known."""
        if self.delta_of_id is None:
            return zlib.decompress(bytes(self.data))
        if not keyframe:
            assert self.delta_of is not None  # delta_of_id is set
            keyframe = self.delta_of.raw()
        reader = zlib.decompressobj(zdict=keyframe)
        return reader.decompress(bytes(self.data)) + reader.flush()

    @classmethod
    def contents(cls, revisions) -> dict[int, dict]:
        """The content of many revisions, each keyframe read once."""
        keyframes: dict[int, bytes] = {}
        found = {}
        for revision in revisions:
            base = revision.delta_of_id
            if base is not None and base not in keyframes:
                keyframes[base] = cls.objects.get(pk=base).raw()
            found[revision.pk] = json.loads(revision.raw(keyframes.get(base) if base else None))
        return found

    @property
    def content(self) -> dict:
        return json.loads(self.raw())

    @property
    def is_refused(self) -> bool:
        return self.outcome in self.REFUSED


# --- Evidence (P2 and P4) ---------------------------------------------------------------


class EvidenceRound(models.Model):
    """The question-answer pairs and verdict one annotator gave a claim in P2 or P4."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="evidence_rounds")
    task = models.OneToOneField(
        Task, null=True, blank=True, on_delete=models.PROTECT, related_name="evidence_round"
    )
    phase = models.PositiveSmallIntegerField(
        choices=[(Phase.QUESTIONS, Phase.QUESTIONS.label), (Phase.DISPUTE, Phase.DISPUTE.label)]
    )
    # P4 starts from the P2 pairs; kept so a manager can see what changed.
    based_on = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="revisions"
    )
    verdict = models.CharField(max_length=40, choices=Verdict.choices, null=True, blank=True)
    claim_correction = models.TextField(blank=True)
    pairs_support_verdict = models.BooleanField(
        null=True, blank=True, help_text="The annotator's answer on the confirmation screen."
    )
    is_agreement_sample = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["claim_id", "phase", "created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(phase__in=[2, 4]), name="evidence_round_in_p2_or_p4"
            ),
        ]

    def __str__(self) -> str:
        return f"P{self.phase} evidence for claim {self.claim_id}"


class Question(models.Model):
    evidence_round = models.ForeignKey(
        EvidenceRound, on_delete=models.CASCADE, related_name="questions"
    )
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    json_keys = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["evidence_round_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["evidence_round", "position"], name="one_question_per_position"
            )
        ]

    def __str__(self) -> str:
        return self.text[:80]


class AnswerQuerySet(models.QuerySet):
    def cited_by_imported_claims(self) -> AnswerQuerySet:
        """Answers of imported, accepted claims that cite a known page, grouped by that page
        (the order search_proxy.indexing.dataset_evidence reads them in). Only accepted ones:
        the search index must never hold the answers of claims still to be annotated."""
        return (
            self.filter(
                question__evidence_round__claim__origin=Claim.Origin.IMPORTED,
                question__evidence_round__claim__state=Claim.State.ACCEPTED,
                source__isnull=False,
            )
            .select_related("source")
            .order_by("source_id", "id")
        )


class Answer(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    answer_type = models.CharField(max_length=20, choices=AnswerType.choices)
    boolean_explanation = models.TextField(null=True, blank=True)
    # The URL as the annotator gave it ("metadata" for claim metadata, "" when unanswerable).
    source_url = models.TextField(blank=True)
    source_medium = models.CharField(max_length=20, choices=SourceMedium.choices, blank=True)
    source = models.ForeignKey(
        "search_proxy.Source",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="answers",
    )
    cached_source_url = models.TextField(null=True, blank=True)
    json_keys = models.JSONField(null=True, blank=True)
    # Provenance of an extractive answer: the page snapshot it was selected from and where.
    passage_snapshot = models.ForeignKey(
        "search_proxy.FetchedPage",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    passage_start = models.PositiveIntegerField(null=True, blank=True)
    passage_end = models.PositiveIntegerField(null=True, blank=True)

    objects = AnswerQuerySet.as_manager()

    class Meta:
        ordering = ["question_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["question", "position"], name="one_answer_per_position")
        ]

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def possible_temporal_leak(self) -> bool:
        """The cited page may postdate the claim (for managers only: never on blind screens)."""
        if self.source is None:
            return False
        claim_date = self.question.evidence_round.claim.claim_date
        return self.source.possible_temporal_leak(claim_date, cited_url=self.source_url)


# --- History ---------------------------------------------------------------------------


class Transition(models.Model):
    """One recorded move of an article or claim between workflow states."""

    article = models.ForeignKey(
        Article, null=True, blank=True, on_delete=models.CASCADE, related_name="transitions"
    )
    claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.CASCADE, related_name="transitions"
    )
    task = models.ForeignKey(
        Task, null=True, blank=True, on_delete=models.SET_NULL, related_name="transitions"
    )
    from_state = models.CharField(max_length=30, blank=True)
    to_state = models.CharField(max_length=30)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(article__isnull=False) | Q(claim__isnull=False),
                name="transition_has_subject",
            )
        ]

    def __str__(self) -> str:
        return f"{self.from_state or '∅'} → {self.to_state}"

    def _state_label(self, value: str) -> str:
        # Managers read "waiting for P3", not the stored "quality_check".
        states = Claim.State if self.claim_id else Article.State
        return str(dict(states.choices).get(value, value))

    @property
    def from_label(self) -> str:
        return self._state_label(self.from_state) if self.from_state else ""

    @property
    def to_label(self) -> str:
        return self._state_label(self.to_state)


class AuditEntry(models.Model):
    """A manager's action (assignment, release, role change, re-opened claim)."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=50)
    summary = models.TextField()
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor}: {self.summary}"


class AgreementSampling(models.Model):
    """The share of new claims that get an extra, independent P2 and P3 (set by managers).

    One row; without it, AGREEMENT_SAMPLE_RATE from the settings applies.
    """

    rate = models.FloatField(help_text="Between 0 (no extra rounds) and 1 (every claim gets them).")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "agreement sampling"
        constraints = [
            models.CheckConstraint(
                condition=Q(rate__gte=0) & Q(rate__lte=1), name="sampling_rate_is_a_share"
            )
        ]

    def __str__(self) -> str:
        return f"{self.rate:.0%} of claims"

    @classmethod
    def current_rate(cls) -> float:
        row = cls.objects.order_by("-changed_at", "-id").first()
        return row.rate if row else settings.AGREEMENT_SAMPLE_RATE


# --- Pre-suggestions (annotation/suggestions/) ------------------------------------------


class SuggestionSettings(models.Model):
    """A manager's switches for one batch: kinds turned off, and the A/B split."""

    batch = models.OneToOneField(
        Batch, on_delete=models.CASCADE, related_name="suggestion_settings"
    )
    kinds_off = models.JSONField(default=list, blank=True)
    # Half the tasks (odd ids) get no suggestions, so their time and agreement can be compared.
    ab_split = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "suggestion settings"

    def __str__(self) -> str:
        return f"suggestions of {self.batch}"


class Suggestion(models.Model):
    """One suggestion an annotator was shown, and what became of it (the anchoring log)."""

    class Outcome(models.TextChoices):
        SHOWN = "shown"
        ACCEPTED = "accepted"
        EDITED = "edited"
        IGNORED = "ignored"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="suggestions")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="suggestions"
    )
    kind = models.CharField(max_length=20, choices=SuggestionKind.choices)
    position = models.PositiveSmallIntegerField(default=0)
    text = models.TextField()
    # sha256 of the text: a suggestion is shown once per task, however often it is asked for
    # (the unique constraint below; text itself may be too long for an index).
    fingerprint = models.CharField(max_length=64)
    details = models.JSONField(default=dict, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.SHOWN)
    final_text = models.TextField(blank=True)
    shown_at = models.DateTimeField(default=timezone.now)
    accepted_at = models.DateTimeField(null=True, blank=True)
    edited_at = models.DateTimeField(null=True, blank=True)
    ignored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["shown_at", "position"]
        indexes = [models.Index(fields=["kind", "outcome"])]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "kind", "fingerprint"], name="suggestion_shown_once_per_task"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.position} of task {self.task_id}: {self.outcome}"

    @staticmethod
    def fingerprint_of(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()


class SuggestionPoolBuild(models.Model):
    """A (re)build of the suggestion pool, run by a Celery worker; its row is its progress."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    claims_total = models.PositiveIntegerField(default=0)
    claims_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"suggestion pool build {self.pk}: {self.status}"

    @property
    def percent(self) -> int:
        return int(100 * self.claims_done / self.claims_total) if self.claims_total else 0


# --- Training and qualification ----------------------------------------------------------


class QualificationThresholds(models.Model):
    """What training on gold claims must show before a phase's real tasks open (one row).

    The defaults are the AVeriTeC shared task's bar for its annotators; managers change
    them on the qualification page. Without a row, the defaults apply.
    """

    type_strategy_f1 = models.FloatField(
        default=0.7, help_text="P1: least mean F1 of claim types, and of strategies."
    )
    min_qa_pairs = models.PositiveSmallIntegerField(
        default=2,
        help_text="P2: least real question-answer pairs per judged claim, on average.",
    )
    verdict_accuracy = models.FloatField(
        default=0.5, help_text="P2 and P3: least share of verdicts equal to the gold one."
    )
    # The shared task's protocol (seed 001): 10 items with feedback, then 10 more.
    practice_items = models.PositiveSmallIntegerField(
        default=10, help_text="Practice claims first: feedback after each, not judged."
    )
    items_per_phase = models.PositiveSmallIntegerField(
        default=10, help_text="Judged claims after the practice ones (feedback after each too)."
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "qualification thresholds"
        constraints = [
            models.CheckConstraint(
                condition=Q(type_strategy_f1__gte=0) & Q(type_strategy_f1__lte=1),
                name="f1_threshold_is_a_share",
            ),
            models.CheckConstraint(
                condition=Q(verdict_accuracy__gte=0) & Q(verdict_accuracy__lte=1),
                name="accuracy_threshold_is_a_share",
            ),
            models.CheckConstraint(condition=Q(items_per_phase__gte=1), name="at_least_one_item"),
        ]

    def __str__(self) -> str:
        return (
            f"F1 ≥ {self.type_strategy_f1:.0%}, ≥ {self.min_qa_pairs} QA pairs, "
            f"verdicts ≥ {self.verdict_accuracy:.0%}, {self.practice_items} practice claims then "
            f"{self.items_per_phase} judged"
        )

    @classmethod
    def current(cls) -> QualificationThresholds:
        return cls.objects.order_by("-changed_at", "-id").first() or cls()


class TrainingDraw(models.Model):
    """One gold claim drawn for one trainee in one phase, at its place in their sequence.

    Drawn once (annotation/training.py, from the phase's own pool) and kept: the trainee can
    answer only these claims, in this order, and is judged on the `judged` ones. A claim is
    drawn for a trainee in one phase at most, so the feedback of one phase never shows the
    key of another phase's item.
    """

    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="training_draws"
    )
    phase = models.PositiveSmallIntegerField(choices=Phase.choices)
    position = models.PositiveSmallIntegerField()
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="training_draws")
    judged = models.BooleanField()
    drawn_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["annotator", "phase", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "phase", "position"], name="one_draw_per_place"
            ),
            models.UniqueConstraint(
                fields=["annotator", "claim"], name="a_claim_is_drawn_in_one_phase_only"
            ),
            models.CheckConstraint(condition=Q(phase__lte=3), name="draws_in_p1_to_p3"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} · P{self.phase} training item {self.position + 1}"


class TrainingAnswer(models.Model):
    """One annotator's practice answer on a gold claim, with its comparison to the gold."""

    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="training_answers"
    )
    phase = models.PositiveSmallIntegerField(choices=Phase.choices)
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="training_answers")
    answer = models.JSONField()
    # Per measure (types_f1, strategies_f1, qa_pairs, verdict_correct) as computed on hand-in.
    score = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "phase", "claim"], name="one_training_answer_per_claim"
            ),
            models.CheckConstraint(condition=Q(phase__lte=3), name="training_in_p1_to_p3"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} · P{self.phase} training on claim {self.claim_id}"
