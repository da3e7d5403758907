"""A batch name already used is refused with one message by the Articles page and by both
import commands (Batch.name_taken)."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import Article, Batch

pytestmark = pytest.mark.django_db

TAKEN = "A batch named 'week 44' exists already."


@pytest.fixture
def week_44(db):
    return Batch.objects.create(name="week 44", kind=Batch.Kind.INTAKE)


def test_a_free_name_has_no_problem_and_a_used_one_says_so(week_44):
    assert Batch.name_taken("week 45") is None
    assert Batch.name_taken("week 44") == TAKEN


def test_the_articles_page_refuses_a_used_batch_name(client, manager, week_44):
    client.force_login(manager)
    upload = SimpleUploadedFile("a.csv", b"url\nhttps://fullfact.org/online/parks/\n")
    response = client.post("/annotate/manage/articles/", {"file": upload, "batch": "week 44"})
    assert response.status_code == 422
    assert TAKEN.replace("'", "&#x27;") in response.content.decode()
    assert not Article.objects.exists()


@pytest.mark.parametrize(
    ("command", "content"),
    [
        ("import_articles", '{"url": "https://fullfact.org/online/parks/"}\n'),
        ("import_dataset", "[]"),
    ],
)
def test_both_import_commands_refuse_a_used_batch_name(tmp_path, week_44, command, content):
    path = tmp_path / ("a.jsonl" if command == "import_articles" else "a.json")
    path.write_text(content)
    with pytest.raises(CommandError) as refused:
        call_command(command, path, "--batch", "week 44", stdout=io.StringIO())
    assert str(refused.value) == f"{TAKEN} Choose another --batch."
    assert not Article.objects.exists()
