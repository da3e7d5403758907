"""Seed the fact-checking domains with the well-known fact-checkers (a copy of
search_proxy.flags.WELL_KNOWN_FACT_CHECKERS as it was; `manage.py sync_fact_checking_domains`
adds later additions and the sites of imported articles)."""

from django.db import migrations

FACT_CHECKERS = [
    "africacheck.org",
    "altnews.in",
    "aosfatos.org",
    "boomlive.in",
    "checkyourfact.com",
    "chequeado.com",
    "climatefeedback.org",
    "dubawa.org",
    "factcheck.afp.com",
    "factcheck.org",
    "factcheck.thedispatch.com",
    "factcheckni.org",
    "factcrescendo.com",
    "factly.in",
    "fatabyyano.net",
    "fullfact.org",
    "ghanafact.com",
    "healthfeedback.org",
    "hoax-slayer.net",
    "leadstories.com",
    "logicallyfacts.com",
    "maldita.es",
    "misbar.com",
    "newschecker.in",
    "pesacheck.org",
    "politifact.com",
    "polygraph.info",
    "sciencefeedback.co",
    "snopes.com",
    "stopfake.org",
    "teyit.org",
    "truthorfiction.com",
    "verafiles.org",
    "vishvasnews.com",
    "zimfact.org",
]


def seed(apps, schema_editor):
    FactCheckingDomain = apps.get_model("search_proxy", "FactCheckingDomain")
    FactCheckingDomain.objects.bulk_create(
        [FactCheckingDomain(domain=d, path_prefix="", origin="maintained") for d in FACT_CHECKERS],
        ignore_conflicts=True,
    )


def unseed(apps, schema_editor):
    FactCheckingDomain = apps.get_model("search_proxy", "FactCheckingDomain")
    FactCheckingDomain.objects.filter(
        domain__in=FACT_CHECKERS, path_prefix="", origin="maintained"
    ).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("search_proxy", "0003_document_fulltext"),
    ]

    operations = [migrations.RunPython(seed, unseed)]
