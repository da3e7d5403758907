"""Every screen on a laptop and a phone: no sideways scrolling, accessible, pictured.

One walk visits each annotator screen (P1-P5, the control panel) and the main manager
pages at 1366x768 and 390x844, checks that the page is never wider than the screen, runs
axe-core (vendored in tests/e2e/vendor, injected into the page) on the five phase screens,
and saves the screenshots `make screenshots` keeps in docs/screenshots.
"""

import datetime
from pathlib import Path

import pytest

from annotation.models import Claim, Task, User
from annotation.vocabulary import Phase
from search_proxy.dates import DateSource
from search_proxy.indexing import DocumentRecord, index_records
from tests import steps
from tests.e2e.conftest import DESKTOP, PHONE, screenshot, sign_in
from tests.factories import AnnotatorFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text()
SIZES = {"desktop": DESKTOP, "phone": PHONE}


def _page_width_overflow(page) -> int:
    """How many pixels the page is wider than the window (0 when nothing scrolls sideways)."""
    return page.evaluate(
        "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth"
    )


def _broken_words(page) -> list[str]:
    """Buttons and links squeezed so narrow that a word breaks over lines ("Res/ume")."""
    return page.evaluate(
        """() => [...document.querySelectorAll("button, a")].filter((el) => {
            if (!el.offsetParent) return false;
            const words = el.innerText.trim().split(/\\s+/).filter(Boolean).length;
            if (!words) return false;
            const style = getComputedStyle(el);
            let lines = el.getClientRects().length;
            if (style.display !== "inline") {
                const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
                const inner = el.clientHeight - parseFloat(style.paddingTop)
                    - parseFloat(style.paddingBottom);
                lines = Math.round(inner / line);
            }
            return lines > words;
        }).map((el) => el.innerText.trim())"""
    )


def _clipped(page) -> list[str]:
    """Boxes whose content is wider than they are (a table cut off in its scroll box, the
    reported "kappa column outside its 531 px box"), and chart text outside its chart."""
    return page.evaluate(
        """() => {
            const boxes = [...document.querySelectorAll("main *")].filter((el) => {
                if (!el.offsetParent || el.clientWidth <= 1) return false;
                const overflow = getComputedStyle(el).overflowX;
                if (!["auto", "scroll", "hidden"].includes(overflow)) return false;
                return el.scrollWidth > el.clientWidth + 1;
            }).map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className}`
                + ` (${el.scrollWidth}px in ${el.clientWidth}px)`);
            const texts = [...document.querySelectorAll("svg.chart text")].filter((t) => {
                const box = t.getBBox();
                const width = t.ownerSVGElement.viewBox.baseVal.width;
                return box.x < -0.5 || box.x + box.width > width + 0.5;
            }).map((t) => `chart text ${JSON.stringify(t.textContent)}`);
            return [...boxes, ...texts];
        }"""
    )


def _serious_accessibility_violations(page) -> list[str]:
    # Served from the page's own origin: the Content-Security-Policy refuses inline scripts.
    page.route(
        "**/__axe__.js",
        lambda route: route.fulfill(status=200, content_type="text/javascript", body=AXE),
    )
    page.add_script_tag(url="/__axe__.js")
    found = page.evaluate(
        """async () => {
            const result = await axe.run(document, {resultTypes: ['violations']});
            return result.violations
                .filter((v) => v.impact === 'serious' || v.impact === 'critical')
                .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target).slice(0, 3)})`);
        }"""
    )
    return found


@pytest.fixture
def crew(db):
    people = AnnotatorFactory.create_batch(6)
    for person in people:
        person.completed_tours = ["p1", "p2", "p3", "p4", "p5"]
        person.save()
    return people


