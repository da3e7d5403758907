"""Webhooks: HMAC-signed POSTs to a real HTTP server on 127.0.0.1, retried with backoff."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rest_framework.test import APIClient

from exports import webhooks
from exports.models import ExportJob, Webhook, WebhookDelivery
from exports.tasks import deliver_webhook, run_export_job
from tests.factories import AcceptedClaimFactory

SECRET = "s3cret-for-tests"


@dataclass
class Receiver:
    """A webhook receiver: answers with the scripted statuses, then 200; records requests."""

    url: str
    statuses: list[int] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)


@pytest.fixture
def receiver(settings) -> Iterator[Receiver]:
    # Webhooks only go to public addresses; this local receiver is let through explicitly.
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.requests.append({"headers": dict(self.headers), "body": body})
            status = state.statuses.pop(0) if state.statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # Webhooks only go to ports 80 and 443; the receiver's own port is let through too.
    settings.WEBHOOK_ALLOWED_PORTS = [80, 443, server.server_port]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_port}/hooks/averitec"
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def hook(researcher, receiver) -> Webhook:
    return Webhook.objects.create(
        owner=researcher,
        url=receiver.url,
        secret=SECRET,
        events=[Webhook.Event.CLAIM_ACCEPTED, Webhook.Event.EXPORT_FINISHED],
    )


def test_an_accepted_claim_is_posted_with_a_valid_signature(
    hook, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    claim = AcceptedClaimFactory(text="The council spent 5 million on parks.")

    with django_capture_on_commit_callbacks(execute=True):
        [delivery] = webhooks.notify_claim_accepted(claim)

    [request] = receiver.requests
    headers, body = request["headers"], request["body"]
    assert headers["X-Averitec-Event"] == "claim.accepted"
    assert headers["X-Averitec-Delivery"] == str(delivery.pk)
    assert webhooks.verify(
        SECRET, headers["X-Averitec-Timestamp"], body, headers["X-Averitec-Signature"]
    )
    assert not webhooks.verify(
        "wrong", headers["X-Averitec-Timestamp"], body, headers["X-Averitec-Signature"]
    )
    payload = json.loads(body)
    assert payload["event"] == "claim.accepted"
    assert payload["data"]["claim_id"] == claim.pk
    assert payload["data"]["label"] == "Refuted"
    assert payload["data"]["api_path"] == f"/api/v1/claims/{claim.pk}/"
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert delivery.attempts == 1
    assert delivery.response_status == 200


def test_the_signature_is_hmac_sha256_of_timestamp_and_body():
    import hashlib
    import hmac

    expected = hmac.new(b"key", b"1700000000.{}", hashlib.sha256).hexdigest()
    assert webhooks.signature("key", "1700000000", b"{}") == f"sha256={expected}"


def test_failed_deliveries_are_retried_until_the_receiver_accepts(hook, receiver, eager_tasks):
    receiver.statuses = [500, 503]
    claim = AcceptedClaimFactory()
    [delivery] = webhooks.notify_claim_accepted(claim)

    deliver_webhook.delay(delivery.pk)

    delivery.refresh_from_db()
    assert len(receiver.requests) == 3
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert delivery.attempts == 3
    # Every attempt is the same delivery, so the receiver can drop duplicates.
    assert {r["headers"]["X-Averitec-Delivery"] for r in receiver.requests} == {str(delivery.pk)}


def test_retries_are_bounded_and_then_the_delivery_fails(hook, receiver, eager_tasks, settings):
    settings.WEBHOOK_MAX_RETRIES = 2
    receiver.statuses = [500] * 10
    [delivery] = webhooks.notify_claim_accepted(AcceptedClaimFactory())

    deliver_webhook.delay(delivery.pk)

    delivery.refresh_from_db()
    assert len(receiver.requests) == 3  # the first attempt and two retries
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert delivery.last_error == "the receiver answered 500"


def test_a_receiver_that_does_not_answer_counts_as_a_failure(hook, settings, eager_tasks):
    settings.WEBHOOK_MAX_RETRIES = 0
    settings.WEBHOOK_ALLOWED_PORTS = [*settings.WEBHOOK_ALLOWED_PORTS, 9]
    hook.url = "http://127.0.0.1:9/closed"  # the discard port: nothing listens
    hook.save()
    [delivery] = webhooks.notify_claim_accepted(AcceptedClaimFactory())

    deliver_webhook.delay(delivery.pk)

    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert "ConnectionError" in delivery.last_error


@pytest.mark.parametrize(("attempt", "delay"), [(1, 10), (2, 20), (3, 40), (10, 3600)])
def test_retries_back_off_exponentially_up_to_a_cap(attempt, delay, settings):
    settings.WEBHOOK_RETRY_BACKOFF, settings.WEBHOOK_RETRY_BACKOFF_MAX = 10, 3600
    assert webhooks.retry_delay(attempt) == delay


def test_a_finished_export_is_posted(
    hook, receiver, media_root, eager_tasks, django_capture_on_commit_callbacks
):
    AcceptedClaimFactory()
    job = ExportJob.objects.create()

    with django_capture_on_commit_callbacks(execute=True):
        run_export_job(job.pk)

    [request] = receiver.requests
    data = json.loads(request["body"])["data"]
    assert request["headers"]["X-Averitec-Event"] == "export.finished"
    assert data["export_id"] == job.pk
    assert data["status"] == "done"
    assert data["claims"] == 1
    assert data["download_path"] == f"/api/v1/export-jobs/{job.pk}/download/"


def test_only_subscribed_active_webhooks_get_an_event(researcher, hook):
    Webhook.objects.create(owner=researcher, url=hook.url, events=["export.finished"])
    Webhook.objects.create(
        owner=researcher, url=hook.url, events=["claim.accepted"], is_active=False
    )

    deliveries = webhooks.notify_claim_accepted(AcceptedClaimFactory())

    assert [d.webhook for d in deliveries] == [hook]


def test_webhooks_can_be_switched_off(hook, settings):
    settings.WEBHOOKS_ENABLED = False
    assert webhooks.notify_claim_accepted(AcceptedClaimFactory()) == []


def test_researchers_register_webhooks_over_the_api_and_see_the_secret_once(researcher, receiver):
    client = APIClient()
    client.force_authenticate(researcher)

    created = client.post(
        "/api/v1/webhooks/", {"url": receiver.url, "events": ["claim.accepted"]}, format="json"
    )

    assert created.status_code == 201
    secret = created.json()["secret"]
    assert len(secret) == 64
    listed = client.get("/api/v1/webhooks/").json()["results"]
    assert listed[0]["secret"] == "…" + secret[-4:]
    bad = client.post("/api/v1/webhooks/", {"url": receiver.url, "events": ["x"]}, format="json")
    assert bad.status_code == 400


def test_webhooks_are_private_to_their_owner(researcher, manager, hook):
    client = APIClient()
    client.force_authenticate(manager)
    assert client.get("/api/v1/webhooks/").json()["results"] == []
    assert client.delete(f"/api/v1/webhooks/{hook.pk}/").status_code == 404


def test_deliveries_left_pending_are_queued_again(hook, receiver, eager_tasks, settings):
    from datetime import timedelta

    from django.utils import timezone

    from exports.tasks import requeue_pending_webhooks

    settings.WEBHOOK_RETRY_BACKOFF_MAX = 60
    [stuck] = webhooks.notify_claim_accepted(AcceptedClaimFactory())  # never sent: no commit
    [recent] = webhooks.notify_claim_accepted(AcceptedClaimFactory())
    WebhookDelivery.objects.filter(pk=stuck.pk).update(
        created_at=timezone.now() - timedelta(minutes=5)
    )

    assert requeue_pending_webhooks() == 1

    stuck.refresh_from_db()
    recent.refresh_from_db()
    assert stuck.status == WebhookDelivery.Status.DELIVERED
    assert recent.status == WebhookDelivery.Status.PENDING


def test_a_claim_accepted_by_the_workflow_is_posted(
    hook, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    from tests import steps
    from tests.factories import AnnotatorFactory

    crew = [AnnotatorFactory(username=f"p{n}") for n in range(1, 4)]
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    steps.answer(crew[1])

    with django_capture_on_commit_callbacks(execute=True):
        steps.check(crew[2])

    [request] = receiver.requests
    assert json.loads(request["body"])["data"]["claim_id"] == claim.pk


def test_webhooks_to_internal_addresses_are_refused(researcher, settings):
    from rest_framework.test import APIClient

    from exports.webhooks import receiver_problem

    settings.WEBHOOK_ALLOWED_NETWORKS = []
    for url in ("http://127.0.0.1:8000/hook", "http://10.1.2.3/hook", "http://169.254.169.254/"):
        assert "Refused" in receiver_problem(url)
    assert receiver_problem("ftp://example.org/hook") == "a webhook needs an http or https address"
    api = APIClient()
    api.force_authenticate(researcher)
    response = api.post(
        "/api/v1/webhooks/",
        {"url": "http://127.0.0.1:9/hook", "events": ["claim.accepted"]},
        format="json",
    )
    assert response.status_code == 400
    assert "loopback" in str(response.json()["url"])


def test_delivery_connects_to_the_address_that_passed_the_check_not_a_second_dns_answer(
    hook, receiver, eager_tasks, settings, monkeypatch
):
    # A rebinding name: its first answer passes the public-address check (the local
    # receiver is let through), every later answer points somewhere else.
    settings.WEBHOOK_MAX_RETRIES = 0
    settings.WEBHOOK_TIMEOUT = 1.0
    real_getaddrinfo = socket.getaddrinfo
    answers = iter(["127.0.0.1"])

    def rebinding_getaddrinfo(host, port, *args, **kwargs):
        if host != "rebinding.test":
            return real_getaddrinfo(host, port, *args, **kwargs)
        address = next(answers, "192.0.2.1")  # TEST-NET-1: nothing answers there
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_getaddrinfo)
    hook.url = receiver.url.replace("127.0.0.1", "rebinding.test")
    hook.save()
    [delivery] = webhooks.notify_claim_accepted(AcceptedClaimFactory())

    deliver_webhook.delay(delivery.pk)

    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED, delivery.last_error
    [request] = receiver.requests
    assert request["headers"]["Host"] == hook.url.split("/")[2]
