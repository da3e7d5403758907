"""The API's schema conventions, shared by every endpoint under /api/v1/.

Each endpoint documents its own successes and the refusals only it gives (409 for the
workflow, 422 for the page viewer...). The refusals every DRF endpoint can give come from
here, so no endpoint forgets one: 400 for a malformed request, 401 without valid
credentials, 403 when the caller may not (or a session call lacks its CSRF token), 404 for
an unknown id or page, 429 when a rate limit is reached.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework.permissions import AllowAny

from annotation.serializers import ErrorSerializer

# DRF's validation errors: {field: [message, ...]}, nested as the input is; problems with
# the request as a whole come under "non_field_errors", an unreadable body under "detail".
VALIDATION_ERRORS = {
    "type": "object",
    "description": "What is wrong, by field: a list of messages for each field, nested as "
    "the input is; 'non_field_errors' for the request as a whole, 'detail' when the body "
    "could not be read.",
    "additionalProperties": {
        "oneOf": [
            {"type": "array", "items": {}},
            {"type": "object"},
            {"type": "string"},
        ]
    },
}

INVALID = OpenApiResponse(VALIDATION_ERRORS, description="The request is malformed.")
UNAUTHENTICATED = OpenApiResponse(ErrorSerializer, description="No valid credentials.")
FORBIDDEN = OpenApiResponse(ErrorSerializer, description="You may not do this.")
NOT_FOUND = OpenApiResponse(ErrorSerializer, description="No such object of yours, or page.")
THROTTLED = OpenApiResponse(ErrorSerializer, description="Too many requests; see Retry-After.")


class ApiSchema(AutoSchema):
    """drf-spectacular's schema with the refusals every endpoint can give."""

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code, response in self._common_refusals().items():
            if code not in responses:
                responses[code] = self._get_response_for_code(response, code, direction=direction)
        return responses

    def _get_parameters(self) -> list[dict[str, Any]]:
        parameters = super()._get_parameters()
        for parameter in parameters:
            if parameter["in"] == "query" and not parameter.get("required"):
                # DRF reads an optional parameter sent empty ("?status=") as not sent.
                parameter["allowEmptyValue"] = True
        return parameters

    def _common_refusals(self) -> dict[str, OpenApiResponse]:
        refusals: dict[str, OpenApiResponse] = {}
        has_query = any(p["in"] == "query" for p in super()._get_parameters())
        if self.method in ("POST", "PUT", "PATCH") or has_query:
            refusals["400"] = INVALID
        if not all(isinstance(p, AllowAny) for p in self.view.get_permissions()):
            refusals["401"] = UNAUTHENTICATED
            refusals["403"] = FORBIDDEN
        paginated = self._is_list_view() and self._get_paginator() is not None
        if "{" in self.path or paginated:
            refusals["404"] = NOT_FOUND
        if getattr(self.view, "throttle_classes", None):
            refusals["429"] = THROTTLED
        return refusals


@csrf_exempt  # it changes nothing; without this a POST with a session cookie gets HTML
def no_such_endpoint(request: HttpRequest, rest: str = "") -> JsonResponse:
    """An /api/v1/ address that matches nothing (such as /tasks/abc/) answers in JSON too."""
    return JsonResponse({"detail": "Not found."}, status=404)
