"""The leak hunt (issue 23): canaries planted on claims that go through P3 and P5, then every
named route and every operation of the API schema walked as their blind checker, in each
role, plus the suggestion, search and page-viewer endpoints. Any canary in any response body
or header fails the hunt; a planted leak must make it fail.

Canaries: a unique fact-check address in every wrapper form (on the claim and as answer
sources), the article's address, title and ClaimReview rating, the P2 claim correction, the
P3 justification (for the P5 checker), the other annotators' names, and, in API answers and
suggestions, the verdicts of the claims checked (P1 label, P2/P4 verdicts).
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import reverse

from annotation import accounts
from annotation.models import Answer, Claim, EvidenceRound, Question, Task, User
from annotation.suggestions.pool import build_pool
from annotation.vocabulary import AnswerType, Phase, SourceMedium, Verdict
from search_proxy.dates import DateSource
from search_proxy.models import Document
from tests import steps
from tests.architecture.test_access_walk import named_routes
from tests.factories import AnnotatorFactory, ManagerFactory, QuestionFactory

pytestmark = pytest.mark.django_db

LEAKY_TEMPLATES = Path(__file__).parents[1] / "review" / "leaky_templates"
ROLES = ("annotator", "manager", "researcher", "promoted")

FACT_CHECK = "https://www.factcheck.org/2020/10/zqcanary-fact-check/"
FACT_CHECK_FORMS = [
    f"https://archive.ph/{FACT_CHECK}",
    "https://archive.ph/zqCan",
    f"https://web.archive.org/web/20201001000000/{FACT_CHECK}",
    f"https://webcache.googleusercontent.com/search?q=cache:{FACT_CHECK}",
    "https://www-factcheck-org.cdn.ampproject.org/c/s/www.factcheck.org/2020/10/zqcanary-fact-check/",
    "https://www.google.com/amp/s/www.factcheck.org/2020/10/zqcanary-fact-check/",
    "https://www-factcheck-org.translate.goog/2020/10/zqcanary-fact-check/?_x_tr_sl=en",
    f"https://www.google.com/url?q={quote(FACT_CHECK, safe='')}",
    f"https://l.facebook.com/l.php?u={quote(FACT_CHECK, safe='')}",
    "https://bit.ly/zqCanaryShort",
    "https://t.co/zqCanaryT",
    "https://x.com/PolitiFact/status/zqcanary",
]
TEXT_CANARIES = {
    "fact-check address": "zqcanary",
    "article path": "zqcanary-article",
    "article title": "Zqcanary headline",
    "ClaimReview rating": "zqcanary-rating",
    "P2 claim correction": "zqcanary-correction",
    "P3 justification": "zqcanary-p3-justification",
}
CREW_NAMES = ("zqwriter", "zqanswerer", "zqchecker", "zqresolver")
LABEL_KEYS = {"fact_checker_label", "label", "verdict", "p1_label", "p2_verdict"}


def _add_wrapped_sources(evidence: EvidenceRound) -> None:
    """Imported data (or a rule added later) can hold such sources: put one of each form
    on the pairs the blind checker reads."""
    question = Question.objects.create(
        evidence_round=evidence, position=9, text="Which sources were cited?"
    )
    for position, address in enumerate(FACT_CHECK_FORMS):
        Answer.objects.create(
            question=question,
            position=position,
            text=f"Answer {position}.",
            answer_type=AnswerType.ABSTRACTIVE,
            source_url=address,
            source_medium=SourceMedium.WEB_TEXT,
        )


def _claim_through_p2(crew, n: int, p2_verdict: str) -> Claim:
    steps.new_article(
        url=f"https://fullfact.org/online/zqcanary-article-{n}/",
        title=f"Zqcanary headline {n}",
        claimreview_rating="zqcanary-rating",
    )
    (claim,) = steps.normalise(crew[0], [steps.normalised_claim(f"Claim {n}: parks cost 4m.")])
    steps.answer(crew[1], p2_verdict)
    Claim.objects.filter(pk=claim.pk).update(
        original_claim_url=FACT_CHECK_FORMS[0], media_url=FACT_CHECK_FORMS[9]
    )
    evidence = claim.evidence_rounds.get()
    EvidenceRound.objects.filter(pk=evidence.pk).update(claim_correction="zqcanary-correction")
    _add_wrapped_sources(evidence)
    return claim


def _checker(role: str, settings) -> User:
    if role == "manager":
        settings.MANAGERS_TAKE_BLIND_TASKS = True
        return ManagerFactory(username="checker")
    if role == "researcher":
        return AnnotatorFactory(
            username="checker", role=User.Role.RESEARCHER, qualified_phases=[1, 2, 3, 4, 5]
        )
    return AnnotatorFactory(username="checker")


@pytest.fixture
def hunt_world(db, settings, tmp_path):
    def build(role: str) -> dict:
        settings.SUGGESTION_POOL_DIR = tmp_path / "suggestions"
        crew = [AnnotatorFactory(username=name) for name in CREW_NAMES]
        checker = _checker(role, settings)
        # Claim A waits for its P3 with the checker.
        claim_a = _claim_through_p2(crew, 1, Verdict.SUPPORTED)
        p3 = steps.take(checker, Phase.QUALITY_CHECK)
        # Claim B reaches P5 with the checker: P3 disagreed, P4 resolved.
        claim_b = _claim_through_p2(crew, 2, Verdict.REFUTED)
        steps.check(crew[2], Verdict.SUPPORTED, justification="zqcanary-p3-justification")
        steps.resolve(crew[3], Verdict.REFUTED)
        _add_wrapped_sources(claim_b.evidence_rounds.get(phase=Phase.DISPUTE))
        p5 = steps.take(checker, Phase.POST_CONTROL)
        # An accepted claim with an open agreement check: in the suggestion pool.
        sample = QuestionFactory(
            text="How much did the park cost?",
            evidence_round__claim__text="Claim 3: the council spent 9 million on parks.",
            evidence_round__claim__label=Verdict.CONFLICTING,
            evidence_round__claim__claim_date=datetime.date(2020, 9, 1),
            evidence_round__claim__is_agreement_sample=True,
        ).evidence_round.claim
        Task.objects.create(
            phase=Phase.QUALITY_CHECK, article=sample.article, claim=sample, priority=1,
            is_agreement_sample=True,
        )  # fmt: skip
        build_pool()
        # The checker's own P1 and P2 work, from which suggestions, search and viewer run.
        steps.new_article(url="https://news.example.org/zz-own-p1/")
        own_p1 = steps.take(checker, Phase.NORMALISATION)
        steps.new_article(url="https://news.example.org/zz-own-p2/")
        steps.normalise(crew[0], [steps.normalised_claim("Claim 4: council spent 9 million.")])
        own_p2 = steps.take(checker, Phase.QUESTIONS)
        Document.objects.create(
            url=FACT_CHECK,
            normalized_url=FACT_CHECK,
            title="Zqcanary headline: rated false",
            text="Claim 1 parks cost 4m. zqcanary-rating: false.",
            date_source=DateSource.UNKNOWN,
        )
        if role == "promoted":
            manager = ManagerFactory(username="boss")
            accounts.update_account(
                checker, manager, role=User.Role.MANAGER, phases=[1, 2, 3, 4, 5], quotas={},
                active=True,
            )  # fmt: skip
        checker.refresh_from_db()
        return {
            "checker": checker,
            "claims": [claim_a, claim_b, sample],
            "blind_tasks": [p3, p5],
            "own": {"p1": own_p1, "p2": own_p2},
        }

    return build


def _kwargs_for(pattern, world, task: Task) -> dict:
    names = set(pattern.pattern.regex.groupindex)
    values = {
        "pk": task.pk,
        "phase": task.phase,
        "name": "p3",
        "table": "agreement",
        "suggestion_pk": 1,
        "claim_pk": world["claims"][2].pk,
    }
    return {name: values[name] for name in names if name in values}


def _claim_routes(name: str) -> bool:
    return name in {
        "review:claim-history", "annotation:reopen", "exports_api:claim-detail",
    }  # fmt: skip


def responses_of_the_walk(client: Client, world) -> dict[str, tuple[str, str]]:
    """Every response the blind checker can get: (body, headers) by what was asked."""
    seen: dict[str, tuple[str, str]] = {}

    def keep(key: str, response) -> None:
        body = getattr(response, "content", b"")
        if getattr(response, "streaming", False):
            body = b"".join(response.streaming_content)
        seen[key] = (body.decode(errors="replace"), json.dumps(dict(response.headers)))

    targets = [*world["blind_tasks"], world["own"]["p1"], world["own"]["p2"]]
    for name, pattern in sorted(named_routes()):
        if name == "logout":
            continue
        groups = set(pattern.pattern.regex.groupindex)
        variants = [_kwargs_for(pattern, world, task) for task in targets] if groups else [{}]
        if _claim_routes(name):
            variants = [{"pk": claim.pk} for claim in world["claims"]]
        for kwargs in variants:
            try:
                url = reverse(name, kwargs=kwargs)
            except Exception:  # a route whose arguments this walk cannot name
                continue
            response = client.get(url)
            keep(f"GET {url}", response)
            if response.status_code == 405:
                keep(f"POST {url}", client.post(url, {}))
    for key, method, path in schema_operations_for(client, world):
        response = getattr(client, method)(path, data={}, content_type="application/json")
        keep(key, response)
    # Suggestions with the checked claims' own words, search and the viewer on every form.
    p1, p2 = world["own"]["p1"], world["own"]["p2"]
    for claim in world["claims"]:
        for task in (p1, p2):
            url = reverse("annotation:suggestions", args=[task.pk])
            keep(
                f"suggestions {task.phase} {claim.pk}",
                client.get(url, {"text": claim.text, "claim_date": "2020-10-31"}),
            )
        keep(f"search {claim.pk}", client.get("/api/v1/search/", {"q": claim.text, "task": p2.pk}))
        keep(
            f"search panel {claim.pk}",
            client.get(reverse("annotation:search-panel", args=[p2.pk]), {"q": claim.text}),
        )
    for address in [FACT_CHECK, *FACT_CHECK_FORMS]:
        keep(
            f"viewer {address}",
            client.post(reverse("annotation:open-result", args=[p2.pk]), {"url": address}),
        )
        keep(
            f"viewer api {address}",
            client.post(
                "/api/v1/search/open/",
                {"url": address, "task": p2.pk},
                content_type="application/json",
            ),
        )
        keep(
            f"source check {address}",
            client.get(reverse("annotation:source-check", args=[p2.pk]), {"url": address}),
        )
    return seen


def schema_operations_for(client: Client, world):
    """Every operation of the API schema, with the blind tasks' and claims' ids filled in."""
    schema = client.get(reverse("api-schema"), {"format": "json"}).json()
    ids = {
        "tasks": [t.pk for t in world["blind_tasks"]],
        "claims": [c.pk for c in world["claims"]],
    }
    for path, operations in schema["paths"].items():
        collection = path.strip("/").split("/")[2]
        for method in operations:
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            for pk in ids.get(collection, [1]) if "{" in path else [None]:
                concrete = re.sub(r"\{[^}]+\}", str(pk), path) if pk is not None else path
                yield f"{method.upper()} {concrete}", method, concrete


def labels_in_json(value, path: str = "", owner=None) -> list[tuple[str, object]]:
    """Verdict-like fields holding a verdict, outside the viewer's own draft (error messages
    about a missing verdict are no leak), each with the id of the object that holds it."""
    found: list[tuple[str, object]] = []
    if isinstance(value, dict):
        owner = value.get("id", owner)
        for key, inner in value.items():
            if key == "draft":
                continue
            if key in LABEL_KEYS and isinstance(inner, str) and inner in Verdict.values:
                found.append((f"{path}.{key}={inner}", owner))
            found += labels_in_json(inner, f"{path}.{key}", owner)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += labels_in_json(inner, f"{path}[{index}]", owner)
    return found


def leaks_in(
    responses: dict[str, tuple[str, str]], canaries: dict[str, str], readable=frozenset()
) -> list[str]:
    """The canaries found; `readable`: ids of claims whose verdict this viewer may read (ones
    they can never be asked to judge blind), which the researchers' claims API may show."""
    leaks = []
    for where, (body, headers) in responses.items():
        for what, canary in canaries.items():
            if canary.lower() in body.lower() or canary.lower() in headers.lower():
                leaks.append(f"{what} ({canary!r}) in {where}")
        if where.startswith(("GET /api/", "POST /api/", "PUT /api/", "PATCH /api/", "search ")):
            try:
                data = json.loads(body)
            except ValueError:
                continue
            claims_api = "/api/v1/claims/" in where
            leaks += [
                f"verdict {hit} in {where}"
                for hit, owner in labels_in_json(data)
                if not (claims_api and owner in readable)
            ]
        if where.startswith("suggestions") and Verdict.CONFLICTING in body and not readable:
            leaks.append(f"the pooled sample's verdict in {where}")
    return leaks


