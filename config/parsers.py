"""How the API reads JSON bodies: too large, too deeply nested or holding text the platform
refuses is a clear client error.

DRF reads JSON straight from the request stream, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE
never applies to it, and Python's decoder gives up on deep nesting with a RecursionError
(a 500). Every decoded body then passes the input boundary (annotation/boundary.py): a NUL,
half a surrogate pair, a control or direction-override character, an over-long text or a
number too large to store is refused with a 400 that names the field and the path inside it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.parsers import JSONParser

from annotation.boundary import MAX_DEPTH, Refusal, value_refusal


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"


def too_large_message() -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return f"The request body is larger than the {limit / 2**20:.3g} MB this site accepts."


def refused_body(data: Any, refusal: Refusal) -> APIException:
    """The API's answer to a refused body: under the top-level field the problem is in (as
    DRF's validation errors are), or as the detail when it is the body as a whole."""
    if refusal.code == "too_deep" or not isinstance(data, dict) or not refusal.path:
        return ParseError(f"The JSON body {refusal.message}.")
    field = refusal.path.split(".")[0]
    return ValidationError({field: [f"{refusal.path} {refusal.message}."]}, code=refusal.code)


class LimitedJSONParser(JSONParser):
    """DRF's JSON parser with a size limit (413), a nesting limit and the input boundary (400)."""

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
            raise ParseError(f"The JSON body nests deeper than {MAX_DEPTH} levels.") from None
        if refusal := value_refusal(data):
            raise refused_body(data, refusal)
        return data
