"""Accounts hold against spraying, stale tokens and staff mistakes (issue 25, items 6-10).

Each test replays what the attack walk did: a password spray from one address, a token that
came back after reactivation, a manager demoting the superuser, pages and tokens kept by a
cache, a session that never ends, look-alike and full-width usernames.
"""

import time

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from annotation import accounts
from annotation.middleware import LAST_SEEN
from annotation.models import User
from tests.factories import AnnotatorFactory, ManagerFactory

PASSWORD = "correct horse battery"


@pytest.fixture(autouse=True)
def _no_token_throttle(monkeypatch):
    # The token endpoint's own per-address throttle is tested elsewhere; here the lockout is.
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"login": "10000/minute"})


def guess(client, url: str, username: str, password: str):
    return client.post(url, {"username": username, "password": password})


# --- 6. Password spraying ----------------------------------------------------------------


@pytest.mark.parametrize("url", ["/login/", "/api/v1/auth/token/"])
def test_a_password_spray_from_one_address_is_locked_out_before_it_is_done(db, settings, url):
    # The attack: 40 made-up usernames one guess each, then 4 guesses on each of 6 real
    # accounts; every account stays under its own limit of 5.
    real = [AnnotatorFactory(username=f"real{n}") for n in range(6)]
    client = APIClient() if url.startswith("/api/") else Client()
    answers = [guess(client, url, f"nobody{n}", "Summer2024!").status_code for n in range(40)]
    answers += [
        guess(client, url, user.username, f"guess-{n}").status_code
        for user in real
        for n in range(4)
    ]

    limit = settings.LOGIN_ADDRESS_FAILURE_LIMIT
    assert 429 not in answers[: limit - 1]
    assert set(answers[limit:]) == {429}
    # Even the right password is refused from that address while the lockout lasts...
    assert guess(client, url, "real0", PASSWORD).status_code == 429
    # ... and the same account signs in from elsewhere.
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert guess(other, "/login/", "real0", PASSWORD).status_code == 302


def test_an_address_lockout_ends_after_the_lockout_time(db, settings):
    AnnotatorFactory(username="real0")
    client = Client()
    for n in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT):
        guess(client, "/login/", f"nobody{n}", "wrong")
    assert guess(client, "/login/", "real0", PASSWORD).status_code == 429

    # The lockout time passes.
    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= settings.AXES_COOLOFF_TIME * 1.1
        attempt.save()

    assert guess(client, "/login/", "real0", PASSWORD).status_code == 302


@pytest.mark.parametrize("password", ["73920518466", "1234567890123"])
def test_a_password_of_digits_only_is_refused(db, password):
    user = AnnotatorFactory(username="digits")
    with pytest.raises(ValidationError, match="entirely numeric"):
        validate_password(password, user)


def test_staff_need_twelve_characters_and_annotators_eight(db):
    annotator = AnnotatorFactory(username="ann")
    manager = ManagerFactory(username="mgr")
    researcher = AnnotatorFactory(username="res", role=User.Role.RESEARCHER)
    admin = AnnotatorFactory(username="adm", is_staff=True)

    validate_password("gravel-kite9", annotator)
    validate_password("gravel-kite9", manager)
    for user in (manager, researcher, admin):
        with pytest.raises(ValidationError, match="at least 12"):
            validate_password("kite9-gra", user)
    validate_password("kite9-gra", annotator)


def test_a_manager_choosing_a_short_password_on_the_site_is_refused(client, manager):
    client.force_login(manager)
    response = client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": "kite9-gra", "new_password2": "kite9-gra"},
    )
    assert response.status_code == 200
    assert "at least 12" in response.content.decode()
    manager.refresh_from_db()
    assert manager.check_password(PASSWORD)


def test_one_time_passwords_are_long_enough_and_never_start_like_a_formula(db):
    for _ in range(300):
        password = accounts.one_time_password()
        assert len(password) == 12 and password[0].isalnum()


# --- 7. A token revives ------------------------------------------------------------------


