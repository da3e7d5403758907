"""Issue 22 in real Chromium: the six sequences that lost an annotator's text, on P1-P4.

Several tabs of one browser on one task; a tab closed at once or its renderer crashed; one
tab offline while another saves; a submit from a tab that fell behind; the conflict screen
left; "keep this tab's version". After each, the text typed is found: in what was handed
in, offered back by the browser journal, or in a revision the annotator can restore.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.http import QueryDict

from annotation import handin
from annotation.models import DraftRevision, Task
from annotation.phases import parts_of
from annotation.vocabulary import Phase
from tests import steps
from tests.annotation.handing_in import editor_post, handed_in_texts, restorable_texts
from tests.e2e.conftest import CHROMIUM, DESKTOP, PHONE, screenshot, sign_in, wait_until_saved
from tests.factories import AnnotatorFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PHASES = [Phase.NORMALISATION, Phase.QUESTIONS, Phase.QUALITY_CHECK, Phase.DISPUTE]
FIELD = {
    Phase.NORMALISATION: '[name="claims-0-text"]',
    Phase.QUESTIONS: "#q-0-text",
    Phase.QUALITY_CHECK: "#justification",
    Phase.DISPUTE: "#q-0-text",
}


@pytest.fixture
def held(annotator):
    annotator.completed_tours = ["p1", "p2", "p3", "p4", "p5"]
    annotator.save()
    return steps.tasks_in_every_phase(annotator, AnnotatorFactory.create_batch(4))


def ready_to_submit(task: Task, text: str) -> Task:
    """The task's draft filled in completely (as if typed earlier), so Submit hands it in."""
    post = QueryDict(
        urlencode(editor_post(task.phase, text, version=0, tab="", complete=True), True)
    )
    draft = parts_of(task.phase).draft_from_post(post)
    task.refresh_from_db()
    handin.save(task, draft, version=task.draft_version, author=task.annotator, tab="setup")
    task.refresh_from_db()
    return task


def tabs(new_page, task: Task, count: int = 2):
    first = new_page()
    sign_in(first, "alice")
    pages = [first] + [first.context.new_page() for _ in range(count - 1)]
    for page in pages:
        page.goto(f"/annotate/tasks/{task.pk}/")
        page.locator(FIELD[task.phase]).wait_for()
    return pages


def type_into(page, phase: int, text: str) -> None:
    page.locator(FIELD[phase]).fill(text)


def save_now(page) -> None:
    page.locator("h1, nav.crumbs").first.click()  # leaving the field saves at once
    wait_until_saved(page)


def press_submit(page, phase: int) -> None:
    with page.expect_navigation():
        page.locator("#submit").click()
    if phase in (Phase.QUESTIONS, Phase.DISPUTE) and page.locator("#confirm").count():
        with page.expect_navigation():
            page.locator("#confirm").click()


@pytest.fixture
def own_browser(browser):
    """A Chromium of this test's own: a crash test kills renderer processes, and in a
    browser many tests share, Chromium reuses renderers across tabs (one kill would then hit
    other tabs, or a new tab would land in the dying process)."""
    own = browser.browser_type.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
    )
    yield own
    own.close()


def own_context(own_browser, live_server):
    context = own_browser.new_context(viewport=DESKTOP, base_url=live_server.url)
    # Every wait is bounded: a step that cannot happen fails fast instead of hanging.
    context.set_default_timeout(5000)
    context.set_default_navigation_timeout(10000)
    context.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith(live_server.url)
            else route.fulfill(status=200, content_type="text/html", body="<p>archived</p>")
        ),
    )
    return context


def renderer_pids(browser) -> set[int]:
    session = browser.new_browser_cdp_session()
    try:
        processes = session.send("SystemInfo.getProcessInfo")["processInfo"]
    finally:
        session.detach()
    return {p["id"] for p in processes if p["type"] == "renderer"}


def open_crashable(browser, context, task: Task):
    """A tab of the task and the renderer processes that appeared with it (its own, and its
    frames' under site isolation)."""
    before = renderer_pids(browser)
    page = context.new_page()
    page.goto(f"/annotate/tasks/{task.pk}/")
    page.locator(FIELD[task.phase]).wait_for()
    return page, renderer_pids(browser) - before


def offered_back(page) -> str:
    """The browser journal's offer on opening a task (empty when there is none)."""
    banner = page.locator("#local-draft")
    try:
        banner.wait_for(state="visible", timeout=3000)
    except Exception:
        return ""
    return banner.inner_text()


