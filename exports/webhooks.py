"""Webhooks: signed POSTs to researchers' servers when a claim is accepted or an export ends.

The one module that talks to webhook receivers (see STYLE.md: one client module per outside
service, with timeouts and one exception type).

Every request is a JSON POST with these headers::

    X-Averitec-Event:      claim.accepted | export.finished
    X-Averitec-Delivery:   <delivery id>          (the same on every retry: deduplicate on it)
    X-Averitec-Timestamp:  <unix seconds>
    X-Averitec-Signature:  sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the secret>

A receiver recomputes the signature over the raw body with its webhook's secret, compares it
in constant time, and rejects old timestamps to stop replays. Any 2xx answer is a delivery;
anything else (or no answer within ``WEBHOOK_TIMEOUT``) is retried with exponential backoff,
up to ``WEBHOOK_MAX_RETRIES`` times, by the Celery task ``exports.tasks.deliver_webhook``.
Delivery is at least once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import timedelta
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import urllib3
from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from exports.models import ExportJob, Webhook, WebhookDelivery
from search_proxy.fetch import (
    FetchRefused,
    PageUnavailable,
    Target,
    parse_target,
    pinned_pool,
    resolve,
)

USER_AGENT = "averitec-annotation-platform webhooks"


class WebhookDeliveryError(Exception):
    """The receiver did not take the delivery (no answer, or not a 2xx status)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class PortRefused(FetchRefused):
    """A receiver on a port webhooks may not use (WEBHOOK_ALLOWED_PORTS)."""


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=`` + hex HMAC-SHA256 of ``timestamp + "." + body`` under ``secret``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, header: str, *, max_age: int = 300) -> bool:
    """What a receiver does (used by the tests; Python receivers may copy it)."""
    try:
        fresh = abs(time.time() - int(timestamp)) <= max_age
    except ValueError:
        return False
    return fresh and hmac.compare_digest(signature(secret, timestamp, body), header)


def post(delivery: WebhookDelivery) -> int:
    """Send one delivery once; returns the HTTP status or raises WebhookDeliveryError."""
    body = json.dumps(
        {"event": delivery.event, "delivery": delivery.pk, "data": delivery.payload},
        separators=(",", ":"),
    ).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Averitec-Event": delivery.event,
        "X-Averitec-Delivery": str(delivery.pk),
        "X-Averitec-Timestamp": timestamp,
        "X-Averitec-Signature": signature(delivery.webhook.secret, timestamp, body),
    }
    try:
        target, address = checked_receiver(delivery.webhook.url)
    except PortRefused as exc:
        raise WebhookDeliveryError(str(exc)) from exc
    except (FetchRefused, PageUnavailable) as exc:
        raise WebhookDeliveryError(f"Webhooks only go to public web addresses. {exc}") from exc
    timeout = urllib3.Timeout(connect=settings.WEBHOOK_TIMEOUT, read=settings.WEBHOOK_TIMEOUT)
    pool = pinned_pool(target.scheme, target.host, target.port, address, timeout)
    try:
        response = pool.urlopen(
            "POST",
            target.path,
            body=body,
            headers={**headers, "Host": target.host_header},
            redirect=False,
            retries=False,
            assert_same_host=False,
        )
    except urllib3.exceptions.HTTPError as exc:
        raise WebhookDeliveryError(f"{exc.__class__.__name__}: {exc}") from exc
    finally:
        pool.close()
    if not 200 <= response.status < 300:
        raise WebhookDeliveryError(
            f"the receiver answered {response.status}", status=response.status
        )
    return response.status


def checked_receiver(url: str) -> tuple[Target, str]:
    """The receiver's parsed address and the one IP address to connect to.

    The name is resolved once, here: delivery connects to the address that passed the check,
    so a DNS answer that changes in between (DNS rebinding) cannot reach an internal service.
    """
    target = parse_target(url)
    addresses = resolve(target.host, target.port, allowed_setting="WEBHOOK_ALLOWED_NETWORKS")
    if problem := port_problem(target.port):
        raise PortRefused(problem)
    return target, addresses[0]


def port_problem(port: int) -> str | None:
    """Why webhooks must not go to `port`: a public host's other ports are its mail, SSH,
    database or Redis, which a crafted POST should never reach (WEBHOOK_ALLOWED_PORTS)."""
    allowed = settings.WEBHOOK_ALLOWED_PORTS
    if port in allowed:
        return None
    listed = ", ".join(str(p) for p in allowed)
    return f"Webhooks only go to port {listed}; port {port} is refused."


def receiver_problem(url: str) -> str | None:
    """Why webhooks must not be posted to `url`: only public web addresses are allowed, so a
    webhook cannot reach services inside our network (the page viewer's rule)."""
    if urlsplit(url).scheme not in ("http", "https"):
        return "a webhook needs an http or https address"
    try:
        checked_receiver(url)
    except PortRefused as exc:
        return str(exc)
    except (FetchRefused, PageUnavailable) as exc:
        return f"Webhooks only go to public web addresses. {exc}"
    return None


