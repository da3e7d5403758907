"""Annotators' requests side by side with a bare view, in one run (issue 27).

Each request goes through the whole middleware stack with Django's test client, signed in
as an annotator holding a P2 task: autosave from the editor (htmx) and through the API PUT
with 0, 2, 10 and 20 cited answers, the P2 task page, the control panel, Start next (which
takes the annotator back to the task they hold) and the task API. The floor is a bare view
behind the same middleware and sign-in (session and user: two queries). Rounds alternate
the requests so that the machine's other load hits them alike. Run from the project root:

    .venv/bin/python benchmarks/annotator_requests.py [--rounds 5] [--repeat 20]

It works in its own PostgreSQL database (averitec_requests_bench by default, created when
missing) and empties the work tables first, so it refuses any database whose name lacks
"bench". It imports only names that predate issue 27, so the same file measures an older
checkout when run from there.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

# Run as a script, this file's own folder comes first on the path: take it out, so that no
# benchmark's name can hide a library (this file was once requests.py).
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in (_HERE, "")]
# The project to measure is the current directory (the same file can measure another
# checkout); this file's project supplies only bench_db.
sys.path.insert(0, str(Path.cwd()))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))


DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_requests_bench"
CITED = (0, 2, 10, 20)
# The editor's autosave as a browser sends it: urlencoded (htmx); "multipart" is the test
# client's default, which the figures before this option measured.
ENCODING = {"form": "urlencoded"}
TASK_PAGE_CITED = 10
SHOW_QUERIES: set[str] = set()


def bare_view_and_app_urls() -> list:
    """The app's URLs plus the bare view: the floor, behind the same middleware."""
    from django.contrib.auth.decorators import login_required
    from django.http import HttpResponse
    from django.urls import include, path

    @login_required
    def bare(request):
        return HttpResponse("ok")

    return [path("bench/bare/", bare), path("", include("config.urls"))]


def cited(n: int) -> list[str]:
    return [f"https://site{i}.example.org/report/{i}" for i in range(n)]


def editor_post(n: int, version: int, note: str) -> dict:
    """The editor's form with n cited answers, three to a question, or one question
    answered from the claim's metadata when n is 0."""
    data = {
        "draft_version": str(version),
        "verdict": "Refuted",
        "claim_correction": note,
        "tab_id": "bench-tab",
    }
    answers = [
        ("Extractive", url, "Web text", f"The budget lists {i} million pounds for parks.")
        for i, url in enumerate(cited(n))
    ] or [("Abstractive", "metadata", "Metadata", "The claim was made in 2020.")]
    for n_answer, (kind, url, medium, text) in enumerate(answers):
        qi, ai = divmod(n_answer, 3)
        data[f"q-{qi}-text"] = f"What does source {qi} say about the parks budget?"
        prefix = f"q-{qi}-a-{ai}-"
        data.update(
            {
                prefix + "answer_type": kind,
                prefix + "text": text,
                prefix + "boolean": "",
                prefix + "boolean_explanation": "",
                prefix + "source_url": url,
                prefix + "source_medium": medium,
            }
        )
    return data


def api_draft(n: int, note: str) -> dict:
    from django.http import QueryDict

    from annotation.forms.evidence import draft_from_post

    query = QueryDict(mutable=True)
    query.update(editor_post(n, 0, note))
    return draft_from_post(query)


def build():
    """An annotator holding a P2 task of a claim, the sites' lists, and what is stored about
    the cited pages (index dates, snapshots, sources) for some of them."""
    import datetime

    from django.db import connection

    from annotation import assignment, workflow
    from annotation.models import Article, User
    from annotation.vocabulary import Phase
    from search_proxy.models import Document, FetchedPage, MisinformationDomain, Source
    from search_proxy.webaddress import normalize_url

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE annotation_task, annotation_claim, annotation_article, annotation_user, "
            "search_proxy_document, search_proxy_fetchedpage, search_proxy_source, "
            "search_proxy_misinformationdomain CASCADE"
        )
    writer, me = (
        User.objects.create_user(username=name, password="x", qualified_phases=[1, 2, 3, 4, 5])
        for name in ("writer", "annotator")
    )
    MisinformationDomain.objects.bulk_create(
        MisinformationDomain(domain=f"misinfo{i}.example.net") for i in range(500)
    )
    MisinformationDomain.objects.create(domain="site3.example.org")
    for i, url in enumerate(cited(max(CITED))):
        key = normalize_url(url)
        if i % 4 == 0:
            Document.objects.create(
                url=url, normalized_url=key, text="A page.", published=datetime.date(2019, 5, 1),
                date_source="given",
            )  # fmt: skip
        elif i % 4 == 1:
            FetchedPage.objects.create(
                url=url, normalized_url=key, final_url=url, title="A page",
                sentences=["A page."], published=datetime.date(2019, 6, 1),
                date_source="estimated", content_type="text/html", http_status=200,
            )  # fmt: skip
        elif i % 4 == 2:
            Source.objects.create(url=url, normalized_url=key)
    url = "https://news.example.com/fact-check/parks-spending/"
    article = Article.objects.create(url=url, normalized_url=normalize_url(url))
    workflow.open_article_for_normalisation(article)
    workflow.submit_normalisation(
        assignment.next_task(writer, Phase.NORMALISATION),
        [
            workflow.NormalisedClaim(
                text="The council spent 4 million pounds on parks in 2019.",
                fact_checker_label="Refuted",
                claim_date=datetime.date(2020, 10, 31),
                claim_types=["Numerical Claim"],
                fact_checking_strategies=["Written Evidence"],
                speaker="A council member",
                location_iso_code="GB",
            )
        ],
    )
    return me, assignment.next_task(me, Phase.QUESTIONS)


