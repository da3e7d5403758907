from celery import shared_task

from annotation.assignment import expire_lapsed_leases


@shared_task
def expire_leases() -> int:
    """Periodic: return idle tasks to the pool (Start next also does this on the way)."""
    return expire_lapsed_leases()
