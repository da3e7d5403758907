import json

import pytest
from django.core.management import CommandError, call_command

from annotation.intake import parse_intake_date
from annotation.models import Article, Batch, Transition


def _jsonl(tmp_path, *rows, name="articles.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


ROW = {
    "url": "https://www.politifact.com/factchecks/2020/oct/30/facebook-posts/claim/",
    "title": "No, the claim is wrong",
    "publisher": "PolitiFact",
    "publication_date": "2020-11-02",
    "claim_text": "Says the city spent 4 million on parks.",
    "claimant": "Facebook posts",
    "claim_date": "2020-10-30",
    "rating": "False",
}


def test_articles_from_json_lines_wait_for_phase_1_with_their_claimreview_fields(tmp_path, db):
    call_command("import_articles", _jsonl(tmp_path, ROW), "--batch", "week 44")
    article = Article.objects.get()
    assert article.state == Article.State.AWAITING_NORMALISATION
    assert article.batch.name == "week 44"
    assert article.claimreview_claimant == "Facebook posts"
    assert str(article.claimreview_date) == "2020-10-30"
    assert str(article.published_on) == "2020-11-02"
    assert (
        article.normalized_url
        == "https://politifact.com/factchecks/2020/oct/30/facebook-posts/claim"
    )
    assert Transition.objects.get(article=article).to_state == Article.State.AWAITING_NORMALISATION


def test_articles_from_csv_are_read_with_the_same_columns(tmp_path, db):
    path = tmp_path / "articles.csv"
    path.write_text(
        "url,title,publisher,publication_date,claim_text,claimant,claim_date,rating\n"
        'https://fullfact.org/online/a/,"Title, with comma",Full Fact,2020-01-02,,,,\n'
        "https://fullfact.org/online/b/,B,Full Fact,,Claim b,Someone,1-2-2020,Wrong\n"
    )
    call_command("import_articles", path)
    assert Article.objects.count() == 2
    b = Article.objects.get(title="B")
    assert str(b.claimreview_date) == "2020-02-01"
    assert Article.objects.get(title="Title, with comma").published_on.year == 2020


def test_the_same_page_twice_is_reported_and_skipped(tmp_path, db, capsys):
    same_page = {
        "url": "http://politifact.com/factchecks/2020/oct/30/facebook-posts/claim?utm_source=x"
    }
    call_command("import_articles", _jsonl(tmp_path, ROW, same_page))
    assert Article.objects.count() == 1
    out = capsys.readouterr().out
    assert "line 2" in out and "already known" in out
    call_command("import_articles", _jsonl(tmp_path, ROW, name="again.jsonl"))
    assert Article.objects.count() == 1


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"title": "no url"}, "field 'url': is missing"),
        ({"url": "ftp://example.org/x"}, "field 'url': must start with http"),
        ({"url": "https://example.org/x", "claim_date": "30/10/2020"}, "field 'claim_date'"),
        ({"url": "https://example.org/x", "title": 12}, "field 'title': must be text"),
    ],
)
def test_a_bad_row_aborts_the_whole_file_and_names_its_line(tmp_path, db, row, message):
    path = _jsonl(tmp_path, ROW, row)
    with pytest.raises(CommandError) as error:
        call_command("import_articles", path)
    assert "line 2" in str(error.value)
    assert message in str(error.value)
    assert Article.objects.count() == 0
    assert Batch.objects.count() == 0


def test_a_line_that_is_not_json_is_named(tmp_path, db):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ROW) + "\n{not json\n")
    with pytest.raises(CommandError, match="line 2: not valid JSON"):
        call_command("import_articles", path)


def test_a_csv_without_a_url_column_is_refused(tmp_path, db):
    path = tmp_path / "bad.csv"
    path.write_text("link,title\nhttps://example.org,x\n")
    with pytest.raises(CommandError, match="'url' column"):
        call_command("import_articles", path)


def test_a_dry_run_stores_nothing(tmp_path, db, capsys):
    call_command("import_articles", _jsonl(tmp_path, ROW), "--dry-run")
    assert Article.objects.count() == 0
    assert "1 valid rows" in capsys.readouterr().out


def test_intake_dates_accept_iso_and_day_month_year():
    assert str(parse_intake_date("2020-10-31")) == "2020-10-31"
    assert str(parse_intake_date("1-9-2020")) == "2020-09-01"
    with pytest.raises(ValueError):
        parse_intake_date("September 2020")


# --- The same intake on the managers' Articles page ---------------------------------------


def _upload(text: str, name: str = "week44.csv"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, text.encode("utf-8"), content_type="text/csv")


CSV = (
    "url,title,claim_text,claim_date\n"
    "https://fullfact.org/online/parks/,Parks,The council spent 4 million on parks.,2020-10-30\n"
    "https://fullfact.org/online/libraries/,Libraries,,\n"
)


def test_a_manager_imports_a_csv_of_articles_on_the_articles_page(client, manager):
    client.force_login(manager)
    response = client.post(
        "/annotate/manage/articles/", {"file": _upload(CSV), "batch": "week 44"}, follow=True
    )
    assert response.status_code == 200
    assert "Added 2 articles to batch &#x27;week 44&#x27;" in response.content.decode()
    articles = Article.objects.order_by("url")
    assert [a.state for a in articles] == [Article.State.AWAITING_NORMALISATION] * 2
    assert {a.batch.name for a in articles} == {"week 44"}
    assert articles[1].claimreview_claim == "The council spent 4 million on parks."
    assert Batch.objects.get(name="week 44").created_by == manager


def test_a_bad_row_on_the_articles_page_is_named_and_nothing_is_stored(client, manager):
    client.force_login(manager)
    bad = CSV + "ftp://example.org/x,,,\n"
    response = client.post("/annotate/manage/articles/", {"file": _upload(bad)})
    assert response.status_code == 422
    assert "line 4, field &#x27;url&#x27;: must start with http://" in response.content.decode()
    assert not Article.objects.exists()
    assert not Batch.objects.exists()


def test_a_file_of_unknown_type_is_refused_on_the_articles_page(client, manager):
    client.force_login(manager)
    response = client.post("/annotate/manage/articles/", {"file": _upload(CSV, "a.xlsx")})
    assert response.status_code == 422
    assert "unknown file type" in response.content.decode()


def test_annotators_cannot_import_articles(client, annotator):
    client.force_login(annotator)
    response = client.post("/annotate/manage/articles/", {"file": _upload(CSV)})
    assert response.status_code == 403
    assert not Article.objects.exists()


def test_the_articles_page_takes_only_get_and_post(client, manager):
    client.force_login(manager)
    assert client.get("/annotate/manage/articles/").status_code == 200
    assert client.put("/annotate/manage/articles/").status_code == 405
