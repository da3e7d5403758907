"""Fact-check rules as data: path patterns ("*") in domain rules, and the seed of the rules
the canonical fact-check test (search_proxy.flags.fact_check_finding) matches.

Seeded, as origin "maintained" (managers extend the table in the admin):
- fact-checkers that are signatories of the IFCN code of principles (whole sites, or the
  fact-checking host of a larger organisation, e.g. AFP's language sites);
- the fact-check sections of general news sites (reuters.com/fact-check,
  apnews.com/.../ap-fact-check, the Washington Post Fact Checker, USA Today, ...);
- the Poynter IFCN pages;
- fact-checkers' own accounts on Facebook, X/Twitter, YouTube, Instagram and TikTok.
A copy as it was: later additions go through the admin or sync_fact_checking_domains.
"""

import importlib

from django.db import migrations, models

# IFCN signatories and other organisations that only publish fact-checks (whole sites).
WHOLE_SITES = """
211check.org africacheck.org altnews.in annielab.org aosfatos.org boatos.org boombd.com
boomlive.in checamos.afp.com checkyourfact.com chequeado.com climatefeedback.org
cofacts.tw colombiacheck.com congocheck.net correctiv.org/faktencheck cekfakta.com
cekfakta.tempo.co demagog.cz demagog.org.pl demagog.sk digiteye.in dogrulukpayi.com
dpa-factchecking.com dubawa.org e-farsas.com ecuadorchequea.com efeverifica.com
ellinikahoaxes.gr facta.news factcheck.afp.com factcheck.ge factcheck.org
factcheck.snu.ac.kr factcheck.thedispatch.com factcheck.kz factcheckcenter.jp factcheckhub.com
factcheckni.org factchecknederland.afp.com factcrescendo.com factly.in factrakers.org
factual.afp.com factuel.afp.com faktabaari.fi faktacek.afp.com faktencheck.afp.com
faktisk.no faktograf.hr fatabyyano.net fullfact.org ghanafact.com healthfeedback.org
hoax-slayer.net hoax-slayer.com istinomer.rs kallkritikbyran.se leadstories.com
logicallyfacts.com malumatfurus.org maldita.es misbar.com mimikama.org mygopen.com
mythdetector.ge namibiafactcheck.org.na newschecker.in newtral.es nieuwscheckers.nl
pagellapolitica.it periksafakta.afp.com pesacheck.org poligrafo.sapo.pt politifact.com
polygraph.info propastop.org raskrinkavanje.ba sciencefeedback.co snopes.com
sprawdzam.afp.com stopfake.org tfc-taiwan.org.tw teyit.org tjekdet.dk truthorfiction.com
tsek.ph turnbackhoax.id verafiles.org verificat.cat verifythis.com vishvasnews.com
youturn.in zimfact.org factcheckthailand.afp.com fakty.afp.com factcheckarabic.afp.com
lupa.uol.com.br boliviaverifica.bo gigafact.org
"""

# Fact-check sections of sites whose other pages are ordinary evidence ("*": any text).
SECTIONS = """
reuters.com/fact-check reuters.com/article/*factcheck* reuters.com/article/*fact-check*
apnews.com/hub/ap-fact-check apnews.com/article/*fact-check* apnews.com/article/*factcheck*
washingtonpost.com/news/fact-checker washingtonpost.com/politics/*fact-checker*
washingtonpost.com/politics/*fact-check* usatoday.com/story/news/factcheck
cnn.com/*/politics/fact-check* cnn.com/*/politics/*-fact-check* aap.com.au/factcheck
abc.net.au/news/factcheck abc.net.au/news/*/fact-check* channel4.com/news/factcheck
bbc.co.uk/news/reality_check bbc.com/news/reality_check thejournal.ie/factcheck
newsweek.com/fact-check thequint.com/news/webqoof indiatoday.in/fact-check
newsmeter.in/fact-check thelogicalindian.com/fact-check rappler.com/newsbreak/fact-check
kompas.com/cekfakta animalpolitico.com/elsabueso piaui.folha.uol.com.br/lupa
voxukraine.org/voxcheck lemonde.fr/les-decodeurs liberation.fr/checknews
francetvinfo.fr/vrai-ou-fake 20minutes.fr/fake-off tagesschau.de/faktenfinder
open.online/c/fact-checking ojo-publico.com/ojobionico poynter.org/ifcn
poynter.org/fact-checking
"""

