"""Load run: N annotators on real HTTP loop Start next -> task page -> autosave drafts -> submit
across all five phases for a fixed time; then the database is checked.

    python -m tests.load.run --users 200 --duration 60 \
        --database-url postgres://postgres@127.0.0.1:5432/averitec_load_bench \
        --broker redis://127.0.0.1:6379/7
    python -m tests.load.run --users 20 --duration 60 --sqlite      # the `make demo` set-up

Each simulated annotator does what the screens do: the control panel, Start next (the
screen's POST), the task page, two autosaves and a hand-in. Autosave and hand-in go through
the task API with the browser's session (the same model methods and rules as the screens'
forms, without rebuilding each formset). Prints p50/p95/p99 per endpoint and every error.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import requests
from tqdm import tqdm

from tests.load.stack import PASSWORD, Stack

VERDICTS = ["Supported", "Refuted"]
TASK_URL = re.compile(r"/annotate/tasks/(\d+)/$")
DRAFT_VERSION = re.compile(r'name="draft_version"[^>]*value="(\d+)"')
TIMEOUT = 30  # seconds per request; a slower answer counts as an error
# People arrive over a few minutes, not in one second: at most this many sign in at once.
SIGNING_IN = threading.Semaphore(4)


@dataclass
class Record:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter = field(default_factory=Counter)
    submitted: list[tuple[int, int, str]] = field(default_factory=list)  # task, phase, user
    signed_in: int = 0  # accounts done trying to sign in
    drafts: dict[int, int] = field(default_factory=dict)  # task -> last acknowledged version
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, name: str, method, url: str, ok=(200,), **options):
        """One request, its latency filed under name; None when it failed."""
        started = time.perf_counter()
        try:
            response = method(url, timeout=TIMEOUT, **options)
        except requests.RequestException as exc:
            with self.lock:
                self.errors[f"{name}: {exc.__class__.__name__}"] += 1
            return None
        elapsed = time.perf_counter() - started
        with self.lock:
            self.latencies[name].append(elapsed)
            if response.status_code not in ok:
                self.errors[f"{name}: HTTP {response.status_code}"] += 1
                return None
        return response


def payload(phase: int, rng: random.Random, user: str, urls: list[str]) -> dict:
    if phase == 1:
        return {
            "claims": [
                {
                    "text": f"The council spent {rng.randint(2, 99)} million on parks ({user}).",
                    "fact_checker_label": "Refuted",
                    "claim_date": "2020-10-31",
                    "claim_types": ["Numerical Claim"],
                    "fact_checking_strategies": ["Written Evidence"],
                    "speaker": "A council member",
                    "location_iso_code": "GB",
                }
            ]
        }
    if phase in (2, 4):
        answer = {
            "text": "The 2019 budget lists 2.1 million for parks.",
            "answer_type": "Extractive",
            "source_url": rng.choice(urls),
            "source_medium": "Web text",
        }
        return {
            "questions": [
                {"text": "How much did the council spend on parks?", "answers": [answer]}
            ],
            "verdict": rng.choice(VERDICTS),
            "pairs_support_verdict": True,
        }
    return {"verdict": rng.choice(VERDICTS), "justification": "The answers settle it."}


def sign_in(web: requests.Session, base: str, name: str, record: Record) -> bool:
    """A bounded number of attempts; signing in checks a deliberately slow password hash."""
    for _ in range(3):
        with SIGNING_IN:
            if record.timed("GET /login/", web.get, base + "/login/") is None:
                continue
            response = record.timed(
                "POST /login/",
                web.post,
                base + "/login/",
                data={"username": name, "password": PASSWORD},
                headers={"X-CSRFToken": web.cookies.get("csrftoken", "")},
                allow_redirects=False,
                ok=(302,),
            )
        if response is not None and "/login/" not in response.headers.get("Location", ""):
            return True
    return False


def annotator(
    stack: Stack, name: str, record: Record, deadline: list[float], ready, think: float
) -> None:
    rng = random.Random(name)
    web = requests.Session()
    base = stack.base_url
    signed_in = sign_in(web, base, name, record)
    with record.lock:
        record.signed_in += 1
    ready.wait()
    if not signed_in:
        return
    phase = rng.randint(1, 5)
    while time.monotonic() < deadline[0]:
        phase = phase % 5 + 1
        one_task(web, stack, phase, record, rng, name, think)


def one_task(
    web, stack: Stack, phase: int, record: Record, rng: random.Random, name: str, think: float
) -> None:
    base, urls = stack.base_url, stack.source_urls

    def pause() -> None:
        # Reading and typing between requests; 0 makes the run a closed-loop stress test.
        if think:
            time.sleep(rng.uniform(0.5 * think, 1.5 * think))

    csrf = {"X-CSRFToken": web.cookies.get("csrftoken", "")}
    record.timed("GET /annotate/ (control panel)", web.get, base + "/annotate/")
    started = record.timed(
        "POST start next",
        web.post,
        f"{base}/annotate/phase/{phase}/next/",
        data={"csrfmiddlewaretoken": csrf["X-CSRFToken"]},
        allow_redirects=False,
        ok=(302, 303),
    )
    match = started is not None and TASK_URL.search(started.headers.get("Location", ""))
    if not match:
        pause()
        return  # nothing to do in this phase: the caller tries the next one
    pause()
    task = int(match.group(1))
    page = record.timed(f"GET task page P{phase}", web.get, f"{base}/annotate/tasks/{task}/")
    if page is None:
        return
    found = DRAFT_VERSION.search(page.text)
    version = int(found.group(1)) if found else 0
    body = payload(phase, rng, name, urls)
    for _ in range(2):  # the editor's autosaves while typing
        pause()
        saved = record.timed(
            "PUT autosave draft",
            web.put,
            f"{base}/api/v1/tasks/{task}/draft/",
            json={"draft": body, "version": version},
            headers=csrf,
        )
        if saved is not None:
            version = saved.json()["draft_version"]
            with record.lock:
                record.drafts[task] = version
    pause()
    done = record.timed(
        f"POST submit P{phase}",
        web.post,
        f"{base}/api/v1/tasks/{task}/submit/",
        json={**body, "draft_version": version},
        headers=csrf,
    )
    if done is not None:
        with record.lock:
            record.submitted.append((task, phase, name))


def run(stack: Stack, duration: float, think: float, events: dict | None = None) -> Record:
    """events: second of the run -> a callable (a fault to inject) returning what it did."""
    events = dict(events or {})
    record = Record()
    ready = threading.Event()
    # Signing in runs before the timed loop (hashing a password is slow on purpose); the
    # deadline is set when everyone is in.
    deadline_box = [float("inf")]
    threads = []
    for name in stack.usernames:
        thread = threading.Thread(
            target=lambda n=name: annotator(stack, n, record, deadline_box, ready, think),
            daemon=True,
        )
        threads.append(thread)
    for thread in threads:
        thread.start()
    with tqdm(total=len(threads), desc="signing in", unit="user") as bar:
        while record.signed_in < len(threads):
            bar.n = record.signed_in
            bar.refresh()
            time.sleep(0.5)
    deadline_box[0] = time.monotonic() + duration
    ready.set()
    with tqdm(total=int(duration), desc="annotating", unit="s") as bar:
        started = time.monotonic()
        while time.monotonic() < deadline_box[0]:
            time.sleep(1)
            bar.n = min(int(duration), int(time.monotonic() - started))
            for second in [k for k in events if k <= bar.n]:
                tqdm.write(f"[{second:3d} s] {events.pop(second)()}")
            bar.set_postfix(submitted=len(record.submitted), errors=sum(record.errors.values()))
    for thread in threads:
        thread.join(timeout=TIMEOUT + 5)
    return record


def report(record: Record, duration: float) -> None:
    print(f"\n{'endpoint':36} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    everything = []
    for name in sorted(record.latencies):
        values = record.latencies[name]
        everything.extend(values)
        print(_row(name, values))
    print(_row("all requests", everything))
    print(f"\nhand-ins: {len(record.submitted)} in {duration:.0f} s")
    print(f"errors: {sum(record.errors.values())}")
    for what, n in record.errors.most_common():
        print(f"  {n:6}  {what}")


def _row(name: str, values: list[float]) -> str:
    if len(values) < 2:
        return f"{name:36} {len(values):6}"
    cuts = [1000 * c for c in statistics.quantiles(values, n=100, method="inclusive")]
    return f"{name:36} {len(values):6} {cuts[49]:8.0f} {cuts[94]:8.0f} {cuts[98]:8.0f}"


def check_database(record: Record, stack: Stack, settle: float = 60) -> list[str]:
    """Every acknowledged hand-in stored once, nobody given an article twice, no work lost."""
    from django.db.models import Count

    from annotation.models import Article, Claim, EvidenceRound, Task
    from review.models import QualityCheck
    from search_proxy.models import Source

    problems = []
    tasks = {t.pk: t for t in Task.objects.filter(pk__in=[s[0] for s in record.submitted])}
    seen = Counter(s[0] for s in record.submitted)
    for pk, phase, user in record.submitted:
        task = tasks.get(pk)
        if task is None or task.status != Task.Status.SUBMITTED or task.annotator.username != user:
            problems.append(f"task {pk} (P{phase}, {user}) answered 200 but is not stored as such")
    problems += [f"task {pk} acknowledged {n} times" for pk, n in seen.items() if n > 1]
    # A draft the server acknowledged is still there (or was handed in since).
    for task in Task.objects.filter(pk__in=record.drafts).exclude(status=Task.Status.SUBMITTED):
        if task.draft_version < record.drafts[task.pk] or not task.draft:
            problems.append(f"task {task.pk}: acknowledged draft {record.drafts[task.pk]} lost")
    for model, phases in ((EvidenceRound, (2, 4)), (QualityCheck, (3, 5))):
        counts = Counter(
            model.objects.filter(task__phase__in=phases).values_list("task_id", flat=True)
        )
        problems += [
            f"{model.__name__} of task {pk} stored {n} times" for pk, n in counts.items() if n > 1
        ]
        missing = Task.objects.filter(phase__in=phases, status=Task.Status.SUBMITTED).exclude(
            pk__in=counts
        )
        problems += [
            f"submitted task {pk} has no {model.__name__}"
            for pk in missing.values_list("pk", flat=True)
        ]
    twice = (
        Task.objects.exclude(annotator=None)
        .values("annotator", "article")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    problems += [
        f"annotator {r['annotator']} was given article {r['article']} {r['n']} times" for r in twice
    ]
    # Each claim or article still waiting must have exactly one open task of its phase.
    waiting = {
        Claim.State.QUESTIONS: 2,
        Claim.State.QUALITY_CHECK: 3,
        Claim.State.DISPUTE: 4,
        Claim.State.POST_CONTROL: 5,
    }
    open_tasks = Counter(
        Task.objects.filter(status__in=Task.OPEN_STATUSES, is_agreement_sample=False)
        .exclude(claim=None)
        .values_list("claim_id", "phase")
    )
    for claim in Claim.objects.filter(state__in=waiting).values("pk", "state"):
        n = open_tasks[(claim["pk"], waiting[claim["state"]])]
        if n != 1:
            problems.append(f"claim {claim['pk']} ({claim['state']}) has {n} open tasks")
    p1_open = Counter(
        Task.objects.filter(phase=1, status__in=Task.OPEN_STATUSES).values_list(
            "article_id", flat=True
        )
    )
    for pk in Article.objects.filter(state=Article.State.AWAITING_NORMALISATION).values_list(
        "pk", flat=True
    ):
        if p1_open[pk] != 1:
            problems.append(f"article {pk} waits for P1 with {p1_open[pk]} open tasks")
    # The worker finishes the archive jobs the hand-ins queued (the demo's imported sources
    # are never queued).
    deadline = time.monotonic() + settle
    cited = Source.objects.filter(url__in=stack.source_urls)
    if record.submitted and any(phase in (2, 4) for _, phase, _ in record.submitted):
        problems += [] if cited.exists() else ["no source was recorded for the P2/P4 answers"]
    pending = cited.exclude(archive_status=Source.ArchiveStatus.ARCHIVED)
    while pending.exists() and time.monotonic() < deadline:
        time.sleep(1)
    problems += [f"source {s.url} still {s.archive_status}" for s in pending]
    print(
        f"\nstored: {Claim.objects.count()} claims; tasks by status: "
        f"{dict(Counter(Task.objects.values_list('status', flat=True)))}; "
        f"cited sources archived: {cited.filter(archive_status='archived').count()}"
        f"/{cited.count()}"
    )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60, help="seconds of annotating")
    parser.add_argument(
        "--think", type=float, default=1.0, help="seconds between an annotator's requests (±50%%)"
    )
    parser.add_argument("--sqlite", action="store_true", help="SQLite + filesystem broker")
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/averitec_load_bench"
    )
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/7")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--web-threads", type=int, default=8)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, SQLite)")
    args = parser.parse_args(argv)
    stack = Stack(
        users=args.users,
        database_url=None if args.sqlite else args.database_url,
        broker_url=None if args.sqlite else args.broker,
        web_workers=args.web_workers,
        web_threads=args.web_threads,
    )
    print(f"work folder {stack.workdir}; preparing the database and demo data…")
    stack.prepare()
    try:
        stack.start(beat=True)  # the beat hands the pages each submit records to the worker
        record = run(stack, args.duration, args.think)
        report(record, args.duration)
        problems = check_database(record, stack)
    finally:
        stack.stop()
        stack.clean_up(keep=args.keep)
    print("\ndatabase checks: " + ("all passed" if not problems else f"{len(problems)} problems"))
    for problem in problems[:50]:
        print(f"  - {problem}")
    return 1 if problems or record.errors else 0


if __name__ == "__main__":
    sys.exit(main())
