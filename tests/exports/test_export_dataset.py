"""The export_dataset command: imported records come back exactly; platform claims follow the
release's format."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management.base import CommandError
from django.utils import timezone

from annotation.vocabulary import AnswerType, Phase, SourceMedium
from exports.averitec_json import CLAIM_KEYS, format_claim_date, parse_claim_date
from search_proxy.models import Source
from tests.factories import (
    AcceptedClaimFactory,
    AnswerFactory,
    ClaimWaitingForQuestionsFactory,
    QuestionFactory,
    SubmittedEvidenceRoundFactory,
)


def key_order(value: Any) -> Any:
    """The keys of every object in a JSON value, in order, at every level."""
    if isinstance(value, dict):
        return [(key, key_order(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [key_order(item) for item in value]
    return None


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --- Round trip of dev.json -----------------------------------------------------------


def test_exporting_an_imported_dev_json_gives_back_the_same_file(
    dev_json: Path, run_import, run_export, tmp_path: Path
):
    run_import(dev_json)
    out = tmp_path / "export.json"

    output = run_export(out)

    original = read_json(dev_json)
    exported = read_json(out)
    assert "Wrote 500 claims" in output
    assert exported == original
    assert key_order(exported) == key_order(original)
    # Missing keys stay missing and nulls stay null, rather than the one becoming the other.
    assert sum("cached_original_claim_url" not in record for record in exported) == 4
    answers = [a for record in exported for q in record["questions"] for a in q["answers"]]
    assert sum("cached_source_url" not in answer for answer in answers) == 73
    assert sum(record["speaker"] is None for record in exported) == 110
    assert out.read_bytes() == dev_json.read_bytes()


def test_json_lines_export_has_one_line_per_dev_json_record(
    dev_json: Path, run_import, run_export, tmp_path: Path
):
    run_import(dev_json)
    out = tmp_path / "export.jsonl"

    run_export(out, "--format", "jsonl")

    original = read_json(dev_json)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(original)
    for line, record in zip(lines, original, strict=True):
        decoded = json.loads(line)
        assert decoded == record
        assert key_order(decoded) == key_order(record)


# --- Claims made on the platform ------------------------------------------------------

ARCHIVED = "https://web.archive.org/web/20210105120000/https://council.example.gov/budget-2019"


@pytest.fixture
def platform_claim(db):
    """An accepted claim annotated on the platform: a Boolean answer and an archived source."""
    claim = AcceptedClaimFactory(
        text="The council spent 5 million on parks in 2019.", claim_date=date(2020, 9, 1)
    )
    evidence = SubmittedEvidenceRoundFactory(claim=claim, phase=Phase.QUESTIONS)
    question = QuestionFactory(evidence_round=evidence, position=0)
    source = Source.for_url("https://council.example.gov/budget-2019")
    source.archived_url = ARCHIVED
    source.archive_status = Source.ArchiveStatus.ARCHIVED
    source.save()
    AnswerFactory(question=question, position=0, source=source)
    AnswerFactory(
        question=question,
        position=1,
        text="No",
        answer_type=AnswerType.BOOLEAN,
        boolean_explanation="The 2019 budget shows 2.1 million for parks.",
        source_url="metadata",
        source_medium=SourceMedium.METADATA,
    )
    return claim


def test_a_platform_claim_is_exported_in_the_release_format(
    platform_claim, run_export, tmp_path: Path
):
    out = tmp_path / "export.json"

    run_export(out)

    [record] = read_json(out)
    assert tuple(record) == CLAIM_KEYS
    assert record["claim"] == "The council spent 5 million on parks in 2019."
    assert record["claim_date"] == "1-9-2020"
    assert record["fact_checking_article"] == platform_claim.article.url
    assert record["cached_original_claim_url"] is None
    [question] = record["questions"]
    assert list(question) == ["question", "answers"]
    extractive, boolean = question["answers"]
    assert extractive == {
        "answer": "2.1 million pounds",
        "answer_type": "Extractive",
        "source_url": "https://council.example.gov/budget-2019",
        "source_medium": "Web text",
        "cached_source_url": ARCHIVED,
    }
    assert list(extractive) == [
        "answer",
        "answer_type",
        "source_url",
        "source_medium",
        "cached_source_url",
    ]
    assert boolean == {
        "answer": "No",
        "answer_type": "Boolean",
        "source_url": "metadata",
        "source_medium": "Metadata",
        "boolean_explanation": "The 2019 budget shows 2.1 million for parks.",
    }
    assert list(boolean) == [
        "answer",
        "answer_type",
        "source_url",
        "source_medium",
        "boolean_explanation",
    ]


def test_a_claim_that_is_not_accepted_is_not_exported(platform_claim, run_export, tmp_path):
    ClaimWaitingForQuestionsFactory(text="A claim still waiting for its questions.")
    out = tmp_path / "export.json"

    output = run_export(out)

    assert [record["claim"] for record in read_json(out)] == [platform_claim.text]
    assert "Wrote 1 claims" in output


def test_dispute_evidence_wins_over_the_first_round_of_questions(db, run_export, tmp_path):
    claim = AcceptedClaimFactory()
    now = timezone.now()
    # The phase decides, not the time: the P2 round is even the later one here.
    dispute = SubmittedEvidenceRoundFactory(
        claim=claim, phase=Phase.DISPUTE, submitted_at=now - timedelta(hours=1)
    )
    first = SubmittedEvidenceRoundFactory(claim=claim, phase=Phase.QUESTIONS, submitted_at=now)
    AnswerFactory(question=QuestionFactory(evidence_round=first, text="Asked in P2?"))
    AnswerFactory(question=QuestionFactory(evidence_round=dispute, text="Asked in P4?"))
    out = tmp_path / "export.json"

    run_export(out)

    [record] = read_json(out)
    assert [q["question"] for q in record["questions"]] == ["Asked in P4?"]


def test_unsubmitted_and_agreement_sample_rounds_are_not_exported(db, run_export, tmp_path):
    claim = AcceptedClaimFactory()
    now = timezone.now()
    submitted = SubmittedEvidenceRoundFactory(
        claim=claim, phase=Phase.QUESTIONS, submitted_at=now - timedelta(hours=2)
    )
    draft = SubmittedEvidenceRoundFactory(claim=claim, phase=Phase.DISPUTE, submitted_at=None)
    sample = SubmittedEvidenceRoundFactory(
        claim=claim, phase=Phase.QUESTIONS, is_agreement_sample=True, submitted_at=now
    )
    for evidence, text in [(submitted, "Submitted?"), (draft, "Draft?"), (sample, "Sample?")]:
        AnswerFactory(question=QuestionFactory(evidence_round=evidence, text=text))
    out = tmp_path / "export.json"

    run_export(out)

    [record] = read_json(out)
    assert [q["question"] for q in record["questions"]] == ["Submitted?"]


def test_export_into_a_missing_folder_is_refused(db, run_export, tmp_path):
    with pytest.raises(CommandError, match="folder does not exist"):
        run_export(tmp_path / "missing" / "export.json")


# --- Claim dates ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "day"), [("1-9-2020", date(2020, 9, 1)), ("31-10-2020", date(2020, 10, 31))]
)
def test_claim_dates_read_and_write_as_the_release_writes_them(text: str, day: date):
    assert parse_claim_date(text) == day
    assert format_claim_date(day) == text


@pytest.mark.parametrize(
    "text",
    ["2020-10-31", "31-02-2020", "31/10/2020", "31-10-2020\n", "\u0663\u0661-\u0661\u0660-2020"],
    ids=["iso", "no-such-day", "slashes", "trailing-newline", "arabic-indic-digits"],
)
def test_claim_dates_in_any_other_form_are_refused(text: str):
    with pytest.raises(ValueError):
        parse_claim_date(text)


def test_a_platform_claims_original_claim_url_is_exported_with_its_archive_copy(
    platform_claim, run_export, tmp_path: Path
):
    post = "https://social.example.com/posts/42"
    platform_claim.original_claim_url = post
    platform_claim.save()
    copy = f"https://web.archive.org/web/20200902000000/{post}"
    Source.objects.create(
        url=post,
        normalized_url=post,
        archive_status=Source.ArchiveStatus.ARCHIVED,
        archived_url=copy,
    )
    out = tmp_path / "export.json"
    run_export(out)
    [record] = read_json(out)
    assert record["original_claim_url"] == post
    assert record["cached_original_claim_url"] == copy
