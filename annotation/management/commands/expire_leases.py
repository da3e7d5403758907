from django.core.management.base import BaseCommand

from annotation.assignment import expire_lapsed_leases


class Command(BaseCommand):
    help = "Return tasks whose lease lapsed (no activity for TASK_LEASE_MINUTES) to the pool."

    def handle(self, *args, **options):
        count = expire_lapsed_leases()
        self.stdout.write(f"{count} task(s) returned to the pool.")
