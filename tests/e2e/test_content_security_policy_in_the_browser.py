"""The Content-Security-Policy in a real browser: the listener that fails every browser test on
a refused script or style can fail, and the API docs page works offline under the policy."""

import pytest

from tests.e2e.conftest import sign_in
from tests.factories import AnnotatorFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_an_inline_script_on_a_page_is_refused_and_reported(new_page, csp_violations):
    AnnotatorFactory(username="ana")
    page = new_page()
    sign_in(page, "ana")
    page.evaluate(
        """() => {
            const planted = document.createElement("script");
            planted.textContent = "document.body.dataset.planted = 'ran'";
            document.body.append(planted);
        }"""
    )
    page.wait_for_function("() => document.readyState === 'complete'")
    page.wait_for_timeout(200)  # the violation event is queued after the refusal

    assert page.evaluate("() => document.body.dataset.planted") is None
    assert any("script-src" in v for v in csp_violations), csp_violations
    csp_violations.clear()  # planted on purpose: the teardown check must not fail this test


def test_the_api_docs_page_works_offline_under_the_policy(new_page, live_server):
    AnnotatorFactory(username="ana")
    page = new_page()
    outside = []
    page.on(
        "request",
        lambda request: (
            outside.append(request.url) if not request.url.startswith(live_server.url) else None
        ),
    )
    sign_in(page, "ana")
    page.goto("/api/v1/docs/")

    # Swagger UI draws the operations only when its scripts ran and the schema loaded.
    page.locator(".opblock-summary-path", has_text="/api/v1/tasks/").first.wait_for()
    assert outside == []
