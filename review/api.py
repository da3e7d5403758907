"""Managers' API: the dashboard's figures under /api/v1/agreement/ and /api/v1/progress/."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.serializers import ErrorSerializer
from review.agreement import ReportFilter
from review.forms import ReportFilterForm
from review.stored import agreement_report
from review.stored import stored_progress_report as progress_report

FILTER_PARAMETERS = [
    OpenApiParameter("batch", int, description="only claims of this batch (id); 404 if none"),
    OpenApiParameter(
        "start", OpenApiTypes.DATE, description="only claims created on or after this day"
    ),
    OpenApiParameter(
        "end",
        OpenApiTypes.DATE,
        description="only claims created on or before this day; not before start (400)",
    ),
]


FILTERED_RESPONSES = {
    200: OpenApiTypes.OBJECT,
    404: OpenApiResponse(ErrorSerializer, description="No such batch."),
}


class IsManager(permissions.BasePermission):
    message = "Only project managers can read the agreement and progress figures."

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and request.user.is_manager)


def _filter(request: Request) -> ReportFilter:
    form = ReportFilterForm(request.query_params)
    if not form.is_valid():
        if form.has_error("batch", "invalid_choice"):
            raise NotFound("No such batch.")
        raise ValidationError(form.errors.get_json_data())
    return form.report_filter()


class AgreementView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsManager]

    @extend_schema(parameters=FILTER_PARAMETERS, responses=FILTERED_RESPONSES)
    def get(self, request: Request) -> Response:
        """Verdict agreement (kappas with intervals, per label, per pair), confusion
        matrices and evidence agreement, as on the dashboard."""
        return Response(agreement_report(_filter(request)))


class ProgressView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsManager]

    @extend_schema(parameters=FILTER_PARAMETERS, responses=FILTERED_RESPONSES)
    def get(self, request: Request) -> Response:
        """Progress and quality signals, per annotator figures and stuck work."""
        return Response(progress_report(_filter(request)))
