"""Browser tests: Debian's Chromium driven by Playwright against the live test server."""

import os
import shutil
import time
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between browser steps are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


# Every page reports what the Content-Security-Policy refused; the console also says so.
# (Playwright runs a wait_for_function expression with eval, which the policy refuses: give
# it an arrow function instead, "() => ...".)
REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
    window.reportCspViolation(
        `${event.violatedDirective} refused ${event.blockedURI || "inline code"}` +
        ` at ${event.sourceFile || document.location.href}:${event.lineNumber}`
    );
});
"""
# Chromium's wording for a refusal by the policy, and htmx's when asked to eval.
CSP_CONSOLE_WORDS = ("Content Security Policy", "evalDisallowed")


@pytest.fixture
def csp_violations():
    """What the Content-Security-Policy refused on any page a test opened. Every browser test
    fails at teardown when this is not empty: a refused script or style is a broken page."""
    found: list[str] = []
    yield found
    assert not found, "the Content-Security-Policy refused:\n" + "\n".join(found)


@pytest.fixture
def new_page(browser, live_server, csp_violations):
    contexts = []

    def make(viewport=DESKTOP, **options):
        context = browser.new_context(viewport=viewport, base_url=live_server.url, **options)
        context.expose_binding(
            "reportCspViolation", lambda source, text: csp_violations.append(text)
        )
        context.add_init_script(REPORT_CSP_VIOLATIONS)
        context.on(
            "console",
            lambda message: (
                csp_violations.append(f"console: {message.text}")
                if message.type == "error" and any(w in message.text for w in CSP_CONSOLE_WORDS)
                else None
            ),
        )
        context.on("weberror", lambda error: csp_violations.append(f"uncaught: {error.error}"))
        # The fact-checking article frame points at the Internet Archive, which this
        # machine cannot reach; answer such requests locally so tests never leave 127.0.0.1.
        context.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith(live_server.url)
                else route.fulfill(
                    status=200, content_type="text/html", body="<p>archived article</p>"
                )
            ),
        )
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
    _let_requests_in_flight_finish()


def _let_requests_in_flight_finish(timeout: float = 5.0) -> None:
    """A page closing sends its last save (sendBeacon) after the test is over; emptying the
    database under that request's transaction deadlocks. Wait (bounded) until no other
    connection of the test database is inside a statement or a transaction."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    time.sleep(0.2)  # a beacon sent as the context closed reaches the server first
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')"
            )
            if cursor.fetchone()[0] == 0:
                return
        time.sleep(0.05)


def sign_in(page, username: str, password: str = "correct horse battery") -> None:
    page.goto("/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    # Signing in lands on the panel of one's role; wait until the login page is left.
    page.wait_for_url(lambda url: "/login/" not in url)


def screenshot(page, name: str, tmp_path: Path) -> Path:
    """Saved under docs/screenshots when UPDATE_SCREENSHOTS=1, else in the test's tmp folder."""
    folder = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def wait_until_saved(page, timeout: float = 15000) -> None:
    """Wait until the server holds everything the editor shows. "Draft saved" alone is not
    enough: it may be left from an earlier save while a later change is still unsent."""
    page.wait_for_function(
        """() => {
            const form = document.querySelector("form[data-editor]");
            return form && !form.classList.contains("htmx-request") && !window.editorDirty();
        }""",
        timeout=timeout,
    )
    page.locator("#save-status", has_text="Draft saved").wait_for(timeout=timeout)