# Fact-checkers' own accounts: their posts reveal verdicts as surely as their sites.
ACCOUNTS = {
    "facebook.com": (
        "politifact snopes factcheck.org FullFact.org AFPFactCheck AFPfactuel AfricaCheck "
        "leadstories ReutersFactCheck APFactCheck boomlive maldita.es newtral chequeado "
        "aosfatos agencialupa correctiv.org sciencefeedback checkyourfact factcheckni "
        "washingtonpostfactchecker"
    ),
    "twitter.com": (
        "politifact snopes factcheckdotorg FullFact AFPFactCheck AFPFactuel AfricaCheck "
        "ReutersFacts APFactCheck GlennKesslerWP leadstoriescom boomlive_in Chequeado maldita "
        "newtral aosfatos agencialupa CORRECTIVfakten ScienceFeedback dpa_factchecking "
        "checkyourfact PolygraphInfo teyitorg misbar_fc factlyindia altnews"
    ),
    "youtube.com": (
        "@politifact @snopes @factcheckdotorg @FullFactorg @AFPFactCheck @boomlive "
        "@AfricaCheck @leadstories @maldita @newtral user/politifact c/PolitiFact c/Snopes"
    ),
    "instagram.com": "politifact snopes factcheck.org fullfactorg afpfactcheck boomlive",
    "tiktok.com": "@politifact @snopes @factcheck.org @fullfactorg @afpfactcheck @boomlive",
}
ACCOUNTS["x.com"] = ACCOUNTS["twitter.com"]


def rules():
    for entry in WHOLE_SITES.split() + SECTIONS.split():
        domain, _, path = entry.partition("/")
        yield domain.lower(), path.strip("/").lower()
    for site, names in ACCOUNTS.items():
        for name in names.split():
            yield site, name.lower()


def seed(apps, schema_editor):
    FactCheckingDomain = apps.get_model("search_proxy", "FactCheckingDomain")
    FactCheckingDomain.objects.bulk_create(
        [
            FactCheckingDomain(domain=d, path_prefix=p, origin="maintained")
            for d, p in dict.fromkeys(rules())
        ],
        ignore_conflicts=True,
    )


def unseed(apps, schema_editor):
    # What this migration added; the whole sites 0004 seeded stay.
    FactCheckingDomain = apps.get_model("search_proxy", "FactCheckingDomain")
    earlier = set(importlib.import_module(
        "search_proxy.migrations.0004_seed_fact_checkers"
    ).FACT_CHECKERS)
    for domain, path in dict.fromkeys(rules()):
        if path or domain not in earlier:
            FactCheckingDomain.objects.filter(
                domain=domain, path_prefix=path, origin="maintained"
            ).delete()


HELP = (
    'Only pages under this path, e.g. "blog" for example.com/blog/...; "*" matches any '
    'text, e.g. "article/*fact-check*"; empty for the whole site.'
)


class Migration(migrations.Migration):

    dependencies = [
        ("search_proxy", "0007_archive_gate_outbox_lookups"),
    ]

    operations = [
        migrations.AlterField(
            model_name="factcheckingdomain",
            name="path_prefix",
            field=models.CharField(blank=True, help_text=HELP, max_length=300),
        ),
        migrations.AlterField(
            model_name="misinformationdomain",
            name="path_prefix",
            field=models.CharField(blank=True, help_text=HELP, max_length=300),
        ),
        migrations.AlterField(
            model_name="searchlog",
            name="hidden_count",
            field=models.PositiveSmallIntegerField(
                default=0, help_text="Results hidden: the claim's own article and fact-checks."
            ),
        ),
        migrations.RunPython(seed, unseed),
    ]