def found_anywhere(task: Task, text: str, offer: str = "") -> bool:
    return text in offer or text in restorable_texts(task) or text in handed_in_texts(task)


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"P{int(p)}")
def test_1_a_stale_tab_closed_at_once_keeps_its_few_characters(new_page, held, phase):
    task = held[phase]
    a, b = tabs(new_page, task)
    type_into(b, phase, "B saves this")
    save_now(b)
    type_into(a, phase, "A few chars")
    a.close()  # at once: the save sent on close is refused (B is newer) but kept

    c = b.context.new_page()
    c.goto(f"/annotate/tasks/{task.pk}/")
    offer = offered_back(c)
    assert found_anywhere(task, "A few chars", offer)


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"P{int(p)}")
def test_1_a_stale_tab_whose_renderer_crashed_keeps_its_text(own_browser, live_server, held, phase):
    task = held[phase]
    b = own_context(own_browser, live_server).new_page()
    sign_in(b, "alice")
    b.goto(f"/annotate/tasks/{task.pk}/")
    a, renderers = open_crashable(own_browser, b.context, task)
    type_into(b, phase, "B saves this")
    save_now(b)
    type_into(a, phase, "A typed then crashed")
    a.wait_for_timeout(100)
    with a.expect_event("crash", timeout=10000):
        for pid in renderers:
            os.kill(pid, signal.SIGKILL)  # a crash: no unload handler, no last save

    c = b.context.new_page()
    c.goto(f"/annotate/tasks/{task.pk}/")
    offer = offered_back(c)
    assert "A typed then crashed" in offer
    with c.expect_navigation():
        c.locator("[data-restore-local]").first.click()
    # B saved after A's version: A's text is kept beside B's, and the editor says where.
    c.locator("#kept-branches").wait_for()
    assert "A typed then crashed" in restorable_texts(task)


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"P{int(p)}")
def test_2_a_late_submit_from_a_second_tab_is_shown_as_a_conflict_and_kept(new_page, held, phase):
    task = ready_to_submit(held[phase], "handed in by tab A")
    a, b = tabs(new_page, task)
    press_submit(a, phase)
    assert Task.objects.get(pk=task.pk).status == Task.Status.SUBMITTED

    type_into(b, phase, "tab B typed other words")
    with b.expect_navigation():
        b.locator("#submit").click()

    page = b.content()
    assert "handed in from another tab or window" in page
    assert "tab B typed other words" in restorable_texts(task)
    assert "handed in by tab A" in handed_in_texts(task)


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"P{int(p)}")
def test_3_an_offline_tab_reopened_after_another_saved_gets_its_text_back(new_page, held, phase):
    task = ready_to_submit(held[phase], "the saved start")
    a, b = tabs(new_page, task)
    network = a.context.new_cdp_session(a)
    network.send("Network.enable")
    network.send(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    type_into(a, phase, "typed while offline")
    a.locator("h1, nav.crumbs").first.click()  # leaves the field: the autosave fails
    a.locator("#save-status", has_text="Not saved: offline (kept in this browser)").wait_for()
    try:
        a.locator("#submit").click(timeout=3000)  # the browser's no-internet page
        a.wait_for_timeout(500)
    except Exception:
        pass
    type_into(b, phase, "B saved meanwhile")
    save_now(b)

    network.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    a.goto(f"/annotate/tasks/{task.pk}/")
    offer = offered_back(a)
    assert "typed while offline" in offer


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"P{int(p)}")
def test_5_leaving_the_conflict_screen_then_coming_back_finds_the_text(new_page, held, phase):
    task = held[phase]
    a, b = tabs(new_page, task)
    type_into(a, phase, "A saved first")
    save_now(a)
    type_into(b, phase, "B falls behind")
    b.locator("h1, nav.crumbs").first.click()
    b.locator("#conflict-screen").wait_for()
    b.on("dialog", lambda dialog: dialog.accept())
    with b.expect_navigation():
        b.get_by_role("link", name="Your tasks").first.click()

    b.goto(f"/annotate/tasks/{task.pk}/")
    kept = b.locator("#kept-branches")
    kept.wait_for()
    with b.expect_navigation():
        kept.get_by_role("link").first.click()
    assert "B falls behind" in b.locator("#revision").inner_text()
    with b.expect_navigation():
        b.locator("#restore").click()
    assert b.locator(FIELD[phase]).input_value() == "B falls behind"
    assert "A saved first" in restorable_texts(task)


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"P{int(p)}")
def test_6_keeping_this_tabs_version_leaves_the_other_restorable(new_page, held, phase):
    task = held[phase]
    a, b = tabs(new_page, task)
    type_into(a, phase, "the words of tab A")
    save_now(a)
    type_into(b, phase, "the words of tab B")
    b.locator("h1, nav.crumbs").first.click()
    b.locator("#conflict-screen").wait_for()
    b.get_by_role("button", name="Keep this tab's version").click()
    wait_until_saved(b)
    assert "the words of tab B" in str(Task.objects.get(pk=task.pk).draft)

    b.goto(f"/annotate/tasks/{task.pk}/revisions/")
    assert "the words of tab A" in b.locator("#revisions").inner_text()
    kept = DraftRevision.objects.filter(task=task, outcome="current").order_by("created_at")
    tab_a = next(r for r in kept if "the words of tab A" in str(r.content))
    b.goto(f"/annotate/tasks/{task.pk}/revisions/{tab_a.pk}/")
    with b.expect_navigation():
        b.locator("#restore").click()
    assert b.locator(FIELD[phase]).input_value() == "the words of tab A"


