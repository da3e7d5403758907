"""Dataset statistics (Table 2 and the appendix tables): command, page, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from exports.statistics import compute_statistics
from exports.views import can_use_exports


def _table(stats: dict, name: str) -> dict[str, int]:
    return {row["value"]: row["count"] for row in stats[name] if row["count"]}


def test_statistics_of_dev_json(dev_records):
    stats = compute_statistics(dev_records).as_dict()["splits"]

    assert list(stats) == ["all", "dev"]
    everything = stats["all"]
    assert everything["claims"] == 500
    assert everything["questions"] == 1287
    assert everything["answers"] == 1399
    assert everything["questions_per_claim"] == 2.57  # Table 2 of the paper: 2.57 for dev
    assert everything["reannotated"] == 122
    assert everything["reannotated_percent"] == 24.4  # Table 2: 24.4
    assert _table(everything, "labels") == {
        "Supported": 122,
        "Refuted": 305,
        "Not Enough Evidence": 35,
        "Conflicting Evidence/Cherrypicking": 38,
    }
    assert [r["percent"] for r in everything["labels"]] == [24.4, 61.0, 7.0, 7.6]
    assert sum(_table(everything, "answer_types").values()) == 1399
    assert sum(_table(everything, "source_media").values()) == 1399
    assert _table(everything, "claim_types")["Event/Property Claim"] == 307
    assert everything["first_claim_date"] == "2020-08-26"
    assert everything["last_claim_date"] == "2020-10-31"
    assert stats["dev"] == everything


def test_statistics_are_given_per_split(dev_records, settings):
    from datetime import date

    settings.EXPORT_TRAIN_END = date(2020, 9, 30)

    stats = compute_statistics(dev_records).as_dict()["splits"]

    assert list(stats) == ["all", "train", "dev"]
    assert stats["train"]["claims"] + stats["dev"]["claims"] == 500
    assert stats["train"]["last_claim_date"] <= "2020-09-30" < stats["dev"]["first_claim_date"]


def test_the_command_prints_json_and_csv_of_a_file(dev_json):
    out = io.StringIO()
    call_command("dataset_statistics", str(dev_json), "--json", stdout=out, stderr=io.StringIO())
    data = json.loads(out.getvalue())
    assert data["splits"]["all"]["questions"] == 1287
    assert data["split_boundaries"] == {"train_end": "2020-08-25", "dev_end": "2020-10-31"}

    out = io.StringIO()
    call_command("dataset_statistics", str(dev_json), "--csv", stdout=out, stderr=io.StringIO())
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["split", "table", "value", "count", "percent"]
    assert ["all", "labels", "Refuted", "305", "61.0"] in rows
    assert ["dev", "overview", "answers", "1399", ""] in rows


def test_statistics_of_the_database_equal_those_of_the_imported_file(dev_json, run_import):
    run_import(dev_json)
    out = io.StringIO()

    call_command("dataset_statistics", "--json", stdout=out, stderr=io.StringIO())

    from_database = json.loads(out.getvalue())
    from_file = compute_statistics(json.loads(dev_json.read_text(encoding="utf-8"))).as_dict()
    assert from_database == from_file


# --- The page ---------------------------------------------------------------------------


@pytest.fixture
def few_claims(db):
    from tests.factories import AnswerFactory, QuestionFactory, SubmittedEvidenceRoundFactory

    for _ in range(3):
        evidence = SubmittedEvidenceRoundFactory()
        AnswerFactory(question=QuestionFactory(evidence_round=evidence))


def test_researchers_see_the_statistics_with_charts(client, researcher, few_claims):
    client.force_login(researcher)

    response = client.get(reverse("exports:statistics"))

    assert response.status_code == 200
    page = response.content.decode()
    assert "exports-bars" in page
    assert "Refuted" in page
    assert response.context["splits"][0]["overview"]["claims"] == 3


def test_statistics_download_as_csv_and_json(client, manager, few_claims):
    client.force_login(manager)

    as_csv = client.get(reverse("exports:statistics"), {"format": "csv"})
    as_json = client.get(reverse("exports:statistics"), {"format": "json"})

    assert as_csv["Content-Type"].startswith("text/csv")
    assert "attachment" in as_csv["Content-Disposition"]
    assert ["all", "overview", "claims", "3", ""] in list(
        csv.reader(io.StringIO(as_csv.content.decode()))
    )
    assert json.loads(as_json.content)["splits"]["all"]["claims"] == 3


def test_annotators_may_not_see_the_statistics(client, annotator):
    client.force_login(annotator)
    assert not can_use_exports(annotator)
    assert client.get(reverse("exports:statistics")).status_code == 403


def test_statistics_answer_only_get(client, researcher):
    client.force_login(researcher)
    assert client.post(reverse("exports:statistics")).status_code == 405


def test_anonymous_visitors_are_sent_to_log_in(client, db):
    response = client.get(reverse("exports:statistics"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
