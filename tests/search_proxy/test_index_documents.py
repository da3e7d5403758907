"""`manage.py index_documents`: knowledge-store JSON lines and dataset evidence into the index."""

import datetime
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from exports.sample import sample_records
from search_proxy.backends.local import LocalBackend
from search_proxy.dates import DateSource
from search_proxy.models import Document

pytestmark = pytest.mark.django_db

ARCHIVED = "https://web.archive.org/web/20201129141238/https://scoopertino.com/exposed/"


def write_lines(path: Path, *items) -> Path:
    lines = [item if isinstance(item, str) else json.dumps(item) for item in items]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def index(*args: str) -> str:
    out = io.StringIO()
    call_command("index_documents", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_knowledge_store_lines_become_documents_with_their_dates(tmp_path):
    corpus = write_lines(
        tmp_path / "store.jsonl",
        {
            "claim_id": 0,
            "type": "claim",
            "query": "council parks",
            "url": "https://news.example.com/parks",
            "url2text": ["The council spent 2.1m on parks.", "  ", "Figures came in March."],
            "date": "2020-03-03",
        },
        {"url": ARCHIVED, "url2text": ["Scoopertino is an imaginary news organization."]},
        {"url": "https://blog.example.org/parks", "url2text": ["Parks are lovely."]},
        "",
    )
    out = index(str(corpus))
    assert "indexed 3 documents" in out
    dated = Document.objects.get(url="https://news.example.com/parks")
    assert dated.text == "The council spent 2.1m on parks.\nFigures came in March."
    assert (dated.published, dated.date_source) == (datetime.date(2020, 3, 3), DateSource.GIVEN)
    archived = Document.objects.get(url=ARCHIVED)
    assert archived.normalized_url == "https://scoopertino.com/exposed"
    assert (archived.published, archived.date_source) == (
        datetime.date(2020, 11, 29),
        DateSource.ARCHIVE_TIMESTAMP,
    )
    undated = Document.objects.get(url="https://blog.example.org/parks")
    assert (undated.published, undated.date_source) == (None, DateSource.UNKNOWN)
    assert undated.corpus == "store.jsonl"
    found = LocalBackend().search("council parks", before=datetime.date(2020, 10, 31))
    # Any word matches; the page holding both comes first.
    assert [r.url for r in found] == [
        "https://news.example.com/parks",
        "https://blog.example.org/parks",
    ]


def test_pages_already_indexed_are_skipped_however_their_address_is_written(tmp_path):
    first = write_lines(tmp_path / "a.jsonl", {"url": "https://x.example/p", "url2text": ["a"]})
    second = write_lines(
        tmp_path / "b.jsonl",
        {"url": "http://www.x.example/p/?utm_source=feed", "url2text": ["again"]},
        {"url": "https://x.example/q", "url2text": ["new"]},
        {"url": "https://x.example/q#top", "url2text": ["same page"]},
        {"url": "https://x.example/empty", "url2text": []},
    )
    index(str(first))
    out = index(str(second))
    assert "indexed 1 documents; skipped 2 already indexed, 1 without text" in out
    assert Document.objects.count() == 2


def test_a_folder_of_knowledge_store_files_is_indexed_in_name_order(tmp_path):
    folder = tmp_path / "store"
    folder.mkdir()
    write_lines(folder / "1.json", {"url": "https://x.example/1", "url2text": ["one"]})
    write_lines(folder / "0.json", {"url": "https://x.example/0", "url2text": ["zero"]})
    (folder / "notes.txt").write_text("not a corpus file")
    assert "indexed 2 documents" in index(str(folder), "--corpus", "knowledge store")
    assert set(Document.objects.values_list("corpus", flat=True)) == {"knowledge store"}


def test_bad_lines_are_reported_with_their_numbers_and_nothing_is_stored(tmp_path):
    corpus = write_lines(
        tmp_path / "bad.jsonl",
        {"url": "https://x.example/ok", "url2text": ["fine"]},
        "{not json",
        {"url": "https://x.example/no-text"},
        {"url": "ftp://x.example/file", "url2text": ["x"]},
        {"url": "https://x.example/date", "url2text": ["x"], "date": "yesterday"},
        ["a", "list"],
    )
    with pytest.raises(CommandError) as caught:
        index(str(corpus))
    message = str(caught.value)
    assert "line 2: not valid JSON" in message
    assert "line 3: 'url2text' must be a list of strings" in message
    assert "line 4: 'url' must be an http(s) address" in message
    assert "line 5: 'date' must be a date" in message
    assert "line 6: expected a JSON object" in message
    assert "Nothing was indexed" in message
    assert Document.objects.count() == 0


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    corpus = tmp_path / "latin1.jsonl"
    corpus.write_bytes(b'{"url": "https://x.example/", "url2text": ["caf\xe9"]}\n')
    with pytest.raises(CommandError, match="not UTF-8"):
        index(str(corpus))


def test_the_command_needs_something_to_index(tmp_path):
    with pytest.raises(CommandError, match="--from-dataset"):
        index()
    with pytest.raises(CommandError, match="no such file"):
        index(str(tmp_path / "missing.jsonl"))


def test_the_evidence_of_imported_claims_is_indexed_with_archive_dates(tmp_path):
    dataset = tmp_path / "sample.json"
    dataset.write_text(json.dumps(sample_records(2)), encoding="utf-8")
    call_command("import_dataset", str(dataset), stdout=io.StringIO(), stderr=io.StringIO())
    out = index("--from-dataset")
    # Two council records and one news archive page cited by both claims; "" is no page.
    assert "indexed 3 documents" in out
    record = Document.objects.get(url="https://council.example.gov/records/1")
    assert record.text == "The council's published figures give a different number."
    # The archived copy was captured on 1 January 2020: published then at the latest.
    assert (record.published, record.date_source) == (
        datetime.date(2020, 1, 1),
        DateSource.ARCHIVE_TIMESTAMP,
    )
    news = Document.objects.get(url="https://news.example.com/archive")
    assert news.text == "No\nThe paper's archive has no such story."
    assert news.date_source == DateSource.UNKNOWN
    assert Document.objects.filter(corpus="dataset evidence").count() == 3
    assert "indexed 0 documents; skipped 3 already indexed" in index("--from-dataset")
