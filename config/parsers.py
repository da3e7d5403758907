"""How the API reads JSON bodies: too large or too deeply nested is a clear client error.

DRF reads JSON straight from the request stream, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE
never applies to it, and Python's decoder gives up on deep nesting with a RecursionError
(a 500). Both become answers that say what was wrong.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

# No payload of this API nests deeper than a handful of levels (an evidence round: round,
# questions, answers, fields).
MAX_JSON_DEPTH = 32


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"


def too_large_message() -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return f"The request body is larger than the {limit / 2**20:.3g} MB this site accepts."


def json_depth_problem(value: Any) -> str | None:
    """Why `value` nests too deeply, or None; iterative, so it cannot itself overflow."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"The JSON body nests deeper than {MAX_JSON_DEPTH} levels."
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return None


class LimitedJSONParser(JSONParser):
    """DRF's JSON parser with a size limit (413) and a nesting limit (400)."""

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if request is not None and limit is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                raise RequestTooLarge(too_large_message())
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"The JSON body nests deeper than {MAX_JSON_DEPTH} levels.") from None
        problem = json_depth_problem(data)
        if problem:
            raise ParseError(problem)
        return data
