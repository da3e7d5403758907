"""Scoring from the command line and the web form (the numbers are tested in tests/pipeline)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from exports.models import ExportJob, ScoringJob
from exports.tasks import run_scoring_job

KEYS = [
    "q_only",
    "q_and_a",
    "veracity",
    "justification",
    "averitec",
    "averitec_justification",
    "by_type_0.2",
    "by_type_0.3",
    "seconds",
]


def score(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("score", *args, stdout=out, stderr=err, verbosity=0)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def small_dev(dev_records, write_dataset) -> Path:
    """The first 40 claims of dev.json: quick, and a real mix of labels and types."""
    return write_dataset(dev_records[:40], "dev40.json")


def test_score_json_has_the_issues_keys_and_ones_against_itself(small_dev):
    out, err = score("--predictions", str(small_dev), "--references", str(small_dev), "--json")

    metrics = json.loads(out)
    assert list(metrics) == KEYS
    assert metrics["veracity"]["acc"] == metrics["veracity"]["macro"] == 1.0
    assert set(metrics["averitec"].values()) == {1.0}
    assert err == ""


def test_score_prints_the_report_like_the_official_script(small_dev):
    out, _ = score("--predictions", str(small_dev), "--references", str(small_dev))
    assert out.startswith(
        "AVeriTeC evaluation:\n====================\nQuestion-only score (HU-meteor):"
    )
    assert " * Veracity scores (meteor @ 0.25):" in out


def test_score_reads_json_lines_and_files_without_labels(dev_records, tmp_path):
    without_labels = [{"questions": r["questions"]} for r in dev_records[:20]]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(json.dumps(r) for r in without_labels) + "\n")
    references = tmp_path / "references.json"
    references.write_text(json.dumps(without_labels))

    out, err = score("--predictions", str(predictions), "--references", str(references), "--json")

    assert list(json.loads(out)) == ["q_only", "q_and_a", "seconds"]
    assert "only the evidence scores" in err


def test_score_explains_what_is_wrong_with_a_predictions_file(dev_records, write_dataset):
    references = write_dataset(dev_records[:3])
    predictions = copy.deepcopy(dev_records[:3])
    predictions[2]["label"] = "False"
    bad = write_dataset(predictions)

    with pytest.raises(CommandError, match="predictions record 2, field 'label': unknown label"):
        score("--predictions", str(bad), "--references", str(references))
    with pytest.raises(CommandError, match="not valid JSON at line 1"):
        broken = references.with_name("broken.json")
        broken.write_text("[{")
        score("--predictions", str(broken), "--references", str(references))
    with pytest.raises(CommandError, match="cannot be read"):
        score("--predictions", "/no/such/file.json", "--references", str(references))


# --- The web form ------------------------------------------------------------------------


def _upload(name: str, records) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, json.dumps(records).encode(), content_type="application/json")


def test_a_researcher_scores_predictions_from_the_web_form(
    client, researcher, dev_records, media_root, eager_tasks, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    records = dev_records[:15]

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("exports:scoring"),
            {
                "predictions": _upload("system.json", records),
                "references": _upload("dev.json", records),
            },
        )

    job = ScoringJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("exports:scoring-job", args=[job.pk])
    assert job.status == ScoringJob.Status.DONE
    assert job.result["averitec"]["0.25"] == 1.0
    assert job.progress_done == job.progress_total > 0
    page = client.get(response["Location"]).content.decode()
    assert "AVeriTeC score by evidence level" in page
    assert "exports-bars" in page
    assert "hx-trigger" not in page


def test_predictions_can_be_scored_against_a_finished_export(
    client,
    manager,
    dev_json,
    run_import,
    media_root,
    eager_tasks,
    django_capture_on_commit_callbacks,
):
    run_import(dev_json)
    from exports.tasks import run_export_job

    export = ExportJob.objects.create(requested_by=manager)
    run_export_job(export.pk)
    predictions = json.loads(dev_json.read_text())
    client.force_login(manager)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("exports:scoring"),
            {"predictions": _upload("dev.json", predictions), "reference_export": export.pk},
        )

    job = ScoringJob.objects.get()
    assert job.status == ScoringJob.Status.DONE, job.error
    assert job.result["veracity"]["acc"] == 1.0
    assert job.references_label == f"export {export.pk}"


def test_a_bad_predictions_file_ends_the_job_with_the_problems(
    client, researcher, dev_records, media_root
):
    client.force_login(researcher)
    client.post(
        reverse("exports:scoring"),
        {
            "predictions": _upload("short.json", dev_records[:2]),
            "references": _upload("dev.json", dev_records[:3]),
        },
    )
    job = ScoringJob.objects.get()

    run_scoring_job(job.pk)

    job.refresh_from_db()
    assert job.status == ScoringJob.Status.FAILED
    assert "the predictions have 2 records but the references 3" in job.error
    page = client.get(reverse("exports:scoring-job", args=[job.pk])).content.decode()
    assert "These files cannot be scored" in page


def test_the_form_needs_references_once(client, researcher, dev_records, media_root):
    client.force_login(researcher)

    response = client.post(reverse("exports:scoring"), {"predictions": _upload("p.json", [])})

    assert response.status_code == 422
    assert "Give the references as a file or as a finished export" in response.content.decode()
    assert not ScoringJob.objects.exists()


def test_the_scoring_job_page_polls_while_running(client, researcher, media_root):
    job = ScoringJob.objects.create(
        requested_by=researcher, predictions="scoring/p.json", references="scoring/r.json"
    )
    client.force_login(researcher)

    body = client.get(reverse("exports:scoring-job", args=[job.pk]), HTTP_HX_REQUEST="true")

    assert body.content.decode().lstrip().startswith('<div id="scoring-progress"')
    assert 'hx-trigger="every 1s"' in body.content.decode()


def test_scoring_pages_are_for_researchers_and_managers_only(client, annotator, media_root):
    job = ScoringJob.objects.create(predictions="scoring/p.json", references="scoring/r.json")
    client.force_login(annotator)
    assert client.get(reverse("exports:scoring")).status_code == 403
    assert client.post(reverse("exports:scoring")).status_code == 403
    assert client.get(reverse("exports:scoring-job", args=[job.pk])).status_code == 403


def test_scoring_pages_refuse_other_methods(client, researcher, media_root):
    job = ScoringJob.objects.create(predictions="scoring/p.json", references="scoring/r.json")
    client.force_login(researcher)
    assert client.put(reverse("exports:scoring")).status_code == 405
    assert client.post(reverse("exports:scoring-job", args=[job.pk])).status_code == 405
