from django.core.management.base import BaseCommand

from annotation.models import Article
from search_proxy.flags import sync_fact_checking_domains


class Command(BaseCommand):
    help = (
        "Add fact-checking domains (not allowed as evidence) from the maintained list of "
        "fact-checkers and from the addresses and publishers of imported fact-checking "
        "articles. Entries are only added; edit or remove them in the admin."
    )

    def handle(self, *args, **options):
        # Annotation owns the articles; search_proxy only learns their addresses.
        articles = Article.objects.values_list("url", "publisher").iterator()
        report = sync_fact_checking_domains(articles)
        self.stdout.write(
            self.style.SUCCESS(
                f"{report.created} new fact-checking domains, {report.already_known} already known."
            )
        )
