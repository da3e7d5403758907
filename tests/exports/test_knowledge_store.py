"""The knowledge store export: pages searched, opened and cited, from stored snapshots only,
none dated on or after the claim date, every page met accounted for (issue 28)."""

from __future__ import annotations

import datetime
import io
import json
import random
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Task
from search_proxy.models import FetchedPage, SearchClick, SearchLog
from search_proxy.webaddress import normalize_url
from tests.factories import (
    AcceptedClaimFactory,
    AnnotatorFactory,
    AnswerFactory,
    QuestionFactory,
    SubmittedEvidenceRoundFactory,
)

CLAIM_DATE = datetime.date(2020, 10, 31)


def snapshot(url: str, published: datetime.date | None, text: str = "") -> FetchedPage:
    return FetchedPage.objects.create(
        normalized_url=normalize_url(url),
        url=url,
        final_url=url,
        title=url,
        sentences=[f"{text or url} first sentence.", "Second sentence."],
        published=published,
        http_status=200,
    )


def export(folder: Path) -> str:
    out = io.StringIO()
    call_command("export_knowledge_store", "--out", str(folder), stdout=out, verbosity=0)
    return out.getvalue()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def claim(db):
    evidence = SubmittedEvidenceRoundFactory(claim=AcceptedClaimFactory(claim_date=CLAIM_DATE))
    question = QuestionFactory(evidence_round=evidence)
    before = datetime.date(2020, 9, 1)
    snapshot("https://a.example/budget", before)
    undated = snapshot("https://b.example/minutes", None)
    snapshot("https://c.example/later", datetime.date(2020, 11, 5))
    snapshot("https://e.example/opened", before)
    AnswerFactory(question=question, source_url="https://a.example/budget")
    AnswerFactory(
        question=question, source_url="https://b.example/minutes", passage_snapshot=undated
    )
    AnswerFactory(question=question, source_url="https://c.example/later")
    AnswerFactory(question=question, source_url="https://d.example/never-stored")
    AnswerFactory(question=question, source_url="Metadata")  # not a page
    task = Task.objects.create(
        phase=2,
        article=evidence.claim.article,
        claim=evidence.claim,
        status=Task.Status.SUBMITTED,
        annotator=AnnotatorFactory(),
    )
    search = SearchLog.objects.create(
        claim_id=evidence.claim.pk,
        task_id=task.pk,
        query="council parks budget",
        before=CLAIM_DATE,
        backend="local",
        result_urls=["https://a.example/budget", "https://e.example/opened", "https://f.example/x"],
    )
    SearchClick.objects.create(task_id=task.pk, search=search, url="https://e.example/opened")
    return evidence.claim


def test_each_page_met_is_given_once_with_its_stored_text_and_the_query_that_found_it(
    claim, tmp_path
):
    AcceptedClaimFactory(claim_date=CLAIM_DATE)  # a claim with nothing met
    stored_before = FetchedPage.objects.count()

    output = export(tmp_path)

    store = lines(tmp_path / "0.json")
    assert [(p["url"], p["type"], p["query"], p["date_unknown"]) for p in store] == [
        ("https://a.example/budget", "cited", "council parks budget", False),
        ("https://b.example/minutes", "cited", None, True),
        ("https://e.example/opened", "opened", "council parks budget", False),
    ]
    assert store[0]["url2text"] == ["https://a.example/budget first sentence.", "Second sentence."]
    assert store[0]["published"] == "2020-09-01" and store[1]["published"] is None
    assert (tmp_path / "1.json").read_text() == ""
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["per_claim"][0] | {"claim": ""} == {
        "claim_id": 0,
        "claim": "",
        "pages": 3,
        "cited": 2,
        "opened": 1,
        "searched": 0,
        "date_unknown": 1,
        "left_out_after_claim_date": 1,
        "left_out_not_stored": 2,
    }
    assert report["per_claim"][1]["pages"] == 0
    assert "3 pages (2 cited, 1 opened, 0 searched; 1 of unknown date)" in output
    assert "left out 1 dated on or after their claim date and 2 never stored" in output
    # Nothing was fetched: no snapshot was added.
    assert FetchedPage.objects.count() == stored_before


def test_random_pages_never_leak_past_the_claim_date_and_are_all_accounted_for(db, tmp_path):
    rng = random.Random(28)
    met_per_claim = []
    for n in range(6):
        claim_date = CLAIM_DATE + datetime.timedelta(days=rng.randint(-200, 200))
        evidence = SubmittedEvidenceRoundFactory(claim=AcceptedClaimFactory(claim_date=claim_date))
        question = QuestionFactory(evidence_round=evidence)
        urls = [f"https://site{n}-{k}.example/page" for k in range(rng.randint(0, 8))]
        for url in urls:
            for _ in range(rng.randint(0, 3)):  # 0 to 3 versions, dated around the claim
                day = rng.choice([None, claim_date + datetime.timedelta(days=rng.randint(-30, 30))])
                snapshot(url, day, text=f"{url} {rng.random()}")
        cited, searched = urls[: len(urls) // 2], urls[len(urls) // 2 :]
        for url in cited:
            AnswerFactory(question=question, source_url=url)
        SearchLog.objects.create(
            claim_id=evidence.claim.pk,
            query=f"q{n}",
            before=claim_date,
            backend="local",
            result_urls=searched,
        )
        met_per_claim.append((claim_date, set(urls)))

    export(tmp_path)

    report = json.loads((tmp_path / "report.json").read_text())
    for claim_id, (claim_date, urls) in enumerate(met_per_claim):
        store = lines(tmp_path / f"{claim_id}.json")
        count = report["per_claim"][claim_id]
        assert len(store) == count["pages"]
        assert {p["url"] for p in store} <= urls
        assert count["pages"] + count["left_out_after_claim_date"] + count[
            "left_out_not_stored"
        ] == len(urls)
        for page in store:
            if page["date_unknown"]:
                assert page["published"] is None
            else:
                assert datetime.date.fromisoformat(page["published"]) < claim_date
            # The newest version dated before the claim is the one given.
            dated = FetchedPage.objects.of_url(page["url"]).filter(published__lt=claim_date).first()
            if dated is not None:
                assert page["url2text"] == dated.sentences
