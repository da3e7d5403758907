"""A source address typed by hand gets the search results' date check, shown to the P2/P4
annotator as soon as the draft is saved: a hint, never a block."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.urls import reverse

from search_proxy.dates import DateSource
from search_proxy.models import Document, Source
from tests.annotation.test_evidence_screen import claim, logged_in, p2_task, post_data  # noqa: F401

TYPED = "https://council.example.gov/parks-review"


def draft_hints(logged_in, p2_task, url: str) -> str:  # noqa: F811
    data = post_data(("How much did the council budget for parks in 2019?", [{"source_url": url}]))
    response = logged_in.post(
        reverse("annotation:save-draft", args=[p2_task.pk]), {**data, "draft_version": "0"}
    )
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    ("published", "hinted"),
    [(date(2020, 10, 30), False), (date(2020, 10, 31), True), (date(2020, 11, 1), True)],
    ids=["a day before", "same day", "a day after"],
)
def test_a_typed_address_dated_on_or_after_the_claim_date_is_pointed_out(
    logged_in,  # noqa: F811
    p2_task,  # noqa: F811
    published,
    hinted,
):
    assert p2_task.claim.claim_date == date(2020, 10, 31)
    Document.objects.create(
        url=TYPED,
        normalized_url=TYPED,
        title="Parks review",
        text="A review.",
        published=published,
        date_source=DateSource.GIVEN,
    )
    body = draft_hints(logged_in, p2_task, TYPED)
    assert ("on or after the claim date" in body) is hinted


def test_a_typed_address_first_archived_after_the_claim_date_is_pointed_out(
    logged_in,  # noqa: F811
    p2_task,  # noqa: F811
):
    Source.objects.create(
        url=TYPED, normalized_url=TYPED, earliest_capture_at=datetime(2020, 11, 2, tzinfo=UTC)
    )
    body = draft_hints(logged_in, p2_task, TYPED)
    assert "first saw this page on 2020-11-02" in body


def test_an_address_with_no_known_date_gets_no_date_hint(logged_in, p2_task):  # noqa: F811
    assert "claim date" not in draft_hints(logged_in, p2_task, TYPED)
