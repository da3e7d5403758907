"""Password guessing: the site, the admin and the API token endpoint lock a username out
from an address after LOGIN_FAILURE_LIMIT wrong passwords; throttles count in a shared cache
and trust X-Forwarded-For only as far as NUM_PROXIES says."""

import pytest
from axes.models import AccessAttempt
from django.core.cache import caches
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from tests.factories import ManagerFactory

PASSWORD = "correct horse battery"


def _login_rate(monkeypatch, rate: str) -> None:
    # DRF reads the rates once, when the throttle class is defined.
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"login": rate})


def _guess(client, url: str, username: str, password: str, **extra):
    return client.post(url, {"username": username, "password": password}, **extra)


@pytest.mark.parametrize("url", ["/login/", "/admin/login/"])
def test_thirty_wrong_passwords_lock_the_account_out_even_for_the_right_one(db, client, url):
    ManagerFactory(username="root", is_staff=True, is_superuser=True)
    for attempt in range(30):
        _guess(client, url, "root", f"guess-{attempt}")

    response = _guess(client, url, "root", PASSWORD)

    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_api_token_endpoint_locks_out_with_a_json_reason(annotator, settings, monkeypatch):
    _login_rate(monkeypatch, "1000/minute")
    api = APIClient()
    for attempt in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _guess(api, reverse("api:token"), "alice", f"guess-{attempt}").status_code == 400
    _guess(api, reverse("api:token"), "alice", "the last wrong guess")

    response = _guess(api, reverse("api:token"), "alice", PASSWORD)

    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.json()["detail"]
    assert "token" not in response.json()


def test_a_lockout_is_per_username_and_address(client, annotator, second_annotator, settings):
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        _guess(client, "/login/", "alice", f"guess-{attempt}")

    assert _guess(client, "/login/", "bob", PASSWORD).status_code == 302
    elsewhere = _guess(client, "/login/", "alice", PASSWORD, REMOTE_ADDR="203.0.113.9")
    assert elsewhere.status_code == 302


def test_a_few_wrong_passwords_do_not_lock_anyone_out(client, annotator, settings):
    for attempt in range(settings.AXES_FAILURE_LIMIT - 1):
        _guess(client, "/login/", "alice", f"guess-{attempt}")

    assert _guess(client, "/login/", "alice", PASSWORD).status_code == 302


def test_a_manager_with_admin_access_unlocks_an_account_in_the_admin(client, annotator, settings):
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        _guess(client, "/login/", "alice", f"guess-{attempt}")
    [attempt] = AccessAttempt.objects.filter(username="alice")
    admin = APIClient()  # a separate browser
    admin.force_login(ManagerFactory(username="root", is_staff=True, is_superuser=True))

    response = admin.post(
        reverse("admin:axes_accessattempt_delete", args=[attempt.pk]), {"post": "yes"}
    )

    assert response.status_code == 302
    assert _guess(client, "/login/", "alice", PASSWORD).status_code == 302


def test_the_token_throttle_ignores_a_forged_x_forwarded_for(annotator, monkeypatch):
    _login_rate(monkeypatch, "3/minute")
    api = APIClient()
    answers = [
        _guess(
            api, reverse("api:token"), "alice", PASSWORD, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}"
        ).status_code
        for n in range(4)
    ]

    assert answers == [200, 200, 200, 429]


def test_behind_one_trusted_proxy_the_throttle_counts_per_forwarded_client(
    annotator, settings, monkeypatch
):
    _login_rate(monkeypatch, "1/minute")
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    api = APIClient()
    first = _guess(
        api, reverse("api:token"), "alice", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.1"
    )
    other = _guess(
        api, reverse("api:token"), "alice", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.2"
    )
    again = _guess(
        api, reverse("api:token"), "alice", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.1"
    )

    assert (first.status_code, other.status_code, again.status_code) == (200, 200, 429)


def test_throttle_counts_live_in_the_shared_database_cache(annotator):
    _guess(APIClient(), reverse("api:token"), "alice", PASSWORD)

    # Every web process reads the same table, so a second process sees this count.
    assert caches["default"].__class__.__name__ == "DatabaseCache"
    with connection.cursor() as cursor:
        cursor.execute("SELECT cache_key FROM django_cache")
        keys = [row[0] for row in cursor.fetchall()]
    assert any("throttle_login" in key for key in keys)
