"""Per-account limits on the API (DRF throttles), apart from the token endpoint's own.

Kept apart from config/api.py: DRF imports its default throttle classes while it defines
APIView, before the apps' serializers can be imported.
"""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import UserRateThrottle


class ReadThrottle(UserRateThrottle):
    """Reads (GET, HEAD, OPTIONS) per account a minute: API_READ_RATE. One script reading in a
    tight loop must not slow everyone else down; anonymous callers count per address."""

    scope = "api_read"

    def allow_request(self, request, view) -> bool:
        if request.method not in SAFE_METHODS:
            return True
        return super().allow_request(request, view)


class WriteThrottle(UserRateThrottle):
    """Writes (POST, PUT, PATCH, DELETE) per account a minute: API_WRITE_RATE."""

    scope = "api_write"

    def allow_request(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)
