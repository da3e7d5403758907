"""Load run: N annotators on real HTTP work through all five phases for a fixed time, as
their browsers would; then the database is checked.

    python -m tests.load.run --users 200 --duration 120 --ramp 30 --think 5 \
        --database-url postgres://postgres@127.0.0.1:5432/averitec_load_bench \
        --broker redis://127.0.0.1:6379/7
    python -m tests.load.run --users 20 --duration 60 --sqlite      # the `make demo` set-up

Each simulated annotator signs in, then arrives at a moment spread over the ramp (not all
in one instant) and does what a browser does on the real pages: the control panel, Start
next (the panel's htmx post, then the page it redirects to), the editor page, two htmx
autosaves of the editor form and the native hand-in post of that form (P2/P4: the check,
then the confirmation screen's post), following the redirect to the next task of the phase
for one to three tasks before going back to the panel. Every field posted is read off the
page (tests/load/browser.py): csrf token, draft_version, tab_id, the restored draft.
`--api` sends autosaves and hand-ins through the task API instead (the earlier harness).

Prints p50/p95/p99 per endpoint and overall, requests per second, and every error; errors
are logged with the request, status and answer, and the logs of a run with any error or
failed check are kept (and where is printed). Afterwards the database is checked, and the
stored agreement figures are rebuilt from the rows and compared (`agreement_rebuild_check`).
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import urlencode, urljoin

import requests
from lxml import html as lxml_html
from tqdm import tqdm

from tests.load.browser import EditorForm, navigation_headers, page_form
from tests.load.stack import PASSWORD, PROJECT_ROOT, Stack

VERDICTS = ["Supported", "Refuted"]
TASK_URL = re.compile(r"/annotate/tasks/(\d+)/$")
PANEL_URL = re.compile(r"/annotate/$")
DRAFT_VERSION = re.compile(r'name="draft_version"[^>]*value="(\d+)"')
# base.html puts the token on every htmx request (hx-headers on <body>).
HTMX_CSRF = re.compile(r'"X-CSRFToken": "([^"]+)"')
TIMEOUT = 30  # seconds per request; a slower answer counts as an error
# Signing in checks a deliberately slow password hash: at most this many at once, before the
# timed run (arrivals are then spread over the ramp).
SIGNING_IN = threading.Semaphore(4)
# The command that rebuilds the stored agreement figures from the rows and fails on any
# difference (review/management/commands/); one place to change if it is renamed.
AGREEMENT_CHECK = ["rebuild_agreement", "--check"]
# Seconds idle after which an annotator's next request opens a new connection (below the
# keep-alive of gunicorn in stack.py: 10 s).
IDLE_RECONNECT = 8.0
SECRET = {"password", "csrfmiddlewaretoken"}  # left out of the error log


@dataclass
class Record:
    # (endpoint, seconds since the annotators were released, latency in seconds)
    samples: list[tuple[str, float, float]] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    submitted: list[tuple[int, int, str]] = field(default_factory=list)  # task, phase, user
    signed_in: int = 0  # accounts done trying to sign in
    drafts: dict[int, int] = field(default_factory=dict)  # task -> last acknowledged version
    lock: threading.Lock = field(default_factory=threading.Lock)
    error_log: Path | None = None  # each error: the request, the status, the answer
    # time.monotonic() when the annotators were let go; signing in comes before it
    released: float = float("inf")

    def timed(self, name: str, method, url: str, ok=(200,), user: str = "", **options):
        """One request, its latency filed under name; None when it failed."""
        started = time.monotonic()
        try:
            response = method(url, timeout=TIMEOUT, **options)
        except requests.RequestException as exc:
            self.failed(name, method, url, user, options, exc.__class__.__name__, str(exc))
            return None
        elapsed = time.monotonic() - started
        with self.lock:
            self.samples.append((name, started - self.released, elapsed))
        if response.status_code not in ok:
            self.failed(
                name, method, url, user, options, f"HTTP {response.status_code}", "", response
            )
            return None
        return response

    def failed(self, name, method, url, user, options, what, detail="", response=None) -> None:
        """Count an error and log what was sent and what came back."""
        with self.lock:
            self.errors[f"{name}: {what}"] += 1
            if self.error_log is None:
                return
            verb = getattr(method, "__name__", str(method)).upper()
            at = time.monotonic() - self.released
            lines = [
                f"{datetime.now():%H:%M:%S} "
                f"{'signing in' if at < 0 else f'+{at:.1f} s'} {user} "
                f"{verb} {url} -> {what} {detail}".rstrip()
            ]
            sent = options.get("data") or options.get("json")
            if sent:
                if isinstance(sent, list | dict) and "data" in options:
                    pairs = sent.items() if isinstance(sent, dict) else sent
                    text = urlencode([(k, "…" if k in SECRET else v) for k, v in pairs])
                else:
                    text = str(sent)
                lines.append(f"  sent: {text[:800]}")
            if response is not None:
                headers = {
                    k: v
                    for k, v in response.headers.items()
                    if k.lower().startswith(("hx-", "x-", "location"))
                }
                lines.append(f"  headers: {headers}")
                lines.append(f"  answer: {excerpt(response)}")
            with self.error_log.open("a") as log:
                log.write("\n".join(lines) + "\n")


def excerpt(response, limit: int = 1200) -> str:
    """The readable part of an answer: the page's main text, or the start of the body."""
    text = response.text
    if "html" in response.headers.get("Content-Type", "") and text.strip():
        try:
            doc = lxml_html.fromstring(text)
            main = doc.find(".//main")
            text = " ".join((main if main is not None else doc).itertext())
        except (ValueError, lxml_html.etree.ParserError):
            pass
    return " ".join(text.split())[:limit]


