"""What a page is, for the annotator: misinformation source, fact-checker, the claim's article.

- Misinformation and satire sites (MisinformationDomain) are MARKED and never hidden: the
  AVeriTeC guidelines let annotators use them, asking them to avoid them where they can.
- Fact-checking sites (FactCheckingDomain) are marked in results and REFUSED as evidence
  (`source_problem`): answers must come from the pages a fact-check relies on, never from a
  fact-check itself.
- The claim's own fact-checking article, also as a web.archive.org copy, is hidden from its
  search results and refused as its evidence.

Domain rules match the page's host and all its subdomains, "www." and letter case aside,
and optionally only a section of the site (a path prefix).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from search_proxy.models import (
    FactCheckingDomain,
    FetchedPage,
    MisinformationDomain,
    Source,
    parse_domain_entry,
)
from search_proxy.webaddress import (
    MAX_UNWRAP,
    CanonicalAddress,
    canonical_address,
    host_of,
    normalize_url,
    split_host,
    unwrap_archive_url,
)

logger = logging.getLogger(__name__)

# Organisations whose site, or whose dedicated host, only publishes fact-checks. News
# organisations with a fact-check section are NOT listed: their other pages are fine
# evidence. Their fact-check sections and articles come from imported articles instead
# (fact_checking_rule_for_article).
WELL_KNOWN_FACT_CHECKERS = (
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
)

# A host label with one of these names a fact-checking site ("factcheck.afp.com",
# "ghanafact.com", "africacheck.org"); used only for hosts that published an imported
# fact-checking article, so "factory" or "checkout" shops never come up.
_FACT_CHECKER_WORDS = ("fact", "check")


# --- Marking and refusing --------------------------------------------------------------


def is_misinformation(url: str) -> bool:
    """Whether `url` (or the page a web.archive.org link captured) is on a misinformation or
    satire site. Only ever used to mark a page, never to hide or refuse it."""
    return url in misinformation_among([url])


def misinformation_among(urls: list[str]) -> set[str]:
    """Which of `urls` is_misinformation, with one query for all of them."""
    return set(MisinformationDomain.objects.matching_each(urls))


@dataclass(frozen=True)
class FactCheckFinding:
    """What the fact-check test found for one address.

    reveals: a fact-check, the claim's own article, or an address whose target cannot be
    known offline (`possibly`: treated as revealing everywhere, with its own message).
    """

    address: str
    canonical: str
    reveals: bool
    possibly: bool = False
    rule: str = ""
    own_article: bool = False
    wrappers: tuple[str, ...] = ()
    unresolved: str = ""

    @property
    def message(self) -> str:
        """Why the address cannot be used, for the one who typed it; "" when it can."""
        if not self.reveals:
            return ""
        via = f" (behind {', '.join(self.wrappers)})" if self.wrappers else ""
        if self.possibly:
            return (
                f"This is a shortened or archived link ({self.unresolved}) whose page cannot "
                "be checked here: it may be a fact-check. Give the full address of the page "
                "itself."
            )
        if self.own_article:
            return (
                f"This is the claim's own fact-checking article{via}; it cannot be used as "
                "evidence."
            )
        return (
            f"{self.rule} is a fact-checking site{via}; fact-checking articles are not allowed "
            "as evidence. Use the sources the fact-check links to instead."
        )


def known_target(address: str) -> str | None:
    """Where a short link (shortener, archive.today id) leads, when something stored knows:
    the page a stored archive copy was made of, or where a stored snapshot's redirects
    ended. Nothing is fetched."""
    return known_targets([address]).get(address)


def known_targets(addresses: Iterable[str]) -> dict[str, str]:
    """known_target for many short links, with one query per table for all of them: the
    address -> where it leads, for those whose target something stored knows."""
    texts = {address: address.strip() for address in addresses}
    wanted = {text for text in texts.values() if text}
    if not wanted:
        return {}
    pages: dict[str, str] = {}
    # first() of each address, as one query: the oldest row wins.
    for copy, page in (
        Source.objects.filter(archived_url__in=wanted)
        .order_by("pk")
        .values_list("archived_url", "url")
    ):
        assert copy is not None  # archived_url__in=wanted: never NULL
        if page:
            pages.setdefault(copy, page)
    keys = {text: normalize_url(text) for text in wanted if text not in pages}
    finals: dict[str, str] = {}
    if keys:
        for key, final in (
            FetchedPage.objects.filter(normalized_url__in=set(keys.values()))
            .exclude(final_url="")
            .order_by("-last_seen_at")
            .values_list("normalized_url", "final_url")
        ):
            finals.setdefault(key, final)  # the newest seen snapshot's
    found: dict[str, str] = {}
    for address, text in texts.items():
        if text in pages:
            found[address] = pages[text]
        elif (newest := finals.get(keys.get(text, ""))) and normalize_url(newest) != keys[text]:
            found[address] = newest
    return found


def canonical_addresses(urls: list[str]) -> list[CanonicalAddress]:
    """canonical_address of each of `urls` with the stored knowledge of short links, asked
    for all of them at once: one round of look-ups per level of short links inside short
    links (almost always none or one), whatever the number of addresses."""
    known: dict[str, str | None] = {}
    asked: set[str] = set()

    def target(address: str) -> str | None:
        if address in known:
            return known[address]
        asked.add(address)
        return None

    for _level in range(MAX_UNWRAP + 1):
        asked.clear()
        canon = [canonical_address(url, target) for url in urls]
        if not asked:
            break
        found = known_targets(asked)
        known.update({address: found.get(address) for address in asked})
    return canon


def fact_check_finding(url: str, own_article: str | None = None) -> FactCheckFinding:
    """The one fact-check test: on the canonical address (archive copies, caches,
    translators, redirectors and known short links unwrapped), the host and path rules of
    FactCheckingDomain, and the claim's own article when given. Shortened links whose
    target is unknown are possibly revealing."""
    return fact_check_findings([url], own_article)[0]


def fact_check_findings(urls: list[str], own_article: str | None = None) -> list[FactCheckFinding]:
    """fact_check_finding for many addresses, with one rule query for all of them (and one
    look-up of stored short-link targets per level of nesting)."""
    *canon, own_canon = canonical_addresses([*urls, own_article or ""])
    rules = FactCheckingDomain.objects.matching_each([c.address for c in canon if c.address])
    own = normalize_url(own_canon.address) if own_article else ""
    findings = []
    for url, c in zip(urls, canon, strict=True):
        common: dict[str, Any] = {"address": url, "canonical": c.address, "wrappers": c.wrappers}
        if c.unresolved:
            findings.append(
                FactCheckFinding(**common, reveals=True, possibly=True, unresolved=c.unresolved)
            )
        elif own and c.address and normalize_url(c.address) == own:
            findings.append(FactCheckFinding(**common, reveals=True, own_article=True))
        elif matched := rules.get(c.address):
            findings.append(FactCheckFinding(**common, reveals=True, rule=str(matched[0])))
        else:
            findings.append(FactCheckFinding(**common, reveals=False))
    return findings


def is_fact_checker(url: str) -> bool:
    """Whether `url` is (or may be) a fact-check, on its canonical address."""
    return fact_check_finding(url).reveals


def source_problem(url: str, own_article: str | None = None) -> str | None:
    """Why `url` cannot be evidence, or None when it can; `own_article` is the address of
    the claim's fact-checking article, when there is a claim.

    Refuses fact-checks and the claim's own article however the address is wrapped, and
    short links that cannot be checked. The Phase 2 form shows the message to the annotator.
    """
    finding = fact_check_finding(url, own_article)
    return finding.message or None


@dataclass(frozen=True)
class Flags:
    misinformation: frozenset[str]
    fact_checkers: frozenset[str]


def flags_for(urls: list[str]) -> Flags:
    """Which of `urls` are misinformation sources and (possibly) fact-checks."""
    return Flags(
        misinformation=frozenset(misinformation_among(urls)),
        fact_checkers=frozenset(f.address for f in fact_check_findings(urls) if f.reveals),
    )


# --- Loading the lists -----------------------------------------------------------------


@dataclass
class ListLoadReport:
    created: int = 0
    already_known: int = 0
    duplicates: int = 0
    removed: int = 0
    bad_lines: list[tuple[int, str]] | None = None


def parse_domain_list(lines: list[str]) -> tuple[list[tuple[str, str]], list[tuple[int, str]]]:
    """The distinct (domain, path prefix) rules of a list file, and its bad lines
    (line number, message). Blank lines and lines starting with # are skipped."""
    rules: list[tuple[str, str]] = []
    bad: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            rules.append(parse_domain_entry(line))
        except ValueError as exc:
            bad.append((number, str(exc)))
    return rules, bad


