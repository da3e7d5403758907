"""The access walk: every named route and every operation of the OpenAPI schema, tried as an
anonymous visitor, an annotator, a manager and a researcher, against a table of expected
status codes. A route or operation without a row in the table fails the walk, so nobody adds
a page without deciding who may open it. IDOR: another annotator's task is a 404 everywhere.
"""

import re

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation import handin
from annotation.models import Batch, SuggestionPoolBuild, TrainingAnswer, User
from annotation.vocabulary import Phase
from exports.models import ExportJob, ScoringJob, Webhook
from tests import steps
from tests.factories import (
    AcceptedClaimFactory,
    AnnotatorFactory,
    GoldClaimFactory,
    ManagerFactory,
    PooledTaskFactory,
)

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "annotator", "manager", "researcher")

# Status of a GET per role, in the order of ROLES. The annotator owns the sample task.
# 302: to the login page; 405: the route only takes POST; 401: the API asks for credentials.
# The API schema and its docs page are public: they describe the API and hold no data.
# A job's download is a 404 until the job has a file (the sample job has not run).
PAGES: dict[str, tuple[int, int, int, int]] = {
    "annotation:archives": (302, 403, 200, 403),
    "annotation:article-loaded": (405, 405, 405, 405),
    "annotation:article-text": (302, 404, 404, 404),
    "annotation:assign": (302, 403, 200, 403),
    "annotation:audit": (302, 403, 200, 403),
    "annotation:batch-suggestions": (405, 405, 405, 405),
    "annotation:build-suggestions": (405, 405, 405, 405),
    "annotation:check-evidence": (405, 405, 405, 405),
    "annotation:confirm-evidence": (405, 405, 405, 405),
    "annotation:control-panel": (302, 200, 200, 200),
    "annotation:earliest-date": (302, 200, 200, 200),
    "annotation:import-articles": (302, 403, 200, 403),
    "annotation:manage-suggestions": (302, 403, 200, 403),
    "annotation:manager-panel": (302, 403, 200, 403),
    # A task's revisions are its annotator's; managers read them on their own pages.
    "annotation:revisions": (302, 200, 404, 404),
    "annotation:revision": (302, 200, 404, 404),
    "annotation:restore-revision": (405, 405, 405, 405),
    "annotation:discard-revision": (405, 405, 405, 405),
    "annotation:manage-revisions": (302, 403, 200, 403),
    "annotation:manage-revision": (302, 403, 200, 403),
    "annotation:open-result": (405, 405, 405, 405),
    "annotation:people": (302, 403, 200, 403),
    "annotation:person": (302, 403, 200, 403),
    "annotation:qualification": (302, 403, 200, 403),
    "annotation:reassign": (405, 405, 405, 405),
    "annotation:release": (405, 405, 405, 405),
    "annotation:reopen": (405, 405, 405, 405),
    "annotation:report-claim": (405, 405, 405, 405),
    "annotation:retry-archives": (302, 403, 405, 403),
    "annotation:save-draft": (405, 405, 405, 405),
    "annotation:search-panel": (302, 200, 404, 404),
    "annotation:set-sampling": (405, 405, 405, 405),
    "annotation:skip-article": (405, 405, 405, 405),
    "annotation:source-check": (302, 200, 404, 404),
    "annotation:start-next": (405, 405, 405, 405),
    "annotation:submit-normalisation": (405, 405, 405, 405),
    "annotation:suggested-sentences": (302, 422, 404, 404),
    "annotation:suggestion-build": (302, 403, 200, 403),
    "annotation:suggestion-outcome": (405, 405, 405, 405),
    "annotation:suggestions": (302, 200, 404, 404),
    "annotation:task": (302, 200, 404, 404),
    "annotation:tasks": (302, 403, 200, 403),
    "annotation:tour-done": (405, 405, 405, 405),
    "annotation:training-feedback": (302, 200, 404, 404),
    "annotation:training-hand-in": (405, 405, 405, 405),
    # Only a claim of one's own P2 draw; the walk's people have none.
    "annotation:training-search": (302, 404, 404, 404),
    "annotation:training": (302, 200, 200, 200),
    "annotation:trainee": (302, 403, 200, 403),
    "annotation:wording-hints": (302, 200, 200, 200),
    "api-docs": (200, 200, 200, 200),
    "api-schema": (200, 200, 200, 200),
    "api:task-detail": (401, 200, 404, 404),
    "api:task-draft": (401, 405, 405, 405),
    "api:task-list": (401, 200, 200, 200),
    "api:task-next": (401, 405, 405, 405),
    "api:task-submit": (401, 405, 405, 405),
    "api:token": (405, 405, 405, 405),
    # Token sign-out takes the token itself (knox): a browser session is not enough.
    "api:logout": (401, 401, 401, 401),
    "api:logout-all": (401, 401, 401, 401),
    "exports:export-create": (405, 405, 405, 405),
    "exports:export-download": (302, 403, 404, 404),
    "exports:export-job": (302, 403, 200, 200),
    "exports:export-list": (302, 403, 200, 200),
    "exports:scoring-job": (302, 403, 200, 200),
    "exports:scoring": (302, 403, 200, 200),
    "exports:statistics": (302, 403, 200, 200),
    "exports_api:claim-detail": (401, 403, 200, 200),
    "exports_api:claim-list": (401, 403, 200, 200),
    "exports_api:export-job-detail": (401, 403, 200, 200),
    "exports_api:export-job-download": (401, 403, 404, 404),
    "exports_api:export-job-list": (401, 403, 200, 200),
    "exports_api:webhook-detail": (401, 403, 404, 200),
    "exports_api:webhook-list": (401, 403, 200, 200),
    "health": (200, 200, 200, 200),
    "home": (302, 200, 200, 200),
    "login": (200, 200, 200, 200),
    "password_change": (302, 200, 200, 200),
    "review:claim-history": (302, 403, 200, 403),
    "review:dashboard-csv": (302, 403, 200, 403),
    "review:dashboard-evidence": (302, 403, 200, 403),
    "review:dashboard": (302, 403, 200, 403),
    "review:fix-stuck": (405, 405, 405, 405),
    "review:submit-check": (405, 405, 405, 405),
    "review_api:agreement": (401, 403, 200, 403),
    "review_api:progress": (401, 403, 200, 403),
    "search:open": (401, 405, 405, 405),
    "search:search": (401, 400, 400, 400),
    "signed-in": (302, 302, 302, 302),
}