# --- 4: the whole browser killed half a second after a keystroke ---------------------------


def _browser_processes(profile: Path) -> list[int]:
    """Our Chromium's main process: the one started with this test's own profile folder."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(profile).encode() in part for part in command) and not any(
            part.startswith(b"--type=") for part in command
        ):
            found.append(int(entry.name))
    return found


def _persistent(browser, profile: Path, base_url: str, *, saves_fail: bool = False):
    # The session's Playwright starts it (one Playwright per thread).
    context = browser.browser_type.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        base_url=base_url,
        viewport=DESKTOP,
        args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
    )
    context.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith(base_url)
            else route.fulfill(status=200, content_type="text/html", body="<p>archived</p>")
        ),
    )
    if saves_fail:
        # Only the browser journal can keep the typing: no save reaches the server.
        context.route("**/draft/", lambda route: route.abort())
    return context


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"P{int(p)}")
def test_4_a_browser_killed_half_a_second_after_typing_loses_nothing(
    browser, live_server, held, phase, tmp_path
):
    task = held[phase]
    profile = tmp_path / "profile"
    context = _persistent(browser, profile, live_server.url, saves_fail=True)
    page = context.new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{task.pk}/")
    page.locator(FIELD[phase]).wait_for()
    page.locator(FIELD[phase]).press_sequentially("typed just before the kill", delay=5)
    page.wait_for_timeout(500)
    running = _browser_processes(profile)
    assert running, "the browser to kill was not found"
    for pid in running:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _browser_processes(profile) and time.monotonic() < deadline:
        time.sleep(0.1)
    with contextlib.suppress(Exception):  # the browser is gone
        context.close()

    context = _persistent(browser, profile, live_server.url)
    page = context.new_page()
    sign_in(page, "alice")
    page.goto(f"/annotate/tasks/{task.pk}/")
    offer = offered_back(page)
    context.close()
    assert "typed just before the kill" in offer


# --- The revision pages, at desktop and phone sizes (docs/screenshots) ---------------------


@pytest.mark.parametrize(("size", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_the_revision_list_and_a_restored_revision_fit_the_screen(
    new_page, held, size, viewport, tmp_path
):
    task = held[Phase.QUESTIONS]
    saved = handin.save(
        task,
        _draft("How much did the council budget for parks?"),
        version=0,
        author=task.annotator,
        tab="tab-one",
    )
    handin.save(
        task,
        _draft("What did the 2019 accounts say?"),
        version=1,
        author=task.annotator,
        tab="tab-two",
    )
    stale = handin.save(
        task,
        _draft("Who announced the parks spending?"),
        version=1,
        author=task.annotator,
        tab="tab-three",
    )
    assert stale.refused and saved.outcome == "current"
    page = new_page(viewport=viewport)
    sign_in(page, "alice")

    page.goto(f"/annotate/tasks/{task.pk}/revisions/")
    listing = page.locator("#revisions").inner_text()
    assert "Who announced the parks spending?" in listing
    assert "not saved over newer work from another tab" in listing
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    screenshot(page, f"revisions-list-{size}", tmp_path)

    page.goto(f"/annotate/tasks/{task.pk}/revisions/{stale.revision.pk}/")
    with page.expect_navigation():
        page.locator("#restore").click()
    assert page.locator(FIELD[Phase.QUESTIONS]).input_value() == "Who announced the parks spending?"
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    screenshot(page, f"revision-restored-{size}", tmp_path)


def _draft(question: str) -> dict:
    return {"questions": [{"text": question, "answers": []}], "verdict": "", "claim_correction": ""}
