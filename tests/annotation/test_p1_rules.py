"""The P1 form and the P1 API share annotation/normalisation.py: whatever one refuses, the
other refuses too, at the same field, and nothing is stored."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import assignment
from annotation.models import Article, Claim
from annotation.submissions import TEXT_LIMITS
from annotation.vocabulary import ClaimType, Phase, Strategy, Verdict
from tests import steps

ARTICLE = "https://fullfact.org/online/parks-story/"
GOOD = {
    "text": "The town spent 4 million pounds on parks in 2019.",
    "fact_checker_label": Verdict.REFUTED,
    "claim_date": "2020-10-30",
    "speaker": "A councillor",
    "reporting_source": "Facebook",
    "original_claim_url": "https://facebook.com/post/1",
    "media_url": "",
    "image_transcription": "",
    "location_iso_code": "GB",
    "claim_types": [ClaimType.NUMERICAL],
    "fact_checking_strategies": [Strategy.WRITTEN_EVIDENCE],
}
# (what differs from a good claim, the field that must be refused)
BAD_CLAIMS = {
    "script as original URL": ({"original_claim_url": "javascript:alert(1)"}, "original_claim_url"),
    "ftp as original URL": ({"original_claim_url": "ftp://example.org/a"}, "original_claim_url"),
    "a fact-checker as original URL": (
        {"original_claim_url": "https://www.politifact.com/factchecks/2020/x/"},
        "original_claim_url",
    ),
    "the article as original URL": (
        {"original_claim_url": "https://web.archive.org/web/2020/" + ARTICLE},
        "original_claim_url",
    ),
    # Issue 23: any wrapped form of a fact-check, and links that cannot be checked offline.
    "an archive.ph copy of a fact-check as original URL": (
        {"original_claim_url": "https://archive.ph/https://www.factcheck.org/2020/10/x/"},
        "original_claim_url",
    ),
    "a Google redirect to a fact-check as original URL": (
        {"original_claim_url": "https://www.google.com/url?q=https://www.snopes.com/fact-check/x/"},
        "original_claim_url",
    ),
    "a translated fact-check as original URL": (
        {"original_claim_url": "https://www-politifact-com.translate.goog/factchecks/x/"},
        "original_claim_url",
    ),
    "a shortened link as original URL": (
        {"original_claim_url": "https://bit.ly/3secret"},
        "original_claim_url",
    ),
    "a fact-checker's own post as original URL": (
        {"original_claim_url": "https://x.com/PolitiFact/status/1"},
        "original_claim_url",
    ),
    "script as media URL": ({"media_url": "javascript:alert(1)"}, "media_url"),
    "no such country": ({"location_iso_code": "ZZ"}, "location_iso_code"),
    "a three-letter country": ({"location_iso_code": "GBR"}, "location_iso_code"),
    "no text": ({"text": " "}, "text"),
    "no claim type": ({"claim_types": []}, "claim_types"),
    "no strategy": ({"fact_checking_strategies": []}, "fact_checking_strategies"),
    "no claim date": ({"claim_date": ""}, "claim_date"),
    "a 96,000-character claim": ({"text": "The council spent money. " * 3840}, "text"),
    "a very long speaker": ({"speaker": "A" * 301}, "speaker"),
    "a very long transcription": ({"image_transcription": "words " * 1000}, "image_transcription"),
}


@pytest.fixture
def p1_task(annotator):
    steps.new_article(url=ARTICLE)
    return assignment.next_task(annotator, Phase.NORMALISATION)


def _form_post(task, claims: list[dict]) -> dict:
    data = {
        "claims-TOTAL_FORMS": str(len(claims)),
        "claims-INITIAL_FORMS": "0",
        "draft_version": str(task.draft_version),
    }
    for index, claim in enumerate(claims):
        data.update({f"claims-{index}-{key}": value for key, value in claim.items()})
    return data


def _api_payload(claims: list[dict]) -> dict:
    return {"claims": [{**c, "claim_date": c["claim_date"] or None} for c in claims]}


def _nothing_stored() -> None:
    assert not Claim.objects.exists()
    assert Article.objects.get().state == Article.State.AWAITING_NORMALISATION


@pytest.mark.parametrize("case", BAD_CLAIMS)
def test_the_p1_form_refuses_each_bad_claim_at_its_field(client, annotator, p1_task, case):
    change, field = BAD_CLAIMS[case]
    client.force_login(annotator)
    url = reverse("annotation:submit-normalisation", args=[p1_task.pk])
    response = client.post(url, _form_post(p1_task, [{**GOOD, **change}]))
    assert response.status_code == 422
    assert response.context["formset"].forms[0].errors.get(field), case
    _nothing_stored()


@pytest.mark.parametrize("case", BAD_CLAIMS)
def test_the_p1_api_refuses_each_bad_claim_at_its_field(annotator, p1_task, case):
    change, field = BAD_CLAIMS[case]
    api = APIClient()
    api.force_authenticate(annotator)
    response = api.post(
        f"/api/v1/tasks/{p1_task.pk}/submit/", _api_payload([{**GOOD, **change}]), format="json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["claims"]["0"][field], case
    _nothing_stored()


def test_both_refuse_more_claims_than_one_article_may_hold(client, annotator, p1_task):
    claims = [GOOD] * 51
    client.force_login(annotator)
    url = reverse("annotation:submit-normalisation", args=[p1_task.pk])
    assert client.post(url, _form_post(p1_task, claims)).status_code == 422
    api = APIClient()
    api.force_authenticate(annotator)
    response = api.post(f"/api/v1/tasks/{p1_task.pk}/submit/", _api_payload(claims), format="json")
    assert response.status_code == 400
    assert "claims" in response.json()
    _nothing_stored()


def test_both_accept_a_good_claim(client, annotator, p1_task):
    api = APIClient()
    api.force_authenticate(annotator)
    response = api.post(f"/api/v1/tasks/{p1_task.pk}/submit/", _api_payload([GOOD]), format="json")
    assert response.status_code == 200, response.content
    assert Claim.objects.get().location_iso_code == "GB"


def test_the_p1_screen_shows_the_rules_length_limits(client, annotator, p1_task):
    client.force_login(annotator)
    page = client.get(reverse("annotation:task", args=[p1_task.pk]), follow=True)
    form = page.context["formset"].empty_form

    assert form.fields["text"].widget.attrs["maxlength"] == TEXT_LIMITS["claim"]
    assert f'maxlength="{TEXT_LIMITS["claim"]}"' in page.content.decode()
