"""The Content-Security-Policy: what every response carries, and templates that keep to it
(no inline script, no on* handler, no style attribute or block, no htmx trigger filter)."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

from tests.factories import AnnotatorFactory

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"

# An inline script is a <script> without src (JSON data blocks do not run and are allowed).
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)
HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)
STYLE = re.compile(r"\sstyle\s*=|<style[\s>]", re.I)
TRIGGER_FILTER = re.compile(r"hx-trigger=\"[^\"]*\[")
RULES = {
    "an inline script": INLINE_SCRIPT,
    "an on* handler": HANDLER,
    "a style attribute or block": STYLE,
    "an htmx trigger filter (needs eval)": TRIGGER_FILTER,
}


def breaches(text: str) -> list[str]:
    return [what for what, rule in RULES.items() if rule.search(text)]


def test_no_template_has_what_the_policy_refuses():
    found = [
        f"{path.relative_to(TEMPLATES)}: {what}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for what in breaches(
            re.sub(r"{#.*?#}|{% comment %}.*?{% endcomment %}", "", path.read_text(), flags=re.S)
        )
    ]
    assert found == []


@pytest.mark.parametrize(
    ("markup", "what"),
    [
        ("<script>alert(1)</script>", "an inline script"),
        ('<button onclick="go()">', "an on* handler"),
        ('<span style="width:2px">', "a style attribute or block"),
        ('<form hx-trigger="every 5s[dirty()]">', "an htmx trigger filter (needs eval)"),
    ],
)
def test_the_template_check_finds_each_kind_of_breach(markup, what):
    assert breaches(markup) == [what]
    assert breaches('<script src="/static/js/editor.js" defer></script>') == []


@pytest.mark.django_db
def test_every_page_carries_the_policy(client):
    AnnotatorFactory(username="alice")
    client.login(username="alice", password="correct horse battery")
    policy = client.get(reverse("annotation:control-panel"))["Content-Security-Policy"]
    directives = dict(
        (part.split()[0], part.split()[1:]) for part in policy.split(";") if part.strip()
    )
    assert directives["script-src"] == ["'self'"]
    assert directives["style-src"] == ["'self'"]
    assert directives["img-src"] == ["'self'", "data:"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["form-action"] == ["'self'"]
    assert directives["connect-src"] == ["'self'"]
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy


@pytest.mark.django_db
def test_the_api_docs_page_loads_swagger_ui_from_our_own_static_files(client):
    AnnotatorFactory(username="alice")
    client.login(username="alice", password="correct horse battery")
    page = client.get(reverse("api-docs")).content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert any("swagger-ui-bundle.js" in s for s in sources)
    assert [s for s in sources if s.startswith(("http:", "https:", "//"))] == []
    assert not INLINE_SCRIPT.search(page) and not STYLE.search(page)
