"""Page snapshots deduplicated by normalised address and content: one row per version of a
page instead of one row per page rewritten on every fetch. Existing rows get the hash of
their content and a `last_seen_at` equal to their fetch time; their HTTP status is unknown."""

import hashlib
import json

import django.utils.timezone
from django.db import migrations, models


def hash_content(title: str, sentences: list[str]) -> str:
    # A frozen copy of FetchedPage.hash_content: a migration must not follow later changes.
    content = json.dumps([title, list(sentences)], ensure_ascii=False)
    return hashlib.sha256(content.encode()).hexdigest()


def fill_hashes(apps, schema_editor):
    FetchedPage = apps.get_model("search_proxy", "FetchedPage")
    for page in FetchedPage.objects.only("pk", "title", "sentences", "fetched_at").iterator():
        FetchedPage.objects.filter(pk=page.pk).update(
            content_hash=hash_content(page.title, page.sentences or []),
            last_seen_at=page.fetched_at,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("search_proxy", "0005_archive_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="fetchedpage",
            name="content_hash",
            field=models.CharField(
                default="",
                help_text="SHA-256 of the title and text: what tells two versions apart.",
                max_length=64,
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="fetchedpage",
            name="http_status",
            field=models.PositiveSmallIntegerField(
                blank=True, help_text="The status of the answer the content came in.", null=True
            ),
        ),
        migrations.AddField(
            model_name="fetchedpage",
            name="last_seen_at",
            field=models.DateTimeField(
                default=django.utils.timezone.now,
                help_text="When a fetch last found this same content.",
            ),
        ),
        migrations.RunPython(fill_hashes, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="fetchedpage",
            name="fetched_at",
            field=models.DateTimeField(
                default=django.utils.timezone.now, help_text="When this content was first fetched."
            ),
        ),
        migrations.AlterField(
            model_name="fetchedpage",
            name="normalized_url",
            field=models.CharField(max_length=2048),
        ),
        migrations.AddIndex(
            model_name="fetchedpage",
            index=models.Index(
                fields=["normalized_url", "last_seen_at"], name="snapshot_url_last_seen"
            ),
        ),
        migrations.AddConstraint(
            model_name="fetchedpage",
            constraint=models.UniqueConstraint(
                fields=("normalized_url", "content_hash"), name="one_snapshot_per_page_content"
            ),
        ),
    ]