@transaction.atomic
def load_misinformation_domains(lines: list[str], *, prune: bool = False) -> ListLoadReport:
    """Add the list's rules; with `prune`, drop list rules no longer in it. Rules added in the
    admin are never touched."""
    rules, bad = parse_domain_list(lines)
    distinct = list(dict.fromkeys(rules))
    report = ListLoadReport(duplicates=len(rules) - len(distinct), bad_lines=bad)
    existing = set(MisinformationDomain.objects.values_list("domain", "path_prefix"))
    new = [r for r in distinct if r not in existing]
    MisinformationDomain.objects.bulk_create(
        [
            MisinformationDomain(domain=d, path_prefix=p, origin=MisinformationDomain.Origin.LIST)
            for d, p in new
        ],
        ignore_conflicts=True,
    )
    report.created, report.already_known = len(new), len(distinct) - len(new)
    if prune:
        wanted = set(distinct)
        stale = [
            pk
            for pk, d, p in MisinformationDomain.objects.filter(
                origin=MisinformationDomain.Origin.LIST
            ).values_list("pk", "domain", "path_prefix")
            if (d, p) not in wanted
        ]
        report.removed, _ = MisinformationDomain.objects.filter(pk__in=stale).delete()
    return report


def fact_checking_rule_for_article(url: str) -> tuple[str, str] | None:
    """The FactCheckingDomain rule an imported fact-checking article at `url` implies.

    - on a well-known fact-checker: nothing new (the maintained list covers it);
    - on a host named like a fact-checker ("factcheck.afp.com", "ghanafact.com"): that host;
    - elsewhere (a news site): its fact-check section when the path names one
      ("usatoday.com/story/news/factcheck/..." -> "story/news/factcheck"), else the
      article's own page, so the rest of the news site stays usable as evidence.
    """
    host = host_of(url)
    if not host or "." not in host:
        return None
    suffixes = _host_suffixes(host)
    if any(name in WELL_KNOWN_FACT_CHECKERS for name in suffixes):
        return None
    subdomain, domain, suffix = split_host(host)
    labels = [*subdomain.split("."), domain] if subdomain else [domain]
    for index, label in enumerate(labels):
        if any(word in label.lower() for word in _FACT_CHECKER_WORDS):
            return ".".join(labels[index:]) + (f".{suffix}" if suffix else ""), ""
    path = normalize_url(url).split("/", 3)[3:]
    segments = [s for s in (path[0].split("?")[0].split("/") if path else []) if s]
    for index, segment in enumerate(segments[:-1]):
        if any(word in segment.lower() for word in _FACT_CHECKER_WORDS):
            return host, "/".join(segments[: index + 1]).lower()
    if not segments:
        return None  # the home page of a news site: nothing to refuse
    return host, "/".join(segments).lower()


