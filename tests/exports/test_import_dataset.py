"""The import_dataset command: dev.json goes in whole, or a damaged file goes in not at all."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from annotation.models import Answer, Article, Batch, Claim, Question
from annotation.vocabulary import Verdict
from search_proxy.models import Source

# The damaged record in the rejection tests; the 137 records before it are all valid.
BAD = 137

Records = list[dict]


def stored_rows() -> dict[str, int]:
    return {
        "claims": Claim.objects.count(),
        "articles": Article.objects.count(),
        "batches": Batch.objects.count(),
        "sources": Source.objects.count(),
    }


NOTHING_STORED = {"claims": 0, "articles": 0, "batches": 0, "sources": 0}


def _release_date(text: str) -> date:
    day, month, year = (int(part) for part in text.split("-"))
    return date(year, month, day)


# --- A valid file ---------------------------------------------------------------------


def test_importing_dev_json_stores_every_claim_with_its_evidence(dev_json, run_import):
    output = run_import(dev_json)

    assert Claim.objects.count() == 500
    assert Claim.objects.accepted().count() == 500
    assert Question.objects.count() == 1287
    assert Answer.objects.count() == 1399
    assert Article.objects.count() == 371
    assert Batch.objects.count() == 1
    assert Claim.objects.filter(required_reannotation=True).count() == 122
    assert Counter(Claim.objects.values_list("label", flat=True)) == {
        Verdict.REFUTED: 305,
        Verdict.SUPPORTED: 122,
        Verdict.CONFLICTING: 38,
        Verdict.NOT_ENOUGH_EVIDENCE: 35,
    }
    assert "Imported 500 claims (1287 questions, 1399 answers)" in output
    assert "371 new articles; 0 duplicates skipped" in output


def test_importing_the_same_file_again_skips_every_record_as_a_duplicate(dev_json, run_import):
    # Named batches: the default name only has whole seconds (see the report on batch names).
    run_import(dev_json, "--batch", "dev first time")
    before = stored_rows()

    output = run_import(dev_json, "--batch", "dev second time")

    assert Claim.objects.count() == 500
    assert Question.objects.count() == 1287
    assert Answer.objects.count() == 1399
    after = stored_rows()
    assert (after["articles"], after["sources"]) == (before["articles"], before["sources"])
    assert "Imported 0 claims" in output
    assert "500 duplicates skipped" in output
    assert output.count("skipped duplicate record ") == 500


def test_batch_option_names_the_import_batch(dev_records: Records, write_dataset, run_import):
    path = write_dataset(dev_records[:3])

    output = run_import(path, "--batch", "AVeriTeC dev sample")

    batch = Batch.objects.get()
    assert batch.name == "AVeriTeC dev sample"
    assert batch.kind == Batch.Kind.DATASET
    assert set(Article.objects.values_list("batch__name", flat=True)) == {"AVeriTeC dev sample"}
    assert Claim.objects.count() == 3
    assert "into batch 'AVeriTeC dev sample'" in output


def test_first_n_imports_the_earliest_records_by_claim_date(
    dev_json, dev_records: Records, run_import, run_export, tmp_path
):
    # Ties on the date keep file order; dev.json has a tie right at the 400th record.
    by_date = sorted(
        range(len(dev_records)), key=lambda i: (_release_date(dev_records[i]["claim_date"]), i)
    )
    earliest = sorted(by_date[:400])

    run_import(dev_json, "--first", "400")

    assert Claim.objects.count() == 400
    latest_kept = max(Claim.objects.values_list("claim_date", flat=True))
    assert all(_release_date(dev_records[i]["claim_date"]) >= latest_kept for i in by_date[400:])
    out = tmp_path / "export.json"
    run_export(out)
    assert json.loads(out.read_text(encoding="utf-8")) == [dev_records[i] for i in earliest]


def test_dry_run_validates_the_whole_file_and_stores_nothing(dev_json, run_import):
    output = run_import(dev_json, "--dry-run")

    assert "500 valid records" in output
    assert "nothing stored" in output
    assert stored_rows() == NOTHING_STORED


def test_dry_run_reports_the_problems_of_a_bad_file(
    dev_records: Records, write_dataset, run_import
):
    dev_records[BAD]["label"] = "Mostly False"
    path = write_dataset(dev_records)

    with pytest.raises(CommandError, match=rf"record {BAD}, field 'label'"):
        run_import(path, "--dry-run")

    assert stored_rows() == NOTHING_STORED


# --- A damaged file -------------------------------------------------------------------

Damage = Callable[[Records], object]

DAMAGE: list[tuple[str, Damage, str]] = [
    (
        "record-not-an-object",
        lambda rs: rs.__setitem__(BAD, "In a letter to Steve Jobs, Sean Connery refused"),
        f"record {BAD}: must be an object, not a string",
    ),
    (
        "reannotation-as-text",
        lambda rs: rs[BAD].update(required_reannotation="yes"),
        f"record {BAD}, field 'required_reannotation': must be true or false",
    ),
    (
        "claim-types-not-a-list",
        lambda rs: rs[BAD].update(claim_types="Numerical Claim"),
        f"record {BAD}, field 'claim_types': must be a list",
    ),
    (
        "unknown-label",
        lambda rs: rs[BAD].update(label="Mostly False"),
        f"record {BAD}, field 'label': unknown value 'Mostly False'",
    ),
    (
        "impossible-date",
        lambda rs: rs[BAD].update(claim_date="31-02-2020"),
        f"record {BAD}, field 'claim_date'",
    ),
    (
        "iso-date",
        lambda rs: rs[BAD].update(claim_date="2020-10-31"),
        f"record {BAD}, field 'claim_date': expected a date as D-M-YYYY",
    ),
    *(
        (
            f"missing-{key}",
            lambda rs, key=key: rs[BAD].pop(key),
            f"record {BAD}, field '{key}': is missing",
        )
        for key in ("claim", "claim_date", "fact_checking_article", "questions", "label")
    ),
    (
        "date-with-a-trailing-newline",
        lambda rs: rs[BAD].update(claim_date="31-10-2020\n"),
        f"record {BAD}, field 'claim_date': expected a date as D-M-YYYY",
    ),
    (
        "country-code-with-a-trailing-newline",
        lambda rs: rs[BAD].update(location_ISO_code="US\n"),
        f"record {BAD}, field 'location_ISO_code': must be a two-letter country code",
    ),
    (
        "nul-character-in-a-speaker",
        lambda rs: rs[BAD].update(speaker="Joe\u0000Bloggs"),
        f"record {BAD}, field 'speaker': holds a NUL character",
    ),
    (
        "absurdly-long-article-url",
        lambda rs: rs[BAD].update(fact_checking_article="https://example.org/" + "a" * 2500),
        f"record {BAD}, field 'fact_checking_article': is 2520 characters long",
    ),
    (
        "unknown-answer-type",
        lambda rs: rs[BAD]["questions"][0]["answers"][0].update(answer_type="Opinion"),
        f"record {BAD}, questions[0], answers[0], field 'answer_type': unknown value 'Opinion'",
    ),
    (
        "unknown-source-medium",
        lambda rs: rs[BAD]["questions"][1]["answers"][0].update(source_medium="Podcast"),
        f"record {BAD}, questions[1], answers[0], field 'source_medium': unknown value 'Podcast'",
    ),
]


@pytest.mark.parametrize(
    ("damage", "problem"),
    [pytest.param(damage, problem, id=name) for name, damage, problem in DAMAGE],
)
def test_a_damaged_record_rejects_the_whole_file_naming_the_record_and_field(
    dev_records: Records, write_dataset, run_import, damage: Damage, problem: str
):
    damage(dev_records)
    path = write_dataset(dev_records)

    with pytest.raises(CommandError) as raised:
        run_import(path)

    message = str(raised.value)
    assert problem in message
    assert "1 problem(s)" in message
    assert "Nothing was imported." in message
    assert stored_rows() == NOTHING_STORED


def test_every_problem_of_a_file_is_reported_in_one_run(
    dev_records: Records, write_dataset, run_import
):
    dev_records[3]["label"] = "Mostly False"
    dev_records[BAD]["claim_date"] = "31-02-2020"
    dev_records[499]["questions"][0]["answers"][0]["answer_type"] = "Opinion"
    path = write_dataset(dev_records)

    with pytest.raises(CommandError) as raised:
        run_import(path)

    message = str(raised.value)
    assert "3 problem(s)" in message
    assert "record 3, field 'label'" in message
    assert f"record {BAD}, field 'claim_date'" in message
    assert "record 499, questions[0], answers[0], field 'answer_type'" in message
    assert stored_rows() == NOTHING_STORED


def test_a_file_that_is_not_json_is_rejected_with_the_line_and_column(
    dev_json, tmp_path: Path, run_import
):
    text = dev_json.read_text(encoding="utf-8")
    typo = text.index("false")
    path = tmp_path / "typo.json"
    path.write_text(text[:typo] + "flase" + text[typo + len("false") :], encoding="utf-8")
    line = text.count("\n", 0, typo) + 1
    column = typo - text.rfind("\n", 0, typo)

    with pytest.raises(CommandError, match=rf"not valid JSON at line {line}, column {column}:"):
        run_import(path)

    assert stored_rows() == NOTHING_STORED


def test_a_file_whose_top_level_is_not_a_list_is_rejected(
    dev_records: Records, write_dataset, run_import
):
    path = write_dataset({"claims": dev_records})

    with pytest.raises(CommandError, match="must hold a JSON list of claim records, not an object"):
        run_import(path)

    assert stored_rows() == NOTHING_STORED


def test_a_path_that_is_not_a_file_is_rejected(tmp_path: Path, run_import):
    with pytest.raises(CommandError, match="no such file"):
        run_import(tmp_path / "missing.json")

    assert stored_rows() == NOTHING_STORED


def test_a_batch_name_already_used_is_refused_before_anything_is_stored(
    dev_records: Records, write_dataset, run_import
):
    path = write_dataset(dev_records[:3])
    run_import(path, "--batch", "week 1")
    with pytest.raises(CommandError, match="'week 1' exists already"):
        run_import(write_dataset(dev_records[3:6]), "--batch", "week 1")


def test_the_same_file_name_imported_twice_in_a_row_gets_two_batches(
    dev_records: Records, write_dataset, run_import
):
    run_import(write_dataset(dev_records[:2], name="dev.json"))
    run_import(write_dataset(dev_records[2:4], name="dev.json"))
    assert Batch.objects.filter(name__startswith="dev.json ").count() == 2


def test_a_source_address_with_a_broken_port_is_imported_as_written(
    dev_records: Records, write_dataset, run_import, tmp_path
):
    dev_records[0]["questions"][0]["answers"][0]["source_url"] = "http://example.org:abc/page"
    run_import(write_dataset(dev_records[:1]))
    assert Source.objects.filter(url="http://example.org:abc/page").exists()