# Status per role of each schema operation, called with the sample pks and an empty body.
# 400: the empty body or missing parameters; a webhook belongs to the one who made it.
API_OPERATIONS: dict[str, tuple[int, int, int, int]] = {
    "DELETE /api/v1/webhooks/{id}/": (401, 403, 404, 204),
    "GET /api/v1/agreement/": (401, 403, 200, 403),
    "GET /api/v1/claims/": (401, 403, 200, 200),
    "GET /api/v1/claims/{id}/": (401, 403, 200, 200),
    "GET /api/v1/export-jobs/": (401, 403, 200, 200),
    "GET /api/v1/export-jobs/{id}/": (401, 403, 200, 200),
    "GET /api/v1/export-jobs/{id}/download/": (401, 403, 404, 404),
    "GET /api/v1/progress/": (401, 403, 200, 403),
    "GET /api/v1/search/": (401, 400, 400, 400),
    "GET /api/v1/tasks/": (401, 200, 200, 200),
    "GET /api/v1/tasks/{id}/": (401, 200, 404, 404),
    "GET /api/v1/webhooks/": (401, 403, 200, 200),
    "GET /api/v1/webhooks/{id}/": (401, 403, 404, 200),
    "PATCH /api/v1/webhooks/{id}/": (401, 403, 404, 200),
    "POST /api/v1/auth/token/": (400, 400, 400, 400),
    "POST /api/v1/auth/logout/": (401, 401, 401, 401),
    "POST /api/v1/auth/logout-all/": (401, 401, 401, 401),
    "POST /api/v1/export-jobs/": (401, 403, 201, 201),
    "POST /api/v1/search/open/": (401, 400, 400, 400),
    "POST /api/v1/tasks/next/": (401, 400, 400, 400),
    "POST /api/v1/tasks/{id}/submit/": (401, 400, 404, 404),
    "POST /api/v1/webhooks/": (401, 403, 400, 400),
    "PUT /api/v1/tasks/{id}/draft/": (401, 400, 404, 404),
    "PUT /api/v1/webhooks/{id}/": (401, 403, 404, 400),
}

