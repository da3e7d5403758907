from celery import shared_task

from annotation.assignment import expire_lapsed_leases


@shared_task
def expire_leases() -> int:
    """Every minute (Celery beat): return tasks idle past their lease to the pool."""
    return expire_lapsed_leases()
