"""The OpenAPI schema is a contract: a fuzzer sends generated requests and checks the answers.

Schemathesis reads /api/v1/schema/ and generates requests for every operation, both ones
the schema calls valid (which must not be refused as malformed) and ones it calls invalid
(which must be refused). It calls the WSGI application in-process, signed in with a token
as an annotator, a manager and a researcher, and checks every answer: no server error, a
status code the schema documents, a body of the documented shape. Every run draws the same
examples (a fixed seed, SCHEMA_FUZZ_SEED to explore others), a bounded number of them.

Nothing leaves 127.0.0.1: host names do not resolve and connections elsewhere are refused,
so the page viewer answers its documented 502 and webhooks are refused as unreachable.
"""

from __future__ import annotations

import os
import socket

import pytest
import schemathesis
from django.core import signals
from django.core.cache import caches
from django.db import close_old_connections
from django.urls import reverse
from hypothesis import HealthCheck, assume, given, seed, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.boundary import TEXT_PATTERN
from annotation.models import Task, User
from annotation.vocabulary import Phase
from config.wsgi import application
from tests import steps
from tests.factories import (
    AcceptedClaimFactory,
    AnnotatorFactory,
    ArticleFactory,
    ManagerFactory,
    PooledTaskFactory,
)

# Small enough that the whole module runs in about a minute and a half on a shared 2-core
# machine; the seed makes a failure reproducible in CI and on every machine alike.
EXAMPLES = 60
SEED = int(os.environ.get("SCHEMA_FUZZ_SEED", "25"))


@schemathesis.check
def no_unhandled_error(ctx, response, case) -> bool | None:
    """No 500. The page viewer's documented 502 (the page could not be fetched) is what it
    must answer here, offline; status_code_conformance holds every 5xx to the schema."""
    if response.status_code == 500:
        raise AssertionError(f"500 from {case.operation.label}")
    return None


CHECKS = [
    no_unhandled_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    positive_data_acceptance,
    negative_data_rejection,
]


@pytest.fixture
def offline(monkeypatch):
    """Only loopback: a name never resolves and a connection elsewhere is refused."""
    real_connect = socket.socket.connect

    def getaddrinfo(host, *args, **kwargs):
        raise socket.gaierror(f"{host}: name resolution is off in this test")

    def connect(sock, address):
        if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1"):
            raise ConnectionRefusedError(f"{address[0]}: only 127.0.0.1 in this test")
        return real_connect(sock, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)


def app_in_test_transaction(environ, start_response):
    """The WSGI app inside the test's transaction, as Django's test client runs it."""
    # The end of a request closes a connection that is not in autocommit mode, which would
    # close the test transaction itself; the test client disconnects this handler too.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        response = application(environ, start_response)
        try:
            return list(response)
        finally:
            response.close()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(db, offline):
    caches["default"].clear()  # rate limits of earlier tests
    return schemathesis.openapi.from_wsgi(reverse("api-schema"), app_in_test_transaction)


def token_for(user) -> str:
    response = APIClient().post(
        reverse("api:token"),
        {"username": user.username, "password": "correct horse battery"},
        format="json",
    )
    assert response.status_code == 200, response.content
    return response.json()["token"]


@pytest.fixture
def work_to_find(db):
    """Something behind each endpoint: waiting articles and claims, accepted claims."""
    for _ in range(2):
        ArticleFactory()
        PooledTaskFactory(phase=Phase.QUESTIONS)
    AcceptedClaimFactory()


# Rules between two fields that a schema cannot state; the schema says them in words, and
# the fuzzer's "valid" requests must keep them like any client.
ORDERED_PAIRS = [("start", "end"), ("since", "until")]
# Valid in form, refused for what they name (documented 400): no schema can tell.
REFUSED_FOR_MEANING = {
    "POST /api/v1/auth/token/": "made-up credentials",
    "POST /api/v1/webhooks/": "a webhook host must resolve to a public address; offline none does",
    "PUT /api/v1/webhooks/{id}/": "as above",
    "PATCH /api/v1/webhooks/{id}/": "as above",
    "POST /api/v1/export-jobs/": "batch must name an existing batch",
    "POST /api/v1/tasks/{id}/submit/": "the payload must be the one of the task's own phase",
}
# Signing out ends the token the fuzzer works with: checked on their own, below.
SIGN_OUT = r"^/api/v1/auth/logout"


def breaks_a_rule_between_fields(case) -> bool:
    values = {**(case.query or {}), **(case.body if isinstance(case.body, dict) else {})}
    for low, high in ORDERED_PAIRS:
        first, last = values.get(low), values.get(high)
        if isinstance(first, str) and isinstance(last, str) and first and last and first > last:
            return True
    return False


def send_and_check(case, token: str, mode: GenerationMode) -> None:
    checks = CHECKS
    if case.operation.label in REFUSED_FOR_MEANING:
        checks = [check for check in CHECKS if check is not positive_data_acceptance]
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=checks)


