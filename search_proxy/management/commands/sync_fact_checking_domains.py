from django.core.management.base import BaseCommand

from search_proxy.flags import sync_fact_checking_domains


class Command(BaseCommand):
    help = (
        "Add fact-checking domains (not allowed as evidence) from the maintained list of "
        "fact-checkers and from the addresses and publishers of imported fact-checking "
        "articles. Entries are only added; edit or remove them in the admin."
    )

    def handle(self, *args, **options):
        report = sync_fact_checking_domains()
        self.stdout.write(
            self.style.SUCCESS(
                f"{report.created} new fact-checking domains, {report.already_known} already known."
            )
        )
