"""Hostile input: whatever arrives, the answer is a clear refusal or a clean success.

Property-based (hypothesis), bounded: very long texts, odd Unicode (NUL, lone surrogates,
right-to-left marks, emoji) and markup go into the importers, the scoring input, the draft
payloads and the date helpers. Nothing may crash with anything but the validation error
each entry point promises, and a refusal writes nothing.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import itertools
import json

import pytest
from django.urls import reverse
from django.utils.html import escape
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from annotation.dates import DateNotUnderstood, earliest_date
from annotation.intake import IntakeError, read_rows
from annotation.models import Article, Claim, Task
from annotation.vocabulary import Phase
from exports.averitec_json import DatasetFormatError, parse_dataset
from exports.dataset import import_claims
from exports.scoring import read_records
from pipeline.scoring import ScoringInputError, check
from search_proxy.dates import parse_date
from tests.factories import AnnotatorFactory, PooledTaskFactory

BOUNDED = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)

# Text as hostile as it gets: every code point including NUL and lone surrogates, plus a few
# chosen pieces (markup, right-to-left override, emoji, very long runs).
NASTY_PIECES = st.sampled_from(
    [
        "\x00",
        "\ud800",
        "\u202e",
        "\u200f",
        "😀👍🏽",
        "<script>alert(1)</script>",
        '"><img src=x onerror=alert(1)>',
        "{{ 7*7 }}",
        "a" * 100_000,
    ]
)
NASTY_TEXT = st.one_of(
    st.text(st.characters(codec=None), max_size=200),
    st.lists(st.one_of(NASTY_PIECES, st.text(max_size=20)), max_size=4).map("".join),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(-1e9, 1e9) | NASTY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NASTY_TEXT, inner, max_size=4),
    max_leaves=12,
)


BATCH_NUMBERS = itertools.count()


def counts() -> tuple[int, int, int]:
    return Article.objects.count(), Claim.objects.count(), Task.objects.count()


# --- The dataset importer ----------------------------------------------------------------


def a_record(**changes) -> dict:
    record = {
        "claim": "The council spent 2 million on parks.",
        "required_reannotation": False,
        "label": "Refuted",
        "justification": "The budget says otherwise.",
        "claim_date": "31-10-2020",
        "speaker": None,
        "original_claim_url": None,
        "fact_checking_article": "https://factcheck.example.org/parks",
        "reporting_source": None,
        "location_ISO_code": "GB",
        "claim_types": ["Numerical Claim"],
        "fact_checking_strategies": ["Written Evidence"],
        "questions": [
            {
                "question": "How much was spent?",
                "answers": [
                    {
                        "answer": "1 million",
                        "answer_type": "Extractive",
                        "source_url": "https://council.example.gov/budget",
                        "source_medium": "Web text",
                    }
                ],
            }
        ],
    }
    record.update(changes)
    return record


@pytest.mark.django_db
@BOUNDED
@given(
    field=st.sampled_from(["claim", "justification", "speaker", "claim_date"]), value=JSON_VALUES
)
def test_a_dataset_record_with_any_value_is_imported_whole_or_refused_clearly(field, value):
    before = counts()
    try:
        records = parse_dataset([a_record(**{field: value})])
    except DatasetFormatError as exc:
        assert "record 0" in str(exc)
        assert counts() == before
        return
    report = import_claims(records, batch_name=f"hostile {next(BATCH_NUMBERS)}")
    # The same record again is reported as a duplicate, not stored twice.
    assert report.claims + len(report.skipped_duplicates) == 1
    assert Claim.objects.count() == before[1] + report.claims


@BOUNDED
@given(data=JSON_VALUES)
def test_any_json_value_as_a_dataset_file_is_parsed_or_refused_with_a_place(data):
    try:
        parse_dataset(data)
    except DatasetFormatError as exc:
        assert str(exc)


# --- The article importer ----------------------------------------------------------------


@pytest.mark.django_db
@BOUNDED
@given(row=st.dictionaries(st.sampled_from(["url", "title", "claim_date", "rating"]), JSON_VALUES))
def test_any_intake_line_is_read_or_refused_with_its_line(tmp_path_factory, row):
    path = tmp_path_factory.mktemp("intake") / "articles.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8", errors="surrogatepass")
    try:
        read_rows(path)
    except IntakeError as exc:
        assert "line 1" in str(exc) or "not" in str(exc)


# --- The scoring input -------------------------------------------------------------------


@BOUNDED
@given(raw=st.binary(max_size=300) | NASTY_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_bytes_as_a_scoring_file_are_read_or_refused_with_the_file_name(raw):
    try:
        read_records(io.BytesIO(raw), "predictions.json")
    except ScoringInputError as exc:
        assert "predictions.json" in str(exc)


@BOUNDED
@given(predictions=JSON_VALUES, references=JSON_VALUES)
def test_any_predictions_are_checked_or_refused_clearly(predictions, references):
    try:
        check(predictions, references)
    except ScoringInputError as exc:
        assert str(exc)


# --- The date helpers --------------------------------------------------------------------


@BOUNDED
@given(text=NASTY_TEXT | st.from_regex(r"\d{1,6}[-/. ]\d{1,4}[-/. ]\d{1,6}", fullmatch=True))
def test_the_search_date_reader_gives_a_date_or_nothing(text):
    assert parse_date(text) is None or isinstance(parse_date(text), datetime.date)


@BOUNDED
@given(
    text=NASTY_TEXT
    | st.from_regex(
        r"(early |late )?[A-Za-z]{3,9} \d{1,5}( to [A-Za-z]{3,9} \d{1,5})?", fullmatch=True
    )
)
def test_the_earliest_date_helper_gives_a_date_or_says_it_cannot(text):
    with contextlib.suppress(DateNotUnderstood):
        assert isinstance(earliest_date(text), datetime.date)


# --- Draft payloads through the API ------------------------------------------------------


@pytest.fixture
def task_in_progress(db):
    annotator = AnnotatorFactory(username="hostile")
    PooledTaskFactory(phase=Phase.QUESTIONS)
    client = APIClient()
    client.force_authenticate(annotator)
    response = client.post("/api/v1/tasks/next/", {"phase": Phase.QUESTIONS}, format="json")
    assert response.status_code == 200, response.content
    return client, Task.objects.get(pk=response.json()["id"])


def test_any_draft_is_saved_whole_or_refused_with_a_clear_400(task_in_progress):
    client, task = task_in_progress

    @BOUNDED
    @given(draft=st.dictionaries(NASTY_TEXT, JSON_VALUES, max_size=4))
    @example(draft={"text": "\x00"})  # were 500s from PostgreSQL's JSON
    @example(draft={"\ud800": "key"})
    def save(draft):
        task.refresh_from_db()
        version, saved = task.draft_version, task.draft
        body = json.dumps({"draft": draft, "version": version}, allow_nan=False)
        response = client.generic(
            "PUT", f"/api/v1/tasks/{task.pk}/draft/", body, content_type="application/json"
        )
        task.refresh_from_db()
        if response.status_code == 200:
            assert task.draft == draft
        else:
            assert response.status_code == 400, response.content
            assert "draft" in response.json()
            assert (task.draft_version, task.draft) == (version, saved)

    save()


# --- Markup in claims is shown, never run ------------------------------------------------


@pytest.mark.parametrize("markup", ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>'])
def test_markup_in_a_claim_and_its_draft_is_shown_as_text_on_the_task_page(
    task_in_progress, client, markup
):
    api, task = task_in_progress
    Claim.objects.filter(pk=task.claim_id).update(text=f"Claim {markup}", speaker=markup)
    response = api.put(
        f"/api/v1/tasks/{task.pk}/draft/",
        {"draft": {"verdict": markup, "questions": [{"text": markup}]}, "version": 0},
        format="json",
    )
    assert response.status_code == 200
    client.force_login(task.annotator)
    response = client.get(reverse("annotation:task", args=[task.pk]), follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    assert markup not in page
    assert escape(markup) in page


# --- Numbers and text the database cannot take, through the API (issue 25, item 3) -------


@pytest.mark.parametrize(
    ("draft", "where"),
    [
        ('{"n": 1e400}', "draft.n is a number too large to store"),
        ('{"items": [1, -1e999]}', "draft.items.1 is a number too large to store"),
        ('{"text": "right-to-left \\u202e"}', "draft.text holds a right-to-left override"),
        ('{"\\u0007": "bell in a key"}', "draft has a key that holds the control character"),
    ],
)
def test_a_draft_the_database_cannot_store_is_a_clear_400_naming_the_place(
    task_in_progress, draft, where
):
    client, task = task_in_progress
    version, saved = task.draft_version, task.draft
    body = f'{{"draft": {draft}, "version": {version}}}'

    response = client.generic(
        "PUT", f"/api/v1/tasks/{task.pk}/draft/", body, content_type="application/json"
    )

    assert response.status_code == 400, response.content
    assert where in response.json()["draft"][0]
    task.refresh_from_db()
    assert (task.draft_version, task.draft) == (version, saved)
