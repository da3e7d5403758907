"""The API's schema conventions, shared by every endpoint under /api/v1/.

Each endpoint documents its own successes and the refusals only it gives (409 for the
workflow, 422 for the page viewer...). The refusals every DRF endpoint can give come from
here, so no endpoint forgets one: 400 for a malformed request (the input boundary's
refusals included), 401 without valid credentials, 403 when the caller may not (or a session
call lacks its CSRF token), 404 for an unknown id or page, 413 for a body over the size
limit, 414 when a query string is longer than the web server takes, 429 when a rate limit is
reached (every account's reads and writes are limited, config/throttles.py).
"""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework.permissions import AllowAny

from annotation.boundary import KEY_PATTERN, MAX_TEXT_LENGTH, TEXT_PATTERN
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
TOO_LARGE = OpenApiResponse(
    ErrorSerializer,
    description="The body is larger than the server takes (DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MB).",
)
URI_TOO_LONG = OpenApiResponse(
    description="The address is longer than the web server takes (gunicorn: 4,094 bytes for "
    "the request line); send a shorter query. Plain text from the server, not JSON."
)
UNAUTHENTICATED = OpenApiResponse(ErrorSerializer, description="No valid credentials.")
FORBIDDEN = OpenApiResponse(ErrorSerializer, description="You may not do this.")
NOT_FOUND = OpenApiResponse(ErrorSerializer, description="No such object of yours, or page.")
THROTTLED = OpenApiResponse(ErrorSerializer, description="Too many requests; see Retry-After.")


class ApiSchema(AutoSchema):
    """drf-spectacular's schema with the refusals every endpoint can give."""

    def _get_response_bodies(
        self, direction: Literal["request", "response"] = "response"
    ) -> dict[str, Any]:
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
        if has_query:
            refusals["414"] = URI_TOO_LONG
        if self.method in ("POST", "PUT", "PATCH"):
            refusals["413"] = TOO_LARGE
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


def with_boundary(pattern: str | None) -> str:
    """`pattern` (a schema's, unanchored as JSON Schema reads it) that also refuses what the
    input boundary refuses: one pattern with a lookahead, which every tool reads alike."""
    if pattern is None:
        return TEXT_PATTERN
    ahead = f"^(?={TEXT_PATTERN[1:]})"
    if pattern.startswith("^"):
        return ahead + pattern[1:]
    return ahead + r"[\s\S]*?(?:" + pattern + ")"


def boundary_in_schema(result: dict, generator, request, public) -> dict:
    """drf-spectacular post-processing hook: what a request may carry says what the input
    boundary (annotation/boundary.py) takes, so a client, and the schema fuzzer, know that
    a NUL, control or direction-override character is refused and how long a text may be.

    Every text gets the boundary's pattern and length; every object of a request keeps its
    fields and takes extra ones (the server ignores them, except in a free-form draft) only
    under keys of that pattern, with values of the same kind (AnyValue). Only request
    components and query parameters change (COMPONENT_SPLIT_REQUEST keeps them apart from the
    responses'); half surrogate pairs, which no pattern can name, are refused all the same.
    """
    components = result.setdefault("components", {}).setdefault("schemas", {})
    any_value = {"$ref": "#/components/schemas/AnyValue"}
    components["AnyValue"] = {
        "description": "Any JSON value without text the input boundary refuses.",
        "nullable": True,
        "anyOf": [
            {"type": "string", "pattern": TEXT_PATTERN, "maxLength": MAX_TEXT_LENGTH},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "array", "items": any_value},
            {
                "type": "object",
                "patternProperties": {KEY_PATTERN: any_value},
                "additionalProperties": False,
            },
        ],
    }
    seen: set[str] = {"AnyValue"}

    def visit(schema: Any) -> None:
        if not isinstance(schema, dict):
            return
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            if name not in seen and name in components:
                seen.add(name)
                visit(components[name])
            return
        text = schema.get("type") == "string" and "enum" not in schema
        if text and schema.get("format") not in ("date", "date-time", "binary"):
            schema["pattern"] = with_boundary(schema.get("pattern"))
            schema.setdefault("maxLength", MAX_TEXT_LENGTH)
        if schema.get("type") == "object":
            extra = schema.get("additionalProperties", True)
            extra = any_value if extra in (True, {}) else extra
            if extra is not False:
                schema["patternProperties"] = {KEY_PATTERN: extra}
                schema["additionalProperties"] = False
                visit(extra)
        if "oneOf" in schema and "discriminator" not in schema and "type" not in schema:
            # A request that fits several shapes is taken by the one its task needs (a
            # submission's phase is the task's, not the payload's): any of them, not one.
            schema["anyOf"] = schema.pop("oneOf")
        for child in schema.get("properties", {}).values():
            visit(child)
        visit(schema.get("items"))
        for key in ("allOf", "oneOf", "anyOf"):
            for child in schema.get(key, []):
                visit(child)

    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query":
                    visit(parameter.get("schema"))
            for media in operation.get("requestBody", {}).get("content", {}).values():
                visit(media.get("schema"))
    return result
