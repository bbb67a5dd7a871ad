"""Search documents in their own tables, computed after an import commits instead of inside it.

The expression indexes of 0008 made every imported row compute its text's tsvector and insert it into a GIN index
inside the import's COPY, which cost the import about 4x. On PostgreSQL, triggers now record each inserted or
changed text as a row with no document (an id, cheap inside COPY); `services.index_search_documents` fills them in
the background, and the search matches the pending texts directly meanwhile. Existing texts start pending, so the
migration does not compute every document itself. Elsewhere only the (empty) tables are created.
"""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
from django.db import migrations, models

# (searched table, its search table, the search table's key)
TABLES = (
    ("verifybench_question", "verifybench_questionsearch", "question_id"),
    ("verifybench_completion", "verifybench_completionsearch", "completion_id"),
)
OLD_INDEXES = (
    ("verifybench_question_text_search", "verifybench_question"),
    ("verifybench_completion_text_search", "verifybench_completion"),
)


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, search, key in TABLES:
        # Statement-level with a transition table: one INSERT per COPY or bulk insert, not one per row.
        schema_editor.execute(
            f"""
            CREATE FUNCTION {search}_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO {search} ({key}, document) SELECT id, NULL FROM inserted_rows
                ON CONFLICT ({key}) DO UPDATE SET document = NULL;
                RETURN NULL;
            END $$;
            CREATE TRIGGER {search}_inserted AFTER INSERT ON {table}
                REFERENCING NEW TABLE AS inserted_rows FOR EACH STATEMENT EXECUTE FUNCTION {search}_inserted();
            CREATE FUNCTION {search}_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO {search} ({key}, document) VALUES (NEW.id, NULL)
                ON CONFLICT ({key}) DO UPDATE SET document = NULL;
                RETURN NULL;
            END $$;
            CREATE TRIGGER {search}_changed AFTER UPDATE OF text ON {table}
                FOR EACH ROW WHEN (OLD.text IS DISTINCT FROM NEW.text) EXECUTE FUNCTION {search}_changed();
            INSERT INTO {search} ({key}, document) SELECT id, NULL FROM {table};
            """
        )
    for name, _table in OLD_INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, search, _key in TABLES:
        schema_editor.execute(
            f"""
            DROP TRIGGER IF EXISTS {search}_inserted ON {table};
            DROP TRIGGER IF EXISTS {search}_changed ON {table};
            DROP FUNCTION IF EXISTS {search}_inserted();
            DROP FUNCTION IF EXISTS {search}_changed();
            """
        )
    for name, table in OLD_INDEXES:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin (to_tsvector('english'::regconfig, text))"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("verifybench", "0012_datasets_count_their_prior_labels"),
    ]

    operations = [
        migrations.CreateModel(
            name="CompletionSearch",
            fields=[
                ("document", django.contrib.postgres.search.SearchVectorField(null=True)),
                (
                    "completion",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="search",
                        serialize=False,
                        to="verifybench.completion",
                    ),
                ),
            ],
            options={
                "indexes": [
                    django.contrib.postgres.indexes.GinIndex(
                        condition=models.Q(("document__isnull", False)),
                        fields=["document"],
                        name="completion_search_document",
                    ),
                    models.Index(
                        condition=models.Q(("document__isnull", True)),
                        fields=["completion"],
                        name="completion_search_pending",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="QuestionSearch",
            fields=[
                ("document", django.contrib.postgres.search.SearchVectorField(null=True)),
                (
                    "question",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="search",
                        serialize=False,
                        to="verifybench.question",
                    ),
                ),
            ],
            options={
                "indexes": [
                    django.contrib.postgres.indexes.GinIndex(
                        condition=models.Q(("document__isnull", False)),
                        fields=["document"],
                        name="question_search_document",
                    ),
                    models.Index(
                        condition=models.Q(("document__isnull", True)),
                        fields=["question"],
                        name="question_search_pending",
                    ),
                ],
            },
        ),
        migrations.RunPython(install, uninstall),
    ]
