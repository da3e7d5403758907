from celery import shared_task

from annotation.assignment import expire_lapsed_leases
from annotation.suggestions.pool import run_build


@shared_task
def expire_leases() -> int:
    """Every minute (Celery beat): return tasks idle past their lease to the pool."""
    return expire_lapsed_leases()


@shared_task(acks_late=True)
def build_suggestion_pool(build_id: int) -> None:
    """Rebuild the pre-suggestion pool from the accepted claims (manager's button)."""
    run_build(build_id)