@pytest.fixture
def screens(crew):
    """One open task of every phase, each held by someone who may see it."""
    writer = crew[1]

    def claim_of(article_url: str) -> Claim:
        steps.new_article(url=article_url, title=f"Fact check: {article_url.rsplit('/', 2)[-2]}")
        (claim,) = steps.normalise(writer)
        return claim

    # Built from the furthest phase back, so each step takes the one task waiting.
    for_p5 = claim_of("https://fullfact.org/online/parks-p5/")
    steps.answer(crew[2], "Supported")
    steps.check(crew[3], "Refuted")
    steps.resolve(crew[4], "Refuted")
    claim_of("https://fullfact.org/online/parks-p4/")
    steps.answer(crew[2], "Supported")
    steps.check(crew[3], "Refuted")
    claim_of("https://fullfact.org/online/parks-p3/")
    steps.answer(crew[2], "Supported")
    claim_of("https://fullfact.org/online/parks-p2/")
    steps.new_article(url="https://fullfact.org/online/parks-p1/", title="Parks spending")
    index_records(
        [
            DocumentRecord(
                # Words no other browser test searches for: the index outlives a test.
                url="https://council.example.gov/riverside-ledger-2019",
                title="Riverside ledger 2019",
                text="The riverside ledger lists 2.1 million pounds for gardens.",
                published=datetime.date(2020, 3, 1),
                date_source=DateSource.GIVEN,
            )
        ],
        corpus="test",
    )
    tasks = {
        1: steps.take(crew[0], Phase.NORMALISATION),
        2: steps.take(crew[3], Phase.QUESTIONS),
        3: steps.take(crew[4], Phase.QUALITY_CHECK),
        4: steps.take(crew[5], Phase.DISPUTE),
        5: steps.take(crew[0], Phase.POST_CONTROL),
    }
    return tasks, for_p5


def _visit(
    new_page,
    username: str,
    url: str,
    name: str,
    tmp_path,
    *,
    axe: bool = False,
    clipped: bool = False,
):
    problems = []
    for size, viewport in SIZES.items():
        page = new_page(viewport)
        sign_in(page, username)
        page.goto(url)
        page.wait_for_load_state("networkidle")
        overflow = _page_width_overflow(page)
        if overflow > 0:
            problems.append(f"{name} at {size} is {overflow}px wider than the screen")
        problems += [
            f"{name} at {size}: {text!r} breaks inside a word" for text in _broken_words(page)
        ]
        if clipped:
            problems += [f"{name} at {size}: {box} is cut off" for box in _clipped(page)]
        screenshot(page, f"{name}-{size}", tmp_path)
        if axe and size == "phone":
            problems += [f"{name}: {v}" for v in _serious_accessibility_violations(page)]
        page.context.close()
    return problems


def test_every_screen_fits_a_phone_and_the_phase_screens_pass_axe(
    new_page, screens, manager, tmp_path
):
    tasks, claim = screens
    problems = []
    names = {1: "phase1", 2: "phase2", 3: "phase3", 4: "phase4", 5: "phase5"}
    for phase, task in tasks.items():
        url = f"/annotate/tasks/{task.pk}/"
        problems += _visit(new_page, task.annotator.username, url, names[phase], tmp_path, axe=True)
    problems += _visit(
        new_page, tasks[1].annotator.username, "/annotate/", "control-panel", tmp_path
    )
    submitted = Task.objects.filter(status=Task.Status.SUBMITTED, phase=2).first()
    problems += _visit(
        new_page,
        submitted.annotator.username,
        f"/annotate/tasks/{submitted.pk}/",
        "submitted-task",
        tmp_path,
    )
    for url, name in [
        ("/annotate/manage/", "manager-panel"),
        ("/annotate/manage/people/", "manager-people"),
        ("/annotate/manage/assign/", "manager-assign"),
        ("/annotate/manage/tasks/", "manager-tasks"),
        ("/annotate/manage/audit/", "manager-audit"),
        ("/annotate/manage/qualification/", "manager-qualification"),
        (f"/review/claims/{claim.pk}/", "manager-claim-history"),
        ("/exports/", "exports"),
        ("/exports/statistics/", "exports-statistics"),
    ]:
        problems += _visit(new_page, manager.username, url, name, tmp_path)
    assert problems == [], "\n".join(problems)


def test_the_dashboard_fits_a_laptop_and_a_phone_with_nothing_cut_off(
    new_page, agreement_claims, manager, tmp_path
):
    # Names as long as real ones, in Cohen's table and the per-annotator table.
    for person in User.objects.filter(username__startswith="crew"):
        person.username = f"annotator-{person.username}-of-the-spring-batch"
        person.save()

    problems = _visit(
        new_page, manager.username, "/review/dashboard/", "dashboard", tmp_path, clipped=True
    )

    assert problems == [], "\n".join(problems)


