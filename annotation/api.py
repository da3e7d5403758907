"""The task API under /api/v1/: what the annotation screens do, for scripts and other clients.

Each endpoint fetches one of the caller's own tasks (someone else's task is a 404, so its
existence does not leak), validates the input with a serializer, calls assignment or
workflow, and responds. Status codes beyond the usual 400/401/404/405:

- 409 `{"detail": ...}` when "next" has no task to give (NoTaskAvailable: nothing waiting,
  quota reached or not qualified), and when the workflow refuses a submission in the task's
  current state (WorkflowError: expired, released, assigned but not opened yet...);
- 409 `{"detail", "draft_version", "status", "draft", "saved_at", "revision"}` when a draft
  save, or a submission that names its `draft_version`, is stale, or arrives after the task
  closed: the latest content comes along, and `revision` is where what was sent is kept
  (every save and submit is one hand-in of annotation/handin.py, stored as a revision).

Submitting a task again with exactly what was handed in (a retry) answers 200 with what it
produced the first time; other content after the task closed is a 409 as above.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_view,
)
from knox import views as knox_views
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.throttling import ScopedRateThrottle

from annotation import assignment, handin, workflow
from annotation.http import AuthenticatedRequest
from annotation.middleware import LOCKED_OUT, MUST_CHANGE_PASSWORD
from annotation.models import Article, Task
from annotation.phases import parts_of, registered
from annotation.serializers import (
    CredentialsSerializer,
    DraftSerializer,
    ErrorSerializer,
    NextTaskSerializer,
    NormalisationResultSerializer,
    SavedDraftSerializer,
    StaleDraftSerializer,
    SubmittedTaskSerializer,
    TaskFilterSerializer,
    TaskSummarySerializer,
    TokenSerializer,
)


# Told apart by their phase (the discriminator); each page's schema admits only its phases.
# Every phase's shapes are registered once the apps are loaded (annotation/phases.py).
def _task_page_serializers() -> dict[str, Serializer[Any] | type[Serializer[Any]]]:
    # The value type is drf-spectacular's parameter type (a dict is invariant in it).
    return {str(int(phase)): parts.task_serializer for phase, parts in registered().items()}


TASK_PAGE = PolymorphicProxySerializer(
    component_name="TaskPage",
    serializers=_task_page_serializers,
    resource_type_field_name="phase",
)


def _submission_serializers() -> list[type[Serializer]]:
    return list(dict.fromkeys(parts.submit_serializer for parts in registered().values()))


SUBMISSION = PolymorphicProxySerializer(
    component_name="Submission",
    serializers=_submission_serializers,
    resource_type_field_name=None,
)


def task_page(task: Task) -> dict:
    serializer = parts_of(task.phase).task_serializer
    return serializer(task, context={"evidence": task.evidence_shown()}).data


def submit_normalisation(task: Task, form: Any) -> dict:  # P1's serializer, validated
    """P1 takes claims or a report that the article cannot be used (annotation/apps.py)."""
    if "skip" in form.validated_data:
        workflow.skip_article(task, **form.validated_data["skip"])
        claims = None
    else:
        claims = workflow.submit(task, form.to_workflow())
    article = Article.objects.get(pk=task.article_id)
    result = {
        "article_state": article.state,
        "skip_reason": article.skip_reason,
        "claims": article.claims.all() if claims is None else claims,
    }
    return NormalisationResultSerializer(result).data


def _submit(task: Task, form: Any) -> dict:  # a phase's submission serializer, validated
    """Hand the validated submission to the workflow; returns what it produced, shaped."""
    parts = parts_of(task.phase)
    if parts.api_submit is not None:
        return parts.api_submit(task, form)
    return parts.result_serializer(workflow.submit(task, form.to_workflow())).data


def _refused(handed: handin.HandIn, detail: str = "") -> Response:
    """A hand-in the task did not take (saved elsewhere since, or no longer open): 409 with
    what the caller needs to show both versions, and where its own content is kept."""
    latest = handed.task
    if detail:
        detail = f"{detail} What you sent is kept as revision {handed.revision.pk}."
    elif latest.status != Task.Status.IN_PROGRESS:
        detail = (
            f"This task no longer takes work: {handed.reason}. What you sent is kept as "
            f"revision {handed.revision.pk}."
        )
    else:
        detail = (
            f"This draft was saved elsewhere since version {handed.revision.base_version}; the "
            f"latest is version {latest.draft_version}. What you sent is kept as revision "
            f"{handed.revision.pk}; load the latest before saving again."
        )
    # Saving a choice between the two means sending the new `draft_version`.
    body = {
        "detail": detail,
        "draft_version": latest.draft_version,
        "status": latest.status,
        "draft": latest.draft,
        "saved_at": latest.submitted_at or latest.last_activity_at,
        "revision": handed.revision.pk,
    }
    return Response(body, status=status.HTTP_409_CONFLICT)


class TaskViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The caller's own tasks: list, open, take the next one, save a draft, submit."""

    serializer_class = TaskSummarySerializer
    lookup_value_regex = r"\d+"
    request: AuthenticatedRequest

    def get_queryset(self) -> QuerySet[Task]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no user
            return Task.objects.none()
        return (
            Task.objects.of_annotator(self.request.user)
            .select_related("article", "claim")
            .order_by("-assigned_at", "-id")
        )

    @extend_schema(
        summary="My tasks, newest first",
        parameters=[TaskFilterSerializer],
        responses=TaskSummarySerializer(many=True),
    )
    def list(self, request: Request) -> Response:
        filters = TaskFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        page = self.paginate_queryset(self.get_queryset().filter(**filters.validated_data))
        return self.get_paginated_response(TaskSummarySerializer(page, many=True).data)

    @extend_schema(
        summary="One of my tasks with what its phase may see",
        description="P3 and P5 are blind: only the claim, its metadata and the pairs to "
        "check. Opening a task in progress counts as activity and extends its lease.",
        responses=TASK_PAGE,
    )
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        task = self.get_object()
        lease = task.lease_expires_at
        # A lapsed lease is left for the sweeper: the task goes back to the pool as promised.
        if task.status == Task.Status.IN_PROGRESS and lease and lease > timezone.now():
            task.touch()
        return Response(task_page(task))

    @extend_schema(
        summary="Start next: resume my task of the phase or take the next waiting one",
        request=NextTaskSerializer,
        responses={200: TASK_PAGE, 409: OpenApiResponse(ErrorSerializer, "No task for you.")},
    )
    @action(detail=False, methods=["post"])
    def next(self, request: AuthenticatedRequest) -> Response:
        form = NextTaskSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            task = assignment.next_task(request.user, form.validated_data["phase"])
        except assignment.NoTaskAvailable as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(task_page(task))

    @extend_schema(
        summary="Save the unsent work of a task in progress",
        request=DraftSerializer,
        responses={
            200: SavedDraftSerializer,
            409: OpenApiResponse(StaleDraftSerializer, "Saved elsewhere since, or not open."),
        },
    )
    @action(detail=True, methods=["put"])
    def draft(self, request: AuthenticatedRequest, pk: str = "") -> Response:
        with transaction.atomic():
            # The caller's own task, found and locked for the hand-in in one query, as the
            # editor's autosave does (annotation/views/editing.py).
            try:
                task = handin.lock_for_hand_in(self.get_queryset().filter(pk=pk))
            except (Task.DoesNotExist, ValueError):
                raise Http404("no such task") from None
            self.check_object_permissions(request, task)
            form = DraftSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            handed = handin.hand_in(
                task,
                form.validated_data["draft"],
                version=form.validated_data["version"],
                author=request.user,
                tab=form.validated_data["tab"],
                kind=handin.Kind.SAVE,
                via_api=True,
                locked=True,
            )
        if handed.refused or handed.outcome == handin.DUPLICATE:
            return _refused(handed)
        return Response(
            {"draft_version": handed.task.draft_version, "revision": handed.revision.pk}
        )

    @extend_schema(
        summary="Hand in a task",
        description="The payload depends on the phase: P1 `claims` or `skip`; P2 and P4 "
        "`questions` and `verdict` (P4 sends the whole revised set); P3 and P5 `verdict`, "
        "`justification`, `unreadable`, `flags` (P5 may also say 'Claim too vague'). "
        "Submitting again the same content answers with what the first submission produced; "
        "other content after the task closed is refused with 409 and kept. Send "
        "`draft_version` (the version the content builds on) to have a submission from a "
        "client that fell behind refused with 409 and the latest version, as a draft save is.",
        request=SUBMISSION,
        responses={
            200: SubmittedTaskSerializer,
            409: OpenApiResponse(
                StaleDraftSerializer, "Stale, closed, or refused by the workflow."
            ),
        },
    )
    @action(detail=True, methods=["post"])
    def submit(self, request: AuthenticatedRequest, pk: str | None = None) -> Response:
        task = self.get_object()
        payload = request.data if isinstance(request.data, dict) else {}
        sent = payload.get("draft_version")
        try:
            version = None if sent is None else int(sent)
        except (TypeError, ValueError):
            return Response(
                {"draft_version": ["A whole number: the draft version the content builds on."]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        form = parts_of(task.phase).submit_serializer(
            data=request.data, context={"evidence": task.evidence_shown(), "task": task}
        )

        def finish(locked: Task):
            if not form.is_valid():
                raise handin.Invalid(form.errors)
            return _submit(locked, form)

        content = {k: v for k, v in payload.items() if k not in ("draft_version", "tab")}
        handed = handin.hand_in(
            task,
            content,
            version=version,
            author=request.user,
            tab=str(payload.get("tab", ""))[:64],
            via_api=True,
            finish=finish,
            # The submission's shape is not the editors' draft: it is kept in its revision.
            keep_as_draft=False,
        )
        if handed.outcome == handin.DUPLICATE:
            # The same hand-in again (a retry): the answer the first one got.
            form.is_valid(raise_exception=True)
            result = _submit(task, form)
        elif handed.refused:
            return _refused(handed)
        elif handed.errors is not None:
            return Response(handed.errors, status=status.HTTP_400_BAD_REQUEST)
        elif handed.refusal:
            return _refused(handed, detail=handed.refusal)
        else:
            result = handed.result
        task.refresh_from_db()
        return Response(SubmittedTaskSerializer(task, context={"result": result}).data)


class TokenView(knox_views.LoginView):
    """A token for a username and password: it expires (API_TOKEN_TTL_HOURS after its last
    use, API_TOKEN_MAX_DAYS at most), only its hash is stored, and it ends on sign-out or a
    password change. Attempts are limited per client address and per account (django-axes).
    """

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"

    @extend_schema(
        summary="Get an API token",
        request=CredentialsSerializer,
        responses={
            200: TokenSerializer,
            # Left to the shared default (config/api.py): DRF's validation errors, e.g.
            # {"non_field_errors": ["Unable to log in with provided credentials."]}.
            403: OpenApiResponse(ErrorSerializer, "The account must first change its password."),
            429: OpenApiResponse(ErrorSerializer, "Too many attempts: locked out for a while."),
        },
    )
    def post(self, request: Request, format=None) -> Response:
        form = CredentialsSerializer(data=request.data, context={"request": request})
        if not form.is_valid():
            if getattr(request, "axes_locked_out", False):
                return Response({"detail": LOCKED_OUT}, status=status.HTTP_429_TOO_MANY_REQUESTS)
            return Response(form.errors, status=status.HTTP_400_BAD_REQUEST)
        user = form.validated_data["user"]
        if user.must_change_password:
            return Response({"detail": MUST_CHANGE_PASSWORD}, status=status.HTTP_403_FORBIDDEN)
        request.user = user
        return super().post(request, format)


@extend_schema_view(
    post=extend_schema(summary="End the token of this request", request=None, responses={204: None})
)
class SignOutView(knox_views.LogoutView):
    pass


@extend_schema_view(
    post=extend_schema(
        summary="End every token of this account", request=None, responses={204: None}
    )
)
class SignOutEverywhereView(knox_views.LogoutAllView):
    pass
