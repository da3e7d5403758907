"""Every CSV download is safe to open in a spreadsheet (issue 25, item 5).

Text people typed or imported (article titles, claim texts) that starts like a formula
("=cmd|' /C calc'!A0") must reach a CSV file as text, never as a formula. Two proofs: no
module writes CSV except through annotation/csvfiles.py, and a walk over every page of the
manager and the researcher follows every CSV link and reads every cell.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin

import pytest
from django.test import Client
from django.urls import reverse

from annotation.csvfiles import FORMULA_STARTS, neutralise
from annotation.vocabulary import Phase
from tests import steps
from tests.architecture.test_access_walk import named_routes
from tests.factories import (
    AcceptedClaimFactory,
    AnnotatorFactory,
    ClaimWaitingForQuestionsFactory,
    ManagerFactory,
    PooledTaskFactory,
)

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotation", "review", "exports", "search_proxy", "pipeline", "config")
PLANTED = ["=cmd|' /C calc'!A0", '+HYPERLINK("http://x")', "@SUM(1+1)", "-2+3+cmd|x"]


def test_no_module_writes_csv_but_the_one_that_neutralises_cells():
    writers = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts or path == ROOT / "annotation" / "csvfiles.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "csv"
                    and node.attr in ("writer", "DictWriter")
                ):
                    writers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert writers == []


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("+1+1", "'+1+1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\r=x", "'\r=x"),
        ("-0.25", "-0.25"),
        ("+3", "+3"),
        ("-1e-3", "-1e-3"),
        (-0.25, -0.25),
        ("plain", "plain"),
        ("", ""),
        (None, None),
    ],
)
def test_a_cell_that_starts_like_a_formula_becomes_text(cell, written):
    assert neutralise(cell) == written


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href") or ""
        if ".csv" in href or "format=csv" in href or href.startswith("data:text/csv"):
            self.hrefs.append(href)


def csv_links(html: str) -> list[str]:
    reader = Links()
    reader.feed(html)
    return reader.hrefs


def cells_of(client: Client, href: str) -> list[str]:
    if href.startswith("data:text/csv"):
        text = unquote(href.split(",", 1)[1])
    else:
        response = client.get(href)
        assert response.status_code == 200, href
        assert response["Content-Type"].startswith("text/csv"), href
        text = response.content.decode()
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


@pytest.fixture
def planted(db):
    """Formula-like text wherever people type or import it: titles, claims, speakers."""
    manager = ManagerFactory(username="morgan", qualified_phases=[])
    researcher = AnnotatorFactory(username="rita", role="researcher", qualified_phases=[])
    AnnotatorFactory(username="alice", qualified_phases=[2, 3])
    # Nobody is qualified for P1 or P5: these tasks are stuck, and the stuck-work table
    # lists them by claim text and article title.
    claim = ClaimWaitingForQuestionsFactory(text=PLANTED[0])
    PooledTaskFactory(phase=Phase.POST_CONTROL, claim=claim)
    steps.new_article(title=PLANTED[1])
    AcceptedClaimFactory(text=PLANTED[2], speaker=PLANTED[3])
    return {"manager": manager, "researcher": researcher}


def test_every_csv_download_of_every_page_holds_no_formula(planted):
    written = []
    seen_links = set()
    for role, user in planted.items():
        client = Client()
        client.force_login(user)
        pages = [
            reverse(name)
            for name, pattern in named_routes()
            if not pattern.pattern.regex.groupindex and name not in ("logout",)
        ]
        for page in pages:
            response = client.get(page)
            if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
                continue
            for link in csv_links(response.content.decode()):
                href = link if link.startswith("data:") else urljoin(page, link)
                if href in seen_links:
                    continue
                seen_links.add(href)
                written += cells_of(client, href)
        if role == "manager":
            # New accounts' one-time passwords: a CSV inside the page that shows them.
            response = client.post(reverse("annotation:people"), {"usernames": "newcomer"})
            written += [
                c for h in csv_links(response.content.decode()) for c in cells_of(client, h)
            ]
    assert any("stuck" in link for link in seen_links), seen_links
    assert any("format=csv" in link for link in seen_links), seen_links
    assert "newcomer" in written
    formulas = [
        cell
        for cell in written
        if cell.startswith(FORMULA_STARTS) and not re.fullmatch(r"[+-]?[\d.]+(e[+-]?\d+)?", cell)
    ]
    assert formulas == []
    # The planted texts were there, written as text.
    assert "'" + PLANTED[0] in written
    assert "'" + PLANTED[1] in written
