"""Celery jobs that keep the stored reporting figures current (review/stored.py)."""

from celery import shared_task

from review import stored


@shared_task(acks_late=True)
def score_evidence(claim_id: int) -> bool:
    """Hungarian METEOR of a double-annotated claim's two QA sets, stored once per pair
    (a redelivered message finds it stored and does nothing)."""
    return stored.score_evidence(claim_id)


@shared_task(acks_late=True)
def score_pending_evidence(limit: int = 500) -> int:
    """The beat's sweep: score pairs still pending, e.g. because the broker was down when
    their second round was handed in. Bounded per run; the next run takes the rest."""
    return stored.score_pending(limit)


@shared_task(acks_late=True)
def refresh_report(kind: str, key: str) -> bool:
    """Compute a stale stored report again, unless another job already did."""
    report_filter = stored.filter_of(key)
    if stored.read_current(kind, report_filter):
        return False
    stored.refresh_report(kind, report_filter)
    return True