def test_the_clipping_check_can_fail(new_page, manager, tmp_path):
    """A table squeezed into a narrow scroll box, as the Cohen's table was, is reported."""
    page = new_page()
    sign_in(page, manager.username)
    page.goto("/annotate/manage/people/")
    page.evaluate(
        """() => {
            const box = document.createElement("div");
            box.style.overflowX = "auto";
            box.style.width = "120px";
            box.innerHTML = "<table><tr><td>annotator-one-with-a-long-name</td>"
                + "<td>0.123456789</td></tr></table>";
            document.querySelector("main").append(box);
        }"""
    )

    assert _clipped(page)


def test_on_a_phone_search_is_one_tap_away_and_a_used_result_shows_its_answer(
    new_page, screens, tmp_path
):
    tasks, _ = screens
    task = tasks[2]
    page = new_page(PHONE, has_touch=True)
    sign_in(page, task.annotator.username)
    page.goto(f"/annotate/tasks/{task.pk}/")
    search_box = page.locator(".search-form input[name=q]")
    assert not search_box.is_visible()  # the editor comes first
    page.get_by_role("link", name="Search & pages").tap()
    assert search_box.is_visible() and search_box.bounding_box()["y"] < PHONE["height"]
    search_box.fill("riverside ledger")
    page.get_by_role("button", name="Search", exact=True).tap()
    page.locator("#search-results .result").first.wait_for()
    screenshot(page, "phase2-search-phone", tmp_path)
    budget = page.locator("#search-results .result", has_text="Riverside ledger 2019")
    budget.get_by_role("button", name="Use this result").tap()
    answer = page.locator("[data-answer]").first
    assert (
        answer.locator("[data-source-url]").input_value()
        == "https://council.example.gov/riverside-ledger-2019"
    )
    assert "filled" in answer.get_attribute("class")
    box = answer.bounding_box()
    assert 0 <= box["y"] < PHONE["height"]  # scrolled to, not left off-screen
    screenshot(page, "phase2-used-result-phone", tmp_path)


def test_tooltips_open_on_a_tap(new_page, screens, tmp_path):
    tasks, _ = screens
    task = tasks[1]
    page = new_page(PHONE, has_touch=True)
    sign_in(page, task.annotator.username)
    page.goto(f"/annotate/tasks/{task.pk}/")
    tip = page.locator("[data-claim-card] .tip").first
    tip.tap()
    popup = page.locator(".tip-popup")
    assert popup.is_visible()
    assert popup.inner_text() == tip.locator("xpath=ancestor::*[@title][1]").get_attribute("title")
    page.locator("h1, legend").first.tap()
    assert popup.count() == 0


def test_the_tour_never_covers_what_it_points_at_or_submit(new_page, screens, tmp_path):
    tasks, _ = screens
    person = tasks[1].annotator
    User.objects.filter(pk=person.pk).update(completed_tours=[])
    for viewport in (DESKTOP, PHONE):
        page = new_page(viewport)
        sign_in(page, person.username)
        page.goto(f"/annotate/tasks/{tasks[1].pk}/")
        box = page.locator(".tour-box")
        box.wait_for()
        for _ in range(10):
            tour = box.bounding_box()
            for target in (page.locator(".tour-highlight"), page.locator("#submit")):
                if target.count() and target.first.is_visible():
                    other = dict(target.first.bounding_box())
                    # Of a target taller than much of the screen, its top lines count.
                    if other["height"] > viewport["height"] * 0.4:
                        other["height"] = 80
                    assert not (
                        tour["x"] < other["x"] + other["width"]
                        and other["x"] < tour["x"] + tour["width"]
                        and tour["y"] < other["y"] + other["height"]
                        and other["y"] < tour["y"] + tour["height"]
                    ), page.locator("[data-tour-text]").inner_text()
            next_button = page.locator("[data-tour-next]")
            if next_button.inner_text() == "Done":
                break
            next_button.click()
        screenshot(page, f"tour-{'phone' if viewport == PHONE else 'desktop'}", tmp_path)
