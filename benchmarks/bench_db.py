"""The benchmarks' own PostgreSQL database: created on demand, migrated with the app's schema,
and never the app's or a test database (the benchmarks empty tables)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def refuse_unsafe_database(name: str) -> None:
    if "bench" not in name or name == "averitec" or name.startswith("test"):
        sys.exit(f"refusing to use database {name!r}: its name must contain 'bench'")


def ensure_database(url: str, name: str) -> None:
    with psycopg.connect(make_conninfo(url, dbname="postgres"), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return
        print(f"creating database {name}")
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def setup_django(url: str) -> None:
    """Django on the benchmark database, migrated: the schema is the app's own.

    Settings read DATABASE_URL at import, so it is set before django.setup(); an inherited
    value pointing at the app's database is overridden on purpose.
    """
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ["DATABASE_URL"] = url
    if str(PROJECT_ROOT) not in sys.path:
        sys.path.insert(0, str(PROJECT_ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