def _token(user) -> str:
    response = APIClient().post(
        reverse("api:token"), {"username": user.username, "password": PASSWORD}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()["token"]


def test_a_deactivated_accounts_tokens_do_not_work_again_after_reactivation(client, manager):
    annotator = AnnotatorFactory(username="leaver")
    token = _token(annotator)
    client.force_login(manager)
    form = {"role": "annotator", "phases": ["1", "2"]}

    client.post(reverse("annotation:person", args=[annotator.pk]), form)  # active unticked
    annotator.refresh_from_db()
    assert not annotator.is_active
    client.post(reverse("annotation:person", args=[annotator.pk]), {**form, "active": "on"})
    annotator.refresh_from_db()
    assert annotator.is_active

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/v1/tasks/").status_code == 401
    assert not annotator.auth_token_set.exists()


def test_deactivating_through_the_model_anywhere_ends_the_tokens(db):
    annotator = AnnotatorFactory(username="admin-deactivated")
    _token(annotator)
    annotator.is_active = False
    annotator.save()
    assert not annotator.auth_token_set.exists()


# --- 8. Staff mistakes -------------------------------------------------------------------


def test_a_manager_who_is_not_a_superuser_cannot_change_the_superuser(client, manager):
    root = ManagerFactory(username="root", is_superuser=True, is_staff=True)
    client.force_login(manager)

    response = client.post(
        reverse("annotation:person", args=[root.pk]), {"role": "annotator", "phases": []}
    )

    assert response.status_code == 422
    assert "only a superuser" in response.content.decode()
    root.refresh_from_db()
    assert root.is_active and root.role == User.Role.MANAGER


def test_a_superuser_may_change_another_superuser(db):
    root = ManagerFactory(username="root", is_superuser=True)
    other = ManagerFactory(username="root2", is_superuser=True)
    accounts.update_account(other, root, role=User.Role.MANAGER, phases=[], quotas={}, active=False)
    other.refresh_from_db()
    assert not other.is_active


def test_staff_in_the_admin_cannot_edit_a_superuser_or_make_themselves_one(db):
    from django.contrib.admin.sites import site
    from django.test import RequestFactory

    root = ManagerFactory(username="root", is_superuser=True, is_staff=True)
    staff = ManagerFactory(username="staffer", is_staff=True)
    request = RequestFactory().get("/admin/")
    request.user = staff
    admin = site._registry[User]
    assert not admin.has_change_permission(request, root)
    assert not admin.has_delete_permission(request, root)
    assert "is_superuser" in admin.get_readonly_fields(request, staff)


# --- 9. Caches and idle sessions ---------------------------------------------------------


def test_the_token_answer_and_signed_in_pages_are_never_cached(client, annotator):
    response = APIClient().post(
        reverse("api:token"), {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert "no-store" in response["Cache-Control"]
    client.force_login(annotator)
    for url in (reverse("annotation:control-panel"), reverse("password_change")):
        assert "no-store" in client.get(url)["Cache-Control"]


def _idle_for(client, seconds: float) -> None:
    session = client.session
    session[LAST_SEEN] = int(time.time() - seconds)
    session.save()


def test_a_session_idle_longer_than_the_timeout_ends(client, annotator, settings):
    client.post("/login/", {"username": "alice", "password": PASSWORD})
    panel = reverse("annotation:control-panel")
    assert client.get(panel).status_code == 200

    _idle_for(client, settings.SESSION_IDLE_TIMEOUT.total_seconds() + 60)
    response = client.get(panel)

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert "_auth_user_id" not in client.session


def test_a_session_in_use_is_kept_and_its_expiry_moves_on(client, annotator, settings):
    client.post("/login/", {"username": "alice", "password": PASSWORD})
    panel = reverse("annotation:control-panel")
    idle = settings.SESSION_IDLE_TIMEOUT.total_seconds()
    _idle_for(client, idle - 60)  # close to the timeout, but under it

    assert client.get(panel).status_code == 200

    session = client.session
    assert time.time() - session[LAST_SEEN] < 60
    assert session.get_expiry_age() == idle


def test_the_session_cookie_lasts_as_long_as_the_idle_timeout(settings):
    assert settings.SESSION_IDLE_TIMEOUT.total_seconds() == settings.SESSION_COOKIE_AGE


# --- 10. Usernames -----------------------------------------------------------------------


def bulk_create(client, names: str):
    return client.post(reverse("annotation:people"), {"usernames": names})


def test_a_look_alike_of_an_existing_username_is_refused(client, manager):
    AnnotatorFactory(username="annotator1")
    client.force_login(manager)
    for look_alike in ("\u0430nnotator1", "Annotator1", "annotatorl", "ANNOTATOR1"):
        response = bulk_create(client, look_alike)
        assert response.status_code == 422, look_alike
    assert User.objects.filter(username__iexact="annotator1").count() == 1
    assert not User.objects.filter(username="\u0430nnotator1").exists()


def test_a_full_width_username_is_stored_in_the_form_it_signs_in_with(client, manager):
    client.force_login(manager)
    response = bulk_create(client, "\uff57\uff49\uff44\uff45\uff11")  # full-width "wide1"
    assert response.status_code == 200
    [(name, _)] = response.context["new_passwords"]
    assert name == "wide1"
    user = User.objects.get(username="wide1")
    user.set_password(PASSWORD)
    user.must_change_password = False
    user.save()

    site = Client()
    assert guess(site, "/login/", "\uff57\uff49\uff44\uff45\uff11", PASSWORD).status_code == 302
    api = APIClient()
    typed = guess(api, reverse("api:token"), "\uff57\uff49\uff44\uff45\uff11", PASSWORD)
    assert typed.status_code == 200


def test_the_admin_refuses_a_look_alike_username_too(db):
    AnnotatorFactory(username="annotator1")
    user = User(username="Annotator1")
    with pytest.raises(ValidationError, match="looks like"):
        user.full_clean()


def test_two_look_alikes_in_one_upload_are_refused(db):
    with pytest.raises(accounts.AccountError, match="appears twice"):
        accounts.parse_usernames("reviewer0\nreviewerO")


@pytest.mark.parametrize("field", ["speaker", "text"])
def test_a_right_to_left_override_never_reaches_a_claim(annotator, field):
    from tests import steps

    steps.new_article()
    task = steps.take(annotator, 1)
    api = APIClient()
    api.force_authenticate(annotator)
    claim = {
        "text": "The mayor said so.",
        "fact_checker_label": "Refuted",
        "claim_date": "2020-10-31",
        "claim_types": ["Numerical Claim"],
        "fact_checking_strategies": ["Written Evidence"],
        field: "\u202eexe.png",
    }
    response = api.post(f"/api/v1/tasks/{task.pk}/submit/", {"claims": [claim]}, format="json")
    assert response.status_code == 400
    assert "U+202E" in str(response.json()["claims"])