class Requests:
    """The requests measured, each a callable returning the response; autosaves send new
    content at the task's current version, as an annotator typing does."""

    def __init__(self, client, task):
        from django.urls import reverse

        self.client, self.task, self.saves = client, task, 0
        self.urls = {
            "save": reverse("annotation:save-draft", args=[task.pk]),
            "api_save": reverse("api:task-draft", args=[task.pk]),
            "task": reverse("annotation:task", args=[task.pk]),
            "panel": reverse("annotation:control-panel"),
            "next": reverse("annotation:start-next", args=[task.phase]),
            "api_task": reverse("api:task-detail", args=[task.pk]),
        }

    def version(self) -> int:
        from annotation.models import Task

        return Task.objects.filter(pk=self.task.pk).values_list("draft_version", flat=True)[0]

    def all(self) -> dict:
        found = {"bare view": lambda: self.client.get("/bench/bare/")}
        for n in CITED:
            found[f"autosave htmx, {n} cited"] = self._save(n)
        for n in CITED:
            found[f"autosave API, {n} cited"] = self._api_save(n)
        found[f"task page P2, {TASK_PAGE_CITED} cited"] = self._task_page
        found["control panel"] = lambda: self.client.get(self.urls["panel"])
        found["Start next"] = lambda: self.client.post(self.urls["next"])
        found["task API GET"] = lambda: self.client.get(self.urls["api_task"])
        return found

    def _save(self, n: int):
        def save(version: int):
            self.saves += 1
            data = editor_post(n, version, f"save {self.saves}")
            if ENCODING["form"] == "multipart":
                return self.client.post(self.urls["save"], data, HTTP_HX_REQUEST="true")
            # Encoded as htmx sends a form without files (the test client's default,
            # multipart, costs the server several milliseconds more to parse).
            return self.client.post(
                self.urls["save"],
                urlencode(data),
                content_type="application/x-www-form-urlencoded",
                HTTP_HX_REQUEST="true",
            )

        return save

    def _api_save(self, n: int):
        def save(version: int):
            self.saves += 1
            body = {"draft": api_draft(n, f"save {self.saves}"), "version": version}
            body["tab"] = "bench-api"
            return self.client.put(self.urls["api_save"], body, content_type="application/json")

        return save

    def _task_page(self):
        return self.client.get(self.urls["task"])


def measure(requests: Requests, name: str, do, repeat: int) -> tuple[list[float], int, int]:
    """(times in ms, queries of one request, bytes of its response)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    saving = name.startswith("autosave")
    if name.startswith("task page"):
        # The draft the page restores has the cited answers.
        requests._save(TASK_PAGE_CITED)(requests.version())
    times = []
    queries = size = 0
    for i in range(repeat + 1):
        args = (requests.version(),) if saving else ()
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = do(*args)
            elapsed = time.perf_counter() - started
        if response.status_code >= 400:
            sys.exit(f"{name}: {response.status_code} {response.content[:300]!r}")
        if i == 0:  # a warm-up, and the query count of a request like the others
            continue
        times.append(elapsed * 1000)
        queries, size = len(captured), len(response.content)
    if name in SHOW_QUERIES:
        print(f"--- {name}", *(q["sql"][:150] for q in captured.captured_queries), sep="\n  ")
    return times, queries, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20, help="requests per round and kind")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--label", default="", help="a name for this run in the output")
    parser.add_argument(
        "--multipart", action="store_true", help="post the editor's form as multipart (before)"
    )
    parser.add_argument("--show-queries", nargs="*", default=[], help="print these requests' SQL")
    args = parser.parse_args()
    SHOW_QUERIES.update(args.show_queries)
    ENCODING["form"] = "multipart" if args.multipart else "urlencoded"

    from benchmarks.bench_db import (
        database_name,
        ensure_database,
        refuse_unsafe_database,
        setup_django,
    )

    # The API's per-user rates would answer 429 long before a benchmark is done.
    os.environ.setdefault("API_READ_RATE", "1000000/minute")
    os.environ.setdefault("API_WRITE_RATE", "1000000/minute")
    refuse_unsafe_database(database_name(args.database_url))
    ensure_database(args.database_url, database_name(args.database_url))
    setup_django(args.database_url)

    from django.conf import settings
    from django.test import Client
    from django.test.utils import setup_test_environment

    setup_test_environment()
    # This module itself, by object: the checkout measured may have no copy of it.
    module = sys.modules[__name__]
    module.urlpatterns = bare_view_and_app_urls()  # type: ignore[attr-defined]
    settings.ROOT_URLCONF = module
    settings.DEBUG = False
    me, task = build()
    client = Client()
    client.force_login(me)
    requests = Requests(client, task)
    kinds = requests.all()
    times: dict[str, list[float]] = {name: [] for name in kinds}
    counts: dict[str, tuple[int, int]] = {}
    for _round in range(args.rounds):
        for name, do in kinds.items():
            taken, queries, size = measure(requests, name, do, args.repeat)
            times[name].extend(taken)
            counts[name] = (queries, size)
    floor = statistics.median(times["bare view"])
    label = f" ({args.label})" if args.label else ""
    print(f"{args.rounds} rounds x {args.repeat} requests each{label}")
    print(f"{'request':<28} {'median ms':>10} {'p90 ms':>8} {'queries':>8} {'KB':>7} {'x bare':>7}")
    for name, taken in times.items():
        median = statistics.median(taken)
        p90 = statistics.quantiles(taken, n=10)[-1] if len(taken) > 1 else taken[0]
        queries, size = counts[name]
        print(
            f"{name:<28} {median:10.2f} {p90:8.2f} {queries:8} {size / 1024:7.1f} "
            f"{median / floor:7.2f}"
        )


if __name__ == "__main__":
    main()
