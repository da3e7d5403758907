"""Suggestions are shown once per task (a fingerprint of the text, unique per task and kind),
and each task records its A/B arm when it is created."""

import hashlib

from django.db import migrations, models

# Best outcome first: of the copies of one suggestion, the one that went furthest is kept.
_RANK = {"edited": 0, "accepted": 1, "ignored": 2, "shown": 3}


def fingerprint_and_merge_repeats(apps, schema_editor):
    """Fill the fingerprints; where one task was shown the same suggestion several times,
    keep one row (the furthest outcome, the first time it was shown) and drop the copies."""
    Suggestion = apps.get_model("annotation", "Suggestion")
    kept: dict[tuple[int, str, str], object] = {}
    repeats = []
    for row in Suggestion.objects.order_by("task_id", "shown_at", "id").iterator():
        row.fingerprint = hashlib.sha256(row.text.encode()).hexdigest()
        key = (row.task_id, row.kind, row.fingerprint)
        first = kept.get(key)
        if first is None:
            kept[key] = row
            continue
        repeats.append(row.pk)
        if _RANK[row.outcome] < _RANK[first.outcome]:
            for field in ("outcome", "final_text", "accepted_at", "edited_at", "ignored_at"):
                setattr(first, field, getattr(row, field))
    Suggestion.objects.filter(pk__in=repeats).delete()
    Suggestion.objects.bulk_update(
        kept.values(),
        ["fingerprint", "outcome", "final_text", "accepted_at", "edited_at", "ignored_at"],
        batch_size=1000,
    )


class Migration(migrations.Migration):
    dependencies = [("annotation", "0008_shared_cache_table")]

    operations = [
        migrations.AddField(
            model_name="task",
            name="suggestion_arm",
            field=models.CharField(
                blank=True,
                choices=[
                    ("", "no A/B split"),
                    ("with", "with suggestions"),
                    ("without", "without suggestions"),
                ],
                default="",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="suggestion",
            name="fingerprint",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(fingerprint_and_merge_repeats, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="suggestion",
            constraint=models.UniqueConstraint(
                fields=("task", "kind", "fingerprint"), name="suggestion_shown_once_per_task"
            ),
        ),
    ]
