"""The blind phases (P3, P5) never see the article, the fact-checker's label, earlier verdicts
or other annotators' names: not in their pages, fragments, error pages nor API answers.

Two ways of looking: a search for every secret string, and a comparison of two claims that
differ only in their secrets (their pages must be identical once ids are masked).
"""

import re
from pathlib import Path

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import workflow
from annotation.blindness import BLIND_CLAIM_FIELDS, HIDDEN_ADDRESS
from annotation.models import Claim, Task
from annotation.vocabulary import Phase
from tests import steps
from tests.factories import AnnotatorFactory

LEAKY_TEMPLATES = Path(__file__).parent / "leaky_templates"


def _seed(tag: str, labels: tuple[str, str, str, str]):
    """A claim through P1-P4 whose hidden facts all carry `tag`; returns its P3 and P5 tasks
    and the secrets. labels: P1 label, P2 verdict, P3 verdict, P4 verdict."""
    people = [AnnotatorFactory(username=f"{tag}-{role}") for role in ("p1", "p2", "p3", "p4", "p5")]
    # a separate checker for the agreement-free P3 page we inspect
    article = steps.new_article(
        url=f"https://fullfact.org/online/{tag}-secret-article/",
        title=f"Fact check {tag}: headline only the article has",
    )
    (claim,) = steps.normalise(
        people[0],
        [
            steps.normalised_claim(
                "The council spent 4 million on parks in 2019.", fact_checker_label=labels[0]
            )
        ],
    )
    steps.answer(people[1], labels[1])
    p3 = steps.take(people[2], Phase.QUALITY_CHECK)
    secrets = {
        "article url": article.url,
        "article path": f"{tag}-secret-article",
        "article title": article.title,
        "P1 annotator": people[0].username,
        "P2 annotator": people[1].username,
    }
    return claim, people, p3, secrets


def _pages(client: APIClient, task: Task) -> dict[str, str]:
    """Every response a blind annotator can get for their task."""
    page = client.get(reverse("annotation:task", args=[task.pk]))
    draft = client.post(
        reverse("annotation:save-draft", args=[task.pk]),
        {"draft_version": str(task.draft_version), "justification": "typing"},
    )
    task.refresh_from_db()
    refused = client.post(
        reverse("review:submit-check", args=[task.pk]),
        {"draft_version": str(task.draft_version), "justification": ""},
    )
    stale = client.post(reverse("review:submit-check", args=[task.pk]), {"draft_version": "999"})
    api_detail = client.get(f"/api/v1/tasks/{task.pk}/")
    api_next = client.post("/api/v1/tasks/next/", {"phase": task.phase}, format="json")
    panel = client.get(reverse("annotation:control-panel"))
    return {
        "page": page.content.decode(),
        "draft fragment": draft.content.decode(),
        "refused submission": refused.content.decode(),
        "stale submission": stale.content.decode(),
        "api detail": api_detail.content.decode(),
        "api next": api_next.content.decode(),
        "control panel": panel.content.decode(),
    }


def assert_blind(pages: dict[str, str], secrets: dict[str, str]) -> None:
    leaks = [
        f"{what} ({secret!r}) in the {where}"
        for where, body in pages.items()
        for what, secret in secrets.items()
        if secret.lower() in body.lower()
    ]
    assert not leaks, "blind phase leaks: " + "; ".join(leaks)


def _masked(body: str, people, task: Task) -> str:
    for person in people:
        body = body.replace(person.username, "<person>")
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", body)
    body = re.sub(r'"X-CSRFToken": "[^"]+"', "", body)
    body = re.sub(r"\b\d{4}-\d\d-\d\dT[\d:.+-]+Z?", "<time>", body)
    body = re.sub(rf"/tasks/{task.pk}/", "/tasks/<task>/", body)
    body = re.sub(rf"\btask {task.pk}\b", "task <task>", body)
    body = re.sub(r'"(id|lease_expires_at)":\s*[^,}]+', r'"\1": <x>', body)
    return body


@pytest.fixture
def api():
    return APIClient()