# --- what the annotators type --------------------------------------------------------------

QUESTION_FIELD = re.compile(r"^q-\d+-")
P1_FIELD = re.compile(r"^claims-[1-9]\d*-")


def fill_normalisation(form: EditorForm, rng: random.Random, user: str, urls, complete: bool):
    # One claim, typed into the card the page restored (extra cards removed).
    form.drop(P1_FIELD)
    form.set("claims-TOTAL_FORMS", "1")
    amount = rng.randint(2, 99)
    text = f"The council spent {amount} million on parks ({user})."
    form.set("claims-0-text", text if complete else text[: len(text) // 2])
    form.set("claims-0-speaker", "A council member")
    if complete:
        form.set("claims-0-fact_checker_label", "Refuted")
        form.set("claims-0-claim_date", "2020-10-31")
        form.set("claims-0-location_iso_code", "GB")
        form.set("claims-0-claim_types", "Numerical Claim")
        form.set("claims-0-fact_checking_strategies", "Written Evidence")


def fill_evidence(form: EditorForm, rng: random.Random, user: str, urls, complete: bool):
    # The annotator's own questions replace whatever cards the page showed (P4: the pairs in
    # dispute); one question with one answer at the first autosave, all of them later.
    form.drop(QUESTION_FIELD)
    for qi in range(rng.randint(1, 3) if complete else 1):
        form.set(f"q-{qi}-text", f"How much did the council spend on parks in {2016 + qi}?")
        for ai in range(rng.randint(1, 2) if complete else 1):
            prefix = f"q-{qi}-a-{ai}-"
            form.set(prefix + "answer_type", "Extractive")
            form.set(prefix + "text", f"The {2016 + qi} budget lists {ai + 2}.1 million for parks.")
            form.set(prefix + "boolean_explanation", "")
            form.set(prefix + "source_url", rng.choice(urls))
            form.set(prefix + "source_medium", "Web text")
    if complete:
        form.set("verdict", rng.choice(VERDICTS))


def fill_check(form: EditorForm, rng: random.Random, user: str, urls, complete: bool):
    # A verdict the screen offers that keeps the claim in the work (P5's discarding
    # choices ask for a confirmation first).
    offered = [c.value for c in form.choices.get("verdict", []) if "data-discards" not in c.attrs]
    form.set("verdict", rng.choice([v for v in offered if v in VERDICTS] or offered))
    if complete:
        form.set("justification", "The answers settle it.")


FILL = {1: fill_normalisation, 2: fill_evidence, 3: fill_check, 4: fill_evidence, 5: fill_check}


# --- one annotator ---------------------------------------------------------------------------


@dataclass
class Annotator:
    stack: Stack
    name: str
    record: Record
    think: float
    deadline: list[float]  # a box: set when everyone has signed in
    web: requests.Session = field(default_factory=requests.Session)
    panel: requests.Response | None = None  # the control panel, when the browser shows it
    last_request: float = 0.0  # time.monotonic() of the last request sent

    def __post_init__(self):
        self.rng = random.Random(self.name)
        self.base = self.stack.base_url

    def pause(self) -> None:
        # Reading and typing between requests; 0 makes the run a closed-loop stress test.
        if self.think:
            time.sleep(self.rng.uniform(0.5 * self.think, 1.5 * self.think))

    def request(self, name: str, verb: str, url: str, ok=(200,), **options):
        # gunicorn closes a connection idle for 10 s (stack.py); a request sent on it just
        # then is reset. A browser sends it again on a new connection, requests does not:
        # after a long pause the annotator starts on a new connection instead.
        if time.monotonic() - self.last_request > IDLE_RECONNECT:
            self.web.close()
        self.last_request = time.monotonic()
        method = getattr(self.web, verb)
        return self.record.timed(name, method, url, ok=ok, user=self.name, **options)

    def wrong(self, name: str, url: str, what: str, response=None) -> None:
        """An answer with the expected status that does not say what it should."""
        self.record.failed(name, "post", url, self.name, {}, what, "", response)

    def working(self) -> bool:
        return time.monotonic() < self.deadline[0]

    # --- signing in ----------------------------------------------------------------------

    def sign_in(self) -> bool:
        """The sign-in form as a browser posts it; a bounded number of attempts."""
        for _ in range(3):
            with SIGNING_IN:
                page = self.request("GET /login/", "get", self.base + "/login/")
                if page is None:
                    continue
                form = page_form(page.url, page.text, "/login/")
                form.set("username", self.name)
                form.set("password", PASSWORD)
                response = self.request(
                    "POST /login/",
                    "post",
                    form.action,
                    data=form.body(),
                    headers=navigation_headers(self.base, page.url),
                    allow_redirects=False,
                    ok=(302,),
                )
            if response is not None and "/login/" not in response.headers.get("Location", ""):
                return True
        return False

    # --- the browser's way -----------------------------------------------------------------

    def work_in_phase(self, phase: int) -> None:
        """From the control panel: Start next, then one to three tasks of the phase, each
        hand-in redirecting to the next one."""
        panel, self.panel = self.panel, None
        if panel is None:
            panel = self.request("GET /annotate/ (control panel)", "get", self.base + "/annotate/")
            if panel is None:
                self.pause()
                return
        self.pause()
        token = HTMX_CSRF.search(panel.text)
        csrf = token.group(1) if token else self.web.cookies.get("csrftoken", "")
        started = self.request(
            "POST start next (htmx)",
            "post",
            f"{self.base}/annotate/phase/{phase}/next/",
            data={"csrfmiddlewaretoken": csrf},
            headers={
                "HX-Request": "true",
                "HX-Current-URL": panel.url,
                "HX-Target": "phase-table",
                "X-CSRFToken": csrf,
                **navigation_headers(self.base, panel.url),
            },
        )
        url = started is not None and started.headers.get("HX-Redirect")
        if not url:
            # Nothing waiting in this phase: the panel's table says so; the caller moves on.
            self.panel = started if started is not None else None
            self.pause()
            return
        url = urljoin(self.base, url)
        runs = self.rng.randint(1, 3)
        for n in range(runs):
            url = self.browser_task(phase, url, last=n == runs - 1)
            if url is None or not self.working():
                return

    def browser_task(self, phase: int, url: str, last: bool) -> str | None:
        """One task on its page; the next task's address when the hand-in led to one."""
        page = self.request(f"GET task page P{phase}", "get", url)
        if page is None:
            return None
        form = EditorForm.of(page.url, page.text)
        task = int(TASK_URL.search(url).group(1))
        if form is None:
            self.wrong(f"GET task page P{phase}", url, "no editor form on the page", page)
            return None
        form.open_tab()
        for complete in (False, True):  # the editor's autosaves while typing
            self.pause()
            FILL[phase](form, self.rng, self.name, self.stack.source_urls, complete)
            saved = self.request(
                f"POST autosave P{phase} (htmx)",
                "post",
                form.autosave_url,
                data=form.body(),
                headers=form.htmx_headers(self.base),
            )
            if saved is None:
                continue
            version = form.saved(saved.text)
            if version is None:
                self.wrong(f"POST autosave P{phase} (htmx)", form.autosave_url, "no version", saved)
                continue
            with self.record.lock:
                self.record.drafts[task] = version
        self.pause()
        stop = last and phase == 1 and "submit-and-stop" in form.buttons
        name = f"POST hand-in P{phase}"
        if phase in (2, 4):
            # Check and submit, then the confirmation screen's own form.
            checked = self.request(
                f"{name} (check)",
                "post",
                form.action,
                data=form.body("submit"),
                headers=navigation_headers(self.base, page.url),
                allow_redirects=False,
            )
            confirm = checked and page_form(form.action, checked.text, "/evidence/confirm/")
            if not confirm:
                if checked is not None:
                    self.wrong(f"{name} (check)", form.action, "no confirmation form", checked)
                return None
            self.pause()
            done = self.request(
                f"{name} (confirm)",
                "post",
                confirm.action,
                data=confirm.body("confirm"),
                headers=navigation_headers(self.base, form.action),
                allow_redirects=False,
                ok=(302,),
            )
        else:
            done = self.request(
                name,
                "post",
                form.action,
                data=form.body("submit-and-stop" if stop else "submit"),
                headers=navigation_headers(self.base, page.url),
                allow_redirects=False,
                ok=(302,),
            )
        if done is None:
            return None
        location = urljoin(self.base, done.headers.get("Location", ""))
        if location == url:
            # A hand-in that was already made answers with its own page: not expected here.
            self.wrong(name, url, "answered as a repeated hand-in", done)
            return None
        with self.record.lock:
            self.record.submitted.append((task, phase, self.name))
        # The browser follows the redirect: the next task of the phase, or the panel.
        if TASK_URL.search(location) and not (last or not self.working()):
            return location
        if TASK_URL.search(location):
            # Leaving after this one: the page still loads (Start next resumes it later).
            self.request(f"GET task page P{phase}", "get", location)
            return None
        self.panel = self.request("GET /annotate/ (control panel)", "get", location)
        return None

    # --- the task API (--api), as the first harness did --------------------------------------

    def api_task(self, phase: int) -> None:
        base, urls = self.base, self.stack.source_urls
        csrf = {"X-CSRFToken": self.web.cookies.get("csrftoken", "")}
        self.request("GET /annotate/ (control panel)", "get", base + "/annotate/")
        started = self.request(
            "POST start next",
            "post",
            f"{base}/annotate/phase/{phase}/next/",
            data={"csrfmiddlewaretoken": csrf["X-CSRFToken"]},
            allow_redirects=False,
            ok=(302, 303),
        )
        match = started is not None and TASK_URL.search(started.headers.get("Location", ""))
        if not match:
            self.pause()
            return  # nothing to do in this phase: the caller tries the next one
        self.pause()
        task = int(match.group(1))
        page = self.request(f"GET task page P{phase}", "get", f"{base}/annotate/tasks/{task}/")
        if page is None:
            return
        found = DRAFT_VERSION.search(page.text)
        version = int(found.group(1)) if found else 0
        body = api_payload(phase, self.rng, self.name, urls)
        for _ in range(2):  # the editor's autosaves while typing
            self.pause()
            saved = self.request(
                "PUT autosave draft (API)",
                "put",
                f"{base}/api/v1/tasks/{task}/draft/",
                json={"draft": body, "version": version},
                headers=csrf,
            )
            if saved is not None:
                version = saved.json()["draft_version"]
                with self.record.lock:
                    self.record.drafts[task] = version
        self.pause()
        done = self.request(
            f"POST submit P{phase} (API)",
            "post",
            f"{base}/api/v1/tasks/{task}/submit/",
            json={**body, "draft_version": version},
            headers=csrf,
        )
        if done is not None:
            with self.record.lock:
                self.record.submitted.append((task, phase, self.name))


def api_payload(phase: int, rng: random.Random, user: str, urls: list[str]) -> dict:
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


def annotator(
    stack: Stack,
    name: str,
    record: Record,
    deadline: list[float],
    ready,
    think: float,
    arrival: float,
    api: bool,
) -> None:
    person = Annotator(stack, name, record, think, deadline)
    try:
        signed_in = person.sign_in()
    finally:
        with record.lock:
            record.signed_in += 1
    ready.wait()
    if not signed_in:
        return
    # People arrive over the ramp, not in one instant.
    time.sleep(max(0.0, record.released + arrival - time.monotonic()))
    phase = person.rng.randint(1, 5)
    while person.working():
        phase = phase % 5 + 1
        try:
            if api:
                person.api_task(phase)
            else:
                person.work_in_phase(phase)
        except Exception:  # a page the harness cannot read is an error too, with its cause
            record.failed(f"P{phase}", "harness", "", name, {}, "exception", traceback.format_exc())
            person.pause()


def run(
    stack: Stack,
    duration: float,
    think: float,
    events: dict | None = None,
    *,
    ramp: float = 0.0,
    api: bool = False,
) -> Record:
    """events: second of the run -> a callable (a fault to inject) returning what it did.
    ramp: the annotators' first requests are spread evenly over its first seconds."""
    events = dict(events or {})
    log = stack.workdir / "log"
    log.mkdir(exist_ok=True)
    record = Record(error_log=log / "harness-errors.log")
    ready = threading.Event()
    # Signing in runs before the timed loop (hashing a password is slow on purpose); the
    # deadline is set when everyone is in.
    deadline_box = [float("inf")]
    names = stack.usernames
    threads = [
        threading.Thread(
            target=annotator,
            args=(stack, name, record, deadline_box, ready, think, ramp * i / len(names), api),
            daemon=True,
        )
        for i, name in enumerate(names)
    ]
    for thread in threads:
        thread.start()
    with tqdm(total=len(threads), desc="signing in", unit="user") as bar:
        while record.signed_in < len(threads):
            bar.n = record.signed_in
            bar.refresh()
            time.sleep(0.5)
    record.released = time.monotonic()
    deadline_box[0] = record.released + duration
    ready.set()
    with tqdm(total=int(duration), desc="annotating", unit="s") as bar:
        while time.monotonic() < deadline_box[0]:
            time.sleep(1)
            bar.n = min(int(duration), int(time.monotonic() - record.released))
            for second in [k for k in events if k <= bar.n]:
                tqdm.write(f"[{second:3d} s] {events.pop(second)()}")
            bar.set_postfix(submitted=len(record.submitted), errors=sum(record.errors.values()))
    for thread in threads:
        thread.join(timeout=TIMEOUT + 5)
    return record


# --- what the run measured ---------------------------------------------------------------------


def report(
    record: Record, duration: float, *, users: int = 0, ramp: float = 0.0, think: float = 0.0
) -> None:
    """Latency per endpoint and overall, throughput in the steady state (after the ramp)."""
    print(f"\n{'endpoint':36} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'per s':>7}")
    by_name: dict[str, list[float]] = {}
    for name, _, seconds in record.samples:
        by_name.setdefault(name, []).append(seconds)
    for name in sorted(by_name):
        print(_row(name, by_name[name], duration))
    # Signing in happens before the timed run: in its rows, not in the figures below.
    print(_row("all requests", [s for _, when, s in record.samples if when >= 0], duration))
    window = duration - ramp
    steady = [(when, s) for _, when, s in record.samples if ramp <= when < duration]
    if ramp and window > 0:
        print(_row(f"after the {ramp:.0f} s ramp", [s for _, s in steady], window))
    print(f"\nhand-ins: {len(record.submitted)} in {duration:.0f} s")
    if window > 0 and steady:
        rate = len(steady) / window
        print(f"throughput after the ramp: {rate:.1f} requests/s over {window:.0f} s")
        if users:
            # Time the annotators spent waiting for answers rather than reading and typing:
            # near 100 % the server sets the pace, not the annotators.
            waiting = sum(s for _, s in steady) / (users * window)
            print(f"annotators' time spent waiting for the server: {100 * waiting:.0f} %")
            if think <= 1:
                verdict = "saturated" if waiting >= 0.5 else "not saturated: add users"
                print(
                    f"saturation throughput (think {think:g} s): {rate:.1f} requests/s ({verdict})"
                )
    print(f"errors: {sum(record.errors.values())}")
    for what, n in record.errors.most_common():
        print(f"  {n:6}  {what}")


def _row(name: str, values: list[float], seconds: float) -> str:
    rate = f"{len(values) / seconds:7.1f}" if seconds > 0 else ""
    if len(values) < 2:
        return f"{name:36} {len(values):6} {'':8} {'':8} {'':8} {rate}"
    cuts = [1000 * c for c in statistics.quantiles(values, n=100, method="inclusive")]
    return f"{name:36} {len(values):6} {cuts[49]:8.0f} {cuts[94]:8.0f} {cuts[98]:8.0f} {rate}"


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


def agreement_rebuild_check(stack: Stack, attempts: int = 3, pause: float = 5) -> list[str]:
    """The stored agreement figures rebuilt from the rows: any difference is a problem. Run
    as the command an operator runs, in its own process; a difference may be a figure a
    background job is still storing, so it must persist over a few attempts."""
    command = [sys.executable, "manage.py", *AGREEMENT_CHECK]
    for attempt in range(attempts):
        done = subprocess.run(
            command,
            cwd=PROJECT_ROOT,
            env=stack.environment(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode == 0:
            last = done.stdout.strip().splitlines()[-1:] or ["no output"]
            print(f"agreement rebuild check: passed ({last[0]})")
            return []
        if attempt < attempts - 1:
            time.sleep(pause)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return [f"`manage.py {' '.join(AGREEMENT_CHECK)}` failed: " + " | ".join(lines[-5:])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60, help="seconds of annotating")
    parser.add_argument(
        "--think", type=float, default=5.0, help="seconds between an annotator's requests (±50%%)"
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=30.0,
        help="seconds over which the annotators arrive (at most half the duration)",
    )
    parser.add_argument(
        "--api", action="store_true", help="autosave and hand in through the task API"
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
    ramp = min(args.ramp, args.duration / 2)
    stack = Stack(
        users=args.users,
        database_url=None if args.sqlite else args.database_url,
        broker_url=None if args.sqlite else args.broker,
        web_workers=args.web_workers,
        web_threads=args.web_threads,
    )
    print(f"work folder {stack.workdir}; preparing the database and demo data…")
    record, problems, keep = None, [], True  # a run that stops half-way keeps its logs
    try:
        stack.prepare()
        stack.start(beat=True)  # the beat hands the pages each submit records to the worker
        record = run(stack, args.duration, args.think, ramp=ramp, api=args.api)
        report(record, args.duration, users=args.users, ramp=ramp, think=args.think)
        problems = check_database(record, stack)
        problems += agreement_rebuild_check(stack)
        keep = args.keep or bool(problems or record.errors)
    finally:
        stack.stop()
        stack.clean_up(keep=keep)
        if keep:
            print(f"\nlogs kept in {stack.workdir / 'log'}: {stack.log_guide()}")
    print("\ndatabase checks: " + ("all passed" if not problems else f"{len(problems)} problems"))
    for problem in problems[:50]:
        print(f"  - {problem}")
    return 1 if problems or record.errors else 0


if __name__ == "__main__":
    sys.exit(main())