def retry_delay(attempt: int) -> int:
    """Seconds before retry number ``attempt`` (1, 2, ...): doubling, capped."""
    delay = settings.WEBHOOK_RETRY_BACKOFF * 2 ** (attempt - 1)
    return min(delay, settings.WEBHOOK_RETRY_BACKOFF_MAX)


def deliver(delivery_id: int) -> WebhookDelivery.Status | None:
    """One attempt at a pending delivery; returns its new status, None if not pending.

    Raises WebhookDeliveryError when the attempt failed and retries remain; the caller (the
    Celery task) schedules the retry.
    """
    delivery = (
        WebhookDelivery.objects.pending().select_related("webhook").filter(pk=delivery_id).first()
    )
    if delivery is None:
        return None
    attempts = delivery.attempts + 1
    try:
        status = post(delivery)
    except WebhookDeliveryError as exc:
        out_of_attempts = attempts > settings.WEBHOOK_MAX_RETRIES
        WebhookDelivery.objects.filter(
            pk=delivery.pk, status=WebhookDelivery.Status.PENDING
        ).update(
            attempts=attempts,
            last_error=str(exc)[:2000],
            response_status=exc.status,
            status=WebhookDelivery.Status.FAILED
            if out_of_attempts
            else WebhookDelivery.Status.PENDING,
        )
        if out_of_attempts:
            return WebhookDelivery.Status.FAILED
        raise
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=attempts,
        status=WebhookDelivery.Status.DELIVERED,
        response_status=status,
        last_error="",
        delivered_at=timezone.now(),
    )
    return WebhookDelivery.Status.DELIVERED


# --- Events ----------------------------------------------------------------------------


def _queue(event: str, payload: dict[str, Any]) -> list[WebhookDelivery]:
    """A pending delivery per active subscribed webhook, sent once the transaction commits."""
    if not settings.WEBHOOKS_ENABLED:
        return []
    # JSON containment is not available on SQLite, so the event filter runs in Python.
    hooks = [h for h in Webhook.objects.filter(is_active=True) if event in h.events]
    if not hooks:
        return []
    deliveries = [
        WebhookDelivery.objects.create(webhook=hook, event=event, payload=payload) for hook in hooks
    ]
    for delivery in deliveries:
        # robust: a broker that is down must not undo or break the caller's work; the
        # delivery stays pending and requeue_pending_webhooks sends it later.
        transaction.on_commit(partial(deliver_webhook.delay, delivery.pk), robust=True)
    return deliveries


def notify_claim_accepted(claim) -> list[WebhookDelivery]:
    """Queue "claim.accepted" for a claim that has just been accepted."""
    return _queue(
        Webhook.Event.CLAIM_ACCEPTED,
        {
            "claim_id": claim.pk,
            "claim": claim.text,
            "label": claim.label,
            "required_reannotation": claim.required_reannotation,
            "accepted_at": claim.accepted_at.isoformat() if claim.accepted_at else None,
            "api_path": reverse("exports_api:claim-detail", args=[claim.pk]),
        },
    )


def on_claim_accepted(sender, claim, **kwargs) -> None:
    """Receiver of annotation.signals.claim_accepted (connected in ExportsConfig.ready)."""
    notify_claim_accepted(claim)


def notify_export_finished(job: ExportJob) -> list[WebhookDelivery]:
    """Queue "export.finished" for an export job that is done or failed."""
    return _queue(
        Webhook.Event.EXPORT_FINISHED,
        {
            "export_id": job.pk,
            "status": job.status,
            "claims": job.claims,
            "split": job.split or None,
            "format": job.fmt,
            "error": job.error or None,
            "api_path": reverse("exports_api:export-job-detail", args=[job.pk]),
            "download_path": reverse("exports_api:export-job-download", args=[job.pk])
            if job.status == ExportJob.Status.DONE
            else None,
        },
    )


# --- Celery tasks (named as when they lived in exports/tasks.py) --------------------------


@shared_task(name="exports.tasks.deliver_webhook", bind=True, acks_late=True, max_retries=None)
def deliver_webhook(self, delivery_id: int) -> str | None:
    """POST one webhook delivery; on failure retry with exponential backoff, a bounded
    number of times (WEBHOOK_MAX_RETRIES), then mark it failed."""
    try:
        status = deliver(delivery_id)
    except WebhookDeliveryError as exc:
        attempts = WebhookDelivery.objects.values_list("attempts", flat=True).get(pk=delivery_id)
        raise self.retry(exc=exc, countdown=retry_delay(attempts)) from exc
    return status


@shared_task(name="exports.tasks.requeue_pending_webhooks")
def requeue_pending_webhooks() -> int:
    """Periodic: queue deliveries left pending with no task (the broker was down, say)."""
    # Give queued retries their time first: only deliveries idle longer than the longest wait.
    idle = timezone.now() - timedelta(seconds=settings.WEBHOOK_RETRY_BACKOFF_MAX * 2)
    pending = WebhookDelivery.objects.pending().filter(created_at__lt=idle)
    ids = list(pending.values_list("pk", flat=True)[:500])
    for pk in ids:
        deliver_webhook.delay(pk)
    return len(ids)