def fuzz(strategy, token: str, mode: GenerationMode, examples: int = EXAMPLES) -> None:
    @seed(SEED)
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(data=st.data())
    def run(data) -> None:
        case = data.draw(strategy)
        if mode is GenerationMode.POSITIVE:
            assume(not breaks_a_rule_between_fields(case))
        send_and_check(case, token, mode)

    run()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_an_annotator_gets_only_documented_answers(api_schema, work_to_find, mode):
    annotator = AnnotatorFactory(username="fuzzy")
    strategy = api_schema.exclude(path_regex=SIGN_OUT).as_strategy(mode)
    fuzz(strategy, token_for(annotator), mode)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_an_annotators_own_task_gets_only_documented_answers(api_schema, work_to_find, mode):
    # Generated ids almost never name a real task; here every request names the caller's own
    # task in progress, so opening, draft saving and submitting are really exercised.
    annotator = AnnotatorFactory(username="fuzzy")
    token = token_for(annotator)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = client.post(reverse("api:task-next"), {"phase": Phase.QUESTIONS}, format="json")
    assert response.status_code == 200, response.content
    task = Task.objects.get(pk=response.json()["id"], annotator=annotator)
    own_task = api_schema.include(path_regex=r"^/api/v1/tasks/\{id\}/")
    fuzz(own_task.as_strategy(mode, path_parameters={"id": task.pk}), token, mode)
    task.refresh_from_db()
    assert task.annotator == annotator


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_a_manager_gets_only_documented_answers(api_schema, work_to_find, mode):
    manager = ManagerFactory(username="fuzzy-manager")
    strategy = api_schema.exclude(path_regex=SIGN_OUT).as_strategy(mode)
    fuzz(strategy, token_for(manager), mode)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_a_researcher_gets_only_documented_answers(api_schema, work_to_find, mode):
    researcher = AnnotatorFactory(
        username="fuzzy-researcher", role=User.Role.RESEARCHER, qualified_phases=[]
    )
    strategy = api_schema.exclude(path_regex=SIGN_OUT).as_strategy(mode)
    fuzz(strategy, token_for(researcher), mode)


def test_signing_out_answers_as_documented_and_ends_the_token(api_schema, db):
    annotator = AnnotatorFactory(username="leaving")
    for operation in api_schema.include(path_regex=SIGN_OUT).get_all_operations():
        token = token_for(annotator)
        case = operation.ok().Case()
        case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)
        after = case.call(headers={"Authorization": f"Token {token}"})
        assert after.status_code == 401


@pytest.fixture
def a_task_in_every_phase(db) -> dict[int, Task]:
    crew = [
        AnnotatorFactory(username=f"crew{n}", qualified_phases=[1, 2, 3, 4, 5]) for n in range(4)
    ]
    holder = AnnotatorFactory(username="holder", qualified_phases=[1, 2, 3, 4, 5])
    return steps.tasks_in_every_phase(holder, crew)


def test_every_phases_task_page_fits_exactly_one_documented_shape(
    api_schema, a_task_in_every_phase
):
    # oneOf: a page that fitted two shapes (a P4 page read as a P2 one) would fail here.
    token = token_for(next(iter(a_task_in_every_phase.values())).annotator)
    operation = api_schema["/api/v1/tasks/{id}/"]["GET"]
    for phase, task in a_task_in_every_phase.items():
        assert task.phase == phase
        case = operation.Case(path_parameters={"id": task.pk})
        response = case.call_and_validate(
            headers={"Authorization": f"Token {token}"}, checks=CHECKS
        )
        assert response.status_code == 200
        assert response.json()["phase"] == phase


@pytest.fixture
def schema(db) -> dict:
    return APIClient().get(reverse("api-schema"), {"format": "json"}).json()


def test_the_schema_refuses_what_the_server_refuses(schema):
    components = schema["components"]["schemas"]
    credentials = components["CredentialsRequest"]["properties"]
    # A blank username, or one of spaces: refused by the schema as by the server.
    assert credentials["username"]["minLength"] == 1
    assert credentials["username"]["pattern"].endswith("(?:\\S)")
    # A NUL (or a control or direction-override character) in any text of a request.
    draft = components["DraftRequest"]["properties"]["draft"]
    assert draft["patternProperties"] and draft["additionalProperties"] is False
    value = components["AnyValue"]["anyOf"][0]
    assert value["pattern"] == TEXT_PATTERN
    for name in ("NormalisedClaimRequest", "AnswerInputRequest", "WebhookRequest"):
        texts = [
            p
            for p in components[name]["properties"].values()
            if p.get("type") == "string" and p.get("format") != "date"
        ]
        assert texts and all("pattern" in p and "maxLength" in p for p in texts), name


def test_the_schema_says_in_words_what_no_schema_can_check(schema):
    export = schema["components"]["schemas"]["ExportJobRequest"]["properties"]
    assert "not after until (400)" in export["since"]["description"]
    assert "unknown one is refused (400)" in export["batch"]["description"]
    progress = {p["name"]: p for p in schema["paths"]["/api/v1/progress/"]["get"]["parameters"]}
    assert "not before start (400)" in progress["end"]["description"]


def test_a_query_too_long_for_the_web_server_is_documented(schema):
    search = schema["paths"]["/api/v1/search/"]["get"]["responses"]
    assert "414" in search
    assert "413" in schema["paths"]["/api/v1/tasks/{id}/draft/"]["put"]["responses"]
