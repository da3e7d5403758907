"""Accounts made in bulk sign in with a one-time password and must choose their own first."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import accounts
from annotation.models import User

NEW_PASSWORD = "a much longer own passphrase"


@pytest.fixture
def newcomer(manager) -> tuple[User, str]:
    [(name, password)] = accounts.create_annotators(
        ["nina"], manager, [1, 2], "trained in the pilot round"
    )
    return User.objects.get(username=name), password


def _signed_in(client, newcomer):
    user, password = newcomer
    response = client.post(reverse("login"), {"username": user.username, "password": password})
    assert response.status_code == 302
    return client


@pytest.mark.parametrize(
    "url",
    ["/", "/annotate/", "/annotate/phase/1/next/", "/review/dashboard/", "/exports/"],
)
def test_a_one_time_password_opens_only_the_password_change_page(client, newcomer, url):
    _signed_in(client, newcomer)

    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"] == reverse("password_change")


def test_the_password_change_page_says_why_it_is_shown(client, newcomer):
    response = _signed_in(client, newcomer).get(reverse("password_change"))

    assert response.status_code == 200
    assert "Choose your own password" in response.content.decode()


def test_an_htmx_request_is_sent_to_the_password_change_page_too(client, newcomer):
    response = _signed_in(client, newcomer).get("/annotate/", headers={"HX-Request": "true"})

    assert response["HX-Redirect"] == reverse("password_change")


def test_the_api_refuses_a_session_with_a_one_time_password_with_the_reason(client, newcomer):
    response = _signed_in(client, newcomer).get("/api/v1/tasks/")

    assert response.status_code == 403
    assert "Choose your own password" in response.json()["detail"]


def test_after_choosing_a_password_the_account_opens(client, newcomer):
    user, password = newcomer
    _signed_in(client, newcomer)

    response = client.post(
        reverse("password_change"),
        {"old_password": password, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert response.status_code == 302
    user.refresh_from_db()
    assert not user.must_change_password
    assert client.get("/annotate/").status_code == 200


def test_a_refused_password_change_keeps_the_account_restricted(client, newcomer):
    user, password = newcomer
    _signed_in(client, newcomer)

    response = client.post(
        reverse("password_change"),
        {"old_password": password, "new_password1": "short", "new_password2": "short"},
    )

    assert response.status_code == 200
    user.refresh_from_db()
    assert user.must_change_password
    assert client.get("/annotate/").status_code == 302


def test_the_api_gives_no_token_for_a_one_time_password(newcomer):
    user, password = newcomer

    response = APIClient().post(
        reverse("api:token"), {"username": user.username, "password": password}, format="json"
    )

    assert response.status_code == 403
    assert "token" not in response.json()
    assert "Choose your own password" in response.json()["detail"]


def test_accounts_made_otherwise_are_not_restricted(client, annotator):
    client.force_login(annotator)
    assert client.get("/annotate/").status_code == 200
