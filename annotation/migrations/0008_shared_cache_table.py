"""The shared cache's table (CACHE_URL=db://, the default), so throttles count across
processes from the first start; with a Redis cache this does nothing."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor) -> None:
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0007_must_change_password")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
