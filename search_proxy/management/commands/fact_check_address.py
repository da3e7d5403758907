import sys
from itertools import islice

from django.core.management.base import BaseCommand, CommandError

from search_proxy.flags import fact_check_findings

# Addresses read from standard input at most: a bound, and more than any list needs.
MAX_ADDRESSES = 100_000
BATCH = 500


class Command(BaseCommand):
    help = (
        "Check web addresses with the fact-check test that P1-P5 use: print, tab-separated, "
        "each address, its canonical form (archive copies, caches, translators and "
        "redirectors unwrapped) and 'reveals' or 'clear'. Shortened links whose target is "
        "not known are 'reveals' (possibly revealing). Give '-' to read one address a line "
        "from standard input."
    )

    def add_arguments(self, parser):
        parser.add_argument("addresses", nargs="+", help="web addresses, or - for stdin")

    def handle(self, *args, addresses, **options):
        if addresses == ["-"]:
            lines = (line.strip() for line in islice(sys.stdin, MAX_ADDRESSES))
            source = (line for line in lines if line)
        elif "-" in addresses:
            raise CommandError("give either addresses or '-', not both")
        else:
            source = iter(addresses)
        while batch := list(islice(source, BATCH)):
            for finding in fact_check_findings(batch):
                verdict = "reveals" if finding.reveals else "clear"
                self.stdout.write(f"{finding.address}\t{finding.canonical}\t{verdict}")
