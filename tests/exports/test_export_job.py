"""The export runs on a real Celery worker process, over the embedded broker and Redis."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection
from django_celery_results.models import TaskResult

from exports.models import ExportJob
from exports.tasks import run_export_job
from tests.factories import QuestionFactory, SubmittedEvidenceRoundFactory
from tests.workers import database_url, redis_url

ROOT = Path(__file__).resolve().parents[2]
WORKER_TIMEOUT = 60  # seconds; bounded wait for the worker to pick up and finish the job


@pytest.fixture
def two_accepted_claims(db):
    claims = []
    for _ in range(2):
        evidence = SubmittedEvidenceRoundFactory()
        QuestionFactory(evidence_round=evidence)
        claims.append(evidence.claim)
    return claims


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("broker", ["embedded", "redis"])
@pytest.mark.real_worker
def test_a_real_worker_writes_the_export_and_its_result_is_recorded(
    broker, tmp_path, two_accepted_claims
):
    if connection.vendor != "postgresql":
        pytest.skip("a worker in another process needs a shared database server")
    var = tmp_path / "var"
    queue = var / "celery-queue"
    if broker == "embedded":
        broker_url = "filesystem://"
        options = {
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "control_folder": str(var / "celery-control"),
        }
    else:
        broker_url = redis_url()
        options = {}
        if broker_url is None:
            pytest.skip("Redis is not reachable")
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "CELERY_BROKER_URL": broker_url,
        "VAR_DIR": str(var),
        "MEDIA_ROOT": str(tmp_path / "media"),
    }
    var.mkdir()
    job = ExportJob.objects.create()  # queued, as the exports page and the API leave it
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "-l", "WARNING"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        queue.mkdir(parents=True, exist_ok=True)
        sender = Celery(broker=broker_url)
        sender.conf.broker_transport_options = options
        task_id = sender.send_task(run_export_job.name, args=[job.pk]).id
        deadline = time.monotonic() + WORKER_TIMEOUT
        result = None
        while time.monotonic() < deadline and worker.poll() is None:
            result = TaskResult.objects.filter(task_id=task_id, status="SUCCESS").first()
            if result:
                break
            time.sleep(0.25)
    finally:
        worker.terminate()
        output = worker.communicate(timeout=30)[0].decode(errors="replace")
    assert result is not None, f"the worker did not finish the job:\n{output[-3000:]}"
    assert json.loads(result.result) == ExportJob.Status.DONE
    job.refresh_from_db()
    assert job.claims == 2
    written = json.loads((tmp_path / "media" / "exports" / job.file_name).read_text())
    assert sorted(r["claim"] for r in written) == sorted(c.text for c in two_accepted_claims)
