"""The researchers' API under /api/v1/: claims as AVeriTeC records, export jobs, webhooks.

Researchers and managers only (token or session authentication); anyone else gets 403.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from annotation.http import AuthenticatedRequest
from annotation.models import Claim
from annotation.serializers import ErrorSerializer
from annotation.visibility import claims_seen_in_full
from exports.dataset import with_records_prefetched
from exports.models import ExportJob, Webhook
from exports.serializers import (
    ClaimFilterSerializer,
    ClaimRecordSerializer,
    ExportJobSerializer,
    WebhookSerializer,
)
from exports.tasks import start_export_job
from exports.views import can_use_exports, download_response


class IsResearcherOrManager(permissions.BasePermission):
    message = "Only researchers and project managers can use this endpoint."

    def has_permission(self, request, view) -> bool:
        return can_use_exports(request.user)


class ClaimPagination(CursorPagination):
    """Stable pages while claims change: ordered by update time, then id."""

    ordering = ("updated_at", "id")
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_page_size(self, request: Request) -> int | None:
        # DRF quietly uses the default for a bad page_size; a client should hear about it.
        sent = request.query_params.get(self.page_size_query_param)
        if sent and not (sent.isdigit() and 1 <= int(sent) <= self.max_page_size):
            raise ValidationError(
                {self.page_size_query_param: f"Give a whole number from 1 to {self.max_page_size}."}
            )
        return super().get_page_size(request)

    def decode_cursor(self, request: Request):
        # The position is the updated_at of the page's edge; a crafted one that is no time
        # would reach the database as a filter and fail there (a 500): it is not found.
        cursor = super().decode_cursor(request)
        if cursor is not None and cursor.position is not None:
            try:
                # The stub types a cursor's position as an int; here it is updated_at, a str.
                valid = parse_datetime(cursor.position) is not None  # type: ignore[arg-type]
            except ValueError:
                valid = False
            if not valid:
                raise NotFound(self.invalid_cursor_message)
        return cursor

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
        return parameters


@extend_schema_view(
    # The filters apply to the list only; one claim by id takes none.
    list=extend_schema(
        parameters=[
            OpenApiParameter("state", OpenApiTypes.STR, enum=Claim.State.values),
            OpenApiParameter(
                "updated_since",
                OpenApiTypes.DATETIME,
                description="Only claims changed at or after this time; poll with the newest "
                "updated_at seen so far.",
            ),
        ]
    )
)
class ClaimViewSet(viewsets.ReadOnlyModelViewSet):
    """Claims with their AVeriTeC records: ``?state=accepted&updated_since=2024-05-01T00:00Z``."""

    serializer_class = ClaimRecordSerializer
    permission_classes = [permissions.IsAuthenticated, IsResearcherOrManager]
    pagination_class = ClaimPagination
    request: AuthenticatedRequest

    def get_queryset(self) -> QuerySet[Claim]:
        # Claims the caller holds or may receive blind work on are not theirs to read
        # (annotation/visibility.py), whatever their role.
        claims = claims_seen_in_full(self.request.user)
        if self.action == "list":
            params = ClaimFilterSerializer(data=self.request.query_params)
            params.is_valid(raise_exception=True)
            if state := params.validated_data.get("state"):
                claims = claims.filter(state=state)
            if since := params.validated_data.get("updated_since"):
                claims = claims.filter(updated_at__gte=since)
        return with_records_prefetched(claims)


class ExportJobViewSet(
    mixins.CreateModelMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Export jobs: create one, poll it until ``status`` is ``done``, download its file."""

    serializer_class = ExportJobSerializer
    permission_classes = [permissions.IsAuthenticated, IsResearcherOrManager]
    queryset = ExportJob.objects.select_related("batch")

    @extend_schema(
        responses={
            201: ExportJobSerializer,
            429: OpenApiResponse(
                ErrorSerializer,
                "Too many requests, or JOBS_RUNNING_PER_USER of your exports are still "
                "waiting or running.",
            ),
        }
    )
    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if problem := ExportJob.quota_problem(request.user):
            return Response({"detail": problem}, status=429)
        self.perform_create(serializer)
        return Response(serializer.data, status=201)

    def perform_create(self, serializer: BaseSerializer[Any]) -> None:
        serializer.instance = start_export_job(
            ExportJob(**serializer.validated_data), self.request.user
        )

    @extend_schema(
        responses={
            (200, "application/json"): OpenApiResponse(description="The export file."),
            404: OpenApiResponse(description="Not finished, failed, or the file is gone."),
        }
    )
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk: int | None = None):
        job = self.get_object()
        if job.status != ExportJob.Status.DONE:
            return Response({"detail": f"The export is {job.status}."}, status=404)
        return download_response(job)


class WebhookViewSet(
    mixins.CreateModelMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Your webhooks. The secret for checking signatures is shown once, in the create response."""

    serializer_class = WebhookSerializer
    permission_classes = [permissions.IsAuthenticated, IsResearcherOrManager]
    queryset = Webhook.objects.none()  # for the schema; get_queryset gives the owner's
    request: AuthenticatedRequest

    def get_queryset(self) -> QuerySet[Webhook]:
        return Webhook.objects.filter(owner=self.request.user)

    def perform_create(self, serializer: BaseSerializer[Any]) -> None:
        serializer.save(owner=self.request.user)

    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        self.perform_create(serializer)
        data = WebhookSerializer(serializer.instance, context={"show_secret": True}).data
        return Response(data, status=201)
