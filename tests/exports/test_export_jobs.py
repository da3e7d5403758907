"""Export jobs from the web page and the API: queued, run by Celery, polled, downloaded."""

from __future__ import annotations

import datetime
import json

import pytest
from django.urls import reverse
from knox.models import AuthToken
from rest_framework.test import APIClient

from exports.models import ExportJob
from exports.tasks import run_export_job
from tests.factories import AnswerFactory, QuestionFactory, SubmittedEvidenceRoundFactory


@pytest.fixture
def accepted_claims(db):
    claims = []
    for n in range(3):
        evidence = SubmittedEvidenceRoundFactory(claim__text=f"Accepted claim number {n}.")
        AnswerFactory(question=QuestionFactory(evidence_round=evidence))
        claims.append(evidence.claim)
    return claims


def _downloaded(response) -> bytes:
    return b"".join(response.streaming_content)


def test_a_researcher_starts_an_export_and_downloads_it(
    client, researcher, accepted_claims, media_root, eager_tasks, django_capture_on_commit_callbacks
):
    client.force_login(researcher)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports:export-create"), {"fmt": "jsonl", "split": "dev"})

    job = ExportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("exports:export-job", args=[job.pk])
    assert job.status == ExportJob.Status.DONE
    assert job.requested_by == researcher
    assert job.claims == 3  # the factories date claims 31-10-2020: dev
    page = client.get(response["Location"])
    assert "Download" in page.content.decode()
    download = client.get(reverse("exports:export-download", args=[job.pk]))
    lines = _downloaded(download).decode().splitlines()
    assert sorted(json.loads(line)["claim"] for line in lines) == sorted(
        c.text for c in accepted_claims
    )
    assert download["Content-Disposition"].startswith("attachment")