# Routes the walk leaves to others, and why.
NOT_WALKED = {
    "logout": "a GET is refused by Django itself (405); signing out is tested in annotation",
}


def named_routes(resolver=None, namespace: str | None = None):
    """(name, pattern) of every named route, the admin site aside (it has its own login)."""
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            if entry.namespace == "admin":
                continue
            inner = entry.namespace
            inner = f"{namespace}:{inner}" if namespace and inner else (inner or namespace)
            yield from named_routes(entry, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            yield (f"{namespace}:{entry.name}" if namespace else entry.name), entry


@pytest.fixture
def world(db):
    """The people of the walk and one of each object a route can name."""
    alice = AnnotatorFactory(username="alice")
    morgan = ManagerFactory(username="morgan")
    rita = AnnotatorFactory(username="rita", role=User.Role.RESEARCHER, qualified_phases=[])
    bob = AnnotatorFactory(username="bob")
    PooledTaskFactory()
    task = steps.take(alice, Phase.QUESTIONS)
    revision = handin.save(task, {"questions": []}, version=0, author=alice).revision
    task.refresh_from_db()
    accepted = AcceptedClaimFactory()
    gold = GoldClaimFactory()
    # The answer itself: training.hand_in would first need a full pool to draw from.
    practice = TrainingAnswer.objects.create(
        annotator=alice, phase=Phase.NORMALISATION, claim=gold, answer={}, score={}
    )
    export = ExportJob.objects.create(requested_by=rita)
    scoring = ScoringJob.objects.create(
        requested_by=rita, predictions="scoring/p.json", references="scoring/r.json"
    )
    hook = Webhook.objects.create(
        owner=rita, url="http://127.0.0.1:9/hook", events=[Webhook.Event.EXPORT_FINISHED]
    )
    samples = {
        "annotation:person": {"pk": alice.pk},
        "annotation:trainee": {"pk": alice.pk},
        "annotation:reopen": {"pk": accepted.pk},
        "annotation:batch-suggestions": {
            "pk": Batch.objects.create(name="intake 1", kind=Batch.Kind.INTAKE).pk
        },
        "annotation:suggestion-build": {
            "pk": SuggestionPoolBuild.objects.create(requested_by=morgan).pk
        },
        "annotation:suggestion-outcome": {"pk": task.pk, "suggestion_pk": 1},
        "annotation:tour-done": {"name": "phase1"},
        **{
            name: {"pk": task.pk, "revision_pk": revision.pk}
            for name in (
                "annotation:revision",
                "annotation:restore-revision",
                "annotation:discard-revision",
                "annotation:manage-revision",
            )
        },
        "annotation:start-next": {"phase": Phase.QUESTIONS},
        "annotation:training": {"phase": Phase.NORMALISATION},
        "annotation:training-hand-in": {"phase": Phase.NORMALISATION, "claim_pk": gold.pk},
        "annotation:training-search": {"phase": Phase.QUESTIONS, "claim_pk": gold.pk},
        "annotation:training-feedback": {"pk": practice.pk},
        "exports:export-job": {"pk": export.pk},
        "exports:export-download": {"pk": export.pk},
        "exports:scoring-job": {"pk": scoring.pk},
        "review:claim-history": {"pk": accepted.pk},
        "review:dashboard-csv": {"table": "agreement"},
        "exports_api:claim-detail": {"pk": accepted.pk},
        "exports_api:export-job-detail": {"pk": export.pk},
        "exports_api:export-job-download": {"pk": export.pk},
        "exports_api:webhook-detail": {"pk": hook.pk},
    }
    return {
        "users": {"annotator": alice, "manager": morgan, "researcher": rita},
        "other_annotator": bob,
        "task": task,
        "samples": samples,
        "pks": {
            "tasks": task.pk,
            "claims": accepted.pk,
            "export-jobs": export.pk,
            "webhooks": hook.pk,
        },
    }


def sample_url(name: str, pattern: URLPattern, world) -> str:
    kwargs = world["samples"].get(name)
    if kwargs is None:
        # Every other route with a pk names a task: the annotator's own one.
        kwargs = {key: world["task"].pk for key in pattern.pattern.regex.groupindex}
    return reverse(name, kwargs=kwargs)


def client_as(role: str, world) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(world["users"][role])
    return client


def table_problems(observed: dict, expected: dict) -> list[str]:
    problems = [
        f"no expectation for {key}: observed {observed[key]}"
        for key in observed.keys() - expected.keys()
    ]
    problems += [
        f"{key} is expected but no longer exists" for key in expected.keys() - observed.keys()
    ]
    for key in observed.keys() & expected.keys():
        if observed[key] != expected[key]:
            roles = ", ".join(
                f"{role} {want}->{got}"
                for role, want, got in zip(ROLES, expected[key], observed[key], strict=True)
                if want != got
            )
            problems.append(f"{key}: {roles}")
    return sorted(problems)


def test_every_route_answers_each_role_as_the_table_says(world):
    routes = {name: p for name, p in named_routes() if name not in NOT_WALKED}
    clients = {role: client_as(role, world) for role in ROLES}
    observed = {
        name: tuple(clients[role].get(sample_url(name, p, world)).status_code for role in ROLES)
        for name, p in sorted(routes.items())
    }
    problems = table_problems(observed, PAGES)
    assert not problems, "\n".join(problems)


def schema_operations(world):
    """("METHOD /path", concrete path) of every operation in the OpenAPI schema."""
    client = client_as("manager", world)
    schema = client.get(reverse("api-schema"), {"format": "json"}).json()
    for path, operations in schema["paths"].items():
        collection = path.strip("/").split("/")[2]
        concrete = re.sub(r"\{[^}]+\}", str(world["pks"].get(collection, 1)), path)
        for method in operations:
            if method in {"get", "post", "put", "patch", "delete"}:
                yield f"{method.upper()} {path}", method, concrete


def test_every_schema_operation_answers_each_role_as_the_table_says(world):
    observed = {}
    for key, method, path in schema_operations(world):
        statuses = []
        for role in ROLES:
            client = client_as(role, world)
            response = getattr(client, method)(path, data={}, content_type="application/json")
            statuses.append(response.status_code)
        observed[key] = tuple(statuses)
    problems = table_problems(observed, API_OPERATIONS)
    assert not problems, "\n".join(problems)


def test_a_walk_with_a_wrong_expectation_fails(world):
    # The walk must be able to fail: a route whose row says "open to everyone" is reported.
    observed = {"annotation:manager-panel": (302, 403, 200, 403)}
    planted = {"annotation:manager-panel": (200, 200, 200, 200)}
    assert table_problems(observed, planted) == [
        "annotation:manager-panel: anonymous 200->302, annotator 200->403, researcher 200->403"
    ]
    assert table_problems(observed, {}) == [
        "no expectation for annotation:manager-panel: observed (302, 403, 200, 403)"
    ]


def task_routes():
    """Routes that name a task by its pk (pages and API)."""
    return sorted(
        (name, p)
        for name, p in named_routes()
        if set(p.pattern.regex.groupindex) & {"pk"}
        and (name.startswith(("annotation:", "review:submit-check", "api:")))
        and name.split(":")[1] in TASK_ROUTE_NAMES
    )


TASK_ROUTE_NAMES = {
    "task", "save-draft", "article-loaded", "submit-normalisation", "skip-article",
    "article-text", "check-evidence", "source-check", "confirm-evidence", "report-claim",
    "search-panel", "open-result", "suggestions", "suggested-sentences", "suggestion-outcome",
    "submit-check", "task-detail", "task-draft", "task-submit",
}  # fmt: skip


def test_another_annotators_task_is_not_found_on_every_page_and_endpoint(world):
    client = Client()
    client.force_login(world["other_annotator"])
    found = {}
    for name, pattern in task_routes():
        url = sample_url(name, pattern, world)
        for method in ("get", "post", "put"):  # the first the route takes
            response = getattr(client, method)(url, data={}, content_type="application/json")
            if response.status_code != 405:
                break
        found[name] = response.status_code
    assert set(found) >= {"annotation:task", "review:submit-check", "api:task-detail"}
    assert {name: code for name, code in found.items() if code != 404} == {}
    # Nothing of the task changed: the annotator who owns it still holds it, untouched.
    task = world["task"]
    before = (task.status, task.draft_version, task.annotator_id)
    task.refresh_from_db()
    assert (task.status, task.draft_version, task.annotator_id) == before
