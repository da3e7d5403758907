"""The full-text index of Document, which differs per database.

PostgreSQL: a stored generated tsvector column (title weighted A, the first 100,000
characters of the text weighted B, English stemming) and a GIN index on it, the vector
kept inside the row for fast ranking. The column is not a model field: Django never writes
it, PostgreSQL computes it on every insert/update.

SQLite: an FTS5 table with external content (the document table itself), kept in sync by
triggers on insert, update and delete, ranked with bm25. A later migration that makes Django
rebuild search_proxy_document on SQLite drops these triggers and must create them again.
"""

from django.db import migrations

POSTGRESQL_FORWARD = [
    """
    ALTER TABLE search_proxy_document ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
        || setweight(to_tsvector('english'::regconfig, left(coalesce(text, ''), 100000)), 'B')
    ) STORED
    """,
    "CREATE INDEX search_proxy_document_search ON search_proxy_document USING gin (search_vector)",
    # Ranking reads the tsvector of every matching row: MAIN keeps it inside the row (only
    # compressed or moved out when a row outgrows a page), while the long text goes to TOAST,
    # so a ranked row costs a fraction of a page read instead of two TOAST fetches.
    "ALTER TABLE search_proxy_document ALTER COLUMN search_vector SET STORAGE MAIN",
]
POSTGRESQL_BACKWARD = [
    "DROP INDEX IF EXISTS search_proxy_document_search",
    "ALTER TABLE search_proxy_document DROP COLUMN IF EXISTS search_vector",
]

SQLITE_FORWARD = [
    """
    CREATE VIRTUAL TABLE search_proxy_document_fts USING fts5(
        title, text,
        content='search_proxy_document', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TRIGGER search_proxy_document_fts_insert AFTER INSERT ON search_proxy_document
    BEGIN
        INSERT INTO search_proxy_document_fts (rowid, title, text)
        VALUES (new.id, new.title, new.text);
    END
    """,
    """
    CREATE TRIGGER search_proxy_document_fts_delete AFTER DELETE ON search_proxy_document
    BEGIN
        INSERT INTO search_proxy_document_fts (search_proxy_document_fts, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
    END
    """,
    """
    CREATE TRIGGER search_proxy_document_fts_update AFTER UPDATE OF title, text
    ON search_proxy_document
    BEGIN
        INSERT INTO search_proxy_document_fts (search_proxy_document_fts, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
        INSERT INTO search_proxy_document_fts (rowid, title, text)
        VALUES (new.id, new.title, new.text);
    END
    """,
    # Documents stored before this migration (none on a fresh database).
    "INSERT INTO search_proxy_document_fts (search_proxy_document_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS search_proxy_document_fts_insert",
    "DROP TRIGGER IF EXISTS search_proxy_document_fts_delete",
    "DROP TRIGGER IF EXISTS search_proxy_document_fts_update",
    "DROP TABLE IF EXISTS search_proxy_document_fts",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ("search_proxy", "0002_search_index_domains_logs"),
    ]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRESQL_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": POSTGRESQL_BACKWARD, "sqlite": SQLITE_BACKWARD}),
        ),
    ]
