"""Search logs and clicks keep the task and claim as plain ids, no longer foreign keys.

search_proxy sits below annotation: it may not point at annotation's tables. The columns
(task_id, claim_id, bigint, indexed) stay as they are with their values; only the foreign
key constraints go (the AlterFields below), and the fields become plain integers in
Django's state (SeparateDatabaseAndState, which touches no table).
"""

from django.db import migrations, models


def _unconstrained(to: str) -> models.ForeignKey:
    return models.ForeignKey(
        to,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )


def _plain_id(help_text: str) -> models.BigIntegerField:
    return models.BigIntegerField(null=True, blank=True, db_index=True, help_text=help_text)


class Migration(migrations.Migration):
    dependencies = [
        ("search_proxy", "0008_fact_check_rules"),
    ]

    operations = [
        # Drops the constraint, keeps the column, its values and its index.
        migrations.AlterField("searchlog", "task", _unconstrained("annotation.Task")),
        migrations.AlterField("searchlog", "claim", _unconstrained("annotation.Claim")),
        migrations.AlterField("searchclick", "task", _unconstrained("annotation.Task")),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField("searchlog", "task"),
                migrations.RemoveField("searchlog", "claim"),
                migrations.RemoveField("searchclick", "task"),
                migrations.AddField(
                    "searchlog", "task_id", _plain_id("The annotation task searched from.")
                ),
                migrations.AddField(
                    "searchlog", "claim_id", _plain_id("The claim the search was for.")
                ),
                migrations.AddField(
                    "searchclick",
                    "task_id",
                    _plain_id("The annotation task it was opened from."),
                ),
            ]
        ),
    ]
