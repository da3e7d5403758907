"""No single account's work is unbounded (issue 25, item 11): API requests are throttled per
account, export jobs have a per-account quota and old files are removed, and webhooks go to
the web's ports only. Webhook addresses are judged on the validator alone: no test here
registers or delivers to anything outside 127.0.0.1.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from config.throttles import ReadThrottle, WriteThrottle
from exports.models import ExportJob, ScoringJob
from exports.tasks import remove_old_export_files, run_export_job
from exports.webhooks import port_problem, receiver_problem
from tests import steps
from tests.factories import AnnotatorFactory

# --- Per-account API throttles -----------------------------------------------------------


@pytest.fixture
def low_rates(monkeypatch):
    rates = {"api_read": "5/minute", "api_write": "3/minute", "login": "100/minute"}
    monkeypatch.setattr(ReadThrottle, "THROTTLE_RATES", rates)
    monkeypatch.setattr(WriteThrottle, "THROTTLE_RATES", rates)


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_one_account_reading_in_a_loop_is_throttled_and_others_are_not(low_rates, annotator):
    greedy, other = _api(annotator), _api(AnnotatorFactory(username="patient"))
    answers = [greedy.get("/api/v1/tasks/").status_code for _ in range(8)]

    assert answers[:5] == [200] * 5
    assert set(answers[5:]) == {429}
    refused = greedy.get("/api/v1/tasks/")
    assert int(refused["Retry-After"]) > 0
    assert other.get("/api/v1/tasks/").status_code == 200


def test_writes_have_their_own_limit(low_rates, annotator):
    steps.new_article()
    task = steps.take(annotator, 1)
    api = _api(annotator)
    saves = []
    for _ in range(5):
        task.refresh_from_db()
        body = {"draft": {"claims": []}, "version": task.draft_version}
        saves.append(api.put(f"/api/v1/tasks/{task.pk}/draft/", body, format="json").status_code)

    assert saves == [200, 200, 200, 429, 429]
    # Reading is counted apart: still open.
    assert api.get(f"/api/v1/tasks/{task.pk}/").status_code == 200


def test_the_schema_documents_429_on_every_operation(annotator):
    schema = _api(annotator).get("/api/v1/schema/", {"format": "json"}).json()
    operations = [
        (path, method, operation)
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    ]
    missing = [f"{m} {p}" for p, m, op in operations if "429" not in op["responses"]]
    assert missing == []


# --- Export job quota and old files ------------------------------------------------------


@pytest.fixture
def api(researcher) -> APIClient:
    return _api(researcher)


def test_an_account_may_have_only_so_many_exports_waiting_or_running(api, researcher, settings):
    settings.JOBS_RUNNING_PER_USER = 2
    answers = [api.post("/api/v1/export-jobs/", {}, format="json") for _ in range(4)]

    assert [a.status_code for a in answers] == [201, 201, 429, 429]
    assert "wait for one" in answers[2].json()["detail"]
    assert ExportJob.objects.filter(requested_by=researcher).count() == 2
    # Someone else's exports do not count against this account.
    other = _api(AnnotatorFactory(username="rita2", role="researcher"))
    assert other.post("/api/v1/export-jobs/", {}, format="json").status_code == 201


def test_a_finished_export_frees_its_place(api, researcher, settings, media_root):
    settings.JOBS_RUNNING_PER_USER = 1
    first = api.post("/api/v1/export-jobs/", {}, format="json").json()
    assert api.post("/api/v1/export-jobs/", {}, format="json").status_code == 429

    run_export_job(first["id"])

    assert api.post("/api/v1/export-jobs/", {}, format="json").status_code == 201


def test_a_job_left_unfinished_for_a_day_no_longer_counts(api, researcher, settings):
    settings.JOBS_RUNNING_PER_USER = 1
    api.post("/api/v1/export-jobs/", {}, format="json")
    ExportJob.objects.update(created_at=timezone.now() - timedelta(hours=25))

    assert api.post("/api/v1/export-jobs/", {}, format="json").status_code == 201


def test_the_export_page_refuses_past_the_quota_with_a_message(client, researcher, settings):
    settings.JOBS_RUNNING_PER_USER = 1
    client.force_login(researcher)
    assert client.post(reverse("exports:export-create"), {"fmt": "json"}).status_code == 302

    response = client.post(reverse("exports:export-create"), {"fmt": "json"})

    assert response.status_code == 422
    assert "wait for one" in response.content.decode()
    assert ExportJob.objects.count() == 1


def test_the_scoring_page_has_the_same_quota(client, researcher, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.JOBS_RUNNING_PER_USER = 1
    client.force_login(researcher)

    def upload():
        files = {
            "predictions": SimpleUploadedFile("p.json", b"[]"),
            "references": SimpleUploadedFile("r.json", b"[]"),
        }
        return client.post(reverse("exports:scoring"), files)

    assert upload().status_code == 302
    response = upload()
    assert response.status_code == 422
    assert "wait for one" in response.content.decode()
    assert ScoringJob.objects.count() == 1


def _finished_export(user, media_root, *, days_old: float = 0) -> ExportJob:
    job = ExportJob.objects.create(requested_by=user)
    run_export_job(job.pk)
    job.refresh_from_db()
    assert job.path.is_file()
    finished = timezone.now() - timedelta(days=days_old)
    ExportJob.objects.filter(pk=job.pk).update(finished_at=finished, created_at=finished)
    return job


def test_each_account_keeps_only_its_newest_export_files(researcher, manager, settings, media_root):
    settings.EXPORT_FILES_PER_USER = 2
    mine = [_finished_export(researcher, media_root, days_old=3 - n / 10) for n in range(4)]
    theirs = _finished_export(manager, media_root)

    remove_old_export_files()

    kept = [job.pk for job in mine if ExportJob.objects.get(pk=job.pk).file_name]
    assert kept == [mine[2].pk, mine[3].pk]
    assert not mine[0].path.exists() and not mine[1].path.exists()
    assert ExportJob.objects.get(pk=theirs.pk).path.is_file()


def test_export_files_older_than_the_age_limit_are_removed(researcher, settings, media_root):
    settings.EXPORT_FILE_DAYS = 7
    old = _finished_export(researcher, media_root, days_old=8)

    assert remove_old_export_files() == 1  # the hourly sweep

    assert not old.path.exists()
    new = _finished_export(researcher, media_root, days_old=6)
    assert remove_old_export_files() == 0
    assert ExportJob.objects.get(pk=new.pk).path.is_file()
    old.refresh_from_db()
    assert old.status == ExportJob.Status.DONE and old.file_name == ""


def test_a_removed_file_is_a_404_and_has_no_download_link(api, researcher, media_root, settings):
    settings.EXPORT_FILE_DAYS = 1
    job = _finished_export(researcher, media_root, days_old=2)
    remove_old_export_files()

    assert api.get(f"/api/v1/export-jobs/{job.pk}/").json()["download_url"] is None
    assert api.get(f"/api/v1/export-jobs/{job.pk}/download/").status_code == 404


def test_each_export_that_finishes_prunes_its_owners_old_files(researcher, settings, media_root):
    settings.EXPORT_FILES_PER_USER = 1
    first = _finished_export(researcher, media_root, days_old=1)
    _finished_export(researcher, media_root)  # run_export_job prunes as it finishes
    assert not first.path.exists()


# --- Webhook ports (the validator only) --------------------------------------------------


@pytest.mark.parametrize("port", [22, 25, 5432, 6379, 8080])
def test_a_webhook_to_a_public_host_on_another_port_is_refused(settings, port):
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    # A public address literal: the validator resolves nothing and connects nowhere.
    problem = receiver_problem(f"http://93.184.216.34:{port}/hook")
    assert problem == f"Webhooks only go to port 80, 443; port {port} is refused."


@pytest.mark.parametrize("url", ["http://93.184.216.34/hook", "https://93.184.216.34:443/h"])
def test_a_webhook_to_a_public_host_on_the_webs_ports_is_allowed(settings, url):
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    assert receiver_problem(url) is None


def test_a_setting_allows_other_ports(settings):
    settings.WEBHOOK_ALLOWED_PORTS = [80, 443, 8443]
    assert port_problem(8443) is None
    assert port_problem(8444) is not None


def test_a_private_address_is_refused_whatever_its_port(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    assert "Refused" in receiver_problem("http://10.0.0.1:80/hook")
