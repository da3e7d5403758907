"""Hostile uploads and imports: every column of every file the platform reads gets the same
hostile values, and each is refused naming its line (or record) and column, with nothing
stored; deep nesting and over-long addresses are refusals too, never a 500 or a traceback
(issue 25, item 2). The files: the Articles page and `import_articles` (CSV and JSON lines),
the People page's username CSV, and `import_dataset` (AVeriTeC JSON).
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.intake import COLUMNS, column_limit
from annotation.models import Article, Batch, Claim, User
from exports.averitec_json import DatasetFormatError, parse_dataset
from tests.api.test_hostile_input import a_record

# What the boundary refuses in any column; the code point shown in the message.
REFUSED = {
    "a\x00b": "U+0000",
    "bell\x07": "U+0007",
    "exe.\u202epng": "U+202E",
    "\x1b[31mred": "U+001B",
}
GOOD_ROW = {"url": "https://fullfact.org/online/parks/", "title": "Parks"}


def rows_file(rows: list[dict], kind: str) -> bytes:
    if kind == "jsonl":
        return "".join(json.dumps(row) + "\n" for row in rows).encode()
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(COLUMNS))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def articles_page(client, content: bytes, kind: str):
    upload = SimpleUploadedFile(f"week44.{kind}", content, content_type="text/plain")
    return client.post("/annotate/manage/articles/", {"file": upload})


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_every_column_of_an_articles_file_refuses_hostile_text_by_line_and_column(
    client, manager, kind
):
    client.force_login(manager)
    for column in COLUMNS:
        for value, code in REFUSED.items():
            row = {**GOOD_ROW, column: value}
            response = articles_page(client, rows_file([GOOD_ROW, row], kind), kind)
            page = response.content.decode()
            assert response.status_code == 422, (column, value)
            line = 3 if kind == "csv" else 2
            assert f"line {line}, field &#x27;{column}&#x27;" in page, (column, value)
            assert code in page, (column, value)
    assert not Article.objects.exists()
    assert not Batch.objects.exists()


def test_a_lone_surrogate_in_a_json_lines_title_is_refused(client, manager):
    client.force_login(manager)
    line = '{"url": "https://fullfact.org/x", "title": "half \\ud800 pair"}\n'
    response = articles_page(client, line.encode(), "jsonl")
    assert response.status_code == 422
    assert "surrogate pair (U+D800)" in response.content.decode()
    assert not Article.objects.exists()


@pytest.mark.parametrize("column", ["url", "publisher", "claimant", "rating"])
def test_text_longer_than_its_column_is_refused_not_a_database_error(client, manager, column):
    client.force_login(manager)
    limit = column_limit(column)
    value = "https://example.org/" + "a" * limit if column == "url" else "x" * (limit + 1)
    response = articles_page(client, rows_file([{**GOOD_ROW, column: value}], "csv"), "csv")
    assert response.status_code == 422
    assert f"field &#x27;{column}&#x27;" in response.content.decode()
    assert f"at most {limit:,}" in response.content.decode()


def test_an_address_that_grows_past_its_column_once_standardised_is_refused(client, manager):
    # Letters outside ASCII are written %C3%A9-style in the standard form: 729 characters
    # sent would be stored as more than 2,048.
    client.force_login(manager)
    url = "https://example.org/search?q=" + "\u00e9" * 700
    response = articles_page(client, rows_file([{"url": url}], "csv"), "csv")
    assert response.status_code == 422
    assert "standard form" in response.content.decode()
    assert not Article.objects.exists()


def test_deeply_nested_json_lines_are_refused_not_a_recursion_error(client, manager):
    client.force_login(manager)
    deep = "[" * 100_000 + "]" * 100_000
    line = json.dumps({"url": "https://fullfact.org/x"})[:-1] + ', "title": ' + deep + "}\n"
    response = articles_page(client, line.encode(), "jsonl")
    assert response.status_code == 422
    assert "nests deeper than 32 levels" in response.content.decode()


def test_a_csv_field_larger_than_the_csv_reader_takes_is_refused(client, manager):
    client.force_login(manager)
    content = b"url,title\nhttps://fullfact.org/x," + b"a" * 200_000 + b"\n"
    response = articles_page(client, content, "csv")
    assert response.status_code == 422
    assert "not valid CSV" in response.content.decode()


def test_a_dry_run_of_import_articles_reports_a_nul_row_as_invalid(tmp_path, db, capsys):
    path = tmp_path / "articles.jsonl"
    path.write_bytes(rows_file([GOOD_ROW, {**GOOD_ROW, "title": "a\x00b"}], "jsonl"))
    with pytest.raises(CommandError, match=r"line 2, field 'title': holds a NUL"):
        call_command("import_articles", path, "--dry-run")
    assert "valid rows" not in capsys.readouterr().out


def test_import_dataset_reports_deep_nesting_without_a_traceback(tmp_path, db):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CommandError, match="nests deeper than 32 levels"):
        call_command("import_dataset", path)
    assert not Claim.objects.exists()


@pytest.mark.parametrize(
    "field", ["claim", "justification", "speaker", "reporting_source", "original_claim_url"]
)
def test_every_text_field_of_a_dataset_record_refuses_hostile_text_naming_the_record(field):
    for value, code in REFUSED.items():
        with pytest.raises(DatasetFormatError) as error:
            parse_dataset([a_record(), a_record(**{field: value})])
        assert f"record 1, field '{field}'" in str(error.value), value
        assert code in str(error.value)


def test_answers_and_unknown_fields_of_a_dataset_record_are_checked_too():
    record = a_record(extra={"note": ["x\u202ey"]})
    record["questions"][0]["answers"][0]["answer"] = "fine"
    with pytest.raises(DatasetFormatError, match=r"record 0, field 'extra.note.0'.*U\+202E"):
        parse_dataset([record])
    record = a_record()
    record["questions"][0]["answers"][0]["answer"] = "a\x00b"
    with pytest.raises(DatasetFormatError, match=r"questions.0.answers.0.answer'.*NUL"):
        parse_dataset([record])


def test_the_people_pages_username_file_refuses_hostile_names_by_line(client, manager):
    client.force_login(manager)
    for value in REFUSED:
        content = f"username\nnewcomer\n{value}\n".encode()
        upload = SimpleUploadedFile("people.csv", content, content_type="text/csv")
        response = client.post("/annotate/manage/people/", {"csv_file": upload, "phases": ["1"]})
        assert response.status_code == 422, value
        assert "line 4" in response.content.decode(), value
    assert not User.objects.filter(username="newcomer").exists()
