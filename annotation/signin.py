"""Sign-in limits beyond django-axes' per username and address count.

Axes locks out one username from one address after LOGIN_FAILURE_LIMIT wrong passwords. A
password spray tries one or two guesses on many usernames from one address and never reaches
that count; so every failure from an address also counts for the address as a whole, and
after LOGIN_ADDRESS_FAILURE_LIMIT of them (across all usernames, within LOGIN_LOCKOUT_MINUTES
of the last one) that address is locked out too: site, admin and token endpoint alike, with
the same 429. The limit is higher than the per-account one, because many honest people may
share an address (an office, a university network).
"""

from __future__ import annotations

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum


def failures_from_address(request) -> int:
    """Wrong passwords from the request's address within the cool-off time, any username."""
    address = getattr(request, "axes_ip_address", None)
    if not address:
        return 0
    recent = AccessAttempt.objects.filter(
        ip_address=address, attempt_time__gt=get_cool_off_threshold(request)
    )
    return recent.aggregate(total=Sum("failures_since_start"))["total"] or 0


class SignInLimits(AxesDatabaseHandler):
    """Axes' database handler, with the per-address limit on top of the per-pair one."""

    def get_failures(self, request, credentials=None) -> int:
        pair = super().get_failures(request, credentials)
        if failures_from_address(request) >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            # Reported as the per-pair limit reached, so axes locks out as it always does.
            return max(pair, get_failure_limit(request, credentials))
        return pair
