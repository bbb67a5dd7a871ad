"""Full-text indexes on question and completion text, for finding items by what their subjects say.

PostgreSQL only (core.search matches `to_tsvector('english', text)`, which these indexes answer); elsewhere the search
scans, and nothing is created.
"""

from django.db import migrations

INDEXES = (
    ("verifybench_question_text_search", "verifybench_question"),
    ("verifybench_completion_text_search", "verifybench_completion"),
)


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, table in INDEXES:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin (to_tsvector('english'::regconfig, text))"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _table in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [
        ("verifybench", "0007_import_jobs"),
    ]

    operations = [migrations.RunPython(create, drop)]