def _host_suffixes(host: str) -> list[str]:
    labels = host.split(".")
    return [".".join(labels[i:]) for i in range(len(labels) - 1)]


@transaction.atomic
def sync_fact_checking_domains(articles: Iterable[tuple[str, str]]) -> ListLoadReport:
    """Bring FactCheckingDomain up to date with the maintained list and the given
    fact-checking articles, as (url, publisher) pairs: their URLs, and their publishers
    where those are domains. Rules are only added, never removed: managers edit the list
    in the admin."""
    wanted: dict[tuple[str, str], str] = {
        (domain, ""): FactCheckingDomain.Origin.MAINTAINED for domain in WELL_KNOWN_FACT_CHECKERS
    }
    for url, publisher in articles:
        for address in (unwrap_archive_url(url), publisher):
            if address and " " not in address.strip():
                rule = fact_checking_rule_for_article(address)
                # A publisher gives a whole-site rule only when it is named like a
                # fact-checker; "usatoday.com" as a publisher says nothing about sections.
                if rule and (address == publisher and rule[1]):
                    continue
                if rule:
                    wanted.setdefault(rule, FactCheckingDomain.Origin.ARTICLES)
    existing = set(FactCheckingDomain.objects.values_list("domain", "path_prefix"))
    new = [key for key in wanted if key not in existing]
    FactCheckingDomain.objects.bulk_create(
        [FactCheckingDomain(domain=d, path_prefix=p, origin=wanted[(d, p)]) for d, p in new],
        ignore_conflicts=True,
    )
    return ListLoadReport(created=len(new), already_known=len(wanted) - len(new))