@pytest.mark.parametrize("phase", [Phase.QUALITY_CHECK, Phase.POST_CONTROL])
def test_blind_phases_never_reveal_the_article_labels_verdicts_or_people(db, api, phase):
    _claim, people, p3, secrets = _seed("alpha", ("Refuted", "Supported", "Refuted", "Refuted"))
    if phase == Phase.QUALITY_CHECK:
        task, viewer = p3, people[2]
    else:
        workflow.submit_quality_check(p3, steps.verdict("Refuted", justification="P3 secret words"))
        steps.resolve(people[3], "Refuted")
        task, viewer = steps.take(people[4], Phase.POST_CONTROL), people[4]
        secrets |= {
            "P3 justification": "P3 secret words",
            "P3 annotator": people[2].username,
            "P4 annotator": people[3].username,
        }
    api.force_login(viewer)
    assert_blind(_pages(api, task), secrets)


def test_two_claims_that_differ_only_in_hidden_facts_look_the_same(db, api):
    one = _seed("one", ("Refuted", "Supported", "Refuted", "Refuted"))
    two = _seed("two", ("Supported", "Conflicting Evidence/Cherrypicking", "Refuted", "Refuted"))
    bodies = []
    for _claim, people, task, _ in (one, two):
        api.force_login(people[2])
        page = api.get(reverse("annotation:task", args=[task.pk])).content.decode()
        detail = api.get(f"/api/v1/tasks/{task.pk}/").content.decode()
        bodies.append((_masked(page, people, task), _masked(detail, people, task)))
    assert bodies[0][0] == bodies[1][0], "the P3 page differs between the two claims"
    assert bodies[0][1] == bodies[1][1], "the P3 API answer differs between the two claims"


def test_the_blindness_check_catches_a_planted_leak(db, api, settings):
    """A template that shows the article URL must make the blindness assertion fail."""
    settings.TEMPLATES = [
        {**settings.TEMPLATES[0], "DIRS": [LEAKY_TEMPLATES, *settings.TEMPLATES[0]["DIRS"]]}
    ]
    _claim, people, task, secrets = _seed("leak", ("Refuted", "Supported", "Refuted", "Refuted"))
    api.force_login(people[2])
    with pytest.raises(AssertionError, match="article url"):
        assert_blind(_pages(api, task), secrets)


FACT_CHECKER_PAGE = "https://www.politifact.com/factchecks/2020/jan/01/original-secret-page/"


@pytest.mark.parametrize("phase", [Phase.QUALITY_CHECK, Phase.POST_CONTROL])
@pytest.mark.parametrize(
    "where", ["original_claim_url", "media_url", "original_claim_url as the article"]
)
def test_a_fact_checkers_address_on_the_claim_is_shown_nowhere_in_a_blind_phase(
    db, api, phase, where
):
    """Imported claims may carry a fact-checker's page (or their own article) as their
    original or media address; every blind surface shows it only as hidden."""
    claim, people, p3, secrets = _seed("fcurl", ("Refuted", "Supported", "Refuted", "Refuted"))
    field, url = where.split()[0], FACT_CHECKER_PAGE
    if where.endswith("the article"):
        url = "https://web.archive.org/web/20201101000000/" + claim.article.url
    Claim.objects.filter(pk=claim.pk).update(**{field: url})
    secrets = {"fact-checker address": url, "its path": "original-secret-page"} | secrets
    if phase == Phase.QUALITY_CHECK:
        task, viewer = p3, people[2]
    else:
        workflow.submit_quality_check(p3, steps.verdict("Refuted"))
        steps.resolve(people[3], "Refuted")
        task, viewer = steps.take(people[4], Phase.POST_CONTROL), people[4]
    api.force_login(viewer)
    pages = _pages(api, task)
    assert_blind(pages, secrets)
    assert HIDDEN_ADDRESS in pages["page"]
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["claim"][field] == HIDDEN_ADDRESS


def test_the_task_page_of_a_submitted_blind_task_hides_a_fact_checkers_address(db, api):
    claim, people, p3, secrets = _seed("done", ("Refuted", "Supported", "Refuted", "Refuted"))
    Claim.objects.filter(pk=claim.pk).update(original_claim_url=FACT_CHECKER_PAGE)
    workflow.submit_quality_check(p3, steps.verdict("Refuted"))
    api.force_login(people[2])
    page = api.get(reverse("annotation:task", args=[p3.pk])).content.decode()
    assert_blind({"submitted task page": page}, secrets | {"address": FACT_CHECKER_PAGE})
    assert HIDDEN_ADDRESS in page


def test_every_blind_surface_takes_the_claim_from_the_one_definition():
    """The API serializer lists exactly the fields of the blind view, nothing of its own."""
    from annotation.serializers import BlindClaimSerializer

    assert tuple(BlindClaimSerializer().fields) == BLIND_CLAIM_FIELDS