def canaries_for(role: str) -> dict[str, str]:
    canaries = dict(TEXT_CANARIES)
    # Managers read the people and task lists, where every account's name is listed: for
    # them names are not a canary (who did what on a blind claim stays out: claim history
    # and the claims API are closed to them).
    if role in ("annotator", "researcher"):
        canaries |= {f"annotator {name}": name for name in CREW_NAMES}
    return canaries


@pytest.mark.parametrize("role", ROLES)
def test_the_blind_checker_finds_no_canary_anywhere_in_any_role(hunt_world, role):
    world = hunt_world(role)
    client = Client()
    client.force_login(world["checker"])
    responses = responses_of_the_walk(client, world)
    assert len(responses) > 150, len(responses)
    # Only the promoted manager (no blind phase left) can never check the pooled sample.
    readable = {world["claims"][2].pk} if role == "promoted" else set()
    leaks = leaks_in(responses, canaries_for(role), readable)
    assert not leaks, f"{len(leaks)} leaks:\n" + "\n".join(leaks[:40])


def test_a_planted_leak_makes_the_hunt_fail(hunt_world, settings):
    settings.TEMPLATES = [
        {**settings.TEMPLATES[0], "DIRS": [LEAKY_TEMPLATES, *settings.TEMPLATES[0]["DIRS"]]}
    ]
    world = hunt_world("annotator")
    client = Client()
    client.force_login(world["checker"])
    leaks = leaks_in(responses_of_the_walk(client, world), canaries_for("annotator"))
    assert any(leak.startswith("article path") for leak in leaks), leaks


def test_the_json_check_finds_a_verdict_outside_the_draft():
    body = {"id": 1, "draft": {"verdict": "Refuted"}, "claim": {"label": "Supported"}}
    assert labels_in_json(body) == [(".claim.label=Supported", 1)]
    responses = {"GET /api/v1/claims/1/": (json.dumps(body), "{}")}
    assert leaks_in(responses, {}) == ["verdict .claim.label=Supported in GET /api/v1/claims/1/"]
    assert leaks_in(responses, {}, readable={1}) == []