def test_the_job_page_polls_a_progress_bar_until_the_export_is_done(client, researcher, media_root):
    job = ExportJob.objects.create(requested_by=researcher)
    client.force_login(researcher)

    fragment = client.get(reverse("exports:export-job", args=[job.pk]), HTTP_HX_REQUEST="true")

    body = fragment.content.decode()
    assert body.lstrip().startswith('<div id="job-progress"')
    assert 'hx-trigger="every 1s"' in body
    assert "<progress" in body

    run_export_job(job.pk)
    body = client.get(
        reverse("exports:export-job", args=[job.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "hx-trigger" not in body  # finished: the polling stops
    assert reverse("exports:export-download", args=[job.pk]) in body


def test_a_job_reports_its_progress_while_it_runs(accepted_claims, media_root, settings):
    from datetime import timedelta

    from exports import models

    job = ExportJob.objects.create()
    seen = []
    original = models.PROGRESS_INTERVAL
    models.PROGRESS_INTERVAL = timedelta(0)  # write every step
    try:
        job.progress_reporter(3)
        ExportJob.objects.filter(pk=job.pk).update(status=ExportJob.Status.RUNNING)
        advance = job.progress_reporter(3)
        for _ in range(3):
            advance(1)
            seen.append(ExportJob.objects.get(pk=job.pk).percent)
    finally:
        models.PROGRESS_INTERVAL = original
    assert seen == [33, 66, 100]


def test_a_second_delivery_of_the_same_job_does_nothing(accepted_claims, media_root):
    job = ExportJob.objects.create()
    assert run_export_job(job.pk) == ExportJob.Status.DONE
    finished = ExportJob.objects.get(pk=job.pk).finished_at

    assert run_export_job(job.pk) is None
    assert ExportJob.objects.get(pk=job.pk).finished_at == finished


def test_a_failing_export_is_marked_failed_with_its_error(accepted_claims, media_root, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("exports.dataset.write_export", broken)
    job = ExportJob.objects.create()

    assert run_export_job(job.pk) == ExportJob.Status.FAILED
    job.refresh_from_db()
    assert job.error == "OSError: disk full"


def test_the_form_refuses_a_backwards_date_range(client, researcher):
    client.force_login(researcher)

    response = client.post(
        reverse("exports:export-create"),
        {"fmt": "json", "since": "2020-10-01", "until": "2020-09-01"},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 422
    assert "The first claim date is after the last." in response.content.decode()
    assert not ExportJob.objects.exists()


def test_annotators_get_403_on_every_export_page(client, annotator, media_root):
    job = ExportJob.objects.create(status=ExportJob.Status.DONE, file_name="x.json")
    client.force_login(annotator)
    for url in (
        reverse("exports:export-list"),
        reverse("exports:export-job", args=[job.pk]),
        reverse("exports:export-download", args=[job.pk]),
        reverse("exports:scoring"),
    ):
        assert client.get(url).status_code == 403, url
    assert client.post(reverse("exports:export-create"), {"fmt": "json"}).status_code == 403


def test_the_export_pages_refuse_other_methods(client, researcher):
    client.force_login(researcher)
    assert client.get(reverse("exports:export-create")).status_code == 405
    assert client.post(reverse("exports:export-list")).status_code == 405


def test_an_unfinished_export_cannot_be_downloaded(client, researcher):
    job = ExportJob.objects.create()
    client.force_login(researcher)
    assert client.get(reverse("exports:export-download", args=[job.pk])).status_code == 404


# --- Over the API ------------------------------------------------------------------------


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    _, token = AuthToken.objects.create(researcher)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_export_jobs_over_the_api(
    api, accepted_claims, media_root, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post("/api/v1/export-jobs/", {"format": "json"}, format="json")

    assert created.status_code == 201
    job_id = created.json()["id"]
    detail = api.get(f"/api/v1/export-jobs/{job_id}/").json()
    assert detail["status"] == "done"
    assert detail["percent"] == 100
    assert detail["claims"] == 3
    assert detail["download_url"].endswith(f"/api/v1/export-jobs/{job_id}/download/")
    download = api.get(detail["download_url"])
    records = json.loads(_downloaded(download))
    assert sorted(r["claim"] for r in records) == sorted(c.text for c in accepted_claims)
    assert [j["id"] for j in api.get("/api/v1/export-jobs/").json()["results"]] == [job_id]


def test_the_api_validates_an_export_job(api):
    response = api.post(
        "/api/v1/export-jobs/",
        {"format": "xml", "split": "later", "since": "2020-10-01", "until": "2020-09-01"},
        format="json",
    )
    assert response.status_code == 400
    assert set(response.json()) >= {"format", "split"}


def test_the_api_says_404_for_a_download_before_the_job_is_done(api):
    job = ExportJob.objects.create()
    assert api.get(f"/api/v1/export-jobs/{job.pk}/download/").status_code == 404


def test_annotators_cannot_use_the_export_api(annotator):
    client = APIClient()
    client.force_authenticate(annotator)
    assert client.get("/api/v1/export-jobs/").status_code == 403
    assert client.post("/api/v1/export-jobs/", {}, format="json").status_code == 403


def test_anonymous_clients_get_401(db):
    assert APIClient().get("/api/v1/export-jobs/").status_code == 401


def test_a_date_filtered_export_is_named_after_what_it_holds(db):
    job = ExportJob.objects.create(
        split="dev", since=datetime.date(2020, 1, 1), until=datetime.date(2020, 12, 31)
    )
    assert job.download_name == f"averitec-dev-2020-01-01-to-2020-12-31-export-{job.pk}.json"
    everything = ExportJob.objects.create(fmt="jsonl")
    assert everything.download_name == f"averitec-all-export-{everything.pk}.jsonl"


def test_starting_an_export_from_the_page_opens_its_job_page_and_the_list_follows_it(
    client, researcher, media_root
):
    client.force_login(researcher)
    response = client.post(
        reverse("exports:export-create"), {"fmt": "json"}, HTTP_HX_REQUEST="true"
    )
    job = ExportJob.objects.get()
    # A whole-page move, not the job page squeezed into the form beside "No exports yet".
    assert response["HX-Redirect"] == reverse("exports:export-job", args=[job.pk])
    listing = client.get(reverse("exports:export-list"), HTTP_HX_REQUEST="true")
    body = listing.content.decode()
    assert 'id="recent-exports"' in body and 'hx-trigger="every 2s"' in body
    assert "<html" not in body
    ExportJob.objects.filter(pk=job.pk).update(status=ExportJob.Status.DONE)
    finished = client.get(reverse("exports:export-list")).content.decode()
    assert "No exports yet" not in finished and "every 2s" not in finished


def test_the_export_form_does_not_promise_a_date_format_the_picker_does_not_show(
    client, researcher
):
    client.force_login(researcher)
    body = client.get(reverse("exports:export-list")).content.decode()
    assert "YYYY-MM-DD" not in body and 'type="date"' in body


def test_an_export_leaves_out_claims_its_requester_may_still_check_blind(
    researcher, accepted_claims, media_root
):
    """Issue 23: a researcher given P3 who may receive an agreement sample's open check of
    an accepted claim gets no record of it; one without phases gets every claim."""
    from annotation.models import Task, User
    from annotation.vocabulary import Phase
    from tests.factories import AnnotatorFactory

    sample = accepted_claims[0]
    Task.objects.create(
        phase=Phase.QUALITY_CHECK, article=sample.article, claim=sample, is_agreement_sample=True
    )
    checker = AnnotatorFactory(username="ruth", role=User.Role.RESEARCHER, qualified_phases=[3])
    counts = {}
    for person in (researcher, checker):
        job = ExportJob.objects.create(requested_by=person, fmt="jsonl")
        run_export_job(job.pk)
        job.refresh_from_db()
        lines = job.path.read_text().splitlines()
        counts[person.username] = sorted(json.loads(line)["claim"] for line in lines)
    assert counts["rita"] == sorted(c.text for c in accepted_claims)
    assert counts["ruth"] == sorted(c.text for c in accepted_claims[1:])
